"""Play from here on the replay page of a finished game, in a real headless Chromium: the
viewer (opened from the lobby's list of finished games) moved to a step, the seats chosen (the seat to act human by default), the button makes
the game from the record at that step and opens its page, whose board is the replayed
record's at that step, and a move works there; a bad seat spec is refused on the page, and
the last step (game over) offers nothing. A static viewer file has no such control."""

from __future__ import annotations

import random

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import caribsim
from caribsim.human import records, viewer
from tests.web import stored
from tests.web.conftest import wait_for
from tests.web.test_browser import (
    _PAGE_NUMBERS,
    _check_board,
    _click_move,
    _get,
    _post,
    _status,
    _your_turn,
)


def _random_record(game: str, seed: int) -> dict:
    st, rng = caribsim.load_game(game, players=3).new_initial_state(seed=seed), random.Random(seed)
    while not st.is_terminal():
        st.resolve_chance() if st.is_chance_node() else st.apply_action(
            rng.choice(st.legal_actions())
        )
    return records.record_game(st, seed)


def _finished_game(server, game: str, seed: int) -> str:
    """A game of the server that is over: a random game's record played on by random bots from
    its last decision."""
    rec = _random_record(game, seed)
    last = max(i for i, s in enumerate(rec["steps"]) if s["player"] >= 0)
    gid = _post(server, "/api/games", {"record": rec, "step": last, "seats": ["random"] * 3})["id"]
    wait_for(lambda: _get(server, f"/api/games/{gid}")["over"], 60, "the bots to end the game")
    return gid


def _decision_step(rec: dict, near: int) -> int:
    """The first step from ``near`` on at which a seat decides (not chance)."""
    return next(i for i in range(near, len(rec["steps"])) if rec["steps"][i]["player"] >= 0)


def _seat_row(browser, seat: int) -> tuple:
    kind = browser.find_element(By.ID, f"pfh-kind-{seat}").get_attribute("value")
    box = browser.find_element(By.ID, f"pfh-bot-{seat}")
    return kind, box.get_attribute("value"), box.get_attribute("disabled") is not None


@pytest.mark.parametrize("game, seed, near", [("puerto_rico", 12, 50), ("cuba", 13, 30)])
def test_play_from_here_opens_the_game_at_the_viewers_step(browser, server, game, seed, near):
    gid = _finished_game(server, game, seed)
    finished = _get(server, f"/api/games/{gid}/record")
    step = _decision_step(finished, near + 2)
    # the lobby lists the finished game with its replay
    assert gid in [g["id"] for g in _get(server, "/api/games")["finished"]]
    browser.get(server.url + "/")
    WebDriverWait(browser, 30).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, f"#finished-{gid} a.replay")
    )[0].click()
    WebDriverWait(browser, 30).until(
        lambda b: b.current_url.startswith(server.url + f"/replay/{gid}")
    )
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.ID, "pfh-step"))
    browser.execute_script(f"location.hash = 'step={step - 2}'")
    WebDriverWait(browser, 30).until(
        lambda b: b.find_element(By.ID, "pfh-step").text == str(step - 2)
    )
    for _ in range(2):  # the viewer's own buttons move it; the control follows
        browser.find_element(By.ID, "next").click()
    assert browser.find_element(By.ID, "pfh-step").text == str(step)
    mover = finished["steps"][step]["player"]
    for seat in range(3):  # the seat to act human, the others the default bot
        assert _seat_row(browser, seat) == (
            ("human", "mcts:2000", True) if seat == mover else ("bot", "mcts:2000", False)
        )
    for seat in range(3):
        if seat != mover:
            box = browser.find_element(By.ID, f"pfh-bot-{seat}")
            box.clear()
            box.send_keys("random")
    browser.find_element(By.ID, "prev").click()  # moving on keeps the seats as edited
    browser.find_element(By.ID, "next").click()
    assert [_seat_row(browser, s)[1] for s in range(3) if s != mover] == ["random", "random"]
    browser.find_element(By.ID, "pfh-play").click()
    WebDriverWait(browser, 30).until(
        lambda b: "/game/" in b.current_url and "token=" in b.current_url
    )
    new = browser.current_url.split("/game/")[1].split("?")[0]
    assert new != gid
    s = _your_turn(browser, step - 1)
    assert int(s["step"]) == step and int(s["toAct"]) == mover
    # the board is the replayed record's at that step
    state = records.replay(finished, upto=step)
    page = browser.execute_script(_PAGE_NUMBERS)
    assert page["totals"] == [x["total"] if isinstance(x, dict) else x for x in state.scores()]
    assert records.replay(stored.record(server.folder, new)).to_dict() == state.to_dict()
    if game == "puerto_rico":
        assert page["pr"] == [
            [b["doubloons"], b["vp_chips"], b["san_juan"]] for b in state.to_dict()["boards"]
        ]
    else:
        pesos = [int(browser.find_element(By.ID, f"cuba-pesos-{p}").text) for p in range(3)]
        assert pesos == [b["pesos"] for b in state.to_dict()["boards"]]
    _check_board(browser, server, new, game)
    saved = stored.record(server.folder, new)
    assert saved["players"] == ["human" if p == mover else "random" for p in range(3)]
    # a move works there
    _click_move(browser, s["actions"][-1])
    wait_for(lambda: int(_status(browser)["step"]) > step, 30, "the move")
    assert stored.record(server.folder, new)["steps"][step]["action"] == s["actions"][-1]
    # the lobby of this browser can resume the new game
    assert (
        browser.execute_script(
            "return JSON.parse(localStorage.getItem('caribsim-links'))[arguments[0]].id", new
        )
        == new
    )


