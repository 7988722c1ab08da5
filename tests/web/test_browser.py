"""The lobby and the game page in a real headless Chromium against a uvicorn server on a
loopback port: games made in the lobby and played to their end by clicking the move buttons
(the board's numbers checked against the replayed record's state on the way), a second tab
that joins by its seat's link and sees the moves live, a wrong token refused, hot-seat."""

from __future__ import annotations

import json
import random
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

import caribsim
from caribsim.human import boards, lang, records, viewer
from tests.web import stored
from tests.web.conftest import serving, token_of


def _get(server, path):
    with urllib.request.urlopen(server.url + path, timeout=30) as r:
        return json.load(r)


def _post(server, path, body):
    req = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def _status(browser) -> dict:
    return browser.execute_script(
        "return Object.assign({}, document.getElementById('status').dataset)"
    )


_TURN = """const b = [...document.querySelectorAll('#moves button.move')].map(b => +b.dataset.action);
return Object.assign({actions: b}, document.getElementById('status').dataset)"""


def _your_turn(browser, after: int) -> dict:
    """Wait until the page shows a step after ``after`` with move buttons, or the game over;
    the status and the buttons' actions, read at once."""

    def ready(_):
        s = browser.execute_script(_TURN)
        return s if s.get("over") == "true" or (int(s["step"]) > after and s["actions"]) else None

    return WebDriverWait(browser, 60, poll_frequency=0.02).until(ready)


def _click_move(browser, action: int) -> None:
    for _ in range(5):  # an update may redraw the buttons between finding and clicking
        try:
            browser.find_element(
                By.CSS_SELECTOR, f'#moves button.move[data-action="{action}"]'
            ).click()
            return
        except StaleElementReferenceException:
            continue
    raise AssertionError(f"the button of action {action} kept being redrawn")


def _text(browser, element_id: str) -> str:
    return browser.find_element(By.ID, element_id).text


_PAGE_NUMBERS = """
const q = s => [...document.querySelectorAll(s)], n = id => document.getElementById(id);
return {status: Object.assign({}, n("status").dataset), log: q("#log li").length,
        totals: q("[id^=total-]").map(e => +e.textContent),
        buttons: q("#moves button.move").map(b => [+b.dataset.action, b.textContent]),
        pr: q("[id^=doubloons-]").map((e, i) => [+e.textContent, +n("vp-" + i).textContent, +n("sanjuan-" + i).textContent])};
"""


def _check_board(browser, server, gid: str, game: str) -> None:
    """The page's numbers, at the step it shows (read at once), against the state the record
    replays to."""
    page = browser.execute_script(_PAGE_NUMBERS)
    step = int(page["status"]["step"])
    state = records.replay(stored.record(server.folder, gid), upto=step)
    assert int(page["status"]["toAct"]) == state.current_player()
    assert page["totals"] == [s["total"] if isinstance(s, dict) else s for s in state.scores()]
    seat, board = state.current_player(), boards.get(game)
    shown = [(a, board.choice_label(state, a, seat=seat)) for a in state.legal_actions()]
    assert [tuple(b) for b in page["buttons"]] == (shown if page["buttons"] else [])
    if game == "puerto_rico":
        assert page["pr"] == [
            [b["doubloons"], b["vp_chips"], b["san_juan"]] for b in state.to_dict()["boards"]
        ]
    assert page["log"] == step


def _play_to_the_end(browser, server, gid, game, seed, check_every=12) -> int:
    """Click a (seeded) random move at each turn of the page's seats until the game ends;
    returns the decisions clicked."""
    rng, last, clicks = random.Random(seed), -1, 0
    while True:
        s = _your_turn(browser, last)
        if s.get("over") == "true":
            return clicks
        if clicks % check_every == 0:
            _check_board(browser, server, gid, game)
        last = int(s["step"])
        _click_move(browser, rng.choice(s["actions"]))
        clicks += 1


