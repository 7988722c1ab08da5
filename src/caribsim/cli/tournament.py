"""`caribsim tournament`."""

from __future__ import annotations

import caribsim
from caribsim.cli._args import (
    MAX_GAMES,
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
        "tournament",
        help="play a pool of more bots than seats and rate them (openskill Plackett-Luce)",
        description="Seat N of the bots at each game on a schedule (round-robin: every combination "
        "in every rotation; random: balanced random seatings), rate the bots with openskill's "
        "Plackett-Luce model (needs caribsim[rating]) and print a leaderboard sorted by the "
        "conservative ordinal mu - 3 sigma, with each pair's share of games finished above the "
        "other (95%% Wilson intervals). Bot specs as in arena (random, greedy, mcts:ITERATIONS, "
        "puct:SIMULATIONS, alphazero:SIMULATIONS:model=FILE.npz, ...).",
    )
    p.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p.add_argument(
        "--players",
        "-p",
        type=int_at_least(2, "players", 5),
        required=True,
        help="seats at each game (2-5; the game may allow fewer)",
    )
    p.add_argument(
        "--bots",
        "-b",
        required=True,
        help="comma-separated bot specs of the pool, at least as many as seats, e.g. "
        "mcts:300,greedy,random,random",
    )
    p.add_argument(
        "--games",
        "-n",
        type=int_at_least(1, "games", MAX_GAMES["arena"]),
        required=True,
        help="number of games (a multiple of the round-robin's cycle for round-robin)",
    )
    # checked by the tournament (one line naming both), which is imported only to run
    p.add_argument(
        "--schedule",
        metavar="round-robin|random",
        default="round-robin",
        help="how bots are seated: every combination in every rotation, or balanced "
        "random seatings (default round-robin)",
    )
    p.add_argument("--seed", "-s", type=parse_seed, default=0, help="tournament seed (default 0)")
    add_result_arguments(p, "the ratings with +- 3 sigma error bars (needs caribsim[plot])")
    add_backend_arguments(p, None)
    p.set_defaults(subparser=p)
    return p


def run(args, out) -> int:
    from caribsim.scale import tournament
    from caribsim.search import bots

    parser = args.subparser
    options = game_options(args)
    check_plot(args)  # before the games are played
    try:
        pool = [bots.parse_bot(spec) for spec in args.bots.split(",")]
        result = tournament.play_tournament(
            args.game,
            pool,
            args.games,
            schedule=args.schedule,
            seed=args.seed,
            save=args.save,
            save_games=args.save_games,
            progress=show_progress(args),
            players=args.players,
            **backend_kwargs(args),
            **options,
        )
        if args.plot:
            tournament.plot(result, args.plot)
    except (ValueError, TypeError, RuntimeError) as e:
        parser.error(str(e))
    if args.json:
        print(result.to_json(), file=out)
        return 0
    opts = ", ".join(f"{k}={v}" for k, v in result.options.items())
    print(
        f"{result.game} ({opts}): {len(result.bots)} bots, {result.n_games} games, {result.schedule} "
        f"schedule, seed {result.seed}, mean length {result.mean_length:.1f} decisions",
        file=out,
    )
    print_result_run(result, out)
    print(result.table(), file=out)
    return 0
