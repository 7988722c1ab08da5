"""state_from_dict and deserialize_state of every game against mutated dicts of real states.

Each accepted dict must give a state that random play takes to the end, with every state on
the way accepted again (``state_from_dict(s.to_dict()) == s``); everything else must be a
clear ValueError or TypeError, and the dict passed in stays as it was. The properties run
in a child process with a timeout, so a crash or a hang fails the test instead of pytest.
``mutate`` and ``check_dict`` are shared with the coverage-guided harness
``tests/fuzz/atheris_state_dict.py``.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import caribsim

GAMES = ("puerto_rico", "port_royal", "cuba")
CONFIGS = {  # game -> (players, options) of the games the mutated dicts come from
    "puerto_rico": [(3, {}), (4, {"expansion": True}), (2, {"all_colonists_and_vp": True})],
    "port_royal": [(2, {}), (4, {"require_expedition": True, "start_player": 1})],
    "cuba": [
        (3, {}),
        (4, {"supply_limited": True, "pesos_limited": True}),
        (2, {"start_player": 1}),
    ],
}
MAX_STEPS = 20000  # far above any real game: a longer one counts as a hang


def states_of(name, players, seed, every=1, **opts):
    """The states of one seeded random game (every `every`-th step, the end included)."""
    game = caribsim.load_game(name, players=players, **opts)
    rng = random.Random(seed)
    s = game.new_initial_state(seed=seed)
    out, i = [], 0
    while not s.is_terminal():
        if i % every == 0:
            out.append(s.clone())
        i += 1
        if s.is_chance_node():
            s.resolve_chance()
        else:
            s.apply_action(rng.choice(s.legal_actions()))
    out.append(s)
    return game, out


_POOLS = {}


def pool(name):
    """(game, to_dict()) pairs of real states, made once per process: 8 spread over the games per
    phase, step and configuration, so rare steps (setup items, bids, refills) are as likely as
    common ones."""
    if name not in _POOLS:
        by_step = {}
        for players, opts in CONFIGS[name]:
            for seed in (1, 2, 3):
                game, states = states_of(name, players, seed, **opts)
                for s in states:
                    d = s.to_dict()
                    by_step.setdefault((players, d["phase"], d["step"]), []).append((game, d))
        _POOLS[name] = [
            g[i * len(g) // 8]
            for k in sorted(by_step, key=str)
            for g in [by_step[k]]
            for i in range(min(8, len(g)))
        ]
    return _POOLS[name]


# --- the mutations -------------------------------------------------------------------


def _scalars(d, out):
    if isinstance(d, dict):
        for k, v in d.items():
            out.add(k)
            _scalars(v, out)
    elif isinstance(d, list):
        for v in d:
            _scalars(v, out)
    elif d is None or isinstance(d, (str, int, float)):
        out.add(d)
    return out


_ODD = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    7,
    1.0,
    0.0,
    -0.0,
    0.5,
    2**31,
    -(2**31),
    2**64,
    2**70,
    "",
    "x",
    "0",
    "1",
    "\u0663",
    " 1",
    "1,1",
    "2, 3",
    [],
    [0],
    {},
    {"x": 1},
]


def _containers(d, path=()):
    """Every (path, container) in the dict, the dict itself first."""
    yield path, d
    items = d.items() if isinstance(d, dict) else enumerate(d)
    for k, v in items:
        if isinstance(v, (dict, list)):
            yield from _containers(v, (*path, k))


def mutate(d, choose):
    """Change d in place with 1-3 random edits; choose(n) gives an int 0..n-1 (hypothesis or
    atheris). Values become another type, out of range, a neighbour, another value of the dict;
    keys go or come; list items repeat, go or swap; lists swap places; values nest (shallow)."""
    names = sorted(_scalars(d, set()), key=repr)
    for _ in range(1 + (choose(3) == 0) + (choose(3) == 0)):  # mostly one edit: more are accepted
        conts = list(_containers(d))
        path, c = conts[choose(len(conts))]
        keys = list(c) if isinstance(c, dict) else list(range(len(c)))
        op = choose(10)
        if not keys:
            if isinstance(c, list):
                c.append(names[choose(len(names))])
            else:
                c["extra"] = 1
            continue
        k = keys[choose(len(keys))]
        v = c[k]
        if op == 0:
            c[k] = copy.deepcopy(_ODD[choose(len(_ODD))])
        elif op == 1:
            c[k] = names[choose(len(names))]
        elif op == 2 and isinstance(v, bool):
            c[k] = not v
        elif op <= 3 and isinstance(v, int) and not isinstance(v, bool):
            c[k] = v + (-2, -1, 1, 2, 100)[choose(5)]
        elif op == 4:
            if isinstance(c, dict):
                del c[k]
            else:
                c.pop(k)
        elif op == 5:
            if isinstance(c, dict):
                c[("extra", "x", "0", "boards")[choose(4)]] = names[choose(len(names))]
            else:
                c.insert(choose(len(c) + 1), copy.deepcopy(c[k]))  # a repeated item
        elif op == 6 and isinstance(c, list) and len(c) > 1:
            j = choose(len(c))
            c[k], c[j] = c[j], c[k]
        elif op == 7:
            others = [(p, x) for p, x in conts if type(x) is type(v) and p != (*path, k)]
            if others:  # a list / dict from elsewhere
                c[k] = copy.deepcopy(others[choose(len(others))][1])
        elif op == 8:
            c[k] = [v] if choose(2) else {"x": v}  # one level deeper
        else:
            c[k] = (
                copy.deepcopy(_ODD[choose(len(_ODD))]) if choose(2) else names[choose(len(names))]
            )
    return d


# --- the checks -------------------------------------------------------------------------


def play_to_the_end(game, s, seed=0):
    """Random play from s to the end; every state on the way must be accepted again."""
    rng = random.Random(seed)
    for _ in range(MAX_STEPS):
        d = s.to_dict()
        t = game.state_from_dict(d)
        assert t == s, f"state_from_dict(to_dict()) differs at step {d['step']!r}"
        if s.is_terminal():
            return
        if s.is_chance_node():
            s.resolve_chance()
        else:
            legal = s.legal_actions()
            assert legal, "a non-terminal decision without legal actions"
            s.apply_action(rng.choice(legal))
    raise AssertionError(f"no end after {MAX_STEPS} steps")


def check_dict(game, d):
    """A clear ValueError/TypeError leaving d unchanged, or a state that plays to the end."""
    before = copy.deepcopy(d)
    try:
        s = game.state_from_dict(d)
    except (ValueError, TypeError) as e:
        assert str(e), "an error without a message"
        assert d == before, "state_from_dict changed the dict it refused"
        return False
    assert d == before, "state_from_dict changed the dict"
    play_to_the_end(game, s)
    return True


def check_text(game, text):
    try:
        s = game.deserialize_state(text)
    except (ValueError, TypeError) as e:
        assert str(e), "an error without a message"
        return False
    play_to_the_end(game, s)
    return True


# --- the properties (run by the tests below in a child process) ------------------------------


def run_dict_property(name, examples):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    states = pool(name)
    accepted, ran = [0], [0]

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.randoms(use_true_random=False))  # uniform choices (integers() favours the ends)
    def prop(rnd):
        game, d = states[rnd.randrange(len(states))]
        d = copy.deepcopy(d)
        mutate(d, rnd.randrange)
        ran[0] += 1
        accepted[0] += check_dict(game, d)

    prop()
    print(f"{name}: {ran[0]} mutated dicts, {accepted[0]} accepted and played to the end")


def run_text_property(examples):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    texts = {
        name: [
            (g, json.dumps(d, separators=(",", ":"), sort_keys=True)) for g, d in pool(name)[::5]
        ]
        for name in GAMES
    }

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.sampled_from(GAMES), st.data())
    def prop(name, data):
        game, text = data.draw(st.sampled_from(texts[name]), label="text")
        how = data.draw(st.integers(0, 3), label="how")
        if how == 0:
            t = data.draw(st.binary(max_size=200))
        elif how == 1:
            t = data.draw(st.text(max_size=200))
        else:
            i = data.draw(st.integers(0, len(text)))
            j = data.draw(st.integers(i, min(len(text), i + 8)))
            ins = data.draw(
                st.sampled_from(
                    [
                        "",
                        "0",
                        "1",
                        "-",
                        ",",
                        '"',
                        "[",
                        "]",
                        "{",
                        "}",
                        "null",
                        "true",
                        "1.0",
                        "1e999",
                        "\u0663",
                        "\\u0000",
                        "9" * 30,
                    ]
                )
            )
            t = text[:i] + ins + text[j:]
            if how == 3:
                t = t.encode()
        check_text(game, t)

    prop()
    print(f"deserialize_state: {examples} texts")


def _child(code, timeout):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(caribsim.__file__).parent.parent), str(Path(__file__).parent)]
        ),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-6000:]}"
    return out.stdout


@pytest.mark.parametrize(
    "name, examples", [("puerto_rico", 2000), ("port_royal", 1500), ("cuba", 4000)]
)
def test_mutated_state_dicts_are_refused_clearly_or_play_to_the_end(name, examples):
    out = _child(
        f"import test_fuzz_state_dict as t; t.run_dict_property({name!r}, {examples})", timeout=300
    )
    assert f"{name}: {examples} mutated dicts" in out


def test_random_and_mutated_serializations_are_refused_clearly_or_play_to_the_end():
    out = _child("import test_fuzz_state_dict as t; t.run_text_property(1200)", timeout=300)
    assert "deserialize_state: 1200 texts" in out


def test_check_dict_finds_a_state_that_does_not_round_trip():
    """The property's check can fail: a state whose dict is refused on the way is reported."""
    game, states = states_of("cuba", 3, 1, every=40)
    s = states[2]

    class Loose:
        """state_from_dict that accepts once, then refuses: the re-acceptance must catch it."""

        def __init__(self):
            self.calls = 0

        def state_from_dict(self, d):
            self.calls += 1
            if self.calls > 1:
                raise ValueError("refused")
            return game.state_from_dict(d)

    with pytest.raises(ValueError, match="refused"):
        check_dict(Loose(), s.to_dict())


