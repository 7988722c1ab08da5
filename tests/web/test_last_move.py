"""What just happened, on the game page (docs/web.md, "Game"): after a step the parts of the
drawing it changed are marked for a moment (class ``changed``: the smallest parts whose text
differs from the page's previous drawing at the same place), and the line above the board
says the step's log line with every seat's change of score. In real headless Chromium, for
all three games."""

from __future__ import annotations

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from selenium.webdriver.support.ui import WebDriverWait

from caribsim.web.app import create_app
from tests.web.conftest import get_json, post_json, serving, token_of
from tests.web.test_browser import _click_move, _your_turn

# every element of the supply and the boards by its place (root/index+tag/...): its text
_DRAWING = """
const out = {};
const walk = (e, path) => { out[path] = e.textContent;
  [...e.children].forEach((c, i) => walk(c, path + "/" + i + c.tagName)); };
for (const root of ["supply", "boards"]) walk(document.getElementById(root), root);
return out;
"""
# the places of the marked elements
_MARKED = """
return [...document.querySelectorAll(".changed")].map(e => {
  let path = "";
  for (let x = e; x.id !== "supply" && x.id !== "boards"; x = x.parentElement) {
    if (!x.parentElement) return "outside: " + e.outerHTML.slice(0, 80);
    path = "/" + [...x.parentElement.children].indexOf(x) + x.tagName + path;
  }
  return (e.id === "supply" || e.id === "boards" ? e.id : e.closest("#supply, #boards").id) + path;
});
"""


@pytest.mark.parametrize("game", ["puerto_rico", "port_royal", "cuba"])
def test_a_move_marks_what_it_changed_and_says_it_above_the_board(browser, tmp_path, game):
    # two people at one page (hot-seat): no bot moves, the page draws the one step alone
    app = create_app(tmp_path)
    with serving(app) as address:
        url = f"http://{address}"
        made = post_json(f"{url}/api/games", {"game": game, "seats": ["human", "human"], "seed": 3})
        gid, token = made["id"], token_of(made, 0)
        browser.get(url + made["hotseat"])
        s = _your_turn(browser, -1)
        v0 = get_json(f"{url}/api/games/{gid}?token={token}")
        before = browser.execute_script(_DRAWING)
        _click_move(browser, s["actions"][0])
        WebDriverWait(browser, 30, poll_frequency=0.02).until(
            lambda b: (
                int(b.execute_script("return document.getElementById('status').dataset.step"))
                > int(s["step"])
            )
        )
        after = browser.execute_script(_DRAWING)
        marked = browser.execute_script(_MARKED)
        last = browser.execute_script("return document.getElementById('last-move').textContent")
        v = get_json(f"{url}/api/games/{gid}?token={token}")
    assert marked, "the move changed nothing that is drawn"
    assert not [m for m in marked if m.startswith("outside")], marked
    assert "boards" not in marked and "supply" not in marked  # parts, not a whole panel
    # each marked part changed (or is new), and holds no unchanged-only detail: it is the
    # smallest such part
    for m in marked:
        assert before.get(m) != after[m], m
    # every changed element at a place both drawings have lies in a marked part
    changed = [p for p in after if p in before and before[p] != after[p]]
    leaves = [p for p in changed if not any(q.startswith(p + "/") for q in changed)]
    for p in leaves:
        assert any(p == m or p.startswith(m + "/") for m in marked), (p, marked)
    # the line above the board: the step's line of the log, then the changes of score
    line = v["log"][-1].split(". ", 1)[1]
    assert last.startswith(line), (last, line)
    rest = last[len(line) :].strip()
    gains = [
        (p, new - old)
        for p, (old, new) in enumerate(zip(v0["snapshot"]["scores"], v["snapshot"]["scores"]))
        if new != old
    ]
    if gains:
        assert (
            rest
            == "(score: "
            + ", ".join(f"seat {p} (human) {'+' if d > 0 else ''}{d}" for p, d in gains)
            + ")"
        ), rest
    else:
        assert rest == "", rest
