"""Cuba rules not covered by a numbered scenario: alternatives once per round, each building
once per Foreman use, exact building costs, chance probabilities, limited supply and bank
(E.4, CU-11.1), skipped pass-only turns."""

from __future__ import annotations

import pytest
from cuba_scenario import act, board, edit, empty_board, legal, start

import caribsim


def fresh(n=3, **kw):
    _game, s = start(n, **kw)
    return edit(s, lambda d: [empty_board(b) for b in d["boards"]] and None)


def test_s6_4_3_alternative_b_once_per_round_and_separate_from_a():
    s = fresh(3)
    act(s, "play trader", "trader take cheapest sugar")
    act(s, "play trader")
    opts = legal(s)
    assert not any("cheapest" in o for o in opts) and "trader take wood" in opts
    act(s, "trader take wood")
    act(s, "play trader")
    assert not any(o.startswith("trader take") for o in legal(s))


def test_s6_6_each_activated_building_once():
    s = fresh(3)
    s = edit(s, lambda d: d["boards"][0]["buildings"].update(hotel="1,2", inn="1,3"))
    act(s, "play foreman", "foreman row and column", "use hotel")
    assert legal(s) == {"use inn", "pass"}
    act(s, "use inn")
    assert s.current_player() == 1 and board(s, 0)["vp"] == 3


def test_D13_materials_cannot_be_replaced_by_pesos():
    s = fresh(3)
    s = edit(
        s,
        lambda d: (d["boards"][0].update(pesos=50), d["boards"][0]["yard"].update(wood=1, stone=1)),
    )
    act(s, "play architect")
    opts = {o for o in legal(s) if o.startswith("build ")}
    assert (
        "build tavern" not in opts and "build supply depot" in opts and "build lighthouse" in opts
    )
    assert opts == {
        "build supply depot",
        "build lighthouse",
        "build small bank",
        "build small office",
    }  # [P] costs 1/1/0/x


def test_s6_7_mayor_without_options_is_skipped():
    s = fresh(3)
    s = edit(s, lambda d: d.update(markers=["mayor_4pesos", "mayor_2pesos"]))
    act(s, "play mayor")
    assert s.current_player() == 1 and s.step_name() == "character"


def test_E2_chance_probabilities():
    game = caribsim.load_game("cuba", players=3, start_player=0)
    s = game.new_initial_state(seed=1)
    assert [p for _, p in s.chance_outcomes()] == pytest.approx([1 / 15] * 15)
    act(s, "ship draw ship_04")
    assert len(s.chance_outcomes()) == 14 and "ship draw ship_04" not in legal(s)
    act(s, "ship draw ship_05", "ship draw ship_06")
    for _ in range(3):
        act(s, "take wood", "take wood", "take sugar", "take sugar")
    assert legal(s) == {
        f"law draw {x}" for x in ("tax_1", "tax_2", "tax_3", "tax_4", "tax_5", "tax_per_building")
    }
    act(s, "law draw tax_2")
    assert len(s.chance_outcomes()) == 6 and all(n.startswith("law draw levy") for n in legal(s))


def test_CU_11_1_limited_supply_blocks_receiving():
    _game, s = start(3, supply_limited=True)

    def f(d):
        for b in d["boards"]:
            empty_board(b)
        d["market"]["cigar"] = 0
        d["boards"][1]["yard"]["cigar"] = 15  # every cigar is in play
        d["boards"][0]["yard"]["tobacco"] = 2
        d["boards"][0]["buildings"]["cigar_factory"] = "3,4"

    s = edit(s, f)
    assert s.to_dict()["supply"]["cigar"] == 0
    act(s, "play trader")
    assert "buy cigar" not in legal(s)
    act(s, "pass")
    act(s, "play trader", "sell cigar", "pass")  # a cigar goes onto the track, not the supply
    act(s, "play worker", "pass")
    act(s, "play foreman")
    assert "use cigar factory" not in legal(s)  # no cigar in the supply to receive


def test_CU_11_1_unlimited_supply_goes_below_the_counts():
    _game, s = start(3)
    s = edit(
        s,
        lambda d: (
            d["market"].update(cigar=0),
            d["boards"][1]["yard"].update(cigar=15),
            d["boards"][0].update(pesos=20),
        ),
    )
    act(s, "play trader", "buy cigar")
    assert s.to_dict()["supply"]["cigar"] < 0 and board(s, 0)["yard"]["cigar"] == 1


def test_CU_11_1_limited_bank_caps_income():
    _game, s = start(2, pesos_limited=True)

    def f(d):
        d["boards"][0]["pesos"] = 30
        d["boards"][1]["pesos"] = 28  # 2 pesos left in the bank

    s = edit(s, f)
    assert s.to_dict()["bank"] == 2
    act(s, "play mayor", "mayor alternative")
    assert board(s, 0)["pesos"] == 32 and s.to_dict()["bank"] == 0


def test_D50_enactment_needs_two_laws_and_discards_the_rest():
    from cuba_scenario import at_enact

    _game, s = start(2)
    s = at_enact(s, winner=1, round=1)
    assert len(legal(s)) == 6 and s.current_player() == 1
    act(s, "enact II and III")
    d = s.to_dict()
    assert d["laws"]["in_force"] == {
        "I": "initial",
        "II": "levy_sugar",
        "III": "subsidy_water",
        "IV": None,
    }
    assert set(d["laws"]["revealed"]) == {"tax_1", "levy_sugar", "subsidy_water", "market_gains"}
