"""caribsim: exact, fast simulation engines for Caribbean trading board games.

    >>> import caribsim
    >>> game = caribsim.load_game("puerto_rico", players=4)
    >>> state = game.new_initial_state(seed=7)

The tree (docs/architecture.md): ``puerto_rico/``, ``port_royal/``, ``cuba/`` hold one game
each (its Game class over its compiled core); ``search/`` the MCTS, bots and matches;
``human/`` terminal play, records and the replay viewer; ``embed/`` the Gymnasium,
PettingZoo and OpenSpiel adapters and VectorGame; ``scale/`` many games at once (local
processes, Ray, self-play data, tournaments); ``train/`` the AlphaZero-style training loop;
``web/`` browser play; ``cli/`` the command line. The modules at this level are shared by
all: the C game interface (``_game``), the Game base class (``_game_base``), the input checks
(``_common``), the game registry (``_api``) and the BLAS thread setting (``_blas``). Imports
run one way: a game needs only the shared modules; search, human, embed, scale, train, web
and cli build on the games.
"""

from caribsim import _aliases

_aliases.install()  # the module names before the layered tree (caribsim.mcts, ...) stay valid

from caribsim._api import CHANCE, TERMINAL, PlayoutResult, games, load_game, random_playouts  # noqa: E402
from caribsim.embed.vector import VectorGame  # noqa: E402
from caribsim.scale.simulation import SimulationResult, simulate  # noqa: E402

__version__ = "0.1.0"
__all__ = [
    "CHANCE",
    "TERMINAL",
    "PlayoutResult",
    "SimulationResult",
    "VectorGame",
    "__version__",
    "games",
    "load_game",
    "random_playouts",
    "simulate",
]


def __getattr__(name):
    return _aliases.attribute(name)
