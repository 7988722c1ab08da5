"""The games' store (caribsim.web.store): a game made, steps appended, an undo's truncation
in the same transaction, read back checked; the lobby's pages; the record exported as
records.load reads it; a folder of the files of the server before the store imported once;
a damaged row that stops neither the store nor the server; threads writing at once; and
the server's cache of games (Games) over it."""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import warnings

import pytest

import caribsim
from caribsim.human import records
from caribsim.web import store as stores
from caribsim.web.games import GameError, Games
from caribsim.web.store import Meta, SQLiteStore, Status, StoreConflict, StoreError
from tests.web import stored

PR = "puerto_rico"


def _played(seed: int, moves: int | None = None, game=PR, players=2):
    """A state of random moves from ``seed`` (to the end unless ``moves``) and its record."""
    state = caribsim.load_game(game, players=players).new_initial_state(seed=seed)
    rng = random.Random(seed)
    while not state.is_terminal() and (moves is None or len(state.history()) < moves):
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state, records.record_game(state, seed, ["human"] * players)


def _status(state, steps: int | None = None) -> Status:
    over = state.is_terminal()
    final = {"scores": state.scores(), "returns": state.returns()} if over else None
    n = len(state.history()) if steps is None else steps
    return Status(n, over, state.current_player(), False, final)


def _meta(rec, players=2) -> Meta:
    return Meta(
        rec["game"],
        rec["options"],
        rec["seed"],
        ["human"] * players,
        [f"t{k}" for k in range(players)],
        ["human"] * players,
    )


@pytest.fixture
def store(tmp_path):
    with SQLiteStore(tmp_path / "games.sqlite3") as s:
        yield s


def test_a_game_is_made_appended_truncated_and_read_back(store):
    _, rec = _played(3, 60)
    steps = rec["steps"]
    store.create("0123456789ab", _meta(rec), steps[:10], Status(10, False, 0, False))
    assert store.load("0123456789ab").steps == steps[:10]
    for k in range(10, 60, 7):  # a move and its chance steps at a time
        part = steps[k : k + 7]
        store.append("0123456789ab", k, part, Status(k + len(part), False, 1, True), k)
    got = store.load("0123456789ab")
    assert got.steps == steps and got.status == Status(60, False, 1, True)
    assert got.meta == _meta(rec) and got.created <= got.updated
    # an undo to step 40 and other steps: the old ones from 40 on are gone, one transaction
    other = [{"action": 7, "name": "x", "player": 0}, {"action": 8, "name": "y", "player": -1}]
    store.append("0123456789ab", 40, other, Status(42, False, 0, False), 60)
    assert store.load("0123456789ab").steps == steps[:40] + other
    assert store.load("ffffffffffff") is None and store.export_record("ffffffffffff") is None


def test_a_writer_that_knew_another_count_changes_nothing(store):
    _, rec = _played(4, 20)
    store.create("0123456789ab", _meta(rec), rec["steps"], Status(20, False, 0, False))
    with pytest.raises(StoreConflict, match="20 steps are stored, the server knew 19"):
        store.append("0123456789ab", 19, [], Status(19, False, 0, False), 19)
    with pytest.raises(StoreError, match="no game 'ffffffffffff' is stored"):
        store.append("ffffffffffff", 0, [], Status(0, False, 0, False), 0)
    with pytest.raises(StoreError, match="already stored"):
        store.create("0123456789ab", _meta(rec), [], Status(0, False, 0, False))
    with pytest.raises(ValueError, match="step 1: must be"):
        store.append("0123456789ab", 20, [rec["steps"][0], {"action": "1"}], _status_n(22), 20)
    assert store.load("0123456789ab").steps == rec["steps"]


def _status_n(n):
    return Status(n, False, 0, False)


def test_a_failure_inside_the_transaction_leaves_the_game_as_it_was(store, monkeypatch):
    """The truncation of an undo, the new steps and the status are one transaction: a
    failure after the truncation keeps the old steps and status."""
    _, rec = _played(5, 30)
    store.create("0123456789ab", _meta(rec), rec["steps"], Status(30, False, 2, False))

    def broken(db, game_id, first, steps):
        db.execute("INSERT INTO moves VALUES (?, ?, 1, 'x', 0)", (game_id, first))
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(SQLiteStore, "_insert", staticmethod(broken))
    with pytest.raises(StoreError, match="disk I/O error"):
        store.append("0123456789ab", 10, rec["steps"][:1], Status(11, False, 0, True), 30)
    monkeypatch.undo()
    got = store.load("0123456789ab")
    assert got.steps == rec["steps"] and got.status == Status(30, False, 2, False)
    store.append("0123456789ab", 30, [], Status(30, False, 1, False), 30)  # the store goes on
    assert store.load("0123456789ab").status.to_act == 1


