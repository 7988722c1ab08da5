"""Port Royal property tests: card conservation and the engine's bookkeeping over thousands of
audited random games per player count (in C), termination, determinism, round trips of the
dict / JSON / pickle codecs, chance distributions, determinize (public information kept, the
120 cards conserved, only same-origin cards exchanged) and the observation (public only)."""

from __future__ import annotations

import json
import pickle
import random
from collections import Counter

import numpy as np
import pytest
from pry_scenario import FULL_DECK, total_cards

import caribsim
from caribsim import _port_royal as core

PLAYERS = (2, 3, 4, 5)
AUDIT_CODES = {
    1: "card conservation",
    2: "derived player counts",
    3: "harbour bookkeeping",
    4: "two ships of one colour in the harbour",
    5: "queue/step",
    6: "pending card",
    7: "a decision without a legal action",
}


def game(n, **kw):
    return caribsim.load_game("port_royal", players=n, **kw)


@pytest.mark.parametrize("n", PLAYERS)
@pytest.mark.parametrize("require_expedition", [False, True])
def test_every_card_accounted_for_after_every_step_of_2000_random_games(n, require_expedition):
    g = game(n, require_expedition=require_expedition)
    games = 2000 if not require_expedition else 500
    ended, steps, longest, bad = core._audited_random_games(
        g.new_initial_state(seed=n), games, 1000 + n
    )
    assert bad == [], [(gi, st, AUDIT_CODES[c]) for gi, st, c in bad]
    assert ended == games  # every game ends (well below the step cap)
    assert longest < 100000 and steps > games * 100


def _random_game(g, seed, check=None):
    rng = random.Random(seed)
    st = g.new_initial_state(seed=seed)
    while not st.is_terminal():
        if check:
            check(st)
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    if check:
        check(st)
    return st


@pytest.mark.parametrize("n", PLAYERS)
def test_conservation_and_round_trips_at_every_step_python_api(n):
    g = game(n)
    calls = Counter()

    def check(st):
        assert total_cards(st) == FULL_DECK
        d = st.to_dict()
        back = g.state_from_dict(d)
        assert back == st and back.to_dict() == d
        calls["steps"] += 1
        if calls["steps"] % 7 == 0:
            assert g.deserialize_state(st.serialize()) == st
            assert pickle.loads(pickle.dumps(st)) == st
            assert json.loads(json.dumps(d)) == d

    for seed in range(3):
        _random_game(g, seed, check)
    assert calls["steps"] > 500


@pytest.mark.parametrize("n", PLAYERS)
def test_determinism_same_seed_same_game_and_restored_states_continue_alike(n):
    g = game(n)
    a, b = _random_game(g, 11), _random_game(g, 11)
    assert a.history() == b.history() and a == b
    # a state restored from its dict mid-game continues exactly like the original
    rng = random.Random(5)
    st = g.new_initial_state(seed=3)
    for _ in range(150):
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    twin = g.state_from_dict(st.to_dict())
    for s in (st, twin):
        r = random.Random(9)
        while not s.is_terminal():
            if s.is_chance_node():
                s.resolve_chance()
            else:
                s.apply_action(r.choice(s.legal_actions()))
    assert st.history() == twin.history() and st.returns() == twin.returns()


def test_random_playouts_deterministic_threads_independent_and_sane():
    st = game(3).new_initial_state(seed=1)
    r1 = caribsim.random_playouts(st, 300, seed=4, threads=1)
    r2 = caribsim.random_playouts(st, 300, seed=4, threads=3)
    assert np.array_equal(r1.returns, r2.returns) and np.array_equal(r1.lengths, r2.lengths)
    assert np.allclose(r1.returns.sum(axis=1), 1.0)
    # the end: somebody has 12+ VP (standard rule) unless the deadlock ruling ended it
    assert (r1.scores.max(axis=1) >= 12).mean() > 0.95
    assert st.to_dict()["history"] == []  # the start state is unchanged


