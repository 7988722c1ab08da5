"""Train sb3-contrib's MaskablePPO on a registered caribsim Gymnasium environment, with the
learner's seat drawn at random each episode, and measure its win share against random play.

    pip install 'caribsim[ppo]'        # sb3-contrib, which brings PyTorch (install the build you
                                       # want first, e.g. the CPU one)
    python examples/train_maskable_ppo.py --game puerto_rico --players 2 --steps 200000

The environment is ``gymnasium.make("caribsim/PuertoRico-v0", players=2, seat="random")``:
the learner plays one seat (drawn from the episode's seed), uniformly random opponents play
the others inside the environment, and the reward is the learner's return at the end (1 for a
win, 0 for a loss, shared on a tie). ``MaskablePPO`` reads the legal-action mask through the
environment's ``action_masks()``; an illegal action would raise (``illegal_action="raise"``),
so a finished run proves the policy only ever chose legal moves.

The evaluation plays ``--eval-games`` fresh games (seeds the training never saw), the learner's
seat alternating, and prints the win share (mean return of the learner's seat) with its 95%
interval, beside the share of a uniformly random policy in the same seats and seeds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

try:
    import gymnasium as gym
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker
except ImportError as exc:  # pragma: no cover - depends on the extras
    sys.exit(f"this example needs sb3-contrib and gymnasium: pip install 'caribsim[ppo]' ({exc})")

import caribsim
from caribsim.envs import GYM_IDS


def make_env(game: str, players: int, seat="random"):
    env = gym.make(GYM_IDS[game], players=players, seat=seat, illegal_action="raise")
    return ActionMasker(env, lambda e: e.unwrapped.action_masks())


def play(policy, game: str, players: int, n_games: int, seed: int) -> list[float]:
    """The learner's return in each of ``n_games`` games, seat ``g % players`` in game ``g``;
    ``policy(obs, mask) -> action``."""
    returns = []
    for g in range(n_games):
        env = make_env(game, players, seat=g % players)
        obs, _info = env.reset(seed=seed + g)
        done = False
        reward = 0.0
        while not done:
            mask = env.unwrapped.action_masks()
            obs, reward, terminated, truncated, _info = env.step(policy(obs, mask))
            done = terminated or truncated
        returns.append(float(reward))
    return returns


def share(returns: list[float]) -> dict:
    """Mean return with a normal-approximation 95% interval."""
    n = len(returns)
    mean = float(np.mean(returns))
    half = 1.96 * math.sqrt(max(mean * (1 - mean), 1e-12) / n)
    return {"games": n, "win_share": mean, "ci95": [max(0.0, mean - half), min(1.0, mean + half)]}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--game", default="puerto_rico", choices=sorted(GYM_IDS))
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--steps", type=int, default=200_000, help="training steps of the learner")
    ap.add_argument("--eval-games", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", help="write the trained model here (.zip)")
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.eval_games < 1:
        ap.error("--steps and --eval-games must be >= 1")
    try:
        caribsim.load_game(args.game, players=args.players)
    except (TypeError, ValueError) as exc:
        ap.error(str(exc))

    env = make_env(args.game, args.players)
    env.reset(seed=args.seed)
    model = MaskablePPO(
        "MultiInputPolicy",
        env,
        seed=args.seed,
        verbose=0,
        n_steps=min(2048, args.steps),
        batch_size=min(256, args.steps),
        device="cpu",
    )
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    train_seconds = time.perf_counter() - t0
    if args.save:
        model.save(args.save)

    eval_seed = 10**9 + args.seed  # games the training never saw
    trained = play(
        lambda obs, mask: int(model.predict(obs, action_masks=mask, deterministic=True)[0]),
        args.game,
        args.players,
        args.eval_games,
        eval_seed,
    )
    rng = np.random.default_rng(args.seed)
    uniform = play(
        lambda obs, mask: int(rng.choice(np.flatnonzero(mask))),
        args.game,
        args.players,
        args.eval_games,
        eval_seed,
    )
    out = {
        "game": args.game,
        "players": args.players,
        "steps": args.steps,
        "seed": args.seed,
        "train_seconds": round(train_seconds, 1),
        "trained": share(trained),
        "uniform_random": share(uniform),
        "trained_returns": trained,
    }
    print(f"{args.game} {args.players}p, {args.steps:,} training steps in {train_seconds:.0f} s")
    for name in ("trained", "uniform_random"):
        r = out[name]
        print(
            f"  {name:15s} win share {r['win_share']:.3f} "
            f"(95% {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}) over {r['games']} games against random"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
