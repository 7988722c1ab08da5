"""A Gymnasium vector environment over ``caribsim.VectorGame``: n games stepped in C.

    >>> import gymnasium, caribsim.envs
    >>> envs = gymnasium.make_vec("caribsim/PuertoRico-v0", num_envs=1024, players=4, seat=0)
    >>> obs, info = envs.reset(seed=0)       # obs["observation"]: (1024, 588) float32 in [0, 1]

Observations are normalised to [0, 1] by default (``observation="normalized"``, the
Gymnasium convention; ``"raw"`` gives the game's counts, in ``Box`` of its true bounds).

The learner plays ``seat`` in every sub-environment, or with ``seat="random"`` a seat drawn
for each episode of each sub-environment (from the environment's generator, so from the
reset seed; ``info["seat"]`` gives every sub-environment's current seat, and
``info["final_info"]["seat"]`` the seat of an episode that ended); the other seats play
uniformly random legal actions drawn in C (``VectorGame.step(actions, until=seats,
until_next=next_seats)``, the generator of ``VectorGame.sample_legal``), so one ``step`` is one
C loop over the batch.

Autoreset: ``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``). A sub-environment
whose episode ends in a step is reset in that step: the returned observation is the first
one of its next episode, and ``info["final_obs"][i]`` (with the mask ``info["_final_obs"]``)
is the observation the episode ended with; ``info["final_info"]`` holds its ``returns``,
``scores`` (every seat) and ``episode_length`` (decisions of every seat), masked by
``info["final_info"]["_returns"]`` etc., as ``gymnasium.vector.SyncVectorEnv`` lays them out.

Needs the ``rl`` extra (Gymnasium).
"""

from __future__ import annotations

import operator

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from caribsim.embed.envs import _check_observation_mode, _load, _observation_space
from caribsim.embed.vector import VectorGame


