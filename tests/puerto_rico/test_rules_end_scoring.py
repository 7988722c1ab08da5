"""Rules reference §6.2 (large buildings), §7 (end triggers, timing, scoring, tie-break) and the
§8.3.2 option all_colonists_and_vp; scenarios T11-T15, T34, T35, T39, R12."""

import copy

import pytest
from pr_scenario import Scenario, act, finish_phase, legal

SMALL = [
    "small_market",
    "hacienda",
    "construction_hut",
    "small_warehouse",
    "hospice",
    "office",
    "large_market",
    "large_warehouse",
    "factory",
    "university",
    "harbor",
]


def _terminal(sc):
    d = copy.deepcopy(sc.d)
    d["phase"], d["step"], d["player"] = "end", "terminal", None
    d["selections_done"], d["turns_done"], d["idle_turns"] = 0, 0, 0
    d["end_triggered"] = True
    for r in d["roles"].values():
        r["taken_by"] = None
    st = sc.game.state_from_dict(d)
    assert st.is_terminal()
    return st


# --- §6.2 large buildings and §7.4 scoring --------------------------------------------


def test_T11_guild_hall():
    sc = Scenario(players=4).building(1, "guild_hall", colonists=1)
    for b in ("small_sugar_mill", "sugar_mill", "small_indigo_plant", "coffee_roaster"):
        sc.building(1, b)
    s = sc.state().scores()[1]
    assert s["bonus_vp"] == 6
    assert s["building_vp"] == 4 + 1 + 2 + 1 + 3
    assert s["total"] == 4 + 7 + 6
    sc.board(1)["buildings"]["guild_hall"] = 0  # unoccupied: no bonus
    sc.d["colonists"]["supply"] += 1
    s = sc.state().scores()[1]
    assert s["bonus_vp"] == 0 and s["building_vp"] == 11


@pytest.mark.parametrize("filled,bonus", [(1, 4), (9, 4), (10, 5), (11, 6), (12, 7)])
def test_T12_residence(filled, bonus):
    sc = Scenario(players=4).clear_island(1).building(1, "residence", colonists=1)
    sc.tiles(1, "sugar", filled - 1, colonists=0)  # unoccupied tiles count as filled
    if filled > 1:
        sc.tiles(1, "quarry", 1, colonists=1)
    else:
        sc.tiles(1, "corn", 1)
    s = sc.state().scores()[1]
    assert s["bonus_vp"] == bonus
    assert s["total"] == 4 + bonus


def test_T13_fortress():
    sc = Scenario(players=4).clear_island(1).building(1, "fortress", colonists=1)
    sc.tiles(1, "corn", 3, colonists=3).building(1, "indigo_plant", colonists=3)
    sc.san_juan(1, 13)  # 1 + 3 + 3 + 13 = 20 colonists
    assert sc.state().scores()[1]["bonus_vp"] == 6
    sc.san_juan(1, 1)  # 21 -> 7
    assert sc.state().scores()[1]["bonus_vp"] == 7


def test_T14_customs_house():
    sc = Scenario(players=4).building(1, "customs_house", colonists=1).vp(1, 23)
    s = sc.state().scores()[1]
    assert s["bonus_vp"] == 5
    assert s["vp_chips"] == 23 and s["building_vp"] == 4 and s["total"] == 32


def test_T15_city_hall():
    sc = Scenario(players=4)
    for b in ("hacienda", "construction_hut", "office", "large_warehouse", "harbor", "residence"):
        sc.building(1, b)
    sc.building(1, "city_hall", colonists=1)
    sc.building(1, "small_indigo_plant").building(1, "coffee_roaster")  # not violet
    s = sc.state().scores()[1]
    assert s["bonus_vp"] == 7
    assert s["building_vp"] == 1 + 1 + 2 + 2 + 3 + 4 + 4 + 1 + 3


def test_s7_4_total_and_tiebreak_fields():
    sc = Scenario(players=3).vp(0, 7).doubloons(0, 5).goods(0, corn=2, coffee=1)
    sc.building(0, "harbor").building(0, "fortress")  # unoccupied: printed VP only
    s = sc.state().scores()[0]
    assert s == {"vp_chips": 7, "building_vp": 3 + 4, "bonus_vp": 0, "total": 14, "tiebreak": 8}


def test_T35_tie_break():
    sc = Scenario(players=4).vp(0, 10).vp(1, 10).vp(2, 3)
    sc.doubloons(0, 3).goods(0, corn=1, indigo=1).doubloons(1, 4)
    sc.doubloons(2, 50).doubloons(3, 50)
    st = _terminal(sc)
    assert st.returns() == [1.0, 0.0, 0.0, 0.0]
    sc.doubloons(1, 5)
    st = _terminal(sc)
    assert st.returns() == [0.5, 0.5, 0.0, 0.0]


def test_s7_5_most_vp_wins_regardless_of_money():
    sc = Scenario(players=3).vp(2, 5).vp(0, 4).doubloons(0, 40)
    assert _terminal(sc).returns() == [0.0, 0.0, 1.0]


# --- §7.1/§7.2 triggers and timing --------------------------------------------------


