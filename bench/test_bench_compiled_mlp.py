"""The compiled MLP (caribsim.search._mlp) against the numpy forward pass, in the guided
search, with the shipped Puerto Rico 2-player network (``az``'s: 390 -> 256 -> 256 -> 143 + 2).

Each benchmark times two workloads in alternating rounds in one process (CPU time) and
floors the median of the rounds' ratios:

- leaf evaluations per second, ``BatchSearch`` with 64 trees x 8 leaves per tree (about 380
  leaves a step) from the opening, the network evaluated in C (``compiled=True``, the
  default) over the same searches with it called from Python (``compiled=False``: numpy,
  with OpenBLAS on one thread as the search now holds it; the issue asks >= 5);
- ``az``'s CPU time per move (``AlphaZeroBot``: one tree, one leaf per step, 200
  simulations, ``mix=0.5``) against ``mcts:1000``'s over the same positions of real games,
  in alternating rounds: the ratio is mcts:1000's time over az's (the issue asks az to cost
  no more, a ratio >= 1). Reported beside it: the network's share of az's search
  (``BatchSearch.profile``, wall time; the issue asks <= 40%), and az with the numpy forward
  pass (its CPU time per move and the Python call's share of its search).

Also reported, not floored: the numpy path with OpenBLAS's own threads (how the search ran
before it held one thread), as extra_info ``*_default_blas_threads``, and the same searches
with the trivial ``UniformEvaluator`` (the walks' own cost). The compiled side of
each ratio is the one CARIBSIM_BENCH_SLOWDOWN slows.
"""

from __future__ import annotations

import random

from _bench_helpers import Slowed, cpu_timed, median, report_ratio, rounds, size

import caribsim
from caribsim import _blas
from caribsim.search import bots, guided
from caribsim.search.evaluators import MLPEvaluator

# Each floor is about 0.8 x the median ratio measured in short mode on a 2-vCPU AMD EPYC VM
# shared with other work, and over 0.7 x the highest seen: a 30% slowdown of the compiled
# path fails.
FLOORS = {
    # leaf evaluations/s compiled over numpy, 64 trees x 8 leaves
    "leaf_evaluations_over_numpy": 2.45,  # 3.34-3.48 on another EPYC VM (2026-12-04: 2.3 let 0.7 x 3.35 pass); earlier 2.63-3.21 (3.12, 3.21 beside 2 CPU-bound processes)
    # mcts:1000's CPU time per move over az's (the issue asks >= 1)
    "mcts1000_over_az_cpu_per_move": 2.45,  # 3.34 on another EPYC VM (2026-12-04); earlier 2.88-3.09 (3.05, 2.93 beside 2 CPU-bound processes)
}


def _opening():
    state = caribsim.load_game("puerto_rico", players=2).new_initial_state(seed=1)
    while state.is_chance_node():
        state.resolve_chance()
    return state


def _positions(n, seed=0):
    """n decisions (more than one legal move) of games between two mcts:30 bots."""
    game = caribsim.load_game("puerto_rico", players=2)
    rng = random.Random(seed)
    bot = bots.parse_bot("mcts:30")
    out, g = [], 0
    while len(out) < n:
        state = game.new_initial_state(seed=seed + g)
        bot.restart(g)
        g += 1
        while not state.is_terminal() and len(out) < n:
            if state.is_chance_node():
                state.resolve_chance()
                continue
            if len(state.legal_actions()) > 1 and rng.random() < 0.15:
                out.append(state.clone())
            state.apply_action(bot.step(state))
    return out


class _DefaultThreads:
    """The numpy MLP with OpenBLAS's default threads during each call (the search holds one
    thread around a Python evaluator; this puts back what it found, as before)."""

    def __init__(self, net):
        self.net = net
        self.blas = _blas._openblas()
        self.threads = self.blas[0]() if self.blas else None

    def __call__(self, obs, mask):
        if self.blas is None:
            return self.net(obs, mask)
        self.blas[1](self.threads)
        try:
            return self.net(obs, mask)
        finally:
            self.blas[1](1)


def _leaves(results):
    return sum(r.simulations + 1 for r in results)  # each tree's root is evaluated too


