"""`caribsim replay`."""
from __future__ import annotations

import sys

from caribsim.cli._args import int_at_least, output_file
from caribsim.cli.play import language


def add_parser(sub):
    p = sub.add_parser("replay", help="step through a recorded game, or write its HTML viewer",
                       description="Without --step or --html: read commands from the input: "
                       "Enter or n (next), p (previous), g N (go to step N), q (quit).")
    p.add_argument("record", metavar="FILE", help="a game record (JSON, see docs/records.md)")
    p.add_argument("--step", type=int_at_least(0, "step"), default=None,
                   help="print the board after this many steps and exit")
    p.add_argument("--html", metavar="OUT.html", type=output_file("--html"),
                   help="write the self-contained HTML replay viewer")
    p.add_argument("--lang", type=language, default="en", metavar="LANG",
                   help="language of the viewer's labels, moves and boards: en (default) or cs")
    p.set_defaults(subparser=p)
    return p


def run(args, out) -> int:
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
        viewer.write_html(record, args.html, lang=args.lang)
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
