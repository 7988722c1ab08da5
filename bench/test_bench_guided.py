"""Guided search throughput (caribsim.search.guided) from the 3-player Puerto Rico opening.

- Leaf evaluations per second through the Python evaluator call: 64 trees x 4 leaves per
  tree (about 256 leaves per call once the trees are past their roots; the first calls
  hold fewer), the trivial numpy ``UniformEvaluator``, against the C calibration loop.
  The issue asks >= 300,000 per second on one core: the figure is reported (absolute
  figures are never asserted), with where the wall time went (``BatchSearch.profile``):
  the C walks (observations and masks included), the Python step (the evaluator itself
  and the checks of its outputs) and the C expansion and backup.
- PUCT with the C rollout evaluator against today's UCT (``caribsim.mcts.search``, random
  rollouts) in simulations per second, paired in one process: the UCT search is this
  benchmark's calibration, so the ratio is PUCT / UCT itself (the issue asks >= 0.8).
"""

from __future__ import annotations

from _bench_helpers import SUMMARY, Calibration, c_calibration, paired, rounds, size

import caribsim
from caribsim import mcts
from caribsim.search import guided

# puct_over_uct is about 0.8 x the median ratio measured in short mode on the 2-vCPU VM
# (shared with other builds): a regression of 30% fails. leaf_evaluations, memory-bound
# (64 trees), is a collapse guard (see _bench_helpers).
FLOORS = {
    # leaf evaluations/s over c_work iterations/s (the one-state loop; see the test)
    "leaf_evaluations": 0.07,  # a collapse guard (see _bench_helpers): 0.10-0.147 quiet, 0.081-0.097 beside 2 CPU-bound processes (2026-12-02); earlier 0.213-0.25 on a quiet host, 0.13-0.163 beside 2 CPU-bound processes in CI runs while the host was busy
    # PUCT simulations/s over UCT simulations/s, same opening, same process
    "puct_over_uct": 0.84,  # measured 1.02 .. 1.08, median 1.05 (issue target >= 0.8)
}


def _opening(players=3):
    state = caribsim.load_game("puerto_rico", players=players).new_initial_state(seed=1)
    while state.is_chance_node():
        state.resolve_chance()
    return state


class _Counting(guided.UniformEvaluator):
    """The trivial numpy evaluator, counting calls and leaves."""

    def __init__(self, n_players):
        super().__init__(n_players)
        self.leaves = 0
        self.calls = 0

    def __call__(self, obs, mask):
        self.leaves += len(obs)
        self.calls += 1
        return super().__call__(obs, mask)


def test_bench_guided_leaf_evaluations(benchmark):
    state = _opening(3)
    trees, k = 64, 4
    simulations = 120  # the same work per round in both modes: only the rounds differ
    runs_per_round = 6  # rounds of ~25 ms: shorter ones scatter on a shared machine
    states = [state.clone() for _ in range(trees)]
    ev = _Counting(3)
    bs = guided.BatchSearch(ev, simulations=simulations, leaves_per_tree=k, seed=0)
    spent: dict = {}  # BatchSearch.profile's parts, summed over the rounds

    def run():
        before = ev.leaves
        for _ in range(runs_per_round):
            bs.run(states)
            for key, seconds in bs.profile.items():
                spent[key] = spent.get(key, 0.0) + seconds
        return ev.leaves - before

    # the calibration is the one-state C loop: the 8192-state one (whose 4 MB do not stay in
    # the core's caches, like the 64 trees) ran 1.3 or 7 million iterations/s from run to run
    # on the shared VM, as the host's cache was busy or not, and took the ratio with it
    m = paired(
        benchmark,
        run,
        units=lambda leaves: leaves,
        calibration=c_calibration(),
        n_rounds=rounds(9, 7),
        floor=FLOORS["leaf_evaluations"],
        unit="leaf_evaluations_per_second",
        group="guided",
        guard=True,
        trees=trees,
        leaves_per_tree=k,
        simulations_per_tree=simulations,
        runs_per_round=runs_per_round,
    )
    assert len(set(m.results)) == 1, "the leaves per run are not deterministic"
    total = sum(spent.values())
    shares = {key: seconds / total for key, seconds in spent.items()}
    benchmark.extra_info["mean_leaves_per_call"] = round(ev.leaves / ev.calls, 1)
    for key, share in shares.items():
        benchmark.extra_info[f"share_{key}"] = round(share, 3)
    SUMMARY.append(
        f"  {ev.leaves / ev.calls:.1f} leaves per call; wall time: C walks {shares['walk']:.0%}, "
        f"Python step {shares['python']:.0%}, C expansion and backup {shares['expand']:.0%}"
    )


def test_bench_puct_rollouts_against_uct(benchmark):
    state = _opening(3)
    simulations = size(4000, 1500)
    ev = guided.RolloutEvaluator(rollouts=1)
    uct = Calibration(
        "uct_random_rollouts", "simulations", lambda n: mcts.search(state, iterations=n, seed=0)
    )
    paired(
        benchmark,
        lambda: guided.search(state, ev, simulations=simulations, seed=0),
        units=simulations,
        calibration=uct,
        n_rounds=rounds(7, 5),
        floor=FLOORS["puct_over_uct"],
        unit="puct_sims_per_second",
        group="guided",
        simulations_per_round=simulations,
    )
