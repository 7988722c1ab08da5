"""Rules reference §1.3 (setup), §1.7 (prices), §3 (role selection, end of round), §4.7
(Prospector); scenarios T05, T27, R01, R02, R03, R05, R09."""

import pytest
from pr_scenario import GOODS, Scenario, act, doubloons, finish_phase, legal, read_csv

import caribsim

# §1.3 table, copied from the rules reference (not from the engine or the CSV).
REF = {
    2: dict(
        doubloons=3,
        cards=7,
        prospectors=1,
        selections=6,
        buildings=29,
        production=(2, 2, 2, 2, 2, 2),
        small_violet=1,
        quarries=5,
        plantations=(7, 9, 8, 6, 5),
        start=("indigo", "corn"),
        face_up=3,
        stack=30,
        supply=40,
        ship=2,
        vp=65,
        goods=(8, 9, 9, 7, 7),
        ships=(4, 6),
    ),
    3: dict(
        doubloons=2,
        cards=6,
        prospectors=0,
        selections=3,
        buildings=49,
        production=(4, 4, 3, 3, 3, 3),
        small_violet=2,
        quarries=8,
        plantations=(10, 12, 11, 9, 8),
        start=("indigo", "indigo", "corn"),
        face_up=4,
        stack=43,
        supply=55,
        ship=3,
        vp=75,
        goods=(10, 11, 11, 9, 9),
        ships=(4, 5, 6),
    ),
    4: dict(
        doubloons=3,
        cards=7,
        prospectors=1,
        selections=4,
        buildings=49,
        production=(4, 4, 3, 3, 3, 3),
        small_violet=2,
        quarries=8,
        plantations=(10, 12, 11, 9, 8),
        start=("indigo", "indigo", "corn", "corn"),
        face_up=5,
        stack=41,
        supply=75,
        ship=4,
        vp=100,
        goods=(10, 11, 11, 9, 9),
        ships=(5, 6, 7),
    ),
    5: dict(
        doubloons=4,
        cards=8,
        prospectors=2,
        selections=5,
        buildings=49,
        production=(4, 4, 3, 3, 3, 3),
        small_violet=2,
        quarries=8,
        plantations=(10, 12, 11, 9, 8),
        start=("indigo", "indigo", "indigo", "corn", "corn"),
        face_up=6,
        stack=39,
        supply=95,
        ship=5,
        vp=122,
        goods=(10, 11, 11, 9, 9),
        ships=(6, 7, 8),
    ),
}
PRODUCTION = (
    "small_indigo_plant",
    "small_sugar_mill",
    "indigo_plant",
    "sugar_mill",
    "tobacco_storage",
    "coffee_roaster",
)
SMALL_VIOLET = (
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
    "wharf",
)
LARGE_VIOLET = ("guild_hall", "residence", "fortress", "customs_house", "city_hall")


