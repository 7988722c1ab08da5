"""Where the web server keeps its games: a small interface (``Store``) and its implementation
over one SQLite file (``SQLiteStore``, ``<games_dir>/games.sqlite3``); docs/web.md, *Storage*.

A game is a row of ``games`` (what it is and who plays it, written once; where it stands,
updated with every step) and one row of ``moves`` per step. A step is appended in one
transaction committed (``synchronous=FULL``: on the disk) before the server answers the
request that made it; an undo's truncation is the same transaction as the steps that follow
it. A record (docs/records.md) is made from the rows, never stored whole.

Every method is thread-safe (one connection, one lock): the server's event loop and the
bots' threads may call it. The interface is what a server database (PostgreSQL, ...) would
implement; nothing outside this module knows the SQL.
"""

from __future__ import annotations

import abc
import contextlib
import json
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import caribsim
from caribsim.human import records

DB_NAME = "games.sqlite3"
SCHEMA_VERSION = 1
BUSY_TIMEOUT = 5.0  # seconds a write waits for another connection's lock
MAX_LIST = 200  # games one list() may ask for
log = logging.getLogger("caribsim.web")
Lines = list[dict]  # the lobby's lines of games (a Store's method is named list)
Ids = list[str]


class StoreError(OSError):
    """The store cannot do what was asked: the database cannot be opened, read or written.
    An ``OSError``, so that the server's paths that handled a file that could not be written
    handle the store too (nothing is played, the answer is a 500 saying why)."""


class CorruptGame(StoreError):
    """A stored game whose rows are not what the store writes (the message says which)."""


class StoreConflict(StoreError):
    """The game's stored steps are not those the writer knew: another writer (a second
    server on the same database) changed it, or a commit whose outcome was not known."""


@dataclass(frozen=True)
class Meta:
    """What a game is, written once: the rules (``game``, ``options``), the seed, each seat's
    ``"human"`` or bot spec, the human seats' tokens (None for a bot) and the players as the
    record names them (``"human"`` or the bot's name)."""

    game: str
    options: dict
    seed: int
    seats: list
    tokens: list
    players: list


@dataclass(frozen=True)
class Status:
    """Where a game stands after its ``steps`` steps: over, the seat to act, whether that
    seat is a bot (a restarted server resumes those games) and the final scores and returns
    (the record's ``final``, None before the end)."""

    steps: int
    over: bool
    to_act: int
    bot_to_act: bool
    final: dict | None = None


@dataclass
class Stored:
    """A game as the store holds it: its meta, its steps (the record's step entries:
    ``{"action", "name", "player"}``), its status and when it was made and last changed
    (microseconds since 1970)."""

    id: str
    meta: Meta
    steps: list
    status: Status
    created: int = 0
    updated: int = 0

    def record(self) -> dict:
        """The game record (docs/records.md) as ``records.record_of_steps`` makes it."""
        return {
            "format": records.FORMAT,
            "version": records.VERSION,
            "caribsim_version": caribsim.__version__,
            "game": self.meta.game,
            "options": dict(self.meta.options),
            "seed": self.meta.seed,
            "steps": [dict(s) for s in self.steps],
            "final": self.status.final,
            "players": list(self.meta.players),
        }


def _now() -> int:
    return time.time_ns() // 1000


def check_steps(steps) -> list:
    """``steps`` as the record's step entries, each checked (ValueError naming the first bad
    one): nothing malformed is ever written."""
    out = []
    for k, s in enumerate(steps):
        if not (
            isinstance(s, dict)
            and type(s.get("action")) is int
            and type(s.get("player")) is int
            and isinstance(s.get("name"), str)
        ):
            raise ValueError(
                f"step {k}: must be {{action: int, name: str, player: int}}, got {s!r}"
            )
        out.append({"action": s["action"], "name": s["name"], "player": s["player"]})
    return out


def check_meta(meta: Meta) -> None:
    if not (
        isinstance(meta.game, str)
        and isinstance(meta.options, dict)
        and type(meta.seed) is int
        and 0 <= meta.seed < 2**64
        and isinstance(meta.seats, list)
        and all(isinstance(s, str) for s in meta.seats)
        and isinstance(meta.tokens, list)
        and all(t is None or isinstance(t, str) for t in meta.tokens)
        and isinstance(meta.players, list)
        and all(isinstance(p, str) for p in meta.players)
        and len(meta.seats) == len(meta.tokens) == len(meta.players)
    ):
        raise ValueError(f"not a game's meta: {meta!r}")


