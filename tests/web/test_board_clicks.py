"""The moves on the board itself, in a real headless Chromium: the elements of the drawing a
legal move names (``move_targets``: a role card, a building, a ship, a harbour card, a
plantation field, ...) are outlined with the move's label as their title, a click plays that
move (the record's step and the board's numbers checked against the state), an element
several moves share marks their buttons instead, and a watcher or a seat not to act gets no
outlined element. The games are brought to their positions through the API (every seat
human), then the page of the seat to act is opened."""

from __future__ import annotations

import random
import time

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import caribsim
from caribsim.human import boards, records
from tests.web import stored
from tests.web.conftest import token_of, wait_for
from tests.web.test_browser import _check_board, _get, _post, _status, _your_turn

_TARGETS = """
const q = s => [...document.querySelectorAll(s)];
return {status: Object.assign({}, document.getElementById("status").dataset),
        targets: q(".target").map(e => ({key: e.dataset.key, actions: e.dataset.actions.split(" ").map(Number),
                                         title: e.title, id: e.id, cursor: getComputedStyle(e).cursor,
                                         outline: getComputedStyle(e).outlineStyle})),
        keyed: q("#supply [data-key], #boards [data-key]").map(e => e.dataset.key),
        buttons: q("#moves button.move").map(b => ({action: +b.dataset.action, label: b.textContent,
                                                    target: b.dataset.target || null}))};
"""


def _page(browser) -> dict:
    return browser.execute_script(_TARGETS)


def _game(server, game: str, seed: int, players: int = 3) -> dict:
    return _post(server, "/api/games", {"game": game, "seats": ["human"] * players, "seed": seed})


def _drive(server, made, seed: int, until, limit: int = 3000) -> dict:
    """Random moves through the API (every seat human) until ``until(view)`` holds at a
    decision; that view (of the seat to act's token)."""
    rng, gid = random.Random(seed), made["id"]
    tokens = [token_of(made, s) for s in range(len(made["links"]))]
    for _ in range(limit):
        probe = _get(server, f"/api/games/{gid}?token={tokens[0]}")
        assert not probe["over"], "the game ended before the position was reached"
        v = _get(server, f"/api/games/{gid}?token={tokens[probe['to_act']]}")
        if until(v):
            return v
        _post(
            server,
            f"/api/games/{gid}/move",
            {
                "token": tokens[v["to_act"]],
                "step": v["step"],
                "action": rng.choice(v["moves"])["action"],
            },
        )
    raise AssertionError("the position was not reached")


def _shared(v) -> set:
    keys = [m["target"] for m in v["moves"] if m["target"]]
    return {k for k in keys if keys.count(k) > 1}


def _open(browser, server, made, seat: int, step: int) -> dict:
    browser.get(server.url + f"/game/{made['id']}?token={token_of(made, seat)}")
    _your_turn(browser, step - 1)
    return _page(browser)


def _check_targets(page, state, game: str) -> dict:
    """Every outlined element names the legal moves of its key, as the board module maps them:
    one move (its label the element's title), or the moves sharing it; every move with a target
    has its element drawn. Returns {key: actions}."""
    board, seat = boards.get(game), state.current_player()
    expected = board.move_targets(state)
    assert set(expected) <= set(state.legal_actions())
    by_key = {}
    for a, key in expected.items():
        by_key.setdefault(key, []).append(a)
    assert [(b["action"], b["target"]) for b in page["buttons"]] == [
        (a, expected.get(a)) for a in state.legal_actions()
    ]
    assert page["targets"], "no move of this position is on the board"
    labels = {a: board.choice_label(state, a, seat=seat) for a in state.legal_actions()}
    for t in page["targets"]:
        assert t["actions"] == by_key[t["key"]]
        assert (t["cursor"], t["outline"]) == ("pointer", "solid")
        if len(t["actions"]) == 1:
            assert t["title"] == labels[t["actions"][0]]
        else:
            assert t["title"] == "choose one of: " + "; ".join(labels[a] for a in t["actions"])
    assert {t["key"] for t in page["targets"]} == set(by_key), "a move's element is not drawn"
    return by_key


def _click_key(browser, key: str) -> None:
    for _ in range(5):
        els = browser.find_elements(By.CSS_SELECTOR, f'.target[data-key="{key}"]')
        if els:
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", els[0])
            try:
                els[0].click()
                return
            except Exception:  # redrawn between finding and clicking
                continue
    raise AssertionError(f"no clickable element {key}")


def _played(browser, server, gid, step: int, action: int, before, game: str) -> None:
    """The click played exactly ``action`` at ``step``: the record's step, the state after it
    (as the rules give it from ``before``) and the page's numbers."""
    wait_for(lambda: int(_status(browser)["step"]) > step, 30, "the move to be played")
    rec = stored.record(server.folder, gid)
    assert rec["steps"][step]["action"] == action and len(rec["steps"]) > step
    expected = before.clone()
    expected.apply_action(action)
    assert records.replay(rec, upto=step + 1).to_dict() == expected.to_dict()
    assert records.replay(rec, upto=step).to_dict() == before.to_dict()
    _check_board(browser, server, gid, game)
    _check_numbers(browser, server, gid, game)


