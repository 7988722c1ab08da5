"""Reinforcement-learning environments over every caribsim game.

- ``pettingzoo_env(game, players=N)``: a PettingZoo AEC environment, one agent per seat
  (``player_0`` ..), observations ``{"observation": float32, "action_mask": int8}``.
- ``gym_env(game, players=N, opponents=[...], seat=0)``: a Gymnasium single-agent
  environment where the learner plays ``seat`` and the other seats are played by bots
  (any object with ``step(state) -> action``; default: ``UniformRandomOpponent``).

Both work for any game of ``caribsim.games()`` through the common state API
(``legal_actions``, ``apply_action``, ``resolve_chance``, ``observation_tensor``,
``returns``); chance nodes are resolved inside with the game's own RNG, seeded from the
environment's ``reset(seed=...)``. Rewards are the game's returns at the end (1 for the
winner, a shared win split, 0 otherwise), 0 before.

Needs the ``rl`` extra: ``pip install 'caribsim[rl]'``.
"""
from __future__ import annotations

import operator
import random

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

import caribsim

# Observations are counts and flags; the Box bounds only say "finite" (exact floats).
OBS_BOUND = float(2 ** 24)
ILLEGAL_MODES = ("lose", "raise")


def _load(game, players, options):
    if isinstance(game, str):
        return caribsim.load_game(game, players=players, **options)
    if options or players is not None:
        raise TypeError("players/options are only accepted with a game name, not a loaded game")
    if not hasattr(game, "new_initial_state"):
        raise TypeError(f"game must be a game name or a loaded caribsim game, got {type(game).__name__}")
    return game


def _observation_space(game):
    n_obs = int(np.prod(game.observation_tensor_shape()))
    return spaces.Dict({
        "observation": spaces.Box(-OBS_BOUND, OBS_BOUND, (n_obs,), np.float32),
        "action_mask": spaces.Box(0, 1, (game.num_distinct_actions(),), np.int8),
    })


def _action_id(action, n_actions):
    if isinstance(action, (bool, np.bool_)):
        raise TypeError("action must be an int, got bool")
    try:
        a = operator.index(action)
    except TypeError:
        arr = np.asarray(action)
        if arr.shape == () and arr.dtype.kind in "iu":
            a = int(arr)
        else:
            raise TypeError(f"action must be an int, got {type(action).__name__}") from None
    return a


def _resolve(state):
    while state.is_chance_node():
        state.resolve_chance()


def _mask(state, seat, n_actions):
    mask = np.zeros(n_actions, dtype=np.int8)
    if not state.is_terminal() and state.current_player() == seat:
        mask[state.legal_actions()] = 1
    return mask


class UniformRandomOpponent:
    """A bot choosing uniformly among the legal actions (``step(state) -> action``)."""

    def __init__(self, seed: int = 0):
        self.restart(seed)

    def restart(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def step(self, state) -> int:
        return self.rng.choice(state.legal_actions())

    def __repr__(self):
        return "UniformRandomOpponent()"


# --------------------------------------------------------------------------------------
# PettingZoo AEC
# --------------------------------------------------------------------------------------
class CaribsimAECEnv(AECEnv):
    """PettingZoo AEC environment of a caribsim game (see ``pettingzoo_env``)."""

    metadata = {"render_modes": ["human", "ansi"], "name": "caribsim_v0", "is_parallelizable": False}

    def __init__(self, game, render_mode=None):
        super().__init__()
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.game = game
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"caribsim_{getattr(game, 'name', 'game')}_v0"}
        self._n_actions = game.num_distinct_actions()
        self.possible_agents = [f"player_{i}" for i in range(game.num_players())]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = _observation_space(game)
        # one space object per agent (seeded separately by PettingZoo's tests)
        self.observation_spaces = {a: _observation_space(game) if i else obs_space
                                   for i, a in enumerate(self.possible_agents)}
        self.action_spaces = {a: spaces.Discrete(self._n_actions) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self.state = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self.game.new_initial_state(seed=int(self._rng.integers(2 ** 63)))
        _resolve(self.state)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.state.current_player()]

    def observe(self, agent):
        seat = self._seat[agent]
        return {
            "observation": np.asarray(self.state.observation_tensor(seat), dtype=np.float32),
            "action_mask": _mask(self.state, seat, self._n_actions),
        }

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        a = _action_id(action, self._n_actions)
        legal = self.state.legal_actions()
        if a not in legal:
            names = ", ".join(f"{x} ({self.state.action_to_string(x)})" for x in legal)
            raise ValueError(f"{agent}: action {a} is not legal; legal: {names}")
        self._cumulative_rewards[agent] = 0.0
        self.state.apply_action(a)
        _resolve(self.state)
        if self.state.is_terminal():
            returns = self.state.returns()
            for other in self.agents:
                self.rewards[other] = float(returns[self._seat[other]])
                self.terminations[other] = True
            # the dead agents are then removed one by one, starting after the mover
            seat = self._seat[agent]
            self.agent_selection = self.possible_agents[(seat + 1) % len(self.possible_agents)]
        else:
            for other in self.agents:
                self.rewards[other] = 0.0
            self.agent_selection = self.possible_agents[self.state.current_player()]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode (use 'human' or 'ansi')")
            return None
        text = str(self.state)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass

    def __str__(self):
        return self.metadata["name"]


