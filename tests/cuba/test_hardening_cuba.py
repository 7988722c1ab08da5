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
    refused(
        game,
        d,
        ValueError,
        r"state\.setup\.left must be 1\.\.4 \(items still to take\) at the setup_item "
        r"step, got 0",
    )


def test_setup_left_outside_the_setup_item_step_is_refused():
    game, _s, d = find_state(lambda s, d: d["step"] == "character")
    d["setup"]["left"] = 2
    refused(game, d, ValueError, r"state\.setup\.left must be 0 outside the setup_item step, got 2")


def test_setup_last_must_follow_the_taking_order():
    game, _s, d = find_state(lambda s, d: d["step"] == "setup_item" and d["setup"]["left"] == 1)
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
    refused(
        game,
        d,
        ValueError,
        rf"state\.boards\[{q}\]\.bid {pesos + 1} is more than the seat's {pesos} pesos",
    )


def test_bid_of_a_seat_still_to_bid_is_refused():
    game, _s, d = find_state(
        lambda s, d: d["step"] == "bid" and d["boards"][d["player"]]["pesos"] > 0, players=4
    )
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


@pytest.mark.parametrize(
    "path, pred",
    [
        (("boards", 0, "hand"), lambda s, d: d["step"] == "character"),
        (("harbour", "deck_unseen"), lambda s, d: d["step"] == "character"),
        (("laws", "revealed"), lambda s, d: d["step"] == "character"),
        (("markers",), lambda s, d: d["markers"]),
        (("action", "harvest_fields"), lambda s, d: d["action"]["harvest_fields"]),
        (("action", "activated"), lambda s, d: d["action"]["activated"]),
        (("action", "used"), lambda s, d: d["action"]["used"]),
        (("action", "sold"), lambda s, d: d["action"]["sold"]),
    ],
    ids=lambda v: ".".join(map(str, v)) if isinstance(v, tuple) else "",
)
def test_repeated_items_in_set_like_lists_are_refused(path, pred):
    game, s, d = find_state(pred, players=4)
    assert game.state_from_dict(d) == s
    item = _dup(path)(d)
    name = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
    refused(
        game, d, ValueError, re.escape(f"state{name} lists {item!r} twice; each may appear once")
    )


def test_repeated_seat_in_bidders_is_refused():
    game, _s, d = find_state(lambda s, d: len(d["parliament"]["bidders"]) >= 1, players=4)
    seat = d["parliament"]["bidders"][0]
    d["parliament"]["bidders"].append(seat)
    refused(game, d, ValueError, rf"state\.parliament\.bidders lists seat {seat} twice")


def test_field_names_must_be_canonical():
    game, _s, d = find_state(lambda s, d: d["step"] == "character")
    for bad in ("\u0663,1", " 2,1", "2, 1", "02,1", "2,1 "):
        d2 = copy.deepcopy(d)
        d2["boards"][0]["pawn"] = bad
        refused(
            game,
            d2,
            ValueError,
            r"state\.boards\[0\]\.pawn must be a field 'row,col' as to_dict writes it",
        )


# --- item 11: exact types ---------------------------------------------------------------


@pytest.mark.parametrize(
    "opts, edit, match",
    [
        (
            {"pesos_limited": True},
            lambda d: d["options"].update(pesos_limited=1.0),
            r"state\.options",
        ),
        (
            {"pesos_limited": True},
            lambda d: d["options"].update(pesos_limited=1),
            r"state\.options",
        ),
        ({}, lambda d: d["options"].update(supply_limited=0), r"state\.options"),
        ({}, lambda d: d["options"].update(players=3.0), r"state\.options"),
        (
            {"start_player": 0},
            lambda d: d["setup"].update(fixed_start=-0.0),
            r"state\.setup\.fixed_start must be an int seat or null, got float",
        ),
        (
            {"start_player": 1},
            lambda d: d["setup"].update(fixed_start=True),
            r"state\.setup\.fixed_start must be an int seat or null, got bool",
        ),
    ],
)
def test_numbers_and_bools_must_have_their_exact_type(opts, edit, match):
    game, s, d = find_state(lambda s, d: d["step"] == "character", **opts)
    assert game.state_from_dict(d) == s
    edit(d)
    refused(game, d, (ValueError, TypeError), match)


