"""Hardening of the search and the bots: bad arguments of the internal classes, budgets
that ran nothing or ran forever, tree reuse of an edited position, concurrent use from
threads and interrupted threaded searches. Whatever could crash or hang runs in a
subprocess with a timeout."""

import os
import random
import subprocess
import sys
import textwrap

import pytest

import caribsim
from caribsim import arena, bots, mcts

GAMES = ("puerto_rico", "port_royal", "cuba")
SRC = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src"
)

PRELUDE = """
import threading, time, sys
import caribsim
from caribsim import arena, bots, mcts
from caribsim._mcts import Forest

def decision(game, seed=1, players=3):
    s = caribsim.load_game(game, players=players).new_initial_state(seed=seed)
    while s.is_chance_node():
        s.resolve_chance()
    return s

def start_busy(target, args, busy):      # a thread running target(*args), once busy() says so
    t = threading.Thread(target=target, args=args)
    t.start()
    while not busy():
        assert t.is_alive()
        time.sleep(0.001)
    return t
"""


def run_code(code, timeout=60):
    """Run `code` (after PRELUDE) in a fresh interpreter; its stdout, or a failure that
    shows how it ended (a crash, a hang or a traceback)."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        p = subprocess.run(
            [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung for more than {timeout} s")
    assert p.returncode == 0, f"exit code {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


def decision(game, seed=1, players=3, steps=0):
    """A decision node of `game` after `steps` random decisions."""
    s = caribsim.load_game(game, players=players).new_initial_state(seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        while s.is_chance_node():
            s.resolve_chance()
        s.apply_action(rng.choice(s.legal_actions()))
    while s.is_chance_node():
        s.resolve_chance()
    return s


# --- item 1: one Searcher / MCTSBot from two threads -------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_one_searcher_from_two_threads_refuses_the_second_call(game):
    out = run_code(
        f"""
        st = decision({game!r})
        legal = st.legal_actions()
        se = mcts.Searcher(iterations=400, seed=1, reuse=False)
        done = {{"ok": 0, "busy": 0}}
        def work():
            for _ in range(20):
                try:
                    assert se.search(st).action in legal
                    done["ok"] += 1
                except RuntimeError as e:
                    assert "this Searcher is in use by another thread" in str(e), e
                    done["busy"] += 1
        ts = [threading.Thread(target=work) for _ in range(2)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        assert done["ok"] >= 1 and done["ok"] + done["busy"] == 40, done
        # a call while a long search runs is refused for sure
        slow = mcts.Searcher(seconds=1.5, seed=1)
        t = start_busy(slow.search, (st,), slow._guard._lock.locked)
        refused = None
        while t.is_alive() and refused is None:
            try:
                slow.search(st)
            except RuntimeError as e:
                refused = str(e)
        t.join()
        assert refused is not None and "use one Searcher per thread" in refused, refused
        # the refused calls changed nothing: the searcher goes on as one never refused
        twin = mcts.Searcher(iterations=400, seed=1, reuse=False)
        for _ in range(done["ok"]):
            twin.search(st)
        a, b = se.search(st), twin.search(st)
        assert (a.visits, a.mean_reward) == (b.visits, b.mean_reward)
        print("ok", done["ok"], done["busy"])
    """,
        timeout=120,
    )
    assert out.startswith("ok")


def test_one_mcts_bot_from_two_threads_refuses_step_and_restart():
    out = run_code(
        """
        st = decision("puerto_rico")
        bot = bots.MCTSBot(seconds=1.5, seed=2)
        t = start_busy(bot.step, (st,), bot._guard._lock.locked)
        seen = set()
        calls = (("step", lambda: bot.step(st)), ("restart", lambda: bot.restart(5)),
                 ("__init__", lambda: bot.__init__(seed=6, iterations=5)))
        while t.is_alive() and len(seen) < 3:
            for name, call in calls:
                try:
                    call()
                except RuntimeError as e:
                    assert "this MCTSBot is in use by another thread" in str(e), e
                    seen.add(name)
        t.join()
        assert seen == {"step", "restart", "__init__"}, seen
        assert bot.seed == 2 and bot.options == {"seconds": 1.5}
        assert bot.last_result.action in st.legal_actions()
        print("ok")
    """,
        timeout=60,
    )
    assert out == "ok\n"


def test_one_forest_from_two_threads_refuses_the_second_call():
    out = run_code("""
        st = decision("cuba")
        f = Forest(st, 2, 1.4, "win", "random", 0, 1)
        t = start_busy(f.search, (st, 0, 1.5, False), lambda: f.busy)
        refused = None
        while t.is_alive() and refused is None:
            try:
                f.search(st, 10, 0.0, False)
            except RuntimeError as e:
                refused = str(e)
        t.join()
        print(refused)
        print(f.search(st, 10, 0.0, False)[0] in st.legal_actions())
    """)
    assert out == "this search is in use by another thread; use one searcher per thread\nTrue\n"


def test_copies_of_a_searcher_are_fresh_and_independent():
    """copy, deepcopy and pickle give a fresh searcher with the same options, sharing
    neither the tree nor the guard: copies may search on two threads at once."""
    out = run_code("""
        import copy, pickle
        st = decision("cuba")
        se = mcts.Searcher(iterations=800, c=0.9, seed=7, reuse=True)
        se.search(st)
        copies = [copy.copy(se), copy.deepcopy(se), pickle.loads(pickle.dumps(se))]
        results = [None] * 3
        def work(i):
            results[i] = copies[i].search(st)
        ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        alone = mcts.Searcher(iterations=800, c=0.9, seed=7).search(st)
        for r in results:
            assert (r.visits, r.mean_reward) == (alone.visits, alone.mean_reward)
        print(repr(copies[2]))
    """)
    assert out == (
        "Searcher(iterations=800, seconds=None, c=0.9, reward='win', rollout='random', "
        "max_depth=None, threads=1, seed=7, reuse=True)\n"
    )


def test_two_searchers_may_search_one_state_at_once():
    out = run_code(
        """
        st = decision("port_royal")
        before = st.to_dict()
        results = [None, None]
        def work(i):
            results[i] = mcts.search(st, iterations=1500, threads=2, seed=i)
        ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        for i in range(2):
            alone = mcts.search(st, iterations=1500, threads=2, seed=i)
            assert (results[i].visits, results[i].mean_reward) == (alone.visits, alone.mean_reward)
        assert st.to_dict() == before
        print("ok")
    """,
        timeout=120,
    )
    assert out == "ok\n"


def test_interrupted_threaded_search_leaves_no_tree_running():
    """Ctrl-C in the caller of a threaded search, also while it starts its threads: the
    trees stop, no worker goes on searching (no Python thread, no C search thread), and the
    same searcher searches again."""
    out = run_code(
        """
        import random, signal
        from caribsim.search._mcts import running_workers
        st = decision("puerto_rico")
        se = mcts.Searcher(seconds=20.0, threads=3, seed=0)
        main = threading.main_thread().ident
        rng = random.Random(0)
        def workers():
            return [t for t in threading.enumerate() if t.is_alive()
                    and t is not threading.main_thread() and not isinstance(t, threading.Timer)]
        for delay in [0.5, 0.5] + [rng.random() * 0.01 for _ in range(100)]:
            t0 = time.perf_counter()
            try:
                threading.Timer(delay, signal.pthread_kill, (main, signal.SIGINT)).start()
                se.search(st)
                raise SystemExit("not interrupted")
            except KeyboardInterrupt:
                pass
            assert time.perf_counter() - t0 < 10, "the trees ran on"
            end = time.perf_counter() + 2.0      # a thread started after the interrupt ends at once
            while workers() and time.perf_counter() < end:
                time.sleep(0.001)
            assert workers() == [], workers()
            assert running_workers() == 0, running_workers()
        r = mcts.Searcher(iterations=50, threads=2, seed=0).search(st)
        assert r.iterations == 50
        print("ok")
    """,
        timeout=90,
    )
    assert out == "ok\n"


def test_interrupted_single_thread_search_stops_within_its_slice():
    """A one-thread search looks at its signals between slices of iterations: Ctrl-C ends a
    20-second search at once, and the searcher searches again."""
    out = run_code(
        """
        import signal
        from caribsim.search._mcts import running_workers
        st = decision("puerto_rico")
        se = mcts.Searcher(seconds=20.0, threads=1, seed=0)
        main = threading.main_thread().ident
        for delay in (0.3, 0.05, 0.0):
            t0 = time.perf_counter()
            try:
                threading.Timer(delay, signal.pthread_kill, (main, signal.SIGINT)).start()
                se.search(st)
                raise SystemExit("not interrupted")
            except KeyboardInterrupt:
                pass
            assert time.perf_counter() - t0 < delay + 2.0, time.perf_counter() - t0
        assert running_workers() == 0
        assert mcts.Searcher(iterations=40, threads=1, seed=0).search(st).iterations == 40
        print("ok")
    """,
        timeout=90,
    )
    assert out == "ok\n"


def test_search_threads_are_joined_before_the_search_returns():
    """Threads of a search exist only while it runs; many short searches leave none behind."""
    out = run_code(
        """
        from caribsim.search._mcts import running_workers
        st = decision("cuba")
        for i in range(30):
            r = mcts.search(st, iterations=8, threads=4, seed=i)
            assert r.iterations == 8
            assert running_workers() == 0
        print("ok")
    """,
        timeout=90,
    )
    assert out == "ok\n"


# --- item 5: the internal classes validate, or cannot be reached ---------------------------


def test_forest_refuses_bad_arguments_and_uninitialised_objects():
    out = run_code("""
        from caribsim._game import GameState
        s = decision("puerto_rico")
        blank = GameState.__new__(GameState)
        nan, inf = float("nan"), float("inf")
        cases = [
            lambda: Forest(s, 1, nan, "win", "random", 0, 0),
            lambda: Forest(s, 1, inf, "win", "random", 0, 0),
            lambda: Forest(s, 1, -1.0, "win", "random", 0, 0),
            lambda: Forest(s, 0, 1.0, "win", "random", 0, 0),
            lambda: Forest(s, -3, 1.0, "win", "random", 0, 0),
            lambda: Forest(s, 65, 1.0, "win", "random", 0, 0),
            lambda: Forest(s, 1, 1.0, "vp", "random", 0, 0),
            lambda: Forest(s, 1, 1.0, "win", "smart", 0, 0),
            lambda: Forest(s, 1, 1.0, "win", "random", -1, 0),
            lambda: Forest(blank, 1, 1.0, "win", "random", 0, 0),
            lambda: Forest(None, 1, 1.0, "win", "random", 0, 0),
            lambda: Forest.__new__(Forest),
            lambda: Forest(s, 1, 1.0, "win", "random", 0, 0).search(s, 0, 0.0, False),
            lambda: Forest(s, 1, 1.0, "win", "random", 0, 0).search(s, -1, 0.0, False),
            lambda: Forest(s, 1, 1.0, "win", "random", 0, 0).search(s, 10, nan, False),
            lambda: Forest(s, 1, 1.0, "win", "random", 0, 0).search(s, 10, inf, False),
            lambda: Forest(s, 1, 1.0, "win", "random", 0, 0).search(s, 10, -1.0, False),
            lambda: Forest(s, 1, 1.0, "win", "random", 0, 0).search(blank, 10, 0.0, False),
            lambda: Forest(s, 1, 1.0, "win", "random", 0, 0).search(
                caribsim.load_game("puerto_rico", players=3).new_initial_state(), 10, 0.0, False),
            lambda: mcts.search(blank, iterations=10),
            lambda: mcts.Searcher(iterations=10).search(blank),
            lambda: bots.MCTSBot(iterations=10).step(blank),
        ]
        for case in cases:
            try:
                case()
                print("no error")
            except (TypeError, ValueError) as e:
                print(type(e).__name__, e)
        print("alive", hasattr(Forest, "_run"))
    """)
    lines = out.splitlines()
    assert lines[-1] == "alive False"  # no public entry point to a tree by index
    errors = lines[:-1]
    assert len(errors) == 22 and not any(e == "no error" for e in errors), out
    for i, key in enumerate(
        [
            "c must be a finite number >= 0, got nan",
            "got inf",
            "got -1.0",
            "threads must be in 1..64, got 0",
            "got -3",
            "got 65",
            "reward must be one of",
            "rollout must be one of",
            "max_depth must be >= 0",
        ]
    ):
        assert errors[i].startswith("ValueError") and key in errors[i], (i, errors[i])
    for i in (9, 17, 19, 20, 21):
        assert errors[i].startswith("TypeError") and "uninitialised GameState" in errors[i], errors[
            i
        ]
    assert errors[11].startswith("TypeError")  # Forest.__new__ needs its arguments
    assert "give a budget" in errors[12] and "iterations must be >= 0" in errors[13]
    assert all("seconds must be a finite number >= 0" in e for e in errors[14:17])
    assert "decision node, not a chance node" in errors[18]


def test_nan_values_in_uct_pick_a_child_instead_of_reading_outside_the_pool():
    """Forest(c=nan) used to select no child and read nodes[-1]; it is refused now, and a
    search of a valid forest always returns a legal action."""
    out = run_code("""
        s = decision("puerto_rico")
        try:
            Forest(s, 1, float("nan"), "win", "random", 0, 0).search(s, 200, 0.0, False)
        except ValueError as e:
            print(e)
        print(Forest(s, 1, 0.0, "win", "random", 0, 0).search(s, 200, 0.0, False)[0] in s.legal_actions())
    """)
    assert out == "c must be a finite number >= 0, got nan\nTrue\n"


def test_searcher_options_are_read_only_and_checked_once():
    """Setting a Searcher's option used to be silently possible (iterations=0 then meant
    'no limit' and hung); the options are read-only now."""
    out = run_code("""
        s = decision("puerto_rico")
        se = mcts.Searcher(iterations=20, seed=0)
        for name, value in [("iterations", 0), ("c", float("nan")), ("threads", 0)]:
            try:
                setattr(se, name, value)
                print("set", name)
            except AttributeError:
                print("read-only", name)
        r = se.search(s)
        print(se.iterations, se.c, se.threads, r.iterations)
    """)
    assert out.splitlines() == [
        "read-only iterations",
        "read-only c",
        "read-only threads",
        "20 1.4 1 20",
    ]


def test_uninitialised_or_reinitialised_searcher_and_bot():
    st = decision("puerto_rico")
    with pytest.raises(RuntimeError, match=r"Searcher\.__init__ was not called"):
        mcts.Searcher.__new__(mcts.Searcher).search(st)

    class Sub(mcts.Searcher):
        def __new__(cls, *args, **kwargs):
            return object.__new__(cls)

        def __init__(self):  # never sets the searcher up
            pass

    with pytest.raises(RuntimeError, match="not initialised"):
        Sub().search(st)
    with pytest.raises(RuntimeError, match=r"MCTSBot\.__init__ was not called"):
        bots.MCTSBot.__new__(bots.MCTSBot).step(st)
    se = mcts.Searcher(iterations=30, seed=4)
    with pytest.raises(ValueError, match="c must be"):
        se.__init__(iterations=50, c=-1)  # a failing second __init__ changes nothing
    assert (se.iterations, se.c, se.seed) == (30, 1.4, 4)
    assert se.search(st).iterations == 30
    bot = bots.MCTSBot(iterations=30, seed=4)
    with pytest.raises(ValueError, match="seed"):
        bot.restart(-1)
    assert bot.seed == 4 and bot.searcher.seed == 4


# --- items 6 and 15: budgets that ran forever or ran nothing -------------------------------


def test_more_threads_than_iterations_runs_exactly_the_iterations():
    out = run_code(
        """
        s = decision("puerto_rico")
        for it, th, sec in [(1, 2, None), (10, 64, None), (3, 8, 30.0)]:
            t0 = time.perf_counter()
            r = mcts.search(s, iterations=it, threads=th, seconds=sec, seed=0)
            print(r.iterations, sum(r.visits.values()), r.action in s.legal_actions(),
                  time.perf_counter() - t0 < 10)
    """,
        timeout=60,
    )
    assert out.splitlines() == ["1 1 True True", "10 10 True True", "3 3 True True"]


def test_arena_cli_with_more_threads_than_iterations_ends():
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "caribsim",
                "arena",
                "puerto_rico",
                "--bots",
                "mcts:1:threads=2,random",
                "--games",
                "1",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the arena hung")
    assert p.returncode == 0, p.stderr
    assert "mcts" in p.stdout and "random" in p.stdout


@pytest.mark.parametrize("game", GAMES)
def test_tiny_time_budget_still_runs_an_iteration(game):
    st = decision(game)
    r = mcts.search(st, seconds=1e-9, seed=0)
    assert r.action in st.legal_actions()
    assert r.iterations >= 1 and sum(r.visits.values()) == r.iterations
    r = mcts.search(st, seconds=1e-9, threads=3, seed=0)
    assert r.action in st.legal_actions() and r.iterations >= 3  # every tree ran


def test_mcts_bot_with_a_tiny_time_budget_plays_an_arena_game():
    result = arena.play_match(
        "puerto_rico", [bots.MCTSBot(seconds=1e-9), bots.RandomBot()], n_games=1, seed=3, players=2
    )
    assert result.n_games == 1 and result.mean_length > 50
    assert result.bots[0].games == 1


# --- item 16: tree reuse only for the very position --------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_reuse_refuses_a_position_whose_history_extends_the_root_but_differs(game):
    """A dict edit keeps the history: the position of another game under the real game's
    history. The search starts afresh (no reused visits) and returns a legal action."""
    g = caribsim.load_game(game, players=3)
    for seed in range(8):
        st = decision(game, seed=seed, steps=20)
        se = mcts.Searcher(iterations=100, seed=seed)
        se.search(st)
        rng = random.Random(seed)
        for _ in range(seed % 3):  # the same history, or one extended by 1-2 actions
            st.apply_action(rng.choice(st.legal_actions()))
            while st.is_chance_node():
                st.resolve_chance()
        d = decision(game, seed=seed + 1000, steps=20 + seed % 2).to_dict()
        d["history"] = st.history()
        other = g.state_from_dict(d)
        assert other.history() == st.history() and other.to_dict() != st.to_dict()
        r = se.search(other)
        assert r.action in other.legal_actions()
        assert sum(r.visits.values()) == 100 == r.iterations, seed


@pytest.mark.parametrize("game", GAMES)
def test_reuse_keeps_the_subtree_of_the_real_continuation(game):
    """The real continuation, chance outcomes included, passes the position check."""
    st = decision(game, seed=2, steps=10)
    se = mcts.Searcher(iterations=300, seed=0)
    st.apply_action(se.search(st).action)
    kept = 0
    for _ in range(12):
        while st.is_chance_node():
            st.resolve_chance()
        if st.is_terminal():
            break
        r = se.search(st)
        kept += sum(r.visits.values()) > 300
        st.apply_action(r.action)
    assert kept >= 6


def test_reuse_after_a_round_trip_through_the_dict():
    """The same position rebuilt from its dict (its own RNG words aside) is reused."""
    st = decision("cuba", seed=5, steps=15)
    se = mcts.Searcher(iterations=200, seed=0)
    se.search(st)
    again = st.game.state_from_dict(st.to_dict())
    assert sum(se.search(again).visits.values()) > 200


def test_one_searcher_over_two_variants_of_a_game():
    """The expansion has its own C interface under the same state class: the searcher
    used to refuse it ("made for another game") after a search of the base game."""
    base = decision("puerto_rico")
    exp = caribsim.load_game("puerto_rico", players=3, expansion=True).new_initial_state(seed=1)
    while exp.is_chance_node():
        exp.resolve_chance()
    se = mcts.Searcher(iterations=50, seed=0)
    for st in (base, exp, base):
        r = se.search(st)
        assert r.action in st.legal_actions() and sum(r.visits.values()) == 50


# --- item 17: real bools, no repeated keys ----------------------------------------------


@pytest.mark.parametrize("value", ["no", 1, 0, None, "False"])
def test_reuse_must_be_a_real_bool(value):
    with pytest.raises(TypeError, match="reuse must be True or False"):
        bots.MCTSBot(iterations=10, reuse=value)
    with pytest.raises(TypeError, match="reuse must be True or False"):
        mcts.Searcher(iterations=10, reuse=value)


@pytest.mark.parametrize(
    "spec, key",
    [
        ("mcts:10:c=1:c=2", "c"),
        ("mcts:10:iterations=5", "iterations"),
        ("mcts:10:reuse=true:reuse=false", "reuse"),
    ],
)
def test_parse_bot_refuses_a_repeated_key(spec, key):
    with pytest.raises(ValueError, match=f"option '{key}' is given twice"):
        bots.parse_bot(spec)
