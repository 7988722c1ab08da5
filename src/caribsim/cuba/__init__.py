"""Cuba (2-5 players), its component data in CSV files a user may replace.

What lives here:

- ``game.py``: ``CubaGame``, the Game object: options and their checks, constants, the
  action space, loading of the component data;
- ``_core`` (compiled, ``pyx/caribsim/cuba/_core.pyx``): the C state struct and the nogil
  rules, chance, scoring, observation, random and heuristic playouts, the game's table
  of the C game interface;
- ``_state`` (compiled, ``pyx/caribsim/cuba/_state.pyx``): the Python state class over the
  struct: actions from Python, the dict codec and its validation, rendering.

May import: numpy and caribsim's shared modules (``caribsim._game``, ``caribsim._game_base``,
``caribsim._common``); never search, human, embed, scale or cli, which build on it.
"""

from caribsim.cuba.game import *  # noqa: F403  (the public names, see game.__all__)
from caribsim.cuba.game import __all__, _make_game  # noqa: F401  (_make_game: pickles name it here)
