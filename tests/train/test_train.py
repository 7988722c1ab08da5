"""The training loop (caribsim.train): a tiny run end to end, its files, resume, determinism,
keep-the-best, the numpy export, bad options and a missing PyTorch.

Every run is tiny (4 self-play games, 8 simulations, 4 evaluation games, 1 epoch) on
Puerto Rico with 2 players, about a second a round."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from extras import need

torch = need("nn")

import caribsim
from caribsim import selfplay
from caribsim.scale import arena
from caribsim.search import bots
from caribsim.search.evaluators import MLPEvaluator, TorchEvaluator
from caribsim.train import loop, network

GAME = "puerto_rico"
TINY = dict(games_per_round=4, simulations=8, eval_games=4, epochs=1, players=2, progress=False)


def _log(path):
    with open(os.path.join(path, "log.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _without_times(log):
    return [{k: v for k, v in e.items() if k != "seconds"} for e in log]


def _npz(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def _same_arrays(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def _state_dicts_equal(a, b):
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_state_dicts_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_state_dicts_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    return a == b


def _checkpoint(path):
    return torch.load(path, map_location="cpu", weights_only=True)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Two rounds in one go (threshold 0: every new network becomes the best)."""
    out = tmp_path_factory.mktemp("train") / "run"
    result = loop.train(GAME, out, rounds=2, threshold=0.0, **TINY)
    return out, result


# ---------------------------------------------------------------------------------------------
# one run end to end


