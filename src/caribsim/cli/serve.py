"""`caribsim serve`: play in the browser (caribsim.web, docs/web.md)."""

from __future__ import annotations

import argparse
import math
import socket

from caribsim.cli._args import int_at_least, output_dir, reason
from caribsim.cli.play import language

_WEB_EXTRA = ("starlette", "uvicorn", "websockets", "anyio", "h11")  # the extra and what it brings


def _delay(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= 60):
        raise argparse.ArgumentTypeError(
            f"bot delay must be a number of seconds in 0..60, got {text!r}"
        )
    return value


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
