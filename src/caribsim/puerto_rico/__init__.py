"""Puerto Rico (2-5 players, the 2-player variant, the expansion "New buildings + forests").

What lives here:

- ``game.py``: ``PuertoRicoGame``, the Game object: options and their checks, constants, the
  action space, loading of the component data;
- ``_core`` (compiled, ``pyx/caribsim/puerto_rico/_core.pyx``): the C state struct and the nogil
  rules, chance, scoring, observation, random and heuristic playouts, the game's table
  of the C game interface;
- ``_state`` (compiled, ``pyx/caribsim/puerto_rico/_state.pyx``): the Python state class over the
  struct: actions from Python, the dict codec and its validation, rendering.

May import: numpy and caribsim's shared modules (``caribsim._game``, ``caribsim._game_base``,
``caribsim._common``); never search, human, embed, scale or cli, which build on it.
"""

from caribsim.puerto_rico.game import *  # noqa: F403  (the public names, see game.__all__)
from caribsim.puerto_rico.game import __all__, _make_game  # noqa: F401  (_make_game: pickles name it here)
