"""caribsim.vector_env: the Gymnasium vector environment over VectorGame (issue "Embedding
contracts" 12-13).

Gymnasium 1.4 has no checker for vector environments (``gymnasium.utils.env_checker``
takes a single ``gymnasium.Env``), so its vector contract is checked here as its docs and
``SyncVectorEnv`` define it: batched spaces, reset/step types and shapes, the declared
``AutoresetMode.SAME_STEP`` (final observation and info of an ended episode in
``info["final_obs"]``/``info["final_info"]``, the returned observation already the next
episode's), seeded determinism, fresh data each call, and Gymnasium's own vector wrapper
``RecordEpisodeStatistics``.
"""

from __future__ import annotations

import numpy as np
import pytest
from extras import need

gymnasium = need("rl", "gymnasium")
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import caribsim
import caribsim.envs
from caribsim.envs import GYM_IDS, gym_env
from caribsim.vector_env import CaribsimVectorEnv, vector_env

IDS = list(GYM_IDS.items())


def _pick(obs, rng):
    return np.array([rng.choice(np.flatnonzero(row)) for row in obs["action_mask"]])


def _play(env, steps, seed, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    obs, _info = env.reset(seed=seed)
    trace = [obs]
    for _ in range(steps):
        out = env.step(_pick(obs, rng))
        obs = out[0]
        trace.append(out)
    return trace


@pytest.mark.parametrize("name,env_id", IDS, ids=[n for n, _ in IDS])
def test_make_vec_gives_the_c_vector_env_with_batched_spaces(name, env_id):
    env = gymnasium.make_vec(env_id, num_envs=5, players=3, seat=2)
    assert isinstance(env, CaribsimVectorEnv) and env.num_envs == 5
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    single = gym_env(name, players=3, seat=2)
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space
    assert env.observation_space == batch_space(single.observation_space, 5)
    assert env.action_space == batch_space(single.action_space, 5)
    obs, info = env.reset(seed=1)
    assert isinstance(info, dict) and obs in env.observation_space
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    # the learner is to act in every game, and the mask is its legal actions
    vg = env.unwrapped.vg
    for i in range(5):
        s = vg.get_state(i)
        assert s.current_player() == 2
        np.testing.assert_array_equal(obs["action_mask"][i], s.legal_actions_mask())
        np.testing.assert_array_equal(
            obs["observation"][i], s.game.normalize_observation(s.observation_tensor(2))
        )
    obs, rew, term, trunc, info = env.step(_pick(obs, np.random.default_rng(0)))
    assert obs in env.observation_space
    assert rew.shape == (5,) and rew.dtype == np.float64
    assert term.shape == trunc.shape == (5,) and term.dtype == trunc.dtype == np.bool_
    assert not trunc.any() and isinstance(info, dict)
    # sync vectorisation of gym_env (any bots) is still there
    sync = gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="sync", players=3)
    assert isinstance(sync, gymnasium.vector.SyncVectorEnv)
    sync.close()


