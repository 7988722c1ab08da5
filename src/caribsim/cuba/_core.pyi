"""Type stubs for the compiled Cuba core (pyx/caribsim/cuba/_core.pyx): its Python-visible
names. The rules themselves are C (nogil), reached from Python only through
``caribsim.cuba._state`` (which re-exports these names) and the game's C interface.
"""

from typing import Any

ITEM_NAMES: tuple[str, ...]
CARGO_NAMES: tuple[str, ...]
CROP_NAMES: tuple[str, ...]
MATERIAL_NAMES: tuple[str, ...]
CHARACTER_NAMES: tuple[str, ...]
BUILDING_IDS: tuple[str, ...]
LAW_KINDS: tuple[str, ...]
SUBSIDY_COUNTS: tuple[str, ...]
STACK_NAMES: tuple[str, ...]
MARKER_NAMES: tuple[str, ...]
PHASE_NAMES: tuple[str, ...]
STEP_NAMES: tuple[str, ...]
RESUME_NAMES: tuple[str, ...]
LOAD_NAMES: tuple[str, ...]
PAIR_STACKS: tuple[tuple[int, int], ...]

def field_name(f: int) -> str: ...
def pack_tables(spec: dict[str, Any]) -> bytes: ...
