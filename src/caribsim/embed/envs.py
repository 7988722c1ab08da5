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

ILLEGAL_MODES = ("lose", "raise")
OBSERVATION_MODES = ("normalized", "raw")
"""``observation="normalized"`` (the default): ``game.normalize_observation`` of the game's
observation, every entry in [0, 1], space ``Box(0, 1)``; ``"raw"``: the game's observation
as it is (counts and flags), space ``Box(low, high)`` of ``game.observation_bounds()``."""


def _load(game, players, options):
    if isinstance(game, str):
        return caribsim.load_game(game, players=players, **options)
    if options or players is not None:
        raise TypeError("players/options are only accepted with a game name, not a loaded game")
    if not hasattr(game, "new_initial_state"):
        raise TypeError(
            f"game must be a game name or a loaded caribsim game, got {type(game).__name__}"
        )
    return game


def _check_observation_mode(mode):
    if mode not in OBSERVATION_MODES:
        raise ValueError(f"observation must be one of {OBSERVATION_MODES}, got {mode!r}")
    return mode


# The raw Box's high of an entry the rules leave unbounded (high = inf): the range of the C
# counter that holds it (int16: doubloons, VP, pesos, items), since Gymnasium's checker warns
# about an infinite Box bound.
COUNTER_MAX = float(2**15 - 1)


def _raw_box(game):
    """The raw view's Box: the true bounds of ``game.observation_bounds()``, except that an
    entry whose true range is one value (a constant of the game: a ship's capacity, an absent
    seat's zeros, a building not in play) gets ``high = low + 1`` (Gymnasium's checker warns
    about a Box whose low equals its high; the widened range still contains the value), and
    an unbounded entry gets ``COUNTER_MAX``, its C counter's largest value."""
    low, high = game.observation_bounds()
    high = np.where(high == low, low + 1, np.where(np.isfinite(high), high, COUNTER_MAX)).astype(
        np.float32
    )
    return spaces.Box(low.copy(), high, (low.shape[0],), np.float32)


def _observation_space(game, observation="normalized"):
    n_obs = int(np.prod(game.observation_tensor_shape()))
    box = (
        spaces.Box(0.0, 1.0, (n_obs,), np.float32)
        if observation == "normalized"
        else _raw_box(game)
    )
    return spaces.Dict(
        {
            "observation": box,
            "action_mask": spaces.Box(0, 1, (game.num_distinct_actions(),), np.int8),
        }
    )


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


def _view(game, state, seat, mode):
    obs = np.asarray(state.observation_tensor(seat), dtype=np.float32)
    return game.normalize_observation(obs) if mode == "normalized" else obs


def _mask(state, seat, n_actions):
    mask = np.zeros(n_actions, dtype=np.int8)
    if not state.is_terminal() and state.current_player() == seat:
        mask[state.legal_actions()] = 1
    return mask


RENDER_MODES = ["human", "ansi", "rgb_array"]
_BAR_COLOURS = np.array(
    [
        (66, 133, 244),
        (219, 68, 55),
        (244, 180, 0),
        (15, 157, 88),
        (171, 71, 188),
        (0, 172, 193),
        (255, 112, 67),
    ],
    np.uint8,
)


def _check_render_mode(mode):
    if mode not in (None, *RENDER_MODES):
        raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {mode!r}")
    if mode == "rgb_array":
        _pillow()


def _pillow():
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise ImportError(
            "render_mode='rgb_array' needs Pillow: pip install 'caribsim[plot]'"
        ) from None
    return Image, ImageDraw


def board_image(state, width: int = 800) -> np.ndarray:
    """An RGB image (uint8, height x width x 3) of the board: per seat a bar for each of its
    ``scores()`` quantities (scaled to the largest value of that quantity over the seats,
    with its value written beside it), then the board as text (``str(state)``)."""
    Image, ImageDraw = _pillow()
    scores = state.scores()
    keys = list(scores[0])
    top = {k: max(1, max(sc[k] for sc in scores)) for k in keys}
    line, bar_w = 14, width - 260
    lines = str(state).splitlines()
    height = 24 + len(scores) * (len(keys) * line + 18) + 10 + line * len(lines) + 10
    img = Image.new("RGB", (width, height), (250, 250, 245))
    draw = ImageDraw.Draw(img)
    draw.text(
        (8, 6),
        f"{state.game.name}: to act {state.current_player()}"
        + (" (game over)" if state.is_terminal() else ""),
        fill=(0, 0, 0),
    )
    y = 24
    for seat, sc in enumerate(scores):
        draw.text((8, y), f"seat {seat}", fill=(0, 0, 0))
        y += line
        for k_i, k in enumerate(keys):
            colour = tuple(int(c) for c in _BAR_COLOURS[k_i % len(_BAR_COLOURS)])
            draw.text((20, y), k, fill=(60, 60, 60))
            length = int(bar_w * max(0, sc[k]) / top[k])
            if length:
                draw.rectangle([130, y + 2, 130 + length, y + line - 3], fill=colour)
            draw.text((136 + length, y), str(sc[k]), fill=(0, 0, 0))
            y += line
        y += 4
    y += 10
    for text in lines:
        draw.text((8, y), text, fill=(20, 20, 20))
        y += line
    return np.asarray(img, dtype=np.uint8)


