"""The command line interface: ``python -m caribsim games|simulate``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import caribsim
from caribsim.__main__ import main


def run_main(capsys, *argv):
    """Call main(argv); return (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse errors / --version
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------------------
# games
# --------------------------------------------------------------------------------------
def test_games_lists_puerto_rico_with_player_counts_and_options(capsys):
    code, out, _ = run_main(capsys, "games")
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("puerto_rico"))
    assert "players 2-5" in line
    assert "all_colonists_and_vp=False" in line
    assert "expansion=False" in line


def test_games_json(capsys):
    code, out, _ = run_main(capsys, "games", "--json")
    assert code == 0
    info = json.loads(out)
    assert [g["game"] for g in info] == caribsim.games()
    pr = next(g for g in info if g["game"] == "puerto_rico")
    assert pr["players"] == [2, 3, 4, 5]
    assert pr["options"] == {
        "players": 4,
        "all_colonists_and_vp": False,
        "expansion": False,
        "draft": None,
        "buildings": None,
        "all_31_buildings": False,
        "exclusions": None,
    }


# --------------------------------------------------------------------------------------
# simulate
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_simulate_json_matches_random_playouts(capsys, players):
    code, out, _ = run_main(
        capsys,
        "simulate",
        "puerto_rico",
        "--players",
        str(players),
        "--games",
        "300",
        "--seed",
        "11",
        "--json",
    )
    assert code == 0
    s = json.loads(out)
    assert s["game"] == "puerto_rico" and s["players"] == players and s["games"] == 300
    assert s["seed"] == 11 and s["threads"] == 1
    assert s["options"] == {"players": players, "all_colonists_and_vp": False}
    # the same playouts run directly through the API
    state = caribsim.load_game("puerto_rico", players=players).new_initial_state(seed=11)
    r = caribsim.random_playouts(state, 300, seed=11)
    assert s["decisions"] == r.decisions
    assert s["mean_decisions_per_game"] == pytest.approx(r.lengths.mean())
    assert s["mean_score"] == pytest.approx(list(r.scores.mean(axis=0)))
    assert s["win_rate"] == pytest.approx(list(r.returns.mean(axis=0)))
    # internal consistency of the summary
    assert len(s["mean_score"]) == len(s["win_rate"]) == players
    assert sum(s["win_rate"]) == pytest.approx(1.0)
    assert s["decisions"] == pytest.approx(s["mean_decisions_per_game"] * 300)
    assert s["games_per_second"] == pytest.approx(300 / s["seconds"])
    assert s["decisions_per_second"] == pytest.approx(s["decisions"] / s["seconds"])


def test_simulate_threads_do_not_change_results(capsys):
    _, out1, _ = run_main(
        capsys, "simulate", "puerto_rico", "-p", "3", "-n", "400", "-s", "5", "--json"
    )
    _, out2, _ = run_main(
        capsys, "simulate", "puerto_rico", "-p", "3", "-n", "400", "-s", "5", "-t", "2", "--json"
    )
    a, b = json.loads(out1), json.loads(out2)
    assert b["threads"] == 2
    for key in ("decisions", "mean_score", "win_rate"):
        assert a[key] == b[key]


def test_simulate_seed_changes_results(capsys):
    _, out1, _ = run_main(capsys, "simulate", "puerto_rico", "-n", "200", "-s", "1", "--json")
    _, out2, _ = run_main(capsys, "simulate", "puerto_rico", "-n", "200", "-s", "2", "--json")
    assert json.loads(out1)["decisions"] != json.loads(out2)["decisions"]


def test_simulate_default_players_is_the_game_default(capsys):
    code, out, _ = run_main(capsys, "simulate", "puerto_rico", "--games", "50", "--json")
    assert code == 0
    assert json.loads(out)["players"] == caribsim.load_game("puerto_rico").num_players()


def test_simulate_game_option(capsys):
    code, out, _ = run_main(
        capsys,
        "simulate",
        "puerto_rico",
        "-p",
        "3",
        "-n",
        "50",
        "-o",
        "all_colonists_and_vp=true",
        "--json",
    )
    assert code == 0
    assert json.loads(out)["options"] == {"players": 3, "all_colonists_and_vp": True}


def test_simulate_text_output(capsys):
    code, out, _ = run_main(capsys, "simulate", "puerto_rico", "--players", "2", "--games", "200")
    assert code == 0
    for label in ("games/s", "decisions/s", "mean decisions per game", "mean score", "win rate"):
        assert label in out
    seat_rows = [ln.split() for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    assert [int(r[0]) for r in seat_rows] == [0, 1]
    assert sum(float(r[2]) for r in seat_rows) == pytest.approx(1.0, abs=2e-3)


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "required"),
        (["frob"], "invalid choice"),
        (["simulate"], "GAME"),
        (["simulate", "chess"], "unknown game 'chess'; available: " + ", ".join(caribsim.games())),
        (["simulate", "puerto_rico", "--players", "6"], "players must be 2..5, got 6"),
        (["simulate", "puerto_rico", "--players", "1"], "players must be 2..5, got 1"),
        (["simulate", "puerto_rico", "--players", "four"], "players must be an integer"),
        (
            ["simulate", "puerto_rico", "--games", "0"],
            "games must be an integer in 1..10000000, got 0",
        ),
        (
            ["simulate", "puerto_rico", "--games", "-5"],
            "games must be an integer in 1..10000000, got -5",
        ),
        (
            ["simulate", "puerto_rico", "--games", "1e4"],
            "games must be an integer in 1..10000000, got '1e4'",
        ),
        (
            ["simulate", "puerto_rico", "--threads", "0"],
            "threads must be an integer in 1..256, got 0",
        ),
        (["simulate", "puerto_rico", "--seed", "-1"], "seed must be an integer in 0..2**64-1"),
        (
            ["simulate", "puerto_rico", "--seed", str(2**64)],
            "seed must be an integer in 0..2**64-1",
        ),
        (["simulate", "puerto_rico", "-o", "colour=red"], "unknown option 'colour'"),
        (["simulate", "puerto_rico", "-o", "novalue"], "KEY=VALUE"),
        (["simulate", "puerto_rico", "-o", "expansion=maybe"], "expansion must be a bool"),
        (
            ["simulate", "puerto_rico", "-o", "all_colonists_and_vp=2"],
            "all_colonists_and_vp must be a bool",
        ),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(capsys, argv, message):
    code, out, err = run_main(capsys, *argv)
    assert code == 2
    assert out == ""
    assert message in err
    assert "error:" in err


def test_version(capsys):
    code, out, _ = run_main(capsys, "--version")
    assert code == 0
    assert caribsim.__version__ in out


# --------------------------------------------------------------------------------------
# as a process, the README's command
# --------------------------------------------------------------------------------------
def test_readme_command_runs_as_module():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "caribsim",
            "simulate",
            "puerto_rico",
            "--players",
            "4",
            "--games",
            "10000",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "10,000 random games" in proc.stdout
    assert "decisions/s" in proc.stdout
    rows = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()[:1].isdigit()]
    assert [int(r[0]) for r in rows] == [0, 1, 2, 3]
    assert all(0 < float(r[1]) < 80 for r in rows)  # mean VP per seat


def test_bad_argument_exit_code_as_module():
    proc = subprocess.run(
        [sys.executable, "-m", "caribsim", "simulate", "puerto_rico", "--players", "9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "players must be 2..5, got 9" in proc.stderr
    assert proc.stdout == ""


def test_a_closed_output_pipe_ends_quietly():
    """`caribsim ... | head`: the reader is gone before the output; no traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "caribsim", "games", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader goes away before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err
