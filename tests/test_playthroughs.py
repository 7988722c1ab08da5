"""Golden playthroughs: for every game and player count a seeded random game must reproduce the
checked-in text exactly (actions, names, boards, scores). Any change of rules, RNG, names or
rendering shows up here.

After an intended change:  python tests/playthroughs/generate.py   (then review the diff)."""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "playthroughs"
_spec = importlib.util.spec_from_file_location(
    "caribsim_playthrough_generate", HERE / "generate.py"
)
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)

CASES = [(game, n) for game in generate.SEEDS for n in generate.PLAYER_COUNTS]
MILESTONE = {
    "puerto_rico": "role selection 1 by seat 0",
    "port_royal": ": turn 2, seat ",
    "cuba": "round 6, action phase",
}


@pytest.mark.parametrize("game, n", CASES)
def test_playthrough_matches_golden(game, n):
    path = generate.path_for(game, n)
    assert path.exists(), f"{path} is missing; create it with: {generate.REGENERATE}"
    expected = path.read_text()
    actual = generate.generate(game, n)
    if actual != expected:
        diff = list(
            difflib.unified_diff(
                expected.splitlines(),
                actual.splitlines(),
                f"{path.name} (checked in)",
                f"{path.name} (engine now)",
                n=3,
                lineterm="",
            )
        )
        shown = "\n".join(diff[:120]) + (
            f"\n... ({len(diff) - 120} more diff lines)" if len(diff) > 120 else ""
        )
        pytest.fail(
            f"the {n}-player {game} playthrough differs from the golden file.\n{shown}\n\n"
            f"If the change is intended, regenerate with: {generate.REGENERATE} and review the diff.",
            pytrace=False,
        )


@pytest.mark.parametrize("game, n", CASES)
def test_playthrough_is_deterministic_and_small(game, n):
    a, b = generate.generate(game, n), generate.generate(game, n)
    assert a == b
    assert len(a.encode()) < 300 * 1024
    assert "returns: " in a and "== final state ==" in a and MILESTONE[game] in a