@pytest.mark.parametrize("name,env_id", IDS, ids=[n for n, _ in IDS])
def test_same_step_autoreset_keeps_the_final_observation_and_info(name, env_id):
    """Episodes end with SAME_STEP autoreset: the step's reward is the learner's return, the
    final observation and info are those of the finished game (its final state), and the
    returned observation is the next episode's, with the learner to act."""
    seat = 1
    env = vector_env(name, num_envs=6, players=2, seat=seat)
    vg = env.vg
    rng = np.random.default_rng(3)
    obs, _ = env.reset(seed=5)
    ended = 0
    learner_steps = np.zeros(6, int)
    for _ in range(3000):
        obs, rew, term, _trunc, info = env.step(_pick(obs, rng))
        learner_steps += 1
        for i in range(6):
            s = vg.get_state(i)
            assert s.current_player() == seat
            np.testing.assert_array_equal(
                obs["observation"][i], s.game.normalize_observation(s.observation_tensor(seat))
            )
            np.testing.assert_array_equal(obs["action_mask"][i], s.legal_actions_mask())
        if not term.any():
            assert "final_obs" not in info and not rew.any()
            continue
        np.testing.assert_array_equal(info["_final_obs"], term)
        np.testing.assert_array_equal(info["_final_info"], term)
        for i in range(6):
            if not term[i]:
                assert info["final_obs"][i] is None and rew[i] == 0
                continue
            ended += 1
            final = vg.final_state(i)
            assert final.is_terminal()
            assert rew[i] == final.returns()[seat]
            np.testing.assert_array_equal(
                info["final_obs"][i]["observation"],
                final.game.normalize_observation(final.observation_tensor(seat)),
            )
            assert not info["final_obs"][i]["action_mask"].any()
            assert info["final_obs"][i] in env.single_observation_space
            np.testing.assert_array_equal(info["final_info"]["returns"][i], final.returns())
            np.testing.assert_array_equal(
                info["final_info"]["scores"][i],
                [sc["total"] if isinstance(sc, dict) else sc for sc in final.scores()],
            )
            assert info["final_info"]["episode_length"][i] >= learner_steps[i]
            assert not np.array_equal(obs["observation"][i], info["final_obs"][i]["observation"])
            learner_steps[i] = 0
        if ended >= 4:
            break
    assert ended >= 4


def test_seeded_runs_are_deterministic_and_data_is_fresh():
    env = vector_env("puerto_rico", num_envs=8, players=4, seat=3)
    a, b = _play(env, 300, seed=11), _play(env, 300, seed=11)
    for x, y in zip(a, b):
        assert data_equivalence(x, y, exact=True)
    c = _play(env, 300, seed=12)
    assert not data_equivalence(a[-1][0], c[-1][0])
    # a fresh environment with the same seed plays the same games
    d = _play(vector_env("puerto_rico", num_envs=8, players=4, seat=3), 300, seed=11)
    assert data_equivalence(a[-1], d[-1], exact=True)
    # reset(seed=None) after a seeded reset continues the seeded generator: reproducible too
    e1, e2 = vector_env("cuba", num_envs=2, players=3), vector_env("cuba", num_envs=2, players=3)
    for e in (e1, e2):
        e.reset(seed=4)
    np.testing.assert_array_equal(e1.reset()[0]["observation"], e2.reset()[0]["observation"])
    # each call returns new arrays (kept by the user while the batch goes on)
    obs0, _ = env.reset(seed=1)
    obs1 = env.step(_pick(obs0, np.random.default_rng(0)))[0]
    for key in obs0:
        assert not np.shares_memory(obs0[key], obs1[key])
    obs0["observation"][:] = -5  # writable, and not the environment's memory
    assert (env.step(_pick(obs1, np.random.default_rng(0)))[0]["observation"] != -5).any()


def test_record_episode_statistics_sees_every_episode():
    """Gymnasium's vector RecordEpisodeStatistics (which reads the declared autoreset mode)
    reports each ended episode's return and its number of learner steps."""
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(
        vector_env("port_royal", num_envs=4, players=2)
    )
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=2)
    steps = np.zeros(4, int)
    seen = 0
    for _ in range(2000):
        obs, rew, term, _trunc, info = env.step(_pick(obs, rng))
        steps += 1
        if term.any():
            np.testing.assert_array_equal(info["_episode"], term)
            np.testing.assert_allclose(info["episode"]["r"][term], rew[term])
            np.testing.assert_array_equal(info["episode"]["l"][term], steps[term])
            seen += int(term.sum())
            steps[term] = 0
        if seen >= 3:
            break
    assert seen >= 3


