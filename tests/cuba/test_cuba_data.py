"""Cuba component data (E.5, §13): the shipped set, provisional status, user data folders
(a good set changes play as expected; a bad one is refused naming file, row and column)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from cuba_scenario import act, edit, empty_board, legal, start

import caribsim
from caribsim.cuba import DATA_FILES, DataError

DATA = Path(caribsim.__file__).parent / "data"


@pytest.fixture
def folder(tmp_path):
    for name in DATA_FILES:
        shutil.copy(DATA / name, tmp_path / name)
    return tmp_path


def rewrite(path, fn):
    """fn(rows) edits the csv rows (dicts) in place."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        cols = reader.fieldnames
        rows = list(reader)
    fn(rows)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)


def row(rows, key, value):
    return next(r for r in rows if r[key] == value)


def test_E5_shipped_data_status_lists_provisional_rows():
    st = caribsim.load_game("cuba", players=3).component_data_status()
    assert set(st) == set(DATA_FILES)
    assert all(v["origin"] == "bundled" for v in st.values())
    assert len(st["cuba_buildings.csv"]["provisional"]) == 23
    assert len(st["cuba_ships.csv"]["provisional"]) == 15
    assert len(st["cuba_laws.csv"]["provisional"]) == 24
    assert st["cuba_market.csv"]["provisional"] == ["sugar", "citrus", "tobacco", "rum", "cigar"]
    assert (
        len(st["cuba_plantation.csv"]["provisional"]) == 11
        and "1,1" not in st["cuba_plantation.csv"]["provisional"]
    )
    assert set(st["cuba_setup.csv"]["provisional"]) == {
        "plantation_yield_per_field",
        "storage_capacity_crops",
        "supply_limited",
        "pesos_limited",
    }


def test_E5_shipped_numbers_are_read_from_the_files():
    spec = caribsim.load_game("cuba").component_data()
    with open(DATA / "cuba_buildings.csv") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    from caribsim.cuba import BUILDINGS

    for b, data in zip(BUILDINGS, spec["buildings"]):
        assert data["cost"] == [
            int(rows[b][c]) for c in ("cost_wood", "cost_stone", "cost_water", "cost_pesos")
        ]
    assert spec["setup"]["start_pesos"] == 10 and spec["setup"]["rounds"] == 6


def test_E5_user_data_changes_play(folder):
    rewrite(
        folder / "cuba_buildings.csv",
        lambda rs: row(rs, "id", "tavern").update(
            cost_wood="0", cost_stone="0", cost_water="0", cost_pesos="1", status="rules"
        ),
    )
    rewrite(
        folder / "cuba_setup.csv",
        lambda rs: (
            row(rs, "key", "start_pesos").update(value="20"),
            row(rs, "key", "rounds").update(value="3"),
        ),
    )
    rewrite(
        folder / "cuba_market.csv", lambda rs: row(rs, "item", "sugar").update(prices="9;8;7;6;5")
    )
    game = caribsim.load_game("cuba", players=3, start_player=0, data=str(folder))
    st = game.component_data_status()
    assert st["cuba_buildings.csv"]["origin"].endswith("cuba_buildings.csv")
    assert "tavern" not in st["cuba_buildings.csv"]["provisional"]
    game, s = start(3, data=str(folder))
    assert [b["pesos"] for b in s.to_dict()["boards"]] == [20, 20, 20]
    s = edit(s, lambda d: [empty_board(b) for b in d["boards"]])
    act(s, "play architect")
    assert "build tavern" in legal(s)  # free of materials now
    act(s, "build tavern", "place on 2,2")
    assert s.to_dict()["boards"][0]["pesos"] == 19
    s = edit(s, lambda d: d["boards"][1]["yard"].update(sugar=1))
    act(s, "play trader", "sell sugar")
    assert s.to_dict()["boards"][1]["pesos"] == 26  # 4th space of 9;8;7;6;5
    rounds = set()
    s2 = game.new_initial_state(seed=4)
    while not s2.is_terminal():
        rounds.add(s2.round())
        s2.resolve_chance() if s2.is_chance_node() else s2.apply_action(s2.legal_actions()[-1])
    assert rounds == {1, 2, 3}
    # the default game is unaffected; states carry their own tables
    default = caribsim.load_game("cuba", players=3, start_player=0)
    assert [b["pesos"] for b in default.new_initial_state().to_dict()["boards"]] == [10, 10, 10]
    assert [b["pesos"] for b in s.clone().to_dict()["boards"]][2] == 20


def test_E5_partial_folder_falls_back_to_shipped_files(tmp_path):
    shutil.copy(DATA / "cuba_ships.csv", tmp_path / "cuba_ships.csv")
    st = caribsim.load_game("cuba", data=tmp_path).component_data_status()
    assert (
        st["cuba_ships.csv"]["origin"] != "bundled" and st["cuba_laws.csv"]["origin"] == "bundled"
    )


