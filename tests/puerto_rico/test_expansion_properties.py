"""Property tests of the base game rerun with Expansion I on (all player counts, random drafts):
termination, conservation of every component (forests and removed plantations included),
end timing, determinism, round trips and per-node API properties.

Reference numbers are written out here (§1.3, §1.6.2, §8.1) independently of the engine.
"""

from __future__ import annotations

import csv
import pickle
import random
from pathlib import Path

import numpy as np
import pytest

import caribsim

PLAYER_COUNTS = (2, 3, 4, 5)
GOODS = ("corn", "indigo", "sugar", "tobacco", "coffee")
COLONISTS_TOTAL = {2: 42, 3: 58, 4: 79, 5: 100}
VP_TOTAL = {2: 65, 3: 75, 4: 100, 5: 122}
QUARRIES = {2: 5, 3: 8, 4: 8, 5: 8}
PLANTATIONS = {2: dict(corn=7, indigo=9, sugar=8, tobacco=6, coffee=5)}
PLANTATIONS.update({n: dict(corn=10, indigo=12, sugar=11, tobacco=9, coffee=8) for n in (3, 4, 5)})
GOODS_TOTAL = {2: dict(corn=8, indigo=9, sugar=9, tobacco=7, coffee=7)}
GOODS_TOTAL.update({n: dict(corn=10, indigo=11, sugar=11, tobacco=9, coffee=9) for n in (3, 4, 5)})
SELECTIONS_PER_ROUND = {2: 6, 3: 3, 4: 4, 5: 5}
FORESTS = 12

_RULES_CSV = Path("/work/shared/rules/data/puerto_rico_buildings.csv")
if not _RULES_CSV.exists():
    _RULES_CSV = Path(caribsim.__file__).parent / "data" / "puerto_rico_buildings.csv"
with open(_RULES_CSV, newline="") as f:
    ROWS = {r["id"]: r for r in csv.DictReader(f)}
CIRCLES = {b: int(r["circles"]) for b, r in ROWS.items()}
SPACES = {b: int(r["city_spaces"]) for b, r in ROWS.items()}
VIOLET = {b for b, r in ROWS.items() if r["kind"].endswith("violet")}


def copies(b, n, violet_in_play, all31=False):
    if b in VIOLET:
        if b not in violet_in_play:
            return 0
        if all31:
            return 1
    return int(ROWS[b]["copies_2p" if n == 2 else "copies_3to5p"])


def check_invariants(d, n, all31=False):
    boards = d["boards"]
    e = d["expansion"]
    col = d["colonists"]["supply"] + d["colonists"]["ship"] + d["turn"]["to_place"]
    for b in boards:
        col += b["san_juan"] + sum(b["buildings"].values())
        col += sum(v["colonists"] for k, v in b["island"].items() if k != "forest")
    assert col == COLONISTS_TOTAL[n]
    for g in GOODS:
        tot = d["goods"][g] + d["trading_house"][g] + sum(b["goods"][g] for b in boards)
        tot += sum(s["load"] for s in d["cargo_ships"] if s["good"] == g)
        assert tot == GOODS_TOTAL[n][g]
        pl = d["plantations"]
        tot = pl["face_up"][g] + pl["stack"][g] + pl["discard"][g] + e["removed_plantations"][g]
        tot += sum(b["island"][g]["tiles"] for b in boards)
        assert tot == PLANTATIONS[n][g], g
        assert min(pl["face_up"][g], pl["stack"][g], pl["discard"][g], d["goods"][g]) >= 0
    forests = sum(b["island"]["forest"]["tiles"] for b in boards)
    assert e["forests"] + forests == FORESTS
    assert sum(e["removed_plantations"].values()) == forests  # one removed per forest (§8.5.2)
    assert d["quarries"] + sum(b["island"]["quarry"]["tiles"] for b in boards) == QUARRIES[n]
    in_play = set(e["violet_in_play"])
    for x in ROWS:
        owners = sum(1 for b in boards if x in b["buildings"])
        assert owners <= 1 or x not in VIOLET or not all31
        assert d["buildings"][x] + owners == copies(x, n, in_play, all31), x
    held = sum(b["vp_chips"] for b in boards)
    if d["vp_chips"] > 0:
        assert d["vp_chips"] + held == VP_TOTAL[n]
    else:
        assert held >= VP_TOTAL[n]
    for b in boards:
        assert sum(v["tiles"] for v in b["island"].values()) <= 12
        assert sum(SPACES[x] for x in b["buildings"]) <= 12
        for x, w in b["buildings"].items():
            assert 0 <= w <= CIRCLES[x]
        assert b["doubloons"] >= 0 and b["san_juan"] >= 0
        assert min(b["goods"].values()) >= 0