def test_bad_inputs_raise_and_change_nothing():
    env = vector_env("puerto_rico", num_envs=4, players=3, seat=0)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(np.zeros(4, int))
    obs, _ = env.reset(seed=0)
    vg = env.vg
    before = [vg.get_state(i).serialize() for i in range(4)]
    bad = _pick(obs, np.random.default_rng(0))
    bad[2] = int(np.flatnonzero(obs["action_mask"][2] == 0)[0])
    with pytest.raises(ValueError, match=r"game 2: action .* not legal"):
        env.step(bad)
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        env.step(bad[:3])
    with pytest.raises(TypeError, match="integers"):
        env.step(bad.astype(float))
    assert [vg.get_state(i).serialize() for i in range(4)] == before
    for kwargs, err, msg in [
        (dict(seat=3), ValueError, r"seat must be in 0\.\.2"),
        (dict(seat="left"), ValueError, "seat must be an int 0..2 or .random."),
        (dict(seat=True), TypeError, "seat must be an int"),
        (dict(opponents=["greedy", "random"]), ValueError, "vectorization_mode='sync'"),
        (dict(num_envs=0), ValueError, "n must be in"),
    ]:
        with pytest.raises(err, match=msg):
            vector_env("puerto_rico", players=3, **kwargs)
    vector_env("puerto_rico", players=3, opponents=["random", "random"])
    for seed, err, msg in [
        (-1, ValueError, "seed must be in"),
        (1.5, TypeError, "seed must be an int"),
        ([1, 2, 3, 4], TypeError, "one seed for the batch"),
        (True, TypeError, "bool"),
    ]:
        with pytest.raises(err, match=msg):
            env.reset(seed=seed)
    with pytest.raises(ValueError, match="no options"):
        env.reset(options={"reset_mask": np.ones(4, bool)})
    assert [vg.get_state(i).serialize() for i in range(4)] == before


@pytest.mark.parametrize("name", ["puerto_rico", "port_royal", "cuba"])
def test_random_seat_is_drawn_per_episode_and_followed(name):
    """seat="random": every sub-environment's learner seat is drawn per episode from the
    reset seed; the learner is to act in it after every step, its reward and final
    observation are that seat's, and a finished episode's successor has its own seat."""
    env = vector_env(name, num_envs=8, players=3, seat="random")
    obs, info = env.reset(seed=4)
    assert info["seat"].shape == (8,) and list(env.seat) == list(info["seat"])
    seats_seen, changes, episodes = [], 0, 0
    rng = np.random.default_rng(0)
    for _ in range(2500 if name != "cuba" else 1500):
        seats = env.seat
        assert (env.vg.current_players() == seats).all()
        assert np.array_equal(obs["observation"], env.vg.observations(seat=seats, normalized=True))
        mask = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, rewards, terminated, _truncated, info = env.step(actions)
        for i in np.flatnonzero(terminated):
            played = info["final_info"]["seat"][i]
            assert played == seats[i]
            assert rewards[i] == pytest.approx(info["final_info"]["returns"][i][played])
            assert np.array_equal(
                info["final_obs"][i]["observation"],
                env.vg.final_observations(int(played), normalized=True)[i],
            )
            seats_seen.append(int(played))
            changes += int(info["seat"][i] != played)
            episodes += 1
        assert (rewards[~terminated] == 0).all()
    assert episodes >= 20
    counts = np.bincount(seats_seen, minlength=3)
    assert counts.min() >= episodes // 6, counts  # every seat is drawn, roughly a third each
    assert changes >= episodes // 3  # the next episode's seat is a new draw


def test_random_seats_depend_only_on_the_seed():
    def run(seed):
        env = vector_env("puerto_rico", num_envs=4, players=4, seat="random")
        _, info = env.reset(seed=seed)
        out = [info["seat"].copy()]
        for _ in range(400):
            env.step(env.vg.sample_legal())
            out.append(env.seat)
        return np.array(out)

    a, b, c = run(11), run(11), run(12)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert len(np.unique(a)) > 1


def test_until_next_needs_until_and_sends_a_new_episode_to_its_seat():
    vg = caribsim.VectorGame(caribsim.load_game("port_royal", players=3), n=6, seed=2)
    with pytest.raises(ValueError, match="until_next needs until"):
        vg.step(vg.sample_legal(), until_next=1)
    vg.reset(seed=2, until=0)
    ended = np.zeros(6, bool)
    for _ in range(3000):
        vg.step(vg.sample_legal(), until=np.where(ended, 2, 0), until_next=2)
        ended |= vg.terminated()
        assert (vg.current_players() == np.where(ended, 2, 0)).all()
    assert ended.all()
