"""The guided search refuses what it cannot compute: coefficients so large that a score would
be inf (and the policy NaN), and a batch whose leaves overflow the int32 buffers."""

from __future__ import annotations

import numpy as np
import pytest

import caribsim
from caribsim.search import guided

GAMES = [("puerto_rico", 3), ("port_royal", 2), ("cuba", 3)]


def _decision(name, players, seed=0):
    state = caribsim.load_game(name, players=players).new_initial_state(seed=seed)
    while state.is_chance_node():
        state.resolve_chance()
    return state


@pytest.mark.parametrize("name,players", GAMES)
@pytest.mark.parametrize("option", ["c_visit", "c_scale", "gumbel_scale", "c_puct"])
def test_huge_coefficients_are_refused_not_turned_into_nan(name, players, option):
    state = _decision(name, players)
    with pytest.raises(ValueError, match=rf"{option} must be a finite number >= 0\.0 and <= "):
        guided.search(
            state, guided.RolloutEvaluator(), simulations=16, gumbel=True, **{option: 1e200}
        )


@pytest.mark.parametrize("name,players", GAMES)
def test_the_largest_coefficients_allowed_give_a_finite_policy(name, players):
    state = _decision(name, players)
    big = guided.MAX_COEFFICIENT
    result = guided.search(
        state,
        guided.RolloutEvaluator(),
        simulations=32,
        gumbel=True,
        c_visit=big,
        c_scale=big,
        gumbel_scale=big,
        seed=1,
    )
    assert np.all(np.isfinite(result.policy)) and result.policy.sum() == pytest.approx(1.0)
    assert result.action in state.legal_actions()


def test_a_batch_of_more_leaves_than_int32_holds_is_refused_before_anything_grows():
    state = _decision("puerto_rico", 2)
    n = 524_289  # x 4096 leaves per tree = 2**31 + 4096
    bs = guided.BatchSearch(guided.UniformEvaluator(2), simulations=2, leaves_per_tree=4096)
    with pytest.raises(ValueError, match=r"is 2147487744 leaves; one run holds at most 2147483647"):
        bs.run([state] * n, seeds=list(range(n)))
    # the engine is still usable afterwards
    (result,) = bs.run([state], seeds=[3])
    assert result.action in state.legal_actions()


INTERRUPT = """
import signal, sys, threading, time
import numpy as np
import caribsim
from caribsim.search import guided

def decision(name, players):
    s = caribsim.load_game(name, players=players).new_initial_state(seed=0)
    while s.is_chance_node():
        s.resolve_chance()
    return s

class Numpy:      # a Python evaluator: uniform logits, even values
    def __call__(self, obs, mask):
        n, players = len(obs), 3
        return np.zeros(mask.shape, np.float32), np.full((n, players), 1 / players)

main = threading.main_thread().ident
cases = {
    "rollout, one tree": lambda st: guided.search(
        st, guided.RolloutEvaluator(rollouts=4), simulations=10**8, seed=0),
    "rollout, a batch of 4": lambda st: guided.BatchSearch(
        guided.RolloutEvaluator(), simulations=10**8).run([st] * 4, seeds=[1, 2, 3, 4]),
    "gumbel, rollout": lambda st: guided.search(
        st, guided.RolloutEvaluator(), simulations=10**8, gumbel=True, seed=0),
    "python evaluator with mix": lambda st: guided.BatchSearch(
        Numpy(), simulations=10**8, leaves_per_tree=8, mix=0.5, mix_rollouts=64
    ).run([st] * 16, seeds=list(range(16))),
}
st = decision("puerto_rico", 3)
for name, run in cases.items():
    threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT)).start()
    t0 = time.perf_counter()
    try:
        run(st)
        raise SystemExit(name + ": not interrupted")
    except KeyboardInterrupt:
        late = time.perf_counter() - t0 - 0.5
    print(f"{name}: {late:.3f}")
# and the engine searches again afterwards
r = guided.search(st, guided.RolloutEvaluator(), simulations=50, seed=0)
assert r.action in st.legal_actions()
print("ok")
"""


def test_ctrl_c_stops_every_guided_search_within_half_a_second():
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, "-c", INTERRUPT], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr[-3000:]
    lines = p.stdout.splitlines()
    assert lines[-1] == "ok", p.stdout
    for line in lines[:-1]:
        _name, late = line.rsplit(": ", 1)
        assert float(late) < 0.5, line
    assert len(lines) == 5
