"""A person plays against bots in the terminal (``python -m caribsim play``).

Input at your turn: the move's number, or its name or an unambiguous prefix of it
("build h" for "build harbor" when nothing else starts so); ``undo`` (back to your
previous decision), ``hint`` (the search's suggestion with visit shares),
``save FILE`` (the game record so far), ``help``, ``quit`` (with a record file: the record
so far is written). Bad input gets a message and changes nothing. With ``lang="cs"`` every
word a person reads is Czech (``caribsim.human.lang``) and a move may also be typed as its
Czech name or label, with or without the accents.

What a person reads comes from the game's board module (``caribsim.human.boards``): the
board with a legend, each move's label (costs, cards, fields in words), and between two
prompts what happened (cards revealed, chance outcomes).
"""

from __future__ import annotations

import difflib
import io
import os
import random
import re
import sys
import unicodedata

from caribsim._game import GameState
from caribsim.human import boards, lang, records
from caribsim.search import mcts

HELP = (
    "type the number of a move or its name (an unambiguous prefix is enough); "
    "undo: back to your previous decision; hint: the search's suggestion; "
    "board: the whole board; save FILE: write the game record; help; quit"
)
BOARD_MODES = ("changes", "full")  # after a move: the board's changed lines, or all of it

_COLORS = {
    "corn": "33",
    "indigo": "34",
    "sugar": "37",
    "tobacco": "33;2",
    "coffee": "31;2",
    "seat": "1",
    "you": "1;32",
    "move": "36",
    "error": "31",
}


MAX_LINE = 4096  # characters of one input line; a longer one is skipped whole


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


def bad_text(text: str, tr=None):
    """A message if the input line cannot be a command (not UTF-8, control characters), else None."""
    tr = tr or lang.translator(None)
    if any("\udc80" <= c <= "\udcff" for c in text):
        return tr.msg("that input is not UTF-8 text")
    if any(not c.isprintable() and not c.isspace() for c in text):
        return tr.msg("that input holds control characters")
    return None


def use_color(stream, flag=None) -> bool:
    if flag is not None:
        return flag
    return (
        hasattr(stream, "isatty")
        and stream.isatty()
        and os.environ.get("TERM", "") != "dumb"
        and "NO_COLOR" not in os.environ
    )


def paint(text: str, what: str, color: bool) -> str:
    return f"\033[{_COLORS[what]}m{text}\033[0m" if color else text


def colorize_board(board: str, color: bool, tr=None) -> str:
    """The goods' names painted in their colours (their names in ``tr``'s language)."""
    if not color:
        return board
    for good in ("corn", "indigo", "sugar", "tobacco", "coffee"):
        word = tr.text(good) if tr else good
        board = board.replace(f"{word} ", paint(word, good, True) + " ")
    return board


def board_text(session, state) -> tuple:
    """The board of ``state`` as the person reads it: (its lines, the legend line)."""
    body, legend = session.board.text_board(state, tr=session.tr.text).rsplit("\n", 1)
    return body.split("\n"), legend


def _heading(line: str) -> bool:
    """A line that says what the indented lines under it belong to: a section ("Plantation of
    seat 2:") or a seat's line after its two marks ("G>seat 0: ...", in any language)."""
    return not line.startswith(" ") or re.match(r"^.{2}\S+ \d+:", line) is not None


def changed_lines(before: list, after: list) -> list:
    """The lines of ``after`` that are not in ``before`` at their place (difflib's replaced and
    inserted lines), each indented one under the heading it belongs to (said once, unchanged:
    "     city: ..." means nothing without its seat)."""
    match = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    new = {j for tag, _, _, j1, j2 in match.get_opcodes() if tag != "equal" for j in range(j1, j2)}
    out, head = [], None
    for j, line in enumerate(after):
        if _heading(line):
            head = j
        if j in new:
            if head is not None and head != j and head not in new and after[head] not in out:
                out.append(after[head])
            out.append(line)
    return out