def test_T34_end_timing_city_trigger_4p():
    sc = Scenario(players=4)
    for b in SMALL:
        sc.building(2, b)  # 11 city spaces
    sc.doubloons(2, 2)
    for s in (0, 1, 3):
        sc.doubloons(s, 0)
    st = sc.at_role_selection(1, taken=("prospector",))  # seat 1 is the 2nd selector
    act(st, "role builder")
    if st.current_player() == 1:
        act(st, "pass")
    assert st.current_player() == 2
    act(st, "build small indigo plant")
    finish_phase(st)
    d = st.to_dict()
    assert d["end_triggered"] is True and not st.is_terminal()
    assert st.current_player() == 2  # 3rd selection is still played
    act(st, "role trader")
    finish_phase(st)
    assert not st.is_terminal() and st.current_player() == 3  # 4th selection
    act(st, "role craftsman")
    finish_phase(st)
    assert st.is_terminal()
    assert st.current_player() == -4
    assert st.legal_actions() == []
    assert sum(st.returns()) == pytest.approx(1.0)


def test_s7_1_city_trigger_large_building_fills_12th_space():
    sc = Scenario(players=3)
    for b in SMALL[:10]:
        sc.building(0, b)
    sc.doubloons(0, 9)
    st = sc.play_role("builder", 0)
    act(st, "build fortress")
    assert st.to_dict()["end_triggered"] is True


def test_s7_1_no_trigger_below_12_spaces():
    sc = Scenario(players=3)
    for b in SMALL[:9]:
        sc.building(0, b)
    sc.doubloons(0, 9)
    st = sc.play_role("builder", 0)
    act(st, "build fortress")  # 9 + 2 = 11 spaces
    assert st.to_dict()["end_triggered"] is False


def _t39(supply_before_privilege):
    sc = Scenario(players=4).colonists(ship=0)
    sc.building(1, "indigo_plant").building(1, "sugar_mill")  # 6 empty building circles
    sc.colonists(supply=supply_before_privilege, park_seat=3)
    return sc


def test_T39_a_colonist_trigger_short_supply():
    st = _t39(6).play_role("mayor", 0)  # privilege -> supply 5 < need 6
    d = st.to_dict()
    assert d["colonists"] == {"supply": 0, "ship": 5}
    assert d["end_triggered"] is True
    assert d["boards"][1]["buildings"] == {"indigo_plant": 0, "sugar_mill": 0}
    # the round is completed, then the game ends
    for role in ("builder", "trader", "craftsman"):
        assert not st.is_terminal()
        act(st, "role " + role)
        finish_phase(st)
    assert st.is_terminal()


def test_T39_b_R12_equal_supply_does_not_trigger():
    st = _t39(7).play_role("mayor", 0)  # privilege -> supply 6 == need 6
    d = st.to_dict()
    assert d["colonists"] == {"supply": 0, "ship": 6}
    assert d["end_triggered"] is False
    # the next Mayor phase: no privilege colonist, the refill finds 0 -> trigger
    sc = Scenario(players=4).colonists(ship=6).colonists(supply=0, park_seat=3)
    before = [b["san_juan"] for b in sc.d["boards"]]
    st = sc.play_role("mayor", 0)
    d = st.to_dict()
    assert d["end_triggered"] is True
    assert d["colonists"] == {"supply": 0, "ship": 0}
    on_board = [
        b["san_juan"] + sum(t.get("colonists", 0) for t in b["island"].values())
        for b in d["boards"]
    ]
    # 6 from the ship: 2, 2, 1, 1 from the Mayor; no privilege colonist
    assert [a - b for a, b in zip(on_board, before)] == [2, 2, 1, 1]


def test_s7_1_vp_chip_trigger_and_round_completed():
    sc = Scenario(players=3).goods(1, corn=2).vp_pool(2, park_seat=2)
    st = sc.play_role("captain", 1, taken=("settler",))
    act(st, "ship corn on 4")
    d = st.to_dict()
    assert d["vp_chips"] == 0 and d["end_triggered"] is True
    assert d["boards"][1]["vp_chips"] == 3  # 2 + Captain 1: not capped
    finish_phase(st)
    assert not st.is_terminal() and st.current_player() == 2
    act(st, "role prospector" if "role prospector" in legal(st) else "role trader")
    finish_phase(st)
    assert st.is_terminal()


# --- §8.3.2 option: all colonists and VP --------------------------------------------


def test_s8_3_2_all_colonists_and_vp_setup():
    for n in (2, 3, 4, 5):
        sc = Scenario(players=n, all_colonists_and_vp=True)
        assert sc.d["colonists"] == {"supply": 100 - n, "ship": n}
        assert sc.d["vp_chips"] == 122
        assert sc.d["options"] == {"players": n, "all_colonists_and_vp": True}


def test_s8_3_2_no_colonist_trigger():
    sc = Scenario(players=4, all_colonists_and_vp=True).colonists(ship=0)
    sc.building(1, "indigo_plant").building(1, "sugar_mill")
    sc.colonists(supply=3, park_seat=3)
    st = sc.play_role("mayor", 0)
    d = st.to_dict()
    assert d["colonists"] == {"supply": 0, "ship": 2}  # takes what is left
    assert d["end_triggered"] is False


def test_s8_3_2_no_vp_chip_trigger():
    sc = Scenario(players=4, all_colonists_and_vp=True).goods(1, coffee=5).vp_pool(3, park_seat=3)
    st = sc.play_role("captain", 0)
    act(st, "ship coffee on 5")
    d = st.to_dict()
    assert d["boards"][1]["vp_chips"] == 5
    assert d["end_triggered"] is False


def test_s8_3_2_city_trigger_still_applies():
    sc = Scenario(players=4, all_colonists_and_vp=True)
    for b in SMALL:
        sc.building(0, b)
    sc.doubloons(0, 1)
    st = sc.play_role("builder", 0)
    act(st, "build small indigo plant")
    assert st.to_dict()["end_triggered"] is True
