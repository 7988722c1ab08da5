"""The optional parts a test may need, and how a test says so.

A test of an optional part calls ``need("nn", "torch")`` (at module level, before importing the
package, or inside the test) and gets the module; without it the test skips with a reason that
names the install: ``needs the nn extra: pip install 'caribsim[nn]'``. A test that needs a system
program calls ``need_system("chromium")`` and skips with the ``apt-get install`` line.

CI demands that a part is there (a missing one fails instead of skipping) with
``CARIBSIM_REQUIRE_<EXTRA>=1`` (``CARIBSIM_REQUIRE_NN=1``, ``CARIBSIM_REQUIRE_CHROMIUM=1``), or
``CARIBSIM_REQUIRE_ALL=1``, under which no test may skip at all (conftest.py enforces that and
that every skip reason names an extra or a system package).
"""

from __future__ import annotations

import importlib
import os
import shutil

import pytest

#: The import names each extra of pyproject.toml brings (``test`` is the suite's own
#: requirement and is never optional). tests/test_extras.py checks this against pyproject.toml.
EXTRAS = {
    "rl": ("pettingzoo", "gymnasium"),
    "openspiel": ("pyspiel",),
    "plot": ("matplotlib",),
    "ray": ("ray",),
    "ppo": ("sb3_contrib", "gymnasium"),
    "nn": ("torch",),
    "rating": ("openskill",),
    "web": ("starlette", "uvicorn", "websockets"),
    "lint": ("ruff", "cython_lint", "pycodestyle", "mypy"),
}

#: The system programs a test may need: the programs on PATH (any one of each tuple) and the
#: Debian packages that bring them.
SYSTEM = {
    "chromium": ((("chromium", "chromium-browser"), ("chromedriver",)), "chromium chromium-driver"),
}


def install_hint(extra: str) -> str:
    """The skip reason of a test that needs ``extra``."""
    return f"needs the {extra} extra: pip install 'caribsim[{extra}]'"


def system_hint(name: str) -> str:
    """The skip reason of a test that needs the system program ``name``."""
    return f"needs {name}: apt-get install {SYSTEM[name][1]}"


def required(name: str) -> bool:
    """Whether CI demands ``name`` (an extra or a system program): a missing one fails."""
    env = os.environ
    return (
        env.get("CARIBSIM_REQUIRE_ALL") == "1" or env.get(f"CARIBSIM_REQUIRE_{name.upper()}") == "1"
    )


def need(extra: str, module: str | None = None):
    """Import every package of ``extra`` and return ``module`` (default: the extra's first).

    Missing: skip the calling test, or the whole module when called at module level, naming the
    install; fail with the same words where CI requires the extra."""
    if extra not in EXTRAS:
        raise KeyError(f"unknown extra {extra!r}; the extras are {sorted(EXTRAS)}")
    names = EXTRAS[extra]
    if module is not None and module not in names:
        names = (*names, module)
    try:
        loaded = [importlib.import_module(name) for name in names]
    except ImportError as exc:
        reason = f"{install_hint(extra)} ({exc})"
        if required(extra):
            pytest.fail(f"CARIBSIM_REQUIRE: {reason}", pytrace=False)
        pytest.skip(reason, allow_module_level=True)
    return loaded[names.index(module)] if module is not None else loaded[0]


def need_system(name: str) -> list[str]:
    """The paths of the system program ``name``'s binaries; skip (or fail where required) when
    one is missing, naming the Debian packages."""
    found = []
    for alternatives in SYSTEM[name][0]:
        path = next((p for p in map(shutil.which, alternatives) if p), None)
        if path is None:
            reason = f"{system_hint(name)} (no {' or '.join(alternatives)} on PATH)"
            if required(name):
                pytest.fail(f"CARIBSIM_REQUIRE: {reason}", pytrace=False)
            pytest.skip(reason, allow_module_level=True)
        found.append(path)
    return found
