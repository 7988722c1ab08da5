"""What the clients of a server may ask for: the operator's policy (docs/web.md, "What
clients may ask for").

A lobby is anonymous, so everything a request names is checked here before anything is made
or opened: the bot kinds, each move's budget (simulations and seconds), the search threads,
the model files (only from the package's own models and the operator's ``--models-dir``
folders), the Cuba data folders (only the operator's), how often a client may create a game
and how many unfinished games the server holds.

    from caribsim.web.limits import Policy
    policy = Policy(max_simulations=5000, models_dirs=("/srv/models",))
    app = create_app("games", policy=policy)

A refusal is a ``GameError`` (400, 429 with ``retry_after``, 503) naming what is allowed.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import os
import threading
import time

KINDS = ("random", "greedy", "mcts", "puct", "gumbel", "alphazero", "az")
GUIDED = ("puct", "gumbel", "alphazero")  # the kinds whose spec may name a model file
# the folder of the shipped network (bots.SHIPPED_MODEL's): this module is light to import
# (``serve --help`` reads its defaults), the games and the bots are imported when used
PACKAGE_MODELS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "models")
MAX_CLIENTS = 10_000  # clients the rate limiter remembers (the oldest is forgotten first)
_SHOWN_MODELS = 20  # model names a refusal lists


def default_workers() -> int:
    """The bots' worker threads by default: the machine's cores, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


def _folder(path: str) -> str:
    return os.path.normpath(os.path.abspath(os.fspath(path)))


def _within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (both normalised; no file is looked at)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _playable(path: str, real_folder: str) -> bool:
    """Whether ``path`` (inside a model folder) is a regular file that stays inside it once
    its links are followed; nothing is opened."""
    real = os.path.realpath(path)
    return _within(real, real_folder) and ":" not in real and os.path.isfile(real)


