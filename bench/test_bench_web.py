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

import statistics

import pytest
from _bench_helpers import SHORT, rounds, size
from _web_helpers import LatencyRounds, SeatClient, need_web_extra, serve

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


@pytest.fixture(scope="module")
def web_server():
    """``caribsim serve`` on a free loopback port over a fresh games folder: (port, folder)."""
    need_web_extra()
    # one client makes every game, a new one as each ends
    with serve("--creates-per-minute", "100000") as (_, port, folder):
        yield port, folder


def test_bench_web_move_latency_20_games(benchmark, web_server):
    port, folder = web_server
    client = SeatClient(
        port,
        seats=CLIENT_GAMES,
        seat_games=SEATS,
        bot_games=GAMES - CLIENT_GAMES,
        bot_seats=BOT_GAMES,
    )
    measured = LatencyRounds()
    try:
        client.play(size(100, 30))  # warm-up: the games under way, the connections open
        benchmark.pedantic(
            lambda: measured.pair(lambda: client.play(MOVES)),
            rounds=rounds(7, 3),
            iterations=1,
            warmup_rounds=0,
        )
    finally:
        client.close()
    ids = list(client.ids)
    from caribsim.web.store import DB_NAME, SQLiteStore

    with SQLiteStore(folder / DB_NAME) as store:
        for gid in ids:  # every game's stored record, finished or not, replays
            records.replay(store.export_record(gid))
    median_ms, p95_ms, max_ms = measured.report(
        benchmark,
        FLOORS["move_latency_p95"],
        TARGET_SECONDS,
        TARGET_RATIO,
        f"{GAMES} games at once",
        moves_per_round=MOVES,
        games_at_once=GAMES,
        games_under_way_mean=statistics.mean(client.running),
        games_under_way_min=min(client.running),
        games_played=len(ids),
        records_replayed=len(ids),
    )
    print(
        f"web move latency, {GAMES} games at once: median {median_ms:.1f} ms, "
        f"p95 {p95_ms:.1f} ms, max {max_ms:.1f} ms over {len(measured.latencies)} moves; "
        f"{len(ids)} games, every record replays{'' if not SHORT else ' (short mode)'}"
    )
