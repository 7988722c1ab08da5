"""Cuba in the HTML replay viewer: the snapshot a step draws, checked against the state and
the data files, and the page itself in a real headless Chromium (plantations, pesos, VP,
docks, laws in force, market) at several steps of a random game."""

from __future__ import annotations

import csv
import json
import random
import shutil
from pathlib import Path

import pytest
from test_viewer_page import open_step

import caribsim
from caribsim.human import records, viewer
from caribsim.human.boards import cuba as board

DATA = Path(caribsim.__file__).resolve().parent / "data"
SEED = 11


def _csv(name, folder=DATA):
    with open(Path(folder) / name, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _random_record(game, seed=SEED):
    """A whole random game of ``game`` (actions drawn with a fixed seed) as a record."""
    s = game.new_initial_state(seed=seed)
    rng = random.Random(seed)
    while not s.is_terminal():
        if s.is_chance_node():
            s.resolve_chance()
        else:
            s.apply_action(rng.choice(s.legal_actions()))
    return records.record_game(
        s, seed=seed, players_info=[chr(97 + i) for i in range(game.num_players())]
    )


@pytest.fixture(scope="module")
def record():
    return _random_record(caribsim.load_game("cuba", players=3))


def _first_step(rec, start, wanted):
    """The first step >= start whose replayed state's dict satisfies ``wanted``."""
    for n in range(start, len(rec["steps"]) + 1):
        if wanted(records.replay(rec, upto=n).to_dict()):
            return n
    raise AssertionError("no step of the record shows what the test needs")


@pytest.fixture(scope="module")
def steps(record):
    """Steps to look at: the start, a middle step with a building and a loaded ship, the
    first step with a secret bid made, the first with a parliament winner, the last step."""
    n = len(record["steps"])
    middle = _first_step(
        record,
        n // 2,
        lambda d: (
            any(b["buildings"] for b in d["boards"])
            and any(k and any(k["cargo"].values()) for k in d["harbour"]["docks"])
        ),
    )
    voted = _first_step(record, 0, lambda d: d["parliament"]["winner"] is not None)
    bidding = _first_step(record, 0, lambda d: any(b["bid"] for b in d["boards"]))
    return {"start": 0, "middle": middle, "bidding": bidding, "voted": voted, "last": n}


# --- the snapshot (pure Python) ---------------------------------------------------------


def _expected_market(d):
    setup = {r["key"]: r["value"] for r in _csv("cuba_setup.csv")}
    out = {}
    for row in _csv("cuba_market.csv"):
        prices, c = [int(p) for p in row["prices"].split(";")], d["market"][row["item"]]
        to_supply = setup[
            "market_sell_to_supply_price_"
            + ("crop" if row["item"] in ("sugar", "citrus", "tobacco") else "good")
        ]
        out[row["item"]] = (
            prices[c - 1] if c else int(setup["market_buy_from_supply_price"]),
            prices[c] if c < len(prices) else int(to_supply),
        )
    return out


def _check_snapshot(st):
    """The snapshot of ``st`` against its dict, its scores and the shipped data files."""
    names = {r["id"]: r["name"] for r in _csv("cuba_buildings.csv")}
    copies = {r["id"]: int(r["copies"]) for r in _csv("cuba_buildings.csv")}
    fields = {f"{r['row']},{r['col']}": r["field"] for r in _csv("cuba_plantation.csv")}
    ships = {
        r["id"]: dict(kv.split(":") for kv in r["accepts"].split(";"))
        for r in _csv("cuba_ships.csv")
    }
    d, scores, snap = st.to_dict(), st.scores(), board.snapshot(st)
    assert json.loads(json.dumps(snap)) == snap  # the page gets it as JSON
    assert (snap["round"], snap["phase"], snap["step"]) == (d["round"], d["phase"], d["step"])
    assert (snap["bank"], snap["supply"], snap["pesos_limited"]) == (
        d["bank"],
        d["supply"],
        d["options"]["pesos_limited"],
    )
    assert {rc: f for f, rc in snap["plantation"]} == fields
    assert len(snap["boards"]) == st.num_players()
    for b, sb, sc in zip(d["boards"], snap["boards"], scores):
        assert (sb["pesos"], sb["vp"], sb["pawn"]) == (b["pesos"], b["vp"], b["pawn"])
        assert sb["vp"] + sb["building_vp"] == sc["total"]
        assert {rc: x["id"] for rc, x in sb["buildings"].items()} == {
            f: i for i, f in b["buildings"].items()
        }
        assert all(x["name"] == names[x["id"]] for x in sb["buildings"].values())
        assert sorted(sb["hand"] + sb["played"]) == sorted(
            ["worker", "trader", "architect", "foreman", "mayor"]
        )
        assert set(sb["hand"]) == set(b["hand"])
    for dock, sd in zip(d["harbour"]["docks"], snap["docks"]):
        if dock is None:
            assert sd is None
            continue
        assert sd["id"] == dock["ship"]
        assert sd["slots"] == {k: int(v) for k, v in ships[dock["ship"]].items()}
        assert sd["cargo"] == {k: dock["cargo"][k] for k in ships[dock["ship"]]}
    assert snap["deck_unseen"] == len(d["harbour"]["deck_unseen"])
    assert [(x["stack"], x["in_force"] and x["in_force"]["id"]) for x in snap["laws"]] == list(
        d["laws"]["in_force"].items()
    )
    assert [x["proposal"] and x["proposal"]["id"] for x in snap["laws"]] == list(
        d["laws"]["proposals"].values()
    )
    assert {m["kind"]: (m["buy"], m["sell"]) for m in snap["market"]} == _expected_market(d)
    owned = [i for b in d["boards"] for i in b["buildings"]]
    assert {p[0]: p[3] for p in snap["pool"]} == {i: c - owned.count(i) for i, c in copies.items()}


def test_snapshot_follows_the_state_and_the_data_files(record, steps):
    for n in steps.values():
        _check_snapshot(records.replay(record, upto=n))


@pytest.mark.parametrize(
    "options", [{"players": 2}, {"players": 5, "supply_limited": True, "pesos_limited": True}]
)
def test_snapshot_at_every_step_of_other_games(options):
    rec = _random_record(caribsim.load_game("cuba", **options), seed=4)
    states = records.states(rec)
    assert len(states) == len(rec["steps"]) + 1 and states[-1].is_terminal()
    for st in states:
        _check_snapshot(st)


def test_snapshot_uses_the_games_own_data(tmp_path):
    """A user's data folder (the ``data`` option) renames a building and changes the tax
    laws: the drawing shows the user's values, not the shipped files'."""
    for name in ("cuba_buildings.csv", "cuba_laws.csv"):
        shutil.copy(DATA / name, tmp_path / name)
    text = (tmp_path / "cuba_buildings.csv").read_text(encoding="utf-8")
    (tmp_path / "cuba_buildings.csv").write_text(
        text.replace("small_bank,Small bank,", "small_bank,Piggy bank,"), encoding="utf-8"
    )
    text = (tmp_path / "cuba_laws.csv").read_text(encoding="utf-8")
    (tmp_path / "cuba_laws.csv").write_text(
        text.replace(",tax,pesos=", ",tax,pesos=1"), encoding="utf-8"
    )
    user_tax = {r["id"]: r["params"] for r in _csv("cuba_laws.csv", tmp_path) if r["kind"] == "tax"}
    game = caribsim.load_game("cuba", players=3, data=str(tmp_path))
    s, rng = game.new_initial_state(seed=1), random.Random(1)
    while s.phase() != "actions":  # setup and the proposals of round 1
        s.resolve_chance() if s.is_chance_node() else s.apply_action(rng.choice(s.legal_actions()))
    snap = board.snapshot(s)
    assert {p[0]: p[1] for p in snap["pool"]}["small_bank"] == "Piggy bank"
    proposal = snap["laws"][0]["proposal"]
    if proposal["id"] in user_tax:
        assert proposal["text"] == f"tax: {user_tax[proposal['id']].split('=')[1]} pesos"
        assert (
            int(user_tax[proposal["id"]].split("=")[1]) >= 10
        )  # the user's value, not the shipped one
    else:
        assert (
            proposal["id"] == "tax_per_building" and proposal["text"] == "tax: 1 peso per building"
        )
    shipped = board.snapshot(caribsim.load_game("cuba", players=3).new_initial_state(seed=1))
    assert {p[0]: p[1] for p in shipped["pool"]}["small_bank"] == "Small bank"


# --- the page in a real browser ---------------------------------------------------------


@pytest.fixture(scope="module")
def page(record, tmp_path_factory):
    path = tmp_path_factory.mktemp("cuba_page") / "cuba.html"
    viewer.write_html(record, path)
    return path


def _open(browser, page, n):
    return open_step(browser, page.as_uri(), n)


def _attr(browser, dom_id, name):
    return browser.find_element("id", dom_id).get_attribute(name)


def _text(browser, dom_id):
    return browser.find_element("id", dom_id).text


@pytest.mark.parametrize("which", ["start", "middle", "bidding", "voted", "last"])
def test_page_draws_the_state_of_the_step(browser, record, page, steps, which):
    n = steps[which]
    st = records.replay(record, upto=n)
    d, scores = st.to_dict(), st.scores()
    b = _open(browser, page, n)
    assert _text(b, "counter") == f"step {n} / {len(record['steps'])}"
    assert _text(b, "cuba-round") == str(d["round"])
    assert _text(b, "cuba-phase") == d["phase"].replace("_", " ")
    assert _text(b, "cuba-bank") == "unlimited"  # the default bank (CU-2.3)
    fields = {f"{r['row']},{r['col']}": r["field"] for r in _csv("cuba_plantation.csv")}
    names = {r["id"]: r["name"] for r in _csv("cuba_buildings.csv")}
    for seat, (pb, sc) in enumerate(zip(d["boards"], scores)):
        assert _text(b, f"cuba-pesos-{seat}") == str(pb["pesos"])
        assert _text(b, f"cuba-vp-{seat}") == str(pb["vp"])
        assert _text(b, f"total-{seat}") == str(sc["total"])
        assert _text(b, f"cuba-pawn-{seat}") == pb["pawn"]
        on = {f: i for i, f in pb["buildings"].items()}
        for rc, field in fields.items():
            cell = f"cuba-cell-{seat}-{rc.replace(',', '-')}"
            assert _attr(b, cell, "data-field") == field
            assert _attr(b, cell, "data-building") == on.get(rc, "")
            assert _attr(b, cell, "data-pawn") == ("1" if rc == pb["pawn"] else "0")
            if rc in on:
                assert names[on[rc]] in _text(b, cell)
        hand = b.find_elements("css selector", f"#cuba-hand-{seat} .cu-card")
        assert [e.text for e in hand] == pb["hand"]
    ships = {
        r["id"]: [kv.split(":") for kv in r["accepts"].split(";")] for r in _csv("cuba_ships.csv")
    }
    for k, dock in enumerate(d["harbour"]["docks"], start=1):
        assert _attr(b, f"cuba-dock-{k}", "data-ship") == (dock["ship"] if dock else "")
        for kind, slots in ships[dock["ship"]] if dock else []:
            assert f"{kind} {dock['cargo'][kind]}/{slots}" in _text(b, f"cuba-dock-{k}")
    assert _attr(b, "cuba-at-sea", "data-ship") == (d["harbour"]["at_sea"] or "")
    for stack, law in d["laws"]["in_force"].items():
        assert _attr(b, f"cuba-law-{stack}", "data-law") == (law or "")
        assert _attr(b, f"cuba-proposal-{stack}", "data-law") == (
            d["laws"]["proposals"][stack] or ""
        )
    for kind, tokens in d["market"].items():
        assert _attr(b, f"cuba-market-{kind}", "data-tokens") == str(tokens)
    winner = d["parliament"]["winner"]
    drawn = b.find_elements("id", "cuba-winner")
    assert [e.get_attribute("data-seat") for e in drawn] == (
        [] if winner is None else [str(winner)]
    )
    secret = st.hidden_bids_pending()
    assert bool(secret) == (which == "bidding")
    for seat, pb in enumerate(d["boards"]):
        assert _text(b, f"cuba-votes-{seat}") == str(pb["votes"])
        shown = ("cuba-bid", pb["bid"]) if seat in secret else ("cuba-bought", pb["bought"])
        assert _text(b, f"{shown[0]}-{seat}") == str(shown[1])


def _supply_shown(browser, rec, n, tmp_path):
    path = tmp_path / f"cuba_supply_{n}.html"
    viewer.write_html(rec, path)
    b = _open(browser, path, n)
    return b, _text(b, "cuba-supply")


def test_cu_2_3_an_unlimited_supply_shows_unlimited_never_a_count(browser, tmp_path):
    """CU-2.3, CU-11.1: by default the supply and the bank are unlimited. The engine keeps a
    count that goes below zero then; the page says "unlimited" and shows no count, and each
    item's tag is still there (the setup's and the Trader's moves name it)."""
    rec = _random_record(caribsim.load_game("cuba", players=4), seed=12)  # water -2 at one step
    n = _first_step(rec, 0, lambda d: min(d["supply"].values()) < 0)
    d = records.replay(rec, upto=n).to_dict()
    b, shown = _supply_shown(browser, rec, n, tmp_path)
    assert "unlimited" in shown and "-" not in shown, shown
    assert not any(ch.isdigit() for ch in shown.split("|")[0]), shown
    keys = {
        e.get_attribute("data-key") for e in b.find_elements("css selector", "#cuba-supply .tag")
    }
    assert keys == {f"supply-{k}" for k in d["supply"]}
    assert _text(b, "cuba-bank") == "unlimited"


def test_cu_11_1_a_limited_supply_shows_its_counts(browser, tmp_path):
    """CU-11.1: with the physical counts (supply_limited, pesos_limited) the page shows what
    is left of each item and in the bank, and no "unlimited"."""
    game = caribsim.load_game("cuba", players=3, supply_limited=True, pesos_limited=True)
    rec = _random_record(game)
    n = len(rec["steps"]) // 2
    d = records.replay(rec, upto=n).to_dict()
    b, shown = _supply_shown(browser, rec, n, tmp_path)
    assert "unlimited" not in shown
    for item, left in d["supply"].items():
        if left:
            tag = b.find_element("css selector", f'#cuba-supply [data-key="supply-{item}"]')
            assert tag.text == f"{item} {left}"
    assert _text(b, "cuba-bank") == str(d["bank"])


def test_every_law_is_said_as_a_rule_with_the_numbers_of_its_data_row():
    """Each law of cuba_laws.csv as a reader says it (CU-9), its numbers its own row's: no
    parameter names ("count water, unit 1, vp 1, cap 7" was the data file's wording)."""
    game = caribsim.load_game("cuba", players=3)
    laws = board._tables(game)["laws"]
    rows = _csv("cuba_laws.csv")
    assert {r["id"] for r in rows} == set(laws)
    for r in rows:
        text = laws[r["id"]]["text"]
        assert "=" not in text and "_" not in text and "count " not in text, text
        params = dict(x.split("=") for x in r["params"].split(";")) if r["params"] != "-" else {}
        for key, value in params.items():
            if (value != "none" and key not in ("count", "unit")) or (
                key == "unit" and value != "1"
            ):
                assert value in text.split(), (r["id"], key, text)
    assert laws["subsidy_pesos"]["text"] == "subsidy: 1 VP per 3 pesos, at most 7 VP"
    assert laws["tax_1"]["text"] == "tax: 1 peso"
    assert laws["drought"]["text"] == "drought: the Worker harvests 1 crop field free"
    # a parameter the drawing does not know is said as the data file writes it
    assert board._params_text("tax", "rate=3") == "tax: rate 3"
