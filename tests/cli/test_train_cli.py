"""``python -m caribsim train``: a tiny run, its resume, and bad command lines (one line on
stderr, exit code 2, nothing written)."""

from __future__ import annotations

import json
import sys

import pytest
from extras import need

from caribsim.__main__ import main

TINY = [
    "puerto_rico",
    "--players",
    "2",
    "--games-per-round",
    "2",
    "--simulations",
    "4",
    "--eval-games",
    "2",
    "--no-progress",
]
PROG = "python -m caribsim train: error: "


def run_main(capsys, *argv):
    """Call main(argv); return (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _log(folder):
    return [json.loads(line) for line in (folder / "log.jsonl").read_text().splitlines()]


def test_train_then_resume(capsys, tmp_path):
    need("nn")
    out = tmp_path / "run"
    code, text, err = run_main(
        capsys, "train", *TINY, "--out", str(out), "--rounds", "1", "--no-plot"
    )
    assert code == 0, err
    log = _log(out)
    assert len(log) == 1
    row = text.splitlines()[1].split()
    assert row == [
        str(1),
        f"{log[0]['train']['samples']:,}",
        f"{log[0]['train']['loss']['total']:.4f}",
        f"{log[0]['eval']['win_share']:.3f}",
        str(log[0]["best_round"]),
    ]
    assert text.splitlines()[-1] == (
        f"wrote {out}: 1 rounds, best network of round {log[0]['best_round']} ({out / 'best.npz'})"
    )
    assert not (out / "curve.png").exists()
    code, text, err = run_main(
        capsys, "train", *TINY, "--out", str(out), "--rounds", "2", "--resume", "--json"
    )
    assert code == 0, err
    printed = json.loads(text)
    assert printed == _log(out) and [e["round"] for e in printed] == [1, 2]
    assert printed[0] == log[0]  # the first round is kept as it was
    assert (out / "curve.png").read_bytes()[:4] == b"\x89PNG"
    config = json.loads((out / "config.json").read_text())
    assert (config["games_per_round"], config["simulations"], config["eval_games"]) == (2, 4, 2)


@pytest.fixture(scope="module")
def existing(tmp_path_factory):
    """A finished one-round run of TINY (made through the command)."""
    need("nn")
    out = tmp_path_factory.mktemp("cli") / "run"
    assert main(["train", *TINY, "--out", str(out), "--rounds", "1", "--no-plot"]) == 0
    return out


# read from the run's folder, once PyTorch is there (the options are checked before it is looked for)
CHECKED_BY_THE_LOOP = {"holds no training run (no config.json); start one without resume"}


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["--rounds", "-1"],
            "argument --rounds/-r: rounds must be an integer in 0..1000000, got -1",
        ),
        (
            ["--rounds", "0"],
            "rounds=0 is the teacher's warm start alone (round 0): it needs a teacher",
        ),
        (["--games-per-round", "-1"], "games per round must be an integer in 1..1000000, got -1"),
        (["--threshold", "1.5"], "threshold must be a finite number >= 0.0 and <= 1.01, got 1.5"),
        (["--threshold", "nan"], "threshold must be a finite number"),
        (["--hidden", "0"], "hidden must be an integer in 1..65536, got 0"),
        (["--lr", "0"], "lr must be a finite number > 0.0, got 0.0"),
        (["--backend", "mpi"], "argument --backend: invalid choice: 'mpi'"),
        (["--address", "auto"], "address= is for backend='ray', not 'local'"),
        (["-o", "colour=red"], "unknown option 'colour' for puerto_rico"),
        (["--resume"], "holds no training run (no config.json); start one without resume"),
    ],
)
def test_bad_options(capsys, tmp_path, argv, words):
    if words in CHECKED_BY_THE_LOOP:
        need("nn")
    out = tmp_path / "out"
    code, text, err = run_main(capsys, "train", *TINY, "--out", str(out), *argv)
    assert code == 2 and text == ""
    assert err.count("\n") == 1 and err.startswith(PROG) and words in err, err
    assert not out.exists()


def test_bad_folders(capsys, tmp_path, existing):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    before = (existing / "log.jsonl").read_text()
    cases = [
        (
            ["train", *TINY, "--out", str(a_file)],
            f"argument --out: '{a_file}' is a file, not a folder",
        ),
        (
            ["train", *TINY, "--out", str(existing), "--rounds", "2"],
            "already holds a training run (config.json): continue it with resume=True (--resume)",
        ),
        (
            ["train", "port_royal", *TINY[1:], "--out", str(existing), "--rounds", "2", "--resume"],
            "it holds a training run with another config (differs in game ('puerto_rico' there, 'port_royal' now)",
        ),
        (
            ["train", *TINY, "--out", str(existing), "--rounds", "2", "--resume", "--blocks", "1"],
            "differs in blocks (2 there, 1 now)",
        ),
    ]
    for argv, words in cases:
        code, text, err = run_main(capsys, *argv)
        assert code == 2 and text == ""
        assert err.count("\n") == 1 and err.startswith(PROG) and words in err, err
    assert (existing / "log.jsonl").read_text() == before
    assert not (existing / "round_0002").exists()


def test_a_missing_torch(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    code, text, err = run_main(capsys, "train", *TINY, "--out", str(tmp_path / "out"), "--no-plot")
    assert code == 2 and text == ""
    assert err == f"{PROG}PyTorch is not installed; install the extra: pip install 'caribsim[nn]'\n"
    assert not (tmp_path / "out").exists()
