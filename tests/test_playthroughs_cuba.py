"""Golden playthroughs of Cuba: a seeded random game per player count must reproduce the
checked-in text exactly (actions, names, boards, scores). Any change of rules, RNG, names or
rendering shows up here.

After an intended change:  python tests/playthroughs/generate_cuba.py   (then review the diff)."""
from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "playthroughs"
_spec = importlib.util.spec_from_file_location("cuba_playthrough_generate", HERE / "generate_cuba.py")
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)

REGENERATE = "python tests/playthroughs/generate_cuba.py"


@pytest.mark.parametrize("n", generate.PLAYER_COUNTS)
def test_cuba_playthrough_matches_golden(n):
    path = generate.path_for(n)
    assert path.exists(), f"{path} is missing; create it with: {REGENERATE}"
    expected = path.read_text()
    actual = generate.generate(n)
    if actual != expected:
        diff = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                         f"{path.name} (checked in)", f"{path.name} (engine now)",
                                         n=3, lineterm=""))
        shown = "\n".join(diff[:120]) + (f"\n... ({len(diff) - 120} more diff lines)" if len(diff) > 120 else "")
        pytest.fail(f"the {n}-player Cuba playthrough differs from the golden file.\n{shown}\n\n"
                    f"If the change is intended, regenerate with: {REGENERATE} and review the diff.",
                    pytrace=False)


@pytest.mark.parametrize("n", generate.PLAYER_COUNTS)
def test_cuba_playthrough_is_deterministic_and_small(n):
    a, b = generate.generate(n), generate.generate(n)
    assert a == b
    assert len(a.encode()) < 300 * 1024
    assert "returns: " in a and "== final state ==" in a and "round 6, action phase" in a