def test_a_run_writes_checkpoints_a_log_and_a_plot(run):
    out, result = run
    log = _log(out)
    assert result["log"] == log and [e["round"] for e in log] == [1, 2]
    config = json.loads((out / "config.json").read_text())
    assert (
        config["game"] == GAME
        and config["options"] == caribsim.load_game(GAME, players=2).options()
    )
    assert (
        config["games_per_round"] == 4 and config["simulations"] == 8 and config["threshold"] == 0.0
    )
    for r in (0, 1, 2):
        state = _checkpoint(out / f"round_{r:04d}" / "checkpoint.pt")
        assert state["round"] == r
        assert set(state["model"]) >= {"stem.weight", "policy.weight", "value.weight", "obs_mean"}
        # Adam has taken a step per batch of every round so far (round 0: none)
        steps = {int(s["step"]) for s in state["optimizer"]["state"].values()}
        assert steps == ({sum(-(-e["train"]["samples"] // 256) for e in log[:r])} if r else set())
    png = (out / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    image = matplotlib.image.imread(out / "curve.png")
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_the_log_holds_what_the_files_hold(run):
    out, _ = run
    log = _log(out)
    decisions = {}
    for e in log:
        r = e["round"]
        data = selfplay.load(out / f"round_{r:04d}" / "selfplay")
        manifest = json.loads((out / f"round_{r:04d}" / "selfplay" / "manifest.json").read_text())
        decisions[r] = len(data["player"])
        assert (
            e["selfplay"]
            == {"games": 4, "decisions": decisions[r]}
            == {"games": manifest["n_games"], "decisions": manifest["decisions"]}
        )
        assert e["train"]["window"] == list(range(1, r + 1))  # window 4 holds every round
        assert e["train"]["samples"] == sum(decisions[k] for k in e["train"]["window"])
        loss = e["train"]["loss"]
        assert loss == e["train"]["epochs"][-1]
        assert loss["total"] == pytest.approx(loss["policy"] + loss["value"] + loss["l2"])
        ev = e["eval"]
        assert ev["win_share"] == pytest.approx(
            ev["new_win_rate"] / (ev["new_win_rate"] + ev["best_win_rate"])
        )
        assert ev["accepted"] and e["best_round"] == r  # threshold 0
        assert set(e["seconds"]) == {"selfplay", "train", "eval", "total"}
    best = json.loads((out / "best.json").read_text())
    assert best["round"] == log[-1]["best_round"] == 2
    assert _same_arrays(_npz(out / "best.npz"), _npz(out / best["model"]))


def test_the_evaluation_is_the_match_it_logs(run):
    """Round 1's evaluation played again by hand: the new network (round 1) in one seat, the
    best (round 0) in the other, seats rotated, seeded by the round."""
    out, _ = run
    e = _log(out)[0]
    new = MLPEvaluator.load(out / "round_0001" / "network.npz")
    best = MLPEvaluator.load(out / "round_0000" / "network.npz")
    match = arena.play_match(
        GAME,
        [bots.AlphaZeroBot(new, 8), bots.AlphaZeroBot(best, 8)],
        4,
        seed=arena.derive_seed(0, 1, 2),
        players=2,
    )
    assert e["eval"]["new_win_rate"] == match.bots[0].win_rate
    assert e["eval"]["best_win_rate"] == match.bots[1].win_rate
    assert e["eval"]["mean_length"] == match.mean_length


def test_self_play_uses_the_best_network(run):
    out, _ = run
    for r, best in ((1, 0), (2, 1)):
        manifest = json.loads((out / f"round_{r:04d}" / "selfplay" / "manifest.json").read_text())
        mine = bots.AlphaZeroBot(MLPEvaluator.load(out / f"round_{best:04d}" / "network.npz"), 8)
        assert manifest["bot"]["weights_sha256"] == mine.describe()["weights_sha256"]
        assert manifest["batch"] == 16


def test_the_progress_lines(tmp_path, capsys):
    loop.train(GAME, tmp_path / "p", rounds=1, **{**TINY, "progress": True}, plot=False)
    err = capsys.readouterr().err
    assert "round 1/1: self-play, 4 games" in err and "1/1 epochs  loss" in err
    assert "4/4 games" in err and "round 1/1: win share" in err
    assert not (tmp_path / "p" / "curve.png").exists()


# ---------------------------------------------------------------------------------------------
# resume and determinism


def test_resume_continues_as_an_uninterrupted_run(run, tmp_path):
    full, _ = run
    out = tmp_path / "resumed"
    first = loop.train(GAME, out, rounds=1, threshold=0.0, **TINY)
    assert [e["round"] for e in first["log"]] == [1]
    again = loop.train(GAME, out, rounds=2, threshold=0.0, resume=True, **TINY)
    assert _without_times(again["log"]) == _without_times(_log(full))
    assert _without_times(_log(out)) == _without_times(_log(full))
    for r in (1, 2):
        for name in ("network.npz",):
            assert _same_arrays(
                _npz(out / f"round_{r:04d}" / name), _npz(full / f"round_{r:04d}" / name)
            )
        assert _state_dicts_equal(
            _checkpoint(out / f"round_{r:04d}" / "checkpoint.pt"),
            _checkpoint(full / f"round_{r:04d}" / "checkpoint.pt"),
        )
    # a resume with nothing left to do changes nothing
    same = loop.train(GAME, out, rounds=2, threshold=0.0, resume=True, **TINY)
    assert same["log"] == _log(out)


def test_an_interrupted_round_is_played_again(run, tmp_path):
    """Round 2 died after its checkpoint, before its log line: the resume plays it again
    and gets the round of the uninterrupted run."""
    full, _ = run
    out = tmp_path / "crashed"
    loop.train(GAME, out, rounds=1, threshold=0.0, **TINY)
    log = (out / "log.jsonl").read_text()
    loop.train(GAME, out, rounds=2, threshold=0.0, resume=True, **TINY)
    (out / "log.jsonl").write_text(log)  # as if round 2 had not been committed
    again = loop.train(GAME, out, rounds=2, threshold=0.0, resume=True, **TINY)
    assert _without_times(again["log"]) == _without_times(_log(full))
    assert json.loads((out / "best.json").read_text())["round"] == 2


def test_the_same_seed_gives_the_same_weights_and_another_seed_others(run, tmp_path):
    full, _ = run
    same = loop.train(GAME, tmp_path / "same", rounds=1, threshold=0.0, **TINY)
    other = loop.train(GAME, tmp_path / "other", rounds=1, threshold=0.0, seed=1, **TINY)
    mine = _npz(full / "round_0001" / "network.npz")
    assert _same_arrays(_npz(tmp_path / "same" / "round_0001" / "network.npz"), mine)
    assert not _same_arrays(_npz(tmp_path / "other" / "round_0001" / "network.npz"), mine)
    assert _without_times(same["log"]) == _without_times(_log(full)[:1])
    assert (
        other["log"][0]["selfplay"] != _log(full)[0]["selfplay"]
        or other["log"][0]["train"]["loss"] != _log(full)[0]["train"]["loss"]
    )


def test_the_processes_backend_gives_the_local_run(run, tmp_path):
    full, _ = run
    other = loop.train(
        GAME,
        tmp_path / "processes",
        rounds=1,
        threshold=0.0,
        backend="processes",
        workers=2,
        **TINY,
    )
    assert _without_times(other["log"]) == _without_times(_log(full)[:1])
    assert _same_arrays(
        _npz(tmp_path / "processes" / "round_0001" / "network.npz"),
        _npz(full / "round_0001" / "network.npz"),
    )


# ---------------------------------------------------------------------------------------------
# keep-the-best


def test_a_threshold_above_one_keeps_the_old_network(run, tmp_path):
    full, _ = run
    out = tmp_path / "keep"
    result = loop.train(GAME, out, rounds=2, threshold=1.01, **TINY)
    assert [e["eval"]["accepted"] for e in result["log"]] == [False, False]
    assert [e["best_round"] for e in result["log"]] == [0, 0]
    assert [e["eval"]["against_round"] for e in result["log"]] == [0, 0]
    assert result["best_round"] == 0
    assert json.loads((out / "best.json").read_text())["round"] == 0
    assert _same_arrays(_npz(out / "best.npz"), _npz(out / "round_0000" / "network.npz"))
    # round 2's self-play is the initial network's, the trainer still carries on from round 1
    manifest = json.loads((out / "round_0002" / "selfplay" / "manifest.json").read_text())
    initial = bots.AlphaZeroBot(MLPEvaluator.load(out / "round_0000" / "network.npz"), 8)
    assert manifest["bot"]["weights_sha256"] == initial.describe()["weights_sha256"]
    assert _checkpoint(out / "round_0002" / "checkpoint.pt")["round"] == 2
    # with threshold 0 (the fixture) round 2 played against round 1, here against round 0
    assert [e["eval"]["against_round"] for e in _log(full)] == [0, 1]


def test_win_share_is_a_head_to_head_share():
    def match(*rates):
        return arena.MatchResult(
            GAME,
            {},
            10,
            0,
            [arena.BotResult(f"b{i}", 10, 10 * p, p, (0, 1), 0.0) for i, p in enumerate(rates)],
            100.0,
            1.0,
        )

    assert loop.win_share(match(0.6, 0.4)) == pytest.approx(0.6)
    assert loop.win_share(match(1 / 3, 1 / 3, 1 / 3)) == pytest.approx(
        0.5
    )  # a fair share at 3 seats
    p = 0.5
    assert loop.win_share(match(p, 0.25, 0.25)) == pytest.approx(p / (p + 0.25))
    assert loop.win_share(match(0.0, 0.0)) == 0.5


# ---------------------------------------------------------------------------------------------
# the export


def test_the_export_computes_what_the_torch_network_computes(run):
    out, _ = run
    game = caribsim.load_game(GAME, players=2)
    module = network.new_network(game, 128, 2, seed=0)
    module.load_state_dict(_checkpoint(out / "round_0002" / "checkpoint.pt")["model"])
    data = selfplay.load(out / "round_0002" / "selfplay")
    obs, mask = data["observation"][:64], data["legal_mask"][:64].astype(bool)
    exported = MLPEvaluator.load(out / "round_0002" / "network.npz")
    assert exported.hidden == (128, 256, 128, 256, 128)
    logits, values = exported(obs, mask)
    t_logits, t_values = TorchEvaluator(module)(obs, mask)
    assert np.allclose(logits, t_logits, atol=1e-4) and np.allclose(values, t_values, atol=1e-5)
    assert (
        np.argmax(np.where(mask, logits, -np.inf), 1)
        == np.argmax(np.where(mask, t_logits, -np.inf), 1)
    ).all()


def test_the_best_network_is_a_small_file_the_bots_load_without_torch(run):
    out, _ = run
    path = out / "best.npz"
    net = MLPEvaluator.load(path)
    n_floats = sum(v.size for v in net.parameters().values())
    assert os.path.getsize(path) < 5 * 2**20 and os.path.getsize(path) < 4 * n_floats + 20_000
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import caribsim\n"
        "from caribsim.search import bots\n"
        f"bot = bots.parse_bot('alphazero:8:model={path}')\n"
        "state = caribsim.load_game('puerto_rico', players=2).new_initial_state(seed=3)\n"
        "while state.is_chance_node():\n    state.resolve_chance()\n"
        "print(bot.step(state), bot.last_result.policy.sum())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 0, r.stderr
    action, total = r.stdout.split()
    state = caribsim.load_game(GAME, players=2).new_initial_state(seed=3)
    while state.is_chance_node():
        state.resolve_chance()
    here = bots.AlphaZeroBot(net, 8)
    assert int(action) == here.step(state) and float(total) == pytest.approx(1.0)


def test_export_refuses_another_module():
    game = caribsim.load_game(GAME, players=2)
    with pytest.raises(TypeError, match="residual MLP made by torch_mlp"):
        network.export(MLPEvaluator.for_game(game, hidden=(8,)).to_torch())


# ---------------------------------------------------------------------------------------------
# bad options


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"rounds": -1}, ValueError, "rounds must be in 0..1000000, got -1"),
        ({"rounds": 0}, ValueError, "rounds=0 is the teacher's warm start alone"),
        (
            {"rounds": 1, "games_per_round": 0},
            ValueError,
            "games_per_round must be in 1..1000000, got 0",
        ),
        (
            {"rounds": 1, "threshold": 1.5},
            ValueError,
            "threshold must be a finite number >= 0.0 and <= 1.01",
        ),
        ({"rounds": 1, "lr": 0.0}, ValueError, "lr must be a finite number > 0.0"),
        ({"rounds": 1, "window": 0}, ValueError, "window must be in 1..1000000"),
        ({"rounds": 1, "hidden": 1.5}, TypeError, "hidden must be an int, got float"),
        ({"rounds": 1, "gumbel": "yes"}, TypeError, "gumbel must be True or False"),
        (
            {"rounds": 1, "gumbel": True, "temperature": 1.0},
            ValueError,
            "with gumbel=True the Gumbel root",
        ),
        ({"rounds": 1, "resume": 1}, TypeError, "resume must be True or False"),
        (
            {"rounds": 1, "backend": "mpi"},
            ValueError,
            "backend must be one of local, processes, ray",
        ),
        ({"rounds": 1, "players": 9}, ValueError, "players must be 2..5"),
        ({"rounds": 1, "colour": "red"}, TypeError, "colour"),
    ],
)
def test_bad_options_are_refused_before_any_file(tmp_path, kwargs, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(".", r"\.")):
        loop.train(GAME, tmp_path / "out", **{"progress": False, **kwargs})
    assert not (tmp_path / "out").exists()


def test_the_config_holds_plain_numbers():
    config = loop.Config(
        GAME, {"players": 2}, games_per_round=np.int64(3), threshold=np.float32(0.5), lr=1
    ).checked()
    text = json.dumps(config.to_json())
    back = json.loads(text)
    assert (back["games_per_round"], back["threshold"], back["lr"]) == (3, 0.5, 1.0)
    assert type(config.games_per_round) is int and type(config.lr) is float


def test_bad_folders(run, tmp_path):
    full, _ = run
    before = (full / "log.jsonl").read_text()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        loop.train(GAME, a_file, rounds=1, **TINY)
    with pytest.raises(
        ValueError, match=r"holds no training run \(no config\.json\); start one without resume"
    ):
        loop.train(GAME, tmp_path / "empty", rounds=1, resume=True, **TINY)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="is not empty and holds no training run"):
        loop.train(GAME, tmp_path / "busy", rounds=1, **TINY)
    with pytest.raises(
        ValueError,
        match=r"already holds a training run \(config\.json\): continue it with resume=True",
    ):
        loop.train(GAME, full, rounds=3, threshold=0.0, **TINY)
    with pytest.raises(
        ValueError,
        match=r"another config \(differs in game \('puerto_rico' there, 'port_royal' now\)",
    ):
        loop.train("port_royal", full, rounds=3, threshold=0.0, resume=True, **TINY)
    with pytest.raises(ValueError, match=r"differs in simulations \(8 there, 16 now\)"):
        loop.train(GAME, full, rounds=3, threshold=0.0, resume=True, **{**TINY, "simulations": 16})
    assert (full / "log.jsonl").read_text() == before
    assert not (full / "round_0003").exists()


