"""Twenty bot games at once through the HTTP API of one uvicorn server (each seat a cheap bot,
no delay): every game ends, its record replays, and a watcher's WebSocket saw every change.
Run with -s for the figures (games, steps, seconds, steps per second)."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra


from caribsim.human import records
from caribsim.web.app import create_app
from tests.web import stored
from tests.web.conftest import serving

GAMES = [
    ("puerto_rico", ["mcts:50", "greedy", "random"]),
    ("port_royal", ["random", "mcts:50", "greedy"]),
    ("cuba", ["greedy", "random", "mcts:50"]),
    ("puerto_rico", ["random", "random"]),
] * 5


@pytest.fixture(scope="module")
def fast_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("games")
    with serving(create_app(folder, bot_delay=0)) as address:
        yield address, folder


async def _watch(address, gid, seen):
    """Follow one game's updates until it ends; the steps seen, in order."""
    import websockets

    async with websockets.connect(f"ws://{address}/api/games/{gid}/ws") as ws:
        while True:
            view = json.loads(await ws.recv())
            seen.append(view["step"])
            if view["over"]:
                return


def test_twenty_bot_games_at_once_end_and_replay(fast_server):
    address, folder = fast_server
    start = time.perf_counter()
    ids = []
    for k, (game, seats) in enumerate(GAMES):
        req = urllib.request.Request(
            f"http://{address}/api/games",
            headers={"content-type": "application/json"},
            data=json.dumps({"game": game, "seats": seats, "seed": 100 + k}).encode(),
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            ids.append(json.load(r)["id"])
    seen = {gid: [] for gid in ids}

    async def watch_all():
        await asyncio.wait_for(
            asyncio.gather(*(_watch(address, gid, seen[gid]) for gid in ids)), timeout=600
        )

    asyncio.run(watch_all())
    seconds = time.perf_counter() - start
    steps = 0
    for gid, (game, seats) in zip(ids, GAMES):
        rec = stored.record(folder, gid)
        state = records.replay(rec)
        assert state.is_terminal() and rec["game"] == game and len(rec["players"]) == len(seats)
        assert seen[gid] == sorted(seen[gid]) and seen[gid][-1] == len(rec["steps"])
        steps += len(rec["steps"])
    print(
        f"\n{len(ids)} bot games at once: {steps} steps in {seconds:.1f} s, {steps / seconds:.0f} steps/s "
        f"(each step saved to its record and pushed to a watcher)"
    )


def test_moves_sent_at_once_for_the_same_step_play_one(fast_server):
    """Eight requests for the same step at the same moment (two tabs, a double click): one
    is played, the others are stale; the record has the one move."""
    import threading
    import urllib.error

    address, folder = fast_server
    req = urllib.request.Request(
        f"http://{address}/api/games",
        headers={"content-type": "application/json"},
        data=json.dumps({"game": "puerto_rico", "seats": ["human", "random"], "seed": 3}).encode(),
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        made = json.load(r)
    gid, token = made["id"], made["links"][0]["url"].split("token=")[1]
    with urllib.request.urlopen(f"http://{address}/api/games/{gid}?token={token}", timeout=30) as r:
        view = json.load(r)
    actions = [m["action"] for m in view["moves"]]
    start, answers = threading.Barrier(8), []

    def send(k):
        body = {"token": token, "step": view["step"], "action": actions[k % len(actions)]}
        post = urllib.request.Request(
            f"http://{address}/api/games/{gid}/move",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        start.wait()
        try:
            with urllib.request.urlopen(post, timeout=30) as r:
                answers.append((r.status, body["action"]))
        except urllib.error.HTTPError as e:
            answers.append((e.code, json.load(e)["error"]))

    threads = [threading.Thread(target=send, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    played = [a for status, a in answers if status == 200]
    assert len(answers) == 8 and len(played) == 1
    assert all(status == 409 and "stale request" in a for status, a in answers if status != 200)
    steps = stored.record(folder, gid)["steps"]
    assert steps[view["step"]]["action"] == played[0] and steps[view["step"]]["player"] == 0
