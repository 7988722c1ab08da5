"""The random playout's shortcuts (roles and Mayor slots picked without their list, the
Builder's options as one mask, the Mayor's slot list kept in the state) play the same games
as the plain loop over the legal lists, and a state read from a dict has the same derived
fields as the one it was written from."""

import random

import pytest

import caribsim
from caribsim.puerto_rico._state import _playout

OPTIONS = [
    {"players": 2},
    {"players": 3},
    {"players": 4},
    {"players": 5},
    {"players": 3, "expansion": True},
    {"players": 2, "expansion": True},
    {"players": 4, "expansion": True},
    {"players": 5, "expansion": True, "all_31_buildings": True},
    {"players": 4, "all_colonists_and_vp": True},
    {"players": 3, "expansion": True, "all_colonists_and_vp": True},
]


def _label(options):
    return ",".join(f"{k}={v}" for k, v in options.items())


def _positions(game, seed, every=7):
    """States along a random game (every `every`-th decision), chance resolved by the state."""
    rng = random.Random(seed)
    st, out, i = game.new_initial_state(seed=seed), [], 0
    while not st.is_terminal():
        if st.is_chance_node():
            st.resolve_chance()
            continue
        if i % every == 0:
            out.append(st.clone())
        i += 1
        st.apply_action(rng.choice(st.legal_actions()))
    return out


@pytest.mark.parametrize("options", OPTIONS, ids=_label)
def test_random_playout_plays_the_games_of_the_legal_lists(options):
    game = caribsim.load_game("puerto_rico", **options)
    starts = [game.new_initial_state(seed=s) for s in range(12)] + _positions(game, 99)
    steps = set()
    for st in starts:
        fast, ref = st.clone(), st.clone()
        steps.add(st.step_name())
        assert _playout(fast, False) == _playout(ref, True)
        assert fast.is_terminal() and ref.is_terminal()
        assert fast.serialize() == ref.serialize()  # the RNG too: the same draws
    assert {"role", "mayor", "build"} <= steps  # games started at the shortcut steps


@pytest.mark.parametrize("options", OPTIONS[:2] + OPTIONS[4:6], ids=_label)
def test_a_loaded_state_plays_on_as_the_one_it_was_written_from(options):
    """in_supply and the Mayor's slot list are rebuilt from the dict (pr_derive)."""
    game = caribsim.load_game("puerto_rico", **options)
    mayor = 0
    for st in _positions(game, 5, every=3):
        loaded = game.state_from_dict(st.to_dict())
        mayor += st.step_name() == "mayor"
        assert loaded.legal_actions() == st.legal_actions()
        a, b = st.clone(), loaded.clone()
        _playout(a, False)
        _playout(b, False)
        assert a.serialize() == b.serialize()
    assert mayor > 0