@pytest.mark.parametrize("name", GAMES)
def test_options_must_have_their_exact_types(name):
    game, states = states_of(name, 3, 1, every=50)
    d = states[1].to_dict()
    assert game.state_from_dict(d) == states[1]
    for key, value in d["options"].items():
        if isinstance(value, bool):
            for other in (int(value), float(value)):
                bad = copy.deepcopy(d)
                bad["options"][key] = other
                with pytest.raises(ValueError, match=r"state\.options .* do not match this game's"):
                    game.state_from_dict(bad)
    bad = copy.deepcopy(d)
    bad["options"]["players"] = 3.0
    with pytest.raises(ValueError, match=r"state\.options .* do not match this game's"):
        game.state_from_dict(bad)


def test_port_royal_taker_at_a_phase_2_chance_step_is_checked():
    """Found by the fuzz property: takers_done changed at a chance step of phase 2 was accepted,
    and the take-turn after the draw was refused (player != active + takers_done)."""
    game, states = states_of("port_royal", 4, 1)
    d = next(
        s.to_dict()
        for s in states
        if s.to_dict()["step"] == "chance" and s.to_dict()["phase"] == "trade"
    )
    assert game.state_from_dict(d).to_dict() == d
    d["takers_done"] = (d["takers_done"] + 1) % 4
    with pytest.raises(
        ValueError, match="phase 2: player must be the seat takers_done places after the active"
    ):
        game.state_from_dict(d)
    d = next(s.to_dict() for s in states if s.to_dict()["phase"] == "discover")
    d["takers_done"] = 1
    with pytest.raises(ValueError, match="takers_done must be 0 outside phase 2"):
        game.state_from_dict(d)


