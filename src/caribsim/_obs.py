"""Observation layouts, true bounds and the normalised view, shared by the games.

Each game describes its observation tensor as a list of ``Feature`` rows in the order the C
writer (``write_observation`` in the game's ``_core.pyx``) puts them: a name, a count of
entries, and per entry the true minimum, the true maximum and, where the rules give no
finite maximum (``high = inf``), the documented cap that the normalised view clips at.
The bounds are derived from the rules and the component data (never measured); the tests
check that random and adversarial games never leave them and that the layout has exactly
the writer's length.

Normalised view: ``(x - low) / (high - low)`` per entry, with ``cap`` in place of ``high``
where ``high`` is infinite, clipped to [0, 1] (only the capped entries can reach the clip);
entries with ``low == high`` (a feature that is constant in this game) map to 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

INF = float("inf")


@dataclass(frozen=True)
class Feature:
    name: str
    count: int
    low: object = 0.0  # scalar or a sequence of `count` values
    high: object = 1.0  # scalar or a sequence; inf: no finite bound in the rules
    cap: object = None  # with high = inf: the documented cap of the normalised view
    note: str = ""  # where the bound comes from (the docs' table shows it)

    def arrays(self):
        low = np.broadcast_to(np.asarray(self.low, np.float64), (self.count,)).copy()
        high = np.broadcast_to(np.asarray(self.high, np.float64), (self.count,)).copy()
        cap = (
            high.copy()
            if self.cap is None
            else np.broadcast_to(np.asarray(self.cap, np.float64), (self.count,)).copy()
        )
        cap = np.where(np.isfinite(high), high, cap)
        if not np.all(np.isfinite(cap)):
            raise ValueError(f"feature {self.name}: an infinite high needs a finite cap")
        if np.any(low > high) or np.any(cap < low):
            raise ValueError(f"feature {self.name}: low above high or cap")
        return low, high, cap


@dataclass(frozen=True)
class Block:
    """``features`` repeated ``repeat`` times (one block per seat, from the observer on); the
    blocks from ``present`` on are absent seats, written as zeros (low = high = 0)."""

    name: str
    repeat: int
    features: tuple
    present: int | None = None
    desc: str = "one block per seat, the observer first"

    @property
    def count(self):
        return self.repeat * self.stride

    @property
    def stride(self):
        return sum(f.count for f in self.features)

    def arrays(self):
        one = [f.arrays() for f in self.features]
        one = tuple(np.concatenate([p[i] for p in one]) for i in range(3))
        zero = np.zeros_like(one[0])
        present = self.repeat if self.present is None else self.present
        return tuple(
            np.concatenate([one[i]] * present + [zero] * (self.repeat - present)) for i in range(3)
        )


def bounds(layout):
    """(low, high, cap) float64 arrays over a layout."""
    parts = [f.arrays() for f in layout]
    if not parts:
        z = np.zeros(0)
        return z, z, z
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


class Normalizer:
    """``(x - low) / span`` clipped to [0, 1]; span = high - low, or cap - low where the high is
    infinite, and 1 where it is 0 (constant features map to 0). Works on any ``[..., O]``."""

    def __init__(self, low, cap):
        low = np.asarray(low, np.float64)
        span = np.asarray(cap, np.float64) - low
        self.offset = low.astype(np.float32)
        self.scale = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 0.0).astype(np.float32)

    def __call__(self, obs, out=None):
        obs = np.asarray(obs, dtype=np.float32)
        if obs.shape[-1:] != self.offset.shape:
            raise ValueError(
                f"observation must end with {self.offset.shape[0]} entries, got shape {obs.shape}"
            )
        res = np.subtract(obs, self.offset, out=out, dtype=np.float32)
        np.multiply(res, self.scale, out=res)
        return np.clip(res, 0.0, 1.0, out=res)


def _fmt(values):
    v = np.asarray(values, np.float64)
    lo, hi = v.min(), v.max()

    def one(x):
        return "inf" if x == INF else str(int(x)) if float(x).is_integer() else f"{x:g}"

    return one(lo) if lo == hi else f"{one(lo)}..{one(hi)}"


def _join(texts):
    return texts[0] if len(set(texts)) == 1 else "/".join(texts)


def _offset(offsets, ns):
    if len(set(offsets)) == 1:
        return str(offsets[0])
    a = (offsets[1] - offsets[0]) // (ns[1] - ns[0])
    b = offsets[0] - a * ns[0]
    if any(o != a * n + b for o, n in zip(offsets, ns)):
        raise ValueError("offsets are not linear in the player count")
    return f"{a}n+{b}" if b else f"{a}n"


def layout_table(games) -> str:
    """The observation layout of ``games`` (one game, or the same game for several player
    counts) as a Markdown table: offset (``an+b``: n = players), count, feature, low, high,
    cap (the normalisation cap of an entry with no finite high), note. Values that differ by
    player count are listed for each game, separated by ``/``; ``a..b``: the entries of the
    feature range over a..b."""
    games = games if isinstance(games, (list, tuple)) else [games]
    ns = [g.num_players() for g in games]
    layouts = [g.observation_layout() for g in games]
    rows = [
        "| offset | count | feature | low | high | cap | note |",
        "|---|---|---|---|---|---|---|",
    ]
    offs = [0] * len(games)
    for items in zip(*layouts):
        head = items[0]
        if isinstance(head, Block):
            present = [b.present for b in items]
            absent = (
                ""
                if all(p in (None, b.repeat) for p, b in zip(present, items))
                else "; the blocks of absent seats (from the n-th on) are zeros"
            )
            reps = _join([str(b.repeat) for b in items])
            rows.append(
                f"| {_offset(offs, ns)} | {reps} x {head.stride} | **{head.name}** | | | | "
                f"{head.desc}{absent} |"
            )
            j = 0
            for fs in zip(*[b.features for b in items]):
                rows.append(_row(f"+{j}", fs))
                j += fs[0].count
            offs = [o + b.repeat * b.stride for o, b in zip(offs, items)]
        else:
            rows.append(_row(_offset(offs, ns), items))
            offs = [o + f.count for o, f in zip(offs, items)]
    return "\n".join(rows)


def _row(offset, fs):
    lows, highs, caps = [], [], []
    for f in fs:
        low, high, cap = f.arrays()
        lows.append(_fmt(low))
        highs.append(_fmt(high))
        caps.append(_fmt(cap[~np.isfinite(high)]) if np.any(~np.isfinite(high)) else "")
    f = fs[0]
    return (
        f"| {offset} | {f.count} | {f.name} | {_join(lows)} | {_join(highs)} | "
        f"{_join(caps) if any(caps) else ''} | {f.note} |"
    )


def parse_table(text):
    """(offset, count, name) of the rows of a table made by ``layout_table`` in ``text``;
    a block row gives the count as ``(repeats, stride)`` (repeats as a str: "5" or "2/3/4/5")."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\| (\+?\d+(?:n\+\d+|n)?) \| ([\d/]+)(?: x (\d+))? \| ([^|]+?) \|", line)
        if m:
            count = (m.group(2), int(m.group(3))) if m.group(3) else int(m.group(2))
            out.append((m.group(1), count, m.group(4).strip("* ")))
    return out


# The configurations the docs' tables show (docs/puerto_rico.md, port_royal.md, cuba.md),
# one game per player count 2..5 (``layout_table`` of them): regenerate with
# `python docs/gen_observation_tables.py --write`.
DOC_TABLES = {
    "puerto_rico": ("docs/puerto_rico.md", {"expansion": True}),
    "port_royal": ("docs/port_royal.md", {}),
    "cuba": ("docs/cuba.md", {}),
}
TABLE_BEGIN = "<!-- observation table: generated by docs/gen_observation_tables.py -->"
TABLE_END = "<!-- end of observation table -->"
