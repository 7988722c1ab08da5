"""Fuzzing of the search parameters and of thread use (hypothesis, derandomized).

Random values for every option of mcts.search / Searcher / MCTSBot / the engine's Forest,
valid and invalid (nan, inf, negatives, huge, wrong types), on positions of every game:
each call either returns a legal action or raises a clear error, and leaves the state
unchanged. Threads share searchers and bots as docs/search.md ("Threads") says. Every
fuzz run is a subprocess with a timeout, so a crash or a hang fails the test; the last
example tried is printed before it runs, so a failure names it."""

import os
import subprocess
import sys
import textwrap

import pytest

SRC = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src"
)

COMMON = r'''
import math, random, sys, threading
import numpy as np
import caribsim
from caribsim import bots, mcts
from caribsim._mcts import Forest
from hypothesis import given, settings, strategies as st

GAME = sys.argv[1]
EXAMPLES = int(sys.argv[2])
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)


def positions(players, seed):
    """Positions of one game in order: every node (chance and terminal ones too)."""
    s = caribsim.load_game(GAME, players=players).new_initial_state(seed=seed)
    rng = random.Random(seed)
    out = [s.clone()]
    while not s.is_terminal() and len(out) < 400:
        if s.is_chance_node():
            s.resolve_chance()
        else:
            s.apply_action(rng.choice(s.legal_actions()))
        out.append(s.clone())
    return out


GAMES = {p: positions(p, p) for p in (2, 3, 4)}

def show(*what):
    print(*what, flush=True)

# per option: valid values and invalid ones (out of range, nan, inf, huge, wrong types)
WRONG_TYPES = st.sampled_from([True, False, "3", [1], b"1", {}, object()])
BAD_INTS = st.one_of(st.sampled_from([-1, -2**63, 2**64, 2**200, 1.0, float("nan"), 2.5]), WRONG_TYPES)
def some_int(lo, hi):
    return st.one_of(st.integers(lo, hi), st.integers(lo, hi).map(np.int64))
REAL_EDGES = [float("nan"), float("inf"), -float("inf"), -1.0, -0.0, -1e-300]
VALID = {
    "iterations": st.one_of(some_int(1, 60), st.none()),
    "seconds": st.one_of(st.none(), st.floats(1e-12, 0.01), st.sampled_from([5e-324, 1, 1e300])),
    "c": st.one_of(st.floats(0, 1e6), st.sampled_from([0, 2, -0.0, 1e308])),
    "reward": st.sampled_from(["win", "rank", "score"]),
    "rollout": st.sampled_from(["random", "heuristic"]),
    "max_depth": st.one_of(st.none(), some_int(1, 50), st.just(2**31 - 1)),
    "threads": some_int(1, 8),
    "seed": st.one_of(some_int(0, 2**63 - 1), st.just(2**64 - 1)),
}
INVALID = {
    "iterations": st.one_of(st.sampled_from([0, 2**40 + 1]), BAD_INTS),
    "seconds": st.one_of(st.sampled_from(REAL_EDGES + [0, 0.0, "1.0", np.float32(1.0)]), WRONG_TYPES),
    "c": st.one_of(st.sampled_from(REAL_EDGES[:5] + [-5, None, "1.4", np.float32(1.0)]),
                   st.floats(max_value=-1e-300)),
    "reward": st.sampled_from(["WIN", "", "vp", None, 0, b"win", ["win"]]),
    "rollout": st.sampled_from(["Random", "smart", None, 1]),
    "max_depth": st.one_of(st.sampled_from([0, 2**31]), BAD_INTS),
    "threads": st.one_of(st.sampled_from([0, 65, 10**6]), BAD_INTS),
    "seed": st.one_of(st.sampled_from([2**64, -1]), WRONG_TYPES, st.just(1.0)),
}
# None for c, reward... is invalid; for iterations/seconds/max_depth it is a valid "unset"
BAD = st.one_of(st.just(frozenset()), st.sets(st.sampled_from(sorted(VALID)), min_size=1, max_size=2))
OPTIONS = BAD.flatmap(
    lambda bad: st.fixed_dictionaries({k: st.tuples(INVALID[k] if k in bad else VALID[k],
                                                    st.just(k not in bad)) for k in VALID}))

def split(drawn):
    """kwargs and whether all are valid (a budget is needed too). A time budget over
    0.01 s is only kept beside an iteration budget, which is then reached first."""
    kwargs = {k: v for k, (v, _) in drawn.items()}
    valid = all(ok for _, ok in drawn.values())
    if kwargs["iterations"] is None and kwargs["seconds"] is None:
        valid = False
    if drawn["seconds"][1] and drawn["iterations"][0] is None and kwargs["seconds"] is not None \
            and kwargs["seconds"] > 0.01:
        kwargs["seconds"] = 0.01
    return kwargs, valid

def check_result(r, state, kwargs, fresh=True):
    """A legal action with sound root statistics; for a fresh tree, as many root visits
    as iterations, and exactly the iteration budget when it is the only one."""
    legal = state.legal_actions()
    assert r.action in legal, (r.action, legal)
    assert set(r.visits) <= set(legal)
    assert r.iterations >= 1 and sum(r.visits.values()) >= r.iterations
    if fresh:
        assert r.iterations == sum(r.visits.values())
        if kwargs["iterations"] is not None:
            assert r.iterations <= int(kwargs["iterations"])
            if kwargs["seconds"] is None:
                assert r.iterations == int(kwargs["iterations"])
    assert all(-1e-9 <= m <= 1.0 + 1e-9 for m in r.mean_reward.values())
'''

