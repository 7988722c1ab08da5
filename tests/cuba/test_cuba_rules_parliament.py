"""Cuba rules: parliament (§8), law execution (§9), the start player change (§6.9), the end of
round and ships (§10), the end of the game (§12), with the reference's test scenarios 32-58."""

from __future__ import annotations

import pytest
from cuba_scenario import (
    act,
    at_enact,
    board,
    edit,
    empty_board,
    legal,
    pass_laws,
    passive_round,
    play_card,
    set_at_sea,
    set_dock,
    set_law,
    set_proposal,
    start,
    to_parliament,
)


def fresh(n=3, **kw):
    _game, s = start(n, **kw)

    def f(d):
        for b in d["boards"]:
            empty_board(b)

    return edit(s, f)


def bids(state, *amounts):
    """The bidders in turn, each with his amount."""
    for a in amounts:
        assert state.step_name() == "bid"
        act(state, f"bid {a}")
    return state


def pesos(state):
    return [b["pesos"] for b in state.to_dict()["boards"]]


def votes(state):
    return [b["votes"] for b in state.to_dict()["boards"]]


# --- §8 parliament --------------------------------------------------------------------


def test_T32_bought_majority():
    s = fresh(3)
    s = edit(
        s,
        lambda d: (d.update(town_hall_user=2), d["boards"][2]["buildings"].update(town_hall="3,4")),
    )
    s = to_parliament(s, ["mayor", "worker", "foreman"])
    assert s.to_dict()["start_player"] == 0
    bids(s, 0, 3, 0)
    assert votes(s) == [5, 4, 6]
    assert s.step_name() == "enact" and s.current_player() == 2
    assert pesos(s) == [10, 7, 10]


def test_T33_tie_broken_by_the_rebid():
    s = fresh(4)
    s = to_parliament(s, ["architect", "mayor", "trader", "foreman"])
    assert s.to_dict()["start_player"] == 1
    order = []
    for amount in (2, 1, 3, 2):  # bidding order P2, P3, P4, P1
        order.append(s.current_player())
        act(s, f"bid {amount}")
    assert order == [1, 2, 3, 0]
    assert votes(s) == [5, 7, 3, 7] and s.to_dict()["parliament"]["tied"] == [1, 3]
    assert s.current_player() == 1
    bids(s, 2, 1)
    assert s.current_player() == 1 and s.step_name() == "enact"
    assert [10 - p for p in pesos(s)] == [2, 4, 1, 4]


def test_T34_tie_after_rebid_goes_to_the_start_player_side():
    s = fresh(4)
    s = to_parliament(s, ["architect", "mayor", "trader", "foreman"])
    bids(s, 2, 1, 3, 2, 1, 1)
    assert votes(s) == [5, 8, 3, 8] and s.current_player() == 1 and s.step_name() == "enact"
    s = fresh(4)
    s = to_parliament(s, ["architect", "trader", "mayor", "foreman"])
    assert s.to_dict()["start_player"] == 2
    bids(s, 0, 3, 3, 5)  # order P3, P4, P1, P2
    assert votes(s) == [6, 7, 5, 7]
    bids(s, 1, 1)  # P2 (seat 1) then P4 (seat 3), from the start player
    assert votes(s)[1] == votes(s)[3] == 8
    assert s.current_player() == 3 and s.step_name() == "enact"


def test_T35_three_way_tie():
    s = fresh(3)
    s = to_parliament(s, ["mayor", "foreman", "architect"])
    bids(s, 1, 2, 3)
    assert votes(s) == [6, 6, 6] and s.to_dict()["parliament"]["tied"] == [0, 1, 2]
    bids(s, 0, 1, 1)
    assert votes(s) == [6, 7, 7] and s.current_player() == 1 and s.step_name() == "enact"


def _corruption(n=3):
    s = fresh(n)
    return edit(s, lambda d: (d.update(round=2), set_law(d, "IV", "corruption")))