def _setup_dict(n):
    game = caribsim.load_game("puerto_rico", players=n)
    st = game.new_initial_state(seed=11)
    while st.is_chance_node():
        st.resolve_chance()
    return game, st.to_dict()


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_s1_3_setup_numbers(n):
    ref = REF[n]
    game, d = _setup_dict(n)
    assert [b["doubloons"] for b in d["boards"]] == [ref["doubloons"]] * n
    assert len(d["roles"]) == ref["cards"]
    assert sum(1 for r in d["roles"] if r.startswith("prospector")) == ref["prospectors"]
    assert sum(d["buildings"].values()) == ref["buildings"]
    assert tuple(d["buildings"][b] for b in PRODUCTION) == ref["production"]
    assert all(d["buildings"][b] == ref["small_violet"] for b in SMALL_VIOLET)
    assert all(d["buildings"][b] == 1 for b in LARGE_VIOLET)
    assert d["quarries"] == ref["quarries"]
    pl = d["plantations"]
    for k, total in zip(GOODS, ref["plantations"]):
        on_boards = sum(b["island"][k]["tiles"] for b in d["boards"])
        assert pl["face_up"][k] + pl["stack"][k] + pl["discard"][k] + on_boards == total, k
    starts = []
    for b in d["boards"]:
        tiles = {k: v["tiles"] for k, v in b["island"].items() if v["tiles"]}
        assert len(tiles) == 1 and list(tiles.values()) == [1]
        assert all(v["colonists"] == 0 for k, v in b["island"].items() if k != "forest")
        assert b["san_juan"] == 0 and b["buildings"] == {} and b["vp_chips"] == 0
        starts.append(next(iter(tiles)))
    assert tuple(starts) == ref["start"]
    assert sum(pl["face_up"].values()) == ref["face_up"]
    assert sum(pl["stack"].values()) == ref["stack"]
    assert d["colonists"] == {"supply": ref["supply"], "ship": ref["ship"]}
    assert d["vp_chips"] == ref["vp"]
    assert tuple(d["goods"][k] for k in GOODS) == ref["goods"]
    assert tuple(s["capacity"] for s in d["cargo_ships"]) == ref["ships"]
    assert game.cargo_ship_capacities() == ref["ships"]
    assert all(s["good"] is None and s["load"] == 0 for s in d["cargo_ships"])
    assert sum(d["trading_house"].values()) == 0
    assert all(r["doubloons"] == 0 and r["taken_by"] is None for r in d["roles"].values())
    assert d["governor"] == 0 and d["phase"] == "role_selection" and d["player"] == 0


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_s1_3_setup_csv_matches_reference(n):
    row = next(r for r in read_csv("puerto_rico_setup.csv") if int(r["players"]) == n)
    ref = REF[n]
    assert int(row["start_doubloons_each"]) == ref["doubloons"]
    assert int(row["role_cards"]) == ref["cards"]
    assert int(row["prospector_cards"]) == ref["prospectors"]
    assert int(row["role_selections_per_round"]) == ref["selections"]
    assert int(row["buildings_total"]) == ref["buildings"]
    assert int(row["quarries"]) == ref["quarries"]
    assert tuple(int(row["plantations_" + k]) for k in GOODS) == ref["plantations"]
    assert tuple(row["start_plantations_by_seat"].split(";")) == ref["start"]
    assert int(row["face_up_plantations"]) == ref["face_up"]
    assert int(row["plantations_face_down_after_setup"]) == ref["stack"]
    assert int(row["colonists_supply"]) == ref["supply"]
    assert int(row["colonists_ship_start"]) == ref["ship"]
    assert int(row["vp_total"]) == ref["vp"]
    assert tuple(int(row["goods_" + k]) for k in GOODS) == ref["goods"]
    assert tuple(int(c) for c in row["cargo_ship_capacities"].split(";")) == ref["ships"]


def test_s1_3_initial_chance_draws_turn_up_n_plus_1():
    for n in (2, 3, 4, 5):
        game = caribsim.load_game("puerto_rico", players=n)
        st = game.new_initial_state(seed=3)
        draws = 0
        while st.is_chance_node():
            assert st.current_player() == caribsim.CHANCE
            outcomes = st.chance_outcomes()
            stack = st.to_dict()["plantations"]["stack"]
            # each kind is drawn with probability proportional to its count in the stack
            total = sum(stack.values())
            for a, p in outcomes:
                kind = game.action_to_string(a).split()[1]
                assert p == pytest.approx(stack[kind] / total)
            st.resolve_chance()
            draws += 1
        assert draws == n + 1
        assert st.current_player() == 0