class Store(abc.ABC):
    """The games of a server. ``create`` and ``append`` are durable when they return; a
    failure is a ``StoreError`` and leaves the game as it was."""

    @abc.abstractmethod
    def create(
        self, game_id: str, meta: Meta, steps: list, status: Status, source: str | None = None
    ) -> None:
        """A new game with its first ``steps`` (a record played on from a step has some).
        ``source``: the legacy file it was imported from (noted with it, in one
        transaction). StoreError if the id is taken."""

    @abc.abstractmethod
    def append(self, game_id: str, first: int, steps: list, status: Status, stored: int) -> None:
        """Steps ``first, first + 1, ...`` and the new status, in one transaction; the steps
        from ``first`` on that were stored are dropped first (an undo). ``stored``: the number
        of steps the caller knows are stored; another number is a StoreConflict."""

    @abc.abstractmethod
    def load(self, game_id: str) -> Stored | None:
        """The game, its rows checked (CorruptGame), or None if there is none."""

    @abc.abstractmethod
    def list(self, over: bool, offset: int = 0, limit: int = 100) -> Lines:
        """The lobby's lines (``id, game, options, players, step, to_act, over``) of the
        unfinished (``over`` False) or finished games, newest first, ``limit`` of them
        (at most ``MAX_LIST``) from ``offset``; a row that cannot be read is left out."""

    @abc.abstractmethod
    def count(self, over: bool) -> int:
        """How many games ``list(over, ...)`` pages through."""

    @abc.abstractmethod
    def bot_games(self) -> Ids:
        """The ids of the unfinished games whose seat to act is a bot (a restart resumes them)."""

    @abc.abstractmethod
    def imports(self) -> dict:
        """The legacy files already imported or refused: name -> what happened."""

    @abc.abstractmethod
    def note_import(self, source: str, outcome: str) -> None:
        """Note that the legacy file ``source`` was looked at (``outcome``: why not imported)."""

    def export_record(self, game_id: str) -> dict | None:
        """The game's record (docs/records.md; ``records.load`` reads it once written as
        JSON), or None if there is no such game."""
        stored = self.load(game_id)
        if stored is None:
            return None
        record = stored.record()
        records.validate(record)
        return record

    @abc.abstractmethod
    def close(self) -> None:
        """Release the database (a later call fails with StoreError)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_SCHEMA = [
    # what a game is (written once) and where it stands (updated with every step)
    """CREATE TABLE games (
        id TEXT PRIMARY KEY,
        game TEXT NOT NULL,
        options TEXT NOT NULL,         -- JSON object
        seed TEXT NOT NULL,            -- decimal 0..2**64-1 (an SQL INTEGER is signed 64 bits)
        seats TEXT NOT NULL,           -- JSON list: "human" or a bot spec per seat
        tokens TEXT NOT NULL,          -- JSON list: a human seat's token, null for a bot
        players TEXT NOT NULL,         -- JSON list: the record's players
        steps INTEGER NOT NULL,        -- the number of rows in moves
        over INTEGER NOT NULL,
        to_act INTEGER NOT NULL,
        bot_to_act INTEGER NOT NULL,
        final TEXT,                    -- JSON: the record's final, null before the end
        created INTEGER NOT NULL,      -- microseconds since 1970
        updated INTEGER NOT NULL
    )""",
    "CREATE INDEX games_lobby ON games (over, created DESC, id DESC)",
    "CREATE INDEX games_bots ON games (id) WHERE bot_to_act = 1 AND over = 0",
    """CREATE TABLE moves (
        game_id TEXT NOT NULL REFERENCES games (id),
        k INTEGER NOT NULL,            -- the step: 0, 1, ...
        action INTEGER NOT NULL,
        name TEXT NOT NULL,
        player INTEGER NOT NULL,       -- the seat, -1 for chance
        PRIMARY KEY (game_id, k)
    ) WITHOUT ROWID""",
    # the legacy files (ID.seats.json + ID.json) looked at: imported or why not
    """CREATE TABLE imports (
        source TEXT PRIMARY KEY,
        game_id TEXT,
        outcome TEXT NOT NULL,
        at INTEGER NOT NULL
    )""",
]
# version -> the statements that bring the schema from version - 1 to it
_MIGRATIONS: dict[int, list[str]] = {}

_SUMMARY = "id, game, options, players, steps, to_act, over"


def _json_of(value) -> str:
    return json.dumps(value, separators=(",", ":"))


class SQLiteStore(Store):
    """The games in one SQLite file: WAL journal, ``synchronous=FULL`` (a commit is on the
    disk when it returns: the WAL is synced at every commit; ``"NORMAL"`` syncs at
    checkpoints only: a commit survives the server's crash, not the machine's), a busy
    timeout for a second process, one connection guarded by a lock. A write is a few rows,
    so it runs where it is called (the server's event loop): no thread hop per move, but
    the loop waits for the disk's sync (docs/web.md, *Storage*)."""

    def __init__(self, path, busy_timeout: float = BUSY_TIMEOUT, synchronous: str = "FULL") -> None:
        if synchronous not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, NORMAL or EXTRA, got {synchronous!r}")
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"cannot open the games database {str(self.path)!r}: {e}") from None
        self._db: sqlite3.Connection | None = db
        try:
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode != "wal":
                raise StoreError(
                    f"the games database {str(self.path)!r} cannot use a WAL journal "
                    f"(journal_mode is {mode}): put it on a local file system"
                )
            db.execute(f"PRAGMA synchronous={synchronous}")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            with self._write():
                self._migrate(db)
        except BaseException as e:
            db.close()
            self._db = None
            if isinstance(e, sqlite3.Error):
                raise StoreError(
                    f"cannot open the games database {str(self.path)!r}: {e}"
                ) from None
            raise

    def set_busy_timeout(self, seconds: float) -> None:
        """How long a write waits for another connection's lock before it fails."""
        with self._read() as db:
            db.execute(f"PRAGMA busy_timeout={int(seconds * 1000)}")

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Make the schema (a new file) or bring it to SCHEMA_VERSION (in the open
        transaction)."""
        has = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'"
        ).fetchone()
        if not has:
            if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise StoreError(f"{str(self.path)!r} is an SQLite file but not a games database")
            db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            return
        row = db.execute("SELECT version FROM schema_version").fetchone()
        version = row[0] if row else None
        if type(version) is not int or version < 1:
            raise StoreError(f"{str(self.path)!r}: the schema version is {version!r}")
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{str(self.path)!r} has schema version {version}; this caribsim reads up to "
                f"{SCHEMA_VERSION}: use a newer caribsim"
            )
        if version < SCHEMA_VERSION:
            for v in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[v]:
                    db.execute(statement)
            db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))

    # --- transactions --------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"the games database {str(self.path)!r} is closed")
        return self._db

    class _Tx:
        def __init__(self, store: SQLiteStore, write: bool):
            self.store, self.write = store, write

        def __enter__(self) -> sqlite3.Connection:
            self.store._lock.acquire()
            try:
                db = self.store._conn()
                if self.write:
                    db.execute("BEGIN IMMEDIATE")  # the write lock now, not at the first write
            except sqlite3.Error as e:
                self.store._lock.release()
                raise self.store._error(e) from None
            except BaseException:
                self.store._lock.release()
                raise
            return db

        def __exit__(self, kind, exc, tb):
            db = self.store._db
            try:
                if self.write and db is not None:
                    if kind is None:
                        try:
                            db.execute("COMMIT")
                        except sqlite3.Error as e:
                            _rollback(db)
                            raise self.store._error(e) from None
                    else:
                        _rollback(db)
                if isinstance(exc, sqlite3.Error):
                    raise self.store._error(exc) from None
            finally:
                self.store._lock.release()
            return False

    def _write(self) -> SQLiteStore._Tx:
        return SQLiteStore._Tx(self, True)

    def _read(self) -> SQLiteStore._Tx:
        return SQLiteStore._Tx(self, False)

    def _error(self, e: sqlite3.Error) -> StoreError:
        return StoreError(f"the games database {str(self.path)!r}: {e}")

    # --- writes --------------------------------------------------------------------------
    def create(self, game_id, meta, steps, status, source=None) -> None:
        check_meta(meta)
        steps = check_steps(steps)
        _check_status(status, len(steps))
        now = _now()
        with self._write() as db:
            if db.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone():
                raise StoreError(f"a game {game_id!r} is already stored")
            db.execute(
                "INSERT INTO games (id, game, options, seed, seats, tokens, players, steps, "
                "over, to_act, bot_to_act, final, created, updated) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    game_id,
                    meta.game,
                    _json_of(meta.options),
                    str(meta.seed),
                    _json_of(meta.seats),
                    _json_of(meta.tokens),
                    _json_of(meta.players),
                    status.steps,
                    int(status.over),
                    status.to_act,
                    int(status.bot_to_act),
                    None if status.final is None else _json_of(status.final),
                    now,
                    now,
                ),
            )
            self._insert(db, game_id, 0, steps)
            if source is not None:
                db.execute(
                    "INSERT OR REPLACE INTO imports VALUES (?, ?, ?, ?)",
                    (source, game_id, "imported", now),
                )

    def append(self, game_id, first, steps, status, stored) -> None:
        steps = check_steps(steps)
        if type(first) is not int or not 0 <= first <= stored:
            raise ValueError(f"first step {first!r}: steps are appended at 0..{stored}")
        _check_status(status, first + len(steps))
        with self._write() as db:
            changed = db.execute(
                "UPDATE games SET steps = ?, over = ?, to_act = ?, bot_to_act = ?, final = ?, "
                "updated = ? WHERE id = ? AND steps = ?",
                (
                    status.steps,
                    int(status.over),
                    status.to_act,
                    int(status.bot_to_act),
                    None if status.final is None else _json_of(status.final),
                    _now(),
                    game_id,
                    stored,
                ),
            ).rowcount
            if changed != 1:
                row = db.execute("SELECT steps FROM games WHERE id = ?", (game_id,)).fetchone()
                if row is None:
                    raise StoreError(f"no game {game_id!r} is stored")
                raise StoreConflict(
                    f"game {game_id}: {row[0]} steps are stored, the server knew {stored}: "
                    "the game changed in the store meanwhile"
                )
            if first < stored:
                db.execute("DELETE FROM moves WHERE game_id = ? AND k >= ?", (game_id, first))
            self._insert(db, game_id, first, steps)

    @staticmethod
    def _insert(db: sqlite3.Connection, game_id: str, first: int, steps: list) -> None:
        db.executemany(
            "INSERT INTO moves (game_id, k, action, name, player) VALUES (?, ?, ?, ?, ?)",
            [
                (game_id, first + i, s["action"], s["name"], s["player"])
                for i, s in enumerate(steps)
            ],
        )

    def note_import(self, source, outcome) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO imports VALUES (?, NULL, ?, ?)", (source, outcome, _now())
            )

    # --- reads ---------------------------------------------------------------------------
    def load(self, game_id) -> Stored | None:
        with self._read() as db:
            db.execute("BEGIN")  # the game's row and its moves from one snapshot
            try:
                row = db.execute(
                    "SELECT game, options, seed, seats, tokens, players, steps, over, to_act, "
                    "bot_to_act, final, created, updated FROM games WHERE id = ?",
                    (game_id,),
                ).fetchone()
                moves = (
                    db.execute(
                        "SELECT k, action, name, player FROM moves WHERE game_id = ? ORDER BY k",
                        (game_id,),
                    ).fetchall()
                    if row
                    else []
                )
            finally:
                db.execute("COMMIT")
        if row is None:
            return None
        return _stored(game_id, row, moves)

    def list(self, over, offset=0, limit=100) -> Lines:
        offset, limit = _page(offset, limit)
        with self._read() as db:
            rows = db.execute(
                f"SELECT {_SUMMARY} FROM games WHERE over = ? "
                "ORDER BY created DESC, id DESC LIMIT ? OFFSET ?",
                (int(bool(over)), limit, offset),
            ).fetchall()
        out = []
        for row in rows:
            try:
                out.append(_summary(row))
            except CorruptGame as e:  # one bad row does not hide the others
                log.warning("%s", e)
        return out

    def count(self, over) -> int:
        with self._read() as db:
            return db.execute(
                "SELECT count(*) FROM games WHERE over = ?", (int(bool(over)),)
            ).fetchone()[0]

    def bot_games(self) -> Ids:
        with self._read() as db:
            rows = db.execute(
                "SELECT id FROM games WHERE bot_to_act = 1 AND over = 0 ORDER BY created"
            ).fetchall()
        return [r[0] for r in rows]

    def imports(self) -> dict:
        with self._read() as db:
            return dict(db.execute("SELECT source, outcome FROM imports").fetchall())

    def integrity(self) -> str:
        """SQLite's ``integrity_check``: ``"ok"`` or what is wrong."""
        with self._read() as db:
            return "; ".join(r[0] for r in db.execute("PRAGMA integrity_check").fetchall())

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("PRAGMA optimize")
                self._db.close()
                self._db = None


