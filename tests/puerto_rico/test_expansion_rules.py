"""Expansion I rules (§8 of the rules reference): every expansion scenario T16-T26, T36-T38,
T40-T50 as an exact setup and an exact outcome, plus the §8.4-§8.6 combinations.

Positions are built with tests/puerto_rico/pr_scenario.py from ``to_dict`` of a real expansion game (every
component conserved; ``state_from_dict`` validates). Unless a test says otherwise the game is
3 players with the "all 31 buildings" variant (one copy of each violet kind, no draft), so every
building is available to the scenario. Expected numbers are the reference's, not the engine's.
"""

from __future__ import annotations

import pytest
from pr_scenario import Scenario, act, board, doubloons, goods, legal, vp

import caribsim

EXP = dict(expansion=True, all_31_buildings=True)


def scenario(players=3, face_up=None, **opts):
    return Scenario(players=players, face_up=face_up, **{**EXP, **opts})


def workers(state, seat):
    return board(state, seat)["buildings"]


def colonist_supply(state):
    return state.to_dict()["colonists"]["supply"]


# --------------------------------------------------------------------------------------
# §8.5.1 Aqueduct — T16
# --------------------------------------------------------------------------------------
def test_T16_1_aqueduct_needs_the_large_plant_to_produce():
    sc = scenario().clear_island(1)
    sc.building(1, "aqueduct", 1).building(1, "indigo_plant", 1).building(1, "small_sugar_mill", 1)
    sc.tiles(1, "indigo", 1, colonists=0)  # Indigo plant produces 0
    sc.tiles(1, "sugar", 1, colonists=1)  # Small sugar mill produces 1, no Sugar mill
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"sugar": 1}


def test_T16_2_aqueduct_adds_one_indigo_and_one_sugar():
    sc = scenario().clear_island(1)
    sc.building(1, "aqueduct", 1).building(1, "indigo_plant", 1).building(1, "sugar_mill", 3)
    sc.tiles(1, "indigo", 1, colonists=1).tiles(1, "sugar", 3, colonists=3)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"indigo": 2, "sugar": 4}


def test_T16_derived_output_is_attributed_to_the_large_plant_first():
    sc = scenario().clear_island(1)
    sc.building(1, "aqueduct", 1).building(1, "small_indigo_plant", 1).building(
        1, "indigo_plant", 1
    )
    sc.tiles(1, "indigo", 1, colonists=1)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"indigo": 2}


def test_s8_5_1_aqueduct_unoccupied_gives_nothing_and_extra_is_limited_by_supply():
    sc = scenario().clear_island(1)
    sc.building(1, "aqueduct", 0).building(1, "indigo_plant", 1).tiles(1, "indigo", 1, colonists=1)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"indigo": 1}
    # supply of 1 indigo: 1 produced + 1 Aqueduct -> only 1 received
    sc = scenario().clear_island(1)
    sc.building(1, "aqueduct", 1).building(1, "indigo_plant", 1).tiles(1, "indigo", 1, colonists=1)
    sc.goods_supply(2, indigo=1)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"indigo": 1}


# --------------------------------------------------------------------------------------
# §8.5.2 Forest house — T17 and the Settler pick
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("forests,price", [(6, 0), (5, 1), (1, 3)])
def test_T17_forest_house_discount(forests, price):
    # Builder, 2 occupied quarries, Forest house (unoccupied), Large warehouse cost 6 column 2
    sc = scenario().forests(0, forests, removed="coffee").building(0, "forest_house", 0)
    sc.tiles(0, "quarry", 2, colonists=2).doubloons(0, 10)
    st = sc.play_role("builder", 0)
    act(st, "build large warehouse")
    assert doubloons(st, 0) == 10 - price


def test_s8_5_2_forest_discount_is_not_capped_by_column():
    sc = scenario().forests(0, 6, removed="coffee").building(0, "forest_house", 1).doubloons(0, 10)
    st = sc.play_role("builder", 1)  # seat 1 is the Builder
    act(st, "pass", "pass")  # seats 1 and 2
    assert st.current_player() == 0
    act(st, "build small warehouse")  # cost 3, column 1: 3 - 3 (6 forests) = 0, not 3 - 1
    assert doubloons(st, 0) == 10


