"""The web app in Czech (serve --lang cs) in a real headless Chromium: for each game a person's
page against bots has no English word of the same page in English (?lang=en), its move
buttons carry the terminal's Czech labels and a click plays the button's action, the board's
numbers are the state's; the game-over panel, the refusals, the Czech lobby making a game;
a bad language on the command line, in a page's address and in an API request."""

from __future__ import annotations

import html
import json
import random
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

import caribsim
from caribsim.human import boards, lang, records, viewer
from caribsim.web.app import create_app
from tests.web import stored
from tests.web.conftest import BOT_DELAY, HINT_ITERATIONS, SERVE_ENV, serving, token_of
from tests.web.test_browser import _click_move, _your_turn

MSG = {r["key"]: r["text"] for r in lang.rows() if r["kind"] == "msg"}
# English words that are Czech words too (indigo, rum, seed, San Juan, ...) are not "left over"
CZECH_WORDS = {w.lower() for r in lang.rows() for w in re.findall(r"[A-Za-z]+", r["text"])}
IGNORE = {"random", "I", "II", "III", "IV"}  # a bot's name; Cuba's law stacks


def words(text) -> set:
    return set(re.findall(r"(?<![A-Za-z0-9_])[A-Za-z]+(?![A-Za-z0-9_])", text))


def english_left(english: str, czech: str) -> set:
    """The words of the English page that are no Czech words yet stand on the Czech page."""
    return {
        w for w in words(english) if w.lower() not in CZECH_WORDS and w not in IGNORE and len(w) > 1
    } & words(czech)


def _request(url, body=None):
    req = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _api(url, body=None):
    status, text = _request(url, body)
    assert status in (200, 201), text
    return json.loads(text)


@pytest.fixture(scope="module")
def cs(tmp_path_factory):
    """A server whose pages are Czech: its address and games folder."""
    folder = tmp_path_factory.mktemp("games")
    app = create_app(folder, bot_delay=BOT_DELAY, hint_iterations=HINT_ITERATIONS, lang="cs")
    with serving(app) as address:
        yield f"http://{address}", folder


def _body_text(browser) -> str:
    return browser.execute_script("return document.body.innerText")


_NUMBERS = """
const q = s => [...document.querySelectorAll(s)], n = id => +document.getElementById(id).textContent;
return {step: +document.getElementById("status").dataset.step, totals: q("[id^=total-]").map(e => +e.textContent),
        buttons: q("#moves button.move").map(b => [+b.dataset.action, b.textContent]),
        seats: q(".board, .pry-board, [id^=board-]").length,
        pr: q("[id^=doubloons-]").map((e, i) => [+e.textContent, n("vp-" + i), n("sanjuan-" + i)]),
        pry: q("[id^=pry-coins-]").map((e, i) => [+e.textContent, n("pry-vp-" + i), n("pry-swords-" + i)]),
        cuba: q("[id^=cuba-pesos-]").map((e, i) => [+e.textContent, n("cuba-vp-" + i)])};
"""


def _check_numbers(page: dict, state, game: str) -> None:
    """The board's numbers as the page shows them are the state's."""
    d = state.to_dict()
    assert page["totals"] == [s["total"] if isinstance(s, dict) else s for s in state.scores()]
    if game == "puerto_rico":
        assert page["pr"] == [[b["doubloons"], b["vp_chips"], b["san_juan"]] for b in d["boards"]]
    elif game == "port_royal":
        snap = viewer.snapshot(state, game)
        assert page["pry"] == [
            [len(p["coins"]), s["vp"], s["swords"]] for p, s in zip(d["players"], snap["players"])
        ]
    else:
        assert page["cuba"] == [[b["pesos"], b["vp"]] for b in d["boards"]]


GAMES = {"puerto_rico": 3, "port_royal": 2, "cuba": 2}


