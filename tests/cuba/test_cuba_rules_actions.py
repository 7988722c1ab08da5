"""Cuba rules: setup (§3) and the action phase (§6-§7), with the reference's test
scenarios 1-31 (``test_Tnn_...``). Expected values are worked out from the reference and
the shipped data (marked [P] there), not copied from the engine."""

from __future__ import annotations

import pytest
from cuba_scenario import (
    act,
    board,
    edit,
    empty_board,
    legal,
    passive_round,
    set_at_sea,
    set_dock,
    set_law,
    start,
)

import caribsim


def yard(state, seat, *kinds):
    b = board(state, seat)
    return tuple(b["yard"][k] for k in kinds)


def fresh(n=3, **kw):
    """Round-1 action phase, every yard empty, P1 (seat 0) to play."""
    _game, s = start(n, **kw)

    def f(d):
        for b in d["boards"]:
            empty_board(b)

    return edit(s, f)


# --- §3 setup --------------------------------------------------------------------


def test_T01_initial_state_3_players():
    game = caribsim.load_game("cuba", players=3, start_player=1)
    s = game.new_initial_state(seed=3)
    for _ in range(3):
        assert s.is_chance_node()
        s.resolve_chance()
    order = []
    while s.step_name() == "setup_item":
        order.append(s.current_player())
        s.apply_action(s.legal_actions()[0])
    assert order == [1] * 4 + [2] * 4 + [0] * 4  # P2, P3, P1
    d = s.to_dict()
    assert d["market"] == {"sugar": 3, "citrus": 3, "tobacco": 3, "rum": 2, "cigar": 2}
    h = d["harbour"]
    assert h["docks"][0] is not None and h["docks"][1] is not None and h["docks"][2] is None
    assert h["at_sea"] is not None and len(h["deck_unseen"]) == 12
    assert d["laws"]["in_force"] == {"I": "initial", "II": "initial", "III": None, "IV": None}
    for b in d["boards"]:
        assert b["pesos"] == 10 and b["vp"] == 0 and b["pawn"] == "1,1"
    # buy 4 / sell 3 for crops, buy 5 / sell 4 for goods: seen through trades below
    _game2, s2 = start(3)
    s2 = edit(s2, lambda d: d["boards"][0]["yard"].update(sugar=1, rum=1))
    act(s2, "play trader", "sell sugar")
    assert board(s2, 0)["pesos"] == 13
    act(s2, "sell rum")
    assert board(s2, 0)["pesos"] == 17
    act(s2, "buy citrus")
    assert board(s2, 0)["pesos"] == 13


def test_s3_setup_items_are_two_materials_then_two_crops_with_repeats():
    game = caribsim.load_game("cuba", players=2, start_player=0)
    s = game.new_initial_state(seed=1)
    for _ in range(3):
        s.resolve_chance()
    assert legal(s) == {"take wood", "take stone", "take water"}
    act(s, "take stone")
    assert legal(s) == {"take stone", "take water"}  # non-decreasing: each multiset once
    act(s, "take stone")
    assert legal(s) == {"take sugar", "take citrus", "take tobacco"}
    act(s, "take tobacco", "take tobacco")
    assert yard(s, 0, "stone", "tobacco", "wood") == (2, 2, 0)
    assert s.current_player() == 1


def test_s3_random_start_player_is_a_chance_node():
    game = caribsim.load_game("cuba", players=4)
    s = game.new_initial_state(seed=5)
    for _ in range(3):
        s.resolve_chance()
    assert s.step_name() == "start_player"
    assert sorted(p for _, p in s.chance_outcomes()) == [0.25] * 4
    act(s, "start player seat 2")
    assert s.current_player() == 2


def test_T02_starting_crops_discarded_after_round_1():
    _game, s = start(3, items=("stone", "stone", "sugar", "sugar"))
    passive_round(s)
    b = board(s, 0)
    assert b["yard"]["sugar"] == 0 and b["warehouse"]["sugar"] == 0
    assert b["yard"]["stone"] == 2