def test_s8_5_2_taking_a_forest_removes_a_face_up_plantation_from_the_game():
    sc = scenario(face_up=dict(corn=1, indigo=2, sugar=1)).building(0, "forest_house", 1)
    st = sc.play_role("settler", 0)
    assert {"forest remove corn", "forest remove indigo", "forest remove sugar"} <= legal(st)
    act(st, "forest remove indigo")
    d = st.to_dict()
    assert d["boards"][0]["island"]["forest"] == {"tiles": 1}
    assert d["expansion"]["forests"] == 11
    assert d["expansion"]["removed_plantations"]["indigo"] == 1
    assert d["plantations"]["face_up"] == {
        "corn": 1,
        "indigo": 1,
        "sugar": 1,
        "tobacco": 0,
        "coffee": 0,
    }
    # the rest of the Settler phase: the removed tile never reaches the discard pile
    act(st, "pass", "pass")
    assert st.to_dict()["plantations"]["discard"]["indigo"] == 1  # only the one left face up


def test_s8_5_2_no_forest_without_face_up_plantation_or_occupied_forest_house():
    st = scenario(face_up={}).building(0, "forest_house", 1).play_role("settler", 0)
    assert not any(n.startswith("forest") for n in legal(st))  # only the quarry is left
    st = scenario(face_up=dict(corn=2)).building(0, "forest_house", 0).play_role("settler", 0)
    assert not any(n.startswith("forest") for n in legal(st))


def test_s8_4_hospice_colonist_for_a_forest_goes_to_san_juan():
    sc = scenario(face_up=dict(corn=2)).building(0, "forest_house", 1).building(0, "hospice", 1)
    st = sc.play_role("settler", 0)
    supply = colonist_supply(st)
    act(st, "forest remove corn", "hospice colonist")
    b = board(st, 0)
    assert b["san_juan"] == 1 and b["island"]["forest"]["tiles"] == 1
    assert colonist_supply(st) == supply - 1


# --------------------------------------------------------------------------------------
# §8.5.3 Black market — T18, T48
# --------------------------------------------------------------------------------------
def _black_market_seat1(doubloons_, **extra):
    sc = scenario().building(1, "black_market", 1).doubloons(1, doubloons_)
    sc.colonists_on(1, "indigo", 1).goods(1, indigo=1).vp(1, 1)
    return sc


def test_T18_black_market_covers_a_shortfall_of_two_exactly():
    st = _black_market_seat1(6).play_role("builder", 0)
    act(st, "pass")  # seat 0 (the Builder)
    assert "build harbor" in legal(st)
    supply, indigo = colonist_supply(st), st.to_dict()["goods"]["indigo"]
    act(st, "build harbor")
    assert st.step_name() == "black_market"
    opts = legal(st)
    assert "black market colonist from black market" not in opts  # never its own colonist
    assert "black market colonist from indigo plantation" in opts
    act(st, "black market colonist from indigo plantation", "black market indigo")
    b = board(st, 1)
    assert "harbor" in b["buildings"] and b["doubloons"] == 0 and b["vp_chips"] == 1
    assert b["island"]["indigo"]["colonists"] == 0 and b["goods"]["indigo"] == 0
    assert colonist_supply(st) == supply + 1
    assert st.to_dict()["goods"]["indigo"] == indigo + 1
    assert st.step_name() != "black_market"  # no third item to keep a doubloon


def test_T18_derived_shortfall_4_cannot_build_and_enough_money_never_uses_it():
    st = _black_market_seat1(4).play_role("builder", 0)
    act(st, "pass")
    assert "build harbor" not in legal(st)
    st = _black_market_seat1(8).play_role("builder", 0)
    act(st, "pass", "build harbor")
    b = board(st, 1)
    assert b["doubloons"] == 0 and b["vp_chips"] == 1 and b["goods"]["indigo"] == 1
    assert b["island"]["indigo"]["colonists"] == 1


