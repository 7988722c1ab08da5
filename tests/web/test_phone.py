"""The game page on a phone (390x844; docs/web.md, "Game"): the moves and the page's own
board on the first screen, the supply after it, the other seats folded to their first lines
(a tap on a heading unfolds one, and it stays unfolded as the game goes on), no sideways
scrolling; back on a wide screen every board is in its row again, none folded. In real
headless Chromium, for all three games."""

from __future__ import annotations

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from caribsim.web.app import create_app
from tests.web.conftest import post_json, serving, token_of, viewport
from tests.web.test_browser import _click_move, _your_turn

_LAYOUT = """
const r = e => e.getBoundingClientRect();
const move = document.querySelector("#moves button.move");
return {
  width: innerWidth, height: innerHeight, scroll: document.documentElement.scrollWidth,
  move: move ? r(move).top : null,
  mine: [...document.querySelectorAll("#mine > .board")].map(b => ({seat: +b.dataset.seat, top: r(b).top + scrollY})),
  others: [...document.querySelectorAll("#boards > .board")].map(b => ({
    seat: +b.dataset.seat, folded: b.classList.contains("folded"), height: r(b).height})),
  supply: r(document.getElementById("supply")).top + scrollY,
};
"""


@pytest.mark.parametrize("game", ["puerto_rico", "port_royal", "cuba"])
def test_a_phone_shows_the_moves_and_your_board_first_and_folds_the_others(browser, tmp_path, game):
    app = create_app(tmp_path, bot_delay=0.05)
    with serving(app) as address:
        url = f"http://{address}"
        seats = ["random", "random", "human"]
        made = post_json(f"{url}/api/games", {"game": game, "seats": seats, "seed": 5})
        with viewport(browser, 390, 844, mobile=True):
            browser.get(f"{url}/game/{made['id']}?token={token_of(made, 2)}")
            s = _your_turn(browser, -1)
            phone = browser.execute_script(_LAYOUT)
            # a tap on seat 0's heading unfolds it; it stays so after the next steps
            browser.find_element(By.CSS_SELECTOR, '#boards > .board[data-seat="0"] > h3').click()
            unfolded = browser.execute_script(_LAYOUT)
            _click_move(browser, s["actions"][0])
            _your_turn(browser, int(s["step"]))
            later = browser.execute_script(_LAYOUT)
        with viewport(browser, 1366, 768):
            WebDriverWait(browser, 10).until(
                lambda b: (
                    not b.execute_script(
                        "return document.querySelectorAll('#mine > .board').length"
                    )
                )
            )
            wide = browser.execute_script(_LAYOUT)
    assert phone["scroll"] <= phone["width"], "sideways scrolling"
    # the first screen: the moves, then the page's own board
    assert phone["move"] is not None and phone["move"] < phone["height"]
    assert [b["seat"] for b in phone["mine"]] == [2]
    assert phone["mine"][0]["top"] < phone["height"]
    assert phone["mine"][0]["top"] < phone["supply"]
    # the others folded, and short
    assert [(b["seat"], b["folded"]) for b in phone["others"]] == [(0, True), (1, True)]
    seat0 = {b["seat"]: b for b in unfolded["others"]}[0]
    assert not seat0["folded"] and seat0["height"] > phone["others"][0]["height"] + 20
    assert [(b["seat"], b["folded"]) for b in later["others"]] == [(0, False), (1, True)]
    assert [b["seat"] for b in later["mine"]] == [2]
    # a wide screen: every board in its row, none folded
    assert wide["mine"] == []
    assert sorted((b["seat"], b["folded"]) for b in wide["others"]) == [
        (0, False),
        (1, False),
        (2, False),
    ]
