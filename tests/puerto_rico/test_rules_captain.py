"""Rules reference §4.6 Captain (+ §6.1.4/§6.1.8 warehouses, §6.1.11 Harbor, §6.1.12 Wharf);
scenarios T01, T08, T10, T29, T30, R08, R11."""

from pr_scenario import Scenario, act, goods, legal, vp


def _t01():
    sc = Scenario(players=4)
    sc.ships(None, ("corn", 3), None)  # ships 5, 6, 7
    sc.goods(0, corn=2, sugar=6)  # A (the Captain)
    sc.goods(1, sugar=2, tobacco=3)  # B
    sc.goods(2, corn=2, tobacco=1)  # C
    sc.goods(3, corn=1, indigo=5)  # D
    return sc


def test_T01_captain_phase_4_players():
    sc = _t01()
    supply = dict(sc.d["goods"])
    st = sc.play_role("captain", 0)
    # 1. A: sugar only on the 7-ship (takes all 6); never on the 5-ship (R11); no pass
    assert st.current_player() == 0
    assert legal(st) == {"ship corn on 6", "ship sugar on 7"}
    act(st, "ship sugar on 7")
    assert vp(st, 0) == 7
    # 2. B
    assert st.current_player() == 1
    assert legal(st) == {"ship sugar on 7", "ship tobacco on 5"}
    act(st, "ship sugar on 7")
    assert vp(st, 1) == 1
    # 3. C
    assert legal(st) == {"ship corn on 6", "ship tobacco on 5"}
    act(st, "ship tobacco on 5")
    assert vp(st, 2) == 1
    # 4. D: indigo has no ship; must load corn
    assert st.current_player() == 3
    assert legal(st) == {"ship corn on 6"}
    act(st, "ship corn on 6")
    assert vp(st, 3) == 1
    # 5. A: 2 corn fill the 6-ship; no second Captain bonus
    assert st.current_player() == 0
    assert legal(st) == {"ship corn on 6"}
    act(st, "ship corn on 6")
    assert vp(st, 0) == 9
    # 6. B: sugar impossible (ship full); tobacco on 5
    assert st.current_player() == 1
    assert legal(st) == {"ship tobacco on 5"}
    act(st, "ship tobacco on 5")
    assert vp(st, 1) == 4
    # 7. nobody can load -> loading ends; storage from the Captain: A has nothing,
    #    B keeps his sugar, C keeps 1 corn, D keeps 1 indigo
    assert [vp(st, i) for i in range(4)] == [9, 4, 1, 1]
    assert st.to_dict()["step"] in ("keep", "warehouse")
    assert st.current_player() == 1
    assert legal(st) == {"keep sugar", "pass"}
    act(st, "keep sugar")
    assert st.current_player() == 2
    assert legal(st) == {"keep corn", "pass"}
    act(st, "keep corn")
    assert st.current_player() == 3
    act(st, "keep indigo")
    d = st.to_dict()
    assert d["phase"] == "role_selection" and st.current_player() == 1
    assert [goods(st, i) for i in range(4)] == [{}, {"sugar": 1}, {"corn": 1}, {"indigo": 1}]
    assert d["vp_chips"] == 100 - 15
    # the full ships (6, 7) were emptied into the supply; the 5-ship keeps its 4 tobacco
    assert d["cargo_ships"] == [
        {"capacity": 5, "good": "tobacco", "load": 4},
        {"capacity": 6, "good": None, "load": 0},
        {"capacity": 7, "good": None, "load": 0},
    ]
    assert d["goods"]["corn"] == supply["corn"] + 6 + 1  # the full 6-ship + the corn C returned
    assert d["goods"]["sugar"] == supply["sugar"] + 7
    assert d["goods"]["indigo"] == supply["indigo"] + 4
    assert d["goods"]["tobacco"] == supply["tobacco"]


def test_R11_ship_choice_forced_by_maximum_load():
    st = _t01().play_role("captain", 0)
    assert st.string_to_action("ship sugar on 5") not in st.legal_actions()


def test_T29_must_load_maximum():
    sc = Scenario(players=3).ships(None, None, ("corn", 2))  # ships 4, 5, 6
    sc.goods(1, coffee=5)
    st = sc.play_role("captain", 1, taken=("settler",))
    assert legal(st) == {"ship coffee on 5"}
    sc = Scenario(players=3).ships(None, None, ("corn", 2))
    sc.goods(1, coffee=4)
    st = sc.play_role("captain", 1, taken=("settler",))
    assert legal(st) == {"ship coffee on 4", "ship coffee on 5"}
    act(st, "ship coffee on 4")
    assert vp(st, 1) == 4 + 1


