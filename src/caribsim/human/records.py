"""Game records: one versioned JSON format for every game (docs/records.md).

    >>> from caribsim import records
    >>> rec = records.record_game(state)            # from a played state (its history)
    >>> records.save(rec, "game.json")
    >>> final = records.replay(records.load("game.json"))   # validated, identical final state

A record holds the game and its options, the seed of the initial state, every step
(action id and name, the seat that took it or -1 for a chance outcome), the final
scores and returns (when the game is over) and the caribsim version.
"""

from __future__ import annotations

import json
import reprlib
from pathlib import Path

import caribsim
from caribsim._common import _int_in, _read_json_file
from caribsim._game import GameState

FORMAT = "caribsim-record"
VERSION = 1


class RecordError(ValueError):
    """A record that is malformed or does not replay; the message names the first bad step."""


def record_game(state, seed: int, players_info=None) -> dict:
    """The record of ``state``'s game, made from ``game.new_initial_state(seed)`` and the
    actions in ``state.history()``. ``players_info`` is an optional list, one entry per
    seat (e.g. bot specs or "human")."""
    game = state.game
    replayed = game.new_initial_state(seed=seed)
    steps = []
    for i, action in enumerate(state.history()):
        player = replayed.current_player()
        try:
            name = replayed.action_to_string(action)
            replayed.apply_action(action)
        except ValueError as e:
            raise ValueError(
                f"the state's history does not replay from seed {seed} at step {i}: {e}"
            ) from None
        steps.append({"action": action, "name": name, "player": player})
    return record_of_steps(replayed, seed, steps, players_info)


def record_of_steps(state, seed: int, steps: list, players_info=None) -> dict:
    """The record of ``state``'s game from its ``steps`` as ``record_game`` writes them (one
    ``{"action", "name", "player"}`` per entry of ``state.history()``), kept by a caller that
    follows the game step by step (the web server), so that no replay is needed."""
    game = state.game
    rec = {
        "format": FORMAT,
        "version": VERSION,
        "caribsim_version": caribsim.__version__,
        "game": type(game).name,
        "options": game.options(),
        "seed": seed,
        "steps": steps,
        "final": _final(state),
    }
    if players_info is not None:
        rec["players"] = list(players_info)
        if len(rec["players"]) != game.num_players() or not all(
            isinstance(p, str) for p in rec["players"]
        ):
            raise ValueError(
                f"players_info must be {game.num_players()} strings, one per seat, "
                f"got {_short(players_info)}"
            )
    return rec


def _final(state):
    if not state.is_terminal():
        return None
    scores = state.scores()
    return {"scores": scores, "returns": state.returns()}


def save(record: dict, path) -> None:
    validate(record)
    Path(path).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def load(path) -> dict:
    """The record in the file ``path``, structure checked (RecordError naming the file)."""
    record = _read_json_file(path, "record", RecordError)
    validate(record)
    return record


def validate(record) -> None:
    """Check the structure of a record (replay() checks its content)."""
    if not isinstance(record, dict):
        raise RecordError(f"a record is a JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise RecordError(f"record.format must be {FORMAT!r}, got {_short(record.get('format'))}")
    if (
        type(record.get("version")) is not int
        or record["version"] > VERSION
        or record["version"] < 1
    ):
        raise RecordError(
            f"record.version must be an int 1..{VERSION}, got {_short(record.get('version'))}"
        )
    for key, kind in (("game", str), ("options", dict), ("steps", list)):
        if not isinstance(record.get(key), kind):
            raise RecordError(
                f"record.{key} must be a {kind.__name__}, got {_short(record.get(key))}"
            )
    if not all(isinstance(k, str) for k in record["options"]):
        raise RecordError(f"record.options must have string keys, got {_short(record['options'])}")
    seed = record.get("seed")
    if type(seed) is not int or not 0 <= seed < 2**64:
        raise RecordError(f"record.seed must be an int in 0..2**64-1, got {_short(seed)}")
    for i, step in enumerate(record["steps"]):
        if not isinstance(step, dict) or set(step) != {"action", "name", "player"}:
            raise RecordError(
                f"step {i}: must be an object with action, name and player, got {_short(step)}"
            )
        if (
            type(step["action"]) is not int
            or type(step["player"]) is not int
            or not isinstance(step["name"], str)
        ):
            raise RecordError(
                f"step {i}: action and player must be ints and name a string, got {_short(step)}"
            )
    if "final" not in record or not (record["final"] is None or isinstance(record["final"], dict)):
        raise RecordError("record.final must be null or an object with scores and returns")
    players = record.get("players")
    if players is not None and not (
        isinstance(players, list) and all(isinstance(p, str) for p in players)
    ):
        raise RecordError(
            f"record.players must be a list of strings (one per seat), got {_short(players)}"
        )


def _short(value) -> str:
    """A repr cut to a readable length for error messages."""
    text = _REPR.repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40


def replay(record: dict, upto=None):
    """Replay a record and return the state after ``upto`` steps (default: all), checking
    every step (legal, same name, same player) and the final scores."""
    return _replay(record, upto)


def states(record: dict):
    """Every state of a record, from the initial state to the last (validated as replay())."""
    out: list[GameState] = []
    _replay(record, None, out)
    return out


def _replay(record, upto, collect=None):
    """The state after ``upto`` steps (None: all, then the final scores are checked too);
    ``collect`` (a list) gets a clone of every state on the way. Every problem is a
    RecordError naming the field or the first bad step."""
    validate(record)
    steps = record["steps"]
    if upto is None:
        n = len(steps)
    else:
        try:
            n = _int_in(upto, "upto", 0, len(steps))
        except ValueError as e:
            raise RecordError(f"{e} (the record has {len(steps)} steps)") from None
    try:
        game = caribsim.load_game(record["game"], **record["options"])
    except (ValueError, TypeError, OSError) as e:
        raise RecordError(f"record.game/options: {e}") from None
    players = record.get("players")
    if players is not None and len(players) != game.num_players():
        raise RecordError(
            f"record.players has {len(players)} entries for a {game.num_players()}-player game"
        )
    state = game.new_initial_state(seed=record["seed"])
    if collect is not None:
        collect.append(state.clone())
    for i, step in enumerate(steps[:n]):
        player = state.current_player()
        if step["player"] != player:
            raise RecordError(f"step {i}: recorded player {step['player']}, but {player} is to act")
        try:
            name = state.action_to_string(step["action"])
        except (ValueError, TypeError) as e:
            raise RecordError(f"step {i}: {e}") from None
        if name != step["name"]:
            raise RecordError(
                f"step {i}: action {step['action']} is {name!r} here, the record says {_short(step['name'])}"
            )
        try:
            state.apply_action(step["action"])
        except ValueError as e:
            raise RecordError(f"step {i}: {e}") from None
        if collect is not None:
            collect.append(state.clone())
    if upto is None and record["final"] is not None:
        if not state.is_terminal():
            raise RecordError(
                f"the record has final scores but the game is not over after {len(steps)} steps"
            )
        if _final(state) != record["final"]:
            raise RecordError(
                f"the final scores do not match: replayed {_final(state)}, "
                f"recorded {_short(record['final'])}"
            )
    return state
