"""Rules reference §4.1 Settler (+ §6.1.2 Hacienda, §6.1.3 Construction hut, §6.1.5 Hospice) and
§4.2 Mayor; scenarios T04, T31, T32, R06, R07, R10."""

from pr_scenario import GOODS, Scenario, act, board, legal


def test_s4_1_settler_quarry_privilege_only_for_settler():
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    st = sc.play_role("settler", 0)
    assert legal(st) == {
        "settle corn",
        "settle indigo",
        "settle sugar",
        "settle tobacco",
        "settle coffee",
        "settle quarry",
        "pass",
    }
    act(st, "settle quarry")
    d = st.to_dict()
    assert d["quarries"] == 7
    assert d["boards"][0]["island"]["quarry"] == {"tiles": 1, "colonists": 0}
    assert st.current_player() == 1
    assert legal(st) == {
        "settle corn",
        "settle indigo",
        "settle sugar",
        "settle tobacco",
        "settle coffee",
        "pass",
    }
    act(st, "settle coffee")
    d = st.to_dict()
    assert d["boards"][1]["island"]["coffee"]["tiles"] == 1
    assert d["plantations"]["face_up"]["coffee"] == 0


def test_s6_1_3_construction_hut_quarry_for_non_settler():
    sc = Scenario(players=4, face_up=dict(corn=3, sugar=2))
    sc.building(1, "construction_hut", colonists=1)
    sc.building(2, "construction_hut", colonists=0)  # unoccupied: no effect
    st = sc.play_role("settler", 0)
    act(st, "settle corn")
    assert "settle quarry" in legal(st)  # seat 1: occupied hut
    act(st, "settle quarry")
    assert st.current_player() == 2
    assert "settle quarry" not in legal(st)
    # the Settler owning a hut still takes only one quarry: covered by the pick being one tile
    assert board(st, 1)["island"]["quarry"]["tiles"] == 1


def test_s4_1_no_quarry_left():
    sc = Scenario(players=4, face_up=dict(corn=3, sugar=2))
    sc.tiles(3, "quarry", 8)
    sc.building(1, "construction_hut", colonists=1)
    st = sc.play_role("settler", 0)
    assert "settle quarry" not in legal(st)
    act(st, "settle corn")
    assert "settle quarry" not in legal(st)


def test_s4_1_full_island_skipped():
    sc = Scenario(players=4, face_up=dict(corn=3, sugar=2)).clear_island(1)
    sc.tiles(1, "indigo", 11).tiles(1, "quarry", 1)  # 12 island spaces filled
    st = sc.play_role("settler", 0)
    act(st, "settle corn")
    assert st.current_player() == 2  # seat 1 has no space: skipped


def test_s4_1_one_pick_then_next_player():
    sc = Scenario(players=3, face_up=dict(corn=1, indigo=1, sugar=1, coffee=1))
    st = sc.play_role("settler", 1, taken=("builder",))
    act(st, "settle coffee")
    assert st.current_player() == 2
    act(st, "pass")  # picking is optional
    assert st.current_player() == 0
    act(st, "settle corn")
    # after all players: the refill of N + 1 = 4 face-up tiles is chance
    assert st.is_chance_node()


