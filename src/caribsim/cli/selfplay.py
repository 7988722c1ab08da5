"""`caribsim selfplay`."""

from __future__ import annotations

import caribsim
from caribsim.cli._args import (
    MAX_GAMES,
    add_backend_arguments,
    game_options,
    int_at_least,
    output_dir,
    parse_option,
    parse_seed,
    show_progress,
)


def add_parser(sub):
    p = sub.add_parser(
        "selfplay",
        help="write self-play training data (observations, legal masks, "
        "search policies, returns) as compressed numpy shards",
        description="Every seat is played by the bot: an MCTS bot (mcts:N, its "
        "visit shares are the policy target) or a guided-search AlphaZeroBot "
        "(puct:N, gumbel:N, alphazero:N:model=FILE.npz; its search policy is the "
        "target); see docs/selfplay.md for "
        "the format. Rerunning the same command on the same --out finishes an "
        "interrupted run.",
    )
    p.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        type=output_dir("--out"),
        help="folder of the shards and manifest.json",
    )
    p.add_argument(
        "--bot",
        default="mcts:200",
        help="bot spec: mcts:N[:key=value...], puct:N, gumbel:N or "
        "alphazero:N:model=FILE.npz[:gumbel=true] (default mcts:200)",
    )
    p.add_argument(
        "--batch",
        type=int_at_least(1, "batch"),
        default=None,
        help="guided bots only: play B games of each task at once, one batched "
        "search per step for all of them",
    )
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
        type=int_at_least(1, "games", MAX_GAMES["selfplay"]),
        default=100,
        help=f"number of games, at most {MAX_GAMES['selfplay']:,} (default 100)",
    )
    p.add_argument("--seed", "-s", type=parse_seed, default=0, help="run seed (default 0)")
    p.add_argument(
        "--games-per-shard",
        type=int_at_least(1, "games per shard"),
        default=None,
        help="games per shard and per task (default: about four per worker, at most 100)",
    )
    p.add_argument(
        "--include-forced",
        action="store_true",
        help="also record decisions with a single legal move",
    )
    p.add_argument(
        "--option",
        "-o",
        type=parse_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra game option (repeatable)",
    )
    add_backend_arguments(p, "local")
    p.set_defaults(subparser=p)
    return p


def run(args, out) -> int:
    from caribsim.scale import selfplay

    parser = args.subparser
    options = game_options(args)
    if args.players is not None:
        options["players"] = args.players
    if args.chunk_size is not None or args.resume is not None:
        parser.error(
            "use --games-per-shard for the chunk size (not --chunk-size); --out is already resumable "
            "(not --resume)"
        )
    try:
        m = selfplay.generate(
            args.game,
            args.bot,
            args.games,
            args.out,
            seed=args.seed,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            games_per_shard=args.games_per_shard,
            include_forced=args.include_forced,
            progress=show_progress(args),
            batch=args.batch,
            retries=args.retries,
            **options,
        )
    except (ValueError, TypeError, RuntimeError) as e:
        parser.error(str(e))
    secs = m["seconds_this_run"]
    print(
        f"wrote {args.out}: {m['n_games']} games, {m['decisions']:,} decisions in {len(m['shards'])} shards "
        f"({m['backend']}, {m['workers']} worker{'s' if m['workers'] != 1 else ''}, {secs:.1f} s)",
        file=out,
    )
    return 0
