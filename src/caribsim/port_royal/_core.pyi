"""Type stubs for the compiled Port Royal core ``caribsim.port_royal._core``
(pyx/caribsim/port_royal/_core.pyx).

The core is the C side of the game: the state struct, the nogil rules and the game's C
table, used from Cython (``_core.pxd``). Its Python-visible names are the card tables read
from port_royal_deck.csv at import and the names of the enums; ``caribsim.port_royal._state``
re-exports them all.
"""

from typing import Any

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
"""setup, discover, trade, end."""
STEP_NAMES: tuple[str, ...]
"""discover, repel, take, chance, terminal."""
OP_NAMES: tuple[str, ...]
"""reveal, draw, pay, fee: the kinds of chance events (card moves)."""
RESUME_NAMES: tuple[str, ...]
"""The continuations after the queue of card moves (state dict ``resume``)."""
_CATEGORIES: tuple[str, ...]
"""The csv's ``category`` values, by CAT_* index."""
_ABILITIES: tuple[str, ...]
"""The csv's ``ability`` values, by AB_* index."""

__pyx_capi__: dict[str, Any]
__test__: dict[str, str]

def load_tables() -> None:
    """Read port_royal_deck.csv into the C tables (runs once at import)."""

def _read_csv(name: str) -> list[dict[str, str]]:
    """The rows of a csv file of caribsim/data as dicts."""