def _check_game_over(browser, server, gid) -> dict:
    rec = _get(server, f"/api/games/{gid}/record")
    state = records.replay(rec)
    assert state.is_terminal() and rec["final"]["scores"] == state.scores()
    totals = [s["total"] if isinstance(s, dict) else s for s in state.scores()]
    panel = browser.find_element(By.ID, "game-over")
    assert panel.is_displayed() and "Game over" in panel.text
    for p, total in enumerate(totals):
        row = browser.find_element(By.ID, f"final-{p}")
        assert int(row.get_attribute("data-total")) == total
        assert float(row.get_attribute("data-return")) == state.returns()[p]
    # why it ended: the board's end_reason over the game's states (tests/human/test_end_reason)
    why = boards.get(rec["game"]).end_reason(records.states(rec), lang.translator(rec["game"]))
    assert browser.find_element(By.ID, "ended").text == why
    assert browser.find_elements(By.CSS_SELECTOR, "#moves button.move") == []
    assert rec == stored.record(server.folder, gid)
    assert (
        browser.find_element(By.ID, "replay-link").get_attribute("href")
        == f"{server.url}/replay/{gid}"
    )
    return rec


def _opened_game(browser, server) -> str:
    """The id of the game whose page the browser went to (from the lobby's create)."""
    WebDriverWait(browser, 30).until(lambda b: "/game/" in b.current_url)
    return urllib.parse.urlsplit(browser.current_url).path.rsplit("/", 1)[1]


def _lobby_game(browser, server, game, seats, seed) -> str:
    """Make a game in the lobby's form; its id. The game then opens at the one person's seat
    (or the watcher's page of a game of bots); with several people the lobby shows the
    seats' links."""
    browser.get(server.url + "/")
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#game option"))
    Select(browser.find_element(By.ID, "game")).select_by_value(game)
    Select(browser.find_element(By.ID, "players")).select_by_visible_text(str(len(seats)))
    for i, spec in enumerate(seats):
        Select(browser.find_element(By.ID, f"kind-{i}")).select_by_value(
            "human" if spec == "human" else "bot"
        )
        if spec != "human":
            box = browser.find_element(By.ID, f"bot-{i}")
            box.clear()
            box.send_keys(spec)
    browser.find_element(By.ID, "seed").send_keys(str(seed))
    browser.find_element(By.ID, "create").click()
    if seats.count("human") <= 1:
        gid = _opened_game(browser, server)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(browser.current_url).query)
        assert ("token" in query) == ("human" in seats), browser.current_url
    else:
        created = WebDriverWait(browser, 30).until(
            lambda b: (
                b.find_element(By.ID, "created").is_displayed() and b.find_element(By.ID, "created")
            )
        )
        gid = created.text.split()[1].rstrip(":")
    rec = stored.record(server.folder, gid)
    assert (rec["game"], rec["seed"], rec["players"]) == (game, seed, seats)
    return gid


@pytest.mark.parametrize("game", ["puerto_rico", "port_royal", "cuba"])
def test_one_person_against_two_random_bots_to_the_end(browser, server, game):
    gid = _lobby_game(browser, server, game, ["human", "random", "random"], seed=17)
    # "create" opened the person's seat; the lobby lists the unfinished game with this
    # browser's link to resume it, which plays on
    browser.get(server.url + "/")
    row = WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, f"game-{gid}"))
    assert "resume seat 0" in row.text
    row.find_element(By.CSS_SELECTOR, "a.resume").click()
    clicks = _play_to_the_end(browser, server, gid, game, seed=1)
    rec = _check_game_over(browser, server, gid)
    assert clicks == sum(1 for s in rec["steps"] if s["player"] == 0) > 10
    assert {s["player"] for s in rec["steps"]} >= {0, 1, 2}  # the bots moved by themselves


def _game_files(folder) -> list:
    """The stored games' ids (not their moves, which another game's bots may be storing this
    instant)."""
    return sorted(stored.everything(folder))


