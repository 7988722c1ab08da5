"""Bots: objects with ``step(state) -> action`` for every caribsim game.

``restart(seed)`` starts a new game with a given seed (the arena calls it), so that
matches are reproducible whatever the number of processes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
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
    """Base class: a bot picks a legal action for the player to move.

    ``name`` is the bot's one name everywhere (arena and tournament tables, JSON results,
    game records, plots): its ``parse_bot`` spec, e.g. ``random`` or ``mcts:300``.
    """

    name = "bot"

    def __init__(self, seed: int = 0):
        self.restart(seed)

    def restart(self, seed: int = 0) -> None:
        """Forget the previous game; seed the bot's randomness."""
        self.seed = _int_in(seed, "seed", 0, 2**64 - 1)
        self.rng = random.Random(self.seed)

    def step(self, state) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def check_game(self, game) -> None:
        """ValueError if this bot cannot play ``game`` (a bot with a network trained for
        another game says so before the first move); every game is fine by default."""

    def _legal(self, state):
        check_game_state(state)
        if state.is_terminal() or state.is_chance_node():
            raise ValueError(
                f"{self.name}: no decision to take at a "
                f"{'terminal' if state.is_terminal() else 'chance'} node"
            )
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

    def __init__(self, seed: int = 0, **options):
        options = dict(options)
        Searcher(seed=seed, **options)  # validate the options now
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

    @property
    def name(self) -> str:  # type: ignore[override]  # Bot.name is a class attribute; this bot's name follows its options
        """The normalised spec of the options (``mcts:300:rollout=heuristic``): iterations
        first, then the other options in the order of ``parse_bot``'s keys."""
        parts = ["mcts"]
        if "iterations" in self.options:
            parts.append(_spec_value(self.options["iterations"]))
        parts += [
            f"{k}={_spec_value(self.options[k])}"
            for k in _OPTION_TYPES
            if k != "iterations" and k in self.options
        ]
        return ":".join(parts)

    def __reduce__(self):
        return (_make_mcts_bot, (self.seed, self.options))

    def __repr__(self):
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"MCTSBot({opts})"


def _make_mcts_bot(seed, options):
    return MCTSBot(seed=seed, **options)


_GUIDED_OPTIONS = (
    "leaves_per_tree",
    "c_puct",
    "fpu_reduction",
    "dirichlet_alpha",
    "dirichlet_fraction",
    "temperature",
    "max_considered",
    "gumbel_scale",
    "c_visit",
    "c_scale",
    "interior",
    "mix",
    "mix_rollouts",
    "compiled",
)