def test_s4_1_refill_discards_leftovers_and_draws_n_plus_1_with_reshuffle():
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc.stack(sugar=3)  # the rest of the stack -> discard
    discard_before = dict(sc.d["plantations"]["discard"])
    st = sc.play_role("settler", 0)
    act(st, "settle corn", "pass", "pass", "pass")
    d = st.to_dict()
    # the 4 leftovers went to the discard pile
    for k in ("indigo", "sugar", "tobacco", "coffee"):
        assert d["plantations"]["discard"][k] == discard_before[k] + 1
    assert d["plantations"]["face_up"] == dict.fromkeys(GOODS, 0)
    drawn = []
    while st.is_chance_node():
        stack = st.to_dict()["plantations"]["stack"]
        # only kinds present in the stack can be drawn
        assert {st.action_to_string(a) for a in st.legal_actions()} == {
            "draw " + k for k in GOODS if stack[k] > 0
        }
        drawn.append(st.to_dict()["plantations"]["stack"].copy())
        st.resolve_chance()
    assert len(drawn) == 5
    assert drawn[0] == {"corn": 0, "indigo": 0, "sugar": 3, "tobacco": 0, "coffee": 0}
    # after 3 sugar the stack was empty: the discard pile became the new stack
    assert sum(drawn[3].values()) == sum(discard_before.values()) + 4
    d = st.to_dict()
    assert sum(d["plantations"]["face_up"].values()) == 5
    assert sum(d["plantations"]["discard"].values()) == 0
    assert d["phase"] == "role_selection"


def test_s4_1_refill_fewer_tiles_when_none_left():
    # 5p: every plantation but 1 corn (face up) and 1 sugar (stack) is on the islands
    sc = Scenario(players=5, face_up=dict(corn=1))
    sc.stack(sugar=1)
    pl = sc.d["plantations"]
    rest = {k: pl["discard"][k] for k in GOODS}
    seat = 0
    for k in GOODS:
        while rest[k]:
            isl = sc.board(seat)["island"]
            free = 12 - sum(v["tiles"] for v in isl.values())
            take = min(free, rest[k])
            if take:
                pl["discard"][k] -= take
                isl[k]["tiles"] += take
                rest[k] -= take
            if free == take:
                seat += 1
    assert sum(pl["discard"].values()) == 0
    st = sc.play_role("settler", 0)
    while not st.is_chance_node():
        act(st, "pass")
    while st.is_chance_node():
        st.resolve_chance()
    d = st.to_dict()
    assert d["plantations"]["face_up"] == {
        "corn": 1,
        "indigo": 0,
        "sugar": 1,
        "tobacco": 0,
        "coffee": 0,
    }
    assert d["phase"] == "role_selection"


def test_R10_hacienda_draw_optional_before_pick():
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc.building(1, "hacienda", colonists=1)
    st = sc.play_role("settler", 0)
    act(st, "settle corn")
    assert legal(st) == {
        "settle indigo",
        "settle sugar",
        "settle tobacco",
        "settle coffee",
        "hacienda draw",
        "pass",
    }
    declined = st.clone()
    act(declined, "settle sugar")  # declining = picking at once
    assert board(declined, 1)["island"]["sugar"]["tiles"] == 1
    assert declined.current_player() == 2
    tiles_before = sum(v["tiles"] for k, v in board(st, 1)["island"].items())
    act(st, "hacienda draw")
    assert st.is_chance_node()
    st.resolve_chance()
    assert sum(v["tiles"] for v in board(st, 1)["island"].values()) == tiles_before + 1
    assert st.current_player() == 1  # now the normal pick
    assert legal(st) == {"settle indigo", "settle sugar", "settle tobacco", "settle coffee", "pass"}
    act(st, "settle tobacco")
    assert st.current_player() == 2


def test_T31_hacienda_and_construction_hut():
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc.building(1, "hacienda", colonists=1).building(1, "construction_hut", colonists=1)
    st = sc.play_role("settler", 0)
    act(st, "settle corn", "hacienda draw")
    st.resolve_chance()
    d = st.to_dict()
    # the drawn tile is a plantation (never a quarry) and unoccupied
    assert d["quarries"] == 8 and d["boards"][1]["island"]["quarry"]["tiles"] == 0
    assert "settle quarry" in legal(st)  # the normal pick may be a quarry
    act(st, "settle quarry")
    assert board(st, 1)["island"]["quarry"]["tiles"] == 1


