"""Type stubs for the compiled Puerto Rico core (pyx/caribsim/puerto_rico/_core.pyx).

The core holds the C state struct, the nogil rules and the GameVTables; from Python it
shows only the names below (the component names and the tables' loader). The state class
and the module functions are in ``caribsim.puerto_rico._state``.
"""

from typing import Any

# --- constants --------------------------------------------------------------
GOOD_NAMES: tuple[str, str, str, str, str]
"""corn, indigo, sugar, tobacco, coffee (goods and plantation kinds 0..4)."""
TILE_NAMES: tuple[str, ...]
"""The five plantation kinds, then quarry and forest."""
ROLE_NAMES: tuple[str, ...]
"""settler, mayor, builder, craftsman, trader, captain, prospector, prospector_2."""
PHASE_NAMES: tuple[str, ...]
"""settler .. prospector, role_selection, setup, end (``state.phase()`` values)."""
STEP_NAMES: tuple[str, ...]
"""role, settle, hospice, mayor, build, university, privilege, sell, load,
warehouse, keep, draw_face_up, draw_hacienda, terminal, then the expansion's draft,
library, black_market, small_wharf (``state.step_name()`` values)."""
BUILDING_IDS: tuple[str, ...]
"""Building ids in puerto_rico_buildings.csv row order (23 base, then 14 expansion)."""
BUILDING_ROWS: tuple[dict[str, str], ...]
"""The csv rows of puerto_rico_buildings.csv as dicts of strings."""
_KIND_CODES: dict[str, int]
"""The csv's building ``kind`` column -> its code."""
_ENUM_IDS: tuple[str, ...]
"""The building ids in the order of the C enum (checked against the csv at import)."""

__pyx_capi__: dict[str, Any]
__test__: dict[str, str]

# --- module functions -------------------------------------------------------
def load_tables() -> None:
    """Read the data files into the C tables (runs once at import)."""

def _read_csv(name: str) -> list[dict[str, str]]:
    """The rows of a data file of the package as dicts of strings."""
