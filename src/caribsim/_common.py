"""Small pure-Python helpers shared by the game modules (input checks and the state-dict reader).

Used by the Puerto Rico, Port Royal and Cuba cores.
"""
from __future__ import annotations

import operator


def _int_in(value, what, lo, hi=None):
    """An int from Python (numpy ints too, not bool) in lo..hi (hi None: no upper bound),
    or a clear error."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, got bool")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, got {type(value).__name__}") from None
    if hi is None and v < lo:
        raise ValueError(f"{what} must be >= {lo}, got {v}")
    if hi is not None and not lo <= v <= hi:
        raise ValueError(f"{what} must be in {lo}..{hi}, got {v}")
    return v


def _check_options(given, opts):
    """state.options must equal the game's options key by key with the same types (1.0 or 1
    for True is refused, so a dict that round-trips is the one to_dict wrote)."""
    if (not isinstance(given, dict) or given.keys() != opts.keys()
            or any(type(given[k]) is not type(v) or given[k] != v for k, v in opts.items())):
        raise ValueError(f"state.options {given!r} do not match this game's {opts!r}")


def _seat_mask(v, n, what):
    """The bitmask of a list of distinct seats 0..n-1; a repeated seat is an error (not collapsed)."""
    if not isinstance(v, list) or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < n for x in v):
        raise ValueError(f"{what} must be a list of distinct seats 0..{n - 1}, got {v!r}")
    m = 0
    for x in v:
        if (m >> x) & 1:
            raise ValueError(f"{what} lists seat {x} twice; each may appear once")
        m |= 1 << x
    return m


class _Reader:
    """Reads a state dict with errors that name the field and what is allowed."""

    def __init__(self, d, path="state"):
        if not isinstance(d, dict):
            raise TypeError(f"{path} must be a dict, got {type(d).__name__}")
        self.d = d
        self.path = path
        self.used = set()

    def _get(self, key):
        if key not in self.d:
            raise ValueError(f"{self.path}: missing key {key!r}")
        self.used.add(key)
        return self.d[key]

    def int(self, key, lo, hi):
        v = self._get(key)
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{self.path}.{key} must be an int, got {type(v).__name__}")
        if not lo <= v <= hi:
            raise ValueError(f"{self.path}.{key} must be in {lo}..{hi}, got {v}")
        return v

    def bool(self, key):
        v = self._get(key)
        if not isinstance(v, bool):
            raise TypeError(f"{self.path}.{key} must be true or false, got {v!r}")
        return v

    def choice(self, key, names, allow_none=False):
        v = self._get(key)
        if v is None and allow_none:
            return -1
        if v not in names:
            extra = " or null" if allow_none else ""
            raise ValueError(f"{self.path}.{key} must be one of {list(names)}{extra}, got {v!r}")
        return list(names).index(v)

    def sub(self, key):
        return _Reader(self._get(key), f"{self.path}.{key}")

    def list(self, key):
        v = self._get(key)
        if not isinstance(v, list):
            raise TypeError(f"{self.path}.{key} must be a list, got {type(v).__name__}")
        return v

    def done(self):
        extra = set(self.d) - self.used
        if extra:
            raise ValueError(f"{self.path}: unknown keys {sorted(extra)}")