class AlphaZeroBot(Bot):
    """A search guided by an evaluator (caribsim.search.guided): PUCT, or a Gumbel root.

    ``AlphaZeroBot(evaluator, simulations=200, gumbel=False, seed=0, **options)``:

    evaluator:   an evaluator ``evaluator(obs, mask) -> (logits, values)`` (an
                 ``evaluators.MLPEvaluator``, a ``TorchEvaluator``, ...), a
                 ``guided.RolloutEvaluator`` (evaluated in C), or the path of an
                 ``MLPEvaluator`` file (``.npz``, read with ``MLPEvaluator.load``).
    simulations: simulations per decision; ``gumbel``: the Gumbel root instead of PUCT.
    options:     the other options of ``guided.BatchSearch``: leaves_per_tree (default 1, as
                 ``guided.search``), c_puct, fpu_reduction, dirichlet_alpha,
                 dirichlet_fraction, temperature, max_considered, gumbel_scale, c_visit,
                 c_scale, interior, mix, mix_rollouts. They are checked now (TypeError /
                 ValueError).

    Each search draws its seed from the bot's RNG (``random.Random(seed)``, reset by
    ``restart``): ``search_seed = rng.getrandbits(64)``, one draw per search. A decision
    with one legal action is played without searching (no draw). ``last_result`` holds the
    last search's ``GuidedResult``; its ``policy`` is the training target (visit shares
    for PUCT, the improved policy for Gumbel). The trees are not kept between moves.
    A copy (copy, deepcopy, pickle: the processes and Ray backends) is a fresh bot with
    the same options and the same seed over a copy of the evaluator (the evaluator must
    pickle: the numpy MLP and the rollout evaluator do). One call at a time, as MCTSBot.
    """

    def __init__(
        self, evaluator, simulations: int = 200, *, gumbel: bool = False, seed: int = 0, **options
    ):
        from caribsim.search import guided

        model = None
        if isinstance(evaluator, (str, os.PathLike)):
            from caribsim.search.evaluators import MLPEvaluator

            model = os.fspath(evaluator)
            evaluator = MLPEvaluator.load(model)
        unknown = sorted(set(options) - set(_GUIDED_OPTIONS))
        if unknown:
            raise TypeError(
                f"AlphaZeroBot: unknown option {unknown[0]!r}; allowed: simulations, "
                f"gumbel, seed, {', '.join(_GUIDED_OPTIONS)}"
            )
        options = dict(options)
        options.setdefault("leaves_per_tree", 1)
        search = guided.BatchSearch(evaluator, simulations, gumbel=gumbel, seed=0, **options)
        self._guard = self.__dict__.get("_guard") or _Exclusive("AlphaZeroBot")
        with self._guard:
            self.evaluator = evaluator
            self.model = model
            self.search = search
            self.options = {
                "simulations": search.simulations,
                "gumbel": search.gumbel,
                **{k: options[k] for k in _GUIDED_OPTIONS if k in options},
            }
            self._restart(seed)

    def restart(self, seed: int = 0) -> None:
        with _guard_of(self, "AlphaZeroBot"):
            self._restart(seed)

    def _restart(self, seed):
        super().restart(seed)
        self.last_result = None

    def next_seed(self) -> int:
        """Draw the seed of the next search from the bot's RNG (what ``step`` does)."""
        return self.rng.getrandbits(64)

    def step(self, state) -> int:
        with _guard_of(self, "AlphaZeroBot"):
            legal = self._legal(state)
            if len(legal) == 1:
                return legal[0]
            self.last_result = self.search.run([state], seeds=[self.next_seed()])[0]
            return self.last_result.action

    def check_game(self, game) -> None:
        """ValueError if the network cannot play ``game``: the shipped ``az`` network names
        the game and options it was trained for; an MLP file must fit the game's
        observation size, actions and seats."""
        card = self.card
        if card is not None and (
            getattr(game, "name", None) != card["game"] or _options_of(game) != card["options"]
        ):
            raise ValueError(
                f"az is the network trained for {card['game']} with options "
                f"{card['options']}; this game is {game!r}: use mcts:N or puct:N there, "
                "or train a network for it (docs/training.md)"
            )
        sizes = tuple(
            getattr(self.evaluator, k, None) for k in ("obs_size", "num_actions", "num_players")
        )
        if None not in sizes and callable(getattr(game, "observation_tensor_shape", None)):
            from caribsim.search.evaluators import _game_sizes

            if _game_sizes(game) != sizes:
                raise ValueError(
                    f"{self.name}: the network takes {sizes[0]} observation numbers, "
                    f"{sizes[1]} actions and {sizes[2]} seats; {game!r} has "
                    "{} numbers, {} actions and {} seats".format(*_game_sizes(game))
                )

    def describe(self) -> dict:
        """A JSON-able description: the options, the evaluator's repr, the model file (or
        None) and, for an MLPEvaluator, the SHA-256 of its weights (self-play runs are
        identified by it)."""
        out = {
            "kind": "alphazero",
            **self.options,
            "evaluator": repr(self.evaluator),
            "model": self.model,
        }
        params = getattr(self.evaluator, "parameters", None)
        if callable(params):
            h = hashlib.sha256()
            for k, v in sorted(params().items()):
                h.update(k.encode())
                h.update(str(v.shape).encode())
                h.update(v.tobytes())
            out["weights_sha256"] = h.hexdigest()
        return out

    def to_spec(self) -> str:
        """The ``parse_bot`` spec of this bot (its seed aside): ``puct:...`` / ``gumbel:...``
        over a RolloutEvaluator, ``alphazero:...:model=FILE`` for a bot made from a file.
        ValueError for another evaluator (an object a spec cannot name)."""
        return self._spec(strict=True)

    @property
    def name(self) -> str:  # type: ignore[override]  # Bot.name is a class attribute; this bot's name follows its options
        """The spec (``to_spec``); for an evaluator no spec can name, the same form with
        ``evaluator=CLASS`` in place of the evaluator (``puct:200:evaluator=TorchEvaluator``)."""
        return self._spec(strict=False)

    def _spec(self, strict: bool) -> str:
        from caribsim.search import guided

        parts = [
            ("gumbel" if self.options["gumbel"] else "puct") if self.model is None else "alphazero",
            str(self.options["simulations"]),
        ]
        card = self.card
        if card is not None:  # the shipped network: az:N and what differs
            parts[0] = "az"
            if self.options["gumbel"]:
                parts.append("gumbel=true")
        elif self.model is not None:
            if ":" in self.model and strict:
                raise ValueError(
                    f"the model path {self.model!r} holds ':', which a spec cannot hold"
                )
            parts.append(f"model={self.model}")
            if self.options["gumbel"]:
                parts.append("gumbel=true")
        elif isinstance(self.evaluator, guided.RolloutEvaluator):
            if self.evaluator.rollouts != 1:
                parts.append(f"rollouts={self.evaluator.rollouts}")
        elif strict:
            raise ValueError(
                f"no bot spec names the evaluator {self.evaluator!r}: a spec names a "
                "rollout evaluator (puct:, gumbel:) or an MLP file (alphazero:...:model=FILE)"
            )
        else:
            parts.append(f"evaluator={type(self.evaluator).__name__}")
        for k in _GUIDED_OPTIONS:
            if k in self.options and not (k == "leaves_per_tree" and self.options[k] == 1):
                v = self.options[k]
                if card is not None and k in card["search"] and v == card["search"][k]:
                    continue
                parts.append(f"{k}={str(v).lower() if isinstance(v, bool) else v}")
        return ":".join(parts)

    card = None  # the shipped network's card (az), else None

    def __reduce__(self):
        return (
            _make_alphazero_bot,
            (self.evaluator, self.model, self.seed, self.options, self.card),
        )

    def __repr__(self):
        ev = repr(self.model) if self.model is not None else repr(self.evaluator)
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"AlphaZeroBot({ev}, {opts})"


