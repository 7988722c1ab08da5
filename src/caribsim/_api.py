"""The package-level entry points shared by every game."""

from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass

import numpy as np

CHANCE = -1
TERMINAL = -4


def _registry():
    from caribsim.cuba import CubaGame
    from caribsim.port_royal import PortRoyalGame
    from caribsim.puerto_rico import PuertoRicoGame

    return {"cuba": CubaGame, "port_royal": PortRoyalGame, "puerto_rico": PuertoRicoGame}


def games() -> list[str]:
    """Names of the games caribsim can load."""
    return sorted(_registry())


def load_game(name: str, **options):
    """Load a game by name with its options, e.g. ``load_game("puerto_rico", players=4)``."""
    if not isinstance(name, str):
        raise TypeError(f"game name must be a str, got {type(name).__name__}")
    reg = _registry()
    if name not in reg:
        raise ValueError(f"unknown game {name!r}; available: {sorted(reg)}")
    allowed = [p for p in inspect.signature(reg[name].__init__).parameters if p != "self"]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(
            f"{name}: unknown option{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))}; its options: {', '.join(allowed)}"
        )
    return reg[name](**options)


@dataclass(frozen=True)
class PlayoutResult:
    """Outcome of ``random_playouts``.

    returns:   (n_games, players) float64, each game's returns (1 for a win, shared wins split)
    scores:    (n_games, players) int32, each player's total VP
    lengths:   (n_games,) int32, decisions per game (chance events not counted)
    decisions: total decisions over all games
    seconds:   wall time of the C loop
    """

    returns: np.ndarray
    scores: np.ndarray
    lengths: np.ndarray
    decisions: int
    seconds: float

    @property
    def games_per_second(self) -> float:
        return len(self.lengths) / self.seconds if self.seconds > 0 else float("inf")

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds if self.seconds > 0 else float("inf")


def random_playouts(
    state, n_games: int, seed: int = 0, threads: int = 1, first_game: int = 0
) -> PlayoutResult:
    """Play ``n_games`` uniformly random games from ``state`` entirely in C, without the GIL.

    Game ``i`` draws its randomness from ``(seed, i)`` only, so results do not depend on
    ``threads``. Row ``k`` of the result is game ``first_game + k``: a run split into
    chunks (caribsim.simulate) plays exactly the games of one call. ``state`` itself is
    not changed.
    """
    for name, value in (
        ("n_games", n_games),
        ("seed", seed),
        ("threads", threads),
        ("first_game", first_game),
    ):
        try:
            operator.index(value)
        except TypeError:
            raise TypeError(f"{name} must be an int, got {type(value).__name__}") from None
        if isinstance(value, bool):
            raise TypeError(f"{name} must be an int, got bool")
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in 0..2**64-1, got {seed}")
    if not hasattr(state, "_random_playouts"):
        raise TypeError(f"state must be a caribsim game state, got {type(state).__name__}")
    returns, scores, lengths, seconds = state._random_playouts(n_games, seed, threads, first_game)
    return PlayoutResult(returns, scores, lengths, int(lengths.sum()), seconds)
