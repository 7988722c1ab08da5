"""`caribsim play`."""

from __future__ import annotations

import argparse

import caribsim
from caribsim.cli._args import game_options, int_at_least, output_file, parse_option, parse_seed


def language(text: str) -> str:
    """The --lang value: a language the human layer speaks (en, cs)."""
    from caribsim.human import lang

    try:
        return lang.check(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_parser(sub):
    p = sub.add_parser(
        "play",
        help="play a game against bots in the terminal",
        description="You play one seat, bots the others. At your turn type the "
        "number of a move or its name (an unambiguous prefix is enough), undo, "
        "hint, board (the whole board; after each move only what changed is shown), save FILE, "
        "help or quit.",
    )
    p.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p.add_argument(
        "--players",
        "-p",
        type=int_at_least(1, "players"),
        default=None,
        help="number of players (default: one more than the bots)",
    )
    p.add_argument(
        "--seat",
        type=int_at_least(0, "seat"),
        default=None,
        help="your seat (default 0; with --load the record's human seat)",
    )
    p.add_argument(
        "--bots",
        "-b",
        default=None,
        help="comma-separated bot specs for the other seats (default: mcts:2000 each): random, "
        "greedy, mcts:ITERATIONS[:key=value...], puct:SIMULATIONS, gumbel:SIMULATIONS, "
        "alphazero:SIMULATIONS:model=FILE.npz[:gumbel=true] (see 'caribsim arena -h')",
    )
    p.add_argument(
        "--seed",
        "-s",
        type=parse_seed,
        default=None,
        help="game seed (default: a fresh random one, printed at the start)",
    )
    p.add_argument(
        "--record",
        metavar="FILE",
        type=output_file("--record"),
        help="write the game record when the game ends or you quit",
    )
    p.add_argument(
        "--load",
        metavar="FILE",
        default=None,
        help="resume the game of a record (written by 'save FILE' or --record) at its "
        "last step; the game's options and seed come from the record",
    )
    p.add_argument(
        "--hint-iterations",
        type=int_at_least(1, "hint iterations"),
        default=2000,
        help="search iterations for 'hint' (default 2000)",
    )
    p.add_argument(
        "--board",
        choices=("changes", "full"),
        default="changes",
        help="at each of your decisions: the board's lines that changed since you last saw "
        "it (changes, the default; type 'board' for all of it) or the whole board (full)",
    )
    p.add_argument("--color", dest="color", action="store_true", default=None, help="force colour")
    p.add_argument("--no-color", dest="color", action="store_false", help="no colour")
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
        "--lang",
        type=language,
        default="en",
        metavar="LANG",
        help="language of the board, the moves and the messages: en (default) or cs; "
        "in Czech a move may also be typed as its Czech name",
    )
    p.set_defaults(subparser=p)
    return p


def _resumed(args) -> dict:
    """The record --load names, checked to be an unfinished game of GAME; the options that
    would contradict it are refused."""
    from caribsim.human import records

    given = [
        flag
        for flag, value in (
            ("--players", args.players),
            ("--option", args.option),
            ("--seed", args.seed),
        )
        if value
    ]
    if given:
        raise ValueError(
            f"--load takes the game's options and seed from the record; drop {', '.join(given)}"
        )
    try:
        record = records.load(args.load)
        last = records.replay(record)
    except records.RecordError as e:
        raise ValueError(f"--load: {e}") from None
    if record["game"] != args.game:
        raise ValueError(f"--load: {args.load!r} holds a {record['game']} game, not {args.game}")
    if last.is_terminal():
        raise ValueError(
            f"--load: the game in {args.load!r} is over ({len(record['steps'])} steps); "
            "nothing to resume"
        )
    return record


def _seat(args, record) -> int:
    """--seat, else the record's one human seat, else 0."""
    if args.seat is not None:
        return args.seat
    humans = [i for i, p in enumerate((record or {}).get("players") or []) if p == "human"]
    return humans[0] if len(humans) == 1 else 0


def run(args, out) -> int:
    from caribsim.human import play
    from caribsim.search import bots

    parser: argparse.ArgumentParser = args.subparser
    options = game_options(args)
    try:
        record = _resumed(args) if args.load is not None else None
        specs = args.bots.split(",") if args.bots else None
        if record is not None:
            options = record["options"]
        else:
            players = args.players or (len(specs) + 1 if specs else None)
            if players is not None:
                options["players"] = players
        game = caribsim.load_game(args.game, **options)
        specs = specs or ["mcts:2000"] * (game.num_players() - 1)
        opponents = [bots.parse_bot(s) for s in specs]
        for bot in opponents:
            bot.check_game(game)
        return play.run(
            game,
            _seat(args, record),
            opponents,
            seed=args.seed,
            stdout=out,
            color=args.color,
            record_path=args.record,
            hint_iterations=args.hint_iterations,
            record=record,
            lang_code=args.lang,
            board_mode=args.board,
        )
    except (ValueError, TypeError) as e:
        parser.error(str(e))
