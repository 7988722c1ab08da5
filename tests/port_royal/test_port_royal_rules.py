"""Port Royal rules tests: one or more tests per section of the rules reference
(port_royal.md §1-§10), every test scenario T01-T33 and regression R01-R10 of §11, and the
checklist of issue 5. Positions are built with tests/port_royal/pry_scenario.py; the card revealed by a
reveal is chosen by the test (every reveal is a chance event)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from pry_scenario import (
    FULL_DECK,
    ROWS,
    act,
    coins,
    display,
    drain,
    make,
    names,
    reveal,
    total_cards,
)

import caribsim
from caribsim import _port_royal as core

SAILOR = "sailor_c3"
YELLOW_1_2 = "ship_pinnace_yellow_s1_c2"  # 1 sword, 2 coins
BLUE_1_1 = "ship_flute_blue_s1_c1"
BLUE_2_2 = "ship_flute_blue_s2_c2"
GREEN_1_1 = "ship_skiff_green_s1_c1"
RED_1_1 = "ship_frigate_red_s1_c1"
RED_3_2 = "ship_frigate_red_s3_c2"
RED_6_3 = "ship_frigate_red_s6_c3"
RED_SKULL = "ship_frigate_red_skull_c3"
BLACK_2_1 = "ship_galleon_black_s2_c1"
YELLOW_1_1 = "ship_pinnace_yellow_s1_c1"


def discard(st):
    return Counter(st.to_dict()["discard_pile"])


def to_phase2(st):
    act(st, "stop")
    drain(st)
    return st


# --------------------------------------------------------------------------------------
# §1 Components and setup
# --------------------------------------------------------------------------------------


def test_s1_1_R01_deck_has_120_cards_3_jacks_and_the_5p_expedition():
    rows = core.CARD_ROWS
    by_cat = Counter()
    for r in rows:
        by_cat[r["category"]] += int(r["count"])
    assert sum(by_cat.values()) == 120
    assert by_cat == {"ship": 50, "person": 60, "expedition": 6, "tax": 4}
    assert FULL_DECK["jack_of_all_trades_c6"] == 3
    assert FULL_DECK["expedition_anchor_cross_house_5p"] == 1
    types = Counter()
    for r in rows:
        types[r["ability"]] += int(r["count"])
    assert types["TRADER"] == 10 and types["SETTLER"] == types["CAPTAIN"] == types["PRIEST"] == 5
    assert types["SAILOR"] == 10 and types["PIRATE"] == 3 and types["MADEMOISELLE"] == 4
    assert types["JESTER"] == 5 and types["ADMIRAL"] == 6 and types["GOVERNOR"] == 4
    assert types["TAX_MOST_SWORDS"] == 2 and types["TAX_FEWEST_VP"] == 2


def test_s1_1_ships_10_per_colour_22_coins_each_and_sword_tiers():
    for colour in core.COLOUR_NAMES:
        ships = [r for r in core.CARD_ROWS if r["category"] == "ship" and r["colour"] == colour]
        assert sum(int(r["count"]) for r in ships) == 10
        assert sum(int(r["coins"]) * int(r["count"]) for r in ships) == 22


def test_R02_pirate_costs_and_R03_ship_names():
    pirates = sorted(
        (int(r["cost"]), int(r["vp"])) for r in core.CARD_ROWS if r["ability"] == "PIRATE"
    )
    assert pirates == [(5, 1), (7, 2), (9, 3)]
    red = Counter()
    for r in core.CARD_ROWS:
        if r["colour"] == "red" and r["category"] == "ship":
            assert "frigate" in r["id"]
            red["skull" if r["skull"] == "1" else r["swords"]] += int(r["count"])
    assert red == {"1": 3, "3": 3, "6": 2, "skull": 2}
    black = Counter()
    for r in core.CARD_ROWS:
        if r["colour"] == "black" and r["category"] == "ship":
            assert "galleon" in r["id"]
            black["skull" if r["skull"] == "1" else r["swords"]] += int(r["count"])
    assert black == {"2": 3, "4": 3, "7": 2, "skull": 2}


def _after_setup(players, seed=0, **kw):
    st = caribsim.load_game("port_royal", players=players, **kw).new_initial_state(seed=seed)
    while st.chance_event()[0] != "reveal":
        st.resolve_chance()
    return st


def test_T29_setup_5_players():
    st = _after_setup(5)
    d = st.to_dict()
    assert d["expedition_area"] == ["expedition_anchor_cross_house_5p"]
    assert d["box"] == []
    assert len(d["draw_pile"]) == 119 - 15 == 104
    assert coins(st) == [3] * 5


def test_T29_setup_4_players_5p_expedition_in_the_box():
    st = _after_setup(4)
    d = st.to_dict()
    assert d["expedition_area"] == [] and d["box"] == ["expedition_anchor_cross_house_5p"]
    assert len(d["draw_pile"]) == 107
    assert coins(st) == [3] * 4
    assert total_cards(st) == FULL_DECK


@pytest.mark.parametrize("players", [2, 3])
def test_s1_3_setup_small_counts(players):
    st = _after_setup(players)
    assert len(st.to_dict()["draw_pile"]) == 119 - 3 * players
    assert coins(st) == [3] * players


def test_s1_3_setup_deals_as_chance_events_and_start_player_option():
    game = caribsim.load_game("port_royal", players=3, start_player=2)
    st = game.new_initial_state(seed=5)
    assert st.is_chance_node() and st.chance_event() == ("draw", 0)
    assert st.start_player() == 2
    st = _after_setup(3, start_player=2)
    assert st.active_player() == 2 and st.chance_event() == ("reveal", 2)
    # random start player by seed: every seat occurs
    seen = {
        caribsim.load_game("port_royal", players=4).new_initial_state(seed=s).start_player()
        for s in range(60)
    }
    assert seen == {0, 1, 2, 3}


# --------------------------------------------------------------------------------------
# §2 Coins
# --------------------------------------------------------------------------------------


def test_s2_1_receiving_coins_takes_cards_from_the_draw_pile():
    st = make(2, coins={0: 0}, harbour=[BLUE_2_2])
    n_draw = len(st.to_dict()["draw_pile"])
    act(st, "stop", "take " + BLUE_2_2)
    moves = drain(st)
    assert [m[:2] for m in moves] == [("draw", 0), ("draw", 0)]
    assert coins(st, 0) == 2
    assert len(st.to_dict()["draw_pile"]) == n_draw - 2
    # the coins are exactly the cards drawn
    assert Counter(st.to_dict()["players"][0]["coins"]) == Counter(m[2] for m in moves)


def test_s2_2_paying_puts_coin_cards_face_up_on_the_discard_pile():
    st = make(2, coin_cards={0: ["priest_c4", "captain_c4", "settler_c4"]}, harbour=[SAILOR])
    act(st, "stop", "take " + SAILOR)
    moves = drain(st)
    assert [m[:2] for m in moves] == [("pay", 0)] * 3
    assert discard(st) == Counter({"priest_c4": 1, "captain_c4": 1, "settler_c4": 1})
    assert coins(st, 0) == 0 and display(st, 0) == {SAILOR: 1}


def test_s2_2_payment_outcomes_weighted_by_the_payers_coins():
    st = make(
        2, coin_cards={0: ["priest_c4", "priest_c4", "captain_c4", "settler_c4"]}, harbour=[SAILOR]
    )
    act(st, "stop", "take " + SAILOR)
    assert st.chance_event() == ("pay", 0)
    probs = {st.action_to_string(a): p for a, p in st.chance_outcomes()}
    assert probs == pytest.approx(
        {"card priest_c4": 0.5, "card captain_c4": 0.25, "card settler_c4": 0.25}
    )


def test_T27_reshuffle_during_a_coin_draw():
    ten = ["priest_c4"] * 5 + ["settler_c4"] * 5
    st = make(
        4,
        draw=[BLACK_2_1],
        discard=ten,
        display={0: ["admiral_c5"]},
        harbour=[YELLOW_1_1, BLUE_1_1, GREEN_1_1, SAILOR, "captain_c4"],
        leftover_seats=[2, 3],
    )
    act(st, "stop")  # Admiral: harbour of 5 -> +2 coins
    assert st.chance_event() == ("draw", 0)
    assert [a for a, _ in st.chance_outcomes()] == [st.string_to_action("card " + BLACK_2_1)]
    act(st, "card " + BLACK_2_1)
    d = st.to_dict()
    assert d["generation"] == 1 and len(d["draw_pile"]) == 10 and d["discard_pile"] == []
    assert st.chance_event() == ("draw", 0)
    probs = {st.action_to_string(a): p for a, p in st.chance_outcomes()}
    assert probs == pytest.approx({"card priest_c4": 0.5, "card settler_c4": 0.5})
    drain(st)
    assert len(st.to_dict()["draw_pile"]) == 9 and coins(st, 0) == 2
    assert total_cards(st) == FULL_DECK


def test_T28_both_piles_empty_phase1_stop_is_the_only_choice():
    st = make(4, draw=[], discard=[], leftover_seats=[2, 3])
    assert names(st) == ["stop"]


def test_T28_both_piles_empty_no_coins():
    st = make(
        4,
        draw=[],
        discard=[],
        display={0: ["admiral_c5"]},
        harbour=[YELLOW_1_1, BLUE_1_1, GREEN_1_1, SAILOR, "captain_c4"],
        leftover_seats=[2, 3],
    )
    before = coins(st, 0)
    act(st, "stop")
    assert not st.is_chance_node()  # the 2 Admiral coins cannot be drawn
    assert coins(st, 0) == before == 0


def test_T28_both_piles_empty_phase1_must_stop():
    # P2's turn begins with both piles empty: no reveal, only stop (or fulfil)
    st = make(
        4,
        active=1,
        revealed=0,
        draw=[],
        discard=[],
        display={1: ["captain_c4", "captain_c4"]},
        expeditions=["expedition_anchor_anchor"],
        leftover_seats=[2],
    )
    assert names(st) == ["stop", "fulfil expedition_anchor_anchor"]


def test_OPEN_PR_1_deadlock_ruling_game_ends_when_nothing_can_change():
    st = make(4, revealed=0, draw=[], discard=[], leftover_seats=[2])
    assert names(st) == ["stop"]
    act(st, "stop")  # nobody can take anything; P2's turn would be the same forever
    assert st.is_terminal() and st.to_dict()["turns"] == 2
    assert st.returns() == [0.0, 0.0, 1.0, 0.0]  # 0 VP each, seat 2 has the coins


# --------------------------------------------------------------------------------------
# §4 Turn structure
# --------------------------------------------------------------------------------------


def test_s4_clockwise_turns_and_first_reveal_compulsory():
    st = make(3, active=2, harbour=[SAILOR], step="take", takers_done=2, picks_left=1)
    act(st, "pass")
    assert st.active_player() == 0  # the left neighbour of seat 2 in 3 players
    # the first reveal is compulsory: no decision, a reveal chance event at once
    assert st.chance_event() == ("reveal", 0)


def test_s4_expedition_can_be_fulfilled_before_the_first_reveal():
    st = make(
        3,
        active=2,
        harbour=[SAILOR],
        step="take",
        takers_done=2,
        picks_left=1,
        display={0: ["captain_c4", "captain_c4"]},
        expeditions=["expedition_anchor_anchor"],
    )
    act(st, "pass")
    assert st.current_player() == 0 and names(st) == ["reveal", "fulfil expedition_anchor_anchor"]


# --------------------------------------------------------------------------------------
# §5 Discover
# --------------------------------------------------------------------------------------


def test_s5_2_person_goes_to_the_harbour():
    st = make(2)
    reveal(st, "governor_c8")
    assert st.to_dict()["harbour"] == {"governor_c8": 1}
    assert names(st) == ["reveal", "stop"]


def test_s5_1_reveal_chance_outcomes_are_the_draw_pile_composition():
    st = make(2)
    act(st, "reveal")
    pile = Counter(st.to_dict()["draw_pile"])
    probs = {st.action_to_string(a)[5:]: p for a, p in st.chance_outcomes()}
    total = sum(pile.values())
    assert probs == pytest.approx({c: k / total for c, k in pile.items()})


def test_T01_repel_flute_with_sailor_and_pirate_swords_not_used_up():
    st = make(4, display={0: [SAILOR, "pirate_c5"]})
    reveal(st, BLUE_2_2)
    assert st.step_name() == "repel" and names(st) == ["repel", "dock"]
    act(st, "repel")
    assert discard(st) == Counter({BLUE_2_2: 1}) and st.to_dict()["harbour"] == {}
    assert display(st, 0) == {SAILOR: 1, "pirate_c5": 1}
    reveal(st, "ship_flute_blue_s2_c3")  # the same swords repel again
    assert names(st) == ["repel", "dock"]


def test_T08_equal_swords_may_repel():
    st = make(2, display={0: ["pirate_c5"]})
    reveal(st, BLACK_2_1)
    assert names(st) == ["repel", "dock"]


def test_T09_insufficient_swords_must_dock_and_bust_on_a_duplicate_colour():
    st = make(2, display={0: ["pirate_c5"]})
    reveal(st, RED_3_2)
    assert st.to_dict()["harbour"] == {RED_3_2: 1}  # docked without a decision
    assert names(st) == ["reveal", "stop"]
    reveal(st, "ship_frigate_red_s3_c2")
    # bust: harbour to the discard pile, next player's turn (reveal chance of seat 1)
    assert st.to_dict()["harbour"] == {}
    assert discard(st)[RED_3_2] == 2
    assert st.chance_event() == ("reveal", 1)


def test_T10_skull_ship_cannot_be_repelled():
    st = make(
        2, display={0: ["pirate_c5", "pirate_c7", "pirate_c9", SAILOR, SAILOR, SAILOR, SAILOR]}
    )
    assert st.to_dict()["players"][0]["display"]
    reveal(st, RED_SKULL)
    assert st.to_dict()["harbour"] == {RED_SKULL: 1} and st.step_name() == "discover"


def test_T11_voluntary_bust_OPEN_PR_2():
    st = make(2, display={0: ["pirate_c5"]}, harbour=[YELLOW_1_1])
    reveal(st, YELLOW_1_2)
    assert names(st) == ["repel", "dock"]
    repelled = st.clone()
    act(repelled, "repel")
    assert repelled.to_dict()["harbour"] == {YELLOW_1_1: 1} and repelled.step_name() == "discover"
    act(st, "dock")
    assert st.to_dict()["harbour"] == {} and st.active_player() == 1


def test_s5_4_expedition_goes_to_the_expedition_area_and_stays():
    st = make(2, harbour=[SAILOR])
    reveal(st, "expedition_cross_cross")
    d = st.to_dict()
    assert d["expedition_area"] == ["expedition_cross_cross"] and d["harbour"] == {SAILOR: 1}
    # end of phase 2 discards the harbour, not the expedition (nobody can hire the Sailor)
    act(st, "stop")
    d = st.to_dict()
    assert d["expedition_area"] == ["expedition_cross_cross"]
    assert d["discard_pile"].count(SAILOR) == 1


def test_T06_tax_halving_then_most_swords():
    st = make(
        4, coins={0: 13, 1: 12, 2: 11}, display={0: [SAILOR, SAILOR], 1: ["pirate_c5"], 2: [SAILOR]}
    )
    reveal(st, "tax_most_swords")
    moves = drain(st)
    assert Counter(m[:2] for m in moves) == Counter(
        {("pay", 0): 6, ("pay", 1): 6, ("draw", 0): 1, ("draw", 1): 1}
    )
    # halving first (all payments before the bonus draws)
    kinds = [m[0] for m in moves]
    assert kinds == ["pay"] * 12 + ["draw"] * 2
    assert coins(st) == [8, 7, 11, 0]
    assert discard(st)["tax_most_swords"] == 1
    assert sum(discard(st).values()) == 13
    assert st.step_name() == "discover" and st.current_player() == 0


def test_T07_R07_tax_everybody_tied_at_zero():
    for card in ("tax_fewest_vp", "tax_most_swords"):
        st = make(4)
        reveal(st, card)
        drain(st)
        assert coins(st) == [1, 1, 1, 1], card


def test_s5_5_tax_fewest_vp_ties():
    st = make(4, display={0: [SAILOR], 1: ["captain_c4"], 3: ["sailor_c5"]})
    reveal(st, "tax_fewest_vp")
    drain(st)
    assert coins(st) == [0, 0, 1, 0]  # only seat 2 has the fewest VP (0)
    st = make(4, display={0: [SAILOR], 3: ["sailor_c5"]})
    reveal(st, "tax_fewest_vp")
    drain(st)
    assert coins(st) == [0, 1, 1, 0]  # seats 1 and 2 tied at 0 VP


def test_s5_5_tax_most_swords_ties_and_the_active_player_too():
    st = make(4, active=2, display={0: ["pirate_c5"], 2: [SAILOR, SAILOR], 3: [SAILOR]})
    reveal(st, "tax_most_swords")
    drain(st)
    assert coins(st) == [1, 0, 1, 0]


def test_R06_tax_threshold_exactly_12_taxed_11_not():
    st = make(4, coins={0: 12, 1: 11, 2: 13, 3: 25}, display={1: [SAILOR]})
    reveal(st, "tax_most_swords")
    drain(st)
    assert coins(st) == [6, 12, 7, 13]  # 12->6, 11 kept (+1 swords bonus), 13->7, 25->13


def test_s5_6_stop_with_an_empty_harbour_after_repelling():
    st = make(2, display={0: [SAILOR]})
    reveal(st, BLUE_1_1)
    act(st, "repel")
    assert names(st) == ["reveal", "stop"]


def test_T12_R10_bust_with_expedition_and_jesters():
    st = make(
        4,
        harbour=[RED_1_1, "settler_c4"],
        expeditions=["expedition_house_house"],
        display={0: ["jester_c5"], 1: ["jester_c7", "jester_c9"]},
    )
    reveal(st, RED_3_2)
    moves = drain(st)
    assert Counter(m[:2] for m in moves) == Counter({("draw", 0): 1, ("draw", 1): 2})
    d = st.to_dict()
    assert d["harbour"] == {} and d["expedition_area"] == ["expedition_house_house"]
    assert Counter(d["discard_pile"]) == Counter({RED_1_1: 1, RED_3_2: 1, "settler_c4": 1})
    assert coins(st) == [1, 2, 0, 0]
    assert st.chance_event() == ("reveal", 1)  # no phase 2; P2 starts his turn


# --------------------------------------------------------------------------------------
# §6 Expeditions
# --------------------------------------------------------------------------------------


def test_T02_fulfil_cross_cross_with_priest_and_jack():
    st = make(
        4,
        active=1,
        display={1: ["priest_c4", "jack_of_all_trades_c6"]},
        expeditions=["expedition_cross_cross"],
    )
    assert st.scores()[1]["total"] == 2
    assert "fulfil expedition_cross_cross jack for cross" in names(st)
    assert "fulfil expedition_cross_cross" not in names(st)  # only one Priest
    act(st, "fulfil expedition_cross_cross jack for cross")
    moves = drain(st)
    assert [m[:2] for m in moves] == [("draw", 1), ("draw", 1)]
    assert display(st, 1) == {"expedition_cross_cross": 1}
    assert discard(st) == Counter({"priest_c4": 1, "jack_of_all_trades_c6": 1})
    assert coins(st, 1) == 2 and st.scores()[1]["total"] == 4
    assert st.to_dict()["expedition_area"] == []
    assert st.current_player() == 1 and st.step_name() == "discover"


def test_T32_jack_as_joker_and_choice_of_the_joker():
    st = make(
        4,
        display={0: ["captain_c4", "settler_c4", "jack_of_all_trades_c6"]},
        expeditions=["expedition_anchor_anchor_house"],
    )
    assert [n for n in names(st) if n.startswith("fulfil")] == [
        "fulfil expedition_anchor_anchor_house jack for anchor"
    ]
    act(st, "fulfil expedition_anchor_anchor_house jack for anchor")
    drain(st)
    assert display(st, 0) == {"expedition_anchor_anchor_house": 1}
    assert coins(st, 0) == 3 and st.scores()[0]["total"] == 6


def test_s6_joker_choice_when_real_persons_suffice():
    st = make(
        4,
        display={0: ["captain_c4", "captain_c4", "jack_of_all_trades_c6"]},
        expeditions=["expedition_anchor_anchor"],
    )
    fulfils = [n for n in names(st) if n.startswith("fulfil")]
    assert fulfils == [
        "fulfil expedition_anchor_anchor",
        "fulfil expedition_anchor_anchor jack for anchor",
    ]
    act(st, "fulfil expedition_anchor_anchor")
    drain(st)
    assert display(st, 0) == {"jack_of_all_trades_c6": 1, "expedition_anchor_anchor": 1}


def test_s6_no_fulfil_without_the_symbols():
    st = make(4, display={0: ["captain_c4", "priest_c4"]}, expeditions=["expedition_anchor_anchor"])
    assert names(st) == ["reveal", "stop"]


def test_s6_fulfil_in_phase_2_before_and_after_picks():
    st = make(
        4,
        display={0: ["captain_c4"]},
        expeditions=["expedition_anchor_anchor"],
        harbour=["captain_c4", BLUE_1_1],
        coins={0: 4},
    )
    act(st, "stop")
    assert names(st) == ["pass", "take " + BLUE_1_1, "take captain_c4"]
    act(st, "take captain_c4")
    drain(st)
    # no picks left, but the expedition is now possible: a decision after the last pick
    assert names(st) == ["pass", "fulfil expedition_anchor_anchor"]
    act(st, "fulfil expedition_anchor_anchor")
    drain(st)
    assert display(st, 0) == {"expedition_anchor_anchor": 1}
    assert st.current_player() == 1  # seat 1's take-turn (the Flute is left)


def test_s6_5_player_expedition():
    st = make(5, display={0: ["captain_c4", "priest_c4", "settler_c4"]})
    assert st.to_dict()["expedition_area"] == ["expedition_anchor_cross_house_5p"]
    act(st, "fulfil expedition_anchor_cross_house_5p")
    moves = drain(st)
    assert len(moves) == 3
    assert st.scores()[0]["total"] == 5 and st.scores()[0]["expedition_vp"] == 5
    assert discard(st) == Counter({"captain_c4": 1, "priest_c4": 1, "settler_c4": 1})


def test_T30_only_the_active_player_fulfils():
    st = make(
        4,
        display={1: ["captain_c4", "captain_c4"]},
        expeditions=["expedition_anchor_anchor"],
        harbour=[BLUE_1_1, GREEN_1_1],
    )
    act(st, "stop", "take " + BLUE_1_1)
    drain(st)
    assert st.current_player() == 1
    assert names(st) == ["pass", "take " + GREEN_1_1]  # no fulfil in P1's turn
    act(st, "pass", "pass", "pass")
    assert st.active_player() == 1
    reveal(st, SAILOR)
    assert "fulfil expedition_anchor_anchor" in names(st)


def test_T24_OPEN_PR_7_vp_do_not_decrease_and_end_stays():
    disp = [
        "captain_c4",
        "settler_c4",
        "jack_of_all_trades_c6",
        "admiral_c9",
        "admiral_c9",
        "pirate_c9",
    ]
    st = make(
        4,
        active=1,
        display={1: disp},
        expeditions=["expedition_anchor_anchor_house"],
        end_triggered=True,
    )
    assert st.scores()[1]["total"] == 12
    act(st, "fulfil expedition_anchor_anchor_house jack for anchor")
    drain(st)
    assert st.scores()[1]["total"] == 15 and st.to_dict()["end_triggered"]


# --------------------------------------------------------------------------------------
# §7 Trade and hire
# --------------------------------------------------------------------------------------


def test_T03_trading_a_ship_and_traders():
    for extra, expected in (([], 2), (["trader_blue_c3"], 3), (["trader_yellow_c3"], 2)):
        st = make(4, display={0: extra}, harbour=[BLUE_2_2])
        act(st, "stop", "take " + BLUE_2_2)
        drain(st)
        assert coins(st, 0) == expected, extra
        assert discard(st)[BLUE_2_2] == 1


def test_T22_traders_stack():
    st = make(4, display={0: ["trader_red_c3", "trader_red_c3"]}, harbour=[RED_6_3])
    act(st, "stop", "take " + RED_6_3)
    drain(st)
    assert coins(st, 0) == 5


def test_T04_hiring_a_sailor_and_mademoiselles():
    st = make(4, active=1, coins={1: 3}, harbour=[SAILOR])
    act(st, "stop", "take " + SAILOR)
    moves = drain(st)
    assert [m[:2] for m in moves] == [("pay", 1)] * 3
    assert coins(st, 1) == 0 and st.scores()[1]["swords"] == 1 and len(discard(st)) > 0
    st = make(4, active=1, coins={1: 3}, harbour=[SAILOR], display={1: ["mademoiselle_c7"]})
    act(st, "stop", "take " + SAILOR)
    drain(st)
    assert coins(st, 1) == 1
    st = make(
        4,
        active=1,
        coins={1: 1},
        harbour=[SAILOR],
        display={1: ["mademoiselle_c7", "mademoiselle_c9"]},
    )
    act(st, "stop", "take " + SAILOR)
    drain(st)
    assert coins(st, 1) == 0 and display(st, 1)[SAILOR] == 1


def test_s7_5_cannot_hire_without_the_coins():
    st = make(4, coins={0: 2}, harbour=[SAILOR, BLUE_1_1])
    act(st, "stop")
    assert names(st) == ["pass", "take " + BLUE_1_1]


def test_T05_complete_phase_2():
    st = make(4, coins={0: 3, 1: 3}, harbour=[YELLOW_1_2, BLUE_1_1, GREEN_1_1, RED_1_1, SAILOR])
    act(st, "stop")
    assert st.to_dict()["picks_left"] == 2
    act(st, "take " + YELLOW_1_2)
    drain(st)
    assert coins(st, 0) == 5
    act(st, "take " + SAILOR)
    drain(st)
    assert coins(st, 0) == 2 and st.current_player() == 1
    act(st, "take " + BLUE_1_1)
    moves = drain(st)
    assert [m[:2] for m in moves] == [("draw", 1), ("fee", 1)]
    assert coins(st, 0) == 3 and coins(st, 1) == 3
    assert st.current_player() == 2
    act(st, "pass")
    assert st.current_player() == 3
    act(st, "pass")
    d = st.to_dict()
    assert d["harbour"] == {} and Counter(d["discard_pile"]) >= Counter({GREEN_1_1: 1, RED_1_1: 1})
    assert st.chance_event() == ("reveal", 1)


@pytest.mark.parametrize(
    "harbour,governors,picks",
    [
        ([YELLOW_1_1, BLUE_1_1, GREEN_1_1, SAILOR, "captain_c4"], 0, 1),
        ([YELLOW_1_1, BLUE_1_1, GREEN_1_1, RED_1_1, BLACK_2_1], 0, 3),
        ([SAILOR, "captain_c4"], 0, 1),
        ([YELLOW_1_1, BLUE_1_1, GREEN_1_1, RED_1_1], 1, 3),
        ([YELLOW_1_1, BLUE_1_1, GREEN_1_1, RED_1_1, BLACK_2_1], 2, 5),
    ],
)
def test_T13_allowance(harbour, governors, picks):
    st = make(4, coins={0: 10}, harbour=harbour, display={0: ["governor_c8"] * governors})
    act(st, "stop")
    drain(st)
    assert st.current_player() == 0 and st.to_dict()["picks_left"] == picks


def test_s7_1_allowance_counted_at_the_start_of_the_take_turn():
    st = make(4, harbour=[YELLOW_1_1, BLUE_1_1, GREEN_1_1, RED_1_1, BLACK_2_1])
    act(st, "stop")
    for ship in (YELLOW_1_1, BLUE_1_1):
        act(st, "take " + ship)
        drain(st)
    assert st.current_player() == 0 and st.to_dict()["picks_left"] == 1
    act(st, "take " + GREEN_1_1)
    drain(st)
    assert st.current_player() == 1


def test_T14_fee_paid_from_the_ship_income():
    st = make(4, harbour=[BLUE_1_1], step="take", takers_done=1, picks_left=1)
    act(st, "take " + BLUE_1_1)
    moves = drain(st)
    assert [m[:2] for m in moves] == [("draw", 1), ("fee", 1)]
    assert coins(st, 1) == 0 and coins(st, 0) == 1
    # the fee coin is the card drawn: it moves to the active player's coins
    assert st.to_dict()["players"][0]["coins"] == [moves[0][2]]
    st = make(
        4,
        harbour=[BLUE_1_1],
        step="take",
        takers_done=1,
        picks_left=1,
        display={1: ["trader_blue_c3"]},
    )
    act(st, "take " + BLUE_1_1)
    drain(st)
    assert coins(st, 1) == 1 and coins(st, 0) == 1


def test_T15_non_active_hiring_costs_cost_plus_fee():
    st = make(4, coins={1: 4}, harbour=[SAILOR, BLUE_1_1], step="take", takers_done=1, picks_left=1)
    assert "take " + SAILOR in names(st)
    act(st, "take " + SAILOR)
    moves = drain(st)
    assert [m[:2] for m in moves] == [("pay", 1)] * 3 + [("fee", 1)]
    assert coins(st, 1) == 0 and coins(st, 0) == 1 and display(st, 1) == {SAILOR: 1}
    assert sum(discard(st).values()) == 3
    st = make(4, coins={1: 3}, harbour=[SAILOR, BLUE_1_1], step="take", takers_done=1, picks_left=1)
    assert names(st) == ["pass", "take " + BLUE_1_1]


def test_T16_active_player_takes_nothing_others_may():
    st = make(4, coins={1: 5, 2: 5, 3: 5}, harbour=[SAILOR, "captain_c4", BLUE_1_1, GREEN_1_1])
    act(st, "stop")
    assert "pass" in names(st)
    act(st, "pass")
    for seat in (1, 2, 3):
        assert st.current_player() == seat
        act(
            st,
            "take " + BLUE_1_1
            if seat == 1
            else ("take " + SAILOR if seat == 2 else "take captain_c4"),
        )
        drain(st)
    assert coins(st, 0) == 3  # one fee per other player


def test_T17_R04_admiral_at_the_start_of_the_take_turn():
    five = [YELLOW_1_1, BLUE_1_1, GREEN_1_1, SAILOR, "captain_c4"]
    # (a) 5 cards when P2's take-turn begins -> +4, also if he then passes
    st = make(4, harbour=five, display={1: ["admiral_c7", "admiral_c9"]})
    act(st, "stop", "pass")
    moves = drain(st)
    assert [m[:2] for m in moves] == [("draw", 1)] * 4
    act(st, "pass")
    assert coins(st, 1) == 4
    # (b) the active player took 1 of 5 -> 4 left -> nothing
    st = make(4, harbour=five, display={1: ["admiral_c7", "admiral_c9"]})
    act(st, "stop", "take " + YELLOW_1_1)
    drain(st)
    assert st.current_player() == 1 and coins(st, 1) == 0
    # expeditions in the expedition area never count; the active player's Admiral pays too
    st = make(
        4, harbour=five[:4], expeditions=["expedition_cross_cross"], display={0: ["admiral_c5"]}
    )
    act(st, "stop")
    assert not st.is_chance_node() and coins(st, 0) == 0
    st = make(4, harbour=five, display={0: ["admiral_c5"]})
    act(st, "stop")
    drain(st)
    assert coins(st, 0) == 2


def test_T18_jester_with_an_empty_harbour():
    st = make(4, display={0: ["jester_c5"], 2: ["jester_c7", "governor_c8"]})
    reveal(st, BLUE_1_1)
    st = make(4, display={0: [SAILOR, "jester_c5"], 2: ["jester_c7", "governor_c8"]})
    reveal(st, BLUE_1_1)
    act(st, "repel", "stop")
    moves = drain(st)
    assert [m[:2] for m in moves] == [("draw", 2)]  # once, only the non-active owner
    assert coins(st) == [0, 0, 1, 0]


def test_T33_R09_phase_2_with_an_empty_harbour():
    st = make(4, display={0: [SAILOR], 1: ["jester_c5"], 3: ["jester_c7", "jester_c9"]})
    reveal(st, BLUE_1_1)
    act(st, "repel", "stop")
    moves = drain(st)
    assert Counter(m[:2] for m in moves) == Counter({("draw", 1): 1, ("draw", 3): 2})
    assert st.active_player() == 1


def test_T19_R05_governor_for_a_non_active_player():
    st = make(4, coins={1: 10}, display={1: ["governor_c8"]}, harbour=[SAILOR, BLUE_1_1, GREEN_1_1])
    act(st, "stop", "pass")
    assert st.current_player() == 1 and st.to_dict()["picks_left"] == 2
    act(st, "take " + SAILOR)
    drain(st)
    assert st.current_player() == 1
    act(st, "take " + BLUE_1_1)
    drain(st)
    assert st.current_player() == 2
    assert coins(st, 0) == 2 and coins(st, 1) == 10 - 3 - 1 + 1 - 1


def test_T20_governor_hired_during_a_take_turn_adds_a_card():
    st = make(4, coins={0: 8}, harbour=["governor_c8", BLUE_1_1, GREEN_1_1, RED_1_1])
    act(st, "stop")
    assert st.to_dict()["picks_left"] == 1
    act(st, "take governor_c8")
    drain(st)
    assert st.current_player() == 0 and st.to_dict()["picks_left"] == 1
    assert "take " + BLUE_1_1 in names(st)


def test_T21_mademoiselle_floor_and_undiscounted_fee():
    mads = ["mademoiselle_c7", "mademoiselle_c7", "mademoiselle_c9", "mademoiselle_c9"]
    st = make(
        4,
        coins={1: 1},
        display={1: mads},
        harbour=[SAILOR, BLUE_1_1],
        step="take",
        takers_done=1,
        picks_left=1,
    )
    act(st, "take " + SAILOR)
    moves = drain(st)
    assert [m[:2] for m in moves] == [("fee", 1)]
    assert coins(st, 1) == 0 and coins(st, 0) == 1
    st = make(4, display={0: mads}, harbour=[SAILOR])
    act(st, "stop")
    assert names(st) == ["pass", "take " + SAILOR]


def test_s7_6_remaining_players_get_nothing_when_the_harbour_is_empty():
    st = make(4, harbour=[BLUE_1_1])
    act(st, "stop", "take " + BLUE_1_1)
    drain(st)
    assert st.chance_event() == ("reveal", 1)  # seats 1-3 had nothing to take


# --------------------------------------------------------------------------------------
# §9 End of game, §10 winner
# --------------------------------------------------------------------------------------

ELEVEN = ["admiral_c9", "admiral_c9", "pirate_c9", "sailor_c5"]  # 3+3+3+2 = 11 VP


def _finish_random(st, seed=0):
    rng = random.Random(seed)
    turns = []
    while not st.is_terminal():
        if st.is_chance_node():
            st.resolve_chance()
        else:
            if not turns or turns[-1] != st.active_player():
                turns.append(st.active_player())
            st.apply_action(rng.choice(st.legal_actions()))
    return turns


def test_T23a_trigger_in_p2_turn_round_completed():
    st = make(4, active=1, coins={1: 3}, display={1: ELEVEN}, harbour=[SAILOR])
    act(st, "stop", "take " + SAILOR)
    drain(st)
    assert st.to_dict()["end_triggered"] and st.scores()[1]["total"] == 12
    for seed in range(5):
        c = st.clone()
        turns = _finish_random(c, seed)
        assert c.to_dict()["active"] == 3 and c.to_dict()["turns"] == 3
        assert set(turns) <= {1, 2, 3} and turns[-1] == 3


def test_T23b_trigger_in_the_last_players_turn_ends_at_its_end():
    st = make(4, active=3, coins={3: 3}, display={3: ELEVEN}, harbour=[SAILOR])
    act(st, "stop", "take " + SAILOR)
    drain(st)
    assert st.is_terminal() and st.to_dict()["turns"] == 1
    assert st.returns() == [0.0, 0.0, 0.0, 1.0]


def test_T23c_non_active_trigger_in_p1_phase_2():
    st = make(4, active=0, coins={2: 4}, display={2: ELEVEN}, harbour=[SAILOR, BLUE_1_1])
    act(st, "stop", "take " + BLUE_1_1)
    drain(st)
    assert st.current_player() == 2  # seat 1 cannot pay for the Sailor: skipped
    act(st, "take " + SAILOR)
    drain(st)
    assert st.to_dict()["end_triggered"]
    for seed in range(5):
        c = st.clone()
        _finish_random(c, seed)
        assert c.to_dict()["active"] == 3 and c.to_dict()["turns"] == 4


def test_R08_default_end_rule_12_vp_alone_triggers():
    st = make(4, active=1, coins={1: 3}, display={1: ELEVEN}, harbour=[SAILOR])
    act(st, "stop", "take " + SAILOR)
    assert st.to_dict()["end_triggered"]


def test_T25_variant_end_requires_an_expedition():
    st = make(
        4, active=1, coins={1: 3}, display={1: ELEVEN}, harbour=[SAILOR], require_expedition=True
    )
    act(st, "stop", "take " + SAILOR)
    drain(st)
    assert not st.to_dict()["end_triggered"]
    # at the end: P2 14 VP without expedition, P3 12 VP with one -> P3 wins
    st = make(
        4,
        active=3,
        end_triggered=True,
        require_expedition=True,
        display={
            1: [*ELEVEN, "pirate_c7", "jester_c5"],
            2: ["expedition_cross_cross_house", "mademoiselle_c9", "jester_c9"],
        },
        coins={1: 9},
    )
    assert st.scores()[1]["total"] == 14 and st.scores()[2]["total"] == 12
    act(st, "stop")
    drain(st)
    assert st.is_terminal()
    assert st.returns() == [0.0, 0.0, 1.0, 0.0]


def test_s9_2_variant_trigger_with_expedition():
    st = make(
        4,
        active=1,
        display={1: ["captain_c4", "captain_c4", "admiral_c9", "admiral_c9", "pirate_c9"]},
        expeditions=["expedition_anchor_anchor"],
        require_expedition=True,
    )
    act(st, "fulfil expedition_anchor_anchor")
    assert st.scores()[1]["total"] == 13 and st.to_dict()["end_triggered"]


def test_T26_tie_breaks_most_coins_then_shared():
    thirteen = [*ELEVEN, "sailor_c5"]
    st = make(
        4,
        active=3,
        end_triggered=True,
        display={
            0: thirteen,
            1: [
                "admiral_c7",
                "admiral_c7",
                "admiral_c7",
                "pirate_c7",
                "mademoiselle_c9",
                "mademoiselle_c7",
            ],
        },
        coins={0: 4, 1: 2},
    )
    assert st.scores()[0]["total"] == st.scores()[1]["total"] == 13
    act(st, "stop")
    drain(st)
    assert st.is_terminal() and st.returns() == [1.0, 0.0, 0.0, 0.0]
    st = make(
        4,
        active=3,
        end_triggered=True,
        display={
            0: thirteen,
            1: [
                "admiral_c7",
                "admiral_c7",
                "admiral_c7",
                "pirate_c7",
                "mademoiselle_c9",
                "mademoiselle_c7",
            ],
        },
        coins={0: 3, 1: 3},
    )
    act(st, "stop")
    drain(st)
    assert st.returns() == [0.5, 0.5, 0.0, 0.0]


# --------------------------------------------------------------------------------------
# T31 no flipping, and the card identity bookkeeping
# --------------------------------------------------------------------------------------


def test_T31_no_flipping_coins_never_become_persons():
    game = caribsim.load_game("port_royal", players=3)
    rng = random.Random(3)
    for g in range(20):
        st = game.new_initial_state(seed=g)
        while not st.is_terminal():
            if st.is_chance_node():
                st.resolve_chance()
                continue
            before = st.to_dict()
            a = rng.choice(st.legal_actions())
            name = st.action_to_string(a)
            st.apply_action(a)
            after = st.to_dict()
            seat = before["player"]
            grown = Counter(after["players"][seat]["display"]) - Counter(
                before["players"][seat]["display"]
            )
            if name.startswith("take "):
                card = name[5:]
                assert card in before["harbour"]
                assert grown == (
                    Counter({card: 1}) if ROWS[card]["category"] == "person" else Counter()
                )
            elif name.startswith("fulfil "):
                assert set(grown) == {name.split()[1]}
            else:
                assert not grown
            # a decision never changes anybody's coins (only chance events move coin cards)
            assert [p["coins"] for p in after["players"]] == [p["coins"] for p in before["players"]]
