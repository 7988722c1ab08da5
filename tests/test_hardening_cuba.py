"""Cuba refuses states and data it cannot play: ``state_from_dict`` is as strict as Puerto
Rico's (set-like lists without repeats, exact types, the setup / parliament / harbour / law
flow), and the data files are read strictly (numbers, ids, file names, encoding, cell size)
and refused when the game they give would start from an invalid state."""
from __future__ import annotations

import copy
import os
import random
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import caribsim
from caribsim.cuba import DATA_FILES, DataError

DATA = Path(caribsim.__file__).parent / "data"
ENV = {**os.environ, "PYTHONPATH": str(Path(caribsim.__file__).parent.parent)}


def find_state(pred, players=3, seeds=range(200), **opts):
    """The first state of random games (seeded, so the same every run) that satisfies pred(state, dict)."""
    game = caribsim.load_game("cuba", players=players, **opts)
    for seed in seeds:
        rng = random.Random(seed)
        s = game.new_initial_state(seed=seed)
        while not s.is_terminal():
            d = s.to_dict()
            if pred(s, d):
                return game, s, d
            if s.is_chance_node():
                s.resolve_chance()
            else:
                s.apply_action(rng.choice(s.legal_actions()))
    raise AssertionError("no random game reached the wanted state")


def refused(game, d, exc, match):
    """state_from_dict(d) raises exc matching `match` and leaves d as it was."""
    before = copy.deepcopy(d)
    with pytest.raises(exc, match=match):
        game.state_from_dict(d)
    assert d == before


# --- item 8: the setup items ---------------------------------------------------------

def test_setup_item_with_nothing_left_is_refused():
    game, s, d = find_state(lambda s, d: d["step"] == "setup_item" and d["setup"]["left"] == 4)
    assert game.state_from_dict(d) == s
    d["setup"]["left"] = 0
    refused(game, d, ValueError, r"state\.setup\.left must be 1\.\.4 \(items still to take\) at the setup_item "
                                 r"step, got 0")


def test_setup_left_outside_the_setup_item_step_is_refused():
    game, s, d = find_state(lambda s, d: d["step"] == "character")
    d["setup"]["left"] = 2
    refused(game, d, ValueError, r"state\.setup\.left must be 0 outside the setup_item step, got 2")


def test_setup_last_must_follow_the_taking_order():
    game, s, d = find_state(lambda s, d: d["step"] == "setup_item" and d["setup"]["left"] == 1)
    assert d["setup"]["last"] in ("sugar", "citrus", "tobacco")
    d["setup"]["last"] = "wood"
    refused(game, d, ValueError, "state.setup.last must be the crop just taken")


# --- item 9: a pending bid above the bidder's pesos -----------------------------------------

def test_pending_bid_above_the_pesos_is_refused():
    def pending(s, d):
        return d["step"] == "bid" and any(b["bid"] > 0 for b in d["boards"])
    game, s, d = find_state(pending, players=4)
    q = next(i for i, b in enumerate(d["boards"]) if b["bid"] > 0)
    pesos = d["boards"][q]["pesos"]
    assert game.state_from_dict(d) == s
    d["boards"][q]["bid"] = pesos + 1
    refused(game, d, ValueError, rf"state\.boards\[{q}\]\.bid {pesos + 1} is more than the seat's {pesos} pesos")


def test_bid_of_a_seat_still_to_bid_is_refused():
    game, s, d = find_state(lambda s, d: d["step"] == "bid" and d["boards"][d["player"]]["pesos"] > 0, players=4)
    d["boards"][d["player"]]["bid"] = 1
    refused(game, d, ValueError, rf"state\.boards\[{d['player']}\]\.bid must be 0")


# --- item 10: repeats in set-like lists ---------------------------------------------------

def _dup(path):
    """A mutation that repeats the first element of the list at `path` (keys and indexes)."""
    def f(d):
        x = d
        for k in path:
            x = x[k]
        x.append(x[0])
        return x[0]
    return f


