"""`caribsim arena`."""

from __future__ import annotations

import caribsim
from caribsim.cli._args import (
    MAX_GAMES,
    MAX_WORKERS,
    add_backend_arguments,
    add_result_arguments,
    backend_kwargs,
    check_plot,
    game_options,
    int_at_least,
    parse_seed,
    print_result_run,
    show_progress,
)


def add_parser(sub):
    p = sub.add_parser(
        "arena",
        help="play seat-rotated games between bots and print win rates with 95%% intervals",
        description="Play K games between the bots (one per seat, seats rotated every game) "
        "and report each bot's win rate with a 95%% Wilson interval, mean score and the mean "
        "game length. Bots: random, greedy, mcts:ITERATIONS[:key=value...] "
        "(keys: iterations, seconds, c, reward, rollout, max_depth, threads, reuse); guided search "
        "(AlphaZeroBot): puct:SIMULATIONS or gumbel:SIMULATIONS with the C rollout evaluator "
        "(rollouts=N) or an MLP file (model=FILE.npz), alphazero:SIMULATIONS:model=FILE.npz"
        "[:gumbel=true], and key=value options of guided.BatchSearch (c_puct, temperature, "
        "leaves_per_tree, ...).",
    )
    p.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p.add_argument(
        "--bots",
        "-b",
        required=True,
        help="comma-separated bot specs, one per seat, e.g. mcts:1000,greedy,random,random or "
        "puct:200,alphazero:200:model=net.npz,random",
    )
    p.add_argument(
        "--games",
        "-n",
        type=int_at_least(1, "games", MAX_GAMES["arena"]),
        default=100,
        help=f"number of games, at most {MAX_GAMES['arena']:,} (default 100)",
    )
    p.add_argument("--seed", "-s", type=parse_seed, default=0, help="match seed (default 0)")
    p.add_argument(
        "--processes",
        "-j",
        type=int_at_least(1, "processes", MAX_WORKERS),
        default=1,
        help="shorthand for --backend processes --workers K (default 1)",
    )
    add_result_arguments(p, "bar chart of the win rates with 95%% intervals (needs caribsim[plot])")
    add_backend_arguments(p, None)
    p.set_defaults(subparser=p)
    return p


def run(args, out) -> int:
    from caribsim.scale import arena
    from caribsim.search import bots

    parser = args.subparser
    options = game_options(args)
    kwargs = backend_kwargs(args)
    check_plot(args)  # before the games are played
    if args.processes > 1:
        if args.backend not in (None, "processes") or args.workers not in (None, args.processes):
            parser.error("--processes K is --backend processes --workers K; give one or the other")
        kwargs.update(backend="processes", workers=args.processes)
    try:
        players = [bots.parse_bot(spec) for spec in args.bots.split(",")]
        options.setdefault("players", len(players))
        result = arena.play_match(
            args.game,
            players,
            args.games,
            seed=args.seed,
            save=args.save,
            save_games=args.save_games,
            progress=show_progress(args),
            **kwargs,
            **options,
        )
        if args.plot:
            arena.plot(result, args.plot)
    except (ValueError, TypeError, RuntimeError) as e:
        parser.error(str(e))
    if args.json:
        print(result.to_json(), file=out)
        return 0
    opts = ", ".join(f"{k}={v}" for k, v in result.options.items())
    print(
        f"{result.game} ({opts}): {result.n_games} games, seed {result.seed}, "
        f"mean length {result.mean_length:.1f} decisions",
        file=out,
    )
    print_result_run(result, out)
    width = max(16, *(len(b.name) for b in result.bots))
    print(
        f"  {'bot':<{width}} win rate   95% interval      mean score   cpu ms/move  wall ms/move",
        file=out,
    )
    for b in result.bots:
        cpu = "-" if b.cpu_seconds_per_move is None else f"{1000 * b.cpu_seconds_per_move:.2f}"
        ms = "-" if b.seconds_per_move is None else f"{1000 * b.seconds_per_move:.2f}"
        print(
            f"  {b.name:<{width}} {b.win_rate:>8.3f}   [{b.ci95[0]:.3f}, {b.ci95[1]:.3f}]  {b.mean_score:>10.2f}"
            f"  {cpu:>11}  {ms:>12}",
            file=out,
        )
    return 0
