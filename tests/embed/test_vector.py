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
    fresh_scores = np.asarray(
        [s["total"] if isinstance(s, dict) else s for s in _fresh(game).scores()], float
    )
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
    vg.step(good.astype(np.int16))  # any integer dtype, or a list of ints
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
    assert (
        vg.observations().shape == (5, vg.observation_size)
        and vg.observations().dtype == np.float32
    )
    assert vg.current_players().dtype == np.int32
    assert vg.rewards().shape == (5, 3) and vg.rewards().dtype == np.float32
    assert vg.terminated().dtype == np.bool_
    for arr in (
        vg.legal_mask(),
        vg.observations(),
        vg.current_players(),
        vg.rewards(),
        vg.terminated(),
    ):
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
    small, big = (
        VectorGame("puerto_rico", n=4, players=4, seed=9),
        VectorGame("puerto_rico", n=64, players=4, seed=9),
    )
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


# --- sample_legal, seat views, the finished episode's finals, until (issue "Embedding contracts" 13-15)


def _totals(scores):
    return np.asarray([s["total"] if isinstance(s, dict) else s for s in scores], float)


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_finals_equal_the_state_played_one_by_one(name, players):
    """sample_legal -> step over 6 games == the same actions on copies through the state API;
    after a step in which game i ended, final_returns/final_scores/final_observations(seat)/
    final_state equal what the copy ended with, and the game is already the next episode."""
    vg = VectorGame(name, n=6, players=players, seed=21)
    copies = [vg.get_state(i) for i in range(6)]
    ended = 0
    for _ in range(1500 if players <= 3 else 800):
        actions = vg.sample_legal().copy()
        vg.step(actions)
        term = vg.terminated().copy()
        finals = [vg.final_observations(seat).copy() for seat in range(players)]
        for i, s in enumerate(copies):
            s.apply_action(int(actions[i]))
            while s.is_chance_node():
                s.resolve_chance()
            assert term[i] == s.is_terminal()
            if not s.is_terminal():
                continue
            ended += 1
            np.testing.assert_array_equal(
                vg.final_returns()[i], np.asarray(s.returns(), np.float32)
            )
            np.testing.assert_array_equal(vg.final_scores()[i], _totals(s.scores()))
            for seat in range(players):
                np.testing.assert_array_equal(finals[seat][i], s.observation_tensor(seat))
            assert _dict(vg.final_state(i)) == _dict(s) and vg.final_state(i).is_terminal()
            nxt = vg.get_state(i)  # the next episode: at its start, not the old game
            assert not nxt.is_terminal() and not nxt.is_chance_node() and _dict(nxt) != _dict(s)
            np.testing.assert_array_equal(vg.observations(seat=0)[i], nxt.observation_tensor(0))
            copies[i] = nxt
    assert ended >= 2, "too few games ended to exercise the finals"
    # the finals stay until the next end of that game; reset() clears them
    assert vg.final_returns().sum() > 0
    vg.reset()
    assert not vg.final_returns().any() and not vg.final_scores().any()
    assert not vg.final_observations(0).any()
    with pytest.raises(ValueError, match="has not finished an episode"):
        vg.final_state(0)


def test_finals_are_zero_before_any_end():
    vg = VectorGame("port_royal", n=3, players=2, seed=1)
    assert vg.final_returns().shape == (3, 2) and vg.final_returns().dtype == np.float32
    assert vg.final_scores().shape == (3, 2) and vg.final_scores().dtype == np.float64
    assert vg.final_observations(1).shape == (3, vg.observation_size)
    assert not vg.final_returns().any() and not vg.final_observations([0, 1, 0]).any()
    with pytest.raises(ValueError, match="game 2 has not finished"):
        vg.final_state(2)
    with pytest.raises(ValueError, match="game index must be in"):
        vg.final_state(3)


@pytest.mark.parametrize(
    "name,players",
    [c for c in CASES if c[1] in (2, 4)],
    ids=[i for c, i in zip(CASES, IDS) if c[1] in (2, 4)],
)
def test_observations_of_any_seat(name, players):
    vg = VectorGame(name, n=5, players=players, seed=4)
    for _ in range(40):
        vg.step(vg.sample_legal())
    states = [vg.get_state(i) for i in range(5)]
    acting = vg.observations().copy()
    for seat in range(players):
        got = vg.observations(seat=seat)
        for i, s in enumerate(states):
            np.testing.assert_array_equal(got[i], s.observation_tensor(seat))
    per_game = np.arange(5) % players
    got = vg.observations(seat=per_game)
    for i, s in enumerate(states):
        np.testing.assert_array_equal(got[i], s.observation_tensor(int(per_game[i])))
    # the acting seat's view again (not the cached buffer of another seat)
    np.testing.assert_array_equal(vg.observations(), acting)
    for i, s in enumerate(states):
        np.testing.assert_array_equal(acting[i], s.observation_tensor(s.current_player()))