def _typed(text: str) -> str:
    """How typed text is compared: lower case, single spaces, no accents ("mala" = "malá")."""
    text = unicodedata.normalize("NFD", " ".join(text.lower().split()))
    return "".join(c for c in text if not unicodedata.combining(c))


def match_move(text: str, state, labels=None, tr=None) -> tuple:
    """(action, None) for a number or a name/prefix of a legal move (its engine name, its name
    in ``tr``'s language or, when given, its label), else (None, message)."""
    tr = tr or lang.translator(None)
    legal = state.legal_actions()
    names = [state.action_to_string(a) for a in legal]
    shown = [tr.move(n) for n in names]
    nominative = [tr.move(n, cases=False) for n in names]  # "postavit malá barvírna" too
    spellings = [[_typed(x) for x in spelt] for spelt in (names, shown, labels or [], nominative)]
    text = " ".join(text.split())
    if text.isdecimal():
        k = int(text) if len(text) <= 9 else 0
        if 1 <= k <= len(legal):
            return legal[k - 1], None
        return None, tr.msg("no move {k}: choose 1..{n}", k=k, n=len(legal))
    typed = _typed(text)
    for spelt in spellings:
        if typed in spelt:
            return legal[spelt.index(typed)], None
    hits = sorted({i for spelt in spellings for i, n in enumerate(spelt) if n.startswith(typed)})
    if len(hits) == 1:
        return legal[hits[0]], None
    text = text.lower()
    if hits:
        return None, tr.msg(
            "{text!r} is ambiguous: {names}", text=text, names=", ".join(shown[i] for i in hits)
        )
    return None, tr.msg("no legal move matches {text!r}; {help}", text=text, help=tr.msg(HELP))


class Session:
    """The state of one game played by a person (seat ``seat``) against bots; ``state``
    resumes a game (a state made from ``seed``, e.g. a replayed record)."""

    def __init__(
        self,
        game,
        seat: int,
        bots: list,
        seed: int = 0,
        hint_iterations: int = 2000,
        state=None,
        lang_code: str = "en",
    ):
        if not 0 <= seat < game.num_players():
            raise ValueError(f"seat must be 0..{game.num_players() - 1}, got {seat}")
        if len(bots) != game.num_players() - 1:
            raise ValueError(
                f"{game.num_players()} players need {game.num_players() - 1} bots, got {len(bots)}"
            )
        self.game, self.seat, self.seed = game, seat, seed
        self.bots = {}
        others = [s for s in range(game.num_players()) if s != seat]
        for s, bot in zip(others, bots):
            bot.restart(seed + s + 1)
            self.bots[s] = bot
        self.state = game.new_initial_state(seed=seed) if state is None else state
        self.board = boards.get(type(game).name)
        self.tr = lang.translator(type(game).name, lang.check(lang_code))
        self.shown = self.state.clone()  # the state up to which events() has been told
        self.undo_stack: list[GameState] = []  # clones at each of the person's decisions
        self.hint_iterations = hint_iterations

    def label(self, action) -> str:
        """The move as the person reads it (another seat's secret stays secret)."""
        return self.tr.move(self.board.choice_label(self.state, action, seat=self.seat))

    def tell(self, say) -> None:
        """Say what happened since the last time (the board module's events)."""
        for line in self.board.events(self.shown, self.state):
            say(self.tr.move(line))
        self.shown = self.state.clone()

    def rewind(self, state) -> None:
        """Continue from ``state`` (undo): nothing in between is told."""
        self.state, self.shown = state, state.clone()

    def advance(self, say):
        """Play chance events and the bots' moves until the person's turn or the end,
        saying each bot move and what happened in between."""
        while not self.state.is_terminal():
            if self.state.is_chance_node():
                self.state.resolve_chance()
                continue
            self.tell(say)
            p = self.state.current_player()
            if p == self.seat:
                return
            a = self.bots[p].step(self.state)
            say(
                self.tr.msg(
                    "seat {p} ({bot}): {move}", p=p, bot=self.bots[p].name, move=self.label(a)
                ),
                "move",
            )
            self.state.apply_action(a)
        self.tell(say)

    def record(self) -> dict:
        info = [
            "human" if s == self.seat else self.bots[s].name for s in range(self.game.num_players())
        ]
        return records.record_game(self.state, self.seed, info)


