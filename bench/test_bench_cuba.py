"""Cuba throughput benchmarks (pytest-benchmark, pedantic mode, 1 core).

Run:    python -m pytest bench/test_bench_cuba.py --benchmark-only
CI:     CARIBSIM_BENCH_SHORT=1 python -m pytest bench --benchmark-only

Same method as the Puerto Rico benchmarks (see test_bench_puerto_rico.py): throughput per
CPU second, median over the timed rounds, asserted against a FLOOR. The 3-player playout
floor (12,000) is well above the issue's requirement (>= 5,000 games/s on one core); every
floor is about 35-40% of the median measured on the development machine.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

import caribsim
from _bench_helpers import measure, median, record, rounds, size

FLOORS = {
    # C-level random playouts from the initial state, games/s per CPU second
    #                                        measured (2 vCPU dev box, busy) | issue target
    "playouts_2p_games_per_s": 18_000,       # ~49,500                      |
    "playouts_3p_games_per_s": 12_000,       # ~35,300                      | >= 5,000
    "playouts_4p_games_per_s": 10_000,       # ~27,100                      |
    "playouts_5p_games_per_s": 6_500,        # ~17,300                      |
    # Python-driven random game loop (3p), decisions/s
    "python_loop_decisions_per_s": 400_000,  # ~1,060,000
    # clone() + apply_action(a) at 256 positions spread over 3p games, per second
    "clone_apply_per_s": 800_000,            # ~2,100,000
    # observation_tensor(player) (a new numpy array), per second
    "observation_tensor_per_s": 150_000,     # ~430,000
}

PLAYOUT_GAMES = {2: 3000, 3: 2000, 4: 1500, 5: 1200}


def _state(players, seed=0):
    return caribsim.load_game("cuba", players=players).new_initial_state(seed=seed)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_bench_cuba_random_playouts(benchmark, players):
    state = _state(players)
    n_games = size(PLAYOUT_GAMES[players], PLAYOUT_GAMES[players] // 4)
    results = []

    def run():
        results.append(caribsim.random_playouts(state, n_games, seed=2024, threads=1))

    t = median(measure(benchmark, run, rounds(10, 4)))
    assert all(r.decisions == results[0].decisions for r in results), "playouts are not deterministic per seed"
    benchmark.group = "cuba playouts"
    record(benchmark, "games_per_second", n_games / t, FLOORS[f"playouts_{players}p_games_per_s"],
           decisions_per_game=results[0].decisions / n_games)


def _positions(count, seed=5):
    rng = random.Random(seed)
    game = caribsim.load_game("cuba", players=3)
    out = []
    g = 0
    while len(out) < count:
        s = game.new_initial_state(seed=seed + g)
        g += 1
        while not s.is_terminal() and len(out) < count:
            a = rng.choice(s.legal_actions())
            if rng.random() < 0.05:
                out.append((s.clone(), a))
            s.apply_action(a)
    return out


def test_bench_cuba_python_loop(benchmark):
    game = caribsim.load_game("cuba", players=3)
    n_games = size(20, 6)
    counts = []

    def run():
        rng = random.Random(1)
        total = 0
        for g in range(n_games):
            s = game.new_initial_state(seed=g)
            while not s.is_terminal():
                if s.is_chance_node():
                    s.resolve_chance()
                else:
                    s.apply_action(rng.choice(s.legal_actions()))
                    total += 1
        counts.append(total)

    t = median(measure(benchmark, run, rounds(5, 3)))
    benchmark.group = "cuba python"
    record(benchmark, "decisions_per_second", counts[0] / t, FLOORS["python_loop_decisions_per_s"])


def test_bench_cuba_clone_apply(benchmark):
    pairs = _positions(256)
    reps = size(20, 6)

    def run():
        for _ in range(reps):
            for s, a in pairs:
                s.clone().apply_action(a)

    t = median(measure(benchmark, run, rounds(5, 3)))
    benchmark.group = "cuba python"
    record(benchmark, "per_second", len(pairs) * reps / t, FLOORS["clone_apply_per_s"])


def test_bench_cuba_observation(benchmark):
    pairs = _positions(256, seed=9)
    reps = size(10, 3)

    def run():
        for _ in range(reps):
            for s, _a in pairs:
                s.observation_tensor(0)

    t = median(measure(benchmark, run, rounds(5, 3)))
    obs = pairs[0][0].observation_tensor(0)
    assert obs.dtype == np.float32
    benchmark.group = "cuba python"
    record(benchmark, "per_second", len(pairs) * reps / t, FLOORS["observation_tensor_per_s"])
