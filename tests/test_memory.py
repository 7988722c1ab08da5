"""Memory: many random games (C playouts and Python-driven games with clone / to_dict / serialize /
pickle) must not grow the resident set size after warm-up. RSS is read from /proc/self/statm."""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import random
import sys

import pytest

import caribsim

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MB = 2**20
BOUND_MB = 8  # allowed growth after warm-up (allocator noise is ~0.5 MB)

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)"
)


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


GAMES = {n: caribsim.load_game("puerto_rico", players=n) for n in (2, 3, 4, 5)}


def exercise(game, s, rng):
    """Every allocating API call on one position."""
    c = s.clone()
    d = c.to_dict()
    t = game.state_from_dict(d)
    u = game.deserialize_state(t.serialize())
    v = pickle.loads(pickle.dumps(u))
    v.observation_tensor(0)
    v.legal_actions_mask()
    str(v)
    repr(v)
    v.history()
    v.scores()
    if not v.is_terminal():
        v.child(v.legal_actions()[0])
        if v.is_chance_node():
            v.chance_outcomes()
    for bad in (-1, None, "x"):  # error paths build messages: they must not leak either
        with contextlib.suppress(ValueError, TypeError):
            v.apply_action(bad)
    with contextlib.suppress(ValueError, TypeError):
        game.state_from_dict(dict(d, quarries=-1))


def play(game, s, rng, every=60):
    step = 0
    while not s.is_terminal():
        if s.is_chance_node():
            s.resolve_chance()
        else:
            s.apply_action(rng.choice(s.legal_actions()))
        step += 1
        if step % every == 0:
            exercise(game, s, rng)
    s.returns()
    exercise(game, s, rng)


def snapshots(count, seed):
    """Serialized positions from the second half of random games (to finish them cheaply later)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        n = (2, 3, 4, 5)[i % 4]
        game = GAMES[n]
        s = game.new_initial_state(seed=seed * 1000 + i)
        trace = []
        while not s.is_terminal():
            if s.is_chance_node():
                s.resolve_chance()
            else:
                s.apply_action(rng.choice(s.legal_actions()))
            if rng.random() < 0.02:
                trace.append(s.serialize())
        out.append((n, trace[len(trace) // 2 :] or [s.serialize()]))
    return out


def test_memory_does_not_grow():
    rng = random.Random(0)
    # warm-up: allocator pools, numpy buffers, interned strings, hypothesis-free code paths
    snaps = snapshots(120, seed=1)
    for n, trace in snaps[:40]:
        play(GAMES[n], GAMES[n].deserialize_state(trace[0]), rng)
    for n in GAMES:
        caribsim.random_playouts(GAMES[n].new_initial_state(seed=1), 4000, seed=1, threads=2)
    gc.collect()
    start = rss_bytes()

    # 200k C playouts (50k per player count, 2 threads)
    total = 0
    for n in GAMES:
        state = GAMES[n].new_initial_state(seed=n)
        for chunk in range(5):
            res = caribsim.random_playouts(state, 10_000, seed=chunk, threads=2)
            total += len(res.lengths)
            del res
    assert total == 200_000
    gc.collect()
    after_playouts = rss_bytes()

    # 2000 Python-driven games (finished from mid-game positions) with clone/to_dict/... on the way
    played = 0
    for i in range(2000):
        n, trace = snaps[i % len(snaps)]
        game = GAMES[n]
        s = game.deserialize_state(trace[rng.randrange(len(trace))])
        play(game, s, rng)
        played += 1
    assert played == 2000
    gc.collect()
    end = rss_bytes()
    grow_playouts = (after_playouts - start) / MB
    grow_total = (end - start) / MB
    print(
        f"RSS start {start / MB:.1f} MB, +{grow_playouts:.2f} MB after playouts, +{grow_total:.2f} MB at end",
        file=sys.stderr,
    )
    assert grow_playouts < BOUND_MB, f"RSS grew {grow_playouts:.1f} MB over 200k random_playouts"
    assert grow_total < BOUND_MB, (
        f"RSS grew {grow_total:.1f} MB over 200k playouts + 2000 Python games"
    )


def test_state_objects_are_freed():
    """Creating and dropping many states (with long histories) returns the memory."""
    game = GAMES[5]
    base = game.new_initial_state(seed=3)
    play(game, base, random.Random(3), every=10**9)  # a terminal state with a full history

    def churn():
        keep = [base.clone() for _ in range(5000)]
        keep += [pickle.loads(pickle.dumps(base)) for _ in range(200)]
        del keep

    for _ in range(5):  # warm-up: the allocator's pools reach their
        churn()  # working size (a leak keeps growing after)
    gc.collect()
    start = rss_bytes()
    for _ in range(10):  # 50k clones, 5k alive at a time
        churn()
    gc.collect()
    grow = (rss_bytes() - start) / MB
    assert grow < BOUND_MB, f"RSS grew {grow:.1f} MB creating and dropping states"
