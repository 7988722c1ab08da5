"""PettingZoo and Gymnasium adapters (caribsim.envs), checked with the ecosystems' own
checkers (pettingzoo.test.api_test and seed_test, gymnasium.utils.env_checker.check_env) for
every game and player count, plus the behaviour the checkers do not see."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
from extras import need

gymnasium = need("rl", "gymnasium")
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import caribsim
from caribsim.bots import MCTSBot, RandomBot
from caribsim.envs import GYM_IDS, UniformRandomOpponent, board_image, gym_env, pettingzoo_env


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


def _warnings_of(check, *args, **kwargs):
    """The messages of every warning ``check`` raises: warnings.warn and gymnasium.logger.warn
    (which goes through warnings.warn, at its default level WARN) alike."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        level, gymnasium.logger.min_level = gymnasium.logger.min_level, gymnasium.logger.WARN
        try:
            check(*args, **kwargs)
        finally:
            gymnasium.logger.min_level = level
    return [str(w.message) for w in caught]


# --------------------------------------------------------------------------------------
# PettingZoo
# --------------------------------------------------------------------------------------
# api_test warns about any Dict observation unless the environment's name (str(env.unwrapped))
# is on one of its two allow-lists, which hold PettingZoo's own classic games by name
# (chess_v6, connect_four_v3, tictactoe_v3, ...): the classic games pass only by being listed.
# These two messages remain, and no other (docs/embedding.md, PettingZoo section).
PZ_DICT_WARNINGS = {
    "Observation is not a NumPy array": "env_obs_dicts",
    "Observation space for each agent probably should be gymnasium.spaces.box or "
    "gymnasium.spaces.discrete": "env_obs_space",
}


def _check_api_test(env, num_cycles, monkeypatch):
    """api_test passes and warns exactly the Dict-observation messages of the allow-lists the
    installed PettingZoo has (none once they are gone, as its PR #1391 does); with the env's
    name put on those lists, it warns nothing at all."""
    module = importlib.import_module("pettingzoo.test.api_test")
    lists = {msg: getattr(module, name, None) for msg, name in PZ_DICT_WARNINGS.items()}
    as_is = _warnings_of(api_test, env, num_cycles=num_cycles)
    assert set(as_is) == {msg for msg, listed in lists.items() if listed is not None}, as_is
    with monkeypatch.context() as patch:
        for msg, listed in lists.items():
            if listed is not None:
                patch.setattr(module, PZ_DICT_WARNINGS[msg], [*listed, str(env.unwrapped)])
        assert _warnings_of(api_test, env, num_cycles=num_cycles) == []


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_pettingzoo_api_test(name, players, monkeypatch):
    # 1000 cycles: longer than a game, so games end inside
    _check_api_test(pettingzoo_env(name, players=players), 1000, monkeypatch)


@pytest.mark.parametrize("name", caribsim.games())
def test_pettingzoo_api_test_raw_observation(name, monkeypatch):
    # the raw view's Box of the true bounds adds no warning either
    _check_api_test(pettingzoo_env(name, players=3, observation="raw"), 300, monkeypatch)


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_pettingzoo_seed_test(name, players):
    def make():
        return pettingzoo_env(name, players=players)

    assert _warnings_of(seed_test, make, num_cycles=200) == []


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_pettingzoo_plays_the_game(name, players):
    """A full game through the AEC loop equals the same actions on a state of the game:
    the acting agent is the current player, its mask is the legal actions, the others' masks
    are empty, and the final rewards are the game's returns."""
    env = pettingzoo_env(name, players=players)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    mirror = env.state.clone()
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _info = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        seat = int(agent.split("_")[1])
        assert seat == mirror.current_player()
        np.testing.assert_array_equal(obs["action_mask"], mirror.legal_actions_mask())
        # the default view is the normalised observation (observation="normalized")
        np.testing.assert_array_equal(
            obs["observation"], env.game.normalize_observation(mirror.observation_tensor(seat))
        )
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
    env = pettingzoo_env("puerto_rico", players=3, render_mode="rgb_array")
    env.reset(seed=0)
    np.testing.assert_array_equal(env.render(), board_image(env.state))
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        pettingzoo_env("puerto_rico", players=3, render_mode="video")