def _make_alphazero_bot(evaluator, model, seed, options, card=None):
    options = dict(options)
    bot = AlphaZeroBot(evaluator, options.pop("simulations"), seed=seed, **options)
    bot.model = model
    bot.card = card
    return bot


def _options_of(game):
    options = getattr(game, "options", None)
    return options() if callable(options) else None


SHIPPED_MODEL = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "data",
    "models",
    "puerto_rico_2p.npz",
)


@functools.cache
def shipped_card() -> dict:
    """The card of the network shipped for ``az`` (``data/models/puerto_rico_2p.json``): the
    game and options it was trained for, the search it is played with (``search``: the
    simulations and the value mix), how it was trained and what it measured."""
    return read_card(SHIPPED_MODEL[: -len(".npz")] + ".json")


def read_card(path) -> dict:
    """A network's card (JSON): ``game`` (a name), ``options`` (a dict) and ``search`` (a dict
    with ``simulations``); anything missing or of the wrong kind is a ValueError naming the file."""
    what = f"model card {path!r}"
    try:
        with open(path, encoding="utf-8") as f:
            card = json.load(f)
    except OSError as e:
        raise ValueError(f"cannot read {what}: {e.strerror or e}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{what} is not JSON text: {e}") from None
    if not isinstance(card, dict):
        raise ValueError(f"{what} must hold a JSON object, got {type(card).__name__}")
    for key, kind in (("game", str), ("options", dict), ("search", dict)):
        if not isinstance(card.get(key), kind):
            raise ValueError(
                f"{what} needs {key!r} ({kind.__name__}), got {card.get(key, 'nothing')!r}"
            )
    simulations = card["search"].get("simulations")
    if not isinstance(simulations, int) or isinstance(simulations, bool) or simulations < 1:
        raise ValueError(f"{what}: search.simulations must be an integer >= 1, got {simulations!r}")
    return card


