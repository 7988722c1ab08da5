"""Fuzz suite for VectorGame.step inputs and thread use (hypothesis, derandomized).

Inputs: random action arrays (every integer dtype, bool, float, object; lists, tuples,
strided and read-only views; wrong shapes; legal, illegal, negative, too large and >= 2**63
values) for every game. Each call must either step exactly as the same actions applied one
by one to copies of the states (chance resolved by the state's own RNG), or raise the
clear error numpy's reading of the input calls for, with every game unchanged.

Threads: one thread steps and resets with random legal actions while others make random
reads and bad calls; every call returns, raises the contract's RuntimeError or the input's
own error, and the stepped VectorGame ends equal to a twin that made the same moves alone
(docs/thread-safety.md).

The properties run in a child process (a crash fails the test instead of killing pytest).
"""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hardening_core import GAMES, run_py

from caribsim.vector import VectorGame

N = 4
DTYPES = [
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "float32",
    "float64",
    "object",
]
LAYOUTS = ["array", "array", "strided", "readonly", "list", "tuple"]
SHAPES = [None, None, None, None, "short", "long", "column", "scalar"]


def _wrap(v, dtype):
    """v as the integer dtype stores it (two's complement wrap-around)."""
    bits = np.dtype(dtype).itemsize * 8
    w = v % 2**bits
    return w - 2**bits if np.dtype(dtype).kind == "i" and w >= 2 ** (bits - 1) else w


def _build(values, dtype, layout, shape):
    if dtype == "object":
        arr = np.array(values, dtype=object)
    elif dtype == "bool":
        arr = np.array([v % 2 == 1 for v in values])
    elif dtype.startswith("float"):
        arr = np.array(values, dtype=np.float64).astype(dtype)
    else:
        arr = np.array([_wrap(v, dtype) for v in values], dtype=dtype)
    if shape == "short":
        arr = arr[:-1]
    elif shape == "long":
        arr = np.concatenate([arr, arr[:1]])
    elif shape == "column":
        arr = arr.reshape(-1, 1)
    elif shape == "scalar":
        arr = arr[0]
    if not isinstance(arr, np.ndarray):
        return arr
    if layout == "strided" and arr.ndim == 1:
        return np.repeat(arr, 2)[::2]
    if layout == "readonly":
        arr = arr.copy()
        arr.flags.writeable = False
        return arr
    if layout == "list":
        return arr.tolist()
    if layout == "tuple":
        return tuple(arr.tolist()) if arr.ndim else arr.item()
    return arr


def _expected(inp, states, num_actions):
    """(exception type, message regex) the call must raise, or None and the action ids."""
    try:
        a = np.asarray(inp)
    except (ValueError, TypeError, OverflowError):
        return (TypeError, r"actions must be integers"), None
    if a.dtype.kind not in "iu":
        return (TypeError, re.escape(f"got dtype {a.dtype}")), None
    if a.shape != (len(states),):
        return (
            ValueError,
            re.escape(f"actions must have shape ({len(states)},), got {a.shape}"),
        ), None
    ids = [int(x) for x in a]
    for i, (v, s) in enumerate(zip(ids, states)):
        if not 0 <= v < num_actions:
            return (
                ValueError,
                re.escape(f"game {i}: action {v} (out of range 0..{num_actions - 1})"),
            ), None
        if v not in s.legal_actions():
            return (ValueError, rf"game {i}: action {v} \(.*\) is not legal"), None
    return None, ids


def _snapshot(vg):
    return (
        [vg.get_state(i).serialize() for i in range(len(vg))],
        vg.legal_mask().copy(),
        vg.current_players().copy(),
        vg.episodes().copy(),
    )


def _no_history(d):
    d.pop("history")
    return d


def fuzz_step_inputs(name, examples):
    vg = VectorGame(name, n=N, seed=0)
    A = vg.num_actions

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def prop(data):
        # each example from a fresh start, moved on by random legal steps: determined by its data alone
        vg.reset(seed=data.draw(st.integers(0, 2**64 - 1)))
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32)))
        for _ in range(data.draw(st.integers(0, 300))):
            mask = np.array(vg.legal_mask())
            vg.step(np.argmax(mask * rng.random(mask.shape), axis=1))
        states = [vg.get_state(i) for i in range(N)]
        mask = vg.legal_mask()
        values = []
        for i in range(N):
            kind = data.draw(
                st.sampled_from(["legal"] * 4 + ["illegal", "negative", "high", "huge"])
            )
            r = data.draw(st.integers(0, 2**16))
            legal, illegal = np.flatnonzero(mask[i]), np.flatnonzero(mask[i] == 0)
            if kind == "legal" or (kind == "illegal" and not len(illegal)):
                values.append(int(legal[r % len(legal)]))
            elif kind == "illegal":
                values.append(int(illegal[r % len(illegal)]))
            elif kind == "negative":
                values.append(data.draw(st.integers(-(2**63), -1)))
            elif kind == "high":
                values.append(data.draw(st.integers(A, 2**63 - 1)))
            else:
                values.append(data.draw(st.integers(2**63, 2**64 - 1)))
        inp = _build(
            values,
            data.draw(st.sampled_from(DTYPES)),
            data.draw(st.sampled_from(LAYOUTS)),
            data.draw(st.sampled_from(SHAPES)),
        )
        error, ids = _expected(inp, states, A)
        before = _snapshot(vg)
        if error is not None:
            with pytest.raises(error[0], match=error[1]):
                vg.step(inp)
            after = _snapshot(vg)
            assert before[0] == after[0]
            for x, y in zip(before[1:], after[1:]):
                np.testing.assert_array_equal(x, y)
            return
        vg.step(inp)
        for i, (s, a) in enumerate(zip(states, ids)):
            s.apply_action(a)
            while s.is_chance_node():
                s.resolve_chance()
            if s.is_terminal():
                assert vg.terminated()[i] and vg.episodes()[i] == before[3][i] + 1
                np.testing.assert_array_equal(vg.rewards()[i], np.float32(s.returns()))
            else:
                assert not vg.terminated()[i]
                assert _no_history(vg.get_state(i).to_dict()) == _no_history(s.to_dict())
                assert vg.current_players()[i] == s.current_player()
                np.testing.assert_array_equal(vg.legal_mask()[i], s.legal_actions_mask())
                np.testing.assert_array_equal(vg.observations()[i], s.observation_tensor())

    prop()
    print("ok", name)


