"""Move latency of the web server under load: 20 games at once, bots at full speed (no
delay), a client playing one seat in 4 of them by HTTP POST moves.

Run:    python -m pytest bench/test_bench_web.py --benchmark-only -s
CI:     CARIBSIM_BENCH_SHORT=1 python -m pytest bench --benchmark-only

The server is ``python -m caribsim serve --bot-delay 0`` (uvicorn on a loopback port, its own
process, as a real server runs). This process is the client, an asyncio loop on a thread of
its own: it keeps 16 bot games under way (mcts:50, greedy and random seats, as
tests/web/test_concurrent.py; a new one as soon as one ends, from the lobby's list read ten
times a second) and plays seat 0 of 4 more games (cheap bots on the other seats; a new game
when one ends), each followed over its WebSocket. At its turn a seat posts a random legal
move on a kept-alive connection and times the request's round trip (the request written to
the answer's last byte; its JSON read after the clock stops). At the end every game's
record, finished or not, must replay (``records.replay``).

What a move's answer waits for: ``POST /api/games/ID/move`` checks the move, plays it,
resolves the chance steps after it, rewrites the record, tells the game's pages and answers
the mover's view; the bots' driver is only started (``Game.kick``: a task whose searches run
in threads), so the answer never waits for a bot's search and nothing is subtracted from
the round trip ("50 ms plus the bot's thinking time" is 50 ms here). It does wait for the
server's event loop, which the bots of the 20 games keep busy: at no delay each bot move is
a thread's search and then ~1.5 ms on the loop (the record rewritten, the pages told), and
the loop serves its callbacks in turn, so a request that needs a few turns of the loop (its
body read, the answer sent) waits a few rounds of every game's bot moves.

The figures: the latencies' median, 95th percentile and maximum (ms) are reported in
extra_info and on the summary line, never asserted. The assertion follows the rule of every
benchmark here (_bench_helpers): a ratio to a calibration timed in the same process in
alternating rounds (calibration, round, round, calibration, ...). A round is ``MOVES`` timed
moves; its figure is 1 / (its 95th percentile latency), a rate; the calibration is
``py_work`` (the Python loop: the server's work per move is Python) timed by the wall clock,
like the latencies, while the bot games go on, so the machine time the client and the server
get shows in both. The ratio is 1 / (p95 latency x py_work calls per second): the latency
counted in py_work calls, inverted.

The 50 ms target and the floor: in these rounds py_work runs 0.5 to 1.4 million calls per
wall second on the project's 2-core AMD EPYC VM (about 1.0 million idle; the machine is
shared), so 50 ms is about 50,000 calls, a ratio of 2e-5 (``TARGET_RATIO``). Measured there
in short mode since the server keeps each game's record step by step (before, it replayed the
whole game and wrote indented JSON with Python's encoder at every step, ~1.5 ms of the loop
per bot move): idle, median 10.9 to 11.6 ms, p95 15.3 to 17.3 ms (the previous server, the
same minutes: median 17.5 ms, p95 24.6 ms); beside two CPU-bound processes, median 21.7 to
23.4 ms, p95 31.4 to 33.0 ms; ratios 3.7e-5 to 6.0e-5. The floor is 0.7 x the target's ratio
(1.4e-5, a p95 of about 70 ms at a million py_work calls per second): a server that no longer
answers within the target, give or take the noise of a shared machine, fails it. Each run also
reports ``target_ratio`` and ``p95_meets_50_ms_target`` (the ratio against ``TARGET_RATIO``)
in extra_info and on its summary line.

Unlike the other benchmarks' floors (20% below their measured ratio, so that the harness's
30% slowdown fails every one) this floor is the target's: latency among 20 busy games follows
the calibration too loosely for a floor that tight (beside two CPU-bound processes one round
in three measured 0.6x the idle ratio), so bench/test_harness_suite.py expects this benchmark
to pass a 30% slowdown while it stays within the target (``CARIBSIM_BENCH_SLOWDOWN`` leaves
it as it is: C work added on the client's loop thread inside the clock made one of its
kept-alive connections come back closed in about one run in three, a cause not found yet).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from _bench_helpers import SHORT, SUMMARY, Calibration, py_work, report, rounds, size

from caribsim.human import records

TARGET_SECONDS = 0.050
CALLS_PER_SECOND = (
    1_000_000  # py_work in these rounds on the project's 2-core VM (wall clock, median)
)
TARGET_RATIO = 1 / (TARGET_SECONDS * CALLS_PER_SECOND)  # 50 ms: 2e-5
FLOORS = {
    # 1 / (p95 latency x py_work calls/s); measured 3.7e-5 to 6.0e-5 (short runs, the record
    # kept step by step: an idle machine and one with two CPU-bound processes beside it); the
    # floor is 0.7 x the 50 ms target's ratio: a p95 of about 70 ms at a million calls a second
    "move_latency_p95": 0.7 * TARGET_RATIO,
}
GAMES = 20
CLIENT_GAMES = 4  # games with a seat of the client; the others are bots only
# the client's game (seat 0) and the bot games beside it, as tests/web/test_concurrent.py's
SEATS = [
    ("puerto_rico", ["human", "mcts:50", "greedy"]),
    ("port_royal", ["human", "random", "mcts:50"]),
    ("cuba", ["human", "greedy", "random"]),
    ("puerto_rico", ["human", "random"]),
]
BOT_GAMES = [
    ("puerto_rico", ["mcts:50", "greedy", "random"]),
    ("port_royal", ["random", "mcts:50", "greedy"]),
    ("cuba", ["greedy", "random", "mcts:50"]),
    ("puerto_rico", ["random", "random"]),
]
MOVES = size(300, 100)  # timed moves per round
CALIBRATION_SECONDS = 0.25  # wall time of a calibration round


def _percentile(values, q: float) -> float:
    """The q-quantile (0..1) of the values, nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class _Connection:
    """One kept-alive HTTP/1.1 connection to the server: ``request`` answers (status, body,
    the round trip's seconds)."""

    def __init__(self, port: int):
        self.port = port
        self.reader = self.writer = None

    async def request(self, method: str, path: str, body=None):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        data = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n"
        ).encode()
        t0 = time.perf_counter()
        self.writer.write(head + data)
        header = await self.reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        payload = await self.reader.readexactly(length)
        seconds = time.perf_counter() - t0
        return int(header.split(b" ", 2)[1]), json.loads(payload), seconds

    def close(self):
        if self.writer is not None:
            self.writer.close()


