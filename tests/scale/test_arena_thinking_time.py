"""The arena's thinking time per bot (BotResult.seconds_per_move and cpu_seconds_per_move,
the CLI's wall and cpu ms/move): the wall time and the process's CPU time in each bot's
step() per decision, kept out of the per-game results so that those stay identical on every
backend."""

from __future__ import annotations

import json

from caribsim.__main__ import main
from caribsim.scale import arena
from caribsim.search import bots


class Slow(bots.RandomBot):
    """A random bot that spins for a fixed time in every step (a known thinking time)."""

    def step(self, state):
        import time

        end = time.perf_counter() + 0.004
        while time.perf_counter() < end:
            pass
        return super().step(state)


def test_each_bot_has_its_own_thinking_time():
    result = arena.play_match("port_royal", [Slow(), bots.RandomBot()], 4, seed=1, players=2)
    slow, fast = result.bots
    assert slow.seconds_per_move >= 0.004  # it spins 4 ms a decision
    assert fast.seconds_per_move < 0.001 < slow.seconds_per_move
    assert all("think" not in g and "moves" not in g for g in result.games)


class Sleepy(bots.RandomBot):
    """A random bot that sleeps in every step: wall time, no CPU time."""

    def step(self, state):
        import time

        time.sleep(0.003)
        return super().step(state)


def test_cpu_time_counts_the_bots_work_not_its_waits():
    result = arena.play_match("port_royal", [Slow(), Sleepy()], 4, seed=1, players=2)
    slow, sleepy = result.bots
    assert slow.cpu_seconds_per_move > 0.5 * slow.seconds_per_move  # it spins: CPU time
    assert sleepy.seconds_per_move >= 0.003
    assert sleepy.cpu_seconds_per_move < 0.5 * sleepy.seconds_per_move  # it sleeps
    assert all("cpu" not in g for g in result.games)


def test_the_per_game_results_do_not_depend_on_the_timing_backend():
    specs = ["mcts:20", "random"]
    local = arena.play_match(
        "puerto_rico", [bots.parse_bot(s) for s in specs], 4, seed=2, players=2
    )
    procs = arena.play_match(
        "puerto_rico",
        [bots.parse_bot(s) for s in specs],
        4,
        seed=2,
        players=2,
        backend="processes",
        workers=2,
        chunk_size=2,
    )
    assert procs.games == local.games
    assert all(b.seconds_per_move > 0 for b in local.bots + procs.bots)
    assert all(b.cpu_seconds_per_move > 0 for b in local.bots + procs.bots)
    assert local.bots[0].seconds_per_move > local.bots[1].seconds_per_move  # searching takes longer


def test_the_cli_shows_ms_per_move_and_the_json_has_seconds(capsys):
    assert main(["arena", "port_royal", "--bots", "mcts:10,random", "--games", "2"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "win rate" in line)
    assert header.split()[-1] == "ms/move" and "cpu ms/move  wall ms/move" in header
    rows = [
        line.split() for line in out.splitlines() if line.strip().startswith(("mcts:10", "random"))
    ]
    assert len(rows) == 2 and all(float(r[-1]) >= 0 and float(r[-2]) >= 0 for r in rows)
    assert main(["arena", "port_royal", "--bots", "mcts:10,random", "--games", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(
        isinstance(b["seconds_per_move"], float) and b["seconds_per_move"] >= 0
        for b in data["bots"]
    )
    assert all(
        isinstance(b["cpu_seconds_per_move"], float) and b["cpu_seconds_per_move"] >= 0
        for b in data["bots"]
    )