def test_the_lobby_says_why_it_refuses_a_game(browser, server):
    before = _game_files(server.folder)
    browser.get(server.url + "/")
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#game option"))
    box = browser.find_element(By.ID, "bot-1")
    box.clear()
    box.send_keys("genius")
    browser.find_element(By.ID, "create").click()
    error = WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "error").text)
    assert error.startswith("seat 1: unknown bot spec 'genius'")
    assert not browser.find_element(By.ID, "created").is_displayed()
    assert _game_files(server.folder) == before


def test_the_lobby_pages_through_the_games(browser, tmp_path):
    """Past a page of games the lobby shows the lists a page at a time (``?limit=``), newest
    first, with newer/older buttons that turn the pages of both lists."""
    from caribsim.web.app import create_app
    from caribsim.web.limits import Policy

    app = create_app(tmp_path / "games", bot_delay=30, policy=Policy(creates_per_minute=100))
    with serving(app) as address:
        here = type("Here", (), {"url": f"http://{address}"})
        for seed in range(7):
            _post(
                here,
                "/api/games",
                {"game": "port_royal", "seats": ["human", "human"], "seed": seed},
            )
        newest_first = [g["id"] for g in _get(here, "/api/games")["games"]]
        assert len(newest_first) == 7

        def shown():  # read in one script: the table is redrawn whole
            return browser.execute_script(
                "return [...document.querySelectorAll('#games tbody tr[id]')]"
                ".map(r => r.id.slice(5))"
            )

        def page(expected_ids, label):
            WebDriverWait(browser, 30).until(
                lambda b: shown() == expected_ids and b.find_element(By.ID, "page-of").text == label
            )
            return (
                browser.find_element(By.ID, "newer").is_enabled(),
                browser.find_element(By.ID, "older").is_enabled(),
            )

        browser.get(here.url + "/?limit=3")
        assert page(newest_first[:3], "page 1 of 3") == (False, True)
        browser.save_screenshot(str(tmp_path / "lobby-pages.png"))
        browser.find_element(By.ID, "older").click()
        assert page(newest_first[3:6], "page 2 of 3") == (True, True)
        browser.find_element(By.ID, "older").click()
        assert page(newest_first[6:], "page 3 of 3") == (True, False)
        browser.find_element(By.ID, "newer").click()
        assert page(newest_first[3:6], "page 2 of 3") == (True, True)
        # one page: no pager
        browser.get(here.url + "/")
        WebDriverWait(browser, 30).until(lambda b: len(shown()) == 7)
        assert not browser.find_element(By.ID, "pages").is_displayed()


