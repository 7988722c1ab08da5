"""Nothing a request asks of the store holds the server's event loop (docs/web.md, "Storage"):
a move's commit (its fsync) and a game's load from the store (a replay of the whole game) run
on the store's own thread while the loop answers the other requests; a move is still answered
only once it is stored, and the pages show the stored position until then.

The store is made slow on purpose (each write or load takes ``SLOW`` seconds), so that a loop
held by it is seen from another request's round trip."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from caribsim.web.app import create_app
from tests.web.conftest import serving, token_of

PR = "puerto_rico"
SLOW = 1.0  # seconds a slowed store call takes
QUICK = 0.5  # what another request may take meanwhile: well under SLOW on a busy machine


def _call(url: str, body=None):
    """(status, JSON answer, seconds) of a GET, or of a POST of ``body``."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            status, text = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read()
    return status, json.loads(text), time.monotonic() - t0


def _slowed(method, calls: list):
    """``method`` taking SLOW seconds more, on whatever thread calls it (logged in ``calls``)."""

    def slow(*args, **kwargs):
        calls.append(threading.current_thread().name)
        time.sleep(SLOW)
        return method(*args, **kwargs)

    return slow


def _in_thread(fn, *args):
    """Start ``fn(*args)`` on a thread; a list that will hold its result."""
    out: list = []
    thread = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    thread.start()
    return thread, out


def _create(base: str, seats=("human", "human")) -> dict:
    status, made, _ = _call(f"{base}/api/games", {"game": PR, "seats": list(seats), "seed": 3})
    assert status == 201, made
    return made


def _to_act(base: str, made: dict):
    """(the view URL of the seat to act, its token, its view)."""
    view = _call(f"{base}/api/games/{made['id']}")[1]
    token = token_of(made, view["to_act"])
    url = f"{base}/api/games/{made['id']}?token={token}"
    return url, token, _call(url)[1]


@pytest.fixture
def app(tmp_path):
    return create_app(tmp_path, bot_delay=30)


def test_a_moves_commit_does_not_hold_the_loop(app):
    games = app.state.games
    with serving(app) as address:
        base = f"http://{address}"
        a, b = _create(base), _create(base)
        view_a, token, seen = _to_act(base, a)
        step = seen["step"]
        writes: list = []
        games.store.append = _slowed(games.store.append, writes)
        move = {"token": token, "step": step, "action": seen["moves"][0]["action"]}
        thread, moved = _in_thread(_call, f"{base}/api/games/{a['id']}/move", move)
        deadline = time.monotonic() + 10
        while not writes:  # the commit has begun
            assert time.monotonic() < deadline, "the move's write never began"
            time.sleep(0.01)
        # meanwhile the loop answers: another game's view, this game's (at its stored step)
        status, _, seconds = _call(f"{base}/api/games/{b['id']}")
        assert status == 200 and seconds < QUICK, seconds
        status, same, seconds = _call(view_a)
        assert status == 200 and seconds < QUICK, seconds
        assert same["step"] == step  # not yet stored: not yet shown
        status, lobby, seconds = _call(f"{base}/api/games")
        assert status == 200 and {a["id"], b["id"]} <= {g["id"] for g in lobby["games"]}
        thread.join(30)
        status, answer, seconds = moved[0]
        # the mover's answer comes once the move is stored, and shows it
        assert status == 200 and seconds >= SLOW and answer["step"] > step, (status, seconds)
        assert writes == ["caribsim-store_0"]  # on the store's thread, once
        assert games.store.load(a["id"]).steps == games.get(a["id"]).steps


def test_a_load_from_the_store_does_not_hold_the_loop(tmp_path):
    first = create_app(tmp_path, bot_delay=30)
    with serving(first) as address:
        stored = _create(f"http://{address}")
    app = create_app(tmp_path, bot_delay=30)  # a restarted server: nothing in memory
    games = app.state.games
    loads: list = []
    with serving(app) as address:
        base = f"http://{address}"
        held = _create(base)  # in memory
        games.store.load = _slowed(games.store.load, loads)
        url = f"{base}/api/games/{stored['id']}"
        threads = [_in_thread(_call, url) for _ in range(3)]  # three ask for it at once
        deadline = time.monotonic() + 10
        while not loads:
            assert time.monotonic() < deadline, "the load never began"
            time.sleep(0.01)
        status, _, seconds = _call(f"{base}/api/games/{held['id']}")
        assert status == 200 and seconds < QUICK, seconds
        for thread, out in threads:
            thread.join(30)
            status, view, seconds = out[0]
            # each waited for the one load, begun before the held game was asked for
            assert status == 200 and view["id"] == stored["id"] and seconds >= SLOW / 2
        assert loads == ["caribsim-store_0"]  # one load for the three, on the store's thread
        assert games.get(stored["id"]) is games.get(stored["id"])


def test_moves_at_once_on_one_game_are_stored_in_turn(app):
    """Two seats' pages post the same step's move at once (one of them is stale): one is
    played, the other refused, and the store has exactly the game's steps."""
    games = app.state.games
    with serving(app) as address:
        base = f"http://{address}"
        made = _create(base)
        _, token, view = _to_act(base, made)
        writes: list = []
        games.store.append = _slowed(games.store.append, writes)
        body = {"token": token, "step": view["step"], "action": view["moves"][0]["action"]}
        threads = [_in_thread(_call, f"{base}/api/games/{made['id']}/move", body) for _ in "ab"]
        for thread, _ in threads:
            thread.join(30)
        statuses = sorted(out[0][0] for _, out in threads)
        assert statuses == [200, 409], [out[0] for _, out in threads]
        assert len(writes) == 1
        game = games.get(made["id"])
        assert game.step > view["step"]
        assert games.store.load(made["id"]).steps == game.steps
