"""The layered tree (docs/architecture.md): imports run one way, every package says what it
may import, and the module names before the tree still work (the same module objects, and
pickles written by the previous layout load)."""

from __future__ import annotations

import ast
import importlib
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
from extras import need

import caribsim
from caribsim._aliases import MOVED

SRC = Path(caribsim.__file__).resolve().parent
PYX = SRC.parent.parent / "pyx" / "caribsim"
DATA = Path(__file__).resolve().parent / "data"
GAMES = ("puerto_rico", "port_royal", "cuba")
CONCERNS = ("search", "human", "embed", "scale", "train", "web", "cli")

# layer -> the layers it may import (besides itself). "shared" is caribsim's top-level modules
# (the C game interface, the Game base, the input checks, the aliases); "api" the registry
# behind caribsim.load_game; "root" the package caribsim itself (its public names).
ALLOWED = {
    "shared": set(),
    "games": {"shared"},
    "api": {"shared", "games"},
    "search": {"shared", "games", "api", "root"},
    "human": {"shared", "games", "api", "root", "search"},
    "embed": {"shared", "games", "api", "root", "search"},
    "scale": {"shared", "games", "api", "root", "search", "human"},
    "train": {"shared", "games", "api", "root", "search", "human", "scale"},
    "web": {"shared", "games", "api", "root", "search", "human", "scale"},
    "cli": {"shared", "games", "api", "root", "search", "human", "embed", "scale", "train", "web"},
    "root": {"shared", "api", "embed", "scale"},
}
ROOT_NAMES = set(caribsim.__all__)


def _layer(module: str) -> str:
    parts = module.split(".")
    if parts == ["caribsim"]:
        return "root"
    top = parts[1]
    if top in GAMES:
        return "games"
    if top in CONCERNS:
        return top
    if top == "__main__":
        return "cli"
    if top == "_api":
        return "api"
    return "shared"


def _target(module: str, name: str | None) -> str:
    """What ``from module import name`` loads: a submodule when there is one."""
    if name is None:
        return module
    if module == "caribsim" and name in ROOT_NAMES:
        return "caribsim"
    if module == "caribsim":
        return MOVED.get(f"caribsim.{name}", f"caribsim.{name}")
    candidate = f"{module}.{name}"
    if (
        (SRC.parent / (candidate.replace(".", "/") + ".py")).exists()
        or (SRC.parent / candidate.replace(".", "/")).is_dir()
        or (PYX.parent / (candidate.replace(".", "/") + ".pyx")).exists()
    ):
        return candidate
    return module


def _python_imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):  # imports inside functions count too
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "caribsim":
                    yield MOVED.get(a.name, a.name)
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0] == "caribsim"
        ):
            for a in node.names:
                yield MOVED.get(_target(node.module, a.name), _target(node.module, a.name))


_CYTHON_IMPORT = re.compile(
    r"^\s*(?:from\s+(caribsim[\w.]*)\s+c?import\s+([\w, ]+)|c?import\s+(caribsim[\w.]*))", re.M
)


def _cython_imports(path: Path):
    for m in _CYTHON_IMPORT.finditer(path.read_text(encoding="utf-8")):
        if m.group(3):
            yield m.group(3)
        else:
            for name in m.group(2).split(","):
                yield _target(m.group(1), name.strip().split(" ")[0])


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        yield name, path, _python_imports(path)
    for path in sorted(PYX.rglob("*.p[yx][xd]")):
        rel = path.relative_to(PYX.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        yield name, path, _cython_imports(path)


def test_imports_run_one_way():
    """A game needs only the shared modules; search, human, embed, scale and cli build on the
    games in that order (no import, not even inside a function, runs back up)."""
    assert PYX.is_dir(), (
        f"the Cython sources are not beside the package ({PYX}): run from a checkout"
    )
    wrong = []
    for name, path, imports in _modules():
        mine = _layer(name)
        for target in imports:
            theirs = _layer(target)
            if theirs != mine and theirs not in ALLOWED[mine]:
                wrong.append(
                    f"{path.relative_to(SRC.parent.parent)}: {name} ({mine}) imports {target} ({theirs})"
                )
    assert not wrong, "\n".join(wrong)


def test_a_game_imports_no_other_game():
    wrong = [
        f"{name} imports {t}"
        for name, _, imports in _modules()
        if _layer(name) == "games"
        for t in imports
        if _layer(t) == "games" and t.split(".")[1] != name.split(".")[1]
    ]
    assert not wrong, wrong


@pytest.mark.parametrize("package", GAMES + CONCERNS)
def test_every_package_says_what_lives_there_and_what_it_may_import(package):
    doc = importlib.import_module(f"caribsim.{package}").__doc__ or ""
    assert "May import" in doc, f"caribsim.{package}.__init__ has no 'May import' line"
    for module in sorted((SRC / package).glob("[!_]*.py")):
        assert f"``{module.stem}``" in doc or f"``{module.name}``" in doc, (
            f"caribsim.{package} does not describe its module {module.stem}"
        )


# the moved modules that import an optional package when they load
NEEDS_AN_EXTRA = {
    "caribsim.embed.envs": "rl",
    "caribsim.embed.vector_env": "rl",
    "caribsim.embed.openspiel": "openspiel",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_name_is_the_moved_module(old):
    extra = NEEDS_AN_EXTRA.get(MOVED[old])
    if extra:
        need(extra)
    assert importlib.import_module(old) is importlib.import_module(MOVED[old])
    module = sys.modules[old]
    assert module.__name__ == MOVED[old] and module.__spec__.name == MOVED[old]


def test_old_names_as_attributes_in_a_fresh_interpreter():
    """``import caribsim; caribsim.mcts.search(...)`` works without importing caribsim.mcts."""
    code = (
        "import caribsim, sys\n"
        "assert 'caribsim.search.mcts' not in sys.modules\n"
        "m = caribsim.mcts\n"
        "assert m is sys.modules['caribsim.search.mcts'] is sys.modules['caribsim.mcts']\n"
        "try:\n    caribsim.no_such_module\nexcept AttributeError as e:\n    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "module 'caribsim' has no attribute 'no_such_module'"


def test_new_pickles_name_the_new_modules():
    game = caribsim.load_game("puerto_rico", players=3)
    text = pickle.dumps((game, game.new_initial_state(seed=1)), protocol=0).decode("latin-1")
    assert "caribsim.puerto_rico.game" in text
    assert not any(re.search(rf"^{re.escape(old)}$", text, re.M) for old in MOVED)


def test_pickles_written_before_the_layout_load():
    """Games, states, bots and a searcher pickled by the previous layout (caribsim.puerto_rico,
    caribsim.bots, caribsim.mcts as flat modules; tests/data/make_previous_layout_pickles.py)
    load as equal objects of today's classes."""
    with open(DATA / "previous_layout.pickle", "rb") as f:
        objects = pickle.load(f)
    assert len(objects["cases"]) == 4
    for case in objects["cases"]:
        game, state = case["game"], case["state"]
        assert game == caribsim.load_game(case["name"], **case["options"])
        assert type(game).__module__ == f"caribsim.{case['name']}.game"
        assert state.serialize() == case["serialized"] and state.history() == case["history"]
        fresh = game.new_initial_state(seed=11)
        for a in case["history"]:
            fresh.apply_action(a)
        assert fresh == state
    assert [repr(b) for b in objects["bots"]] == objects["bot_reprs"]
    assert type(objects["bots"][0]).__module__ == "caribsim.search.bots"
    assert objects["searcher"]._kwargs() == objects["searcher_options"]
