"""A tiny AlphaZero loop in about 20 s (22 s on a quiet 2-vCPU VM): self-play data, a small
numpy MLP trained on it, and that MLP guiding a search (``caribsim.bots.AlphaZeroBot``) against
random players.

    python examples/alphazero_tiny.py --game puerto_rico --players 3 --json out.json

1. ``selfplay.generate`` plays ``--selfplay-games`` games with ``--selfplay-bot`` in every
   seat (an MCTS bot ``mcts:N`` or a guided one ``puct:N``) and writes the shards: per
   decision the mover's observation, the legal moves, the search's policy and the returns.
2. ``evaluators.train_mlp`` trains an MLP (``--hidden``, ``--epochs``) on them: the policy
   head on the search's policy, the value head on the returns.
3. ``arena.play_match`` plays ``--arena-games`` seat-rotated games of
   ``AlphaZeroBot(mlp, simulations=--simulations)`` against RandomBots in the other seats,
   and prints its win share (a shared win counts its share) with the 95% Wilson interval,
   beside what a random player wins (1 / players).

Everything is seeded by ``--seed``: the same command gives the same data, the same weights
and the same games on one machine (the MLP is plain numpy; BLAS may round differently on
another machine). The JSON result (``--json FILE``, also printed) holds the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import caribsim
from caribsim import arena, bots, selfplay
from caribsim.search import evaluators


def _hidden(text):
    try:
        widths = tuple(int(w) for w in text.split(",") if w.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"hidden must be comma-separated widths, e.g. 64,64, got {text!r}"
        ) from None
    if any(w < 1 for w in widths):
        raise argparse.ArgumentTypeError(f"hidden widths must be >= 1, got {text!r}")
    return widths


def _positive(name):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name} must be >= 1, got {value}")
        return value

    return parse


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--game", default="puerto_rico", choices=caribsim.games())
    p.add_argument("--players", type=_positive("players"), default=3)
    p.add_argument("--selfplay-bot", default="mcts:20", help="self-play bot spec (default mcts:20)")
    p.add_argument("--selfplay-games", type=_positive("selfplay games"), default=60)
    p.add_argument("--hidden", type=_hidden, default=(64, 64), help="MLP widths (default 64,64)")
    p.add_argument("--epochs", type=_positive("epochs"), default=10)
    p.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate (default 0.002)")
    p.add_argument(
        "--simulations",
        type=_positive("simulations"),
        default=16,
        help="AlphaZeroBot's simulations per decision (default 16)",
    )
    p.add_argument("--gumbel", action="store_true", help="a Gumbel root instead of PUCT")
    p.add_argument("--arena-games", type=_positive("arena games"), default=300)
    p.add_argument(
        "--processes",
        type=_positive("processes"),
        default=1,
        help="worker processes for the self-play and the arena (default 1)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", default=None, help="self-play folder (default: a temporary one)")
    p.add_argument("--save", default=None, help="write the trained MLP to this .npz")
    p.add_argument("--json", default=None, help="write the result to this file")
    args = p.parse_args(argv)
    try:
        caribsim.load_game(args.game, players=args.players)
    except ValueError as e:
        p.error(f"--players: {e}")
    if not args.lr > 0:
        p.error("--lr must be > 0")
    if args.seed < 0:
        p.error("--seed must be >= 0")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    backend = {"backend": "processes", "workers": args.processes} if args.processes > 1 else {}
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or os.path.join(tmp, "selfplay")
        t0 = time.perf_counter()
        manifest = selfplay.generate(
            args.game,
            args.selfplay_bot,
            args.selfplay_games,
            data,
            players=args.players,
            seed=args.seed,
            progress=False,
            **backend,
        )
        t1 = time.perf_counter()
        net, losses = evaluators.train_mlp(
            data, hidden=args.hidden, epochs=args.epochs, lr=args.lr, seed=args.seed
        )
        t2 = time.perf_counter()
    if args.save:
        net.save(args.save)
    learner = bots.AlphaZeroBot(net, simulations=args.simulations, gumbel=args.gumbel)
    seats = [learner] + [bots.RandomBot() for _ in range(args.players - 1)]
    match = arena.play_match(
        args.game,
        seats,
        args.arena_games,
        seed=args.seed,
        progress=False,
        players=args.players,
        **backend,
    )
    t3 = time.perf_counter()
    me = match.bots[0]
    out = {
        "game": args.game,
        "players": args.players,
        "seed": args.seed,
        "selfplay": {
            "bot": args.selfplay_bot,
            "games": manifest["n_games"],
            "decisions": manifest["decisions"],
            "seconds": round(t1 - t0, 3),
        },
        "training": {
            "hidden": list(args.hidden),
            "epochs": args.epochs,
            "lr": args.lr,
            "losses": [round(x.total, 6) for x in losses],
            "seconds": round(t2 - t1, 3),
        },
        "arena": {
            "bot": repr(learner),
            "opponents": "random",
            "games": match.n_games,
            "win_share": me.win_rate,
            "ci95": list(me.ci95),
            "random_share": 1 / args.players,
            "returns": [g["returns"][g["seat_bot"].index(0)] for g in match.games],
            "seconds": round(t3 - t2, 3),
        },
    }
    text = json.dumps(out, indent=2)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text)
    print(
        f"self-play: {out['selfplay']['games']} games, {out['selfplay']['decisions']} decisions "
        f"({args.selfplay_bot}, {out['selfplay']['seconds']:.1f} s)",
        file=sys.stderr,
    )
    print(
        f"training: {args.epochs} epochs, loss {out['training']['losses'][0]:.3f} -> "
        f"{out['training']['losses'][-1]:.3f} ({out['training']['seconds']:.1f} s)",
        file=sys.stderr,
    )
    lo, hi = me.ci95
    print(
        f"AlphaZeroBot(mlp, simulations={args.simulations}) vs {args.players - 1} random: "
        f"win share {me.win_rate:.3f} [{lo:.3f}, {hi:.3f}] over {match.n_games} games "
        f"(random: {1 / args.players:.3f}; {out['arena']['seconds']:.1f} s)",
        file=sys.stderr,
    )
    return out


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
