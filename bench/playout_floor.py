"""How far each game's random playouts are from the floor of their loop, and the clock.

The floor (``caribsim._calibrate.floor_playouts``) is a playout with table lookups in place
of rules: per game a copy of a buffer the size of the game's state struct, per decision a legal list read from a
table, the state's generator's uniform pick and a switch writing a byte or two. The clock
comes from ``clock_chain``, a serial chain of one-cycle operations. Each round times, on this
thread's CPU clock, the chain, the floor and each game's ``random_playouts`` from the start
(3 players); the figures are medians over the rounds, the distances the medians of the
per-round ratios (a busy machine slows both sides of a round alike).

    OPENBLAS_NUM_THREADS=1 python bench/playout_floor.py [--rounds 7] [--players 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import caribsim
from caribsim import _calibrate
from caribsim._game import state_size

GAMES = ("puerto_rico", "port_royal", "cuba")


def _cpu(fn, *args, **kwargs):
    t0 = time.thread_time()
    out = fn(*args, **kwargs)
    return time.thread_time() - t0, out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--players", type=int, default=3)
    p.add_argument("--seconds", type=float, default=0.5, help="per workload and round")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0:
        p.error("--rounds must be >= 1 and --seconds > 0")
    states = {
        g: caribsim.load_game(g, players=args.players).new_initial_state(seed=1) for g in GAMES
    }
    # sizes of about --seconds each (the games' from a first short run)
    chain_steps = max(10**6, int(2e9 * args.seconds / 2))
    floor_games = max(100, int(args.seconds / 256 / 20e-9))
    per_game = {}
    for g, st in states.items():
        seconds, _ = _cpu(caribsim.random_playouts, st, 200, seed=0)
        per_game[g] = max(50, int(200 * args.seconds / max(seconds, 1e-6)))
    ghz = []
    floor_ns, game_ns, distance = ({g: [] for g in GAMES} for _ in range(3))
    for k in range(args.rounds):
        seconds, (_, ops) = _cpu(_calibrate.clock_chain, chain_steps, seed=k + 1)
        ghz.append(ops / seconds / 1e9)
        for g, st in states.items():
            seconds, _ = _cpu(
                _calibrate.floor_playouts, floor_games, state_bytes=state_size(st), seed=k + 1
            )
            floor = seconds / (floor_games * 256) * 1e9
            seconds, r = _cpu(caribsim.random_playouts, st, per_game[g], seed=k)
            ns = seconds / r.decisions * 1e9
            floor_ns[g].append(floor)
            game_ns[g].append(ns)
            distance[g].append(ns / floor)
    clock = statistics.median(ghz)
    print(
        f"clock (a chain of dependent one-cycle operations): {clock:.2f} GHz "
        f"({min(ghz):.2f}-{max(ghz):.2f} over {args.rounds} rounds)"
    )
    print(
        f"{'game':<16}{'state bytes':>12}{'ns/decision':>12}{'cycles':>8}"
        f"{'floor ns':>10}{'floor cycles':>14}{'x the floor':>13}"
    )
    for g, st in states.items():
        ns, floor = statistics.median(game_ns[g]), statistics.median(floor_ns[g])
        d = sorted(distance[g])
        print(
            f"{g + f' {args.players}p':<16}{state_size(st):>12}{ns:>12.1f}{ns * clock:>8.0f}"
            f"{floor:>10.1f}{floor * clock:>14.0f}{statistics.median(d):>7.2f} "
            f"[{d[0]:.2f}-{d[-1]:.2f}]"
        )


if __name__ == "__main__":
    main()