def test_T36_corruption_law_no_bids():
    s = _corruption()
    s = edit(
        s,
        lambda d: (d.update(town_hall_user=0), d["boards"][0]["buildings"].update(town_hall="3,4")),
    )
    s = to_parliament(s, ["foreman", "mayor", "worker"])
    assert s.step_name() == "enact" and s.current_player() == 0
    assert pesos(s) == [10, 10, 10] and votes(s) == [6, 5, 1]
    s = _corruption()
    s = to_parliament(s, ["worker", "mayor", "mayor"])
    assert s.to_dict()["start_player"] == 2
    assert s.step_name() == "enact" and s.current_player() == 2


def test_T37_corruption_timing():
    s = fresh(3)
    s = edit(s, lambda d: (d.update(round=3), set_proposal(d, "IV", "corruption")))
    s = to_parliament(s, ["mayor", "worker", "trader"])
    assert s.step_name() == "bid"  # round 3: bids as usual
    bids(s, 1, 1, 0)
    assert pesos(s) == [9, 9, 10]
    act(s, "enact I and IV")
    assert s.to_dict()["laws"]["in_force"]["IV"] == "corruption"
    seen = {}
    while not s.is_terminal():
        r = s.round()
        if s.is_chance_node():
            s.resolve_chance()
            continue
        step = s.step_name()
        seen.setdefault(r, set()).add(step)
        if step == "character":
            play_card(s, s.action_to_string(s.legal_actions()[0])[5:])
        elif step == "enact":
            pairs = legal(s)
            act(s, "enact I and IV" if r == 5 else sorted(p for p in pairs if "IV" not in p)[0])
        elif step == "bid":
            act(s, "bid 0")
        else:
            act(s, "pass") if "pass" in legal(s) else s.apply_action(s.legal_actions()[0])
    assert "bid" not in seen[4] and "bid" not in seen[5] and "bid" in seen[6]


def test_T38_enactment_replaces():
    s = fresh(3)

    def f(d):
        set_law(d, "I", "tax_4")
        set_law(d, "II", "levy_rum")
        set_law(d, "III", "subsidy_water")
        set_law(d, "IV", "drought")
        set_proposal(d, "I", "tax_1")
        set_proposal(d, "II", "levy_sugar")
        set_proposal(d, "III", "subsidy_buildings")
        set_proposal(d, "IV", "market_gains")

    s = at_enact(s, winner=0, round=3, fn=f)
    act(s, "enact I and IV")
    d = s.to_dict()
    assert d["laws"]["in_force"] == {
        "I": "tax_1",
        "II": "levy_rum",
        "III": "subsidy_water",
        "IV": "market_gains",
    }
    assert d["laws"]["proposals"] == {"I": None, "II": None, "III": None, "IV": None}
    pass_laws(s)
    while s.is_chance_node():
        s.resolve_chance()
    d = s.to_dict()
    assert d["market"] == {
        "sugar": 5,
        "citrus": 5,
        "tobacco": 5,
        "rum": 2,
        "cigar": 2,
    }  # acted this round
    for law in ("drought", "levy_sugar", "subsidy_buildings", "tax_4"):
        assert (
            law not in d["laws"]["proposals"].values() and law not in d["laws"]["in_force"].values()
        )


def test_T39_church_veto():
    s = fresh(3)
    s = edit(s, lambda d: (d.update(round=2), d["boards"][1]["buildings"].update(church="3,4")))
    play_card(s, "worker")
    act(s, "play foreman", "use church")
    assert legal(s) == {"veto I", "veto II", "veto III", "veto IV"}
    act(s, "veto II")
    assert s.to_dict()["laws"]["vetoed"] == "II" and board(s, 1)["church_stack"] == "II"
    s = to_parliament(s, ["mayor", "worker", "trader"])
    bids(s, 0, 0, 0)
    assert legal(s) == {"enact I and III", "enact I and IV", "enact III and IV"}
    act(s, "enact I and III")
    assert s.to_dict()["laws"]["in_force"]["II"] == "initial"
    # later rounds: not the same stack twice in a row, whatever lies between
    s = fresh(3)
    s = edit(
        s,
        lambda d: (
            d.update(round=4),
            d["boards"][1]["buildings"].update(church="3,4"),
            d["boards"][1].update(church_stack="II"),
        ),
    )
    play_card(s, "worker")
    act(s, "play foreman", "use church")
    assert legal(s) == {"veto I", "veto III", "veto IV"}
    act(s, "veto I")
    assert board(s, 1)["church_stack"] == "I"
    s = edit(
        s,
        lambda d: (
            d["laws"].update(vetoed=None),
            d["action"].update(used=[]),
            d.update(step="character", player=2, character=None, turn=2),
            d["action"].update(activated=[], building=None),
        ),
    )
    assert "veto II" in _church_options(s, 1)