@pytest.mark.parametrize("name", caribsim.games())
def test_pettingzoo_with_bots_in_some_seats(name, monkeypatch):
    """bots={seat: bot}: those seats are played inside the env, the others are agents."""
    env = pettingzoo_env(name, players=3, bots={1: RandomBot(seed=2), 2: "random"})
    assert env.possible_agents == ["player_0"]
    _check_api_test(env, 600, monkeypatch)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    turns = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        assert agent == "player_0" and env.state.current_player() == 0
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        turns += 1
    assert env.state.is_terminal() and turns > 10
    assert reward == env.state.returns()[0]
    with pytest.raises(ValueError, match=r"bots must map seats 0\.\.2"):
        pettingzoo_env(name, players=3, bots={3: RandomBot()})
    with pytest.raises(ValueError, match="at least one seat must be an agent"):
        pettingzoo_env(name, players=2, bots={0: RandomBot(), 1: RandomBot()})


# --------------------------------------------------------------------------------------
# Gymnasium
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_gymnasium_check_env(name, players):
    assert _warnings_of(check_env, gym_env(name, players=players), skip_render_check=True) == []
    # through make: the render check needs the env's spec (without one, it warns that it cannot
    # test the other render modes)
    env = gymnasium.make(GYM_IDS[name], players=players, seat=players - 1, render_mode="ansi")
    assert _warnings_of(check_env, env.unwrapped) == []


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
        np.testing.assert_array_equal(
            obs["observation"], env.game.normalize_observation(env.state.observation_tensor(seat))
        )
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


@pytest.mark.parametrize("name", caribsim.games())
def test_gymnasium_make_and_check_env_silent(name):
    """Every registered id works through gymnasium.make (options passed on), and the env
    checker, with every render mode, raises no warning (warnings are errors here)."""
    env_id = GYM_IDS[name]
    assert env_id in gymnasium.registry
    for mode in (None, "ansi", "rgb_array"):
        env = gymnasium.make(env_id, players=2, seat=1, render_mode=mode)
        assert env.unwrapped.game.num_players() == 2 and env.unwrapped.seat == 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
        _obs, _info = env.reset(seed=0)
        assert env.unwrapped.state.current_player() == 1
    with pytest.raises(ValueError, match=r"players must be 2\.\.5"):
        gymnasium.make(env_id, players=9)


# A fresh interpreter that imports gymnasium alone: the short id is unknown (Gymnasium 1.x
# loads no plugins, so nothing registers caribsim's ids at its import); the id that names the
# module imports it, which registers every id, and passes make's options on.
_FRESH_MAKE = """
import sys, gymnasium
from gymnasium.error import NamespaceNotFound
env_id, game = sys.argv[1:]
assert not [m for m in sys.modules if m.split(".")[0] == "caribsim"], "caribsim already imported"
try:
    gymnasium.make(env_id)
except NamespaceNotFound:
    pass
else:
    raise SystemExit(f"{env_id} was made without importing caribsim")
for make_id in (f"caribsim.envs:{env_id}", f"caribsim.embed.envs:{env_id}", env_id):
    env = gymnasium.make(make_id, players=3, seat=2)
    obs, info = env.reset(seed=0)
    assert env.unwrapped.game.name == game and env.unwrapped.game.num_players() == 3
    assert info["seat"] == 2 == env.unwrapped.state.current_player()
    env.step(int(obs["action_mask"].argmax()))
print("made", env.spec.id)
"""


