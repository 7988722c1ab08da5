"""Golden playthroughs of every game (like OpenSpiel's playthroughs).

One seeded random game per game and player count (2..5): decisions are drawn with
random.Random(seed) over legal_actions(), chance outcomes with state.resolve_chance(). The
text records, per step, the acting player, the action id and name (the chance event's kind
and seat in Port Royal); the full board (str(state)) at the start, at each game's milestone
(Puerto Rico: every role selection; Port Royal: every turn; Cuba: every round's action phase)
with an observation digest, and at the end; the final scores and returns.

Regenerate after an intended change of the rules, names or rendering:

    python tests/playthroughs/generate.py

and review the diff before committing the new files.
"""
from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path

import caribsim

HERE = Path(__file__).resolve().parent
PLAYER_COUNTS = (2, 3, 4, 5)
REGENERATE = "python tests/playthroughs/generate.py"


def _digest(state, seat) -> str:
    return hashlib.sha256(state.observation_tensor(seat).tobytes()).hexdigest()[:16]


class _Milestones:
    """When a game's board is printed: ``lines(state, step)`` gives the section or []."""

    def __init__(self, game: str):
        self.game, self.last = game, 0

    def lines(self, state, step) -> list[str]:
        if self.game == "port_royal":           # every turn, chance events included
            turn = state.to_dict()["turns"]
            if turn == self.last:
                return []
            self.last, seat = turn, state.active_player()
            return ["", f"== step {step}: turn {turn}, seat {seat} ==", str(state),
                    f"observation digest (seat {seat}): {_digest(state, seat)}"]
        if state.is_chance_node():
            return []
        seat = state.current_player()
        if self.game == "puerto_rico" and state.step_name() == "role":
            self.last += 1
            title = f"role selection {self.last} by seat {seat}"
        elif self.game == "cuba" and state.step_name() == "character" and state.round() != self.last:
            self.last = state.round()
            title = f"round {self.last}, action phase"
        else:
            return []
        return ["", f"== step {step}: {title} ==", str(state), f"observation digest (seat {seat}): {_digest(state, seat)}"]


SEEDS = {"puerto_rico": 2024, "port_royal": 2024, "cuba": 3030}   # + the player count
LEGAL_SHOWN = {"cuba": 40}               # longer legal lists are cut after 20 ids


def seed_for(game: str, n: int) -> int:
    return SEEDS[game] + n


def path_for(game: str, n: int) -> Path:
    return HERE / f"{game}_{n}p.txt"


def _chance_label(state, game: str) -> str:
    if game == "port_royal":
        kind, seat = state.chance_event()
        return f"chance {kind} seat {seat}  "
    return "chance   "


def _legal_text(game: str, legal) -> str:
    cap = LEGAL_SHOWN.get(game)
    if cap is not None and len(legal) > cap:
        return f"{','.join(map(str, legal[:20]))},...({len(legal)})"
    return ",".join(map(str, legal))


def generate(game_name: str, n: int) -> str:
    seed = seed_for(game_name, n)
    game = caribsim.load_game(game_name, players=n)
    rng = random.Random(seed)
    state = game.new_initial_state(seed=seed)
    out = [f"# caribsim golden playthrough: {game_name}, players={n}, game seed={seed}, "
           f"decisions random.Random({seed}); regenerate: {REGENERATE}",
           f"game: {game!r}",
           f"num_distinct_actions: {game.num_distinct_actions()}",
           f"observation_tensor_shape: {game.observation_tensor_shape()}"]
    if game_name == "puerto_rico":
        out.append(f"cargo_ship_capacities: {game.cargo_ship_capacities()}")
    out += ["", "== initial state ==", str(state), ""]
    milestones = _Milestones(game_name)
    step = 0
    while not state.is_terminal():
        out += milestones.lines(state, step)
        if state.is_chance_node():
            label = _chance_label(state, game_name)
            probs = dict(state.chance_outcomes())
            a = state.resolve_chance()
            out.append(f"{step:4d} {label}{a:3d} {game.action_to_string(a)}  (p={probs[a]:.6f})")
        else:
            player = state.current_player()
            legal = state.legal_actions()
            a = rng.choice(legal)
            out.append(f"{step:4d} seat {player}   {a:3d} {state.action_to_string(a)}  "
                       f"[legal {_legal_text(game_name, legal)}]")
            state.apply_action(a)
        step += 1
    out += ["", "== final state ==", str(state), f"steps: {step}", "scores:"]
    for i, sc in enumerate(state.scores()):
        out.append(f"  seat {i}: " + ", ".join(f"{k} {v}" for k, v in sc.items()))
    out.append("returns: " + ", ".join(f"{r:.6f}" for r in state.returns()))
    out.append(f"history length: {len(state.history())}")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    for game in SEEDS:
        for n in PLAYER_COUNTS:
            text = generate(game, n)
            path_for(game, n).write_text(text)
            print(f"wrote {path_for(game, n)} ({len(text.encode()) // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