def test_chance_outcomes_are_distributions_and_match_sampling():
    g = game(4)
    rng = random.Random(1)
    st = g.new_initial_state(seed=2)
    seen = 0
    while not st.is_terminal() and seen < 300:
        if st.is_chance_node():
            outs = st.chance_outcomes()
            assert abs(sum(p for _, p in outs) - 1.0) < 1e-9
            assert [a for a, _ in outs] == st.legal_actions()
            assert all(a >= core.CARD_ACTION_BASE for a, _ in outs)
            a = st.resolve_chance()
            assert a in dict(outs)
            seen += 1
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    # empirical check of one reveal distribution
    st = game(2).new_initial_state(seed=0)
    while st.chance_event()[0] != "reveal":
        st.resolve_chance()
    probs = dict(st.chance_outcomes())
    counts = Counter()
    for k in range(4000):
        c = st.clone()
        core_seed = c.determinize(0, seed=k)  # reseeds the copy's RNG
        counts[core_seed.resolve_chance()] += 1
    for a, p in probs.items():
        assert abs(counts[a] / 4000 - p) < 0.03


def _public(d):
    """The public part of a state dict (E.1): everything except coin faces, the draw pile
    order/composition and the RNG."""
    d = dict(d)
    d.pop("rng")
    draw = d.pop("draw_pile")
    d["draw_size"] = len(draw)
    d["players"] = [
        {"n_coins": len(p["coins"]), "display": p["display"], "gens": sorted(p["coin_generations"])}
        for p in d["players"]
    ]
    return d


def _unseen_by_generation(d):
    by = Counter()
    for p in d["players"]:
        for c, gen in zip(p["coins"], p["coin_generations"]):
            by[(gen, c)] += 1
    for c in d["draw_pile"]:
        by[(d["generation"], c)] += 1
    return by


@pytest.mark.parametrize("n", PLAYERS)
def test_determinize_keeps_public_information_and_conserves_cards(n):
    g = game(n)
    rng = random.Random(n)
    st = g.new_initial_state(seed=n)
    changed = 0
    checked = 0
    while not st.is_terminal():
        if rng.random() < 0.1:
            seat = rng.randrange(n)
            det = st.determinize(seat, seed=rng.randrange(2**32))
            d0, d1 = st.to_dict(), det.to_dict()
            assert _public(d0) == _public(d1)
            assert total_cards(det) == FULL_DECK
            # only cards of the same origin are exchanged: per generation the unseen multiset is kept
            assert _unseen_by_generation(d0) == _unseen_by_generation(d1)
            assert det.legal_actions() == st.legal_actions() or st.is_chance_node()
            for p in range(n):
                assert np.array_equal(det.observation_tensor(p), st.observation_tensor(p))
            g.state_from_dict(d1)  # a valid position
            changed += d0["players"] != d1["players"] or d0["draw_pile"] != d1["draw_pile"]
            checked += 1
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    assert checked > 10 and changed > checked // 2


@pytest.mark.parametrize("n", PLAYERS)
def test_determinize_depends_only_on_the_information_set(n):
    """Two positions that differ only in what nobody sees (coin faces, the draw pile's order
    and contents among unseen cards) give the same world for the same seed: the sample is
    drawn from the public multiset of unseen cards, not from the true hidden order."""
    g = game(n)
    rng = random.Random(100 + n)
    st = g.new_initial_state(seed=n)
    checked = 0
    while not st.is_terminal():
        if rng.random() < 0.1:
            seat = rng.randrange(n)
            other = st.determinize(seat, seed=rng.randrange(2**32))  # same information, other facts
            seed = rng.randrange(2**32)
            a, b = st.determinize(seat, seed=seed), other.determinize(seat, seed=seed)
            assert a.to_dict() == b.to_dict()
            checked += st.to_dict() != other.to_dict()
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    assert checked > 5