@pytest.mark.parametrize("game", list(GAMES))
def test_a_czech_game_page_has_czech_words_the_terminals_labels_and_the_states_numbers(
    browser, cs, game
):
    url, folder = cs
    made = _api(
        url + "/api/games",
        {"game": game, "seats": ["human"] + ["random"] * (GAMES[game] - 1), "seed": 3},
    )
    gid, token = made["id"], token_of(made, 0)
    tr, board = lang.translator(game, "cs"), boards.get(game)
    browser.get(f"{url}/game/{gid}?token={token}")
    first = _your_turn(browser, -1)
    # a click on a Czech button plays its action: the last one, unlike the English tests' first
    state = records.replay(stored.record(folder, gid), upto=int(first["step"]))
    chosen = first["actions"][-1]
    _click_move(browser, chosen)
    s = _your_turn(browser, int(first["step"]))
    rec = stored.record(folder, gid)
    played = rec["steps"][int(first["step"])]
    assert (played["player"], played["action"], played["name"]) == (
        0,
        chosen,
        state.action_to_string(chosen),
    )
    # the page now (a log with the person's and the bots' moves): the terminal's labels, the numbers
    page = browser.execute_script(_NUMBERS)
    czech = _body_text(browser)
    state = records.replay(rec, upto=page["step"])
    assert page["step"] == int(s["step"]) and state.current_player() == 0
    assert page["buttons"] == [
        [a, tr.move(board.choice_label(state, a, seat=0))] for a in state.legal_actions()
    ]
    assert any(label != board.choice_label(state, a, seat=0) for a, label in page["buttons"])
    _check_numbers(page, state, game)
    view = _api(f"{url}/api/games/{gid}?token={token}&lang=cs")
    assert [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#log li")] == [
        re.sub(r"^\d+\. ", "", line) for line in view["log"]
    ]
    assert browser.find_element(By.ID, "status").text == MSG["your move, {who}"].format(
        who=MSG["seat {i} ({name})"].format(i=0, name=MSG["human"])
    )
    # the same page in English: none of its words but the Czech ones is left on the Czech page
    browser.get(f"{url}/game/{gid}?token={token}&lang=en")
    _your_turn(browser, int(s["step"]) - 1)
    english = _body_text(browser)
    assert browser.execute_script(_NUMBERS)["buttons"] == [
        [a, board.choice_label(state, a, seat=0)] for a in state.legal_actions()
    ]
    assert english_left(english, czech) == set()
    assert english != czech and "undo" in english and MSG["undo"] in czech
    assert browser.find_element(By.ID, "lobby-link").get_attribute("href") == f"{url}/?lang=en"
    # a watcher's Czech page: whose turn, no move
    browser.get(f"{url}/game/{gid}")
    me = MSG["seat {i} ({name})"].format(i=0, name=MSG["human"])
    WebDriverWait(browser, 30).until(
        lambda b: b.find_element(By.ID, "status").text == MSG["waiting for {who}"].format(who=me)
    )
    assert browser.find_elements(By.CSS_SELECTOR, "#moves button.move") == []


