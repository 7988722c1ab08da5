"""Tournaments: a pool of more bots than seats, seatings on a schedule, ratings.

    >>> from caribsim.scale import tournament
    >>> result = tournament.play_tournament("cuba", ["greedy", "random", "random"], n_games=6,
    ...                                     players=2)
    >>> [b.name for b in result.leaderboard()][0]
    'greedy'

Schedules (``seatings``: for each game, the pool bot in each seat)
    ``round-robin``  every combination of ``players`` bots out of the pool, each seated in
                     every rotation; ``n_games`` is a multiple of that cycle (combinations x
                     players games) and every bot plays every seat equally often.
    ``random``       rounds of ``len(pool)`` games over a shuffled pool: game j of a round
                     seats bots j, j+1, ... (cyclically) of the shuffled order, so a round
                     puts every bot in every seat once; a last, shorter round takes evenly
                     spaced games of a full one. Every bot then plays every seat equally
                     often and equally many games, within one.

Game ``g`` starts from ``derive_seed(seed, g)`` (as in ``arena``), and the seatings depend
only on the schedule, the pool size and the seed, so the results do not depend on the
backend (local, processes, Ray: ``distributed``).

Ratings: the games in order update an openskill Plackett-Luce model (extra ``rating``),
each game ranked by its returns, the seats that won nothing by total score (a shared win,
or an equal loss, is a tie). A bot has ``mu`` and ``sigma`` and the conservative ``ordinal = mu - 3 sigma``, the
lower end of its interval ``mu +- 3 sigma``; the leaderboard sorts by the ordinal. Pairwise:
in the games where both bots sat, the share that bot A finished above bot B (a tie counts
a half), with its 95% Wilson interval.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import sys
from dataclasses import asdict, dataclass, field

import numpy as np

import caribsim
from caribsim._common import _int_in
from caribsim.scale.arena import (
    _pyplot,
    bot_label,
    check_bot,
    derive_seed,
    play_game,
    save_figure,
    wilson_interval,
)
from caribsim.search.bots import bot_names, parse_bot

SCHEDULES = ("round-robin", "random")
Z = 3.0  # sigmas below mu in the conservative ordinal
# the schedule's draws use indices above any game index, so they never repeat a game's seed
SCHEDULE_STREAM = 2**40

__all__ = [
    "SCHEDULES",
    "BotRating",
    "PairResult",
    "TournamentResult",
    "figure",
    "game_ranks",
    "pairwise",
    "play_tournament",
    "plot",
    "ratings",
    "seat_schedule",
]


# --------------------------------------------------------------------------------------
# seat schedules
# --------------------------------------------------------------------------------------
def round_robin_cycle(n_bots: int, players: int) -> list:
    """Every combination of ``players`` bots, each in every rotation: rotation r of the
    combination c seats c[(s + r) % players] in seat s."""
    return [
        tuple(c[(s + r) % players] for s in range(players))
        for c in itertools.combinations(range(n_bots), players)
        for r in range(players)
    ]


def random_seatings(n_bots: int, players: int, n_games: int, seed: int) -> list:
    """Balanced random seatings (see the module's docstring): rounds of ``n_bots`` games."""
    rounds, rest = divmod(n_games, n_bots)
    out = []
    for r in range(rounds + (rest > 0)):
        rng = random.Random(derive_seed(seed, SCHEDULE_STREAM + r))
        order = list(range(n_bots))
        rng.shuffle(order)
        cycle = [tuple(order[(j + s) % n_bots] for s in range(players)) for j in range(n_bots)]
        # evenly spaced games of a round cover every window of consecutive bots within one
        games = cycle if r < rounds else [cycle[i * n_bots // rest] for i in range(rest)]
        rng.shuffle(games)
        out += games
    return out


def seat_schedule(kind: str, n_bots: int, players: int, n_games: int, seed: int = 0) -> list:
    """The seatings of a tournament: one tuple per game, the pool index of each seat's bot.
    ValueError for an unknown schedule or a number of games the schedule cannot balance."""
    if kind not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {kind!r}")
    if n_bots < players:
        raise ValueError(
            f"a tournament needs at least as many bots as seats: {players} seats, "
            f"got {n_bots} bot{'s' if n_bots != 1 else ''}"
        )
    if kind == "round-robin":
        cycle = round_robin_cycle(n_bots, players)
        if n_games % len(cycle):
            raise ValueError(
                f"a round-robin of {n_bots} bots in {players} seats is {len(cycle)} games "
                f"({math.comb(n_bots, players)} combinations x {players} rotations): games "
                f"must be a multiple of {len(cycle)}, got {n_games}"
            )
        return cycle * (n_games // len(cycle))
    needed = -(-n_bots // players)
    if n_games < needed:
        raise ValueError(
            f"a random schedule of {n_bots} bots in {players} seats needs at least "
            f"{needed} games for every bot to play, got {n_games}"
        )
    return random_seatings(n_bots, players, n_games, seed)


# --------------------------------------------------------------------------------------
# rankings, ratings, pairwise shares
# --------------------------------------------------------------------------------------
def game_ranks(returns, scores) -> list:
    """Each seat's place (1 = first): by return (a share of the win), the seats that won
    nothing then by total score; equal seats share a place, as do a shared win's winners."""
    keys = [(r, 0 if r > 0 else s) for r, s in zip(returns, scores)]
    return [1 + sum(other > key for other in keys) for key in keys]


def _plackett_luce():
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        raise RuntimeError(
            "tournament ratings need openskill: pip install 'caribsim[rating]'"
        ) from None
    return PlackettLuce


def ratings(games, n_bots: int) -> list:
    """(mu, sigma) per pool bot after rating ``games`` in order with openskill's
    Plackett-Luce model (defaults mu 25, sigma 25/3). A game is a dict with ``seat_bot`` (the
    pool bot of each seat), ``returns`` and ``scores`` (per seat)."""
    model = _plackett_luce()()
    rated = [model.rating() for _ in range(n_bots)]
    for g in games:
        ranks = game_ranks(g["returns"], g["scores"])
        teams = model.rate([[rated[b]] for b in g["seat_bot"]], ranks=ranks)
        for b, team in zip(g["seat_bot"], teams):
            rated[b] = team[0]
    return [(float(r.mu), float(r.sigma)) for r in rated]


def pairwise(games, n_bots: int) -> tuple:
    """(games, above) as n_bots x n_bots lists: games[a][b] the games where both sat,
    above[a][b] those where a finished above b (a tie counts a half)."""
    met = [[0] * n_bots for _ in range(n_bots)]
    above = [[0.0] * n_bots for _ in range(n_bots)]
    for g in games:
        ranks = game_ranks(g["returns"], g["scores"])
        for (a, ra), (b, rb) in itertools.permutations(zip(g["seat_bot"], ranks), 2):
            met[a][b] += 1
            above[a][b] += 1.0 if ra < rb else 0.5 if ra == rb else 0.0
    return met, above


@dataclass
class BotRating:
    name: str
    rank: int  # place on the leaderboard (1 = highest ordinal)
    mu: float
    sigma: float
    ordinal: float  # mu - 3 sigma: the conservative rating the leaderboard sorts by
    interval: tuple  # (mu - 3 sigma, mu + 3 sigma)
    games: int
    wins: float  # sum of returns (a shared win counts its share)
    win_rate: float | None  # None for a bot that sat in no game
    ci95: tuple | None  # 95% Wilson interval of the win rate
    mean_score: float | None
    seat_games: list = field(default_factory=list)  # games played in each seat


@dataclass
class PairResult:
    a: str  # the higher on the leaderboard
    b: str
    games: int  # games where both sat
    share: float | None  # share of those games a finished above b (a tie: a half)
    ci95: tuple | None  # its 95% Wilson interval


@dataclass
class TournamentResult:
    game: str
    options: dict
    players: int
    schedule: str
    n_games: int
    seed: int
    bots: list  # BotRating per pool bot, in the pool's order
    pairs: list  # PairResult per pair of bots, in leaderboard order
    mean_length: float  # decisions per game
    seconds: float
    games: list = field(
        default_factory=list, repr=False
    )  # per game: seat_bot, returns, scores, ranks, length
    rating: dict = field(default_factory=lambda: {"model": "openskill PlackettLuce", "z": Z})
    backend: str = "local"
    workers: int = 1
    chunks: int = 0
    resumed_chunks: int = 0

    def leaderboard(self) -> list:
        """The BotRatings from the highest ordinal down."""
        return sorted(self.bots, key=lambda b: b.rank)

    def table(self) -> str:
        """The leaderboard and the pairwise shares as text."""
        return format_table(self)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())


def summarize(
    game: str,
    options: dict,
    names: list,
    seatings: list,
    rows: list,
    schedule: str,
    seed: int,
    info=None,
) -> TournamentResult:
    """The TournamentResult of played games: ``rows`` per game with returns and scores per
    seat and the length, ``seatings`` the pool bot of each seat, ``info`` where they ran
    (a ``distributed.RunInfo``)."""
    games = [
        {
            "seat_bot": list(s),
            "returns": r["returns"],
            "scores": r["scores"],
            "ranks": game_ranks(r["returns"], r["scores"]),
            "length": r["length"],
        }
        for s, r in zip(seatings, rows)
    ]
    n, players = len(names), len(seatings[0])
    rated = ratings(games, n)
    order = sorted(range(n), key=lambda b: (-(rated[b][0] - Z * rated[b][1]), b))
    bots = [
        _bot_rating(b, names[b], order.index(b) + 1, rated[b], games, players) for b in range(n)
    ]
    met, above = pairwise(games, n)
    pairs = []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            share = above[a][b] / met[a][b] if met[a][b] else None
            pairs.append(
                PairResult(
                    names[a],
                    names[b],
                    met[a][b],
                    share,
                    None if share is None else wilson_interval(share, met[a][b]),
                )
            )
    extra = (
        {}
        if info is None
        else {
            "backend": info.backend,
            "workers": info.workers,
            "chunks": info.chunks,
            "resumed_chunks": info.resumed_chunks,
        }
    )
    return TournamentResult(
        game,
        options,
        players,
        schedule,
        len(games),
        seed,
        bots,
        pairs,
        sum(g["length"] for g in games) / len(games),
        0.0 if info is None else info.seconds,
        games,
        **extra,
    )


def _bot_rating(
    b: int, name: str, rank: int, rating: tuple, games: list, players: int
) -> BotRating:
    """Pool bot ``b``'s rating and its figures over the games it sat in (None without one)."""
    mu, sigma = rating
    mine = [(g, g["seat_bot"].index(b)) for g in games if b in g["seat_bot"]]
    wins = sum(g["returns"][s] for g, s in mine)
    rate = wins / len(mine) if mine else None
    return BotRating(
        name,
        rank,
        mu,
        sigma,
        mu - Z * sigma,
        (mu - Z * sigma, mu + Z * sigma),
        len(mine),
        wins,
        rate,
        None if rate is None else wilson_interval(rate, len(mine)),
        sum(g["scores"][s] for g, s in mine) / len(mine) if mine else None,
        [sum(1 for _, s in mine if s == seat) for seat in range(players)],
    )


def format_table(result: TournamentResult) -> str:
    """The leaderboard (sorted by ordinal) and one line per pair of bots."""
    board = result.leaderboard()
    width = max(12, *(len(b.name) for b in board))
    lines = [
        f"  {'rank':>4}  {'bot':<{width}}  ordinal  {'mu +- 3 sigma':<17} {'games':>6}  win rate   "
        f"95% interval    mean score"
    ]
    for b in board:
        figures = (
            f"{b.win_rate:>8.3f}   [{b.ci95[0]:.3f}, {b.ci95[1]:.3f}]  {b.mean_score:>10.2f}"
            if b.games
            else f"{'-':>8}"
        )
        lines.append(
            f"  {b.rank:>4}  {b.name:<{width}}  {b.ordinal:>7.2f}  "
            f"[{b.interval[0]:>6.2f}, {b.interval[1]:>6.2f}] {b.games:>6}  {figures}"
        )
    lines.append(
        "  pairwise: the share of the games where both sat that the first finished above the second"
    )
    for p in result.pairs:
        pair = f"{p.a} > {p.b}"
        if p.share is None:
            lines.append(f"    {pair:<{2 * width + 3}}  never met")
        else:
            lines.append(
                f"    {pair:<{2 * width + 3}}  {p.share:.3f}  [{p.ci95[0]:.3f}, {p.ci95[1]:.3f}]  "
                f"over {p.games} game{'s' if p.games != 1 else ''}"
            )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# playing
# --------------------------------------------------------------------------------------
def tournament_chunk(spec: dict) -> dict:
    """Games first .. first + count - 1 of a tournament (a task of caribsim.distributed):
    game g seats pool bot ``seatings[g - first][s]`` in seat s and starts from
    derive_seed(seed, g). Arrays are per game and per seat."""
    game = caribsim.load_game(spec["game"], **spec["options"])
    pool, names, save_games = spec["bots"], spec["names"], spec["save_games"]
    rows = []
    for g, seating in zip(range(spec["first"], spec["first"] + spec["count"]), spec["seatings"]):
        path = None if save_games is None else f"{save_games}/game_{g:05d}.json"
        rows.append(
            play_game(
                game,
                [pool[b] for b in seating],
                derive_seed(spec["seed"], g),
                0,
                path,
                [names[b] for b in seating],
            )
        )
    return {
        "returns": np.array([r["returns"] for r in rows], dtype=np.float64),
        "scores": np.array([r["scores"] for r in rows], dtype=np.int64),
        "lengths": np.array([r["length"] for r in rows], dtype=np.int32),
    }


def _pool(game, bots) -> list:
    """The bots as objects (a spec string is parsed), each a distinct object that can play
    ``game`` (arena.check_bot)."""
    pool = [check_bot(game, parse_bot(b) if isinstance(b, str) else b) for b in bots]
    for i, b in enumerate(pool):
        for j in range(i):
            if pool[j] is b:
                raise ValueError(
                    f"bots {j} and {i} are the same object; give one object per pool entry "
                    f"(two of them can sit at one table)"
                )
    return pool


def play_tournament(
    game,
    bots,
    n_games: int,
    schedule: str = "round-robin",
    seed: int = 0,
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
) -> TournamentResult:
    """Play ``n_games`` games between seatings of the pool ``bots`` (bot objects or specs
    such as ``"mcts:300"``; more bots than seats) and rate them.

    game:       a game name (``players=N`` and other ``options`` for load_game) or a loaded game.
    schedule:   ``"round-robin"`` or ``"random"`` (the module's docstring).
    backend, workers, address, chunk_size, resume, retries, progress, save, save_games:
                as in ``arena.play_match``; results do not depend on the backend.
    RuntimeError when openskill is missing (checked before any game is played).
    """
    from caribsim.scale import distributed

    if isinstance(game, str):
        game = caribsim.load_game(game, **options)
    elif options:
        raise ValueError("game options are only accepted with a game name")
    pool = _pool(game, bots)
    n_games = _int_in(n_games, "n_games", 1)
    seed = _int_in(seed, "seed", 0, 2**64 - 1)
    seatings = seat_schedule(schedule, len(pool), game.num_players(), n_games, seed)
    if backend is None:
        backend = "processes" if workers else "local"
    distributed.check_backend(backend, workers, address, retries)
    _plackett_luce()  # after the arguments: a bad one is named even without it
    if progress is None:
        progress = n_games > 10 and sys.stderr.isatty()
    if save_games is not None:
        import os

        os.makedirs(save_games, exist_ok=True)
        save_games = str(save_games)
    name = type(game).name
    if chunk_size is None:
        chunk_size = distributed.default_chunk_size(
            n_games, distributed.worker_count(backend, workers, address), maximum=50
        )
    chunk_size = _int_in(chunk_size, "chunk_size", 1)
    names = bot_names(pool)
    run = {
        "kind": "tournament",
        "game": name,
        "options": game.options(),
        "n_games": n_games,
        "seed": seed,
        "schedule": schedule,
        "bots": [bot_label(b) for b in pool],
        "chunk_size": chunk_size,
        "version": caribsim.__version__,
    }
    store = None if resume is None else distributed.ChunkStore(resume, run)
    specs = [
        {
            "game": name,
            "options": game.options(),
            "seed": seed,
            "bots": pool,
            "names": names,
            "save_games": save_games,
            "seatings": seatings[c.first : c.first + c.count],
            "chunk": c.index,
            "first": c.first,
            "count": c.count,
        }
        for c in distributed.plan_chunks(n_games, chunk_size)
    ]
    chunks, info = distributed.run_chunks(
        tournament_chunk,
        specs,
        backend=backend,
        workers=workers,
        address=address,
        store=store,
        progress=progress,
        retries=retries,
    )
    rows = [
        {
            "returns": [float(x) for x in c["returns"][k]],
            "scores": [int(x) for x in c["scores"][k]],
            "length": int(c["lengths"][k]),
        }
        for c in chunks
        for k in range(len(c["lengths"]))
    ]
    result = summarize(name, game.options(), names, seatings, rows, schedule, seed, info)
    if save is not None:
        result.save(save)
    return result


def figure(result: TournamentResult):
    """The ratings as a chart: per bot (leaderboard order, top first) mu with an error bar
    of +- 3 sigma, the ordinal its left end (a matplotlib Figure; needs caribsim[plot])."""
    plt = _pyplot()
    board = result.leaderboard()
    mus = [b.mu for b in board]
    errors = [Z * b.sigma for b in board]
    fig, ax = plt.subplots(figsize=(6.5, 0.5 * len(board) + 1.5))
    ax.errorbar(mus, range(len(board)), xerr=errors, fmt="o", capsize=5, color="#4a7fb5")
    ax.set_yticks(range(len(board)), [b.name for b in board])
    ax.invert_yaxis()
    ax.set_xlabel("rating mu +- 3 sigma (the left end is the ordinal)")
    ax.set_title(
        f"{result.game}: {result.n_games} games, {result.players} seats, {result.schedule}"
    )
    fig.tight_layout()
    return fig


def plot(result: TournamentResult, path) -> None:
    """Write figure(result) to ``path`` (PNG, SVG, ... by its extension)."""
    save_figure(figure(result), path)
