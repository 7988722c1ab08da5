"""`caribsim train`."""

from __future__ import annotations

import json

import caribsim
from caribsim.cli._args import (
    add_where_arguments,
    game_options,
    int_at_least,
    output_dir,
    parse_option,
    parse_seed,
    show_progress,
)


def add_parser(sub):
    p = sub.add_parser(
        "train",
        help="train a policy/value network by AlphaZero-style rounds of "
        "self-play, training and evaluation (needs caribsim[nn])",
        description="Each round plays self-play games with the best network "
        "through the batched guided search, trains the network (PyTorch) on the "
        "last rounds' data, plays it against the best one in a seat-rotated match "
        "and keeps it when its win share reaches --threshold. Checkpoints, "
        "log.jsonl, curve.png and best.npz (loadable as "
        "alphazero:N:model=DIR/best.npz) go to --out; --resume continues a run. "
        "See docs/training.md.",
    )
    p.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        type=output_dir("--out"),
        help="the run's folder (checkpoints, log, plot, best network)",
    )
    p.add_argument(
        "--players",
        "-p",
        type=int_at_least(1, "players"),
        default=None,
        help="number of players (default: the game's default)",
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
    p.add_argument(
        "--rounds",
        "-r",
        type=int_at_least(0, "rounds", 10**6),
        default=10,
        help="the run's last round (default 10; 0: only the --teacher's warm start; "
        "with --resume: train up to it)",
    )
    p.add_argument(
        "--games-per-round",
        "-n",
        type=int_at_least(1, "games per round", 10**6),
        default=32,
        help="self-play games per round (default 32)",
    )
    p.add_argument(
        "--simulations",
        type=int_at_least(1, "simulations", 10**6),
        default=32,
        help="guided-search simulations per decision (default 32)",
    )
    p.add_argument(
        "--eval-games",
        type=int_at_least(1, "eval games", 10**6),
        default=20,
        help="games of the evaluation match per round (default 20)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=0.55,
        help="win share the new network needs to become the best, 0..1.01 (default 0.55)",
    )
    p.add_argument(
        "--window",
        type=int_at_least(1, "window"),
        default=4,
        help="train on the self-play data of the last K rounds (default 4)",
    )
    p.add_argument(
        "--hidden",
        type=int_at_least(1, "hidden", 1 << 16),
        default=128,
        help="width of the residual MLP (default 128)",
    )
    p.add_argument(
        "--blocks",
        type=int_at_least(0, "blocks", 256),
        default=2,
        help="residual blocks (default 2)",
    )
    p.add_argument(
        "--epochs",
        type=int_at_least(1, "epochs", 10**6),
        default=1,
        help="passes over the window's data per round (default 1)",
    )
    p.add_argument(
        "--batch-size",
        type=int_at_least(1, "batch size"),
        default=256,
        help="rows per Adam step (default 256)",
    )
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate (default 0.001)")
    p.add_argument("--l2", type=float, default=1e-4, help="L2 weight of the loss (default 0.0001)")
    p.add_argument("--gumbel", action="store_true", help="a Gumbel root instead of PUCT")
    p.add_argument(
        "--selfplay-batch",
        type=int_at_least(1, "selfplay batch", 1 << 16),
        default=16,
        help="self-play games per task, played at once through one batched search (default 16)",
    )
    p.add_argument(
        "--teacher",
        metavar="BOT",
        default=None,
        help="warm start: round 0's network is trained on --teacher-games self-play games "
        "of this bot spec (e.g. mcts:800; default: a network drawn from the seed)",
    )
    p.add_argument(
        "--teacher-games",
        type=int_at_least(0, "teacher games", 10**6),
        default=0,
        help="games of the --teacher's self-play (default 0)",
    )
    p.add_argument("--seed", "-s", type=parse_seed, default=0, help="run seed (default 0)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out at its next round (same options)",
    )
    add_where_arguments(p, "local")  # the self-play and evaluation games
    p.add_argument(
        "--torch-threads",
        type=int_at_least(1, "torch threads", 1024),
        default=1,
        help="torch's threads while training (default 1: the small network's batches "
        "gain nothing from more)",
    )
    p.add_argument("--no-plot", action="store_true", help="no curve.png (no matplotlib needed)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines")
    p.add_argument("--json", action="store_true", help="print the log of every round as JSON")
    p.set_defaults(subparser=p)
    return p


def run(args, out) -> int:
    from caribsim.train import loop

    parser = args.subparser
    options = game_options(args)
    if args.players is not None:
        options["players"] = args.players
    try:
        result = loop.train(
            args.game,
            args.out,
            rounds=args.rounds,
            games_per_round=args.games_per_round,
            simulations=args.simulations,
            eval_games=args.eval_games,
            threshold=args.threshold,
            window=args.window,
            hidden=args.hidden,
            blocks=args.blocks,
            epochs=args.epochs,
            batch_size=args.batch_size,
            lr=args.lr,
            l2=args.l2,
            gumbel=args.gumbel,
            selfplay_batch=args.selfplay_batch,
            seed=args.seed,
            teacher=args.teacher,
            teacher_games=args.teacher_games,
            resume=args.resume,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            torch_threads=args.torch_threads,
            progress=show_progress(args),
            plot=not args.no_plot,
            **options,
        )
    except (ValueError, TypeError, RuntimeError, ImportError) as e:
        parser.error(str(e))
    if args.json:
        print(json.dumps(result["log"], indent=2), file=out)
        return 0
    print("  round  samples     loss  win share  best", file=out)
    for entry in result["log"]:
        print(
            f"  {entry['round']:>5}  {entry['train']['samples']:>7,}  {entry['train']['loss']['total']:>7.4f}  "
            f"{entry['eval']['win_share']:>9.3f}  {entry['best_round']:>4}",
            file=out,
        )
    print(
        f"wrote {args.out}: {len(result['log'])} rounds, best network of round {result['best_round']} "
        f"({result['best_model']})",
        file=out,
    )
    return 0
