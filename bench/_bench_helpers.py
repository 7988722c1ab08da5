"""Helpers shared by the caribsim benchmarks (imported by the bench modules and conftest.py).

``CARIBSIM_BENCH_SHORT=1`` selects the short mode used by CI: fewer and smaller rounds,
about a third of a second per benchmark instead of 1-3 s.
"""
from __future__ import annotations

import os
import random
import statistics
import time

import caribsim

SHORT = os.environ.get("CARIBSIM_BENCH_SHORT", "").strip() not in ("", "0")


def rounds(full: int, short: int) -> int:
    """Number of timed rounds for the current mode."""
    return short if SHORT else full


def size(full: int, short: int) -> int:
    """Work per round (games, calls, ...) for the current mode."""
    return short if SHORT else full


def measure(benchmark, fn, n_rounds: int, warmup: int = 1) -> list[float]:
    """Run ``fn`` ``n_rounds`` times under ``benchmark.pedantic``; return each round's
    CPU seconds (``time.process_time``).

    The throughputs and floors use CPU time, not wall time: every benchmark runs on one
    thread, and CPU time does not count the time the process waits for a core on a
    shared machine (CI runners, a dev box running builds). pytest-benchmark's own table
    still shows wall time; ``extra_info["wall_over_cpu"]`` (median wall / median CPU)
    shows how contended the machine was (1.0 = a free core).
    ``warmup`` untimed calls come first (caches, first-touch allocation).
    """
    for _ in range(warmup):
        fn()
    cpu: list[float] = []
    wall: list[float] = []

    def timed():
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        return out

    benchmark.pedantic(timed, rounds=n_rounds, iterations=1, warmup_rounds=0)
    assert cpu, "the benchmark function never ran"
    benchmark.extra_info["median_cpu_seconds"] = round(statistics.median(cpu), 6)
    benchmark.extra_info["median_wall_seconds"] = round(statistics.median(wall), 6)
    benchmark.extra_info["wall_over_cpu"] = round(statistics.median(wall) / max(statistics.median(cpu), 1e-9), 3)
    return cpu


def cpu_timed(fn, *args, **kwargs):
    """Call ``fn``; return (its result, the CPU seconds it took)."""
    c0 = time.process_time()
    out = fn(*args, **kwargs)
    return out, time.process_time() - c0


def median(values) -> float:
    return statistics.median(values)


def record(benchmark, unit: str, per_second: float, floor: float, **extra) -> None:
    """Store a throughput in extra_info and assert it is above its floor."""
    benchmark.extra_info[unit] = round(per_second, 1) if per_second >= 100 else round(per_second, 4)
    benchmark.extra_info[f"floor_{unit}"] = floor
    benchmark.extra_info["short_mode"] = SHORT
    for key, value in extra.items():
        benchmark.extra_info[key] = round(value, 4) if isinstance(value, float) else value
    assert per_second >= floor, (
        f"{unit}: measured median {per_second:,.4g} (per CPU second) is below the floor {floor:,}"
    )


def sample_positions(players: int, count: int, seed: int = 12345):
    """``count`` (state, action) pairs taken from random games, spread over whole games
    (all phases, chance nodes included), each with one of its legal actions."""
    rng = random.Random(seed)
    game = caribsim.load_game("puerto_rico", players=players)
    pairs = []
    g = 0
    while len(pairs) < count:
        state = game.new_initial_state(seed=seed + g)
        g += 1
        while not state.is_terminal() and len(pairs) < count:
            action = rng.choice(state.legal_actions())
            if rng.random() < 0.05:
                pairs.append((state.clone(), action))
            state.apply_action(action)
    return game, pairs
