"""Monte Carlo tree search for every caribsim game.

    >>> import caribsim
    >>> from caribsim import mcts
    >>> state = caribsim.load_game("puerto_rico", players=3).new_initial_state(seed=1)
    >>> while state.is_chance_node():
    ...     _ = state.resolve_chance()
    >>> result = mcts.search(state, iterations=2000, seed=0)
    >>> result.action in state.legal_actions()
    True

The search runs in C without the GIL over the game interface (``pyx/caribsim/_game.pxd``);
see ``docs/search.md``.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

from caribsim._common import _int_in
from caribsim.search._mcts import MAX_THREADS, REWARD_MODES, ROLLOUT_MODES, Forest, check_game_state


@dataclass(frozen=True)
class SearchResult:
    """What a search found at the root.

    action:      the most visited action (ties: higher mean reward, then lower id)
    visits:      {action: visits} over the root's children (all threads merged)
    mean_reward: {action: mean reward of the player to move}
    iterations:  iterations run (all threads)
    nodes:       nodes in the tree(s) after the search
    seconds:     wall time of the search
    """

    action: int
    visits: dict = field(repr=False)
    mean_reward: dict = field(repr=False)
    iterations: int
    nodes: int
    seconds: float

    def policy(self) -> dict:
        """Visit shares per action (sums to 1)."""
        total = sum(self.visits.values())
        return {a: v / total for a, v in self.visits.items()}


def _check_options(iterations, seconds, c, reward, rollout, max_depth, threads, seed):
    if iterations is None and seconds is None:
        raise ValueError("give a budget: iterations=N and/or seconds=S")
    iterations = 0 if iterations is None else _int_in(iterations, "iterations", 1, 2**40)
    if seconds is None:
        seconds = 0.0
    else:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError(f"seconds must be a number, got {type(seconds).__name__}")
        if not (math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"seconds must be a finite number > 0, got {seconds}")
    if isinstance(c, bool) or not isinstance(c, (int, float)):
        raise TypeError(f"c must be a number, got {type(c).__name__}")
    if not (math.isfinite(c) and c >= 0):
        raise ValueError(f"c must be a finite number >= 0, got {c}")
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {sorted(REWARD_MODES)}, got {reward!r}")
    if rollout not in ROLLOUT_MODES:
        raise ValueError(f"rollout must be one of {sorted(ROLLOUT_MODES)}, got {rollout!r}")
    max_depth = 0 if max_depth is None else _int_in(max_depth, "max_depth", 1, 2**31 - 1)
    threads = _int_in(threads, "threads", 1, MAX_THREADS)
    seed = _int_in(seed, "seed", 0, 2**64 - 1)
    return iterations, float(seconds), float(c), reward, rollout, max_depth, threads, seed


def _check_state(state):
    check_game_state(state)
    if state.is_terminal():
        raise ValueError("cannot search a terminal state: no action is legal")
    if state.is_chance_node():
        raise ValueError(
            "cannot search a chance node: resolve the chance event first "
            "(state.resolve_chance() or apply an outcome)"
        )
    if not state.legal_actions():
        raise ValueError("cannot search a decision node without a legal action")


class _Exclusive:
    """Refuses a second concurrent use of an object with a clear RuntimeError (as
    VectorGame does) instead of letting two threads share its C data."""

    def __init__(self, what, message=None):
        self._lock = threading.Lock()
        self._message = (
            message or f"this {what} is in use by another thread; use one {what} per thread"
        )

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            raise RuntimeError(self._message)

    def __exit__(self, *exc):
        self._lock.release()


def _guard_of(obj, what):
    """The object's guard (made by its __init__), or a clear error if __init__ never ran."""
    guard = obj.__dict__.get("_guard")
    if guard is None:
        raise RuntimeError(f"this {what} was not initialised ({what}.__init__ was not called)")
    return guard


def _bool(value, what):
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be True or False, got {type(value).__name__} {value!r}")
    return value


_OPTIONS = (
    "iterations",
    "seconds",
    "c",
    "reward",
    "rollout",
    "max_depth",
    "threads",
    "seed",
    "reuse",
)


