"""Rules reference §4.3 Builder (+ §6.1.10 University), §4.4/§5 Craftsman and production
(+ §6.1.9 Factory), §4.5 Trader (+ §6.1.1, §6.1.6, §6.1.7); scenarios T02, T03, T06, T07,
T09, T28, T33, R04."""

import pytest
from pr_scenario import BUILDINGS, Scenario, act, board, doubloons, goods, legal

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


def _builder(sc, chooser=0, taken=()):
    """The state right after `chooser` took the Builder (the engine starts the phase)."""
    return sc.play_role("builder", chooser, taken=taken)


def _name(bid):
    return "build " + BUILDINGS[bid]["name"].lower()


# --- Builder ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bid,price,builder_price",
    [("construction_hut", 1, 0), ("office", 3, 2), ("harbor", 5, 4), ("city_hall", 7, 6)],
)
def test_T03_quarry_discount_capped_by_column(bid, price, builder_price):
    for is_builder, expected in ((False, price), (True, builder_price)):
        seat = 0 if is_builder else 1
        sc = Scenario(players=4).tiles(seat, "quarry", 3, colonists=3)
        sc.doubloons(0, 0)
        sc.doubloons(seat, expected)
        st = _builder(sc)
        if not is_builder and st.current_player() == 0:
            act(st, "pass")
        assert st.current_player() == seat
        act(st, _name(bid))
        assert doubloons(st, seat) == 0
        assert bid in board(st, seat)["buildings"]
        if expected > 0:  # one doubloon less is not enough
            sc.doubloons(seat, expected - 1)
            st = _builder(sc)
            if st.current_player() == 0 and not is_builder:
                act(st, "pass")
            if st.current_player() == seat:
                assert _name(bid) not in legal(st)


def test_s4_3_unoccupied_quarries_give_no_discount():
    sc = Scenario(players=4).tiles(1, "quarry", 2, colonists=1)
    sc.doubloons(0, 0).doubloons(1, 3)
    st = _builder(sc)
    act(st, "pass")
    assert "build office" not in legal(st)  # 5 - 1 = 4 > 3
    assert "build indigo plant" in legal(st)  # 3 - 1 = 2


def test_s4_3_price_never_below_zero():
    sc = Scenario(players=4).tiles(0, "quarry", 2, colonists=2).doubloons(0, 0)
    st = _builder(sc)
    # small market: 1 - 1 (Builder) - 1 (quarry, column 1) = -1 -> 0, no change paid
    assert "build small market" in legal(st)
    act(st, "build small market")
    assert doubloons(st, 0) == 0


def test_R04_small_violet_costs():
    sc = Scenario(players=4).doubloons(0, 0).doubloons(1, 1)
    st = _builder(sc)
    act(st, "pass")
    assert legal(st) == {"build small market", "build small indigo plant", "pass"}
    sc.doubloons(1, 2)
    st = _builder(sc)
    act(st, "pass")
    assert "build small warehouse" not in legal(st)
    sc.doubloons(1, 3)
    st = _builder(sc)
    act(st, "pass")
    assert "build small warehouse" in legal(st) and "build hospice" not in legal(st)
    act(st, "build small warehouse")
    assert doubloons(st, 1) == 0


def test_s4_3_building_prices_from_table_non_builder():
    # every base building costs exactly its table cost for a non-Builder without quarries
    table = {
        "small_indigo_plant": 1,
        "small_sugar_mill": 2,
        "indigo_plant": 3,
        "sugar_mill": 4,
        "tobacco_storage": 5,
        "coffee_roaster": 6,
        "small_market": 1,
        "hacienda": 2,
        "construction_hut": 2,
        "small_warehouse": 3,
        "hospice": 4,
        "office": 5,
        "large_market": 5,
        "large_warehouse": 6,
        "factory": 7,
        "university": 8,
        "harbor": 8,
        "wharf": 9,
        "guild_hall": 10,
        "residence": 10,
        "fortress": 10,
        "customs_house": 10,
        "city_hall": 10,
    }
    for bid, cost in table.items():
        assert int(BUILDINGS[bid]["cost"]) == cost
        sc = Scenario(players=3).doubloons(0, 0).doubloons(1, cost)
        st = _builder(sc)
        act(st, "pass")
        act(st, _name(bid))
        assert doubloons(st, 1) == 0, bid


def test_s4_3_builder_privilege_only_when_building():
    sc = Scenario(players=4).doubloons(0, 5)
    st = _builder(sc)
    act(st, "pass")
    assert doubloons(st, 0) == 5