# --- §6.1 order of play, §6.9 ------------------------------------------------------


def test_s6_1_four_laps_each_card_once_fifth_unplayed():
    _game, s = start(3)
    seen = []
    while s.phase() == "actions":
        if s.step_name() == "character":
            seat = s.current_player()
            cards = legal(s)
            assert all(c.startswith("play ") for c in cards)
            seen.append((seat, len(cards)))
            act(s, sorted(cards)[0])
            while s.current_player() == seat and s.step_name() != "character":
                act(s, "pass") if "pass" in legal(s) else s.apply_action(s.legal_actions()[0])
        else:
            s.apply_action(s.legal_actions()[0])
    assert [c for _, c in seen] == [5, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2]
    assert [p for p, _ in seen] == [0, 1, 2] * 4
    assert all(len(b["hand"]) == 1 for b in s.to_dict()["boards"])


# --- §6.3 Worker -------------------------------------------------------------------


def test_T03_worker_basic():
    s = fresh()
    act(s, "play worker", "pawn to 3,3")
    assert legal(s) == {"harvest 2,3", "harvest 3,1", "pass"}
    act(s, "harvest 2,3", "harvest 3,1")
    assert s.current_player() == 1  # nothing left: the turn ended
    assert yard(s, 0, "stone", "wood", "water", "tobacco", "sugar", "citrus") == (2, 1, 1, 2, 0, 0)


def test_T04_irrigation_with_fresh_water():
    s = fresh()
    act(s, "play worker", "pawn to 2,3", "harvest 2,2", "harvest 2,3", "harvest 2,4")
    assert yard(s, 0, "wood", "stone", "water", "citrus", "tobacco", "sugar") == (1, 1, 0, 1, 1, 1)


def _drought(water):
    s = fresh()

    def f(d):
        d["round"] = 2
        set_law(d, "IV", "drought")
        d["boards"][0]["yard"]["water"] = water

    return edit(s, f)


def test_T05_drought_one_free_field():
    s = _drought(1)
    act(s, "play worker", "pawn to 2,3", "harvest 2,2", "harvest 2,3", "harvest 2,4")
    assert yard(s, 0, "wood", "stone", "water", "citrus", "tobacco", "sugar") == (1, 1, 0, 1, 1, 1)
    s = _drought(0)
    act(s, "play worker", "pawn to 2,3", "harvest 2,2", "harvest 2,3")
    assert s.current_player() == 1  # no water left: no third field
    assert yard(s, 0, "water", "citrus", "tobacco", "sugar") == (0, 1, 1, 0)


def test_T06_each_field_once_only_row_and_column():
    s = fresh()
    s = edit(s, lambda d: d["boards"][0]["yard"].update(water=5))
    act(s, "play worker", "pawn to 1,1")
    assert legal(s) == {"harvest 1,2", "harvest 1,4", "harvest 3,1", "pass"}
    act(s, "harvest 1,2", "harvest 1,4", "harvest 3,1")
    assert yard(s, 0, "sugar", "citrus", "tobacco", "water") == (1, 1, 1, 5 - 1 + 0)
    assert s.current_player() == 1


def test_T07_covered_fields_produce_nothing():
    s = fresh()
    s = edit(s, lambda d: d["boards"][0]["buildings"].update(hotel="2,2"))
    s2 = s.clone()
    act(s, "play worker", "pawn to 2,3")
    assert legal(s) == {"harvest 2,3", "harvest 2,4", "pass"}
    assert yard(s, 0, "wood", "stone", "water") == (1, 1, 1)
    act(s2, "play worker", "pawn to 2,2")
    assert legal(s2) == {"harvest 1,2", "harvest 2,3", "harvest 2,4", "pass"}
    assert yard(s2, 0, "wood", "stone", "water") == (1, 1, 0)


