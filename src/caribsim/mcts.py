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
from dataclasses import dataclass, field

from caribsim._common import _int_in
from caribsim._game import GameState
from caribsim._mcts import REWARD_MODES, ROLLOUT_MODES, Forest

MAX_THREADS = 64


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
    if not isinstance(state, GameState):
        raise TypeError(f"state must be a caribsim game state, got {type(state).__name__}")
    if state.is_terminal():
        raise ValueError("cannot search a terminal state: no action is legal")
    if state.is_chance_node():
        raise ValueError("cannot search a chance node: resolve the chance event first "
                         "(state.resolve_chance() or apply an outcome)")


class Searcher:
    """A search that keeps its tree(s) between consecutive moves of one game.

    Give it the positions of one game in order (as a bot sees them): when the new
    position's history extends the last root's, the matching subtree is kept
    (tree reuse); otherwise the search starts afresh.
    """

    def __init__(self, iterations=None, seconds=None, c=1.4, reward="win", rollout="random",
                 max_depth=None, threads=1, seed=0, reuse=True):
        (self.iterations, self.seconds, self.c, self.reward, self.rollout, self.max_depth,
         self.threads, self.seed) = _check_options(iterations, seconds, c, reward, rollout,
                                                   max_depth, threads, seed)
        self.reuse = bool(reuse)
        self._forest = None
        self._vtable_owner = None

    def search(self, state) -> SearchResult:
        _check_state(state)
        if self._forest is None or type(state) is not self._vtable_owner:
            self._forest = Forest(state, self.threads, self.c, self.reward, self.rollout,
                                  self.max_depth, self.seed)
            self._vtable_owner = type(state)
        action, stats, iterations, nodes, seconds = self._forest.search(
            state, self.iterations, self.seconds, self.reuse)
        return SearchResult(action, {a: v for a, (v, _) in stats.items()},
                            {a: m for a, (_, m) in stats.items()}, iterations, nodes, seconds)


def search(state, iterations=None, seconds=None, c=1.4, reward="win", rollout="random",
           max_depth=None, threads=1, seed=0) -> SearchResult:
    """Search ``state`` (a decision node) and return the chosen action with root statistics.

    iterations / seconds: the budget (either or both; the first reached stops the search).
    c:         UCT exploration constant.
    reward:    "win" (the game's returns), "rank" (share of players beaten) or "score"
               (0.5 + VP margin over the best other player / (2 x best score), clipped to [0, 1]).
    rollout:   "random" or "heuristic" (the game's cheap built-in policy, see docs/search.md).
    max_depth: cut rollouts after this many decisions and use the game's static evaluation.
    threads:   root parallelism: independent trees on that many threads, merged at the root.
    seed:      the search is deterministic for a seed when threads == 1 and the budget is
               in iterations.
    """
    return Searcher(iterations, seconds, c, reward, rollout, max_depth, threads, seed,
                    reuse=False).search(state)
