"""The command line: ``python -m caribsim`` (or the ``caribsim`` script), one module per command.

    python -m caribsim games
    python -m caribsim simulate puerto_rico --players 4 --games 10000 [--seed S] [--threads T] [--json]
        [--backend local|processes|ray] [--workers K] [--address ADDR] [--chunk-size N] [--resume DIR]
    python -m caribsim arena puerto_rico --bots mcts:1000,greedy,random,random --games 200 [--processes K]
        [--backend ...] (the same backend options as simulate)
        [--save FILE] [--save-games DIR] [--plot FILE.png]
    python -m caribsim tournament cuba --players 3 --bots mcts:300,greedy,random,random --games 120
        [--schedule round-robin|random] [--backend ...] [--save FILE.json] [--plot FILE.png]
    python -m caribsim play puerto_rico --players 4 --seat 0 --bots mcts:2000,greedy,random [--record FILE]
    python -m caribsim replay game.json [--step N] [--html OUT.html]
    python -m caribsim selfplay puerto_rico --players 3 --bot mcts:200 --games 100 --out DIR [--backend ...]
    python -m caribsim train puerto_rico --players 2 --out DIR [--rounds R] [--games-per-round G] [--resume]
    python -m caribsim bench [--quick]
    python -m caribsim serve [--host 127.0.0.1] [--port 8000] [--games-dir DIR]

One module per command (``games``, ``simulate``, ``arena``, ``tournament``, ``play``, ``replay``,
``selfplay``, ``train``, ``bench``, ``serve``: each has ``add_parser`` and ``run``); ``_args`` holds the
argument types they share.
Bad arguments print one line naming what is wrong and what is allowed, and exit with code 2.
May import anything in caribsim (it is the top layer); nothing imports it but ``__main__``.
"""

from __future__ import annotations

import os
import sys

import caribsim
from caribsim.cli import (
    arena,
    bench,
    games,
    play,
    replay,
    selfplay,
    serve,
    simulate,
    tournament,
    train,
)
from caribsim.cli._args import Parser, reason

COMMANDS = {
    m.__name__.rsplit(".", 1)[1]: m
    for m in (games, simulate, arena, tournament, play, replay, selfplay, train, bench, serve)
}
"""One module per command, each with ``add_parser(subparsers)`` and ``run(args, out)``."""


def build_parser() -> Parser:
    parser = Parser(
        prog="python -m caribsim",
        description="caribsim: exact, fast board game simulation engines (compiled Cython core).",
    )
    parser.add_argument("--version", action="version", version=f"caribsim {caribsim.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS.values():
        command.add_parser(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    subparser: Parser = args.subparser  # every command's parser sets it (set_defaults)
    out = sys.stdout
    try:
        return COMMANDS[args.command].run(args, out)
    except BrokenPipeError:
        # the reader went away (`| head`): stop quietly, as other command-line tools do
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:
        # a file argument that passed the checks up front but failed later (disk full, removed)
        subparser.error(f"{reason(e)}: {e.filename!r}" if e.filename else reason(e))
    except MemoryError:
        subparser.error("out of memory: use fewer games or smaller searches")
    except KeyboardInterrupt:
        print(f"{subparser.prog}: interrupted", file=sys.stderr)
        return 130