@pytest.mark.parametrize(
    "name, opts, path",
    [
        ("puerto_rico", {}, ("turn", "wharf_used")),
        ("puerto_rico", {"expansion": True}, ("expansion", "small_wharf_used")),
        ("cuba", {}, ("parliament", "tied")),
    ],
)
def test_repeated_seats_are_refused_not_collapsed(name, opts, path):
    game, states = states_of(name, 3, 1, every=60, **opts)
    d = states[1].to_dict()
    d[path[0]][path[1]] = [1, 1]
    what = ".".join(path)
    with pytest.raises(
        ValueError, match=rf"state\.{what} lists seat 1 twice; each may appear once"
    ):
        game.state_from_dict(d)


@pytest.mark.parametrize("step", ["small_wharf", "black_market", "library", "draft"])
def test_puerto_rico_base_game_refuses_expansion_steps(step):
    """Found by the fuzz suite: a base-game dict with an expansion step was accepted and then
    listed legal actions that apply_action refused (ids beyond the base game's)."""
    game, states = states_of("puerto_rico", 3, 1)
    d = next(s.to_dict() for s in states if s.to_dict()["step"] == "load")
    d["step"] = step
    with pytest.raises(
        ValueError, match=rf"state: step '{step}' is an expansion step; this game has no expansion"
    ):
        game.state_from_dict(d)


def test_puerto_rico_first_governor_is_seat_0_during_setup():
    """Found by the fuzz suite: governor 1 at a setup draw of the expansion was accepted, and the
    draft that followed was refused (it starts from the first Governor, seat 0)."""
    game, states = states_of("puerto_rico", 4, 1, expansion=True)
    d = next(s.to_dict() for s in states if s.to_dict()["phase"] == "setup")
    assert game.state_from_dict(d).to_dict() == d
    d["governor"] = 1
    with pytest.raises(
        ValueError, match=r"state\.governor must be 0 during setup \(the first Governor is seat 0\)"
    ):
        game.state_from_dict(d)
