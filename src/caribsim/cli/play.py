"""`caribsim play`."""
from __future__ import annotations

import caribsim
from caribsim.cli._args import int_at_least, parse_seed, parse_option, output_file, game_options


def add_parser(sub):
    p = sub.add_parser("play", help="play a game against bots in the terminal",
                       description="You play one seat, bots the others. At your turn type the "
                       "number of a move or its name (an unambiguous prefix is enough), undo, "
                       "hint, save FILE, help or quit.")
    p.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p.add_argument("--players", "-p", type=int_at_least(1, "players"), default=None,
                   help="number of players (default: one more than the bots)")
    p.add_argument("--seat", type=int_at_least(0, "seat"), default=0, help="your seat (default 0)")
    p.add_argument("--bots", "-b", default=None,
                   help="comma-separated bot specs for the other seats (default: mcts:2000 each): random, "
                   "greedy, mcts:ITERATIONS[:key=value...], puct:SIMULATIONS, gumbel:SIMULATIONS, "
                   "alphazero:SIMULATIONS:model=FILE.npz[:gumbel=true] (see 'caribsim arena -h')")
    p.add_argument("--seed", "-s", type=parse_seed, default=0, help="game seed (default 0)")
    p.add_argument("--record", metavar="FILE", type=output_file("--record"),
                   help="write the game record when the game ends")
    p.add_argument("--hint-iterations", type=int_at_least(1, "hint iterations"), default=2000,
                   help="search iterations for 'hint' (default 2000)")
    p.add_argument("--color", dest="color", action="store_true", default=None, help="force colour")
    p.add_argument("--no-color", dest="color", action="store_false", help="no colour")
    p.add_argument("--option", "-o", type=parse_option, action="append", default=[], metavar="KEY=VALUE",
                   help="extra game option (repeatable)")
    p.set_defaults(subparser=p)
    return p


def run(args, out) -> int:
    from caribsim.search import bots
    from caribsim.human import play

    parser = args.subparser
    options = game_options(args)
    try:
        specs = args.bots.split(",") if args.bots else None
        players = args.players or (len(specs) + 1 if specs else None)
        if players is not None:
            options["players"] = players
        game = caribsim.load_game(args.game, **options)
        specs = specs or ["mcts:2000"] * (game.num_players() - 1)
        opponents = [bots.parse_bot(s) for s in specs]
        return play.run(game, args.seat, opponents, seed=args.seed, stdout=out, color=args.color,
                        record_path=args.record, hint_iterations=args.hint_iterations)
    except (ValueError, TypeError) as e:
        parser.error(str(e))
