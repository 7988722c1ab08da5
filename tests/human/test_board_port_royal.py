"""The Port Royal board of the replay viewer: the card table against the deck csv, the
snapshot against the state, and the page drawn in a real headless Chromium at several steps
(every value read back from the page is compared with the replayed state)."""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from test_viewer_page import open_step

import caribsim
from caribsim.human import records, viewer
from caribsim.human.boards import port_royal as board

SEED = 1  # a random 3-player game with every kind of event (checked by test_events)
DECK = Path(caribsim.__file__).resolve().parent / "data" / "port_royal_deck.csv"
SHIP_TYPES = {
    "yellow": "Pinnace",
    "blue": "Flute",
    "green": "Skiff",
    "red": "Frigate",
    "black": "Galleon",
}  # rules §1.1, the ship table


def _deck_rows():
    with open(DECK, newline="", encoding="utf-8") as f:
        return {row["id"]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def rec():
    game = caribsim.load_game("port_royal", players=3)
    state = game.new_initial_state(seed=SEED)
    rng = random.Random(SEED)
    while not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return records.record_game(state, seed=SEED, players_info=["random"] * 3)


@pytest.fixture(scope="module")
def states(rec):
    return records.states(rec)


@pytest.fixture(scope="module")
def page(rec, tmp_path_factory):
    path = tmp_path_factory.mktemp("pry") / "replay.html"
    viewer.write_html(rec, path)
    return path


_VERBS = {"reveal": "reveals", "draw": "draws", "pay": "pays", "fee": "gives"}  # queue ops


def _kind(before, after, step):
    """What step ``step`` did, judged from the states before and after it (not from the page
    code): a revealed ship waiting for repel/dock, docking, a bust, a tax card, a paid coin,
    or the decision's first word (repel, dock, fulfil, take, ...)."""
    if step["player"] >= 0:
        return step["name"].split()[0]
    op = before.chance_event()[0]
    card = step["name"].split()[1]
    b, a = before.to_dict(), after.to_dict()
    if op != "reveal":
        return op
    if card.startswith("tax_"):
        return "tax"
    if not card.startswith("ship_") or a["generation"] != b["generation"]:
        return "reveal"
    if a["pending"] == card:
        return "choice"
    if a["harbour"].get(card, 0) == b["harbour"].get(card, 0) + 1:
        return "docked"
    if (
        not a["harbour"]
        and len(a["discard_pile"]) == len(b["discard_pile"]) + sum(b["harbour"].values()) + 1
    ):
        return "bust"
    return "reveal"


@pytest.fixture(scope="module")
def kinds(rec, states):
    """The step numbers (snapshot indices) of each kind, from a third of the game on."""
    out = {}
    for i in range(len(rec["steps"]) // 3, len(rec["steps"])):
        out.setdefault(_kind(states[i], states[i + 1], rec["steps"][i]), []).append(i + 1)
    return out


def _open(browser, page, n):
    return open_step(browser, page.as_uri(), n)


def _cards_in(browser, element_id):
    return [
        e.get_attribute("data-card")
        for e in browser.find_elements(By.CSS_SELECTOR, f"#{element_id} [data-card]")
    ]


def _text(browser, element_id):
    return browser.find_element(By.ID, element_id).text


# --- pure Python ------------------------------------------------------------------------


def test_card_table_matches_the_deck_csv():
    rows, table = _deck_rows(), board.card_table()
    assert set(table) == set(rows) and len(rows) == 62
    assert sum(c["count"] for c in table.values()) == 120  # rules §1.1
    for card_id, row in rows.items():
        card = table[card_id]
        for key in ("swords", "coins", "cost", "vp", "count", "min_players"):
            assert card[key] == int(row[key]), (card_id, key)
        assert card["category"] == row["category"] and card["skull"] == (row["skull"] == "1")
        assert board.card_name(card_id) == card["name"]
        if row["category"] == "ship":
            assert card["name"] == f"{row['colour']} {SHIP_TYPES[row['colour']]}"
        if row["category"] == "person":
            assert card["ability"], card_id
        if row["ability"] in ("SAILOR", "PIRATE"):
            assert card["ability"].startswith(f"{row['swords']} sword")
        if row["category"] == "expedition":
            assert card["symbols"] == row["symbol"].split("+")
            assert f"pays {row['coins']} coins and {row['vp']} VP" in card["ability"]
    assert board.card_name("priest_c4") == "Priest"
    assert board.card_name("jack_of_all_trades_c6") == "Jack of all trades"
    assert board.card_name("trader_red_c3") == "red Trader"
    assert board.card_name("tax_fewest_vp") == "Tax increase: fewest VP"
    table["priest_c4"]["name"] = "changed"  # a copy
    assert board.card_name("priest_c4") == "Priest"


def test_card_name_of_an_unknown_id_says_where_the_ids_are():
    with pytest.raises(ValueError, match=r"no Port Royal card 'priest'.*port_royal_deck\.csv"):
        board.card_name("priest")


def test_snapshot_is_the_public_part_of_every_state(rec, states):
    for n, state in enumerate(states):
        snap, d, scores = board.snapshot(state), state.to_dict(), state.scores()
        assert json.loads(json.dumps(snap)) == snap
        assert snap["draw_pile"] == len(d["draw_pile"]) and snap["discard_pile"] == len(
            d["discard_pile"]
        )
        assert Counter(snap["harbour"]) == Counter(d["harbour"])
        assert snap["expedition_area"] == d["expedition_area"]
        assert snap["last"] == (rec["steps"][n - 1]["name"] if n else None)
        assert snap["chance"] == (list(state.chance_event()) if state.is_chance_node() else None)
        for p, sp, sc in zip(d["players"], snap["players"], scores):
            assert sp["coins"] == len(p["coins"])  # a count: the faces are hidden
            assert (sp["vp"], sp["swords"]) == (sc["total"], sc["swords"])
            assert Counter(sp["persons"]) + Counter(sp["expeditions"]) == Counter(p["display"])


# --- the page in Chromium ---------------------------------------------------------------


def _check_step(browser, page, rec, n):
    """Every drawn value of step ``n`` against the replayed state."""
    state = records.replay(rec, upto=n)
    d, scores = state.to_dict(), state.scores()
    _open(browser, page, n)
    for seat, (p, sc) in enumerate(zip(d["players"], scores)):
        assert int(_text(browser, f"pry-coins-{seat}")) == len(p["coins"])
        assert int(_text(browser, f"pry-vp-{seat}")) == sc["total"]
        assert int(_text(browser, f"pry-swords-{seat}")) == sc["swords"]
        drawn = {
            e.get_attribute("data-card"): int(e.get_attribute("data-count"))
            for e in browser.find_elements(By.CSS_SELECTOR, f"#pry-display-{seat} [data-card]")
        }
        assert drawn == {k: v for k, v in p["display"].items() if not k.startswith("expedition_")}
        assert Counter(_cards_in(browser, f"pry-fulfilled-{seat}")) == Counter(
            {k: v for k, v in p["display"].items() if k.startswith("expedition_")}
        )
    assert int(_text(browser, "pry-draw-pile")) == len(d["draw_pile"])
    assert int(_text(browser, "pry-discard-pile")) == len(d["discard_pile"])
    assert Counter(_cards_in(browser, "pry-harbour")) == Counter(d["harbour"])
    assert _cards_in(browser, "pry-expeditions") == d["expedition_area"]
    assert _text(browser, "pry-phase") == d["phase"]
    assert _text(browser, "pry-active") == f"seat {d['active']}"
    return d


def test_page_draws_the_state_at_the_start_middle_and_end(browser, page, rec):
    last = len(rec["steps"])
    for n in (0, last // 2, last):
        _check_step(browser, page, rec, n)
    returns = rec["final"]["returns"]
    winners = " and ".join(f"seat {i}" for i, r in enumerate(returns) if r == max(returns))
    assert f"game over: won by {winners}" in _text(browser, "pry-effect")


def test_harbour_cards_show_their_complete_face(browser, page, rec, states):
    rows = _deck_rows()
    n = max(range(len(states)), key=lambda i: sum(states[i].to_dict()["harbour"].values()))
    d = _check_step(browser, page, rec, n)
    assert sum(d["harbour"].values()) >= 3
    for e in browser.find_elements(By.CSS_SELECTOR, "#pry-harbour [data-card]"):
        row, text = rows[e.get_attribute("data-card")], e.text
        assert board.card_name(row["id"]) in text
        if row["category"] == "ship":
            assert f"pays {row['coins']} coin" in text
            assert (
                ("cannot be repelled" in text)
                if row["skull"] == "1"
                else (f"{row['swords']} to repel" in text)
            )
        else:
            assert f"cost {row['cost']} · {row['vp']} VP" in text


@pytest.mark.parametrize(
    "kind, says",
    [
        ("choice", "repel it or let it dock"),
        ("docked", "docks in the harbour"),
        ("bust", "BUST"),
        ("tax", "discards half"),
        ("repel", "repels"),
        ("dock", "lets"),
        ("fulfil", "fulfils"),
        ("take", "seat"),
        ("pay", "goes face up to the discard pile"),
        ("draw", "draws a coin (face down)"),
    ],
)
def test_events(browser, page, rec, states, kinds, kind, says):
    """The card just revealed (or taken, paid) and what it did, at one step of each kind."""
    assert kind in kinds, f"seed {SEED} has no {kind} step; the kinds are {sorted(kinds)}"
    n = kinds[kind][0]
    d = _check_step(browser, page, rec, n)
    step, before = rec["steps"][n - 1], states[n - 1].to_dict()
    effect = _text(browser, "pry-effect")
    assert says in effect
    drawn = _cards_in(browser, "pry-drawn")
    if kind == "draw":  # a drawn coin's face stays hidden
        assert drawn == [] and f"seat {states[n - 1].chance_event()[1]:d}" in effect
        return
    card = before["pending"] if kind in ("repel", "dock") else step["name"].split()[1]
    assert drawn == [card] and board.card_name(card) in effect
    if kind == "take":
        verb = "trades" if card.startswith("ship_") else "hires"
        assert f"seat {step['player']} {verb}" in effect
    if kind == "fulfil":  # the persons it used up go to the discard pile
        assert f"+{board.card_table()[card]['vp']} VP" in effect
        seat = step["player"]
        used = Counter(before["players"][seat]["display"]) - Counter(d["players"][seat]["display"])
        assert used and Counter(_cards_in(browser, "pry-lost")) == used
    if kind == "bust":
        assert f"the harbour ({sum(before['harbour'].values()) + 1} cards)" in effect
        assert Counter(_cards_in(browser, "pry-lost")) == Counter(before["harbour"]) + Counter(
            [card]
        )
    if d["queue"]:  # the card moves still to come, in order
        to_come = effect.split("to come: ")[1].split("\n")[0].split("; ")
        assert [t.split()[:4] for t in to_come] == [
            [
                "seat",
                str(q["seat"]),
                _VERBS[q["op"]],
                "a" if q["op"] == "reveal" else str(q["count"]),
            ]
            for q in d["queue"]
        ]


def test_screenshot_of_a_middle_step(browser, page, rec, states, kinds, tmp_path):
    """A ship just revealed (waiting for repel/dock, or docked) with the fullest harbour."""
    n = max(
        kinds["choice"] + kinds["docked"],
        key=lambda i: sum(states[i].to_dict()["harbour"].values()),
    )
    _check_step(browser, page, rec, n)
    _open(browser, page, n)
    assert _cards_in(browser, "pry-drawn") == [rec["steps"][n - 1]["name"].split()[1]]
    shot = tmp_path / "viewer_port_royal.png"  # the docs' pictures: test_viewer_page.py
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_move_line_never_names_a_coin_card(rec, states):
    """Rules E.1: a card drawn, paid or given as a coin goes face down; the page's move line
    says whose coin it is, and every other move keeps its own name, cards by their names."""
    moves = [s["move"] for s in viewer.steps_data(rec)["snapshots"][1:]]
    coins = 0
    for i, (step, move) in enumerate(zip(rec["steps"], moves)):
        before = states[i]
        if before.is_chance_node() and before.chance_event()[0] in ("draw", "pay", "fee"):
            _kind, seat = before.chance_event()
            coins += 1
            assert step["name"].split()[1] not in move and f"to seat {seat}, face down" in move, (
                move
            )
        else:
            named = " ".join(
                board.card_name(w) if w in board.card_table() else w for w in step["name"].split()
            )
            assert move.endswith(named), move
            assert not any(w in board.card_table() for w in move.split()), move
    assert coins > 20