def _rollback(db: sqlite3.Connection) -> None:
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")
    except sqlite3.Error:
        pass


def _check_status(status: Status, steps: int) -> None:
    if not (
        isinstance(status, Status)
        and status.steps == steps
        and type(status.to_act) is int
        and (status.final is None or isinstance(status.final, dict))
    ):
        raise ValueError(f"a status of {steps} steps, got {status!r}")


def _page(offset, limit) -> tuple:
    if type(offset) is not int or offset < 0:
        raise ValueError(f"offset must be an integer >= 0, got {offset!r}")
    if type(limit) is not int or not 1 <= limit <= MAX_LIST:
        raise ValueError(f"limit must be an integer in 1..{MAX_LIST}, got {limit!r}")
    return offset, limit


def _loads(game_id: str, column: str, text, kind):
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise CorruptGame(f"game {game_id}: its {column} is not JSON: {str(text)[:60]!r}") from None
    if not isinstance(value, kind):
        raise CorruptGame(f"game {game_id}: its {column} is not a JSON {kind.__name__}")
    return value


def _summary(row) -> dict:
    game_id, game, options, players, steps, to_act, over = row
    if not (isinstance(game, str) and type(steps) is int and type(to_act) is int):
        raise CorruptGame(f"game {game_id}: its row is not what the store writes")
    return {
        "id": game_id,
        "game": game,
        "options": _loads(game_id, "options", options, dict),
        "players": _loads(game_id, "players", players, list),
        "step": steps,
        "to_act": to_act,
        "over": bool(over),
    }


