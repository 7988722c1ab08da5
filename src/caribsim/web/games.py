"""The games a server holds: each one's state, seats (a person with a secret token, or a bot),
move log and record in the store, and the checks every request goes through.

A game lives in the games folder's database (``caribsim.web.store``, docs/web.md *Storage*):
who plays each seat (``"human"`` or a bot spec), the human seats' tokens (kept out of the
record, which may be shared) and one row per step, each step committed before the request
that made it is answered, so a closed tab or a stopped server loses nothing. The games are
loaded when first asked for and a bounded number stay in memory (``Games``). Every method
here runs on the server's event loop (a store's write too: a few rows); only the bots' and
the hints' searches run in threads, on clones.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import copy
import functools
import hmac
import inspect
import json
import logging
import os
import re
import secrets
import time
import weakref
from collections import OrderedDict
from pathlib import Path

import numpy as np

import caribsim
from caribsim._common import _read_json_file
from caribsim.human import boards, lang, records, viewer
from caribsim.search import bots as bot_specs
from caribsim.search import mcts
from caribsim.web import limits, workers
from caribsim.web import store as stores

HUMAN = "human"
SEATS_FORMAT = "caribsim-web-seats"
MAX_SPEC = 200  # characters of a bot spec
_MODEL_PATH = 4096  # characters the server's policy may add to a spec: a model file's full path
HINT_MOVES = 5  # moves a hint lists
MARGIN_PLAYOUTS = 200  # random games after each hinted move for its expected score margin
_ID = re.compile(r"[0-9a-f]{12}")
_PLAYER_PROBE = range(1, 11)
log = logging.getLogger("caribsim.web")


class Text:
    """A message a person reads: its English template with ``{placeholders}`` and their values.
    ``str()`` is the English text; ``said(tr)`` the text in the language of ``tr`` (a
    ``lang.Translator``: the template's ``msg`` row of data/lang_cs.csv, English without one);
    a value that is a Text is said in that language too."""

    def __init__(self, template: str, **values):
        self.template, self.values = template, values

    def said(self, tr=None) -> str:
        template = tr.messages.get(self.template, self.template) if tr else self.template
        if not self.values:
            return template
        return template.format(
            **{k: v.said(tr) if isinstance(v, Text) else v for k, v in self.values.items()}
        )

    def __str__(self) -> str:
        return self.said()


class GameError(ValueError):
    """A request that is refused, with the HTTP status that says why (400 a bad request, 403 a
    wrong token, 404 no such game, 409 the game is not where the request thought); the message
    is a template and its values (``Text``), so that a page reads it in its language."""

    def __init__(self, message: str, status: int = 400, **values):
        self.text = Text(message, **values)
        super().__init__(str(self.text))
        self.status = status

    def said(self, tr=None) -> str:
        return self.text.said(tr)


def player_text(player: str):
    """A seat's player as a page says it: a bot's name, or "human" in the page's language."""
    return Text(HUMAN) if player == HUMAN else player


def said(value, tr) -> str:
    """A value of a message (a Text or a plain value) in the language of ``tr``."""
    return value.said(tr) if isinstance(value, Text) else str(value)


@functools.lru_cache(maxsize=1 << 16)
def _log_line(tr, i: int, who: str, move: str) -> str:
    """A log line in the language of ``tr`` (cached: every view of a game says the whole log)."""
    return tr.msg("{i}. {who}: {move}", i=i, who=who, move=tr.move(move))


@functools.cache
def choices() -> tuple:
    """What the lobby offers for each game: its player counts and its yes/no options (the
    constructor's keyword arguments with a bool default)."""
    out = []
    for name in caribsim.games():
        counts = [n for n in _PLAYER_PROBE if _loads(name, n)]
        params = inspect.signature(type(caribsim.load_game(name)).__init__).parameters.values()
        out.append(
            {
                "game": name,
                "players": counts,
                "options": {p.name: p.default for p in params if isinstance(p.default, bool)},
            }
        )
    return tuple(out)


def _loads(name: str, players: int) -> bool:
    try:
        caribsim.load_game(name, players=players)
    except (ValueError, TypeError):
        return False
    return True


def _now() -> int:
    """Microseconds since 1970: below 2**53, so a page's JS numbers hold it exactly."""
    return time.time_ns() // 1000


def _never(before) -> bool:
    return False


def _no_secrets(state, steps) -> dict:
    return {}


def secret_seed() -> int:
    """A game's seed when the lobby gives none: 64 bits from the OS's entropy (a seed of the
    terminal's typing length could be found from a few public draws)."""
    return secrets.randbits(64)


def fresh_rng(state):
    """``state`` with its RNG words drawn from the OS's entropy: the chance to come is no
    longer what the seed gives. A record keeps every outcome as a step, so it replays the
    same; a server uses this wherever a state is rebuilt (an undo, a restart, a record
    played on), so that an undo past a chance step draws that chance afresh."""
    d = state.to_dict()
    words = [0] * 4
    while not any(words):  # xoshiro's one forbidden state
        words = [secrets.randbits(64) for _ in range(4)]
    d["rng"] = words
    return state.game.state_from_dict(d)


def searched_state(state, seat: int, seed: int):
    """What a search for ``seat`` may start from: a state drawn from ``seat``'s information
    set (the game's ``determinize``, which reads the public facts only), or the state
    itself when nothing is hidden (Puerto Rico), with its RNG words from ``seed``."""
    if hasattr(state, "determinize"):
        return state.determinize(seat, seed=seed)
    d = state.to_dict()
    d["rng"] = [(seed + k) % 2**64 or 1 for k in range(1, 5)]
    return state.game.state_from_dict(d)


def _write_json(path: Path, value) -> None:
    """Write the file whole or not at all (a crash mid-write leaves the previous version)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        # compact: the C encoder (indent= takes the Python one, 4x slower on a long record)
        tmp.write_text(json.dumps(value, separators=(",", ":")) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _int(value, what: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise GameError(
            what + " must be an integer in {low}..{high}, got {got}",
            low=low,
            high=high,
            got=json.dumps(value)[:60],
        )
    return value


def _spec_text(spec, seat: int, limit: int = MAX_SPEC) -> None:
    """GameError unless ``spec`` is a bot spec's text of at most ``limit`` characters."""
    if not isinstance(spec, str) or not spec.strip() or len(spec) > limit:
        raise GameError(
            'seat {seat}: give "human" or a bot spec (random, greedy, mcts:N, ...) '
            "of at most {n} characters, got {got}",
            seat=seat,
            n=MAX_SPEC,
            got=json.dumps(spec)[:60],
        )


def _bot(spec, seat: int):
    """The bot of a seat's spec (GameError saying why not). A client's spec reaches here
    checked by the server's policy (``limits.Policy.check_spec``), which may have put a model's
    full path in it: the bot's name shows the file's name only."""
    _spec_text(spec, seat, MAX_SPEC + _MODEL_PATH)
    made = (_PREPARED.get() or {}).get(spec)
    if made is not None:  # made on a worker (a model read there): a copy of it, no file read
        return copy.deepcopy(made)
    try:
        bot = bot_specs.parse_bot(spec)
    except (ValueError, TypeError) as e:
        unknown = f"unknown bot spec {spec!r}; use {bot_specs._KINDS}"  # the common slip, said in the page's language
        if str(e) == unknown:
            raise GameError(
                "seat {seat}: unknown bot spec {spec!r}; use {kinds}",
                seat=seat,
                spec=spec,
                kinds=bot_specs._KINDS,
            ) from None
        raise GameError("seat {seat}: {why}", seat=seat, why=str(e)) from None
    if isinstance(bot, bot_specs.AlphaZeroBot) and bot.model and os.path.isabs(bot.model):
        bot.model = os.path.basename(bot.model)  # the server's folders stay off the pages
    return bot


_PREPARED: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "caribsim_web_bots", default=None
)