def test_the_export_is_the_record_and_records_load_reads_it(store, tmp_path):
    state, rec = _played(6)
    assert state.is_terminal()
    store.create("0123456789ab", _meta(rec), rec["steps"][:5], Status(5, False, 0, False))
    store.append("0123456789ab", 5, rec["steps"][5:], _status(state), 5)
    assert store.export_record("0123456789ab") == rec
    assert records.replay(store.export_record("0123456789ab")).to_dict() == state.to_dict()
    unfinished, urec = _played(7, 30)
    store.create("ba9876543210", _meta(urec), urec["steps"], _status(unfinished))
    written = stores.export_finished(store, tmp_path / "out")
    assert written == [tmp_path / "out" / "0123456789ab.json"]  # the finished game only
    assert records.load(written[0]) == rec
    store.close()
    assert stores.main(["export", str(tmp_path), str(tmp_path / "out2")]) == 0
    assert records.load(tmp_path / "out2" / "0123456789ab.json") == rec


def test_the_lobby_pages_newest_first(store):
    ids = [f"{k:012x}" for k in range(7)]
    for k, gid in enumerate(ids):
        _, rec = _played(k, 3)
        store.create(gid, _meta(rec), rec["steps"], Status(len(rec["steps"]), k % 3 == 0, 0, False))
    unfinished = [g for k, g in enumerate(ids) if k % 3][::-1]
    assert store.count(False) == 4 and store.count(True) == 3
    assert [s["id"] for s in store.list(False, 0, 3)] == unfinished[:3]
    assert [s["id"] for s in store.list(False, 3, 3)] == unfinished[3:]
    assert [s["id"] for s in store.list(True, 0, 200)] == [ids[6], ids[3], ids[0]]
    line = store.list(False, 0, 1)[0]
    assert set(line) == {"id", "game", "options", "players", "step", "to_act", "over"}
    for offset, limit in ((-1, 5), (0, 0), (0, 201), ("0", 5)):
        with pytest.raises(ValueError):
            store.list(False, offset, limit)


def _damage(folder, sql, *args):
    with sqlite3.connect(stored.path(folder)) as db:
        db.execute(sql, args)
    db.close()


@pytest.mark.parametrize(
    "sql,words",
    [
        ("DELETE FROM moves WHERE game_id = ? AND k = 3", "numbered 0, 1, 2, 4, 5"),
        ("UPDATE games SET options = '{bad' WHERE id = ?", "its options is not JSON"),
        ("UPDATE games SET seed = 'x' WHERE id = ?", "seed, seats, tokens or players"),
        ("UPDATE moves SET name = x'00ff' WHERE game_id = ? AND k = 2", "move step 2: must be"),
        ("UPDATE moves SET action = 'a' WHERE game_id = ? AND k = 4", "move step 4: must be"),
        ("UPDATE games SET steps = 99 WHERE id = ?", "99 steps are counted"),
    ],
)
def test_a_damaged_row_is_a_clear_error_and_the_others_go_on(tmp_path, sql, words):
    good, bad = "0123456789ab", "ba9876543210"
    with SQLiteStore(stored.path(tmp_path)) as store:
        for gid, seed in ((good, 1), (bad, 2)):
            state, rec = _played(seed, 12)
            store.create(gid, _meta(rec), rec["steps"], _status(state))
    _damage(tmp_path, sql, bad)
    with SQLiteStore(stored.path(tmp_path)) as store:
        with pytest.raises(stores.CorruptGame, match=f"game {bad}: .*{words}"):
            store.load(bad)
        assert store.load(good).status.steps == 12
        listed = [s["id"] for s in store.list(False)]
        assert good in listed
    games = Games(tmp_path)
    with pytest.raises(GameError, match=f"game {bad} cannot be read from the store") as e:
        games.get(bad)
    assert e.value.status == 500
    assert games.get(good).step == 12  # the server goes on with the others
    games.close()


def test_a_step_that_does_not_replay_is_refused_on_loading(tmp_path):
    with SQLiteStore(stored.path(tmp_path)) as store:
        state, rec = _played(3, 12)
        store.create("0123456789ab", _meta(rec), rec["steps"], _status(state))
    _damage(tmp_path, "UPDATE moves SET action = 9999 WHERE game_id = ? AND k = 5", "0123456789ab")
    games = Games(tmp_path)
    with pytest.raises(GameError, match="cannot be read from the store: step 5"):
        games.get("0123456789ab")
    games.close()


