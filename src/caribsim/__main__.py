"""Command line interface: ``python -m caribsim`` (or the ``caribsim`` script).

    python -m caribsim games
    python -m caribsim simulate puerto_rico --players 4 --games 10000 [--seed S] [--threads T] [--json]
    python -m caribsim arena puerto_rico --bots mcts:1000,greedy,random,random --games 200 [--processes K]

Bad arguments print a message naming what is wrong and what is allowed, and exit with code 2.
"""
from __future__ import annotations

import argparse
import inspect
import json
import sys

import caribsim

_PLAYER_PROBE = range(1, 11)  # player counts tried when listing a game's supported counts


def _game_class(name: str):
    from caribsim._api import _registry

    return _registry()[name]


def _option_defaults(name: str) -> dict:
    """The game's options and their defaults, read from its constructor signature."""
    sig = inspect.signature(_game_class(name).__init__)
    return {
        p.name: p.default
        for p in sig.parameters.values()
        if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def _player_counts(name: str) -> list[int]:
    """Player counts the game accepts (found by trying to load it)."""
    counts = []
    for n in _PLAYER_PROBE:
        try:
            caribsim.load_game(name, players=n)
        except (ValueError, TypeError):
            continue
        counts.append(n)
    return counts


def _games_info() -> list[dict]:
    info = []
    for name in caribsim.games():
        options = _option_defaults(name)
        info.append({"game": name, "players": _player_counts(name), "options": options})
    return info


def _fmt_counts(counts: list[int]) -> str:
    if counts and counts == list(range(counts[0], counts[-1] + 1)) and len(counts) > 1:
        return f"{counts[0]}-{counts[-1]}"
    return ",".join(map(str, counts))


# --------------------------------------------------------------------------------------
# argument types
# --------------------------------------------------------------------------------------
def _int_at_least(minimum: int, what: str):
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{what} must be an integer >= {minimum}, got {value}")
        return value

    parse.__name__ = what
    return parse


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be an integer in 0..2**64-1, got {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"seed must be an integer in 0..2**64-1, got {value}")
    return value


def _option(text: str) -> tuple[str, object]:
    """KEY=VALUE; VALUE true/false becomes a bool, an integer an int, anything else stays a str."""
    key, sep, raw = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"option must look like KEY=VALUE (e.g. all_colonists_and_vp=true), got {text!r}")
    raw = raw.strip()
    if raw.lower() in ("true", "false"):
        return key, raw.lower() == "true"
    try:
        return key, int(raw, 10)
    except ValueError:
        return key, raw


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m caribsim",
        description="caribsim: exact, fast board game simulation engines (compiled Cython core).",
    )
    parser.add_argument("--version", action="version", version=f"caribsim {caribsim.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p_games = sub.add_parser("games", help="list the games, their player counts and options")
    p_games.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p_sim = sub.add_parser(
        "simulate",
        help="run uniformly random playouts in C and print throughput and outcome statistics",
        description="Play K uniformly random games from the initial state entirely in C "
        "(caribsim.random_playouts) and report games/s, decisions/s, mean decisions per game, "
        "mean score per seat and win rate per seat (shared wins split).",
    )
    p_sim.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p_sim.add_argument("--players", "-p", type=_int_at_least(1, "players"), default=None,
                       help="number of players (default: the game's default)")
    p_sim.add_argument("--games", "-n", type=_int_at_least(1, "games"), default=1000,
                       help="number of games to play (default 1000)")
    p_sim.add_argument("--seed", "-s", type=_seed, default=0, help="playout seed (default 0)")
    p_sim.add_argument("--threads", "-t", type=_int_at_least(1, "threads"), default=1,
                       help="worker threads; results do not depend on it (default 1)")
    p_sim.add_argument("--option", "-o", type=_option, action="append", default=[], metavar="KEY=VALUE",
                       help="extra game option, e.g. -o all_colonists_and_vp=true (repeatable)")
    p_sim.add_argument("--json", action="store_true", help="print the result as JSON")
    p_sim.set_defaults(subparser=p_sim)

    p_arena = sub.add_parser(
        "arena",
        help="play seat-rotated games between bots and print win rates with 95% intervals",
        description="Play K games between the bots (one per seat, seats rotated every game) "
        "and report each bot's win rate with a 95%% Wilson interval, mean score and the mean "
        "game length. Bots: random, greedy, mcts:ITERATIONS[:key=value...] "
        "(keys: iterations, seconds, c, reward, rollout, max_depth, threads, reuse).",
    )
    p_arena.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p_arena.add_argument("--bots", "-b", required=True,
                         help="comma-separated bot specs, one per seat, e.g. mcts:1000,greedy,random,random")
    p_arena.add_argument("--games", "-n", type=_int_at_least(1, "games"), default=100,
                         help="number of games (default 100)")
    p_arena.add_argument("--seed", "-s", type=_seed, default=0, help="match seed (default 0)")
    p_arena.add_argument("--processes", "-j", type=_int_at_least(1, "processes"), default=1,
                         help="worker processes; results do not depend on it (default 1)")
    p_arena.add_argument("--option", "-o", type=_option, action="append", default=[], metavar="KEY=VALUE",
                         help="extra game option (repeatable)")
    p_arena.add_argument("--save", metavar="FILE", help="write the full result as JSON")
    p_arena.add_argument("--json", action="store_true", help="print the result as JSON")
    p_arena.add_argument("--no-progress", action="store_true", help="no progress bar")
    p_arena.set_defaults(subparser=p_arena)
    return parser


# --------------------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------------------
def _cmd_games(args, out) -> int:
    info = _games_info()
    if args.json:
        print(json.dumps(info, indent=2), file=out)
        return 0
    for g in info:
        opts = ", ".join(f"{k}={v!r}" for k, v in g["options"].items())
        print(f"{g['game']}\tplayers {_fmt_counts(g['players'])}\toptions: {opts}", file=out)
    return 0


def simulate(game_name: str, players=None, games: int = 1000, seed: int = 0, threads: int = 1,
             options: dict | None = None) -> dict:
    """Run the playouts and return the summary printed by ``simulate`` (as a dict)."""
    kwargs = dict(options or {})
    if players is not None:
        kwargs["players"] = players
    game = caribsim.load_game(game_name, **kwargs)
    state = game.new_initial_state(seed=seed)
    result = caribsim.random_playouts(state, games, seed=seed, threads=threads)
    n = len(result.lengths)
    return {
        "game": game_name,
        "options": game.options(),
        "players": game.num_players(),
        "games": n,
        "seed": seed,
        "threads": threads,
        "seconds": result.seconds,
        "games_per_second": result.games_per_second,
        "decisions_per_second": result.decisions_per_second,
        "decisions": result.decisions,
        "mean_decisions_per_game": float(result.lengths.mean()) if n else 0.0,
        "mean_score": [float(x) for x in result.scores.mean(axis=0)] if n else [],
        "win_rate": [float(x) for x in result.returns.mean(axis=0)] if n else [],
    }


def _game_options(args) -> dict:
    """The -o options of a command, checked against the game's options."""
    parser = args.subparser
    if args.game not in caribsim.games():
        parser.error(f"unknown game {args.game!r}; available: {', '.join(caribsim.games())}")
    options = dict(args.option)
    known = _option_defaults(args.game)
    for key in options:
        if key not in known or key == "players":
            allowed = ", ".join(k for k in known if k != "players")
            parser.error(f"unknown option {key!r} for {args.game}; allowed: {allowed} (use --players for players)")
    return options


def _cmd_simulate(args, out) -> int:
    parser = args.subparser
    options = _game_options(args)
    try:
        summary = simulate(args.game, args.players, args.games, args.seed, args.threads, options)
    except (ValueError, TypeError) as e:
        parser.error(str(e))
    if args.json:
        print(json.dumps(summary, indent=2), file=out)
        return 0
    opts = ", ".join(f"{k}={v}" for k, v in summary["options"].items())
    print(f"{summary['game']} ({opts}): {summary['games']:,} random games, seed {summary['seed']}, "
          f"{summary['threads']} thread(s)", file=out)
    print(f"  time                     {summary['seconds']:.3f} s", file=out)
    print(f"  games/s                  {summary['games_per_second']:,.0f}", file=out)
    print(f"  decisions/s              {summary['decisions_per_second']:,.0f}", file=out)
    print(f"  mean decisions per game  {summary['mean_decisions_per_game']:.1f}", file=out)
    print("  seat  mean score  win rate", file=out)
    for seat, (score, win) in enumerate(zip(summary["mean_score"], summary["win_rate"])):
        print(f"  {seat:>4}  {score:>10.2f}  {win:>8.3f}", file=out)
    print("  (win rate: share of games won, ties split; seat 0 is the first Governor)", file=out)
    return 0


def _cmd_arena(args, out) -> int:
    from caribsim import arena, bots

    parser = args.subparser
    options = _game_options(args)
    try:
        players = [bots.parse_bot(spec) for spec in args.bots.split(",")]
        options.setdefault("players", len(players))
        result = arena.play_match(args.game, players, args.games, seed=args.seed,
                                  processes=args.processes, save=args.save,
                                  progress=False if args.no_progress else None, **options)
    except (ValueError, TypeError) as e:
        parser.error(str(e))
    if args.json:
        print(result.to_json(), file=out)
        return 0
    opts = ", ".join(f"{k}={v}" for k, v in result.options.items())
    print(f"{result.game} ({opts}): {result.n_games} games, seed {result.seed}, "
          f"{result.seconds:.1f} s, mean length {result.mean_length:.1f} decisions", file=out)
    print("  bot              win rate   95% interval      mean score", file=out)
    for spec, b in zip(args.bots.split(","), result.bots):
        print(f"  {spec:<16} {b.win_rate:>8.3f}   [{b.ci95[0]:.3f}, {b.ci95[1]:.3f}]  {b.mean_score:>10.2f}",
              file=out)
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out = sys.stdout
    if args.command == "games":
        return _cmd_games(args, out)
    if args.command == "arena":
        return _cmd_arena(args, out)
    return _cmd_simulate(args, out)


if __name__ == "__main__":
    sys.exit(main())