def test_s6_3_worker_no_action_produces_nothing():
    s = fresh()
    act(s, "play worker", "pass")
    assert sum(board(s, 0)["yard"].values()) == 0 and board(s, 0)["pawn"] == "1,1"


# --- §6.4 Trader ------------------------------------------------------------------


def test_T08_buying_down_the_track():
    s = fresh()
    s = edit(s, lambda d: d["boards"][0].update(pesos=50))
    act(s, "play trader", "buy sugar", "buy sugar", "buy sugar", "buy sugar", "pass")
    assert board(s, 0)["pesos"] == 50 - 22 and yard(s, 0, "sugar") == (4,)
    assert s.to_dict()["market"]["sugar"] == 0
    s = edit(s, lambda d: d["boards"][1]["yard"].update(sugar=1))
    act(s, "play trader", "sell sugar")
    assert board(s, 1)["pesos"] == 10 + 6 and s.to_dict()["market"]["sugar"] == 1


def test_T09_market_full():
    s = fresh()
    s = edit(
        s,
        lambda d: (
            d["market"].update(citrus=5, rum=3),
            d["boards"][0]["yard"].update(citrus=2, rum=1),
        ),
    )
    act(s, "play trader", "sell citrus", "sell citrus", "sell rum")
    assert board(s, 0)["pesos"] == 15
    assert s.to_dict()["market"]["citrus"] == 5 and s.to_dict()["market"]["rum"] == 3
    assert "buy citrus" not in legal(s)  # buying back a kind sold in this action is dominated
    act(s, "pass", "play trader", "buy citrus")  # P2: the cheapest covered space, 2
    assert board(s, 1)["pesos"] == 8 and s.to_dict()["market"]["citrus"] == 4


def test_T10_market_empty():
    s = fresh()
    s = edit(s, lambda d: (d["market"].update(cigar=0), d["boards"][0].update(pesos=20)))
    act(s, "play trader", "buy cigar", "buy cigar")  # 6 pesos left: nothing more, the turn ends
    assert board(s, 0)["pesos"] == 6 and yard(s, 0, "cigar") == (2,)
    assert s.to_dict()["market"]["cigar"] == 0
    s = edit(s, lambda d: d["boards"][1]["yard"].update(cigar=1))
    act(s, "play trader", "sell cigar")
    assert board(s, 1)["pesos"] == 16 and s.to_dict()["market"]["cigar"] == 1


def test_T11_warehouse_crops_are_sellable():
    s = fresh()
    s = edit(s, lambda d: d["boards"][0]["warehouse"].update(tobacco=2))
    act(s, "play trader", "sell tobacco", "sell tobacco")
    assert board(s, 0)["pesos"] == 15 and board(s, 0)["warehouse"]["tobacco"] == 0


def test_T12_trader_alternative_material_once_per_round():
    s = fresh()
    act(s, "play trader")
    assert "trader take stone" in legal(s)
    act(s, "trader take stone")
    assert yard(s, 0, "stone") == (1,) and s.current_player() == 1  # no trading after it
    act(s, "play worker", "pass")
    s = edit(s, lambda d: d["boards"][2].update(pesos=10))
    act(s, "play trader")
    opts = legal(s)
    assert not any(o.startswith("trader take") and "cheapest" not in o for o in opts)
    assert "trader take cheapest sugar" in opts or "trader take cheapest citrus" in opts


def test_T13_trader_alternative_cheapest_crop():
    s = fresh()
    s = edit(s, lambda d: d["market"].update(sugar=3, citrus=5, tobacco=0))
    act(s, "play trader")
    assert {o for o in legal(s) if "cheapest" in o} == {"trader take cheapest citrus"}
    act(s, "trader take cheapest citrus")
    assert yard(s, 0, "citrus") == (1,) and s.to_dict()["market"]["citrus"] == 5
    s = fresh()
    s = edit(s, lambda d: d["market"].update(sugar=2, citrus=1, tobacco=2))
    act(s, "play trader")
    assert {o for o in legal(s) if "cheapest" in o} == {
        "trader take cheapest sugar",
        "trader take cheapest tobacco",
    }