def test_R01_role_cards_by_player_count():
    expected = {
        2: {"settler", "mayor", "builder", "craftsman", "trader", "captain", "prospector"},
        3: {"settler", "mayor", "builder", "craftsman", "trader", "captain"},
        4: {"settler", "mayor", "builder", "craftsman", "trader", "captain", "prospector"},
        5: {
            "settler",
            "mayor",
            "builder",
            "craftsman",
            "trader",
            "captain",
            "prospector",
            "prospector_2",
        },
    }
    for n, cards in expected.items():
        sc = Scenario(players=n)
        assert set(sc.d["roles"]) == cards
        st = sc.at_role_selection(0)
        names = legal(st)
        assert ("role prospector" in names) == (n != 3)
        assert "role prospector 2" not in names  # both cards carry 0 doubloons: same choice


def test_R01_5p_both_prospectors_in_one_round():
    sc = Scenario(players=5)
    st = sc.at_role_selection(0)
    act(st, "role prospector")
    assert st.current_player() == 1
    assert "role prospector 2" in legal(st)
    act(st, "role prospector 2")
    assert doubloons(st, 0) == 4 + 1 and doubloons(st, 1) == 4 + 1
    d = st.to_dict()
    assert d["roles"]["prospector"]["taken_by"] == 0 and d["roles"]["prospector_2"]["taken_by"] == 1


def test_s4_7_prospector_2_offered_when_doubloons_differ():
    sc = Scenario(players=5).role_doubloons(prospector_2=1)
    st = sc.at_role_selection(0)
    assert {"role prospector", "role prospector 2"} <= legal(st)
    act(st, "role prospector 2")
    assert doubloons(st, 0) == 4 + 1 + 1


def test_R02_starting_doubloons():
    for n, dbl in {2: 3, 3: 2, 4: 3, 5: 4}.items():
        sc = Scenario(players=n)
        assert [b["doubloons"] for b in sc.d["boards"]] == [dbl] * n


def test_R03_5p_starting_plantations():
    sc = Scenario(players=5)
    kinds = [next(k for k, v in b["island"].items() if v["tiles"]) for b in sc.d["boards"]]
    assert kinds == ["indigo", "indigo", "indigo", "corn", "corn"]


def test_R05_colonist_pool():
    for n, (sup, ship) in {2: (40, 2), 3: (55, 3), 4: (75, 4), 5: (95, 5)}.items():
        assert Scenario(players=n).d["colonists"] == {"supply": sup, "ship": ship}


def test_R09_2p_quarries():
    assert Scenario(players=2).d["quarries"] == 5


@pytest.mark.parametrize(
    "good,price", [("corn", 0), ("indigo", 1), ("sugar", 2), ("tobacco", 3), ("coffee", 4)]
)
def test_s1_7_trading_house_prices(good, price):
    sc = Scenario(players=4).goods(1, **{good: 1})
    st = sc.play_role("trader", 0)
    # seat 0 (the Trader) has nothing to sell and is skipped; seat 1 sells
    assert st.current_player() == 1
    act(st, "sell " + good)
    assert doubloons(st, 1) == 3 + price
    # and as the Trader: +1
    st = sc.play_role("trader", 1, taken=("settler",))
    act(st, "sell " + good)
    assert doubloons(st, 1) == 3 + price + 1


def test_s3_1_role_selection_order_4p_and_end_of_round():
    sc = Scenario(players=4)
    for b in range(4):
        sc.doubloons(b, 0)  # nobody can build
    st = sc.at_role_selection(0)
    order = []
    for role in ("prospector", "builder", "trader", "craftsman"):
        order.append(st.current_player())
        act(st, "role " + role)
        finish_phase(st)
    assert order == [0, 1, 2, 3]
    d = st.to_dict()
    # §3.4: +1 doubloon on each of the 3 cards not taken, new Governor seat 1 selects first
    assert {r: v["doubloons"] for r, v in d["roles"].items()} == {
        "settler": 1,
        "mayor": 1,
        "builder": 0,
        "craftsman": 0,
        "trader": 0,
        "captain": 1,
        "prospector": 0,
    }
    assert all(v["taken_by"] is None for v in d["roles"].values())
    assert d["governor"] == 1 and st.current_player() == 1
    assert d["phase"] == "role_selection"


