"""§8.5.5 Guest house: the owner may move guests "at any time during any of his turns".

A turn he would skip (no choice) becomes a `guests` step when a guest move would give him a
choice: the moves that do, and `pass` (the turn is skipped as before). Turns that have a
decision offer the guest moves with it (test_expansion_rules.py).
"""

from __future__ import annotations

import random

import pytest
from pr_scenario import Scenario, act, board, doubloons, goods, legal

import caribsim

EXP = dict(expansion=True, all_31_buildings=True)


def scenario(players=3, face_up=None):
    return Scenario(players=players, face_up=face_up, **EXP)


def workers(state, seat):
    return board(state, seat)["buildings"]


# --- Trader (§8.5.5 with §6.1.6 Office, §8.5.6 Trading post) --------------------------
def _office_scenario():
    """Seat 1 holds tobacco, tobacco is in the trading house, his Office is empty and one
    guest is on his Guest house; seat 0, the Trader, has nothing to sell."""
    sc = scenario().house(tobacco=1).goods(1, tobacco=1)
    sc.building(1, "office", 0).building(1, "guest_house", 1).building(1, "small_market", 0)
    return sc.play_role("trader", 0)


def test_s8_5_5_trader_guest_to_office_opens_a_sale():
    st = _office_scenario()
    assert st.step_name() == "guests" and st.current_player() == 1 and st.phase() == "trader"
    # the Small market would not give him a sale: not offered here
    assert legal(st) == {"pass", "guest to office"}
    act(st, "guest to office")
    assert st.step_name() == "sell" and st.current_player() == 1 and "sell tobacco" in legal(st)
    before = doubloons(st, 1)
    act(st, "sell tobacco")
    assert doubloons(st, 1) == before + 3 and goods(st, 1) == {}
    assert workers(st, 1) == {"office": 1, "guest_house": 0, "small_market": 0}


def test_s8_5_5_trader_pass_at_the_guests_step_skips_the_turn():
    st = _office_scenario()
    act(st, "pass")
    assert st.phase() != "trader" or st.current_player() != 1
    assert goods(st, 1) == {"tobacco": 1} and workers(st, 1)["guest_house"] == 1


def test_s8_5_5_trader_guest_to_trading_post_with_a_full_house():
    sc = scenario().house(corn=1, indigo=1, sugar=1, coffee=1).goods(1, tobacco=1)
    sc.building(1, "trading_post", 0).building(1, "office", 0).building(1, "guest_house", 1)
    st = sc.play_role("trader", 0)
    assert st.step_name() == "guests" and st.current_player() == 1
    assert legal(st) == {
        "pass",
        "guest to trading post",
    }  # the Office cannot sell into a full house
    act(st, "guest to trading post", "sell tobacco to trading post")
    assert goods(st, 1) == {}


def test_s8_5_5_trader_without_a_useful_move_is_still_skipped():
    sc = scenario().house(tobacco=1).goods(1, tobacco=1)
    sc.building(1, "guest_house", 1).building(1, "large_market", 0)
    st = sc.play_role("trader", 0)
    assert not (st.phase() == "trader" and st.current_player() == 1)
    assert workers(st, 1)["guest_house"] == 1


# --- Builder (§4.3 quarries, §8.5.3 Black market, §8.5.11 Library) ---------------------
def test_s8_5_5_builder_guest_to_quarry_makes_a_building_affordable():
    sc = scenario().doubloons(1, 0).tiles(1, "quarry", 1)
    sc.building(1, "guest_house", 1).building(1, "harbor", 0)
    st = sc.play_role("builder", 0)
    act(st, "pass")  # the Builder
    assert st.step_name() == "guests" and st.current_player() == 1 and st.phase() == "builder"
    assert legal(st) == {"pass", "guest to quarry"}  # the Harbor would not help him build
    act(st, "guest to quarry")
    assert st.step_name() == "build" and "build small indigo plant" in legal(
        st
    )  # cost 1 - 1 quarry
    act(st, "build small indigo plant")
    assert "small_indigo_plant" in workers(st, 1) and doubloons(st, 1) == 0


