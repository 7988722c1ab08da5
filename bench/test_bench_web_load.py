"""The web server under load: 200 clients at once for 60 s, 2,000 games made and finished.

Run:    python -m pytest bench/test_bench_web_load.py --benchmark-only -s
CI:     CARIBSIM_BENCH_SHORT=1 python -m pytest bench --benchmark-only (100 clients, ~10 s)

The server is ``python -m caribsim serve --bot-delay 0`` on a loopback port (its own process,
as bench/test_bench_web.py's), with ``--max-games`` and ``--creates-per-minute`` raised past
what the load asks: those limits are tested in tests/web/test_limits.py, here they would only
refuse the load. Its clients:

- ``MOVERS`` seats played by this process (bench/_web_helpers.SeatClient, as in
  test_bench_web.py): seat 0 of a 2-player game against a random bot, a random legal move at
  each turn by ``POST .../move`` with the seat's token on a kept-alive connection, its round
  trip timed, the game followed over its WebSocket, a new game when one ends;
- the others in a process of their own (bench/_web_load.py, its docstring says each kind):
  readers of views, followers of games over their WebSockets, finishers (a record played on at
  its last decision: a new game, stored whole, that its bot ends at once), whole games of bots
  only, and slow readers (WebSockets and connections that are never read). A second process,
  so that their Python does not share this process's GIL with the clock and the calibration.

Asserted:

- no error: every answer the documented one (200 a view, a move and the lobby, 201 a create, a
  view every WebSocket message, no socket closed before its game's end, every client stopped
  when asked). No client here can race another for a move (a seat moves only when its own view
  offers moves, and nobody else holds its token; the other clients play no move), so a 409 is
  an error too, not a race to excuse;
- the move latency's 95th percentile as a ratio to the ``py_work`` calibration timed by the wall
  clock in paired rounds (test_bench_web.py's method and its reasons; the floor is a target's
  ratio, ``TARGET_SECONDS``, as there);
- the server's memory (``VmRSS`` of /proc/PID/status) flat: at no sample after the first
  ``BASE`` finished games (the game cache full by then) more than ``RSS_BOUND_MIB`` over the
  RSS at ``BASE``, to the end, ``GAMES`` finished games or more;
- every stored game's record replays (``records.replay``), finished or not.

The figures (latency median, p95, max; requests by kind; the games finished and how long one
took through the server, idle and under the load; the RSS along the games) are reported in
extra_info and on the summary line.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from _bench_helpers import SHORT, SUMMARY, rounds
from _web_helpers import (
    Connection,
    LatencyRounds,
    SeatClient,
    child_env,
    need_web_extra,
    serve,
)
from _web_load import played_on_records

from caribsim.human import records

CLIENTS = (
    {"movers": 20, "reader": 25, "follower": 20, "finisher": 24, "whole": 1}
    | {"slow_ws": 5, "slow_http": 5}
    if SHORT
    else {"movers": 40, "reader": 50, "follower": 45, "finisher": 48, "whole": 7}
    | {"slow_ws": 5, "slow_http": 5}
)
ROUND_SECONDS = 3.0 if SHORT else 8.0  # a round of timed moves; 7 rounds: the 60 s of load
BASE = 300 if SHORT else 500  # finished games before the RSS's reference
GAMES = 450 if SHORT else 2000  # finished games at the end, at least
RSS_BOUND_MIB = 20
# a quarter second for 95 moves in 100 while 200 clients read, follow and finish about 35
# games a second: a single server process on 2 cores, shared with the load's own clients
TARGET_SECONDS = 0.25
CALLS_PER_SECOND = 1_000_000  # py_work on the project's 2-core VM, wall clock (test_bench_web)
TARGET_RATIO = 1 / (TARGET_SECONDS * CALLS_PER_SECOND)
FLOOR = 0.7 * TARGET_RATIO
SEAT_GAMES = [
    ("port_royal", ["human", "random"]),
    ("cuba", ["human", "random"]),
    ("puerto_rico", ["human", "random"]),
]
LOAD = Path(__file__).with_name("_web_load.py")


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


class _Monitor:
    """Four times a second: the finished games (the lobby's count) and the server's RSS."""

    def __init__(self, port: int, pid: int):
        self.port, self.pid = port, pid
        self.samples: list[tuple[float, int, int]] = []  # (seconds, finished games, KiB)
        self.stopped = threading.Event()
        self.failed: list[str] = []
        self.t0 = time.monotonic()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def sample(self, conn) -> int:
        conn.request("GET", "/api/games?limit=1")
        answer = conn.getresponse()
        body = json.loads(answer.read())
        if answer.status != 200:
            self.failed.append(f"GET /api/games answered {answer.status} {body}")
        finished = body["count"]["finished"]
        self.samples.append((time.monotonic() - self.t0, finished, _rss_kib(self.pid)))
        return finished

    def _run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            while not self.stopped.wait(0.25):
                self.sample(conn)
        except Exception as e:  # said by the test, never silent
            self.failed.append(f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    @property
    def finished(self) -> int:
        return self.samples[-1][1] if self.samples else 0

    def stop(self):
        self.stopped.set()
        self.thread.join(60)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            self.sample(conn)  # after the load: every game counted
        finally:
            conn.close()


def _finished_game_seconds(port: int) -> dict:
    """How long one game takes from its create to its end through the idle server: a record
    played on at its last decision, and a 2-player Cuba game of random bots from its start."""
    import asyncio

    record, last, players = played_on_records(1)[0]

    async def timed(body) -> float:
        http, t0 = Connection(port), time.perf_counter()
        try:
            status, made, _ = await http.request("POST", "/api/games", body)
            assert status == 201, made
            while True:
                status, view, _ = await http.request("GET", f"/api/games/{made['id']}")
                assert status == 200, view
                if view["over"]:
                    return time.perf_counter() - t0
                await asyncio.sleep(0.002)
        finally:
            http.close()

    async def both():
        on = await timed({"record": record, "step": last, "seats": ["random"] * players})
        whole = await timed({"game": "cuba", "players": 2, "seats": ["random", "random"]})
        return {"played_on_ms": 1000 * on, "whole_cuba_ms": 1000 * whole}

    return asyncio.run(both())


def test_bench_web_load_200_clients(benchmark):
    need_web_extra()
    options = ("--max-games", "100000", "--creates-per-minute", "1000000")
    with serve(*options) as (server, port, folder):
        idle = _finished_game_seconds(port)
        load_clients = {k: n for k, n in CLIENTS.items() if k != "movers"}
        config = {"port": port, "clients": load_clients, "think": 0.5, "hold": 4.0}
        load = subprocess.Popen(
            [sys.executable, str(LOAD), json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        monitor = client = None
        try:
            assert load.stdout.readline().strip() == "ready", "the load's clients did not start"
            monitor = _Monitor(port, server.pid)
            client = SeatClient(port, seats=CLIENTS["movers"], seat_games=SEAT_GAMES)
            measured = LatencyRounds()
            t0 = time.monotonic()
            client.play(seconds=1.0)  # warm-up: the games under way, the connections open
            benchmark.pedantic(
                lambda: measured.pair(lambda: client.play(seconds=ROUND_SECONDS)),
                rounds=rounds(7, 3),
                iterations=1,
                warmup_rounds=0,
            )
            timed_seconds = time.monotonic() - t0
            deadline = time.monotonic() + (60 if SHORT else 300)
            while monitor.finished < GAMES and time.monotonic() < deadline:
                time.sleep(0.25)  # the other clients go on until GAMES games have finished
            load_seconds = time.monotonic() - t0
        finally:
            if client is not None:
                client.close()
            out, _ = load.communicate("", timeout=120)  # stdin's end stops the clients
            if monitor is not None:
                monitor.stop()
        summary = json.loads(out.splitlines()[-1])
        from caribsim.web.store import DB_NAME, SQLiteStore

        t1 = time.monotonic()
        with SQLiteStore(folder / DB_NAME) as store:
            ids = [
                line["id"]
                for over in (False, True)
                for offset in range(0, store.count(over), 200)
                for line in store.list(over, offset, 200)
            ]
            for gid in ids:  # every game's stored record, finished or not, replays
                records.replay(store.export_record(gid))
        replay_seconds = time.monotonic() - t1

    counts = summary["counts"]
    finished = monitor.finished
    base = next(s for s in monitor.samples if s[1] >= BASE) if finished >= BASE else None
    after = [s for s in monitor.samples if base is not None and s[0] >= base[0]]
    peak = max(after, key=lambda s: s[2]) if after else None
    final = monitor.samples[-1]
    mib = lambda kib: kib / 1024  # noqa: E731
    rss_line = (
        f"RSS {mib(monitor.samples[0][2]):.1f} MiB at the start, {mib(base[2]):.1f} after "
        f"{base[1]} finished games, {mib(final[2]):.1f} after {final[1]} (peak {mib(peak[2]):.1f} "
        f"after {peak[1]})"
        if base
        else f"RSS {mib(final[2]):.1f} MiB after {final[1]} finished games"
    )
    requests = {k: v for k, v in sorted(counts.items()) if "error" not in k}
    print(
        f"\nload: {sum(CLIENTS.values())} clients ({CLIENTS}), {load_seconds:.1f} s of load "
        f"({timed_seconds:.1f} s of timed moves); {len(measured.latencies)} moves timed, "
        f"{finished} games finished ({finished / load_seconds:.1f} a second), {len(ids)} "
        f"records replayed in {replay_seconds:.1f} s; {rss_line}\nthe other clients: {requests}"
        f"\na finished game through the server, idle: played on at its last decision "
        f"{idle['played_on_ms']:.0f} ms, a whole 2-player Cuba game of random bots "
        f"{idle['whole_cuba_ms']:.0f} ms; under the load: {summary['game_seconds']}"
    )
    SUMMARY.append(
        f"  {benchmark.name}, its load: {sum(CLIENTS.values())} clients, {load_seconds:.0f} s, "
        f"{finished} games finished; {rss_line}; errors {len(summary['errors'])}"
    )
    # the errors first: a load that failed says so whatever its latency
    assert not summary["errors"] and not monitor.failed, (summary["errors"], monitor.failed)
    assert finished >= GAMES, f"{finished} games finished in {load_seconds:.0f} s, not {GAMES}"
    assert counts.get("finisher finished", 0) > 0 and counts.get("view 200", 0) > 0, counts
    assert counts.get("slow_ws held", 0) > 0 and counts.get("slow_http held", 0) > 0, counts
    grown = mib(peak[2] - base[2])
    assert grown <= RSS_BOUND_MIB, (
        f"the server's RSS grew by {grown:.1f} MiB after {BASE} finished games "
        f"(bound {RSS_BOUND_MIB} MiB): {rss_line}; samples {monitor.samples[::20]}"
    )
    measured.report(
        benchmark,
        FLOOR,
        TARGET_SECONDS,
        TARGET_RATIO,
        f"{sum(CLIENTS.values())} clients",
        clients=CLIENTS,
        load_seconds=load_seconds,
        games_finished=finished,
        records_replayed=len(ids),
        requests=requests,
        game_seconds_under_load=summary["game_seconds"],
        idle_game_ms=idle,
        rss_base_mib=mib(base[2]),
        rss_base_games=base[1],
        rss_final_mib=mib(final[2]),
        rss_final_games=final[1],
        rss_peak_mib=mib(peak[2]),
        rss_grown_mib=grown,
        rss_bound_mib=RSS_BOUND_MIB,
    )
