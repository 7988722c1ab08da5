"""The example scripts in examples/ run as documented (tiny budgets)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from extras import need

ROOT = Path(__file__).resolve().parents[2]

need("ppo")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_maskable_ppo_example_trains_and_evaluates(tmp_path):
    ppo = _load("train_maskable_ppo")
    out_file = tmp_path / "out.json"
    argv = [
        "--steps",
        "512",
        "--eval-games",
        "6",
        "--seed",
        "3",
        "--json",
        str(out_file),
        "--save",
        str(tmp_path / "model.zip"),
    ]
    out = ppo.main(argv)
    assert json.loads(out_file.read_text()) == out
    assert (tmp_path / "model.zip").stat().st_size > 0
    returns = out["trained_returns"]
    assert len(returns) == out["trained"]["games"] == 6
    assert all(r in (0.0, 0.5, 1.0) for r in returns)  # 2 players: a win, a loss or a tie
    assert out["trained"]["win_share"] == pytest.approx(sum(returns) / 6)
    lo, hi = out["trained"]["ci95"]
    assert lo <= out["trained"]["win_share"] <= hi
    # the same seed trains the same model on the CPU: the same games
    again = ppo.main(argv[:-2])
    assert again["trained_returns"] == returns


def test_maskable_ppo_example_refuses_bad_arguments(capsys):
    ppo = _load("train_maskable_ppo")
    with pytest.raises(SystemExit) as e:
        ppo.main(["--players", "9", "--steps", "10"])
    assert e.value.code == 2
    assert "players" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ppo.main(["--steps", "0"])