def test_s8_5_3_black_market_vp_goes_back_to_the_pool():
    sc = scenario().building(1, "black_market", 1).doubloons(1, 7).vp(1, 3)
    st = sc.play_role("builder", 0)
    pool = st.to_dict()["vp_chips"]
    act(st, "pass", "build harbor")
    assert legal(st) == {"black market vp"}  # the only item he has
    act(st, "black market vp")
    assert vp(st, 1) == 2 and st.to_dict()["vp_chips"] == pool + 1 and doubloons(st, 1) == 0


def test_T48_black_market_colonist_can_unoccupy_the_university():
    sc = scenario().building(1, "black_market", 1).building(1, "university", 1).doubloons(1, 7)
    st = sc.play_role("builder", 0)
    supply = colonist_supply(st)
    act(st, "pass", "build harbor")
    assert legal(st) == {"black market colonist from university"}
    act(st, "black market colonist from university")
    b = board(st, 1)
    assert b["buildings"]["harbor"] == 0 and b["buildings"]["university"] == 0
    assert b["doubloons"] == 0 and colonist_supply(st) == supply + 1
    assert st.step_name() != "university"


# --------------------------------------------------------------------------------------
# §8.5.4 Storehouse — T19;  §8.5.5 Guest house — T20, T46
# --------------------------------------------------------------------------------------
def _storage_scenario():
    """All ships full (corn 4, indigo 5, sugar 6): nobody can load; storage follows at once."""
    sc = scenario().ships(("corn", 4), ("indigo", 5), ("sugar", 6))
    return sc


def test_T19_storehouse_with_large_warehouse_keeps_two_kinds_and_four_barrels():
    sc = _storage_scenario().building(1, "storehouse", 1).building(1, "large_warehouse", 1)
    sc.goods(1, corn=3, indigo=2, sugar=4, tobacco=2, coffee=2)
    st = sc.play_role("captain", 0)
    assert st.step_name() == "warehouse" and st.current_player() == 1
    act(st, "warehouse corn", "warehouse sugar")
    act(st, "keep indigo", "keep indigo", "keep tobacco", "keep coffee")  # 4 barrels, then done
    assert goods(st, 1) == {"corn": 3, "indigo": 2, "sugar": 4, "tobacco": 1, "coffee": 1}
    assert st.phase() == "role_selection"


def test_s8_5_4_storehouse_barrels_without_warehouse_and_pass_discards():
    sc = _storage_scenario().building(1, "storehouse", 1).goods(1, tobacco=5, coffee=1)
    st = sc.play_role("captain", 0)
    act(st, "keep tobacco", "keep tobacco", "pass")
    assert goods(st, 1) == {"tobacco": 2}
    sc = _storage_scenario().goods(1, tobacco=5, coffee=1)  # no Storehouse: one barrel
    st = sc.play_role("captain", 0)
    act(st, "keep tobacco")
    assert goods(st, 1) == {"tobacco": 1}


def test_T20_guest_house_guests_move_at_storage_and_at_role_selection():
    sc = _storage_scenario().building(1, "guest_house", 2).building(1, "storehouse", 0)
    sc.building(1, "library", 0).goods(1, tobacco=2, coffee=2)
    st = sc.play_role("captain", 0)
    assert st.current_player() == 1 and {"guest to storehouse", "guest to library"} <= legal(st)
    act(st, "guest to storehouse")  # the storage decision stays pending
    act(st, "keep tobacco", "keep tobacco", "keep coffee", "keep coffee")
    assert goods(st, 1) == {"tobacco": 2, "coffee": 2}
    assert workers(st, 1) == {"guest_house": 1, "storehouse": 1, "library": 0}
    # later: he selects the Trader and first moves guest 2 to the Library: +2 on his sale
    d = st.to_dict()
    st2 = Scenario.__new__(Scenario)
    st2.game, st2.n, st2.d = st.game, 3, d
    st = st2.at_role_selection(1, taken=("captain",))
    act(st, "guest to library", "role trader")
    before = doubloons(st, 1)
    act(st, "sell coffee")
    assert doubloons(st, 1) == before + 4 + 2
    assert workers(st, 1) == {"guest_house": 0, "storehouse": 1, "library": 1}