def test_a_second_tab_joins_by_its_link_sees_the_moves_live_and_a_wrong_token_is_refused(
    browser, server
):
    made = _post(
        server,
        "/api/games",
        {"game": "puerto_rico", "seats": ["human", "human", "random"], "seed": 23},
    )
    gid, t0, t1 = made["id"], token_of(made, 0), token_of(made, 1)
    browser.get(server.url + f"/game/{gid}?token={t0}")
    first = _your_turn(browser, -1)
    tab_a = browser.current_window_handle
    browser.switch_to.new_window("tab")
    tab_b = browser.current_window_handle
    browser.get(server.url + f"/game/{gid}?token={t1}")
    WebDriverWait(browser, 30).until(lambda b: _status(b).get("step") == first["step"])
    assert browser.find_elements(By.CSS_SELECTOR, "#moves button.move") == []  # seat 0 is to act
    browser.execute_script("window.notReloaded = true")
    try:
        for _ in range(6):  # moves in one tab appear in the other, both ways
            s = WebDriverWait(browser, 30).until(
                lambda b: (lambda st: st if st["toAct"] in ("0", "1") else None)(_status(b))
            )
            mover, other = (tab_a, tab_b) if s["toAct"] == "0" else (tab_b, tab_a)
            browser.switch_to.window(mover)
            s = _your_turn(browser, int(s["step"]) - 1)
            played = browser.execute_script(
                "return document.querySelector('#moves button.move').textContent"
            )
            _click_move(browser, s["actions"][0])
            browser.switch_to.window(other)
            WebDriverWait(browser, 30).until(
                lambda b, s=s: int(_status(b)["step"]) > int(s["step"])
            )
            line = browser.execute_script(
                f"return document.querySelectorAll('#log li')[{s['step']}].textContent"
            )
            assert line.startswith("seat ") and line.endswith(played.split(":")[0])
            WebDriverWait(browser, 30).until(
                lambda b: _status(b)["toAct"] != "2"
            )  # the bot's turn passes
            _check_board(browser, server, gid, "puerto_rico")
        browser.switch_to.window(tab_b)
        assert browser.execute_script("return window.notReloaded") is True
        # a watcher (no token) sees the same board and no move
        shown = _status(browser)["step"]
        browser.get(server.url + f"/game/{gid}")
        WebDriverWait(browser, 30).until(lambda b: _status(b)["step"] == shown)
        assert browser.find_elements(By.CSS_SELECTOR, "#moves button.move") == []
        assert browser.find_element(By.ID, "error").text == ""
        _check_board(browser, server, gid, "puerto_rico")
        # a forged token: the page says so and offers no move; the API refuses it too
        browser.get(server.url + f"/game/{gid}?token=forged{t1[:5]}")
        error = WebDriverWait(browser, 30).until(
            lambda b: b.find_element(By.ID, "error").text and b.find_element(By.ID, "error")
        )
        assert "this token belongs to no seat of this game" in error.text
        assert browser.find_elements(By.CSS_SELECTOR, "#moves button.move") == []
        with pytest.raises(urllib.error.HTTPError) as refused:
            _get(server, f"/api/games/{gid}?token=forged{t1[:5]}")
        assert refused.value.code == 403
    finally:
        for handle in browser.window_handles:
            if handle != tab_a:
                browser.switch_to.window(handle)
                browser.close()
        browser.switch_to.window(tab_a)


def test_hot_seat_two_people_in_one_tab_to_the_end(browser, server):
    gid = _lobby_game(browser, server, "puerto_rico", ["human", "human", "random"], seed=31)
    browser.find_element(By.ID, "hotseat-link").click()
    clicks = _play_to_the_end(browser, server, gid, "puerto_rico", seed=2, check_every=25)
    rec = _check_game_over(browser, server, gid)
    humans = [s["player"] for s in rec["steps"] if s["player"] in (0, 1)]
    assert clicks == len(humans) and set(humans) == {0, 1}