def test_threads_write_and_read_at_once(store):
    ids = [f"{k:012x}" for k in range(8)]
    _, rec = _played(1, 1)
    for gid in ids:
        store.create(gid, _meta(rec), [], Status(0, False, 0, False))
    errors = []

    def write(gid):
        try:
            for k in range(150):
                step = {"action": k, "name": f"a{k}", "player": k % 2}
                store.append(gid, k, [step], Status(k + 1, False, 0, False), k)
        except Exception as e:  # reported below
            errors.append(e)

    def read():
        try:
            for _ in range(100):
                assert len(store.list(False, 0, 200)) == 8
                for gid in ids:
                    got = store.load(gid)
                    assert [s["action"] for s in got.steps] == list(range(got.status.steps))
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=write, args=(g,)) for g in ids]
    threads += [threading.Thread(target=read) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    for gid in ids:
        assert [s["action"] for s in store.load(gid).steps] == list(range(150))


def test_a_second_connection_waits_for_the_lock_then_fails_clearly(tmp_path, store):
    store.create("0123456789ab", _meta(_played(1, 1)[1]), [], Status(0, False, 0, False))
    store.set_busy_timeout(0.05)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError, match="database is locked"):
            store.append("0123456789ab", 0, [], Status(0, False, 1, False), 0)
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.append("0123456789ab", 0, [], Status(0, False, 1, False), 0)
    assert store.load("0123456789ab").status.to_act == 1


def test_the_schema_is_versioned(tmp_path):
    path = tmp_path / "games.sqlite3"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        db.execute("UPDATE schema_version SET version = 2")
    db.close()
    with pytest.raises(StoreError, match="schema version 2; this caribsim reads up to 1"):
        SQLiteStore(path)
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    db.close()
    with pytest.raises(StoreError, match="an SQLite file but not a games database"):
        SQLiteStore(other)
    (tmp_path / "text.sqlite3").write_text("not a database at all, " * 100)
    with pytest.raises(StoreError, match="file is not a database"):
        SQLiteStore(tmp_path / "text.sqlite3")
    closed = SQLiteStore(tmp_path / "c.sqlite3")
    closed.close()
    with pytest.raises(StoreError, match="is closed"):
        closed.count(False)


# --- the folder of files before the store ------------------------------------------------------
def test_a_folder_of_files_is_imported_once(tmp_path):
    """Each ``ID.json`` + ``ID.seats.json`` of a folder is imported at the first start with
    the checks of the files' server (a record that does not replay, a seats file that is not
    one are not imported, said once); the files stay; a later start imports nothing."""
    ids = {}
    for k, (seats, moves) in enumerate(
        [(["human", "random"], 30), (["random", "human", "greedy"], None), (["human"] * 2, 9)]
    ):
        state, _ = _played(10 + k, moves, players=len(seats))
        gid = f"{k:012x}"
        stored.write_legacy(
            tmp_path,
            gid,
            state,
            10 + k,
            seats,
            [f"tok{k}{s}" if p == "human" else None for s, p in enumerate(seats)],
        )
        ids[gid] = state
    state, _ = _played(20, 10)
    stored.write_legacy(tmp_path, "bad000000000", state, 20, ["human"] * 2, ["a", "b"])
    broken = records.load(tmp_path / "bad000000000.json")
    broken["steps"][5]["action"] = 9999  # a step that does not replay
    records.save(broken, tmp_path / "bad000000000.json")
    stored.write_legacy(tmp_path, "bad111111111", state, 20, ["human"] * 2, ["a", "b"])
    (tmp_path / "bad111111111.seats.json").write_text('{"format": "other"}')
    stored.write_legacy(tmp_path, "not-an-id", state, 20, ["human"] * 2, ["a", "b"])
    before = sorted(p.name for p in tmp_path.iterdir())
    games = Games(tmp_path)
    for gid, want in ids.items():
        game = games.get(gid)
        assert game.state.history() == want.history() and game.step == len(want.history())
        assert (
            games.store.export_record(gid)["steps"]
            == records.load(tmp_path / f"{gid}.json")["steps"]
        )
    assert games.get("000000000000").seat_of("tok00") == 0
    assert games.get("000000000001").tokens == [None, "tok11", None]
    notes = games.store.imports()
    assert notes["000000000000.seats.json"] == "imported"
    assert notes["bad000000000.seats.json"].startswith("not imported: step 5")
    assert "is not a caribsim-web-seats file" in notes["bad111111111.seats.json"]
    assert "not-an-id.seats.json" not in notes and notes[Games.IMPORTED].startswith("3 games")
    for bad in ("bad000000000", "bad111111111"):
        with pytest.raises(GameError, match="no game") as e:
            games.get(bad)
        assert e.value.status == 404
    assert {s["id"] for s in games.lobby()["games"]} | {
        s["id"] for s in games.lobby()["finished"]
    } == set(ids)
    games.close()
    # the files stay; a second start imports nothing (a game deleted from the store stays so)
    assert sorted(p.name for p in tmp_path.iterdir() if "sqlite3" not in p.name) == before
    _damage(tmp_path, "DELETE FROM moves WHERE game_id = ?", "000000000002")
    _damage(tmp_path, "DELETE FROM games WHERE id = ?", "000000000002")
    again = Games(tmp_path)
    with pytest.raises(GameError, match="no game"):
        again.get("000000000002")
    again.close()


