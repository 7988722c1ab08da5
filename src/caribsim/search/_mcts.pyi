"""Type stub of the compiled MCTS engine (pyx/caribsim/search/_mcts.pyx); use caribsim.mcts."""

from caribsim._game import GameState

REWARD_MODES: dict[str, int]
ROLLOUT_MODES: dict[str, int]
MAX_THREADS: int
NODE_BYTES: int

def check_game_state(state: object) -> None: ...

class Forest:
    busy: bool
    def __init__(
        self,
        state: GameState,
        threads: int,
        c: float,
        reward: str,
        rollout: str,
        max_depth: int,
        seed: int,
    ) -> None: ...
    def accepts(self, state: GameState) -> bool: ...
    def search(
        self, state: GameState, iterations: int, seconds: float, reuse: bool
    ) -> tuple[int | None, dict[int, tuple[int, float]], int, int, float]: ...