@pytest.mark.parametrize("path, pred", [
    (("boards", 0, "hand"), lambda s, d: d["step"] == "character"),
    (("harbour", "deck_unseen"), lambda s, d: d["step"] == "character"),
    (("laws", "revealed"), lambda s, d: d["step"] == "character"),
    (("markers",), lambda s, d: d["markers"]),
    (("action", "harvest_fields"), lambda s, d: d["action"]["harvest_fields"]),
    (("action", "activated"), lambda s, d: d["action"]["activated"]),
    (("action", "used"), lambda s, d: d["action"]["used"]),
    (("action", "sold"), lambda s, d: d["action"]["sold"]),
], ids=lambda v: ".".join(map(str, v)) if isinstance(v, tuple) else "")
def test_repeated_items_in_set_like_lists_are_refused(path, pred):
    game, s, d = find_state(pred, players=4)
    assert game.state_from_dict(d) == s
    item = _dup(path)(d)
    name = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
    refused(game, d, ValueError, re.escape(f"state{name} lists {item!r} twice; each may appear once"))


def test_repeated_seat_in_bidders_is_refused():
    game, s, d = find_state(lambda s, d: len(d["parliament"]["bidders"]) >= 1, players=4)
    seat = d["parliament"]["bidders"][0]
    d["parliament"]["bidders"].append(seat)
    refused(game, d, ValueError, rf"state\.parliament\.bidders lists seat {seat} twice")


def test_field_names_must_be_canonical():
    game, s, d = find_state(lambda s, d: d["step"] == "character")
    for bad in ("\u0663,1", " 2,1", "2, 1", "02,1", "2,1 "):
        d2 = copy.deepcopy(d)
        d2["boards"][0]["pawn"] = bad
        refused(game, d2, ValueError, r"state\.boards\[0\]\.pawn must be a field 'row,col' as to_dict writes it")


# --- item 11: exact types ---------------------------------------------------------------

@pytest.mark.parametrize("opts, edit, match", [
    ({"pesos_limited": True}, lambda d: d["options"].update(pesos_limited=1.0), r"state\.options"),
    ({"pesos_limited": True}, lambda d: d["options"].update(pesos_limited=1), r"state\.options"),
    ({}, lambda d: d["options"].update(supply_limited=0), r"state\.options"),
    ({}, lambda d: d["options"].update(players=3.0), r"state\.options"),
    ({"start_player": 0}, lambda d: d["setup"].update(fixed_start=-0.0),
     r"state\.setup\.fixed_start must be an int seat or null, got float"),
    ({"start_player": 1}, lambda d: d["setup"].update(fixed_start=True),
     r"state\.setup\.fixed_start must be an int seat or null, got bool"),
])
def test_numbers_and_bools_must_have_their_exact_type(opts, edit, match):
    game, s, d = find_state(lambda s, d: d["step"] == "character", **opts)
    assert game.state_from_dict(d) == s
    edit(d)
    refused(game, d, (ValueError, TypeError), match)


# --- item 12: the flow ------------------------------------------------------------------

def test_setup_fill_flipped_at_the_round_end_refill_is_refused():
    game, s, d = find_state(lambda s, d: d["phase"] == "end_of_round" and d["step"] == "ship_draw")
    assert d["harbour"]["setup_fill"] is False
    d["harbour"]["setup_fill"] = True
    refused(game, d, ValueError, r"state\.harbour\.setup_fill must be true exactly for the setup refill")


def test_setup_fill_cleared_at_the_setup_refill_is_refused():
    game, s, d = find_state(lambda s, d: d["phase"] == "setup" and d["step"] == "ship_draw")
    d["harbour"]["setup_fill"] = False
    refused(game, d, ValueError, r"state\.harbour\.setup_fill must be true exactly for the setup refill")


def test_missing_proposal_of_a_drawn_stack_is_refused():
    game, s, d = find_state(lambda s, d: d["step"] == "law_draw" and d["laws"]["next_stack"] == 2)
    assert d["laws"]["proposals"]["I"] is not None
    d["laws"]["proposals"]["I"] = None
    refused(game, d, ValueError, r"state\.laws\.proposals: stacks before next_stack \(2\) have their proposal")


def test_refill_kind_must_match_the_phase():
    game, s, d = find_state(lambda s, d: d["phase"] == "end_of_round" and d["step"] == "ship_draw")
    d["harbour"]["refill"] = "turn_end"
    refused(game, d, ValueError, r"a ship draw in phase 'end_of_round' resumes with state\.harbour\.refill "
                                 r"\['new_round'\], got 'turn_end'")


def test_per_turn_fields_must_be_clear_between_turns():
    game, s, d = find_state(lambda s, d: d["phase"] == "parliament")
    d["action"]["pick_count"] = 1
    refused(game, d, ValueError, r"state\.character and state\.action\.\* must be clear")