def test_s6_4_materials_are_not_traded_and_pesos_bound_purchases():
    s = fresh()
    s = edit(s, lambda d: (d["boards"][0].update(pesos=3), d["boards"][0]["yard"].update(wood=3)))
    act(s, "play trader")
    assert not any(o.startswith(("sell wood", "buy wood")) for o in legal(s))
    assert "buy sugar" not in legal(s)  # price 4 > 3 pesos


# --- §6.5 Architect ----------------------------------------------------------------


def _tavern_state(law):
    s = fresh()

    def f(d):
        d["boards"][0]["yard"].update(wood=2, stone=1)
        d["boards"][0]["pesos"] = 3
        if law:
            d["round"] = 2
            set_law(d, "IV", "building_law")

    return edit(s, f)


def test_T14_building_and_building_law():
    s = _tavern_state(False)
    act(s, "play architect", "build tavern", "place on 2,2")
    b = board(s, 0)
    assert b["buildings"] == {"tavern": "2,2"}
    assert (b["yard"]["wood"], b["yard"]["stone"], b["pesos"]) == (0, 0, 1)
    s = _tavern_state(True)
    act(s, "play architect")
    assert "build tavern" not in legal(s)


def test_T15_placement():
    s = fresh()
    s = edit(
        s,
        lambda d: (
            d["boards"][0]["buildings"].update(hotel="2,2"),
            d["boards"][0].update(pawn="3,3", pesos=30),
            d["boards"][0]["yard"].update(wood=5, stone=5, water=5),
        ),
    )
    act(s, "play architect")
    assert "build hotel" not in legal(s)
    act(s, "build inn")
    places = legal(s)
    assert (
        "place on 1,1" not in places and "place on 2,2" not in places and "place on 3,3" in places
    )
    act(s, "place on 3,3")
    assert board(s, 0)["pawn"] == "3,3" and board(s, 0)["buildings"]["inn"] == "3,3"


def test_T16_second_copies():
    s = fresh()
    s = edit(
        s,
        lambda d: (
            d["boards"][0]["buildings"].update(distillery="2,2"),
            [b["yard"].update(wood=5, stone=5, water=5) or b.update(pesos=30) for b in d["boards"]],
        ),
    )
    act(s, "play architect")
    assert "build distillery" not in legal(s)
    act(s, "pass", "play architect", "build distillery", "place on 2,2")
    s = edit(s, lambda d: None)
    act(s, "play architect")
    assert "build distillery" not in legal(s)


def test_T17_architect_alternative_in_order():
    _game, s = start(4)
    s = edit(
        s,
        lambda d: (
            d["boards"][0]["yard"].update(wood=2, stone=2),
            [b.update(pesos=0) for b in d["boards"][1:]],
            [empty_board(b) for b in d["boards"][1:]],
        ),
    )
    act(s, "play architect", "build abbey", "place on 2,2")
    vp0 = [b["vp"] for b in s.to_dict()["boards"]]
    for seat, gain in ((1, 2), (2, 1), (3, 0)):
        act(s, "play architect")
        if gain:
            act(s, "architect alternative")
        else:
            assert s.current_player() == 0 or "architect alternative" not in legal(s)
        assert board(s, seat)["vp"] == vp0[seat] + gain
    assert "architect_2vp" in s.to_dict()["markers"]
    passive_round(s)
    assert s.to_dict()["markers"] == []


# --- §6.6 Foreman and §7 buildings ----------------------------------------------------


def _foreman(buildings, pawn, **stock):
    s = fresh()

    def f(d):
        b = d["boards"][0]
        b["buildings"].update(buildings)
        b["pawn"] = pawn
        for k, v in stock.items():
            where, _, kind = k.partition("_")
            if kind:
                b[where][kind] = v
            else:
                b["yard"][k] = v

    return edit(s, f)