PARAMETERS = r"""
@SETTINGS
@given(drawn=OPTIONS, players=st.sampled_from([2, 3, 4]), at=st.integers(0, 10**6))
def search_parameters(drawn, players, at):
    kwargs, valid = split(drawn)
    line = GAMES[players]
    state = line[at % len(line)]
    decision = not (state.is_terminal() or state.is_chance_node())
    before = state.to_dict()
    show(players, at % len(line), kwargs)
    try:
        r = mcts.search(state, **kwargs)
    except (ValueError, TypeError) as e:
        assert str(e), "an error without a message"
        assert not (valid and decision), f"refused valid options: {e!r}"
    else:
        assert valid and decision, "accepted bad options or a non-decision node"
        check_result(r, state, kwargs)
        SEARCHED.append(1)
    assert state.to_dict() == before

SEARCHED = []
search_parameters()
print("searched", len(SEARCHED))
assert len(SEARCHED) >= EXAMPLES // 6, "too few valid examples to fuzz the search itself"
print("ok")
"""

SEQUENCES = r'''
@SETTINGS
@given(drawn=OPTIONS, reuse=st.sampled_from([(True, True), (False, True), ("yes", False), (1, False)]),
       players=st.sampled_from([2, 3, 4]), walk=st.lists(st.integers(0, 12), min_size=1, max_size=6),
       restart=st.booleans())
def searcher_and_bot_over_one_game(drawn, reuse, players, walk, restart):
    """A Searcher and an MCTSBot along one game (tree reuse), with jumps back and across."""
    kwargs, valid = split(drawn)
    kwargs["reuse"], ok = reuse
    valid = valid and ok
    show(players, walk, kwargs)
    try:
        searcher = mcts.Searcher(**kwargs)
        bot = bots.MCTSBot(**{k: v for k, v in kwargs.items() if k != "seed"})
    except (ValueError, TypeError) as e:
        assert str(e) and not valid, f"refused valid options: {e!r}"
        return
    assert valid, "accepted bad options"
    line = GAMES[players]
    i = 0
    for step in walk:
        i = (i + step * 7) % len(line)          # mostly forwards, sometimes back (wrapping)
        state = line[i]
        if state.is_terminal() or state.is_chance_node():
            for call in (searcher.search, bot.step):
                try:
                    call(state)
                    raise AssertionError("searched a non-decision node")
                except ValueError as e:
                    assert "chance" in str(e) or "terminal" in str(e), e
            continue
        check_result(searcher.search(state), state, kwargs, fresh=not kwargs["reuse"])
        assert bot.step(state) in state.legal_actions()
        if restart:
            bot.restart(step)

searcher_and_bot_over_one_game()
print("ok")
'''