def test_the_hint_the_refusals_and_the_game_over_panel_in_czech(browser, cs, tmp_path):
    url, folder = cs
    st = caribsim.load_game("puerto_rico", players=3).new_initial_state(seed=8)
    rng = random.Random(8)
    while not st.is_terminal():
        st.resolve_chance() if st.is_chance_node() else st.apply_action(
            rng.choice(st.legal_actions())
        )
    rec = records.record_game(st, seed=8)
    last = max(i for i, step in enumerate(rec["steps"]) if step["player"] >= 0)
    seat = rec["steps"][last]["player"]
    other = (seat + 1) % 3
    seats = ["human" if p in (seat, other) else "random" for p in range(3)]
    made = _api(url + "/api/games", {"record": rec, "step": last, "seats": seats})
    gid, token = made["id"], token_of(made, seat)
    browser.get(f"{url}/game/{gid}?token={token}")
    _your_turn(browser, -1)
    # the hint: its labels the terminal's, its words Czech
    browser.find_element(By.ID, "hint").click()
    rows = WebDriverWait(browser, 60).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, "#hint-panel tr.hint-move")
    )
    state = records.states(rec)[last]
    tr, board = lang.translator("puerto_rico", "cs"), boards.get("puerto_rico")
    for r in rows:
        a = int(r.get_attribute("data-action"))
        assert r.find_element(By.CSS_SELECTOR, "td.hint-label").text == tr.move(
            board.choice_label(state, a, seat=seat)
        )
    # the panel's text after its close button
    panel = browser.find_element(By.ID, "hint-panel").text.removeprefix("\u00d7").strip()
    assert panel.startswith(
        MSG["hint ({n} iterations; win estimate of the best move {win}%):"].split(" (")[0] + " ("
    )
    assert (
        english_left(
            "hint iterations win estimate of the best move visits points against the best "
            "other seat",
            panel,
        )
        == set()
    )
    # the refusals a page meets, said in its language: a stale step, not your turn, a wrong token
    status, text = _request(
        f"{url}/api/games/{gid}/move?lang=cs", {"token": token, "step": 0, "action": 0}
    )
    assert status == 409 and json.loads(text)["error"] == MSG[
        "stale request: made at step {step}, the game is at step {now}; the board is updated"
    ].format(step=0, now=last)
    status, text = _request(
        f"{url}/api/games/{gid}/move?lang=cs",
        {"token": token_of(made, other), "step": last, "action": 0},
    )
    assert status == 409 and json.loads(text)["error"] == MSG[
        "not your turn: seat {p} ({player}) is to act, you are seat {seat}"
    ].format(p=seat, player=MSG["human"], seat=other)
    # the recorded last decision ends the game: the viewer's game-over panel in Czech
    _click_move(browser, rec["steps"][last]["action"])
    WebDriverWait(browser, 30).until(
        lambda b: b.find_element(By.ID, "status").get_attribute("data-over") == "true"
    )
    over = browser.find_element(By.ID, "game-over")
    heads = [th.text for th in over.find_elements(By.CSS_SELECTOR, "th")]
    assert heads[:2] == [tr.text("seat"), tr.text("total")]
    final = records.replay(stored.record(folder, gid))
    assert final.is_terminal()
    panel = viewer.game_over(
        {"scores": final.scores(), "returns": final.returns()},
        [MSG["human"] if p == "human" else p for p in seats],
        tr,
    )
    assert browser.find_element(By.ID, "verdict").text == panel["verdict"]
    for i, sc in enumerate(final.scores()):
        assert over.find_element(By.ID, f"final-{i}").get_attribute("data-total") == str(
            sc["total"]
        )
    assert browser.find_element(By.ID, "status").text == MSG["game over"]
    assert browser.find_element(By.ID, "replay-link").text == MSG["replay the game"]
    status, text = _request(f"{url}/replay/{gid}")  # the replay viewer in the server's language
    assert status == 200 and '<html lang="cs">' in text
    # a wrong token: the notice in Czech
    browser.get(f"{url}/game/{gid}?token=forged")
    error = WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "error").text)
    assert error == MSG["this token belongs to no seat of this game: use the seat's link"]
    assert browser.execute_script("return document.documentElement.lang") == "cs"


def _lobby_text(browser, address) -> str:
    """The lobby's text with each game chosen in turn (its options shown), ending at Port Royal."""
    browser.get(address)
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#game option"))
    texts = []
    for game in ("puerto_rico", "cuba", "port_royal"):
        Select(browser.find_element(By.ID, "game")).select_by_value(game)
        texts.append(_body_text(browser))
    return "\n".join(texts)