@contextlib.contextmanager
def prepared_bots(bots: dict):
    """Within it, ``_bot(spec)`` of a spec of ``bots`` (spec -> a bot ``_bot`` made) is a copy
    of that bot: a new game's bots are made on a worker (``app``'s create), off the event loop,
    and the game made on the loop copies them."""
    token = _PREPARED.set(bots)
    try:
        yield
    finally:
        _PREPARED.reset(token)


def _made_bot(spec, seat: int):
    """The seat's bot, or an ``_Unavailable`` one saying why it cannot be made."""
    try:
        return _bot(spec, seat)
    except GameError as e:
        return _Unavailable(str(spec)[:MAX_SPEC], str(e))


class _Unavailable(bot_specs.Bot):
    """A seat whose bot cannot be made any more (a resumed game whose model is gone): the
    game shows why when that seat is to act, instead of the server not starting."""

    def __init__(self, spec: str, why: str):
        super().__init__()
        self.name, self.why = spec, why

    def step(self, state) -> int:
        raise ValueError(self.why)


class Game:
    """One game: its state, who plays each seat, the move log and where it is stored."""

    store: stores.Store | None = None  # where the game is kept (Games sets it); None: nowhere
    # the thread the store's writes run on when the event loop asks (Games sets it; None: the
    # caller's thread): an fsync never holds the loop
    io: concurrent.futures.Executor | None = None
    _kept: list | None = None  # the steps known to be stored (None: read them back first)

    def __init__(
        self,
        folder: Path,
        game_id: str,
        state,
        seed: int,
        seats: list,
        tokens: list,
        fresh: bool = False,
    ):
        self.folder, self.id, self.seed = folder, game_id, seed
        self.seats, self.tokens = seats, tokens  # per seat: "human"/a spec, a token/None
        self.rules, self.name = state.game, type(state.game).name
        self.board = boards.get(self.name)
        self.bots = {s: _made_bot(spec, s) for s, spec in enumerate(seats) if spec != HUMAN}
        for s, bot in self.bots.items():
            bot.restart((seed + s + 1 + len(state.history())) % 2**64)
        self.players = [
            HUMAN if spec == HUMAN else self.bots[s].name for s, spec in enumerate(seats)
        ]
        self.listeners: set[asyncio.Queue] = set()
        self.task: asyncio.Task[None] | None = None  # the bots' driver while a bot is to act
        self.problem: Text | None = None  # a bot that failed (the game waits)
        self.hints: dict[
            int, asyncio.Future
        ] = {}  # step -> the hint's search (a task) at that step
        self.version = _now()  # grows with every change, across restarts too
        self.lock = asyncio.Lock()  # one change at a time: checked, stored, installed
        self._reset(state, fresh)

    # --- making, loading, saving ---------------------------------------------------------
    @classmethod
    def create(cls, folder: Path, body) -> Game:
        """A new game from the lobby's request: ``{"game", "players"?, "options"?, "seats",
        "seed"?}`` (seats: "human" or a bot spec each)."""
        if not isinstance(body, dict):
            raise GameError(
                "a new game is a JSON object with game, seats and optionally players, options, seed"
            )
        if "record" in body:
            return cls._from_record(folder, body)
        unknown = set(body) - {"game", "players", "options", "seats", "seed"}
        if unknown:
            raise GameError(
                "unknown field(s) {fields}; allowed: game, players, options, seats, seed "
                "(or record, step, seats: play on from a record)",
                fields=", ".join(sorted(unknown)),
            )
        offer: dict[str, dict] = {c["game"]: c for c in choices()}
        name = body.get("game")
        if name not in offer:
            raise GameError(
                "game must be one of {games}, got {got}",
                games=", ".join(offer),
                got=json.dumps(name)[:60],
            )
        seats = body.get("seats")
        counts = offer[name]["players"]
        if not isinstance(seats, list) or len(seats) not in counts:
            raise GameError(
                'seats must be a list of {low}..{high} entries ("human" or a bot spec), got {got}',
                low=counts[0],
                high=counts[-1],
                got=json.dumps(seats)[:60],
            )
        if body.get("players", len(seats)) != len(seats):
            raise GameError(
                "players is {players} but {n} seats are given",
                players=json.dumps(body["players"])[:20],
                n=len(seats),
            )
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise GameError("options must be an object of yes/no options")
        for key, value in options.items():
            if key not in offer[name]["options"] or type(value) is not bool:
                raise GameError(
                    "option {key!r}: {game} takes {options}, each true or false",
                    key=key,
                    game=name,
                    options=", ".join(offer[name]["options"]) or Text("none"),
                )
        seed = body.get("seed")
        seed = secret_seed() if seed is None else _int(seed, "seed", 0, 2**64 - 1)
        for s, spec in enumerate(seats):
            if spec != HUMAN:
                _bot(spec, s)  # every seat checked before anything is made
        try:
            rules = caribsim.load_game(name, players=len(seats), **options)
        except (ValueError, TypeError) as e:  # options that do not go together
            raise GameError("{game}: {why}", game=name, why=str(e)) from None
        # a server seed's chance stays as the seed draws it (the seed never leaves the server
        # before the end); a chosen seed's game plays as the engine plays from that seed
        return cls._start(folder, rules.new_initial_state(seed=seed), seed, seats)

    @classmethod
    def _start(cls, folder: Path, state, seed: int, seats: list, fresh: bool = False) -> Game:
        """A new game of ``state`` (its steps so far kept) with ``seats``; not stored yet."""
        for s, spec in enumerate(seats):
            if spec != HUMAN:
                try:
                    _bot(spec, s).check_game(state.game)  # a network of another game
                except ValueError as e:
                    raise GameError("seat {seat}: {why}", seat=s, why=str(e)) from None
        tokens = [secrets.token_urlsafe(18) if spec == HUMAN else None for spec in seats]
        # stored by Games.create, before the lobby's request is answered
        return cls(folder, secrets.token_hex(6), state, seed, list(seats), tokens, fresh)

    @classmethod
    def _from_record(cls, folder: Path, body) -> Game:
        """Play on from a record: ``{"record": a game record (docs/records.md), "step": N (its
        first N steps are kept; default all), "seats": "human" or a bot spec each}``. The
        game, its options and seed are the record's; a new game with its own files and links."""
        unknown = set(body) - {"record", "step", "seats"}
        if unknown:
            raise GameError(
                "unknown field(s) {fields} beside record; allowed: record, step, seats",
                fields=", ".join(sorted(unknown)),
            )
        record = body["record"]
        if not isinstance(record, dict) or not isinstance(record.get("steps"), list):
            raise GameError(
                "record must be a game record (a JSON object with game, options, seed, steps; "
                "docs/records.md)"
            )
        n = len(record["steps"])
        step = _int(body.get("step", n), "step", 0, n)
        try:
            state = records.states(record)[
                step
            ]  # the whole record checked, not only its first steps
        except (records.RecordError, ValueError, TypeError) as e:
            raise GameError("the record does not replay: {why}", why=str(e)) from None
        if state.is_terminal():
            raise GameError(
                "the record's game is over at step {step}: choose a step in 0..{last}",
                step=step,
                last=n - 1,
            )
        seats = body.get("seats")
        players = state.game.num_players()
        if not isinstance(seats, list) or len(seats) != players:
            raise GameError(
                'seats must be a list of {n} entries ("human" or a bot spec), got {got}',
                n=players,
                got=json.dumps(seats)[:60],
            )
        for s, spec in enumerate(seats):
            if spec != HUMAN:
                _bot(spec, s)
        # the record's seed is the client's: the chance to come is drawn afresh
        return cls._start(folder, state, record["seed"], seats, fresh=True)

    @classmethod
    def load(cls, folder: Path, game_id: str, policy: limits.Policy | None = None) -> Game:
        """The game of ``ID.json`` and ``ID.seats.json`` at its last step (RecordError if
        either is malformed or the record does not replay; ``policy``: see ``within``)."""
        record = records.load(folder / f"{game_id}.json")
        if policy is not None:  # before the rules are made: Cuba's data folder is read then
            policy.check_options(record["game"], record.get("options") or {})
        seats = _read_json_file(folder / f"{game_id}.seats.json", "seats file", records.RecordError)
        if not (
            isinstance(seats, dict)
            and seats.get("format") == SEATS_FORMAT
            and isinstance(seats.get("seats"), list)
            and isinstance(seats.get("tokens"), list)
            and len(seats["seats"]) == len(seats["tokens"])
        ):
            raise records.RecordError(f"{game_id}.seats.json is not a {SEATS_FORMAT} file")
        state = records.replay(record)
        if len(seats["seats"]) != state.game.num_players():
            raise records.RecordError(
                f"{game_id}.seats.json names {len(seats['seats'])} seats for "
                f"a {state.game.num_players()}-player game"
            )
        # a restart draws the chance to come afresh: what the seed would draw next may have
        # been seen before an undo
        game = cls(folder, game_id, state, record["seed"], seats["seats"], seats["tokens"], True)
        return game.within(policy)

    @classmethod
    def from_store(
        cls, store: stores.Store, folder: Path, game_id: str, policy: limits.Policy | None = None
    ) -> Game | None:
        """The stored game at its last step, None if there is none (CorruptGame for rows the
        store does not write, RecordError for steps that do not replay: every step is checked
        as a record's; ``policy``: see ``within``)."""
        stored = store.load(game_id)
        if stored is None:
            return None
        meta = stored.meta
        if policy is not None:  # before the rules are made: Cuba's data folder is read then
            policy.check_options(meta.game, meta.options)
        state = records.replay(stored.record())
        if len(meta.seats) != state.game.num_players():
            raise stores.CorruptGame(
                f"game {game_id}: {len(meta.seats)} seats for a "
                f"{state.game.num_players()}-player game"
            )
        # a restart draws the chance to come afresh, as a game of the files (Game.load)
        game = cls(
            folder, game_id, state, meta.seed, list(meta.seats), list(meta.tokens), fresh=True
        )
        game.store, game._kept = store, stored.steps
        return game.within(policy)

    def within(self, policy: limits.Policy | None) -> Game:
        """This game (stored under another server's policy, or before there was one) under
        ``policy``, as a new game is: a seat whose bot the policy refuses (its kind, its model
        file, its budget) waits, saying why, when it is to act; the game's options were
        checked before it was made (GameError: it is not loaded). None: as it is."""
        if policy is not None:
            for s, bot in list(self.bots.items()):
                try:
                    policy.check_spec(self.seats[s], s)
                    policy.check_bot(bot, s)
                except GameError as e:
                    self.bots[s] = _Unavailable(str(self.seats[s])[:MAX_SPEC], str(e))
        return self

    def meta(self) -> stores.Meta:
        """What the store keeps of the game once: its rules, seed, seats, tokens, players."""
        return stores.Meta(
            self.name,
            self.rules.options(),
            self.seed,
            list(self.seats),
            list(self.tokens),
            list(self.players),
        )

    def status(self) -> stores.Status:
        """Where the game stands, as the store keeps it with each step."""
        st = self.state
        over = st.is_terminal()
        return stores.Status(
            len(self.steps),
            over,
            st.current_player(),
            self.bot_to_act() is not None,
            {"scores": st.scores(), "returns": st.returns()} if over else None,
        )

    def record(self) -> dict:
        # from the steps kept as they were played: no replay of the game at every save
        return records.record_of_steps(self.state, self.seed, list(self.steps), self.players)

    def finished_record(self) -> dict:
        """The record, once the game is over: before, its chance steps would show what the
        board hides (Port Royal's coins are cards face down)."""
        if not self.state.is_terminal():
            raise GameError(
                "the record is given when the game is over (step {step} now): "
                "it shows cards the board hides",
                409,
                step=self.step,
            )
        return self.record()

    def save(self, steps: list | None = None, status: stores.Status | None = None) -> None:
        """Store the steps not stored yet (``steps``, ``status``: those of a change made on the
        side, default the game's), committed before this returns: one transaction, which after
        an undo also drops the steps taken back (nothing is rewritten whole). A failure is a
        StoreError (an OSError) and leaves the stored game as it was."""
        if self.store is None:
            return  # a game made outside Games lives in memory only
        if steps is None:
            steps = self.steps
        if status is None:
            status = self.status()
        kept = self._kept
        if kept is None:  # a write whose outcome is not known: what is stored, read back
            stored = self.store.load(self.id)
            if stored is None:
                raise stores.StoreError(f"game {self.id} is not in the store")
            kept = stored.steps
        n = len(kept)
        first = n
        if steps[:n] != kept:  # an undo: from the first step that differs
            first = next(
                (k for k, (a, b) in enumerate(zip(kept, steps)) if a != b), min(n, len(steps))
            )
        try:
            self.store.append(self.id, first, steps[first:], status, n)
        except stores.StoreError:
            self._kept = None
            raise
        self._kept = list(steps)

    # --- the state and its log ---------------------------------------------------------------
    @property
    def step(self) -> int:
        """The step number: moves and chance outcomes so far (a move names the step it was
        chosen at, so a move chosen on an old board is refused)."""
        return len(self.state.history())

    def _reset(self, state, fresh: bool = True) -> None:
        """Continue from ``state`` (made from the seed): the log is rebuilt by replaying;
        ``fresh``: the chance to come is drawn from the OS's entropy (``fresh_rng``)."""
        self.state = self.rules.new_initial_state(seed=self.seed)
        self.log: list[str] = []
        self.steps: list[
            dict
        ] = []  # the record's step entries (action, name, player: -1 for chance)
        self.hidden: list[
            bool
        ] = []  # per step: it put a card face down (its name kept off the pages)
        # per step: (its round, counted from 0 as the replay's jumps count them (the board's
        # round_mark), the phase it was taken in, that round_mark): the grouped log
        self.where: list[tuple] = []
        self.previous = None  # the state before the last step
        self._ended: tuple = (None, None, {})  # (version, the states, {lang: why it ended})
        for action in state.history():
            self._apply(action)
        if fresh:
            self.state = fresh_rng(self.state)
        self._settle()

    def state_at(self, step: int):
        """The state after the first ``step`` steps."""
        state = self.rules.new_initial_state(seed=self.seed)
        for action in self.state.history()[:step]:
            state.apply_action(action)
        return state

    def _apply(self, action=None) -> None:
        """Play ``action`` (None: the chance outcome the state's RNG draws) and log it."""
        before, who = self.state.clone(), self.state.current_player()
        self.previous = before  # a board draws the last step from the two states
        if action is None:
            self.state.resolve_chance()
            action = self.state.history()[-1]
        else:
            self.state.apply_action(action)
        name = before.action_to_string(action)
        self.steps.append({"action": action, "name": name, "player": who})
        self.hidden.append(bool(getattr(self.board, "face_down", _never)(before)))
        d = before.to_dict()
        mark = self.board.round_mark(d)
        rnd = self.where[-1][0] + (mark != self.where[-1][2]) if self.where else 0
        self.where.append((rnd, d["phase"], mark))
        text = self.board.move_text(before, name)
        self.log.append(f"{len(self.log) + 1}. {self._mover(who)}: {text}")

    def log_groups(self) -> list:
        """The log's steps as the page groups them: by round (``n``, from 1, as the replay's
        jumps count them), then by the phase they were taken in; a chance step goes with the
        decision before it in its round (it drew what that move asked for): each entry is
        ``{"move": a decision's step or None (chance at a round's start), "chance": [its
        chance steps]}``."""
        out: list = []
        for k, (rnd, phase, _) in enumerate(self.where):
            if not out or out[-1]["round"] != rnd + 1:
                out.append({"round": rnd + 1, "phases": []})
            phases = out[-1]["phases"]
            chance = self.steps[k]["player"] < 0
            if chance and phases:
                phases[-1]["moves"][-1]["chance"].append(k)
                continue
            if not phases or phases[-1]["phase"] != phase:
                phases.append({"phase": phase, "moves": []})
            phases[-1]["moves"].append(
                {"move": None, "chance": [k]} if chance else {"move": k, "chance": []}
            )
        return out

    def _mover(self, who: int, tr=None) -> str:
        """Who took a step as the log says it: chance or the seat with its player."""
        if tr is None:
            return "chance" if who < 0 else f"seat {who} ({self.players[who]})"
        if who < 0:
            return tr.text("chance")
        return tr.msg("seat {i} ({name})", i=who, name=said(player_text(self.players[who]), tr))

    def secret_steps(self) -> dict:
        """{step: the seat who alone may read it}: the moves still secret now (Cuba's bids
        until every bid is in); the board's ``secret_steps``."""
        return getattr(self.board, "secret_steps", _no_secrets)(self.state, self.steps)

    def log_line(self, k: int, tr, secret=None) -> str:
        """Line ``k`` of the log in the language of ``tr`` (the English line's move, translated
        as the terminal does); ``secret``: the line of a move its reader may not see, which
        says who moved and not what."""
        if secret is not None:
            who = self.steps[k]["player"]
            return tr.msg(
                "{i}. {who}: {move}", i=k + 1, who=self._mover(who, tr), move=tr.text(secret)
            )
        line = self.log[k]
        if tr.lang == "en":
            return line
        who = self.steps[k]["player"]
        move = line[len(f"{k + 1}. {self._mover(who)}: ") :]
        return _log_line(tr, k + 1, self._mover(who, tr), move)

    def _settle(self) -> None:
        while self.state.is_chance_node():
            self._apply()

    def _made(self, change) -> tuple:
        """``change`` (a move, an undo) made on the side with the chance after it resolved:
        (the game's new parts, their status). The game stays as it was, its pages showing the
        stored position, until ``_install``."""
        kept: tuple = (self.state.clone(), list(self.log), list(self.steps), list(self.hidden))
        kept += (self.previous, list(self.where))
        try:
            change()
            self._settle()
            made = (self.state, self.log, self.steps, self.hidden, self.previous, self.where)
            return made, self.status()
        finally:
            self.state, self.log, self.steps, self.hidden, self.previous, self.where = kept

    def _saved(self, made: tuple, status: stores.Status) -> None:
        """Store a change made on the side; GameError (500) when it cannot be written, and
        then nothing was played."""
        try:
            self.save(made[2], status)
        except OSError as e:
            raise GameError(
                "cannot save the game's record: {why}; nothing was played",
                500,
                why=e.strerror or str(e),
            ) from None

    def _install(self, made: tuple) -> None:
        self.state, self.log, self.steps, self.hidden, self.previous, self.where = made
        self.hints.clear()
        self._tell()

    def _commit(self, change) -> None:
        """Make a change (a move, an undo), resolve chance and write the record, then tell the
        pages; a record that cannot be written leaves the game as it was."""
        made, status = self._made(change)
        self._saved(made, status)
        self._install(made)

    async def _commit_on_io(self, change) -> None:
        """``_commit`` with the write on the store's thread (``io``): the event loop serves the
        other games while it is committed. The caller holds ``lock``."""
        if self.io is None:
            self._commit(change)
            return
        made, status = self._made(change)
        await asyncio.get_running_loop().run_in_executor(self.io, self._saved, made, status)
        self._install(made)

    def _tell(self) -> None:
        """A new version for the pages, each told once however many changes came since."""
        self.version = max(self.version + 1, _now())
        for q in self.listeners:
            if q.empty():
                q.put_nowait(None)

    # --- requests ------------------------------------------------------------------------
    def seat_of(self, token) -> int:
        if not isinstance(token, str) or not token:
            raise GameError("give the seat's token (the secret part of the seat's link)", 403)
        for seat, mine in enumerate(self.tokens):
            if mine is not None and hmac.compare_digest(
                mine.encode(), token.encode("utf-8", "replace")
            ):
                return seat
        raise GameError("this token belongs to no seat of this game: use the seat's link", 403)

    def _check(self, body, fields: set) -> int:
        """The seat of a request ``{"token", "step", ...}`` made at the current step."""
        if not isinstance(body, dict):
            raise GameError(
                "the request must be a JSON object with {fields}", fields=", ".join(sorted(fields))
            )
        unknown = set(body) - fields
        if unknown or not fields <= set(body):
            raise GameError(
                "the request must hold exactly {fields}", fields=", ".join(sorted(fields))
            )
        seat = self.seat_of(body["token"])
        step = body["step"]
        if type(step) is not int:
            raise GameError(
                "step must be an integer (the step the request was made at), got {got}",
                got=json.dumps(step)[:40],
            )
        if step != self.step:
            raise GameError(
                "stale request: made at step {step}, the game is at step {now}; "
                "the board is updated",
                409,
                step=step,
                now=self.step,
            )
        return seat

    def _to_act(self, seat: int) -> None:
        if self.state.is_terminal():
            raise GameError("the game is over", 409)
        if self.state.current_player() != seat:
            p = self.state.current_player()
            raise GameError(
                "not your turn: seat {p} ({player}) is to act, you are seat {seat}",
                409,
                p=p,
                player=player_text(self.players[p]),
                seat=seat,
            )

    async def act(self, method: str, body) -> None:
        """A request that changes the game (``method``: "move", "undo"), checked at the
        position it finds once the changes before it are stored, its write off the loop."""
        async with self.lock:
            change = {"move": self._move, "undo": self._undo}[method](body)
            await self._commit_on_io(change)
            if method == "undo":
                self.problem = None

    def move(self, body) -> None:
        """``{"token", "step", "action"}``: the seat of the token plays ``action``."""
        self._commit(self._move(body))

    def _move(self, body):
        seat = self._check(body, {"token", "step", "action"})
        self._to_act(seat)
        action, legal = body["action"], self.state.legal_actions()
        if type(action) is not int or action not in legal:
            raise GameError(
                "action {action} is not a legal move here; the legal actions are {legal}",
                action=json.dumps(action)[:40],
                legal=", ".join(map(str, legal)),
            )
        return functools.partial(self._apply, action)

    def undo_target(self, seat: int):
        """The step of ``seat``'s previous decision, if only bots and chance moved since (an
        undo never takes back another person's move), else None."""
        for k in range(len(self.steps) - 1, -1, -1):
            who = self.steps[k]["player"]
            if who == seat:
                return k
            if who >= 0 and self.seats[who] == HUMAN:
                return None
        return None

    def undo(self, body) -> None:
        """``{"token", "step"}``: back to the seat's previous decision."""
        self._commit(self._undo(body))
        self.problem = None

    def _undo(self, body):
        seat = self._check(body, {"token", "step"})
        target = self.undo_target(seat)
        if target is None:
            raise GameError(
                "nothing to undo for seat {seat}: no decision of yours since which only "
                "bots and chance moved",
                409,
                seat=seat,
            )
        return lambda: self._reset(self.state_at(target))

    def hint_request(self, body):
        """``{"token", "step"}`` of the seat to act: the state to search, drawn from that
        seat's information set (``searched_state``: never the true state, whose hidden facts
        the search would read), seeded by the step."""
        seat = self._check(body, {"token", "step"})
        self._to_act(seat)
        return searched_state(self.state, seat, self.step)

    def bot_to_act(self):
        p = self.state.current_player()
        return p if p in self.bots and not self.state.is_terminal() else None

    def view(self, seats: list, lang_code: str = "en") -> dict:
        """What a page shows to the holder of the tokens of ``seats`` (a list, one entry per
        token given): the board, the moves when one of them is to act, the log; the moves'
        labels, the log, the problem and the game-over panel in ``lang_code``."""
        tr = lang.translator(self.name, lang.check(lang_code))
        st, to_act = self.state, self.state.current_player()
        secret = {k: seat for k, seat in self.secret_steps().items() if seat not in seats}
        mine = to_act in seats and not st.is_terminal()
        targets = self.board.move_targets(st) if mine else {}
        final = {"scores": st.scores(), "returns": st.returns()} if st.is_terminal() else None
        return {
            "id": self.id,
            "game": self.name,
            "options": self.rules.options(),
            # the seed predicts chance: it is shown when nothing is left to predict
            "seed": self.seed if st.is_terminal() else None,
            "players": self.players,
            "you": seats,
            "version": self.version,
            "step": self.step,
            "to_act": to_act,
            "over": st.is_terminal(),
            "thinking": self.bot_to_act() is not None and not self.problem,
            "snapshot": self._snapshot(st, self.step, seats),
            "previous": self._snapshot(self.previous, self.step - 1, seats) if self.step else None,
            "final": final,
            "moves": [
                {
                    "action": a,
                    "label": tr.move(self.board.choice_label(st, a, seat=to_act)),
                    "target": targets.get(a),
                }
                for a in st.legal_actions()
            ]
            if mine
            else [],
            "undo": {str(s): self.undo_target(s) for s in set(seats)},
            "log": [
                self.log_line(k, tr, self.board.SECRET_MOVE if k in secret else None)
                for k in range(len(self.log))
            ],
            "log_groups": self.log_groups(),
            "problem": said(self.problem, tr) if self.problem else None,
            "game_over": viewer.game_over(
                final,
                [said(player_text(p), tr) for p in self.players],
                tr,
                self.end_reason(tr) if final else None,
                self.board.TIEBREAK,
            ),
        }

    def end_reason(self, tr) -> str:
        """Why the finished game ended, in ``tr``'s language: the board's ``end_reason`` over
        the game's states, replayed once per version (a few ms, at the end only)."""
        if self._ended[0] != self.version:
            self._ended = (self.version, records.states(self.record()), {})
        _, states, said_in = self._ended
        if tr.lang not in said_in:
            said_in[tr.lang] = self.board.end_reason(states, tr)
        return said_in[tr.lang]

    def _snapshot(self, state, step: int, seats=()) -> dict:
        """The board after ``step`` steps as a live page of the holder of ``seats`` may see
        it: the last move's name hidden when it put a card face down (Port Royal's coins),
        what the board's ``hide`` keeps from those seats (Cuba's secret bids of others)."""
        snap = viewer.snapshot(state, self.name)
        if self.state.is_terminal():
            return snap
        if step > 0 and self.hidden[step - 1]:
            snap["last"] = self.board.FACE_DOWN_LAST
        hide = getattr(self.board, "hide", None)
        if hide is not None:
            hide(snap, state, seats)
        return snap

    def summary(self) -> dict:
        """The lobby's line for the game (no tokens)."""
        return {
            "id": self.id,
            "game": self.name,
            "options": self.rules.options(),
            "players": self.players,
            "step": self.step,
            "to_act": self.state.current_player(),
            "over": self.state.is_terminal(),
        }

    # --- the bots --------------------------------------------------------------------------
    def kick(self, delay: float, pool=None) -> None:
        """Start the bots' driver if a bot is to act and none runs; the bots' searches run on
        ``pool`` (a ``workers.Pool``; None: the default policy's shared one)."""
        if (
            self.bot_to_act() is not None
            and not self.problem
            and (self.task is None or self.task.done())
        ):
            if pool is None:
                pool = workers.shared()
            self.task = asyncio.get_running_loop().create_task(self._drive(delay, pool))

    async def _drive(self, delay: float, pool) -> None:
        """Bots move one by one, each after ``delay`` seconds (a person sees them move); a
        bot's search runs on the pool's workers on a clone. A move belongs to the position it
        was found for: it is played only if the game's ``version`` is still the one it was
        asked at (an undo and another move since, even to the same step count, drop it, and
        its search stops at its next slice). A bot that fails, or answers a move that is not
        legal, stops the bots with the game's ``problem`` said (an undo lets them go on);
        nothing a bot does ends the driver otherwise, and the game never shows a bot thinking
        that no driver runs."""
        seat = None
        try:
            while (seat := self.bot_to_act()) is not None and not self.problem:
                await asyncio.sleep(delay)
                if self.bot_to_act() != seat or self.problem:
                    continue
                bot, version = self.bots[seat], self.version  # bot_to_act() names bots only
                try:
                    # the bot searches what its seat knows, as a hint does (searched_state)
                    action = await pool.move(
                        self.id,
                        bot,
                        searched_state(self.state, seat, self.step),
                        stale=lambda v=version: self.version != v,
                    )
                except Exception as e:  # a bot's failure stops the game, not the server
                    log.exception("game %s: seat %d (%s) failed", self.id, seat, bot.name)
                    self._stop(self._failed(seat, e))
                    return
                if self.version != version or action is workers.STALE:
                    continue  # the position changed while the bot thought: its move is dropped
                if action not in self.state.legal_actions():
                    log.warning("game %s: seat %d (%s) chose %r", self.id, seat, bot.name, action)
                    self._stop(
                        Text(
                            "seat {seat} ({bot}) chose {action}, which is not a legal move here",
                            seat=seat,
                            bot=bot.name,
                            action=str(action)[:40],
                        )
                    )
                    return
                try:
                    async with self.lock:  # a person's change may be stored meanwhile
                        if self.version != version:
                            continue
                        await self._commit_on_io(functools.partial(self._apply, action))
                except GameError as e:  # the disk: the bot tries again after an undo
                    self._stop(e.text)
                    return
        except asyncio.CancelledError:
            raise
        except Exception as e:  # anything else: said, never a bot thinking for good
            log.exception("game %s: the bots' driver failed", self.id)
            self._stop(self._failed(seat, e))
        finally:
            pool.forget(self.bots.values())  # a waiting game holds no search tree

    def _failed(self, seat, e: Exception) -> Text:
        bot = self.bots.get(seat) if seat is not None else None
        name = bot.name if bot is not None else "bot"
        return Text(
            "seat {seat} ({bot}) failed: {why}",
            seat=seat,
            bot=name,
            why=(str(e) or type(e).__name__)[:300],
        )

    def _stop(self, problem: Text) -> None:
        """The bots wait (an undo lets them try again); the pages say why."""
        self.problem = problem
        self._tell()