def test_s4_3_one_building_of_each_name():
    sc = Scenario(players=4).doubloons(0, 0).doubloons(1, 10)
    sc.building(1, "small_indigo_plant")
    st = _builder(sc)
    act(st, "pass")
    names = legal(st)
    assert "build small indigo plant" not in names
    assert "build indigo plant" in names


def test_s4_3_no_copy_left():
    sc = Scenario(players=4).doubloons(0, 0).doubloons(1, 20)
    sc.building(2, "guild_hall")
    sc.building(2, "harbor").building(3, "harbor")
    st = _builder(sc)
    act(st, "pass")
    names = legal(st)
    assert "build guild hall" not in names and "build harbor" not in names
    assert "build residence" in names and "build wharf" in names


def test_s4_3_city_spaces_and_large_buildings():
    sc = Scenario(players=4).doubloons(0, 0).doubloons(1, 20)
    for bid in SMALL[:10]:
        sc.building(1, bid)  # 10 spaces used
    st = _builder(sc)
    act(st, "pass")
    assert "build city hall" in legal(st)  # needs 2 free spaces
    sc.building(1, "harbor")  # 11 used
    st = _builder(sc)
    act(st, "pass")
    names = legal(st)
    assert not any(
        _name(b) in names
        for b in ("guild_hall", "residence", "fortress", "customs_house", "city_hall")
    )
    assert "build wharf" in names
    # a large building counts 2 spaces: 10 small + city hall = 12 spaces -> nothing more fits
    sc = Scenario(players=4).doubloons(0, 0).doubloons(1, 30)
    for bid in SMALL[:10]:
        sc.building(1, bid)
    sc.building(1, "city_hall")
    st = _builder(sc)
    act(st, "pass")
    assert st.current_player() != 1  # seat 1 cannot build: skipped


def test_s4_3_builder_order_each_builds_once():
    sc = Scenario(players=3)
    for s in range(3):
        sc.doubloons(s, 5)
    st = _builder(sc, chooser=1, taken=("settler",))
    seen = []
    while st.to_dict()["phase"] == "builder":
        seen.append(st.current_player())
        act(st, "build small market" if "build small market" in legal(st) else "build hacienda")
    assert seen == [1, 2, 0]
    assert [doubloons(st, s) for s in range(3)] == [5 - 2, 5 - 0, 5 - 1]


def test_T33_university_one_colonist():
    sc = Scenario(players=4).doubloons(0, 0).doubloons(1, 4)
    sc.building(1, "university", colonists=1)
    supply = sc.d["colonists"]["supply"]
    st = _builder(sc)
    act(st, "pass", "build sugar mill")
    assert legal(st) == {"university colonist", "pass"}
    act(st, "university colonist")
    d = st.to_dict()
    assert d["boards"][1]["buildings"]["sugar_mill"] == 1
    assert d["colonists"]["supply"] == supply - 1
    # supply empty -> from the ship (R06)
    sc.colonists(ship=3).colonists(supply=0, park_seat=3)
    st = _builder(sc)
    act(st, "pass", "build sugar mill", "university colonist")
    d = st.to_dict()
    assert d["boards"][1]["buildings"]["sugar_mill"] == 1
    assert d["colonists"] == {"supply": 0, "ship": 2}
    # both empty -> none, no decision
    sc.colonists(ship=0)
    sc.d["colonists"]["supply"] = 0
    sc.board(3)["san_juan"] += 3
    st = _builder(sc)
    act(st, "pass", "build sugar mill")
    assert st.current_player() == 2 or st.to_dict()["phase"] != "builder"
    assert board(st, 1)["buildings"]["sugar_mill"] == 0


# --- Craftsman ----------------------------------------------------------------------


def test_T02_production():
    sc = Scenario(players=4).clear_island(1)
    sc.tiles(1, "corn", 3, colonists=2)
    sc.tiles(1, "tobacco", 2, colonists=2).building(1, "tobacco_storage", colonists=1)
    sc.tiles(1, "sugar", 4, colonists=3)
    sc.building(1, "small_sugar_mill", colonists=1).building(1, "sugar_mill", colonists=3)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"corn": 2, "tobacco": 1, "sugar": 3}


def test_s5_production_needs_both_plantation_and_building():
    sc = Scenario(players=4).clear_island(1)
    sc.tiles(1, "indigo", 3, colonists=3)  # no indigo building
    sc.tiles(1, "coffee", 2, colonists=0).building(1, "coffee_roaster", colonists=2)
    sc.tiles(1, "sugar", 1, colonists=1).building(1, "sugar_mill", colonists=3)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"sugar": 1}