def test_T18_mode_A_order():
    s = _foreman(
        {"distillery": "1,3", "tavern": "3,2", "hotel": "2,4"}, "1,2", sugar=3, rum=1, citrus=2
    )
    act(s, "play foreman", "foreman row and column")
    assert legal(s) == {"use distillery", "use tavern", "use warehouse", "pass"}
    act(s, "use distillery", "pick sugar", "pick sugar", "pick sugar")
    assert yard(s, 0, "sugar", "rum") == (0, 4)
    act(s, "use tavern", "pick rum", "pick rum", "pick rum")  # limit 3: ends by itself
    assert board(s, 0)["vp"] == 6 and yard(s, 0, "rum") == (1,)
    act(s, "use warehouse")
    assert board(s, 0)["warehouse"]["citrus"] == 2 and yard(s, 0, "citrus") == (0,)
    assert s.current_player() == 1


def test_T19_mode_B_single_building():
    s = _foreman(
        {"distillery": "1,3", "tavern": "3,2", "hotel": "2,4"}, "1,2", sugar=3, rum=1, citrus=2
    )
    act(s, "play foreman", "use hotel")
    assert board(s, 0)["vp"] == 2 and s.current_player() == 1
    assert yard(s, 0, "sugar", "rum", "citrus") == (3, 1, 2)


def test_T20_warehouse_outside_the_cross():
    s = _foreman({}, "2,3", citrus=2)
    act(s, "play foreman")
    assert legal(s) == {"use warehouse", "pass"}
    act(s, "use warehouse")
    assert board(s, 0)["warehouse"]["citrus"] == 2


@pytest.mark.parametrize(
    "building, item, have, picks, vp, left",
    [
        ("cement_factory", "stone", 6, 4, 4, 2),
        ("sawmill", "wood", 2, 2, 2, 0),
        ("golf_course", "water", 5, 4, 4, 1),
        ("tavern", "rum", 4, 3, 6, 1),
        ("smoking_lounge", "cigar", 1, 1, 2, 0),
    ],
)
def test_T21_converter_limits(building, item, have, picks, vp, left):
    s = _foreman({building: "3,4"}, "1,1", **{item: have})
    act(s, "play foreman", "use " + building.replace("_", " "))
    for _ in range(picks):
        act(s, f"pick {item}")
    assert s.current_player() == 1  # the limit (or the stock) ended the use
    assert board(s, 0)["vp"] == vp and yard(s, 0, item) == (left,)


def test_T21_abbey_two_crops():
    s = _foreman({"abbey": "3,4"}, "1,1", sugar=1, citrus=2)
    act(s, "play foreman", "use abbey", "pick sugar", "pick citrus")
    assert board(s, 0)["vp"] == 2 and yard(s, 0, "sugar", "citrus") == (0, 1)