def test_s4_6_player_chooses_kind_freely_and_loads_min_of_room():
    sc = Scenario(players=4).ships(("indigo", 3), None, None)  # 5-ship has 2 free
    sc.goods(1, indigo=4, corn=1)
    st = sc.play_role("captain", 0)
    assert st.current_player() == 1
    assert legal(st) == {"ship indigo on 5", "ship corn on 6", "ship corn on 7"}
    act(st, "ship indigo on 5")
    assert vp(st, 1) == 2 and goods(st, 1) == {"indigo": 2, "corn": 1}
    # next turn (nobody else has goods): must load the corn
    assert st.current_player() == 1
    assert legal(st) == {"ship corn on 6", "ship corn on 7"}


def test_T30_captain_privilege_once_and_not_without_loading():
    sc = Scenario(players=4).goods(0, corn=1, sugar=1)
    st = sc.play_role("captain", 0)
    act(st, "ship corn on 5")
    assert vp(st, 0) == 2
    act(st, "ship sugar on 6")
    assert vp(st, 0) == 3
    # the Captain with no goods gets nothing; others only their goods
    sc = Scenario(players=4).goods(1, corn=2)
    st = sc.play_role("captain", 0)
    assert st.current_player() == 1
    act(st, "ship corn on 5")
    assert [vp(st, i) for i in range(4)] == [0, 2, 0, 0]


def test_T08_harbor_with_wharf():
    sc = Scenario(players=4).ships(("tobacco", 2), None, ("corn", 1))
    sc.goods(1, tobacco=5, sugar=2)
    sc.building(1, "harbor", colonists=1).building(1, "wharf", colonists=1)
    st = sc.play_role("captain", 0)
    assert st.current_player() == 1
    assert legal(st) == {"ship tobacco on 5", "ship sugar on 6", "wharf tobacco", "wharf sugar"}
    act(st, "ship tobacco on 5")
    assert vp(st, 1) == 3 + 1
    act(st, "ship sugar on 6")
    assert vp(st, 1) == 4 + 2 + 1
    # tobacco cannot go on a cargo ship any more; the Wharf is voluntary
    assert legal(st) == {"wharf tobacco", "pass"}
    act(st, "wharf tobacco")
    assert vp(st, 1) == 10
    d = st.to_dict()
    assert goods(st, 1) == {}
    assert d["phase"] == "role_selection"
    assert d["cargo_ships"][0] == {"capacity": 5, "good": None, "load": 0}  # was full: emptied


def test_T08_alternative_wharf_first_leaves_ship_not_full():
    sc = Scenario(players=4).ships(("tobacco", 2), None, ("corn", 1))
    sc.goods(1, tobacco=5, sugar=2)
    sc.building(1, "harbor", colonists=1).building(1, "wharf", colonists=1)
    st = sc.play_role("captain", 0)
    act(st, "wharf tobacco")
    assert vp(st, 1) == 5 + 1
    assert legal(st) == {"ship sugar on 6"}  # the Wharf is used for this phase
    act(st, "ship sugar on 6")
    assert vp(st, 1) == 6 + 3
    d = st.to_dict()
    assert d["cargo_ships"][0] == {"capacity": 5, "good": "tobacco", "load": 2}
    assert d["cargo_ships"][1] == {"capacity": 6, "good": "sugar", "load": 2}


def test_s6_1_12_wharf_voluntary_and_counts_as_captain_first_loading():
    sc = Scenario(players=4).ships(("indigo", 5), None, None)
    sc.goods(0, indigo=3).building(0, "wharf", colonists=1)
    st = sc.play_role("captain", 0)
    assert legal(st) == {"wharf indigo", "pass"}
    passed = st.clone()
    act(passed, "pass")
    # nobody else can load: loading ends, storage: keeps 1 indigo (returns 2)
    assert legal(passed) == {"keep indigo", "pass"}
    act(passed, "keep indigo")
    assert goods(passed, 0) == {"indigo": 1} and vp(passed, 0) == 0
    # the Wharf as the first loading gets the Captain bonus (OPEN-33)
    act(st, "wharf indigo")
    assert vp(st, 0) == 3 + 1