class _Client:
    """The client, on an asyncio loop of its own thread: it keeps ``GAMES - CLIENT_GAMES`` bot
    games running (a new one when one ends) and plays one seat of each of the other
    ``CLIENT_GAMES`` (a new game when one ends); its seats move while ``playing`` is set and
    time each move into ``latencies``."""

    def __init__(self, port: int):
        self.port = port
        self.loop = asyncio.new_event_loop()
        self.playing = self.enough = None
        self.latencies: list[float] = []
        self.running: list[int] = []  # games under way, counted while the seat plays
        self.ids: list[str] = []
        self.refused: list[str] = []
        self.wanted = 0
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.tasks = self._call(self._start())

    def _call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(600)

    async def _start(self):
        self.playing, self.enough = asyncio.Event(), asyncio.Event()
        return [asyncio.ensure_future(self._bot_games())] + [
            asyncio.ensure_future(self._seat(k)) for k in range(CLIENT_GAMES)
        ]

    async def _create(self, http, game, seats, seed) -> dict:
        status, made, _ = await http.request(
            "POST", "/api/games", {"game": game, "seats": seats, "seed": seed}
        )
        assert status == 201, made
        self.ids.append(made["id"])
        return made

    async def _bot_games(self):
        """Keep ``GAMES - CLIENT_GAMES`` bot games under way (the lobby's list of unfinished games, read
        ten times a second)."""
        http, mine, n = _Connection(self.port), set(), 0
        try:
            while True:
                status, listed, _ = await http.request("GET", "/api/games")
                assert status == 200, listed
                under_way = {g["id"] for g in listed["games"]}
                if self.playing.is_set():
                    self.running.append(len(under_way))
                mine &= under_way
                while len(mine) < GAMES - CLIENT_GAMES:
                    game, seats = BOT_GAMES[n % len(BOT_GAMES)]
                    mine.add((await self._create(http, game, seats, 5000 + n))["id"])
                    n += 1
                await asyncio.sleep(0.1)
        finally:
            http.close()

    async def _seat(self, k: int):
        """Play seat 0 of game after game: at each turn a random legal move, timed."""
        import websockets

        rng, http, n = random.Random(k), _Connection(self.port), 0
        try:
            while True:
                game, seats = SEATS[(k + n) % len(SEATS)]
                made = await self._create(http, game, seats, 1000 * k + n)
                n += 1
                gid, token = made["id"], made["links"][0]["url"].split("token=")[1]
                async with websockets.connect(
                    f"ws://127.0.0.1:{self.port}/api/games/{gid}/ws?token={token}", max_size=None
                ) as ws:
                    view = json.loads(await ws.recv())
                    while not view["over"]:
                        if not view["moves"]:  # the bots' turn: wait for the pushed views
                            pushed = json.loads(await ws.recv())
                            if pushed["version"] > view["version"]:
                                view = pushed
                            continue
                        await self.playing.wait()
                        action = rng.choice(view["moves"])["action"]
                        status, answer, seconds = await http.request(
                            "POST",
                            f"/api/games/{gid}/move",
                            {"token": token, "step": view["step"], "action": action},
                        )
                        if status != 200:
                            self.refused.append(f"{status} {answer}")
                            return
                        self.latencies.append(seconds)
                        if len(self.latencies) >= self.wanted:
                            self.playing.clear()
                            self.enough.set()
                        view = answer
        finally:
            http.close()

    def play(self, moves: int) -> list[float]:
        """Let the seats play until ``moves`` more moves are timed; their latencies."""

        async def run():
            start = len(self.latencies)
            self.wanted = start + moves
            self.enough.clear()
            self.playing.set()
            enough = asyncio.ensure_future(self.enough.wait())
            await asyncio.wait(
                [enough, *self.tasks], timeout=300, return_when=asyncio.FIRST_COMPLETED
            )
            enough.cancel()
            failed = [t for t in self.tasks if t.done()]  # they stop only on an error
            assert not failed and not self.refused, (self.refused, [t.exception() for t in failed])
            assert self.enough.is_set(), f"{moves} moves were not played in 300 s"
            return self.latencies[start : start + moves]

        return self._call(run())

    def close(self):
        async def stop():
            for t in self.tasks:
                t.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

        self._call(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def web_server():
    """``caribsim serve`` on a free loopback port over a fresh games folder: (port, folder)."""
    for module in ("starlette", "uvicorn", "websockets"):
        pytest.importorskip(module, reason="needs the web extra: pip install 'caribsim[web]'")
    folder = Path(tempfile.mkdtemp(prefix="caribsim-bench-web-"))
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "caribsim",
            "serve",
            "--port",
            str(port),
            "--games-dir",
            str(folder),
            "--bot-delay",
            "0",
            "--creates-per-minute",  # one client makes every game, a new one as each ends
            "100000",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert p.stdout.readline().startswith("caribsim: play at"), p.stderr.read()
        deadline = time.monotonic() + 60
        while True:  # the line comes when the port is bound, before uvicorn listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                assert time.monotonic() < deadline and p.poll() is None, "the server did not start"
                time.sleep(0.05)
        yield port, folder
    finally:
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    assert p.returncode == 0 and "Traceback" not in err, err


def test_bench_web_move_latency_20_games(benchmark, web_server):
    port, folder = web_server
    client = _Client(port)
    calibration = Calibration("py_work_wall", "calls", py_work)
    n = 1000
    while True:  # a calibration round of about CALIBRATION_SECONDS
        t0 = time.perf_counter()
        py_work(n)
        t = time.perf_counter() - t0
        if t >= 0.02:
            break
        n *= 4
    calibration.units = max(1000, int(n * CALIBRATION_SECONDS / t))
    rates, calibration_rates, latencies = [], [], []

    def calibrate():
        t0 = time.perf_counter()
        py_work(calibration.units)
        calibration_rates.append(calibration.units / (time.perf_counter() - t0))

    def one_pair():
        order = len(rates) % 2  # calibration first in even rounds, last in odd
        if order == 0:
            calibrate()
        got = client.play(MOVES)
        if order == 1:
            calibrate()
        latencies.extend(got)
        rates.append(1 / _percentile(got, 0.95))

    try:
        client.play(size(100, 30))  # warm-up: the games under way, the connections open
        benchmark.pedantic(one_pair, rounds=rounds(7, 3), iterations=1, warmup_rounds=0)
    finally:
        client.close()
    ids = list(client.ids)
    from caribsim.web.store import DB_NAME, SQLiteStore

    with SQLiteStore(folder / DB_NAME) as store:
        for gid in ids:  # every game's stored record, finished or not, replays
            records.replay(store.export_record(gid))
    ratio = statistics.median(r / c for r, c in zip(rates, calibration_rates))
    ms = [1000 * s for s in latencies]
    p95 = _percentile(ms, 0.95)
    benchmark.group = "web"
    # the absolute figures on the summary line (report adds the ratio's line, and asserts it)
    SUMMARY.append(
        f"  {benchmark.name}, its figures: move latency median {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms, "
        f"max {max(ms):.1f} ms over {len(ms)} moves, {GAMES} games at once; p95 "
        f"{'meets' if ratio >= TARGET_RATIO else 'does NOT meet'} the 50 ms target "
        f"(ratio {ratio:.3g}, target ratio {TARGET_RATIO:.3g})"
    )
    report(
        benchmark,
        "inverse_p95_latency_per_second",
        statistics.median(rates),
        calibration,
        statistics.median(calibration_rates),
        ratio,
        FLOORS["move_latency_p95"],
        latency_median_ms=statistics.median(ms),
        latency_p95_ms=p95,
        latency_max_ms=max(ms),
        p95_in_py_work_calls=p95 / 1000 * statistics.median(calibration_rates),
        target_ratio=TARGET_RATIO,
        p95_meets_50_ms_target=ratio >= TARGET_RATIO,
        target_ms=1000 * TARGET_SECONDS,
        moves=len(ms),
        moves_per_round=MOVES,
        rounds=len(rates),
        round_p95_ms=[round(1000 / r, 2) for r in rates],
        round_calibration_calls_per_second=[round(c) for c in calibration_rates],
        games_at_once=GAMES,
        games_under_way_mean=statistics.mean(client.running),
        games_under_way_min=min(client.running),
        games_played=len(ids),
        records_replayed=len(ids),
    )
    print(
        f"\nper round: p95 {[round(1000 / r, 1) for r in rates]} ms, py_work {[round(c) for c in calibration_rates]} calls/s"
    )
    print(
        f"web move latency, {GAMES} games at once: median {statistics.median(ms):.1f} ms, "
        f"p95 {p95:.1f} ms, max {max(ms):.1f} ms over {len(ms)} moves; {len(ids)} games, every record replays"
        f"{'' if not SHORT else ' (short mode)'}"
    )
