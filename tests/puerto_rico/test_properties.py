"""Property tests for the Puerto Rico base game over many random games (2-5 players).

Invariants are computed here from ``to_dict`` and the rules reference (§1.3 setup numbers,
§1.6 building table, §7 game end), not from the engine's own validation.

Volume: ``random_playouts`` (thousands of games per player count, in C) plus a few hundred
Python-driven games with per-step checks.
"""

from __future__ import annotations

import csv
import math
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import caribsim

PLAYER_COUNTS = (2, 3, 4, 5)
GOODS = ("corn", "indigo", "sugar", "tobacco", "coffee")
CHANCE, TERMINAL = -1, -4

# --- reference numbers (rules reference §1.3), written out independently of the engine ----------
COLONISTS_TOTAL = {2: 40 + 2, 3: 55 + 3, 4: 75 + 4, 5: 95 + 5}
VP_TOTAL = {2: 65, 3: 75, 4: 100, 5: 122}
QUARRIES = {2: 5, 3: 8, 4: 8, 5: 8}
PLANTATIONS = {2: dict(corn=7, indigo=9, sugar=8, tobacco=6, coffee=5)}
PLANTATIONS.update({n: dict(corn=10, indigo=12, sugar=11, tobacco=9, coffee=8) for n in (3, 4, 5)})
GOODS_TOTAL = {2: dict(corn=8, indigo=9, sugar=9, tobacco=7, coffee=7)}
GOODS_TOTAL.update({n: dict(corn=10, indigo=11, sugar=11, tobacco=9, coffee=9) for n in (3, 4, 5)})
SHIPS = {2: (4, 6), 3: (4, 5, 6), 4: (5, 6, 7), 5: (6, 7, 8)}
SELECTIONS_PER_ROUND = {2: 6, 3: 3, 4: 4, 5: 5}
ISLAND_SPACES = CITY_SPACES = 12
HOUSE_SPACES = 4
ROLE_ACTIONS = range(8)

_RULES_CSV = Path("/work/shared/rules/data/puerto_rico_buildings.csv")
if not _RULES_CSV.exists():  # CI: the package's copy of the reference table
    _RULES_CSV = Path(caribsim.__file__).parent / "data" / "puerto_rico_buildings.csv"
with open(_RULES_CSV, newline="") as f:
    BUILDING_ROWS = {r["id"]: r for r in csv.DictReader(f) if r["set"] == "base"}
CIRCLES = {b: int(r["circles"]) for b, r in BUILDING_ROWS.items()}
CITY_SIZE = {b: int(r["city_spaces"]) for b, r in BUILDING_ROWS.items()}
PRINTED_VP = {b: int(r["vp"]) for b, r in BUILDING_ROWS.items()}


def copies(b, n):
    return int(BUILDING_ROWS[b]["copies_2p" if n == 2 else "copies_3to5p"])


# --- helpers ----------------------------------------------------------------------------------------
def play_random(state, rng, max_steps=20000, on_step=None):
    """Play uniformly random decisions (chance via resolve_chance) to the end."""
    steps = 0
    while not state.is_terminal():
        if state.is_chance_node():
            a = state.resolve_chance()
        else:
            a = rng.choice(state.legal_actions())
            state.apply_action(a)
        steps += 1
        assert steps < max_steps, "the game did not end"
        if on_step:
            on_step(a, state)
    return steps


