"""The post-game analysis (caribsim.web.analysis, GET /api/games/ID/analysis): every seat's
win estimate at each decision of a finished game, the biggest swings, the file beside the
record read back after a restart instead of searched again, the refusal before the end; and
the game page's chart and swings table in a real headless Chromium."""

from __future__ import annotations

import json
import math
import re
import urllib.request
import warnings

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from selenium.webdriver.support.ui import WebDriverWait

from caribsim.human import boards, records
from caribsim.web import analysis
from caribsim.web.app import create_app
from tests.web import stored
from tests.web.conftest import serving, token_of, wait_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note on httpx
    from starlette.testclient import TestClient

ITERATIONS = 12
PRY = "port_royal"


def _client(folder, iterations=ITERATIONS):
    return TestClient(
        create_app(folder, bot_delay=0, hint_iterations=20, analysis_iterations=iterations)
    )


def _bot_game(c, game=PRY, seats=("random", "random"), seed=11) -> str:
    r = c.post("/api/games", json={"game": game, "seats": list(seats), "seed": seed})
    assert r.status_code == 201, r.text
    gid = r.json()["id"]
    wait_for(lambda: c.get(f"/api/games/{gid}").json()["over"], what="the bot game's end")
    return gid


def _done(c, gid) -> dict:
    return wait_for(
        lambda: (lambda a: a if a["status"] == "done" else None)(
            c.get(f"/api/games/{gid}/analysis").json()
        ),
        what="the analysis",
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished Port Royal game of two random bots, its first analysis answer and the
    analysis done (the server stopped after)."""
    folder = tmp_path_factory.mktemp("games")
    with _client(folder) as c:
        gid = _bot_game(c)
        first = c.get(f"/api/games/{gid}/analysis").json()
        done = _done(c, gid)
        assert c.app.state.analyses.computed == 1
    return folder, gid, first, done


def test_the_analysis_has_an_estimate_per_decision_of_the_record(finished):
    folder, gid, first, a = finished
    rec = stored.record(folder, gid)
    states = records.states(rec)
    board = boards.get(PRY)
    decisions = [(k, s) for k, s in enumerate(rec["steps"]) if s["player"] >= 0]
    # the first answer: started, with how far it is
    assert (
        first["status"] == "running"
        and first["total"] == len(decisions)
        and 0 <= first["done"] <= first["total"]
    )
    assert a["status"] == "done" and a["done"] == a["total"] == len(decisions)
    assert (
        a["iterations"] == ITERATIONS
        and a["steps"] == len(rec["steps"])
        and a["players"] == rec["players"]
    )
    assert len(a["estimates"]) == len(decisions)
    for e, (k, step) in zip(a["estimates"], decisions):
        assert (e["step"], e["seat"], e["action"]) == (k, step["player"], step["action"])
        assert e["label"] == board.choice_label(states[k], step["action"], seat=step["player"])
        assert len(e["win"]) == 2 and all(0 <= v <= 1 for v in e["win"])
        assert sum(e["win"]) == pytest.approx(1, abs=1e-5)  # the returns are constant-sum
    assert a["final"] == {"step": len(rec["steps"]), "returns": rec["final"]["returns"]}
    # not one number for every step: the search sees the game change
    assert len({tuple(e["win"]) for e in a["estimates"]}) > 10


def test_the_swings_are_the_largest_changes_of_the_movers_estimate(finished):
    folder, gid, _, a = finished
    rec = stored.record(folder, gid)
    points = [(e["step"], e["win"]) for e in a["estimates"]] + [
        (a["final"]["step"], a["final"]["returns"])
    ]
    deltas = []
    for (k, win), (_, nxt) in zip(points, points[1:]):
        seat = rec["steps"][k]["player"]
        # to the 6 digits the API gives (equal changes are ties, taken in step order)
        deltas.append((round(nxt[seat] - win[seat], 6), k, seat, win[seat], nxt[seat]))
    biggest = sorted(deltas, key=lambda d: (-abs(d[0]), d[1]))[: analysis.SWINGS]
    assert len(a["swings"]) == analysis.SWINGS
    assert [(s["step"], s["seat"]) for s in a["swings"]] == [
        (k, seat) for _, k, seat, _, _ in biggest
    ]
    assert abs(a["swings"][-1]["delta"]) >= max(abs(d[0]) for d in deltas if d not in biggest)
    states = records.states(rec)
    for s, (delta, k, seat, before, after) in zip(a["swings"], biggest):
        assert s["action"] == rec["steps"][k]["action"]
        assert s["label"] == boards.get(PRY).choice_label(states[k], s["action"], seat=seat)
        assert (s["before"], s["after"], s["delta"]) == (before, after, delta)


def test_the_analysis_is_deterministic_for_the_game(finished):
    folder, gid, _, a = finished
    again = analysis.analyse(stored.record(folder, gid), ITERATIONS)
    assert json.loads(json.dumps(again)) == json.loads(
        (folder / f"{gid}.analysis.json").read_text()
    )
    assert {k: v for k, v in a.items() if k not in ("status", "done", "total")} == json.loads(
        json.dumps(again)
    )


def test_progress_is_told_as_the_steps_are_searched(finished):
    folder, gid, _, _ = finished
    told = []
    analysis.analyse(
        stored.record(folder, gid),
        2,
        progress=lambda done, total: told.append((done, total)),
    )
    total = told[0][1]
    assert told[0] == (0, total) and told[-1] == (total, total) and len(told) > 2
    assert [d for d, _ in told] == sorted(d for d, _ in told)


def test_the_file_is_read_after_a_restart_not_searched_again(finished):
    folder, gid, _, a = finished
    path = folder / f"{gid}.analysis.json"
    before = (path.stat().st_mtime_ns, path.read_bytes())
    with _client(folder) as c:
        first = c.get(f"/api/games/{gid}/analysis").json()  # the file's: done at once
        assert first == a and c.app.state.analyses.computed == 0
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before


def test_another_budget_analyses_again(finished, tmp_path):
    folder, gid, _, _ = finished
    stored.copy(folder, tmp_path)  # the games and the analysis's file, in another folder
    name = f"{gid}.analysis.json"
    (tmp_path / name).write_bytes((folder / name).read_bytes())
    with _client(tmp_path, iterations=ITERATIONS + 1) as c:
        assert c.get(f"/api/games/{gid}/analysis").json()["status"] == "running"
        assert _done(c, gid)["iterations"] == ITERATIONS + 1 and c.app.state.analyses.computed == 1


def test_a_game_not_over_is_refused_and_nothing_is_written(tmp_path):
    with _client(tmp_path) as c:
        made = c.post(
            "/api/games", json={"game": PRY, "seats": ["human", "random"], "seed": 2}
        ).json()
        r = c.get(f"/api/games/{made['id']}/analysis")
        assert r.status_code == 409
        assert re.fullmatch(
            r"the analysis is made when the game is over \(step \d+ now\): ask again at the end",
            r.json()["error"],
        )
        r = c.get("/api/games/0123456789ab/analysis")
        assert r.status_code == 404 and r.json()["error"] == "no game '0123456789ab' on this server"
        r = c.get(f"/api/games/{made['id']}/analysis", params={"lang": "cs"})
        assert r.status_code == 409
        assert re.fullmatch(
            r"rozbor se dělá po konci hry \(teď je krok \d+\): zeptej se znovu na konci",
            r.json()["error"],
        )
    assert not list(tmp_path.glob("*.analysis.json"))


def test_the_czech_analysis_is_the_same_with_the_terminals_czech_labels(tmp_path):
    from caribsim.human import lang

    tr = lang.translator(PRY, "cs")
    with _client(tmp_path) as c:
        gid = _bot_game(c, seed=5)
        en = _done(c, gid)
        cs = c.get(f"/api/games/{gid}/analysis", params={"lang": "cs"}).json()
    assert [e["win"] for e in cs["estimates"]] == [e["win"] for e in en["estimates"]]
    assert [e["label"] for e in cs["estimates"]] == [tr.move(e["label"]) for e in en["estimates"]]
    assert [w["label"] for w in cs["swings"]] == [tr.move(w["label"]) for w in en["swings"]]
    assert any(
        a["label"] != b["label"] for a, b in zip(cs["estimates"], en["estimates"])
    )  # really Czech


def _play_to_the_end(c, gid, token, rng) -> dict:
    """Seat 0 plays random legal moves until the game is over; the last view."""
    while True:
        v = wait_for(
            lambda: (lambda view: view if view["over"] or view["moves"] else None)(
                c.get(f"/api/games/{gid}", params={"token": token}).json()
            ),
            what="seat 0's turn",
        )
        if v["over"]:
            return v
        r = c.post(
            f"/api/games/{gid}/move",
            json={"token": token, "step": v["step"], "action": rng.choice(v["moves"])["action"]},
        )
        assert r.status_code == 200, r.text


def test_an_undo_at_the_end_and_another_ending_get_their_own_analysis(tmp_path):
    """A person who takes back his last move at the end and ends the game otherwise: the
    analysis of the first ending is not given for the second."""
    import random

    with _client(tmp_path) as c:
        made = c.post(
            "/api/games", json={"game": PRY, "seats": ["human", "random"], "seed": 8}
        ).json()
        gid, token = made["id"], token_of(made, 0)
        rng = random.Random(3)
        end = _play_to_the_end(c, gid, token, rng)
        first = _done(c, gid)
        assert first["final"]["step"] == end["step"]
        decided = [(e["step"], e["action"]) for e in first["estimates"]]
        for _ in range(20):  # undo and play on until the game ends otherwise
            assert end["undo"]["0"] is not None
            r = c.post(f"/api/games/{gid}/undo", json={"token": token, "step": end["step"]})
            assert r.status_code == 200, r.text
            assert c.get(f"/api/games/{gid}/analysis").status_code == 409
            end = _play_to_the_end(c, gid, token, rng)
            rec = stored.record(tmp_path, gid)
            if [
                (k, s["action"]) for k, s in enumerate(rec["steps"]) if s["player"] >= 0
            ] != decided:
                break
        else:
            raise AssertionError("twenty endings after an undo were all the first one")
        again = _done(c, gid)
        rec = stored.record(tmp_path, gid)
        assert (
            again["steps"] == len(rec["steps"])
            and again["final"]["returns"] == rec["final"]["returns"]
        )
        assert [(e["step"], e["action"]) for e in again["estimates"]] == [
            (k, s["action"]) for k, s in enumerate(rec["steps"]) if s["player"] >= 0
        ]
        assert again != first and c.app.state.analyses.computed == 2
        assert json.loads((tmp_path / f"{gid}.analysis.json").read_text())["steps"] == len(
            rec["steps"]
        )


# --- the page ---------------------------------------------------------------------------------

_CHART = """
const svg = document.getElementById("analysis-chart");
return {top: +svg.dataset.top, bottom: +svg.dataset.bottom, left: +svg.dataset.left, right: +svg.dataset.right,
        last: +svg.dataset.last,
        lines: [...svg.querySelectorAll("polyline.seat-line")].map(l => ({seat: +l.dataset.seat, stroke: l.getAttribute("stroke"),
                points: l.getAttribute("points").trim().split(/\\s+/).map(p => p.split(",").map(Number))})),
        colors: COLORS,
        rows: [...document.querySelectorAll("#swings tr.swing")].map(r => ({step: +r.dataset.step, seat: +r.dataset.seat,
               cells: [...r.cells].map(c => c.textContent), href: r.querySelector("a").getAttribute("href")}))};
"""


def _pct(v: float, sign: bool = False) -> str:
    """A share as the page writes it (JS Math.round: halves up)."""
    n = math.floor(100 * v + 0.5)
    return f"{'+' if sign and n > 0 else ''}{n}%"


def test_the_game_page_draws_the_analysis_at_the_end(browser, tmp_path):
    """A watcher's page open while two random bots play Port Royal shows, once the game is
    over, the chart (one line per seat in its colour, a point per estimate and the end) and the
    swings table of the API's analysis."""
    app = create_app(tmp_path, bot_delay=0.002, analysis_iterations=ITERATIONS)
    with serving(app) as address:
        url = f"http://{address}"
        made = _http(f"{url}/api/games", {"game": PRY, "seats": ["random", "random"], "seed": 4})
        gid = made["id"]
        browser.get(f"{url}/game/{gid}")
        WebDriverWait(browser, 60, poll_frequency=0.05).until(
            lambda b: (
                b.execute_script("return document.getElementById('analysis').dataset.status")
                == "done"
            )
        )
        page = browser.execute_script(_CHART)
        a = _http(f"{url}/api/games/{gid}/analysis")
    assert a["status"] == "done"
    points = [(e["step"], e["win"]) for e in a["estimates"]] + [
        (a["final"]["step"], a["final"]["returns"])
    ]
    assert page["last"] == a["final"]["step"]
    assert [line["seat"] for line in page["lines"]] == [0, 1]
    for line in page["lines"]:
        p = line["seat"]
        assert line["stroke"] == page["colors"][p % 5]
        assert len(line["points"]) == len(a["estimates"]) + 1
        for (x, y), (step, win) in zip(line["points"], points):
            assert x == pytest.approx(
                page["left"] + (page["right"] - page["left"]) * step / page["last"], abs=0.06
            )
            assert y == pytest.approx(
                page["bottom"] - (page["bottom"] - page["top"]) * win[p], abs=0.06
            )
    assert len(page["rows"]) == len(a["swings"]) == analysis.SWINGS
    for row, s in zip(page["rows"], a["swings"]):
        assert (row["step"], row["seat"]) == (s["step"], s["seat"])
        assert row["cells"] == [
            str(s["step"] + 1),
            f"seat {s['seat']} (random)",
            s["label"],
            _pct(s["before"]),
            _pct(s["after"]),
            _pct(s["delta"], sign=True),
        ]
        assert row["href"] == f"/replay/{gid}#step={s['step'] + 1}"


def _http(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def test_each_seats_swings_are_the_largest_changes_of_its_own_decisions(finished):
    """``seat_swings[p]``: the swings ranking of seat p's decisions alone (what a player's page
    shows first)."""
    _, _, _, a = finished
    points = [(e["step"], e["seat"], e["win"]) for e in a["estimates"]] + [
        (a["final"]["step"], None, a["final"]["returns"])
    ]
    assert len(a["seat_swings"]) == 2
    for p in (0, 1):
        own = [
            (round(nxt[p] - win[p], 6), k)
            for (k, seat, win), (_, _, nxt) in zip(points, points[1:])
            if seat == p
        ]
        ranked = sorted(own, key=lambda d: (-abs(d[0]), d[1]))[: analysis.SWINGS]
        assert [(w["delta"], w["step"]) for w in a["seat_swings"][p]] == ranked
        assert {w["seat"] for w in a["seat_swings"][p]} == {p}


_SWING_TABLES = """
return [...document.querySelectorAll("#analysis-swings table")].map(t => ({
    id: t.id, caption: t.caption.textContent,
    rows: [...t.querySelectorAll("tr.swing")].map(r => [+r.dataset.step, +r.dataset.seat])}));
"""


def test_a_players_page_lists_his_own_swings_first(browser, tmp_path):
    """Seat 0, a person, plays Port Royal to the end against a random bot: his page lists his
    own biggest swings first ("your biggest swings", his decisions only, largest first), then
    the whole game's; a watcher's page has the whole game's only."""
    import random

    app = create_app(tmp_path, bot_delay=0, analysis_iterations=ITERATIONS)
    with serving(app) as address:
        url = f"http://{address}"
        made = _http(f"{url}/api/games", {"game": PRY, "seats": ["human", "random"], "seed": 6})
        gid, token = made["id"], token_of(made, 0)
        rng = random.Random(5)
        while True:
            v = wait_for(
                lambda: (lambda view: view if view["over"] or view["moves"] else None)(
                    _http(f"{url}/api/games/{gid}?token={token}")
                ),
                what="seat 0's turn",
            )
            if v["over"]:
                break
            move = rng.choice(v["moves"])["action"]
            _http(
                f"{url}/api/games/{gid}/move", {"token": token, "step": v["step"], "action": move}
            )
        tables = {}
        for who, query in (("player", f"?token={token}"), ("watcher", "")):
            browser.get(f"{url}/game/{gid}{query}")
            WebDriverWait(browser, 60, poll_frequency=0.05).until(
                lambda b: (
                    b.execute_script("return document.getElementById('analysis').dataset.status")
                    == "done"
                )
            )
            tables[who] = browser.execute_script(_SWING_TABLES)
        a = _http(f"{url}/api/games/{gid}/analysis")
    whole = [[w["step"], w["seat"]] for w in a["swings"]]
    own = [[w["step"], w["seat"]] for w in a["seat_swings"][0]]
    assert own and {seat for _, seat in own} == {0}
    assert tables["player"] == [
        {"id": "own-swings", "caption": "your biggest swings", "rows": own},
        {"id": "swings", "caption": "the biggest swings of the game", "rows": whole},
    ]
    assert tables["watcher"] == [
        {"id": "swings", "caption": "the biggest swings of the game", "rows": whole}
    ]
