"""Port Royal: the Game object (parameters, constants, action space) over the compiled core.

Rules: the shared rules reference (port_royal.md) with its Decisions table; the engine's
encoding, state dict and rule decisions are in ``docs/port_royal.md``.
"""
from __future__ import annotations

from caribsim.port_royal import _core, _state
from caribsim._game_base import Game

__all__ = ['CARDS', 'EXPEDITIONS', 'COLOURS', 'PortRoyalState', 'PortRoyalGame']

CARDS = _core.CARD_IDS
EXPEDITIONS = _core.EXPEDITION_IDS
COLOURS = _core.COLOUR_NAMES
PortRoyalState = _state.PortRoyalState


class PortRoyalGame(Game):
    """Port Royal (the base card game) for 2–5 players.

    Options:
        players: 2..5 (default 4); the anchor+cross+house expedition is used only with 5.
        require_expedition: the §9.2 variant end: 12 VP *and* a fulfilled expedition trigger
            the end, and only players with an expedition can win (default False).
        start_player: the start player's seat, or None (default) for a seat drawn from the
            game's seed.
    """

    _core = _state      # the compiled module with state_from_dict (Game's interface)
    name = "port_royal"

    def __init__(self, players: int = 4, require_expedition: bool = False, start_player: int | None = None):
        players = self._check_players(players)
        if not isinstance(require_expedition, bool):
            raise TypeError(f"require_expedition must be a bool, got {type(require_expedition).__name__}")
        if start_player is not None:
            start_player = _state._int_in(start_player, "start_player", 0, players - 1)
        self._players = players
        self._require_expedition = require_expedition
        self._start_player = start_player

    # --- parameters ---------------------------------------------------------
    def options(self) -> dict:
        return {"players": self._players, "require_expedition": self._require_expedition,
                "start_player": self._start_player}

    def _option_bits(self) -> int:
        return _state.OPTION_REQUIRE_EXPEDITION if self._require_expedition else 0

    def num_distinct_actions(self) -> int:
        """Size of the flat action space (decisions and chance outcomes share it)."""
        return _state.NUM_DISTINCT_ACTIONS

    def max_chance_outcomes(self) -> int:
        """Chance outcomes are card variants (62)."""
        return len(CARDS)

    def observation_tensor_shape(self) -> tuple:
        return (_state.OBSERVATION_SIZE,)

    def action_to_string(self, action: int) -> str:
        return _state._action_name(action)

    def string_to_action(self, name: str) -> int:
        return _state.string_to_action(name)

    # --- states -------------------------------------------------------------
    def new_initial_state(self, seed: int = 0) -> PortRoyalState:
        """The position after setup (§1.3); it starts at the chance nodes that deal the
        starting coins. ``seed`` seeds the state's own RNG (the start player unless the
        game fixes it, ``resolve_chance`` and playouts)."""
        return _state.new_state(self, self._players, self._option_bits(), self._start_player, seed)


def _make_game(options):
    return PortRoyalGame(**options)
