"""API and bad-input tests for Puerto Rico: every bad input raises a clear ValueError/TypeError
and leaves the state unchanged; the dict codec rejects malformed data; action names round-trip."""

from __future__ import annotations

import copy
import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import caribsim

PLAYER_COUNTS = (2, 3, 4, 5)
BAD = (ValueError, TypeError)


def game_of(n):
    return caribsim.load_game("puerto_rico", players=n)


def advance(state, rng, steps):
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


def snapshots(n, seed=1, every=0.04):
    """(game, state) pairs of one random game, spread over all phases, plus the terminal state."""
    game = game_of(n)
    rng = random.Random(seed)
    s = game.new_initial_state(seed=seed)
    out = [s.clone()]
    while not s.is_terminal():
        advance(s, rng, 1)
        if rng.random() < every:
            out.append(s.clone())
    out.append(s.clone())
    return game, out


def decision_state(n=4, seed=3, steps=40):
    game = game_of(n)
    s = advance(game.new_initial_state(seed=seed), random.Random(seed), steps)
    while s.is_chance_node():
        s.resolve_chance()
    return game, s


def terminal_state(n=3, seed=2):
    game = game_of(n)
    s = game.new_initial_state(seed=seed)
    advance(s, random.Random(seed), 100000)
    assert s.is_terminal()
    return game, s


def assert_rejected(fn, state, *args, exc=BAD, match=None):
    before = state.to_dict()
    hist = state.history()
    with pytest.raises(exc, match=match):
        fn(*args)
    assert state.to_dict() == before, "a rejected call changed the state"
    assert state.history() == hist


# --- apply_action ---------------------------------------------------------------------------------
BAD_ACTIONS = [
    (-1, ValueError),
    (143, ValueError),
    (10**6, ValueError),
    (10**30, ValueError),
    (-(10**30), ValueError),
    (1.0, TypeError),
    (1.5, TypeError),
    ("1", TypeError),
    ("role mayor", TypeError),
    (None, TypeError),
    ([1], TypeError),
    (np.float64(1), TypeError),
]


@pytest.mark.parametrize("action,exc", BAD_ACTIONS, ids=[repr(a) for a, _ in BAD_ACTIONS])
def test_apply_action_bad_values_raise_and_leave_state_unchanged(action, exc):
    _game, s = decision_state()
    assert_rejected(s.apply_action, s, action, exc=exc)
    assert_rejected(s.child, s, action, exc=exc)


def test_apply_action_illegal_ids_everywhere():
    """Every in-range id that is not legal is rejected with a message naming it and the legal ones."""
    for n in PLAYER_COUNTS:
        game, snaps = snapshots(n, seed=n, every=0.1)
        for s in snaps:
            if s.is_terminal():
                continue
            legal = set(s.legal_actions())
            illegal = [a for a in range(game.num_distinct_actions()) if a not in legal]
            for a in random.Random(len(illegal)).sample(illegal, min(8, len(illegal))):
                before = s.to_dict()
                with pytest.raises(ValueError, match=rf"action {a} \(.*\) is not legal"):
                    s.apply_action(a)
                assert s.to_dict() == before


def test_chance_and_decision_ids_do_not_mix():
    game = game_of(4)
    s = game.new_initial_state(seed=0)
    assert s.is_chance_node()
    assert_rejected(s.apply_action, s, 0)  # a role at a chance node
    assert_rejected(s.apply_action, s, 137)  # pass at a chance node
    game, d = decision_state()
    for a in range(138, 143):  # draw outcomes at a decision node
        assert_rejected(d.apply_action, d, a)
    assert_rejected(d.resolve_chance, d, exc=ValueError)


def test_numpy_ints_are_accepted_like_ints():
    game, s = decision_state()
    a = s.legal_actions()[0]
    expected = s.child(a).to_dict()
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint64, np.intp):
        c = s.clone()
        c.apply_action(t(a))
        assert c.to_dict() == expected
        assert type(c.history()[-1]) is int
        assert c.action_to_string(t(a)) == s.action_to_string(a)
        assert game.action_to_string(t(a)) == game.action_to_string(a)
    obs = s.observation_tensor(np.int64(1))
    assert np.array_equal(obs, s.observation_tensor(1))


