"""Each component's rule text on hover (issue: "Rules help"): a Puerto Rico building's effect
(data/puerto_rico_buildings.csv) on its name in the supply and in a city, a Cuba pool
building's effect (the game's cuba_buildings.csv) and a character card's rule
(data/rules_cuba_characters.csv with the numbers of the game's setup data) on their names; in the
replay viewer's page (the browser play draws the same boards) in a real headless Chromium."""

from __future__ import annotations

import csv
import random
import shutil
from pathlib import Path

import pytest
from test_viewer_page import open_step

import caribsim
from caribsim.human import records, viewer
from caribsim.human.boards import cuba as cuba_board

DATA = Path(caribsim.__file__).resolve().parent / "data"


def _rows(name, folder=DATA):
    with open(Path(folder) / name, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _record(name, players, seed, steps):
    s = caribsim.load_game(name, players=players).new_initial_state(seed=seed)
    rng = random.Random(seed)
    while len(s.history()) < steps and not s.is_terminal():
        s.resolve_chance() if s.is_chance_node() else s.apply_action(rng.choice(s.legal_actions()))
    return records.record_game(s, seed=seed, players_info=["a"] * players)


_TITLES = (
    """return [...document.querySelectorAll(arguments[0])].map(e => [e.textContent, e.title]);"""
)


def test_puerto_rico_buildings_say_their_effect_on_hover(browser, tmp_path):
    rec = _record("puerto_rico", 3, 4, 200)
    path = tmp_path / "pr.html"
    viewer.write_html(rec, path)
    b = open_step(browser, path.as_uri(), len(rec["steps"]))
    effect = {r["name"]: r["effect"] for r in _rows("puerto_rico_buildings.csv")}
    supply = b.execute_script(_TITLES, "[id^=pr-supply-] .bn")
    city = b.execute_script(_TITLES, "[id^=pr-building-] .bn")
    assert len(supply) >= 20 and city  # every building of the supply; some built by now
    for name, title in supply + city:
        assert title == effect[name], name


def test_cuba_characters_and_pool_buildings_say_their_rules_on_hover(browser, tmp_path):
    rec = _record("cuba", 3, 2, 60)
    path = tmp_path / "cuba.html"
    viewer.write_html(rec, path)
    b = open_step(browser, path.as_uri(), len(rec["steps"]))
    setup = caribsim.load_game("cuba", players=3).component_data()["setup"]
    votes = dict(
        zip(("worker", "trader", "architect", "foreman", "mayor"), setup["character_votes"])
    )
    cards = b.execute_script(_TITLES, "[id^=cuba-hand-] .bn, [id^=cuba-played-] .bn")
    assert len(cards) == 3 * 5  # every seat's five cards, in hand or played
    for name, title in cards:
        assert title.startswith(f"{name.capitalize()} ({votes[name]} vote"), title
        assert title.endswith(")") and "(CU-6." in title
    rules = dict(cards)
    a, m = setup["architect_alt_vp"], setup["mayor_alt_pesos"]
    assert f"{a[0]} or {a[1]} VP" in rules["architect"]
    assert f"{m[0]} or {m[1]} pesos" in rules["mayor"]
    assert f"up to {setup['worker_free_crop_fields']} crop fields" in rules["worker"]
    effect = {r["name"]: r["effect"] for r in _rows("cuba_buildings.csv")}
    pool = b.execute_script(_TITLES, "[id^=cuba-pool-] .bn")
    assert pool
    for name, title in pool:
        assert title == effect[name], name


def test_cuba_character_rules_follow_the_games_setup_data(tmp_path):
    """A user's data folder that changes the Architect's alternative VP: its rule says so."""
    for name in ("cuba_setup.csv",):
        shutil.copy(DATA / name, tmp_path / name)
    text = (tmp_path / "cuba_setup.csv").read_text(encoding="utf-8")
    assert "architect_alt_vp,2;1" in text, "the shipped setup file changed: adjust the test"
    (tmp_path / "cuba_setup.csv").write_text(
        text.replace("architect_alt_vp,2;1", "architect_alt_vp,3;1"), encoding="utf-8"
    )
    game = caribsim.load_game("cuba", players=3, data=str(tmp_path))
    rules = cuba_board.snapshot(game.new_initial_state(seed=1))["character_rules"]
    assert "3 or 1 VP" in rules["architect"]
    shipped = cuba_board.snapshot(caribsim.load_game("cuba", players=3).new_initial_state(seed=1))
    assert "2 or 1 VP" in shipped["character_rules"]["architect"]


def test_a_characters_file_that_names_other_cards_is_refused(monkeypatch):
    monkeypatch.setattr(cuba_board, "CHARACTERS", ("worker", "trader"))
    with pytest.raises(ValueError, match=r"rules_cuba_characters\.csv lists"):
        cuba_board._character_rules(caribsim.load_game("cuba", players=3).component_data()["setup"])
