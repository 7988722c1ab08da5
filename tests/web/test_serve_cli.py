"""`python -m caribsim serve` as a real process: it prints its address, serves the lobby and
the API there, writes the games into --games-dir and stops on Ctrl-C; without the web extra
it says what to install."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra


from caribsim.human import records
from tests.web import stored
from tests.web.conftest import SERVE_ENV, free_socket, serve_process, wait_for


def _free_port() -> int:
    with free_socket() as sock:
        return sock.getsockname()[1]


def _get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.status, r.read().decode()


def test_serve_prints_its_address_serves_and_stops_on_ctrl_c(tmp_path):
    port, folder = _free_port(), tmp_path / "games"
    p = serve_process(port, str(folder), "--bot-delay", "0", "--analysis-iterations", "8")
    try:
        line = p.stdout.readline()
        url = f"http://127.0.0.1:{port}/"
        assert line == f"caribsim: play at {url} (games in {folder}; Ctrl-C stops)\n", (
            line,
            p.stderr.read(),
        )
        status, lobby = wait_for(lambda: _try(url), what="the lobby")
        assert status == 200 and 'id="create"' in lobby
        req = urllib.request.Request(
            url + "api/games",
            headers={"content-type": "application/json"},
            data=json.dumps({"game": "cuba", "seats": ["random", "random"], "seed": 4}).encode(),
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            gid = json.load(r)["id"]
        over = wait_for(
            lambda: json.loads(_get(f"{url}api/games/{gid}")[1])["over"],
            timeout=120,
            what="the game",
        )
        assert over
        analysis = wait_for(
            lambda: (lambda a: a if a["status"] == "done" else None)(
                json.loads(_get(f"{url}api/games/{gid}/analysis")[1])
            ),
            what="the analysis",
        )
    finally:
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert out == f"caribsim: stopped; the games are in {folder}\n" and "Traceback" not in err
    rec = stored.record(folder, gid)
    assert records.replay(rec).is_terminal()
    assert analysis["iterations"] == 8 and (folder / f"{gid}.analysis.json").exists()
    assert len(analysis["estimates"]) == sum(s["player"] >= 0 for s in rec["steps"])


def _try(url):
    try:
        return _get(url)
    except OSError:
        return None


@pytest.mark.parametrize("module", ["starlette", "uvicorn", "websockets"])
def test_without_the_web_extra_serve_says_what_to_install(tmp_path, module):
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from caribsim.__main__ import main\n"
        f"sys.exit(main(['serve', '--games-dir', {str(tmp_path)!r}]))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=SERVE_ENV
    )
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (
        f"python -m caribsim serve: error: the web server needs {module}: "
        "pip install 'caribsim[web]'\n"
    )
    assert not any(tmp_path.iterdir())