def test_s8_5_5_guests_are_not_moved_in_the_mayor_phase_and_stay_until_it():
    sc = scenario().building(0, "guest_house", 2).building(0, "small_market", 0)
    st = sc.at_role_selection(0)
    assert "guest to small market" in legal(st)
    act(st, "guest to small market", "role settler")
    assert workers(st, 0) == {"guest_house": 1, "small_market": 1}


def test_T46_guest_house_circles_count_for_the_refill():
    sc = scenario().colonists(ship=0)
    sc.building(1, "guest_house", 0).clear_island(1)
    sc.clear_island(2).building(2, "tobacco_storage", 0).san_juan(2, 1)
    st = sc.play_role("mayor", 0)
    d = st.to_dict()
    assert d["phase"] == "role_selection"  # every placement was forced
    assert d["boards"][2]["buildings"]["tobacco_storage"] == 1
    assert d["colonists"]["ship"] == 4  # max(3, 2 + 2)


def test_T46_must_fill_puts_the_leftover_colonist_on_the_guest_house():
    sc = scenario().colonists(ship=0)
    sc.building(1, "guest_house", 0).building(1, "small_market", 0).san_juan(
        1, 3
    )  # indigo tile too
    st = sc.play_role("mayor", 0)
    assert st.current_player() == 1
    act(st, "colonist to indigo plantation", "colonist to small market")
    b = board(st, 1)
    assert b["buildings"]["guest_house"] == 1 and b["san_juan"] == 0


# --------------------------------------------------------------------------------------
# §8.5.6 Trading post — T37
# --------------------------------------------------------------------------------------
def test_T37a_trading_post_pays_price_and_trader_privilege_no_market():
    sc = scenario().house(coffee=1).building(0, "trading_post", 1).building(0, "small_market", 1)
    sc.goods(0, coffee=1).doubloons(0, 0)
    st = sc.play_role("trader", 0)
    supply = st.to_dict()["goods"]["coffee"]
    act(st, "sell coffee to trading post")
    assert doubloons(st, 0) == 5
    assert st.to_dict()["goods"]["coffee"] == supply + 1
    assert st.to_dict()["trading_house"]["coffee"] == 1


def test_T37b_trading_post_sells_into_a_full_house_phase():
    sc = scenario().house(corn=1, indigo=1, sugar=1, tobacco=1)
    sc.building(1, "trading_post", 1).goods(1, coffee=1).goods(0, coffee=1).doubloons(1, 0)
    st = sc.play_role("trader", 0)
    assert st.current_player() == 1  # seat 0 cannot sell: skipped
    assert legal(st) == {"sell coffee to trading post", "pass"}
    act(st, "sell coffee to trading post")
    assert doubloons(st, 1) == 4
    assert st.phase() == "role_selection"
    assert sum(st.to_dict()["trading_house"].values()) == 0  # the full house was emptied


# --------------------------------------------------------------------------------------
# §8.5.7 Church — T36, T40
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "building,gain",
    [("large_warehouse", 1), ("guild_hall", 2), ("small_market", 0), ("factory", 1)],
)
def test_T36_church_vp_by_column(building, gain):
    st = scenario().building(0, "church", 1).doubloons(0, 20).play_role("builder", 0)
    act(st, "build " + building.replace("_", " "))
    assert vp(st, 0) == gain


def test_T36_no_vp_for_the_church_itself_even_with_a_university_colonist():
    st = scenario().building(0, "university", 1).doubloons(0, 20).play_role("builder", 0)
    act(st, "build church", "university colonist")
    assert workers(st, 0)["church"] == 1 and vp(st, 0) == 0


