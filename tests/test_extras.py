"""The optional parts of the suite (tests/extras.py, tests/skip_guard.py): every extra of
pyproject.toml is known to the suite and exercised by a test, a skip must name what to install,
and CI can demand that nothing skips."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from extras import EXTRAS, SYSTEM, install_hint, system_hint

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent

# the distribution each extra asks for, and the module it is imported as
IMPORT_NAME = {
    "pettingzoo": "pettingzoo",
    "gymnasium": "gymnasium",
    "open-spiel": "pyspiel",
    "matplotlib": "matplotlib",
    "ray": "ray",
    "sb3-contrib": "sb3_contrib",
    "torch": "torch",
    "openskill": "openskill",
    "starlette": "starlette",
    "uvicorn": "uvicorn",
    "websockets": "websockets",
    "ruff": "ruff",
    "cython-lint": "cython_lint",
    "pycodestyle": "pycodestyle",
    "mypy": "mypy",
}


def _pyproject_extras() -> dict:
    """{extra: [distribution names]} of pyproject.toml's optional-dependencies (read as text:
    tomllib is Python 3.11+)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    extras = {}
    for name, deps in re.findall(r"^([a-z_]+)\s*=\s*\[(.*?)\]", block, re.M | re.S):
        extras[name] = [
            re.split(r"[<>=!~ ;\[]", d.strip().strip('"'))[0] for d in deps.split(",") if d.strip()
        ]
    return extras


def test_the_suite_knows_every_extra_and_what_it_brings():
    extras = _pyproject_extras()
    assert extras.get("test")  # the suite's own needs: never optional
    optional = {name: deps for name, deps in extras.items() if name != "test"}
    assert set(optional) == set(EXTRAS), sorted(set(optional) ^ set(EXTRAS))
    for name, deps in optional.items():
        assert {IMPORT_NAME[d] for d in deps} == set(EXTRAS[name]), (name, deps, EXTRAS[name])
    # CI's full run installs every extra
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    listed = re.search(r'^ALL_EXTRAS="([a-z_,]+)"$', ci, re.M)
    assert listed and set(listed.group(1).split(",")) == set(extras), listed


def _tests_that_need() -> dict:
    """{extra or system program: test files that call need(...) / need_system(...) for it}."""
    found: dict = {}
    for path in HERE.rglob("*.py"):
        if path.name in ("extras.py", "skip_guard.py", "test_extras.py"):
            continue
        text = path.read_text(encoding="utf-8")
        for name in re.findall(r"\bneed(?:_system)?\(\s*\"([a-z_]+)\"", text):
            found.setdefault(name, set()).add(path.relative_to(HERE).as_posix())
    return found


def test_every_extra_and_system_package_is_exercised_by_a_test():
    """Each extra is asked for by at least one test, which runs where the extra is installed
    (CI's full run installs all and sets CARIBSIM_REQUIRE_ALL=1, so none of them skips)."""
    found = _tests_that_need()
    missing = sorted(set(EXTRAS) - set(found)) + sorted(set(SYSTEM) - set(found))
    assert not missing, f"no test asks for {missing}"
    unknown = sorted(set(found) - set(EXTRAS) - set(SYSTEM))
    assert not unknown, f"tests ask for parts that are not extras: {unknown}"


