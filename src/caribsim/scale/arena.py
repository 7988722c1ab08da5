"""Matches between bots: seat-rotated games, win rates with confidence intervals.

    >>> from caribsim import arena, bots
    >>> result = arena.play_match("puerto_rico", [bots.RandomBot(), bots.GreedyBot()], n_games=4)
    >>> len(result.bots)
    2

Game ``g`` uses seed ``derive_seed(seed, g)`` and seats rotated by ``g``: bot ``b`` sits
in seat ``(b + g) % players``. Bots are restarted with seeds derived the same way, so a
match gives the same games on 1 process or many.

A bot is named by its spec (``bots.bot_names``: ``mcts:300``, ``random #1``, ``random #2``
when a spec comes twice); the results, the JSON, the plot legend and the game records
all use that one name.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

import caribsim
from caribsim._common import _int_in
from caribsim.search.bots import bot_names

MASK64 = (1 << 64) - 1


def derive_seed(seed: int, *indices: int) -> int:
    """A 64-bit seed that depends only on ``seed`` and ``indices`` (splitmix64 chain)."""
    x = seed & MASK64
    for i in indices:
        x = (x + 0x9E3779B97F4A7C15 * (i + 1)) & MASK64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        x = z ^ (z >> 31)
    return x


def wilson_interval(p: float, n: int, z: float = 1.96) -> tuple:
    """95% Wilson score interval for a rate p observed over n games (sound at p = 0 or 1)."""
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # the interval contains p; clamp the rounding at p = 0 or 1
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


@dataclass
class BotResult:
    name: str
    games: int
    wins: float  # sum of returns (a shared win counts its share)
    win_rate: float
    ci95: tuple  # 95% Wilson score interval of the win rate
    mean_score: float
    seat_games: list = field(default_factory=list)  # games played in each seat
    seconds_per_move: float | None = (
        None  # mean wall time of its step() (its thinking) per decision
    )
    cpu_seconds_per_move: float | None = (
        None  # mean CPU time of the process during its step() per decision
    )


@dataclass
class MatchResult:
    game: str
    options: dict
    n_games: int
    seed: int
    bots: list  # BotResult per bot, in the order given
    mean_length: float  # decisions per game
    seconds: float
    games: list = field(
        default_factory=list, repr=False
    )  # per game: seats, returns, scores, length
    backend: str = "local"  # where the games ran (caribsim.distributed)
    workers: int = 1
    chunks: int = 0  # chunks run in this call
    resumed_chunks: int = 0  # chunks loaded from the resume folder

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())


# Puerto Rico and Port Royal have no bound on a game's length (a stalling player never ends
# them, docs/embedding.md "Game length"): a game of bots that has not ended after this many
# decisions is stopped with an error instead of running for ever. 20,000 is above Cuba's
# derived bound (8,846 for 5 players) and 25x the longest random or MCTS game seen.
MAX_DECISIONS = 20_000


def check_length(decisions: int, game, seed) -> None:
    """RuntimeError once a game of bots has run past MAX_DECISIONS decisions."""
    if decisions > MAX_DECISIONS:
        raise RuntimeError(
            f"the {game!r} game of seed {seed} has not ended after {MAX_DECISIONS:,} "
            f"decisions: the bots are stalling (Puerto Rico and Port Royal have no bound "
            f"on a game's length; an untrained or passing bot can play for ever)"
        )


def play_game(game, bots, seed: int, rotation: int = 0, record_path=None, names=None):
    """One game: bot ``b`` plays seat ``(b + rotation) % players``. Returns a dict with
    the seats, returns, total scores and number of decisions; ``record_path`` also writes
    the game record (caribsim.records), its players named by ``names`` (one per bot;
    default ``bots.bot_names(bots)``)."""
    n = game.num_players()
    seat_bot: list[int | None] = [None] * n  # every seat's bot (all set: one bot a seat)
    for b in range(len(bots)):
        seat_bot[(b + rotation) % n] = b
    for b, bot in enumerate(bots):
        bot.restart(derive_seed(seed, b))
    state = game.new_initial_state(seed=seed)
    decisions = 0
    think = [0.0] * len(bots)  # each bot's wall time in step(), and its decisions
    cpu = [0.0] * len(bots)  # the process's CPU time in each bot's step()
    moves = [0] * len(bots)
    while not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
            continue
        b = seat_bot[state.current_player()]
        start, start_cpu = time.perf_counter(), time.process_time()
        action = bots[b].step(state)
        think[b] += time.perf_counter() - start
        cpu[b] += time.process_time() - start_cpu
        moves[b] += 1
        state.apply_action(action)
        decisions += 1
        check_length(decisions, game, seed)
    scores = state.scores()
    totals = [s["total"] if isinstance(s, dict) else s for s in scores]
    returns = state.returns()
    if record_path is not None:
        from caribsim.human import records

        names = bot_names(bots) if names is None else names
        info = [names[b] for b in seat_bot]
        records.save(records.record_game(state, seed, info), record_path)
    return {
        "seat_bot": seat_bot,
        "returns": [returns[s] for s in range(n)],
        "scores": totals,
        "length": decisions,
        "think": think,
        "cpu": cpu,
        "moves": moves,
    }


def bot_label(bot) -> str:
    """What identifies a bot in a resumable run's ``run.json``: its Python form (repr) for a
    bot with options, else its name. Tables, JSON and records name bots by bot_names()."""
    return repr(bot) if hasattr(bot, "options") else getattr(bot, "name", type(bot).__name__)


def check_bot(game, bot):
    """``bot`` if it can play ``game``: it has step() and restart() (else TypeError), and its
    check_game, if it has one, accepts the game (a network trained for another game says so now)."""
    if not callable(getattr(bot, "step", None)) or not callable(getattr(bot, "restart", None)):
        raise TypeError(f"a bot needs step(state) and restart(seed) methods; got {bot!r}")
    check = getattr(bot, "check_game", None)
    if callable(check):
        check(game)
    return bot


def check_bots(game, bots) -> list:
    """The bots as a list, one per seat, each checked by check_bot."""
    bots = list(bots)
    if len(bots) != game.num_players():
        raise ValueError(f"{game!r} has {game.num_players()} seats; got {len(bots)} bots")
    return [check_bot(game, b) for b in bots]


def match_chunk(spec: dict) -> dict:
    """Games first .. first + count - 1 of a match (a task of caribsim.distributed).

    Game g starts from derive_seed(seed, g); with ``rotate`` bot b sits in seat (b + g) % n,
    else in seat b. Arrays are per game and per seat."""
    game = caribsim.load_game(spec["game"], **spec["options"])
    bots, seed, save_games = spec["bots"], spec["seed"], spec["save_games"]
    rows = []
    for g in range(spec["first"], spec["first"] + spec["count"]):
        path = None if save_games is None else f"{save_games}/game_{g:05d}.json"
        rows.append(
            play_game(
                game,
                bots,
                derive_seed(seed, g),
                g if spec["rotate"] else 0,
                path,
                spec.get("names"),
            )
        )
    return {
        "seat_bot": np.array([r["seat_bot"] for r in rows], dtype=np.int32),
        "returns": np.array([r["returns"] for r in rows], dtype=np.float64),
        "scores": np.array([r["scores"] for r in rows], dtype=np.int64),
        "lengths": np.array([r["length"] for r in rows], dtype=np.int32),
        "think": np.array([r["think"] for r in rows], dtype=np.float64),
        "cpu": np.array([r["cpu"] for r in rows], dtype=np.float64),
        "moves": np.array([r["moves"] for r in rows], dtype=np.int64),
    }


def play_match(
    game,
    bots,
    n_games: int,
    seed: int = 0,
    processes: int = 1,
    progress=None,
    save=None,
    save_games=None,
    *,
    backend: str | None = None,
    workers: int | None = None,
    address: str | None = None,
    chunk_size: int | None = None,
    resume=None,
    retries: int = 3,
    **options,
) -> MatchResult:
    """Play ``n_games`` seat-rotated games between ``bots`` (one per seat).

    game:       a game name (with ``options`` for load_game) or a loaded game.
    backend:    ``"local"``, ``"processes"`` or ``"ray"`` (caribsim.distributed); default
                ``"processes"`` when ``processes`` > 1, else ``"local"``. Results are identical.
    processes:  worker processes of the ``processes`` backend (``workers`` says the same).
    address:    a Ray cluster address; None starts a local Ray instance.
    chunk_size: games per task (default: about four chunks per worker).
    resume:     a folder: finished chunks are written there and a rerun loads them.
    progress:   a progress line on stderr (default: when stderr is a terminal and the match
                has more than 10 games), or ``fn(done_games, total_games)``.
    save:       a path to write the result as JSON.
    save_games: a folder to write every game's record (game_00000.json, ...); on a Ray
                cluster it must be a folder every node can write to.
    """
    from caribsim.scale import distributed

    if isinstance(game, str):
        game = caribsim.load_game(game, **options)
    elif options:
        raise ValueError("game options are only accepted with a game name")
    bots = check_bots(game, bots)
    n_games = _int_in(n_games, "n_games", 1)
    processes = _int_in(processes, "processes", 1)
    seed = _int_in(seed, "seed", 0, 2**64 - 1)
    if backend is None:
        backend = "processes" if processes > 1 or workers else "local"
    if workers is None and processes > 1:
        workers = processes
    distributed.check_backend(backend, workers, address, retries)
    if progress is None:
        progress = n_games > 10 and sys.stderr.isatty()
    if save_games is not None:
        import os

        os.makedirs(save_games, exist_ok=True)
        save_games = str(save_games)
    name = type(game).name if hasattr(type(game), "name") else str(game)
    if chunk_size is None:
        chunk_size = distributed.default_chunk_size(
            n_games, distributed.worker_count(backend, workers, address), maximum=50
        )
    chunk_size = _int_in(chunk_size, "chunk_size", 1)
    run = {
        "kind": "arena",
        "game": name,
        "options": game.options(),
        "n_games": n_games,
        "seed": seed,
        "bots": [bot_label(b) for b in bots],
        "chunk_size": chunk_size,
        "version": caribsim.__version__,
    }
    store = None if resume is None else distributed.ChunkStore(resume, run)
    names = bot_names(bots)
    specs = [
        {
            "game": name,
            "options": game.options(),
            "seed": seed,
            "bots": bots,
            "names": names,
            "rotate": True,
            "save_games": save_games,
            "chunk": c.index,
            "first": c.first,
            "count": c.count,
        }
        for c in distributed.plan_chunks(n_games, chunk_size)
    ]
    chunks, info = distributed.run_chunks(
        match_chunk,
        specs,
        backend=backend,
        workers=workers,
        address=address,
        store=store,
        progress=progress,
        retries=retries,
    )
    results: list[dict[str, Any]] = [
        {
            "seat_bot": [int(x) for x in c["seat_bot"][k]],
            "returns": [float(x) for x in c["returns"][k]],
            "scores": [int(x) for x in c["scores"][k]],
            "length": int(c["lengths"][k]),
        }
        for c in chunks
        for k in range(len(c["lengths"]))
    ]
    n = game.num_players()
    bot_results = []
    for b in range(len(bots)):
        wins = sum(r["returns"][r["seat_bot"].index(b)] for r in results)
        score = sum(r["scores"][r["seat_bot"].index(b)] for r in results) / n_games
        p = wins / n_games
        seat_games = [sum(1 for r in results if r["seat_bot"][s] == b) for s in range(n)]
        # thinking time: wall time, so it depends on the machine and its load (never in `games`)
        think = sum(float(c["think"][:, b].sum()) for c in chunks if "think" in c)
        moves = sum(int(c["moves"][:, b].sum()) for c in chunks if "moves" in c)
        # CPU time: what the bot costs, whatever else the machine runs (chunks saved before
        # it was measured have none: then None)
        cpu_known = all("cpu" in c for c in chunks)
        cpu = sum(float(c["cpu"][:, b].sum()) for c in chunks) if cpu_known else None
        bot_results.append(
            BotResult(
                names[b],
                n_games,
                wins,
                p,
                wilson_interval(p, n_games),
                score,
                seat_games,
                think / moves if moves else None,
                cpu / moves if moves and cpu is not None else None,
            )
        )
    result = MatchResult(
        name,
        game.options(),
        n_games,
        seed,
        bot_results,
        sum(r["length"] for r in results) / n_games,
        info.seconds,
        results,
        backend=info.backend,
        workers=info.workers,
        chunks=info.chunks,
        resumed_chunks=info.resumed_chunks,
    )
    if save is not None:
        result.save(save)
    return result


def _pyplot():
    """matplotlib's pyplot on the file-only Agg backend (else the caribsim[plot] message)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("plotting needs matplotlib: pip install 'caribsim[plot]'") from None
    return plt


def figure(result: MatchResult):
    """The win rates with their 95% intervals as a bar chart, one bar per bot named as in
    the results (a matplotlib Figure; needs caribsim[plot])."""
    plt = _pyplot()
    names = [b.name for b in result.bots]
    rates = [b.win_rate for b in result.bots]
    lo = [b.win_rate - b.ci95[0] for b in result.bots]
    hi = [b.ci95[1] - b.win_rate for b in result.bots]
    fig, ax = plt.subplots(figsize=(1.6 * len(names) + 2, 3.5))
    ax.bar(names, rates, yerr=[lo, hi], capsize=6, color="#4a7fb5")
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (95% interval)")
    ax.set_title(f"{result.game}: {result.n_games} games")
    fig.tight_layout()
    return fig


def save_figure(fig, path) -> None:
    """Write a matplotlib Figure to ``path`` (PNG, SVG, ... by its extension) and close it."""
    fig.savefig(path)
    _pyplot().close(fig)


def plot(result: MatchResult, path) -> None:
    """Write figure(result) to ``path`` (PNG, SVG, ... by its extension)."""
    save_figure(figure(result), path)
