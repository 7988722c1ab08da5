"""Golden playthroughs of Puerto Rico and Port Royal (like OpenSpiel's playthroughs).

One seeded random game per player count (2..5): decisions are drawn with random.Random(seed)
over legal_actions(), chance outcomes with state.resolve_chance(). The text records, per step,
the acting player, the action id and name; the full board (str(state)) at the start, at every
role selection and at the end; and the final scores and returns.

Regenerate after an intended change of the rules, names or rendering:

    python tests/playthroughs/generate.py

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
    return 2024 + n


def path_for(n: int) -> Path:
    return HERE / f"puerto_rico_{n}p.txt"


def _obs_digest(state) -> str:
    seat = max(state.current_player(), 0)
    return hashlib.sha256(state.observation_tensor(seat).tobytes()).hexdigest()[:16]


def generate(n: int) -> str:
    import random

    seed = seed_for(n)
    game = caribsim.load_game("puerto_rico", players=n)
    rng = random.Random(seed)
    state = game.new_initial_state(seed=seed)
    out = [f"# caribsim golden playthrough: puerto_rico, players={n}, game seed={seed}, "
           f"decisions random.Random({seed}); regenerate: python tests/playthroughs/generate.py",
           f"game: {game!r}",
           f"num_distinct_actions: {game.num_distinct_actions()}",
           f"observation_tensor_shape: {game.observation_tensor_shape()}",
           f"cargo_ship_capacities: {game.cargo_ship_capacities()}",
           "", "== initial state ==", str(state), ""]
    step = 0
    selections = 0
    while not state.is_terminal():
        if state.is_chance_node():
            probs = dict(state.chance_outcomes())
            a = state.resolve_chance()
            out.append(f"{step:4d} chance   {a:3d} {game.action_to_string(a)}  (p={probs[a]:.6f})")
        else:
            player = state.current_player()
            legal = state.legal_actions()
            if state.step_name() == "role":
                selections += 1
                out += ["", f"== step {step}: role selection {selections} by seat {player} ==", str(state),
                        f"observation digest (seat {player}): {_obs_digest(state)}"]
            a = rng.choice(legal)
            out.append(f"{step:4d} seat {player}   {a:3d} {state.action_to_string(a)}  "
                       f"[legal {','.join(map(str, legal))}]")
            state.apply_action(a)
        step += 1
    out += ["", "== final state ==", str(state), f"steps: {step}", "scores:"]
    for i, sc in enumerate(state.scores()):
        out.append(f"  seat {i}: " + ", ".join(f"{k} {v}" for k, v in sc.items()))
    out.append("returns: " + ", ".join(f"{r:.6f}" for r in state.returns()))
    out.append(f"history length: {len(state.history())}")
    return "\n".join(out) + "\n"


# --- Port Royal -------------------------------------------------------------------------
# One seeded random game per player count, recorded the same way: every chance event (its kind,
# the seat, the card and its probability), every decision with the legal list, the board at the
# start of every turn and at the end, the scores and returns.
PORT_ROYAL_COUNTS = (2, 3, 4, 5)


def port_royal_path_for(n: int) -> Path:
    return HERE / f"port_royal_{n}p.txt"


def generate_port_royal(n: int) -> str:
    import random

    seed = seed_for(n)
    game = caribsim.load_game("port_royal", players=n)
    rng = random.Random(seed)
    state = game.new_initial_state(seed=seed)
    out = [f"# caribsim golden playthrough: port_royal, players={n}, game seed={seed}, "
           f"decisions random.Random({seed}); regenerate: python tests/playthroughs/generate.py",
           f"game: {game!r}",
           f"num_distinct_actions: {game.num_distinct_actions()}",
           f"observation_tensor_shape: {game.observation_tensor_shape()}",
           "", "== initial state ==", str(state), ""]
    step = 0
    turn = 0
    while not state.is_terminal():
        if state.to_dict()["turns"] != turn:
            turn = state.to_dict()["turns"]
            out += ["", f"== step {step}: turn {turn}, seat {state.active_player()} ==", str(state),
                    f"observation digest (seat {state.active_player()}): "
                    f"{hashlib.sha256(state.observation_tensor(state.active_player()).tobytes()).hexdigest()[:16]}"]
        if state.is_chance_node():
            kind, seat = state.chance_event()
            probs = dict(state.chance_outcomes())
            a = state.resolve_chance()
            out.append(f"{step:4d} chance {kind} seat {seat}  {a:3d} {game.action_to_string(a)}  (p={probs[a]:.6f})")
        else:
            player = state.current_player()
            legal = state.legal_actions()
            a = rng.choice(legal)
            out.append(f"{step:4d} seat {player}   {a:3d} {state.action_to_string(a)}  "
                       f"[legal {','.join(map(str, legal))}]")
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
        print(f"wrote {path_for(n)} ({len(text.encode()) // 1024} KB)")
    for n in PORT_ROYAL_COUNTS:
        text = generate_port_royal(n)
        port_royal_path_for(n).write_text(text)
        print(f"wrote {port_royal_path_for(n)} ({len(text.encode()) // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