def _church_options(s, seat):
    s = edit(
        s,
        lambda d: (
            d.update(turn=seat, player=seat),
            d["boards"][seat].update(
                hand=["foreman", "mayor", "worker", "trader", "architect"][:5]
            ),
        ),
    )
    s = edit(s, lambda d: d.update(lap=0))
    act(s, "play foreman", "use church")
    return legal(s)


# --- §6.9 start player change -------------------------------------------------------------


def test_T40_tie_later_card_wins():
    s = fresh(4)
    s = to_parliament(s, ["foreman", "mayor", "mayor", "worker"])
    assert s.to_dict()["start_player"] == 2
    passive_round(s)  # D19: he also starts the next round
    while s.is_chance_node():
        s.resolve_chance()
    assert s.round() == 2 and s.step_name() == "character" and s.current_player() == 2


def test_T41_change_counts_for_this_parliament():
    s = fresh(4)
    s = to_parliament(s, ["foreman", "mayor", "mayor", "worker"])
    assert s.current_player() == 2  # bidding from the new start player
    bids(s, 0, 5, 0, 1)  # P3 0, P4 5, P1 0, P2 1
    assert votes(s) == [4, 6, 5, 6]
    bids(s, 0, 0)
    assert s.step_name() == "enact" and s.current_player() == 3
    act(s, "enact III and IV")
    assert s.step_name() == "tax" and s.current_player() == 2


def test_T42_start_player_keeps_the_card():
    s = fresh(3, start_player=1)
    s = to_parliament(s, ["worker", "mayor", "architect"])
    assert s.to_dict()["start_player"] == 1


# --- §9 law execution --------------------------------------------------------------------


def test_T43_initial_tax_and_levy():
    s = fresh(3)

    def f(d):
        d["boards"][0].update(pesos=5)
        d["boards"][0]["warehouse"]["citrus"] = 1
        d["boards"][1].update(pesos=6)
        d["boards"][1]["yard"]["citrus"] = 1
        d["boards"][2].update(pesos=1)

    s = at_enact(s, winner=0, round=1, fn=f)
    act(s, "enact III and IV")  # keeps the initial tax and levy
    assert s.step_name() == "tax" and s.current_player() == 0
    act(s, "pay tax")
    assert s.current_player() == 1
    act(s, "pass")
    assert s.step_name() == "levy" and s.current_player() == 0  # P3 cannot pay: skipped
    act(s, "deliver levy", "deliver levy")
    b = s.to_dict()["boards"]
    assert (b[0]["pesos"], b[0]["warehouse"]["citrus"], b[0]["vp"]) == (3, 0, 5)
    assert (b[1]["pesos"], b[1]["vp"]) == (6, 2)
    assert (b[2]["pesos"], b[2]["vp"]) == (1, 0)


def test_T44_per_building_tax():
    s = fresh(2)

    def f(d):
        set_law(d, "I", "tax_per_building")
        set_law(d, "II", "levy_rum")
        d["boards"][0]["buildings"].update(inn="2,2", hotel="2,3", dam="2,4")
        d["boards"][0]["pesos"] = 5
        d["boards"][1]["yard"]["rum"] = 1

    s = at_enact(s, winner=0, round=2, fn=f)
    act(s, "enact III and IV")
    assert s.current_player() == 0 and s.step_name() == "tax"  # P2 owes 0: paid automatically
    act(s, "pay tax")
    assert s.step_name() == "levy" and s.current_player() == 1
    act(s, "deliver levy")
    b = s.to_dict()["boards"]
    assert (b[0]["pesos"], b[0]["vp"]) == (2, 2)
    assert (b[1]["vp"], b[1]["yard"]["rum"]) == (5, 0)


