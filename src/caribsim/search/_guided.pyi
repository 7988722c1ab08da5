"""Type stub of the compiled guided-search engine (pyx/caribsim/search/_guided.pyx);
use caribsim.search.guided."""

from typing import Any, Callable

import numpy as np

from caribsim._game import GameState
from caribsim.search._mlp import CompiledMLP

MAX_PLAYERS: int
NODE_BYTES: int
INTERIORS: dict[str, int]
MAX_LEAVES: int

def sequential_halving_schedule(m: int, n: int) -> list[int]: ...

class Engine:
    busy: bool
    temperature: float
    def __init__(
        self,
        state: GameState,
        evaluator: Callable[[np.ndarray, np.ndarray], Any] | object,
        simulations: int,
        leaves_per_tree: int,
        c_puct: float,
        fpu_reduction: float,
        dirichlet_alpha: float,
        dirichlet_fraction: float,
        temperature: float,
        gumbel: bool,
        interior: str,
        max_considered: int,
        gumbel_scale: float,
        c_visit: float,
        c_scale: float,
        rollouts: int,
        mix: float = 0.0,
        mix_rollouts: int = 1,
        network: CompiledMLP | None = None,
    ) -> None: ...
    @property
    def network(self) -> CompiledMLP | None: ...
    def set_network(self, network: CompiledMLP) -> None: ...
    def accepts(self, state: GameState) -> bool: ...
    def audit(self) -> dict[str, int]: ...
    @property
    def profile(self) -> dict[str, float]: ...
    @property
    def leaf_arrays(self) -> tuple[np.ndarray, np.ndarray] | None: ...
    def run(
        self, states: list[GameState], seeds: list[int]
    ) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, float, int]]: ...