def test_T22_economy_buildings():
    s = _foreman({"main_warehouse": "3,4"}, "1,1", rum=2)
    act(s, "play foreman", "use main warehouse", "pick rum")
    assert (
        board(s, 0)["pesos"] == 16
        and yard(s, 0, "rum") == (1,)
        and s.to_dict()["market"]["rum"] == 2
    )
    s = _foreman({"production_building": "3,4"}, "1,1", citrus=1)
    act(s, "play foreman", "use production building", "pick citrus")
    assert board(s, 0)["pesos"] == 14
    s = _foreman({"supply_depot": "3,4"}, "1,1", stone=3)
    act(s, "play foreman", "use supply depot", "pick stone", "pick stone")
    assert board(s, 0)["pesos"] == 14 and yard(s, 0, "stone") == (1,)
    for b, pesos, vp, water in (
        ("small_bank", 12, 0, 0),
        ("large_bank", 14, 0, 0),
        ("hotel", 10, 2, 0),
        ("inn", 10, 1, 0),
        ("dam", 10, 0, 2),
    ):
        s = _foreman({b: "3,4"}, "1,1")
        act(s, "play foreman", "use " + b.replace("_", " "))
        assert (board(s, 0)["pesos"], board(s, 0)["vp"], yard(s, 0, "water")[0]) == (
            pesos,
            vp,
            water,
        )
    s = _foreman({"cigar_factory": "3,4"}, "1,1", tobacco=1, warehouse_tobacco=2)
    act(s, "play foreman", "use cigar factory", "pick tobacco", "pick tobacco", "pick tobacco")
    assert yard(s, 0, "cigar", "tobacco") == (3, 0) and board(s, 0)["warehouse"]["tobacco"] == 0
    s = _foreman({"distillery": "3,4"}, "1,1", sugar=2)
    act(s, "play foreman", "use distillery", "pick sugar", "pick sugar")
    assert yard(s, 0, "rum", "sugar") == (2, 0)
    s = _foreman({"black_market": "3,4"}, "1,1", citrus=1)
    act(s, "play foreman", "use black market", "pick citrus")
    assert legal(s) == {"receive rum", "receive cigar"}
    act(s, "receive cigar")
    assert yard(s, 0, "citrus", "cigar") == (0, 1)


def test_T23_storage_keeps_three_crops():
    s = _foreman({"storage": "3,4"}, "1,1", sugar=3, citrus=2)
    act(s, "play foreman", "use storage", "pick sugar", "pick sugar", "pick citrus")
    b = board(s, 0)
    assert b["storage"] == {"sugar": 2, "citrus": 1, "tobacco": 0} and b["yard"]["citrus"] == 1
    passive_round(s)
    b = board(s, 0)
    assert b["storage"] == {"sugar": 2, "citrus": 1, "tobacco": 0} and b["yard"]["citrus"] == 0
    while s.is_chance_node():
        s.resolve_chance()
    s = edit(s, lambda d: d["boards"][0]["yard"].update(sugar=2))
    while s.current_player() != 0:
        s.apply_action(s.legal_actions()[0])
    act(s, "play foreman")
    assert "use storage" not in legal(s)  # full: nothing more to store


def test_T24_crop_source_yard_storage_warehouse():
    s = _foreman({"storage": "3,4"}, "1,1", sugar=1, storage_sugar=1, warehouse_sugar=2)
    s = edit(s, lambda d: set_dock(d, 1, "ship_11"))
    act(s, "play mayor", "load sugar on dock 1", "load sugar on dock 1")
    b = board(s, 0)
    assert (b["yard"]["sugar"], b["storage"]["sugar"], b["warehouse"]["sugar"]) == (0, 0, 2)


def test_T25_town_hall_votes():
    s = _foreman({"town_hall": "3,4"}, "1,1")
    from cuba_scenario import play_card

    play_card(s, "trader")
    play_card(s, "trader")
    play_card(s, "trader")
    act(s, "play foreman", "use town hall")  # lap 2
    assert s.to_dict()["town_hall_user"] == 0
    while s.phase() == "actions":
        seat = s.current_player()
        hand = board(s, seat)["hand"]
        play_card(s, "worker" if "worker" in hand and len(hand) == 2 and seat == 0 else hand[-1])
    assert board(s, 0)["fourth"] == "worker"
    assert board(s, 0)["votes"] == 3


# --- §6.7 Mayor ----------------------------------------------------------------------


def _mayor(harbour_law=False, **stock):
    s = fresh()

    def f(d):
        d["boards"][0]["yard"].update(stock)
        if harbour_law:
            d["round"] = 2
            set_law(d, "IV", "harbour_law")

    return edit(s, f)


