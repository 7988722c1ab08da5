"""The code checks of .ci/lint hold (the lint extra: ruff's lint and format check, cython-lint);
mypy, the slow one, runs in .ci/lint alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from extras import need

need("lint")

ROOT = Path(__file__).resolve().parents[1]


def _run(*argv):
    bindir = os.path.dirname(sys.executable)  # cython-lint runs pycodestyle by name
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


def test_ruff_finds_nothing():
    r = _run(sys.executable, "-m", "ruff", "check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_the_python_is_formatted_as_ruff_formats_it():
    r = _run(sys.executable, "-m", "ruff", "format", "--check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_cython_lint_finds_nothing_in_the_compiled_core():
    r = _run(os.path.join(os.path.dirname(sys.executable), "cython-lint"), "pyx")
    assert r.returncode == 0 and r.stdout == "", r.stdout[-4000:] + r.stderr[-2000:]
