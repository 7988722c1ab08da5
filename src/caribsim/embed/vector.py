"""Vectorised batches of games stepped in C: ``caribsim.VectorGame``.

    >>> import numpy as np, caribsim
    >>> vg = caribsim.VectorGame("puerto_rico", n=1024, players=4, seed=0)
    >>> mask = vg.legal_mask()                  # (1024, 143) uint8
    >>> obs = vg.observations()                 # (1024, obs) float32
    >>> vg.step(vg.sample_legal())              # a uniformly random legal action per game, in C
    >>> vg.final_returns()[vg.terminated()]     # returns of the games that just ended (reset already)
    >>> vg.observations(seat=0)                 # every game from seat 0

Works for every game of ``caribsim.games()`` through the C game interface
(``caribsim._game.GameVTable``); see ``docs/embedding.md``. The returned arrays are
read-only views; one thread at a time per VectorGame (``docs/thread-safety.md``).
"""

from caribsim.embed._vector import VectorGame, game_info

__all__ = ["VectorGame", "game_info"]
