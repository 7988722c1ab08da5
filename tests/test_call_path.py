"""The Python call path (docs/performance.md): apply_action after legal_actions checks the
listed moves' bits instead of listing them again, child(a) and clone() run in C. Whatever path
a call takes, it must accept exactly the legal moves, give the same position and raise the
same messages."""

from __future__ import annotations

import random

import numpy as np
import pytest

import caribsim

GAMES = [
    ("puerto_rico", {"players": 3}),
    ("puerto_rico", {"players": 4, "expansion": True}),
    ("port_royal", {"players": 3}),
    ("cuba", {"players": 3}),
]


def _positions(name, options, count=40, seed=3):
    game = caribsim.load_game(name, **options)
    rng, st, out = random.Random(seed), game.new_initial_state(seed=seed), []
    while len(out) < count and not st.is_terminal():
        if rng.random() < 0.3:
            out.append(st.clone())
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    return game, out


def _outcome(st, action):
    try:
        st.apply_action(action)
        return "ok", st.serialize()
    except ValueError as e:
        return "error", str(e)


@pytest.mark.parametrize("name,options", GAMES)
def test_listed_or_not_every_action_gives_the_same_result(name, options):
    game, positions = _positions(name, options)
    rng = random.Random(5)
    for st in positions:
        legal = st.legal_actions()
        for a in rng.sample(range(game.num_distinct_actions()), 25) + legal[:5]:
            listed = st.clone()
            assert listed.legal_actions() == legal  # the bits are set on this object
            unlisted = st.clone()  # a clone starts with none
            got, want = _outcome(listed, a), _outcome(unlisted, a)
            assert got == want, (a, got, want)
            assert (got[0] == "ok") == (a in legal)
            child = st.child(a) if a in legal else None
            if child is not None:
                assert child.serialize() == got[1] and child.history() == [*st.history(), a]


@pytest.mark.parametrize("name,options", GAMES)
def test_the_bits_of_one_position_do_not_serve_the_next(name, options):
    """List, apply, then try every action at the new position without listing it."""
    game, positions = _positions(name, options, count=15)
    for st in positions:
        listed_before = st.legal_actions()
        st.apply_action(listed_before[0])
        if st.is_terminal():
            continue
        fresh = caribsim.load_game(name, **options).deserialize_state(st.serialize())
        for a in range(game.num_distinct_actions()):
            assert _outcome(st.clone(), a)[0] == _outcome(fresh.clone(), a)[0]
        legal_now = set(fresh.legal_actions())
        for a in (a for a in listed_before if a not in legal_now):  # legal before the move, not now
            with pytest.raises(ValueError, match="is not legal"):
                st.apply_action(a)  # on the object whose bits were set


@pytest.mark.parametrize("name,options", GAMES)
def test_arguments_other_than_plain_ints_keep_their_messages(name, options):
    game, positions = _positions(name, options, count=3)
    st = positions[-1]
    a = st.legal_actions()[0]
    n = game.num_distinct_actions()
    assert st.child(np.int64(a)).serialize() == st.child(a).serialize()  # numpy ints are ints
    for bad, kind, text in (
        (True, TypeError, "action must be an int, got bool"),
        (1.0, TypeError, "action must be an int, got float"),
        ("1", TypeError, "action must be an int, got str"),
        (n, ValueError, f"action must be in 0..{n - 1}, got {n}"),
        (-1, ValueError, f"action must be in 0..{n - 1}, got -1"),
        (2**70, ValueError, f"action must be in 0..{n - 1}, got {2**70}"),
    ):
        before = st.serialize()
        st.legal_actions()
        for call in (st.apply_action, st.child):
            with pytest.raises(kind, match=text):
                call(bad)
        assert st.serialize() == before


def test_a_history_of_millions_of_moves_is_freed_without_a_deep_recursion():
    """The history is a chain of chunks of moves; freeing a chain of 3 million moves (a
    dict's history is taken as given) neither overflows the C stack nor leaks. Run in a subprocess: a
    recursion per move would crash it."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import gc, caribsim
        g = caribsim.load_game("puerto_rico", players=3)
        d = g.new_initial_state(seed=1).to_dict()
        d["history"] = [3] * 3_000_000
        st = g.state_from_dict(d)
        copy = st.clone()                     # clones share the chain
        del st
        assert len(copy.history()) == 3_000_000
        del copy
        gc.collect()
        print("ok")
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == "ok\n", (p.returncode, p.stderr[-2000:])


def test_history_moves_are_made_by_moves_only():
    from caribsim._game import Moves

    with pytest.raises(TypeError, match="made by the game state's moves"):
        Moves()
    st = caribsim.load_game("cuba", players=3).new_initial_state(seed=2)
    before = st.history()
    st.resolve_chance() if st.is_chance_node() else st.apply_action(st.legal_actions()[0])
    assert st.history()[:-1] == before and len(st.history()) == len(before) + 1


@pytest.mark.parametrize("name,options", GAMES)
def test_clones_that_go_on_from_one_position_keep_their_own_histories(name, options):
    """Clones share the history's chunks, and a move appends in place while nobody went on
    from the same position: states that branch anywhere (at a chunk's end, after it, one
    move before it), made by clone(), child(a) and copy, and moved in any order, each keep
    exactly their own moves, in history() and in to_dict()."""
    import copy

    game = caribsim.load_game(name, **options)
    rng = random.Random(11)
    root = game.new_initial_state(seed=4)
    states = [(root, root.history())]
    for step in range(3000):
        i = len(states) - 1 if rng.random() < 0.5 else rng.randrange(len(states))  # lines go deep
        st, hist = states[i]
        r = rng.random()
        if st.is_terminal():
            continue
        if r < 0.15:
            states.append(((st.clone(), copy.copy(st), copy.deepcopy(st))[step % 3], list(hist)))
        elif st.is_chance_node():
            hist.append(st.resolve_chance())
        else:
            a = rng.choice(st.legal_actions())
            if r < 0.3:
                states.append((st.child(a), [*hist, a]))
            else:
                st.apply_action(a)
                hist.append(a)
        if len(states) > 60:  # drop some, so chunks are freed as they go
            states.pop(rng.randrange(1, len(states)))
    lengths = sorted(len(h) for _, h in states)
    assert lengths[-1] > 100 and len(set(map(tuple, (h for _, h in states)))) > 10, lengths
    for st, hist in states:
        assert st.history() == hist
        assert st.to_dict()["history"] == hist
        assert game.state_from_dict(st.to_dict()).history() == hist
