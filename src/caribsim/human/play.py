"""A person plays against bots in the terminal (``python -m caribsim play``).

Input at your turn: the move's number, or its name or an unambiguous prefix of it
("build h" for "build harbor" when nothing else starts so); ``undo`` (back to your
previous decision), ``hint`` (the search's suggestion with visit shares),
``save FILE`` (the game record so far), ``help``, ``quit``. Bad input gets a message
and changes nothing.
"""
from __future__ import annotations

import io
import os
import sys

from caribsim.search import mcts
from caribsim.human import records

HELP = ("type the number of a move or its name (an unambiguous prefix is enough); "
        "undo: back to your previous decision; hint: the search's suggestion; "
        "save FILE: write the game record; help; quit")

_COLORS = {"corn": "33", "indigo": "34", "sugar": "37", "tobacco": "33;2", "coffee": "31;2",
           "seat": "1", "you": "1;32", "move": "36", "error": "31"}


MAX_LINE = 4096   # characters of one input line; a longer one is skipped whole


def read_line(stream):
    """The next input line: '' at the end of input, None for a line longer than MAX_LINE
    (read to its end and dropped, so memory stays bounded)."""
    line = stream.readline(MAX_LINE + 1)
    if len(line) <= MAX_LINE or line.endswith("\n"):
        return line
    while line and not line.endswith("\n"):
        line = stream.readline(MAX_LINE)
    return None


def tolerant_streams(stdin, stdout) -> None:
    """Bytes that are not UTF-8 come in as surrogates (see bad_text) and text the terminal
    cannot show goes out escaped, instead of raising UnicodeError mid-game."""
    for stream, errors in ((stdin, "surrogateescape"), (stdout, "backslashreplace")):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors=errors)


def bad_text(text: str):
    """A message if the input line cannot be a command (not UTF-8, control characters), else None."""
    if any("\udc80" <= c <= "\udcff" for c in text):
        return "that input is not UTF-8 text"
    if any(not c.isprintable() and not c.isspace() for c in text):
        return "that input holds control characters"
    return None


def use_color(stream, flag=None) -> bool:
    if flag is not None:
        return flag
    return (hasattr(stream, "isatty") and stream.isatty() and os.environ.get("TERM", "") != "dumb"
            and "NO_COLOR" not in os.environ)


def paint(text: str, what: str, color: bool) -> str:
    return f"\033[{_COLORS[what]}m{text}\033[0m" if color else text


def colorize_board(board: str, color: bool) -> str:
    if not color:
        return board
    for good in ("corn", "indigo", "sugar", "tobacco", "coffee"):
        board = board.replace(f"{good} ", paint(good, good, True) + " ")
    return board


def match_move(text: str, state) -> tuple:
    """(action, None) for a number or a name/prefix of a legal move, else (None, message)."""
    legal = state.legal_actions()
    names = [state.action_to_string(a) for a in legal]
    text = " ".join(text.lower().split())
    if text.isdecimal():
        k = int(text) if len(text) <= 9 else 0
        if 1 <= k <= len(legal):
            return legal[k - 1], None
        return None, f"no move {k}: choose 1..{len(legal)}"
    if text in names:
        return legal[names.index(text)], None
    hits = [i for i, n in enumerate(names) if n.startswith(text)]
    if len(hits) == 1:
        return legal[hits[0]], None
    if hits:
        return None, f"{text!r} is ambiguous: " + ", ".join(names[i] for i in hits)
    return None, f"no legal move matches {text!r}; {HELP}"


class Session:
    """The state of one game played by a person (seat ``seat``) against bots."""

    def __init__(self, game, seat: int, bots: list, seed: int = 0, hint_iterations: int = 2000):
        if not 0 <= seat < game.num_players():
            raise ValueError(f"seat must be 0..{game.num_players() - 1}, got {seat}")
        if len(bots) != game.num_players() - 1:
            raise ValueError(f"{game.num_players()} players need {game.num_players() - 1} bots, got {len(bots)}")
        self.game, self.seat, self.seed = game, seat, seed
        self.bots = {}
        others = [s for s in range(game.num_players()) if s != seat]
        for s, bot in zip(others, bots):
            bot.restart(seed + s + 1)
            self.bots[s] = bot
        self.state = game.new_initial_state(seed=seed)
        self.undo_stack = []          # clones at each of the person's decisions
        self.hint_iterations = hint_iterations

    def advance(self, say):
        """Play chance events and the bots' moves until the person's turn or the end."""
        while not self.state.is_terminal():
            if self.state.is_chance_node():
                self.state.resolve_chance()
                continue
            p = self.state.current_player()
            if p == self.seat:
                return
            a = self.bots[p].step(self.state)
            say(f"seat {p} ({self.bots[p].name}): {self.state.action_to_string(a)}", "move")
            self.state.apply_action(a)

    def record(self) -> dict:
        info = ["human" if s == self.seat else self.bots[s].name for s in range(self.game.num_players())]
        return records.record_game(self.state, self.seed, info)


