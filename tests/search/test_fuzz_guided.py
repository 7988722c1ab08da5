"""Fuzzing of the guided search (hypothesis, derandomized): random valid options, random
evaluators (priors and values of every scale, masked logits, constant values) and random
positions of every game. Each run returns a legal action with a sound result (visits
summing to the simulations, a policy summing to 1 over the legal moves, q and values in
[0, 1]) and leaves neither virtual loss nor a waiting node; a random invalid option or
evaluator output raises a clear error and the same object then runs normally. Each game
runs in a subprocess with a timeout, so a crash or a hang fails the test."""

import os
import subprocess
import sys
import textwrap

import pytest

SRC = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src"
)

CODE = r"""
import math, random, sys
import numpy as np
import caribsim
from caribsim.search import guided
from hypothesis import given, settings, strategies as st

GAME = sys.argv[1]
SETTINGS = settings(max_examples=int(sys.argv[2]), deadline=None, derandomize=True, database=None)


def decisions(players, seed):
    s = caribsim.load_game(GAME, players=players).new_initial_state(seed=seed)
    rng = random.Random(seed)
    out = []
    while not s.is_terminal() and len(out) < 300:
        if s.is_chance_node():
            s.resolve_chance()
            continue
        out.append(s.clone())
        s.apply_action(rng.choice(s.legal_actions()))
    return out


POSITIONS = {p: decisions(p, p) for p in (2, 3, 4)}


class Evaluator:
    def __init__(self, players, scale, value_mode, masked, seed):
        self.players, self.scale, self.value_mode, self.masked = players, scale, value_mode, masked
        self.w = np.random.default_rng(seed).normal(size=4096)

    def __call__(self, obs, mask):
        s = (obs.astype(np.float64) * self.w[:obs.shape[1]]).sum(axis=1)
        logits = self.scale * np.sin(np.outer(s, np.arange(mask.shape[1]) + 1.0))
        if self.masked:
            logits = np.where(mask, logits, -np.inf)
        if self.value_mode == "constant":
            values = np.full((len(obs), self.players), 0.5)
        elif self.value_mode == "extreme":
            values = (np.sin(s[:, None] + np.arange(self.players)) > 0).astype(np.float64)
        else:
            values = 0.5 + 0.5 * np.sin(s[:, None] * 3 + np.arange(self.players))
        return logits.astype(np.float32), np.clip(values, 0, 1)


OPTIONS = st.fixed_dictionaries({
    "simulations": st.integers(1, 60),
    "leaves_per_tree": st.integers(1, 12),
    "c_puct": st.floats(0, 10),
    "fpu_reduction": st.floats(0, 1),
    "gumbel": st.booleans(),
    "max_considered": st.integers(1, 40),
    "gumbel_scale": st.floats(0, 3),
    "c_visit": st.floats(0, 100),
    "c_scale": st.floats(0, 2),
    "interior": st.sampled_from([None, "puct", "gumbel"]),
    "seed": st.integers(0, 2**64 - 1),
})


def check(results, states, sims):
    for r, s in zip(results, states):
        legal = s.legal_actions()
        assert r.action in legal, (r.action, legal)
        assert r.visits.sum() == sims == r.simulations
        assert set(np.flatnonzero(r.visits)) <= set(legal)
        assert abs(r.policy[legal].sum() - 1) < 1e-9 and np.all(np.delete(r.policy, legal) == 0)
        assert np.all(r.policy >= 0)
        q = r.q[~np.isnan(r.q)]
        assert np.all((q >= -1e-12) & (q <= 1 + 1e-12)) and np.all((r.value >= 0) & (r.value <= 1 + 1e-12))


@SETTINGS
@given(OPTIONS, st.sampled_from([2, 3, 4]), st.integers(0, 10**6), st.integers(1, 5),
       st.sampled_from([0.0, 0.1, 3.0, 60.0]), st.sampled_from(["constant", "extreme", "smooth"]),
       st.booleans(), st.one_of(st.none(), st.floats(0.01, 5)), st.sampled_from([0.0, 0.0, 1.0, 5.0]))
def test_valid(options, players, pick, batch, scale, value_mode, masked, alpha, temperature):
    pos = POSITIONS[players]
    states = [pos[(pick + 37 * i) % len(pos)] for i in range(batch)]
    before = [s.to_dict() for s in states]
    if not options["gumbel"]:
        options = dict(options, dirichlet_alpha=alpha, temperature=temperature)
    print("valid", GAME, players, pick, batch, scale, value_mode, masked, options, flush=True)
    bs = guided.BatchSearch(Evaluator(players, scale, value_mode, masked, pick), **options)
    check(bs.run(states), states, options["simulations"])
    audit = bs._engine.audit()
    assert audit["vloss"] == audit["pending"] == audit["inflight"] == 0, audit
    if GAME == "puerto_rico":
        assert audit["unbalanced"] == 0, audit
    check(guided.BatchSearch(guided.RolloutEvaluator(), **options).run(states), states, options["simulations"])
    assert [s.to_dict() for s in states] == before


BAD = st.sampled_from(["nan logit", "inf value", "big value", "negative value", "shape", "dtype", "raise", "tuple"])


@SETTINGS
@given(BAD, st.integers(1, 6), st.integers(0, 10**6), st.booleans(), st.integers(1, 8))
def test_bad_outputs(bad, when, pick, gumbel, k):
    pos = POSITIONS[3]
    states = [pos[pick % len(pos)], pos[(pick * 7 + 1) % len(pos)]]
    good = Evaluator(3, 1.0, "smooth", False, 0)
    calls = [0]

    def ev(obs, mask):
        calls[0] += 1
        logits, values = good(obs, mask)
        if calls[0] != when:
            return logits, values
        row = calls[0] % len(obs)
        if bad == "nan logit":
            logits[row, np.flatnonzero(mask[row])[0]] = np.nan
        elif bad == "inf value":
            values[row, 0] = np.inf
        elif bad == "big value":
            values[row, 1] = 1.0001
        elif bad == "negative value":
            values[row, 2] = -1e-9
        elif bad == "shape":
            values = values[:, :2]
        elif bad == "dtype":
            logits = logits.astype(np.int32)
        elif bad == "raise":
            raise OSError("evaluator down")
        else:
            return (logits,)
        return logits, values

    print("bad", GAME, bad, when, pick, gumbel, k, flush=True)
    bs = guided.BatchSearch(ev, simulations=40, leaves_per_tree=k, gumbel=gumbel, seed=pick)
    try:
        bs.run(states)
        failed = False
    except (ValueError, TypeError, OSError) as e:
        failed = True
        assert str(e), e
    audit = bs._engine.audit()
    assert audit["vloss"] == audit["pending"] == audit["inflight"] == 0, audit
    assert failed or calls[0] < when, (calls[0], when)   # it failed unless the bad call never came
    calls[0] = -10**9                               # good from now on
    check(bs.run(states), states, 40)


test_valid()
test_bad_outputs()
print("ok")
"""


@pytest.mark.parametrize("game", ["puerto_rico", "port_royal", "cuba"])
def test_fuzz_guided_search(game):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        p = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(CODE), game, "100"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the fuzz run hung for more than 300 s")
    tail = "\n".join(p.stdout.splitlines()[-3:])
    assert p.returncode == 0, (
        f"exit code {p.returncode}\nlast examples:\n{tail}\n{p.stderr[-3000:]}"
    )
    assert p.stdout.endswith("ok\n")