def test_T45_levy_all_or_nothing():
    s = fresh(2)

    def f(d):
        set_law(d, "II", "levy_sugar")
        d["boards"][0]["yard"]["sugar"] = 1
        d["boards"][1]["yard"]["sugar"] = 1
        d["boards"][1]["warehouse"]["sugar"] = 1

    s = at_enact(s, winner=0, round=2, fn=f)
    act(s, "enact III and IV")
    act(s, "pass", "pay tax")  # P1 refuses the tax, P2 pays it
    assert s.step_name() == "levy" and s.current_player() == 1  # P1 cannot deliver: skipped
    act(s, "deliver levy")
    b = s.to_dict()["boards"]
    assert b[1]["vp"] == 2 + 2 + 1 and b[1]["warehouse"]["sugar"] == 0 and b[0]["vp"] == 0


@pytest.mark.parametrize(
    "law, board_kw, gain",
    [
        ("subsidy_water", {"water": 9}, 7),
        ("subsidy_pesos", {"pesos": 20}, 6),
        ("subsidy_pesos", {"pesos": 21}, 7),
        ("subsidy_pesos", {"pesos": 30}, 7),
    ],
)
def test_T46_subsidy_caps(law, board_kw, gain):
    s = fresh(2)

    def f(d):
        set_law(d, "III", law)
        if "water" in board_kw:
            d["boards"][0]["yard"]["water"] = board_kw["water"]
        else:
            d["boards"][0]["pesos"] = board_kw["pesos"]
            d["boards"][1]["pesos"] = 0

    s = at_enact(s, winner=0, round=2, fn=f)
    before = dict(board(s, 0)["yard"]), board(s, 0)["pesos"]
    act(s, "enact I and IV")
    pass_laws(s)
    b = board(s, 0)
    assert b["vp"] == gain
    assert b["yard"]["water"] == before[0]["water"] and b["pesos"] == before[1]  # nothing is spent


def test_T46_subsidy_votes_counts_the_fourth_card_only():
    s = fresh(3)

    def f(d):
        set_law(d, "III", "subsidy_votes")
        d["town_hall_user"] = 0
        d["boards"][0]["buildings"]["town_hall"] = "3,4"
        d["boards"][0]["votes"] = 4 + 2 + 3
        d["boards"][0]["bought"] = 3

    s = at_enact(s, winner=0, round=2, fourth=["foreman", "worker", "trader"], fn=f)
    act(s, "enact I and IV")
    pass_laws(s)
    assert [b["vp"] for b in s.to_dict()["boards"]] == [4, 1, 2]


def test_T47_free_fields_and_buildings():
    for law, gain in (
        ("subsidy_free_crop_fields", 4),
        ("subsidy_free_material_fields", 4),
        ("subsidy_buildings", 3),
    ):
        s = fresh(2)

        def f(d, law=law):
            set_law(d, "III", law)
            d["boards"][0]["buildings"].update(hotel="2,2", inn="2,4", dam="3,2")

        s = at_enact(s, winner=0, round=2, fn=f)
        act(s, "enact I and IV")
        pass_laws(s)
        assert board(s, 0)["vp"] == gain, law
        assert (
            board(s, 1)["vp"]
            == {
                "subsidy_free_crop_fields": 6,
                "subsidy_free_material_fields": 5,
                "subsidy_buildings": 0,
            }[law]
        )


def test_T48_market_laws():
    s = fresh(2)

    def f(d):
        set_law(d, "IV", "market_gains")
        d["market"].update(sugar=4, citrus=0, tobacco=5)

    s = at_enact(s, winner=0, round=2, fn=f)
    act(s, "enact I and II")
    pass_laws(s)
    assert s.to_dict()["market"] == {"sugar": 5, "citrus": 2, "tobacco": 5, "rum": 2, "cigar": 2}
    while s.is_chance_node():
        s.resolve_chance()
    passive_round(s)  # still in force: acts again next round
    while s.is_chance_node():
        s.resolve_chance()
    m = s.to_dict()["market"]
    assert (m["citrus"], m["rum"], m["cigar"]) == (4, 2, 2)
    s = fresh(2)

    def g(d):
        set_law(d, "IV", "market_loses")
        d["market"].update(sugar=5, citrus=1, tobacco=0)

    s = at_enact(s, winner=0, round=2, fn=g)
    act(s, "enact I and II")
    pass_laws(s)
    assert s.to_dict()["market"] == {"sugar": 3, "citrus": 0, "tobacco": 0, "rum": 2, "cigar": 2}


