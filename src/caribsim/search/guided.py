"""Search guided by a learned model: PUCT or a Gumbel root over a batched evaluator.

    >>> import numpy as np, caribsim
    >>> from caribsim.search import guided
    >>> state = caribsim.load_game("puerto_rico", players=3).new_initial_state(seed=1)
    >>> while state.is_chance_node():
    ...     _ = state.resolve_chance()
    >>> def evaluator(obs, mask):          # obs float32 [L, O], mask bool [L, A]
    ...     logits = np.zeros(mask.shape, dtype=np.float32)
    ...     values = np.full((len(obs), 3), 0.5, dtype=np.float32)
    ...     return logits, values           # values per seat in [0, 1]
    >>> result = guided.search(state, evaluator, simulations=64, seed=0)
    >>> result.action in state.legal_actions()
    True

The engine (``caribsim.search._guided``, ``pyx/caribsim/search/_guided.pyx``) holds one
tree per game of a batch and walks them all in C without the GIL; each step makes one
call ``evaluator(obs, mask) -> (logits, values)`` for the leaves of every tree.
``RolloutEvaluator`` is evaluated in C (uniform priors, random playouts), and so is an
``evaluators.MLPEvaluator`` (or its ``CompiledMLP``): its network runs in C inside the
search's nogil loop, with no Python call (``compiled=False`` calls it from Python instead).
A search that calls a Python evaluator holds OpenBLAS on one thread while it runs
(``caribsim._blas.one_thread``). See ``docs/search.md``, section "Guided search".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from caribsim import _blas
from caribsim._common import _int_in, _number
from caribsim.search._guided import INTERIORS, MAX_PLAYERS, Engine
from caribsim.search._mcts import check_game_state
from caribsim.search.evaluators import CompiledMLP, MLPEvaluator
from caribsim.search.mcts import _Exclusive, _guard_of

__all__ = ["BatchSearch", "GuidedResult", "RolloutEvaluator", "UniformEvaluator", "search"]

# the most a search coefficient may be: sigma = (c_visit + N) * c_scale * q and PUCT's
# c_puct * prior * sqrt(N) stay far inside a double (1e9 * 2**40 * 1e9 ~ 1e30), so no score
# becomes inf and no policy NaN; useful values are below 100
MAX_COEFFICIENT = 1e9


class RolloutEvaluator:
    """The C evaluator: uniform priors over the legal moves and, as the value, the mean
    returns of ``rollouts`` uniformly random playouts to the end (``vtable.random_playout``
    on a copy of the leaf). No Python call is made: PUCT with it costs what UCT costs.
    With it every simulation is evaluated where it ends (``leaves_per_tree`` has no effect)."""

    def __init__(self, rollouts: int = 1):
        self.rollouts = _int_in(rollouts, "rollouts", 1, 10_000)

    def __repr__(self):
        return f"RolloutEvaluator(rollouts={self.rollouts})"


class UniformEvaluator:
    """A trivial numpy evaluator: zero logits (uniform priors over the legal moves) and the
    value 0.5 for every seat. For tests and benchmarks of the engine's own cost."""

    def __init__(self, n_players: int):
        self.n_players = _int_in(n_players, "n_players", 1, MAX_PLAYERS)

    def __call__(self, obs, mask):
        return (
            np.zeros(mask.shape, dtype=np.float32),
            np.full((mask.shape[0], self.n_players), 0.5, dtype=np.float32),
        )

    def __repr__(self):
        return f"UniformEvaluator(n_players={self.n_players})"