def test_T26_loading_by_dock_value():
    s = _mayor(sugar=1, tobacco=3, rum=2, citrus=1)
    s = edit(s, lambda d: set_dock(d, 3, "ship_13", tobacco=1))
    act(s, "play mayor")
    assert "load citrus on dock 3" not in legal(s)
    act(
        s,
        "load sugar on dock 3",
        "load tobacco on dock 3",
        "load rum on dock 3",
        "load rum on dock 3",
    )
    assert board(s, 0)["vp"] == 12 and s.current_player() == 1  # full: the turn ends
    d = s.to_dict()
    assert d["harbour"]["docks"][2]["ship"] == "ship_13"
    assert d["harbour"]["docks"][2]["cargo"] == {
        "sugar": 1,
        "citrus": 0,
        "tobacco": 2,
        "rum": 2,
        "cigar": 0,
    }
    assert yard(s, 0, "tobacco", "citrus") == (2, 1)


def test_T27_one_ship_per_mayor():
    s = _mayor(sugar=2, citrus=2)
    act(s, "play mayor", "load sugar on dock 1")
    assert not any(o.endswith(("dock 2", "dock 3")) for o in legal(s))


def test_T28_mayor_alternative_in_order():
    s = _mayor()
    for seat, gain in ((0, 4), (1, 2)):
        act(s, "play mayor", "mayor alternative")
        assert board(s, seat)["pesos"] == 10 + gain
    s = edit(s, lambda d: d["boards"][2]["yard"].update(sugar=1))
    act(s, "play mayor")
    assert "mayor alternative" not in legal(s) and "load sugar on dock 1" in legal(s)


def _harbour_29(law):
    s = _mayor(harbour_law=law, citrus=1)

    def f(d):
        set_dock(d, 1, "ship_02")
        set_dock(d, 2, "ship_01", sugar=2)
        set_dock(d, 3, "ship_06")
        set_at_sea(d, "ship_09")

    return edit(s, f)


def test_T29_harbour_law_mayor():
    s = _harbour_29(True)
    act(s, "play mayor", "load citrus on dock 2")
    assert board(s, 0)["vp"] == 2
    assert s.is_chance_node()
    act(s, "ship draw ship_12")
    h = s.to_dict()["harbour"]
    assert [dk["ship"] for dk in h["docks"]] == ["ship_09", "ship_02", "ship_06"]
    assert h["at_sea"] == "ship_12" and h["deck_returned"] == ["ship_01"]
    assert all(v == 0 for v in h["docks"][1]["cargo"].values())
    assert s.current_player() == 1


def test_T30_harbour_law_large_office():
    s = _mayor(harbour_law=True, rum=2, citrus=1)

    def f(d):
        d["boards"][0]["buildings"]["large_office"] = "3,4"
        set_dock(d, 1, "ship_02")
        set_dock(d, 2, "ship_01")
        set_dock(d, 3, "ship_06", sugar=2, tobacco=1)
        set_at_sea(d, "ship_09")
        d["boards"][0]["buildings"]["inn"] = "2,4"
        d["boards"][0]["pawn"] = "1,4"

    s = edit(s, f)
    act(s, "play foreman", "foreman row and column", "use large office", "load rum on dock 3")
    assert board(s, 0)["vp"] == 3
    act(s, "ship draw ship_12")
    h = s.to_dict()["harbour"]
    assert [dk["ship"] for dk in h["docks"]] == ["ship_09", "ship_02", "ship_01"]
    assert h["at_sea"] == "ship_12" and h["deck_returned"] == ["ship_06"]
    assert s.current_player() == 0 and "use inn" in legal(s)  # the Foreman use goes on


def test_T31_no_harbour_law_ship_stays_full():
    s = _harbour_29(False)
    s = edit(s, lambda d: d["boards"][1]["yard"].update(citrus=1, sugar=1))
    act(s, "play mayor", "load citrus on dock 2")
    h = s.to_dict()["harbour"]
    assert h["docks"][1]["ship"] == "ship_01" and not s.is_chance_node()
    act(s, "play mayor")
    assert not any(o.endswith("dock 2") for o in legal(s))
