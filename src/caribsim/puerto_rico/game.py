"""Puerto Rico: the Game object (parameters, constants, action space) over the compiled modules
(``_core``: the C rules and tables; ``_state``: the Python state class and the dict codec).

Rules: the reference in ``docs/`` / the shared rules folder; every open point is in
``docs/rules-decisions.md``. The action encoding is in ``docs/actions.md``.
"""

from __future__ import annotations

from typing import Any

from caribsim._game_base import Game
from caribsim.puerto_rico import _core, _state

__all__ = [
    "BUILDINGS",
    "DRAFT_EXCLUSIONS",
    "DRAFT_SLOTS",
    "GOODS",
    "ROLES",
    "VIOLET_BUILDINGS",
    "PuertoRicoGame",
    "PuertoRicoState",
]

GOODS = _core.GOOD_NAMES
ROLES = _core.ROLE_NAMES
BUILDINGS = _core.BUILDING_IDS
PuertoRicoState = _state.PuertoRicoState

_ROWS = {r["id"]: r for r in _core.BUILDING_ROWS}
VIOLET_BUILDINGS = tuple(
    b for b in BUILDINGS if _ROWS[b]["kind"] in ("small_violet", "large_violet")
)
"""The 31 violet kinds (17 base, 14 expansion) in table order."""
DRAFT_SLOTS = dict(_state.DRAFT_SLOT_COUNTS)
"""§8.2: cost -> number of violet slots (small places 1,2,2,3,4,5,5,6,7,8,8,9; five large places of 10)."""
DRAFT_EXCLUSIONS = (("hacienda", "forest_house"), ("office", "trading_post"))
"""OPEN-27/28: kinds that exclude each other in the draft and in a user-given set (unless
``exclusions=False``: the Czech text only recommends them)."""


def _check_building_set(buildings, exclusions=True) -> tuple:
    """Validate a user-given violet building set (§8.2 slot and cost rules, exclusions)."""
    if isinstance(buildings, (str, bytes)) or not hasattr(buildings, "__iter__"):
        raise TypeError(
            f"buildings must be a list of violet building ids, got {type(buildings).__name__}"
        )
    ids = list(buildings)
    for b in ids:
        if not isinstance(b, str):
            raise TypeError(f"buildings must hold building id strings, got {b!r}")
        if b not in VIOLET_BUILDINGS:
            raise ValueError(
                f"buildings: {b!r} is not a violet building id; allowed: {list(VIOLET_BUILDINGS)}"
            )
    if len(set(ids)) != len(ids):
        dup = sorted({b for b in ids if ids.count(b) > 1})
        raise ValueError(f"buildings: each kind at most once, repeated: {dup}")
    per_cost: dict[int, list[str]] = {}
    for b in ids:
        per_cost.setdefault(int(_ROWS[b]["cost"]), []).append(b)
    for cost, slots in sorted(DRAFT_SLOTS.items()):
        got = per_cost.get(cost, [])
        if len(got) != slots:
            raise ValueError(
                f"buildings: the set needs exactly {slots} violet kind(s) of cost {cost} "
                f"(12 small places cost 1,2,2,3,4,5,5,6,7,8,8,9 and 5 large cost 10), "
                f"got {len(got)}: {got}"
            )
    for x, y in DRAFT_EXCLUSIONS if exclusions else ():
        if x in ids and y in ids:
            raise ValueError(
                f"buildings: {x} and {y} exclude each other (OPEN-27/28); "
                f"exclusions=False allows both"
            )
    return tuple(b for b in VIOLET_BUILDINGS if b in ids)