# --- item 12: the flow ------------------------------------------------------------------


def test_setup_fill_flipped_at_the_round_end_refill_is_refused():
    game, _s, d = find_state(lambda s, d: d["phase"] == "end_of_round" and d["step"] == "ship_draw")
    assert d["harbour"]["setup_fill"] is False
    d["harbour"]["setup_fill"] = True
    refused(
        game, d, ValueError, r"state\.harbour\.setup_fill must be true exactly for the setup refill"
    )


def test_setup_fill_cleared_at_the_setup_refill_is_refused():
    game, _s, d = find_state(lambda s, d: d["phase"] == "setup" and d["step"] == "ship_draw")
    d["harbour"]["setup_fill"] = False
    refused(
        game, d, ValueError, r"state\.harbour\.setup_fill must be true exactly for the setup refill"
    )


def test_missing_proposal_of_a_drawn_stack_is_refused():
    game, _s, d = find_state(lambda s, d: d["step"] == "law_draw" and d["laws"]["next_stack"] == 2)
    assert d["laws"]["proposals"]["I"] is not None
    d["laws"]["proposals"]["I"] = None
    refused(
        game,
        d,
        ValueError,
        r"state\.laws\.proposals: stacks before next_stack \(2\) have their proposal",
    )


def test_refill_kind_must_match_the_phase():
    game, _s, d = find_state(lambda s, d: d["phase"] == "end_of_round" and d["step"] == "ship_draw")
    d["harbour"]["refill"] = "turn_end"
    refused(
        game,
        d,
        ValueError,
        r"a ship draw in phase 'end_of_round' resumes with state\.harbour\.refill "
        r"\['new_round'\], got 'turn_end'",
    )


def test_per_turn_fields_must_be_clear_between_turns():
    game, _s, d = find_state(lambda s, d: d["phase"] == "parliament")
    d["action"]["pick_count"] = 1
    refused(game, d, ValueError, r"state\.character and state\.action\.\* must be clear")


# --- found by the fuzz suite: a character's turn in progress ------------------------------


def test_foreman_cannot_use_a_building_the_player_does_not_own():
    def foreman(s, d):
        return d["step"] == "foreman" and d["action"]["activated"]

    game, _s, d = find_state(foreman, players=4)
    owned = {b for bd in d["boards"] for b in bd["buildings"]}
    other = next(b for b in caribsim.cuba.BUILDINGS if b not in owned)
    d["action"]["activated"].append(other)
    refused(
        game,
        d,
        ValueError,
        r"state\.action\.activated must be the player's buildings \(or the warehouse\)",
    )


def test_harvest_fields_are_uncovered_crop_fields():
    game, _s, d = find_state(lambda s, d: d["step"] == "harvest", players=4)
    for f in (
        "1,1",
        next(
            f
            for f in (f"{r},{c}" for r in (1, 2, 3) for c in (1, 2, 3, 4))
            if game.component_data()["plantation"][(int(f[0]) - 1) * 4 + int(f[2]) - 1] >= 5
        ),
    ):
        d2 = copy.deepcopy(d)
        d2["action"]["harvest_fields"] = sorted(set(d2["action"]["harvest_fields"]) | {f})
        refused(
            game,
            d2,
            ValueError,
            rf"state\.action\.harvest_fields: {f} is not an uncovered crop field",
        )


def test_step_belongs_to_the_character_played():
    game, _s, d = find_state(lambda s, d: d["step"] == "trade", players=4)
    d["character"] = "worker"
    refused(
        game,
        d,
        ValueError,
        r"step 'trade' \(load 'mayor'\) belongs to the trader, not to state\.character "
        r"'worker'",
    )


