"""Type stub of the compiled base class of every game state (pyx/caribsim/_game.pyx)."""

class GameState:
    """Base of the compiled state classes; carries the game's C interface for the search."""
