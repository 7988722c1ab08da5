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
rewards only, constant sum 1. ``max_game_length()`` (decisions, chance outcomes not
counted) is a derived upper bound for Cuba (``cuba_length_bound``, following the game's
options and component data) and the working limit ``MAX_GAME_LENGTH`` for Puerto Rico and
Port Royal, which have no finite bound (docs/embedding.md, "Game length"). The observation
tensor is the game's ``observation_tensor(player)``, the observation string the player's
readable view; the information state (string and tensor, perfect recall) is every event the player has seen
(``caribsim.infostate``), and ``resample_from_infostate`` draws the hidden facts again, so
OpenSpiel's Python ``ISMCTSBot`` runs on the hidden-information games.

Needs the ``openspiel`` extra: ``pip install 'caribsim[openspiel]'``.
"""

from __future__ import annotations

import inspect

import numpy as np
import pyspiel

import caribsim
from caribsim._api import _registry
from caribsim.embed import infostate
from caribsim.embed._vector import game_info

PREFIX = "caribsim_"
_PLAYER_PROBE = range(1, 11)
# Puerto Rico (2-5 players) and Port Royal have no finite game length (docs/embedding.md):
# OpenSpiel needs one, so their max_game_length() is this working limit, >= 2.8x the longest
# of 20,000 random games of every game and player count. Cuba's is the derived bound
# (cuba_length_bound). The information-state tensor holds MAX_EVENTS events.
MAX_GAME_LENGTH = 2000
MAX_EVENTS = 5000

# Cuba's buildings in the engine's order (docs/cuba.md) and the effect numbers the engine
# fixes (the printed rules text, not the data files; pyx/caribsim/cuba/_core.pyx).
_CU_BUILDINGS = [
    "cement_factory",
    "sawmill",
    "golf_course",
    "abbey",
    "tavern",
    "smoking_lounge",
    "small_office",
    "large_office",
    "hotel",
    "inn",
    "main_warehouse",
    "production_building",
    "supply_depot",
    "small_bank",
    "large_bank",
    "cigar_factory",
    "distillery",
    "black_market",
    "lighthouse",
    "storage",
    "dam",
    "church",
    "town_hall",
]
_CU_PICK = {
    "cement_factory",
    "sawmill",
    "golf_course",
    "abbey",
    "tavern",
    "smoking_lounge",
    "main_warehouse",
    "production_building",
    "supply_depot",
    "cigar_factory",
    "distillery",
}
_CU_ITEM_PESOS = (6, 4, 2)  # Main warehouse, Production building, Supply depot: pesos per item
_CU_BANK_PESOS = 2 + 4  # Small bank + Large bank, once each per Foreman action
_CU_DAM_WATER = 2
_CU_LARGE_OFFICE_ITEMS = 2
_CU_CROPS = (0, 1, 2)  # plantation field kinds sugar, citrus, tobacco
_CU_WAREHOUSE = 8  # plantation field kind of the warehouse
_CU_LAW_DROUGHT = 6  # law kind of the Drought (its parameter: free crop fields)


def cuba_length_bound(game) -> int:
    """An upper bound on the decisions (chance outcomes not counted) of every Cuba game
    ``game`` (a ``caribsim.load_game("cuba", ...)``) can play, derived from its player count,
    options and component data as in docs/embedding.md, "Game length" (the steps are
    numbered as there). Raises ``ValueError`` if the data allow an unbounded Trader
    action (free purchases from an unlimited supply)."""
    return cuba_length_terms(game)["total"]


def cuba_length_terms(game) -> dict:
    """The terms of ``cuba_length_bound``: ``setup`` (decisions per player), ``v`` (the most
    pesos one item can bring), per round r (lists of ``rounds``): ``wealth`` (W_r, the most
    pesos + v x items a player can hold in round r), ``items``, ``pesos``, ``player_round``
    (a player's decisions in the action phase), ``others`` (parliament and law execution,
    all players), ``total``; and the step terms ``gain`` (Delta W), ``harvests`` (H), ``cross``
    (C), ``tokens`` (T), ``supply_price``, ``slots``, ``extras(held)`` (per building, the
    decisions one Foreman use adds, ``held`` standing for the stock of a building without
    limit)."""
    d = game.component_data()
    st, opts = d["setup"], game.options()
    n, rounds = game.num_players(), st["rounds"]
    laps = st["cards_played_per_round"]
    rows, cols = st["plantation_rows"], st["plantation_cols"]
    plant = d["plantation"]
    fields = range(rows * cols)

    def cross(f):
        return [g for g in fields if g // cols == f // cols or g % cols == f % cols]

    # (1) the board: harvests per Worker, items per Worker, buildings activated per Foreman
    harvests = max(sum(plant[g] in _CU_CROPS for g in cross(f)) for f in fields)
    # net items of one Worker: y per material field and per harvest, less the irrigation
    # water of each harvest beyond the free ones (the Drought law can only lower those)
    y, irrigation = st["plantation_yield_per_field"], st["irrigation_water_per_extra_crop_field"]
    free = max(
        [st["worker_free_crop_fields"]]
        + [law["param"][0] for law in d["laws"] if law["kind"] == _CU_LAW_DROUGHT]
    )
    worker_items = max(
        y * (sum(plant[g] not in _CU_CROPS and plant[g] != _CU_WAREHOUSE for g in cross(f)) + k)
        - irrigation * max(0, k - free)
        for f in fields
        for k in range(sum(plant[g] in _CU_CROPS for g in cross(f)) + 1)
    )
    cross_size = rows + cols - 1
    # (2) wealth W = pesos + v * items held; v = the most pesos one item can ever bring
    tracks = [m["prices"] for m in d["market"]]
    v = max(
        [max(t) for t in tracks]
        + [
            st["market_sell_to_supply_price_crop"],
            st["market_sell_to_supply_price_good"],
            *_CU_ITEM_PESOS,
        ]
    )
    p_supply = st["market_buy_from_supply_price"]
    tokens = sum(len(t) for t in tracks)
    track_gain = sum(max(0, v - price) for t in tracks for price in t)
    alt = max(st["trader_alt_material_count"], st["trader_alt_cheapest_crop_count"])
    gain = (
        v * worker_items
        + max(v * alt, track_gain)
        + v * _CU_DAM_WATER
        + _CU_BANK_PESOS
        + max(st["mayor_alt_pesos"])
    )
    supply_total = sum(st["supply_count"]) if opts["supply_limited"] else None
    if p_supply == 0 and supply_total is None:
        raise ValueError(
            "Cuba: purchases from the unlimited supply cost 0 pesos "
            "(market_buy_from_supply_price = 0): a Trader action has no bound"
        )
    factor = v / p_supply if 0 < p_supply < v else 1.0  # supply purchases below an item's value
    wealth = st["start_pesos"] + v * (st["start_materials_chosen"] + st["start_crops_chosen"])
    slots = max([sum(sh["slots"]) for sh in d["ships"]] + [1])
    # (3) setup: one decision per starting item
    setup = st["start_materials_chosen"] + st["start_crops_chosen"]
    total = n * setup
    terms = {
        "setup": setup,
        "v": v,
        "gain": gain,
        "factor": factor,
        "harvests": harvests,
        "cross": cross_size,
        "tokens": tokens,
        "supply_price": p_supply,
        "slots": slots,
        "wealth": [],
        "items": [],
        "pesos": [],
        "player_round": [],
        "others": [],
    }
    for _ in range(rounds):
        wealth = (wealth + gain) * factor
        items = int(wealth // v)
        pesos = int(wealth)
        if opts["pesos_limited"]:
            pesos = min(pesos, st["coins"])
        if supply_total is not None:
            items = min(items, supply_total)
        if p_supply > 0:
            supply_buys = pesos // p_supply
            if supply_total is not None:
                supply_buys = min(supply_buys, supply_total)
        else:
            # the price is 0..100 (cuba_setup.csv's bounds), and a free purchase from an
            # unlimited supply raised above: the supply is limited
            assert supply_total is not None
            supply_buys = supply_total
        # (4) the five characters' actions, each at most once per player and round
        extras = _cu_extras(d, st, items)
        actions = sorted(
            [
                1 + harvests,  # Worker
                max(1, items + tokens + supply_buys + 1),  # Trader
                2,  # Architect
                1 + cross_size + sum(sorted(extras)[-cross_size:]),  # Foreman
                slots,  # Mayor
            ]
        )
        per_player = laps + sum(actions[-laps:])
        # (5) parliament: a bid, a re-bid, the winner's enactment; (6) tax and levy
        others = (2 * n + 1) + 2 * n
        total += n * per_player + others
        for key, val in (
            ("wealth", wealth),
            ("items", items),
            ("pesos", pesos),
            ("player_round", per_player),
            ("others", others),
        ):
            terms[key].append(val)
    terms["total"] = int(total)
    terms["extras"] = lambda held: _cu_extras(d, st, held)
    return terms


def _cu_extras(d, st, items):
    """Per building (engine order), the most decisions one Foreman use of it adds after the
    `use` itself (step 4); ``items`` stands for the stock a building without limit picks from."""
    extras = []
    for name, b in zip(_CU_BUILDINGS, d["buildings"]):
        if name in _CU_PICK:
            extras.append(items if b["limit"] is None else b["limit"])
        elif name == "storage":
            extras.append(st["storage_capacity_crops"])
        elif name in ("black_market", "large_office"):
            extras.append(2 if name == "black_market" else _CU_LARGE_OFFICE_ITEMS)
        elif name in ("small_office", "lighthouse", "church"):
            extras.append(1)
        else:
            extras.append(0)
    return extras


def game_length_bound(game):
    """The derived bound on a caribsim game's decisions, or ``None`` where none exists:
    Cuba (every player count) has one (``cuba_length_bound``); Puerto Rico (2-5 players)
    and Port Royal have none (docs/embedding.md, "Game length"), and neither does a Cuba
    whose data make purchases free from an unlimited supply."""
    if game.name != "cuba":
        return None
    try:
        return cuba_length_bound(game)
    except ValueError:
        return None


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
        information=(
            pyspiel.GameType.Information.PERFECT_INFORMATION
            if perfect
            else pyspiel.GameType.Information.IMPERFECT_INFORMATION
        ),
        utility=pyspiel.GameType.Utility.CONSTANT_SUM,  # returns always sum to 1
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
            raise ValueError(
                f"unknown parameters {sorted(unknown)} for {PREFIX}{name}; allowed: {sorted(spec)}"
            )
        options = {**spec, **params}
        self.caribsim_game = caribsim.load_game(name, **options)
        self.caribsim_name = name
        gtype = _registered.get(name) or game_type(name)
        self._perfect = gtype.information == pyspiel.GameType.Information.PERFECT_INFORMATION
        n_actions = self.caribsim_game.num_distinct_actions()
        # a true bound where one exists (Cuba), else the working limit (docs/embedding.md)
        self.length_bound = game_length_bound(self.caribsim_game)
        ginfo = pyspiel.GameInfo(
            num_distinct_actions=n_actions,
            # chance outcomes are ids of the same flat action space
            max_chance_outcomes=max(n_actions, self.caribsim_game.max_chance_outcomes()),
            num_players=self.caribsim_game.num_players(),
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=self.length_bound or MAX_GAME_LENGTH,
        )
        super().__init__(gtype, ginfo, options)

    def new_initial_state(self, seed: int = 0):
        return CaribsimState(self, self.caribsim_game.new_initial_state(seed=seed))

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The observation (default) or, with ``perfect_recall=True``, the information state."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            if not (
                iig_obs_type.public_info
                and iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
            ):
                raise ValueError(
                    "only the player's own information state is provided (perfect_recall=True "
                    "with public_info=True and private_info=SINGLE_PLAYER)"
                )
            return _InfoStateObserver(self)
        return _Observer(self)


class CaribsimState(pyspiel.State):
    """An OpenSpiel state over a caribsim state (``self.inner``)."""

    def __init__(self, game: CaribsimGame, inner):
        super().__init__(game)
        self._game = game
        self.inner = inner
        self.events = infostate.Events(game.caribsim_name)  # what each player has seen
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
        seed = int(probability_sampler() * 2**53)
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
        result = caribsim.random_playouts(
            state.inner, self.n_rollouts, seed=int(self._rng.integers(2**63))
        )
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
        self.dict = {
            "observation": self.tensor[: self._n_obs],
            "events": self.tensor[self._n_obs :],
        }

    def set_from(self, state: CaribsimState, player: int):
        state.inner.write_observation(self.dict["observation"], player)
        infostate.encode_events(state.events, player, self._n, self.dict["events"])

    def string_from(self, state: CaribsimState, player: int):
        return infostate.information_state_string(
            state.events, player, state.inner.action_to_string
        )


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
        factory = type(
            f"CaribsimGame_{name}",
            (CaribsimGame,),
            {
                "__init__": lambda self, params=None, _name=name: CaribsimGame.__init__(
                    self, _name, params
                ),
                "__module__": __name__,
            },
        )
        pyspiel.register_game(gtype, factory)
        _registered[name] = gtype
        _factories[name] = factory
        globals()[factory.__name__] = factory  # picklable by name
    return [PREFIX + name for name in sorted(_registered)]
