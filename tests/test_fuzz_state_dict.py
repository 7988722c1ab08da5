"""state_from_dict and deserialize_state of every game against mutated dicts of real states.

Each accepted dict must give a state that random play takes to the end, with every state on
the way accepted again (``state_from_dict(s.to_dict()) == s``); everything else must be a
clear ValueError or TypeError, and the dict passed in stays as it was."""
from __future__ import annotations

import copy
import random

import pytest

import caribsim

GAMES = ("puerto_rico", "port_royal", "cuba")


def states_of(name, players, seed, every=1, **opts):
    """The states of one seeded random game (every `every`-th decision)."""
    game = caribsim.load_game(name, players=players, **opts)
    rng = random.Random(seed)
    s = game.new_initial_state(seed=seed)
    out, i = [], 0
    while not s.is_terminal():
        if i % every == 0:
            out.append(s.clone())
        i += 1
        if s.is_chance_node():
            s.resolve_chance()
        else:
            s.apply_action(rng.choice(s.legal_actions()))
    out.append(s)
    return game, out


@pytest.mark.parametrize("name", GAMES)
def test_options_must_have_their_exact_types(name):
    game, states = states_of(name, 3, 1, every=50)
    d = states[1].to_dict()
    assert game.state_from_dict(d) == states[1]
    for key, value in d["options"].items():
        if isinstance(value, bool):
            for other in (int(value), float(value)):
                bad = copy.deepcopy(d)
                bad["options"][key] = other
                with pytest.raises(ValueError, match=r"state\.options .* do not match this game's"):
                    game.state_from_dict(bad)
    bad = copy.deepcopy(d)
    bad["options"]["players"] = 3.0
    with pytest.raises(ValueError, match=r"state\.options .* do not match this game's"):
        game.state_from_dict(bad)
