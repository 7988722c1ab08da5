"""VectorGame throughput (issue 8): n=1024 4-player Puerto Rico games stepped in batch.

Run:    python -m pytest bench/test_bench_vector.py --benchmark-only
CI:     CARIBSIM_BENCH_SHORT=1 python -m pytest bench --benchmark-only

The issue's loop, per batch step: ``legal_mask()`` -> one uniformly random legal action per
game chosen in numpy from the mask (``random_legal_actions``) -> ``step(actions)`` ->
``observations()``; and the same loop with the random actions drawn in C by
``VectorGame.sample_legal()`` (issue "Embedding contracts" 15). One env-step = one decision in one game. Each benchmark alternates with
the C calibration loop and asserts the median ratio (see _bench_helpers); the absolute
throughputs (per CPU second) are reported. The parts are also timed on their own so the
report can say where the time goes.
"""

from __future__ import annotations

import numpy as np
from _bench_helpers import c_calibration, cpu_timed, median, paired, report, rounds, size

from caribsim.vector import VectorGame

N = 1024
PLAYERS = 4

# FLOORS: the lowest accepted median ratio to the C calibration over N states in turn (rate
# per CPU second over c_work iterations per CPU second): a batch's states do not all stay in
# a core's cache, and the calibration's do not either.
# The loops with numpy's pick and observations (env_steps, env_steps_no_obs, the parts) are
# memory-bound: their ratios moved 25-35% with the host's load (quiet host against CI runs
# while it was busy), so their floors are collapse guards, about half (see _bench_helpers).
# The sample_legal loops (all in C) held within a few percent: their floors are 0.8 x the
# median ratio measured in short mode on an AMD EPYC 2-vCPU VM (busy with other work, and
# with one CPU-bound process per core beside it), so a 30% regression (0.7x) fails them.
FLOORS = {
    "env_steps": 0.16,  # a collapse guard (see _bench_helpers): mask -> numpy pick -> step -> observations, measured 0.311-0.339 on a quiet host, 0.238-0.253 in CI runs while the host was busy
    "env_steps_no_obs": 0.47,  # a collapse guard: mask -> numpy pick -> step, measured 0.92-0.975 on a quiet host, 0.736 in a CI run while the host was busy
    "parts_loop": 0.16,  # a collapse guard: the same loop with each part timed on its own, measured 0.295-0.334 on a quiet host, 0.209 in a CI run while the host was busy
    "observations": 0.27,  # the parts, collapse guards like the loop: observations() (measured 0.5416)
    "step": 0.8,  # step(actions) (measured 1.612 after issue 22's speed-ups; 1.248 before)
    # the numpy pick (measured 2.039; 0.80-1.02 beside two CPU-bound processes on 2026-12-02,
    # under its old guard of 1.0): a collapse guard at about 0.3x
    "pick": 0.6,
    # random actions drawn in C (measured on a quieter machine: load ~1.5 on 2 vCPUs)
    # a collapse guard since issue 29: sample_legal -> step -> observations, the observations
    # written for 1024 games are memory-bound like env_steps': 0.3349, 0.31-0.38 after issue 22,
    # then 0.268-0.313 with that same build and 0.279-0.306 with this one in one morning's runs
    "sample_legal_env_steps": 0.16,
    "sample_legal_no_obs": 0.8,  # 1.02-1.13 here, 0.873 on a slow CI host (2026-12-04), 0.7 x 1.13 = 0.79; earlier 0.88: 0.914-1.06 (2026-12-02), under 0.96 beside 2 CPU-bound processes; earlier: measured 1.2 after issue 22's speed-ups (median of 3 short runs, one beside 2 CPU-bound processes); before: sample_legal -> step (measured 0.9530)
}


class RandomLegal:
    """Uniformly random legal actions for a batch, in numpy, from the (n, A) uint8 mask.

    Each game gets a random permutation (one of K drawn at start) as priorities over the
    actions; the legal action with the highest priority is a uniformly random legal action.
    The key priority << 8 | action (<< 16 above 256 actions) turns the arg-max into a max."""

    def __init__(self, n, num_actions, seed=0, k=256):
        self.rng = np.random.default_rng(seed)
        small = num_actions <= 256
        dtype, self.shift = (np.uint16, 8) if small else (np.uint32, 16)
        prio = np.argsort(self.rng.random((k, num_actions)), axis=1).astype(dtype) + 1
        self.table = (prio << self.shift) | np.arange(num_actions, dtype=dtype)
        self.keys = np.empty((n, num_actions), dtype)
        self.low = (1 << self.shift) - 1
        self.k = k

    def __call__(self, mask):
        np.take(self.table, self.rng.integers(0, self.k, len(mask)), axis=0, out=self.keys)
        np.multiply(self.keys, mask, out=self.keys)
        return self.keys.max(axis=1) & self.low


def _warm(vg, pick, steps=400):
    """Play into the middle of games (observations of the initial state are cheaper)."""
    for _ in range(steps):
        vg.step(pick(vg.legal_mask()))