def run(game, seat: int, bots: list, seed: int = 0, stdin=None, stdout=None, color=None,
        record_path=None, hint_iterations: int = 2000) -> int:
    """Play one game in the terminal; returns 0 when the game ended or the player quit,
    130 on Ctrl-C."""
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    color = use_color(out, color)
    session = Session(game, seat, bots, seed, hint_iterations)
    tolerant_streams(stdin, out)

    def say(text, what=None, end="\n"):
        print(paint(text, what, color) if what else text, file=out, end=end, flush=True)

    try:
        return _play(session, stdin, say, color, record_path)
    except KeyboardInterrupt:
        say("\ninterrupted: leaving the game")
        return 130


def _play(session, stdin, say, color, record_path) -> int:
    seat, hint_iterations = session.seat, session.hint_iterations
    say(f"You are seat {seat}. {HELP}", "you")
    while True:
        session.advance(say)
        st = session.state
        if st.is_terminal():
            say(colorize_board(str(st), color))
            scores = st.scores()
            totals = [s["total"] if isinstance(s, dict) else s for s in scores]
            say("Game over. Scores: " + ", ".join(f"seat {i} {t}" for i, t in enumerate(totals))
                + f". Returns: {st.returns()}", "you")
            if record_path:
                try:
                    records.save(session.record(), record_path)
                except OSError as e:
                    say(f"cannot save the record to {record_path!r}: {e.strerror}", "error")
                    return 1
                say(f"record saved to {record_path}")
            return 0
        say(colorize_board(str(st), color))
        legal = st.legal_actions()
        say("Your move:", "you")
        for i, a in enumerate(legal, 1):
            say(f"  {i:>2}. {st.action_to_string(a)}")
        while True:
            say("> ", None, end="")
            line = read_line(stdin)
            if line is None:
                say(f"that line is too long (at most {MAX_LINE} characters); {HELP}", "error")
                continue
            if not line:
                say("\nend of input: leaving the game")
                return 0
            text = line.strip()
            if not text:
                continue
            problem = bad_text(text)
            if problem:
                say(f"{problem}; {HELP}", "error")
                continue
            cmd = text.split()[0].lower()
            if cmd in ("quit", "exit"):
                say("leaving the game")
                return 0
            if cmd == "help":
                say(HELP)
                continue
            if cmd == "undo":
                if not session.undo_stack:
                    say("nothing to undo: this is your first decision", "error")
                    continue
                session.state = session.undo_stack.pop()
                say("back to your previous decision")
                break
            if cmd == "hint":
                result = mcts.search(st, iterations=hint_iterations, seed=len(st.history()))
                shares = sorted(result.policy().items(), key=lambda kv: -kv[1])[:5]
                say("hint: " + ", ".join(f"{st.action_to_string(a)} {100 * p:.0f}%" for a, p in shares))
                continue
            if cmd == "save":
                parts = text.split(maxsplit=1)
                if len(parts) != 2:
                    say("save needs a file name: save FILE", "error")
                    continue
                try:
                    records.save(session.record(), parts[1])
                except (OSError, ValueError) as e:
                    say(f"cannot save to {parts[1]!r}: {getattr(e, 'strerror', None) or e}", "error")
                    continue
                say(f"saved {len(st.history())} steps to {parts[1]}")
                continue
            action, error = match_move(text, st)
            if error:
                say(error, "error")
                continue
            session.undo_stack.append(st.clone())
            say(f"you: {st.action_to_string(action)}", "move")
            st.apply_action(action)
            break