def test_T40_church_takes_the_last_vp_chip_and_triggers_the_end():
    sc = scenario().building(0, "church", 1).doubloons(0, 20).vp_pool(1, park_seat=2)
    st = sc.play_role("builder", 0)
    act(st, "build city hall")
    d = st.to_dict()
    assert d["boards"][0]["vp_chips"] == 2 and d["vp_chips"] == 0 and d["end_triggered"]
    assert not st.is_terminal() and d["phase"] == "builder"  # the round is completed


# --------------------------------------------------------------------------------------
# §8.5.8 Small wharf — T21, T42;  §8.5.9 Lighthouse — T22, T44
# --------------------------------------------------------------------------------------
def test_T21_small_wharf_ships_any_goods_for_one_vp_per_two():
    sc = scenario().building(1, "small_wharf", 1).goods(1, corn=3, sugar=2, tobacco=3)
    st = sc.play_role("captain", 0)  # seat 0 has no goods: skipped
    assert st.current_player() == 1
    act(
        st,
        "small wharf corn",
        "small wharf corn",
        "small wharf corn",
        "small wharf sugar",
        "small wharf tobacco",
        "small wharf tobacco",
        "small wharf done",
    )
    assert vp(st, 1) == 3
    assert goods(st, 1) == {"sugar": 1, "tobacco": 1}


def test_T21_three_goods_give_one_vp():
    sc = scenario().building(1, "small_wharf", 1).goods(1, corn=3)
    st = sc.play_role("captain", 0)
    act(st, "small wharf corn", "small wharf corn", "small wharf corn", "small wharf done")
    assert vp(st, 1) == 1


def test_T42_small_wharf_is_a_loading_action_once_per_phase():
    sc = (
        scenario().building(0, "harbor", 1).building(0, "small_wharf", 1).goods(0, corn=3, indigo=2)
    )
    st = sc.play_role("captain", 0)
    act(st, "small wharf corn", "small wharf corn", "small wharf corn", "small wharf done")
    assert vp(st, 0) == 1 + 1 + 1  # goods // 2, Harbor, Captain
    assert st.current_player() == 0
    assert not any(n.startswith("small wharf") for n in legal(st))
    act(st, "ship indigo on 4")
    assert vp(st, 0) == 3 + 2 + 1


def test_T22_lighthouse_captain_with_wharf_and_small_wharf():
    sc = (
        scenario()
        .building(0, "lighthouse", 1)
        .building(0, "wharf", 1)
        .building(0, "small_wharf", 1)
    )
    sc.goods(0, corn=2, indigo=3, sugar=3).doubloons(0, 0)
    st = sc.play_role("captain", 0)
    assert doubloons(st, 0) == 1  # Captain-owner, start of phase
    act(st, "ship corn on 4")
    assert (vp(st, 0), doubloons(st, 0)) == (3, 2)
    act(st, "wharf indigo")
    assert (vp(st, 0), doubloons(st, 0)) == (6, 3)
    act(st, "small wharf sugar", "small wharf sugar", "small wharf sugar", "small wharf done")
    assert (vp(st, 0), doubloons(st, 0)) == (7, 4)


def test_T22_derived_lighthouse_owner_not_captain_loading_twice():
    sc = scenario().building(1, "lighthouse", 1).goods(1, corn=2, indigo=3).doubloons(1, 0)
    st = sc.play_role("captain", 0)
    assert doubloons(st, 1) == 0
    act(st, "ship corn on 4", "ship indigo on 5")
    assert doubloons(st, 1) == 2


@pytest.mark.parametrize("library", [False, True])
def test_T44_lighthouse_captain_without_goods(library):
    sc = scenario().building(0, "lighthouse", 1).doubloons(0, 0)
    if library:
        sc.building(0, "library", 1)
    st = sc.play_role("captain", 0)
    assert doubloons(st, 0) == 1


