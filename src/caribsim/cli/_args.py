"""What every command shares: the one-line error parser, the argument types (each checks
its value up front and says what is allowed), the game options and the backend options."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import tempfile
from typing import NoReturn

import caribsim

_PLAYER_PROBE = range(1, 11)  # player counts tried when listing a game's supported counts
# Runs keep every game's outcome in memory (simulate: ~130 bytes, arena: ~1 kB a game), so
# --games is bounded up front rather than failing with MemoryError after the work.
MAX_GAMES = {"simulate": 10**7, "arena": 10**6, "selfplay": 10**6}
MAX_WORKERS = 1024


class Parser(argparse.ArgumentParser):
    """Errors are one line on stderr (``PROG: error: MESSAGE``) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


def game_class(name: str):
    from caribsim._api import _registry

    return _registry()[name]


def option_defaults(name: str) -> dict:
    """The game's options and their defaults, read from its constructor signature."""
    sig = inspect.signature(game_class(name).__init__)
    return {
        p.name: p.default
        for p in sig.parameters.values()
        if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def player_counts(name: str) -> list[int]:
    """Player counts the game accepts (found by trying to load it)."""
    counts = []
    for n in _PLAYER_PROBE:
        try:
            caribsim.load_game(name, players=n)
        except (ValueError, TypeError):
            continue
        counts.append(n)
    return counts


def games_info() -> list[dict]:
    info = []
    for name in caribsim.games():
        options = option_defaults(name)
        info.append({"game": name, "players": player_counts(name), "options": options})
    return info


def fmt_counts(counts: list[int]) -> str:
    if counts and counts == list(range(counts[0], counts[-1] + 1)) and len(counts) > 1:
        return f"{counts[0]}-{counts[-1]}"
    return ",".join(map(str, counts))


# --------------------------------------------------------------------------------------
# argument types
# --------------------------------------------------------------------------------------
def shown(value, limit: int = 40) -> str:
    """A value as an error message shows it: a str quoted, cut to about ``limit`` characters."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        cut = repr(text[:limit]) if isinstance(value, str) else text[:limit]
        return f"{cut}... ({len(text)} characters)"
    return repr(text) if isinstance(value, str) else text


def int_at_least(minimum: int, what: str, maximum: int | None = None):
    allowed = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be an integer {allowed}, got {shown(text)}"
            ) from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(
                f"{what} must be an integer {allowed}, got {shown(value)}"
            )
        return value

    parse.__name__ = what
    return parse


def parse_seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"seed must be an integer in 0..2**64-1, got {shown(text)}"
        ) from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(
            f"seed must be an integer in 0..2**64-1, got {shown(value)}"
        )
    return value


def parse_option(text: str) -> tuple[str, object]:
    """KEY=VALUE; VALUE true/false becomes a bool, an integer an int, anything else stays a str."""
    key, sep, raw = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise argparse.ArgumentTypeError(
            f"option must look like KEY=VALUE (e.g. all_colonists_and_vp=true), got {shown(text)}"
        )
    raw = raw.strip()
    if raw.lower() in ("true", "false"):
        return key, raw.lower() == "true"
    try:
        return key, int(raw, 10)
    except ValueError:
        return key, raw


def reason(e: Exception) -> str:
    """An OSError's reason without the errno and file name (``Is a directory``)."""
    return getattr(e, "strerror", None) or str(e)


def output_file(what: str):
    """A file the command will write: its folder exists and it can be created there (checked
    now by creating and removing it, so a bad path fails before any work)."""

    def parse(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError("needs a file name")
        if os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name")
        folder = os.path.dirname(os.path.abspath(text))
        if not os.path.isdir(folder):
            raise argparse.ArgumentTypeError(
                f"cannot write {text!r}: the folder {folder!r} does not exist"
            )
        existed = os.path.exists(text)
        flags = (
            os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | (0 if existed else os.O_CREAT | os.O_EXCL)
        )
        try:
            os.close(os.open(text, flags, 0o666))
            if not existed:
                os.unlink(text)
        except (OSError, ValueError) as e:
            raise argparse.ArgumentTypeError(f"cannot write {text!r}: {reason(e)}") from None
        return text

    parse.__name__ = what
    return parse


def output_dir(what: str):
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
            raise argparse.ArgumentTypeError(f"cannot write {where}: {reason(e)}") from None
        return text

    parse.__name__ = what
    return parse


def add_where_arguments(p, default_backend) -> None:
    """Where the games run (caribsim.distributed): --backend, --workers, --address."""
    p.add_argument(
        "--backend",
        choices=("local", "processes", "ray"),
        default=default_backend,
        help="local: this process; processes: local worker processes; ray: a Ray cluster "
        "(default: local); results do not depend on it",
    )
    p.add_argument(
        "--workers",
        "-w",
        type=int_at_least(1, "workers", MAX_WORKERS),
        default=None,
        help="worker processes, or the CPUs of a local Ray instance (default: all CPUs)",
    )
    p.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="Ray cluster to join, e.g. auto or ray://head:10001 (default: start Ray locally)",
    )


def add_backend_arguments(p, default_backend) -> None:
    """Where the games run (caribsim.distributed), in chunks that can resume and retry;
    results do not depend on it."""
    add_where_arguments(p, default_backend)
    p.add_argument(
        "--chunk-size",
        type=int_at_least(1, "chunk size"),
        default=None,
        metavar="N",
        help="games per task (default: about four chunks per worker)",
    )
    p.add_argument(
        "--resume",
        metavar="DIR",
        default=None,
        type=output_dir("--resume"),
        help="write finished chunks to DIR; rerunning the same command loads them and "
        "runs only the missing ones",
    )
    p.add_argument(
        "--retries",
        type=int_at_least(0, "retries"),
        default=3,
        help="times a chunk is run again when its worker dies (default 3)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress line")


def add_result_arguments(p, plot_help) -> None:
    """Where a match's or a tournament's results go: JSON, the game records, a plot."""
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
        "--save",
        metavar="FILE.json",
        type=output_file("--save"),
        help="write the full result as JSON",
    )
    p.add_argument(
        "--save-games",
        metavar="DIR",
        type=output_dir("--save-games"),
        help="write every game's record to DIR",
    )
    p.add_argument("--plot", metavar="FILE.png", type=output_file("--plot"), help=plot_help)
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def check_plot(args) -> None:
    """--plot needs matplotlib: one error line naming the extra when it is missing."""
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            args.subparser.error("--plot needs matplotlib: pip install 'caribsim[plot]'")