def play_checked(game, seed, all31=False):
    n = game.num_players()
    st = game.new_initial_state(seed=seed)
    rng = random.Random(seed)
    selections, trigger_at, steps = 0, None, 0
    prev = st.to_dict()
    while not st.is_terminal():
        if st.is_chance_node():
            st.resolve_chance()
        else:
            legal = st.legal_actions()
            assert legal == sorted(legal) and len(set(legal)) == len(legal) and legal
            mask = st.legal_actions_mask()
            assert list(np.flatnonzero(mask)) == legal
            a = rng.choice(legal)
            if st.step_name() == "role" and a < 8:  # (a guest move is not a selection)
                selections += 1
            st.apply_action(a)
        steps += 1
        assert steps < 40000, "the game did not end"
        cur = st.to_dict()
        check_invariants(cur, n, all31)
        for pb, cb in zip(prev["boards"], cur["boards"]):  # tiles and buildings never leave
            for k in pb["island"]:
                assert cb["island"][k]["tiles"] >= pb["island"][k]["tiles"]
            assert set(pb["buildings"]) <= set(cb["buildings"])
        if prev["end_triggered"] and cur["step"] != "terminal":
            assert cur["end_triggered"]  # a trigger stays fired (OPEN-17)
        if (cur["end_triggered"] or cur["step"] == "terminal") and trigger_at is None:
            trigger_at = selections
        if steps % 37 == 0:
            assert game.state_from_dict(cur) == st
        prev = cur
    per = SELECTIONS_PER_ROUND[n]
    assert selections % per == 0
    assert selections == ((trigger_at - 1) // per + 1) * per  # §7.2: the trigger's round completes
    r = st.returns()
    assert abs(sum(r) - 1.0) < 1e-9
    return st


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_random_draft_games_conserve_everything_and_end_properly(players):
    game = caribsim.load_game("puerto_rico", players=players, expansion=True)
    for seed in range(4):
        st = play_checked(game, 100 + seed)
        d = st.to_dict()
        assert len(d["expansion"]["violet_in_play"]) == 17


@pytest.mark.parametrize("players", (2, 5))
def test_all_31_and_all_colonists_variants_conserve(players):
    game = caribsim.load_game("puerto_rico", players=players, expansion=True, all_31_buildings=True)
    for seed in range(2):
        play_checked(game, 200 + seed, all31=True)
    game = caribsim.load_game(
        "puerto_rico", players=players, expansion=True, all_colonists_and_vp=True
    )
    st = game.new_initial_state(seed=9)
    r = caribsim.random_playouts(st, 50, seed=1)
    assert (r.lengths > 0).all()


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_playouts_terminate_and_are_deterministic(players):
    game = caribsim.load_game("puerto_rico", players=players, expansion=True)
    st = game.new_initial_state(seed=players)
    a = caribsim.random_playouts(st, 400, seed=11, threads=1)
    b = caribsim.random_playouts(st, 400, seed=11, threads=2)
    assert np.array_equal(a.returns, b.returns) and np.array_equal(a.scores, b.scores)
    assert np.array_equal(a.lengths, b.lengths)
    assert np.allclose(a.returns.sum(axis=1), 1.0)
    assert (a.lengths >= 17).all()  # the draft alone is 17 decisions
    c = caribsim.random_playouts(st, 400, seed=12)
    assert not np.array_equal(a.lengths, c.lengths)


def test_same_seed_same_game_and_clone_independence():
    game = caribsim.load_game("puerto_rico", players=4, expansion=True)

    def run(seed):
        st = game.new_initial_state(seed=seed)
        rng = random.Random(seed)
        while not st.is_terminal():
            if st.is_chance_node():
                st.resolve_chance()
            else:
                st.apply_action(rng.choice(st.legal_actions()))
        return st.history(), st.scores()

    assert run(5) == run(5)
    st = game.new_initial_state(seed=1)
    while st.is_chance_node():
        st.resolve_chance()
    c = st.clone()
    c.apply_action(c.legal_actions()[0])
    assert c != st and st.step_name() == "draft"
    assert pickle.loads(pickle.dumps(c)) == c


def test_observation_covers_the_expansion_state():
    """The observation of an expansion game (longer than the base one) is finite, seat-relative
    and changes with expansion-only state (the draft)."""
    game = caribsim.load_game("puerto_rico", players=3, expansion=True)
    st = game.new_initial_state(seed=2)
    while st.is_chance_node():
        st.resolve_chance()
    obs = st.observation_tensor(0)
    assert obs.shape == game.observation_tensor_shape() and np.isfinite(obs).all()
    buf = np.zeros(game.observation_tensor_shape(), dtype=np.float32)
    st.write_observation(buf, 1)
    assert np.isfinite(buf).all()
    assert not np.array_equal(buf, obs)  # seat-relative
    c = st.clone()
    c.apply_action(c.legal_actions()[0])  # a draft pick: expansion-only state
    assert not np.array_equal(c.observation_tensor(0), obs)