def pettingzoo_env(game, players=None, render_mode=None, **options) -> CaribsimAECEnv:
    """A PettingZoo AEC environment of ``game`` (a name, with ``players`` and options,
    or a loaded game). Each seat is an agent ``player_<seat>``; its observation is
    ``{"observation": float32 game observation from its seat, "action_mask": int8}``
    (the mask is all zeros when it is not the agent's turn). An illegal action raises
    ValueError and leaves the game unchanged."""
    return CaribsimAECEnv(_load(game, players, options), render_mode=render_mode)


# --------------------------------------------------------------------------------------
# Gymnasium single agent
# --------------------------------------------------------------------------------------
class CaribsimGymEnv(gymnasium.Env):
    """Gymnasium environment of a caribsim game from one seat (see ``gym_env``)."""

    metadata = {"render_modes": ["human", "ansi"]}

    def __init__(self, game, opponents=None, seat=0, illegal_action="lose",
                 illegal_reward=-1.0, render_mode=None):
        super().__init__()
        n = game.num_players()
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)):
            raise TypeError(f"seat must be an int, got {type(seat).__name__}")
        if not 0 <= seat < n:
            raise ValueError(f"seat must be in 0..{n - 1}, got {seat}")
        if opponents is None:
            opponents = [UniformRandomOpponent() for _ in range(n - 1)]
        opponents = list(opponents)
        if len(opponents) != n - 1:
            raise ValueError(f"opponents must list {n - 1} bots (one per other seat), got {len(opponents)}")
        for bot in opponents:
            if not callable(getattr(bot, "step", None)):
                raise TypeError(f"each opponent needs a step(state) -> action method, got {type(bot).__name__}")
        if illegal_action not in ILLEGAL_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_MODES}, got {illegal_action!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.game = game
        self.seat = int(seat)
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        # seat -> bot, for the other seats in seat order
        others = [s for s in range(n) if s != self.seat]
        self.opponents = dict(zip(others, opponents))
        self._n_actions = game.num_distinct_actions()
        self.observation_space = _observation_space(game)
        self.action_space = spaces.Discrete(self._n_actions)
        self.state = None
        self._done = True

    def _obs(self):
        return {
            "observation": np.asarray(self.state.observation_tensor(self.seat), dtype=np.float32),
            "action_mask": _mask(self.state, self.seat, self._n_actions),
        }

    def _info(self, **extra):
        info = {"action_mask": _mask(self.state, self.seat, self._n_actions)}
        if self.state.is_terminal():
            info["returns"] = list(self.state.returns())
        info.update(extra)
        return info

    def action_masks(self):
        """The legal-action mask (bool) for maskable-policy libraries."""
        return _mask(self.state, self.seat, self._n_actions).astype(bool)

    def _advance(self):
        """Resolve chance and let the bots play until the learner's turn or the end."""
        while True:
            _resolve(self.state)
            if self.state.is_terminal():
                return
            p = self.state.current_player()
            if p == self.seat:
                return
            self.state.apply_action(self.opponents[p].step(self.state))

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        rng = self.np_random
        self.state = self.game.new_initial_state(seed=int(rng.integers(2 ** 63)))
        for p in sorted(self.opponents):
            bot = self.opponents[p]
            if callable(getattr(bot, "restart", None)):
                bot.restart(int(rng.integers(2 ** 63)))
        self._advance()
        self._done = self.state.is_terminal()
        return self._obs(), self._info()

    def step(self, action):
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        a = _action_id(action, self._n_actions)
        legal = self.state.legal_actions()
        if a not in legal:
            if self.illegal_action == "raise":
                names = ", ".join(f"{x} ({self.state.action_to_string(x)})" for x in legal)
                raise ValueError(f"action {a} is not legal; legal: {names}")
            # "lose": the episode ends at once with illegal_reward (state unchanged)
            obs = self._obs()
            obs["action_mask"][:] = 0
            info = self._info(illegal_action=True)
            info["action_mask"][:] = 0
            self._done = True
            return obs, self.illegal_reward, True, False, info
        self.state.apply_action(a)
        self._advance()
        done = self._done = self.state.is_terminal()
        reward = float(self.state.returns()[self.seat]) if done else 0.0
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, done, False, self._info()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode (use 'human' or 'ansi')")
            return None
        text = str(self.state)
        if self.render_mode == "human":
            print(text)
            return None
        return text


def gym_env(game, players=None, opponents=None, seat=0, illegal_action="lose",
            illegal_reward=-1.0, render_mode=None, **options) -> CaribsimGymEnv:
    """A Gymnasium environment of ``game`` played from ``seat``; the other seats are played
    by ``opponents`` (one bot per other seat, in seat order; any object with
    ``step(state) -> action`` and optionally ``restart(seed)``; default uniform random).

    Observation: ``{"observation": float32, "action_mask": int8}``; ``info["action_mask"]``
    and ``action_masks()`` give the mask too. Reward: the seat's return at the end.
    An illegal action ends the episode with ``illegal_reward`` (``illegal_action="lose"``,
    the default, as PettingZoo's classic games do) or raises ValueError (``"raise"``)."""
    return CaribsimGymEnv(_load(game, players, options), opponents=opponents, seat=seat,
                          illegal_action=illegal_action, illegal_reward=illegal_reward,
                          render_mode=render_mode)