def fresh_seed() -> int:
    """A random seed for a new game (short enough to type back with --seed)."""
    return random.SystemRandom().randrange(10**6, 10**9)


def run(
    game,
    seat: int,
    bots: list,
    seed=None,
    stdin=None,
    stdout=None,
    color=None,
    record_path=None,
    hint_iterations: int = 2000,
    record=None,
    lang_code: str = "en",
    board_mode: str = "changes",
) -> int:
    """Play one game in the terminal; returns 0 when the game ended or the player quit,
    130 on Ctrl-C. ``seed`` None draws a fresh one (printed, to replay the game);
    ``record`` (a record of ``game``, see records.load) resumes its game at its last step;
    ``lang_code`` the language of everything printed ("en" or "cs"); ``board_mode`` what is
    shown of the board at each decision: "changes" (its lines that changed since it was last
    shown; ``board`` shows all of it) or "full"."""
    lang.check(lang_code)
    if board_mode not in BOARD_MODES:
        raise ValueError(f"board_mode must be one of {', '.join(BOARD_MODES)}, got {board_mode!r}")
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    color = use_color(out, color)
    if record is not None:
        seed = record["seed"]
    elif seed is None:
        seed = fresh_seed()
    state = records.replay(record) if record is not None else None
    if state is not None and (
        type(state.game) is not type(game) or state.game.options() != game.options()
    ):
        raise ValueError(
            f"the record is a {record['game']} game with options {record['options']}, "
            f"not {type(game).name} with {game.options()}"
        )
    session = Session(game, seat, bots, seed, hint_iterations, state=state, lang_code=lang_code)
    tr = session.tr
    tolerant_streams(stdin, out)

    def say(text, what=None, end="\n"):
        print(paint(text, what, color) if what else text, file=out, end=end, flush=True)

    if record is None:
        say(tr.msg("seed {seed}: replay with --seed {seed}", seed=seed))
    else:
        say(tr.msg("resumed at step {n} (seed {seed})", n=len(record["steps"]), seed=seed))
    try:
        return _play(session, stdin, say, color, record_path, board_mode)
    except KeyboardInterrupt:
        say(tr.msg("\ninterrupted: leaving the game"))
        return 130


def _save_record(session, path, say) -> bool:
    """Write the game record so far to ``path``; False (and a message) if that fails."""
    tr = session.tr
    try:
        records.save(session.record(), path)
    except (OSError, ValueError) as e:
        say(
            tr.msg(
                "cannot save the record to {path!r}: {why}",
                path=path,
                why=getattr(e, "strerror", None) or e,
            ),
            "error",
        )
        return False
    say(tr.msg("record of {n} steps saved to {path}", n=len(session.state.history()), path=path))
    return True


def _game_over(session, say) -> None:
    st, tr = session.state, session.tr
    totals = [s["total"] if isinstance(s, dict) else s for s in st.scores()]
    scores = ", ".join(tr.msg("seat {i} {total}", i=i, total=t) for i, t in enumerate(totals))
    say(
        tr.msg(
            "Game over. Scores: {scores}. Returns: {returns}", scores=scores, returns=st.returns()
        ),
        "you",
    )


