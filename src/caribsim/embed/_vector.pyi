"""Type stubs for the compiled batch driver (pyx/caribsim/embed/_vector.pyx): ``VectorGame``
steps n games of any caribsim game through its C table (caribsim._game.GameVTable).
See docs/embedding.md."""

from typing import Any, NoReturn, SupportsIndex

import numpy as np
import numpy.typing as npt

def game_info(state: Any) -> dict[str, Any]:
    """The C table of a compiled state: name, state_size, num_actions,
    max_chance_outcomes, max_players, perfect_information."""

class VectorGame:
    """n games in one contiguous C array, stepped in batch without the GIL.

    ``game``: a game name (``**options`` go to ``caribsim.load_game``) or a loaded game.
    Between calls every game is at a decision node; finished games are reset at once.
    Returned arrays are read-only views of internal buffers (they cannot be made writable),
    overwritten by later calls. ``__init__`` runs once; one thread at a time (a call while
    another thread's call runs raises RuntimeError; docs/thread-safety.md)."""

    num_actions: int
    observation_size: int
    num_players: int
    game: Any
    name: str
    def __init__(
        self, game: Any, n: SupportsIndex = 1024, seed: SupportsIndex = 0, **options: Any
    ) -> None:
        """RuntimeError if the VectorGame is already initialised; a failure changes nothing."""
    @property
    def n(self) -> int: ...
    def __len__(self) -> int: ...
    def reset(self, seed: SupportsIndex | None = None, until: npt.ArrayLike | None = None) -> None:
        """Start every game afresh (episode counters to 0, finals cleared); ``seed`` replaces
        the seed; ``until`` (a seat or one per game): random legal moves until it is to act."""
    def legal_mask(self) -> npt.NDArray[np.uint8]:
        """(n, num_actions): 1 where the action is legal for the player to act."""
    def sample_legal(self) -> npt.NDArray[np.intp]:
        """(n,): a uniformly random legal action per game, drawn in C from each game's
        sampler generator (seeded from (seed, i, episode)); each call draws anew."""
    def observations(
        self, seat: npt.ArrayLike | None = None, normalized: bool = False
    ) -> npt.NDArray[np.float32]:
        """(n, observation_size): each game from its acting player's seat (None), from
        ``seat`` (an int) or from ``seat[i]`` in game i; ``normalized=True``: in [0, 1]
        (``game.normalize_observation``, a new array)."""
    def final_returns(self) -> npt.NDArray[np.float32]:
        """(n, players): returns of each slot's last finished episode (0 before any)."""
    def final_scores(self) -> npt.NDArray[np.float64]:
        """(n, players): scores each slot's last finished episode ended with (0 before any)."""
    def final_observations(
        self, seat: npt.ArrayLike, normalized: bool = False
    ) -> npt.NDArray[np.float32]:
        """(n, observation_size): the last finished episode's final position from ``seat``
        (an int or one per game); zeros for slots that have not finished one;
        ``normalized=True``: in [0, 1] as ``observations``."""
    def final_state(self, i: SupportsIndex) -> Any:
        """A copy of slot i's last final (terminal) position; ValueError before any."""
    def current_players(self) -> npt.NDArray[np.int32]:
        """(n,): the seat to act in each game."""
    def step(
        self,
        actions: npt.ArrayLike,
        until: npt.ArrayLike | None = None,
        until_next: npt.ArrayLike | None = None,
    ) -> None:
        """Apply one legal action per game (integers of shape (n,): any integer dtype,
        read-only or strided arrays, lists), resolve chance, record (``final_*``) and reset
        finished games; with ``until`` (a seat or one per game) then play random legal
        moves (as ``sample_legal``) until that seat is to act, or until ``until_next``'s seat
        once the game's episode has ended in this call. An illegal or out-of-range action
        raises ValueError naming the game index,
        a wrong dtype TypeError, a wrong shape ValueError; then no game is changed."""
    def rewards(self) -> npt.NDArray[np.float32]:
        """(n, players): returns of the games that ended at the last step, else 0."""
    def terminated(self) -> npt.NDArray[np.bool_]:
        """(n,): games that ended at the last step (already reset)."""
    def episode_lengths(self) -> npt.NDArray[np.int32]:
        """(n,): decisions of each slot's last finished game."""
    def episodes(self) -> npt.NDArray[np.uint64]:
        """(n,): finished games per slot since the last reset()."""
    def scores(self) -> npt.NDArray[np.float64]:
        """(n, players): each game's current score per seat (a new array)."""
    def get_state(self, i: SupportsIndex) -> Any:
        """A copy of game i as the game's Python state (its history is empty)."""
    def __reduce__(self) -> NoReturn:
        """Always raises TypeError: a VectorGame is not picklable."""