def _stored(game_id: str, row, moves) -> Stored:
    (game, options, seed, seats, tokens, players, steps, over, to_act, bot, final, c, u) = row
    try:
        seed_value = int(seed) if isinstance(seed, str) and seed.isdigit() else None
        meta = Meta(
            game,
            _loads(game_id, "options", options, dict),
            seed_value,  # type: ignore[arg-type]
            _loads(game_id, "seats", seats, list),
            _loads(game_id, "tokens", tokens, list),
            _loads(game_id, "players", players, list),
        )
        check_meta(meta)
    except ValueError:
        raise CorruptGame(
            f"game {game_id}: its game, seed, seats, tokens or players are malformed"
        ) from None
    if type(steps) is not int or type(to_act) is not int:
        raise CorruptGame(f"game {game_id}: its step count or seat to act is not an integer")
    if [m[0] for m in moves] != list(range(len(moves))) or len(moves) != steps:
        raise CorruptGame(
            f"game {game_id}: {steps} steps are counted but its moves are "
            f"{len(moves)} rows, numbered {_ranges([m[0] for m in moves])}"
        )
    try:
        step_list = check_steps([{"action": a, "name": n, "player": p} for _, a, n, p in moves])
    except ValueError as e:
        raise CorruptGame(f"game {game_id}: move {e}") from None
    final_value = None if final is None else _loads(game_id, "final", final, dict)
    status = Status(steps, bool(over), to_act, bool(bot), final_value)
    return Stored(game_id, meta, step_list, status, c, u)


