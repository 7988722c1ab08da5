"""The game page's move log (docs/web.md, "Game"): grouped by round, then by the phase the
steps were taken in, a move's chance steps under it; one list item per step in step order
(numbered by step for the decisions); on a wide screen a column beside the board as tall as
the window, on a phone below the boards. In real headless Chromium, for all three games."""

from __future__ import annotations

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from selenium.webdriver.support.ui import WebDriverWait

from caribsim.web.app import create_app
from tests.web.conftest import get_json, post_json, serving, viewport

_LOG = """
return [...document.querySelectorAll("#log section.log-round")].map(r => ({
  heading: r.querySelector("h4").textContent,
  phases: [...r.querySelectorAll(".log-phase")].map(p => ({
    name: p.querySelector(".log-phase-name").textContent,
    items: [...p.querySelectorAll("li")].map(li => [li.className, li.value, li.textContent])}))}));
"""
_PLACES = """
const r = id => document.getElementById(id).getBoundingClientRect();
return {log: r("log-box"), boards: r("boards"), width: innerWidth, height: innerHeight,
        scroll: document.documentElement.scrollWidth};
"""


@pytest.mark.parametrize("game", ["puerto_rico", "port_royal", "cuba"])
def test_the_log_is_grouped_by_round_and_phase_with_chance_under_its_move(browser, tmp_path, game):
    app = create_app(tmp_path, bot_delay=0)
    with serving(app) as address:
        url = f"http://{address}"
        made = post_json(f"{url}/api/games", {"game": game, "seats": ["random"] * 3, "seed": 9})
        gid = made["id"]
        v = WebDriverWait(browser, 60, poll_frequency=0.05).until(
            lambda _: (lambda v: v if v["over"] else None)(get_json(f"{url}/api/games/{gid}"))
        )
        browser.get(f"{url}/game/{gid}")
        WebDriverWait(browser, 30).until(
            lambda b: (
                b.execute_script("return document.querySelectorAll('#log li').length")
                == len(v["log"])
            )
        )
        page = browser.execute_script(_LOG)
    lines = [line.split(". ", 1)[1] for line in v["log"]]
    # rounds 1, 2, ... in order, and every step once, in step order
    assert [r["heading"] for r in page] == [f"round {n}" for n in range(1, len(page) + 1)]
    assert len(page) > 3
    items = [it for r in page for p in r["phases"] for it in p["items"]]
    assert [text for _, _, text in items] == lines
    # a decision is numbered by its step; a chance step is not
    for k, (cls, value, text) in enumerate(items):
        chance = text.startswith("chance:")
        assert (cls == "chance") == chance, text
        if not chance:
            assert value == k + 1, text
    # the groups are the API's
    api = [
        [
            (p["phase"].replace("_", " "), [(m["move"], m["chance"]) for m in p["moves"]])
            for p in g["phases"]
        ]
        for g in v["log_groups"]
    ]
    assert [[p["name"] for p in r["phases"]] for r in page] == [
        [name for name, _ in r] for r in api
    ]
    chance_of = {m: c for r in api for _, moves in r for m, c in moves if m is not None}
    for m, c in chance_of.items():
        assert all(x > m for x in c) and c == list(range(m + 1, m + 1 + len(c))), (m, c)


def test_the_log_is_a_column_beside_the_board_on_a_wide_screen_and_below_on_a_phone(
    browser, tmp_path
):
    app = create_app(tmp_path, bot_delay=0)
    with serving(app) as address:
        url = f"http://{address}"
        made = post_json(
            f"{url}/api/games", {"game": "puerto_rico", "seats": ["random"] * 3, "seed": 2}
        )
        places = {}
        for name, (w, h, mobile) in {"wide": (1366, 768, False), "phone": (390, 844, True)}.items():
            with viewport(browser, w, h, mobile):
                browser.get(f"{url}/game/{made['id']}")
                WebDriverWait(browser, 30).until(
                    lambda b: b.execute_script("return document.querySelectorAll('#log li').length")
                )
                places[name] = browser.execute_script(_PLACES)
    wide, phone = places["wide"], places["phone"]
    # beside the boards, from the window's top to its bottom
    assert wide["log"]["left"] >= wide["boards"]["right"] - 1
    assert wide["log"]["top"] == 0 and wide["log"]["bottom"] == pytest.approx(wide["height"], abs=1)
    # a phone: below the boards, no sideways scrolling
    assert phone["log"]["top"] >= phone["boards"]["bottom"]
    assert phone["scroll"] <= phone["width"]