@pytest.mark.parametrize("name", caribsim.games())
def test_gymnasium_make_in_a_fresh_interpreter(name):
    env_id = GYM_IDS[name]
    run = subprocess.run(
        [sys.executable, "-c", _FRESH_MAKE, env_id, name],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["made", env_id]


def test_gymnasium_random_seat_is_drawn_from_the_seed():
    env = gym_env("puerto_rico", players=3, seat="random")
    seats = {}
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        seats[seed] = info["seat"]
        assert env.seat == info["seat"] and env.state.current_player() == env.seat
        assert sorted(env.opponents) == [s for s in range(3) if s != env.seat]
        np.testing.assert_array_equal(
            obs["observation"],
            env.game.normalize_observation(env.state.observation_tensor(env.seat)),
        )
    assert set(seats.values()) == {0, 1, 2}
    again = gym_env("puerto_rico", players=3, seat="random")
    assert all(again.reset(seed=seed)[1]["seat"] == seat for seed, seat in seats.items())
    with pytest.raises(TypeError, match="int or 'random'"):
        gym_env("puerto_rico", players=3, seat="first")


def test_gymnasium_caribsim_bots_as_opponents():
    """caribsim's bots (MCTSBot included) and spec strings are opponents; the episode is
    reproducible from the env seed (the bots are restarted by reset)."""

    def episode():
        env = gym_env("port_royal", players=3, seat=0, opponents=[MCTSBot(iterations=20), "greedy"])
        obs, _ = env.reset(seed=3)
        done, actions = False, []
        while not done:
            a = int(np.flatnonzero(obs["action_mask"])[-1])
            obs, reward, done, _, _ = env.step(a)
            actions.append(a)
        return env.state.history(), reward

    first, second = episode(), episode()
    assert first == second and len(first[0]) > 50
    with pytest.raises(ValueError, match="unknown bot"):
        gym_env("puerto_rico", players=2, opponents=["wizard"])


def test_rgb_array_image_shows_the_board(monkeypatch):
    env = gym_env("puerto_rico", players=3, render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    start = env.render()
    assert (
        start.dtype == np.uint8
        and start.ndim == 3
        and start.shape[2] == 3
        and start.shape[1] == 800
    )
    rng = np.random.default_rng(1)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    end = env.render()
    assert start.shape != end.shape or (start != end).any()
    # the "total" bars (one colour per quantity), top to bottom one per seat, have lengths
    # proportional to the seats' totals
    from caribsim.envs import _BAR_COLOURS

    scores = env.state.scores()
    colour = _BAR_COLOURS[list(scores[0]).index("total")]
    hits = (end == colour).all(axis=2)
    rows = np.flatnonzero(hits.any(axis=1))
    bars = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1)
    widths = [hits[bar[0]].sum() for bar in bars]
    totals = [s["total"] for s in scores if s["total"] > 0]
    assert len(widths) == len(totals) and len(widths) >= 1
    np.testing.assert_allclose(
        np.array(widths) / max(widths), np.array(totals) / max(totals), atol=0.01
    )
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"pip install 'caribsim\[plot\]'"):
        gym_env("puerto_rico", players=3, render_mode="rgb_array")


def test_gymnasium_bad_arguments():
    with pytest.raises(ValueError, match="opponents must list 3 bots"):
        gym_env("puerto_rico", players=4, opponents=[UniformRandomOpponent()])
    with pytest.raises(TypeError, match="step\\(state\\)"):
        gym_env("puerto_rico", players=2, opponents=[object()])
    with pytest.raises(ValueError, match=r"seat must be in 0\.\.1 or 'random'"):
        gym_env("puerto_rico", players=2, seat=2)
    with pytest.raises(ValueError, match="illegal_action"):
        gym_env("puerto_rico", players=2, illegal_action="ignore")


def test_gymnasium_opponents_are_reseeded_by_reset():
    """Bots with restart(seed) are reseeded from the env's seed: same seed, same episode."""

    def episode(seed):
        env = gym_env(
            "puerto_rico", players=3, opponents=[UniformRandomOpponent(), UniformRandomOpponent()]
        )
        obs, _ = env.reset(seed=seed)
        trace, done = [], False
        while not done:
            a = int(np.flatnonzero(obs["action_mask"])[0])
            obs, _r, done, _, _ = env.step(a)
            trace.append(obs["observation"])
        return np.concatenate(trace)

    np.testing.assert_array_equal(episode(5), episode(5))
    assert not np.array_equal(episode(5), episode(6))