def test_building_to_place_has_a_tile_left():
    single = {
        b
        for b, x in zip(
            caribsim.cuba.BUILDINGS, caribsim.load_game("cuba").component_data()["buildings"]
        )
        if x["copies"] == 1
    }

    def placing(s, d):
        return d["step"] == "place" and any(set(bd["buildings"]) & single for bd in d["boards"])

    game, _s, d = find_state(placing, players=4)
    taken = next(b for bd in d["boards"] for b in bd["buildings"] if b in single)
    d["action"]["build_pending"] = taken
    refused(
        game,
        d,
        ValueError,
        rf"state\.action\.build_pending '{taken}' must be a building the player does not "
        rf"own, with a tile left \(1 of 1 owned\)",
    )


# --- items 13, 14, 19: the data files ----------------------------------------------------


@pytest.fixture
def folder(tmp_path):
    for name in DATA_FILES:
        shutil.copy(DATA / name, tmp_path / name)
    return tmp_path


def set_value(folder, file, key_column, key, column, value):
    """Rewrite one cell (by the row whose key_column is key); returns that row's line number."""
    import csv

    path = folder / file
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    i = next(i for i, r in enumerate(rows) if r[rows[0].index(key_column)] == key)
    rows[i][rows[0].index(column)] = value
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return i + 1


def plays_to_the_end_reaccepted(game, seeds=range(3)):
    for seed in seeds:
        rng = random.Random(seed)
        s = game.new_initial_state(seed=seed)
        steps = 0
        while True:
            assert game.state_from_dict(s.to_dict()) == s
            if s.is_terminal():
                break
            s.resolve_chance() if s.is_chance_node() else s.apply_action(
                rng.choice(s.legal_actions())
            )
            steps += 1
            assert steps < 5000


def test_limited_supply_and_bank_at_exactly_what_setup_needs_play(folder):
    for key, value in (
        ("supply_count_per_crop_kind", "5"),
        ("supply_count_per_good_kind", "2"),
        ("supply_count_per_material_kind", "2"),
        ("coins", "30"),
    ):
        set_value(folder, "cuba_setup.csv", "key", key, "value", value)
    game = caribsim.load_game(
        "cuba", players=3, data=folder, supply_limited=True, pesos_limited=True
    )
    plays_to_the_end_reaccepted(game)


@pytest.mark.parametrize(
    "key, value, opts, why",
    [
        (
            "coins",
            "30",
            {"pesos_limited": True},
            r"the limited bank must pay 4 x start_pesos 10 = 40",
        ),
        (
            "supply_count_per_good_kind",
            "1",
            {"supply_limited": True},
            r"the limited supply must fill the 2 market spaces of rum",
        ),
        (
            "supply_count_per_crop_kind",
            "2",
            {"supply_limited": True},
            r"the limited supply must fill the 3 market spaces of sugar",
        ),
        (
            "supply_count_per_crop_kind",
            "5",
            {"supply_limited": True},
            r"after the market the limited supply holds 6 crops, fewer than 4 x start_crops_chosen 2",
        ),
        (
            "supply_count_per_material_kind",
            "2",
            {"supply_limited": True},
            r"the limited supply holds 6 materials, fewer than 4 x start_materials_chosen 2",
        ),
    ],
)
def test_limited_supply_or_bank_below_the_setup_is_refused(folder, key, value, opts, why):
    line = set_value(folder, "cuba_setup.csv", "key", key, "value", value)
    caribsim.load_game("cuba", players=4, data=folder)  # unlimited: fine
    with pytest.raises(
        DataError,
        match=rf"cuba_setup\.csv row {line}, column value: {key} {value} is too small "
        rf"for 4 players: {why}",
    ):
        caribsim.load_game("cuba", players=4, data=folder, **opts)
    set_value(
        folder,
        "cuba_setup.csv",
        "key",
        key.replace("coins", "pesos_limited") if key == "coins" else "supply_limited",
        "value",
        "true",
    )
    with pytest.raises(
        DataError, match=rf"cuba_setup\.csv row {line}, column value: {key} {value}"
    ):
        caribsim.load_game("cuba", players=4, data=folder)  # the file's own limit


