"""A pytest plugin that keeps the suite's skips honest (tests/conftest.py loads it).

- A skip must say what to install: its reason names an extra (``pip install 'caribsim[x]'``,
  an extra of pyproject.toml) or a system package (``apt-get install ...``); any other skip
  fails, so an optional part cannot quietly drop out of the run.
- Under ``CARIBSIM_REQUIRE_ALL=1`` (CI's full run) every skip fails.
- The terminal summary counts the skips by what they need.
"""

from __future__ import annotations

import collections
import os
import re

import pytest
from extras import EXTRAS

_EXTRA = re.compile(r"pip install 'caribsim\[([a-z_]+)\]'")
_SYSTEM = re.compile(r"apt-get install ([a-z0-9][a-z0-9 .+-]*)")
_skips: collections.Counter = collections.Counter()


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _what_it_needs(reason: str):
    """``extra X`` or ``system X`` for a reason that names an install, else None."""
    match = _EXTRA.search(reason)
    if match and match.group(1) in EXTRAS:
        return f"extra {match.group(1)}"
    match = _SYSTEM.search(reason)
    if match:
        return f"system {match.group(1).strip()}"
    return None


def _police(report):
    """Turn a skip that names no install, or any skip under CARIBSIM_REQUIRE_ALL=1, into a
    failure; count the others."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    needs = _what_it_needs(reason)
    if os.environ.get("CARIBSIM_REQUIRE_ALL") == "1":
        problem = f"CARIBSIM_REQUIRE_ALL=1, but this skipped: {reason}"
    elif needs is None:
        problem = (
            "a skip must name the extra (pip install 'caribsim[x]') or the system package "
            f"(apt-get install ...) it needs; this one says: {reason}"
        )
    else:
        _skips[needs] += 1
        return
    report.outcome = "failed"
    report.longrepr = problem


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _police(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _police(outcome.get_result())


def pytest_terminal_summary(terminalreporter):
    if _skips:
        counts = ", ".join(f"{what}: {n}" for what, n in sorted(_skips.items()))
        terminalreporter.write_line(f"skipped by what they need: {counts}")
