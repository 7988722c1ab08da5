"""What a web test reads of the games a server stored (``caribsim.web.store``): a game's
record as the store exports it, every stored game at once (to see that a refused request
stored nothing) and a copy of the database for another server."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from caribsim.web.store import DB_NAME, SQLiteStore


def path(folder) -> Path:
    return Path(folder) / DB_NAME


def record(folder, gid: str) -> dict:
    """The stored record of game ``gid`` of the games folder ``folder`` (a server may be
    running on it)."""
    with SQLiteStore(path(folder)) as store:
        rec = store.export_record(gid)
    assert rec is not None, f"no game {gid} is stored in {folder}"
    return rec


def everything(folder) -> dict:
    """Every stored game: id -> its row of games and its moves, as the database holds them."""
    with sqlite3.connect(path(folder)) as db:
        games = {row[0]: row for row in db.execute("SELECT * FROM games ORDER BY id")}
        moves = db.execute("SELECT * FROM moves ORDER BY game_id, k").fetchall()
    db.close()
    return {gid: (row, [m for m in moves if m[0] == gid]) for gid, row in games.items()}


def count(folder) -> int:
    """How many games are stored (0 also when the database was never made)."""
    if not path(folder).exists():
        return 0
    with SQLiteStore(path(folder)) as store:
        return store.count(False) + store.count(True)


def copy(folder, to) -> None:
    """The games database of ``folder`` copied into the folder ``to`` (SQLite's backup: a
    consistent copy even while a server writes)."""
    Path(to).mkdir(parents=True, exist_ok=True)
    source, target = sqlite3.connect(path(folder)), sqlite3.connect(path(to))
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


def write_legacy(folder, gid: str, state, seed: int, seats: list, tokens: list) -> None:
    """A game as the server before the store kept it: ``ID.json`` (the record, players as
    the seats say) and ``ID.seats.json``."""
    import json

    from caribsim.human import records

    Path(folder).mkdir(parents=True, exist_ok=True)
    players = [s if s == "human" else s.split(":")[0] for s in seats]
    records.save(records.record_game(state, seed, players), Path(folder) / f"{gid}.json")
    (Path(folder) / f"{gid}.seats.json").write_text(
        json.dumps({"format": "caribsim-web-seats", "version": 1, "seats": seats, "tokens": tokens})
    )