def hint_said(found: dict, tr) -> dict:
    """A hint's answer with its moves' labels in the language of ``tr``."""
    return {**found, "moves": [{**m, "label": tr.move(m["label"])} for m in found["moves"]]}


def margin(state, seat: int, seed: int, games: int = MARGIN_PLAYOUTS) -> float:
    """``seat``'s mean score minus the best other seat's at the end of ``games`` random games
    from ``state`` (its score margin then, if the game is over): a figure that still ranks the
    moves when every win estimate is 0."""
    if state.is_terminal():
        scores = np.asarray([[s["total"] for s in state.scores()]], dtype=float)
    else:
        scores = np.asarray(caribsim.random_playouts(state, games, seed=seed).scores, dtype=float)
    others = np.delete(scores, seat, axis=1)
    return round(float(np.mean(scores[:, seat] - others.max(axis=1))), 2)


def hint(state, iterations: int, board) -> dict:
    """The search's view of the seat to act (runs in a thread): the most visited moves, in
    that order, with their visit share, the mover's mean win estimate after each and his
    expected score margin after each (``margin``)."""
    step = len(state.history())
    result = mcts.search(state, iterations=iterations, seed=step)
    shares = sorted(result.policy().items(), key=lambda kv: (-kv[1], kv[0]))[:HINT_MOVES]
    seat = state.current_player()
    return {
        "step": step,
        "iterations": result.iterations,
        "win": result.mean_reward[result.action],
        "moves": [
            {
                "action": a,
                "label": board.choice_label(state, a, seat=seat),
                "share": share,
                "win": result.mean_reward[a],
                "margin": margin(state.child(a), seat, step),
            }
            for a, share in shares
        ],
    }


