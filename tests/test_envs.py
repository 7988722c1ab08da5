"""PettingZoo and Gymnasium adapters (caribsim.envs, issue 8), checked with the ecosystems' own
checkers (pettingzoo.test.api_test and seed_test, gymnasium.utils.env_checker.check_env) for
every game and player count, plus the behaviour the checkers do not see."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import caribsim
from caribsim.envs import UniformRandomOpponent, gym_env, pettingzoo_env


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


@pytest.fixture(autouse=True)
def _quiet():
    # The checkers warn that a dict observation is "not a NumPy array": PettingZoo's own
    # classic games (chess, go, ...) use the same {"observation", "action_mask"} dict.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# --------------------------------------------------------------------------------------
# PettingZoo
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_pettingzoo_api_test(name, players):
    env = pettingzoo_env(name, players=players)
    api_test(env, num_cycles=1000)  # 1000 cycles: longer than a game, so games end inside


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_pettingzoo_seed_test(name, players):
    seed_test(lambda: pettingzoo_env(name, players=players), num_cycles=200)


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_pettingzoo_plays_the_game(name, players):
    """A full game through the AEC loop equals the same actions on a state of the game:
    the acting agent is the current player, its mask is the legal actions, the others' masks
    are empty, and the final rewards are the game's returns."""
    env = pettingzoo_env(name, players=players)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    mirror = env.state.clone()
    totals = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        seat = int(agent.split("_")[1])
        assert seat == mirror.current_player()
        np.testing.assert_array_equal(obs["action_mask"], mirror.legal_actions_mask())
        np.testing.assert_array_equal(obs["observation"], mirror.observation_tensor(seat))
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        mirror = env.state.clone()
    assert env.state.is_terminal()
    assert totals == {f"player_{i}": r for i, r in enumerate(env.state.returns())}
    assert not env.agents


def test_pettingzoo_illegal_action_raises_and_changes_nothing():
    env = pettingzoo_env("puerto_rico", players=4)
    env.reset(seed=0)
    before = env.state.to_dict()
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match=f"action {illegal} is not legal"):
        env.step(illegal)
    assert env.state.to_dict() == before
    with pytest.raises(TypeError, match="action must be an int"):
        env.step("role builder")


def test_pettingzoo_reset_seed_reproduces_and_varies():
    def first_obs(seed):
        env = pettingzoo_env("puerto_rico", players=4)
        env.reset(seed=seed)
        return env.last()[0]["observation"]

    np.testing.assert_array_equal(first_obs(1), first_obs(1))
    assert any(not np.array_equal(first_obs(1), first_obs(s)) for s in range(2, 6))


def test_pettingzoo_render_modes():
    env = pettingzoo_env("puerto_rico", players=3, render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == str(env.state)
    with pytest.raises(ValueError, match="render_mode"):
        pettingzoo_env("puerto_rico", players=3, render_mode="rgb_array")


# --------------------------------------------------------------------------------------
# Gymnasium
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_gymnasium_check_env(name, players):
    check_env(gym_env(name, players=players), skip_render_check=True)
    check_env(gym_env(name, players=players, seat=players - 1, render_mode="ansi"))


class _FirstLegal:
    """A minimal bot: any object with step(state) -> action will do."""

    def __init__(self):
        self.calls = 0

    def step(self, state):
        self.calls += 1
        return state.legal_actions()[0]


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_gymnasium_episode_with_bots(name, players):
    """The learner only sees its own turns; the bots play the other seats; the reward at the
    end is the seat's return."""
    seat = players // 2
    bots = [_FirstLegal() for _ in range(players - 1)]
    env = gym_env(name, players=players, opponents=bots, seat=seat)
    obs, info = env.reset(seed=4)
    rng = np.random.default_rng(2)
    total, steps, done = 0.0, 0, False
    while not done:
        assert env.state.current_player() == seat
        np.testing.assert_array_equal(obs["action_mask"], env.state.legal_actions_mask())
        np.testing.assert_array_equal(obs["observation"], env.state.observation_tensor(seat))
        np.testing.assert_array_equal(info["action_mask"], obs["action_mask"])
        np.testing.assert_array_equal(env.action_masks(), obs["action_mask"].astype(bool))
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, done, truncated, info = env.step(action)
        assert truncated is False
        total += reward
        steps += 1
    assert env.state.is_terminal()
    assert total == env.state.returns()[seat] == info["returns"][seat]
    assert all(b.calls > 0 for b in bots)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)


def test_gymnasium_illegal_action_modes():
    env = gym_env("puerto_rico", players=4)
    obs, _ = env.reset(seed=0)
    before = env.state.to_dict()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, reward, done, trunc, info = env.step(illegal)
    assert (reward, done, trunc, info["illegal_action"]) == (-1.0, True, False, True)
    assert env.state.to_dict() == before
    strict = gym_env("puerto_rico", players=4, illegal_action="raise")
    obs, _ = strict.reset(seed=0)
    with pytest.raises(ValueError, match=f"action {illegal} is not legal"):
        strict.step(illegal)


def test_gymnasium_bad_arguments():
    with pytest.raises(ValueError, match="opponents must list 3 bots"):
        gym_env("puerto_rico", players=4, opponents=[UniformRandomOpponent()])
    with pytest.raises(TypeError, match="step\\(state\\)"):
        gym_env("puerto_rico", players=2, opponents=[object()])
    with pytest.raises(ValueError, match="seat must be in 0..1"):
        gym_env("puerto_rico", players=2, seat=2)
    with pytest.raises(ValueError, match="illegal_action"):
        gym_env("puerto_rico", players=2, illegal_action="ignore")


def test_gymnasium_opponents_are_reseeded_by_reset():
    """Bots with restart(seed) are reseeded from the env's seed: same seed, same episode."""
    def episode(seed):
        env = gym_env("puerto_rico", players=3, opponents=[UniformRandomOpponent(), UniformRandomOpponent()])
        obs, _ = env.reset(seed=seed)
        trace, done = [], False
        while not done:
            a = int(np.flatnonzero(obs["action_mask"])[0])
            obs, r, done, _, _ = env.step(a)
            trace.append(obs["observation"])
        return np.concatenate(trace)

    np.testing.assert_array_equal(episode(5), episode(5))
    assert not np.array_equal(episode(5), episode(6))