def walk_ints(obj, path="state"):
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return
    if isinstance(obj, int):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk_ints(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from walk_ints(v, f"{path}[{i}]")


def min_int(obj):
    """Smallest int anywhere in a nested dict/list (fast path of walk_ints)."""
    best = 0
    stack = [obj]
    while stack:
        o = stack.pop()
        t = type(o)
        if t is int:
            if o < best:
                best = o
        elif t is dict:
            stack.extend(o.values())
        elif t is list:
            stack.extend(o)
    return best


def colonists_on_board(b):
    return (
        sum(v["colonists"] for k, v in b["island"].items() if k != "forest")
        + sum(b["buildings"].values())
        + b["san_juan"]
    )


def city_used(b):
    return sum(CITY_SIZE[x] for x in b["buildings"])


def empty_building_circles(d):
    return sum(CIRCLES[x] - w for b in d["boards"] for x, w in b["buildings"].items())


def check_invariants(d, n):
    """Conservation and ranges of one to_dict snapshot (§1.3, §2, §7.3)."""
    body = {
        k: v for k, v in d.items() if k not in ("history", "rng")
    }  # ids/RNG words: checked elsewhere
    if min_int(body) < 0:
        bad = [(path, v) for path, v in walk_ints(body) if v < 0]
        raise AssertionError(f"negative counts: {bad}")
    boards = d["boards"]
    assert len(boards) == n
    # colonists (§1.3): supply + ship + boards (+ those lifted by the player placing in the Mayor phase)
    col = (
        d["colonists"]["supply"]
        + d["colonists"]["ship"]
        + sum(colonists_on_board(b) for b in boards)
    )
    if d["step"] == "mayor":
        col += d["turn"]["to_place"]
    else:
        assert d["turn"]["to_place"] == 0
    assert col == COLONISTS_TOTAL[n], f"colonists {col} != {COLONISTS_TOTAL[n]}"
    # goods
    for g in GOODS:
        tot = d["goods"][g] + d["trading_house"][g] + sum(b["goods"][g] for b in boards)
        tot += sum(s["load"] for s in d["cargo_ships"] if s["good"] == g)
        assert tot == GOODS_TOTAL[n][g], f"{g} goods {tot} != {GOODS_TOTAL[n][g]}"
        pl = d["plantations"]
        tot = (
            pl["face_up"][g]
            + pl["stack"][g]
            + pl["discard"][g]
            + sum(b["island"][g]["tiles"] for b in boards)
        )
        assert tot == PLANTATIONS[n][g], f"{g} plantations {tot} != {PLANTATIONS[n][g]}"
    assert d["quarries"] + sum(b["island"]["quarry"]["tiles"] for b in boards) == QUARRIES[n]
    # buildings: supply + owners = copies; nobody owns two of one kind (§4.3)
    assert set(d["buildings"]) == set(BUILDING_ROWS)
    for x in BUILDING_ROWS:
        owners = sum(1 for b in boards if x in b["buildings"])
        assert d["buildings"][x] + owners == copies(x, n), f"building {x} not conserved"
    # VP chips: pool + held = total while the pool lasts; afterwards players may hold more (§7.3)
    held = sum(b["vp_chips"] for b in boards)
    if d["vp_chips"] > 0:
        assert d["vp_chips"] + held == VP_TOTAL[n]
    else:
        assert held >= VP_TOTAL[n]
    # ranges
    assert [s["capacity"] for s in d["cargo_ships"]] == list(SHIPS[n])
    on_ships = [s["good"] for s in d["cargo_ships"] if s["good"] is not None]
    assert len(on_ships) == len(set(on_ships)), "one good on two ships"
    for s in d["cargo_ships"]:
        assert s["load"] <= s["capacity"] and (s["load"] == 0) == (s["good"] is None)
    assert sum(d["trading_house"].values()) <= HOUSE_SPACES
    for b in boards:
        tiles = sum(v["tiles"] for v in b["island"].values())
        assert tiles <= ISLAND_SPACES
        for k, v in b["island"].items():
            if k != "forest":
                assert v["colonists"] <= v["tiles"]
        assert city_used(b) <= CITY_SPACES
        for x, w in b["buildings"].items():
            assert w <= CIRCLES[x]


def check_step(prev, cur, n):
    """Monotonicity between consecutive snapshots: placed tiles and buildings are never removed (§2.1)."""
    for pb, cb in zip(prev["boards"], cur["boards"]):
        for k in pb["island"]:
            assert cb["island"][k]["tiles"] >= pb["island"][k]["tiles"]
        assert set(pb["buildings"]) <= set(cb["buildings"])
        assert cb["vp_chips"] >= pb["vp_chips"]
    if prev["vp_chips"] == 0:
        assert cur["vp_chips"] == 0
    if prev["end_triggered"] and cur["step"] != "terminal":
        assert cur["end_triggered"], "a fired end trigger must stay fired (§7.1)"


class GameChecker:
    """Per-step checks of one game, including the §7.1/§7.2 end triggers and timing."""

    def __init__(self, state, n):
        self.n = n
        self.prev = state.to_dict()
        check_invariants(self.prev, n)
        self.selections = 0  # role selections made so far
        self.trigger_selection = None  # the selection number whose phase fired the first trigger
        self.triggers_seen = set()
        self.mayor_running = False

    def __call__(self, action, state):
        prev, n = self.prev, self.n
        cur = state.to_dict()
        check_invariants(cur, n)
        check_step(prev, cur, n)
        assert cur["history"][-1] == action
        is_role = prev["step"] == "role"
        if is_role:
            assert action in ROLE_ACTIONS
            self.selections += 1
        # --- which triggers hold after this step (computed here, §7.1) ---
        fired = set()
        if cur["vp_chips"] == 0 and prev["vp_chips"] > 0:
            fired.add("vp")
        if any(city_used(b) == CITY_SPACES for b in cur["boards"]) and not any(
            city_used(b) == CITY_SPACES for b in prev["boards"]
        ):
            fired.add("city")
        # a Mayor phase ended in this step (it may also have been wholly automatic)
        started_mayor = is_role and action == 1
        if (prev["phase"] == "mayor" or started_mayor) and cur["phase"] != "mayor":
            supply_before_refill = cur["colonists"]["supply"] + cur["colonists"]["ship"]
            need = max(n, empty_building_circles(cur))
            # §4.2 refill: the ship takes `need`, or the whole supply when it is short
            assert cur["colonists"]["ship"] == min(need, supply_before_refill), "Mayor refill"
            if supply_before_refill < need:
                fired.add("colonists")
        if fired:
            self.triggers_seen |= fired
        if fired and not prev["end_triggered"]:
            assert cur["end_triggered"] or cur["step"] == "terminal", (
                f"trigger {fired} did not fire"
            )
            self.trigger_selection = self.selections
        if cur["end_triggered"] and not prev["end_triggered"]:
            assert fired, "end_triggered became true without any §7.1 trigger"
            self.trigger_selection = self.selections
        if state.is_terminal():
            # §7.2: the game ends when the round of the first trigger is complete, not before or after
            per_round = SELECTIONS_PER_ROUND[n]
            assert self.trigger_selection is not None, "the game ended without an end trigger"
            assert self.selections % per_round == 0, "the game ended in the middle of a round"
            expected = ((self.trigger_selection - 1) // per_round + 1) * per_round
            assert self.selections == expected, (
                f"the trigger fired in the phase of selection {self.trigger_selection}; the game "
                f"must end after selection {expected}, it ended after {self.selections}"
            )
        self.prev = cur


def check_chance(state):
    """§E.2: a draw picks a kind with probability proportional to the stack counts."""
    legal = state.legal_actions()
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == legal and legal
    d = state.to_dict()
    counts = d["plantations"]["stack"]
    if sum(counts.values()) == 0:  # the discard is reshuffled into the stack (§4.1 step 5)
        counts = d["plantations"]["discard"]
    total = sum(counts.values())
    assert total > 0
    expected = {138 + GOODS.index(g): c / total for g, c in counts.items() if c}
    got = dict(outcomes)
    assert set(got) == set(expected)
    assert math.isclose(sum(got.values()), 1.0, rel_tol=1e-9), (
        f"chance probabilities sum to {sum(got.values())}"
    )
    for a, p in got.items():
        assert math.isclose(p, expected[a], rel_tol=1e-9), f"P({a}) = {p}, stack says {expected[a]}"


def check_node(state, n, game):
    """Per-node API properties: players, legal actions, mask, chance outcomes, observation."""
    cp = state.current_player()
    legal = state.legal_actions()
    assert legal == sorted(set(legal)), "legal_actions must be sorted and unique"
    mask = state.legal_actions_mask()
    assert mask.shape == (game.num_distinct_actions(),)
    assert list(np.flatnonzero(mask)) == legal
    if state.is_terminal():
        assert cp == TERMINAL and legal == [] and state.chance_outcomes() == []
    elif state.is_chance_node():
        assert cp == CHANCE
        assert [a for a, _ in state.chance_outcomes()] == legal and legal
    else:
        assert 0 <= cp < n and legal
        assert state.returns() == [0.0] * n, "returns are 0 before the end"
        assert state.to_dict()["player"] == cp
        assert all(0 <= a < 138 for a in legal)
    shape = game.observation_tensor_shape()
    for p in range(n):
        obs = state.observation_tensor(p)
        assert obs.shape == shape and obs.dtype == np.float32
        assert np.all(np.isfinite(obs))


def check_final(state, n):
    ret = state.returns()
    scores = state.scores()
    assert math.isclose(sum(ret), 1.0)
    d = state.to_dict()
    keyed = [(s["total"], s["tiebreak"]) for s in scores]
    best = max(keyed)
    winners = [i for i, k in enumerate(keyed) if k == best]
    for i in range(n):
        assert math.isclose(ret[i], 1.0 / len(winners) if i in winners else 0.0), (ret, scores)
    for s, b in zip(scores, d["boards"]):
        # §7.4: total = chips + printed building VP + bonus; §7.5 tie-break = doubloons + goods
        assert s["vp_chips"] == b["vp_chips"]
        assert s["building_vp"] == sum(PRINTED_VP[x] for x in b["buildings"])
        assert s["total"] == s["vp_chips"] + s["building_vp"] + s["bonus_vp"]
        assert s["tiebreak"] == b["doubloons"] + sum(b["goods"].values())
        assert s["bonus_vp"] >= 0


def full_game(n, seed, node_checks=True):
    game = caribsim.load_game("puerto_rico", players=n)
    state = game.new_initial_state(seed=seed)
    rng = random.Random(seed)
    checker = GameChecker(state, n)

    def on_step(a, s):
        checker(a, s)
        if node_checks:
            check_node(s, n, game)
        else:
            assert s.legal_actions() == sorted(set(s.legal_actions()))

    if node_checks:
        check_node(state, n, game)
    play_random(state, rng, on_step=on_step)
    check_final(state, n)
    return state, checker


# --- Python-driven games with per-step checks --------------------------------------------------------
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_s7_1_python_games_end_conserve_and_trigger_correctly(n):
    """Random games: end, conserve every component at every step, §7.1 triggers and §7.2 timing."""
    triggers = set()
    for seed in range(75):
        state, checker = full_game(n, seed, node_checks=False)
        triggers |= checker.triggers_seen
        assert not state.to_dict()["end_triggered"] or state.is_terminal()
    # random play must reach at least the colonist or the VP trigger in 75 games
    assert triggers & {"colonists", "vp"}, triggers


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_node_properties_chance_legal_mask_observation(n):
    """legal_actions sorted/unique = mask, chance outcomes = stack counts / total, observations finite."""
    for seed in range(4):
        full_game(n, 1000 + seed, node_checks=True)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_E2_chance_outcomes_are_stack_counts_over_total(n):
    game = caribsim.load_game("puerto_rico", players=n)
    nodes = 0
    for seed in range(3):
        state = game.new_initial_state(seed=seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            if state.is_chance_node():
                check_chance(state)
                nodes += 1
                state.resolve_chance()
            else:
                state.apply_action(rng.choice(state.legal_actions()))
    assert nodes > 3 * (n + 1)


def test_E2_resolve_chance_samples_by_stack_counts():
    """Empirical frequencies of the first draw match stack counts / total (independent of chance_outcomes)."""
    game = caribsim.load_game("puerto_rico", players=4)
    counts = game.new_initial_state(seed=0).to_dict()["plantations"]["stack"]
    total = sum(counts.values())
    trials = 6000
    freq = dict.fromkeys(GOODS, 0)
    for seed in range(trials):
        a = game.new_initial_state(seed=seed).resolve_chance()
        freq[GOODS[a - 138]] += 1
    for g in GOODS:
        p = counts[g] / total
        sigma = math.sqrt(trials * p * (1 - p))
        assert abs(freq[g] - trials * p) < 4.5 * sigma, (g, freq, counts)


@settings(
    max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(n=st.sampled_from(PLAYER_COUNTS), seed=st.integers(0, 2**64 - 1))
def test_hypothesis_random_games_conserve(n, seed):
    full_game(n, seed, node_checks=False)


def test_initial_state_matches_setup_s1_3():
    for n in PLAYER_COUNTS:
        game = caribsim.load_game("puerto_rico", players=n)
        assert game.cargo_ship_capacities() == SHIPS[n]
        state = game.new_initial_state(seed=5)
        d = state.to_dict()
        check_invariants(d, n)
        assert state.is_chance_node() and d["plantations"]["to_draw"] == n + 1
        assert d["vp_chips"] == VP_TOTAL[n] and d["quarries"] == QUARRIES[n]
        assert d["colonists"] == {"supply": COLONISTS_TOTAL[n] - n, "ship": n}


# --- returns of random_playouts over thousands of games ------------------------------------------------
def check_playout_result(res, n, n_games):
    assert res.returns.shape == (n_games, n) and res.scores.shape == (n_games, n)
    assert res.lengths.shape == (n_games,)
    assert np.all(res.lengths > 0) and np.all(res.lengths < 5000)
    assert res.decisions == int(res.lengths.sum())
    assert np.allclose(res.returns.sum(axis=1), 1.0)
    assert np.all(res.scores >= 0)
    # winners have the max total (tie-break not in the result: every winner has the max total)
    best = res.scores.max(axis=1, keepdims=True)
    assert np.all(res.returns[res.scores < best] == 0)
    winners = (res.returns > 0).sum(axis=1)
    assert np.allclose(res.returns.max(axis=1), 1.0 / winners)
    unique_best = (res.scores == best).sum(axis=1) == 1
    assert np.all(res.returns[unique_best].max(axis=1) == 1.0)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_random_playouts_volume(n):
    game = caribsim.load_game("puerto_rico", players=n)
    state = game.new_initial_state(seed=n)
    before = state.to_dict()
    res = caribsim.random_playouts(state, 4000, seed=11)
    check_playout_result(res, n, 4000)
    assert state.to_dict() == before, "random_playouts must not change the state"
    # also from mid-game positions of every phase
    rng = random.Random(n)
    mid = state.clone()
    for _ in range(6):
        for _ in range(rng.randrange(10, 60)):
            if mid.is_terminal():
                break
            if mid.is_chance_node():
                mid.resolve_chance()
            else:
                mid.apply_action(rng.choice(mid.legal_actions()))
        if mid.is_terminal():
            break
        check_playout_result(caribsim.random_playouts(mid, 300, seed=rng.randrange(2**64)), n, 300)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_random_playouts_deterministic_and_thread_independent(n):
    game = caribsim.load_game("puerto_rico", players=n)
    state = game.new_initial_state(seed=3)
    a = caribsim.random_playouts(state, 600, seed=42, threads=1)
    b = caribsim.random_playouts(state, 600, seed=42, threads=1)
    c = caribsim.random_playouts(state, 600, seed=42, threads=2)
    d = caribsim.random_playouts(state, 600, seed=42, threads=3)
    for other in (b, c, d):
        assert np.array_equal(a.returns, other.returns)
        assert np.array_equal(a.scores, other.scores)
        assert np.array_equal(a.lengths, other.lengths)
        assert a.decisions == other.decisions
    e = caribsim.random_playouts(state, 600, seed=43, threads=1)
    assert not np.array_equal(a.lengths, e.lengths), "different seeds should give different games"
    # game i depends only on (seed, i): a prefix of a larger batch is the smaller batch
    f = caribsim.random_playouts(state, 100, seed=42, threads=2)
    assert np.array_equal(a.lengths[:100], f.lengths) and np.array_equal(a.scores[:100], f.scores)


# --- determinism and round trips --------------------------------------------------------------------
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_same_seed_and_actions_same_game(n):
    game = caribsim.load_game("puerto_rico", players=n)
    runs = []
    for _ in range(2):
        state = game.new_initial_state(seed=77)
        rng = random.Random(5)
        trace = []
        play_random(state, rng, on_step=lambda a, s, trace=trace: trace.append(s.serialize()))
        runs.append((trace, state.returns(), state.scores()))
    assert runs[0] == runs[1]
    # replaying the history (chance outcomes applied explicitly) reproduces the game except the RNG
    hist = state.history()
    replay = game.new_initial_state(seed=123456)
    for a in hist:
        replay.apply_action(a)
    d1, d2 = replay.to_dict(), state.to_dict()
    d1.pop("rng"), d2.pop("rng")
    assert d1 == d2
    assert replay.returns() == state.returns() and replay.scores() == state.scores()


def _round_trips(game, state):
    return {
        "clone": state.clone(),
        "dict": game.state_from_dict(state.to_dict()),
        "serialize": game.deserialize_state(state.serialize()),
        "pickle": pickle.loads(pickle.dumps(state)),
    }


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_round_trips_mid_game_continue_identically(n):
    game = caribsim.load_game("puerto_rico", players=n)
    rng = random.Random(n * 31)
    state = game.new_initial_state(seed=n)
    checkpoints = 0
    while not state.is_terminal():
        if rng.random() < 0.08:
            checkpoints += 1
            copies_ = _round_trips(game, state)
            ref_dict = state.to_dict()
            for name, c in copies_.items():
                assert c.to_dict() == ref_dict, name
                assert c == state, name
                assert c.legal_actions() == state.legal_actions(), name
                assert c.current_player() == state.current_player(), name
                assert c.history() == state.history(), name
                assert str(c) == str(state), name
                assert np.array_equal(c.observation_tensor(0), state.observation_tensor(0)), name
            # continue the original and every copy with the same decisions (chance from each own RNG)
            seed = rng.randrange(2**32)
            ends = {}
            for name, c in [*copies_.items(), ("original", state.clone())]:
                r = random.Random(seed)
                trace = []
                play_random(c, r, on_step=lambda a, s, trace=trace: trace.append(a))
                ends[name] = (trace, c.serialize(), c.returns(), c.scores())
            first = ends.pop("original")
            for name, e in ends.items():
                assert e == first, f"{name} copy diverged from the original"
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    assert checkpoints >= 3
    # terminal states round-trip too
    for name, c in _round_trips(game, state).items():
        assert (
            c.to_dict() == state.to_dict() and c.is_terminal() and c.returns() == state.returns()
        ), name


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_clone_is_independent(n):
    game = caribsim.load_game("puerto_rico", players=n)
    rng = random.Random(9)
    state = game.new_initial_state(seed=9)
    for _ in range(80):
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    before = state.to_dict()
    c = state.clone()
    play_random(c, random.Random(1))
    assert state.to_dict() == before, "playing the clone changed the origin"
    c2 = state.clone()
    c2_before = c2.to_dict()
    play_random(state, random.Random(2))
    assert c2.to_dict() == c2_before, "playing the origin changed the clone"
    ch = game.state_from_dict(before)
    child = ch.child(ch.legal_actions()[0])
    assert ch.to_dict() == before and child.history() == before["history"] + [ch.legal_actions()[0]]