def _parse_az(spec, parts):
    options = _spec_options(spec, parts, "simulations", _GUIDED_TYPES)
    for key in ("model", "rollouts"):
        if key in options:
            raise ValueError(
                f"bot spec {spec!r}: az is the shipped network; {key}= does not apply "
                "(for another network: alphazero:N:model=FILE.npz)"
            )
    card = shipped_card()
    options = {**card["search"], **options}
    bot = AlphaZeroBot(
        SHIPPED_MODEL, options.pop("simulations"), gumbel=options.pop("gumbel", False), **options
    )
    bot.card = card
    return bot


_GUIDED_TYPES = {
    "simulations": int,
    "model": str,
    "rollouts": int,
    "gumbel": bool,
    "leaves_per_tree": int,
    "c_puct": float,
    "fpu_reduction": float,
    "dirichlet_alpha": float,
    "dirichlet_fraction": float,
    "temperature": float,
    "max_considered": int,
    "gumbel_scale": float,
    "c_visit": float,
    "c_scale": float,
    "interior": str,
    "mix": float,
    "mix_rollouts": int,
    "compiled": bool,
}

_KINDS = (
    "random, greedy, mcts:ITERATIONS[:key=value...] (keys: iterations, seconds, c, reward, "
    "rollout, max_depth, threads, reuse), puct:SIMULATIONS[:key=value...] or "
    "gumbel:SIMULATIONS[:key=value...] (guided search with the C rollout evaluator, or an "
    "MLP file with model=FILE.npz), alphazero:SIMULATIONS:model=FILE.npz[:gumbel=true], "
    "az[:SIMULATIONS][:key=value...] (the shipped Puerto Rico 2-player network)"
    "[:key=value...] (keys: simulations, model, rollouts, gumbel (alphazero only), "
    + ", ".join(_GUIDED_OPTIONS)
    + ")"
)


def _spec_options(spec, parts, positional, types):
    options = {}
    for i, part in enumerate(parts):
        if "=" not in part and i == 0:
            key, value = positional, part
        elif "=" in part:
            key, value = part.split("=", 1)
        else:
            raise ValueError(f"bot spec {spec!r}: expected key=value, got {part!r}")
        if key in options:
            raise ValueError(f"bot spec {spec!r}: option {key!r} is given twice")
        options[key] = _parse_value(key, value, spec, types)
    return options


def _parse_guided(spec, kind, parts):
    options = _spec_options(spec, parts, "simulations", _GUIDED_TYPES)
    if kind != "alphazero" and "gumbel" in options:
        raise ValueError(
            f"bot spec {spec!r}: {kind}: already says whether the root is Gumbel; "
            f"gumbel= is an option of alphazero: specs only"
        )
    gumbel = options.pop("gumbel", kind == "gumbel")
    model = options.pop("model", None)
    if kind == "alphazero" and model is None:
        raise ValueError(
            f"bot spec {spec!r}: alphazero: needs the MLP file, e.g. "
            f"alphazero:200:model=net.npz (or use puct:200 / gumbel:200 for the C "
            f"rollout evaluator)"
        )
    if model is not None and "rollouts" in options:
        raise ValueError(
            f"bot spec {spec!r}: rollouts= sets the C rollout evaluator; it does not "
            f"apply with model="
        )
    simulations = options.pop("simulations", 200)
    if model is not None:
        if not model:
            raise ValueError(f"bot spec {spec!r}: model= needs a file name")
        evaluator = model
    else:
        from caribsim.search import guided

        evaluator = guided.RolloutEvaluator(options.pop("rollouts", 1))
    try:
        return AlphaZeroBot(evaluator, simulations, gumbel=gumbel, **options)
    except (TypeError, ValueError) as e:
        raise ValueError(f"bot spec {spec!r}: {e}") from None


