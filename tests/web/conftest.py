"""What the web tests share (the headless Chromium is tests/conftest.py's ``browser``): a uvicorn server of caribsim.web on a free loopback port, and the API
client helpers."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

BOT_DELAY = 0.02  # seconds before each bot move: short, but the bots still move by themselves
HINT_ITERATIONS = 50
ANALYSIS_ITERATIONS = 20  # the post-game analysis a finished game's page asks for


@dataclass
class Server:
    url: str
    folder: Path
    app: object


def free_socket(port: int = 0) -> socket.socket:
    """A socket on 127.0.0.1 and ``port`` (0: a free one; reusable for a restarted server)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


# a `caribsim serve` process imports caribsim as the tests do (the checkout's, not another)
SERVE_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def serve_process(port: int, folder, *options: str, stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    """``python -m caribsim serve --port PORT --games-dir FOLDER *options`` as a real process
    (text pipes unless told otherwise)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "caribsim",
            "serve",
            "--port",
            str(port),
            "--games-dir",
            str(folder),
            *options,
        ],
        stdout=stdout,
        stderr=stderr,
        text=True,
        env=SERVE_ENV,
    )


@contextlib.contextmanager
def serving(app, port: int = 0):
    """``app`` served by uvicorn in a thread on 127.0.0.1 and ``port`` (0: a free one); its
    address."""
    import uvicorn

    sock = free_socket(port)
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        uv.should_exit = True
        thread.join(30)
        sock.close()
    assert not thread.is_alive()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """caribsim.web over a fresh games folder, served for the module."""
    from caribsim.web.app import create_app  # each test module asks for the web extra first

    folder = tmp_path_factory.mktemp("games")
    app = create_app(
        folder,
        bot_delay=BOT_DELAY,
        hint_iterations=HINT_ITERATIONS,
        analysis_iterations=ANALYSIS_ITERATIONS,
    )
    with serving(app) as address:
        yield Server(f"http://{address}", folder, app)


def token_of(made: dict, seat: int) -> str:
    """The token in the seat's link of a create answer."""
    url = next(link["url"] for link in made["links"] if link["seat"] == seat)
    return url.split("token=")[1]


def wait_for(check, timeout=60.0, what="the condition"):
    """Poll ``check()`` until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@contextlib.contextmanager
def viewport(browser, width: int, height: int, mobile: bool = False):
    """The page laid out at ``width`` x ``height`` CSS pixels (a phone's 390 x 844 too:
    headless Chromium keeps a window at least 500 wide, so the size is emulated), the
    window's own size afterwards."""
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )
    try:
        yield
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def get_json(url: str):
    """GET ``url`` (a served test app's address and path): its JSON answer."""
    import json
    import urllib.request

    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def post_json(url: str, body):
    """POST ``body`` as JSON to ``url``: its JSON answer."""
    import json
    import urllib.request

    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)
