"""MCTS throughput: simulations (iterations with a random rollout to the end) per second
from the 3- and 4-player Puerto Rico openings, on 1 and 2 threads.

Single-thread figures alternate with the C calibration loop and assert the median ratio
(see _bench_helpers). The thread scaling is wall time by nature: 2-thread over 1-thread
simulations/s in alternating rounds, asserted only when the machine has 2 idle cores at the
start and at the end (otherwise reported with the reason).
"""

from __future__ import annotations

import time

import pytest
from _bench_helpers import c_calibration, idle_cores, median, paired, report_speedup, rounds, size

import caribsim
from caribsim import mcts

# Each floor is 0.8 x the median ratio measured in short mode on an AMD EPYC 2-vCPU VM
# (8 runs: the machine busy with other builds and tests, and with one CPU-bound process per
# core beside it; runs spread +-5% around the median): a 30% regression (0.7x) fails.
FLOORS = {
    # simulations/s over c_work iterations/s (1 thread, CPU time)
    "mcts_3p": 0.00807,  # measured 0.01009 after issue 22's speed-ups (median of 3 short runs, one beside 2 CPU-bound processes); before: measured 0.00633
    "mcts_4p": 0.00562,  # measured 0.007019 after issue 22's speed-ups (median of 3 short runs, one beside 2 CPU-bound processes); before: measured 0.004143
    # 2 threads over 1 thread, wall time, idle machine only (issue target >= 1.7)
    "mcts_2_threads_speedup": 1.5,
}


def _opening(players):
    state = caribsim.load_game("puerto_rico", players=players).new_initial_state(seed=1)
    while state.is_chance_node():
        state.resolve_chance()
    return state


@pytest.mark.parametrize("players", [3, 4])
def test_bench_mcts_one_thread(benchmark, players):
    state = _opening(players)
    iterations = size(4000, 1000)
    paired(
        benchmark,
        lambda: mcts.search(state, iterations=iterations, seed=0),
        units=iterations,
        calibration=c_calibration(),
        n_rounds=rounds(7, 5),
        floor=FLOORS[f"mcts_{players}p"],
        unit="sims_per_second",
        group="mcts",
        iterations_per_round=iterations,
    )


def test_bench_mcts_two_threads_speedup(benchmark):
    state = _opening(3)
    iterations = size(16000, 4000)
    one, two = [], []

    def run():
        for threads, out in ((1, one), (2, two)):
            t0 = time.perf_counter()
            mcts.search(state, iterations=iterations, threads=threads, seed=0)
            out.append(iterations / (time.perf_counter() - t0))

    before = idle_cores(2)
    benchmark.pedantic(run, rounds=rounds(5, 3), iterations=1)
    after = idle_cores(2)
    benchmark.group = "mcts"
    report_speedup(
        benchmark,
        "speedup",
        median([b / a for a, b in zip(one, two)]),
        FLOORS["mcts_2_threads_speedup"],
        before,
        after,
        sims_per_s_1_thread=median(one),
        sims_per_s_2_threads=median(two),
        ratio_of_medians=median(two) / median(one),
    )
