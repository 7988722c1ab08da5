"""Puerto Rico Expansion I throughput benchmarks (pytest-benchmark, pedantic mode, 1 core).

Run:    python -m pytest bench/test_bench_puerto_rico_expansion.py --benchmark-only
CI:     CARIBSIM_BENCH_SHORT=1 python -m pytest bench --benchmark-only

The issue's target is a RATIO: random playouts with the expansion (random building draft,
3 players) must reach at least 85% of the base game's games/s on the same machine in the same
run. Base and expansion playouts alternate within each round (both see the same machine load),
throughput is per CPU second, and the median of the rounds' ratios is asserted against the
floor (a round's two runs see the same machine speed; a ratio of separate medians does not:
in one CI run the VM's speed shifted between rounds and it fell to 0.79 while the paired
median was 0.93).
Each expansion game includes its 17 draft decisions (the draft is part of the game).
"""
from __future__ import annotations

import pytest

import caribsim
from _bench_helpers import cpu_timed, measure, median, record, rounds, size

FLOORS = {
    # expansion (random draft) games/s over base games/s, 3 players        measured | target
    # measured 0.91-0.93 (median of 15 alternating rounds; dev container, 2 vCPU, loaded;
    # 0.84-0.87 before the expansion paths were made cheaper): ~9% more decisions than the
    # base game (the 17 draft picks, guest moves, Black-market items) at about the same
    # cost per decision
    # The floor is the target: CPU-time ratios of alternating rounds are steady to
    # about +-3% here, and the measured ratio is 7-8% above it.
    "expansion_ratio_3p": 0.85,           #                                          | >= 0.85
    # absolute expansion playouts, games/s (floor ~30-40% of the measured median)
    "expansion_playouts_3p_games_per_s": 7_500,   # measured ~22,000-26,000
    "expansion_playouts_5p_games_per_s": 4_000,   # measured ~11,000-14,700
}
PLAYOUT_SEED = 2024


def _state(players: int, **options):
    return caribsim.load_game("puerto_rico", players=players, **options).new_initial_state(seed=0)


def test_bench_expansion_ratio_3p(benchmark):
    """Base and expansion 3p playouts alternate; median of the rounds' games/s ratios (CPU time)."""
    base, exp = _state(3), _state(3, expansion=True)
    n = size(800, 300)
    rb, re = [], []

    def run():
        _, tb = cpu_timed(caribsim.random_playouts, base, n, seed=PLAYOUT_SEED)
        _, te = cpu_timed(caribsim.random_playouts, exp, n, seed=PLAYOUT_SEED)
        rb.append(n / tb)
        re.append(n / te)

    n_rounds = rounds(15, 7)
    measure(benchmark, run, n_rounds)
    rb, re = rb[-n_rounds:], re[-n_rounds:]          # drop the warm-up round
    gb, ge = median(rb), median(re)
    benchmark.group = "playouts-expansion"
    record(
        benchmark,
        "ratio_expansion_over_base_3p",
        median([e / b for b, e in zip(rb, re)]),
        FLOORS["expansion_ratio_3p"],
        games_per_second_base=round(gb, 1),
        games_per_second_expansion=round(ge, 1),
        ratio_of_medians=ge / gb,
        runs=len(rb),
    )


@pytest.mark.parametrize("players", [3, 5])
def test_bench_expansion_random_playouts(benchmark, players):
    state = _state(players, expansion=True)
    n_games = size(2000 if players == 3 else 1200, 400)
    results = []

    def run():
        results.append(caribsim.random_playouts(state, n_games, seed=PLAYOUT_SEED, threads=1))

    t = median(measure(benchmark, run, rounds(10, 4)))
    decisions = results[-1].decisions
    assert all(r.decisions == decisions for r in results), "playouts are not deterministic per seed"
    benchmark.group = "playouts-expansion"
    record(
        benchmark,
        "games_per_second",
        n_games / t,
        FLOORS[f"expansion_playouts_{players}p_games_per_s"],
        decisions_per_second=round(decisions / t, 1),
        mean_decisions_per_game=decisions / n_games,
        games_per_round=n_games,
        players=players,
    )