def _check_picker(pick, num_actions):
    """The numpy picker picks legal actions, uniformly (checked before it is timed, so that
    the benchmark measures a real uniform random policy)."""
    vg = VectorGame("puerto_rico", n=N, players=PLAYERS, seed=1)
    _warm(vg, pick, 50)
    mask = vg.legal_mask().copy()
    counts = np.zeros_like(mask, dtype=np.int64)
    for _ in range(400):
        a = pick(mask)
        assert mask[np.arange(N), a].all(), "the picker chose an illegal action"
        counts[np.arange(N), a] += 1
    rows = mask.sum(axis=1) >= 2
    legal = mask[rows] == 1
    freq = counts[rows][legal] / 400
    n_legal = mask[rows].sum(axis=1).astype(np.int64)
    expected = np.repeat(1 / n_legal, n_legal)
    assert abs((freq - expected).mean()) < 0.01
    assert np.abs(freq - expected).max() < 0.2


def test_bench_vector_env_steps(benchmark):
    """The issue's loop: mask -> numpy random legal actions -> step -> observations."""
    vg = VectorGame("puerto_rico", n=N, players=PLAYERS, seed=0)
    pick = RandomLegal(N, vg.num_actions)
    _check_picker(pick, vg.num_actions)
    _warm(vg, pick)
    steps = size(200, 40)

    def run():
        for _ in range(steps):
            vg.step(pick(vg.legal_mask()))
            vg.observations()

    paired(
        benchmark,
        run,
        units=N * steps,
        calibration=c_calibration(N),
        n_rounds=rounds(7, 5),
        floor=FLOORS["env_steps"],
        unit="env_steps_per_second",
        group="vector",
        n=N,
        guard=True,
        players=PLAYERS,
        batch_steps_per_round=steps,
        observation_size=vg.observation_size,
    )


def test_bench_vector_env_steps_no_observations(benchmark):
    vg = VectorGame("puerto_rico", n=N, players=PLAYERS, seed=0)
    pick = RandomLegal(N, vg.num_actions)
    _warm(vg, pick)
    steps = size(300, 60)

    def run():
        for _ in range(steps):
            vg.step(pick(vg.legal_mask()))

    paired(
        benchmark,
        run,
        units=N * steps,
        calibration=c_calibration(N),
        n_rounds=rounds(7, 5),
        floor=FLOORS["env_steps_no_obs"],
        unit="env_steps_per_second",
        group="vector",
        n=N,
        guard=True,
        players=PLAYERS,
        batch_steps_per_round=steps,
    )


def test_bench_vector_parts(benchmark):
    """Each part of the loop timed on its own over the same mid-game batches: the numpy
    pick, step (apply + chance + resets + the next mask, in C) and observations (the
    game's observation writer)."""
    vg = VectorGame("puerto_rico", n=N, players=PLAYERS, seed=0)
    pick = RandomLegal(N, vg.num_actions)
    _warm(vg, pick)
    steps = size(150, 30)
    t_pick, t_step, t_obs = [], [], []

    def run():
        tp = ts = to = 0.0
        for _ in range(steps):
            actions, t = cpu_timed(pick, vg.legal_mask())
            tp += t
            ts += cpu_timed(vg.step, actions)[1]
            to += cpu_timed(vg.observations)[1]
        t_pick.append(tp)
        t_step.append(ts)
        t_obs.append(to)

    cal = c_calibration(N)
    m = paired(
        benchmark,
        run,
        units=steps * N,
        calibration=cal,
        n_rounds=rounds(7, 5),
        floor=FLOORS["parts_loop"],
        unit="loop_env_steps_per_second",
        group="vector",
        guard=True,
    )
    work = N * steps
    t_pick, t_step, t_obs = (x[-len(m.rates) :] for x in (t_pick, t_step, t_obs))
    benchmark.extra_info.update(
        ns_per_env_step_numpy_pick=round(median(t_pick) / work * 1e9, 1),
        ns_per_env_step_step=round(median(t_step) / work * 1e9, 1),
        ns_per_env_step_observation=round(median(t_obs) / work * 1e9, 1),
    )
    # each part against the calibration of its own round
    for part, times in (("step", t_step), ("pick", t_pick), ("observations", t_obs)):
        rates = [work / max(t, 1e-9) for t in times]
        ratio = median([r / c for r, c in zip(rates, m.calibration_rates)])
        report(
            benchmark,
            f"{part}_per_second",
            median(rates),
            cal,
            median(m.calibration_rates),
            ratio,
            FLOORS[part],
            guard=True,
        )


def _sample_legal_loop(benchmark, steps, floor, observations, guard=False):
    vg = VectorGame("puerto_rico", n=N, players=PLAYERS, seed=0)
    for _ in range(400):  # into the middle of games, as _warm
        vg.step(vg.sample_legal())

    def run():
        for _ in range(steps):
            vg.step(vg.sample_legal())
            if observations:
                vg.observations()

    paired(
        benchmark,
        run,
        units=N * steps,
        calibration=c_calibration(N),
        n_rounds=rounds(7, 5),
        floor=floor,
        guard=guard,
        unit="env_steps_per_second",
        group="vector",
        n=N,
        players=PLAYERS,
        batch_steps_per_round=steps,
        observation_size=vg.observation_size if observations else 0,
    )


def test_bench_vector_sample_legal_env_steps(benchmark):
    """sample_legal -> step -> observations: random play with observations, all in C."""
    _sample_legal_loop(benchmark, size(300, 60), FLOORS["sample_legal_env_steps"], True, guard=True)


def test_bench_vector_sample_legal_no_observations(benchmark):
    """sample_legal -> step: random play, all in C."""
    _sample_legal_loop(benchmark, size(900, 180), FLOORS["sample_legal_no_obs"], False)
