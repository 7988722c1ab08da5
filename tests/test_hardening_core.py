"""Hardening of GameState, VectorGame and state snapshots: objects made without their C
setup, VectorGame's read-only arrays, re-initialisation and action inputs, and the thread
contract of docs/thread-safety.md. Everything that could crash or hang runs in a
subprocess with a timeout, so a regression fails its test instead of killing pytest."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import caribsim
from caribsim.vector import VectorGame

SRC = os.path.dirname(os.path.dirname(os.path.abspath(caribsim.__file__)))
GAMES = ["puerto_rico", "port_royal", "cuba"]
TESTS = os.path.dirname(os.path.abspath(__file__))
# the folders of the test modules (each layer's tests sit in their own), for a child's imports
TEST_FOLDERS = [
    TESTS,
    *sorted({os.path.dirname(p) for p in glob.glob(os.path.join(TESTS, "*", "test_*.py"))}),
]


def run_py(code, timeout=120):
    """Run `code` in a fresh interpreter with this caribsim and the test modules on the path;
    returns its stdout (fails on a crash, a hang or a non-zero exit)."""
    path = [SRC, *TEST_FOLDERS, os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    try:
        r = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
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
    assert "not initialised" in repr(obj), repr(obj)
    print("ok", label, len(called))
"""


def test_states_made_without_their_game_refuse_every_method():
    """GameState.__new__, a Python subclass's __new__ and each game's class made by __new__:
    every method raises RuntimeError 'not initialised' (was: NULL vtable, SIGSEGV)."""
    out = run_py(
        UNINIT_PROBE
        + """
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
    real = caribsim.load_game(cls.__module__.split(".")[1].lstrip("_")).new_initial_state(seed=1)
    try:
        real == st
    except RuntimeError as e:
        assert "not initialised" in str(e)
    else:
        raise AssertionError("compared with an uninitialised state")
"""
    )
    assert out.count("ok ") == 8


def test_vector_game_made_without_init_refuses_every_method():
    """VectorGame.__new__ and a subclass that skips __init__: every method raises RuntimeError."""
    out = run_py(
        UNINIT_PROBE
        + """
from caribsim.vector import VectorGame

class Lazy(VectorGame):
    def __init__(self):
        pass

ALL = {"step", "reset", "legal_mask", "observations", "current_players", "rewards", "terminated",
       "episode_lengths", "episodes", "scores", "get_state", "sample_legal", "final_returns",
       "final_scores", "final_observations", "final_state"}
probe(VectorGame.__new__(VectorGame), "VectorGame", ALL)
probe(Lazy(), "Lazy", ALL)
"""
    )
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


def test_get_state_refuses_a_game_that_changes_its_states():
    """A game object whose new_initial_state() later makes another game's (smaller) states:
    get_state refuses instead of copying the slot over the end of that state."""
    out = run_py("""
import caribsim
from caribsim.vector import VectorGame

class Fickle:
    def __init__(self):
        self.inner = caribsim.load_game("port_royal")
    def new_initial_state(self, seed=0):
        return self.inner.new_initial_state(seed=seed)

game = Fickle()
vg = VectorGame(game, n=2, seed=0)
game.inner = caribsim.load_game("puerto_rico")
try:
    vg.get_state(1)
except RuntimeError as e:
    assert "no longer makes port_royal states" in str(e), e
else:
    raise AssertionError("copied a port_royal slot into a puerto_rico state")
print("done")
""")
    assert "done" in out


# --- item 2: the arrays of a VectorGame cannot be made writable ------------------------


