"""Small pure-Python helpers shared by the game modules (input checks, the state-dict reader
and the JSON reader of state texts, records and run files).

Used by the Puerto Rico, Port Royal and Cuba cores.
"""

from __future__ import annotations

import json
import math
import numbers
import operator
import os

# States, records and run files nest at most ~6 levels; a bound keeps every later walk of
# the data (repr, ==, json.dumps) far from the recursion limit.
JSON_MAX_DEPTH = 32
JSON_MAX_BYTES = 64 << 20  # a file read as JSON (a long game's record is ~100 kB); stops /dev/zero


def _counted(n, one: str, many: str) -> str:
    """``n`` and the noun in its number: "1 coin", "3 coins", "0 coins"."""
    return f"{n} {one if n == 1 else many}"


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


def _number(value, what, lo=0.0, hi=None, lo_open=False):
    """A finite float from Python (numpy numbers too, not bool) >= lo (> lo with lo_open) and
    <= hi (hi None: no upper bound), or a clear error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a number, got {type(value).__name__}")
    value = float(value)
    if not (
        math.isfinite(value)
        and (value > lo if lo_open else value >= lo)
        and (hi is None or value <= hi)
    ):
        bound = f"{'>' if lo_open else '>='} {lo}" + (f" and <= {hi}" if hi is not None else "")
        raise ValueError(f"{what} must be a finite number {bound}, got {value}")
    return value


def _check_options(given, opts):
    """state.options must equal the game's options key by key with the same types (1.0 or 1
    for True is refused, so a dict that round-trips is the one to_dict wrote)."""
    if (
        not isinstance(given, dict)
        or given.keys() != opts.keys()
        or any(type(given[k]) is not type(v) or given[k] != v for k, v in opts.items())
    ):
        raise ValueError(f"state.options {given!r} do not match this game's {opts!r}")


def _seat_mask(v, n, what):
    """The bitmask of a list of distinct seats 0..n-1; a repeated seat is an error (not collapsed)."""
    if not isinstance(v, list) or any(
        isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < n for x in v
    ):
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


def _json_depth_over(value, limit) -> bool:
    """Whether lists/dicts nest more than ``limit`` levels deep (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            if d > limit:
                return True
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return False


def _json_loads(text, what: str, error=ValueError):
    """``json.loads(text)`` with every failure an ``error`` whose message names ``what``
    (e.g. "state text" or "record 'game.json'"): bad JSON, bytes that are not UTF-8 and
    nesting deeper than JSON_MAX_DEPTH."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"{what} is not UTF-8 text (byte {e.start}: {e.reason})") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise error(f"{what} is nested too deeply (at most {JSON_MAX_DEPTH} levels)") from None
    except ValueError as e:
        raise error(f"{what} is not valid JSON: {e}") from None
    if _json_depth_over(value, JSON_MAX_DEPTH):
        raise error(f"{what} is nested too deeply (at most {JSON_MAX_DEPTH} levels)")
    return value


def _read_json_file(path, what: str, error=ValueError):
    """The JSON value in the file ``path`` (a str or path object); every failure (unreadable,
    too large, not UTF-8, not JSON, too deep) an ``error`` naming ``what`` and the file."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise TypeError(
            f"{what} path must be a str or path object, got {type(path).__name__}"
        ) from None
    try:
        with open(path, "rb") as f:
            data = f.read(JSON_MAX_BYTES + 1)
    except OSError as e:
        raise error(f"cannot read {what} {path!r}: {e.strerror or e}") from None
    except ValueError as e:  # e.g. an embedded NUL in the path
        raise error(f"cannot read {what} {path!r}: {e}") from None
    if len(data) > JSON_MAX_BYTES:
        raise error(f"{what} {path!r} is larger than {JSON_MAX_BYTES >> 20} MiB")
    return _json_loads(data, f"{what} {path!r}", error)
