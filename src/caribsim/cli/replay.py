"""`caribsim replay`."""

from __future__ import annotations

import sys

from caribsim.cli._args import int_at_least, output_file
from caribsim.cli.play import language


def add_parser(sub):
    p = sub.add_parser(
        "replay",
        help="step through a recorded game, or write its HTML viewer",
        description="Without --step or --html: read commands from the input: "
        "Enter or n (next), p (previous), g N (go to step N), q (quit).",
    )
    p.add_argument("record", metavar="FILE", help="a game record (JSON, see docs/records.md)")
    p.add_argument(
        "--step",
        type=int_at_least(0, "step"),
        default=None,
        help="print the board after this many steps and exit",
    )
    p.add_argument(
        "--html",
        metavar="OUT.html",
        type=output_file("--html"),
        help="write the self-contained HTML replay viewer",
    )
    p.add_argument(
        "--lang",
        type=language,
        default="en",
        metavar="LANG",
        help="language of the viewer (or of the boards, moves and messages printed): "
        "en (default) or cs",
    )
    p.set_defaults(subparser=p)
    return p


def _board(state, record, tr) -> str:
    """The engine's board; in another language the terminal's board of ``play`` (the engine's
    own abbreviations, such as Cuba's hands, spelt out), translated."""
    if tr.lang == "en":
        return str(state)
    from caribsim.human import boards

    return boards.get(record["game"]).text_board(state, tr=tr.text)


def run(args, out) -> int:
    from caribsim.human import lang, play, records, viewer

    parser = args.subparser
    if args.html is not None and args.step is not None:
        parser.error("give --step N (print one board) or --html FILE (the viewer), not both")
    try:
        record = records.load(args.record)
        final = records.replay(record)  # validates every step and the final scores
    except ValueError as e:
        parser.error(str(e))
    n = len(record["steps"])
    tr = lang.translator(record["game"], args.lang)
    if args.html:
        viewer.write_html(record, args.html, lang=args.lang)
        print(tr.msg("wrote {path} ({n} steps)", path=args.html, n=n), file=out)
        return 0
    if args.step is not None:
        if args.step > n:
            parser.error(f"--step must be 0..{n}, got {args.step}")
        st = records.replay(record, upto=args.step)
        print(tr.text(f"step {args.step} / {n}"), file=out)
        print(_board(st, record, tr), file=out)
        return 0
    i = 0
    states = records.states(record)
    play.tolerant_streams(sys.stdin, out)
    usage = tr.msg("Enter or n, p, g N (0..{n}), q", n=n)
    while True:
        head = tr.msg("start") if i == 0 else f"{i}. {tr.move(record['steps'][i - 1]['name'])}"
        print(tr.msg("--- step {i} / {n}: {head}", i=i, n=n, head=head), file=out)
        print(_board(states[i], record, tr), file=out)
        print(
            tr.msg("[Enter/n] next  [p] previous  [g N] go to  [q] quit > "),
            end="",
            file=out,
            flush=True,
        )
        try:
            line = play.read_line(sys.stdin)
        except KeyboardInterrupt:
            line = ""
        if line is None:
            print(tr.msg("that line is too long: {usage}", usage=usage), file=out)
            continue
        if not line:
            print(file=out)
            break
        cmd = " ".join(line.lower().split())
        goto = cmd[1:].strip() if cmd.startswith("g") else ""
        if cmd in ("", "n"):
            if i == n:
                print(
                    tr.msg("end of the game: returns {returns}", returns=final.returns())
                    if final.is_terminal()
                    else tr.msg("end of the game"),
                    file=out,
                )
                break
            i += 1
        elif cmd == "p":
            i = max(0, i - 1)
        elif goto.isdecimal() and len(goto) <= 9 and int(goto) <= n:
            i = int(goto)
        elif cmd == "q":
            break
        else:
            print(tr.msg("unknown command {cmd}: {usage}", cmd=ascii(cmd), usage=usage), file=out)
    return 0
