"""Command line interface: ``python -m caribsim`` (or the ``caribsim`` script).

    python -m caribsim games
    python -m caribsim simulate puerto_rico --players 4 --games 10000 [--seed S] [--threads T] [--json]
        [--backend local|processes|ray] [--workers K] [--address ADDR] [--chunk-size N] [--resume DIR]
    python -m caribsim arena puerto_rico --bots mcts:1000,greedy,random,random --games 200 [--processes K]
        [--backend ...] (the same backend options as simulate)
        [--save FILE] [--save-games DIR] [--plot FILE.png]
    python -m caribsim play puerto_rico --players 4 --seat 0 --bots mcts:2000,greedy,random [--record FILE]
    python -m caribsim replay game.json [--step N] [--html OUT.html]
    python -m caribsim selfplay puerto_rico --players 3 --bot mcts:200 --games 100 --out DIR [--backend ...]
    python -m caribsim bench [--quick]

Bad arguments print one line naming what is wrong and what is allowed, and exit with code 2.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import tempfile

import caribsim
from caribsim._game import MAX_THREADS

_PLAYER_PROBE = range(1, 11)  # player counts tried when listing a game's supported counts
# Runs keep every game's outcome in memory (simulate: ~130 bytes, arena: ~1 kB a game), so
# --games is bounded up front rather than failing with MemoryError after the work.
MAX_GAMES = {"simulate": 10**7, "arena": 10**6, "selfplay": 10**6}
MAX_WORKERS = 1024


class _Parser(argparse.ArgumentParser):
    """Errors are one line on stderr (``PROG: error: MESSAGE``) and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


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
def _shown(value, limit: int = 40) -> str:
    """A value as an error message shows it: a str quoted, cut to about ``limit`` characters."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        cut = repr(text[:limit]) if isinstance(value, str) else text[:limit]
        return f"{cut}... ({len(text)} characters)"
    return repr(text) if isinstance(value, str) else text


def _int_at_least(minimum: int, what: str, maximum: int | None = None):
    allowed = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer {allowed}, got {_shown(text)}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{what} must be an integer {allowed}, got {_shown(value)}")
        return value

    parse.__name__ = what
    return parse


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be an integer in 0..2**64-1, got {_shown(text)}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"seed must be an integer in 0..2**64-1, got {_shown(value)}")
    return value


def _option(text: str) -> tuple[str, object]:
    """KEY=VALUE; VALUE true/false becomes a bool, an integer an int, anything else stays a str."""
    key, sep, raw = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"option must look like KEY=VALUE (e.g. all_colonists_and_vp=true), "
                                         f"got {_shown(text)}")
    raw = raw.strip()
    if raw.lower() in ("true", "false"):
        return key, raw.lower() == "true"
    try:
        return key, int(raw, 10)
    except ValueError:
        return key, raw


def _reason(e: Exception) -> str:
    """An OSError's reason without the errno and file name (``Is a directory``)."""
    return getattr(e, "strerror", None) or str(e)


