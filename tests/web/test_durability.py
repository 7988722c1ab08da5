"""The store survives crashes: a real ``caribsim serve`` process with twenty games at once
(bots alone, a person against bots, two people at one screen: HTTP clients that move and
undo) is killed with SIGKILL at a random instant, restarted, ten times and more; after each
kill every move whose answer came back is stored at its step, every game replays, nothing is
there twice (a move sent again after the crash is refused as stale when it was stored), and
what was stored before stays (an undo aside). A power loss: the database files copied at a
random instant while moves are being written open, pass SQLite's integrity check, and hold
every move answered before the copy began.

The copy is taken with the server stopped (SIGSTOP) for the few milliseconds it takes, so
that the files are those of one instant, as a disk's are when the power goes: a copy of
one file and then the other while the server writes would be of no instant at all (a
checkpoint between the two copies) and prove nothing. The writes that instant interrupts
are in flight: a transaction half in the WAL. A copy whose WAL is cut at a random byte (a
disk that lost the end of what was not yet synced) opens and checks too.

Run with -s for the figures: rounds, moves, seconds, the answer's time to a move."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra
httpx = need("web", "httpx")

from caribsim.human import records
from caribsim.web.store import DB_NAME, SQLiteStore
from tests.web.conftest import free_socket, serve_process, wait_for

ROUNDS = 10
BOT_DELAY = 0.05  # seconds: the bots move nearly at once, but leave the clients their turn
# twenty games at once: 8 of bots alone, 8 of a person (the client) against bots, 4 of two
# people at one screen (the client plays both)
KINDS = (
    [("puerto_rico", ["random", "random"]), ("port_royal", ["random", "greedy"])] * 2
    + [("cuba", ["random", "random"]), ("port_royal", ["greedy", "random"])] * 2
    + [("puerto_rico", ["human", "random"]), ("port_royal", ["human", "random"])] * 2
    + [("cuba", ["human", "random"]), ("puerto_rico", ["random", "human", "random"])] * 2
    + [("puerto_rico", ["human", "human"]), ("port_royal", ["human", "human"])] * 2
)
RESENT = {"stored": 0, "played": 0}  # the moves sent again after a kill: stale / played now
LOST = (httpx.TransportError,)  # the server went away (killed) or was stopped too long


@dataclass
class Tracked:
    """What the clients were told about one game: the moves answered (step -> action and
    seat), the steps known to be stored (a view's step), the undos sent since the last
    check (the steps from which a stored step may have been taken back), a move whose
    answer was lost (sent again after the restart)."""

    gid: str
    kind: tuple
    tokens: list
    acked: dict = field(default_factory=dict)
    acked_at: dict = field(default_factory=dict)  # step -> when its answer came (monotonic)
    floor: int = 0
    floor_at: list = field(default_factory=list)  # (when, step) of each view
    cut: int | None = None  # the lowest step an undo sent since the last check went back to
    pending: tuple | None = None  # (step, action, seat) of a move whose answer was lost
    over: bool = False
    stored: list = field(default_factory=list)  # the steps stored at the last check

    @property
    def people(self) -> bool:
        return any(t for t in self.tokens)

    def seen(self, step: int, now: float) -> None:
        self.floor = max(self.floor, step)
        self.floor_at.append((now, step))


class Serve:
    """``caribsim serve`` over ``folder`` on ``port``, started and killed as a test needs."""

    def __init__(self, folder: Path, port: int):
        self.folder, self.port, self.proc = folder, port, None
        self.url = f"http://127.0.0.1:{port}"
        self.log = folder.parent / "serve.log"

    def start(self) -> float:
        began = time.monotonic()
        with open(self.log, "a") as err:
            self.proc = serve_process(
                self.port,
                str(self.folder),
                "--bot-delay",
                str(BOT_DELAY),
                "--analysis-iterations",
                "4",
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        with httpx.Client(base_url=self.url, timeout=5) as c:

            def up():
                assert self.proc.poll() is None, self.log.read_text()[-3000:]
                try:
                    return c.get("/api/games", params={"limit": 1}).status_code == 200
                except LOST:
                    return False

            wait_for(up, timeout=60, what="the server")
        return time.monotonic() - began

    def kill(self, sig=signal.SIGKILL) -> None:
        self.proc.send_signal(sig)
        if sig == signal.SIGKILL:
            self.proc.wait(30)


def _create(c, kind) -> Tracked | None:
    game, seats = kind
    r = c.post("/api/games", json={"game": game, "seats": seats})
    if r.status_code != 201:  # a server's limit on creates: another round makes it
        return None
    made = r.json()
    tokens = [None] * len(seats)
    for link in made["links"]:
        tokens[link["seat"]] = link["url"].split("token=")[1]
    return Tracked(made["id"], kind, tokens)


def _send_again(c, t: Tracked) -> None:
    """The move whose answer the crash took, sent again: played now (it was not stored) or
    stale (it was: then it must be at its step)."""
    step, action, seat = t.pending
    r = c.post(
        f"/api/games/{t.gid}/move", json={"token": t.tokens[seat], "step": step, "action": action}
    )
    if r.status_code == 200 or (r.status_code == 409 and "stale request" in r.text):
        t.acked[step], t.acked_at[step] = (action, seat), time.monotonic()
        RESENT["played" if r.status_code == 200 else "stored"] += 1
    else:
        raise AssertionError(f"game {t.gid}: the move sent again: {r.status_code} {r.text}")
    t.pending = None


def _play(c, t: Tracked, stop, rng: random.Random, times: list, undos: float) -> None:
    """A client's game: its person's moves (random legal ones, an undo at a rate of
    ``undos`` where one is offered), until the game ends, the round stops or the server goes
    away."""
    tokens = [tok for tok in t.tokens if tok]
    while not stop.is_set() and not t.over:
        v = c.get(f"/api/games/{t.gid}", params=[("token", tok) for tok in tokens]).json()
        t.seen(v["step"], time.monotonic())
        if v["over"]:
            t.over = True
            return
        if not v["moves"]:  # a bot is to act
            time.sleep(0.01)
            continue
        seat, step = v["to_act"], v["step"]
        target = v["undo"].get(str(seat))
        if target is not None and rng.random() < undos:
            t.cut = target if t.cut is None else min(t.cut, target)
            for k in [k for k in t.acked if k >= target]:  # taken back, answered or not
                del t.acked[k]
            t.floor = min(t.floor, target)
            r = c.post(f"/api/games/{t.gid}/undo", json={"token": t.tokens[seat], "step": step})
            assert r.status_code == 200, r.text
            t.floor = r.json()["step"]
            continue
        action = rng.choice(v["moves"])["action"]
        t.pending = (step, action, seat)
        began = time.monotonic()
        r = c.post(
            f"/api/games/{t.gid}/move",
            json={"token": t.tokens[seat], "step": step, "action": action},
        )
        now = time.monotonic()
        t.pending = None
        assert r.status_code == 200, r.text
        times.append(now - began)
        t.acked[step], t.acked_at[step] = (action, seat), now
        t.seen(r.json()["step"], now)


def _watch(c, games: list, stop: threading.Event) -> None:
    """The bots' games seen by a watcher: each view's step is stored."""
    while not stop.is_set():
        for t in games:
            if not t.over:
                v = c.get(f"/api/games/{t.gid}").json()
                t.seen(v["step"], time.monotonic())
                t.over = v["over"]
        time.sleep(0.05)


def _clients(url, games: list, stop: threading.Event, seed: int, times: list, undos=0.08):
    """One thread per client's game and a watcher of the bots' games; each ends when the
    server goes away."""
    errors: list = []

    def guard(fn, *args):
        try:
            with httpx.Client(base_url=url, timeout=20) as c:
                fn(c, *args)
        except LOST:
            stop.set()  # the server went away: every client stops
        except Exception as e:  # a wrong answer: the test fails
            errors.append(e)
            stop.set()

    def person(c, t, k):
        if t.pending:
            _send_again(c, t)
        _play(c, t, stop, random.Random(seed * 100 + k), times, undos)

    threads = [
        threading.Thread(target=guard, args=(person, t, k))
        for k, t in enumerate(games)
        if t.people and not t.over
    ]
    threads.append(
        threading.Thread(target=guard, args=(_watch, [t for t in games if not t.people], stop))
    )
    for th in threads:
        th.start()
    return threads, errors


def _copy_db(folder: Path, to: Path) -> None:
    """The database's files as they are (not the -shm: SQLite rebuilds it, as after a power
    loss)."""
    to.mkdir(parents=True, exist_ok=True)
    for name in (DB_NAME, DB_NAME + "-wal"):
        if (folder / name).exists():
            shutil.copyfile(folder / name, to / name)


def _check(folder: Path, games: list, before: float | None = None) -> int:
    """The database in ``folder`` opens and checks, every game replays, every move answered
    (before ``before``, a copy's instant, if given) is at its step, the steps known stored
    are, the steps stored at the last check still are (up to an undo's step); the number of
    steps stored."""
    with SQLiteStore(folder / DB_NAME) as store:
        assert store.integrity() == "ok"
        ids = {s["id"] for over in (False, True) for s in _all(store, over)}
        total = 0
        for gid in ids:  # every game stored replays (one whose answer was lost too)
            rec = store.export_record(gid)
            records.replay(rec)
            total += len(rec["steps"])
        with sqlite3.connect(folder / DB_NAME) as db:
            assert db.execute("SELECT count(*) FROM moves").fetchone()[0] == total
            dup = "SELECT game_id, k FROM moves GROUP BY game_id, k HAVING count(*) > 1"
            assert db.execute(dup).fetchall() == []
        db.close()
        for t in games:
            assert t.gid in ids, f"game {t.gid}: its creation was answered, it is not stored"
            steps = store.load(t.gid).steps
            where = f"game {t.gid} {t.kind}"
            acked = {k: m for k, m in t.acked.items() if before is None or t.acked_at[k] < before}
            for k, (action, seat) in acked.items():
                assert k < len(steps), f"{where}: the answered move of step {k} is lost"
                assert (steps[k]["action"], steps[k]["player"]) == (action, seat), where
            floor = t.floor
            if before is not None:
                floor = max([s for when, s in t.floor_at if when < before], default=0)
            assert len(steps) >= floor, f"{where}: {len(steps)} steps stored, {floor} seen"
            keep = len(t.stored) if t.cut is None else min(t.cut, len(t.stored))
            assert steps[:keep] == t.stored[:keep], f"{where}: stored steps changed"
            if before is None:
                t.stored, t.cut = steps, None
                t.floor, t.floor_at = len(steps), []
    return total


def _all(store, over: bool) -> list:
    out, offset = [], 0
    while page := store.list(over, offset, 200):
        out += page
        offset += len(page)
    return out


def _fill(url, games: list) -> None:
    """Twenty games under way: a game that ended is followed by a new one of its kind."""
    with httpx.Client(base_url=url, timeout=20) as c:
        running = [t for t in games if not t.over]
        for kind in KINDS:
            if sum(t.kind == kind for t in running) < KINDS.count(kind):
                made = _create(c, kind)
                if made is not None:
                    running.append(made)
                    games.append(made)


def _tear(wal: Path, rng: random.Random) -> None:
    """The WAL as a power loss may leave it with ``synchronous=FULL``: what follows its last
    commit frame (a transaction under way, not synced) cut at a random byte and a frame half
    written there. Before that frame nothing may be lost: every commit synced it."""
    data = wal.read_bytes()
    frame, salts = 24 + int.from_bytes(data[8:12], "big"), data[16:24]
    end = at = 32
    while at + frame <= len(data) and data[at + 8 : at + 16] == salts:
        if int.from_bytes(data[at + 4 : at + 8], "big"):  # a commit frame: the database's size
            end = at + frame
        at += frame
    cut = rng.randrange(end, len(data) + 1)
    wal.write_bytes(data[:cut] + rng.randbytes(rng.randrange(1, frame)))


@pytest.fixture
def serve(tmp_path):
    with free_socket() as sock:
        port = sock.getsockname()[1]
    server = Serve(tmp_path / "games", port)
    yield server
    if server.proc is not None and server.proc.poll() is None:
        server.kill()


def test_kill_9_at_random_instants_loses_no_answered_move(serve, tmp_path):
    rng = random.Random(int(os.environ.get("CARIBSIM_DURABILITY_SEED", "7")))
    games: list[Tracked] = []
    times: list[float] = []
    began, starts, total = time.monotonic(), [], 0
    for r in range(ROUNDS):
        starts.append(serve.start())
        _fill(serve.url, games)
        stop = threading.Event()
        threads, errors = _clients(serve.url, games, stop, r, times)
        time.sleep(rng.uniform(0.5, 2.0))  # the kill comes at a random instant
        serve.kill()
        stop.set()
        for th in threads:
            th.join(60)
        assert not errors, errors
        assert all(not th.is_alive() for th in threads)
        # the check reads a copy: the next server starts from the files as the kill left them
        copy = tmp_path / f"check-{r}"
        _copy_db(serve.folder, copy)
        total = _check(copy, games)
        shutil.rmtree(copy)
    seconds = time.monotonic() - began
    people = sum(len(t.acked) for t in games)
    bots = [t for t in games if not t.people]
    assert people >= 2 * ROUNDS and len(games) >= len(KINDS)
    assert sum(len(t.stored) for t in bots) > 0  # the bots moved on after each restart
    print(
        f"\n{ROUNDS} kills: {len(games)} games, {total} steps stored, {people} answered moves "
        f"of the clients, all there (sent again after a kill: {RESENT['stored']} stale, "
        f"{RESENT['played']} played); {seconds:.1f} s ({statistics.median(starts):.1f} s a "
        f"start); a move's answer: median {1000 * statistics.median(times):.1f} ms"
    )


def test_a_copy_taken_at_a_power_loss_opens_and_holds_every_answered_move(serve, tmp_path):
    rng = random.Random(11)
    games: list[Tracked] = []
    times: list[float] = []
    serve.start()
    _fill(serve.url, games)
    stop = threading.Event()
    # no undo: a view's step before the copy is then stored in it whatever came after
    threads, errors = _clients(serve.url, games, stop, 0, times, undos=0)
    copies = []
    try:
        for k in range(4):
            time.sleep(rng.uniform(0.2, 0.6))
            wal = serve.folder / (DB_NAME + "-wal")
            instant = time.monotonic()  # every answer before this instant was sent before it
            serve.kill(signal.SIGSTOP)
            try:
                copy = tmp_path / f"copy-{k}"
                _copy_db(serve.folder, copy)
                copies.append((copy, instant, wal.stat().st_size if wal.exists() else 0))
            finally:
                serve.kill(signal.SIGCONT)
    finally:
        stop.set()
        for th in threads:
            th.join(60)
    assert not errors, errors
    answered = sum(len(t.acked) for t in games)
    assert answered > 10
    for k, (copy, instant, size) in enumerate(copies):
        torn = tmp_path / f"torn-{k}"
        _copy_db(copy, torn)  # before the check, whose close folds the WAL into the file
        _check(copy, games, before=instant)
        # what was not synced lost or half written: the same answered moves are there
        if size > 32:
            _tear(torn / (DB_NAME + "-wal"), rng)
            with sqlite3.connect(torn / DB_NAME) as db:
                assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            db.close()
            _check(torn, games, before=instant)
    serve.kill()
    _check(serve.folder, games)
    print(f"\n{len(copies)} copies at a power loss: {answered} answered moves, all there")
