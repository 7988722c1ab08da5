"""Golden playthroughs of Cuba (like OpenSpiel's playthroughs).

One seeded random game per player count (2..5): decisions are drawn with random.Random(seed)
over legal_actions(), chance outcomes with state.resolve_chance(). The text records, per
step, the acting player, the action id and name; the full board (str(state)) at the start,
at the start of every round's action phase and at the end; an observation digest; and the
final scores and returns.

Regenerate after an intended change of the rules, names or rendering:

    python tests/playthroughs/generate_cuba.py

and review the diff before committing the new files.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import caribsim

HERE = Path(__file__).resolve().parent
PLAYER_COUNTS = (2, 3, 4, 5)


def seed_for(n: int) -> int:
    return 3030 + n


def path_for(n: int) -> Path:
    return HERE / f"cuba_{n}p.txt"


def _obs_digest(state, seat) -> str:
    return hashlib.sha256(state.observation_tensor(seat).tobytes()).hexdigest()[:16]


def generate(n: int) -> str:
    import random

    seed = seed_for(n)
    game = caribsim.load_game("cuba", players=n)
    rng = random.Random(seed)
    state = game.new_initial_state(seed=seed)
    out = [f"# caribsim golden playthrough: cuba, players={n}, game seed={seed}, "
           f"decisions random.Random({seed}); regenerate: python tests/playthroughs/generate_cuba.py",
           f"game: {game!r}",
           f"num_distinct_actions: {game.num_distinct_actions()}",
           f"observation_tensor_shape: {game.observation_tensor_shape()}",
           "", "== initial state ==", str(state), ""]
    step = 0
    last_round = 0
    while not state.is_terminal():
        if state.is_chance_node():
            probs = dict(state.chance_outcomes())
            a = state.resolve_chance()
            out.append(f"{step:4d} chance   {a:3d} {game.action_to_string(a)}  (p={probs[a]:.6f})")
        else:
            player = state.current_player()
            legal = state.legal_actions()
            if state.step_name() == "character" and state.round() != last_round:
                last_round = state.round()
                out += ["", f"== step {step}: round {last_round}, action phase ==", str(state),
                        f"observation digest (seat {player}): {_obs_digest(state, player)}"]
            a = rng.choice(legal)
            shown = ",".join(map(str, legal)) if len(legal) <= 40 else \
                f"{','.join(map(str, legal[:20]))},...({len(legal)})"
            out.append(f"{step:4d} seat {player}   {a:3d} {state.action_to_string(a)}  [legal {shown}]")
            state.apply_action(a)
        step += 1
    out += ["", "== final state ==", str(state), f"steps: {step}", "scores:"]
    for i, sc in enumerate(state.scores()):
        out.append(f"  seat {i}: " + ", ".join(f"{k} {v}" for k, v in sc.items()))
    out.append("returns: " + ", ".join(f"{r:.6f}" for r in state.returns()))
    out.append(f"history length: {len(state.history())}")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    for n in PLAYER_COUNTS:
        text = generate(n)
        path_for(n).write_text(text)
        print(f"wrote {path_for(n)} ({len(text.encode())} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