def _hint(session, say) -> None:
    """The search's five most visited moves, each with its share of the visits and the share
    of the playouts through it that the seat to move won (the search's reward is the win)."""
    st, tr = session.state, session.tr
    result = mcts.search(st, iterations=session.hint_iterations, seed=len(st.history()))
    shares = sorted(result.policy().items(), key=lambda kv: -kv[1])[:5]
    moves = "; ".join(
        tr.msg(
            "{move}: {visits}% of the visits, won {win}%",
            move=tr.move(st.action_to_string(a)),
            visits=f"{100 * p:.0f}",
            win=f"{100 * result.mean_reward[a]:.0f}",
        )
        for a, p in shares
    )
    say(
        tr.msg(
            "hint ({n} search iterations; each move's share of them and the playouts through it "
            "that you won): {moves}",
            n=result.iterations,
            moves=moves,
        )
    )


def _save(session, text, say) -> None:
    """``save FILE``: the record so far, or a message why not."""
    st, tr = session.state, session.tr
    parts = text.split(maxsplit=1)
    if len(parts) != 2:
        say(tr.msg("save needs a file name: save FILE"), "error")
        return
    try:
        records.save(session.record(), parts[1])
    except (OSError, ValueError) as e:
        say(
            tr.msg(
                "cannot save to {path!r}: {why}",
                path=parts[1],
                why=getattr(e, "strerror", None) or e,
            ),
            "error",
        )
        return
    say(tr.msg("saved {n} steps to {path}", n=len(st.history()), path=parts[1]))


def _play(session, stdin, say, color, record_path, board_mode="changes") -> int:
    seat, tr = session.seat, session.tr
    help_text = tr.msg(HELP)
    say(tr.msg("You are seat {seat}. {help}", seat=seat, help=help_text), "you")
    shown = None  # the board's lines as last shown whole or in part

    def show_board(whole: bool):
        nonlocal shown
        lines, legend = board_text(session, session.state)
        if whole or shown is None:
            say(colorize_board("\n".join([*lines, legend]), color, tr))
        else:
            changed = changed_lines(shown, lines)
            say(tr.msg("changed on the board (type board for all of it):"), "you")
            say(colorize_board("\n".join(changed), color, tr) if changed else tr.msg("  no change"))
        shown = lines

    while True:
        session.advance(say)
        st = session.state
        if st.is_terminal():
            show_board(True)
            _game_over(session, say)
            if record_path and not _save_record(session, record_path, say):
                return 1
            return 0
        show_board(board_mode == "full")
        legal = st.legal_actions()
        labels = [session.label(a) for a in legal]
        say(tr.msg("Your move:"), "you")
        for i, label in enumerate(labels, 1):
            say(f"  {i:>2}. {label}")
        while True:
            say("> ", None, end="")
            line = read_line(stdin)
            if line is None:
                say(
                    tr.msg(
                        "that line is too long (at most {n} characters); {help}",
                        n=MAX_LINE,
                        help=help_text,
                    ),
                    "error",
                )
                continue
            if not line:
                say(tr.msg("\nend of input: leaving the game"))
                return 0
            text = line.strip()
            if not text:
                continue
            problem = bad_text(text, tr)
            if problem:
                say(f"{problem}; {help_text}", "error")
                continue
            cmd = text.split()[0].lower()
            if cmd in ("quit", "exit"):
                say(tr.msg("leaving the game"))
                if record_path and not _save_record(session, record_path, say):
                    return 1
                return 0
            if cmd == "help":
                say(help_text)
                say(tr.msg("Legend: {legend}", legend=tr.text(session.board.LEGEND)))
                continue
            if cmd == "undo":
                if not session.undo_stack:
                    say(tr.msg("nothing to undo: this is your first decision"), "error")
                    continue
                session.rewind(session.undo_stack.pop())
                say(tr.msg("back to your previous decision"))
                break
            if cmd == "hint":
                _hint(session, say)
                continue
            if cmd == "board":
                show_board(True)
                continue
            if cmd == "save":
                _save(session, text, say)
                continue
            action, error = match_move(text, st, labels, tr)
            if error:
                say(error, "error")
                continue
            session.undo_stack.append(st.clone())
            say(tr.msg("you: {move}", move=session.label(action)), "move")
            st.apply_action(action)
            break