def test_a_missing_torch_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'caribsim\[nn\]'"):
        loop.train(GAME, tmp_path / "out", rounds=1, **TINY)
    assert not (tmp_path / "out").exists()


def test_fit_restores_torch_settings(run):
    """Training sets deterministic kernels and its thread count only for its own duration."""
    out, _ = run
    game = caribsim.load_game(GAME, players=2)
    module = network.new_network(game, 16, 1, seed=2)
    optimizer = network.new_optimizer(module, 1e-3)
    data = selfplay.load(out / "round_0001" / "selfplay")
    arrays = {
        "observation": data["observation"][:40],
        "legal_mask": data["legal_mask"][:40].astype(bool),
        "policy": data["policy"][:40],
        "returns": data["returns"][:40],
    }
    before = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(2)
    try:
        losses = network.fit(
            module,
            optimizer,
            arrays,
            epochs=2,
            batch_size=16,
            l2=1e-4,
            value_weight=1.0,
            seed=5,
            threads=1,
        )
        assert (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()) == (
            2,
            before[1],
        )
    finally:
        torch.set_num_threads(before[0])
    assert len(losses) == 2 and all(np.isfinite(x.total) for x in losses)
    assert not module.training  # back in eval mode


# ---------------------------------------------------------------------------------------------
# a teacher's warm start


