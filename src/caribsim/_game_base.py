"""The base class of the Game classes (Puerto Rico, Port Royal, Cuba): what they all share.

Each game's class keeps its own options, constants and state factories; this class holds the
player-count check, the state decoders, equality, hashing, pickling and repr.
"""

from __future__ import annotations

import operator
import sys
from types import ModuleType

import numpy as np

from caribsim._common import _json_loads


class Game:
    """A game's parameters and its factory of states, over one compiled core.

    A subclass provides:
        name: the registry name (class attribute).
        _state: the game's compiled state module (class attribute), with ``state_from_dict(game, d)``.
        options(): the options as a dict of keyword arguments of the constructor; equality,
            the hash, the repr and pickles are built from it.
        new_initial_state(seed=0) and the game's constants (num_distinct_actions, ...).
    and, in its module, ``_make_game(options)`` returning ``Class(**options)``: pickles name
    that function, so they load in every version that has it.
    A subclass with more identity than its options (Cuba's data tables) extends ``_key()``.
    """

    name: str
    _state: ModuleType  # set by each subclass, a class attribute (see above)
    _players: int  # set by each subclass's __init__ (the checked player count)

    @staticmethod
    def _check_players(players) -> int:
        """The player count as an int 2..5, or the error every game gives."""
        if isinstance(players, bool):
            raise TypeError("players must be an int 2..5, got bool")
        try:
            players = operator.index(players)
        except TypeError:
            raise TypeError(f"players must be an int 2..5, got {type(players).__name__}") from None
        if not 2 <= players <= 5:
            raise ValueError(f"players must be 2..5, got {players}")
        return players

    @staticmethod
    def _action_key(name) -> str:
        """An action name as the lookup key: lower case, single spaces."""
        if not isinstance(name, str):
            raise TypeError(f"action name must be a str, got {type(name).__name__}")
        return " ".join(name.lower().split())

    def num_players(self) -> int:
        return self._players

    # --- observation bounds and the normalised view ---------------------------
    def _obs_tables(self):
        t = self.__dict__.get("_obs_cache")
        if t is None:
            from caribsim._obs import Normalizer, bounds

            low, high, cap = bounds(self.observation_layout())
            t = (
                low.astype(np.float32),
                high.astype(np.float32),
                cap.astype(np.float32),
                Normalizer(low, cap),
            )
            for a in t[:3]:
                a.setflags(write=False)
            self.__dict__["_obs_cache"] = t
        return t

    def observation_bounds(self):
        """``(low, high)``: float32 arrays of the observation's length, each entry's true
        minimum and maximum derived from the rules and the component data; ``high`` is
        ``inf`` where the rules set no finite maximum (see ``observation_caps``)."""
        low, high = self._obs_tables()[:2]
        return low, high

    def observation_caps(self):
        """Per entry the value the normalised view maps to 1: ``high`` where it is finite,
        else the documented cap (the normalised view clips above it)."""
        return self._obs_tables()[2]

    def normalize_observation(self, obs, out=None):
        """The normalised observation in [0, 1]: ``(x - low) / (high - low)`` per entry (the cap
        in place of an infinite ``high``, clipped at 1; constant entries give 0). ``obs`` is
        any float array ``[..., O]`` (one observation or a batch); returns float32."""
        return self._obs_tables()[3](obs, out=out)

    # --- states -------------------------------------------------------------
    def state_from_dict(self, d: dict):
        return self._state.state_from_dict(self, d)

    def deserialize_state(self, text: str):
        if not isinstance(text, (str, bytes)):
            raise TypeError(f"serialized state must be str or bytes, got {type(text).__name__}")
        return self._state.state_from_dict(self, _json_loads(text, "serialized state"))

    # --- identity -----------------------------------------------------------
    def _key(self):
        # lists (Puerto Rico's buildings) as tuples so the key hashes
        return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in self.options().items())

    def __eq__(self, other):
        return isinstance(other, type(self)) and other._key() == self._key()

    def __hash__(self):
        return hash(self._key())

    def __reduce__(self):
        return (sys.modules[type(self).__module__]._make_game, (self.options(),))

    def __repr__(self):
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{type(self).__name__}({opts})"