# --- §10 end of round and ships --------------------------------------------------------------


def test_T49_yard_discard():
    s = fresh(2)

    def f(d):
        d["boards"][0]["yard"].update(sugar=3, rum=1, stone=2)
        d["boards"][0]["warehouse"]["citrus"] = 2

    s = at_enact(s, winner=0, round=2, fn=f)
    act(s, "enact III and IV")
    pass_laws(s)
    b = board(s, 0)
    assert (b["yard"]["sugar"], b["yard"]["rum"], b["yard"]["stone"], b["warehouse"]["citrus"]) == (
        0,
        1,
        2,
        2,
    )
    while s.is_chance_node():
        s.resolve_chance()
    passive_round(s)  # stored crops stay for later rounds
    assert board(s, 0)["warehouse"]["citrus"] == 2


def _round_end(round_, docks, at_sea, full=()):
    """State at the enactment with the given harbour; `full` = docks (1..3) whose ship is full."""
    s = fresh(2)

    def f(d):
        h = d["harbour"]
        for i in range(3):
            if h["docks"][i]:
                h["deck_unseen"].append(h["docks"][i]["ship"])
                h["docks"][i] = None
        if h["at_sea"]:
            h["deck_unseen"].append(h["at_sea"])
            h["at_sea"] = None
        h["deck_unseen"].sort()
        spec = {
            "ship_01": {"sugar": 2, "citrus": 1},
            "ship_02": {"citrus": 2, "tobacco": 1},
            "ship_03": {"tobacco": 2, "rum": 1},
        }
        for i, sh in enumerate(docks):
            if sh:
                set_dock(d, i + 1, sh, **(spec[sh] if i + 1 in full else {}))
        set_at_sea(d, at_sea)

    return at_enact(s, winner=0, round=round_, fn=f)


def _finish(s, draws):
    act(s, "enact III and IV")
    pass_laws(s)
    for sh in draws:
        act(s, f"ship draw {sh}")
    assert s.step_name() == "law_draw"  # the refill is complete: the next round starts
    return s.to_dict()["harbour"]


def test_T50_round_1_ship_flow():
    s = _round_end(1, ["ship_01", "ship_02", None], "ship_09")
    h = _finish(s, ["ship_12"])
    assert [dk["ship"] for dk in h["docks"]] == ["ship_09", "ship_01", "ship_02"]
    assert h["at_sea"] == "ship_12" and h["deck_returned"] == []


def test_T51_normal_ship_flow():
    s = _round_end(2, ["ship_01", "ship_02", "ship_03"], "ship_09")
    h = _finish(s, ["ship_12"])
    assert [dk["ship"] for dk in h["docks"]] == ["ship_09", "ship_01", "ship_02"]
    assert h["at_sea"] == "ship_12" and h["deck_returned"] == ["ship_03"]


def test_T52_two_departures():
    s = _round_end(2, ["ship_01", "ship_02", "ship_03"], "ship_09", full=(1,))
    h = _finish(s, ["ship_12", "ship_13"])
    assert [dk["ship"] for dk in h["docks"]] == ["ship_12", "ship_09", "ship_02"]
    assert h["at_sea"] == "ship_13" and h["deck_returned"] == ["ship_01", "ship_03"]
    assert all(v == 0 for v in h["docks"][2]["cargo"].values())


def test_T53_three_departures():
    s = _round_end(2, ["ship_01", "ship_02", "ship_03"], "ship_09", full=(1, 2, 3))
    rum_before = s.to_dict()["supply"]["rum"]
    h = _finish(s, ["ship_12", "ship_13", "ship_14"])
    assert [dk["ship"] for dk in h["docks"]] == ["ship_13", "ship_12", "ship_09"]
    assert h["at_sea"] == "ship_14" and h["deck_returned"] == ["ship_01", "ship_02", "ship_03"]
    assert (
        s.to_dict()["supply"]["rum"] == rum_before + 1
    )  # cargo back to the supply (ship_03's rum)