def test_seat_arguments_are_checked_and_change_nothing():
    vg = VectorGame("puerto_rico", n=4, players=3, seed=2)
    for _ in range(10):
        vg.step(vg.sample_legal())
    before = [_dict(vg.get_state(i)) for i in range(4)]
    obs = vg.observations().copy()
    actions = vg.sample_legal().copy()
    for bad, err, msg in [
        (3, ValueError, r"seat 3 is out of range 0\.\.2"),
        (-1, ValueError, "out of range"),
        ([0, 1, 2, 5], ValueError, r"game 3: seat 5"),
        ([0, 1], ValueError, r"shape \(4,\)"),
        (True, TypeError, "bool"),
        (1.0, TypeError, "dtype float64"),
        ("0", TypeError, "dtype"),
    ]:
        with pytest.raises(err, match=msg):
            vg.observations(seat=bad)
        with pytest.raises(err, match=msg):
            vg.final_observations(bad)
        with pytest.raises(err, match=msg):
            vg.step(actions, until=bad)
        with pytest.raises(err, match=msg):
            vg.reset(until=bad)
    with pytest.raises(TypeError, match="got None"):
        vg.final_observations(None)
    assert [_dict(vg.get_state(i)) for i in range(4)] == before
    np.testing.assert_array_equal(vg.observations(), obs)
    vg.step(actions)  # the actions drawn before the bad calls are still legal


@pytest.mark.parametrize("name", caribsim.games())
def test_sample_legal_is_legal_and_uniform(name):
    """Every draw is legal; over 1500 draws per game of a fixed batch, each legal action comes
    up equally often (pooled chi-square over the games, normal approximation, |z| < 4.5)."""
    vg = VectorGame(name, n=48, players=3, seed=6)
    for _ in range(60):
        a = vg.sample_legal()
        assert a.dtype == np.intp and a.shape == (48,)
        assert vg.legal_mask()[np.arange(48), a].all()
        vg.step(a)
    mask = vg.legal_mask().copy()
    draws = 1500
    counts = np.zeros(mask.shape, np.int64)
    for _ in range(draws):
        a = vg.sample_legal()
        assert mask[np.arange(48), a].all()
        counts[np.arange(48), a] += 1
    legal = mask.sum(axis=1)
    rows = legal >= 2
    assert rows.sum() >= 10
    expected = draws / legal[rows]
    chi2 = (((counts[rows] - expected[:, None]) ** 2 / expected[:, None]) * mask[rows]).sum()
    dof = int((legal[rows] - 1).sum())
    z = (chi2 - dof) / np.sqrt(2 * dof)
    assert abs(z) < 4.5, (chi2, dof)
    assert (counts[mask == 1] > 0).all()  # every legal action is drawn
    # a biased pick (the lowest legal id twice as often) would be far outside
    biased = counts[rows].astype(float)
    first = np.argmax(mask[rows], axis=1)
    biased[np.arange(rows.sum()), first] *= 2
    chi2_b = (((biased - expected[:, None]) ** 2 / expected[:, None]) * mask[rows]).sum()
    assert (chi2_b - dof) / np.sqrt(2 * dof) > 4.5


def test_sample_legal_is_deterministic_per_seed_slot_and_episode():
    def trace(seed, n, steps=700):
        vg = VectorGame("puerto_rico", n=n, players=2, seed=seed)
        out = []
        for _ in range(steps):
            a = vg.sample_legal().copy()
            out.append(a[:3])
            vg.step(a)
        return np.array(out), vg

    a, vg = trace(5, 3)
    b, _ = trace(5, 8)  # slot i's draws do not depend on n
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, trace(6, 3)[0])
    assert vg.episodes().min() >= 1  # the draws went on across episode ends
    # reset(seed) replays the same draws; sampling does not touch the games' chance RNG
    vg.reset(seed=5)
    again = []
    for _ in range(700):
        x = vg.sample_legal().copy()
        again.append(x[:3])
        vg.step(x)
    np.testing.assert_array_equal(a, np.array(again))


@pytest.mark.parametrize("name", caribsim.games())
def test_until_plays_sample_legal_to_the_seat(name):
    """step(a, until=seat) == step(a) then step(sample_legal()) while another seat is to act
    (n=1, so every step moves only that game), across episode ends too."""
    for seed in range(3):
        fast = VectorGame(name, n=1, players=3, seed=seed)
        slow = VectorGame(name, n=1, players=3, seed=seed)
        seat = seed % 3
        fast.reset(until=seat)
        while slow.current_players()[0] != seat:
            slow.step(slow.sample_legal())
        ends = 0
        for _ in range(600):
            assert fast.current_players()[0] == seat
            assert _dict(fast.get_state(0)) == _dict(slow.get_state(0))
            a = fast.sample_legal().copy()
            np.testing.assert_array_equal(slow.sample_legal(), a)  # the generators stay in step
            fast.step(a, until=seat)
            slow.step(a)
            ended = bool(slow.terminated()[0])
            while slow.current_players()[0] != seat:
                slow.step(slow.sample_legal())
                ended |= bool(slow.terminated()[0])
            assert bool(fast.terminated()[0]) == ended
            ends += ended
            if ended:
                np.testing.assert_array_equal(fast.rewards(), slow.final_returns())
                np.testing.assert_array_equal(fast.final_returns(), slow.final_returns())
                np.testing.assert_array_equal(fast.final_scores(), slow.final_scores())
                assert _dict(fast.final_state(0)) == _dict(slow.final_state(0))
            else:
                assert not fast.rewards().any()
            np.testing.assert_array_equal(fast.legal_mask(), slow.legal_mask())
        assert ends >= 1
        assert fast.episodes()[0] == slow.episodes()[0]