def test_s4_4_shortage_hits_later_players_and_privilege():
    sc = Scenario(players=4)
    for seat in (2, 3, 0):
        sc.clear_island(seat)
        sc.tiles(seat, "sugar", 2, colonists=2).building(seat, "sugar_mill", colonists=2)
    sc.clear_island(1).tiles(1, "sugar", 1, colonists=1).building(
        1, "small_sugar_mill", colonists=1
    )
    sc.tiles(2, "corn", 1, colonists=1)
    sc.goods_supply(0, sugar=5)  # park the rest of the sugar on seat 0
    parked = dict(sc.board(0)["goods"])
    st = sc.play_role("craftsman", 2, taken=("settler", "builder"))
    # order 2, 3, 0, 1: 2, 2, 1, 0
    assert goods(st, 2) == {"sugar": 2, "corn": 1}
    assert goods(st, 3) == {"sugar": 2}
    assert board(st, 0)["goods"]["sugar"] == parked["sugar"] + 1
    assert goods(st, 1) == {}
    # privilege: only kinds he received that the supply still has: sugar is gone
    assert st.current_player() == 2
    assert legal(st) == {"privilege corn", "pass"}  # §3.3: role actions are voluntary
    act(st, "privilege corn")
    assert goods(st, 2) == {"sugar": 2, "corn": 2}
    assert st.to_dict()["phase"] == "role_selection"


def test_s4_4_privilege_choice_among_received_kinds():
    sc = Scenario(players=3).clear_island(0)
    sc.tiles(0, "corn", 1, colonists=1).tiles(0, "indigo", 1, colonists=1)
    sc.building(0, "small_indigo_plant", colonists=1)
    st = sc.play_role("craftsman", 0)
    assert legal(st) == {"privilege corn", "privilege indigo", "pass"}
    act(st, "privilege indigo")
    assert goods(st, 0) == {"corn": 1, "indigo": 2}


def test_s4_4_no_privilege_without_production():
    sc = Scenario(players=4).clear_island(1)
    sc.tiles(1, "corn", 1, colonists=1)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"corn": 1} and goods(st, 0) == {}
    assert st.to_dict()["phase"] == "role_selection" and st.current_player() == 1


def test_T07_factory_with_shortage():
    sc = Scenario(players=4).clear_island(1)
    sc.tiles(1, "corn", 3, colonists=3)
    sc.tiles(1, "sugar", 3, colonists=3).building(1, "sugar_mill", colonists=3)
    sc.tiles(1, "tobacco", 1, colonists=1).building(1, "tobacco_storage", colonists=1)
    sc.building(1, "factory", colonists=1)
    sc.goods_supply(3, corn=0, sugar=2)
    st = sc.play_role("craftsman", 0)
    assert goods(st, 1) == {"sugar": 2, "tobacco": 1}
    assert doubloons(st, 1) == 3 + 1


@pytest.mark.parametrize("kinds,pay", [(1, 0), (2, 1), (3, 2), (4, 3), (5, 5)])
def test_s6_1_9_factory_table(kinds, pay):
    sc = Scenario(players=4).clear_island(1)
    plan = [
        ("corn", None),
        ("indigo", "small_indigo_plant"),
        ("sugar", "small_sugar_mill"),
        ("tobacco", "tobacco_storage"),
        ("coffee", "coffee_roaster"),
    ][:kinds]
    for kind, bid in plan:
        sc.tiles(1, kind, 1, colonists=1)
        if bid:
            sc.building(1, bid, colonists=1)
    sc.building(1, "factory", colonists=1)
    st = sc.play_role("craftsman", 0)
    assert len(goods(st, 1)) == kinds
    assert doubloons(st, 1) == 3 + pay


def test_s6_1_9_factory_privilege_adds_no_kind():
    sc = Scenario(players=4).clear_island(0)
    sc.tiles(0, "corn", 1, colonists=1).building(0, "factory", colonists=1)
    st = sc.play_role("craftsman", 0)
    assert doubloons(st, 0) == 3  # 1 kind -> 0
    act(st, "privilege corn")
    assert doubloons(st, 0) == 3


# --- Trader -------------------------------------------------------------------------