FOREST = r'''
BAD = [float("nan"), float("inf"), -1, -2**31, 2**31, 2**70, None, "1", True]

@SETTINGS
@given(args=st.tuples(st.sampled_from([1, 2, 64, 0, 65] + BAD),
                      st.sampled_from([0.0, 1.4, float("nan"), float("inf"), -0.5, None, "c"]),
                      st.sampled_from(["win", "rank", "score", "vp", None]),
                      st.sampled_from(["random", "heuristic", "x", None]),
                      st.sampled_from([0, 1, 5, -1, 2**40, None]),
                      st.sampled_from([0, 7, 2**64 - 1, -1, 2**64, None])),
       call=st.tuples(st.sampled_from([1, 30, 0, -1, 2**63, 2**64, None, 2.5]),
                      st.sampled_from([0.0, 0.001, float("nan"), float("inf"), -1.0, None]),
                      st.sampled_from([True, False, 0, 1])),
       at=st.integers(0, 10**6))
def forest(args, call, at):
    """The engine class itself: clear errors for what it cannot do, never a crash."""
    line = GAMES[3]
    state = line[at % len(line)]
    show(args, call, at % len(line))
    try:
        f = Forest(state, *args)
    except (ValueError, TypeError, OverflowError) as e:
        assert str(e)
        return
    threads, c, reward, rollout, max_depth, seed = args
    assert 1 <= threads <= 64 and c == c and 0 <= c < float("inf") and max_depth >= 0, args
    iterations, seconds, reuse = call
    try:
        action, stats, done, nodes, elapsed = f.search(state, iterations, seconds, reuse)
    except (ValueError, TypeError, OverflowError) as e:
        assert str(e)
        return
    assert not (state.is_terminal() or state.is_chance_node())
    assert iterations >= 0 and seconds == seconds and 0 <= seconds < float("inf")
    assert iterations > 0 or seconds > 0
    assert action in state.legal_actions() and done >= 1

forest()
print("ok")
'''

THREADS_CODE = r'''
@SETTINGS
@given(n=st.integers(2, 4), shared=st.booleans(), kind=st.sampled_from(["searcher", "bot"]),
       threads=st.sampled_from([1, 2]), calls=st.integers(1, 6), players=st.sampled_from([2, 3, 4]),
       at=st.integers(0, 10**6))
def concurrent_use(n, shared, kind, threads, calls, players, at):
    """n threads, each making `calls` searches or steps on one shared object or on its own:
    a shared object answers a call or refuses it with 'in use'; own objects never refuse."""
    line = [s for s in GAMES[players] if not (s.is_terminal() or s.is_chance_node())]
    state = line[at % len(line)]
    legal = state.legal_actions()
    make = (lambda: mcts.Searcher(iterations=150, threads=threads, seed=1)) if kind == "searcher" \
        else (lambda: bots.MCTSBot(iterations=150, threads=threads, seed=1))
    one = make()
    objects = [one] * n if shared else [make() for _ in range(n)]
    show(n, shared, kind, threads, calls, players, at % len(line))
    outcomes, problems = [], []
    def work(obj):
        for _ in range(calls):
            try:
                a = obj.search(state).action if kind == "searcher" else obj.step(state)
                outcomes.append(a in legal or ("illegal", a))
            except RuntimeError as e:
                outcomes.append("busy")
                if "in use by another thread" not in str(e):
                    problems.append(repr(e))
            except BaseException as e:
                problems.append(repr(e))
    ts = [threading.Thread(target=work, args=(o,)) for o in objects]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert not problems, problems
    assert len(outcomes) == n * calls
    assert all(o is True or o == "busy" for o in outcomes), outcomes
    assert outcomes.count(True) >= (1 if shared else n * calls), outcomes

concurrent_use()
print("ok")
'''


def fuzz(body, game, examples, timeout):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = COMMON + textwrap.dedent(body)
    try:
        p = subprocess.run(
            [sys.executable, "-c", code, game, str(examples)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        last = (e.stdout or b"").decode(errors="replace").strip().splitlines()[-1:]
        pytest.fail(f"hung for more than {timeout} s; last example: {last}")
    last = p.stdout.strip().splitlines()[-2:]
    assert p.returncode == 0 and last[-1:] == ["ok"], (
        f"exit code {p.returncode}; last example: {last}\n{p.stderr[-3000:]}"
    )


GAMES = ("puerto_rico", "port_royal", "cuba")


@pytest.mark.parametrize("game", GAMES)
def test_fuzz_search_parameters(game):
    fuzz(PARAMETERS, game, examples=200, timeout=60)


@pytest.mark.parametrize("game", GAMES)
def test_fuzz_searcher_and_bot_along_a_game(game):
    fuzz(SEQUENCES, game, examples=40, timeout=60)


def test_fuzz_engine_forest_arguments():
    fuzz(FOREST, "puerto_rico", examples=200, timeout=60)


@pytest.mark.parametrize("game", GAMES)
def test_fuzz_concurrent_use_of_searchers_and_bots(game):
    fuzz(THREADS_CODE, game, examples=15, timeout=60)
