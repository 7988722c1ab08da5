"""Port Royal API tests: registration, game options, action names, the search interface
(GameState vtable), and bad input: every wrong call raises ValueError/TypeError naming the
problem and leaves the state unchanged; state_from_dict rejects broken positions."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from pry_scenario import make

import caribsim
from caribsim import _port_royal as core
from caribsim._game import GameState


def game(n=4, **kw):
    return caribsim.load_game("port_royal", players=n, **kw)


def test_registered_and_options():
    assert "port_royal" in caribsim.games() and "puerto_rico" in caribsim.games()
    g = game(3, require_expedition=True, start_player=1)
    assert g.options() == {"players": 3, "require_expedition": True, "start_player": 1}
    assert g.num_players() == 3 and g.max_chance_outcomes() == 62
    assert g.num_distinct_actions() == core.NUM_DISTINCT_ACTIONS == 291
    assert g == game(3, require_expedition=True, start_player=1) and hash(g) == hash(copy.copy(g))
    st = g.new_initial_state(seed=0)
    assert isinstance(st, GameState) and st.start_player() == 1


@pytest.mark.parametrize(
    "kwargs,exc",
    [
        ({"players": 1}, ValueError),
        ({"players": 6}, ValueError),
        ({"players": True}, TypeError),
        ({"players": "4"}, TypeError),
        ({"require_expedition": 1}, TypeError),
        ({"start_player": 4}, ValueError),
        ({"start_player": 1.0}, TypeError),
        ({"expansion": True}, TypeError),
    ],
)
def test_bad_game_options(kwargs, exc):
    with pytest.raises(exc):
        caribsim.load_game("port_royal", **kwargs)


def test_action_names_round_trip_and_are_unique():
    g = game()
    names = [g.action_to_string(a) for a in range(g.num_distinct_actions())]
    assert len(set(names)) == len(names)
    for a, n in enumerate(names):
        assert g.string_to_action(n) == a
        assert g.string_to_action("  " + n.upper() + " ") == a
    assert names[:5] == ["reveal", "stop", "repel", "dock", "pass"]
    assert g.string_to_action("take sailor_c3") == core.TAKE_ACTION_BASE + core.CARD_IDS.index(
        "sailor_c3"
    )
    assert g.string_to_action("card tax_fewest_vp") == core.CARD_ACTION_BASE + core.CARD_IDS.index(
        "tax_fewest_vp"
    )
    assert (
        g.action_to_string(
            g.string_to_action("fulfil expedition_anchor_anchor_house jack for anchor+house")
        )
        == "fulfil expedition_anchor_anchor_house jack for anchor+house"
    )


@pytest.mark.parametrize(
    "bad,exc",
    [
        (-1, ValueError),
        (291, ValueError),
        ("reveal", TypeError),
        (1.0, TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_bad_action_ids(bad, exc):
    st = make(2)
    before = st.to_dict()
    with pytest.raises(exc):
        st.apply_action(bad)
    with pytest.raises(exc):
        st.action_to_string(bad)
    assert st.to_dict() == before


def test_illegal_action_names_the_legal_ones_and_keeps_the_state():
    st = make(2)
    before = st.to_dict()
    with pytest.raises(ValueError, match=r"not legal.*legal: 0 \(reveal\), 1 \(stop\)"):
        st.apply_action(st.string_to_action("pass"))
    with pytest.raises(ValueError, match="not a chance node"):
        st.resolve_chance()
    with pytest.raises(ValueError, match="unknown action name"):
        st.string_to_action("flip coin")
    with pytest.raises(TypeError):
        st.string_to_action(3)
    assert st.to_dict() == before


def test_terminal_state_rejects_actions():
    st = game(2).new_initial_state(seed=1)
    caribsim.random_playouts(st, 1)
    import random

    r = random.Random(0)
    while not st.is_terminal():
        st.resolve_chance() if st.is_chance_node() else st.apply_action(
            r.choice(st.legal_actions())
        )
    with pytest.raises(ValueError, match="over"):
        st.apply_action(0)
    assert st.current_player() == caribsim.TERMINAL and st.to_dict()["player"] is None


def test_bad_seats_seeds_buffers():
    st = make(3)
    for bad in (3, -1):
        with pytest.raises(ValueError):
            st.observation_tensor(bad)
        with pytest.raises(ValueError):
            st.determinize(bad)
    with pytest.raises(TypeError):
        st.determinize("0")
    with pytest.raises(ValueError):
        st.determinize(0, seed=-1)
    with pytest.raises(ValueError):
        st.write_observation(np.zeros(5, dtype=np.float32), 0)
    with pytest.raises(ValueError):
        game().new_initial_state(seed=-3)
    with pytest.raises(TypeError):
        game().new_initial_state(seed="x")
    with pytest.raises(ValueError):
        caribsim.random_playouts(st, -1)
    with pytest.raises(ValueError):
        caribsim.random_playouts(st, 1, threads=0)


def test_hash_and_eq():
    st = make(2)
    with pytest.raises(TypeError):
        hash(st)
    assert st != "x" and st == st.clone()


def test_str_and_repr_are_readable():
    st = make(
        4,
        coins={0: 2},
        display={0: ["sailor_c3"]},
        harbour=["ship_flute_blue_s1_c1"],
        expeditions=["expedition_cross_cross"],
    )
    text = str(st)
    assert "Port Royal, 4 players" in text and "Harbour: ship_flute_blue_s1_c1" in text
    assert "seat 0: 2 coins | 1 VP | 1 sword |" in text and "expedition_cross_cross" in text
    assert "PortRoyalState 4p" in repr(st)
    st.apply_action(0)
    assert "Chance: reveal (seat 0)" in str(st)


# --- state_from_dict validation ------------------------------------------------


def _dict(**kw):
    return make(
        4, coins={0: 3, 1: 3}, harbour=["sailor_c3", "ship_flute_blue_s1_c1"], **kw
    ).to_dict()


def _expect(d, exc, match):
    with pytest.raises(exc, match=match):
        game().state_from_dict(d)


def test_from_dict_accepts_its_own_output():
    d = _dict()
    assert game().state_from_dict(d).to_dict() == d


def test_from_dict_rejects_structure_errors():
    d = _dict()
    d.pop("turns")
    _expect(d, ValueError, "missing key 'turns'")
    d = _dict()
    d["extra"] = 1
    _expect(d, ValueError, "unknown keys")
    d = _dict()
    d["game"] = "puerto_rico"
    _expect(d, ValueError, "port_royal")
    d = _dict()
    d["active"] = "0"
    _expect(d, TypeError, "active must be an int")
    d = _dict()
    d["options"]["players"] = 3
    _expect(d, ValueError, "options")
    _expect([], TypeError, "must be a dict")
    d = _dict()
    d["players"][0]["coin_generations"].pop()
    _expect(d, ValueError, "coin_generations")
    d = _dict()
    d["step"] = "flow"
    _expect(d, ValueError, "state.step must be one of")


def test_from_dict_rejects_broken_card_conservation():
    d = _dict()
    d["draw_pile"].pop()
    _expect(d, ValueError, "card conservation")
    d = _dict()
    d["draw_pile"].append("sailor_c3")
    _expect(d, ValueError, "card conservation")
    d = _dict()
    d["draw_pile"][0] = "sailor_c9"
    _expect(d, ValueError, "unknown card")
    d = _dict()
    card = d["draw_pile"].pop()
    d["players"][2]["display"][card] = d["players"][2]["display"].get(card, 0) + 1
    if card.startswith(("ship", "tax")):
        _expect(d, ValueError, "only persons and expeditions")
    d = _dict()
    d["draw_pile"].remove("expedition_cross_cross")
    d["harbour"]["expedition_cross_cross"] = 1
    _expect(d, ValueError, "only ships and persons")
    d = _dict()
    d["box"] = []
    d["expedition_area"] = ["expedition_anchor_cross_house_5p"]
    _expect(d, ValueError, "box")


def test_from_dict_rejects_two_ships_of_a_colour_and_flow_errors():
    d = _dict()
    d["draw_pile"].remove("ship_flute_blue_s2_c2")
    d["harbour"]["ship_flute_blue_s2_c2"] = 1
    _expect(d, ValueError, "two blue ships")
    d = _dict()
    d["player"] = 2
    _expect(d, ValueError, "only the active player")
    d = _dict()
    d["queue"] = [{"op": "draw", "seat": 1, "count": 2}]
    _expect(d, ValueError, "queue must be empty")
    d = _dict()
    d["step"] = "repel"
    _expect(d, ValueError, "pending ship")
    d = _dict()
    d["step"] = "take"
    _expect(d, ValueError, "cannot happen in phase")
    d = _dict()
    d["pending"] = d["draw_pile"].pop()
    _expect(d, ValueError, "pending must be null")
    d = _dict()
    d["rng"] = [0, 0, 0, 0]
    _expect(d, ValueError, "rng")
    d = _dict()
    d["players"][0]["coins"], d["draw_pile"] = [], d["draw_pile"] + d["players"][0]["coins"]
    d["players"][0]["coin_generations"] = []
    d["step"], d["queue"] = "chance", [{"op": "pay", "seat": 0, "count": 1}]
    _expect(d, ValueError, "has none")


def test_from_dict_repel_needs_a_repellable_ship():
    st = make(4, display={0: ["sailor_c3"]})
    st.apply_action(st.string_to_action("reveal"))
    st.apply_action(st.string_to_action("card ship_flute_blue_s1_c1"))
    d = st.to_dict()
    assert d["step"] == "repel" and d["pending"] == "ship_flute_blue_s1_c1"
    assert game().state_from_dict(d) == st
    d["draw_pile"].append(d["pending"])
    d["pending"] = "ship_flute_blue_s5_c3"
    d["draw_pile"].remove("ship_flute_blue_s5_c3")
    _expect(d, ValueError, "cannot be repelled")


def test_search_interface_table_is_filled():
    # the compiled class carries the C table used by the search (name, sizes)
    st = game(4).new_initial_state(seed=0)
    assert st.game.name == "port_royal"
    import pickle

    assert pickle.loads(pickle.dumps(st.game)) == st.game


def test_search_runs_on_port_royal_unchanged():
    """The MCTS of caribsim.mcts (over the C game interface, with determinize per iteration)
    plays Port Royal: legal moves with both rollout policies, and it beats a random player."""
    from caribsim import mcts
    from caribsim.arena import play_match
    from caribsim.bots import MCTSBot, RandomBot

    st = game(3).new_initial_state(seed=2)
    while st.is_chance_node():
        st.resolve_chance()
    before = st.to_dict()
    for rollout in ("random", "heuristic"):
        res = mcts.search(st, iterations=300, seed=1, rollout=rollout)
        assert res.action in st.legal_actions() and res.iterations == 300
    assert st.to_dict() == before
    result = play_match("port_royal", [MCTSBot(iterations=300), RandomBot()], 6, seed=3, players=2)
    assert result.bots[0].wins >= 5, result.bots


def test_from_dict_rejects_inconsistent_chance_continuations():
    st = make(4, coins={0: 2, 1: 2})
    st.apply_action(st.string_to_action("reveal"))
    d = st.to_dict()
    assert (
        d["step"] == "chance"
        and d["resume"] == "resolve"
        and d["queue"] == [{"op": "reveal", "seat": 0, "count": 1}]
    )
    assert game().state_from_dict(d) == st
    bad = json.loads(json.dumps(d))
    bad["queue"][0]["count"] = 2
    _expect(bad, ValueError, "reveal")
    bad = json.loads(json.dumps(d))
    bad["queue"] = [{"op": "draw", "seat": 0, "count": 1}]
    _expect(bad, ValueError, "resume 'resolve' follows a reveal")
    bad = json.loads(json.dumps(d))
    bad["queue"] = [{"op": "draw", "seat": 0, "count": 1}]
    bad["resume"] = "take"
    _expect(bad, ValueError, "cannot follow in phase")
    bad = json.loads(json.dumps(d))
    bad["queue"] = [{"op": "fee", "seat": 0, "count": 1}]
    bad["resume"] = "discover"
    _expect(bad, ValueError, "fee")