def test_no_test_imports_an_optional_package_at_module_level():
    """An optional package is imported only after extras.need() (which skips without it)."""
    optional = {m for modules in EXTRAS.values() for m in modules} | {"open_spiel", "sb3_contrib"}
    bad = []
    for path in sorted(HERE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        asked = False
        for number, line in enumerate(lines, 1):
            if re.match(r"^\w+\s*=\s*need\(|^need\(", line):
                asked = True
            match = re.match(r"^(?:import|from)\s+([a-zA-Z_]\w*)", line)
            if match and match.group(1) in optional and not asked:
                bad.append(f"{path.relative_to(HERE)}:{number}: {line}")
    assert not bad, bad


def _run_guarded(tmp_path, body, **env):
    """pytest over one test file of ``body`` with the skip guard loaded: (exit code, output)."""
    (tmp_path / "test_sample.py").write_text(textwrap.dedent(body), encoding="utf-8")
    import os

    environ = {k: v for k, v in os.environ.items() if not k.startswith("CARIBSIM_REQUIRE")}
    environ.update(env, PYTHONPATH=os.pathsep.join([str(HERE), environ.get("PYTHONPATH", "")]))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "skip_guard",
            "-q",
            "-p",
            "no:cacheprovider",
            "-rfEs",
            str(tmp_path / "test_sample.py"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=environ,
        cwd=tmp_path,
    )
    return r.returncode, r.stdout + r.stderr


SAMPLE = f"""
    import pytest

    def test_needs_an_extra():
        pytest.skip({install_hint("nn")!r})

    def test_needs_a_system_package():
        pytest.skip({system_hint("chromium")!r})

    def test_plain():
        assert 1 + 1 == 2
"""


def test_a_skip_that_names_the_install_is_a_skip_and_is_counted(tmp_path):
    code, out = _run_guarded(tmp_path, SAMPLE)
    assert code == 0, out
    assert "1 passed, 2 skipped" in out, out
    assert "skipped by what they need: extra nn: 1, system chromium chromium-driver: 1" in out, out


def test_a_skip_that_names_no_install_fails(tmp_path):
    code, out = _run_guarded(
        tmp_path,
        SAMPLE
        + """
    def test_vague():
        pytest.skip("not today")
""",
    )
    assert code == 1, out
    assert "1 failed, 1 passed, 2 skipped" in out, out
    assert "a skip must name the extra" in out and "not today" in out, out


def test_a_module_level_skip_that_names_no_install_fails(tmp_path):
    code, out = _run_guarded(
        tmp_path,
        """
    import pytest
    pytest.skip("maybe later", allow_module_level=True)
""",
    )
    assert code != 0, out
    assert "a skip must name the extra" in out and "maybe later" in out, out


def test_require_all_turns_every_skip_into_a_failure(tmp_path):
    code, out = _run_guarded(tmp_path, SAMPLE, CARIBSIM_REQUIRE_ALL="1")
    assert code == 1, out
    assert "2 failed, 1 passed" in out and "CARIBSIM_REQUIRE_ALL=1, but this skipped" in out, out


@pytest.mark.parametrize("env", [{"CARIBSIM_REQUIRE_ALL": "1"}, {"CARIBSIM_REQUIRE_NO_SUCH": "1"}])
def test_need_fails_for_a_missing_extra_that_ci_requires(tmp_path, env):
    """need() of an extra whose package is missing: a skip naming the install, or, where CI
    requires it, a failure with the same words."""
    body = """
    import sys
    import extras
    extras.EXTRAS["no_such"] = ("caribsim_no_such_module",)

    def test_it():
        extras.need("no_such")
"""
    code, out = _run_guarded(tmp_path, body)
    assert code == 0 and "1 skipped" in out, out
    assert "needs the no_such extra: pip install 'caribsim[no_such]'" in out, out
    code, out = _run_guarded(tmp_path, body, **env)
    assert code == 1 and "1 failed" in out, out
    assert "CARIBSIM_REQUIRE: needs the no_such extra" in out, out


def _collected(subset, *files):
    env = {k: v for k, v in __import__("os").environ.items() if k != "CARIBSIM_TEST_SUBSET"}
    if subset:
        env["CARIBSIM_TEST_SUBSET"] = subset
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--co",
            "-o",
            "addopts=-q",
            "-p",
            "no:cacheprovider",
            *files,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    return (
        r.returncode,
        [line for line in r.stdout.splitlines() if "::" in line],
        r.stdout + r.stderr,
    )


def test_the_ci_subsets_pick_whole_files_that_ask_for_an_optional_part():
    # test_readme and test_model_files ask for nothing; test_evaluators asks for nn in its tests
    files = (
        "tests/test_readme.py",
        "tests/search/test_evaluators.py",
        "tests/search/test_model_files.py",
    )
    code, everything, out = _collected(None, *files)
    assert code == 0, out
    readme, nn, models = ([t for t in everything if t.startswith(f)] for f in files)
    assert len(readme) > 2 and len(nn) > 2 and len(models) > 2, out
    code, quick, out = _collected("quick", *files)
    assert code == 0 and quick == readme[:1] + nn + models[:1], out
    code, needs, out = _collected("needs:nn,ppo", *files)
    assert code == 0 and needs == nn, out
    code, needs, out = _collected("needs:ppo", *files)
    assert code == 5 and needs == [], out  # pytest's "no tests collected"
    code, _, out = _collected("most", *files)
    assert code != 0 and "CARIBSIM_TEST_SUBSET must be quick or needs:EXTRA" in out, out