_NUMBERS = """
const q = s => [...document.querySelectorAll(s)], n = e => +e.textContent;
const read = {
  puerto_rico: () => ({left: q("[id^=pr-supply-]").map(e => [e.id.slice(10), +e.dataset.left]),
                       colonists: q("[id^=pr-building-], [id^=pr-island-]").map(e => [e.id, +e.dataset.colonists])}),
  port_royal: () => ({coins: q("[id^=pry-coins-]").map(n), vp: q("[id^=pry-vp-]").map(n),
                      draw: n(document.getElementById("pry-draw-pile")),
                      harbour: q("#pry-harbour [data-card]").map(e => e.dataset.card)}),
  cuba: () => ({pesos: q("[id^=cuba-pesos-]").map(n), vp: q("[id^=cuba-vp-]").map(n),
                pawns: q("[id^=cuba-pawn-]").map(e => e.textContent)})};
return Object.assign({step: +document.getElementById("status").dataset.step}, read[arguments[0]]());
"""


def _check_numbers(browser, server, gid, game: str) -> None:
    """The numbers of the drawn elements (the supply's copies left, colonists, coins, pesos...),
    at the step the page shows (read at once), against the state the record replays to."""
    page = browser.execute_script(_NUMBERS, game)
    state = records.replay(stored.record(server.folder, gid), upto=page.pop("step"))
    d = state.to_dict()
    if game == "puerto_rico":
        assert sorted(page["left"]) == sorted(
            [b, d["buildings"][b]] for b in boards.get(game).in_play(d)
        )
        drawn = dict(page["colonists"])
        for seat, b in enumerate(d["boards"]):
            for k, n in b["buildings"].items():
                assert drawn[f"pr-building-{seat}-{k}"] == n
            for k, t in b["island"].items():
                if t["tiles"]:
                    assert drawn[f"pr-island-{seat}-{k}"] == t.get("colonists", 0)
    elif game == "port_royal":
        snap = boards.get(game).snapshot(state)
        assert page == {
            "coins": [p["coins"] for p in snap["players"]],
            "vp": [p["vp"] for p in snap["players"]],
            "draw": snap["draw_pile"],
            "harbour": snap["harbour"],
        }
    else:
        assert page == {
            "pesos": [b["pesos"] for b in d["boards"]],
            "vp": [b["vp"] for b in d["boards"]],
            "pawns": [b["pawn"] for b in d["boards"]],
        }


def _nobody_clicks(browser, server, gid, path: str, step: int) -> None:
    """A page that may not move: no outlined element, and a click on a drawn element plays
    nothing."""
    browser.get(server.url + path)
    WebDriverWait(browser, 30).until(lambda b: _status(b)["step"] == str(step))
    page = _page(browser)
    assert page["targets"] == [] and page["buttons"] == [] and page["keyed"]
    el = browser.find_element(By.CSS_SELECTOR, "#supply [data-key], #boards [data-key]")
    browser.execute_script("arguments[0].click()", el)
    time.sleep(0.2)
    assert _status(browser)["step"] == str(step)
    assert len(stored.record(server.folder, gid)["steps"]) == step


@pytest.mark.parametrize(
    "game, seed, shared_first",
    [
        ("puerto_rico", 3, False),
        ("port_royal", 4, False),
        ("cuba", 5, False),
        ("puerto_rico", 9, True),
        ("port_royal", 9, True),
        ("cuba", 11, True),
    ],
)
def test_a_board_click_plays_exactly_its_move(browser, server, game, seed, shared_first):
    """A position with board moves (one with a shared element when ``shared_first``): the
    outlined elements against ``move_targets``, a watcher and the seat not to act see none,
    then a click plays its move (or, shared, marks the buttons of its moves and one is
    clicked)."""
    made = _game(server, game, seed)
    gid = made["id"]
    if shared_first:
        v = _drive(server, made, seed, lambda v: _shared(v))
    else:
        v = _drive(
            server,
            made,
            seed,
            lambda v: len({m["target"] for m in v["moves"] if m["target"]}) > 1 and not _shared(v),
        )
    step, seat = v["step"], v["to_act"]
    before = records.replay(stored.record(server.folder, gid))
    other = (seat + 1) % 3
    _nobody_clicks(browser, server, gid, f"/game/{gid}", step)
    _nobody_clicks(browser, server, gid, f"/game/{gid}?token={token_of(made, other)}", step)
    page = _open(browser, server, made, seat, step)
    by_key = _check_targets(page, before, game)
    if shared_first:
        key = sorted(_shared(v))[0]
        _click_key(browser, key)
        picked = WebDriverWait(browser, 10).until(
            lambda b: b.find_elements(By.CSS_SELECTOR, "#moves button.move.picked")
        )
        assert sorted(int(b.get_attribute("data-action")) for b in picked) == sorted(by_key[key])
        assert _status(browser)["step"] == str(step)  # nothing played by the click itself
        assert browser.switch_to.active_element == picked[0]
        action = int(picked[-1].get_attribute("data-action"))
        picked[-1].click()
    else:
        key = sorted(by_key)[seed % len(by_key)]
        (action,) = by_key[key]
        _click_key(browser, key)
    _played(browser, server, gid, step, action, before, game)


