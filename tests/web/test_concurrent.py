"""Twenty bot games at once through the HTTP API of one uvicorn server (each seat a cheap bot,
no delay): every game ends, its record replays, and a watcher's WebSocket saw every change.
Run with -s for the figures (games, steps, seconds, steps per second)."""
from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import pytest

from caribsim.human import records
from caribsim.web.app import create_app
from tests.web.conftest import serving

GAMES = [("puerto_rico", ["mcts:50", "greedy", "random"]), ("port_royal", ["random", "mcts:50", "greedy"]),
         ("cuba", ["greedy", "random", "mcts:50"]), ("puerto_rico", ["random", "random"])] * 5


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
        req = urllib.request.Request(f"http://{address}/api/games", headers={"content-type": "application/json"},
                                     data=json.dumps({"game": game, "seats": seats, "seed": 100 + k}).encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            ids.append(json.load(r)["id"])
    seen = {gid: [] for gid in ids}

    async def watch_all():
        await asyncio.wait_for(asyncio.gather(*(_watch(address, gid, seen[gid]) for gid in ids)), timeout=600)

    asyncio.run(watch_all())
    seconds = time.perf_counter() - start
    steps = 0
    for gid, (game, seats) in zip(ids, GAMES):
        rec = records.load(folder / f"{gid}.json")
        state = records.replay(rec)
        assert state.is_terminal() and rec["game"] == game and len(rec["players"]) == len(seats)
        assert seen[gid] == sorted(seen[gid]) and seen[gid][-1] == len(rec["steps"])
        steps += len(rec["steps"])
    print(f"\n{len(ids)} bot games at once: {steps} steps in {seconds:.1f} s, {steps / seconds:.0f} steps/s "
          f"(each step saved to its record and pushed to a watcher)")