def game_options(args) -> dict:
    """The -o options of a command, checked against the game's options."""
    parser = args.subparser
    if args.game not in caribsim.games():
        parser.error(f"unknown game {args.game!r}; available: {', '.join(caribsim.games())}")
    options = dict(args.option)
    known = option_defaults(args.game)
    for key in options:
        if key not in known or key == "players":
            allowed = ", ".join(k for k in known if k != "players")
            parser.error(
                f"unknown option {key!r} for {args.game}; allowed: {allowed} (use --players for players)"
            )
    return options


def backend_kwargs(args) -> dict:
    return {
        "backend": args.backend,
        "workers": args.workers,
        "address": args.address,
        "chunk_size": args.chunk_size,
        "resume": args.resume,
        "retries": args.retries,
    }


def show_progress(args) -> bool:
    return not args.no_progress and sys.stderr.isatty()


def print_result_run(result, out) -> None:
    """print_run of a match's or a tournament's result (its backend, workers, chunks, time)."""
    print_run(
        {
            "backend": result.backend,
            "workers": result.workers,
            "chunks": result.chunks,
            "resumed_chunks": result.resumed_chunks,
            "seconds": result.seconds,
            "games_per_second": result.n_games / result.seconds if result.seconds else float("inf"),
        },
        out,
    )


def print_run(summary, out) -> None:
    """Where the games ran and how fast."""
    workers = summary["workers"]
    where = summary["backend"] + (
        f", {summary.get('threads', 1)} thread(s)"
        if summary["backend"] == "local"
        else f", {workers} worker{'s' if workers != 1 else ''}"
    )
    resumed = (
        f", {summary['resumed_chunks']} loaded from --resume" if summary["resumed_chunks"] else ""
    )
    print(f"  backend                  {where} ({summary['chunks']} chunks run{resumed})", file=out)
    print(f"  time                     {summary['seconds']:.3f} s", file=out)
    print(f"  games/s                  {summary['games_per_second']:,.0f}", file=out)