def test_puerto_rico_played_by_board_clicks_only(browser, server):
    """Seat 0 against two random bots makes its first eight decisions on the board (roles,
    plantations, buildings, colonists, ...; the last one from the keyboard), never a move
    button; after each the record holds that move and the board's numbers are the state's."""
    made = _post(
        server,
        "/api/games",
        {"game": "puerto_rico", "seats": ["human", "random", "random"], "seed": 11},
    )
    gid, rng = made["id"], random.Random(11)
    browser.get(server.url + made["links"][0]["url"])
    last, kinds = -1, set()
    for turn in range(8):
        s = _your_turn(browser, last)
        assert s.get("over") != "true"
        step = int(s["step"])
        before = records.replay(stored.record(server.folder, gid), upto=step)
        by_key = _check_targets(_page(browser), before, "puerto_rico")
        single = sorted(k for k, acts in by_key.items() if len(acts) == 1)
        assert single, f"no single move on the board at step {step}"
        key = rng.choice(single)
        kinds.add(key.split("-")[0])
        if turn == 7:  # from the keyboard: the element focused, then Enter
            el = browser.find_element(By.CSS_SELECTOR, f'.target[data-key="{key}"]')
            browser.execute_script("arguments[0].focus()", el)
            assert browser.switch_to.active_element == el
            el.send_keys(Keys.ENTER)
        else:
            _click_key(browser, key)
        _played(browser, server, gid, step, by_key[key][0], before, "puerto_rico")
        last = step
    assert len(kinds) >= 3, kinds  # several kinds of element were clicked


def test_the_replay_viewer_has_no_outlined_element(browser, tmp_path):
    """The viewer draws the same elements (their data-key) but nothing is outlined or
    clickable there."""
    from caribsim.human import viewer

    st = caribsim.load_game("puerto_rico", players=3).new_initial_state(seed=2)
    path = tmp_path / "replay.html"
    viewer.write_html(records.record_game(st, 2), path)
    text = path.read_text()
    assert ".target{" not in text and "markTargets" not in text
    browser.get(path.as_uri())
    WebDriverWait(browser, 30).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, "#supply [data-key]")
    )
    assert (
        browser.execute_script("return document.querySelectorAll('.target, [role=button]').length")
        == 0
    )
    cursor = browser.execute_script(
        "return getComputedStyle(document.querySelector('[data-key]')).cursor"
    )
    assert cursor != "pointer"


# the kinds of drawn element (a key's first word) that random games reach
_KINDS = {
    "puerto_rico": {
        "role",
        "supply",
        "plantation",
        "quarry",
        "island",
        "building",
        "ship",
        "good",
        "goods",
        "trading",
    },
    "port_royal": {"harbour", "draw", "pending", "expedition"},
    "cuba": {"cell", "pool", "hand", "supply", "dock", "market"},
}


@pytest.mark.parametrize(
    "game, options",
    [("puerto_rico", {}), ("puerto_rico", {"expansion": True}), ("port_royal", {}), ("cuba", {})],
)
def test_every_target_of_whole_games_is_drawn(browser, tmp_path, game, options):
    """The keys of ``move_targets`` and the drawing's data-keys agree: along three whole random
    games, at every decision, each move's key is an element of the board the viewer draws
    there."""
    from caribsim.human import viewer

    kinds = set()
    for seed in (21, 22, 23):
        st, rng = (
            caribsim.load_game(game, players=3, **options).new_initial_state(seed=seed),
            random.Random(seed),
        )
        wanted = []
        while not st.is_terminal():
            if st.is_chance_node():
                st.resolve_chance()
                continue
            keys = sorted(set(boards.get(game).move_targets(st).values()))
            if keys:
                wanted.append([len(st.history()), keys])
                kinds.update(k.split("-")[0] for k in keys)
            st.apply_action(rng.choice(st.legal_actions()))
        path = tmp_path / f"game{seed}.html"
        viewer.write_html(records.record_game(st, seed), path)
        browser.get(path.as_uri())
        missing = browser.execute_script(
            """
          const out = [];
          for (const [i, keys] of arguments[0]) {
            show(i);
            const drawn = new Set([...document.querySelectorAll("#supply [data-key], #boards [data-key]")].map(e => e.dataset.key));
            const miss = keys.filter(k => !drawn.has(k));
            if (miss.length) out.push([i, miss]);
          }
          return out;""",
            wanted,
        )
        assert missing == [], (seed, missing[:5])
    assert kinds >= _KINDS[game], _KINDS[game] - kinds