def test_bench_compiled_mlp_leaf_evaluations(benchmark):
    net = MLPEvaluator.load(bots.SHIPPED_MODEL)
    states = [_opening() for _ in range(64)]
    sims = size(100, 60)
    compiled = guided.BatchSearch(net, sims, leaves_per_tree=8, seed=0)
    numpy = guided.BatchSearch(net, sims, leaves_per_tree=8, seed=0, compiled=False)
    default = guided.BatchSearch(_DefaultThreads(net), sims, leaves_per_tree=8, seed=0)
    rates_c, rates_n, rates_d = [], [], []
    shares = []
    slowed = Slowed()

    def run():
        res_n, tn = cpu_timed(numpy.run, states)
        res_c, tc = slowed(compiled.run, states)
        rates_n.append(_leaves(res_n) / tn)
        rates_c.append(_leaves(res_c) / tc)
        profile = compiled.profile
        shares.append(profile["network"] / sum(profile.values()))

    run()  # warm-up, not counted
    rates_c.clear(), rates_n.clear(), shares.clear()
    benchmark.pedantic(run, rounds=rounds(7, 5), iterations=1, warmup_rounds=0)
    benchmark.group = "compiled_mlp"
    uniform = guided.BatchSearch(guided.UniformEvaluator(2), sims, leaves_per_tree=8, seed=0)
    rates_u = []
    for _ in range(2):
        res_d, td = cpu_timed(default.run, states)
        rates_d.append(_leaves(res_d) / td)
        res_u, tu = cpu_timed(uniform.run, states)
        rates_u.append(_leaves(res_u) / tu)
    report_ratio(
        benchmark,
        "leaf_evaluations_compiled_over_numpy",
        median([c / n for c, n in zip(rates_c, rates_n)]),
        FLOORS["leaf_evaluations_over_numpy"],
        leaf_evaluations_per_second_compiled=median(rates_c),
        leaf_evaluations_per_second_numpy=median(rates_n),
        leaf_evaluations_per_second_numpy_default_blas_threads=median(rates_d),
        compiled_over_numpy_default_blas_threads=median(rates_c) / median(rates_d),
        leaf_evaluations_per_second_uniform=median(rates_u),
        network_share_of_compiled_wall_time=median(shares),
        trees=len(states),
        leaves_per_tree=8,
        simulations_per_tree=sims,
        kernel=net.compiled().kernel,
    )


def test_bench_compiled_mlp_az_against_mcts1000_cpu_per_move(benchmark):
    positions = _positions(size(40, 16), seed=3)
    az = bots.parse_bot("az")
    mcts = bots.parse_bot("mcts:1000")
    per_move_az, per_move_mcts, spent = [], [], []
    slowed = Slowed()

    def moves(bot, profiles=None):
        bot.restart(0)
        for p in positions:
            bot.step(p)
            if profiles is not None:
                profiles.append(bot.search.profile)

    def run():
        profiles = []
        _, tm = cpu_timed(moves, mcts)
        _, ta = slowed(moves, az, profiles)
        per_move_mcts.append(tm / len(positions))
        per_move_az.append(ta / len(positions))
        spent.append({k: sum(p[k] for p in profiles) for k in profiles[0]})

    run()  # warm-up, not counted
    per_move_az.clear(), per_move_mcts.clear(), spent.clear()
    benchmark.pedantic(run, rounds=rounds(7, 5), iterations=1, warmup_rounds=0)
    benchmark.group = "compiled_mlp"
    # az with the numpy forward pass, for the record (its Python calls scatter too much from
    # round to round for a floor)
    numpy = bots.parse_bot("az:compiled=false")
    numpy_profiles = []
    _, tn = cpu_timed(moves, numpy, numpy_profiles)
    python = sum(p["python"] for p in numpy_profiles)
    report_ratio(
        benchmark,
        "mcts1000_over_az_cpu_per_move",
        median([m / a for m, a in zip(per_move_mcts, per_move_az)]),
        FLOORS["mcts1000_over_az_cpu_per_move"],
        az_cpu_ms_per_move=1000 * median(per_move_az),
        mcts1000_cpu_ms_per_move=1000 * median(per_move_mcts),
        network_share_of_az_search=median([s["network"] / sum(s.values()) for s in spent]),
        az_numpy_cpu_ms_per_move=1000 * tn / len(positions),
        python_share_of_az_numpy_search=python / sum(sum(p.values()) for p in numpy_profiles),
        positions=len(positions),
    )
