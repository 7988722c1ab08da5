"""examples/alphazero_tiny.py runs as documented: self-play, a tiny MLP, AlphaZeroBot vs random."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "alphazero_tiny.py"


def _run(args, tmp_path, name):
    out = tmp_path / f"{name}.json"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    r = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    printed = json.loads(r.stdout)
    assert json.loads(out.read_text()) == printed
    assert "win share" in r.stderr
    return printed


def _without_times(out):
    out = json.loads(json.dumps(out))
    for part in ("selfplay", "training", "arena"):
        out[part].pop("seconds")
    return out


def test_the_example_runs_with_a_tiny_budget_and_is_deterministic(tmp_path):
    args = [
        "--game",
        "cuba",
        "--players",
        "2",
        "--selfplay-bot",
        "puct:4",
        "--selfplay-games",
        "2",
        "--epochs",
        "2",
        "--hidden",
        "8",
        "--simulations",
        "3",
        "--arena-games",
        "4",
        "--seed",
        "5",
        "--save",
        str(tmp_path / "net.npz"),
    ]
    out = _run(args, tmp_path, "a")
    assert out["game"] == "cuba" and out["players"] == 2 and out["seed"] == 5
    assert out["selfplay"]["games"] == 2 and isinstance(out["selfplay"]["decisions"], int)
    assert out["selfplay"]["decisions"] > 0
    losses = out["training"]["losses"]
    assert len(losses) == 2 and all(isinstance(x, float) and x > 0 for x in losses)
    a = out["arena"]
    assert a["games"] == 4 and len(a["returns"]) == 4
    assert all(r in (0.0, 0.5, 1.0) for r in a["returns"])
    assert abs(a["win_share"] - sum(a["returns"]) / 4) < 1e-12
    lo, hi = a["ci95"]
    assert 0 <= lo <= a["win_share"] <= hi <= 1
    assert a["random_share"] == 0.5 and a["bot"].startswith("AlphaZeroBot(MLPEvaluator(")
    assert (tmp_path / "net.npz").stat().st_size > 0
    again = _run(args[:-2], tmp_path, "b")
    assert _without_times(again) == _without_times(out)


def test_the_example_refuses_bad_arguments(tmp_path):
    for args, word in (
        (["--players", "9"], "players"),
        (["--epochs", "0"], "epochs"),
        (["--hidden", "a,b"], "hidden"),
        (["--lr", "0"], "lr"),
    ):
        r = subprocess.run(
            [sys.executable, str(SCRIPT), *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert r.returncode == 2 and word in r.stderr, (args, r.stderr)


def test_the_documented_run_beats_random_players(tmp_path):
    """The docs' command (its defaults: 300 arena games, about 20 s): the trained MLP guiding
    16 simulations wins more than a random player's third of 3-player Puerto Rico games."""
    out = _run([], tmp_path, "strength")
    assert out["arena"]["games"] == 300
    assert out["arena"]["ci95"][0] > out["arena"]["random_share"], out["arena"]
