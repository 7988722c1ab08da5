"""The clients of bench/test_bench_web_load.py other than the seats that time their moves: a
process of their own (``python bench/_web_load.py CONFIG_JSON``), so that their Python does not
share a GIL with the benchmark's clock and its calibration.

Each client is an asyncio task on this process's loop, of one kind:

- ``reader``: reads a game's view (``GET /api/games/ID``, a watcher's) every ``think`` seconds
  (on average), a game of the lobby's lists, unfinished or finished;
- ``follower``: follows a game under way over its WebSocket (``/api/games/ID/ws``) and reads
  every view pushed, for a few seconds or to the game's end, then another game;
- ``finisher``: makes a game that ends at once, from a record played on at its last decision
  (``POST /api/games`` with ``record``, ``step``, bots on every seat: the bot's one move ends
  it), and follows it over its WebSocket to its end: the cheap way to make and finish
  thousands of games through the server (each a new game stored whole, moved, ended);
- ``whole``: makes a game of bots only from its first step (2-player Cuba, random bots) and
  follows it to its end;
- ``slow_ws``: opens a game's WebSocket and never reads it (a small receive buffer, so the
  server's writes back up at once), for ``hold`` seconds, then another;
- ``slow_http``: writes a few requests for big views on a connection and never reads the
  answers, for ``hold`` seconds, then another.

The lobby's lists are read twice a second by one more task (``scout``). An answer that is not
the documented one (200 for a view and the lobby, 201 for a create, a view for every message
of a WebSocket, no socket closed before its game's end) is an error: counted, and its first
lines kept. None of these clients can race another for a move (they play none, and a bot's
game has no human seat), so no 409 is expected here either.

stdin's end stops the clients; the process then prints its counts as one JSON line.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import json
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _web_helpers import Connection

import caribsim
from caribsim.human import records

RECORD_GAMES = [("cuba", 2), ("cuba", 2), ("port_royal", 2), ("puerto_rico", 2)]


def played_on_records(n: int, seed: int = 7) -> list:
    """``n`` records of random games (each with the step of its last decision): the games the
    finishers play on from there."""
    out = []
    for k in range(n):
        name, players = RECORD_GAMES[k % len(RECORD_GAMES)]
        rng = random.Random(seed + k)
        state = caribsim.load_game(name, players=players).new_initial_state(seed=seed + k)
        while not state.is_terminal():
            if state.is_chance_node():
                state.resolve_chance()
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        record = records.record_game(state, seed + k)
        last = max(i for i, step in enumerate(record["steps"]) if step["player"] >= 0)
        out.append((record, last, players))
    return out


class Load:
    def __init__(self, config: dict):
        self.port = config["port"]
        self.config = config
        self.stop = asyncio.Event()
        self.counts: collections.Counter = collections.Counter()
        self.errors: list[str] = []
        self.unfinished: list[str] = []
        self.finished: list[str] = []
        self.game_seconds: dict[str, list[float]] = collections.defaultdict(list)
        self.records = played_on_records(16)

    def error(self, kind: str, what: str) -> None:
        self.counts[f"{kind} error"] += 1
        if len(self.errors) < 20:
            self.errors.append(f"{kind}: {what}"[:400])

    async def pause(self, seconds: float) -> None:
        """Sleep about ``seconds`` (0.5x to 1.5x), less if the load stops."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds * random.uniform(0.5, 1.5))

    async def client(self, kind: str, k: int) -> None:
        run = getattr(self, kind)
        while not self.stop.is_set():
            try:
                await run(k)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a client's failure is an error of the load, never silent
                self.error(kind, f"{type(e).__name__}: {e}")
                await self.pause(0.5)

    # --- the lobby ------------------------------------------------------------------------
    async def scout(self, _k) -> None:
        http = Connection(self.port)
        try:
            while not self.stop.is_set():
                status, lobby, _ = await http.request("GET", "/api/games?limit=200")
                self.counts[f"lobby {status}"] += 1
                if status != 200:
                    self.error("scout", f"GET /api/games answered {status} {lobby}")
                else:
                    self.unfinished = [g["id"] for g in lobby["games"]]
                    self.finished = [g["id"] for g in lobby["finished"]]
                await self.pause(0.5)
        finally:
            http.close()

    def some_game(self, finished_too: bool):
        ids = self.unfinished + (self.finished if finished_too else [])
        return random.choice(ids) if ids else None

    # --- the kinds ------------------------------------------------------------------------
    async def reader(self, _k) -> None:
        http = Connection(self.port)
        try:
            while not self.stop.is_set():
                await self.pause(self.config["think"])
                gid = self.some_game(finished_too=True)
                if gid is None:
                    continue
                status, view, _ = await http.request("GET", f"/api/games/{gid}")
                self.counts[f"view {status}"] += 1
                if status != 200 or view.get("id") != gid:
                    self.error("reader", f"GET /api/games/{gid} answered {status} {view}")
        finally:
            http.close()

    async def follow(self, kind: str, gid: str, seconds: float) -> bool:
        """Read the views pushed for ``gid`` for ``seconds`` or to its end; whether it ended."""
        import websockets

        deadline = time.monotonic() + seconds
        version = -1
        async with websockets.connect(
            f"ws://127.0.0.1:{self.port}/api/games/{gid}/ws", max_size=None
        ) as ws:
            while not self.stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                try:
                    message = await asyncio.wait_for(ws.recv(), min(left, 0.5))
                except asyncio.TimeoutError:
                    continue
                view = json.loads(message)
                self.counts[f"{kind} pushed"] += 1
                if "error" in view or view.get("id") != gid or view["version"] < version:
                    self.error(kind, f"game {gid}: pushed {str(view)[:200]} after {version}")
                    return False
                version = view["version"]
                if view["over"]:
                    return True
        return False

    async def follower(self, _k) -> None:
        gid = self.some_game(finished_too=False)
        if gid is None:
            await self.pause(0.2)
            return
        await self.follow("follower", gid, random.uniform(2, 6))

    async def made(self, kind: str, http, body) -> None:
        """Make a game and follow it to its end, timed."""
        t0 = time.perf_counter()
        status, made, _ = await http.request("POST", "/api/games", body)
        self.counts[f"create {status}"] += 1
        if status != 201:
            self.error(kind, f"POST /api/games answered {status} {made}")
            await self.pause(0.5)
            return
        if await self.follow(kind, made["id"], 120):
            self.counts[f"{kind} finished"] += 1
            self.game_seconds[kind].append(time.perf_counter() - t0)
        elif not self.stop.is_set():
            self.error(kind, f"game {made['id']} did not end in 120 s")

    async def finisher(self, k) -> None:
        http = Connection(self.port)
        try:
            n = k
            while not self.stop.is_set():
                record, last, players = self.records[n % len(self.records)]
                n += 1
                body = {"record": record, "step": last, "seats": ["random"] * players}
                await self.made("finisher", http, body)
        finally:
            http.close()

    async def whole(self, _k) -> None:
        http = Connection(self.port)
        try:
            while not self.stop.is_set():
                body = {"game": "cuba", "players": 2, "seats": ["random", "random"]}
                await self.made("whole", http, body)
        finally:
            http.close()

    async def held(self, request: bytes) -> None:
        """A connection that writes ``request`` and never reads, for ``hold`` seconds."""
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
        sock.setblocking(False)
        try:
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", self.port))
            await asyncio.get_running_loop().sock_sendall(sock, request)
            await self.pause(self.config["hold"])
        finally:
            sock.close()

    async def slow_ws(self, _k) -> None:
        gid = self.some_game(finished_too=False)
        if gid is None:
            await self.pause(0.2)
            return
        key = base64.b64encode(os.urandom(16)).decode()
        await self.held(
            (
                f"GET /api/games/{gid}/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        self.counts["slow_ws held"] += 1

    async def slow_http(self, _k) -> None:
        gid = self.some_game(finished_too=True)
        if gid is None:
            await self.pause(0.2)
            return
        one = f"GET /api/games/{gid} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        await self.held(one * 8)
        self.counts["slow_http held"] += 1

    async def run(self) -> dict:
        loop = asyncio.get_running_loop()
        ended = loop.run_in_executor(None, sys.stdin.read)  # stdin's end: stop
        tasks = [asyncio.ensure_future(self.client("scout", 0))]
        for kind, n in self.config["clients"].items():
            tasks += [asyncio.ensure_future(self.client(kind, k)) for k in range(n)]
        print("ready", flush=True)
        await ended
        t0 = time.monotonic()
        self.stop.set()
        _, pending = await asyncio.wait(tasks, timeout=30)
        for t in pending:
            t.cancel()
        if pending:
            self.error("load", f"{len(pending)} clients did not stop in 30 s")
        seconds = {
            kind: {
                "games": len(times),
                "median": sorted(times)[len(times) // 2],
                "max": max(times),
            }
            for kind, times in self.game_seconds.items()
        }
        return {
            "counts": dict(self.counts),
            "errors": self.errors,
            "game_seconds": seconds,
            "stop_seconds": time.monotonic() - t0,
        }


def main() -> None:
    config = json.loads(sys.argv[1])
    print(json.dumps(asyncio.run(Load(config).run())), flush=True)


if __name__ == "__main__":
    main()