def test_bool_is_not_accepted_as_an_int():
    """load_game(players=True), random_playouts(seed=True) and every int field of a state dict reject
    bool; actions, seeds and seats must do the same instead of silently meaning 0/1."""
    game, s = decision_state()
    assert_rejected(s.apply_action, s, True, exc=TypeError)
    assert_rejected(s.apply_action, s, False, exc=TypeError)
    assert_rejected(s.observation_tensor, s, True, exc=TypeError)
    with pytest.raises(TypeError):
        game.new_initial_state(seed=True)
    with pytest.raises(TypeError):
        s.action_to_string(True)


def test_apply_on_terminal_raises():
    _game, s = terminal_state()
    assert s.legal_actions() == [] and s.current_player() == caribsim.TERMINAL
    for a in (0, 137, 138):
        assert_rejected(s.apply_action, s, a, exc=ValueError, match="game is over")
    assert_rejected(s.resolve_chance, s, exc=ValueError)
    assert_rejected(s.child, s, 0, exc=ValueError)
    assert s.chance_outcomes() == []


# --- load_game / new_initial_state / random_playouts --------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,exc",
    [
        (dict(players=1), ValueError),
        (dict(players=6), ValueError),
        (dict(players=0), ValueError),
        (dict(players=-3), ValueError),
        (dict(players="4"), TypeError),
        (dict(players=True), TypeError),
        (dict(players=4.0), TypeError),
        (dict(players=None), TypeError),
        (dict(expansion="yes"), TypeError),
        (dict(expansion=1), TypeError),
        (dict(all_colonists_and_vp=1), TypeError),
        (dict(all_colonists_and_vp="yes"), TypeError),
        (dict(unknown_option=1), TypeError),
        (dict(player=4), TypeError),
    ],
)
def test_load_game_bad_options(kwargs, exc):
    with pytest.raises(exc):
        caribsim.load_game("puerto_rico", **kwargs)


@pytest.mark.parametrize("name", ["puerto_rico", "port_royal", "cuba"])
def test_load_game_names_an_unknown_option_and_lists_the_game_s_options(name):
    """A misspelt option (all_31 for all_31_buildings, player for players) is named with
    every option the game has, not only Python's 'unexpected keyword argument'."""
    with pytest.raises(TypeError) as e:
        caribsim.load_game(name, player=3, all_31=True)
    msg = str(e.value)
    assert msg.startswith(f"{name}: unknown options 'all_31', 'player'; its options: players"), msg
    for option in caribsim.load_game(name).options():
        assert option in msg, (option, msg)


def test_load_game_names_and_good_options():
    assert "puerto_rico" in caribsim.games() and caribsim.games() == sorted(caribsim.games())
    with pytest.raises(ValueError, match="unknown game"):
        caribsim.load_game("puerto rico")
    with pytest.raises(ValueError, match="unknown game"):
        caribsim.load_game("Puerto_Rico")
    with pytest.raises(TypeError):
        caribsim.load_game(None)
    with pytest.raises(TypeError):
        caribsim.load_game(b"puerto_rico")
    for n in PLAYER_COUNTS:
        for g in (
            caribsim.load_game("puerto_rico", players=n),
            caribsim.load_game("puerto_rico", players=np.int64(n)),
        ):
            assert g.num_players() == n
            assert g.options() == {"players": n, "all_colonists_and_vp": False}
            assert type(g.options()["players"]) is int
    assert caribsim.load_game("puerto_rico").num_players() == 4


@pytest.mark.parametrize(
    "seed,exc",
    [(-1, ValueError), (2**64, ValueError), (1.0, TypeError), ("1", TypeError), (None, TypeError)],
)
def test_new_initial_state_bad_seed(seed, exc):
    with pytest.raises(exc):
        game_of(3).new_initial_state(seed=seed)


def test_new_initial_state_seed_range_edges():
    g = game_of(3)
    for seed in (0, 2**64 - 1, np.uint64(2**64 - 1)):
        s = g.new_initial_state(seed=seed)
        assert s.is_chance_node()