# --- Settler (§6.1.2 Hacienda, §6.1.3 Construction hut, §8.5.11 Library) ---------------
def test_s8_5_5_settler_guest_to_construction_hut_opens_a_quarry():
    sc = (
        scenario(face_up=dict(corn=1))
        .building(1, "guest_house", 1)
        .building(1, "construction_hut", 0)
    )
    st = sc.play_role("settler", 0)
    act(st, "settle corn")  # no face-up plantation left
    assert st.step_name() == "guests" and st.current_player() == 1
    assert legal(st) == {"pass", "guest to construction hut"}
    act(st, "guest to construction hut")
    assert st.step_name() == "settle" and legal(st) == {"settle quarry", "pass"}
    act(st, "settle quarry")
    assert board(st, 1)["island"]["quarry"]["tiles"] == 1


def test_s8_5_5_settler_two_guests_open_the_library_second_pick_together():
    sc = scenario(face_up=dict(corn=1, indigo=1, sugar=1))
    sc.building(0, "guest_house", 2).building(0, "library", 0).building(0, "construction_hut", 0)
    st = sc.play_role("settler", 0)
    act(st, "settle corn", "settle indigo", "settle sugar")  # seats 0, 1, 2; none left face up
    # the Library pick needs the Library and, with no plantation left, the Construction hut
    assert st.step_name() == "guests" and st.current_player() == 0
    assert legal(st) == {"pass", "guest to construction hut", "guest to library"}
    act(st, "guest to library")
    assert st.step_name() == "guests" and legal(st) == {"pass", "guest to construction hut"}
    act(st, "guest to construction hut")
    assert st.step_name() == "library" and "settle quarry" in legal(st)


def test_s8_5_5_settler_a_move_whose_partner_opens_alone_is_not_offered():
    sc = scenario(face_up=dict(corn=2, indigo=1, sugar=1))
    sc.building(0, "guest_house", 2).building(0, "library", 0).building(0, "construction_hut", 0)
    st = sc.play_role("settler", 0)
    act(st, "settle corn", "settle indigo", "settle sugar")  # one corn is left face up
    # the Library alone opens the second pick; the Construction hut would add nothing to it
    assert st.step_name() == "guests" and legal(st) == {"pass", "guest to library"}
    act(st, "guest to library")
    assert st.step_name() == "library" and {"settle corn", "guest to construction hut"} <= legal(st)


# --- Captain (§6.1.12 Wharf, §8.5.8 Small wharf) ---------------------------------------
def test_s8_5_5_captain_guest_to_wharf_opens_a_loading():
    sc = scenario().ships(("corn", 1), ("indigo", 1), ("sugar", 1)).goods(1, coffee=2)
    sc.building(1, "guest_house", 1).building(1, "wharf", 0).building(1, "harbor", 0)
    st = sc.play_role("captain", 0)
    assert st.step_name() == "guests" and st.current_player() == 1 and st.phase() == "captain"
    assert legal(st) == {"pass", "guest to wharf"}
    act(st, "guest to wharf", "wharf coffee")
    assert goods(st, 1) == {}


# --- Craftsman (§5 production, before it) ------------------------------------------------
def _craftsman_scenario(guests):
    sc = scenario().clear_island(1).tiles(1, "coffee", 1, colonists=1).tiles(1, "tobacco", 1)
    sc.building(1, "coffee_roaster", 0).building(1, "tobacco_storage", 0).building(1, "harbor", 0)
    sc.building(1, "guest_house", guests)
    return sc.play_role("craftsman", 0)