# --------------------------------------------------------------------------------------
# §8.5.10 Specialty factory — T23
# --------------------------------------------------------------------------------------
def test_T23_specialty_factory_largest_non_corn_minus_one():
    sc = scenario().clear_island(1).building(1, "specialty_factory", 1)
    sc.tiles(1, "corn", 4, colonists=4).tiles(1, "sugar", 3, colonists=3).building(
        1, "sugar_mill", 3
    )
    sc.tiles(1, "tobacco", 2, colonists=2).building(1, "tobacco_storage", 2).doubloons(1, 0)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"corn": 4, "sugar": 3, "tobacco": 2}
    assert doubloons(st, 1) == 2


def test_T23_specialty_factory_stacks_with_factory():
    sc = scenario().clear_island(1).building(1, "specialty_factory", 1).building(1, "factory", 1)
    sc.tiles(1, "corn", 4, colonists=4).tiles(1, "sugar", 3, colonists=3).building(
        1, "sugar_mill", 3
    )
    sc.tiles(1, "tobacco", 2, colonists=2).building(1, "tobacco_storage", 2).doubloons(1, 0)
    st = sc.play_role("craftsman", 0)
    assert doubloons(st, 1) == 2 + 2  # 3 kinds -> Factory 2


def test_T23_maximum_six_doubloons_for_the_craftsman_after_his_library_privileges():
    sc = scenario().clear_island(0).building(0, "specialty_factory", 1).building(0, "library", 1)
    sc.building(0, "aqueduct", 1).building(0, "small_sugar_mill", 1).building(0, "sugar_mill", 3)
    sc.tiles(0, "sugar", 4, colonists=4).doubloons(0, 0)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 0) == {"sugar": 5} and doubloons(st, 0) == 0  # paid after the privilege
    act(st, "privilege sugar")
    assert st.step_name() == "privilege"  # Library: a second good
    act(st, "privilege sugar")
    assert goods(st, 0) == {"sugar": 7} and doubloons(st, 0) == 6


# --------------------------------------------------------------------------------------
# §8.5.11 Library — T38, T41
# --------------------------------------------------------------------------------------
def _library_settler(hut=False):
    sc = scenario(face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1))
    sc.building(0, "library", 1).building(0, "hospice", 1)
    if hut:
        sc.building(0, "construction_hut", 1)
    return sc.play_role("settler", 0)


def test_T38_library_second_pick_after_all_players_without_quarry():
    st = _library_settler()
    act(st, "settle quarry", "hospice colonist")
    act(st, "settle corn")  # seat 1
    act(st, "settle indigo")  # seat 2
    assert st.step_name() == "library" and st.current_player() == 0
    assert legal(st) == {"settle sugar", "settle tobacco", "pass"}
    act(st, "settle sugar")
    b = board(st, 0)["island"]
    assert b["quarry"] == {"tiles": 1, "colonists": 1}
    assert b["sugar"] == {"tiles": 1, "colonists": 0}  # no Hospice colonist the 2nd time
    assert st.is_chance_node()  # the new face-up draws


def test_T38_library_second_pick_may_be_a_quarry_with_a_construction_hut():
    st = _library_settler(hut=True)
    act(st, "settle quarry", "pass", "pass", "pass")
    assert "settle quarry" in legal(st)
    act(st, "settle quarry")
    assert board(st, 0)["island"]["quarry"] == {"tiles": 2, "colonists": 0}


def test_s8_6_library_with_forest_house_two_forests():
    sc = (
        scenario(face_up=dict(corn=2, indigo=2))
        .building(0, "library", 1)
        .building(0, "forest_house", 1)
    )
    st = sc.play_role("settler", 0)
    act(st, "forest remove corn", "pass", "pass", "forest remove indigo")
    d = st.to_dict()
    assert d["boards"][0]["island"]["forest"]["tiles"] == 2
    assert d["expansion"]["removed_plantations"]["corn"] == 1
    assert d["expansion"]["removed_plantations"]["indigo"] == 1


