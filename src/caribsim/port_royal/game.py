"""Port Royal: the Game object (parameters, constants, action space) over the compiled core.

Rules: the shared rules reference (port_royal.md) with its Decisions table; the engine's
encoding, state dict and rule decisions are in ``docs/port_royal.md``.
"""

from __future__ import annotations

from caribsim._game_base import Game
from caribsim.port_royal import _core, _state

__all__ = ["CARDS", "COLOURS", "EXPEDITIONS", "PortRoyalGame", "PortRoyalState"]

CARDS = _core.CARD_IDS
EXPEDITIONS = _core.EXPEDITION_IDS
COLOURS = _core.COLOUR_NAMES
PortRoyalState = _state.PortRoyalState


class PortRoyalGame(Game):
    """Port Royal (the base card game) for 2-5 players.

    Options:
        players: 2..5 (default 4); the anchor+cross+house expedition is used only with 5.
        require_expedition: the §9.2 variant end: 12 VP *and* a fulfilled expedition trigger
            the end, and only players with an expedition can win (default False).
        start_player: the start player's seat, or None (default) for a seat drawn from the
            game's seed.
    """

    _state = _state  # the compiled state module (Game.state_from_dict reads through it)
    name = "port_royal"

    def __init__(
        self, players: int = 4, require_expedition: bool = False, start_player: int | None = None
    ):
        players = self._check_players(players)
        if not isinstance(require_expedition, bool):
            raise TypeError(
                f"require_expedition must be a bool, got {type(require_expedition).__name__}"
            )
        if start_player is not None:
            start_player = _state._int_in(start_player, "start_player", 0, players - 1)
        self._players = players
        self._require_expedition = require_expedition
        self._start_player = start_player

    # --- parameters ---------------------------------------------------------
    def options(self) -> dict:
        return {
            "players": self._players,
            "require_expedition": self._require_expedition,
            "start_player": self._start_player,
        }

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

    def observation_layout(self) -> list:
        """The observation's features in order (``caribsim._obs.Feature``/``Block`` rows with
        their true bounds; docs/port_royal.md)."""
        return _observation_layout(self)

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


# --------------------------------------------------------------------------------------
# The observation layout and its true bounds (the order of write_observation in _core.pyx;
# the table in docs/port_royal.md is generated from this and checked by the tests)
# --------------------------------------------------------------------------------------
def _observation_layout(game):
    from caribsim._obs import Block, Feature

    n = game._players
    rows = _core.CARD_ROWS
    # the 5-player expedition is in the box with fewer players (§1.3)
    count = [
        0 if (r["category"] == "expedition" and int(r["min_players"]) > n) else int(r["count"])
        for r in rows
    ]
    cat = [r["category"] for r in rows]
    cards = sum(count)
    displayable = [c if k in ("person", "expedition") else 0 for c, k in zip(count, cat)]
    vp_max = sum(c * int(r["vp"]) for c, r in zip(displayable, rows))
    swords_max = sum(
        c * int(r["swords"]) for c, r in zip(displayable, rows) if r["category"] == "person"
    )
    expeditions = sum(c for c, k in zip(count, cat) if k == "expedition")
    governors = sum(c for c, r in zip(count, rows) if r["ability"] == "GOVERNOR")
    in_area = [c for c, k in zip(count, cat) if k == "expedition"]
    player = (
        Feature("present", 1, 1, 1),
        Feature("coins", 1, 0, cards, note="coin cards: at most every card of the game"),
        Feature("vp", 1, 0, vp_max, note="every person's and expedition's VP"),
        Feature("swords", 1, 0, swords_max, note="every Sailor's and Pirate's swords"),
        Feature("expeditions", 1, 0, expeditions),
        Feature("is active", 1),
        Feature("to act", 1),
        Feature("is start player", 1),
        Feature(
            "display per variant",
            len(rows),
            0,
            displayable,
            note="persons and expeditions: their copies",
        ),
    )
    return [
        Block("player", 5, player, present=n),
        Feature(
            "harbour per variant",
            len(rows),
            0,
            [c if k in ("ship", "person") else 0 for c, k in zip(count, cat)],
            note="ships and persons",
        ),
        Feature("expedition area", len(in_area), 0, [1 if c else 0 for c in in_area]),
        Feature("pending card one-hot", len(rows), 0, [1 if c else 0 for c in count]),
        Feature("unseen per variant", len(rows), 0, count, note="deck minus every face-up card"),
        Feature("discard per variant", len(rows), 0, count),
        Feature("step one-hot", 5),
        Feature("phase one-hot", 4),
        Feature("draw pile", 1, 0, cards),
        Feature("discard pile", 1, 0, cards),
        Feature(
            "revealed this turn",
            1,
            0,
            127,
            note="saturates at 127 (a reshuffle may reveal a tax card again in one turn)",
        ),
        Feature("picks left", 1, 0, 3 + governors, note="3 (5 colours) + 1 per Governor"),
        Feature("take-turns done", 1, 0, n - 1, note="reset when the n-th ends"),
        Feature("end triggered", 1),
        Feature(
            "require expedition option",
            1,
            int(game._require_expedition),
            int(game._require_expedition),
        ),
        Feature("players", 1, n, n),
    ]
