"""Type stub of the compiled base class of every game state (pyx/caribsim/_game.pyx)."""
import numpy as np

MAX_THREADS: int

class GameState:
    """Base of the compiled state classes; carries the game's C interface for the search."""
    def _random_playouts(self, n_games: int, seed: int, threads: int
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]: ...

def random_playouts(st: GameState, n_games: int, seed: int, threads: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]: ...
