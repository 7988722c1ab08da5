"""`caribsim bench`: every throughput figure of the README's table, from one run."""

from __future__ import annotations

import json
import os
import platform
import random as _random
import statistics
import sysconfig
import time

import caribsim
from caribsim.cli._args import player_counts


def add_parser(sub):
    p = sub.add_parser("bench", help="measure the throughput figures of the README")
    p.add_argument("--quick", action="store_true", help="smaller runs (a few seconds)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(subparser=p)
    return p


def machine() -> dict:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "compiler": platform.python_compiler(),
        "cflags_opt": "-O3",
        "platform": sysconfig.get_platform(),
        "load_1min": load,
    }


def _python_loop(game, seeds):
    """Decisions/s of the OpenSpiel-style loop: legal_actions, random.choice, apply_action
    (a chance outcome by resolve_chance)."""
    rng = _random.Random(0)
    decisions, t0 = 0, time.perf_counter()
    for seed in range(seeds):
        st = game.new_initial_state(seed=seed)
        while not st.is_terminal():
            if st.is_chance_node():
                st.resolve_chance()
            else:
                st.apply_action(rng.choice(st.legal_actions()))
            decisions += 1
    return decisions / (time.perf_counter() - t0)


def _positions(game, count):
    """`count` decision positions along random games, with the action taken at each."""
    rng = _random.Random(1)
    out, seed = [], 0
    while len(out) < count:
        st = game.new_initial_state(seed=seed)
        seed += 1
        while not st.is_terminal() and len(out) < count:
            if st.is_chance_node():
                st.resolve_chance()
                continue
            a = rng.choice(st.legal_actions())
            out.append((st.clone(), a))
            st.apply_action(a)
    return out


def _child_rates(positions, reps):
    t0 = time.perf_counter()
    for st, a in positions:
        for _ in range(reps):
            st.child(a)
    child = reps * len(positions) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for st, a in positions:
        for _ in range(reps):
            st.clone().apply_action(a)
    clone_apply = reps * len(positions) / (time.perf_counter() - t0)
    return child, clone_apply


def _opening(game):
    st = game.new_initial_state(seed=1)
    while st.is_chance_node():
        st.resolve_chance()
    return st


def run(args, out) -> int:
    from caribsim.search import mcts

    rows = []

    def add(name, players, what, value, unit):
        rows.append({"game": name, "players": players, "what": what, "value": value, "unit": unit})

    for name in caribsim.games():
        for players in player_counts(name):
            game = caribsim.load_game(name, players=players)
            games = 500 if args.quick else 5000
            runs = [
                caribsim.random_playouts(game.new_initial_state(seed=1), games, seed=r)
                for r in range(3)
            ]
            add(
                name,
                players,
                "random playouts (C, 1 thread)",
                sorted(r.games_per_second for r in runs)[1],
                "games/s",
            )
        game = caribsim.load_game(name, players=4)
        add(
            name,
            4,
            "Python loop (legal_actions, random.choice, apply_action, resolve_chance)",
            max(_python_loop(game, 3 if args.quick else 10) for _ in range(3)),
            "decisions/s",
        )
        child, clone_apply = _child_rates(_positions(game, 512), 20 if args.quick else 200)
        add(name, 4, "state.child(a) at 512 positions", child, "calls/s")
        add(name, 4, "state.clone() + apply_action(a) at 512 positions", clone_apply, "calls/s")
        iterations = 1000 if args.quick else 5000
        r = mcts.search(_opening(game), iterations=iterations, seed=0)
        add(name, 4, "MCTS from the opening, 1 thread", r.iterations / r.seconds, "simulations/s")
    game = caribsim.load_game("puerto_rico", players=3)
    st = _opening(game)
    for iterations in (2000, 20000):
        if args.quick:
            iterations //= 10
        ones: list[float] = []
        twos: list[float] = []
        for i in range(7 if iterations < 10000 else 3):  # alternating pairs: the ratio is
            for threads, rates in ((1, ones), (2, twos)):  # the median of the pairs'
                r = mcts.search(st, iterations=iterations, threads=threads, seed=i)
                rates.append(r.iterations / r.seconds)
        add(
            "puerto_rico",
            3,
            f"MCTS from the opening, {iterations} simulations, 1 thread",
            statistics.median(ones),
            "simulations/s",
        )
        add(
            "puerto_rico",
            3,
            f"MCTS from the opening, {iterations} simulations, 2 threads",
            statistics.median(twos),
            "simulations/s",
        )
        add(
            "puerto_rico",
            3,
            f"MCTS from the opening, {iterations} simulations, 2 threads / 1 thread",
            statistics.median(b / a for a, b in zip(ones, twos)),
            "x",
        )
    if args.json:
        print(json.dumps({"machine": machine(), "rows": rows}, indent=2), file=out)
        return 0
    m = machine()
    print(
        f"# {m['cpu']}, {m['cpus']} CPUs, Python {m['python']} ({m['compiler']}), "
        f"load {m['load_1min']:.2f}"
        if m["load_1min"] is not None
        else f"# {m['cpu']}",
        file=out,
    )
    for row in rows:
        value = f"{row['value']:>12.2f}" if row["unit"] == "x" else f"{row['value']:>12,.0f}"
        print(
            f"{row['game']:<12} {row['players']}p  {row['what']:<72} {value} {row['unit']}",
            file=out,
        )
    return 0
