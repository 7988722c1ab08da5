"""Cuba properties over many random games: six rounds always, no negative stock, items,
pesos and ship cards conserved, determinism, round trips, the hidden bids and determinize."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
from cuba_scenario import act, board, edit, empty_board, start, to_parliament

import caribsim
from caribsim import _cuba


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_invariants_over_thousands_of_random_games(players):
    game = caribsim.load_game("cuba", players=players)
    games, _steps, decisions, ends, failure = _cuba.check_random_games(
        game.new_initial_state(seed=players), 2500, seed=99
    )
    assert failure is None
    assert games == 2500 and ends == {6: 2500}  # every game lasts exactly six rounds
    assert decisions > 2500 * 50


@pytest.mark.parametrize(
    "opts", [dict(supply_limited=True, pesos_limited=True), dict(start_player=1)]
)
def test_invariants_with_options(opts):
    game = caribsim.load_game("cuba", players=4, **opts)
    _games, _steps, _decisions, ends, failure = _cuba.check_random_games(
        game.new_initial_state(seed=1), 1000, seed=5
    )
    assert failure is None and ends == {6: 1000}


def _random_game(game, seed, every=1, check=None):
    rng = random.Random(seed)
    s = game.new_initial_state(seed=seed)
    i = 0
    while not s.is_terminal():
        if check and i % every == 0:
            check(s)
        if s.is_chance_node():
            probs = [p for _, p in s.chance_outcomes()]
            assert abs(sum(probs) - 1) < 1e-9 and min(probs) > 0
            s.resolve_chance()
        else:
            s.apply_action(rng.choice(s.legal_actions()))
        i += 1
    return s


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_round_trips_and_clone_along_random_games(players):
    game = caribsim.load_game("cuba", players=players)

    def check(s):
        d = s.to_dict()
        t = game.state_from_dict(d)
        assert t.to_dict() == d and t.legal_actions() == s.legal_actions()
        assert game.deserialize_state(s.serialize()) == s
        c = s.clone()
        assert c == s and c.history() == s.history()

    for seed in range(4):
        s = _random_game(game, seed, every=3, check=check)
        assert game.state_from_dict(s.to_dict()) == s
        assert pickle.loads(pickle.dumps(s)) == s


@pytest.mark.parametrize("players", [2, 5])
def test_a_restored_state_plays_on_exactly_like_the_original(players):
    game = caribsim.load_game("cuba", players=players)
    for seed in range(6):
        s = _random_game(game, seed)
        hist = s.history()
        t = game.new_initial_state(seed=seed)
        for i, a in enumerate(hist):
            if i % 7 == 3:
                t = game.state_from_dict(t.to_dict())  # restore mid-game (chance nodes included)
            t.apply_action(a)
        assert t.to_dict()["boards"] == s.to_dict()["boards"] and t.is_terminal()


def test_determinism_same_seed_same_game_and_playouts():
    game = caribsim.load_game("cuba", players=3)
    a = _random_game(game, 11)
    b = _random_game(game, 11)
    assert a.history() == b.history() and a.returns() == b.returns()
    s = game.new_initial_state(seed=0)
    r1 = caribsim.random_playouts(s, 300, seed=7)
    r2 = caribsim.random_playouts(s, 300, seed=7, threads=3)
    assert np.array_equal(r1.scores, r2.scores) and np.array_equal(r1.lengths, r2.lengths)
    r3 = caribsim.random_playouts(s, 300, seed=8)
    assert not np.array_equal(r1.scores, r3.scores)
    assert np.allclose(r1.returns.sum(axis=1), 1.0)


def test_replaying_the_history_gives_the_same_state():
    game = caribsim.load_game("cuba", players=4)
    s = _random_game(game, 3)
    t = game.new_initial_state(seed=3)
    for a in s.history():
        t.apply_action(a)
    assert t.to_dict()["boards"] == s.to_dict()["boards"] and t.is_terminal()


def test_returns_and_scores_at_the_end():
    game = caribsim.load_game("cuba", players=3)
    for seed in range(20):
        s = _random_game(game, seed)
        sc = s.scores()
        assert all(x["total"] == x["vp"] + x["building_vp"] for x in sc)
        best = max((x["total"], x["tiebreak"]) for x in sc)
        winners = [i for i, x in enumerate(sc) if (x["total"], x["tiebreak"]) == best]
        assert s.returns() == [1 / len(winners) if i in winners else 0.0 for i in range(3)]


# --- hidden bids (E.1) -------------------------------------------------------------------


def _bidding():
    _game, s = start(3)
    s = edit(s, lambda d: [empty_board(b) for b in d["boards"]])
    s = to_parliament(s, ["mayor", "worker", "foreman"])
    return s


def test_E1_bids_are_hidden_from_the_other_players_until_revealed():
    s = _bidding()
    a, b = s.clone(), s.clone()
    act(a, "bid 0")
    act(b, "bid 7")
    assert (
        a.to_dict()["boards"][0]["pesos"] == 10 == b.to_dict()["boards"][0]["pesos"]
    )  # paid at the reveal
    for seat in (1, 2):
        assert np.array_equal(a.observation_tensor(seat), b.observation_tensor(seat))
    assert not np.array_equal(a.observation_tensor(0), b.observation_tensor(0))
    assert a.hidden_bids_pending() == [0]
    act(a, "bid 1", "bid 1")
    act(b, "bid 1", "bid 1")
    assert a.hidden_bids_pending() == []
    assert board(b, 0)["pesos"] == 3 and not np.array_equal(
        a.observation_tensor(1), b.observation_tensor(1)
    )


def test_E1_determinize_resamples_only_the_hidden_bids():
    s = _bidding()
    act(s, "bid 6", "bid 2")  # P1 and P2 have bid; P3 to bid
    seen = set()
    for seed in range(30):
        t = s.determinize(2, seed=seed)
        d0, d1 = s.to_dict(), t.to_dict()
        bids = [b["bid"] for b in d1["boards"]]
        assert 0 <= bids[0] <= 10 and 0 <= bids[1] <= 10 and bids[2] == 0
        seen.add(tuple(bids[:2]))
        for b0, b1 in zip(d0["boards"], d1["boards"]):
            b0 = dict(b0, bid=0)
            b1 = dict(b1, bid=0)
            assert b0 == b1
        assert {k: v for k, v in d0.items() if k not in ("boards", "rng")} == {
            k: v for k, v in d1.items() if k not in ("boards", "rng")
        }
        assert np.array_equal(t.observation_tensor(2), s.observation_tensor(2))  # public info kept
    assert len(seen) > 5
    own = s.determinize(0, seed=1)
    assert own.to_dict()["boards"][0]["bid"] == 6  # the observer's own bid is kept


def test_E1_determinize_is_identity_outside_the_bidding():
    _game, s = start(3)
    t = s.determinize(1, seed=3)
    assert {k: v for k, v in t.to_dict().items() if k != "rng"} == {
        k: v for k, v in s.to_dict().items() if k != "rng"
    }


def test_search_runs_on_cuba_with_hidden_bids():
    from caribsim.mcts import search

    s = _bidding()
    act(s, "bid 4")  # P2 decides with P1's bid hidden
    for rollout in ("random", "heuristic"):
        r = search(s, iterations=300, rollout=rollout, seed=1)
        assert r.action in s.legal_actions() and sum(r.visits.values()) >= 290
    r = search(s, iterations=200, rollout="heuristic", max_depth=30, seed=2)
    assert r.action in s.legal_actions()
    _game, s2 = start(3)
    r = search(s2, iterations=200, seed=3, reward="score")
    assert r.action in s2.legal_actions()
