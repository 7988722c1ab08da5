"""The module names of caribsim before the layered tree, kept as aliases.

``caribsim.mcts`` is ``caribsim.search.mcts`` itself (the same module object, not a copy),
and so on for every module that moved, so that code, pickles and records written against
the old names keep working. An alias applies only when no module of that name exists: the
finder is the last one on ``sys.meta_path``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

# old name -> the module it is now
MOVED = {
    "caribsim._puerto_rico": "caribsim.puerto_rico._state",
    "caribsim._port_royal": "caribsim.port_royal._state",
    "caribsim._cuba": "caribsim.cuba._state",
    "caribsim._mcts": "caribsim.search._mcts",
    "caribsim.mcts": "caribsim.search.mcts",
    "caribsim.bots": "caribsim.search.bots",
    "caribsim.arena": "caribsim.scale.arena",
    "caribsim.play": "caribsim.human.play",
    "caribsim.records": "caribsim.human.records",
    "caribsim.viewer": "caribsim.human.viewer",
    "caribsim._vector": "caribsim.embed._vector",
    "caribsim.vector": "caribsim.embed.vector",
    "caribsim.envs": "caribsim.embed.envs",
    "caribsim.vector_env": "caribsim.embed.vector_env",
    "caribsim.openspiel": "caribsim.embed.openspiel",
    "caribsim.infostate": "caribsim.embed.infostate",
    "caribsim.simulation": "caribsim.scale.simulation",
    "caribsim.distributed": "caribsim.scale.distributed",
    "caribsim.selfplay": "caribsim.scale.selfplay",
}


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module it is now."""

    def __init__(self, target: str):
        self.target = target
        self.spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system has set the alias's spec on the module: give it back its own
        module.__spec__ = self.spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name not in MOVED:
            return None
        return importlib.util.spec_from_loader(name, _Alias(MOVED[name]))


def install() -> None:
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())


def attribute(name: str):
    """``caribsim.<name>`` for a moved module not imported yet (the package's __getattr__)."""
    if f"caribsim.{name}" not in MOVED:
        raise AttributeError(f"module 'caribsim' has no attribute {name!r}")
    return importlib.import_module(f"caribsim.{name}")