def test_s3_4_role_doubloons_accumulate():
    sc = Scenario(players=3).role_doubloons(settler=2, mayor=1)
    for b in range(3):
        sc.doubloons(b, 0)
    st = sc.at_role_selection(2)
    for role in ("builder", "trader", "craftsman"):
        act(st, "role " + role)
        finish_phase(st)
    d = st.to_dict()
    assert d["roles"]["settler"]["doubloons"] == 3
    assert d["roles"]["mayor"]["doubloons"] == 2
    assert d["roles"]["captain"]["doubloons"] == 1
    assert d["governor"] == 0


def test_T05_doubloons_on_role_cards():
    sc = Scenario(players=4).role_doubloons(prospector=2)
    st = sc.at_role_selection(0)
    act(st, "role prospector")
    assert doubloons(st, 0) == 3 + 2 + 1
    assert st.to_dict()["roles"]["prospector"]["doubloons"] == 0
    # derived: Settler, Mayor, Builder, Trader taken -> +1 on Craftsman, Captain, Prospector
    sc = Scenario(players=4).role_doubloons(craftsman=1, captain=0, prospector=2)
    for b in range(4):
        sc.doubloons(b, 0)
    sc.face_up(corn=1, sugar=4)
    st = sc.at_role_selection(0)
    act(st, "role settler")
    for seat in range(4):  # everyone passes the Settler phase
        assert st.current_player() == seat
        act(st, "pass")
    finish_phase(st)
    for role in ("mayor", "builder", "trader"):
        act(st, "role " + role)
        finish_phase(st)
    roles = st.to_dict()["roles"]
    assert roles["craftsman"]["doubloons"] == 2
    assert roles["captain"]["doubloons"] == 1
    assert roles["prospector"]["doubloons"] == 3
    assert roles["settler"]["doubloons"] == 0


def test_s4_7_prospector_no_action_for_others():
    sc = Scenario(players=4)
    st = sc.at_role_selection(1, taken=("settler",))
    before = [doubloons(st, i) for i in range(4)]
    act(st, "role prospector")
    after = [doubloons(st, i) for i in range(4)]
    assert [a - b for a, b in zip(after, before)] == [0, 1, 0, 0]
    assert st.current_player() == 2 and st.to_dict()["phase"] == "role_selection"


def test_T27_2p_round_order():
    sc = Scenario(players=2)
    for b in range(2):
        sc.doubloons(b, 0)
    st = sc.at_role_selection(0)
    order = []
    for role in ("prospector", "builder", "trader", "craftsman", "captain", "mayor"):
        order.append(st.current_player())
        act(st, "role " + role)
        finish_phase(st)
    assert order == [0, 1, 0, 1, 0, 1]
    d = st.to_dict()
    assert d["roles"]["settler"]["doubloons"] == 1
    assert sum(v["doubloons"] for v in d["roles"].values()) == 1
    assert d["governor"] == 1
    order = []
    for role in ("prospector", "builder", "trader", "craftsman", "captain", "settler"):
        order.append(st.current_player())
        act(st, "role " + role)
        finish_phase(st)
    assert order == [1, 0, 1, 0, 1, 0]


def test_s3_1_phase_starts_with_chooser():
    sc = Scenario(players=4, face_up=dict(corn=2, indigo=1, sugar=2))
    st = sc.play_role("settler", 2, taken=("prospector", "trader"))
    assert st.current_player() == 2
    act(st, "settle sugar")
    assert st.current_player() == 3
    act(st, "settle sugar")
    assert st.current_player() == 0
    act(st, "settle corn")
    assert st.current_player() == 1


def test_s3_3_taken_role_not_available_again():
    sc = Scenario(players=4)
    st = sc.at_role_selection(1, taken=("settler",))
    assert "role settler" not in legal(st)
    assert legal(st) == {
        "role mayor",
        "role builder",
        "role craftsman",
        "role trader",
        "role captain",
        "role prospector",
    }