class PuertoRicoGame(Game):
    """Puerto Rico for 2-5 players (2 = the official 2-player variant).

    Options:
        players: 2..5 (default 4).
        all_colonists_and_vp: the §8.3 variant with all 100 colonists and 122 VP, where only a
            full city ends the game (default False).
        expansion: Expansion I, "New buildings + forests" (§8; default False).
        draft: with the expansion, the §8.2 building draft runs at setup as decisions of the
            players (``draft <building>`` actions). Default (None): True unless ``buildings``
            or ``all_31_buildings`` is given.
        buildings: with the expansion and no draft, the 17 violet kinds in play (12 small whose
            costs are 1,2,2,3,4,5,5,6,7,8,8,9 and 5 large of cost 10; not Hacienda with Forest
            house, nor Office with Trading post, unless ``exclusions=False``).
        all_31_buildings: the §8.3.1 variant: one copy of each of the 31 violet kinds, no draft.
        exclusions: with the expansion, whether Hacienda excludes Forest house and Office
            excludes Trading post in the draft and in ``buildings`` (§8.2; the Czech text only
            recommends it). Default (None): True. False lets the draft and a given set hold both
            (the two same-cost slots may take both kinds).
    """

    _state = _state  # the compiled state module (Game.state_from_dict reads through it)
    name = "puerto_rico"

    def __init__(
        self,
        players: int = 4,
        all_colonists_and_vp: bool = False,
        expansion: bool = False,
        draft=None,
        buildings=None,
        all_31_buildings: bool = False,
        exclusions=None,
    ):
        players = self._check_players(players)
        if not isinstance(all_colonists_and_vp, bool):
            raise TypeError(
                f"all_colonists_and_vp must be a bool, got {type(all_colonists_and_vp).__name__}"
            )
        if not isinstance(expansion, bool):
            raise TypeError(f"expansion must be a bool, got {type(expansion).__name__}")
        if draft is not None and not isinstance(draft, bool):
            raise TypeError(f"draft must be a bool or None, got {type(draft).__name__}")
        if not isinstance(all_31_buildings, bool):
            raise TypeError(
                f"all_31_buildings must be a bool, got {type(all_31_buildings).__name__}"
            )
        if exclusions is not None and not isinstance(exclusions, bool):
            raise TypeError(f"exclusions must be a bool or None, got {type(exclusions).__name__}")
        if not expansion and (
            draft is not None or buildings is not None or all_31_buildings or exclusions is not None
        ):
            raise ValueError(
                "draft, buildings, all_31_buildings and exclusions need expansion=True"
            )
        exclusions = exclusions is not False
        chosen = None
        if expansion:
            if all_31_buildings and buildings is not None:
                raise ValueError(
                    "all_31_buildings uses every violet kind: do not give buildings as well"
                )
            if buildings is not None:
                chosen = _check_building_set(buildings, exclusions)
            if draft is None:
                draft = chosen is None and not all_31_buildings
            elif draft and (chosen is not None or all_31_buildings):
                raise ValueError(
                    "draft=True cannot be combined with buildings or all_31_buildings "
                    "(the draft chooses the set)"
                )
            elif not draft and chosen is None and not all_31_buildings:
                raise ValueError(
                    "draft=False needs buildings=[...] (17 violet kinds) or all_31_buildings=True"
                )
        self._players = players
        self._all_colonists_and_vp = all_colonists_and_vp
        self._expansion = expansion
        self._draft = bool(draft) if expansion else False
        self._buildings = chosen
        self._all_31 = all_31_buildings
        self._exclusions = exclusions
        probe = _state.new_state(self, players, self._option_bits(), 0, self._violet_set())
        self._capacities = tuple(s["capacity"] for s in probe.to_dict()["cargo_ships"])
        self._n_actions = _state.num_actions_for(self._option_bits())
        self._action_names = _state.action_names(self._capacities, self._n_actions)

    # --- parameters ---------------------------------------------------------
    def options(self) -> dict:
        """The game's options. Base games list players and all_colonists_and_vp only (as
        before the expansion existed); expansion games add the expansion options
        (``exclusions`` only when False, as before that option existed)."""
        opts: dict[str, Any] = {
            "players": self._players,
            "all_colonists_and_vp": self._all_colonists_and_vp,
        }
        if self._expansion:
            opts.update(
                expansion=True,
                draft=self._draft,
                buildings=list(self._buildings) if self._buildings is not None else None,
                all_31_buildings=self._all_31,
            )
            if not self._exclusions:
                opts["exclusions"] = False
        return opts

    def _option_bits(self) -> int:
        bits = _state.OPTION_ALL_COLONISTS_AND_VP if self._all_colonists_and_vp else 0
        if self._expansion:
            bits |= _state.OPTION_EXPANSION
            if self._draft:
                bits |= _state.OPTION_DRAFT
            if self._all_31:
                bits |= _state.OPTION_ALL_31
            if not self._exclusions:
                bits |= _state.OPTION_NO_EXCLUSIONS
        return bits

    def _violet_set(self) -> int:
        return _state.building_mask(self._buildings) if self._buildings is not None else 0

    @property
    def expansion(self) -> bool:
        return self._expansion

    def num_distinct_actions(self) -> int:
        """Size of the flat action space (decisions and chance outcomes share it)."""
        return self._n_actions

    def max_chance_outcomes(self) -> int:
        return len(GOODS)

    def observation_tensor_shape(self) -> tuple:
        return (_state.observation_size(self._players, self._option_bits()),)

    def observation_layout(self) -> list:
        """The observation's features in order (``caribsim._obs.Feature``/``Block`` rows with
        their true bounds; docs/puerto_rico.md)."""
        return _observation_layout(self)

    def cargo_ship_capacities(self) -> tuple:
        return self._capacities

    def action_to_string(self, action: int) -> str:
        return _state._action_name(action, self._capacities, self._n_actions)

    def string_to_action(self, name: str) -> int:
        key = self._action_key(name)
        try:
            return self._action_names.index(key)
        except ValueError:
            raise ValueError(f"unknown action name {name!r}; see docs/actions.md") from None

    # --- states -------------------------------------------------------------
    def new_initial_state(self, seed: int = 0) -> PuertoRicoState:
        """The position after setup (§1.4); it starts at the chance nodes that turn up
        the first face-up plantations. ``seed`` seeds the state's own RNG (used by
        ``resolve_chance`` and playouts)."""
        return _state.new_state(self, self._players, self._option_bits(), seed, self._violet_set())


