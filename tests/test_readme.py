"""The README's quick start does what it says: its install and test commands are the ones CI
runs (.ci/run reads them from the README), the Python example and the commands of "Commands"
run as printed and print what the README says they print (the shape; the numbers are the
machine's)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
NUMBER = r"[\d,]+(?:\.\d+)?"


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.M | re.S)
    assert match, f"README.md has no section {title!r}"
    return match.group(1)


def _blocks(text: str, language: str) -> list:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.M | re.S)


def _commands(text: str) -> list:
    """The command lines of the bash blocks of ``text`` (comments and continuations joined)."""
    lines = []
    for block in _blocks(text, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def test_ci_runs_the_readmes_install_and_test_commands():
    """The Install section opens with the two commands; .ci/run reads the first README line
    that starts as the install does, which is that one, and the test command."""
    prefix = "python -m pip install -e '.[test,"
    first_block = _commands(_blocks(_section("Install"), "bash")[0].join(["```bash\n", "```\n"]))
    assert len(first_block) == 2, first_block
    install, tests = first_block
    assert install.startswith(prefix) and tests == "python -m pytest tests"
    first_line = next(line for line in README.splitlines() if line.startswith(prefix))
    assert first_line.split("  #")[0].strip() == install
    assert "python -m pytest tests" in _commands(_section("Commands"))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f'readme_line "{prefix}"' in ci
    assert 'readme_line "python -m pytest tests"' in ci
    assert "pip install -e '.[test]'" in ci  # the newcomer's path, first


def test_the_python_example_prints_returns_scores_and_speed(tmp_path):
    (code,) = _blocks(_section("Python example"), "python")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    returns, totals = re.fullmatch(r"(\[.*?\]) (\[.*?\])", first).groups()
    returns, totals = eval(returns), eval(totals)  # two printed lists of numbers
    assert len(returns) == len(totals) == 4 and sum(returns) == pytest.approx(1.0)
    assert all(isinstance(t, int) and t >= 0 for t in totals)
    assert re.fullmatch(rf"{NUMBER} games/s, {NUMBER} decisions/s", second), second


def _run(command: str, tmp_path):
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "caribsim"], command
    r = subprocess.run(
        [sys.executable, *argv[1:]], capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert r.returncode == 0, (command, r.stderr)
    return r.stdout


def test_the_commands_section_runs_as_printed(tmp_path):
    commands = [c for c in _commands(_section("Commands")) if c.startswith("python -m caribsim")]
    assert commands == ["python -m caribsim simulate puerto_rico --players 4 --games 10000"], (
        commands
    )
    out = _run(commands[0], tmp_path)
    # "prints games/s, decisions/s, mean decisions per game, mean score and win rate per seat"
    assert out.startswith("puerto_rico (players=4, ") and ": 10,000 random games, seed 0\n" in out
    for label in ("games/s", "decisions/s", "mean decisions per game"):
        assert re.search(rf"^  {label} +{NUMBER}$", out, re.M), (label, out)
    seats = re.findall(rf"^ +(\d) +({NUMBER}) +(0\.\d+|1\.0+)$", out, re.M)
    assert [s[0] for s in seats] == ["0", "1", "2", "3"], out
    assert sum(float(s[2]) for s in seats) == pytest.approx(1.0, abs=0.002)


def test_the_games_listing_names_every_game_with_its_players_and_options(tmp_path):
    assert "List the games, their player counts and options: `python -m caribsim games`" in README
    out = _run("python -m caribsim games", tmp_path)
    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[0] for r in rows] == ["cuba", "port_royal", "puerto_rico"]
    assert all(r[1] == "players 2-5" and r[2].startswith("options: players=4") for r in rows), rows