class Searcher:
    """A search that keeps its tree(s) between consecutive moves of one game.

    Give it the positions of one game in order (as a bot sees them): when the new
    position's history extends the last root's and the actions in between lead from
    that root to this very position, the matching subtree is kept (tree reuse);
    otherwise the search starts afresh. The options are read-only attributes. One
    search at a time: a call while another thread searches raises RuntimeError.
    """

    # the options: read-only properties, one per _OPTIONS name (made below the class)
    iterations: int
    seconds: float
    c: float
    reward: str
    rollout: str
    max_depth: int
    threads: int
    seed: int
    reuse: bool

    def __init__(
        self,
        iterations=None,
        seconds=None,
        c=1.4,
        reward="win",
        rollout="random",
        max_depth=None,
        threads=1,
        seed=0,
        reuse=True,
    ):
        options = (
            *_check_options(iterations, seconds, c, reward, rollout, max_depth, threads, seed),
            _bool(reuse, "reuse"),
        )
        guard = self.__dict__.get("_guard") or _Exclusive("Searcher")
        with guard:  # a second __init__ waits for no search: it is refused
            self._guard = guard
            self._options = options
            self._forest = None

    def search(self, state) -> SearchResult:
        with _guard_of(self, "Searcher"):
            _check_state(state)
            iterations, seconds, c, reward, rollout, max_depth, threads, seed, reuse = self._options
            if self._forest is None or not self._forest.accepts(state):
                self._forest = Forest(state, threads, c, reward, rollout, max_depth, seed)
            action, stats, iterations, nodes, seconds = self._forest.search(
                state, iterations, seconds, reuse
            )
        if action is None:  # cannot happen after one iteration at a decision node
            raise RuntimeError("the search found no action at the root")
        return SearchResult(
            action,
            {a: v for a, (v, _) in stats.items()},
            {a: m for a, (_, m) in stats.items()},
            iterations,
            nodes,
            seconds,
        )

    def _kwargs(self):
        """The options as Searcher() takes them (an unset budget or cut-off as None)."""
        _guard_of(self, "Searcher")
        kwargs = dict(zip(_OPTIONS, self._options))
        for unset in ("iterations", "seconds", "max_depth"):
            kwargs[unset] = kwargs[unset] or None
        return kwargs

    def __reduce__(self):
        # a copy (pickle, copy, deepcopy) is a fresh searcher with the same options: it
        # shares neither the tree nor the guard, so the two may be used on two threads
        return (_make_searcher, (self._kwargs(),))

    def __repr__(self):
        if "_guard" not in self.__dict__:
            return "Searcher(<not initialised>)"
        return "Searcher(" + ", ".join(f"{k}={v!r}" for k, v in self._kwargs().items()) + ")"


def _make_searcher(kwargs):
    return Searcher(**kwargs)


def _option_property(i: int, name: str) -> property:
    return property(lambda self: self._options[i], doc=f"the {name} option (read-only)")


for _i, _name in enumerate(_OPTIONS):
    setattr(Searcher, _name, _option_property(_i, _name))
del _i, _name


def search(
    state,
    iterations=None,
    seconds=None,
    c=1.4,
    reward="win",
    rollout="random",
    max_depth=None,
    threads=1,
    seed=0,
) -> SearchResult:
    """Search ``state`` (a decision node) and return the chosen action with root statistics.

    iterations / seconds: the budget (either or both; the first reached stops the search;
               at least one iteration runs).
    c:         UCT exploration constant.
    reward:    "win" (the game's returns), "rank" (share of players beaten) or "score"
               (0.5 + VP margin over the best other player / (2 x best score), clipped to [0, 1]).
    rollout:   "random" or "heuristic" (the game's cheap built-in policy, see docs/search.md).
    max_depth: cut rollouts after this many decisions and use the game's static evaluation.
    threads:   root parallelism: independent trees on that many threads (at most one per
               iteration), merged at the root.
    seed:      with an iteration budget the search is deterministic for a seed (for any
               number of threads).
    """
    return Searcher(
        iterations, seconds, c, reward, rollout, max_depth, threads, seed, reuse=False
    ).search(state)