def _render(env):
    if env.render_mode is None:
        gymnasium.logger.warn(
            "render() called without a render_mode (use 'human', 'ansi' or 'rgb_array')"
        )
        return None
    if env.render_mode == "rgb_array":
        return board_image(env.state)
    text = str(env.state)
    if env.render_mode == "human":
        print(text)
        return None
    return text


def _opponent(bot):
    """A bot object, or a spec string of ``caribsim.bots.parse_bot`` ("random", "mcts:200")."""
    if isinstance(bot, str):
        from caribsim.search.bots import parse_bot

        bot = parse_bot(bot)
    if not callable(getattr(bot, "step", None)):
        raise TypeError(
            f"each opponent needs a step(state) -> action method, got {type(bot).__name__}"
        )
    return bot


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

    # a class-level dict by design: AECEnv declares ``metadata: dict`` (not a ClassVar)
    metadata = {  # noqa: RUF012
        "render_modes": RENDER_MODES,
        "name": "caribsim_v0",
        "is_parallelizable": False,
        "render_fps": 4,
    }

    def __init__(self, game, render_mode=None, bots=None, observation="normalized"):
        super().__init__()
        _check_render_mode(render_mode)
        self.observation_mode = _check_observation_mode(observation)
        n = game.num_players()
        bots = dict(bots or {})
        for seat in bots:
            if (
                isinstance(seat, bool)
                or not isinstance(seat, (int, np.integer))
                or not 0 <= seat < n
            ):
                raise ValueError(f"bots must map seats 0..{n - 1} to bots, got key {seat!r}")
        if len(bots) >= n:
            raise ValueError(f"at least one seat must be an agent: bots cover all {n} seats")
        self.bots = {int(k): _opponent(v) for k, v in bots.items()}
        self.game = game
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"caribsim_{getattr(game, 'name', 'game')}_v0"}
        self._n_actions = game.num_distinct_actions()
        self.possible_agents = [f"player_{i}" for i in range(n) if i not in self.bots]
        self._seat = {a: int(a.split("_")[1]) for a in self.possible_agents}
        self._agent = {seat: a for a, seat in self._seat.items()}
        obs_space = _observation_space(game, observation)
        # one space object per agent (seeded separately by PettingZoo's tests)
        self.observation_spaces = {
            a: _observation_space(game, observation) if i else obs_space
            for i, a in enumerate(self.possible_agents)
        }
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
        self.state = self.game.new_initial_state(seed=int(self._rng.integers(2**63)))
        for seat in sorted(self.bots):
            if callable(getattr(self.bots[seat], "restart", None)):
                self.bots[seat].restart(int(self._rng.integers(2**63)))
        self._advance()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self._to_select()

    def _advance(self):
        """Resolve chance and let the env's bots play until an agent's turn or the end."""
        while True:
            _resolve(self.state)
            p = self.state.current_player()
            if self.state.is_terminal() or p not in self.bots:
                return
            self.state.apply_action(self.bots[p].step(self.state))

    def _to_select(self):
        if self.state.is_terminal():
            return self.agents[0] if self.agents else self.possible_agents[0]
        return self._agent[self.state.current_player()]

    def observe(self, agent):
        seat = self._seat[agent]
        return {
            "observation": _view(self.game, self.state, seat, self.observation_mode),
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
        self._advance()
        if self.state.is_terminal():
            returns = self.state.returns()
            for other in self.agents:
                self.rewards[other] = float(returns[self._seat[other]])
                self.terminations[other] = True
            # the dead agents are then removed one by one, starting after the mover
            i = self.possible_agents.index(agent)
            self.agent_selection = self.possible_agents[(i + 1) % len(self.possible_agents)]
        else:
            for other in self.agents:
                self.rewards[other] = 0.0
            self.agent_selection = self._to_select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        return _render(self)

    def close(self):
        pass

    def __str__(self):
        return self.metadata["name"]


def pettingzoo_env(
    game, players=None, render_mode=None, bots=None, observation="normalized", **options
) -> CaribsimAECEnv:
    """A PettingZoo AEC environment of ``game`` (a name, with ``players`` and options,
    or a loaded game). Each seat is an agent ``player_<seat>`` (self-play: give every agent
    the same policy), except the seats of ``bots`` ({seat: bot or spec string}), which the
    environment plays itself. An agent's observation is ``{"observation": float32 game
    observation from its seat, "action_mask": int8}`` (the mask is all zeros when it is not
    the agent's turn); ``observation="normalized"`` (default: every entry in [0, 1], ``Box(0,
    1)``) or ``"raw"`` (the counts and flags, ``Box`` of the game's true bounds), see
    ``OBSERVATION_MODES``. An illegal action raises ValueError and leaves the game unchanged."""
    return CaribsimAECEnv(
        _load(game, players, options), render_mode=render_mode, bots=bots, observation=observation
    )


# --------------------------------------------------------------------------------------
# Gymnasium single agent
# --------------------------------------------------------------------------------------
class CaribsimGymEnv(gymnasium.Env):
    """Gymnasium environment of a caribsim game from one seat (see ``gym_env``)."""

    # a class-level dict by design: gymnasium.Env declares ``metadata: dict`` (not a ClassVar)
    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        game,
        opponents=None,
        seat=0,
        illegal_action="lose",
        illegal_reward=-1.0,
        render_mode=None,
        observation="normalized",
    ):
        super().__init__()
        self.observation_mode = _check_observation_mode(observation)
        n = game.num_players()
        if seat != "random":
            if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)):
                raise TypeError(f"seat must be an int or 'random', got {seat!r}")
            if not 0 <= seat < n:
                raise ValueError(f"seat must be in 0..{n - 1} or 'random', got {seat}")
        if opponents is None:
            opponents = [UniformRandomOpponent() for _ in range(n - 1)]
        opponents = list(opponents)
        if len(opponents) != n - 1:
            raise ValueError(
                f"opponents must list {n - 1} bots (one per other seat), got {len(opponents)}"
            )
        opponents = [_opponent(bot) for bot in opponents]
        if illegal_action not in ILLEGAL_MODES:
            raise ValueError(
                f"illegal_action must be one of {ILLEGAL_MODES}, got {illegal_action!r}"
            )
        _check_render_mode(render_mode)
        self.game = game
        self.seat_option = seat
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self._bots = opponents
        self._seat_to(0 if seat == "random" else int(seat))
        self._n_actions = game.num_distinct_actions()
        self.observation_space = _observation_space(game, observation)
        self.action_space = spaces.Discrete(self._n_actions)
        self.state = None
        self._done = True

    def _seat_to(self, seat):
        # seat -> bot: the bots take the other seats in seat order
        self.seat = seat
        others = [s for s in range(self.game.num_players()) if s != seat]
        self.opponents = dict(zip(others, self._bots))

    def _obs(self):
        return {
            "observation": _view(self.game, self.state, self.seat, self.observation_mode),
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
        if self.seat_option == "random":
            self._seat_to(int(rng.integers(self.game.num_players())))
        self.state = self.game.new_initial_state(seed=int(rng.integers(2**63)))
        for p in sorted(self.opponents):
            bot = self.opponents[p]
            if callable(getattr(bot, "restart", None)):
                bot.restart(int(rng.integers(2**63)))
        self._advance()
        self._done = self.state.is_terminal()
        return self._obs(), self._info(seat=self.seat)

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
        return _render(self)


def gym_env(
    game,
    players=None,
    opponents=None,
    seat=0,
    illegal_action="lose",
    illegal_reward=-1.0,
    render_mode=None,
    observation="normalized",
    **options,
) -> CaribsimGymEnv:
    """A Gymnasium environment of ``game`` played from ``seat`` (a seat, or ``"random"``: drawn
    at each ``reset`` from the environment's seed, given in ``info["seat"]``); the other seats
    are played by ``opponents`` (one bot per other seat, in seat order; any object with
    ``step(state) -> action`` and optionally ``restart(seed)``, e.g. ``caribsim.bots.MCTSBot``,
    or a spec string such as ``"mcts:200"``; default uniform random).

    Observation: ``{"observation": float32, "action_mask": int8}``, the observation
    normalised to [0, 1] (``observation="normalized"``, the default) or raw (``"raw"``, in the
    game's true bounds); ``info["action_mask"]`` and ``action_masks()`` give the mask too. Reward: the seat's return at the end.
    An illegal action ends the episode with ``illegal_reward`` (``illegal_action="lose"``,
    the default, as PettingZoo's classic games do) or raises ValueError (``"raise"``)."""
    return CaribsimGymEnv(
        _load(game, players, options),
        opponents=opponents,
        seat=seat,
        illegal_action=illegal_action,
        illegal_reward=illegal_reward,
        render_mode=render_mode,
        observation=observation,
    )


# --------------------------------------------------------------------------------------
# Gymnasium registration: gymnasium.make("caribsim/PuertoRico-v0", players=3, ...)
# --------------------------------------------------------------------------------------
GYM_IDS = {
    "puerto_rico": "caribsim/PuertoRico-v0",
    "port_royal": "caribsim/PortRoyal-v0",
    "cuba": "caribsim/Cuba-v0",
}


def _register_gym():
    # make_vec(id, num_envs) uses the vector entry point (games stepped in C, random opponents);
    # vectorization_mode="sync"/"async" vectorises gym_env (any bots) instead
    for name, env_id in GYM_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                env_id,
                entry_point="caribsim.embed.envs:gym_env",
                kwargs={"game": name},
                vector_entry_point="caribsim.embed.vector_env:vector_env",
                disable_env_checker=False,
            )


_register_gym()
