"""Every error of the server is JSON with a message, never a traceback (docs/web.md, "The JSON
API"): a body of nested brackets under the 64 KiB limit is the documented 400 (it raised
RecursionError: a 500 in plain text with a traceback), and an error inside the server is a
JSON 500 whose traceback goes to the server's log only."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import time
import warnings

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra


from caribsim.web.app import MAX_BODY, MAX_DEPTH, create_app
from tests.web.conftest import serving, token_of

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note on httpx
    from starlette.testclient import TestClient

PR = "puerto_rico"
NESTED = b"[" * 5000 + b"]" * 5000  # 10 KB, the body
DEEP_ERROR = f"the request body nests arrays and objects more than {MAX_DEPTH} deep"


@pytest.fixture
def client(tmp_path):
    # raise_server_exceptions=False: what a real client would get, not the test's exception
    with TestClient(create_app(tmp_path, bot_delay=30), raise_server_exceptions=False) as c:
        yield c


def _made(c):
    made = c.post("/api/games", json={"game": PR, "seats": ["human", "random"], "seed": 1})
    assert made.status_code == 201
    return made.json()


def _nested(depth: int, inner="1", key=None) -> bytes:
    """``depth`` arrays (or objects of ``key``) around ``inner``."""
    if key is None:
        return ("[" * depth + inner + "]" * depth).encode()
    return (f'{{"{key}":' * depth + inner + "}" * depth).encode()


def test_nested_brackets_are_a_400_in_json_on_every_route_with_a_body(client):
    made = _made(client)
    gid = made["id"]
    assert len(NESTED) < MAX_BODY
    bodies = [NESTED, _nested(MAX_DEPTH + 1), _nested(MAX_DEPTH + 1, key="a"), _nested(100000)]
    bodies += [b'{"game": "puerto_rico", "seats": ' + _nested(MAX_DEPTH) + b"}"]
    for body in bodies:
        for path in (
            "/api/games",
            f"/api/games/{gid}/move",
            f"/api/games/{gid}/undo",
            f"/api/games/{gid}/hint",
        ):
            r = client.post(path, content=body, headers={"content-type": "application/json"})
            expected = 413 if len(body) > MAX_BODY else 400
            assert r.status_code == expected, (path, len(body), r.text[:200])
            assert r.headers["content-type"] == "application/json"
            if expected == 400:
                assert r.json() == {"error": DEEP_ERROR}


def test_a_body_within_the_depth_is_answered_as_before(client):
    # a record nests 4 deep; a seats list nested to the limit is an ordinary refusal
    body = b'{"game": "puerto_rico", "seats": ' + _nested(MAX_DEPTH - 1) + b"}"
    r = client.post("/api/games", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"].startswith(
        'seat 0: give "human" or a bot spec'
    )


def test_an_error_inside_the_server_is_a_json_500_without_its_traceback(client, caplog):
    made = _made(client)
    games = client.app.state.games

    async def broken(game_id):
        raise ZeroDivisionError("division by zero in the store")

    games.aget = broken  # what every request about a game calls first
    with caplog.at_level(logging.ERROR, logger="caribsim.web"):
        for method, path, body in (
            ("GET", f"/api/games/{made['id']}", None),
            (
                "POST",
                f"/api/games/{made['id']}/move",
                {"token": token_of(made, 0), "step": 0, "action": 0},
            ),
            ("GET", f"/game/{made['id']}", None),  # a page too
        ):
            r = client.request(method, path, json=body)
            assert r.status_code == 500, (path, r.text)
            assert r.headers["content-type"] == "application/json"
            assert r.json() == {
                "error": "the server failed to answer this request (its log says why)"
            }
            assert "Traceback" not in r.text and "ZeroDivisionError" not in r.text
    # the server's log has it, with the traceback
    logged = [rec for rec in caplog.records if rec.name == "caribsim.web" and rec.exc_info]
    assert len(logged) == 3
    assert logged[0].exc_info[0] is ZeroDivisionError and "failed" in logged[0].getMessage()


def test_a_real_server_answers_the_nested_body_in_json(tmp_path):
    with serving(create_app(tmp_path, bot_delay=30)) as address:
        conn = http.client.HTTPConnection(*address.split(":"), timeout=30)
        conn.request("POST", "/api/games", NESTED, {"content-type": "application/json"})
        r = conn.getresponse()
        text = r.read().decode()
        assert r.status == 400 and r.getheader("content-type") == "application/json"
        assert json.loads(text) == {"error": DEEP_ERROR} and "Traceback" not in text
        conn.request("GET", "/api/games")  # the server is fine
        assert conn.getresponse().status == 200


def test_a_client_that_leaves_during_its_body_is_not_a_server_failure(tmp_path, caplog):
    """A client gone before its body came (a closed tab, a cancelled fetch) is nobody to
    answer, not an error of the server's: no traceback in the log, and the server goes on."""
    caplog.set_level(logging.INFO, logger="caribsim.web")
    with serving(create_app(tmp_path, bot_delay=30)) as address:
        host, port = address.split(":")
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(
                b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"game": "puerto_rico", '
            )
        deadline = time.monotonic() + 30
        while not any("disconnected" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
            time.sleep(0.02)
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("GET", "/api/games")  # the server is fine
        assert conn.getresponse().status == 200
    web = [r for r in caplog.records if r.name == "caribsim.web"]
    assert not [r for r in web if r.exc_info or r.levelno >= logging.ERROR], web
    assert [r.getMessage() for r in web if "disconnected" in r.getMessage()] == [
        "POST /api/games: the client disconnected"
    ]
