"""docs/performance.md states each game's C struct size: it must be the compiled one."""

from __future__ import annotations

import re
from pathlib import Path

import caribsim
from caribsim._game import state_size

DOC = Path(__file__).resolve().parents[1] / "docs" / "performance.md"
GAMES = {
    "Puerto Rico (base and expansion)": [("puerto_rico", {}), ("puerto_rico", {"expansion": True})],
    "Port Royal": [("port_royal", {})],
    "Cuba": [("cuba", {})],
}


def test_the_documented_struct_sizes_are_the_compiled_ones():
    rows = dict(
        re.findall(r"^\| ([^|]+?) \| `\w+` \| (\d+) \|$", DOC.read_text(encoding="utf-8"), re.M)
    )
    assert set(rows) == set(GAMES), rows
    for label, games in GAMES.items():
        for name, options in games:
            for players in range(2, 6):
                st = caribsim.load_game(name, players=players, **options).new_initial_state(seed=1)
                assert state_size(st) == int(rows[label]), (name, options, players)
                assert state_size(st.clone()) == state_size(st)


def test_state_size_refuses_what_is_not_a_state():
    import pytest

    with pytest.raises(TypeError):
        state_size("a state")