@dataclasses.dataclass(frozen=True)
class Policy:
    """The operator's limits on what a request may ask for (every field has a safe default).

    bots:                   the bot kinds a seat may name (``KINDS``: all of them by default).
    max_simulations:        an MCTS move's iterations at most (its spec's ``mcts:N``; a spec
                            of seconds only stops there too).
    max_guided_simulations: a guided search's (puct, gumbel, alphazero, az) cost at most:
                            simulations x playouts per leaf (``rollouts``; ``mix`` adds
                            ``mix_rollouts`` per simulation). A guided search runs whole on a
                            worker (it cannot be cut into slices), so this is kept small.
    max_seconds:            a move's wall-clock seconds at most, counted from when the move
                            is asked: a spec's ``seconds=`` may not be more, and every MCTS
                            move stops there (with fewer simulations when the server is busy).
    max_threads:            an MCTS spec's ``threads=`` at most.
    models_dirs:            the operator's folders of model files (``model=NAME.npz``); the
                            package's own (``PACKAGE_MODELS``) is always allowed.
    cuba_data_dirs:         the folders a Cuba game's ``data`` option may name (a record's
                            options); none by default (the shipped data only).
    max_games:              the unfinished games the server holds at most; a create past it
                            is refused (503) until games end.
    creates_per_minute:     creates per client (address) and minute; a burst of as many is
                            allowed, then 429 with Retry-After.
    workers:                the threads that run the bots' searches and the hints, shared
                            fairly by the games (``default_workers()``).
    slice_seconds:          an MCTS search runs in slices of at most this long, the games'
                            slices in turn, so no game waits for another's whole search.
    """

    bots: tuple[str, ...] = KINDS
    max_simulations: int = 10_000
    max_guided_simulations: int = 1_000
    max_seconds: float = 5.0
    max_threads: int = 1
    models_dirs: tuple[str, ...] = ()
    cuba_data_dirs: tuple[str, ...] = ()
    max_games: int = 100
    creates_per_minute: int = 20
    workers: int = dataclasses.field(default_factory=default_workers)
    slice_seconds: float = 0.02

    def __post_init__(self):
        kinds = tuple(dict.fromkeys(str(k).strip().lower() for k in self.bots))
        unknown = [k for k in kinds if k not in KINDS]
        if unknown or not kinds:
            raise ValueError(
                f"bots must name some of {', '.join(KINDS)}, got {', '.join(unknown) or 'none'}"
            )
        object.__setattr__(self, "bots", kinds)
        for name, low, high in (
            ("max_simulations", 1, 2**40),
            ("max_guided_simulations", 1, 2**40),
            ("max_threads", 1, 256),
            ("max_games", 1, 10**6),
            ("creates_per_minute", 1, 10**6),
            ("workers", 1, 256),
        ):
            value = getattr(self, name)
            if type(value) is not int or not low <= value <= high:
                raise ValueError(f"{name} must be an integer in {low}..{high}, got {value!r}")
        for name, low, high in (("max_seconds", 0.001, 3600.0), ("slice_seconds", 0.001, 1.0)):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not (math.isfinite(value) and low <= value <= high)
            ):
                raise ValueError(
                    f"{name} must be a number of seconds in {low}..{high}, got {value!r}"
                )
            object.__setattr__(self, name, float(value))
        for name in ("models_dirs", "cuba_data_dirs"):
            value = getattr(self, name)
            if isinstance(value, (str, os.PathLike)):
                value = (value,)
            folders = tuple(dict.fromkeys(_folder(p) for p in value))
            for f in folders:
                if ":" in f:  # a bot spec is split at ':'
                    raise ValueError(f"{name}: a folder's path may not hold ':', got {f!r}")
            object.__setattr__(self, name, folders)

    # --- what the lobby is told -----------------------------------------------------------
    @property
    def model_folders(self) -> tuple[str, ...]:
        """The folders ``model=`` may name a file of: the package's own, then the operator's."""
        return tuple(dict.fromkeys((_folder(PACKAGE_MODELS), *self.models_dirs)))

    def models(self) -> list[str]:
        """The model files a spec may name (``NAME.npz``, relative to their folder)."""
        names: list[str] = []
        for folder in self.model_folders:
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            real = os.path.realpath(folder)
            names += [
                e.name
                for e in entries
                if e.name.endswith(".npz") and _playable(os.path.join(folder, e.name), real)
            ]
        return list(dict.fromkeys(names))

    def public(self) -> dict:
        """The limits as the lobby's listing gives them (no folder is named)."""
        return {
            "bots": list(self.bots),
            "max_simulations": self.max_simulations,
            "max_guided_simulations": self.max_guided_simulations,
            "max_seconds": self.max_seconds,
            "max_threads": self.max_threads,
            "models": self.models(),
            "max_games": self.max_games,
            "creates_per_minute": self.creates_per_minute,
        }

    # --- the checks -----------------------------------------------------------------------
    def check_create(self, body):
        """The body of ``POST /api/games`` with each seat's spec checked (``check_spec``: a
        model's name replaced by its file) and a record's options checked (``check_options``);
        GameError for what the policy refuses. A body of the wrong shape is returned as it is,
        for ``Game.create`` to say what is wrong. Nothing is opened here."""
        from caribsim.web.games import HUMAN

        if not isinstance(body, dict):
            return body
        seats = body.get("seats")
        if isinstance(seats, list):
            body = {
                **body,
                "seats": [
                    spec if spec == HUMAN else self.check_spec(spec, s)
                    for s, spec in enumerate(seats)
                ],
            }
        record = body.get("record")
        if isinstance(record, dict) and isinstance(record.get("options"), dict):
            self.check_options(record.get("game"), record["options"])
        if isinstance(body.get("options"), dict):
            self.check_options(body.get("game"), body["options"])
        return body

    def check_spec(self, spec, seat: int) -> str:
        """A seat's bot spec as the server builds it, checked before anything is made: its
        kind allowed, its model (``model=NAME``) one of the allowed files (the spec given
        back names that file's full path). The budgets are checked on the bot it makes
        (``check_bot``)."""
        from caribsim.web.games import MAX_SPEC, GameError, _spec_text

        _spec_text(spec, seat, MAX_SPEC)
        parts = spec.strip().split(":")
        kind = parts[0].lower()
        if kind not in KINDS:
            return spec  # parse_bot names the kinds
        if kind not in self.bots:
            raise GameError(
                "seat {seat}: {kind} bots are not allowed on this server; allowed: {kinds}",
                seat=seat,
                kind=kind,
                kinds=", ".join(self.bots),
            )
        if kind not in GUIDED:
            return spec
        out = []
        for part in parts:
            key, sep, value = part.partition("=")
            if sep and key == "model":
                part = "model=" + self._model(value, seat)
            out.append(part)
        return ":".join(out)

    def _model(self, name: str, seat: int) -> str:
        """The file of ``model=NAME``: a ``.npz`` file in one of the model folders (NAME
        relative to a folder, or a full path inside one), a regular file there (a link may not
        lead out of its folder). One message for every refusal, whatever is at the path: a
        request learns nothing of the server's files outside the model folders."""
        from caribsim.web.games import GameError

        refused = GameError(
            "seat {seat}: model {model!r} is not one of this server's models; allowed: "
            "{models} (model=NAME.npz)",
            seat=seat,
            model=name[:80],
            models=", ".join(self.models()[:_SHOWN_MODELS]) or "none",
        )
        if not name.endswith(".npz") or "\0" in name:
            raise refused
        folders = self.model_folders
        if os.path.isabs(name):
            path = os.path.normpath(name)
            candidates = [(path, f) for f in folders if _within(path, f)]
        else:
            relative = os.path.normpath(name)
            if relative == os.pardir or relative.startswith(os.pardir + os.sep):
                raise refused
            candidates = [(os.path.join(f, relative), f) for f in folders]
        for path, folder in candidates:  # each lexically inside an allowed folder
            if _playable(path, os.path.realpath(folder)):
                return os.path.realpath(path)
        raise refused

    def check_options(self, game, options: dict) -> None:
        """A game's options as a request (a lobby's, a record's) gives them: Cuba's ``data``
        (a folder the game reads) only one of ``cuba_data_dirs``. Nothing is opened."""
        from caribsim.web.games import GameError, Text

        data = options.get("data")
        if game != "cuba" or data is None:
            return
        allowed = self.cuba_data_dirs
        if not (isinstance(data, str) and "\0" not in data and _folder(data) in allowed):
            raise GameError(
                "cuba: the data folder {data} is not one this server allows; allowed: {allowed}",
                data=repr(data)[:80],
                allowed=", ".join(allowed) if allowed else Text("none"),
            )

    def check_bot(self, bot, seat: int) -> None:
        """A bot made from a client's spec, within the budgets (its parsed options)."""
        from caribsim.search import bots as bot_specs

        options = getattr(bot, "options", {})
        if isinstance(bot, bot_specs.MCTSBot):
            iterations = options.get("iterations")
            if iterations is not None and iterations > self.max_simulations:
                self._over(seat, bot, "iterations", iterations, self.max_simulations)
            seconds = options.get("seconds")
            if seconds is not None and seconds > self.max_seconds:
                self._over(seat, bot, "seconds", seconds, self.max_seconds)
            threads = options.get("threads", 1)
            if threads > self.max_threads:
                self._over(seat, bot, "threads", threads, self.max_threads)
        elif isinstance(bot, bot_specs.AlphaZeroBot):
            cost = guided_cost(bot)
            if cost > self.max_guided_simulations:
                self._over(seat, bot, "simulations x playouts", cost, self.max_guided_simulations)

    def _over(self, seat, bot, what, got, limit):
        from caribsim.web.games import GameError

        raise GameError(
            "seat {seat}: {bot} asks for {what} {got}; this server allows at most {limit} a "
            "move (bots: {kinds}; a move: at most {sims} MCTS iterations, {guided} guided "
            "simulations x playouts, {seconds} s, threads={threads})",
            seat=seat,
            bot=bot.name[:80],
            what=what,
            got=_number(got),
            limit=_number(limit),
            kinds=", ".join(self.bots),
            sims=self.max_simulations,
            guided=self.max_guided_simulations,
            seconds=_number(self.max_seconds),
            threads=self.max_threads,
        )

    def move_budget(self, bot) -> tuple[int, float]:
        """An MCTS bot's move as the server runs it: (iterations, wall-clock seconds), each
        the bot's own within the policy's."""
        options = getattr(bot, "options", {})
        iterations = min(options.get("iterations") or self.max_simulations, self.max_simulations)
        seconds = min(options.get("seconds") or self.max_seconds, self.max_seconds)
        return iterations, seconds


