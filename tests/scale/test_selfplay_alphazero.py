"""Self-play with an AlphaZeroBot (the guided search's policy as the target), one game at a
time or many at once through one BatchSearch (``batch=``)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import caribsim
from caribsim import selfplay
from caribsim.scale.arena import derive_seed
from caribsim.search import bots, guided
from caribsim.search.evaluators import MLPEvaluator, training_arrays


def _same(a, b):
    return all(np.array_equal(a[k], b[k]) for k in selfplay.ARRAYS)


def _replay_policies(game, bot, seed, g):
    """Game g of a run, played by hand with copies of ``bot``: (policy rows, actions)."""
    n = game.num_players()
    seats = [copy.copy(bot) for _ in range(n)]
    for s, b in enumerate(seats):
        b.restart(derive_seed(seed, g, s))
    state = game.new_initial_state(seed=derive_seed(seed, g))
    rows = []
    while not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
            continue
        multi = len(state.legal_actions()) > 1
        a = seats[state.current_player()].step(state)
        if multi:
            rows.append(seats[state.current_player()].last_result.policy)
        state.apply_action(a)
    return rows


@pytest.mark.parametrize("name, spec", [("puerto_rico", "puct:12"), ("cuba", "gumbel:12")])
def test_shards_hold_the_search_policy_and_load(name, spec, tmp_path):
    game = caribsim.load_game(name)
    m = selfplay.generate(name, spec, 2, tmp_path, seed=4)
    data = selfplay.load(tmp_path)
    assert m["decisions"] == len(data["player"]) > 0
    assert m["bot"]["kind"] == "alphazero" and m["bot"]["simulations"] == 12
    assert m["batch"] is None
    assert json.loads((tmp_path / "manifest.json").read_text()) == json.loads(json.dumps(m))
    for k, (dtype, _) in selfplay.ARRAYS.items():
        assert data[k].dtype == np.dtype(dtype)
    bot = bots.parse_bot(spec)
    for g in range(2):
        rows = _replay_policies(game, bot, 4, g)
        mine = data["policy"][data["game"] == g]
        assert len(rows) == len(mine)
        assert np.array_equal(mine, np.array(rows, dtype=np.float32))
    legal = data["legal_mask"].astype(bool)
    assert not (data["policy"][~legal] > 0).any()
    assert np.allclose(data["policy"].sum(axis=1), 1, atol=1e-5)
    arrays = training_arrays(str(tmp_path))  # the MLP's loader takes it
    assert arrays["policy"].shape == data["policy"].shape


@pytest.mark.parametrize("make", ["rollout", "uniform", "rollout-forced"])
def test_batched_self_play_gives_the_games_of_one_by_one(make, tmp_path):
    if make == "uniform":
        bot = bots.AlphaZeroBot(guided.UniformEvaluator(3), 10, leaves_per_tree=4)
        name, kw = "puerto_rico", {"players": 3}
    else:
        bot = bots.parse_bot("puct:10:leaves_per_tree=2:temperature=1")
        name, kw = "cuba", {}
    forced = make.endswith("forced")
    one = selfplay.generate(name, bot, 5, tmp_path / "one", seed=8, include_forced=forced, **kw)
    many = selfplay.generate(
        name,
        bot,
        5,
        tmp_path / "many",
        seed=8,
        batch=3,
        include_forced=forced,
        games_per_shard=5,
        **kw,
    )
    again = selfplay.generate(
        name,
        bot,
        5,
        tmp_path / "again",
        seed=8,
        batch=3,
        include_forced=forced,
        games_per_shard=5,
        **kw,
    )
    assert many["batch"] == 3 and one["decisions"] == many["decisions"] == again["decisions"]
    a, b, c = (selfplay.load(tmp_path / d) for d in ("one", "many", "again"))
    assert _same(a, b) and _same(b, c)
    selfplay.generate(
        name, bot, 5, tmp_path / "other", seed=9, batch=3, include_forced=forced, **kw
    )
    d = selfplay.load(tmp_path / "other")
    assert len(d["player"]) != len(b["player"]) or not np.array_equal(
        d["observation"], b["observation"]
    )


def test_batched_mlp_self_play_is_deterministic_and_on_processes(tmp_path):
    game = caribsim.load_game("puerto_rico", players=3)
    net = MLPEvaluator.for_game(game, hidden=(16,), seed=2)
    bot = bots.AlphaZeroBot(net, 8, leaves_per_tree=2, gumbel=True)
    # the same chunks (so the same batches of rows for BLAS) on one process and on two
    ref = selfplay.generate(
        "puerto_rico", bot, 4, tmp_path / "a", players=3, seed=3, batch=4, games_per_shard=2
    )
    selfplay.generate(
        "puerto_rico", bot, 4, tmp_path / "b", players=3, seed=3, batch=4, games_per_shard=2
    )
    procs = selfplay.generate(
        "puerto_rico",
        bot,
        4,
        tmp_path / "c",
        players=3,
        seed=3,
        batch=4,
        backend="processes",
        workers=2,
        games_per_shard=2,
    )
    assert procs["backend"] == "processes"
    a, b = selfplay.load(tmp_path / "a"), selfplay.load(tmp_path / "b")
    assert _same(a, b)
    assert ref["bot"]["weights_sha256"] == bot.describe()["weights_sha256"]
    c = selfplay.load(tmp_path / "c")
    assert _same(a, c)


def test_a_run_with_another_batch_or_model_is_another_run(tmp_path):
    game = caribsim.load_game("cuba")
    bot = bots.parse_bot("puct:6")
    selfplay.generate("cuba", bot, 2, tmp_path, seed=1, batch=2)
    with pytest.raises(ValueError, match="another run"):
        selfplay.generate("cuba", bot, 2, tmp_path, seed=1, batch=1)
    net = MLPEvaluator.for_game(game, hidden=(8,), seed=0)
    selfplay.generate("cuba", bots.AlphaZeroBot(net, 4), 1, tmp_path / "m", seed=1)
    other = MLPEvaluator.for_game(game, hidden=(8,), seed=1)
    with pytest.raises(ValueError, match="another run"):
        selfplay.generate("cuba", bots.AlphaZeroBot(other, 4), 1, tmp_path / "m", seed=1)


def test_batch_needs_a_guided_bot(tmp_path):
    with pytest.raises(ValueError, match="needs an AlphaZeroBot"):
        selfplay.generate("cuba", "mcts:10", 2, tmp_path / "x", batch=2)
    with pytest.raises(ValueError, match="batch must be"):
        selfplay.generate("cuba", "puct:10", 2, tmp_path / "y", batch=0)
    with pytest.raises(TypeError, match=r"needs an MCTS bot .* or an AlphaZeroBot"):
        selfplay.generate("cuba", "greedy", 2, tmp_path / "z")


def test_cli_selfplay_with_a_guided_bot_and_batch(tmp_path, capsys):
    from caribsim.__main__ import main

    assert (
        main(
            [
                "selfplay",
                "cuba",
                "--bot",
                "puct:6",
                "--games",
                "2",
                "--batch",
                "2",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    assert "2 games" in capsys.readouterr().out
    assert json.loads((tmp_path / "manifest.json").read_text())["batch"] == 2