class CaribsimVectorEnv(VectorEnv):
    """``num_envs`` games of one caribsim game, the learner in ``seat`` (an int, or "random":
    drawn per episode), random opponents in C (see the module docstring and ``vector_env``)."""

    # a class-level dict by design: VectorEnv declares ``metadata: dict`` (not a ClassVar)
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}  # noqa: RUF012
    render_mode = None

    def __init__(self, game, num_envs=16, seat=0, opponents=None, observation="normalized"):
        players = game.num_players()
        self.observation_mode = _check_observation_mode(observation)
        self._normalized = observation == "normalized"
        if isinstance(seat, str):
            if seat != "random":
                raise ValueError(f"seat must be an int 0..{players - 1} or 'random', got {seat!r}")
        elif isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)):
            raise TypeError(
                f"seat must be an int 0..{players - 1} (the learner's seat in every "
                f"sub-environment) or 'random' (drawn per episode), got {seat!r}"
            )
        elif not 0 <= seat < players:
            raise ValueError(f"seat must be in 0..{players - 1} or 'random', got {seat}")
        if opponents is not None and (
            isinstance(opponents, str)
            or any(not (isinstance(o, str) and o == "random") for o in opponents)
        ):
            raise ValueError(
                "the vector environment plays the other seats uniformly at random in C "
                "(opponents=None); for other bots vectorise gym_env instead: "
                "gymnasium.make_vec(id, num_envs, vectorization_mode='sync', opponents=[...])"
            )
        self.game = game
        self.random_seat = seat == "random"
        self.vg = VectorGame(game, n=num_envs, seed=0)
        self.num_envs = len(self.vg)
        self.players = players
        # the learner's seat in each sub-environment (this episode) and in its next episode
        self.seats = np.full(self.num_envs, 0 if self.random_seat else int(seat), np.int32)
        self.next_seats = self.seats.copy()
        self.single_observation_space = _observation_space(game, observation)
        self.single_action_space = spaces.Discrete(self.vg.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._started = False

    @property
    def seat(self):
        """The learner's seat: an int, or with ``seat="random"`` the array of every
        sub-environment's current seat."""
        return self.seats.copy() if self.random_seat else int(self.seats[0])

    def _draw_seats(self, count):
        return self.np_random.integers(self.players, size=count).astype(np.int32)

    def _obs(self):
        # new arrays each call: the VectorGame's buffers are overwritten by its next call
        obs = self.vg.observations(seat=self.seats, normalized=self._normalized)
        return {
            "observation": obs if self._normalized else obs.copy(),
            "action_mask": self.vg.legal_mask().astype(np.int8),
        }

    def reset(self, *, seed=None, options=None):
        """Start every sub-environment afresh. ``seed``: an int >= 0 (sub-environment i then
        depends only on (seed, i)); None draws one from the environment's generator."""
        if seed is not None:
            if isinstance(seed, (bool, np.bool_)):
                raise TypeError("seed must be an int >= 0 or None, got a bool")
            try:
                seed = operator.index(seed)
            except TypeError:
                raise TypeError(
                    f"seed must be an int >= 0 or None (one seed for the batch), "
                    f"got {type(seed).__name__}"
                ) from None
            if not 0 <= seed < 2**64:
                raise ValueError(f"seed must be in 0..{2**64 - 1}, got {seed}")
        if options:
            raise ValueError(f"reset takes no options, got {sorted(options)}")
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**63))
        if self.random_seat:
            self.seats[:] = self._draw_seats(self.num_envs)
            self.next_seats[:] = self._draw_seats(self.num_envs)
        self.vg.reset(seed=seed, until=self.seats)
        self._started = True
        return self._obs(), self._seat_info()

    def _seat_info(self):
        return (
            {"seat": self.seats.copy(), "_seat": np.ones(self.num_envs, bool)}
            if self.random_seat
            else {}
        )

    def step(self, actions):
        """One action per sub-environment (integers of shape (num_envs,), each legal for the
        learner): an illegal one raises ValueError naming the sub-environment, nothing changed."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        self.vg.step(actions, until=self.seats, until_next=self.next_seats)
        terminated = self.vg.terminated().copy()
        rewards = self.vg.rewards()[np.arange(self.num_envs), self.seats].astype(np.float64)
        infos = {}
        if terminated.any():
            final_obs = self.vg.final_observations(self.seats, normalized=self._normalized)
            returns, scores = self.vg.final_returns(), self.vg.final_scores()
            lengths = self.vg.episode_lengths()
            for i in np.flatnonzero(terminated):
                final_info = {
                    "returns": returns[i].astype(np.float64),
                    "scores": scores[i].copy(),
                    "episode_length": int(lengths[i]),
                }
                if self.random_seat:
                    final_info["seat"] = int(self.seats[i])
                infos = self._add_info(
                    infos,
                    {
                        "final_obs": {
                            "observation": final_obs[i].copy(),
                            "action_mask": np.zeros(self.vg.num_actions, np.int8),
                        },
                        "final_info": final_info,
                    },
                    int(i),
                )
            if self.random_seat:  # the finished episodes' successors were advanced to next_seats
                done = np.flatnonzero(terminated)
                self.seats[done] = self.next_seats[done]
                self.next_seats[done] = self._draw_seats(len(done))
        infos.update(self._seat_info())
        return self._obs(), rewards, terminated, np.zeros(self.num_envs, bool), infos

    def action_masks(self):
        """(num_envs, num_actions) bool: the learner's legal actions (maskable policies)."""
        return self.vg.legal_mask().astype(bool)


def vector_env(
    game, num_envs=16, players=None, seat=0, opponents=None, observation="normalized", **options
) -> CaribsimVectorEnv:
    """A ``CaribsimVectorEnv`` of ``game`` (a name with ``players`` and the game's options, or
    a loaded game): ``num_envs`` games, the learner in ``seat`` (an int, or "random": drawn
    per episode), the other seats random in C.
    ``observation``: ``"normalized"`` (default, in [0, 1]) or ``"raw"``, as ``gym_env``.
    Also ``gymnasium.make_vec("caribsim/<Game>-v0", num_envs, ...)``."""
    return CaribsimVectorEnv(
        _load(game, players, options),
        num_envs=num_envs,
        seat=seat,
        opponents=opponents,
        observation=observation,
    )