def guided_cost(bot) -> int:
    """A guided bot's playouts-or-evaluations a move: simulations x rollouts per leaf (a
    network counts one per simulation), plus simulations x mix_rollouts with ``mix``."""
    from caribsim.search import guided

    options = bot.options
    simulations = options["simulations"]
    evaluator = getattr(bot, "evaluator", None)
    per_leaf = evaluator.rollouts if isinstance(evaluator, guided.RolloutEvaluator) else 1
    if options.get("mix", 0) > 0:
        per_leaf += options.get("mix_rollouts", 1)
    return simulations * per_leaf


def _number(x) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return f"{x:g}" if isinstance(x, float) else str(x)


class RateLimiter:
    """Creates per client: a bucket of ``per_minute`` tokens refilled at ``per_minute`` a
    minute; ``take(client)`` is 0 when a token is there, else the seconds until one is. At
    most ``clients`` clients are remembered (the longest unseen forgotten first), so a flood
    of addresses keeps the memory bounded."""

    def __init__(self, per_minute: int, clients: int = MAX_CLIENTS, clock=time.monotonic):
        self.capacity, self.rate = float(per_minute), per_minute / 60.0
        self.clients, self.clock = clients, clock
        self._buckets: collections.OrderedDict[str, tuple[float, float]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        now = self.clock()
        with self._lock:
            tokens, then = self._buckets.pop(client, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - then) * self.rate)
            wait = 0.0
            if tokens >= 1:
                tokens -= 1
            else:
                wait = (1 - tokens) / self.rate
            self._buckets[client] = (tokens, now)
            while len(self._buckets) > self.clients:
                self._buckets.popitem(last=False)
        return wait

    def refuse(self, client: str) -> None:
        """GameError 429 (with ``retry_after``, whole seconds) when ``client`` has no token."""
        from caribsim.web.games import GameError

        wait = self.take(client)
        if wait > 0:
            e = GameError(
                "too many new games from this address: at most {n} a minute; try again in {s} s",
                429,
                n=int(self.capacity),
                s=math.ceil(wait),
            )
            e.retry_after = math.ceil(wait)  # type: ignore[attr-defined]
            raise e
