"""Hardening of GameState, VectorGame and state snapshots: objects made without their C
setup, VectorGame's read-only arrays, re-initialisation and action inputs, and the thread
contract of docs/thread-safety.md. Everything that could crash or hang runs in a
subprocess with a timeout, so a regression fails its test instead of killing pytest."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import caribsim
from caribsim.vector import VectorGame

SRC = os.path.dirname(os.path.dirname(os.path.abspath(caribsim.__file__)))
GAMES = ["puerto_rico", "port_royal", "cuba"]


def run_py(code, timeout=120):
    """Run `code` in a fresh interpreter with this caribsim; returns its stdout (fails on a
    crash, a hang or a non-zero exit)."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                           timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child hung (no exit within {timeout} s)")
    assert r.returncode == 0, f"exit code {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r.stdout


# --- item 3: objects that exist without their C setup ----------------------------------

UNINIT_PROBE = """
import copy, pickle
import numpy as np
import caribsim

SKIP = {"__class__", "__init_subclass__", "__subclasshook__", "__new__", "__init__", "__getattribute__",
        "__setattr__", "__delattr__", "__dir__", "__format__", "__sizeof__", "__reduce_ex__", "__getstate__",
        "__reduce_cython__", "__setstate_cython__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
        "__repr__", "__str__", "__hash__"}
ARGS = [(), (0,), (0, 0), (0, 0, 0), (np.zeros(4096, np.float32),)]

def probe(obj, label, must=()):
    # every public method raises RuntimeError "not initialised", whatever arguments it takes
    assert "not initialised" in repr(obj), repr(obj)
    called = set()
    for name in sorted(dir(obj)):
        if name in SKIP or (name.startswith("_") and not name.startswith("__") and name != "_random_playouts"):
            continue
        try:
            f = getattr(obj, name)
        except RuntimeError as e:          # a property (VectorGame.n)
            assert "not initialised" in str(e), f"{label}.{name}: {e}"
            called.add(name)
            continue
        if not callable(f) or getattr(type(obj), name, None) is getattr(object, name, 0):
            continue   # object's own methods (__eq__ of a VectorGame) touch no C state
        for args in ARGS:
            try:
                f(*args)
            except TypeError as e:
                if "argument" in str(e) or "takes" in str(e) or "bytes-like" in str(e) or "buffer" in str(e):
                    continue
                raise AssertionError(f"{label}.{name}{args}: {type(e).__name__}: {e}")
            except RuntimeError as e:
                assert "not initialised" in str(e), f"{label}.{name}: {e}"
                called.add(name)
                break
            except BaseException as e:
                raise AssertionError(f"{label}.{name}{args}: {type(e).__name__}: {e}")
            else:
                raise AssertionError(f"{label}.{name}{args} returned instead of raising")
        else:
            raise AssertionError(f"{label}.{name}: no argument list was accepted")
    missing = set(must) - called
    assert not missing, f"{label}: not probed: {missing}"
    for what, fn in [("pickle", lambda: pickle.dumps(obj)), ("copy", lambda: copy.copy(obj)),
                     ("deepcopy", lambda: copy.deepcopy(obj)), ("str", lambda: str(obj)), ("len", lambda: len(obj))]:
        if what == "len" and not hasattr(obj, "__len__"):
            continue
        try:
            text = fn()
        except RuntimeError as e:
            assert "not initialised" in str(e), f"{label} {what}: {e}"
        else:   # only str() may answer, when it is the repr
            assert what == "str" and "not initialised" in text, f"{label}: {what} gave {text!r}"
    print("ok", label, len(called))
"""


