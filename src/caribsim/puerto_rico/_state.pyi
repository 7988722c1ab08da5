"""Type stubs for the compiled Puerto Rico state module (pyx/caribsim/puerto_rico/_state.pyx),
also importable under its old name ``caribsim._puerto_rico``.

The state API is ``PuertoRicoState`` (made by ``PuertoRicoGame``); the module
functions are used by ``caribsim.puerto_rico``. Action ids: docs/actions.md;
the dict format: docs/state-dict.md. The C rules and tables are in ``_core``.
"""

from collections.abc import Sequence
from typing import Any, NoReturn, SupportsIndex

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from caribsim._game import GameState
from caribsim.puerto_rico import PuertoRicoGame

# --- constants --------------------------------------------------------------
# the core's Python names, re-exported (this module is also the old caribsim._puerto_rico)
from caribsim.puerto_rico._core import BUILDING_IDS as BUILDING_IDS
from caribsim.puerto_rico._core import BUILDING_ROWS as BUILDING_ROWS
from caribsim.puerto_rico._core import GOOD_NAMES as GOOD_NAMES
from caribsim.puerto_rico._core import PHASE_NAMES as PHASE_NAMES
from caribsim.puerto_rico._core import ROLE_NAMES as ROLE_NAMES
from caribsim.puerto_rico._core import STEP_NAMES as STEP_NAMES
from caribsim.puerto_rico._core import TILE_NAMES as TILE_NAMES
from caribsim.puerto_rico._core import load_tables as load_tables

NUM_DISTINCT_ACTIONS: int
"""Size of the base game's flat action space (143)."""
NUM_EXPANSION_ACTIONS: int
"""Size of the action space with Expansion I (283; ids 143.. appended)."""
OPTION_ALL_COLONISTS_AND_VP: int
"""Option bit for the "all colonists and all VP" variant."""
OPTION_EXPANSION: int
"""Option bit for Expansion I."""
OPTION_ALL_31: int
"""Option bit for the "all 31 violet buildings" variant (expansion)."""
OPTION_DRAFT: int
OPTION_NO_EXCLUSIONS: int
"""Option bit: the building draft runs at setup (expansion)."""
FIRST_VIOLET_BUILDING: int
"""Building id of the first violet kind (6); draft ids are 143 + (b - 6)."""
DRAFT_SLOT_COUNTS: dict[int, int]
"""§8.2: cost -> number of violet slots of that cost."""
DICT_VERSION: int
"""Version of the ``to_dict`` format (1)."""

__test__: dict[str, str]

# --- module functions -------------------------------------------------------
def action_names(capacities: Sequence[int], n_actions: int = ...) -> list[str]:
    """All action names, indexed by id, for a game with these cargo-ship capacities
    (n_actions: 143 for the base game, NUM_EXPANSION_ACTIONS with the expansion)."""

def num_actions_for(options: int) -> int:
    """The action-space size for a set of option bits."""

def building_mask(ids: Sequence[str]) -> int:
    """Bit mask of building ids."""

def new_state(
    game: PuertoRicoGame, players: int, options: int, seed: SupportsIndex, violet_set: int = ...
) -> PuertoRicoState:
    """A new game after setup, at the chance nodes of the first face-up plantations
    (violet_set: the violet kinds in play for an expansion game without draft)."""

def state_from_dict(game: PuertoRicoGame, d: dict[str, Any]) -> PuertoRicoState:
    """A validated state from ``to_dict`` data (raises ValueError/TypeError)."""

def observation_size(players: int, options: int = ...) -> int:
    """Length of the observation vector for a player count and option bits."""

def _action_id(action: object, n_actions: int = ...) -> int: ...
def _slot_label(slot: int) -> str: ...
def _action_name(action: SupportsIndex, capacities: Sequence[int], n_actions: int = ...) -> str: ...

# --- the state --------------------------------------------------------------
@disjoint_base
class PuertoRicoState(GameState):
    """A Puerto Rico position: one C struct; ``clone`` is a memcpy."""

    @property
    def game(self) -> PuertoRicoGame: ...
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Always raises TypeError: use game.new_initial_state(seed) or game.state_from_dict(d)."""

    def current_player(self) -> int:
        """The seat to act; -1 (CHANCE) at a chance node; -4 (TERMINAL) at the end."""

    def is_terminal(self) -> bool: ...
    def is_chance_node(self) -> bool: ...
    def legal_actions(self, player: int | None = None) -> list[int]:
        """Sorted legal ids ([] if ``player`` is given and is not the player to act)."""

    def legal_actions_mask(self, player: int | None = None) -> npt.NDArray[np.uint8]:
        """0/1 mask of length NUM_DISTINCT_ACTIONS."""

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(draw id, probability) at a chance node, else []."""

    def apply_action(self, action: SupportsIndex, /) -> None:
        """Apply a legal id; ValueError (illegal, game over) or TypeError leave the state unchanged."""

    def resolve_chance(self) -> int:
        """Sample a chance outcome with the state's RNG, apply it and return it."""

    def child(self, action: SupportsIndex, /) -> PuertoRicoState: ...
    def clone(self) -> PuertoRicoState: ...
    def __copy__(self) -> PuertoRicoState: ...
    def __deepcopy__(self, memo: Any) -> PuertoRicoState: ...
    def history(self) -> list[int]:
        """Every id applied since the state was made, chance outcomes included."""

    def returns(self) -> list[float]:
        """Per seat: 1 for the winner, shared wins split, 0 otherwise; all 0 before the end."""

    def scores(self) -> list[dict[str, int]]:
        """Per seat: vp_chips, building_vp, bonus_vp, total, tiebreak."""

    def num_players(self) -> int: ...
    def phase(self) -> str: ...
    def step_name(self) -> str: ...
    def action_to_string(self, action: SupportsIndex) -> str: ...
    def string_to_action(self, name: str) -> int: ...
    def observation_tensor(self, player: int | None = None) -> npt.NDArray[np.float32]: ...
    def write_observation(
        self, out: npt.NDArray[np.float32], player: int | None = None
    ) -> None: ...
    def to_dict(self) -> dict[str, Any]: ...
    def serialize(self) -> str: ...
    def __reduce__(self) -> tuple[Any, tuple[PuertoRicoGame, str]]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> NoReturn: ...