@pytest.mark.parametrize("name", GAMES)
def test_vector_arrays_cannot_be_made_writable(name):
    """Every route to write the mask or the acting seats fails, and step still refuses an
    illegal action with every game unchanged (was: writable, then illegal actions applied
    in C: Port Royal segfaulted, Puerto Rico and Cuba hung)."""
    out = run_py(
        f"""
import numpy as np
from caribsim.vector import VectorGame
vg = VectorGame({name!r}, n=4, seed=3)
arrays = [vg.legal_mask(), vg.current_players(), vg.observations(), vg.rewards(), vg.terminated(),
          vg.episodes(), vg.episode_lengths(), vg.sample_legal(), vg.final_returns(), vg.final_scores(),
          vg.final_observations(0)]
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
""",
        timeout=60,
    )
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
    for big in (2**63, 2**64 - 1):
        acts = np.argmax(vg.legal_mask(), axis=1).astype(np.uint64)
        acts[1] = big
        with pytest.raises(
            ValueError, match=rf"game 1: action {big} \(out of range 0\.\.{vg.num_actions - 1}\)"
        ):
            vg.step(acts)
    for bad, err, msg in [
        (np.zeros(3, bool), TypeError, "got dtype bool"),
        (np.zeros(3, np.float64), TypeError, "got dtype float64"),
        ([0, 1, 2**70], TypeError, "got dtype object"),
        ([[0], [1, 2], []], TypeError, r"actions must be integers of shape \(3,\)"),
        (np.zeros((3, 1), np.int64), ValueError, r"shape \(3,\), got \(3, 1\)"),
        (np.int64(0), ValueError, r"got \(\)"),
        (np.array([-1, 0, 0]), ValueError, "game 0: action -1 \\(out of range"),
    ]:
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
    assert [vg.get_state(i).serialize() for i in range(3)] == [
        twin.get_state(i).serialize() for i in range(3)
    ]
    np.testing.assert_array_equal(vg.observations(), twin.observations())


# --- item 7: one state shared by 8 threads (docs/thread-safety.md) ----------------------

SHARED_STATE = """
import copy, gc, pickle, random, sys, threading, time
import numpy as np
import caribsim

name, seed, max_moves = NAME, SEED, MAX_MOVES
game = caribsim.load_game(name)
state = game.new_initial_state(seed=seed)
sys.setswitchinterval(1e-6)
gc.set_threshold(20)
gc.callbacks.append(lambda phase, info: time.sleep(0))   # every collection lets another thread run
done = threading.Event()
start = threading.Barrier(8)
seen = {k: [] for k in ("dict", "text", "pickle", "clone", "reads", "determinized")}
buf = np.zeros(game.observation_tensor_shape(), dtype=np.float32)
errors = []

def mover(k):
    rng = random.Random(k)
    start.wait()
    try:
        while not done.is_set():
            time.sleep(0.0002)               # let the snapshotters run between moves
            if state.is_terminal() or len(state.history()) >= max_moves:
                done.set()
                break
            try:
                if state.is_chance_node():
                    state.resolve_chance()
                else:
                    acts = state.legal_actions()
                    if acts:
                        state.apply_action(rng.choice(acts))
            except ValueError as e:          # another mover moved first: refused, nothing changed
                msg = str(e)
                assert "not legal" in msg or "game is over" in msg or "not a chance node" in msg, msg
    except BaseException as e:
        errors.append(f"mover: {type(e).__name__}: {e}")
        done.set()

def snapshotter(k):
    start.wait()
    mine = seen[("dict", "text", "pickle", "clone", "reads")[k]]
    try:
        while not done.is_set() or len(mine) < 10:
            if k == 0:
                seen["dict"].append(state.to_dict())
            elif k == 1:
                seen["text"].append(state.serialize())
            elif k == 2:
                seen["pickle"].append(pickle.dumps(state))
            elif k == 3:
                seen["clone"].append(state.clone() if len(seen["clone"]) % 2 else copy.copy(state))
                if hasattr(state, "determinize"):
                    seen["determinized"].append(state.determinize(1))
            else:
                state.write_observation(buf)
                seen["reads"].append((tuple(state.legal_actions()), state.legal_actions_mask().tobytes(),
                                      tuple(state.chance_outcomes()), repr(state.scores()), str(state),
                                      repr(state), state.observation_tensor().tobytes(), buf.tobytes(),
                                      tuple(state.returns())))
    except BaseException as e:
        errors.append(f"snapshotter {k}: {type(e).__name__}: {e}")
        done.set()

threads = [threading.Thread(target=mover, args=(k,)) for k in range(3)]
threads += [threading.Thread(target=snapshotter, args=(k,)) for k in range(5)]
for t in threads:
    t.start()
for t in threads:
    t.join()
sys.setswitchinterval(0.005)
gc.callbacks.clear()
assert not errors, errors[:3]

# every position the state went through: its history replayed (chance outcomes applied as
# actions: the RNG words may differ, so they are left out of the comparison)
hist = state.history()
replay = game.new_initial_state(seed=seed)
positions = []
def record(s):
    d = s.to_dict()
    d.pop("rng")
    positions.append(d)
record(replay)
for a in hist:
    replay.apply_action(a)
    record(replay)
last = state.to_dict()
last.pop("rng")
assert last == positions[-1], "the history does not lead to the final position"

def check(d, what):
    d = dict(d)
    n = len(d["history"])
    assert d["history"] == hist[:n], f"{what}: history is not a prefix of the final history"
    d.pop("rng")
    assert d == positions[n], f"{what}: not the position after its {n} moves"

for d in seen["dict"]:
    game.state_from_dict(d)
    check(d, "to_dict")
for text in seen["text"]:
    check(game.deserialize_state(text).to_dict(), "serialize")
for blob in seen["pickle"]:
    check(pickle.loads(blob).to_dict(), "pickle")
for c in seen["clone"]:
    d = c.to_dict()
    game.state_from_dict(d)
    check(d, "clone")
# each read is of one position the state went through (not a mix of two)
kinds = ("legal_actions", "legal_actions_mask", "chance_outcomes", "scores", "str", "repr", "observation",
         "write_observation", "returns")
def reads(s):
    obs = s.observation_tensor().tobytes()
    return (tuple(s.legal_actions()), s.legal_actions_mask().tobytes(), tuple(s.chance_outcomes()),
            repr(s.scores()), str(s), repr(s), obs, obs, tuple(s.returns()))
possible = [set() for _ in kinds]
replay = game.new_initial_state(seed=seed)
for n in range(len(hist) + 1):
    for k, v in enumerate(reads(replay)):
        possible[k].add(v)
    if n < len(hist):
        replay.apply_action(hist[n])
for r in seen["reads"]:
    for k, v in enumerate(r):
        assert v in possible[k], f"{kinds[k]}: of no position the state went through"
for c in seen["determinized"]:      # another position (hidden parts resampled), but a sound one
    game.state_from_dict(c.to_dict())
if not hasattr(state, "determinize"):
    seen.pop("determinized")
counts = {k: len(v) for k, v in seen.items()}
assert min(counts.values()) >= 10, counts
assert len(hist) >= 20, len(hist)
print("ok", len(hist), counts)
"""