def test_undo_and_hint_buttons(browser, server):
    made = _post(
        server,
        "/api/games",
        {"game": "puerto_rico", "seats": ["human", "random", "random"], "seed": 5},
    )
    gid, tok = made["id"], token_of(made, 0)
    browser.get(server.url + f"/game/{gid}?token={tok}")
    s = _your_turn(browser, -1)
    assert browser.find_element(By.ID, "undo").get_attribute("disabled")  # no decision yet
    where = {e: browser.find_element(By.ID, e).rect["y"] for e in ("moves", "scores", "boards")}
    browser.find_element(By.ID, "hint").click()
    rows = WebDriverWait(browser, 60).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, "#hint-panel tr.hint-move")
    )
    # the hint opens over the page's corner: nothing of the board moves down
    assert {e: browser.find_element(By.ID, e).rect["y"] for e in where} == where
    hint = _post(server, f"/api/games/{gid}/hint", {"token": tok, "step": int(s["step"])})
    assert [
        (int(r.get_attribute("data-action")), float(r.get_attribute("data-share"))) for r in rows
    ] == [(m["action"], m["share"]) for m in hint["moves"]]
    # ranked, each with the win estimate and the expected score margin after it, under the
    # columns' names
    heads = browser.find_elements(By.CSS_SELECTOR, "#hint-panel th")
    assert [h.text for h in heads] == [
        "",
        "move",
        "visits",
        "win",
        "points against the best other seat",
    ]
    for i, (r, m) in enumerate(zip(rows, hint["moves"])):
        cells = [c.text for c in r.find_elements(By.TAG_NAME, "td")]
        assert cells[0] == f"{i + 1}." and cells[1] == m["label"]
        win = re.fullmatch(r"(\d+)%", cells[3])
        assert win and abs(int(win.group(1)) - 100 * m["win"]) <= 0.5 + 1e-9, cells[3]
        margin = re.fullmatch(r"[+-]?\d+\.\d", cells[4])
        assert margin and abs(float(cells[4]) - m["margin"]) <= 0.05 + 1e-9, cells[4]
        assert (m["margin"] > 0) == cells[4].startswith("+")
    browser.find_element(By.ID, "hint-close").click()
    assert not browser.find_element(By.ID, "hint-panel").is_displayed()
    # two decisions, then undo: back to the second one, with the same buttons
    s = _your_turn(browser, -1)
    _click_move(
        browser,
        int(
            browser.find_element(By.CSS_SELECTOR, "#moves button.move").get_attribute("data-action")
        ),
    )
    second = _your_turn(browser, int(s["step"]))
    labels = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#moves button.move")]
    _click_move(
        browser,
        int(
            browser.find_element(By.CSS_SELECTOR, "#moves button.move").get_attribute("data-action")
        ),
    )
    _your_turn(browser, int(second["step"]))
    browser.find_element(By.ID, "undo").click()
    WebDriverWait(browser, 30).until(lambda b: _status(b)["step"] == second["step"])
    assert [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#moves button.move")] == labels
    assert len(stored.record(server.folder, gid)["steps"]) == int(second["step"])


def _last_decision_record(name, players, seed):
    """A random game's record and the step of its last decision (a person's move ends it)."""
    rng = random.Random(seed)
    state = caribsim.load_game(name, players=players).new_initial_state(seed=seed)
    while not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    record = records.record_game(state, seed)
    last = max(i for i, step in enumerate(record["steps"]) if step["player"] >= 0)
    return record, last


@pytest.mark.parametrize("name", ["puerto_rico", "port_royal", "cuba"])
def test_an_undo_at_game_over_asks_before_it_reopens_the_game(browser, server, name):
    """A finished game is reopened only after a second, explicit click: the undo button asks
    first, "keep the game finished" leaves it over and stored as it was, "undo and play on"
    takes the last move back."""
    record, last = _last_decision_record(name, 2, seed=21)
    seats = ["random", "random"]
    seat = record["steps"][last]["player"]
    seats[seat] = "human"
    made = _post(server, "/api/games", {"record": record, "step": last, "seats": seats})
    gid, tok = made["id"], token_of(made, seat)
    browser.get(server.url + f"/game/{gid}?token={tok}")
    s = _your_turn(browser, last - 1)
    title = f"caribsim: {lang.GAME_NAMES[name]}"
    assert browser.title == f"your move, seat {seat} (human) | {title}"  # the tab says so
    assert record["steps"][last]["action"] in s["actions"]
    _click_move(browser, record["steps"][last]["action"])  # the move that ended the game
    WebDriverWait(browser, 30).until(lambda b: _status(b)["over"] == "true")
    ended = len(stored.record(server.folder, gid)["steps"])
    assert browser.title == title
    confirm = browser.find_element(By.ID, "undo-confirm")
    assert not confirm.is_displayed()
    browser.find_element(By.ID, "undo").click()
    assert confirm.is_displayed() and "game is over" in confirm.text
    assert _status(browser)["over"] == "true"  # the click alone undid nothing
    browser.find_element(By.ID, "undo-no").click()
    assert not confirm.is_displayed() and _status(browser)["over"] == "true"
    assert len(stored.record(server.folder, gid)["steps"]) == ended
    browser.find_element(By.ID, "undo").click()
    browser.find_element(By.ID, "undo-yes").click()
    WebDriverWait(browser, 30).until(lambda b: _status(b)["over"] == "false")
    assert int(_status(browser)["step"]) == last
    assert len(stored.record(server.folder, gid)["steps"]) == last
    assert not confirm.is_displayed()


def test_a_closed_tab_and_a_restarted_server_lose_nothing(browser, tmp_path):
    """The tab is closed and opened again, then the server stops and a new one starts over the
    same folder on the same port: the open page reconnects by itself and the game goes on."""
    from caribsim.web.app import create_app
    from tests.web.conftest import BOT_DELAY, Server, serving

    folder = tmp_path / "games"
    with serving(create_app(folder, bot_delay=BOT_DELAY)) as address:
        server = Server(f"http://{address}", folder, None)
        made = _post(
            server,
            "/api/games",
            {"game": "puerto_rico", "seats": ["human", "random", "random"], "seed": 41},
        )
        gid, url = made["id"], server.url + made["links"][0]["url"]
        browser.get(url)
        last = -1
        for _ in range(3):
            s = _your_turn(browser, last)
            last = int(s["step"])
            _click_move(browser, s["actions"][-1])
        before = _your_turn(browser, last)
        browser.get("about:blank")  # the tab goes away
        browser.get(url)
        again = _your_turn(browser, -1)
        assert (again["step"], again["actions"]) == (before["step"], before["actions"])
        _check_board(browser, server, gid, "puerto_rico")
    # the server is down: the page keeps its board and waits
    assert _status(browser)["step"] == before["step"]
    with serving(create_app(folder, bot_delay=BOT_DELAY), port=int(address.rsplit(":", 1)[1])):
        s = _your_turn(browser, -1)
        assert (s["step"], s["actions"]) == (before["step"], before["actions"])
        first = int(s["step"])
        _click_move(browser, s["actions"][0])  # the game goes on after the restart
        # the bots' moves reach the page only over its socket: once they show, it has reconnected
        bots_moved = (
            "return [...document.querySelectorAll('#log li')].slice(arguments[0])"
            ".some(li => /\\(random\\)/.test(li.textContent))"
        )
        last = first
        while True:  # the person's next turns until a bot has moved
            s = _your_turn(browser, last)
            if browser.execute_script(bots_moved, first):
                break
            last = int(s["step"])
            _click_move(browser, s["actions"][0])
        _check_board(browser, server, gid, "puerto_rico")
        assert stored.record(folder, gid)["steps"][first]["action"] == before["actions"][0]


def test_a_record_is_played_on_from_a_step_in_the_lobby(browser, server, tmp_path):
    """Play from here: a finished record opened in the lobby at step 40, seat 0 played on by
    clicking from that position to the end."""
    game = caribsim.load_game("puerto_rico", players=3)
    st, rng = game.new_initial_state(seed=23), random.Random(23)
    while not st.is_terminal():
        st.resolve_chance() if st.is_chance_node() else st.apply_action(
            rng.choice(st.legal_actions())
        )
    rec = records.record_game(st, 23)
    path = tmp_path / "old.json"
    records.save(rec, path)
    browser.get(server.url + "/")
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#game option"))
    Select(browser.find_element(By.ID, "players")).select_by_visible_text("3")
    for i in (1, 2):
        Select(browser.find_element(By.ID, f"kind-{i}")).select_by_value("bot")
        box = browser.find_element(By.ID, f"bot-{i}")
        box.clear()
        box.send_keys("random")
    browser.find_element(By.ID, "record-file").send_keys(str(path))
    browser.find_element(By.ID, "record-step").send_keys("40")
    browser.find_element(By.ID, "from-record").click()
    gid = _opened_game(browser, server)  # the one person's seat
    saved = stored.record(server.folder, gid)
    assert saved["steps"][:40] == rec["steps"][:40] and saved["seed"] == 23
    s = _your_turn(browser, 39)
    assert int(s["step"]) >= 40
    _check_board(browser, server, gid, "puerto_rico")
    _play_to_the_end(browser, server, gid, "puerto_rico", seed=5)
    final = _check_game_over(browser, server, gid)
    assert final["steps"][:40] == rec["steps"][:40]


def test_the_lobby_says_why_a_record_is_refused(browser, server, tmp_path):
    path = tmp_path / "not-a-record.json"
    path.write_text('{"game": "puerto_rico"}')
    browser.get(server.url + "/")
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#game option"))
    browser.find_element(By.ID, "from-record").click()
    assert (
        WebDriverWait(browser, 10).until(lambda b: b.find_element(By.ID, "error").text)
        == "choose a record file (.json) first"
    )
    browser.find_element(By.ID, "record-file").send_keys(str(path))
    browser.find_element(By.ID, "from-record").click()
    WebDriverWait(browser, 10).until(
        lambda b: "record must be a game record" in b.find_element(By.ID, "error").text
    )


@pytest.mark.parametrize("lang", ["en", "cs"])
def test_titles_and_the_lobby_name_the_games_as_printed(browser, server, lang, tmp_path):
    """Every name a person reads is the game's printed name ("Puerto Rico", in Czech "Kuba"
    for Cuba), never its id ("puerto_rico") nor the id in lower-case words ("puerto rico"):
    the lobby's lists and its game menu, a game page's and a replay's title."""
    printed = {
        "en": {"puerto_rico": "Puerto Rico", "port_royal": "Port Royal", "cuba": "Cuba"},
        "cs": {"puerto_rico": "Puerto Rico", "port_royal": "Port Royal", "cuba": "Kuba"},
    }[lang]
    made = {
        g: _post(server, "/api/games", {"game": g, "players": 2, "seats": ["human", "human"]})
        for g in printed
    }
    browser.get(server.url + f"/?lang={lang}")
    WebDriverWait(browser, 30).until(
        lambda b: all(b.find_elements(By.ID, f"game-{m['id']}") for m in made.values())
    )
    for g, m in made.items():
        cell = browser.find_element(By.CSS_SELECTOR, f"#game-{m['id']} td")
        assert cell.text == printed[g]
    menu = [o.text for o in Select(browser.find_element(By.ID, "game")).options]
    assert sorted(menu) == sorted(printed.values())
    for g, m in made.items():
        browser.get(server.url + f"/game/{m['id']}?lang={lang}")
        assert browser.title == f"caribsim: {printed[g]}"
    for g in printed:  # a replay (the server's shows finished games only: the viewer's own)
        record, _ = _last_decision_record(g, 2, seed=3)
        page = tmp_path / f"{g}.html"
        page.write_text(viewer.render(record, lang), encoding="utf-8")
        browser.get(page.as_uri())
        assert printed[g] in browser.title and g not in browser.title, browser.title


@pytest.mark.parametrize("name", ["puerto_rico", "port_royal", "cuba"])
def test_your_board_comes_first_and_is_marked_you(browser, server, name):
    """Four players, this browser holds the last seat: its board is drawn first (before seat
    0's, on the first row) and says "you"; no other board does."""
    seats = ["random", "random", "random", "human"]
    made = _post(server, "/api/games", {"game": name, "players": 4, "seats": seats, "seed": 4})
    browser.get(server.url + f"/game/{made['id']}?token={token_of(made, 3)}")
    WebDriverWait(browser, 30).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, "#boards > .board[data-you]")
    )
    # one read of every board (the bots' moves redraw them: elements found before a redraw
    # go stale)
    boards = browser.execute_script(_BOARDS)
    assert len(boards) == 4
    assert [b["you"] for b in boards] == [None, None, None, "1"]
    assert [("you" in b["heading"].split()) for b in boards] == [False, False, False, True]
    first = min(range(4), key=lambda i: (boards[i]["top"], boards[i]["left"]))
    assert first == 3


_BOARDS = """return [...document.querySelectorAll('#boards > .board')].map(e => {
    const r = e.getBoundingClientRect(), h = e.querySelector('h3');
    return {you: e.getAttribute('data-you'), heading: h ? h.innerText : '', top: r.top,
            left: r.left};
});"""