def _make_game(options):
    return PuertoRicoGame(**options)


# --------------------------------------------------------------------------------------
# The observation layout and its true bounds (the order of write_observation in _core.pyx;
# the table in docs/puerto_rico.md is generated from this and checked by the tests)
# --------------------------------------------------------------------------------------
def _setup_rows():
    return {int(r["players"]): r for r in _core._read_csv("puerto_rico_setup.csv")}


def _observation_layout(game):
    from caribsim._obs import INF, Block, Feature

    n = game._players
    su = _setup_rows()[n]
    expansion = game._expansion
    plant = [int(su["plantations_" + g]) for g in GOODS]
    # the plantations of a kind: a tile may be anywhere (the start tiles never leave their
    # islands in a game, but positions built with state_from_dict may hold them elsewhere)
    loose = plant
    own_tiles = [min(12, plant[k]) for k in range(5)]  # at most the 12 island spaces
    goods = [int(su["goods_" + g]) for g in GOODS]
    quarries = int(su["quarries"])
    forests = 12 if expansion else 0
    colonists = 100 if game._all_colonists_and_vp else int(su["colonists_total"])
    vp_pool = 122 if game._all_colonists_and_vp else int(su["vp_total"])
    bank = int(su["bank_doubloons_physical"])  # the cap of the money features (OPEN-6)
    face_up = int(su["face_up_plantations"])
    selections = int(su["role_selections_per_round"])
    n_ships = int(su["cargo_ships"])
    caps = [int(c) for c in su["cargo_ship_capacities"].split(";")] + [0] * 3
    cards = [1] * 6 + [1 if i < int(su["prospector_cards"]) else 0 for i in range(2)]
    rows = _core.BUILDING_ROWS
    violet = [r["kind"] in ("small_violet", "large_violet") for r in rows]
    if not expansion:
        maybe = [r["set"] == "base" for r in rows]  # BASE_MASK
    elif game._all_31 or game._draft:
        maybe = [True] * len(rows)  # the draft may pick any violet kind
    else:
        chosen = set(game._buildings)
        maybe = [not v or r["id"] in chosen for r, v in zip(rows, violet)]
    if expansion:  # production: the 6 base rows
        maybe = [
            m and (r["set"] == "base" or violet[b]) for b, (r, m) in enumerate(zip(rows, maybe))
        ]
    copies = [
        0
        if not maybe[b]
        else 1
        if (game._all_31 and violet[b])
        else int(r["copies_2p" if n == 2 else "copies_3to5p"])
        for b, r in enumerate(rows)
    ]
    circles = [int(r["circles"]) if maybe[b] else 0 for b, r in enumerate(rows)]
    owned = [1 if maybe[b] else 0 for b in range(len(rows))]
    tiles_high = [*own_tiles, min(12, quarries), forests]
    last_slot = 6 + max(b for b in range(len(rows)) if maybe[b] and int(rows[b]["circles"]) > 0)
    phases = [1] * 10
    phases[6] = 1 if cards[6] else 0  # no Prospector card: no Prospector phase
    player = (
        Feature(
            "doubloons", 1, 0, INF, bank, "unlimited bank (OPEN-6); cap: the published game's coins"
        ),
        Feature(
            "vp chips", 1, 0, INF, vp_pool, "recorded beyond the pool (OPEN-9); cap: the VP pool"
        ),
        Feature("goods", 5, 0, goods, note="per kind: the goods of that kind"),
        Feature(
            "island tiles",
            7,
            0,
            tiles_high,
            note="per plantation kind, quarry, forest: the tiles a player can hold, at most 12 spaces",
        ),
        Feature("manned tiles", 6, 0, tiles_high[:6], note="tiles of a kind carrying a colonist"),
        Feature("san juan", 1, 0, colonists, note="colonists: all colonists of the game"),
        Feature("owns building", 37, 0, owned, note="0 for buildings not in this game"),
        Feature("building colonists", 37, 0, circles, note="the building's circles"),
        Feature("is governor", 1),
        Feature("is role chooser", 1),
        Feature("used wharf", 1),
        Feature("to act", 1),
    )
    layout = [
        Block("player", n, player),
        Feature("phase one-hot", 10, 0, phases),
        Feature("step one-hot (base steps)", 14),
    ]
    card = []
    for k in range(8):
        card += [
            Feature(
                f"{ROLES[k]} doubloons",
                1,
                0,
                INF if cards[k] else 0,
                bank if cards[k] else None,
                "doubloons on the card: unlimited bank (OPEN-6); 0 if not in play",
            ),
            Feature(f"{ROLES[k]} available", 1, 0, cards[k]),
        ]
    layout += card
    for k, g in enumerate(GOODS):
        layout += [
            Feature(f"{g} face-up", 1, 0, min(face_up, loose[k]), note="N + 1 turned up"),
            Feature(f"{g} stack", 1, 0, loose[k], note="the plantations of the kind"),
            Feature(f"{g} discard", 1, 0, loose[k]),
            Feature(f"{g} supply", 1, 0, goods[k]),
            Feature(f"{g} trading house", 1, 0, min(4, goods[k]), note="4 spaces"),
            Feature(f"{g} craftsman received", 1),
            Feature(f"{g} kept", 1),
        ]
    for i in range(3):
        present = 1 if i < n_ships else 0
        layout += [
            Feature(f"ship {i} capacity", 1, caps[i], caps[i], note="fixed for the game"),
            Feature(f"ship {i} load", 1, 0, caps[i]),
            Feature(f"ship {i} good one-hot", 5, 0, present),
        ]
    layout += [
        Feature("building supply", 37, 0, copies, note="copies in this game"),
        Feature("quarries", 1, 0, quarries),
        Feature("to draw", 1, 0, face_up),
        Feature(
            "colonist supply",
            1,
            0,
            colonists - int(su["colonists_ship_start"]),
            note="its setup value: it only gives colonists (a Black-market colonist returns one it gave)",
        ),
        Feature("colonist ship", 1, 0, colonists),
        Feature("to place", 1, 0, colonists),
        Feature("last mayor slot", 1, 0, last_slot, note="6 + the last building with a circle"),
        Feature("vp pool", 1, 0, vp_pool),
        Feature("trading house count", 1, 0, 4),
        Feature("selections done", 1, 0, selections),
        Feature("idle captain turns", 1, 0, n),
        Feature("end triggered", 1),
        Feature("hacienda used", 1),
        Feature("captain bonus given", 1),
        Feature("warehouse kinds left", 1, 0, 3),
        Feature("last warehouse kind + 1", 1, 0, 5),
        Feature("last tile one-hot", 7, 0, [1] * 6 + [1 if expansion else 0]),
        Feature("last building one-hot", 37, 0, owned),
    ]
    if expansion:
        layout += [
            Block("small wharf used", n, (Feature("small wharf used", 1),)),
            Feature(
                "step one-hot (expansion steps)",
                5,
                0,
                [1 if game._draft else 0, 1, 1, 1, 1],
                note="draft, library, black market, small wharf, guest",
            ),
            Feature(
                "violet kind in play",
                31,
                [1 if game._all_31 else 0] * 31 if game._all_31 or game._draft else owned[6:],
                owned[6:],
            ),
            Feature("forests", 1, 0, 12),
        ]
        for k, g in enumerate(GOODS):
            layout += [
                Feature(
                    f"{g} removed", 1, 0, loose[k], note="face-up plantations removed by forests"
                ),
                Feature(f"{g} craftsman amount", 1, 0, goods[k]),
                Feature(
                    f"{g} single barrels kept", 1, 0, min(4, goods[k]), note="1 + Storehouse 3"
                ),
            ]
        layout += [
            Feature("library done", 1),
            Feature("privilege left", 1, 0, 2),
            Feature("black market items left", 1, 0, 3),
            Feature("black market last + 1", 1, 0, 3),
            Feature("small wharf goods", 1, 0, sum(goods)),
            Feature("small wharf last + 1", 1, 0, 5),
            Feature("barrels left", 1, 0, 4),
            Feature("last keep + 1", 1, 0, 5),
        ]
    return layout