def _output_file(what: str):
    """A file the command will write: its folder exists and it can be created there (checked
    now by creating and removing it, so a bad path fails before any work)."""
    def parse(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError("needs a file name")
        if os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name")
        folder = os.path.dirname(os.path.abspath(text))
        if not os.path.isdir(folder):
            raise argparse.ArgumentTypeError(f"cannot write {text!r}: the folder {folder!r} does not exist")
        existed = os.path.exists(text)
        flags = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | (0 if existed else os.O_CREAT | os.O_EXCL)
        try:
            os.close(os.open(text, flags, 0o666))
            if not existed:
                os.unlink(text)
        except (OSError, ValueError) as e:
            raise argparse.ArgumentTypeError(f"cannot write {text!r}: {_reason(e)}") from None
        return text

    parse.__name__ = what
    return parse


def _output_dir(what: str):
    """A folder the command will write into (created later if missing): checked now by
    creating and removing a temporary entry in it or in its nearest existing parent."""
    def parse(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError("needs a folder name")
        path = os.path.abspath(text)
        probe = path
        while not os.path.exists(probe):
            probe = os.path.dirname(probe)
        if not os.path.isdir(probe):
            where = text if probe == path else probe
            raise argparse.ArgumentTypeError(f"{where!r} is a file, not a folder")
        try:
            if probe == path:
                fd, tmp = tempfile.mkstemp(dir=probe, prefix=".caribsim-probe-")
                os.close(fd)
                os.unlink(tmp)
            else:
                os.rmdir(tempfile.mkdtemp(dir=probe, prefix=".caribsim-probe-"))
        except (OSError, ValueError) as e:
            where = f"into {text!r}" if probe == path else f"the folder {text!r} in {probe!r}"
            raise argparse.ArgumentTypeError(f"cannot write {where}: {_reason(e)}") from None
        return text

    parse.__name__ = what
    return parse


def _add_backend_arguments(p, default_backend) -> None:
    """Where the games run (caribsim.distributed); results do not depend on it."""
    p.add_argument("--backend", choices=("local", "processes", "ray"), default=default_backend,
                   help="local: this process; processes: local worker processes; ray: a Ray cluster "
                   "(default: local)")
    p.add_argument("--workers", "-w", type=_int_at_least(1, "workers", MAX_WORKERS), default=None,
                   help="worker processes, or the CPUs of a local Ray instance (default: all CPUs)")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="Ray cluster to join, e.g. auto or ray://head:10001 (default: start Ray locally)")
    p.add_argument("--chunk-size", type=_int_at_least(1, "chunk size"), default=None, metavar="N",
                   help="games per task (default: about four chunks per worker)")
    p.add_argument("--resume", metavar="DIR", default=None, type=_output_dir("--resume"),
                   help="write finished chunks to DIR; rerunning the same command loads them and "
                   "runs only the missing ones")
    p.add_argument("--retries", type=_int_at_least(0, "retries"), default=3,
                   help="times a chunk is run again when its worker dies (default 3)")
    p.add_argument("--no-progress", action="store_true", help="no progress line")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m caribsim",
        description="caribsim: exact, fast board game simulation engines (compiled Cython core).",
    )
    parser.add_argument("--version", action="version", version=f"caribsim {caribsim.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p_games = sub.add_parser("games", help="list the games, their player counts and options")
    p_games.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p_games.set_defaults(subparser=p_games)

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
    p_sim.add_argument("--games", "-n", type=_int_at_least(1, "games", MAX_GAMES["simulate"]), default=1000,
                       help=f"number of games to play, at most {MAX_GAMES['simulate']:,} (default 1000)")
    p_sim.add_argument("--seed", "-s", type=_seed, default=0, help="playout seed (default 0)")
    p_sim.add_argument("--threads", "-t", type=_int_at_least(1, "threads", MAX_THREADS), default=1,
                       help="worker threads; results do not depend on it (default 1)")
    p_sim.add_argument("--option", "-o", type=_option, action="append", default=[], metavar="KEY=VALUE",
                       help="extra game option, e.g. -o all_colonists_and_vp=true (repeatable)")
    p_sim.add_argument("--bots", "-b", default=None,
                       help="comma-separated bot specs, one per seat (random, greedy, mcts:N...): "
                       "games are then driven from Python by the bots; default: random playouts in C")
    p_sim.add_argument("--save-games", metavar="DIR", default=None, type=_output_dir("--save-games"),
                       help="write every game's record to DIR (games are then driven from Python)")
    p_sim.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_backend_arguments(p_sim, "local")
    p_sim.set_defaults(subparser=p_sim)

    p_arena = sub.add_parser(
        "arena",
        help="play seat-rotated games between bots and print win rates with 95%% intervals",
        description="Play K games between the bots (one per seat, seats rotated every game) "
        "and report each bot's win rate with a 95%% Wilson interval, mean score and the mean "
        "game length. Bots: random, greedy, mcts:ITERATIONS[:key=value...] "
        "(keys: iterations, seconds, c, reward, rollout, max_depth, threads, reuse).",
    )
    p_arena.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p_arena.add_argument("--bots", "-b", required=True,
                         help="comma-separated bot specs, one per seat, e.g. mcts:1000,greedy,random,random")
    p_arena.add_argument("--games", "-n", type=_int_at_least(1, "games", MAX_GAMES["arena"]), default=100,
                         help=f"number of games, at most {MAX_GAMES['arena']:,} (default 100)")
    p_arena.add_argument("--seed", "-s", type=_seed, default=0, help="match seed (default 0)")
    p_arena.add_argument("--processes", "-j", type=_int_at_least(1, "processes", MAX_WORKERS), default=1,
                         help="shorthand for --backend processes --workers K (default 1)")
    p_arena.add_argument("--option", "-o", type=_option, action="append", default=[], metavar="KEY=VALUE",
                         help="extra game option (repeatable)")
    p_arena.add_argument("--save", metavar="FILE", type=_output_file("--save"), help="write the full result as JSON")
    p_arena.add_argument("--save-games", metavar="DIR", type=_output_dir("--save-games"),
                         help="write every game's record to DIR")
    p_arena.add_argument("--plot", metavar="FILE.png", type=_output_file("--plot"),
                         help="bar chart of the win rates with 95%% intervals (needs caribsim[plot])")
    p_arena.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_backend_arguments(p_arena, None)
    p_arena.set_defaults(subparser=p_arena)

    p_play = sub.add_parser("play", help="play a game against bots in the terminal",
                            description="You play one seat, bots the others. At your turn type the "
                            "number of a move or its name (an unambiguous prefix is enough), undo, "
                            "hint, save FILE, help or quit.")
    p_play.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p_play.add_argument("--players", "-p", type=_int_at_least(1, "players"), default=None,
                        help="number of players (default: one more than the bots)")
    p_play.add_argument("--seat", type=_int_at_least(0, "seat"), default=0, help="your seat (default 0)")
    p_play.add_argument("--bots", "-b", default=None,
                        help="comma-separated bot specs for the other seats (default: mcts:2000 each)")
    p_play.add_argument("--seed", "-s", type=_seed, default=0, help="game seed (default 0)")
    p_play.add_argument("--record", metavar="FILE", type=_output_file("--record"),
                        help="write the game record when the game ends")
    p_play.add_argument("--hint-iterations", type=_int_at_least(1, "hint iterations"), default=2000,
                        help="search iterations for 'hint' (default 2000)")
    p_play.add_argument("--color", dest="color", action="store_true", default=None, help="force colour")
    p_play.add_argument("--no-color", dest="color", action="store_false", help="no colour")
    p_play.add_argument("--option", "-o", type=_option, action="append", default=[], metavar="KEY=VALUE",
                        help="extra game option (repeatable)")
    p_play.set_defaults(subparser=p_play)

    p_replay = sub.add_parser("replay", help="step through a recorded game, or write its HTML viewer",
                              description="Without --step or --html: read commands from the input: "
                              "Enter or n (next), p (previous), g N (go to step N), q (quit).")
    p_replay.add_argument("record", metavar="FILE", help="a game record (JSON, see docs/records.md)")
    p_replay.add_argument("--step", type=_int_at_least(0, "step"), default=None,
                          help="print the board after this many steps and exit")
    p_replay.add_argument("--html", metavar="OUT.html", type=_output_file("--html"),
                          help="write the self-contained HTML replay viewer")
    p_replay.set_defaults(subparser=p_replay)

    p_self = sub.add_parser("selfplay", help="write self-play training data (observations, legal masks, "
                            "MCTS visit distributions, returns) as compressed numpy shards",
                            description="Every seat is played by the MCTS bot; see docs/selfplay.md for "
                            "the format. Rerunning the same command on the same --out finishes an "
                            "interrupted run.")
    p_self.add_argument("game", metavar="GAME", help=f"game name ({', '.join(caribsim.games())})")
    p_self.add_argument("--out", required=True, metavar="DIR", type=_output_dir("--out"),
                        help="folder of the shards and manifest.json")
    p_self.add_argument("--bot", default="mcts:200", help="MCTS bot spec (default mcts:200)")
    p_self.add_argument("--players", "-p", type=_int_at_least(1, "players"), default=None,
                        help="number of players (default: the game's default)")
    p_self.add_argument("--games", "-n", type=_int_at_least(1, "games", MAX_GAMES["selfplay"]), default=100,
                        help=f"number of games, at most {MAX_GAMES['selfplay']:,} (default 100)")
    p_self.add_argument("--seed", "-s", type=_seed, default=0, help="run seed (default 0)")
    p_self.add_argument("--games-per-shard", type=_int_at_least(1, "games per shard"), default=None,
                        help="games per shard and per task (default: about four per worker, at most 100)")
    p_self.add_argument("--include-forced", action="store_true",
                        help="also record decisions with a single legal move")
    p_self.add_argument("--option", "-o", type=_option, action="append", default=[], metavar="KEY=VALUE",
                        help="extra game option (repeatable)")
    _add_backend_arguments(p_self, "local")
    p_self.set_defaults(subparser=p_self)

    p_bench = sub.add_parser("bench", help="measure the throughput figures of the README")
    p_bench.add_argument("--quick", action="store_true", help="smaller runs (a few seconds)")
    p_bench.add_argument("--json", action="store_true", help="print JSON")
    p_bench.set_defaults(subparser=p_bench)
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


def _backend_kwargs(args) -> dict:
    return {"backend": args.backend, "workers": args.workers, "address": args.address,
            "chunk_size": args.chunk_size, "resume": args.resume, "retries": args.retries}


def _cmd_simulate(args, out) -> int:
    parser = args.subparser
    options = _game_options(args)
    if args.players is not None:
        options["players"] = args.players
    if (args.bots is not None or args.save_games is not None) and args.threads != 1:
        parser.error("--threads applies to the C playouts; bot games run on one thread")
    try:
        result = caribsim.simulate(args.game, args.games, seed=args.seed,
                                   bots=args.bots.split(",") if args.bots else None, threads=args.threads,
                                   save_games=args.save_games, progress=_show_progress(args),
                                   **_backend_kwargs(args), **options)
    except (ValueError, TypeError, RuntimeError) as e:
        parser.error(str(e))
    summary = result.summary()
    summary["threads"] = args.threads
    if args.json:
        print(json.dumps(summary, indent=2), file=out)
        return 0
    opts = ", ".join(f"{k}={v}" for k, v in summary["options"].items())
    who = "games of " + ",".join(summary["bots"]) if summary["bots"] else "random games"
    print(f"{summary['game']} ({opts}): {summary['games']:,} {who}, seed {summary['seed']}", file=out)
    _print_run(summary, out)
    print(f"  decisions/s              {summary['decisions_per_second']:,.0f}", file=out)
    print(f"  mean decisions per game  {summary['mean_decisions_per_game']:.1f}", file=out)
    print("  seat  mean score  win rate", file=out)
    for seat, (score, win) in enumerate(zip(summary["mean_score"], summary["win_rate"])):
        print(f"  {seat:>4}  {score:>10.2f}  {win:>8.3f}", file=out)
    print("  (win rate: share of games won, ties split; seat 0 is the first Governor)", file=out)
    return 0


def _show_progress(args) -> bool:
    return not args.no_progress and sys.stderr.isatty()


def _print_run(summary, out) -> None:
    """Where the games ran and how fast."""
    workers = summary["workers"]
    where = summary["backend"] + (f", {summary.get('threads', 1)} thread(s)" if summary["backend"] == "local"
                                  else f", {workers} worker{'s' if workers != 1 else ''}")
    resumed = f", {summary['resumed_chunks']} loaded from --resume" if summary["resumed_chunks"] else ""
    print(f"  backend                  {where} ({summary['chunks']} chunks run{resumed})", file=out)
    print(f"  time                     {summary['seconds']:.3f} s", file=out)
    print(f"  games/s                  {summary['games_per_second']:,.0f}", file=out)


def _cmd_arena(args, out) -> int:
    from caribsim.search import arena, bots

    parser = args.subparser
    options = _game_options(args)
    kwargs = _backend_kwargs(args)
    if args.plot:
        try:
            import matplotlib  # noqa: F401  (checked before the games are played)
        except ImportError:
            parser.error("--plot needs matplotlib: pip install 'caribsim[plot]'")
    if args.processes > 1:
        if args.backend not in (None, "processes") or args.workers not in (None, args.processes):
            parser.error("--processes K is --backend processes --workers K; give one or the other")
        kwargs.update(backend="processes", workers=args.processes)
    try:
        players = [bots.parse_bot(spec) for spec in args.bots.split(",")]
        options.setdefault("players", len(players))
        result = arena.play_match(args.game, players, args.games, seed=args.seed, save=args.save,
                                  save_games=args.save_games, progress=_show_progress(args),
                                  **kwargs, **options)
        if args.plot:
            arena.plot(result, args.plot)
    except (ValueError, TypeError, RuntimeError) as e:
        parser.error(str(e))
    if args.json:
        print(result.to_json(), file=out)
        return 0
    opts = ", ".join(f"{k}={v}" for k, v in result.options.items())
    print(f"{result.game} ({opts}): {result.n_games} games, seed {result.seed}, "
          f"mean length {result.mean_length:.1f} decisions", file=out)
    _print_run({"backend": result.backend, "workers": result.workers, "chunks": result.chunks,
                "resumed_chunks": result.resumed_chunks, "seconds": result.seconds,
                "games_per_second": result.n_games / result.seconds if result.seconds else float("inf")}, out)
    print("  bot              win rate   95% interval      mean score", file=out)
    for spec, b in zip(args.bots.split(","), result.bots):
        print(f"  {spec:<16} {b.win_rate:>8.3f}   [{b.ci95[0]:.3f}, {b.ci95[1]:.3f}]  {b.mean_score:>10.2f}",
              file=out)
    return 0


def _cmd_selfplay(args, out) -> int:
    from caribsim.scale import selfplay

    parser = args.subparser
    options = _game_options(args)
    if args.players is not None:
        options["players"] = args.players
    if args.chunk_size is not None or args.resume is not None:
        parser.error("use --games-per-shard for the chunk size (not --chunk-size); --out is already resumable "
                     "(not --resume)")
    try:
        m = selfplay.generate(args.game, args.bot, args.games, args.out, seed=args.seed, backend=args.backend,
                              workers=args.workers, address=args.address, games_per_shard=args.games_per_shard,
                              include_forced=args.include_forced, progress=_show_progress(args),
                              retries=args.retries, **options)
    except (ValueError, TypeError, RuntimeError) as e:
        parser.error(str(e))
    secs = m["seconds_this_run"]
    print(f"wrote {args.out}: {m['n_games']} games, {m['decisions']:,} decisions in {len(m['shards'])} shards "
          f"({m['backend']}, {m['workers']} worker{'s' if m['workers'] != 1 else ''}, {secs:.1f} s)", file=out)
    return 0


def _cmd_play(args, out) -> int:
    from caribsim.search import bots
    from caribsim.human import play

    parser = args.subparser
    options = _game_options(args)
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


def _cmd_replay(args, out) -> int:
    from caribsim.human import play, records, viewer

    parser = args.subparser
    if args.html is not None and args.step is not None:
        parser.error("give --step N (print one board) or --html FILE (the viewer), not both")
    try:
        record = records.load(args.record)
        final = records.replay(record)          # validates every step and the final scores
    except ValueError as e:
        parser.error(str(e))
    n = len(record["steps"])
    if args.html:
        viewer.write_html(record, args.html)
        print(f"wrote {args.html} ({n} steps)", file=out)
        return 0
    if args.step is not None:
        if args.step > n:
            parser.error(f"--step must be 0..{n}, got {args.step}")
        st = records.replay(record, upto=args.step)
        print(f"step {args.step} / {n}", file=out)
        print(st, file=out)
        return 0
    i = 0
    states = records.states(record)
    play.tolerant_streams(sys.stdin, out)
    usage = f"Enter or n, p, g N (0..{n}), q"
    while True:
        head = "start" if i == 0 else f"{i}. {record['steps'][i - 1]['name']}"
        print(f"--- step {i} / {n}: {head}", file=out)
        print(states[i], file=out)
        print("[Enter/n] next  [p] previous  [g N] go to  [q] quit > ", end="", file=out, flush=True)
        try:
            line = play.read_line(sys.stdin)
        except KeyboardInterrupt:
            line = ""
        if line is None:
            print(f"that line is too long: {usage}", file=out)
            continue
        if not line:
            print(file=out)
            break
        cmd = " ".join(line.lower().split())
        goto = cmd[1:].strip() if cmd.startswith("g") else ""
        if cmd in ("", "n"):
            if i == n:
                print("end of the game" + (f": returns {final.returns()}" if final.is_terminal() else ""), file=out)
                break
            i += 1
        elif cmd == "p":
            i = max(0, i - 1)
        elif goto.isdecimal() and len(goto) <= 9 and int(goto) <= n:
            i = int(goto)
        elif cmd == "q":
            break
        else:
            print(f"unknown command {ascii(cmd)}: {usage}", file=out)
    return 0


def _cmd_bench(args, out) -> int:
    import random as _random
    import time

    from caribsim.search import mcts

    rows = []
    for name in caribsim.games():
        for players in _player_counts(name):
            game = caribsim.load_game(name, players=players)
            games = 500 if args.quick else 5000
            runs = [caribsim.random_playouts(game.new_initial_state(seed=1), games, seed=r) for r in range(3)]
            best = sorted(r.games_per_second for r in runs)[1]
            rows.append({"game": name, "players": players, "what": "random playouts (C, 1 thread)",
                         "value": best, "unit": "games/s"})
        game = caribsim.load_game(name)
        rng = _random.Random(0)
        decisions, t0 = 0, time.perf_counter()
        for seed in range(3 if args.quick else 20):
            st = game.new_initial_state(seed=seed)
            while not st.is_terminal():
                st.apply_action(rng.choice(st.legal_actions()))
                decisions += 1
        rows.append({"game": name, "players": game.num_players(), "what": "Python loop (legal_actions, "
                     "random.choice, apply_action)", "value": decisions / (time.perf_counter() - t0),
                     "unit": "decisions/s"})
        st = game.new_initial_state(seed=1)
        while st.is_chance_node():
            st.resolve_chance()
        iterations = 1000 if args.quick else 5000
        r = mcts.search(st, iterations=iterations, seed=0)
        rows.append({"game": name, "players": game.num_players(), "what": "MCTS from the opening, 1 thread",
                     "value": r.iterations / r.seconds, "unit": "simulations/s"})
    if args.json:
        print(json.dumps(rows, indent=2), file=out)
        return 0
    for row in rows:
        print(f"{row['game']:<12} {row['players']}p  {row['what']:<58} {row['value']:>12,.0f} {row['unit']}",
              file=out)
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out = sys.stdout
    commands = {"games": _cmd_games, "arena": _cmd_arena, "simulate": _cmd_simulate, "play": _cmd_play,
                "replay": _cmd_replay, "bench": _cmd_bench, "selfplay": _cmd_selfplay}
    try:
        return commands[args.command](args, out)
    except BrokenPipeError:
        # the reader went away (`| head`): stop quietly, as other command-line tools do
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:
        # a file argument that passed the checks up front but failed later (disk full, removed)
        args.subparser.error(f"{_reason(e)}: {e.filename!r}" if e.filename else _reason(e))
    except MemoryError:
        args.subparser.error("out of memory: use fewer games or smaller searches")
    except KeyboardInterrupt:
        print(f"{args.subparser.prog}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
