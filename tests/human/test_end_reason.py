"""Why a game ended and what its tie-break counts, as the game-over panel says them (the
replay page, the browser play and their Czech face): the board's ``end_reason`` over the
game's states and its ``TIEBREAK``, checked against the step that triggered the end, found
here by walking the game step by step."""

from __future__ import annotations

import csv
import random
from importlib.resources import files

import pytest

import caribsim
from caribsim.human import boards, lang, viewer

EN = {g: lang.translator(g, "en") for g in ("puerto_rico", "port_royal", "cuba")}


def _game(name, seed, **options):
    """A random game's states, first to last."""
    rng = random.Random(seed)
    state = caribsim.load_game(name, **options).new_initial_state(seed=seed)
    states = [state.clone()]
    while not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
        states.append(state.clone())
    return states


def _trigger(states):
    """The step (index into states) whose move set end_triggered, by walking the game."""
    return next(k for k, s in enumerate(states) if s.to_dict()["end_triggered"])


def _city(board) -> int:
    table = boards.get("puerto_rico").BUILDINGS
    return sum(2 if table[b]["large"] else 1 for b in board["buildings"])


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_pr_7_1_the_panel_names_the_end_trigger_that_fired(players):
    """§7.1: the end comes at the end of the round in which the colonist supply could not
    refill the ship (the Mayor phase's end), a city's 12th space was filled (Builder), or the
    last VP chip was taken (Captain). What the panel says is the trigger of that step."""
    seen = set()
    for seed in range(12):
        states = _game("puerto_rico", seed, players=players)
        k = _trigger(states)
        before, after = states[k - 1].to_dict(), states[k].to_dict()
        said = boards.get("puerto_rico").end_reason(states, EN["puerto_rico"])
        assert said.startswith("the game ended after the round in which ")
        filled = [
            i for i, b in enumerate(after["boards"]) if _city(b) >= 12 > _city(before["boards"][i])
        ]
        if filled:
            assert before["phase"] == "builder"
            assert said.endswith(", ".join(f"the city of seat {i} was filled" for i in filled))
            seen.add("city")
        elif after["vp_chips"] <= 0 < before["vp_chips"]:
            assert before["phase"] == "captain" and said.endswith("the last VP chip was taken")
            seen.add("chips")
        else:  # the Mayor phase ended (its last placement, or a Mayor with nothing to place)
            assert before["phase"] in ("mayor", "role_selection")
            assert said.endswith("the colonist supply could not refill the colonist ship")
            seen.add("colonists")
    assert "colonists" in seen  # the common end; the others where these seeds reach them


@pytest.mark.parametrize("require_expedition", [False, True])
def test_pr_9_port_royal_names_who_reached_12_vp(require_expedition):
    """Port Royal §9.1 (§9.2: and an expedition): the seats that had reached 12 VP at the
    step that triggered the end; the round was then played out."""
    for seed in range(8):
        states = _game("port_royal", seed, players=3, require_expedition=require_expedition)
        at = states[_trigger(states)]
        reached = [
            i
            for i, s in enumerate(at.scores())
            if s["total"] >= 12 and (s["expeditions"] > 0 or not require_expedition)
        ]
        assert reached
        seats = ", ".join(f"seat {i}" for i in reached)
        expedition = " and an expedition" if require_expedition else ""
        assert boards.get("port_royal").end_reason(states, EN["port_royal"]) == (
            f"{seats} reached 12 VP{expedition}; the round was played to its end"
        )


def test_cu_12_1_cuba_ends_after_the_last_round():
    """CU-12.1: the game ends after phase 5 of the last round (the rounds of the setup data)."""
    with (files("caribsim") / "data" / "cuba_setup.csv").open(encoding="utf-8") as f:
        rounds = next(r["value"] for r in csv.DictReader(f) if r["key"] == "rounds")
    states = _game("cuba", 3, players=2)
    assert states[-1].to_dict()["round"] == int(rounds)
    assert boards.get("cuba").end_reason(states, EN["cuba"]) == (
        f"the game ended after round {rounds} of {rounds}"
    )


def test_the_reason_in_czech():
    states = _game("puerto_rico", 0, players=3)
    cs = boards.get("puerto_rico").end_reason(states, lang.translator("puerto_rico", "cs"))
    assert cs.startswith("hra skončila po kole, ve kterém ")
    assert "the " not in cs and "round" not in cs


@pytest.mark.parametrize(
    "name, counts",
    [("puerto_rico", "doubloons + goods"), ("port_royal", "coins"), ("cuba", "pesos")],
)
def test_a_won_tie_break_says_what_it_counts(name, counts):
    """PR §7.5, Port Royal §10.2, CU-12.3: a tie on points decided by the tie-break says in
    words what was counted: "tied on 40 points, on the tie-break (doubloons + goods): 9
    against 4 of seat 1"."""
    board = boards.get(name)
    assert counts == board.TIEBREAK
    final = {
        "scores": [{"total": 40, "tiebreak": 9}, {"total": 40, "tiebreak": 4}],
        "returns": [1.0, 0.0],
    }
    panel = viewer.game_over(final, None, EN[name], "why", board.TIEBREAK)
    assert panel["ended"] == "why"
    assert panel["verdict"] == (
        f"winner: seat 0, tied on 40 points, on the tie-break ({counts}): 9 against 4 of seat 1"
    )
    plain = {
        **final,
        "returns": [1.0, 0.0],
        "scores": [{"total": 41, "tiebreak": 0}, {"total": 40, "tiebreak": 9}],
    }
    assert "tie-break" not in viewer.game_over(plain, None, EN[name], None, counts)["verdict"]