@dataclass(frozen=True, eq=False)
class GuidedResult:
    """What a guided search found at the root of one game.

    action:      the move chosen: PUCT, the most visited (ties: higher q, then lower id) at
                 temperature 0, else drawn with probability ~ visits^(1/temperature);
                 Gumbel, the Sequential Halving winner
    visits:      int64 [A], simulations through each root action
    policy:      float64 [A], the training target: visit shares (PUCT) or the improved policy
                 softmax(logits + sigma(completed Q)) (Gumbel); sums to 1 over the legal moves,
                 0 elsewhere
    q:           float64 [A], mean value of each root action for the player to move (NaN
                 where the action has no visit, and at illegal actions)
    value:       float64 [P], mean value per seat at the root (its own evaluation included)
    simulations: simulations run (the root's evaluation not counted)
    seconds:     wall time of the run (of the whole batch for BatchSearch.run)
    nodes:       nodes in the tree
    """

    action: int
    visits: np.ndarray = field(repr=False)
    policy: np.ndarray = field(repr=False)
    q: np.ndarray = field(repr=False)
    value: np.ndarray = field(repr=False)
    simulations: int
    seconds: float
    nodes: int


def _bool(value, what):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


_OPTIONS = (
    "simulations",
    "leaves_per_tree",
    "c_puct",
    "fpu_reduction",
    "dirichlet_alpha",
    "dirichlet_fraction",
    "temperature",
    "gumbel",
    "max_considered",
    "gumbel_scale",
    "c_visit",
    "c_scale",
    "interior",
    "mix",
    "mix_rollouts",
    "compiled",
    "seed",
)


def _check_options(
    evaluator,
    simulations,
    leaves_per_tree,
    c_puct,
    fpu_reduction,
    dirichlet_alpha,
    dirichlet_fraction,
    temperature,
    gumbel,
    max_considered,
    gumbel_scale,
    c_visit,
    c_scale,
    interior,
    mix,
    mix_rollouts,
    compiled,
    seed,
):
    if not isinstance(evaluator, RolloutEvaluator) and not callable(evaluator):
        raise TypeError(
            "evaluator must be callable as evaluator(obs, mask) -> (logits, values) "
            f"or a guided.RolloutEvaluator, got {type(evaluator).__name__}"
        )
    o = {
        "simulations": _int_in(simulations, "simulations", 1, 2**40),
        "leaves_per_tree": _int_in(leaves_per_tree, "leaves_per_tree", 1, 4096),
        "c_puct": _number(c_puct, "c_puct", 0.0, MAX_COEFFICIENT),
        "fpu_reduction": _number(fpu_reduction, "fpu_reduction", 0.0, 1.0),
        "dirichlet_alpha": None
        if dirichlet_alpha is None
        else _number(dirichlet_alpha, "dirichlet_alpha", 0.0, None, lo_open=True),
        "dirichlet_fraction": _number(dirichlet_fraction, "dirichlet_fraction", 0.0, 1.0),
        "temperature": _number(temperature, "temperature"),
        "gumbel": _bool(gumbel, "gumbel"),
        "max_considered": _int_in(max_considered, "max_considered", 1, 2**15),
        "gumbel_scale": _number(gumbel_scale, "gumbel_scale", 0.0, MAX_COEFFICIENT),
        "c_visit": _number(c_visit, "c_visit", 0.0, MAX_COEFFICIENT),
        "c_scale": _number(c_scale, "c_scale", 0.0, MAX_COEFFICIENT),
        "mix": _number(mix, "mix", 0.0, 1.0),
        "mix_rollouts": _int_in(mix_rollouts, "mix_rollouts", 1, 10_000),
        "compiled": _bool(compiled, "compiled"),
        "seed": _int_in(seed, "seed", 0, 2**64 - 1),
    }
    if interior is None:
        interior = "gumbel" if o["gumbel"] else "puct"
    if not isinstance(interior, str) or interior not in INTERIORS:
        raise ValueError(f"interior must be one of {sorted(INTERIORS)} or None, got {interior!r}")
    o["interior"] = interior
    if o["mix"] > 0 and isinstance(evaluator, RolloutEvaluator):
        raise ValueError(
            "mix mixes an evaluator's values with random playouts; the "
            "RolloutEvaluator's values are random playouts already: leave mix=0"
        )
    if o["gumbel"] and o["dirichlet_alpha"] is not None:
        raise ValueError(
            "dirichlet_alpha applies to the PUCT root only: the Gumbel root explores "
            "by its Gumbel draws (gumbel_scale); leave dirichlet_alpha=None with gumbel=True"
        )
    if o["gumbel"] and o["temperature"] != 0:
        raise ValueError(
            "temperature applies to the PUCT root only: with gumbel=True the "
            "action is the Sequential Halving winner; leave temperature=0"
        )
    return tuple(o[k] for k in _OPTIONS)


