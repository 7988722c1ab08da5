"""caribsim: exact, fast simulation engines for Caribbean trading board games.

    >>> import caribsim
    >>> game = caribsim.load_game("puerto_rico", players=4)
    >>> state = game.new_initial_state(seed=7)
"""
from caribsim._api import CHANCE, TERMINAL, PlayoutResult, games, load_game, random_playouts
from caribsim.simulation import SimulationResult, simulate
from caribsim.vector import VectorGame

__version__ = "0.1.0"
__all__ = ["CHANCE", "TERMINAL", "PlayoutResult", "VectorGame", "games", "load_game", "random_playouts",
           "SimulationResult", "simulate",
           "__version__"]
