"""How each game is drawn: one module per game, used by the replay viewer (and the browser
play built on it).

- ``puerto_rico``, ``port_royal``, ``cuba``: each gives ``snapshot(state)`` (the JSON-able
  values the page draws at one step), ``CSS`` and ``JS`` (a script that defines
  ``BOARD = {supply(s), boards(s)}``, each returning the HTML of its panel for a snapshot).

May import: the games and the shared modules (through a state's public methods); never
search, embed, scale or cli.
"""
from __future__ import annotations

import importlib

_GAMES = ("puerto_rico", "port_royal", "cuba")


def get(game_name: str):
    """The board module of a game (``"puerto_rico"``, ``"port_royal"`` or ``"cuba"``)."""
    if game_name not in _GAMES:
        raise ValueError(f"no board for game {game_name!r}; the games are {', '.join(_GAMES)}")
    return importlib.import_module(f"caribsim.human.boards.{game_name}")