def test_a_teacher_trains_round_zero_on_its_games_and_stays_in_the_window(run, tmp_path):
    out = tmp_path / "taught"
    result = loop.train(
        GAME, out, rounds=1, threshold=0.0, teacher="mcts:8", teacher_games=3, **TINY
    )
    teacher = json.loads((out / "round_0000" / "teacher.json").read_text())
    manifest = json.loads((out / "round_0000" / "selfplay" / "manifest.json").read_text())
    assert teacher["teacher"] == "mcts:8" and teacher["games"] == manifest["n_games"] == 3
    assert teacher["decisions"] == manifest["decisions"] > 0
    # round 0 is trained, not the network drawn from the seed (the untaught run's round 0)
    untaught = run[0] / "round_0000" / "network.npz"
    assert not _same_arrays(_npz(out / "round_0000" / "network.npz"), _npz(untaught))
    entry = result["log"][0]
    assert entry["train"]["window"] == [0, 1]  # the teacher's games are in it
    own = json.loads((out / "round_0001" / "selfplay" / "manifest.json").read_text())["decisions"]
    assert entry["train"]["samples"] == teacher["decisions"] + own
    assert json.loads((out / "config.json").read_text())["teacher"] == "mcts:8"


def test_rounds_zero_is_the_teachers_warm_start_alone(tmp_path):
    out = tmp_path / "warm"
    result = loop.train(
        GAME, out, rounds=0, threshold=0.0, teacher="mcts:8", teacher_games=2, **TINY
    )
    assert result["log"] == [] and result["best_round"] == 0
    assert not (out / "round_0001").exists()  # no self-play round was played
    # the best network is round 0's, trained on the teacher's games
    assert _same_arrays(_npz(out / "best.npz"), _npz(out / "round_0000" / "network.npz"))
    assert json.loads((out / "round_0000" / "teacher.json").read_text())["games"] == 2
    # and a later call goes on from it: rounds=1 plays round 1 on top
    again = loop.train(
        GAME, out, rounds=1, threshold=0.0, teacher="mcts:8", teacher_games=2, resume=True, **TINY
    )
    assert [e["round"] for e in again["log"]] == [1]


@pytest.mark.parametrize(
    "kwargs,error,words",
    [
        (dict(rounds=0), ValueError, "rounds=0 is the teacher's warm start alone"),
        (dict(teacher="mcts:8"), ValueError, "needs teacher_games >= 1"),
        (dict(teacher_games=5), ValueError, "teacher_games needs a teacher"),
        (dict(teacher="chess", teacher_games=2), ValueError, "unknown bot spec 'chess'"),
        (dict(teacher=8, teacher_games=2), TypeError, "teacher must be a bot spec"),
        (
            dict(teacher="mcts:8", teacher_games=-1),
            ValueError,
            "teacher_games must be in 0..1000000",
        ),
    ],
)
def test_bad_teacher_options(tmp_path, kwargs, error, words):
    with pytest.raises(error, match=words):
        loop.train(GAME, tmp_path / "x", **{"rounds": 1, **TINY, **kwargs})
    assert not (tmp_path / "x").exists()