def test_s8_5_5_craftsman_guest_to_coffee_roaster_before_production():
    st = _craftsman_scenario(1)
    assert st.step_name() == "guests" and st.current_player() == 1 and st.phase() == "craftsman"
    # the tobacco plantation or storage alone would produce nothing; the Harbor changes nothing
    assert legal(st) == {"pass", "guest to coffee roaster"}
    assert st.game.state_from_dict(st.to_dict()) == st
    act(st, "guest to coffee roaster")
    assert st.phase() != "craftsman" and goods(st, 1) == {"coffee": 1}


def test_s8_5_5_craftsman_pass_produces_as_before():
    st = _craftsman_scenario(1)
    act(st, "pass")
    assert goods(st, 1) == {} and workers(st, 1)["guest_house"] == 1


def test_s8_5_5_craftsman_two_guests_man_a_plantation_and_its_building():
    st = _craftsman_scenario(2)
    assert legal(st) == {
        "pass",
        "guest to coffee roaster",
        "guest to tobacco plantation",
        "guest to tobacco storage",
    }
    act(st, "guest to tobacco plantation")
    assert st.step_name() == "guests" and st.current_player() == 1
    assert legal(st) == {"pass", "guest to coffee roaster", "guest to tobacco storage"}
    act(st, "guest to tobacco storage")
    assert goods(st, 1) == {"tobacco": 1}


# --- the dict ---------------------------------------------------------------------------
def test_s8_5_5_guests_step_round_trips_and_is_validated():
    st = _office_scenario()
    d = st.to_dict()
    assert d["step"] == "guests" and st.game.state_from_dict(d) == st
    useless = dict(d, boards=[dict(b) for b in d["boards"]])
    useless["boards"][1] = dict(
        d["boards"][1], buildings={**d["boards"][1]["buildings"], "office": 1, "guest_house": 0}
    )
    with pytest.raises(ValueError, match="guests step is a turn the player would skip"):
        st.game.state_from_dict(useless)
    base = caribsim.load_game("puerto_rico", players=3)
    bd = base.new_initial_state(seed=0).to_dict()
    bd.update(step="guests", phase="trader")
    with pytest.raises(ValueError, match="'guests' needs the expansion"):
        base.state_from_dict(bd)


def _produced(state, a):
    """The seat's goods and doubloons after production when he plays `a` and the later
    owners pass."""
    c = state.clone()
    seat = c.current_player()
    c.apply_action(a)
    while c.step_name() == "guests" and c.phase() == "craftsman":
        c.apply_action(c.legal_actions()[0])
    b = board(c, seat)
    return b["doubloons"], tuple(sorted(goods(c, seat).items()))


def test_s8_5_5_every_offered_guest_move_opens_a_choice():
    """In random games every move offered at a guests step leads to a decision of the same
    player (or, with his second guest, to one more guests step that does); before Craftsman
    production each move of a single guest changes what he gets."""
    met = 0
    for players in (3, 4):
        g = caribsim.load_game("puerto_rico", players=players, expansion=True)
        for seed in range(80):
            rng = random.Random(seed)
            st = g.new_initial_state(seed=seed)
            while not st.is_terminal():
                if st.is_chance_node():
                    st.resolve_chance()
                    continue
                legal_ids = st.legal_actions()
                if st.step_name() == "guests" and st.phase() == "craftsman":
                    met += 1
                    if workers(st, st.current_player())["guest_house"] == 1:
                        passed = _produced(st, legal_ids[0])  # each move changes his production
                        assert all(_produced(st, a) != passed for a in legal_ids[1:]), seed
                elif st.step_name() == "guests":
                    met += 1
                    seat = st.current_player()
                    for a in legal_ids[1:]:
                        c = st.clone()
                        c.apply_action(a)
                        if c.step_name() == "guests":
                            nxt = c.legal_actions()[1:]
                            assert nxt
                            c.apply_action(nxt[0])
                        assert c.step_name() not in ("guests",) and c.current_player() == seat, (
                            seed,
                            a,
                        )
                st.apply_action(rng.choice(legal_ids))
    assert met > 0
