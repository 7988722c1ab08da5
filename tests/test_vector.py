"""caribsim.VectorGame: n games in one C array, stepped in batch (issue 8).

Every game of ``caribsim.games()`` is checked, at every player count it accepts, against
the game's own Python state API: after each batch step, each slot must equal a copy of the
slot taken before the step, with the same action applied and chance resolved by the
state's own RNG (the struct carries it); masks, observations and current players must
equal what the state API gives; finished games must report their returns and start afresh.
"""
from __future__ import annotations

import gc
import os
import threading

import numpy as np
import pytest

import caribsim
from caribsim.vector import VectorGame, game_info


def _player_counts(name):
    counts = []
    for n in range(1, 11):
        try:
            caribsim.load_game(name, players=n)
        except (ValueError, TypeError):
            continue
        counts.append(n)
    return counts


CASES = [(name, p) for name in caribsim.games() for p in _player_counts(name)]
IDS = [f"{name}-{p}p" for name, p in CASES]


def _random_actions(mask, rng):
    """A uniformly random legal action per row of the mask."""
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask], dtype=np.int64)


def _dict(state):
    d = state.to_dict()
    d.pop("history", None)  # a slot copy has no Python-side history
    return d


def _fresh(game):
    s = game.new_initial_state(seed=0)
    while s.is_chance_node():
        s.resolve_chance()
    return s


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_step_matches_the_state_api(name, players):
    """200 batch steps of 6 games == the same actions on copies of the slots through the state API,
    including the returns and the automatic reset of the games that end."""
    game = caribsim.load_game(name, players=players)
    vg = VectorGame(name, n=6, players=players, seed=11)
    rng = np.random.default_rng(5)
    fresh_scores = np.asarray([s["total"] if isinstance(s, dict) else s for s in _fresh(game).scores()], float)
    ended = 0
    steps = 1500 if players <= 3 else 800
    for _ in range(steps):
        before = [vg.get_state(i) for i in range(len(vg))]
        mask = vg.legal_mask().copy()
        players_now = vg.current_players().copy()
        obs = vg.observations().copy()
        for i, s in enumerate(before):
            assert not s.is_chance_node() and not s.is_terminal()
            assert players_now[i] == s.current_player()
            np.testing.assert_array_equal(mask[i], s.legal_actions_mask())
            np.testing.assert_array_equal(obs[i], s.observation_tensor(s.current_player()))
        actions = _random_actions(mask, rng)
        vg.step(actions)
        term = vg.terminated().copy()
        rewards = vg.rewards().copy()
        for i, s in enumerate(before):
            s.apply_action(int(actions[i]))
            while s.is_chance_node():
                s.resolve_chance()
            if s.is_terminal():
                ended += 1
                assert term[i]
                np.testing.assert_allclose(rewards[i], s.returns())
                assert rewards[i].sum() == pytest.approx(1.0)
                new = vg.get_state(i)
                assert not new.is_terminal() and not new.is_chance_node()
                np.testing.assert_array_equal(vg.scores()[i], fresh_scores)
            else:
                assert not term[i]
                assert not rewards[i].any()
                assert _dict(vg.get_state(i)) == _dict(s)
    assert ended >= 1, "no game ended: the automatic reset was not exercised"
    assert vg.episodes().sum() == ended


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_illegal_action_names_the_game_and_changes_nothing(name, players):
    vg = VectorGame(name, n=64, players=players, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(30):
        vg.step(_random_actions(vg.legal_mask(), rng))
    before = [_dict(vg.get_state(i)) for i in range(64)]
    mask = vg.legal_mask().copy()
    obs = vg.observations().copy()
    actions = _random_actions(mask, rng)
    bad = 37
    actions[bad] = int(np.flatnonzero(mask[bad] == 0)[0])
    with pytest.raises(ValueError, match=rf"game {bad}\b.*not legal") as err:
        vg.step(actions)
    assert name in str(err.value)
    assert [_dict(vg.get_state(i)) for i in range(64)] == before
    np.testing.assert_array_equal(vg.legal_mask(), mask)
    np.testing.assert_array_equal(vg.observations(), obs)
    # out of the action space
    actions[bad] = vg.num_actions
    with pytest.raises(ValueError, match=rf"game {bad}\b.*out of range"):
        vg.step(actions)
    actions[bad] = -1
    with pytest.raises(ValueError, match=rf"game {bad}\b"):
        vg.step(actions)
    assert [_dict(vg.get_state(i)) for i in range(64)] == before
    # the same batch with the bad entry fixed goes through
    actions[bad] = int(np.flatnonzero(mask[bad])[0])
    vg.step(actions)


def test_bad_arguments():
    vg = VectorGame("puerto_rico", n=8, players=4)
    mask = vg.legal_mask()
    good = np.argmax(mask, axis=1)
    with pytest.raises(ValueError, match=r"shape \(8,\)"):
        vg.step(good[:7])
    with pytest.raises(TypeError, match="integer array"):
        vg.step(good.astype(np.float64))
    with pytest.raises(TypeError, match="integer array"):
        vg.step(good.astype(bool))
    vg.step(good.astype(np.int16))        # any integer dtype, or a list of ints
    vg.step(list(np.argmax(vg.legal_mask(), axis=1)))
    with pytest.raises(ValueError, match="n must be in"):
        VectorGame("puerto_rico", n=0)
    with pytest.raises(TypeError, match="n must be an int"):
        VectorGame("puerto_rico", n=2.5)
    with pytest.raises(ValueError, match="seed must be in"):
        VectorGame("puerto_rico", n=2, seed=-1)
    with pytest.raises(ValueError, match="unknown game"):
        VectorGame("no_such_game", n=2)
    with pytest.raises(ValueError, match="players must be"):
        VectorGame("puerto_rico", n=2, players=9)
    with pytest.raises(TypeError, match="only accepted with a game name"):
        VectorGame(caribsim.load_game("puerto_rico"), n=2, players=3)
    with pytest.raises(ValueError, match="game index must be in"):
        vg.get_state(8)


def test_shapes_dtypes_and_read_only_views():
    game = caribsim.load_game("puerto_rico", players=3)
    vg = VectorGame(game, n=5, seed=1)
    assert len(vg) == vg.n == 5
    assert vg.num_players == 3 and vg.name == "puerto_rico"
    assert vg.num_actions == game.num_distinct_actions()
    assert (vg.observation_size,) == game.observation_tensor_shape()
    assert vg.legal_mask().shape == (5, vg.num_actions) and vg.legal_mask().dtype == np.uint8
    assert vg.observations().shape == (5, vg.observation_size) and vg.observations().dtype == np.float32
    assert vg.current_players().dtype == np.int32
    assert vg.rewards().shape == (5, 3) and vg.rewards().dtype == np.float32
    assert vg.terminated().dtype == np.bool_
    for arr in (vg.legal_mask(), vg.observations(), vg.current_players(), vg.rewards(), vg.terminated()):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1
    info = game_info(game.new_initial_state())
    assert info["name"] == "puerto_rico" and info["num_actions"] == vg.num_actions
    assert info["perfect_information"] is True


@pytest.mark.parametrize("name,players", CASES[:1] + CASES[-1:], ids=IDS[:1] + IDS[-1:])
def test_seeded_runs_are_reproducible(name, players):
    def run(seed, reset_to=None):
        vg = VectorGame(name, n=32, players=players, seed=seed)
        if reset_to is not None:
            vg.reset(seed=reset_to)
        rng = np.random.default_rng(1)
        trace = []
        for _ in range(400):
            trace.append(vg.observations().copy())
            vg.step(_random_actions(vg.legal_mask(), rng))
            trace.append(vg.rewards().copy())
        return np.concatenate([t.ravel() for t in trace])

    a = run(7)
    np.testing.assert_array_equal(a, run(7))
    np.testing.assert_array_equal(a, run(99, reset_to=7))
    assert not np.array_equal(a, run(8))


def test_slots_draw_their_own_chance():
    """Slots start from one template but each draws its own chance outcomes (per-slot RNG streams)."""
    vg = VectorGame("puerto_rico", n=64, players=4, seed=0)
    obs = vg.observations()
    assert len({row.tobytes() for row in obs}) > 1


def test_each_episode_and_slot_has_its_own_stream():
    """Slot i's randomness depends on (seed, i, episode) only: not on n, and a reset slot
    does not replay its first game's chance events."""
    small, big = VectorGame("puerto_rico", n=4, players=4, seed=9), VectorGame("puerto_rico", n=64, players=4, seed=9)
    np.testing.assert_array_equal(small.observations(), big.observations()[:4])
    first = big.observations().copy()
    replayed = []
    while len(replayed) < 12:
        big.step(np.argmax(big.legal_mask(), axis=1))
        for i in np.flatnonzero(big.terminated()):
            if big.episodes()[i] == 1:
                replayed.append(np.array_equal(big.observations()[i], first[i]))
    assert not all(replayed)


def test_threads_step_independent_batches():
    """Two VectorGames stepped in two threads (GIL released) give the results of sequential runs."""
    def run(out, k):
        vg = VectorGame("puerto_rico", n=256, players=4, seed=k)
        acc = np.zeros(4)
        for _ in range(300):
            vg.step(np.argmax(vg.legal_mask(), axis=1))
            acc += vg.rewards().sum(axis=0)
            vg.observations()
        out[k] = (acc, vg.observations().copy())

    seq, par = {}, {}
    run(seq, 0)
    run(seq, 1)
    threads = [threading.Thread(target=run, args=(par, k)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in (0, 1):
        np.testing.assert_array_equal(seq[k][0], par[k][0])
        np.testing.assert_array_equal(seq[k][1], par[k][1])


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_buffers_are_freed():
    page = os.sysconf("SC_PAGE_SIZE")

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * page

    for _ in range(3):
        VectorGame("puerto_rico", n=4096, players=4).observations()
    gc.collect()
    start = rss()
    for _ in range(30):  # ~5 MB each: 150 MB if the state array or a buffer leaked
        vg = VectorGame("puerto_rico", n=4096, players=4)
        vg.step(np.argmax(vg.legal_mask(), axis=1))
        vg.observations()
        del vg
    gc.collect()
    assert rss() - start < 24 * 2**20
