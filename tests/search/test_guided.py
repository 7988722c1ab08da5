"""Guided search (caribsim.search.guided, docs/search.md "Guided search"): PUCT and Gumbel
roots over a batched evaluator and the C rollout evaluator. Known best moves, priors and
values steering the search, Sequential Halving and the improved policy, determinism with
batching, one batch against separate runs, hidden information, bad evaluator outputs,
bad options, threads and memory."""

import contextlib
import gc
import math
import os
import random
import threading

import numpy as np
import pytest
from cuba_scenario import act as cuba_act
from cuba_scenario import edit, empty_board, start, to_parliament
from test_search import LARGE, captain_blocking_position, final_build_position

import caribsim
import caribsim._game
from caribsim.search import _guided, guided

ROLLOUT = guided.RolloutEvaluator()


def opening(players=3, seed=1, game="puerto_rico", steps=0):
    """A decision node of `game` after `steps` random decisions."""
    s = caribsim.load_game(game, players=players).new_initial_state(seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        while s.is_chance_node():
            s.resolve_chance()
        s.apply_action(rng.choice(s.legal_actions()))
    while s.is_chance_node():
        s.resolve_chance()
    return s


class HashEvaluator:
    """A deterministic evaluator whose output for a row depends on that row only (float64
    row sums: no BLAS blocking that could depend on the batch size): logits and values
    vary with the observation, so different leaves are told different things."""

    def __init__(self, players):
        self.players = players
        self.calls = 0
        self.leaves = 0

    def __call__(self, obs, mask):
        self.calls += 1
        self.leaves += len(obs)
        w = np.linspace(0.05, 1.0, obs.shape[1])
        s = (obs.astype(np.float64) * w).sum(axis=1)
        logits = 2.0 * np.sin(np.outer(s, np.arange(1, mask.shape[1] + 1) * 0.37))
        values = 0.5 + 0.45 * np.sin(s[:, None] * 1.3 + np.arange(self.players))
        return logits.astype(np.float32), values


# --- known best moves with the C rollout evaluator --------------------------------------


@pytest.mark.parametrize("gumbel", [False, True])
def test_rollout_evaluator_finds_the_captain_block(gumbel):
    st = captain_blocking_position()
    r = guided.search(st, ROLLOUT, simulations=1500, gumbel=gumbel, seed=0)
    assert st.action_to_string(r.action) == "ship corn on 6"
    assert r.q[r.action] > 0.99
    others = [a for a in st.legal_actions() if a != r.action]
    assert all(r.q[a] < 0.9 for a in others if r.visits[a] > 20)


@pytest.mark.parametrize("gumbel", [False, True])
def test_rollout_evaluator_finds_the_last_round_builder(gumbel):
    st = final_build_position()
    r = guided.search(st, ROLLOUT, simulations=2000, gumbel=gumbel, seed=0)
    assert st.action_to_string(r.action) == "role builder"
    st.apply_action(r.action)
    assert st.step_name() == "build" and st.current_player() == 0
    r = guided.search(st, ROLLOUT, simulations=2000, gumbel=gumbel, seed=0)
    assert st.action_to_string(r.action) in LARGE
    st.apply_action(r.action)
    while not st.is_terminal():
        st.apply_action(st.legal_actions()[0])
    assert st.returns() == [1.0, 0.0]


def test_rollout_evaluator_statistics():
    st = opening(3)
    r = guided.search(st, guided.RolloutEvaluator(rollouts=2), simulations=300, seed=0)
    legal = st.legal_actions()
    assert r.simulations == 300 == r.visits.sum()
    assert set(np.flatnonzero(r.visits)) <= set(legal)
    assert (
        abs(r.policy.sum() - 1) < 1e-12
        and r.policy[[a for a in range(len(r.policy)) if a not in legal]].sum() == 0
    )
    assert (
        np.all((r.value >= 0) & (r.value <= 1)) and abs(r.value.sum() - 1) < 1e-9
    )  # constant-sum returns
    visited = r.visits > 0
    assert np.all(np.isnan(r.q[~visited])) and np.all((r.q[visited] >= 0) & (r.q[visited] <= 1))
    assert r.action == max(np.flatnonzero(visited), key=lambda a: (r.visits[a], r.q[a], -a))
    assert r.nodes > 300


# --- priors and values steer the search -----------------------------------------------------


class PriorOn:
    """A prior of ~1 on one action wherever it is legal; values 0.5."""

    def __init__(self, action, players, logit=12.0):
        self.action, self.players, self.logit = action, players, logit

    def __call__(self, obs, mask):
        logits = np.zeros(mask.shape, dtype=np.float32)
        logits[:, self.action] = self.logit
        return logits, np.full((len(obs), self.players), 0.5)


def test_priors_steer_the_visits():
    st = opening(3)
    uniform = guided.search(st, guided.UniformEvaluator(3), simulations=48, seed=0)
    target = max(st.legal_actions(), key=lambda a: (-uniform.visits[a], a))  # the least favoured
    r = guided.search(st, PriorOn(target, 3), simulations=48, seed=0)
    assert r.visits[target] >= 0.8 * 48 and r.action == target
    assert uniform.visits[target] < 0.5 * 48


class WinAfter:
    """Value 1 for the root player (0 for the others) at the leaf whose observation is the
    one after `action` at the root; 1/P for everybody elsewhere. Zero logits."""

    def __init__(self, state, action):
        child = state.clone()
        child.apply_action(action)
        self.players = state.num_players()
        self.seat = state.current_player()
        self.target = np.asarray(child.observation_tensor(self.seat), dtype=np.float32)
        self.hits = 0

    def __call__(self, obs, mask):
        values = np.full((len(obs), self.players), 1.0 / self.players)
        hit = np.all(obs == self.target, axis=1)
        self.hits += int(hit.sum())
        values[hit] = 0.0
        values[hit, self.seat] = 1.0
        return np.zeros(mask.shape, dtype=np.float32), values


@pytest.mark.parametrize("gumbel", [False, True])
def test_values_replace_rollouts(gumbel):
    st = opening(3)
    plain = guided.search(st, guided.UniformEvaluator(3), simulations=64, gumbel=gumbel, seed=0)
    legal = st.legal_actions()
    target = next(a for a in reversed(legal) if a != plain.action)
    ev = WinAfter(st, target)
    assert ev.target.shape == (st.observation_tensor(0).__len__(),)
    r = guided.search(st, ev, simulations=64, gumbel=gumbel, seed=0)
    assert ev.hits == 1  # the child is evaluated once, then expanded
    assert r.action == target
    assert r.q[target] == max(r.q[a] for a in legal if r.visits[a] > 0)


# --- the mixed value: evaluator and random playouts (mix=) -----------------------------------


class ConstantValue:
    """Zero logits and one fixed value vector at every leaf (how far it is from the truth
    shows whether the search listens to it)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)

    def __call__(self, obs, mask):
        return np.zeros(mask.shape, dtype=np.float32), np.tile(self.values, (len(obs), 1))


def test_mix_one_takes_the_values_from_the_playouts_alone():
    st = captain_blocking_position()
    # the evaluator says seat 1 always wins: with mix=1 nobody listens to it
    liar = ConstantValue([0.0, 1.0])
    uniform = guided.UniformEvaluator(st.num_players())
    a = guided.search(st, liar, simulations=1500, mix=1.0, seed=0)
    b = guided.search(st, uniform, simulations=1500, mix=1.0, seed=0)
    assert np.array_equal(a.visits, b.visits) and np.array_equal(a.q, b.q, equal_nan=True)
    assert st.action_to_string(a.action) == "ship corn on 6" and a.q[a.action] > 0.99
    # with mix=0 the liar is heard: seat 0's moves look lost until the game's end is reached
    heard = guided.search(st, liar, simulations=1500, mix=0.0, seed=0)
    assert not np.array_equal(heard.visits, a.visits)


def test_mix_weighs_the_evaluator_and_the_playouts():
    st = opening(3)
    players = st.num_players()
    ev = ConstantValue([0.5] * players)
    runs = {m: guided.search(st, ev, simulations=200, mix=m, seed=3) for m in (0.0, 0.25, 1.0)}
    assert np.all(runs[0.0].q[runs[0.0].visits > 0] == 0.5)
    q = runs[0.25].q[runs[0.25].visits > 0]
    # q = 0.75 * 0.5 + 0.25 * (the playouts' mean), so within [0.375, 0.625] and not all 0.5
    assert np.all((q >= 0.375 - 1e-12) & (q <= 0.625 + 1e-12)) and np.any(np.abs(q - 0.5) > 1e-3)
    full = runs[1.0].q[runs[1.0].visits > 0]
    assert np.any(full < 0.375) or np.any(full > 0.625)  # the playouts alone spread wider
    # more playouts per leaf: other (averaged) values, still in [0, 1]
    many = guided.search(st, ev, simulations=200, mix=1.0, mix_rollouts=4, seed=3)
    assert not np.array_equal(many.q, runs[1.0].q, equal_nan=True)
    assert np.all((many.q[many.visits > 0] >= 0) & (many.q[many.visits > 0] <= 1))


def test_mixed_batches_are_deterministic_and_equal_separate_runs():
    states = batch_states()
    ev = HashEvaluator(3)
    seeds = [5 * i + 1 for i in range(len(states))]
    bs = guided.BatchSearch(ev, simulations=120, leaves_per_tree=4, mix=0.5, seed=0)
    a, b = bs.run(states, seeds=seeds), bs.run(states, seeds=seeds)
    for st, seed, x, y in zip(states, seeds, a, b):
        assert x.action == y.action and np.array_equal(x.visits, y.visits)
        alone = guided.search(st, ev, simulations=120, leaves_per_tree=4, mix=0.5, seed=seed)
        assert np.array_equal(alone.visits, x.visits) and np.array_equal(
            alone.q, x.q, equal_nan=True
        )
    plain = guided.BatchSearch(ev, simulations=120, leaves_per_tree=4, seed=0).run(
        states, seeds=seeds
    )
    assert any(not np.array_equal(x.q, z.q, equal_nan=True) for x, z in zip(a, plain))


# --- Gumbel ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "position, sims", [(captain_blocking_position, 400), (final_build_position, 800)]
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gumbel_picks_the_argmax_of_the_improved_policy(position, sims, seed):
    st = position()
    legal = st.legal_actions()
    r = guided.search(
        st, ROLLOUT, simulations=sims, gumbel=True, max_considered=len(legal), seed=seed
    )
    assert r.action == int(np.argmax(r.policy))
    assert abs(r.policy[legal].sum() - 1.0) < 1e-9
    assert r.policy.sum() == pytest.approx(1.0) and np.all(np.delete(r.policy, legal) == 0)
    assert np.all(r.policy[legal] > 0)
    assert r.visits.sum() == sims


def test_gumbel_considers_m_actions_and_halves():
    st = opening(3)  # 6 roles
    assert len(st.legal_actions()) == 6
    r = guided.search(st, ROLLOUT, simulations=200, gumbel=True, max_considered=2, seed=4)
    assert np.count_nonzero(r.visits) == 2 and r.visits.sum() == 200
    r = guided.search(st, ROLLOUT, simulations=200, gumbel=True, max_considered=16, seed=4)
    counts = sorted(r.visits[st.legal_actions()])
    # Sequential Halving over 6 actions and 200 simulations, mctx's schedule: each action of
    # phase 1 visited 11 times, the 3 of phase 2 11 + 22, the last 2 the rest (67 each)
    assert counts == sorted(schedule_visits(6, 200))
    assert np.count_nonzero(r.policy) == 6  # the improved policy covers every legal move


def test_gumbel_interior_rules():
    st = opening(3)
    ev = HashEvaluator(3)
    for interior in ("gumbel", "puct"):
        r = guided.search(st, ev, simulations=100, gumbel=True, interior=interior, seed=0)
        assert r.action in st.legal_actions() and r.visits.sum() == 100
    a = guided.search(st, ev, simulations=100, gumbel=True, interior="gumbel", seed=0)
    b = guided.search(st, ev, simulations=100, gumbel=True, interior="puct", seed=0)
    assert a.nodes != b.nodes or not np.array_equal(a.visits, b.visits)


# --- PUCT options --------------------------------------------------------------------------


def test_fpu_reduction_narrows_the_search():
    st = opening(3)
    ev = guided.UniformEvaluator(3)
    wide = guided.search(st, ev, simulations=16, fpu_reduction=0.0, seed=0)
    narrow = guided.search(st, ev, simulations=16, fpu_reduction=1.0, seed=0)
    assert np.count_nonzero(wide.visits) == 6
    assert np.count_nonzero(narrow.visits) < np.count_nonzero(wide.visits)


def test_dirichlet_noise_and_temperature_follow_the_seed():
    st = opening(3)
    ev = HashEvaluator(3)
    plain = guided.search(st, ev, simulations=100, seed=0)
    noisy = [guided.search(st, ev, simulations=100, dirichlet_alpha=0.3, seed=s) for s in (0, 0, 1)]
    assert np.array_equal(noisy[0].visits, noisy[1].visits)
    assert not np.array_equal(noisy[0].visits, plain.visits) or not np.array_equal(
        noisy[2].visits, plain.visits
    )
    assert not np.array_equal(noisy[0].visits, noisy[2].visits)
    none = guided.search(
        st, ev, simulations=100, dirichlet_alpha=0.3, dirichlet_fraction=0.0, seed=0
    )
    assert np.array_equal(none.visits, plain.visits)
    picks = {
        guided.search(st, ev, simulations=60, temperature=5.0, seed=s).action for s in range(12)
    }
    assert len(picks) > 1 and picks <= set(st.legal_actions())
    a = guided.search(st, ev, simulations=60, temperature=5.0, seed=3)
    b = guided.search(st, ev, simulations=60, temperature=5.0, seed=3)
    assert a.action == b.action
    assert np.array_equal(a.visits, guided.search(st, ev, simulations=60, seed=3).visits)


# --- batching and determinism ------------------------------------------------------------------


def batch_states():
    return [opening(3, seed=s, steps=s * 7) for s in range(5)] + [
        opening(3, seed=9, steps=40),
        opening(3, seed=10, steps=3),
    ]


@pytest.mark.parametrize("gumbel", [False, True])
def test_batched_runs_are_deterministic(gumbel):
    states = batch_states()
    ev = HashEvaluator(3)
    one = guided.BatchSearch(ev, simulations=120, leaves_per_tree=4, gumbel=gumbel, seed=7)
    a = one.run(states)
    b = one.run(states)
    c = guided.BatchSearch(ev, simulations=120, leaves_per_tree=4, gumbel=gumbel, seed=8).run(
        states
    )
    for x, y in zip(a, b):
        assert x.action == y.action and np.array_equal(x.visits, y.visits)
        assert np.array_equal(x.policy, y.policy) and np.array_equal(x.value, y.value)
        assert np.array_equal(x.q, y.q, equal_nan=True) and x.nodes == y.nodes
    assert any(not np.array_equal(x.visits, z.visits) for x, z in zip(a, c))


@pytest.mark.parametrize("gumbel", [False, True])
def test_one_batch_gives_what_separate_runs_give(gumbel):
    states = batch_states()
    ev = HashEvaluator(3)
    seeds = [11 * i + 5 for i in range(len(states))]
    bs = guided.BatchSearch(ev, simulations=150, leaves_per_tree=6, gumbel=gumbel)
    batch = bs.run(states, seeds=seeds)
    calls = ev.calls
    for st, seed, r in zip(states, seeds, batch):
        alone = guided.search(st, ev, simulations=150, leaves_per_tree=6, gumbel=gumbel, seed=seed)
        assert alone.action == r.action and np.array_equal(alone.visits, r.visits)
        assert np.array_equal(alone.policy, r.policy) and alone.nodes == r.nodes
    # batching is real: one call served many trees
    assert 3 * calls < ev.calls - calls  # far fewer calls than the separate runs made
    # and the default seeds are seed + i
    default = guided.BatchSearch(ev, simulations=150, leaves_per_tree=6, gumbel=gumbel, seed=5).run(
        states
    )
    alone = guided.search(states[2], ev, simulations=150, leaves_per_tree=6, gumbel=gumbel, seed=7)
    assert np.array_equal(default[2].visits, alone.visits)


def test_leaves_per_tree_batches_the_leaves_of_one_tree():
    st = opening(3)
    ev = Recorder(3)
    r = guided.search(st, ev, simulations=256, leaves_per_tree=16, seed=0)
    assert r.simulations == 256 == r.visits.sum()
    sizes = [len(obs) for obs, _ in ev.batches]
    # the root alone, then at most 16 leaves per call; no path ends the game this early
    assert sizes[0] == 1 and max(sizes) == 16 and sum(sizes) == 257
    assert len(sizes) < 40  # duplicates (paths to a waiting leaf) are few


def test_a_vector_game_is_searched_like_its_states():
    vg = caribsim.VectorGame("puerto_rico", n=6, players=3, seed=2)
    vg.step(vg.sample_legal())
    states = [vg.get_state(i) for i in range(len(vg))]
    bs = guided.BatchSearch(HashEvaluator(3), simulations=40, leaves_per_tree=4, seed=1)
    a, b = bs.run(vg), bs.run(states)
    assert len(a) == 6
    for x, y in zip(a, b):
        assert x.action == y.action and np.array_equal(x.visits, y.visits)


def test_terminal_leaves_need_no_evaluation():
    """Late in the game many paths end: they are backed up with the true returns."""
    st = captain_blocking_position()
    ev = HashEvaluator(2)
    r = guided.search(st, ev, simulations=300, leaves_per_tree=4, seed=0)
    assert r.visits.sum() == 300
    assert ev.leaves < 300  # fewer evaluations than simulations


# --- hidden information -------------------------------------------------------------------------


class Recorder(HashEvaluator):
    def __init__(self, players):
        super().__init__(players)
        self.batches = []

    def __call__(self, obs, mask):
        self.batches.append((obs.copy(), mask.copy()))
        return super().__call__(obs, mask)


def cuba_bidding():
    """3p Cuba in the parliament: two seats have made their secret bids, the third bids."""
    _game, s = start(3)
    s = edit(s, lambda d: [empty_board(b) for b in d["boards"]])
    s = to_parliament(s, ["mayor", "worker", "foreman"])
    cuba_act(s, "bid 6", "bid 2")
    return s


def port_royal_position():
    return opening(3, seed=3, game="port_royal", steps=30)


@pytest.mark.parametrize("make", [cuba_bidding, port_royal_position])
def test_the_evaluator_sees_only_the_searching_players_view(make):
    st = make()
    seat = st.current_player()
    other = st.determinize(seat, seed=5)
    assert other.to_dict() != st.to_dict()  # hidden facts differ
    assert np.array_equal(other.observation_tensor(seat), st.observation_tensor(seat))
    runs = []
    for root in (st, other):
        ev = Recorder(3)
        r = guided.search(root, ev, simulations=120, leaves_per_tree=4, seed=3)
        assert r.action in root.legal_actions()
        runs.append(ev.batches)
    (obs_a, mask_a), (obs_b, mask_b) = runs[0][0], runs[1][0]
    assert np.array_equal(obs_a, obs_b) and np.array_equal(mask_a, mask_b)
    assert np.array_equal(obs_a[0], np.asarray(st.observation_tensor(seat), dtype=np.float32))
    # both games' determinisations draw the hidden facts from the public ones alone (Cuba's
    # bids; Port Royal's coin faces and draw pile from the multiset of unseen cards): the
    # whole search is the same from any state of the information set
    assert len(runs[0]) == len(runs[1])
    for (a, m), (b, n) in zip(*runs):
        assert np.array_equal(a, b) and np.array_equal(m, n)


@pytest.mark.parametrize("game", ["port_royal", "cuba"])
def test_hidden_information_games_search_with_an_evaluator(game):
    st = opening(3, game=game, seed=2, steps=12)
    for gumbel in (False, True):
        r = guided.BatchSearch(
            HashEvaluator(3), simulations=80, leaves_per_tree=4, gumbel=gumbel
        ).run([st, st])
        for x in r:
            assert x.action in st.legal_actions() and x.visits.sum() == 80
    r = guided.search(st, ROLLOUT, simulations=200, seed=0)
    assert r.action in st.legal_actions()


# --- bad evaluator outputs -----------------------------------------------------------------------


def _logits(mask):
    return np.zeros(mask.shape, dtype=np.float32)


def _values(obs, p=3, v=0.5):
    return np.full((len(obs), p), v)


def _nan_at_legal(obs, mask):
    lg = _logits(mask)
    lg[mask] = np.nan
    return lg, _values(obs)


def _bad(values_fn=None, logits_fn=None):
    def ev(obs, mask):
        return (
            _logits(mask) if logits_fn is None else logits_fn(obs, mask),
            _values(obs) if values_fn is None else values_fn(obs, mask),
        )

    return ev


def _boom(obs, mask):
    raise ZeroDivisionError("boom inside the evaluator")


BAD_OUTPUTS = [
    ("not a pair", lambda o, m: _logits(m), TypeError, "must return a pair"),
    ("three items", lambda o, m: (_logits(m), _values(o), 1), TypeError, "must return a pair"),
    (
        "logits shape",
        _bad(logits_fn=lambda o, m: np.zeros((len(o), 5), np.float32)),
        ValueError,
        "logits must have shape",
    ),
    (
        "values shape",
        _bad(values_fn=lambda o, m: np.zeros((len(o), 2))),
        ValueError,
        "values must have shape",
    ),
    (
        "values 1-d",
        _bad(values_fn=lambda o, m: np.zeros(len(o))),
        ValueError,
        "values must have shape",
    ),
    (
        "int logits",
        _bad(logits_fn=lambda o, m: np.zeros(m.shape, np.int64)),
        TypeError,
        "logits must be a float array",
    ),
    (
        "object values",
        _bad(values_fn=lambda o, m: np.array([[None] * 3] * len(o))),
        TypeError,
        "values must be a float array",
    ),
    ("nan logit", _nan_at_legal, ValueError, "logits must be finite at legal actions"),
    (
        "inf logit",
        _bad(logits_fn=lambda o, m: np.where(m, np.inf, 0).astype(np.float32)),
        ValueError,
        "must be finite at legal",
    ),
    (
        "nan value",
        _bad(values_fn=lambda o, m: _values(o, v=np.nan)),
        ValueError,
        "values must be finite and in [0, 1]",
    ),
    (
        "inf value",
        _bad(values_fn=lambda o, m: _values(o, v=np.inf)),
        ValueError,
        "values must be finite and in [0, 1]",
    ),
    ("value above 1", _bad(values_fn=lambda o, m: _values(o, v=1.5)), ValueError, "in [0, 1]"),
    ("value below 0", _bad(values_fn=lambda o, m: _values(o, v=-0.01)), ValueError, "in [0, 1]"),
    ("raises", _boom, ZeroDivisionError, "boom inside the evaluator"),
]


@pytest.mark.parametrize("name, bad, error, message", BAD_OUTPUTS, ids=[b[0] for b in BAD_OUTPUTS])
@pytest.mark.parametrize("fail_at", [1, 4])
def test_bad_evaluator_outputs_raise_and_leave_the_search_usable(
    name, bad, error, message, fail_at
):
    """The evaluator turns bad at its fail_at-th call (1: the roots; 4: mid-search); the
    error names what was wrong, and the next run gives what a fresh search gives."""
    good = HashEvaluator(3)
    state = {"calls": 0, "bad": True}

    def ev(obs, mask):
        state["calls"] += 1
        if state["bad"] and state["calls"] >= fail_at:
            return bad(obs, mask)
        return good(obs, mask)

    states = batch_states()[:3]
    bs = guided.BatchSearch(ev, simulations=60, leaves_per_tree=4, seed=2)
    with pytest.raises(error, match=__import__("re").escape(message)):
        bs.run(states)
    # the trees as the error left them: the step's leaves dropped, nothing half done
    audit = bs._engine.audit()
    assert audit["vloss"] == audit["pending"] == audit["inflight"] == audit["unbalanced"] == 0, (
        audit
    )
    assert audit["nodes"] >= 3
    state["bad"] = False
    again = bs.run(states)
    fresh = guided.BatchSearch(HashEvaluator(3), simulations=60, leaves_per_tree=4, seed=2).run(
        states
    )
    for x, y in zip(again, fresh):
        assert x.action == y.action and np.array_equal(x.visits, y.visits) and x.nodes == y.nodes
    assert bs._engine.audit()["unbalanced"] == 0


def test_a_finished_run_leaves_balanced_trees():
    for gumbel in (False, True):
        bs = guided.BatchSearch(HashEvaluator(3), simulations=200, leaves_per_tree=8, gumbel=gumbel)
        bs.run(batch_states())
        audit = bs._engine.audit()
        assert (
            audit["vloss"] == audit["pending"] == audit["inflight"] == audit["unbalanced"] == 0
        ), audit
        assert audit["nodes"] > 7 * 200


def test_illegal_entries_of_the_logits_are_ignored():
    st = opening(3)

    def ev(obs, mask):
        lg = np.where(mask, 0.0, -np.inf).astype(np.float64)  # masked logits, float64
        lg[~mask] = np.nan
        return lg, np.full((len(obs), 3), 0.25, dtype=np.float16)

    r = guided.search(st, ev, simulations=30, seed=0)
    assert r.visits.sum() == 30


# --- bad options and states -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"simulations": 0}, ValueError, "simulations"),
        ({"simulations": 2.5}, TypeError, "simulations"),
        ({"simulations": True}, TypeError, "simulations"),
        ({"leaves_per_tree": 0}, ValueError, "leaves_per_tree"),
        ({"leaves_per_tree": 5000}, ValueError, "leaves_per_tree"),
        ({"c_puct": -1}, ValueError, "c_puct"),
        ({"c_puct": float("nan")}, ValueError, "c_puct"),
        ({"c_puct": "1"}, TypeError, "c_puct"),
        ({"fpu_reduction": -0.1}, ValueError, "fpu_reduction"),
        ({"fpu_reduction": 2}, ValueError, "fpu_reduction"),
        ({"dirichlet_alpha": 0}, ValueError, "dirichlet_alpha"),
        ({"dirichlet_alpha": float("inf")}, ValueError, "dirichlet_alpha"),
        ({"dirichlet_fraction": 1.5}, ValueError, "dirichlet_fraction"),
        ({"temperature": -1}, ValueError, "temperature"),
        ({"gumbel": 1}, TypeError, "gumbel must be True or False"),
        (
            {"gumbel": True, "dirichlet_alpha": 0.3},
            ValueError,
            "dirichlet_alpha applies to the PUCT root",
        ),
        ({"gumbel": True, "temperature": 1.0}, ValueError, "temperature applies to the PUCT root"),
        ({"max_considered": 0}, ValueError, "max_considered"),
        ({"gumbel_scale": -1}, ValueError, "gumbel_scale"),
        ({"c_visit": float("nan")}, ValueError, "c_visit"),
        ({"c_scale": None}, TypeError, "c_scale"),
        ({"interior": "uct"}, ValueError, "interior must be one of"),
        ({"mix": -0.1}, ValueError, "mix"),
        ({"mix": 1.5}, ValueError, "mix"),
        ({"mix": float("nan")}, ValueError, "mix"),
        ({"mix": "0.5"}, TypeError, "mix"),
        ({"mix_rollouts": 0}, ValueError, "mix_rollouts"),
        ({"mix_rollouts": 1.0}, TypeError, "mix_rollouts"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 2**64}, ValueError, "seed"),
    ],
)
def test_bad_options_raise_clear_errors(options, error, message):
    st = opening(3)
    before = st.to_dict()
    with pytest.raises(error, match=message):
        guided.search(st, guided.UniformEvaluator(3), **options)
    with pytest.raises(error, match=message):
        guided.BatchSearch(guided.UniformEvaluator(3), **options)
    assert st.to_dict() == before


def test_bad_evaluators_and_states_raise_clear_errors():
    st = opening(3)
    with pytest.raises(TypeError, match="evaluator must be callable"):
        guided.search(st, "net")
    with pytest.raises(
        ValueError, match="the RolloutEvaluator's values are random playouts already"
    ):
        guided.search(st, ROLLOUT, mix=0.5)
    with pytest.raises(ValueError, match="rollouts"):
        guided.RolloutEvaluator(0)
    with pytest.raises(TypeError, match="rollouts"):
        guided.RolloutEvaluator(1.0)
    with pytest.raises(ValueError, match="n_players"):
        guided.UniformEvaluator(0)
    bs = guided.BatchSearch(guided.UniformEvaluator(3), simulations=10)
    g = caribsim.load_game("puerto_rico", players=3)
    with pytest.raises(ValueError, match="chance node"):
        bs.run([g.new_initial_state()])
    end = st.clone()
    while not end.is_terminal():
        end.apply_action(
            end.legal_actions()[0]
        ) if not end.is_chance_node() else end.resolve_chance()
    with pytest.raises(ValueError, match=r"states\[1\]: cannot search a terminal state"):
        bs.run([st, end])
    with pytest.raises(TypeError, match="states must be a list"):
        bs.run(st)
    with pytest.raises(ValueError, match="at least one"):
        bs.run([])
    with pytest.raises(TypeError, match=r"states\[0\]"):
        bs.run(["state"])
    with pytest.raises(ValueError, match="one game"):
        bs.run([st, opening(4)])
    with pytest.raises(ValueError, match="one game"):
        bs.run([st, opening(3, game="cuba")])
    with pytest.raises(ValueError, match="one seed per state"):
        bs.run([st, st], seeds=[1])
    with pytest.raises(ValueError, match=r"seeds\[0\]"):
        bs.run([st], seeds=[-1])
    with pytest.raises(AttributeError):
        bs.simulations = 5
    assert bs.run([st])[0].simulations == 10
    # a batch of another game (or player count) makes a new engine: the same object serves it
    bs = guided.BatchSearch(ROLLOUT, simulations=10)
    for other in (st, opening(4), opening(3, game="cuba"), st):
        assert bs.run([other])[0].simulations == 10


def test_values_of_the_wrong_width_name_the_seats():
    st = opening(4)
    with pytest.raises(ValueError, match=r"values must have shape \(1, 4\)"):
        guided.search(st, guided.UniformEvaluator(3), simulations=5)


# --- threads -------------------------------------------------------------------------------------


def test_the_evaluator_cannot_reenter_its_search():
    st = opening(3)
    holder = {"reenter": True}

    def ev(obs, mask):
        if holder["reenter"]:
            holder["bs"].run([st])
        return _logits(mask), _values(obs)

    holder["bs"] = bs = guided.BatchSearch(ev, simulations=10)
    with pytest.raises(RuntimeError, match="in use by another thread"):
        bs.run([st])
    holder["reenter"] = False
    assert bs.run([st])[0].simulations == 10


def test_one_batch_search_from_two_threads_refuses_the_second_call():
    st = opening(3)
    inside = threading.Event()
    release = threading.Event()

    def slow(obs, mask):
        inside.set()
        release.wait(10)
        return _logits(mask), _values(obs)

    bs = guided.BatchSearch(slow, simulations=5, leaves_per_tree=2)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", bs.run([st])))
    t.start()
    assert inside.wait(10)
    with pytest.raises(RuntimeError, match="this BatchSearch is in use by another thread"):
        bs.run([st])
    release.set()
    t.join(10)
    assert out["r"][0].simulations == 5
    assert bs.run([st])[0].simulations == 5


def test_two_batch_searches_run_at_once_on_two_threads():
    states = batch_states()[:3]
    results = [None, None]

    def work(i):
        results[i] = guided.BatchSearch(ROLLOUT, simulations=300, seed=i).run(states)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    for i in range(2):
        alone = guided.BatchSearch(ROLLOUT, simulations=300, seed=i).run(states)
        for x, y in zip(results[i], alone):
            assert np.array_equal(x.visits, y.visits)


# --- memory -------------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_many_runs_do_not_grow_the_resident_set():
    page = os.sysconf("SC_PAGE_SIZE")

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * page

    states = batch_states()
    ev = HashEvaluator(3)
    bs = guided.BatchSearch(ev, simulations=60, leaves_per_tree=4, seed=0)

    def burst():
        for i in range(40):
            bs.run(states)
            guided.search(states[i % len(states)], ROLLOUT, simulations=100, seed=i)
            guided.BatchSearch(ev, simulations=20, gumbel=True).run(states[:2])
            with contextlib.suppress(ValueError):
                guided.BatchSearch(
                    _bad(values_fn=lambda o, m: _values(o, v=2.0)), simulations=20
                ).run(states)

    burst()
    gc.collect()
    before = rss()
    for _ in range(3):
        burst()
    gc.collect()
    grown = (rss() - before) / 2**20
    assert grown < 8, f"RSS grew by {grown:.1f} MB"


# --- the Sequential Halving schedule and the engine's own checks -------------------------------


def mctx_schedule(m, n):
    """The schedule of mctx's get_sequence_of_considered_visits, written out from its
    description: phases in which each of the remaining actions gets
    max(1, n // (ceil(log2 m) * remaining)) more visits, the remaining actions halved
    (never below 2) after each phase."""
    if m <= 1:
        return list(range(n))
    log2max = math.ceil(math.log2(m))
    out, visits, remaining = [], [0] * m, m
    while len(out) < n:
        for _ in range(max(1, n // (log2max * remaining))):
            out.extend(visits[:remaining])
            for i in range(remaining):
                visits[i] += 1
        remaining = max(2, remaining // 2)
    return out[:n]


def schedule_visits(m, n):
    """The visits of each of the m actions after the n simulations of the schedule (the
    actions that stay longest in the running come first)."""
    visits = [0] * m
    for target in mctx_schedule(m, n):
        visits[visits.index(target)] += 1
    return visits


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 32])
@pytest.mark.parametrize("n", [1, 2, 7, 16, 50, 200, 801])
def test_the_sequential_halving_schedule_is_mctxs(m, n):
    assert _guided.sequential_halving_schedule(m, n) == mctx_schedule(m, n)


def test_a_keyboard_interrupt_in_the_evaluator_leaves_the_search_usable():
    calls = {"n": 0}

    def ev(obs, mask):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return HashEvaluator(3)(obs, mask)

    states = batch_states()[:2]
    bs = guided.BatchSearch(ev, simulations=40, leaves_per_tree=4, seed=1)
    with pytest.raises(KeyboardInterrupt):
        bs.run(states)
    again = bs.run(states)
    fresh = guided.BatchSearch(HashEvaluator(3), simulations=40, leaves_per_tree=4, seed=1).run(
        states
    )
    assert all(np.array_equal(x.visits, y.visits) for x, y in zip(again, fresh))


def test_the_engine_checks_its_arguments():
    st = opening(3)
    ok = dict(
        state=st,
        evaluator=guided.UniformEvaluator(3),
        simulations=10,
        leaves_per_tree=1,
        c_puct=1.0,
        fpu_reduction=0.0,
        dirichlet_alpha=0.0,
        dirichlet_fraction=0.0,
        temperature=0.0,
        gumbel=False,
        interior="puct",
        max_considered=4,
        gumbel_scale=1.0,
        c_visit=50.0,
        c_scale=0.1,
        rollouts=0,
    )
    for key, bad in [
        ("simulations", 0),
        ("leaves_per_tree", 0),
        ("c_puct", math.nan),
        ("fpu_reduction", -1.0),
        ("dirichlet_fraction", 2.0),
        ("temperature", math.inf),
        ("interior", "x"),
        ("max_considered", 0),
        ("rollouts", -1),
        ("evaluator", None),
    ]:
        with pytest.raises((ValueError, TypeError)):
            _guided.Engine(**dict(ok, **{key: bad}))
    blank = caribsim._game.GameState.__new__(caribsim._game.GameState)
    with pytest.raises(TypeError, match="uninitialised GameState"):
        _guided.Engine(**dict(ok, state=blank))
    engine = _guided.Engine(**ok)
    with pytest.raises(RuntimeError, match="initialised once"):
        engine.__init__(**ok)
    with pytest.raises(RuntimeError, match="not initialised"):
        _guided.Engine.__new__(_guided.Engine).run([st], [0])
    with pytest.raises(ValueError, match="one seed per state"):
        engine.run([st], [])
    with pytest.raises(TypeError):
        engine.run([blank], [0])
    with pytest.raises(ValueError, match="chance"):
        engine.run([caribsim.load_game("puerto_rico", players=3).new_initial_state()], [0])
    assert engine.run([st], [0])[0][5] == 10


def test_copies_of_a_batch_search_are_fresh_and_equal():
    import copy
    import pickle

    st = opening(3)
    bs = guided.BatchSearch(
        guided.UniformEvaluator(3),
        simulations=30,
        leaves_per_tree=2,
        gumbel=True,
        max_considered=4,
        seed=9,
    )
    first = bs.run([st])[0]
    for other in (copy.copy(bs), copy.deepcopy(bs), pickle.loads(pickle.dumps(bs))):
        assert other is not bs and other._guard is not bs._guard
        assert repr(other) == repr(bs) and other.max_considered == 4
        again = other.run([st])[0]
        assert again.action == first.action and np.array_equal(again.policy, first.policy)