def test_the_czech_lobby_makes_a_game_and_says_its_refusals_in_czech(browser, cs, tmp_path):
    url, folder = cs
    english = _lobby_text(browser, url + "/?lang=en")
    czech = _lobby_text(browser, url + "/")
    assert english_left(english, czech) == set() and MSG["create the game"] in czech
    assert "require expedition" in english and MSG["require expedition"] in czech
    assert browser.find_element(By.ID, "seed").get_attribute("placeholder") == MSG["random"]
    assert [o.text for o in Select(browser.find_element(By.ID, "kind-0")).options] == [
        MSG["human"],
        MSG["bot"],
    ]
    # a refusal of the server, in Czech: a file that is no record
    path = tmp_path / "not-a-record.json"
    path.write_text('{"game": "cuba"}')
    browser.find_element(By.ID, "record-file").send_keys(str(path))
    browser.find_element(By.ID, "from-record").click()
    WebDriverWait(browser, 30).until(
        lambda b: (
            b.find_element(By.ID, "error").text
            == MSG[
                "record must be a game record (a JSON object with game, options, seed, steps; docs/records.md)"
            ]
        )
    )
    box = browser.find_element(By.ID, "bot-1")
    box.clear()
    box.send_keys("genius")
    browser.find_element(By.ID, "create").click()
    error = (
        MSG["seat {seat}: unknown bot spec {spec!r}; use {kinds}"]
        .split("{spec!r}")[0]
        .format(seat=1)
        + "'genius'"
    )
    WebDriverWait(browser, 30).until(
        lambda b: b.find_element(By.ID, "error").text.startswith(error)
    )
    # a game made in the Czech lobby
    Select(browser.find_element(By.ID, "players")).select_by_visible_text("2")
    Select(browser.find_element(By.ID, "kind-1")).select_by_value("bot")
    box = browser.find_element(By.ID, "bot-1")
    box.clear()
    box.send_keys("random")
    browser.find_element(By.ID, "seed").send_keys("11")
    browser.find_element(By.ID, "create").click()
    # the game opens at the person's seat, in Czech still
    WebDriverWait(browser, 30).until(lambda b: "/game/" in b.current_url)
    gid = urllib.parse.urlsplit(browser.current_url).path.rsplit("/", 1)[1]
    rec = stored.record(folder, gid)
    assert (rec["game"], rec["seed"], rec["players"]) == ("port_royal", 11, ["human", "random"])
    _your_turn(browser, -1)
    assert browser.find_element(By.ID, "undo").text == MSG["undo"]
    # the Czech lobby lists it with this browser's link to resume it
    browser.get(url + "/")
    row = WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, f"game-{gid}"))
    assert MSG["resume seat {i}"].format(i=0) in row.text and "Port Royal" in row.text
    row.find_element(By.CSS_SELECTOR, "a.resume").click()
    _your_turn(browser, -1)
    assert browser.find_element(By.ID, "undo").text == MSG["undo"]


def test_a_bad_language_is_refused_clearly(cs, tmp_path):
    url, _ = cs
    status, text = _request(url + "/?lang=de")
    assert (
        status == 400
        and html.escape(
            MSG["unknown language {lang!r}; choose from {langs}"].format(lang="de", langs="en, cs")
        )
        in text
    )
    status, text = _request(url + "/game/000000000000")
    assert (
        status == 404
        and html.escape(MSG["no game {id!r} on this server"].format(id="000000000000")) in text
    )
    status, text = _request(url + "/api/games/000000000000?lang=de")
    assert (status, json.loads(text)) == (
        400,
        {"error": "unknown language 'de'; choose from en, cs"},
    )
    status, text = _request(url + "/api/games/000000000000?lang=cs")
    assert (status, json.loads(text)) == (
        404,
        {"error": MSG["no game {id!r} on this server"].format(id="000000000000")},
    )
    with pytest.raises(ValueError, match="unknown language 'xx'; choose from en, cs"):
        create_app(tmp_path / "games", lang="xx")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "caribsim",
            "serve",
            "--lang",
            "xx",
            "--games-dir",
            str(tmp_path / "g"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=SERVE_ENV,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert (
        r.stderr
        == "python -m caribsim serve: error: argument --lang: unknown language 'xx'; choose from en, cs\n"
    )