@pytest.mark.parametrize(
    "kwargs,exc",
    [
        (dict(n_games=-1), ValueError),
        (dict(n_games=1.0), TypeError),
        (dict(n_games="3"), TypeError),
        (dict(n_games=True), TypeError),
        (dict(threads=0), ValueError),
        (dict(threads=-2), ValueError),
        (dict(threads=1.5), TypeError),
        (dict(seed=-1), ValueError),
        (dict(seed=2**64), ValueError),
        (dict(seed=None), TypeError),
    ],
)
def test_random_playouts_bad_arguments(kwargs, exc):
    _game, s = decision_state()
    args = dict(n_games=2)
    args.update(kwargs)
    assert_rejected(lambda: caribsim.random_playouts(s, **args), s, exc=exc)


def test_random_playouts_bad_state_and_edge_counts():
    with pytest.raises(TypeError):
        caribsim.random_playouts(object(), 3)
    with pytest.raises(TypeError):
        caribsim.random_playouts(game_of(3).new_initial_state(0).to_dict(), 3)
    _game, s = decision_state()
    r = caribsim.random_playouts(s, 0)
    assert r.returns.shape == (0, 4) and r.lengths.shape == (0,) and r.decisions == 0
    _game, t = terminal_state()
    r = caribsim.random_playouts(t, 3, seed=1)
    assert np.all(r.lengths == 0)
    assert np.allclose(r.returns, [t.returns()] * 3)


# --- observation, legal_actions(player), strings ----------------------------------------------------
def test_observation_bad_player():
    game, s = decision_state(n=3)
    for p, exc in (
        (-1, ValueError),
        (3, ValueError),
        (99, ValueError),
        (10**30, ValueError),
        (1.5, TypeError),
        ("0", TypeError),
        ([0], TypeError),
    ):
        assert_rejected(s.observation_tensor, s, p, exc=exc)
        buf = np.zeros(game.observation_tensor_shape(), dtype=np.float32)
        assert_rejected(s.write_observation, s, buf, p, exc=exc)


def test_write_observation_bad_buffer_and_agreement():
    game, s = decision_state(n=3)
    size = game.observation_tensor_shape()[0]
    for buf in (
        np.zeros(size - 1, np.float32),
        np.zeros(size + 1, np.float32),
        np.zeros(size, np.float64),
        np.zeros(size, np.int32),
        None,
        [0.0] * size,
    ):
        assert_rejected(s.write_observation, s, buf, 0)
    for p in range(3):
        buf = np.full(size, np.nan, np.float32)
        s.write_observation(buf, p)
        assert np.array_equal(buf, s.observation_tensor(p))
    buf = np.full(size, np.nan, np.float32)
    s.write_observation(buf)
    assert np.array_equal(buf, s.observation_tensor())


def test_legal_actions_for_a_player():
    _game, s = decision_state(n=3)
    cp = s.current_player()
    assert s.legal_actions(cp) == s.legal_actions()
    for other in range(3):
        if other != cp:
            assert s.legal_actions(other) == []
            assert not s.legal_actions_mask(other).any()
    # a seat that does not exist is bad input, not "another player"
    for p, exc in ((3, ValueError), (-7, ValueError), ("x", TypeError), (1.5, TypeError)):
        assert_rejected(s.legal_actions, s, p, exc=exc)
        assert_rejected(s.legal_actions_mask, s, p, exc=exc)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_action_names_unique_and_round_trip(n):
    game = game_of(n)
    s = game.new_initial_state(seed=0)
    names = [game.action_to_string(a) for a in range(game.num_distinct_actions())]
    assert len(set(names)) == len(names), "action names must be unique"
    for a, name in enumerate(names):
        assert isinstance(name, str) and name == " ".join(name.lower().split())
        assert game.string_to_action(name) == a
        assert s.string_to_action(name) == a
        assert s.action_to_string(a) == name
        assert game.string_to_action("  " + name.upper().replace(" ", "   ") + " ") == a
    # the documented anchors of the encoding (brief: action ids)
    assert names[0] == "role settler" and names[7] == "role prospector 2"
    assert names[13] == "settle quarry" and names[14] == "hacienda draw" and names[137] == "pass"
    assert (
        names[59 + 20] == "build fortress"
        and names[138] == "draw corn"
        and names[142] == "draw coffee"
    )
    caps = game.cargo_ship_capacities()
    for g, good in enumerate(("corn", "indigo", "sugar", "tobacco", "coffee")):
        for slot, cap in enumerate(caps):
            assert names[107 + g * 3 + slot] == f"ship {good} on {cap}"


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "role",
        "role gardener",
        "build castle",
        "ship corn on 9",
        "pass pass",
        "settle",
        "draw forest",
        "137",
        "wharf",
    ],
)
def test_string_to_action_unknown_names(name):
    game, s = decision_state()
    with pytest.raises(ValueError, match="unknown action name"):
        game.string_to_action(name)
    assert_rejected(s.string_to_action, s, name, exc=ValueError)


