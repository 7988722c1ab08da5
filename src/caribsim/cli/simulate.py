"""`caribsim simulate`."""

from __future__ import annotations

import json

import caribsim
from caribsim._game import MAX_THREADS
from caribsim.cli._args import (
    MAX_GAMES,
    add_backend_arguments,
    backend_kwargs,
    game_options,
    int_at_least,
    output_dir,
    parse_option,
    parse_seed,
    print_run,
    show_progress,
)


def add_parser(sub):
    p = sub.add_parser(
        "simulate",
        help="run uniformly random playouts in C and print throughput and outcome statistics",
        description="Play K uniformly random games from the initial state entirely in C "
        "(caribsim.random_playouts) and report games/s, decisions/s, mean decisions per game, "
        "mean score per seat and win rate per seat (shared wins split).",
    )
    p.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p.add_argument(
        "--players",
        "-p",
        type=int_at_least(1, "players"),
        default=None,
        help="number of players (default: the game's default)",
    )
    p.add_argument(
        "--games",
        "-n",
        type=int_at_least(1, "games", MAX_GAMES["simulate"]),
        default=1000,
        help=f"number of games to play, at most {MAX_GAMES['simulate']:,} (default 1000)",
    )
    p.add_argument("--seed", "-s", type=parse_seed, default=0, help="playout seed (default 0)")
    p.add_argument(
        "--threads",
        "-t",
        type=int_at_least(1, "threads", MAX_THREADS),
        default=1,
        help="worker threads; results do not depend on it (default 1)",
    )
    p.add_argument(
        "--option",
        "-o",
        type=parse_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra game option, e.g. -o all_colonists_and_vp=true (repeatable)",
    )
    p.add_argument(
        "--bots",
        "-b",
        default=None,
        help="comma-separated bot specs, one per seat (random, greedy, mcts:N...): "
        "games are then driven from Python by the bots; default: random playouts in C",
    )
    p.add_argument(
        "--save-games",
        metavar="DIR",
        default=None,
        type=output_dir("--save-games"),
        help="write every game's record to DIR (games are then driven from Python)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_backend_arguments(p, "local")
    p.set_defaults(subparser=p)
    return p


def run(args, out) -> int:
    parser = args.subparser
    options = game_options(args)
    if args.players is not None:
        options["players"] = args.players
    if (args.bots is not None or args.save_games is not None) and args.threads != 1:
        parser.error("--threads applies to the C playouts; bot games run on one thread")
    try:
        result = caribsim.simulate(
            args.game,
            args.games,
            seed=args.seed,
            bots=args.bots.split(",") if args.bots else None,
            threads=args.threads,
            save_games=args.save_games,
            progress=show_progress(args),
            **backend_kwargs(args),
            **options,
        )
    except (ValueError, TypeError, RuntimeError) as e:
        parser.error(str(e))
    summary = result.summary()
    summary["threads"] = args.threads
    if args.json:
        print(json.dumps(summary, indent=2), file=out)
        return 0
    opts = ", ".join(f"{k}={v}" for k, v in summary["options"].items())
    who = "games of " + ",".join(summary["bots"]) if summary["bots"] else "random games"
    print(
        f"{summary['game']} ({opts}): {summary['games']:,} {who}, seed {summary['seed']}", file=out
    )
    print_run(summary, out)
    print(f"  decisions/s              {summary['decisions_per_second']:,.0f}", file=out)
    print(f"  mean decisions per game  {summary['mean_decisions_per_game']:.1f}", file=out)
    print("  seat  mean score  win rate", file=out)
    for seat, (score, win) in enumerate(zip(summary["mean_score"], summary["win_rate"])):
        print(f"  {seat:>4}  {score:>10.2f}  {win:>8.3f}", file=out)
    print("  (win rate: share of games won, ties split; seat 0 is the first Governor)", file=out)
    return 0
