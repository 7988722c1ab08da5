"""``python -m caribsim tournament``: the leaderboard as text and JSON, the same bot names in
the table, the JSON, the records and the plot, and one clear line for a bad command line."""

from __future__ import annotations

import json
import re
import sys

import pytest
from extras import need

from caribsim.__main__ import main
from caribsim.human import records
from caribsim.scale import tournament

POOL = "random,greedy,random"
ARGS = [
    "tournament",
    "cuba",
    "--players",
    "2",
    "--bots",
    POOL,
    "--games",
    "6",
    "--seed",
    "3",
    "--no-progress",
]
BOARD_ROW = re.compile(r"^\s+(\d+)  (.+?)\s+(-?\d+\.\d\d)  \[")
PAIR_ROW = re.compile(
    r"^    (.+) > (.+?)\s+(\d\.\d{3})  \[(\d\.\d{3}), (\d\.\d{3})\]  over (\d+) games?$"
)


def run_main(capsys, *argv):
    """Call main(argv); return (exit code, stdout, stderr)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_the_tournament_of_the_api(capsys):
    need("rating")
    code, out, _ = run_main(capsys, *ARGS, "--json")
    assert code == 0
    data = json.loads(out)
    direct = json.loads(
        tournament.play_tournament("cuba", POOL.split(","), 6, players=2, seed=3).to_json()
    )
    for key in ("bots", "pairs", "games", "schedule", "players", "n_games", "seed", "options"):
        assert data[key] == direct[key], key


def test_the_table_names_the_bots_as_json_records_and_plot(capsys, tmp_path):
    need("rating")
    need("plot")
    code, out, _ = run_main(
        capsys,
        *ARGS,
        "--save",
        tmp_path / "t.json",
        "--save-games",
        tmp_path / "g",
        "--plot",
        tmp_path / "r.png",
    )
    assert code == 0
    saved = json.loads((tmp_path / "t.json").read_text())
    board = sorted(saved["bots"], key=lambda b: b["rank"])
    rows = [m.groups() for m in map(BOARD_ROW.match, out.splitlines()) if m]
    assert [(int(r), n, float(o)) for r, n, o in rows] == [
        (b["rank"], b["name"], round(b["ordinal"], 2)) for b in board
    ]
    pairs = [m.groups() for m in map(PAIR_ROW.match, out.splitlines()) if m]
    assert [(a, b, float(s), int(n)) for a, b, s, _, _, n in pairs] == [
        (p["a"], p["b"], round(p["share"], 3), p["games"]) for p in saved["pairs"]
    ]
    names = [b["name"] for b in saved["bots"]]
    assert names == ["random #1", "greedy", "random #2"]
    for g, game in enumerate(saved["games"]):
        rec = records.load(tmp_path / "g" / f"game_{g:05d}.json")
        assert rec["players"] == [names[b] for b in game["seat_bot"]]
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = tournament.play_tournament("cuba", POOL.split(","), 6, players=2, seed=3)
    labels = [t.get_text() for t in tournament.figure(result).axes[0].get_yticklabels()]
    assert labels == [b["name"] for b in board]


def test_the_random_schedule_on_processes(capsys):
    need("rating")
    argv = [
        "tournament",
        "cuba",
        "--players",
        "2",
        "--bots",
        "random,greedy,random,random",
        "--games",
        "5",
        "--schedule",
        "random",
        "--seed",
        "8",
        "--no-progress",
        "--json",
    ]
    _, local, _ = run_main(capsys, *argv)
    code, procs, _ = run_main(
        capsys, *argv, "--backend", "processes", "--workers", "2", "--chunk-size", "2"
    )
    assert code == 0
    local, procs = json.loads(local), json.loads(procs)
    assert procs["backend"] == "processes" and procs["games"] == local["games"]
    assert procs["bots"] == local["bots"]
    played = [b["games"] for b in local["bots"]]
    assert sum(played) == 10 and max(played) - min(played) <= 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["cuba", "--players", "3", "--bots", "random,greedy", "--games", "6"],
            "a tournament needs at least as many bots as seats: 3 seats, got 2 bots",
        ),
        (
            ["cuba", "--players", "2", "--bots", POOL, "--games", "7"],
            "a round-robin of 3 bots in 2 seats is 6 games (3 combinations x 2 rotations): games must be a "
            "multiple of 6, got 7",
        ),
        (
            ["cuba", "--players", "2", "--bots", POOL, "--games", "6", "--schedule", "swiss"],
            "schedule must be one of round-robin, random, got 'swiss'",
        ),
        (
            ["cuba", "--players", "2", "--bots", "random,genius,random", "--games", "6"],
            "unknown bot spec 'genius'",
        ),
        (
            ["cuba", "--players", "2", "--bots", "mcts:0,random,random", "--games", "6"],
            "iterations must be in 1..",
        ),
        (
            ["cuba", "--players", "6", "--bots", POOL, "--games", "6"],
            "players must be an integer in 2..5, got 6",
        ),
        (
            ["cuba", "--bots", POOL, "--games", "6"],
            "the following arguments are required: --players/-p",
        ),
        (
            ["cuba", "--players", "2", "--bots", POOL],
            "the following arguments are required: --games/-n",
        ),
        (["chess", "--players", "2", "--bots", POOL, "--games", "6"], "unknown game 'chess'"),
        (
            ["cuba", "--players", "2", "--bots", POOL, "--games", "6", "-o", "players=3"],
            "unknown option 'players'",
        ),
        (
            [
                "cuba",
                "--players",
                "2",
                "--bots",
                "random,random,random,random,random,random,random",
                "--games",
                "3",
                "--schedule",
                "random",
            ],
            "needs at least 4 games for every bot to play, got 3",
        ),
        (
            ["cuba", "--players", "2", "--bots", POOL, "--games", "6", "--backend", "cloud"],
            "argument --backend: invalid choice: 'cloud'",
        ),
    ],
)
def test_bad_options_give_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run_main(capsys, "tournament", *argv)
    assert code == 2 and out == ""
    assert err.startswith("python -m caribsim tournament: error: ") and err.count("\n") == 1
    assert message in err


def test_a_missing_openskill_says_how_to_install(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "openskill", None)
    monkeypatch.setitem(sys.modules, "openskill.models", None)
    code, out, err = run_main(capsys, *ARGS)
    assert code == 2 and out == ""
    assert err == (
        "python -m caribsim tournament: error: tournament ratings need openskill: "
        "pip install 'caribsim[rating]'\n"
    )