def _ranges(ks: list) -> str:
    if not ks:
        return "none"
    return (
        f"{ks[0]}..{ks[-1]}"
        if ks == list(range(ks[0], ks[-1] + 1))
        else ", ".join(map(str, ks[:10]))
    )


def export_finished(store: Store, out) -> list:
    """Write every finished game's record to ``out/ID.json`` (``records.save``'s format:
    ``records.load`` and ``caribsim replay`` read it); the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    offset = 0
    while page := store.list(True, offset, MAX_LIST):
        offset += len(page)
        for line in page:
            record = store.export_record(line["id"])
            if record is not None:
                path = out / f"{line['id']}.json"
                records.save(record, path)
                written.append(path)
    return written


def main(argv=None) -> int:
    """``python -m caribsim.web.store export GAMES_DIR OUT_DIR``: the finished games' records."""
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m caribsim.web.store",
        description="Export the finished games of a caribsim serve games folder as records.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export", help="write OUT_DIR/ID.json for every finished game")
    e.add_argument("games_dir")
    e.add_argument("out_dir")
    args = p.parse_args(argv)
    path = Path(args.games_dir) / DB_NAME
    if not path.is_file():
        p.error(f"no games database {str(path)!r}")
    try:
        with SQLiteStore(path) as store:
            written = export_finished(store, args.out_dir)
    except StoreError as e:
        p.error(str(e))
    print(f"{len(written)} records written to {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