class Games:
    """The games of a games folder, kept in its store (``<folder>/games.sqlite3``; docs/web.md,
    *Storage*) and loaded when first asked for. At most ``max_cached`` stay in memory, the
    least recently asked for leaving first, except a game whose bots' driver runs or that a
    page follows (pinned). A game's files of the server before the store (``ID.json`` +
    ``ID.seats.json``) are imported at the first start."""

    IMPORTED = "*"  # the store's note that the folder's files were imported

    def __init__(
        self,
        folder: str | os.PathLike[str],
        max_cached: int = 256,
        store: stores.Store | None = None,
        policy: limits.Policy | None = None,
    ) -> None:
        self.folder = Path(folder)
        # what a stored game may use, as a new one (Game.within); None: the default Policy()
        self.policy = limits.Policy() if policy is None else policy
        self.folder.mkdir(parents=True, exist_ok=True)
        self.store = stores.SQLiteStore(self.folder / stores.DB_NAME) if store is None else store
        self.max_cached = max(1, max_cached)
        # the store's calls the event loop makes run here, one at a time in the order asked
        # (``aget``, ``acreate``, ``alobby``, ``acount``, and ``Game.act``'s writes)
        self.io = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="caribsim-store")
        self._loading: dict[str, asyncio.Future] = {}  # game id -> its load on ``io``
        self.games: OrderedDict[str, Game] = OrderedDict()  # the cache, least recent first
        # every Game object alive (a request or a page may hold one the cache let go): one
        # object per game, so that no second copy of a game ever writes over the first
        self._live: weakref.WeakValueDictionary[str, Game] = weakref.WeakValueDictionary()
        self._import_files()

    def _import_files(self) -> None:
        """The folder's game files, each pair once (they stay; the store notes each file,
        imported or why not, and that the folder was done)."""
        done = self.store.imports()
        if self.IMPORTED in done:
            return
        count = 0
        for path in sorted(self.folder.glob("*.seats.json")):
            game_id = path.name.removesuffix(".seats.json")
            if not _ID.fullmatch(game_id) or path.name in done:
                continue
            try:
                # the checks of a record and a seats file, and the server's policy
                game = Game.load(self.folder, game_id, self.policy)
                self.store.create(game_id, game.meta(), game.steps, game.status(), source=path.name)
                count += 1
            except (ValueError, OSError) as e:  # one bad file does not stop the rest
                log.warning("game %s not imported: %s", game_id, e)
                self.store.note_import(path.name, f"not imported: {e}")
        self.store.note_import(self.IMPORTED, f"{count} games imported from the folder's files")
        if count:
            log.info("%d games imported from the files of %s", count, self.folder)

    def create(self, body) -> Game:
        """A new game (``Game.create``'s request), stored before this returns."""
        game = Game.create(self.folder, body)
        self._store_new(game)
        self._keep(game)
        return game

    async def acreate(self, body) -> Game:
        """``create`` with the store's write on ``io``; the game is made on the caller's
        thread (within ``prepared_bots``, whose bots it copies)."""
        game = Game.create(self.folder, body)
        await asyncio.get_running_loop().run_in_executor(self.io, self._store_new, game)
        self._keep(game)
        return game

    def _store_new(self, game: Game) -> None:
        try:
            self.store.create(game.id, game.meta(), game.steps, game.status())
        except stores.StoreError as e:
            raise GameError("cannot store the new game: {why}", 500, why=str(e)) from None
        game.store, game.io, game._kept = self.store, self.io, list(game.steps)

    def get(self, game_id: str) -> Game:
        """The game, from memory or loaded from the store (404: none; 500: it cannot be read,
        which the log says too; the other games go on)."""
        game = self._held(game_id)
        if game is None:
            game = self._load(game_id)
        self._keep(game)
        return game

    async def aget(self, game_id: str) -> Game:
        """``get`` with a load from the store on ``io`` (the replay of a long game too): one
        load however many requests ask for the game meanwhile."""
        game = self._held(game_id)
        if game is None:
            loading = self._loading.get(game_id)
            if loading is None:
                loop = asyncio.get_running_loop()
                loading = self._loading[game_id] = loop.run_in_executor(
                    self.io, self._load, game_id
                )
                loading.add_done_callback(lambda _f: self._loading.pop(game_id, None))
            loaded: Game = await asyncio.shield(loading)
            game = self._live.get(game_id) or loaded  # one object per game, whoever came first
        self._keep(game)
        return game

    def _held(self, game_id: str) -> Game | None:
        """The game if this process holds it (404 for an id no game can have)."""
        if not (isinstance(game_id, str) and _ID.fullmatch(game_id)):
            raise GameError("no game {id!r} on this server", 404, id=str(game_id)[:40])
        game = self.games.get(game_id)
        if game is not None:
            self.games.move_to_end(game_id)
            return game
        return self._live.get(game_id)  # let go by the cache but still held: the same object

    def _load(self, game_id: str) -> Game:
        try:
            game = Game.from_store(self.store, self.folder, game_id, self.policy)
        except (ValueError, TypeError, OSError) as e:  # RecordError, StoreError, a bad seat
            log.warning("game %s cannot be loaded: %s", game_id, e)
            raise GameError(
                "game {id} cannot be read from the store: {why}", 500, id=game_id, why=str(e)
            ) from None
        if game is None:
            raise GameError("no game {id!r} on this server", 404, id=game_id)
        game.io = self.io
        return game

    def _keep(self, game: Game) -> None:
        self.games[game.id] = game
        self._live[game.id] = game
        excess = len(self.games) - self.max_cached
        if excess > 0:
            for game_id in [k for k, g in self.games.items() if not _pinned(g)][:excess]:
                del self.games[game_id]

    def lobby(self, offset="0", limit="100") -> dict:
        """The lobby's lists, a page of each (``offset``, ``limit`` as the query gives them,
        text or int; limit at most ``store.MAX_LIST``): the unfinished and the finished games,
        newest first, and how many there are of each."""
        offset = _int(_query_int(offset), "offset", 0, 2**62)
        limit = _int(_query_int(limit), "limit", 1, stores.MAX_LIST)
        try:
            return {
                "games": self.store.list(False, offset, limit),
                "finished": self.store.list(True, offset, limit),
                "count": {"games": self.store.count(False), "finished": self.store.count(True)},
                "offset": offset,
                "limit": limit,
            }
        except stores.StoreError as e:
            raise GameError("cannot read the games: {why}", 500, why=str(e)) from None

    async def alobby(self, offset="0", limit="100") -> dict:
        """``lobby`` with its queries on ``io``."""
        return await asyncio.get_running_loop().run_in_executor(self.io, self.lobby, offset, limit)

    async def acount(self, over: bool) -> int:
        """The store's count of the unfinished (``over`` False) or finished games, on ``io``."""
        return await asyncio.get_running_loop().run_in_executor(self.io, self.store.count, over)

    def live_bot_games(self):
        """The unfinished games whose seat to act is a bot, loaded one by one as the caller
        goes on (a restarted server kicks each: its driver pins it in the cache); one that
        cannot be loaded is logged and skipped."""
        for game_id in self.store.bot_games():
            try:
                yield self.get(game_id)
            except GameError as e:
                log.warning("game %s not resumed: %s", game_id, e)

    def close(self) -> None:
        """Release the store (the server stops), after the writes asked for before."""
        self.io.shutdown(wait=True)
        self.store.close()


def _pinned(game: Game) -> bool:
    """A game the cache keeps: its bots' driver runs or a page follows it."""
    return (game.task is not None and not game.task.done()) or bool(game.listeners)


def _query_int(text):
    """A query's number as an int (``_int`` says what is wrong with anything else)."""
    if isinstance(text, str) and text.isascii() and text.isdigit() and len(text) <= 19:
        return int(text)
    return text