def test_s4_6_pass_only_when_no_cargo_load():
    sc = Scenario(players=4).goods(1, corn=1).building(1, "wharf", colonists=1)
    st = sc.play_role("captain", 0)
    assert legal(st) == {"ship corn on 5", "ship corn on 6", "ship corn on 7", "wharf corn"}


def test_s4_6_loop_goes_round_until_nobody_loads():
    sc = Scenario(players=3).goods(0, corn=1, indigo=1).goods(2, sugar=1)
    st = sc.play_role("captain", 0)
    seq = []
    while st.to_dict()["step"] == "load":
        seq.append(st.current_player())
        st.apply_action(st.legal_actions()[0])
    assert seq == [0, 2, 0]


def test_T10_warehouses_small_and_large():
    def scenario(small, large):
        sc = Scenario(players=4).ships(("corn", 5), ("indigo", 6), ("sugar", 7))
        sc.goods(1, corn=3, indigo=2, sugar=4, coffee=2)
        if small:
            sc.building(1, "small_warehouse", colonists=1)
        if large:
            sc.building(1, "large_warehouse", colonists=1)
        return sc.play_role("captain", 0)

    st = scenario(True, True)
    assert st.current_player() == 1  # nobody could load
    assert legal(st) == {
        "warehouse corn",
        "warehouse indigo",
        "warehouse sugar",
        "warehouse coffee",
        "pass",
    }
    act(st, "warehouse corn")
    assert legal(st) == {"warehouse indigo", "warehouse sugar", "warehouse coffee", "pass"}
    act(st, "warehouse indigo", "warehouse sugar")
    assert legal(st) == {"keep coffee", "pass"}
    act(st, "keep coffee")
    assert goods(st, 1) == {"corn": 3, "indigo": 2, "sugar": 4, "coffee": 1}

    st = scenario(True, False)
    act(st, "warehouse sugar")
    assert legal(st) == {"keep corn", "keep indigo", "keep coffee", "pass"}
    act(st, "keep corn")
    assert goods(st, 1) == {"sugar": 4, "corn": 1}

    st = scenario(False, True)
    act(st, "warehouse indigo", "warehouse coffee", "keep sugar")
    assert goods(st, 1) == {"indigo": 2, "coffee": 2, "sugar": 1}

    st = scenario(False, False)
    assert legal(st) == {"keep corn", "keep indigo", "keep sugar", "keep coffee", "pass"}
    act(st, "keep sugar")
    assert goods(st, 1) == {"sugar": 1}
    d = st.to_dict()
    # full ships emptied, the returned goods are back in the supply
    assert all(s["good"] is None for s in d["cargo_ships"])


def test_s6_1_4_unoccupied_warehouse_keeps_nothing_extra():
    sc = Scenario(players=4).ships(("corn", 5), ("indigo", 6), ("sugar", 7))
    sc.goods(1, corn=2, coffee=2).building(1, "small_warehouse", colonists=0)
    st = sc.play_role("captain", 0)
    assert legal(st) == {"keep corn", "keep coffee", "pass"}


def test_s4_6_warehouse_goods_still_must_be_loaded():
    sc = Scenario(players=4).goods(1, corn=3).building(1, "large_warehouse", colonists=1)
    st = sc.play_role("captain", 0)
    assert st.current_player() == 1
    assert "pass" not in legal(st)


def test_R08_vp_chips_exhausted_mid_captain():
    sc = Scenario(players=4).goods(1, coffee=5).goods(2, tobacco=4).vp_pool(3, park_seat=3)
    st = sc.play_role("captain", 0)
    act(st, "ship coffee on 5")
    assert vp(st, 1) == 5
    d = st.to_dict()
    assert d["vp_chips"] == 0 and d["end_triggered"] is True
    assert legal(st) == {"ship tobacco on 6", "ship tobacco on 7"}
    act(st, "ship tobacco on 6")
    assert vp(st, 2) == 4
    assert st.scores()[2]["vp_chips"] == 4


def test_s4_6_2p_ships():
    sc = Scenario(players=2).goods(1, sugar=6)
    st = sc.play_role("captain", 1, taken=("settler",))
    assert legal(st) == {"ship sugar on 6"}
    act(st, "ship sugar on 6")
    assert vp(st, 1) == 7
