"""Pieces shared by the web server's benchmarks (bench/test_bench_web.py, the move latency among
20 games; bench/test_bench_web_load.py, 200 clients at once): a ``caribsim serve`` process on a
loopback port, a kept-alive HTTP/1.1 connection that times its round trips, the client that
plays seats by ``POST .../move``, and the move latency's ratio to the ``py_work`` calibration
timed by the wall clock in paired rounds (test_bench_web.py's docstring says why that one)."""

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
from contextlib import contextmanager
from pathlib import Path

import pytest
from _bench_helpers import SUMMARY, Calibration, py_work, report

WEB_EXTRA = ("starlette", "uvicorn", "websockets")
CALIBRATION_SECONDS = 0.25  # wall time of a calibration round


def need_web_extra() -> None:
    for module in WEB_EXTRA:
        pytest.importorskip(module, reason="needs the web extra: pip install 'caribsim[web]'")


def percentile(values, q: float) -> float:
    """The q-quantile (0..1) of the values, nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class Connection:
    """One kept-alive HTTP/1.1 connection to the server: ``request`` answers (status, body,
    the round trip's seconds). A connection left idle for ``IDLE`` seconds is opened anew
    before its next request, as an HTTP client does: uvicorn closes one idle for 5 s."""

    IDLE = 4.0

    def __init__(self, port: int):
        self.port = port
        self.reader = self.writer = None
        self.used = 0.0

    async def request(self, method: str, path: str, body=None):
        if self.writer is not None and time.monotonic() - self.used > self.IDLE:
            self.close()
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
        self.used = time.monotonic()
        return int(header.split(b" ", 2)[1]), json.loads(payload), seconds

    def close(self):
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


def child_env() -> dict:
    """The environment of a child process that imports caribsim as this one does (the
    checkout's, not another)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(*options: str):
    """``python -m caribsim serve --bot-delay 0 *options`` on a free loopback port over a fresh
    games folder: (the process, its port, the folder). At the end it must stop on SIGINT with
    exit code 0 and no traceback in its log."""
    folder = Path(tempfile.mkdtemp(prefix="caribsim-bench-web-"))
    port = free_port()
    p = subprocess.Popen(
        [
            *(sys.executable, "-m", "caribsim", "serve", "--port", str(port)),
            *("--games-dir", str(folder), "--bot-delay", "0", *options),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
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
        yield p, port, folder
    finally:
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    assert p.returncode == 0 and "Traceback" not in err, err


class SeatClient:
    """The client, on an asyncio loop of its own thread: it plays seat 0 of ``seats`` games at
    once (a new game when one ends, the games of ``seat_games`` in turn), each followed over
    its WebSocket, and keeps ``bot_games`` games of bots only under way beside them (a new one
    when one ends, from the lobby's list read ten times a second). Its seats move while
    ``playing`` is set and time each move into ``latencies``."""

    def __init__(self, port: int, *, seats: int, seat_games, bot_games: int = 0, bot_seats=()):
        self.port = port
        self.seats, self.seat_games = seats, seat_games
        self.bot_games, self.bot_seats = bot_games, bot_seats
        self.loop = asyncio.new_event_loop()
        self.playing = self.enough = None
        self.latencies: list[float] = []
        self.running: list[int] = []  # games under way, counted while the seats play
        self.ids: list[str] = []
        self.finished = 0  # the seats' games played to their end
        self.refused: list[str] = []
        self.wanted = 0
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.tasks = self._call(self._start())

    def _call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(600)

    async def _start(self):
        self.playing, self.enough = asyncio.Event(), asyncio.Event()
        tasks = [asyncio.ensure_future(self._seat(k)) for k in range(self.seats)]
        if self.bot_games:
            tasks.append(asyncio.ensure_future(self._bot_games()))
        return tasks

    async def _create(self, http, game, seats, seed) -> dict:
        status, made, _ = await http.request(
            "POST", "/api/games", {"game": game, "seats": seats, "seed": seed}
        )
        assert status == 201, made
        self.ids.append(made["id"])
        return made

    async def _bot_games(self):
        """Keep ``bot_games`` games of bots only under way (the lobby's list of unfinished
        games, read ten times a second)."""
        http, mine, n = Connection(self.port), set(), 0
        try:
            while True:
                status, listed, _ = await http.request("GET", "/api/games")
                assert status == 200, listed
                under_way = {g["id"] for g in listed["games"]}
                if self.playing.is_set():
                    self.running.append(len(under_way))
                mine &= under_way
                while len(mine) < self.bot_games:
                    game, seats = self.bot_seats[n % len(self.bot_seats)]
                    mine.add((await self._create(http, game, seats, 5000 + n))["id"])
                    n += 1
                await asyncio.sleep(0.1)
        finally:
            http.close()

    async def _seat(self, k: int):
        """Play seat 0 of game after game: at each turn a random legal move, timed."""
        import websockets

        rng, http, n = random.Random(k), Connection(self.port), 0
        try:
            while True:
                game, seats = self.seat_games[(k + n) % len(self.seat_games)]
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
                self.finished += 1
        finally:
            http.close()

    def play(self, moves: int | None = None, seconds: float | None = None) -> list[float]:
        """Let the seats play until ``moves`` more moves are timed, or for ``seconds``; their
        latencies."""

        async def run():
            start = len(self.latencies)
            self.wanted = start + moves if moves is not None else math.inf
            self.enough.clear()
            self.playing.set()
            enough = asyncio.ensure_future(
                self.enough.wait() if seconds is None else asyncio.sleep(seconds)
            )
            await asyncio.wait(
                [enough, *self.tasks], timeout=300, return_when=asyncio.FIRST_COMPLETED
            )
            self.playing.clear()
            reached = enough.done()
            enough.cancel()
            failed = [t for t in self.tasks if t.done()]  # they stop only on an error
            assert not failed and not self.refused, (self.refused, [t.exception() for t in failed])
            assert reached, f"{moves} moves were not played in 300 s"
            return self.latencies[start : len(self.latencies) if moves is None else start + moves]

        return self._call(run())

    def close(self):
        async def stop():
            for t in self.tasks:
                t.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

        self._call(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


class LatencyRounds:
    """The move latency against the ``py_work`` calibration timed by the wall clock, in
    alternating rounds (calibration, round, round, calibration, ...): ``pair(play)`` runs one
    pair, ``play()`` answering a round's latencies; a round's rate is 1 / its p95."""

    def __init__(self):
        self.calibration = Calibration("py_work_wall", "calls", py_work)
        n = 1000
        while True:  # a calibration round of about CALIBRATION_SECONDS
            t0 = time.perf_counter()
            py_work(n)
            t = time.perf_counter() - t0
            if t >= 0.02:
                break
            n *= 4
        self.calibration.units = max(1000, int(n * CALIBRATION_SECONDS / t))
        self.rates: list[float] = []
        self.calibration_rates: list[float] = []
        self.latencies: list[float] = []

    def _calibrate(self):
        t0 = time.perf_counter()
        py_work(self.calibration.units)
        self.calibration_rates.append(self.calibration.units / (time.perf_counter() - t0))

    def pair(self, play) -> None:
        order = len(self.rates) % 2  # calibration first in even rounds, last in odd
        if order == 0:
            self._calibrate()
        got = play()
        if order == 1:
            self._calibrate()
        self.latencies.extend(got)
        self.rates.append(1 / percentile(got, 0.95))

    @property
    def ratio(self) -> float:
        return statistics.median(r / c for r, c in zip(self.rates, self.calibration_rates))

    def report(self, benchmark, floor: float, target_seconds: float, target_ratio, what, **extra):
        """The figures on the summary line and in extra_info, the ratio asserted (``report``);
        ``what``: the load, as the summary line says it. Answers the latencies' median, p95
        and maximum (ms)."""
        ms = [1000 * s for s in self.latencies]
        p95 = percentile(ms, 0.95)
        ratio = self.ratio
        target_ms = 1000 * target_seconds
        benchmark.group = "web"
        # the absolute figures on the summary line (report adds the ratio's line, and asserts it)
        SUMMARY.append(
            f"  {benchmark.name}, its figures: move latency median {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms, "
            f"max {max(ms):.1f} ms over {len(ms)} moves, {what}; p95 "
            f"{'meets' if ratio >= target_ratio else 'does NOT meet'} the {target_ms:g} ms target "
            f"(ratio {ratio:.3g}, target ratio {target_ratio:.3g})"
        )
        calls_per_second = statistics.median(self.calibration_rates)
        report(
            benchmark,
            "inverse_p95_latency_per_second",
            statistics.median(self.rates),
            self.calibration,
            calls_per_second,
            ratio,
            floor,
            latency_median_ms=statistics.median(ms),
            latency_p95_ms=p95,
            latency_max_ms=max(ms),
            p95_in_py_work_calls=p95 / 1000 * calls_per_second,
            target_ratio=target_ratio,
            **{f"p95_meets_{target_ms:g}_ms_target": ratio >= target_ratio},
            target_ms=target_ms,
            moves=len(ms),
            rounds=len(self.rates),
            round_p95_ms=[round(1000 / r, 2) for r in self.rates],
            round_calibration_calls_per_second=[round(c) for c in self.calibration_rates],
            **extra,
        )
        print(
            f"\nper round: p95 {[round(1000 / r, 1) for r in self.rates]} ms, py_work "
            f"{[round(c) for c in self.calibration_rates]} calls/s"
        )
        return statistics.median(ms), p95, max(ms)