@pytest.mark.parametrize(
    "file, edit_fn, message",
    [
        (
            "cuba_buildings.csv",
            lambda rs: row(rs, "id", "abbey").update(cost_wood="x"),
            "cuba_buildings.csv row 5, column cost_wood",
        ),
        (
            "cuba_buildings.csv",
            lambda rs: row(rs, "id", "abbey").update(cost_stone="-1"),
            "cuba_buildings.csv row 5, column cost_stone",
        ),
        (
            "cuba_buildings.csv",
            lambda rs: row(rs, "id", "hotel").update(copies="2"),
            "copies must sum to 25",
        ),
        (
            "cuba_buildings.csv",
            lambda rs: row(rs, "id", "hotel").update(id="spa"),
            "cuba_buildings.csv row 10, column id: unknown building id 'spa'",
        ),
        (
            "cuba_ships.csv",
            lambda rs: row(rs, "id", "ship_03").update(slots_total="4"),
            "cuba_ships.csv row 4, column slots_total",
        ),
        (
            "cuba_ships.csv",
            lambda rs: row(rs, "id", "ship_03").update(accepts="tobacco:2;wood:1"),
            "cuba_ships.csv row 4, column accepts: unknown cargo kind 'wood'",
        ),
        ("cuba_ships.csv", lambda rs: rs.pop(), "expected 15 rows"),
        (
            "cuba_laws.csv",
            lambda rs: row(rs, "id", "tax_3").update(
                kind="tax_per_building", params="pesos_per_building=2"
            ),
            "exactly one tax_per_building",
        ),
        (
            "cuba_laws.csv",
            lambda rs: row(rs, "id", "drought").update(stack="III"),
            "cuba_laws.csv row 22, column kind",
        ),
        (
            "cuba_laws.csv",
            lambda rs: row(rs, "id", "levy_rum").update(params="rum=x"),
            "cuba_laws.csv row 11, column params",
        ),
        (
            "cuba_laws.csv",
            lambda rs: row(rs, "id", "subsidy_water").update(params="count=gold;unit=1;vp=1;cap=7"),
            "unknown subsidy count 'gold'",
        ),
        (
            "cuba_market.csv",
            lambda rs: row(rs, "item", "citrus").update(prices="6;5;5;3;2"),
            "cuba_market.csv row 3, column prices: prices must be strictly decreasing",
        ),
        (
            "cuba_market.csv",
            lambda rs: row(rs, "item", "rum").update(start_covered="4"),
            "cuba_market.csv row 5, column start_covered",
        ),
        (
            "cuba_plantation.csv",
            lambda rs: (
                row(rs, "field", "warehouse").update(field="sugar"),
                row(rs, "field", "water").update(field="warehouse"),
            ),
            "cuba_plantation.csv row 12, column field: the warehouse must be at (1,1)",
        ),
        (
            "cuba_plantation.csv",
            lambda rs: rs[3].update(row="1", col="1"),
            "cuba_plantation.csv row 5, column row",
        ),
        (
            "cuba_setup.csv",
            lambda rs: row(rs, "key", "start_pesos").update(value="ten"),
            "cuba_setup.csv row 12, column value",
        ),
        (
            "cuba_setup.csv",
            lambda rs: row(rs, "key", "rounds").update(key="roundz"),
            "unknown key 'roundz'",
        ),
        (
            "cuba_setup.csv",
            lambda rs: row(rs, "key", "supply_limited").update(status="maybe"),
            "column status",
        ),
    ],
)
def test_E5_bad_data_refused_with_file_row_column(folder, file, edit_fn, message):
    rewrite(folder / file, edit_fn)
    with pytest.raises(DataError) as e:
        caribsim.load_game("cuba", players=3, data=str(folder))
    assert message in str(e.value)


def test_E5_bad_header_and_folder(folder, tmp_path):
    (folder / "cuba_ships.csv").write_text("id,slots,accepts,status\n")
    with pytest.raises(DataError, match=r"cuba_ships\.csv .*header"):
        caribsim.load_game("cuba", data=folder)
    with pytest.raises(ValueError, match="not a folder"):
        caribsim.load_game("cuba", data=str(tmp_path / "nope"))
    with pytest.raises(TypeError):
        caribsim.load_game("cuba", data=3)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "cuba_extra.csv").write_text("a\n")
    with pytest.raises(DataError, match="unknown Cuba data file"):
        caribsim.load_game("cuba", data=tmp_path / "x")


def test_E5_custom_game_state_round_trip_and_pickle(folder):
    import pickle

    rewrite(folder / "cuba_setup.csv", lambda rs: row(rs, "key", "start_pesos").update(value="15"))
    game = caribsim.load_game("cuba", players=2, data=str(folder))
    s = game.new_initial_state(seed=2)
    for _ in range(40):
        s.resolve_chance() if s.is_chance_node() else s.apply_action(s.legal_actions()[0])
    assert game.state_from_dict(s.to_dict()) == s
    t = pickle.loads(pickle.dumps(s))
    assert t == s and t.game.options()["data"] == str(folder)
    with pytest.raises(ValueError, match="options"):
        caribsim.load_game("cuba", players=2).state_from_dict(s.to_dict())


def test_the_shipped_data_folder_is_a_cuba_data_folder_as_it_is():
    """Every cuba_*.csv the package ships is one of the game's data files (a file of other
    data, such as the page's rule texts, is named otherwise): the shipped folder, copied
    whole, loads as a user's data folder."""
    shipped = Path(caribsim.__file__).resolve().parent / "data"
    named = {p.name for p in shipped.glob("cuba_*.csv")}
    assert named == set(DATA_FILES), sorted(named ^ set(DATA_FILES))
    game = caribsim.load_game("cuba", players=3, data=str(shipped))
    assert game.num_players() == 3