def test_s6_1_2_hacienda_tile_gets_no_hospice_colonist():
    sc = Scenario(
        players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1)
    ).clear_island(1)
    sc.building(1, "hacienda", colonists=1).building(1, "hospice", colonists=1)
    st = sc.play_role("settler", 0)
    act(st, "settle corn", "hacienda draw")
    st.resolve_chance()
    assert "hospice colonist" not in legal(st)
    isl = board(st, 1)["island"]
    assert sum(v.get("colonists", 0) for v in isl.values()) == 0
    act(st, "settle sugar")  # the picked tile may get one
    assert legal(st) == {"hospice colonist", "pass"}
    act(st, "hospice colonist")
    assert board(st, 1)["island"]["sugar"] == {"tiles": 1 + isl["sugar"]["tiles"], "colonists": 1}


def test_s6_1_5_hospice_colonist_from_supply():
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc.building(1, "hospice", colonists=1)
    supply = sc.d["colonists"]["supply"]
    st = sc.play_role("settler", 0)
    act(st, "settle corn", "settle coffee")
    assert legal(st) == {"hospice colonist", "pass"}
    act(st, "hospice colonist")
    d = st.to_dict()
    assert d["boards"][1]["island"]["coffee"] == {"tiles": 1, "colonists": 1}
    assert d["colonists"] == {"supply": supply - 1, "ship": 4}
    assert st.current_player() == 2


def test_T32_R06_hospice_with_empty_supply_uses_ship():
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc.building(1, "hospice", colonists=1)
    sc.colonists(ship=3).colonists(supply=0, park_seat=3)
    st = sc.play_role("settler", 0)
    act(st, "settle corn", "settle sugar", "hospice colonist")
    d = st.to_dict()
    assert d["colonists"] == {"supply": 0, "ship": 2}
    assert d["boards"][1]["island"]["sugar"] == {"tiles": 1, "colonists": 1}
    # supply 0 and ship 0 -> no colonist, no decision
    sc2 = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc2.building(1, "hospice", colonists=1)
    sc2.colonists(ship=0).colonists(supply=0, park_seat=3)
    st = sc2.play_role("settler", 0)
    act(st, "settle corn", "settle sugar")
    assert st.current_player() == 2
    assert "hospice colonist" not in legal(st)


def test_R07_hospice_on_quarry():
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc.building(0, "hospice", colonists=1)
    st = sc.play_role("settler", 0)
    act(st, "settle quarry", "hospice colonist")
    assert board(st, 0)["island"]["quarry"] == {"tiles": 1, "colonists": 1}
    # the Construction-hut quarry as well
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc.building(1, "hospice", colonists=1).building(1, "construction_hut", colonists=1)
    st = sc.play_role("settler", 0)
    act(st, "settle corn", "settle quarry", "hospice colonist")
    assert board(st, 1)["island"]["quarry"] == {"tiles": 1, "colonists": 1}


def test_s6_1_5_unoccupied_hospice_does_nothing():
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc.building(1, "hospice", colonists=0)
    st = sc.play_role("settler", 0)
    act(st, "settle corn", "settle sugar")
    assert st.current_player() == 2


# --- Mayor --------------------------------------------------------------------------


def _circle_free_scenario(players=4):
    sc = Scenario(players=players)
    for seat in range(players):
        sc.clear_island(seat)
    return sc


def test_T04_mayor_distribution_one_at_a_time_from_the_mayor():
    sc = _circle_free_scenario().colonists(ship=6)
    supply = sc.d["colonists"]["supply"]
    st = sc.play_role("mayor", 2, taken=("settler", "builder"))  # seat 2 is the Mayor
    d = st.to_dict()
    # Mayor 1 (privilege) + 2, next 2, then 1, 1 (seats 2, 3, 0, 1)
    assert [d["boards"][i]["san_juan"] for i in range(4)] == [1, 1, 3, 2]
    # refill: no building circles -> need = max(4, 0) = 4
    assert d["colonists"] == {"supply": supply - 1 - 4, "ship": 4}
    assert d["phase"] == "role_selection" and st.current_player() == 3