@pytest.mark.parametrize("name", GAMES)
def test_one_state_shared_by_eight_threads(name):
    """3 threads move one state (apply_action, resolve_chance) while 5 take to_dict, serialize,
    pickle, clone and other reads, with a thread switch forced at every GC run: each snapshot
    is accepted by the game's validator and is exactly the position after its history's
    moves, each read is of a position the state went through, and the final history replays
    to the final position (was: torn snapshots, e.g. 'indigo goods are not conserved')."""
    code = SHARED_STATE.replace("NAME", repr(name)).replace("SEED", "4").replace("MAX_MOVES", "150")
    out = run_py(code, timeout=120)
    assert out.startswith("ok")


# --- VectorGame and threads (docs/thread-safety.md) --------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_vector_game_one_thread_at_a_time(name):
    """While one thread steps a VectorGame, every call from another thread returns or raises
    RuntimeError 'being used by another thread', and none changes a game: the stepped
    VectorGame ends equal to a twin stepped alone with the same actions."""
    out = run_py(
        f"""
import sys, threading
import numpy as np
from caribsim.vector import VectorGame
sys.setswitchinterval(1e-5)
vg, twin = VectorGame({name!r}, n=2048, seed=1), VectorGame({name!r}, n=2048, seed=1)
done = threading.Event()
refused, answered, errors = [0], [0], []
calls = [lambda: vg.legal_mask(), lambda: vg.observations(), lambda: vg.current_players(), lambda: vg.rewards(),
         lambda: vg.terminated(), lambda: vg.episodes(), lambda: vg.episode_lengths(), lambda: vg.scores(),
         lambda: vg.get_state(3), lambda: len(vg), lambda: vg.step(np.full(2048, -1))]
def other():
    k = 0
    while not done.is_set():
        call = calls[k % len(calls)]        # reads and an illegal step: nothing may change
        k += 1
        try:
            call()
            answered[0] += 1
        except RuntimeError as e:
            assert "being used by another thread" in str(e), e
            refused[0] += 1
        except ValueError as e:
            assert "game 0: action -1" in str(e), e
            answered[0] += 1
        except BaseException as e:
            errors.append(repr(e))
from test_fuzz_vector import _retry as retry, _meet
t = threading.Thread(target=other)
t.start()
rng = np.random.default_rng(0)
for _ in range(40):
    mask = np.array(twin.legal_mask())
    acts = np.argmax(mask * rng.random(mask.shape), axis=1)      # a random legal action per game
    retry(vg.step, acts)
    retry(vg.observations)
    twin.step(acts)
done.set()
t.join()
assert not errors, errors[:3]
assert answered[0] > 0, answered
assert all(vg.get_state(i).serialize() == twin.get_state(i).serialize() for i in range(0, 2048, 29))
np.testing.assert_array_equal(vg.observations(), twin.observations())
np.testing.assert_array_equal(vg.episodes(), twin.episodes())
assert refused[0] or _meet(vg), "no call ever met another thread's call"   # the test had its race
print("ok", refused[0], answered[0])
""",
        timeout=120,
    )
    assert out.startswith("ok")