def _check_states(states):
    from caribsim import VectorGame  # the package's public name (embed builds on search)

    if isinstance(states, VectorGame):
        states = [states.get_state(i) for i in range(len(states))]
    elif isinstance(states, (list, tuple)):
        states = list(states)
    else:
        raise TypeError(
            "states must be a list of caribsim game states or a VectorGame, "
            f"got {type(states).__name__}"
        )
    if not states:
        raise ValueError("states must hold at least one game state")
    for i, state in enumerate(states):
        try:
            check_game_state(state)
        except TypeError as e:
            raise TypeError(f"states[{i}]: {e}") from None
        if state.is_terminal():
            raise ValueError(f"states[{i}]: cannot search a terminal state: no action is legal")
        if state.is_chance_node():
            raise ValueError(
                f"states[{i}]: cannot search a chance node: resolve the chance "
                "event first (state.resolve_chance() or apply an outcome)"
            )
        if not state.legal_actions():
            raise ValueError(f"states[{i}]: cannot search a decision node without a legal action")
    return states


class BatchSearch:
    """Guided search of many games at once: one tree per game, one evaluator call per step.

    evaluator:        ``evaluator(obs, mask) -> (logits, values)`` with ``obs`` float32 [L, O]
                      (each leaf seen by the player to move at the ROOT), ``mask`` bool [L, A]
                      (the legal moves at the leaf), ``logits`` [L, A] of any float dtype (only
                      the legal entries are read; others may be -inf) and ``values`` [L, P] per
                      seat in [0, 1]; or ``RolloutEvaluator(rollouts)``, evaluated in C. The
                      two arrays are reused by the next step: copy them to keep them.
    simulations:      simulations per tree, after the root's own evaluation.
    leaves_per_tree:  k: leaves walked per tree and step (virtual loss keeps the k paths apart;
                      a path that reaches a leaf already waiting is dropped). L <= B * k.
    c_puct:           PUCT exploration: Q + c_puct * P * sqrt(N_parent) / (1 + N_child).
    fpu_reduction:    first-play urgency: an unvisited child is worth the parent's mean value
                      for the mover minus this.
    dirichlet_alpha:  root noise Dir(alpha) mixed into the root priors (None: no noise).
    dirichlet_fraction: its weight (prior = (1 - f) * prior + f * noise).
    temperature:      final choice under PUCT: 0 = the most visited, else drawn with
                      probability ~ visits^(1/temperature) (the search's RNG).
    gumbel:           a Gumbel root (Danihelka et al. 2022): Gumbel-top-k of
                      m = min(max_considered, legal) actions, Sequential Halving over the
                      simulations, completed Q-values, the improved policy as the target.
    max_considered, gumbel_scale, c_visit, c_scale: the Gumbel root's m, noise scale and
                      sigma(q) = (c_visit + max_b N(b)) * c_scale * q (q min-max rescaled).
    interior:         the rule below the root: "puct", or "gumbel" (mctx's deterministic
                      argmax of improved policy - visit share); None: "gumbel" with
                      gumbel=True, else "puct".
    mix:              AlphaGo's mixed leaf value (Silver et al. 2016): each leaf's value is
                      (1 - mix) * the evaluator's + mix * the mean returns of ``mix_rollouts``
                      uniformly random playouts from the leaf, played in C (0: the
                      evaluator's alone; not with a RolloutEvaluator).
    mix_rollouts:     playouts per leaf for ``mix`` (1..10000).
    compiled:         True (default): an ``evaluators.MLPEvaluator`` (one whose ``__call__``
                      is MLPEvaluator's own) or a ``CompiledMLP`` is evaluated in C inside
                      the search (``MLPEvaluator.compiled()``: the same function within
                      float32 rounding, no Python call, no GIL; compiled again when ``fit``
                      changes the weights); False: called from Python as any evaluator.
                      Other evaluators are called from Python either way.
    seed:             tree i of a run uses seed + i (mod 2**64) unless ``run(seeds=...)``.

    The options are read-only attributes (``batch.simulations``, ...). A copy (copy,
    deepcopy, pickle) is a fresh BatchSearch with the same evaluator and options.

    ``run`` is deterministic for the seeds, the states and an evaluator that gives each row
    a result depending on that row only: tree i gives what ``search(states[i], evaluator,
    seed=seeds[i], ...)`` with the same options (``leaves_per_tree`` included) gives,
    whatever the other games of the batch. One run at a time: a call while another
    thread (or the evaluator itself) is in a run of this object raises RuntimeError; use
    one BatchSearch per thread. After an error of the evaluator the object is usable again.
    """

    # the options: read-only properties, one per _OPTIONS name (made below the class)
    simulations: int
    leaves_per_tree: int
    c_puct: float
    fpu_reduction: float
    dirichlet_alpha: float | None
    dirichlet_fraction: float
    temperature: float
    gumbel: bool
    max_considered: int
    gumbel_scale: float
    c_visit: float
    c_scale: float
    interior: str
    mix: float
    mix_rollouts: int
    compiled: bool
    seed: int

    def __init__(
        self,
        evaluator,
        simulations=800,
        *,
        leaves_per_tree=8,
        c_puct=1.25,
        fpu_reduction=0.1,
        dirichlet_alpha=None,
        dirichlet_fraction=0.25,
        temperature=0.0,
        gumbel=False,
        max_considered=16,
        gumbel_scale=1.0,
        c_visit=50.0,
        c_scale=0.1,
        interior=None,
        mix=0.0,
        mix_rollouts=1,
        compiled=True,
        seed=0,
    ):
        options = _check_options(
            evaluator,
            simulations,
            leaves_per_tree,
            c_puct,
            fpu_reduction,
            dirichlet_alpha,
            dirichlet_fraction,
            temperature,
            gumbel,
            max_considered,
            gumbel_scale,
            c_visit,
            c_scale,
            interior,
            mix,
            mix_rollouts,
            compiled,
            seed,
        )
        guard = self.__dict__.get("_guard") or _Exclusive("BatchSearch")
        with guard:
            self._guard = guard
            self._evaluator = evaluator
            self._options = options
            self._engine = None

    @property
    def evaluator(self):
        """The evaluator (read-only)."""
        return self._evaluator

    @property
    def profile(self):
        """Where the wall time of the last run with a Python evaluator or a compiled network
        went, in seconds: ``{"walk": C walks with the observations and masks, "python": the
        evaluator call and the checks of its outputs' types and shapes, "network": the
        compiled network's forward passes, "expand": the C checks of the values, expansion
        and backup}``; None before the first run."""
        return None if self._engine is None else self._engine.profile

    @property
    def network(self):
        """The ``CompiledMLP`` the search evaluates in C (that of the evaluator's current
        weights), or None when the evaluator is called from Python (or is the rollout one)."""
        return self._network()

    def _network(self):
        if not self._options[_OPTIONS.index("compiled")]:
            return None
        ev = self._evaluator
        if isinstance(ev, CompiledMLP):
            return ev
        if isinstance(ev, MLPEvaluator) and type(ev).__call__ is MLPEvaluator.__call__:
            return ev.compiled()
        return None

    def _make_engine(self, state, network):
        o = dict(zip(_OPTIONS, self._options))
        ev = self._evaluator
        rollouts = ev.rollouts if isinstance(ev, RolloutEvaluator) else 0
        return Engine(
            state,
            ev,
            o["simulations"],
            o["leaves_per_tree"],
            o["c_puct"],
            o["fpu_reduction"],
            o["dirichlet_alpha"] or 0.0,
            o["dirichlet_fraction"],
            o["temperature"],
            o["gumbel"],
            o["interior"],
            o["max_considered"],
            o["gumbel_scale"],
            o["c_visit"],
            o["c_scale"],
            rollouts,
            o["mix"],
            o["mix_rollouts"],
            network,
        )

    def run(self, states, seeds=None) -> list:
        """Search every state (a list of decision nodes of one game and player count, or a
        VectorGame's current states); returns one GuidedResult per state, in order.
        ``seeds``: one seed per state (default: seed + i)."""
        with _guard_of(self, "BatchSearch"):
            states = _check_states(states)
            seed = self._options[-1]
            if seeds is None:
                seeds = [(seed + i) % 2**64 for i in range(len(states))]
            else:
                if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__len__"):
                    raise TypeError(f"seeds must be a list of ints, got {type(seeds).__name__}")
                seeds = [_int_in(s, f"seeds[{i}]", 0, 2**64 - 1) for i, s in enumerate(seeds)]
                if len(seeds) != len(states):
                    raise ValueError(
                        f"give one seed per state: {len(states)} states, {len(seeds)} seeds"
                    )
            first = states[0]
            network = self._network()
            if self._engine is None or not self._engine.accepts(first):
                self._engine = self._make_engine(first, network)
            elif network is not None and network is not self._engine.network:
                self._engine.set_network(network)  # the MLP was trained: its new weights
            for i, state in enumerate(states):
                if not self._engine.accepts(state):
                    raise ValueError(
                        f"states[{i}] is not of the game and number of players of "
                        "states[0]: a batch holds one game"
                    )
            if network is None and not isinstance(self._evaluator, RolloutEvaluator):
                with _blas.one_thread():  # a Python evaluator's small products: one thread
                    out = self._engine.run(states, seeds)
            else:
                out = self._engine.run(states, seeds)
        return [
            GuidedResult(int(a), v, p, q, val, int(sims), float(sec), int(nodes))
            for a, v, p, q, val, sims, sec, nodes in out
        ]

    def _kwargs(self):
        _guard_of(self, "BatchSearch")
        return dict(zip(_OPTIONS, self._options))

    def __reduce__(self):
        # a copy (pickle, copy, deepcopy) is a fresh search with the same evaluator and
        # options: it shares neither the trees nor the guard (the evaluator must pickle)
        return (_make_batch_search, (self._evaluator, self._kwargs()))

    def __repr__(self):
        if "_guard" not in self.__dict__:
            return "BatchSearch(<not initialised>)"
        return (
            f"BatchSearch({self._evaluator!r}, "
            + ", ".join(f"{k}={v!r}" for k, v in self._kwargs().items())
            + ")"
        )


def _make_batch_search(evaluator, kwargs):
    kwargs = dict(kwargs)
    return BatchSearch(evaluator, kwargs.pop("simulations"), **kwargs)


def _option_property(i: int, name: str) -> property:
    return property(lambda self: self._options[i], doc=f"the {name} option (read-only)")


for _i, _name in enumerate(_OPTIONS):
    setattr(BatchSearch, _name, _option_property(_i, _name))
del _i, _name


def search(
    state, evaluator, simulations=800, *, leaves_per_tree=1, seed=0, **options
) -> GuidedResult:
    """Guided search of one state (a decision node); the options are BatchSearch's.
    ``search(states[i], ev, seed=s_i, ...)`` gives what tree i of
    ``BatchSearch(ev, ...).run(states, seeds=[s_0, s_1, ...])`` gives."""
    return BatchSearch(
        evaluator, simulations, leaves_per_tree=leaves_per_tree, seed=seed, **options
    ).run([state])[0]
