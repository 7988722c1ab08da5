"""Puerto Rico: the Game object (parameters, constants, action space) over the compiled core.

Rules: the reference in ``docs/`` / the shared rules folder; every open point is in
``docs/rules-decisions.md``. The action encoding is in ``docs/actions.md``.
"""
from __future__ import annotations

import json
import operator

from caribsim import _puerto_rico as _core

GOODS = _core.GOOD_NAMES
ROLES = _core.ROLE_NAMES
BUILDINGS = _core.BUILDING_IDS
PuertoRicoState = _core.PuertoRicoState


class PuertoRicoGame:
    """Puerto Rico for 2–5 players (2 = the official 2-player variant).

    Options:
        players: 2..5 (default 4).
        all_colonists_and_vp: the §8.3 variant with all 100 colonists and 122 VP, where only a
            full city ends the game (default False).
        expansion: the "New buildings + forests" expansion (not available yet: raises).
    """

    name = "puerto_rico"

    def __init__(self, players: int = 4, all_colonists_and_vp: bool = False, expansion: bool = False):
        if isinstance(players, bool):
            raise TypeError("players must be an int 2..5, got bool")
        try:
            players = operator.index(players)
        except TypeError:
            raise TypeError(f"players must be an int 2..5, got {type(players).__name__}") from None
        if not 2 <= players <= 5:
            raise ValueError(f"players must be 2..5, got {players}")
        if not isinstance(all_colonists_and_vp, bool):
            raise TypeError(f"all_colonists_and_vp must be a bool, got {type(all_colonists_and_vp).__name__}")
        if not isinstance(expansion, bool):
            raise TypeError(f"expansion must be a bool, got {type(expansion).__name__}")
        if expansion:
            raise ValueError("expansion=True is not available yet: only the base game is implemented")
        self._players = players
        self._all_colonists_and_vp = all_colonists_and_vp
        probe = _core.new_state(self, players, self._option_bits(), 0)
        self._capacities = tuple(s["capacity"] for s in probe.to_dict()["cargo_ships"])
        self._action_names = _core.action_names(self._capacities)

    # --- parameters ---------------------------------------------------------
    def options(self) -> dict:
        return {"players": self._players, "all_colonists_and_vp": self._all_colonists_and_vp}

    def _option_bits(self) -> int:
        return _core.OPTION_ALL_COLONISTS_AND_VP if self._all_colonists_and_vp else 0

    def num_players(self) -> int:
        return self._players

    def num_distinct_actions(self) -> int:
        """Size of the flat action space (decisions and chance outcomes share it)."""
        return _core.NUM_DISTINCT_ACTIONS

    def max_chance_outcomes(self) -> int:
        return len(GOODS)

    def observation_tensor_shape(self) -> tuple:
        return (_core.observation_size(self._players),)

    def cargo_ship_capacities(self) -> tuple:
        return self._capacities

    def action_to_string(self, action: int) -> str:
        return _core._action_name(action, self._capacities)

    def string_to_action(self, name: str) -> int:
        if not isinstance(name, str):
            raise TypeError(f"action name must be a str, got {type(name).__name__}")
        key = " ".join(name.lower().split())
        try:
            return self._action_names.index(key)
        except ValueError:
            raise ValueError(f"unknown action name {name!r}; see docs/actions.md") from None

    # --- states -------------------------------------------------------------
    def new_initial_state(self, seed: int = 0) -> PuertoRicoState:
        """The position after setup (§1.4); it starts at the chance nodes that turn up
        the first face-up plantations. ``seed`` seeds the state's own RNG (used by
        ``resolve_chance`` and playouts)."""
        return _core.new_state(self, self._players, self._option_bits(), seed)

    def state_from_dict(self, d: dict) -> PuertoRicoState:
        return _core.state_from_dict(self, d)

    def deserialize_state(self, text: str) -> PuertoRicoState:
        if not isinstance(text, (str, bytes)):
            raise TypeError(f"serialized state must be str, got {type(text).__name__}")
        try:
            d = json.loads(text)
        except ValueError as e:
            raise ValueError(f"serialized state is not valid JSON: {e}") from None
        return _core.state_from_dict(self, d)

    def __eq__(self, other):
        return isinstance(other, PuertoRicoGame) and other.options() == self.options()

    def __hash__(self):
        return hash(tuple(self.options().items()))

    def __reduce__(self):
        return (_make_game, (self.options(),))

    def __repr__(self):
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"PuertoRicoGame({opts})"


def _make_game(options):
    return PuertoRicoGame(**options)