def test_T04_mayor_refill_counts_empty_building_circles():
    sc = _circle_free_scenario().colonists(ship=4)
    sc.building(3, "indigo_plant")  # 3 circles; seat 3 gets 1 colonist
    supply = sc.d["colonists"]["supply"]
    st = sc.play_role("mayor", 0)
    d = st.to_dict()
    assert d["boards"][3]["buildings"]["indigo_plant"] == 1  # forced placement, auto-played
    assert d["colonists"] == {"supply": supply - 1 - 4, "ship": 4}  # max(4, 2)
    sc = _circle_free_scenario().colonists(ship=4)
    sc.building(3, "sugar_mill").building(3, "tobacco_storage").building(3, "coffee_roaster")
    sc.building(1, "small_market")
    supply = sc.d["colonists"]["supply"]
    st = sc.play_role("mayor", 0)
    assert st.current_player() == 3  # 1 colonist, 3 buildings: a choice
    assert legal(st) == {
        "colonist to sugar mill",
        "colonist to tobacco storage",
        "colonist to coffee roaster",
    }
    act(st, "colonist to coffee roaster")
    d = st.to_dict()
    assert d["boards"][1]["buildings"]["small_market"] == 1
    # empty building circles: 3 + 3 + 1 = 7 -> ship 7
    assert d["colonists"] == {"supply": supply - 1 - 7, "ship": 7}


def test_s4_2_mayor_privilege_needs_supply():
    sc = _circle_free_scenario().colonists(ship=4).colonists(supply=0, park_seat=3)
    st = sc.play_role("mayor", 0)
    d = st.to_dict()
    parked = sc.d["boards"][3]["san_juan"]
    assert [d["boards"][i]["san_juan"] for i in range(3)] == [1, 1, 1]
    assert d["boards"][3]["san_juan"] == parked + 1


def test_s4_2_must_fill_and_canonical_one_at_a_time_placement():
    sc = _circle_free_scenario().colonists(ship=0)
    sc.tiles(0, "corn", 1).tiles(0, "quarry", 1)
    sc.building(0, "indigo_plant").building(0, "small_market")
    sc.san_juan(0, 2)  # + privilege = 3 colonists, 6 circles
    st = sc.play_role("mayor", 0)
    assert st.current_player() == 0
    # non-decreasing slot order; only slots after which all 3 still fit on circles
    assert legal(st) == {
        "colonist to corn plantation",
        "colonist to quarry",
        "colonist to indigo plant",
    }
    act(st, "colonist to quarry")
    # after the quarry: 2 left; at/after the quarry slot the market alone cannot take both, so the
    # next one is forced onto the Indigo plant (auto-played); the last one is a choice
    assert legal(st) == {"colonist to indigo plant", "colonist to small market"}
    assert board(st, 0)["buildings"]["indigo_plant"] == 1
    act(st, "colonist to small market")
    b = board(st, 0)
    assert b["san_juan"] == 0
    assert b["island"]["quarry"]["colonists"] == 1 and b["island"]["corn"]["colonists"] == 0
    assert b["buildings"] == {"indigo_plant": 1, "small_market": 1}


def test_s4_2_must_fill_forced_placement_is_auto_played():
    sc = _circle_free_scenario().colonists(ship=0)
    sc.building(0, "indigo_plant").building(0, "small_market")
    sc.san_juan(0, 1)  # 2 colonists, 4 circles
    st = sc.play_role("mayor", 0)
    # the first colonist can only go to the Indigo plant (on the market the second would have
    # no circle left at or after it): forced, auto-played; the second is a real choice
    assert st.current_player() == 0
    assert legal(st) == {"colonist to indigo plant", "colonist to small market"}
    act(st, "colonist to small market")
    b = board(st, 0)
    assert b["buildings"] == {"indigo_plant": 1, "small_market": 1}
    assert b["san_juan"] == 0