def test_string_to_action_wrong_types_and_action_to_string_out_of_range():
    game, s = decision_state()
    for bad in (None, 3, b"pass", ["pass"]):
        with pytest.raises(BAD):
            game.string_to_action(bad)
        assert_rejected(s.string_to_action, s, bad, exc=TypeError)
    for a, exc in (
        (-1, ValueError),
        (143, ValueError),
        (10**30, ValueError),
        (1.0, TypeError),
        (None, TypeError),
    ):
        with pytest.raises(exc):
            game.action_to_string(a)
        assert_rejected(s.action_to_string, s, a, exc=exc)


# --- state_from_dict / deserialize_state -----------------------------------------------------------
def _set(d, path, value):
    cur = d
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value


def _del(d, path):
    cur = d
    for k in path[:-1]:
        cur = cur[k]
    del cur[path[-1]]


def _mid_game(n=4, phase="captain", seed=0):
    """A dict of a position in the given phase (first one reached by a seeded random game)."""
    game = game_of(n)
    for sd in range(seed, seed + 50):
        s = game.new_initial_state(seed=sd)
        rng = random.Random(sd)
        while not s.is_terminal():
            if s.phase() == phase and not s.is_chance_node():
                return game, s
            advance(s, rng, 1)
    raise AssertionError(f"no {phase} position found")


