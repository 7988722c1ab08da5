"""OpenSpiel adapter: every caribsim game as an OpenSpiel Python game.

    >>> import pyspiel, caribsim.openspiel
    >>> caribsim.openspiel.register()
    >>> game = pyspiel.load_game("caribsim_puerto_rico", {"players": 4})
    >>> state = game.new_initial_state()

``register()`` registers ``caribsim_<name>`` for each game of ``caribsim.games()``; the
game's options (``players`` and the game's own, e.g. ``all_colonists_and_vp``) are the
OpenSpiel parameters. Chance nodes are explicit (``chance_outcomes()`` with the game's
probabilities); decisions and chance outcomes share the game's flat action ids, so
``max_chance_outcomes()`` is the size of the action space. Returns are the game's
returns (1 for the winner, a shared win split, 0 otherwise) at the end, terminal
rewards only, constant sum 1. The observation tensor is the game's
``observation_tensor(player)``, the observation string the player's readable view; the
information state (string and tensor, perfect recall) is every event the player has seen
(``caribsim.infostate``), and ``resample_from_infostate`` draws the hidden facts again, so
OpenSpiel's Python ``ISMCTSBot`` runs on the hidden-information games.

Needs the ``openspiel`` extra: ``pip install 'caribsim[openspiel]'``.
"""
from __future__ import annotations

import inspect

import numpy as np
import pyspiel

import caribsim
from caribsim.embed import infostate
from caribsim._api import _registry
from caribsim.embed._vector import game_info

PREFIX = "caribsim_"
_PLAYER_PROBE = range(1, 11)
# Puerto Rico (3-5 players) and Port Royal have no finite game length (docs/embedding.md):
# OpenSpiel needs one, so these are working limits, >= 2.8x the longest of 20,000 random
# games of every game and player count; the information-state tensor holds MAX_EVENTS events.
MAX_GAME_LENGTH = 2000
MAX_EVENTS = 5000
_registered: dict[str, pyspiel.GameType] = {}
_factories: dict[str, type] = {}


def _option_defaults(name: str) -> dict:
    """The game's constructor options with int/bool/float/str defaults (OpenSpiel parameters)."""
    sig = inspect.signature(_registry()[name].__init__)
    out = {}
    for p in sig.parameters.values():
        if p.name == "self" or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        if isinstance(p.default, (bool, int, float, str)):
            out[p.name] = p.default
    return out


def _player_counts(name: str) -> list[int]:
    counts = []
    for n in _PLAYER_PROBE:
        try:
            caribsim.load_game(name, players=n)
        except (ValueError, TypeError):
            continue
        counts.append(n)
    return counts


def game_type(name: str) -> pyspiel.GameType:
    """The OpenSpiel GameType of caribsim game ``name``."""
    defaults = _option_defaults(name)
    counts = _player_counts(name)
    info = game_info(caribsim.load_game(name).new_initial_state())
    perfect = info["perfect_information"]
    return pyspiel.GameType(
        short_name=PREFIX + name,
        long_name=f"caribsim {name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=(pyspiel.GameType.Information.PERFECT_INFORMATION if perfect
                     else pyspiel.GameType.Information.IMPERFECT_INFORMATION),
        utility=pyspiel.GameType.Utility.CONSTANT_SUM,      # returns always sum to 1
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(counts),
        min_num_players=min(counts),
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=defaults,
    )