def test_determinize_separates_reshuffle_generations():
    # coins held from before a reshuffle are never swapped with the new draw pile (E.1)
    g = game(2)
    rng = random.Random(0)
    st = g.new_initial_state(seed=0)
    while st.to_dict()["generation"] == 0:
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    d = st.to_dict()
    old = Counter(
        c for p in d["players"] for c, gen in zip(p["coins"], p["coin_generations"]) if gen == 0
    )
    assert old, "some coins from before the reshuffle are held"
    for k in range(20):
        dd = st.determinize(0, seed=k).to_dict()
        assert (
            Counter(
                c
                for p in dd["players"]
                for c, gen in zip(p["coins"], p["coin_generations"])
                if gen == 0
            )
            == old
        )
        assert Counter(dd["draw_pile"]) + Counter(
            c
            for p in dd["players"]
            for c, gen in zip(p["coins"], p["coin_generations"])
            if gen == 1
        ) == Counter(d["draw_pile"]) + Counter(
            c for p in d["players"] for c, gen in zip(p["coins"], p["coin_generations"]) if gen == 1
        )


def test_observation_shows_no_hidden_information():
    # two positions that differ only in coin faces and draw pile order look the same to everyone
    g = game(3)
    st = _random_game(g, 4)
    st = g.new_initial_state(seed=4)
    rng = random.Random(2)
    for _ in range(200):
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    d = st.to_dict()
    d2 = json.loads(json.dumps(d))
    # swap one coin of seat 0 with one draw-pile card of a different variant (same generation)
    p0 = d2["players"][0]
    i = next(k for k, gen in enumerate(p0["coin_generations"]) if gen == d2["generation"])
    j = next(k for k, c in enumerate(d2["draw_pile"]) if c != p0["coins"][i])
    p0["coins"][i], d2["draw_pile"][j] = d2["draw_pile"][j], p0["coins"][i]
    other = g.state_from_dict(d2)
    assert other != st
    for seat in range(3):
        assert np.array_equal(other.observation_tensor(seat), st.observation_tensor(seat))
    assert g.observation_tensor_shape() == st.observation_tensor().shape
    # ... and the observation does change with public information
    d3 = json.loads(json.dumps(d))
    d3["players"][1]["coins"].append(d3["draw_pile"].pop())
    d3["players"][1]["coin_generations"].append(d3["generation"])
    assert not np.array_equal(g.state_from_dict(d3).observation_tensor(0), st.observation_tensor(0))


def test_observation_is_relative_to_the_seat():
    st = game(2).new_initial_state(seed=1)
    while st.is_chance_node():
        st.resolve_chance()
    d = st.to_dict()
    d["players"][1]["coins"].append(d["draw_pile"].pop())
    d["players"][1]["coin_generations"].append(d["generation"])
    s = caribsim.load_game("port_royal", players=2).state_from_dict(d)
    o0, o1 = s.observation_tensor(0), s.observation_tensor(1)
    n0, n1 = (len(p["coins"]) for p in d["players"])
    assert n0 != n1
    # own block first: [present, coins, VP, ...] (layout: docs/port_royal.md)
    block = 8 + len(core.CARD_IDS)
    assert (o0[1], o0[block + 1]) == (n0, n1) and (o1[1], o1[block + 1]) == (n1, n0)
    buf = np.zeros_like(o0)
    s.write_observation(buf, 1)
    assert np.array_equal(buf, o1)


def test_clone_is_independent_and_equal():
    st = game(4).new_initial_state(seed=8)
    c = st.clone()
    assert c == st
    c.resolve_chance()
    assert c != st and len(st.history()) == 0


def test_legal_actions_sorted_and_mask():
    g = game(4)
    rng = random.Random(3)
    st = g.new_initial_state(seed=3)
    while not st.is_terminal():
        la = st.legal_actions()
        assert la == sorted(set(la)) and la
        mask = st.legal_actions_mask()
        assert mask.sum() == len(la) and all(mask[a] for a in la)
        if not st.is_chance_node():
            assert st.legal_actions(st.current_player()) == la
            assert st.legal_actions((st.current_player() + 1) % 4) == []
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(la))
    assert st.legal_actions() == [] and st.returns() and abs(sum(st.returns()) - 1) < 1e-9
