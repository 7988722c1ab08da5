"""`caribsim games`."""

from __future__ import annotations

import json

from caribsim.cli._args import fmt_counts, games_info


def add_parser(sub):
    p = sub.add_parser("games", help="list the games, their player counts and options")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(subparser=p)
    return p


def run(args, out) -> int:
    info = games_info()
    if args.json:
        print(json.dumps(info, indent=2), file=out)
        return 0
    for g in info:
        opts = ", ".join(f"{k}={v!r}" for k, v in g["options"].items())
        print(f"{g['game']}\tplayers {fmt_counts(g['players'])}\toptions: {opts}", file=out)
    return 0