def _retry(f, *args):
    """f(*args), again while another thread's call runs."""
    while True:
        try:
            return f(*args)
        except RuntimeError as e:
            assert "being used by another thread" in str(e), e


def _meet(vg, steps=2000):
    """Step vg while another thread reads it until one of its calls is refused; the number of
    refusals (0 only if no call ever met a running one)."""
    refused, done = [0], threading.Event()

    def reader():
        while not done.is_set() and not refused[0]:
            try:
                vg.legal_mask()
            except RuntimeError as e:
                assert "being used by another thread" in str(e), e
                refused[0] += 1

    t = threading.Thread(target=reader)
    t.start()
    for _ in range(steps):
        if refused[0]:
            break
        _retry(vg.step, np.argmax(_retry(vg.legal_mask), axis=1))
    done.set()
    t.join()
    return refused[0]


def fuzz_threads(name, examples):
    n = 2048  # batch calls long enough for the other threads to meet them
    vg, twin = VectorGame(name, n=n, seed=3), VectorGame(name, n=n, seed=3)
    refused = [0]
    reads = [
        lambda: vg.legal_mask(),
        lambda: vg.observations(),
        lambda: vg.current_players(),
        lambda: vg.rewards(),
        lambda: vg.terminated(),
        lambda: vg.episodes(),
        lambda: vg.episode_lengths(),
        lambda: vg.scores(),
        lambda: vg.get_state(5),
        lambda: len(vg),
        lambda: repr(vg),
        lambda: vg.step(np.full(n, vg.num_actions)),
        lambda: vg.step(np.zeros(n, bool)),
        lambda: vg.step(np.zeros(3, np.int64)),
        lambda: vg.reset(seed=-1),
        # reads that draw (sample_legal) or fill other buffers change no game
        lambda: vg.sample_legal(),
        lambda: vg.observations(seat=1),
        lambda: vg.final_returns(),
        lambda: vg.final_scores(),
        lambda: vg.final_observations(np.arange(n) % 2),
        lambda: vg.final_state(5),
        lambda: vg.observations(seat=99),
    ]
    allowed = (
        r"being used by another thread",
        r"game 0: action \d+ \(out of range",
        r"got dtype bool",
        rf"shape \({n},\), got \(3,\)",
        r"seed must be in",
        r"game 5 has not finished",
        r"seat 99 is out of range",
    )

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        moves=st.lists(st.one_of(st.integers(0, 2**32), st.none()), min_size=1, max_size=12),
        programs=st.lists(
            st.lists(st.integers(0, len(reads) - 1), min_size=1, max_size=40),
            min_size=1,
            max_size=3,
        ),
    )
    def prop(moves, programs):
        vg.reset(seed=1)
        twin.reset(seed=1)
        errors = []

        def reader(program):
            for k in program:
                try:
                    reads[k]()
                except (RuntimeError, ValueError, TypeError) as e:
                    if not any(re.search(p, str(e)) for p in allowed):
                        errors.append(repr(e))
                    refused[0] += isinstance(e, RuntimeError)
                except BaseException as e:
                    errors.append(repr(e))

        threads = [threading.Thread(target=reader, args=(p,)) for p in programs]
        for t in threads:
            t.start()
        for m in moves:  # None: reset; an int: the seed of random legal actions
            if m is None:
                _retry(vg.reset, 7)
            else:
                mask = np.array(_retry(vg.legal_mask))
                acts = np.argmax(mask * np.random.default_rng(m).random(mask.shape), axis=1)
                _retry(vg.step, acts)
                _retry(vg.observations)
            if m is None:
                twin.reset(seed=7)
            else:
                twin.step(acts)
        for t in threads:
            t.join()
        assert not errors, errors[:3]
        assert [vg.get_state(i).serialize() for i in range(0, n, 37)] == [
            twin.get_state(i).serialize() for i in range(0, n, 37)
        ]
        for f in (
            "legal_mask",
            "observations",
            "current_players",
            "rewards",
            "terminated",
            "episodes",
        ):
            np.testing.assert_array_equal(getattr(vg, f)(), getattr(twin, f)())

    prop()
    met = refused[0] or _meet(vg)
    assert met, "no call ever met another thread's call"
    print("ok", name, refused[0])


@pytest.mark.parametrize("name", GAMES)
def test_fuzz_step_inputs(name):
    out = run_py(f"import test_fuzz_vector as t; t.fuzz_step_inputs({name!r}, 600)", timeout=300)
    assert f"ok {name}" in out


@pytest.mark.parametrize("name", GAMES)
def test_fuzz_threads(name):
    out = run_py(f"import test_fuzz_vector as t; t.fuzz_threads({name!r}, 40)", timeout=300)
    assert f"ok {name}" in out