@pytest.mark.parametrize("name", GAMES)
def test_step_copies_the_actions_before_checking_them(name):
    """Another thread overwriting the actions array with -1s while step runs without the GIL
    (after the check) changes nothing: each step applies the actions it was given, as a twin
    stepped alone shows (was: the caller's buffer was checked, then read again by the rules,
    so the -1s reached the C code)."""
    out = run_py(
        f"""
import sys, threading, time
import numpy as np
from caribsim.vector import VectorGame
n = 16384                         # a step long enough for the other thread to run in it
vg, twin = VectorGame({name!r}, n=n, seed=2), VectorGame({name!r}, n=n, seed=2)
acts = np.zeros(n, dtype=np.intp)
go, wrote, done = threading.Event(), threading.Event(), threading.Event()
def spoiler():
    while not done.is_set():
        if go.wait(0.01):
            go.clear()
            time.sleep(0.0003)    # the check is done by now: the rules are reading the actions
            acts[:] = -1
            wrote.set()
t = threading.Thread(target=spoiler)
t.start()
rng = np.random.default_rng(0)
applied = refused = 0
for _ in range(10):
    mask = np.array(twin.legal_mask())
    legal = np.argmax(mask * rng.random(mask.shape), axis=1)     # a random legal action per game
    acts[:] = legal
    go.set()
    try:
        vg.step(acts)
    except ValueError as e:       # the -1s came before the copy: refused, nothing changed
        assert "action -1 (out of range" in str(e), e
        refused += 1
    else:
        twin.step(legal)
        applied += 1
    wrote.wait()
    wrote.clear()
done.set()
t.join()
assert applied >= 5, (applied, refused)
assert all(vg.get_state(i).serialize() == twin.get_state(i).serialize() for i in range(0, n, 257))
np.testing.assert_array_equal(vg.legal_mask(), twin.legal_mask())
np.testing.assert_array_equal(vg.scores(), twin.scores())
print("ok", applied, refused)
""",
        timeout=60,
    )
    assert out.startswith("ok")


def test_vector_arrays_are_views_overwritten_by_the_next_call():
    """The returned arrays are views of the VectorGame's buffers: after a step they show the
    new values (copy them to keep them)."""
    vg = VectorGame("puerto_rico", n=8, players=4, seed=0)
    mask, players = vg.legal_mask(), vg.current_players()
    kept = mask.copy(), players.copy()
    for _ in range(3):
        vg.step(np.argmax(vg.legal_mask(), axis=1))
    assert not np.array_equal(kept[0], mask)
    np.testing.assert_array_equal(mask, vg.legal_mask())
    np.testing.assert_array_equal(players, [vg.get_state(i).current_player() for i in range(8)])


def test_compiled_random_playouts_reports_a_bad_seed():
    """The compiled random_playouts (under caribsim.random_playouts) names a seed out of
    0..2**64-1 (was OverflowError 'can't convert negative value to uint64_t')."""
    from caribsim._game import random_playouts

    state = caribsim.load_game("port_royal").new_initial_state(seed=0)
    for seed in (-1, 2**64):
        with pytest.raises(ValueError, match=rf"seed must be in 0\.\.{2**64 - 1}, got {seed}"):
            random_playouts(state, 1, seed, 1)
    with pytest.raises(TypeError, match="seed must be an int, got float"):
        random_playouts(state, 1, 1.0, 1)
