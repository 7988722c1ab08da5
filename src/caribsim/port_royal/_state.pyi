"""Type stubs for the compiled Port Royal state module ``caribsim.port_royal._state``
(pyx/caribsim/port_royal/_state.pyx), also importable under its former name
``caribsim._port_royal``.

The state API is ``PortRoyalState`` (made by ``PortRoyalGame``); the module functions are
used by ``caribsim.port_royal``. The card tables and their names are the core's
(``caribsim.port_royal._core``), re-exported here. Action ids, the dict format and the rule
decisions: docs/port_royal.md.
"""

from typing import Any, NoReturn, SupportsIndex

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from caribsim._game import GameState
from caribsim.port_royal import PortRoyalGame

# --- constants --------------------------------------------------------------
# (CARD_IDS .. RESUME_NAMES, load_tables: the core's, re-exported)
CARD_IDS: tuple[str, ...]
"""The 62 card variants (rows of port_royal_deck.csv), in csv order."""
CARD_ROWS: tuple[dict[str, str], ...]
"""The csv rows as dicts of strings."""
EXPEDITION_IDS: tuple[str, ...]
"""The 6 expedition variants, in csv order (expedition index 0..5)."""
COLOUR_NAMES: tuple[str, str, str, str, str]
"""yellow, blue, green, red, black."""
SYMBOL_NAMES: tuple[str, str, str]
"""anchor, cross, house."""
PHASE_NAMES: tuple[str, ...]
"""setup, discover, trade, end (``state.phase()`` values)."""
STEP_NAMES: tuple[str, ...]
"""discover, repel, take, chance, terminal (``state.step_name()`` values)."""
OP_NAMES: tuple[str, ...]
"""reveal, draw, pay, fee: the kinds of chance events (card moves)."""
RESUME_NAMES: tuple[str, ...]
"""The continuations after the queue of card moves (state dict ``resume``)."""
ACTION_NAMES: tuple[str, ...]
"""Every action name, indexed by id."""
NUM_DISTINCT_ACTIONS: int
"""Size of the flat action space (291)."""
CARD_ACTION_BASE: int
"""Chance outcomes are CARD_ACTION_BASE + card variant."""
TAKE_ACTION_BASE: int
"""``take <card>`` is TAKE_ACTION_BASE + card variant."""
EXPEDITION_ACTION_BASE: int
"""``fulfil ...`` is EXPEDITION_ACTION_BASE + expedition * 27 + joker pattern."""
NUM_JOKER_PATTERNS: int
OBSERVATION_SIZE: int
OPTION_REQUIRE_EXPEDITION: int
DICT_VERSION: int

__test__: dict[str, str]

# --- module functions -------------------------------------------------------
def load_tables() -> None:
    """Read port_royal_deck.csv into the C tables (runs once at import)."""

def new_state(
    game: PortRoyalGame, players: int, options: int, start_player: int | None, seed: SupportsIndex
) -> PortRoyalState:
    """A new game after setup, at the chance nodes that deal the starting coins."""

def state_from_dict(game: PortRoyalGame, d: dict[str, Any]) -> PortRoyalState:
    """A validated state from ``to_dict`` data (raises ValueError/TypeError)."""

def string_to_action(name: str) -> int: ...
def _int_in(value: object, what: str, lo: int, hi: int) -> int: ...
def _action_id(action: object) -> int: ...
def _action_name(action: SupportsIndex) -> str: ...
def _check_consistency(st: PortRoyalState) -> None: ...
def _audited_random_games(
    st: PortRoyalState, n_games: int, seed: int, max_steps: int = ...
) -> tuple[int, int, int, list[tuple[int, int, int]]]:
    """Random games in C with every position audited: (ended, steps, longest, violations)."""

# --- the state --------------------------------------------------------------
@disjoint_base
class PortRoyalState(GameState):
    """A Port Royal position: one C struct; ``clone`` is a memcpy."""

    @property
    def game(self) -> PortRoyalGame: ...
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Always raises TypeError: use game.new_initial_state(seed) or game.state_from_dict(d)."""

    def current_player(self) -> int:
        """The seat to act; -1 (CHANCE) at a chance node; -4 (TERMINAL) at the end."""

    def is_terminal(self) -> bool: ...
    def is_chance_node(self) -> bool: ...
    def legal_actions(self, player: int | None = None) -> list[int]:
        """Sorted legal ids ([] if ``player`` is given and is not the player to act)."""

    def legal_actions_mask(self, player: int | None = None) -> npt.NDArray[np.uint8]: ...
    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(card id, probability) at a chance node, else []."""

    def chance_event(self) -> tuple[str, int] | None:
        """(kind, seat) of the pending chance event: reveal, draw, pay or fee; else None."""

    def apply_action(self, action: SupportsIndex, /) -> None: ...
    def resolve_chance(self) -> int: ...
    def child(self, action: SupportsIndex, /) -> PortRoyalState: ...
    def clone(self) -> PortRoyalState: ...
    def __copy__(self) -> PortRoyalState: ...
    def __deepcopy__(self, memo: Any) -> PortRoyalState: ...
    def determinize(
        self, player: SupportsIndex, seed: SupportsIndex | None = None
    ) -> PortRoyalState:
        """A copy with coin faces and the draw pile resampled (same-generation cards only)."""

    def history(self) -> list[int]: ...
    def returns(self) -> list[float]: ...
    def scores(self) -> list[dict[str, int]]:
        """Per seat: person_vp, expedition_vp, total, expeditions, coins, swords, tiebreak."""

    def num_players(self) -> int: ...
    def phase(self) -> str: ...
    def step_name(self) -> str: ...
    def active_player(self) -> int: ...
    def start_player(self) -> int: ...
    def action_to_string(self, action: SupportsIndex) -> str: ...
    def string_to_action(self, name: str) -> int: ...
    def observation_tensor(self, player: int | None = None) -> npt.NDArray[np.float32]: ...
    def write_observation(
        self, out: npt.NDArray[np.float32], player: int | None = None
    ) -> None: ...
    def to_dict(self) -> dict[str, Any]: ...
    def serialize(self) -> str: ...
    def __reduce__(self) -> tuple[Any, tuple[PortRoyalGame, str]]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> NoReturn: ...