def test_T06_markets():
    sc = Scenario(players=4).goods(1, corn=1).building(1, "small_market", colonists=1)
    st = sc.play_role("trader", 0)
    act(st, "sell corn")
    assert doubloons(st, 1) == 3 + 1
    sc = Scenario(players=4).goods(1, coffee=1)
    sc.building(1, "small_market", colonists=1).building(1, "large_market", colonists=1)
    st = sc.play_role("trader", 0)
    act(st, "sell coffee")
    assert doubloons(st, 1) == 3 + 7
    st = sc.play_role("trader", 1, taken=("settler",))
    act(st, "sell coffee")
    assert doubloons(st, 1) == 3 + 8


def test_s6_1_7_large_market_alone_and_unoccupied_markets():
    sc = Scenario(players=4).goods(1, indigo=1).building(1, "large_market", colonists=1)
    sc.building(1, "small_market", colonists=0)
    st = sc.play_role("trader", 0)
    act(st, "sell indigo")
    assert doubloons(st, 1) == 3 + 1 + 2


def test_T09_office():
    sc = Scenario(players=4).house(tobacco=1)
    sc.goods(1, tobacco=1).building(1, "office", colonists=1)
    sc.goods(2, tobacco=1).building(2, "office", colonists=1)
    sc.goods(3, tobacco=1)
    st = sc.play_role("trader", 0)
    assert st.current_player() == 1
    act(st, "sell tobacco")
    assert st.current_player() == 2
    act(st, "sell tobacco")
    # Z (seat 3) has only tobacco, which is in the house: he cannot sell and is skipped
    assert st.to_dict()["phase"] == "role_selection"
    assert goods(st, 3) == {"tobacco": 1}
    assert st.to_dict()["trading_house"]["tobacco"] == 3


def test_T09_full_house_nobody_sells():
    sc = Scenario(players=4).house(corn=1, indigo=1, sugar=1, coffee=1)
    sc.goods(1, tobacco=1).building(1, "office", colonists=1)
    sc.goods(2, tobacco=2)
    st = sc.play_role("trader", 0)
    assert st.to_dict()["phase"] == "role_selection"
    # the phase ended with a full house: it was emptied
    assert sum(st.to_dict()["trading_house"].values()) == 0


def test_s4_5_kind_already_in_house_and_one_sale_each():
    sc = Scenario(players=4).house(sugar=1)
    sc.goods(0, sugar=2, corn=1, indigo=1)
    st = sc.play_role("trader", 0)
    assert legal(st) == {"sell corn", "sell indigo", "pass"}
    act(st, "sell indigo")
    assert doubloons(st, 0) == 3 + 1 + 1
    assert st.to_dict()["phase"] == "role_selection"  # one sale only; nobody else has goods


def test_s4_5_trader_privilege_only_on_sale():
    sc = Scenario(players=4).goods(0, corn=1)
    st = sc.play_role("trader", 0)
    act(st, "pass")
    assert doubloons(st, 0) == 3
    # corn sold by the Trader: 0 + 1
    st = sc.play_role("trader", 0)
    act(st, "sell corn")
    assert doubloons(st, 0) == 4


def test_T28_trader_phase_end():
    sc = Scenario(players=4).house(corn=1, indigo=1, sugar=1)
    sc.goods(1, coffee=1).goods(2, tobacco=1).goods(3, tobacco=1)
    supply = dict(sc.d["goods"])
    st = sc.play_role("trader", 0)
    assert st.current_player() == 1
    act(st, "sell coffee")  # fills the house
    d = st.to_dict()
    assert d["phase"] == "role_selection"  # seats 2, 3 skipped
    assert goods(st, 2) == {"tobacco": 1}
    assert sum(d["trading_house"].values()) == 0
    assert d["goods"]["corn"] == supply["corn"] + 1 and d["goods"]["coffee"] == supply["coffee"] + 1
    # holding 3 at the end of the phase: they stay
    sc = Scenario(players=4).house(corn=1, indigo=1)
    sc.goods(1, coffee=1)
    st = sc.play_role("trader", 0)
    act(st, "sell coffee")
    assert st.to_dict()["trading_house"] == {
        "corn": 1,
        "indigo": 1,
        "sugar": 0,
        "tobacco": 0,
        "coffee": 1,
    }


def test_s4_4_privilege_may_be_declined():
    # docs/rules-decisions.md: the privilege is voluntary (§3.3)
    sc = Scenario(players=3).clear_island(0).tiles(0, "corn", 1, colonists=1)
    st = sc.play_role("craftsman", 0)
    act(st, "pass")
    assert goods(st, 0) == {"corn": 1}
    assert st.to_dict()["phase"] == "role_selection"
