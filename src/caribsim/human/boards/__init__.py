"""How each game is drawn: one module per game, used by the replay viewer (and the browser
play built on it).

- ``puerto_rico``, ``port_royal``, ``cuba``: each gives, for the page, ``snapshot(state)``
  (the JSON-able values drawn at one step), ``CSS`` and ``JS`` (a script that defines
  ``BOARD = {supply(s), boards(s)}``, each returning the HTML of its panel for a snapshot),
  ``move_text(before, name)`` (a step as the page names it: hidden faces stay hidden),
  ``move_targets(state)`` (``{action: key}``: the legal moves of the seat to act that name a
  drawn element, the one its ``data-key`` marks; the browser play's board clicks);
  and for the terminal, ``text_board(state)``, ``choice_label(state, action)`` (the move's
  engine name with what it costs and brings), ``events(before, after)`` (what happened
  between two prompts) and ``LEGEND``; for the game-over panel, ``end_reason(states, tr)``
  (why the game ended, from the game's states, first to last) and ``TIEBREAK`` (what the
  tie-break counts). Names and numbers come from the data files or the
  game's own component data, never from literals.

May import: the games (their public constants and a state's public methods) and the shared
modules; never search, embed, scale or cli.
"""

from __future__ import annotations

import importlib

_GAMES = ("puerto_rico", "port_royal", "cuba")


def end_triggered(states):
    """The states ``(before, after)`` of the step that triggered the game's end (the first
    whose ``end_triggered`` is set; once set it stays set), or None when no state has it."""
    lo, hi = 0, len(states)
    while lo < hi:  # a binary search: to_dict() is the costly part
        mid = (lo + hi) // 2
        if states[mid].to_dict()["end_triggered"]:
            hi = mid
        else:
            lo = mid + 1
    return (states[lo - 1], states[lo]) if 0 < lo < len(states) else None


def get(game_name: str):
    """The board module of a game (``"puerto_rico"``, ``"port_royal"`` or ``"cuba"``)."""
    if game_name not in _GAMES:
        raise ValueError(f"no board for game {game_name!r}; the games are {', '.join(_GAMES)}")
    return importlib.import_module(f"caribsim.human.boards.{game_name}")