def parse_bot(spec: str) -> Bot:
    """A bot from a command-line spec: ``random``, ``greedy``, ``mcts:1000`` (iterations) or
    ``mcts:1000:rollout=heuristic:c=1.0`` (more options of caribsim.mcts.search); guided
    search (AlphaZeroBot): ``puct:200`` / ``gumbel:200`` (simulations; the C rollout
    evaluator, ``rollouts=N`` playouts per leaf, or ``model=FILE.npz``, an MLPEvaluator
    file) and ``alphazero:200:model=FILE.npz[:gumbel=true]``, with more options of
    guided.BatchSearch as ``key=value`` (``c_puct=1.5``, ``temperature=1``, ...); ``az``
    (``az:800``, ...) is the network shipped for Puerto Rico with 2 players, played as its
    card says (``shipped_card()["search"]``)."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"bot spec must be a non-empty string, got {spec!r}")
    parts = spec.strip().split(":")
    kind = parts[0].lower()
    if kind == "random" and len(parts) == 1:
        return RandomBot()
    if kind == "greedy" and len(parts) == 1:
        return GreedyBot()
    if kind == "mcts":
        options = _spec_options(spec, parts[1:], "iterations", _OPTION_TYPES)
        if "iterations" not in options and "seconds" not in options:
            options["iterations"] = 1000
        return MCTSBot(**options)
    if kind in ("puct", "gumbel", "alphazero"):
        return _parse_guided(spec, kind, parts[1:])
    if kind == "az":
        try:
            return _parse_az(spec, parts[1:])
        except (TypeError, ValueError) as e:
            raise ValueError(
                str(e) if str(e).startswith("bot spec") else f"bot spec {spec!r}: {e}"
            ) from None
    raise ValueError(f"unknown bot spec {spec!r}; use {_KINDS}")


_OPTION_TYPES = {
    "iterations": int,
    "seconds": float,
    "c": float,
    "reward": str,
    "rollout": str,
    "max_depth": int,
    "threads": int,
    "reuse": bool,
}


def _spec_value(value) -> str:
    """An option's value as a spec writes it: true/false, 1.5, an integral float as 2."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


def bot_names(bots) -> list:
    """One name per bot: its ``name`` (the spec: ``mcts:300``), and when a name comes more
    than once, each copy numbered in order (``mcts:300 #1``, ``mcts:300 #2``)."""
    names = [getattr(b, "name", None) or type(b).__name__ for b in bots]
    counts = {n: names.count(n) for n in names}
    seen = dict.fromkeys(counts, 0)
    out = []
    for n in names:
        if counts[n] > 1:
            seen[n] += 1
            n = f"{n} #{seen[n]}"
        out.append(n)
    return out


def _parse_value(key, value, spec, types=_OPTION_TYPES):
    if key not in types:
        raise ValueError(f"bot spec {spec!r}: unknown option {key!r}; allowed: {sorted(types)}")
    kind = types[key]
    if kind is str:
        return value
    try:
        if kind is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return value.lower() in ("true", "1")
        return kind(value)
    except ValueError:
        raise ValueError(
            f"bot spec {spec!r}: {key} must be {kind.__name__}, got {value!r}"
        ) from None