def test_s4_2_colonists_at_least_circles_fill_everything():
    sc = _circle_free_scenario().colonists(ship=0)
    sc.tiles(1, "corn", 2).building(1, "small_market")
    sc.san_juan(1, 5)
    st = sc.play_role("mayor", 0)
    b = board(st, 1)
    assert b["island"]["corn"] == {"tiles": 2, "colonists": 2}
    assert b["buildings"] == {"small_market": 1}
    assert b["san_juan"] == 2
    assert st.to_dict()["phase"] == "role_selection"


def test_s4_2_colonists_are_lifted_and_replaced():
    sc = _circle_free_scenario().colonists(ship=0)
    sc.tiles(1, "corn", 1, colonists=1).tiles(1, "sugar", 1)
    st = sc.play_role("mayor", 0)
    # seat 1 has 1 colonist for 2 circles: he may move it
    assert st.current_player() == 1
    assert legal(st) == {"colonist to corn plantation", "colonist to sugar plantation"}
    act(st, "colonist to sugar plantation")
    isl = board(st, 1)["island"]
    assert isl["corn"]["colonists"] == 0 and isl["sugar"]["colonists"] == 1


def test_s6_1_2_hacienda_with_one_free_space_then_no_pick():
    sc = Scenario(
        players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1)
    ).clear_island(1)
    sc.tiles(1, "quarry", 6).tiles(1, "indigo", 5)  # 11 of 12 spaces filled
    sc.building(1, "hacienda", colonists=1)
    st = sc.play_role("settler", 0)
    act(st, "settle corn")
    assert "hacienda draw" in legal(st)
    act(st, "hacienda draw")
    st.resolve_chance()
    assert sum(v["tiles"] for v in board(st, 1)["island"].values()) == 12
    assert st.current_player() == 2  # no space left for the pick


def test_s6_1_2_hacienda_reshuffles_empty_stack():
    sc = Scenario(players=4, face_up=dict(corn=1, indigo=1, sugar=1, tobacco=1, coffee=1))
    sc.stack()  # everything face down -> discard
    discard = dict(sc.d["plantations"]["discard"])
    sc.building(1, "hacienda", colonists=1)
    st = sc.play_role("settler", 0)
    act(st, "settle corn")
    assert "hacienda draw" in legal(st)
    act(st, "hacienda draw")
    assert st.is_chance_node()
    assert {st.action_to_string(a) for a in st.legal_actions()} == {
        "draw " + k for k, v in discard.items() if v
    }
    st.resolve_chance()
    d = st.to_dict()
    assert (
        sum(d["plantations"]["stack"].values()) + sum(d["plantations"]["discard"].values())
        == sum(discard.values()) - 1
    )


def test_s6_1_2_hacienda_nothing_to_draw():
    # 5p: every plantation not face up is on an island: stack and discard are empty
    sc = Scenario(players=5, face_up=dict(corn=2, indigo=1, sugar=1, tobacco=1, coffee=1))
    for seat in (0, 2, 3, 4):
        sc.clear_island(seat)
    sc.stack()
    pl = sc.d["plantations"]
    for k in ("corn", "indigo", "sugar", "tobacco", "coffee"):
        while pl["discard"][k]:
            seat = next(
                s
                for s in (0, 2, 3, 4)
                if sum(v["tiles"] for v in sc.board(s)["island"].values()) < 12
            )
            pl["discard"][k] -= 1
            sc.board(seat)["island"][k]["tiles"] += 1
    assert sum(pl["discard"].values()) == 0 and sum(pl["stack"].values()) == 0
    sc.building(1, "hacienda", colonists=1)
    st = sc.play_role("settler", 1, taken=("builder",))
    assert st.current_player() == 1
    assert legal(st) == {
        "settle corn",
        "settle indigo",
        "settle sugar",
        "settle tobacco",
        "settle coffee",
        "settle quarry",
        "pass",
    }
