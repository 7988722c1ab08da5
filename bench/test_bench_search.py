"""MCTS throughput: simulations (iterations with a random rollout to the end) per second
from the 3- and 4-player Puerto Rico openings, on 1 and 2 threads.

Single-thread figures are per CPU second (see _bench_helpers.measure). The thread scaling
is wall time by nature: the ratio of 2-thread to 1-thread simulations/s measured in the
same run, alternating, medians.
"""
from __future__ import annotations

import time

import pytest

import caribsim
from caribsim import mcts
from _bench_helpers import measure, median, record, rounds, size

FLOORS = {
    #                                          measured (dev box) | issue target
    "mcts_3p_sims_per_s": 7_000,             # ~18,500            | >= 5,000 (1 core)
    "mcts_4p_sims_per_s": 5_000,             # ~13,000            | -
    "mcts_2_threads_speedup": 1.3,           # ~1.9 on 2 free cores | >= 1.7
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
    times = measure(benchmark, lambda: mcts.search(state, iterations=iterations, seed=0), rounds(5, 3))
    benchmark.group = "mcts"
    record(benchmark, "sims_per_s", iterations / median(times), FLOORS[f"mcts_{players}p_sims_per_s"],
           iterations_per_round=iterations)


def test_bench_mcts_two_threads_speedup(benchmark):
    state = _opening(3)
    iterations = size(16000, 4000)
    one, two = [], []

    def run():
        for threads, out in ((1, one), (2, two)):
            t0 = time.perf_counter()
            mcts.search(state, iterations=iterations, threads=threads, seed=0)
            out.append(iterations / (time.perf_counter() - t0))

    benchmark.pedantic(run, rounds=rounds(5, 3), iterations=1)
    benchmark.group = "mcts"
    benchmark.extra_info["sims_per_s_1_thread"] = round(median(one))
    benchmark.extra_info["sims_per_s_2_threads"] = round(median(two))
    record(benchmark, "speedup", median(two) / median(one), FLOORS["mcts_2_threads_speedup"])
