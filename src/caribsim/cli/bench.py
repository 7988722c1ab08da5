"""`caribsim bench`."""
from __future__ import annotations

import json

import caribsim
from caribsim.cli._args import player_counts


def add_parser(sub):
    p = sub.add_parser("bench", help="measure the throughput figures of the README")
    p.add_argument("--quick", action="store_true", help="smaller runs (a few seconds)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(subparser=p)
    return p


def run(args, out) -> int:
    import random as _random
    import time

    from caribsim.search import mcts

    rows = []
    for name in caribsim.games():
        for players in player_counts(name):
            game = caribsim.load_game(name, players=players)
            games = 500 if args.quick else 5000
            runs = [caribsim.random_playouts(game.new_initial_state(seed=1), games, seed=r) for r in range(3)]
            best = sorted(r.games_per_second for r in runs)[1]
            rows.append({"game": name, "players": players, "what": "random playouts (C, 1 thread)",
                         "value": best, "unit": "games/s"})
        game = caribsim.load_game(name)
        rng = _random.Random(0)
        decisions, t0 = 0, time.perf_counter()
        for seed in range(3 if args.quick else 20):
            st = game.new_initial_state(seed=seed)
            while not st.is_terminal():
                st.apply_action(rng.choice(st.legal_actions()))
                decisions += 1
        rows.append({"game": name, "players": game.num_players(), "what": "Python loop (legal_actions, "
                     "random.choice, apply_action)", "value": decisions / (time.perf_counter() - t0),
                     "unit": "decisions/s"})
        st = game.new_initial_state(seed=1)
        while st.is_chance_node():
            st.resolve_chance()
        iterations = 1000 if args.quick else 5000
        r = mcts.search(st, iterations=iterations, seed=0)
        rows.append({"game": name, "players": game.num_players(), "what": "MCTS from the opening, 1 thread",
                     "value": r.iterations / r.seconds, "unit": "simulations/s"})
    if args.json:
        print(json.dumps(rows, indent=2), file=out)
        return 0
    for row in rows:
        print(f"{row['game']:<12} {row['players']}p  {row['what']:<58} {row['value']:>12,.0f} {row['unit']}",
              file=out)
    return 0
