"""Old build against new: the very same games, decision by decision.

A speed-up of a game's rules must not change a single game. This plays ``--games`` random
games per player count with both builds side by side (the older modules loaded as in
``compare_builds.py``), the same seeds and the same choices, and compares at every position
the legal action list (its order too: a random playout picks by index), the current player,
the chance outcomes, and at the end the returns and the number of decisions; then the C
random playouts (``caribsim.random_playouts``) of both builds from the same starts: every
game's returns, scores and length.

    python bench/compare_games.py --old /tmp/old/src/caribsim [--game cuba] [--games 2000]

Exits 1 at the first difference (and says where), 0 when every game is the same.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_builds import load_old, old_state

PLAYERS = {"cuba": (2, 3, 4, 5), "port_royal": (2, 3, 4, 5), "puerto_rico": (3, 4, 5)}
# option sets beside the defaults (Cuba's limited supply and bank take other branches)
OPTIONS = {"cuba": ({}, {"supply_limited": True, "pesos_limited": True})}


def same_game(old, new, rng: random.Random, where: str) -> int:
    """Play one game on both states with the same choices; returns its decisions."""
    decisions = 0
    while True:
        if old.is_terminal() != new.is_terminal():
            raise SystemExit(f"{where}: is_terminal differs after {decisions} decisions")
        if new.is_terminal():
            break
        lo, ln = old.legal_actions(), new.legal_actions()
        if lo != ln:
            raise SystemExit(f"{where}, decision {decisions}: legal actions {lo} != {ln}")
        if old.current_player() != new.current_player():
            raise SystemExit(f"{where}, decision {decisions}: current player differs")
        if new.is_chance_node():
            co, cn = old.chance_outcomes(), new.chance_outcomes()
            if co != cn:
                raise SystemExit(f"{where}: chance outcomes {co} != {cn}")
            a, b = old.resolve_chance(), new.resolve_chance()
            if a != b:
                raise SystemExit(f"{where}: chance resolved to {a} and {b}")
        else:
            a = rng.choice(ln)
            old.apply_action(a)
            new.apply_action(a)
            decisions += 1
    if list(old.returns()) != list(new.returns()):
        raise SystemExit(f"{where}: returns {old.returns()} != {new.returns()}")
    if old.serialize() != new.serialize():
        raise SystemExit(f"{where}: the final states differ")
    return decisions


def compare(module, game: str, options: dict, args) -> None:
    label = f"{game} {options}"
    decisions = 0
    for g in range(args.games):
        old, new = old_state(module, game, options, seed=1000 + g)
        decisions += same_game(old, new, random.Random(g), f"{label} game {g} (seed {1000 + g})")
    old, new = old_state(module, game, options, seed=1)
    ro = old._random_playouts(args.playouts, 7, 1, 0)
    rn = new._random_playouts(args.playouts, 7, 1, 0)
    for name, a, b in zip(("returns", "scores", "lengths"), ro[:3], rn[:3]):
        if not np.array_equal(a, b):
            bad = int(np.argwhere(a != b)[0][0])
            raise SystemExit(f"{label} random_playouts: {name} differ (game {bad})")
    print(
        f"{label}: {args.games} games ({decisions} decisions) the same in every legal list, "
        f"player, chance outcome, returns and final state; {args.playouts} C playouts the same "
        f"returns, scores and lengths ({int(rn[2].sum())} decisions)"
    )
    sys.stdout.flush()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", required=True, type=Path, help="folder of the older build's modules")
    p.add_argument("--game", choices=sorted(PLAYERS), action="append")
    p.add_argument("--games", type=int, default=2000, help="Python-loop games per player count")
    p.add_argument("--playouts", type=int, default=20000, help="C playouts per player count")
    args = p.parse_args(argv)
    for game in args.game or ["cuba"]:
        module = load_old(args.old, game)
        for extra in OPTIONS.get(game, ({},)):
            for players in PLAYERS[game]:
                compare(module, game, {"players": players, **extra}, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
