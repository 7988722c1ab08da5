"""Cuba: the State API (as Puerto Rico's), names, tensors, and refusal of bad input with the
state unchanged."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from cuba_scenario import act, edit, empty_board, legal, start

import caribsim


def test_registered_and_options():
    assert "cuba" in caribsim.games()
    g = caribsim.load_game("cuba", players=2)
    assert g.options() == {
        "players": 2,
        "start_player": None,
        "data": None,
        "supply_limited": False,
        "pesos_limited": False,
    }
    assert g.num_players() == 2 and g.max_chance_outcomes() == 24
    assert g == caribsim.load_game("cuba", players=2) and g != caribsim.load_game("cuba", players=3)
    assert pickle.loads(pickle.dumps(g)) == g
    assert "CubaGame(players=2" in repr(g)


@pytest.mark.parametrize(
    "kw, exc",
    [
        (dict(players=1), ValueError),
        (dict(players=6), ValueError),
        (dict(players="3"), TypeError),
        (dict(players=True), TypeError),
        (dict(start_player=3, players=3), ValueError),
        (dict(start_player="0"), TypeError),
        (dict(supply_limited=1), TypeError),
        (dict(colour="red"), TypeError),
    ],
)
def test_bad_game_options(kw, exc):
    with pytest.raises(exc):
        caribsim.load_game("cuba", **kw)


def test_action_names_round_trip_and_are_unique():
    g = caribsim.load_game("cuba", players=3)
    names = [g.action_to_string(a) for a in range(g.num_distinct_actions())]
    assert len(set(names)) == len(names)
    for a, n in enumerate(names):
        assert g.string_to_action(n) == a
        assert g.string_to_action(n.upper()) == a
    for n in (
        "play worker",
        "pawn to 3,3",
        "harvest 2,4",
        "sell rum",
        "buy cigar",
        "trader take stone",
        "trader take cheapest citrus",
        "build town hall",
        "place on 1,2",
        "architect alternative",
        "foreman row and column",
        "use warehouse",
        "use large office",
        "pick tobacco",
        "receive rum",
        "lighthouse ship_07",
        "veto III",
        "load cigar on dock 3",
        "mayor alternative",
        "enact II and IV",
        "pay tax",
        "deliver levy",
        "pass",
        "bid 0",
        "bid 200",
        "ship draw ship_15",
        "law draw corruption",
        "start player seat 4",
        "take water",
    ):
        assert n.lower() in (x.lower() for x in names), n
    with pytest.raises(ValueError, match="unknown action name"):
        g.string_to_action("fly away")
    with pytest.raises(TypeError):
        g.string_to_action(3)
    with pytest.raises(ValueError):
        g.action_to_string(g.num_distinct_actions())


def test_state_api_basics():
    g = caribsim.load_game("cuba", players=3)
    s = g.new_initial_state(seed=4)
    assert s.is_chance_node() and s.current_player() == caribsim.CHANCE and s.legal_actions(0) == []
    assert s.returns() == [0.0, 0.0, 0.0]
    mask = s.legal_actions_mask()
    assert mask.sum() == 15 and mask.dtype == np.uint8
    a = s.resolve_chance()
    assert s.history() == [a]
    c = s.child(s.legal_actions()[0])
    assert c != s and len(c.history()) == 2
    assert "Cuba, 3 players" in str(s) and "CubaState" in repr(s)
    obs = s.observation_tensor(1)
    assert obs.shape == g.observation_tensor_shape() and obs.dtype == np.float32
    buf = np.zeros(g.observation_tensor_shape(), dtype=np.float32)
    s.write_observation(buf, 1)
    assert np.array_equal(buf, obs)
    with pytest.raises(ValueError):
        s.write_observation(np.zeros(3, dtype=np.float32), 1)
    with pytest.raises(TypeError):
        hash(s)
    while not s.is_terminal():
        s.resolve_chance() if s.is_chance_node() else s.apply_action(s.legal_actions()[0])
    assert (
        s.current_player() == caribsim.TERMINAL
        and s.legal_actions() == []
        and sum(s.returns()) == pytest.approx(1)
    )
    with pytest.raises(ValueError, match="game is over"):
        s.apply_action(0)


def test_bad_actions_leave_the_state_unchanged():
    game, s = start(3)
    before = s.to_dict()
    for bad, exc in (
        (9999, ValueError),
        (-1, ValueError),
        ("pass", TypeError),
        (1.0, TypeError),
        (True, TypeError),
        (game.string_to_action("bid 3"), ValueError),
    ):
        with pytest.raises(exc):
            s.apply_action(bad)
    with pytest.raises(ValueError, match="not a chance node"):
        s.resolve_chance()
    with pytest.raises(ValueError):
        s.observation_tensor(7)
    with pytest.raises(ValueError, match="unknown action name"):
        s.string_to_action("bid a lot")
    assert s.to_dict() == before


def test_bid_range_is_zero_to_pesos():
    from cuba_scenario import to_parliament

    _game, s = start(3)
    s = edit(s, lambda d: [empty_board(b) for b in d["boards"]] and None)
    s = edit(s, lambda d: d["boards"][0].update(pesos=4))
    s = to_parliament(s, ["mayor", "worker", "trader"])
    assert legal(s) == {f"bid {i}" for i in range(5)}
    s = edit(s, lambda d: d["boards"][0].update(pesos=0))
    assert s.current_player() == 0  # the dict keeps the pending bidder; a new bidding skips him
    _game, s = start(3)
    s = edit(s, lambda d: d["boards"][1].update(pesos=0))
    s = to_parliament(s, ["mayor", "worker", "trader"])
    act(s, "bid 2")
    assert s.current_player() == 2  # seat 1 without pesos bids 0 without a decision


@pytest.mark.parametrize(
    "mutate, exc, message",
    [
        (lambda d: d.update(game="puerto_rico"), ValueError, "state.game"),
        (lambda d: d.pop("market"), ValueError, "missing key 'market'"),
        (lambda d: d.update(extra=1), ValueError, "unknown keys"),
        (lambda d: d["boards"][0]["yard"].update(sugar=5), ValueError, "sugar is not conserved"),
        (lambda d: d["boards"][0].update(pesos=99), ValueError, "pesos are not conserved"),
        (lambda d: d["boards"][0]["yard"].update(wood=-1), ValueError, "must be in 0"),
        (lambda d: d["market"].update(sugar=6), ValueError, "state.market.sugar"),
        (lambda d: d["harbour"]["deck_unseen"].pop(), ValueError, "ship cards are not conserved"),
        (lambda d: d["boards"][0]["buildings"].update(hotel="1,1"), ValueError, "warehouse field"),
        (lambda d: d["boards"][0].update(pawn="4,1"), ValueError, "rows 1-3"),
        (lambda d: d.update(player=2), ValueError, "is on turn"),
        (lambda d: d["boards"][1].update(hand=["worker"]), ValueError, "hand"),
        (lambda d: d.update(step="enact"), ValueError, "cannot happen in phase"),
        (lambda d: d["laws"]["proposals"].update(I="levy_rum"), ValueError, "not a stack-I law"),
        (lambda d: d.update(rng=[0, 0, 0, 0]), ValueError, "state.rng"),
        (lambda d: d.update(round="1"), TypeError, "state.round"),
        (lambda d: d["boards"][0]["storage"].update(sugar=1), ValueError, "owns no Storage"),
    ],
)
def test_state_from_dict_refuses_bad_input(mutate, exc, message):
    game, s = start(3)
    d = s.to_dict()
    mutate(d)
    with pytest.raises(exc, match=message):
        game.state_from_dict(d)


def test_deserialize_bad_text():
    g = caribsim.load_game("cuba", players=2)
    with pytest.raises(ValueError, match="not valid JSON"):
        g.deserialize_state("{")
    with pytest.raises(TypeError):
        g.deserialize_state(3)


def test_random_playouts_api():
    g = caribsim.load_game("cuba", players=4)
    r = caribsim.random_playouts(g.new_initial_state(seed=1), 50, seed=3)
    assert r.returns.shape == (50, 4) and r.scores.shape == (50, 4) and (r.lengths > 0).all()
    with pytest.raises(ValueError):
        caribsim.random_playouts(g.new_initial_state(), -1)


def test_str_shows_the_board():
    _game, s = start(3)
    text = str(s)
    for part in (
        "Cuba, 3 players",
        "round 1",
        "Market (tokens): sugar 3",
        "dock 1: ship_01",
        "at sea: ship_03",
        "Laws in force: I initial, II initial",
        "proposals: I tax_1",
        "seat 0: 10 pesos, 0 VP",
        "yard: sugar 2, wood 2",
    ):
        assert part in text, part