# --- the server's cache --------------------------------------------------------------------------
def _body(seats):
    return {"game": PR, "seats": seats, "seed": 3}


def test_the_cache_keeps_at_most_max_cached_and_loads_on_demand(tmp_path):
    games = Games(tmp_path, max_cached=3)
    made = [games.create(_body(["human", "random"])) for _ in range(5)]
    assert list(games.games) == [g.id for g in made[2:]]
    ids = [g.id for g in made]
    held = made[0]
    del made
    assert games.get(ids[0]) is held  # let go by the cache but held: the same object
    assert len(games.games) == 3 and ids[1] not in games.games
    # a game a page follows is pinned
    games.get(ids[2]).listeners.add(object())  # type: ignore[arg-type]
    for gid in ids:
        games.get(gid)
    assert ids[2] in games.games and len(games.games) == 3
    # loaded from the store: the same game
    fresh = Games(tmp_path, max_cached=2)
    for gid in ids:
        game = fresh.get(gid)
        assert game.step == held.step if gid == ids[0] else game.step > 0
        assert game.steps == games.get(gid).steps
    games.close()
    fresh.close()


def test_moves_and_an_undo_are_stored_and_a_restart_goes_on(tmp_path):
    games = Games(tmp_path)
    game = games.create(_body(["human", "human"]))
    rng = random.Random(1)
    for _ in range(12):
        seat = game.state.current_player()
        game.move(
            {
                "token": game.tokens[seat],
                "step": game.step,
                "action": rng.choice(game.state.legal_actions()),
            }
        )
    assert games.store.export_record(game.id)["steps"] == game.steps
    seat = game.state.current_player()
    before = game.step
    game.undo({"token": game.tokens[seat], "step": game.step})
    assert game.step < before
    assert games.store.load(game.id).steps == game.steps
    games.close()
    again = Games(tmp_path)
    back = again.get(game.id)
    assert back.steps == game.steps and back.tokens == game.tokens
    again.close()


def test_only_games_with_a_bot_to_act_are_resumed(tmp_path):
    games = Games(tmp_path)
    bot = games.create({"game": PR, "seats": ["random", "human"], "seed": 1})
    human = games.create({"game": PR, "seats": ["human", "random"], "seed": 1})
    assert bot.bot_to_act() is not None and human.bot_to_act() is None
    games.close()
    again = Games(tmp_path)
    assert [g.id for g in again.live_bot_games()] == [bot.id]
    again.close()


def test_the_lobby_query_is_checked(tmp_path):
    games = Games(tmp_path)
    games.create(_body(["human", "random"]))
    page = games.lobby("0", "1")
    assert page["count"] == {"games": 1, "finished": 0} and len(page["games"]) == 1
    for offset, limit, words in (
        ("-1", "5", "offset must be an integer in 0.."),
        ("x", "5", "offset must be"),
        ("0", "0", "limit must be an integer in 1..200"),
        ("0", "201", "limit must be an integer in 1..200"),
    ):
        with pytest.raises(GameError, match=words) as e:
            games.lobby(offset, limit)
        assert e.value.status == 400
    games.close()


def test_the_api_pages_the_lobby_and_says_a_damaged_game(tmp_path):
    from extras import need

    need("web")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from caribsim.web.app import create_app

    with TestClient(create_app(tmp_path, bot_delay=30)) as c:
        ids = [
            c.post("/api/games", json={"game": PR, "seats": ["human", "random"]}).json()["id"]
            for _ in range(3)
        ]
        first = c.get("/api/games", params={"limit": 2}).json()
        second = c.get("/api/games", params={"limit": 2, "offset": 2}).json()
        assert [g["id"] for g in first["games"] + second["games"]] == ids[::-1]
        assert first["count"] == {"games": 3, "finished": 0} and first["choices"]
        r = c.get("/api/games", params={"limit": 500})
        assert r.status_code == 400 and "limit must be an integer in 1..200" in r.json()["error"]
    _damage(tmp_path, "DELETE FROM moves WHERE game_id = ? AND k = 0", ids[1])
    with TestClient(create_app(tmp_path, bot_delay=30)) as c:
        r = c.get(f"/api/games/{ids[1]}")
        assert r.status_code == 500 and f"game {ids[1]} cannot be read" in r.json()["error"]
        assert c.get(f"/api/games/{ids[0]}").status_code == 200
        assert json.loads(c.get("/api/games").text)["count"]["games"] == 3
