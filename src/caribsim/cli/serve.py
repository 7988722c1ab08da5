"""`caribsim serve`: play in the browser (caribsim.web, docs/web.md)."""

from __future__ import annotations

import argparse
import math
import os
import socket

from caribsim.cli._args import int_at_least, output_dir, reason, shown
from caribsim.cli.play import language

_WEB_EXTRA = ("starlette", "uvicorn", "websockets", "anyio", "h11")  # the extra and what it brings


def _number_in(low: float, high: float, what: str):
    """An argparse type: a finite number in low..high, else ``what`` and the range said."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"{what} in {low:g}..{high:g}, got {shown(text)}")
        return value

    return parse


_delay = _number_in(0, 60, "bot delay must be a number of seconds")
_seconds = _number_in(0.001, 3600, "seconds a move must be a number")


def _kinds(text: str) -> tuple:
    from caribsim.web.limits import KINDS  # the web extra is not needed to read it

    kinds = tuple(k.strip().lower() for k in text.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(
            f"bots must be a comma-separated list of {', '.join(KINDS)}, got {shown(text)}"
        )
    return kinds


def _folder(what: str):
    def parse(text: str) -> str:
        path = os.path.abspath(text)
        if not os.path.isdir(path):
            raise argparse.ArgumentTypeError(f"{what} {shown(text)} is not a folder")
        if ":" in path:
            raise argparse.ArgumentTypeError(
                f"{what} {shown(text)}: a folder's path may not hold ':' (a bot spec is split "
                "at ':')"
            )
        return path

    parse.__name__ = what
    return parse


def _add_limits(p) -> None:
    """What clients may ask for (``caribsim.web.limits.Policy``; docs/web.md)."""
    from caribsim.web.limits import KINDS, Policy, default_workers

    d = Policy(workers=1)
    g = p.add_argument_group(
        "what clients may ask for",
        "the lobby is anonymous: every bot spec and record is checked against these, and a "
        "request over them is refused (400) naming what is allowed",
    )
    g.add_argument(
        "--bots",
        type=_kinds,
        default=KINDS,
        metavar="KINDS",
        help=f"the bot kinds a seat may name, comma-separated (default all: {','.join(KINDS)})",
    )
    g.add_argument(
        "--max-simulations",
        type=int_at_least(1, "max simulations", 2**40),
        default=d.max_simulations,
        metavar="N",
        help=f"MCTS iterations a bot's move at most (default {d.max_simulations})",
    )
    g.add_argument(
        "--max-guided-simulations",
        type=int_at_least(1, "max guided simulations", 2**40),
        default=d.max_guided_simulations,
        metavar="N",
        help="a guided bot's (puct, gumbel, alphazero, az) simulations x playouts per leaf a "
        f"move at most; it runs whole on a worker (default {d.max_guided_simulations})",
    )
    g.add_argument(
        "--max-seconds",
        type=_seconds,
        default=d.max_seconds,
        metavar="SECONDS",
        help="seconds a bot's move at most, from when it is asked: a spec's seconds= may not "
        f"be more and every MCTS move stops there (default {d.max_seconds:g})",
    )
    g.add_argument(
        "--max-threads",
        type=int_at_least(1, "max threads", 256),
        default=d.max_threads,
        metavar="N",
        help=f"an MCTS spec's threads= at most (default {d.max_threads})",
    )
    g.add_argument(
        "--models-dir",
        type=_folder("--models-dir"),
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of model files (.npz) a spec may name with model=NAME.npz, besides the "
        "package's own; repeatable (default: the package's own only)",
    )
    g.add_argument(
        "--cuba-data",
        type=_folder("--cuba-data"),
        action="append",
        default=[],
        metavar="DIR",
        help="a folder a Cuba record's data option may name; repeatable (default none: the "
        "shipped data only)",
    )
    g.add_argument(
        "--max-games",
        type=int_at_least(1, "max games", 10**6),
        default=d.max_games,
        metavar="N",
        help=f"unfinished games the server holds at most; a create past it is refused "
        f"(default {d.max_games})",
    )
    g.add_argument(
        "--creates-per-minute",
        type=int_at_least(1, "creates per minute", 10**6),
        default=d.creates_per_minute,
        metavar="N",
        help="new games per client address and minute, then 429 with Retry-After "
        f"(default {d.creates_per_minute})",
    )
    g.add_argument(
        "--workers",
        type=int_at_least(1, "workers", 256),
        default=None,
        metavar="N",
        help="threads that run the bots' searches and the hints, shared fairly by the games "
        f"(default the cores, at most 4: {default_workers()} here)",
    )


def policy_of(args):
    """The ``Policy`` the options give."""
    from caribsim.web.limits import Policy, default_workers

    return Policy(
        bots=args.bots,
        max_simulations=args.max_simulations,
        max_guided_simulations=args.max_guided_simulations,
        max_seconds=args.max_seconds,
        max_threads=args.max_threads,
        models_dirs=tuple(args.models_dir),
        cuba_data_dirs=tuple(args.cuba_data),
        max_games=args.max_games,
        creates_per_minute=args.creates_per_minute,
        workers=args.workers or default_workers(),
    )


def add_parser(sub):
    p = sub.add_parser(
        "serve",
        help="play in the browser: a lobby and a page per game",
        description="Starts the web server: choose a game, its human seats and bots in "
        "the lobby, each human seat gets a link with a secret token. Every game is a "
        "record in --games-dir, written as it goes; unfinished games resume after a "
        "restart. Needs pip install 'caribsim[web]'.",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    p.add_argument(
        "--port", type=int_at_least(1, "port", 65535), default=8000, help="port (default 8000)"
    )
    p.add_argument(
        "--games-dir",
        type=output_dir("--games-dir"),
        default="caribsim-games",
        metavar="DIR",
        help="folder of the games' records (default ./caribsim-games, made if missing)",
    )
    p.add_argument(
        "--bot-delay",
        type=_delay,
        default=0.6,
        metavar="SECONDS",
        help="pause before each bot move, so a person sees it (default 0.6)",
    )
    p.add_argument(
        "--hint-iterations",
        type=int_at_least(1, "hint iterations"),
        default=2000,
        help="search iterations of a hint (default 2000)",
    )
    p.add_argument(
        "--lang",
        type=language,
        default="en",
        metavar="LANG",
        help="language of the pages: en (default) or cs, as play --lang; a page's address "
        "may ask for the other with ?lang=en or ?lang=cs",
    )
    p.add_argument(
        "--analysis-iterations",
        type=int_at_least(1, "analysis iterations"),
        default=300,
        metavar="N",
        help="simulations per decision of the post-game analysis (default 300)",
    )
    _add_limits(p)
    p.set_defaults(subparser=p)
    return p


def _listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound now: a busy port or a foreign address is an error line,
    not a traceback from inside the server."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as e:
        raise ValueError(f"cannot listen on {host}:{port}: {reason(e)}") from None
    return sock


def run(args, out) -> int:
    try:
        import uvicorn
        import websockets  # noqa: F401  (uvicorn serves the live updates with it)

        from caribsim.web.app import create_app
    except ImportError as e:
        missing = (e.name or "").split(".")[0]
        if missing not in _WEB_EXTRA:
            raise
        args.subparser.error(f"the web server needs {missing}: pip install 'caribsim[web]'")
    try:
        sock = _listen(args.host, args.port)
    except ValueError as e:
        args.subparser.error(str(e))
    app = create_app(
        args.games_dir,
        bot_delay=args.bot_delay,
        hint_iterations=args.hint_iterations,
        lang=args.lang,
        analysis_iterations=args.analysis_iterations,
        policy=policy_of(args),
    )
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"caribsim: play at http://{host}:{args.port}/ (games in {args.games_dir}; Ctrl-C stops)",
        file=out,
        flush=True,
    )
    # no access log: a seat's link holds its token
    config = uvicorn.Config(app, access_log=False, log_level="warning")
    try:
        with sock:
            uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a server stops: the games were saved as they went
    print(f"caribsim: stopped; the games are in {args.games_dir}", file=out, flush=True)
    return 0
