"""``caribsim.simulate``: many whole games, random in C or driven by bots, on any backend.

    >>> import caribsim
    >>> r = caribsim.simulate("puerto_rico", 2000, players=4, seed=1, backend="local")
    >>> r.returns.shape
    (2000, 4)

Game ``g`` depends only on ``(seed, g)``: random playouts reseed game ``g`` from it in C,
bot games start from ``derive_seed(seed, g)``. So ``backend="local"``, ``"processes"`` and
``"ray"`` give identical per-game arrays, whatever the workers and the chunk size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import caribsim
from caribsim._common import _int_in
from caribsim._game import MAX_THREADS
from caribsim.scale import distributed

PLAYOUT_CHUNK_MIN = 500  # random playouts: a task's fixed cost is ~ms, a game ~50 us


@dataclass(frozen=True)
class SimulationResult:
    """Per-game outcomes of ``simulate`` and how the run went.

    returns: (n_games, players) float64, 1 for a win, shared wins split
    scores:  (n_games, players) int64, each seat's total VP
    lengths: (n_games,) int32, decisions per game (chance events not counted)
    seconds: wall time of the whole run (start-up of the backend excluded)
    """

    game: str
    options: dict
    n_games: int
    seed: int
    bots: list | None  # bot specs per seat, None for random playouts in C
    returns: np.ndarray
    scores: np.ndarray
    lengths: np.ndarray
    seconds: float
    backend: str
    workers: int
    chunks: int  # chunks run in this call
    resumed_chunks: int  # chunks loaded from the resume folder

    @property
    def decisions(self) -> int:
        return int(self.lengths.sum())

    @property
    def games_per_second(self) -> float:
        return self.n_games / self.seconds if self.seconds > 0 else float("inf")

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds if self.seconds > 0 else float("inf")

    def summary(self) -> dict:
        """The JSON-able summary the CLI prints."""
        n = self.n_games
        return {
            "game": self.game,
            "options": self.options,
            "players": self.returns.shape[1],
            "games": n,
            "seed": self.seed,
            "bots": self.bots,
            "backend": self.backend,
            "workers": self.workers,
            "chunks": self.chunks,
            "resumed_chunks": self.resumed_chunks,
            "seconds": self.seconds,
            "games_per_second": self.games_per_second,
            "decisions_per_second": self.decisions_per_second,
            "decisions": self.decisions,
            "mean_decisions_per_game": float(self.lengths.mean()),
            "mean_score": [float(x) for x in self.scores.mean(axis=0)],
            "win_rate": [float(x) for x in self.returns.mean(axis=0)],
        }


def _playout_chunk(spec: dict) -> dict:
    """Random playouts of games first .. first + count - 1, in C."""
    game = caribsim.load_game(spec["game"], **spec["options"])
    state = game.new_initial_state(seed=spec["seed"])
    r = caribsim.random_playouts(
        state, spec["count"], seed=spec["seed"], threads=spec["threads"], first_game=spec["first"]
    )
    return {"returns": r.returns, "scores": r.scores.astype(np.int64), "lengths": r.lengths}


def simulate(
    game,
    n_games: int = 1000,
    *,
    seed: int = 0,
    bots=None,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    chunk_size: int | None = None,
    resume=None,
    progress=None,
    threads: int = 1,
    retries: int = 3,
    save_games=None,
    **options,
) -> SimulationResult:
    """Play ``n_games`` whole games from the initial state and return every game's outcome.

    game:       a game name (``options`` go to ``load_game``, e.g. ``players=4``) or a loaded game.
    bots:       None for uniformly random playouts in C (fastest), or one bot per seat
                (specs like ``"mcts:200"`` or bot objects); seats stay fixed.
    backend:    ``"local"``, ``"processes"`` or ``"ray"`` (see caribsim.distributed).
    workers:    worker processes, or the CPUs of a local Ray instance (default: all CPUs).
    address:    Ray cluster address (``"auto"``, ``"ray://host:10001"``); None starts Ray locally.
    chunk_size: games per task (default: about four chunks per worker).
    resume:     a folder: finished chunks are written there and a rerun loads them.
    progress:   True for a progress line on stderr, or ``fn(done_games, total_games)``.
    threads:    C threads per task for random playouts (results do not depend on it).
    retries:    times a chunk is run again when its worker dies.
    save_games: a folder for every game's record (game_00000.json, ...); the games are then
                driven from Python (random bots unless ``bots`` is given).
    """
    from caribsim.scale import arena

    if isinstance(game, str):
        name, loaded = game, caribsim.load_game(game, **options)
    elif options:
        raise ValueError("game options are only accepted with a game name")
    else:
        found, loaded = getattr(type(game), "name", None), game
        if found not in caribsim.games():
            raise TypeError(
                f"game must be a game name ({', '.join(caribsim.games())}) or a loaded game, "
                f"got {type(game).__name__}"
            )
        name = found
    n_games = _int_in(n_games, "n_games", 1)
    seed = _int_in(seed, "seed", 0, 2**64 - 1)
    threads = _int_in(threads, "threads", 1, MAX_THREADS)
    distributed.check_backend(backend, workers, address, retries)
    players = loaded.num_players()
    game_options = loaded.options()
    if save_games is not None:
        import os

        bots = bots if bots is not None else ["random"] * players
        os.makedirs(save_games, exist_ok=True)
        save_games = os.fspath(save_games)
    specs_of_bots = None
    if bots is not None:
        bot_objects = arena.check_bots(loaded, [_bot(b) for b in bots])
        specs_of_bots = [
            b if isinstance(b, str) else arena.bot_label(o) for b, o in zip(bots, bot_objects)
        ]
    if chunk_size is None:
        chunk_size = distributed.default_chunk_size(
            n_games,
            distributed.worker_count(backend, workers, address),
            minimum=PLAYOUT_CHUNK_MIN if bots is None else 1,
        )
    chunk_size = _int_in(chunk_size, "chunk_size", 1)
    run = {
        "kind": "simulate",
        "game": name,
        "options": game_options,
        "n_games": n_games,
        "seed": seed,
        "bots": specs_of_bots,
        "chunk_size": chunk_size,
        "version": caribsim.__version__,
    }
    store = None if resume is None else distributed.ChunkStore(resume, run)
    base = {"game": name, "options": game_options, "seed": seed}
    extra: dict[str, Any]
    if bots is None:
        task = _playout_chunk
        extra = {"threads": threads}
    else:
        task = arena.match_chunk
        extra = {"bots": bot_objects, "rotate": False, "save_games": save_games}
    specs = [
        dict(base, chunk=c.index, first=c.first, count=c.count, **extra)
        for c in distributed.plan_chunks(n_games, chunk_size)
    ]
    results, info = distributed.run_chunks(
        task,
        specs,
        backend=backend,
        workers=workers,
        address=address,
        store=store,
        progress=progress,
        retries=retries,
    )
    merged = {k: np.concatenate([r[k] for r in results]) for k in ("returns", "scores", "lengths")}
    return SimulationResult(
        name,
        game_options,
        n_games,
        seed,
        specs_of_bots,
        merged["returns"],
        merged["scores"],
        merged["lengths"],
        info.seconds,
        info.backend,
        info.workers,
        info.chunks,
        info.resumed_chunks,
    )


def _bot(b):
    from caribsim.search import bots

    return bots.parse_bot(b) if isinstance(b, str) else b