def test_states_made_without_their_game_refuse_every_method():
    """GameState.__new__, a Python subclass's __new__ and each game's class made by __new__:
    every method raises RuntimeError 'not initialised' (was: NULL vtable, SIGSEGV)."""
    out = run_py(UNINIT_PROBE + """
from caribsim._game import GameState, random_playouts
from caribsim._puerto_rico import PuertoRicoState
from caribsim._port_royal import PortRoyalState
from caribsim._cuba import CubaState
from caribsim.vector import game_info

class Sub(GameState):
    pass

COMMON = {"is_terminal", "current_player", "legal_actions", "child", "history",
          "observation_tensor", "write_observation", "serialize", "returns", "chance_outcomes", "resolve_chance",
          "__eq__", "__copy__", "__deepcopy__", "__reduce__", "_random_playouts"}
for cls in (GameState, Sub):
    probe(cls.__new__(cls), cls.__name__, COMMON)
for cls in (PuertoRicoState, PortRoyalState, CubaState):
    sub = type("Sub" + cls.__name__, (cls,), {})
    for c in (cls, sub):
        probe(c.__new__(c), c.__name__, COMMON | {"apply_action", "clone", "to_dict", "scores", "step_name"})
    st = cls.__new__(cls)
    for fn in (lambda: random_playouts(st, 1, 0, 1), lambda: game_info(st), lambda: st == st,
               lambda: caribsim.random_playouts(st, 1)):
        try:
            fn()
        except RuntimeError as e:
            assert "not initialised" in str(e), e
        else:
            raise AssertionError("accepted an uninitialised state")
    real = caribsim.load_game(cls.__module__.split("._")[1]).new_initial_state(seed=1)
    try:
        real == st
    except RuntimeError as e:
        assert "not initialised" in str(e)
    else:
        raise AssertionError("compared with an uninitialised state")
""")
    assert out.count("ok ") == 8


def test_vector_game_made_without_init_refuses_every_method():
    """VectorGame.__new__ and a subclass that skips __init__: every method raises RuntimeError."""
    out = run_py(UNINIT_PROBE + """
from caribsim.vector import VectorGame

class Lazy(VectorGame):
    def __init__(self):
        pass

ALL = {"step", "reset", "legal_mask", "observations", "current_players", "rewards", "terminated",
       "episode_lengths", "episodes", "scores", "get_state"}
probe(VectorGame.__new__(VectorGame), "VectorGame", ALL)
probe(Lazy(), "Lazy", ALL)
""")
    assert out.count("ok ") == 2


# --- item 4: a second __init__ ----------------------------------------------------------

def test_vector_game_refuses_a_second_init_and_survives_a_failed_first():
    """A second __init__ (which failed part-way with n=2**31-1 and left len() at the new size,
    then get_state/reset segfaulted) is refused with every game unchanged; a first __init__
    that fails leaves a not-initialised object that a good __init__ then sets up."""
    out = run_py("""
import numpy as np
from caribsim.vector import VectorGame
vg = VectorGame("puerto_rico", n=3, players=3, seed=5)
vg.step(np.argmax(vg.legal_mask(), axis=1))
before = [vg.get_state(i).serialize() for i in range(3)]
for args in [dict(n=2 ** 31 - 1), dict(n=2), dict(n=0)]:
    try:
        vg.__init__("puerto_rico", **args)
    except RuntimeError as e:
        assert "already initialised" in str(e), e
    else:
        raise AssertionError("second __init__ accepted")
assert len(vg) == 3 and vg.legal_mask().shape[0] == 3
assert [vg.get_state(i).serialize() for i in range(3)] == before
vg.reset()
vg.step(np.argmax(vg.legal_mask(), axis=1))

fresh = VectorGame.__new__(VectorGame)
try:
    fresh.__init__("puerto_rico", n=2 ** 31 - 1)
except MemoryError as e:
    assert "cannot allocate" in str(e)
else:
    raise AssertionError("2**31-1 states allocated?")
try:
    len(fresh)
except RuntimeError as e:
    assert "not initialised" in str(e)
else:
    raise AssertionError("len() of a failed VectorGame")
fresh.__init__("puerto_rico", n=2, players=3, seed=5)
assert len(fresh) == 2 and fresh.get_state(1).serialize() == VectorGame("puerto_rico", n=2, players=3, seed=5).get_state(1).serialize()
print("done")
""")
    assert "done" in out


# --- item 2: the arrays of a VectorGame cannot be made writable ------------------------