def test_T41_library_mayor_two_colonists():
    sc = scenario().colonists(ship=0).building(0, "library", 1)
    st = sc.play_role("mayor", 0)
    b = board(st, 0)  # Library colonist + 2 privilege colonists; circles: indigo, Library
    assert b["buildings"]["library"] == 1 and b["island"]["indigo"]["colonists"] == 1
    assert b["san_juan"] == 1


def test_T41_library_builder_minus_two():
    st = scenario().building(0, "library", 1).doubloons(0, 10).play_role("builder", 0)
    act(st, "build large warehouse")  # 6 - 2
    assert doubloons(st, 0) == 6


def test_T41_library_trader_plus_two():
    st = (
        scenario()
        .building(0, "library", 1)
        .goods(0, coffee=1)
        .doubloons(0, 0)
        .play_role("trader", 0)
    )
    act(st, "sell coffee")
    assert doubloons(st, 0) == 4 + 2


def test_T41_library_captain_plus_two_first_loading_only():
    sc = scenario().building(0, "library", 1).goods(0, corn=2, indigo=2)
    st = sc.play_role("captain", 0)
    act(st, "ship corn on 4")
    assert vp(st, 0) == 2 + 2
    act(st, "ship indigo on 5")
    assert vp(st, 0) == 4 + 2


def test_T41_library_prospector_two_plus_card_doubloon():
    sc = scenario(players=4).building(0, "library", 1).doubloons(0, 0).role_doubloons(prospector=1)
    st = sc.play_role("prospector", 0)
    assert doubloons(st, 0) == 3


def test_s8_5_11_library_unoccupied_gives_the_normal_privilege():
    st = scenario().building(0, "library", 0).doubloons(0, 10).play_role("builder", 0)
    act(st, "build large warehouse")
    assert doubloons(st, 0) == 5


# --------------------------------------------------------------------------------------
# §8.5.12 Union hall — T25, T45
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "held,gain", [(dict(corn=3, indigo=2, coffee=1), 2), (dict(corn=4, coffee=2), 3)]
)
def test_T25_union_hall_scores_pairs_at_the_start_of_the_captain_phase(held, gain):
    sc = scenario().building(1, "union_hall", 1).goods(1, **held)
    st = sc.play_role("captain", 0)
    assert st.current_player() == 1 and vp(st, 1) == gain
    assert goods(st, 1) == held  # loading proceeds normally


def test_T45_union_hall_scores_without_loading():
    sc = scenario().ships(("coffee", 4), None, None).building(1, "union_hall", 1).goods(1, coffee=2)
    st = sc.play_role("captain", 0)
    assert vp(st, 1) == 1


# --------------------------------------------------------------------------------------
# §8.5.13 Statue — T26, T47;  §8.5.14 Cloister — T24
# --------------------------------------------------------------------------------------
def test_T26_university_colonist_for_the_statue_goes_to_san_juan():
    st = scenario().building(0, "university", 1).doubloons(0, 20).play_role("builder", 0)
    act(st, "build statue", "university colonist")
    b = board(st, 0)
    assert b["buildings"]["statue"] == 0 and b["san_juan"] == 1


def test_T26_statue_8_vp_and_counts_for_city_hall():
    sc = scenario().building(0, "statue", 0).building(0, "city_hall", 1)
    s = sc.state().scores()[0]
    assert s["building_vp"] == 8 + 4
    assert s["bonus_vp"] == 2  # City hall: 2 violet buildings


@pytest.mark.parametrize(
    "building,price", [("statue", 6), ("city_hall", 6), ("small_market", 0), ("tobacco_storage", 2)]
)
def test_T47_quarry_cap_is_the_column(building, price):
    sc = scenario().tiles(1, "quarry", 4, colonists=4).doubloons(1, 20)
    st = sc.play_role("builder", 0)
    act(st, "pass", "build " + building.replace("_", " "))
    assert doubloons(st, 1) == 20 - price