MALFORMED = {
    # missing / unknown keys
    "missing governor": lambda d: _del(d, ("governor",)),
    "missing boards": lambda d: _del(d, ("boards",)),
    "missing rng": lambda d: _del(d, ("rng",)),
    "missing turn.kept": lambda d: _del(d, ("turn", "kept")),
    "missing board doubloons": lambda d: _del(d, ("boards", 0, "doubloons")),
    "missing island kind": lambda d: _del(d, ("boards", 1, "island", "coffee")),
    "missing goods kind": lambda d: _del(d, ("goods", "corn")),
    "missing ship load": lambda d: _del(d, ("cargo_ships", 0, "load")),
    "unknown top key": lambda d: _set(d, ("bonus",), 1),
    "unknown board key": lambda d: _set(d, ("boards", 0, "gold"), 1),
    "unknown good": lambda d: _set(d, ("goods", "rum"), 0),
    "unknown building on board": lambda d: _set(d, ("boards", 0, "buildings", "castle"), 0),
    "expansion building on board": lambda d: _set(d, ("boards", 0, "buildings", "library"), 0),
    "unknown role": lambda d: _set(d, ("roles", "pirate"), {"doubloons": 0, "taken_by": None}),
    "unknown turn key": lambda d: _set(d, ("turn", "foo"), 0),
    "wrong game": lambda d: _set(d, ("game",), "cuba"),
    "wrong version": lambda d: _set(d, ("version",), 99),
    # wrong types
    "governor str": lambda d: _set(d, ("governor",), "0"),
    "governor float": lambda d: _set(d, ("governor",), 0.0),
    "governor bool": lambda d: _set(d, ("governor",), False),
    "quarries None": lambda d: _set(d, ("quarries",), None),
    "goods list": lambda d: _set(d, ("goods",), [10, 11, 11, 9, 9]),
    "boards dict": lambda d: _set(d, ("boards",), {}),
    "cargo ships dict": lambda d: _set(d, ("cargo_ships",), {}),
    "end_triggered int": lambda d: _set(d, ("end_triggered",), 0),
    "phase int": lambda d: _set(d, ("phase",), 3),
    "phase unknown": lambda d: _set(d, ("phase",), "harvest"),
    "step unknown": lambda d: _set(d, ("step",), "dance"),
    "ship good unknown": lambda d: _set(d, ("cargo_ships", 0, "good"), "rum"),
    "board is list": lambda d: _set(d, ("boards", 0), []),
    "vp chips str": lambda d: _set(d, ("vp_chips",), "100"),
    "kept not list": lambda d: _set(d, ("turn", "kept"), "corn"),
    "kept duplicates": lambda d: _set(d, ("turn", "kept"), ["corn", "corn"]),
    "wharf_used bad seat": lambda d: _set(d, ("turn", "wharf_used"), [9]),
    "options players float": lambda d: _set(
        d, ("options", "players"), float(d["options"]["players"])
    ),
    "options variant int": lambda d: _set(d, ("options", "all_colonists_and_vp"), 0),
    "version bool": lambda d: _set(d, ("version",), True),
    # negative / out of range
    "negative doubloons": lambda d: _set(d, ("boards", 0, "doubloons"), -1),
    "negative role doubloons": lambda d: _set(d, ("roles", "settler", "doubloons"), -1),
    "negative governor": lambda d: _set(d, ("governor",), -1),
    "governor = n": lambda d: _set(d, ("governor",), d["options"]["players"]),
    "player out of range": lambda d: _set(d, ("player",), 7),
    "to_draw too big": lambda d: _set(d, ("plantations", "to_draw"), 99),
    "ship over capacity": lambda d: _set(
        d, ("cargo_ships", 0, "load"), d["cargo_ships"][0]["capacity"] + 1
    ),
    "ship capacity changed": lambda d: _set(d, ("cargo_ships", 0, "capacity"), 9),
    "colonists exceed tiles": lambda d: _set(
        d,
        ("boards", 0, "island", "indigo", "colonists"),
        d["boards"][0]["island"]["indigo"]["tiles"] + 1,
    ),
    "forest tiles": lambda d: _set(d, ("boards", 0, "island", "forest", "tiles"), 1),
    "huge int": lambda d: _set(d, ("boards", 0, "doubloons"), 2**70),
    # conservation broken (single component changed)
    "colonist supply +1": lambda d: _set(d, ("colonists", "supply"), d["colonists"]["supply"] + 1),
    "colonist ship -1": lambda d: (
        _set(d, ("colonists", "ship"), d["colonists"]["ship"] - 1)
        if d["colonists"]["ship"]
        else _set(d, ("colonists", "ship"), 1)
    ),
    "san juan +1": lambda d: _set(d, ("boards", 1, "san_juan"), d["boards"][1]["san_juan"] + 1),
    "goods supply +1": lambda d: _set(d, ("goods", "coffee"), d["goods"]["coffee"] + 1),
    "board goods +1": lambda d: _set(
        d, ("boards", 0, "goods", "corn"), d["boards"][0]["goods"]["corn"] + 1
    ),
    "stack +1": lambda d: _set(
        d, ("plantations", "stack", "sugar"), d["plantations"]["stack"]["sugar"] + 1
    ),
    "discard +1": lambda d: _set(
        d, ("plantations", "discard", "corn"), d["plantations"]["discard"]["corn"] + 1
    ),
    "quarries -1": lambda d: _set(d, ("quarries",), d["quarries"] - 1),
    "island tile +1": lambda d: _set(
        d,
        ("boards", 0, "island", "tobacco", "tiles"),
        d["boards"][0]["island"]["tobacco"]["tiles"] + 1,
    ),
    "building supply -1": lambda d: _set(d, ("buildings", "harbor"), d["buildings"]["harbor"] - 1),
    "building supply +1": lambda d: _set(
        d, ("buildings", "small_market"), d["buildings"]["small_market"] + 1
    ),
    "extra building on board": lambda d: (
        _set(d, ("boards", 0, "buildings", "city_hall"), 0)
        if "city_hall" not in d["boards"][0]["buildings"]
        else _del(d, ("boards", 0, "buildings", "city_hall"))
    ),
    "vp pool -1": lambda d: _set(d, ("vp_chips",), d["vp_chips"] - 1),
    "player vp +1": lambda d: _set(d, ("boards", 0, "vp_chips"), d["boards"][0]["vp_chips"] + 1),
    "trading house +1": lambda d: _set(
        d, ("trading_house", "corn"), d["trading_house"]["corn"] + 1
    ),
    # inconsistent flow
    "step role in captain phase": lambda d: _set(d, ("step",), "role"),
    "step build in captain phase": lambda d: _set(d, ("step",), "build"),
    "phase terminal-only step": lambda d: _set(d, ("step",), "terminal"),
    "captain not taken": lambda d: _set(d, ("roles", "captain", "taken_by"), None),
    "selections_done off": lambda d: _set(d, ("selections_done",), (d["selections_done"] + 1) % 3),
    "role_chooser not the captain": lambda d: _set(
        d, ("role_chooser",), (d["role_chooser"] + 1) % d["options"]["players"]
    ),
    "to_place outside mayor": lambda d: _set(d, ("turn", "to_place"), 1),
    # wrong player count
    "one board missing": lambda d: d["boards"].pop(),
    "one board extra": lambda d: d["boards"].append(copy.deepcopy(d["boards"][0])),
    "options players changed": lambda d: _set(d, ("options", "players"), 3),
    "one ship missing": lambda d: d["cargo_ships"].pop(),
    # bad rng
    "rng short": lambda d: d["rng"].pop(),
    "rng long": lambda d: d["rng"].append(1),
    "rng zeros": lambda d: _set(d, ("rng",), [0, 0, 0, 0]),
    "rng negative": lambda d: _set(d, ("rng", 0), -1),
    "rng too big": lambda d: _set(d, ("rng", 0), 2**64),
    "rng str": lambda d: _set(d, ("rng", 0), "1"),
    "rng bool": lambda d: _set(d, ("rng", 0), True),
    "rng not list": lambda d: _set(d, ("rng",), 5),
    # bad history
    "history not list": lambda d: _set(d, ("history",), "0,1"),
    "history negative": lambda d: d["history"].append(-1),
    "history out of range": lambda d: d["history"].append(143),
    "history str": lambda d: d["history"].append("pass"),
    "history bool": lambda d: d["history"].append(True),
    "history None": lambda d: _set(d, ("history",), None),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_state_from_dict_rejects_malformed(case):
    game, s = _mid_game(4, "captain")
    d = s.to_dict()
    assert s.phase() == "captain" and d["vp_chips"] > 0
    game.state_from_dict(copy.deepcopy(d))  # the unmodified dict is fine
    MALFORMED[case](d)
    frozen = copy.deepcopy(d)
    before = s.to_dict()
    with pytest.raises(BAD):
        game.state_from_dict(d)
    assert d == frozen, "state_from_dict must not modify its input"
    assert s.to_dict() == before
    with pytest.raises(BAD):
        game.deserialize_state(json.dumps(d))


@pytest.mark.parametrize("phase", ["builder", "trader", "settler", "mayor"])
def test_state_from_dict_rejects_wrong_player_to_act(phase):
    """In these phases the seat to act is role_chooser + turns_done (the engine's flow invariant)."""
    game, s = _mid_game(4, phase)
    d = s.to_dict()
    n = d["options"]["players"]
    for delta in (1, 2, 3):
        e = copy.deepcopy(d)
        e["player"] = (d["player"] + delta) % n
        with pytest.raises(ValueError):
            game.state_from_dict(e)


def test_state_from_dict_from_another_player_count():
    for n in PLAYER_COUNTS:
        d = game_of(n).new_initial_state(seed=1).to_dict()
        for m in PLAYER_COUNTS:
            if m != n:
                with pytest.raises(ValueError, match="options"):
                    game_of(m).state_from_dict(d)
    d = (
        caribsim.load_game("puerto_rico", players=3, all_colonists_and_vp=True)
        .new_initial_state(0)
        .to_dict()
    )
    with pytest.raises(ValueError):
        game_of(3).state_from_dict(d)


def test_state_from_dict_conserving_moves_are_accepted():
    """Moving components between supply and boards keeping totals is a valid position (the brief's
    recipe for scenarios), so the rejection tests above are about the changes, not the base dict."""
    game, s = _mid_game(4, "captain")
    d = s.to_dict()
    k = next(g for g in d["goods"] if d["goods"][g] > 0)
    d["goods"][k] -= 1
    d["boards"][0]["goods"][k] += 1
    d["boards"][0]["doubloons"] += 10
    t = game.state_from_dict(d)
    assert t.to_dict() == d


@pytest.mark.parametrize(
    "text,exc",
    [
        ("", ValueError),
        ("{", ValueError),
        ("not json", ValueError),
        ("[]", TypeError),
        ("null", TypeError),
        ("1", TypeError),
        ('"x"', TypeError),
        ("{}", ValueError),
        ('{"game": "puerto_rico"}', ValueError),
        (b"\xff\xfe", ValueError),
        (None, TypeError),
        (5, TypeError),
        ({}, TypeError),
    ],
)
def test_deserialize_state_garbage(text, exc):
    with pytest.raises(exc):
        game_of(4).deserialize_state(text)


def test_deserialize_truncated_and_wrong_game():
    game = game_of(4)
    s = game.new_initial_state(seed=3)
    text = s.serialize()
    assert game.deserialize_state(text) == s
    assert game.deserialize_state(text.encode()) == s
    for cut in (1, len(text) // 3, len(text) // 2, len(text) - 1):
        with pytest.raises(BAD):
            game.deserialize_state(text[:cut])
    with pytest.raises(ValueError):
        game_of(2).deserialize_state(text)


# --- fuzz: mutated dicts either raise cleanly or round-trip ---------------------------------------
_FUZZ_BASES = []


def _fuzz_bases():
    if not _FUZZ_BASES:
        for n in PLAYER_COUNTS:
            game, snaps = snapshots(n, seed=10 + n, every=0.05)
            _FUZZ_BASES.extend((game, s.to_dict()) for s in snaps)
    return _FUZZ_BASES


def _paths(obj, pre=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield (*pre, k)
            yield from _paths(v, (*pre, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield (*pre, i)
            yield from _paths(v, (*pre, i))


_FUZZ_VALUES = st.one_of(
    st.integers(-3, 15),
    st.integers(-(2**70), 2**70),
    st.sampled_from([127, 128, 255, 256, 32767, 32768, 2**63]),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True),
    st.text(max_size=6),
    st.sampled_from(
        [
            "corn",
            "coffee",
            "quarry",
            "mayor",
            "captain",
            "keep",
            "load",
            "hacienda",
            "terminal",
            "settler",
            "role",
            "draw_face_up",
            "end",
            "small_market",
        ]
    ),
    st.lists(st.integers(-1, 5), max_size=5),
    st.just({}),
    st.just([]),
    st.dictionaries(
        st.sampled_from(["corn", "tiles", "colonists", "x"]), st.integers(-1, 3), max_size=3
    ),
)


@settings(
    max_examples=800, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=st.data())
def test_fuzz_state_from_dict_never_crashes(data):
    bases = _fuzz_bases()
    game, base = bases[data.draw(st.integers(0, len(bases) - 1), label="base")]
    d = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        paths = [p for p in _paths(d) if not (p and p[0] == "history" and len(p) > 1)]
        path = paths[data.draw(st.integers(0, len(paths) - 1), label="path")]
        kind = data.draw(
            st.sampled_from(["value", "value", "nudge", "delete", "add"]), label="kind"
        )
        parent = d
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        if kind == "nudge" and type(parent[key]) is int:
            parent[key] += data.draw(st.sampled_from([-1, 1, -2, 2, 5]))
        elif kind == "delete" and isinstance(parent, dict):
            del parent[key]
        elif kind == "add" and isinstance(parent, dict):
            parent[data.draw(st.text(max_size=4))] = data.draw(_FUZZ_VALUES)
        else:
            parent[key] = data.draw(_FUZZ_VALUES)
    frozen = copy.deepcopy(d)
    try:
        s = game.state_from_dict(d)
    except (ValueError, TypeError):
        assert repr(d) == repr(frozen)
        return
    # accepted: it must be a coherent, usable state
    out = s.to_dict()
    assert game.state_from_dict(out).to_dict() == out
    assert game.deserialize_state(s.serialize()).to_dict() == out
    expected = dict(d, history=d.get("history", []))  # history is optional
    assert out == expected, "an accepted dict must come back unchanged from to_dict"
    legal = s.legal_actions()
    assert legal == sorted(set(legal))
    if not s.is_terminal():
        assert legal
        c = s.clone()
        advance(c, random.Random(0), 30)
    str(s)
    assert np.all(np.isfinite(s.observation_tensor(0)))
