"""Bots: objects with ``step(state) -> action`` for every caribsim game.

``restart(seed)`` starts a new game with a given seed (the arena calls it), so that
matches are reproducible whatever the number of processes.
"""
from __future__ import annotations

import random

from caribsim._common import _int_in
from caribsim.search._mcts import check_game_state
from caribsim.search.mcts import Searcher, _Exclusive, _guard_of


def _total(score) -> float:
    """A seat's score as a number: a game's scores() entry is a number or a dict with 'total'."""
    return float(score["total"]) if isinstance(score, dict) else float(score)


def _tiebreak(score) -> float:
    return float(score.get("tiebreak", 0)) if isinstance(score, dict) else 0.0


class Bot:
    """Base class: a bot picks a legal action for the player to move."""

    name = "bot"

    def __init__(self, seed: int = 0):
        self.restart(seed)

    def restart(self, seed: int = 0) -> None:
        """Forget the previous game; seed the bot's randomness."""
        self.seed = _int_in(seed, "seed", 0, 2**64 - 1)
        self.rng = random.Random(self.seed)

    def step(self, state) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _legal(self, state):
        check_game_state(state)
        if state.is_terminal() or state.is_chance_node():
            raise ValueError(f"{self.name}: no decision to take at a "
                             f"{'terminal' if state.is_terminal() else 'chance'} node")
        return state.legal_actions()

    def __repr__(self):
        return f"{type(self).__name__}()"


class RandomBot(Bot):
    """Uniformly random legal actions."""

    name = "random"

    def step(self, state) -> int:
        return self.rng.choice(self._legal(state))


class GreedyBot(Bot):
    """One ply: the action after which the mover's score margin is largest.

    Each legal action is applied to a clone (chance events after it sampled with the
    clone's own RNG); the value is the mover's total minus the best other total, with
    the game's tie-break (doubloons and goods in Puerto Rico) as a small bonus; ties
    are broken at random.
    """

    name = "greedy"

    def step(self, state) -> int:
        legal = self._legal(state)
        if len(legal) == 1:
            return legal[0]
        me = state.current_player()
        best, choices = None, []
        for a in legal:
            child = state.child(a)
            while child.is_chance_node():
                child.resolve_chance()
            scores = child.scores()
            mine = _total(scores[me])
            others = max(_total(s) for i, s in enumerate(scores) if i != me)
            value = (mine - others, _tiebreak(scores[me]))
            if best is None or value > best:
                best, choices = value, [a]
            elif value == best:
                choices.append(a)
        return self.rng.choice(choices)


class MCTSBot(Bot):
    """Monte Carlo tree search (caribsim.mcts) with tree reuse between its moves.

    Options are those of ``caribsim.mcts.search``: iterations, seconds, c, reward,
    rollout, max_depth, threads; ``reuse`` keeps the tree between consecutive moves.
    A decision with one legal action is played without searching. One call at a time:
    step() or restart() while another thread is in one raises RuntimeError.
    """

    name = "mcts"

    def __init__(self, seed: int = 0, **options):
        options = dict(options)
        Searcher(seed=seed, **options)               # validate the options now
        self._guard = self.__dict__.get("_guard") or _Exclusive("MCTSBot")
        with self._guard:
            self.options = options
            self._restart(seed)

    def restart(self, seed: int = 0) -> None:
        with _guard_of(self, "MCTSBot"):
            self._restart(seed)

    def _restart(self, seed):
        searcher = Searcher(seed=_int_in(seed, "seed", 0, 2**64 - 1), **self.options)
        super().restart(seed)
        self.searcher = searcher
        self.last_result = None

    def step(self, state) -> int:
        with _guard_of(self, "MCTSBot"):
            legal = self._legal(state)
            if len(legal) == 1:
                return legal[0]
            self.last_result = self.searcher.search(state)
            return self.last_result.action

    def __reduce__(self):
        return (_make_mcts_bot, (self.seed, self.options))

    def __repr__(self):
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"MCTSBot({opts})"


def _make_mcts_bot(seed, options):
    return MCTSBot(seed=seed, **options)


def parse_bot(spec: str) -> Bot:
    """A bot from a command-line spec: ``random``, ``greedy``, ``mcts:1000`` (iterations) or
    ``mcts:1000:rollout=heuristic:c=1.0`` (more options of caribsim.mcts.search)."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"bot spec must be a non-empty string, got {spec!r}")
    parts = spec.strip().split(":")
    kind = parts[0].lower()
    if kind == "random" and len(parts) == 1:
        return RandomBot()
    if kind == "greedy" and len(parts) == 1:
        return GreedyBot()
    if kind == "mcts":
        options = {}
        for i, part in enumerate(parts[1:]):
            if "=" not in part and i == 0:
                key, value = "iterations", part
            elif "=" in part:
                key, value = part.split("=", 1)
            else:
                raise ValueError(f"bot spec {spec!r}: expected key=value, got {part!r}")
            if key in options:
                raise ValueError(f"bot spec {spec!r}: option {key!r} is given twice")
            options[key] = _parse_value(key, value, spec)
        if "iterations" not in options and "seconds" not in options:
            options["iterations"] = 1000
        return MCTSBot(**options)
    raise ValueError(f"unknown bot spec {spec!r}; use random, greedy, mcts:ITERATIONS "
                     f"or mcts:ITERATIONS:key=value (keys: iterations, seconds, c, reward, rollout, "
                     f"max_depth, threads, reuse)")


_OPTION_TYPES = {"iterations": int, "seconds": float, "c": float, "reward": str, "rollout": str,
                 "max_depth": int, "threads": int, "reuse": bool}


def _parse_value(key, value, spec):
    if key not in _OPTION_TYPES:
        raise ValueError(f"bot spec {spec!r}: unknown option {key!r}; allowed: {sorted(_OPTION_TYPES)}")
    kind = _OPTION_TYPES[key]
    try:
        if kind is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return value.lower() in ("true", "1")
        return kind(value)
    except ValueError:
        raise ValueError(f"bot spec {spec!r}: {key} must be {kind.__name__}, got {value!r}") from None