@pytest.mark.parametrize("third,bonus", [("tobacco", 6), ("corn", 10)])
def test_T24_cloister_sets_of_three(third, bonus):
    sc = scenario().clear_island(0).building(0, "cloister", 1)
    sc.forests(0, 6, removed="coffee").tiles(0, "quarry", 3).tiles(0, "corn", 2).tiles(0, third, 1)
    assert sc.state().scores()[0]["bonus_vp"] == bonus


def test_s8_5_14_cloister_unoccupied_scores_no_bonus():
    sc = scenario().clear_island(0).building(0, "cloister", 0).tiles(0, "corn", 3)
    assert sc.state().scores()[0]["bonus_vp"] == 0


def test_s8_4_residence_counts_forests():
    sc = scenario().clear_island(0).building(0, "residence", 1).forests(0, 6, removed="coffee")
    sc.tiles(0, "corn", 4)
    assert sc.state().scores()[0]["bonus_vp"] == 5  # 10 filled spaces


# --------------------------------------------------------------------------------------
# T43 — Wharf is voluntary (with the expansion on)
# --------------------------------------------------------------------------------------
def test_T43_wharf_is_voluntary_with_the_expansion():
    sc = scenario().ships(("indigo", 4), None, None).building(1, "wharf", 1).goods(1, indigo=3)
    st = sc.play_role("captain", 0)
    assert legal(st) == {"wharf indigo", "pass"}
    act(st, "pass")  # nobody else loads: loading ends
    assert st.step_name() == "keep" and st.current_player() == 1
    act(st, "keep indigo")
    assert goods(st, 1) == {"indigo": 1}


# --------------------------------------------------------------------------------------
# OPEN-19 guests and other decisions; combinations (§8.6)
# --------------------------------------------------------------------------------------
def test_s8_5_5_guest_to_library_at_the_craftsman_privilege_gives_two_goods():
    sc = scenario().clear_island(0).building(0, "guest_house", 1).building(0, "library", 0)
    sc.tiles(0, "corn", 2, colonists=2)
    st = sc.play_role("craftsman", 0)
    assert st.step_name() == "privilege" and "guest to library" in legal(st)
    act(st, "guest to library", "privilege corn")
    assert st.step_name() == "privilege"  # the Library's second good
    act(st, "privilege corn")
    assert goods(st, 0) == {"corn": 4}


def test_s8_5_5_guest_on_the_new_tile_leaves_the_hospice_only_pass():
    sc = scenario(face_up=dict(corn=2)).building(0, "guest_house", 1).building(0, "hospice", 1)
    st = sc.play_role("settler", 0)
    act(st, "settle corn")
    assert st.step_name() == "hospice" and "guest to corn plantation" in legal(st)
    act(st, "guest to corn plantation")
    assert legal(st) == {"pass"}


def test_s8_6_wharf_and_small_wharf_on_separate_turns():
    sc = scenario().building(1, "wharf", 1).building(1, "small_wharf", 1).goods(1, corn=2, indigo=4)
    sc.ships(("corn", 4), ("indigo", 5), ("sugar", 6))  # every ship full: only private shipping
    st = sc.play_role("captain", 0)
    act(st, "wharf indigo")
    assert vp(st, 1) == 4 and st.current_player() == 1
    act(st, "small wharf corn", "small wharf corn", "small wharf done")
    assert vp(st, 1) == 5 and goods(st, 1) == {}


def test_s8_5_8_small_wharf_offers_kinds_in_non_decreasing_order_and_done():
    sc = scenario().building(1, "small_wharf", 1).goods(1, corn=1, sugar=2)
    st = sc.play_role("captain", 0)
    act(st, "small wharf sugar")
    assert legal(st) == {"small wharf sugar", "small wharf done"}  # corn no longer (order)


def test_s8_3_2_all_colonists_variant_games_always_end():
    for players in (4, 5):
        for expansion in (False, True):
            g = caribsim.load_game(
                "puerto_rico",
                players=players,
                all_colonists_and_vp=True,
                **({"expansion": True} if expansion else {}),
            )
            r = caribsim.random_playouts(g.new_initial_state(seed=9), 600, seed=1)
            assert (r.lengths > 0).all()
