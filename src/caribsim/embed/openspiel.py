"""OpenSpiel adapter: every caribsim game as an OpenSpiel Python game.

    >>> import pyspiel, caribsim.openspiel
    >>> caribsim.openspiel.register()
    >>> game = pyspiel.load_game("caribsim_puerto_rico", {"players": 4})
    >>> state = game.new_initial_state()

``register()`` registers ``caribsim_<name>`` for each game of ``caribsim.games()``; every
option of the game (``players`` and the game's own, e.g. ``all_colonists_and_vp``) is an
OpenSpiel parameter of its type; an option whose default is None takes a stated value that
stands for it (``parameter_specification``, docs/embedding.md). Chance nodes are explicit
(``chance_outcomes()`` with the game's probabilities); decisions and chance outcomes share
the game's flat action ids, so ``max_chance_outcomes()`` is the size of the action space.
Returns are the game's returns (1 for the winner, a shared win split, 0 otherwise) at the
end, terminal rewards only, constant sum 1. ``max_game_length()`` (decisions, chance
outcomes not counted) is a derived upper bound for Cuba (``cuba_length_bound``, following
the game's options and component data) and the working limit ``MAX_GAME_LENGTH`` for Puerto
Rico and Port Royal, which have no finite bound (docs/embedding.md, "Game length"). The
observation tensor is the game's ``observation_tensor(player)``, the observation string the
player's readable view; the information state (string and tensor, perfect recall) is every
event the player has seen (``caribsim.infostate``; the tensor has room for
``event_slots(game)`` events), and ``resample_from_infostate`` draws the hidden facts again,
so OpenSpiel's Python ``ISMCTSBot`` runs on the hidden-information games.
``make_observation`` builds every ``IIGObservationType`` but a private-only information
state: public information only, the player's private information or every player's, with
perfect recall or not.

Needs the ``openspiel`` extra: ``pip install 'caribsim[openspiel]'``.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

import caribsim
from caribsim._api import _registry
from caribsim._game_base import Game
from caribsim._obs import Block
from caribsim.embed import infostate
from caribsim.embed._vector import game_info

PREFIX = "caribsim_"
_PLAYER_PROBE = range(1, 11)
# Puerto Rico (2-5 players) and Port Royal have no finite game length (docs/embedding.md):
# OpenSpiel needs one, so their max_game_length() is this working limit, >= 2.8x the longest
# of 20,000 random games of every game and player count. Cuba's is the derived bound
# (cuba_length_bound).
MAX_GAME_LENGTH = 2000
# The information-state tensor's event slots (decisions, chance outcomes, revealed bids) of
# the games without a derived bound: room for MAX_GAME_LENGTH decisions at 4 events each
# (random games: at most 3.25 in Port Royal, 1.31 in Puerto Rico). Cuba's slots are its
# derived bound (cuba_event_bound), per player count and data.
EVENTS_PER_DECISION = 4
MAX_EVENTS = EVENTS_PER_DECISION * MAX_GAME_LENGTH

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


def cuba_event_terms(game) -> dict:
    """The terms of ``cuba_event_bound``: ``decisions`` (``cuba_length_bound``), ``chance``
    (the start player once, each ship once from the deck's never-seen part, one card per law
    stack and round), ``reveals`` (every bidder's amount after the bid and after the one
    re-bid of each round's parliament) and ``total``. Raises ``ValueError`` where
    ``cuba_length_bound`` does."""
    d = game.component_data()
    rounds, n = d["setup"]["rounds"], game.num_players()
    stacks = len({law["stack"] for law in d["laws"]})
    terms = {
        "decisions": cuba_length_bound(game),
        "chance": 1 + len(d["ships"]) + stacks * rounds,
        "reveals": 2 * n * rounds,
    }
    terms["total"] = sum(terms.values())
    return terms


def cuba_event_bound(game) -> int:
    """An upper bound on the events of every Cuba game ``game`` can play (what its
    information-state tensor holds: decisions, chance outcomes and revealed bids)."""
    return cuba_event_terms(game)["total"]


def event_slots(game) -> int:
    """The events the information-state tensor of caribsim game ``game`` holds: Cuba's derived
    bound (``cuba_event_bound``), else the working limit ``MAX_EVENTS``."""
    if game.name == "cuba":
        try:
            return cuba_event_bound(game)
        except ValueError:
            pass  # free purchases from an unlimited supply: no bound
    return MAX_EVENTS


# pyspiel's clone of a state rebuilds its game from the game's string: the bounds of a Cuba
# with the shipped data are kept per options (a data folder is read again each time)
_CUBA_BOUNDS: dict[str, tuple] = {}


def _game_bounds(game) -> tuple:
    """(``game_length_bound(game)``, ``event_slots(game)``), the terms derived once."""
    if game.name != "cuba":
        return None, MAX_EVENTS
    opts = game.options()
    key = repr(sorted(opts.items())) if opts["data"] is None else None
    if key is None or key not in _CUBA_BOUNDS:
        try:
            terms = cuba_event_terms(game)
            bounds = (terms["decisions"], terms["total"])
        except ValueError:
            bounds = (None, MAX_EVENTS)  # free purchases from an unlimited supply: no bound
        if key is None:
            return bounds
        _CUBA_BOUNDS[key] = bounds
    return _CUBA_BOUNDS[key]


_registered: dict[str, pyspiel.GameType] = {}
_factories: dict[str, type] = {}


@functools.cache
def _cuba_shipped_limits() -> dict:
    opts = caribsim.load_game("cuba").options()  # the shipped cuba_setup.csv's rows
    return {k: opts[k] for k in ("supply_limited", "pesos_limited")}


# OpenSpiel parameters cannot be None (nor lists): each option whose default is None has the
# OpenSpiel value that stands for None (the game's default), in docs/embedding.md. A bool
# option has no third value: its stand-in is the default's own outcome with the shipped data,
# and the other value asks for the other outcome.
_NONE_AS: dict[str, Callable[[], dict[str, Any]]] = {
    "puerto_rico": lambda: {
        "draft": True,  # the draft, unless buildings or all_31_buildings is given
        "buildings": "",  # the violet ids separated by spaces; "": none given
        "exclusions": True,
    },
    "port_royal": lambda: {"start_player": -1},  # a seat drawn from the game's seed
    "cuba": lambda: {
        "start_player": -1,  # a chance node draws the start player
        "data": "",  # the shipped component data
        **_cuba_shipped_limits(),  # the data's cuba_setup.csv row (shipped: False)
    },
}


def _none_as(name: str) -> dict[str, Any]:
    make = _NONE_AS.get(name)
    return make() if make is not None else {}


# list options, as strings of ids separated by spaces (or commas on input: a comma would end
# the value in the game's string, pyspiel.load_game(str(game)))
_LISTS = {("puerto_rico", "buildings")}


def parameter_specification(name: str) -> dict:
    """The OpenSpiel parameters of caribsim game ``name``: every option of its constructor
    with its default, an option whose default is None with the value that stands for it."""
    sig = inspect.signature(_registry()[name].__init__)
    none_as = _none_as(name)
    out = {}
    for p in sig.parameters.values():
        if p.name == "self" or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        if p.default is None or (name, p.name) in _LISTS:
            if p.name not in none_as:
                raise TypeError(
                    f"{name}: option {p.name!r} has no OpenSpiel value for its default "
                    f"{p.default!r} (add one to _NONE_AS)"
                )
            out[p.name] = none_as[p.name]
        elif isinstance(p.default, (bool, int, float, str)):
            out[p.name] = p.default
        else:
            raise TypeError(
                f"{name}: option {p.name!r} has a default of type {type(p.default).__name__}, "
                "which no OpenSpiel parameter type holds"
            )
    return out


_START_PLAYER_DEFAULT = {
    "port_royal": "a seat drawn from the game's seed",
    "cuba": "a chance node draws the start player",
}


def _engine_options(name: str, params: dict) -> dict:
    """The engine's options for OpenSpiel parameters: the stand-ins back to None, the lists
    split. The seat of ``start_player`` is checked here, as the engine's message says None."""
    none_as = _none_as(name)
    out = {}
    for key, value in params.items():
        if (name, key) in _LISTS:
            if not isinstance(value, str):
                raise TypeError(f"{key} must be a str of ids separated by spaces, got {value!r}")
            out[key] = [x for x in re.split(r"[\s,]+", value) if x] or None
            continue
        if key in none_as and type(value) is type(none_as[key]) and value == none_as[key]:
            value = None
        elif key == "start_player" and type(value) is int:
            n = Game._check_players(params.get("players", 4))
            if not 0 <= value < n:
                raise ValueError(
                    f"start_player must be a seat 0..{n - 1} or -1 "
                    f"({_START_PLAYER_DEFAULT[name]}), got {value}"
                )
        out[key] = value
    return out


def _resolved_parameters(name: str, game, given: dict) -> dict:
    """The OpenSpiel parameters of the game as built (a stand-in resolved where the engine
    resolves it, e.g. the draft), so that ``load_game(str(game))`` builds the same game."""
    none_as = _none_as(name)
    opts = game.options()
    out = {}
    for key, value in given.items():
        value = opts.get(key, value)  # a base Puerto Rico lists no expansion option
        if value is None:
            value = none_as[key]
        elif isinstance(value, (list, tuple)):
            value = " ".join(value)
        out[key] = value
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
    defaults = parameter_specification(name)
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
        spec = parameter_specification(name)
        unknown = set(params) - set(spec)
        if unknown:
            raise ValueError(
                f"unknown parameters {sorted(unknown)} for {PREFIX}{name}; allowed: {sorted(spec)}"
            )
        given = {**spec, **params}
        self.caribsim_game = caribsim.load_game(name, **_engine_options(name, given))
        self.caribsim_name = name
        # a true bound where one exists (Cuba), else the working limit (docs/embedding.md)
        self.length_bound, self.event_slots = _game_bounds(self.caribsim_game)
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
            max_game_length=self.length_bound or MAX_GAME_LENGTH,
        )
        super().__init__(gtype, ginfo, _resolved_parameters(name, self.caribsim_game, given))

    def new_initial_state(self, seed: int = 0):
        return CaribsimState(self, self.caribsim_game.new_initial_state(seed=seed))

    def make_py_observer(self, iig_obs_type=None, params=None):
        """An observer of ``iig_obs_type`` (default: the player's observation): public
        information, the player's private information (SINGLE_PLAYER) or every player's
        (ALL_PLAYERS) or none (NONE), of the current position or, with ``perfect_recall``, of
        every event since the start. A private-only information state (perfect recall without
        public information) is refused."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        if iig_obs_type is None:
            return _Observer(self, True, pyspiel.PrivateInfoType.SINGLE_PLAYER, False)
        public, private = bool(iig_obs_type.public_info), iig_obs_type.private_info
        if iig_obs_type.perfect_recall and not public:
            raise ValueError(
                f"{PREFIX}{self.caribsim_name}: no observer for perfect_recall=True with "
                f"public_info=False, private_info={private.name} (a private-only information "
                "state); supported: public_info=True with any private_info (NONE, "
                "SINGLE_PLAYER, ALL_PLAYERS), perfect_recall True or False, and "
                "public_info=False with any private_info, perfect_recall=False"
            )
        return _Observer(self, public, private, bool(iig_obs_type.perfect_recall))


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


# the observer's own private entries of each game's observation tensor: (block, feature)
# of caribsim._obs's layout, the block's first slot being the observer's seat
_PRIVATE_FEATURES = {"cuba": ("player", "own bid")}


def _own_private_entries(game) -> np.ndarray:
    """Indices of the observing player's private facts in the game's observation tensor."""
    where = _PRIVATE_FEATURES.get(game.name)
    if where is None:
        return np.zeros(0, np.intp)
    offset = 0
    for item in game.observation_layout():
        if isinstance(item, Block) and item.name == where[0]:
            inner = 0
            for feature in item.features:
                if feature.name == where[1]:
                    return np.arange(offset + inner, offset + inner + feature.count)
                inner += feature.count
        offset += item.count
    raise LookupError(f"{game.name}: no feature {where} in the observation layout")


class _Observer:
    """A view for OpenSpiel (the PyObserver interface of open_spiel.python.observation).

    Pieces of ``tensor`` (and ``dict``), each present only where the type asks for it:
    ``observation``, with public information: the game's observation tensor from the
    player's seat (the player's own private facts in it, Cuba's pending bid, cleared with
    private_info NONE); ``private``, with ALL_PLAYERS for every seat, with SINGLE_PLAYER and
    no public information for the player (with public information his facts are in the
    observation), from the player's seat on: the seat's private fact + 1, 0 for none (only
    Cuba has private facts: its pending secret bids); ``events``, with perfect recall: two
    floats per event seen (``caribsim.infostate.encode_events``), ``game.event_slots``
    slots."""

    def __init__(self, game: CaribsimGame, public: bool, private, recall: bool):
        cg = game.caribsim_game
        self._n = cg.num_players()
        self._public, self._private, self._recall = public, private, recall
        all_seats = private == pyspiel.PrivateInfoType.ALL_PLAYERS
        own = private == pyspiel.PrivateInfoType.SINGLE_PLAYER
        # whose private facts the events and strings show
        self._viewer = infostate.ALL_PLAYERS if all_seats else None if own else infostate.PUBLIC
        private_seats = 0
        if infostate.has_private_facts(cg.name):
            private_seats = self._n if all_seats else 1 if own and not public else 0
        sizes = {
            "observation": int(np.prod(cg.observation_tensor_shape())) if public else 0,
            "private": private_seats,
            "events": 2 * game.event_slots if recall else 0,
        }
        self.tensor = np.zeros(sum(sizes.values()), np.float32)
        self.dict = {}
        start = 0
        for key, size in sizes.items():
            if size:
                self.dict[key] = self.tensor[start : start + size]
                start += size
        none = private == pyspiel.PrivateInfoType.NONE
        self._clear = _own_private_entries(cg) if public and none else None

    def set_from(self, state: CaribsimState, player: int):
        viewer = player if self._viewer is None else self._viewer
        if "observation" in self.dict:
            obs = self.dict["observation"]
            state.inner.write_observation(obs, player)
            if self._clear is not None:
                obs[self._clear] = 0.0
        if "private" in self.dict:
            facts = infostate.private_facts(state.inner)
            out = self.dict["private"]
            for j in range(out.size):
                seat = (player + j) % self._n
                out[j] = facts[seat] + 1 if seat in facts else 0.0
        if "events" in self.dict:
            infostate.encode_events(state.events, player, self._n, self.dict["events"], viewer)

    def string_from(self, state: CaribsimState, player: int):
        viewer = player if self._viewer is None else self._viewer
        if self._recall:
            return infostate.information_state_string(
                state.events, viewer, state.inner.action_to_string
            )
        if self._viewer is None and self._public:
            return infostate.observation_string(state.inner, player)
        seats = range(self._n) if viewer == infostate.ALL_PLAYERS else [player]
        facts = infostate.private_lines(state.inner, seats) if viewer != infostate.PUBLIC else []
        if self._public:
            head = "public view" if viewer == infostate.PUBLIC else "view of all players"
            return "\n".join([f"{head}\n{state.inner}", *facts])
        if viewer == infostate.PUBLIC:
            return ""  # neither public nor private information: nothing
        who = "all players" if viewer == infostate.ALL_PLAYERS else f"p{player}"
        return "\n".join([f"private view of {who}", *facts])


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