@pytest.mark.parametrize(
    "text", ["\u0663", "1_0", "+3", "00003", "03", "-0", "3 4", "\uff13", "3.0", ""]
)
def test_csv_numbers_are_plain_ascii_integers(folder, text):
    line = set_value(folder, "cuba_setup.csv", "key", "start_pesos", "value", text)
    with pytest.raises(
        DataError,
        match=rf"cuba_setup\.csv row {line}, column value: start_pesos must be an "
        rf"integer 0\.\.500 \(ASCII digits with an optional leading '-'",
    ):
        caribsim.load_game("cuba", players=3, data=folder)


def test_csv_numbers_inside_lists_are_strict(folder):
    line = set_value(folder, "cuba_market.csv", "item", "rum", "prices", "6;+5;4")
    with pytest.raises(
        DataError,
        match=rf"cuba_market\.csv row {line}, column prices: a price must be an integer "
        rf"0\.\.100 \(ASCII",
    ):
        caribsim.load_game("cuba", players=3, data=folder)


@pytest.mark.parametrize(
    "file, key, text",
    [
        ("cuba_ships.csv", "ship_04", "ship\n04"),
        ("cuba_ships.csv", "ship_04", "Ship_04"),
        ("cuba_ships.csv", "ship_04", "ship-04"),
        ("cuba_laws.csv", "tax_2", "tax\u00e92"),
        ("cuba_laws.csv", "tax_2", "t" * 41),
    ],
)
def test_csv_ids_follow_a_strict_pattern(folder, file, key, text):
    what = "ship" if file == "cuba_ships.csv" else "law"
    line = set_value(folder, file, "id", key, "id", text)
    with pytest.raises(
        DataError,
        match=re.escape(
            f"{file} row {line}, column id: a {what} id must be lowercase "
            f"ASCII letters, digits and '_', starting with a letter"
        ),
    ):
        caribsim.load_game("cuba", players=3, data=folder)


def test_every_action_name_of_a_data_game_round_trips(folder):
    set_value(folder, "cuba_ships.csv", "id", "ship_04", "id", "s4")
    game = caribsim.load_game("cuba", players=3, data=folder)
    for a in range(game.num_distinct_actions()):
        assert game.string_to_action(game.action_to_string(a)) == a


def test_case_variant_file_name_is_refused(folder):
    (folder / "cuba_setup.csv").rename(folder / "CUBA_SETUP.CSV")
    with pytest.raises(
        DataError,
        match=r"data: 'CUBA_SETUP\.CSV' differs from the data file name "
        r"'cuba_setup\.csv' only in case",
    ):
        caribsim.load_game("cuba", players=3, data=folder)


@pytest.mark.parametrize("kind", ["directory", "fifo", "broken_link"])
def test_data_file_that_is_not_a_regular_file_is_refused(folder, kind):
    path = folder / "cuba_setup.csv"
    path.unlink()
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(folder / "nowhere.csv")
    code = (
        "import caribsim\n"
        "from caribsim.cuba import DataError\n"
        "try:\n"
        f"    caribsim.load_game('cuba', players=3, data={str(folder)!r})\n"
        "except DataError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"data: {str(path)!r} is not a regular file"


def test_non_utf8_data_file_names_file_and_row(folder):
    path = folder / "cuba_ships.csv"
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b"provisional", b"provisional\xe9")
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(
        DataError,
        match=rf"cuba_ships\.csv \({re.escape(str(path))}\) row 4: not UTF-8 text "
        r"\(byte 0xe9\)",
    ):
        caribsim.load_game("cuba", players=3, data=folder)


def test_oversized_csv_cell_names_file_and_row(folder):
    path = folder / "cuba_laws.csv"
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[2] = lines[2].replace("provisional", '"' + "x" * (200 * 1024) + '"')
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(
        DataError,
        match=rf"cuba_laws\.csv \({re.escape(str(path))}\) row 3: not a valid CSV file: "
        r"a cell is over 128 KiB",
    ):
        caribsim.load_game("cuba", players=3, data=folder)