def test_play_from_here_says_why_it_refuses(browser, server):
    gid = _finished_game(server, "puerto_rico", 14)
    before = sorted(stored.everything(server.folder))  # the stored games
    browser.get(server.url + f"/replay/{gid}#step=20")
    WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "pfh-step").text == "20")
    seat = next(s for s in range(3) if _seat_row(browser, s)[0] == "bot")
    box = browser.find_element(By.ID, f"pfh-bot-{seat}")
    box.clear()
    box.send_keys("genius")
    browser.find_element(By.ID, "pfh-play").click()
    error = WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "error").text)
    assert error.startswith(f"seat {seat}: unknown bot spec 'genius'")
    assert browser.current_url.startswith(server.url + f"/replay/{gid}")
    assert sorted(stored.everything(server.folder)) == before
    # the last step: the game is over there, nothing to play on
    browser.find_element(By.ID, "last").click()
    assert browser.find_element(By.ID, "pfh-play").get_attribute("disabled") is not None
    assert "the game is over at this step" in browser.find_element(By.ID, "pfh-where").text


def test_a_static_viewer_file_has_no_play_from_here():
    html = viewer.render(_random_record("port_royal", 3))
    assert "play-from-here" not in html and "/api/games" not in html


def test_play_from_here_at_a_chance_step(browser, server):
    """At a chance step the seat that decided next in the game is the human one; the new game
    keeps the record's steps before it, draws the chance afresh (the record's seed is known
    to its holder) and waits for that seat."""
    gid = _finished_game(server, "port_royal", 15)
    finished = _get(server, f"/api/games/{gid}/record")
    step = next(i for i in range(40, len(finished["steps"])) if finished["steps"][i]["player"] < 0)
    decides = _decision_step(finished, step)
    mover = finished["steps"][decides]["player"]
    browser.get(server.url + f"/replay/{gid}#step={step}")
    WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "pfh-step").text == str(step))
    assert browser.find_element(By.ID, "pfh-where").text.endswith(
        f"chance first, then seat {mover}"
    )
    assert [_seat_row(browser, s)[0] for s in range(3)] == [
        "human" if s == mover else "bot" for s in range(3)
    ]
    for seat in range(3):
        if seat != mover:
            box = browser.find_element(By.ID, f"pfh-bot-{seat}")
            box.clear()
            box.send_keys("random")
    browser.find_element(By.ID, "pfh-play").click()
    WebDriverWait(browser, 30).until(lambda b: "/game/" in b.current_url)
    new = browser.current_url.split("/game/")[1].split("?")[0]
    s = _your_turn(browser, step)
    assert int(s["toAct"]) == mover
    steps = stored.record(server.folder, new)["steps"]
    assert steps[:step] == finished["steps"][:step] and steps[step]["player"] == -1
    _check_board(browser, server, new, "port_royal")