class CaribsimGame(pyspiel.Game):
    """A caribsim game as an OpenSpiel game (made by ``pyspiel.load_game``)."""

    def __init__(self, name: str, params=None):
        params = dict(params or {})
        spec = _option_defaults(name)
        unknown = set(params) - set(spec)
        if unknown:
            raise ValueError(f"unknown parameters {sorted(unknown)} for {PREFIX}{name}; allowed: {sorted(spec)}")
        options = {**spec, **params}
        self.caribsim_game = caribsim.load_game(name, **options)
        self.caribsim_name = name
        gtype = _registered.get(name) or game_type(name)
        self._perfect = gtype.information == pyspiel.GameType.Information.PERFECT_INFORMATION
        n_actions = self.caribsim_game.num_distinct_actions()
        ginfo = pyspiel.GameInfo(
            num_distinct_actions=n_actions,
            # chance outcomes are ids of the same flat action space
            max_chance_outcomes=max(n_actions, self.caribsim_game.max_chance_outcomes()),
            num_players=self.caribsim_game.num_players(),
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(gtype, ginfo, options)

    def new_initial_state(self, seed: int = 0):
        return CaribsimState(self, self.caribsim_game.new_initial_state(seed=seed))

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The observation (default) or, with ``perfect_recall=True``, the information state."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            if not (iig_obs_type.public_info and iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER):
                raise ValueError("only the player's own information state is provided (perfect_recall=True "
                                 "with public_info=True and private_info=SINGLE_PLAYER)")
            return _InfoStateObserver(self)
        return _Observer(self)


class CaribsimState(pyspiel.State):
    """An OpenSpiel state over a caribsim state (``self.inner``)."""

    def __init__(self, game: CaribsimGame, inner):
        super().__init__(game)
        self._game = game
        self.inner = inner
        self.events = infostate.Events(game.caribsim_name)   # what each player has seen
        self._perfect = game._perfect

    def current_player(self):
        p = self.inner.current_player()
        if p == caribsim.CHANCE:
            return pyspiel.PlayerId.CHANCE
        if p == caribsim.TERMINAL:
            return pyspiel.PlayerId.TERMINAL
        return p

    def _legal_actions(self, player):
        return self.inner.legal_actions(player)

    def chance_outcomes(self):
        return self.inner.chance_outcomes()

    def _apply_action(self, action):
        self.events = self.events.after(self.inner, int(action), self.inner.apply_action)

    def resample_from_infostate(self, player_id, probability_sampler):
        """A state the player cannot tell from this one (same information state), with the
        hidden facts (Port Royal's coin faces and draw pile, Cuba's other players' secret bids)
        drawn again consistently with what he saw (the game's ``determinize``); Puerto Rico hides
        nothing, so its copy is the state itself. The copy keeps this state's history."""
        player = infostate.check_player(player_id, self.inner.num_players())
        seed = int(probability_sampler() * 2 ** 53)
        out = self.clone()
        if not self._perfect:
            out.inner = self.inner.determinize(player, seed=seed)
        return out

    def _action_to_string(self, player, action):
        return self.inner.action_to_string(int(action))

    def is_terminal(self):
        return self.inner.is_terminal()

    def returns(self):
        return [float(r) for r in self.inner.returns()]

    def __str__(self):
        return str(self.inner)


class CRolloutEvaluator:
    """An evaluator for OpenSpiel's ``mcts.MCTSBot``: the mean returns of ``n_rollouts``
    uniformly random playouts run in C by ``caribsim.random_playouts`` from the leaf (much
    faster than ``mcts.RandomRolloutEvaluator``, which steps the game through pybind11)."""

    def __init__(self, n_rollouts: int = 1, seed: int = 0):
        self.n_rollouts = int(n_rollouts)
        if self.n_rollouts < 1:
            raise ValueError(f"n_rollouts must be >= 1, got {n_rollouts}")
        self._rng = np.random.default_rng(seed)

    def evaluate(self, state: CaribsimState):
        result = caribsim.random_playouts(state.inner, self.n_rollouts, seed=int(self._rng.integers(2 ** 63)))
        return result.returns.mean(axis=0)

    def prior(self, state: CaribsimState):
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(legal)) for a in legal]


class _Observer:
    """The game's observation tensor (PyObserver interface of open_spiel.python.observation)."""

    def __init__(self, game: CaribsimGame):
        size = int(np.prod(game.caribsim_game.observation_tensor_shape()))
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: CaribsimState, player: int):
        state.inner.write_observation(self.tensor, player)

    def string_from(self, state: CaribsimState, player: int):
        return infostate.observation_string(state.inner, player)


class _InfoStateObserver:
    """The player's information state with perfect recall: the current observation, then
    two floats per event seen since the start (``caribsim.infostate.encode_events``)."""

    def __init__(self, game: CaribsimGame):
        self._n_obs = int(np.prod(game.caribsim_game.observation_tensor_shape()))
        self._n = game.caribsim_game.num_players()
        self.tensor = np.zeros(self._n_obs + 2 * MAX_EVENTS, np.float32)
        self.dict = {"observation": self.tensor[:self._n_obs], "events": self.tensor[self._n_obs:]}

    def set_from(self, state: CaribsimState, player: int):
        state.inner.write_observation(self.dict["observation"], player)
        infostate.encode_events(state.events, player, self._n, self.dict["events"])

    def string_from(self, state: CaribsimState, player: int):
        return infostate.information_state_string(state.events, player, state.inner.action_to_string)


def register() -> list[str]:
    """Register every caribsim game with OpenSpiel as ``caribsim_<name>``; returns the
    registered short names. Calling it again registers only games not registered yet."""
    for name in caribsim.games():
        if name in _registered:
            continue
        gtype = game_type(name)
        # OpenSpiel keeps the factory until the C++ registry is destroyed after Python's
        # finalisation: a class (self-referencing through its __mro__) is never freed there,
        # a closure would be freed without the GIL and abort the interpreter at exit.
        factory = type(f"CaribsimGame_{name}", (CaribsimGame,), {
            "__init__": lambda self, params=None, _name=name: CaribsimGame.__init__(self, _name, params),
            "__module__": __name__,
        })
        pyspiel.register_game(gtype, factory)
        _registered[name] = gtype
        _factories[name] = factory
        globals()[factory.__name__] = factory     # picklable by name
    return [PREFIX + name for name in sorted(_registered)]