def test_T54_round_1_with_a_full_ship():
    s = _round_end(1, ["ship_01", "ship_02", None], "ship_09", full=(1,))
    h = _finish(s, ["ship_12", "ship_13"])
    assert [dk["ship"] for dk in h["docks"]] == ["ship_12", "ship_09", "ship_02"]
    assert h["at_sea"] == "ship_13" and h["deck_returned"] == ["ship_01"]


def test_s10_returned_cards_come_back_in_order_without_chance():
    s = fresh(2)

    def f(d):
        h = d["harbour"]
        h["deck_returned"] = list(h["deck_unseen"])
        h["deck_unseen"] = []

    s = at_enact(s, winner=0, round=2, fn=f)
    h0 = s.to_dict()["harbour"]
    order = h0["deck_returned"]
    assert h0["docks"][2] is None  # round-1 harbour: docks 1 and 2, nothing leaves
    act(s, "enact III and IV")
    pass_laws(s)
    h = s.to_dict()["harbour"]
    assert s.step_name() == "law_draw"  # no ship chance node: the returned cards come in order
    assert [dk["ship"] for dk in h["docks"]] == [
        h0["at_sea"],
        h0["docks"][0]["ship"],
        h0["docks"][1]["ship"],
    ]
    assert h["at_sea"] == order[0] and h["deck_returned"] == order[1:]


def test_T55_lighthouse():
    s = fresh(2)
    s = edit(s, lambda d: d["boards"][0]["buildings"].update(lighthouse="3,4"))
    before = s.to_dict()["harbour"]
    act(s, "play foreman", "use lighthouse")
    assert legal(s) == {f"lighthouse {x}" for x in before["deck_unseen"]}
    x = before["deck_unseen"][3]
    act(s, f"lighthouse {x}")
    h = s.to_dict()["harbour"]
    assert h["at_sea"] == x and h["deck_returned"] == [before["at_sea"]]
    assert h["deck_unseen"] == [y for y in before["deck_unseen"] if y != x]


def test_T56_markers_and_cards_reset():
    s = fresh(3)
    s = edit(
        s,
        lambda d: (
            d.update(
                markers=["trader_material", "architect_2vp", "mayor_4pesos"], town_hall_user=1
            ),
            d["boards"][1]["buildings"].update(town_hall="3,4"),
        ),
    )
    passive_round(s)
    d = s.to_dict()
    assert d["markers"] == [] and d["town_hall_user"] is None
    assert all(len(b["hand"]) == 5 for b in d["boards"])


# --- §12 end of game -----------------------------------------------------------------------


def _final(p0, p1):
    s = fresh(2)

    def f(d):
        for b, (vp, nb, money), names in zip(
            d["boards"], (p0, p1), (("inn", "dam", "abbey"), ("hotel", "sawmill", "storage"))
        ):
            b["vp"] = vp
            b["pesos"] = money
            for name, field in list(zip(names, ("2,2", "2,3", "2,4")))[:nb]:
                b["buildings"][name] = field

    s = at_enact(s, winner=0, round=6, fn=f)
    act(s, "enact III and IV")
    while s.step_name() in ("tax", "levy"):
        act(s, "pass")
    assert s.is_terminal()
    return s


def test_T57_final_scoring_and_tie():
    s = _final((60, 3, 7), (62, 2, 5))
    assert [x["total"] for x in s.scores()] == [66, 66]
    assert [x["tiebreak"] for x in s.scores()] == [7, 5]
    assert s.returns() == [1.0, 0.0]
    s = _final((60, 3, 5), (62, 2, 5))
    assert s.returns() == [0.5, 0.5]


def test_T58_vp_beyond_80():
    s = fresh(2)
    s = edit(
        s, lambda d: (d["boards"][0].update(vp=79), d["boards"][0]["buildings"].update(hotel="3,4"))
    )
    act(s, "play foreman", "use hotel")
    assert board(s, 0)["vp"] == 81
    s = edit(s, lambda d: d["boards"][0].update(vp=79))
    assert s.scores()[0]["vp"] == 79
    s2 = _final((79, 0, 0), (0, 0, 0))
    assert s2.scores()[0]["total"] == 79


def test_s6_1_game_always_six_rounds():
    s = fresh(2)
    rounds = set()
    while not s.is_terminal():
        rounds.add(s.round())
        passive_round(s)
    assert rounds == {1, 2, 3, 4, 5, 6}