@pytest.mark.parametrize("name", GAMES)
def test_vector_arrays_cannot_be_made_writable(name):
    """Every route to write the mask or the acting seats fails, and step still refuses an
    illegal action with every game unchanged (was: writable, then illegal actions applied
    in C: Port Royal segfaulted, Puerto Rico and Cuba hung)."""
    out = run_py(f"""
import numpy as np
from caribsim.vector import VectorGame
vg = VectorGame({name!r}, n=4, seed=3)
arrays = [vg.legal_mask(), vg.current_players(), vg.observations(), vg.rewards(), vg.terminated(),
          vg.episodes(), vg.episode_lengths()]
for m in arrays:
    attempts = [lambda: setattr(m.flags, "writeable", True), lambda: m.setflags(write=True),
                lambda: m.base.__setitem__(Ellipsis, 1), lambda: setattr(m.base.flags, "writeable", True),
                lambda: np.frombuffer(m.base.base, dtype=np.uint8).__setitem__(0, 1),
                lambda: memoryview(m.base.base).__setitem__(0, 1),
                lambda: np.ndarray(m.shape, m.dtype, buffer=m.base.base).setflags(write=True)]
    for k, attempt in enumerate(attempts):
        try:
            attempt()
        except (ValueError, TypeError, BufferError) as e:
            assert "read-only" in str(e) or "WRITEABLE" in str(e) or "not writable" in str(e), (k, e)
        else:
            raise AssertionError(f"array {{m.dtype}} {{m.shape}} made writable by attempt {{k}}")
mask = vg.legal_mask()
before = [vg.get_state(i).serialize() for i in range(4)]
illegal = np.array([np.flatnonzero(row == 0)[0] for row in mask])
try:
    vg.step(illegal)
except ValueError as e:
    assert "game 0: action" in str(e) and "No game was changed" in str(e), e
else:
    raise AssertionError("illegal actions accepted")
assert [vg.get_state(i).serialize() for i in range(4)] == before
print("done")
""", timeout=60)
    assert "done" in out


# --- item 20: action inputs ---------------------------------------------------------------

@pytest.mark.parametrize("name", GAMES)
def test_step_reports_every_bad_action_input_clearly(name):
    """uint64 >= 2**63 (was OverflowError), read-only and strided arrays (was 'buffer source
    array is read-only'), wrong dtypes and shapes: a clear error and nothing changed, or the
    same step as the plain int64 array."""
    vg = VectorGame(name, n=3, seed=2)
    twin = VectorGame(name, n=3, seed=2)
    before = [vg.get_state(i).serialize() for i in range(3)]
    for big in (2 ** 63, 2 ** 64 - 1):
        acts = np.argmax(vg.legal_mask(), axis=1).astype(np.uint64)
        acts[1] = big
        with pytest.raises(ValueError, match=rf"game 1: action {big} \(out of range 0\.\.{vg.num_actions - 1}\)"):
            vg.step(acts)
    for bad, err, msg in [(np.zeros(3, bool), TypeError, "got dtype bool"),
                          (np.zeros(3, np.float64), TypeError, "got dtype float64"),
                          ([0, 1, 2 ** 70], TypeError, "got dtype object"),
                          ([[0], [1, 2], []], TypeError, r"actions must be integers of shape \(3,\)"),
                          (np.zeros((3, 1), np.int64), ValueError, r"shape \(3,\), got \(3, 1\)"),
                          (np.int64(0), ValueError, r"got \(\)"),
                          (np.array([-1, 0, 0]), ValueError, "game 0: action -1 \\(out of range")]:
        with pytest.raises(err, match=msg):
            vg.step(bad)
    assert [vg.get_state(i).serialize() for i in range(3)] == before
    legal = np.argmax(vg.legal_mask(), axis=1).astype(np.int64)
    ro = legal.copy()
    ro.flags.writeable = False
    vg.step(ro)
    twin.step(legal)
    strided = np.repeat(np.argmax(vg.legal_mask(), axis=1).astype(np.uint16), 2)[::2]
    vg.step(strided)
    twin.step(np.argmax(twin.legal_mask(), axis=1))
    vg.step(np.argmax(vg.legal_mask(), axis=1).tolist())
    twin.step(np.argmax(twin.legal_mask(), axis=1))
    assert [vg.get_state(i).serialize() for i in range(3)] == [twin.get_state(i).serialize() for i in range(3)]
    np.testing.assert_array_equal(vg.observations(), twin.observations())
