"""Evaluators for a model-guided search (docs/search.md, "Evaluators"): the protocol's shapes,
the numpy MLP against a per-row reference, its files, training on self-play data, the torch
adapter, the cache and the errors of every constructor and call."""

import copy
import os
import pickle
import random
import re
import sys
import threading

import numpy as np
import pytest
from extras import need

import caribsim
from caribsim import selfplay
from caribsim.search import evaluators as ev
from caribsim.search.evaluators import (
    CachedEvaluator,
    MLPEvaluator,
    TorchEvaluator,
    check_input,
    check_output,
    torch_mlp,
    train_mlp,
)

GAMES = [("puerto_rico", 3), ("port_royal", 3), ("cuba", 4)]


def positions(name, players, n, seed=0):
    """obs float32 [n, O] and mask bool [n, A] of the player to move at random decision nodes."""
    game = caribsim.load_game(name, players=players)
    rng = random.Random(seed)
    obs, mask = [], []
    g = 0
    while len(obs) < n:
        state = game.new_initial_state(seed=seed * 1000 + g)
        g += 1
        while not state.is_terminal() and len(obs) < n:
            if state.is_chance_node():
                state.resolve_chance()
                continue
            p = state.current_player()
            if rng.random() < 0.3:
                obs.append(state.observation_tensor(p))
                mask.append(state.legal_actions_mask(p).astype(bool))
            state.apply_action(rng.choice(state.legal_actions()))
    return game, np.array(obs, dtype=np.float32), np.array(mask, dtype=bool)


@pytest.fixture(scope="module")
def pr_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("selfplay") / "pr3"
    selfplay.generate(
        "puerto_rico", "mcts:16:max_depth=4", 6, str(out), seed=3, players=3, games_per_shard=3
    )
    return str(out)


def reference(net, obs):
    """The MLP's output computed row by row in float64 from its parameters."""
    p = {k: v.astype(np.float64) for k, v in net.parameters().items()}
    logits, values = [], []
    for row in obs.astype(np.float64):
        h = (row - p["obs_mean"]) / p["obs_std"]
        for i in range(len(net.hidden)):
            h = np.maximum(h @ p[f"w{i}"] + p[f"b{i}"], 0.0)
        logits.append(h @ p["policy_w"] + p["policy_b"])
        u = h @ p["value_w"] + p["value_b"]
        e = np.exp(u - u.max())
        values.append(e / e.sum())
    return np.array(logits), np.array(values)


def check_protocol(logits, values, L, A, P):
    assert isinstance(logits, np.ndarray) and isinstance(values, np.ndarray)
    assert logits.dtype == np.float32 and values.dtype == np.float32
    assert logits.shape == (L, A) and values.shape == (L, P)
    assert np.isfinite(logits).all()
    assert ((values >= 0) & (values <= 1)).all()
    np.testing.assert_allclose(values.sum(axis=1), 1.0, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# shapes for every game


@pytest.mark.parametrize("name,players", GAMES)
def test_every_evaluator_gives_the_protocol_shapes_for_every_game(name, players):
    game, obs, mask = positions(name, players, 40)
    A, P = game.num_distinct_actions(), game.num_players()
    assert obs.shape == (40, int(np.prod(game.observation_tensor_shape())))
    net = MLPEvaluator.for_game(game, hidden=(32, 32), seed=1)
    check_protocol(*net(obs, mask), 40, A, P)
    check_protocol(*CachedEvaluator(net)(obs, mask), 40, A, P)
    # the outputs depend on the position (not constant rows)
    logits, values = net(obs, mask)
    assert np.ptp(logits, axis=0).max() > 0 and np.ptp(values, axis=0).max() > 0


@pytest.mark.parametrize("name,players", GAMES)
def test_the_torch_evaluators_give_the_protocol_shapes_for_every_game(name, players):
    need("nn")
    game, obs, mask = positions(name, players, 40)
    A, P = game.num_distinct_actions(), game.num_players()
    net = MLPEvaluator.for_game(game, hidden=(32, 32), seed=1)
    check_protocol(
        *TorchEvaluator(torch_mlp(game, hidden=32, blocks=1, seed=0))(obs, mask), 40, A, P
    )
    check_protocol(*TorchEvaluator(net.to_torch())(obs, mask), 40, A, P)


def _empty_batch_gives_empty_outputs(evaluators):
    game, obs, mask = positions("puerto_rico", 3, 4)
    net = MLPEvaluator.for_game(game, hidden=(8,))
    for e in evaluators(net):
        logits, values = e(obs[:0], mask[:0])
        assert logits.shape == (0, 143) and values.shape == (0, 3)
        assert logits.dtype == values.dtype == np.float32


def test_an_empty_batch_gives_empty_outputs():
    _empty_batch_gives_empty_outputs(lambda net: (net, CachedEvaluator(net)))


def test_an_empty_batch_gives_empty_outputs_through_torch():
    need("nn")
    _empty_batch_gives_empty_outputs(lambda net: (TorchEvaluator(net.to_torch()),))


# ---------------------------------------------------------------------------------------------
# the numpy MLP


@pytest.mark.parametrize("hidden", [(48, 24), (16,), ()])
def test_mlp_forward_equals_a_per_row_reference(hidden):
    game, obs, mask = positions("port_royal", 3, 64, seed=2)
    rng = np.random.default_rng(5)
    net = MLPEvaluator.for_game(
        game,
        hidden=hidden,
        seed=7,
        obs_mean=rng.normal(size=obs.shape[1]),
        obs_std=rng.uniform(0.5, 3.0, size=obs.shape[1]),
    )
    logits, values = net(obs, mask)
    ref_logits, ref_values = reference(net, obs)
    np.testing.assert_allclose(logits, ref_logits, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(values, ref_values, rtol=1e-4, atol=1e-6)
    # a row alone gives what it gives in the batch (up to rounding)
    one = net(obs[5:6], mask[5:6])
    np.testing.assert_allclose(one[0][0], logits[5], rtol=1e-5, atol=1e-5)


def test_mlp_init_is_deterministic_for_a_seed():
    game = caribsim.load_game("cuba", players=4)
    a, b, c = (MLPEvaluator.for_game(game, hidden=(16,), seed=s).parameters() for s in (3, 3, 4))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["w0"], c["w0"])


def test_mlp_parameters_are_copies():
    game, obs, mask = positions("puerto_rico", 3, 8)
    net = MLPEvaluator.for_game(game, hidden=(8,))
    before = net(obs, mask)[0]
    net.parameters()["w0"][:] = 100.0
    assert np.array_equal(net(obs, mask)[0], before)


def test_save_and_load_give_identical_outputs(tmp_path):
    game, obs, mask = positions("cuba", 4, 32)
    rng = np.random.default_rng(0)
    net = MLPEvaluator.for_game(
        game,
        hidden=(24, 12),
        seed=9,
        obs_mean=rng.normal(size=obs.shape[1]),
        obs_std=rng.uniform(1, 2, size=obs.shape[1]),
    )
    path = tmp_path / "model.weights"  # the name is kept as given
    net.save(path)
    assert sorted(os.listdir(tmp_path)) == ["model.weights"]
    back = MLPEvaluator.load(str(path))
    assert (back.obs_size, back.num_actions, back.num_players, back.hidden) == (
        net.obs_size,
        net.num_actions,
        net.num_players,
        net.hidden,
    )
    for x, y in zip(net(obs, mask), back(obs, mask)):
        assert np.array_equal(x, y)
    p, q = net.parameters(), back.parameters()
    assert p.keys() == q.keys() and all(np.array_equal(p[k], q[k]) for k in p)
    with np.load(path) as z:
        assert str(z["format"]) == ev.FORMAT and int(z["version"]) == ev.VERSION
        assert z["hidden"].tolist() == [24, 12]


def _rewrite(src, dst, **changes):
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    for k, v in changes.items():
        if v is None:
            del arrays[k]
        else:
            arrays[k] = v
    with open(dst, "wb") as f:
        np.savez(f, **arrays)
    return str(dst)


def test_load_gives_clear_errors_for_bad_files(tmp_path):
    game = caribsim.load_game("puerto_rico", players=3)
    good = str(tmp_path / "good.npz")
    MLPEvaluator.for_game(game, hidden=(8,), seed=0).save(good)
    data = (tmp_path / "good.npz").read_bytes()
    (tmp_path / "truncated.npz").write_bytes(data[: len(data) // 2])
    corrupt = bytearray(data)
    corrupt[len(data) // 3 : len(data) // 3 + 64] = b"\xff" * 64  # inside w0's data
    (tmp_path / "corrupt.npz").write_bytes(bytes(corrupt))
    (tmp_path / "text.npz").write_text("not a model")
    np.save(tmp_path / "single.npy", np.zeros(3))
    cases = {
        str(tmp_path / "missing.npz"): "no such file",
        str(tmp_path): "it is a folder",
        str(tmp_path / "truncated.npz"): "not a caribsim-mlp .npz file|corrupt",
        str(tmp_path / "corrupt.npz"): "corrupt",
        str(tmp_path / "text.npz"): "not a caribsim-mlp .npz file",
        str(tmp_path / "single.npy"): "single numpy array",
        _rewrite(
            good, tmp_path / "v2.npz", version=np.array(2)
        ): "format version 2; this caribsim reads version 1 .*newer",
        _rewrite(good, tmp_path / "v0.npz", version=np.array(0)): "format version 0",
        _rewrite(
            good, tmp_path / "other.npz", format=np.array("something-else")
        ): "its format is 'something-else'",
        _rewrite(good, tmp_path / "noformat.npz", format=None): "no 'format' array",
        _rewrite(good, tmp_path / "now0.npz", w0=None): "no 'w0' array",
        _rewrite(
            good, tmp_path / "shape.npz", w0=np.zeros((489, 9), np.float32)
        ): r"'w0' must be float32 \(489, 8\)",
        _rewrite(good, tmp_path / "dtype.npz", b0=np.zeros(8, np.float64)): "'b0' must be float32",
        _rewrite(good, tmp_path / "nan.npz", b0=np.full(8, np.nan, np.float32)): "'b0' holds NaN",
        _rewrite(
            good, tmp_path / "extra.npz", w7=np.zeros(3, np.float32)
        ): r"unknown arrays \['w7'\]",
        _rewrite(good, tmp_path / "hidden.npz", hidden=np.array([0])): "bad sizes",
        _rewrite(
            good, tmp_path / "std.npz", obs_std=np.zeros(489, np.float32)
        ): "'obs_std' must be > 0",
    }
    for path, message in cases.items():
        with pytest.raises(ValueError, match=message):
            MLPEvaluator.load(path)
    with pytest.raises(TypeError, match="path must be a str or path object"):
        MLPEvaluator.load(3)
    with pytest.raises(TypeError, match="path must be a str or path object"):
        MLPEvaluator.for_game(game, hidden=(8,)).save(None)


def test_save_leaves_no_temporary_file_on_failure(tmp_path):
    net = MLPEvaluator(5, 4, 2, hidden=(3,))
    with pytest.raises(OSError):
        net.save(tmp_path / "no_such_folder" / "m.npz")
    target = tmp_path / "dir.npz"
    target.mkdir()
    with pytest.raises(OSError):
        net.save(target)  # cannot replace a folder
    assert sorted(os.listdir(tmp_path)) == ["dir.npz"]


# ---------------------------------------------------------------------------------------------
# training


def test_training_reduces_the_loss_deterministically(pr_data):
    data = selfplay.load(pr_data)
    net, losses = train_mlp(pr_data, hidden=(32, 32), epochs=6, seed=4, lr=3e-3)
    assert len(losses) == 6 and all(isinstance(x, ev.Loss) for x in losses)
    assert losses[-1].total < losses[0].total
    assert losses[-1].policy < losses[0].policy and losses[-1].value < losses[0].value
    for x in losses:
        assert x.total == pytest.approx(x.policy + x.value + x.l2)
    fresh = MLPEvaluator(
        data["observation"].shape[1],
        143,
        3,
        hidden=(32, 32),
        seed=4,
        obs_mean=net.parameters()["obs_mean"],
        obs_std=net.parameters()["obs_std"],
    )
    assert net.loss(pr_data).total < fresh.loss(pr_data).total
    # the same data and seed give the same weights and losses; from the folder, the arrays or a shard
    again, losses2 = train_mlp(data, hidden=(32, 32), epochs=6, seed=4, lr=3e-3)
    assert losses2 == losses
    p, q = net.parameters(), again.parameters()
    assert all(np.array_equal(p[k], q[k]) for k in p)
    _other, losses3 = train_mlp(data, hidden=(32, 32), epochs=6, seed=5, lr=3e-3)
    assert losses3 != losses
    shard = os.path.join(pr_data, "shard_000000.npz")
    part, _ = train_mlp(shard, hidden=(8,), epochs=1)
    assert part.obs_size == net.obs_size


def test_normalisation_comes_from_the_training_data(pr_data):
    data = selfplay.load(pr_data)
    net, _ = train_mlp(pr_data, hidden=(8,), epochs=1)
    p = net.parameters()
    np.testing.assert_allclose(
        p["obs_mean"], data["observation"].mean(axis=0), rtol=1e-5, atol=1e-5
    )
    std = data["observation"].std(axis=0)
    np.testing.assert_allclose(p["obs_std"][std > 1e-3], std[std > 1e-3], rtol=1e-4)
    assert (p["obs_std"][std == 0] == 1).all()
    plain, _ = train_mlp(pr_data, hidden=(8,), epochs=1, normalise=False)
    assert (plain.parameters()["obs_mean"] == 0).all() and (
        plain.parameters()["obs_std"] == 1
    ).all()


def test_fit_continues_training_and_keeps_the_scaling(pr_data):
    net, _first = train_mlp(pr_data, hidden=(16,), epochs=2, seed=0)
    scaling = net.parameters()["obs_std"]
    before = net.loss(pr_data)
    more = net.fit(pr_data, epochs=3, seed=1)
    assert len(more) == 3 and net.loss(pr_data).total < before.total
    assert np.array_equal(net.parameters()["obs_std"], scaling)


def test_a_second_concurrent_fit_is_refused_and_calls_still_run(pr_data):
    game, obs, mask = positions("puerto_rico", 3, 8)
    net = MLPEvaluator.for_game(game, hidden=(8,))
    before = net.parameters()
    with net._fit_guard:  # as if another thread were training it
        with pytest.raises(RuntimeError, match="being trained by another thread"):
            net.fit(pr_data, epochs=1)
        check_protocol(*net(obs, mask), 8, 143, 3)
    after = net.parameters()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    net.fit(pr_data, epochs=1)  # and free again afterwards


def test_calls_during_a_fit_see_whole_epochs(pr_data):
    """A forward while another thread trains gives the output of one published set of weights."""
    game, obs, mask = positions("puerto_rico", 3, 16)
    net = MLPEvaluator.for_game(game, hidden=(16,), seed=0)
    seen, published = [], []
    original = net._publish

    def publish(params):
        original(params)
        published.append(net(obs, mask)[0])

    net._publish = publish
    worker = threading.Thread(
        target=net.fit, args=(pr_data,), kwargs={"epochs": 4, "batch_size": 32}
    )
    initial = net(obs, mask)[0]
    worker.start()
    while worker.is_alive():
        seen.append(net(obs, mask)[0])
    worker.join()
    assert len(published) == 4
    for out in seen:
        assert any(np.array_equal(out, ok) for ok in [initial, *published])


def test_training_data_errors(pr_data, tmp_path):
    data = selfplay.load(pr_data)
    net = MLPEvaluator(data["observation"].shape[1], 143, 3, hidden=(4,))

    def changed(**kw):
        d = dict(data)
        d.update(kw)
        return d

    policy_on_illegal = data["policy"].copy()
    policy_on_illegal[0, np.argmin(data["legal_mask"][0])] = 0.5
    zero = data["policy"].copy()
    zero[3] = 0
    cases = [
        ({k: v for k, v in data.items() if k != "policy"}, ValueError, "no 'policy' array"),
        (changed(returns=data["returns"][:-1]), ValueError, "same number of rows"),
        (changed(policy=policy_on_illegal), ValueError, "mass on an illegal move"),
        (changed(policy=-data["policy"]), ValueError, "negative"),
        (changed(policy=zero), ValueError, "row 3 has no mass"),
        (changed(returns=data["returns"] * 2), ValueError, r"in \[0, 1\]"),
        (changed(observation=np.full_like(data["observation"], np.nan)), ValueError, "NaN"),
        (changed(observation=data["observation"][:, :-1]), ValueError, "O = 489"),
        (changed(observation=data["observation"][0]), ValueError, "2-dimensional"),
        ({k: v[:0] for k, v in data.items()}, ValueError, "no decision"),
        (
            changed(observation=np.array([["a"] * 489] * len(data["policy"]))),
            TypeError,
            "must hold numbers",
        ),
        ([1, 2, 3], TypeError, "data must be a self-play folder"),
        (str(tmp_path), ValueError, "not a finished self-play folder"),
        (str(tmp_path / "nothing.npz"), ValueError, "no such file"),
    ]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text('{"format": "other"}')
    cases.append((str(tmp_path / "bad"), ValueError, "not a caribsim-selfplay manifest"))
    for bad, kind, message in cases:
        with pytest.raises(kind, match=message):
            net.fit(bad, epochs=1)
    cuba = caribsim.load_game("cuba", players=4)
    with pytest.raises(ValueError, match="O = 2055"):
        MLPEvaluator.for_game(cuba, hidden=(4,)).fit(pr_data)


@pytest.mark.parametrize(
    "option,value,kind,message",
    [
        ("epochs", 0, ValueError, "epochs must be in 1"),
        ("epochs", 1.5, TypeError, "epochs must be an int"),
        ("batch_size", True, TypeError, "batch_size must be an int, got bool"),
        ("lr", 0.0, ValueError, "lr must be a finite number > 0"),
        ("lr", float("nan"), ValueError, "lr must be a finite number"),
        ("lr", "fast", TypeError, "lr must be a number"),
        ("l2", -1.0, ValueError, "l2 must be a finite number >= 0"),
        ("value_weight", float("inf"), ValueError, "value_weight must be a finite number"),
        ("seed", -1, ValueError, "seed must be in 0.."),
    ],
)
def test_bad_fit_options(pr_data, option, value, kind, message):
    net = MLPEvaluator(489, 143, 3, hidden=(4,))
    with pytest.raises(kind, match=message):
        net.fit(pr_data, **{option: value})
    with pytest.raises(kind, match=message):
        train_mlp(pr_data, **{option: value})


def test_divergence_is_reported_and_keeps_the_last_good_weights(pr_data):
    net = MLPEvaluator(489, 143, 3, hidden=(8,), seed=0)
    before = net.parameters()
    with pytest.raises(FloatingPointError, match="diverged"):
        net.fit(pr_data, epochs=1, lr=1e38, l2=0.0)
    after = net.parameters()
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_a_briefly_trained_mlp_policy_beats_random_bots(tmp_path):
    """A few seconds of self-play and training give a policy (the best legal logit, no search)
    that wins more than its third of 3-player games against two RandomBots; untrained, it
    does not."""
    from caribsim import arena, bots

    out = str(tmp_path / "pr3")
    selfplay.generate("puerto_rico", "mcts:50", 20, out, seed=0, players=3)
    trained, losses = train_mlp(out, hidden=(64, 64), epochs=15, seed=0, lr=2e-3)
    assert losses[-1].policy < losses[0].policy
    untrained = MLPEvaluator.for_game(caribsim.load_game("puerto_rico", players=3), hidden=(64, 64))

    class PolicyBot(bots.Bot):
        name = "mlp-policy"

        def __init__(self, net, seed=0):
            self.net = net
            super().__init__(seed)

        def step(self, state):
            legal = self._legal(state)
            p = state.current_player()
            logits, _ = self.net(
                state.observation_tensor(p)[None], state.legal_actions_mask(p).astype(bool)[None]
            )
            return max(legal, key=lambda a: logits[0, a])

    rates = {}
    for name, net in (("trained", trained), ("untrained", untrained)):
        result = arena.play_match(
            "puerto_rico",
            [PolicyBot(net), bots.RandomBot(), bots.RandomBot()],
            n_games=300,
            seed=2,
            players=3,
        )
        rates[name] = result.bots[0]
    assert rates["trained"].ci95[0] > 1 / 3, rates["trained"]
    assert rates["untrained"].win_rate < rates["trained"].win_rate


# ---------------------------------------------------------------------------------------------
# the torch adapter


def test_torch_conversion_gives_the_numpy_outputs(pr_data):
    torch = need("nn")
    net, _ = train_mlp(pr_data, hidden=(32, 16), epochs=1, seed=0)
    game, obs, mask = positions("puerto_rico", 3, 50, seed=4)
    module = net.to_torch()
    for evaluator in (
        TorchEvaluator(module),
        TorchEvaluator(module, device="cpu", batch_size=7),
        TorchEvaluator(module, device=torch.device("cpu")),
    ):
        logits, values = evaluator(obs, mask)
        ref = net(obs, mask)
        np.testing.assert_allclose(logits, ref[0], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(values, ref[1], rtol=1e-4, atol=1e-6)
    back = MLPEvaluator.from_torch(module)
    assert back.hidden == (32, 16)
    for x, y in zip(back(obs, mask), net(obs, mask)):
        assert np.array_equal(x, y)
    with pytest.raises(TypeError, match=r"made by MLPEvaluator\.to_torch"):
        MLPEvaluator.from_torch(torch_mlp(game))


def test_torch_evaluator_equals_calling_the_module():
    torch = need("nn")
    game, obs, mask = positions("port_royal", 3, 33, seed=1)
    module = torch_mlp(game, hidden=48, blocks=2, seed=3)
    with torch.no_grad():
        want = [t.numpy() for t in module(torch.from_numpy(obs))]
    whole = TorchEvaluator(module, device="cpu")(obs, mask)
    chunks = TorchEvaluator(module, batch_size=5)(obs, mask)
    for got in (whole, chunks):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    # a read-only or non-contiguous batch works too, and the outputs own their memory
    ro = np.asfortranarray(obs)
    ro.flags.writeable = False
    got = TorchEvaluator(module)(ro, mask)
    np.testing.assert_allclose(got[0], whole[0], rtol=1e-5, atol=1e-5)
    assert got[0].flags.owndata and got[0].flags.writeable
    # a float64 module with float64 inputs
    double = TorchEvaluator(
        torch_mlp(game, hidden=8, blocks=0, seed=0).double(), dtype=torch.float64
    )
    check_protocol(*double(obs, mask), 33, 291, 3)
    assert not module.training  # put in eval mode


def test_torch_mlp_seed_is_deterministic_and_leaves_the_global_rng():
    torch = need("nn")
    game = caribsim.load_game("cuba", players=4)
    state = torch.random.get_rng_state()
    a, b, c = (torch_mlp(game, hidden=16, blocks=1, seed=s) for s in (1, 1, 2))
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a.stem.weight, b.stem.weight) and not torch.equal(
        a.stem.weight, c.stem.weight
    )
    assert len(a.blocks) == 1 and a.stem.out_features == 16


def test_torch_evaluator_checks_the_module_output():
    torch = need("nn")
    _game, obs, mask = positions("puerto_rico", 3, 4)

    class Module(torch.nn.Module):
        def __init__(self, kind):
            super().__init__()
            self.kind = kind

        def forward(self, x):
            n = x.shape[0]
            if self.kind == "tensor":
                return torch.zeros(n, 143)
            if self.kind == "shape":
                return torch.zeros(n, 142), torch.full((n, 3), 1 / 3)
            if self.kind == "range":
                return torch.zeros(n, 143), torch.full((n, 3), 2.0)
            if self.kind == "nan":
                return torch.full((n, 143), float("nan")), torch.full((n, 3), 1 / 3)
            return torch.zeros(n, 143, dtype=torch.float64), torch.full(
                (n, 3), 1 / 3, dtype=torch.float16
            )

    for kind, error, message in [
        ("tensor", TypeError, r"must return \(logits, values\)"),
        ("shape", ValueError, r"logits must have shape \(L, A\) = \(4, 143\)"),
        ("range", ValueError, r"values must be in \[0, 1\]"),
        ("nan", ValueError, "logits holds NaN"),
    ]:
        with pytest.raises(error, match=message):
            TorchEvaluator(Module(kind))(obs, mask)
    logits, values = TorchEvaluator(Module("dtypes"))(
        obs, mask
    )  # any float dtype comes back float32
    assert logits.dtype == values.dtype == np.float32


def test_torch_evaluator_bad_options():
    torch = need("nn")
    game = caribsim.load_game("puerto_rico", players=3)
    module = torch_mlp(game, hidden=8, blocks=0)
    for kwargs, error, message in [
        ({"module": object()}, TypeError, "module must be a torch.nn.Module"),
        ({"dtype": torch.int32}, TypeError, "dtype must be a floating torch dtype"),
        ({"dtype": "float32"}, TypeError, "dtype must be a floating torch dtype"),
        ({"device": "nonsense"}, ValueError, "device 'nonsense' is not a torch device"),
        ({"device": 3.5}, TypeError, "device must be None, a str"),
        ({"batch_size": 0}, ValueError, "batch_size must be in 1"),
        ({"batch_size": "8"}, TypeError, "batch_size must be an int"),
    ]:
        with pytest.raises(error, match=message):
            TorchEvaluator(**{"module": module, **kwargs})
    for kwargs, error, message in [
        ({"hidden": 0}, ValueError, "hidden must be in 1"),
        ({"blocks": -1}, ValueError, "blocks must be in 0"),
        ({"seed": 1.5}, TypeError, "seed must be an int"),
        ({"obs_std": np.zeros(489)}, ValueError, "obs_std must be finite and > 0"),
    ]:
        with pytest.raises(error, match=message):
            torch_mlp(game, **kwargs)
    with pytest.raises(TypeError, match="game must be a caribsim game"):
        torch_mlp("puerto_rico")


def test_without_torch_the_error_says_how_to_install_it(monkeypatch):
    game = caribsim.load_game("puerto_rico", players=3)
    net = MLPEvaluator.for_game(game, hidden=(4,))
    monkeypatch.setitem(sys.modules, "torch", None)  # "import torch" now raises ImportError
    hint = r"pip install 'caribsim\[nn\]'"
    with pytest.raises(ImportError, match=hint):
        TorchEvaluator(object())
    with pytest.raises(ImportError, match=hint):
        torch_mlp(game)
    with pytest.raises(ImportError, match=hint):
        net.to_torch()
    with pytest.raises(ImportError, match=hint):
        MLPEvaluator.from_torch(object())
    # the numpy evaluators do not need torch
    _, obs, mask = positions("puerto_rico", 3, 3)
    check_protocol(*CachedEvaluator(net)(obs, mask), 3, 143, 3)


def test_the_extra_is_declared():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    extras = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^nn = \["torch>=\d', extras, re.M)


# ---------------------------------------------------------------------------------------------
# the cache


class Counting:
    """An evaluator of (obs, mask) row by row (elementwise, so its rows never depend on the
    batch) that records the rows it is given."""

    def __init__(self, A, P):
        self.A, self.P, self.calls = A, P, []

    def __call__(self, obs, mask):
        self.calls.append((obs.copy(), mask.copy()))
        cols = np.arange(self.A) % obs.shape[1]
        logits = (obs[:, cols] * 0.5 + mask).astype(np.float32)
        values = (1 / (1 + np.exp(-obs[:, : self.P]))).astype(np.float32)
        return logits, values


def test_cache_returns_the_inner_outputs_and_evaluates_only_the_misses():
    game, obs, mask = positions("puerto_rico", 3, 30, seed=6)
    A = game.num_distinct_actions()
    inner = Counting(A, 3)
    cache = CachedEvaluator(inner, max_entries=1000)
    batch = np.concatenate([obs[:10], obs[:4]]), np.concatenate([mask[:10], mask[:4]])  # 4 repeats
    out = cache(*batch)
    want = inner(*batch)
    inner.calls.pop()
    assert np.array_equal(out[0], want[0]) and np.array_equal(out[1], want[1])
    assert len(inner.calls) == 1 and len(inner.calls[0][0]) == 10  # each distinct row once
    assert cache.stats() == {
        "hits": 4,
        "misses": 10,
        "inner_calls": 1,
        "entries": 10,
        "max_entries": 1000,
        "hit_rate": 4 / 14,
    }
    # a batch of 5 cached and 20 new rows: one inner call with exactly the new rows
    out = cache(obs[5:30], mask[5:30])
    assert len(inner.calls) == 2
    assert np.array_equal(inner.calls[1][0], obs[10:30]) and np.array_equal(
        inner.calls[1][1], mask[10:30]
    )
    want = inner(obs[5:30], mask[5:30])
    assert np.array_equal(out[0], want[0]) and np.array_equal(out[1], want[1])
    # all cached: no inner call
    cache(obs, mask)
    assert len(inner.calls) == 3  # (the one made above)
    s = cache.stats()
    assert (s["hits"], s["misses"], s["inner_calls"], s["entries"]) == (4 + 5 + 30, 30, 2, 30)
    cache.clear()
    assert cache.stats()["entries"] == 0 == cache.stats()["hits"] and len(cache) == 0


def test_cache_same_mask_different_obs_and_same_obs_different_mask_are_different_positions():
    game, obs, mask = positions("port_royal", 3, 2)
    inner = Counting(game.num_distinct_actions(), 3)
    cache = CachedEvaluator(inner)
    other_mask = mask[:1].copy()
    other_mask[0, np.argmin(other_mask[0])] = True
    other_obs = obs[:1].copy()
    other_obs[0, 0] += 1
    cache(obs[:1], mask[:1])
    cache(obs[:1], other_mask)
    cache(other_obs, mask[:1])
    assert cache.stats()["misses"] == 3 and cache.stats()["hits"] == 0


def test_cache_stays_within_max_entries_least_recently_used_first():
    game, obs, mask = positions("cuba", 4, 12, seed=2)
    inner = Counting(game.num_distinct_actions(), 4)
    cache = CachedEvaluator(inner, max_entries=5)
    for i in range(8):
        cache(obs[i : i + 1], mask[i : i + 1])
        assert len(cache) <= 5
    assert cache.stats()["entries"] == 5  # rows 3..7 kept
    cache(obs[3:4], mask[3:4])  # a hit makes row 3 the most recent
    cache(obs[8:9], mask[8:9])  # evicts row 4, the least recent
    n = len(inner.calls)
    cache(obs[3:4], mask[3:4])
    assert len(inner.calls) == n
    cache(obs[4:5], mask[4:5])
    assert len(inner.calls) == n + 1
    # a batch larger than the cache still answers every row
    big = CachedEvaluator(inner, max_entries=3)
    out = big(obs, mask)
    want = inner(obs, mask)
    assert np.array_equal(out[0], want[0]) and len(big) == 3


def test_cache_over_the_mlp_matches_it():
    game, obs, mask = positions("puerto_rico", 3, 40, seed=8)
    net = MLPEvaluator.for_game(game, hidden=(32,), seed=2)
    cache = CachedEvaluator(net, max_entries=100)
    first = cache(obs, mask)
    second = cache(obs[::-1], mask[::-1])
    assert np.array_equal(second[0], first[0][::-1]) and np.array_equal(second[1], first[1][::-1])
    direct = net(obs, mask)
    np.testing.assert_allclose(first[0], direct[0], rtol=1e-5, atol=1e-5)  # BLAS rounding only
    np.testing.assert_allclose(first[1], direct[1], rtol=1e-5, atol=1e-6)


def test_cache_refuses_bad_inner_output_and_caches_nothing():
    _game, obs, mask = positions("puerto_rico", 3, 4)
    for bad, error, message in [
        (lambda o, m: None, TypeError, r"must return \(logits, values\)"),
        (
            lambda o, m: (np.zeros((len(o), 143), np.float32), np.full((len(o), 3), 2, np.float32)),
            ValueError,
            r"values must be in \[0, 1\]",
        ),
        (
            lambda o, m: (np.zeros((len(o), 143)), np.zeros((len(o), 3), np.float32)),
            TypeError,
            "logits must have dtype float32",
        ),
    ]:
        cache = CachedEvaluator(bad)
        with pytest.raises(error, match=message):
            cache(obs, mask)
        assert cache.stats()["entries"] == 0 and cache.stats()["misses"] == 0
    inner = Counting(143, 3)
    cache = CachedEvaluator(inner)
    cache(obs, mask)
    with pytest.raises(ValueError, match="holds positions with O = 489 and A = 143"):
        cache(obs[:, :-1], mask)
    flip = Counting(143, 2)
    cache.evaluator = flip
    with pytest.raises(ValueError, match=r"values must have shape \(L, P\) = \(1, 3\)"):
        cache(obs[:1] + 1, mask[:1])


def test_cache_bad_options():
    for kwargs, error, message in [
        ({"evaluator": 3}, TypeError, "evaluator must be callable"),
        ({"max_entries": 0}, ValueError, "max_entries must be in 1"),
        ({"max_entries": True}, TypeError, "max_entries must be an int, got bool"),
        ({"max_entries": "10"}, TypeError, "max_entries must be an int"),
    ]:
        with pytest.raises(error, match=message):
            CachedEvaluator(**{"evaluator": Counting(3, 2), **kwargs})


def test_one_cache_shared_by_threads():
    _game, obs, mask = positions("puerto_rico", 3, 64, seed=9)
    inner = Counting(143, 3)
    cache = CachedEvaluator(inner, max_entries=40)
    want = inner(obs, mask)
    errors = []

    def work(k):
        rng = np.random.default_rng(k)
        for _ in range(50):
            idx = rng.integers(0, 64, size=16)
            got = cache(obs[idx], mask[idx])
            if not (np.array_equal(got[0], want[0][idx]) and np.array_equal(got[1], want[1][idx])):
                errors.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    s = cache.stats()
    assert s["hits"] + s["misses"] == 4 * 50 * 16 and s["entries"] <= 40


def _copies_and_pickles_give_the_same_outputs(originals, obs, mask):
    for original in originals:
        for clone in (
            pickle.loads(pickle.dumps(original)),
            copy.deepcopy(original),
            copy.copy(original),
        ):
            assert type(clone) is type(original)
            for x, y in zip(clone(obs, mask), original(obs, mask)):
                np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)


def test_copies_and_pickles_of_the_torch_evaluator():
    need("nn")
    game, obs, mask = positions("port_royal", 3, 12)
    adapter = TorchEvaluator(torch_mlp(game, hidden=8, blocks=1, seed=0), batch_size=5)
    _copies_and_pickles_give_the_same_outputs([adapter], obs, mask)
    assert pickle.loads(pickle.dumps(adapter)).batch_size == 5


def test_copies_and_pickles_of_the_evaluators():
    game, obs, mask = positions("port_royal", 3, 12)
    net = MLPEvaluator.for_game(game, hidden=(16,), seed=3)
    cache = CachedEvaluator(net, max_entries=7)
    cache(obs, mask)
    _copies_and_pickles_give_the_same_outputs([net, cache], obs, mask)
    fresh = pickle.loads(pickle.dumps(cache))
    assert len(fresh) == 0 and fresh.max_entries == 7 and fresh.stats()["hits"] == 0
    twin = copy.deepcopy(net)
    twin.fit(
        {
            "observation": obs,
            "legal_mask": mask,
            "policy": mask / mask.sum(1, keepdims=True),
            "returns": np.full((12, 3), 1 / 3, np.float32),
        },
        epochs=1,
    )
    assert not np.array_equal(twin.parameters()["w0"], net.parameters()["w0"])  # trained apart


# ---------------------------------------------------------------------------------------------
# the checks and the errors of the constructors and calls


def test_check_output_errors():
    good = np.zeros((4, 6), np.float32), np.full((4, 2), 0.5, np.float32)
    assert check_output(*good, 4, 6, 2) == good
    check_output(*good, 4, 6, None)
    for logits, values, error, message in [
        (good[0].tolist(), good[1], TypeError, "logits must be a numpy float32 array"),
        (
            good[0].astype(np.float64),
            good[1],
            TypeError,
            "logits must have dtype float32, got float64",
        ),
        (good[0], good[1].astype(np.float16), TypeError, "values must have dtype float32"),
        (
            good[0][:3],
            good[1],
            ValueError,
            r"logits must have shape \(L, A\) = \(4, 6\), got \(3, 6\)",
        ),
        (good[0], good[1][:, :1], ValueError, r"values must have shape \(L, P\) = \(4, 2\)"),
        (good[0].reshape(-1), good[1], ValueError, "logits must have shape"),
        (
            np.where(np.eye(4, 6, dtype=bool), np.float32(np.inf), good[0]),
            good[1],
            ValueError,
            r"logits holds NaN or inf \(first in row 0\)",
        ),
        (
            good[0],
            np.where(np.arange(8).reshape(4, 2) == 5, np.float32(np.nan), good[1]),
            ValueError,
            r"values holds NaN or inf \(first in row 2\)",
        ),
        (
            good[0],
            good[1] + np.float32(0.6),
            ValueError,
            r"values must be in \[0, 1\], got 1.1.* row 0, seat 0",
        ),
        (good[0], good[1] - np.float32(0.6), ValueError, r"values must be in \[0, 1\]"),
    ]:
        with pytest.raises(error, match=message):
            check_output(logits, values, 4, 6, 2)
    with pytest.raises(ValueError, match="A must be >= 1"):
        check_output(*good, 4, 0, 2)
    with pytest.raises(TypeError, match="L must be an int"):
        check_output(*good, 4.0, 6, 2)


def test_check_input_and_evaluator_call_errors():
    game, obs, mask = positions("puerto_rico", 3, 4)
    net = MLPEvaluator.for_game(game, hidden=(4,))
    evaluators = [net, CachedEvaluator(net)]
    try:
        import torch  # noqa: F401

        evaluators.append(TorchEvaluator(net.to_torch()))
    except ImportError:
        pass
    nan = obs.copy()
    nan[2, 7] = np.nan
    for args, error, message in [
        ((obs.tolist(), mask), TypeError, "obs must be a numpy array of float32"),
        ((obs.astype(np.float64), mask), TypeError, "obs must have dtype float32, got float64"),
        ((obs, mask.astype(np.uint8)), TypeError, "mask must have dtype bool, got uint8"),
        ((obs[0], mask), ValueError, "obs must be 2-dimensional"),
        ((obs, mask[:3]), ValueError, "same number of rows L, got 4 and 3"),
        ((nan, mask), ValueError, r"obs holds NaN or inf \(first in row 2\)"),
    ]:
        for e in evaluators:
            with pytest.raises(error, match=message):
                e(*args)
        with pytest.raises(error, match=message):
            check_input(*args)
    with pytest.raises(ValueError, match="obs must have O = 489 columns"):
        net(obs[:, :-1], mask)
    with pytest.raises(ValueError, match="mask must have A = 143 columns"):
        net(obs, mask[:, :-1])
    assert check_input(obs, mask, 489, 143) == 4


@pytest.mark.parametrize(
    "args,kwargs,error,message",
    [
        ((0, 5, 2), {}, ValueError, "obs_size must be in 1"),
        ((5, 0, 2), {}, ValueError, "num_actions must be in 1"),
        ((5, 5, 0), {}, ValueError, "num_players must be in 1"),
        ((5.0, 5, 2), {}, TypeError, "obs_size must be an int"),
        ((5, 5, 2), {"hidden": "128"}, TypeError, "hidden must be a tuple of layer widths"),
        ((5, 5, 2), {"hidden": 128}, TypeError, "hidden must be a tuple of layer widths"),
        ((5, 5, 2), {"hidden": (8, 0)}, ValueError, "hidden width must be in 1"),
        ((5, 5, 2), {"hidden": (8, True)}, TypeError, "hidden width must be an int, got bool"),
        ((5, 5, 2), {"seed": -1}, ValueError, "seed must be in 0"),
        ((5, 5, 2), {"seed": "0"}, TypeError, "seed must be an int"),
        ((5, 5, 2), {"obs_mean": [0, 0]}, ValueError, "obs_mean must be 5 numbers"),
        ((5, 5, 2), {"obs_std": [1, 1, 0, 1, 1]}, ValueError, "obs_std must be finite and > 0"),
        ((5, 5, 2), {"obs_mean": [0, 0, np.nan, 0, 0]}, ValueError, "obs_mean must be finite"),
        ((5, 5, 2), {"obs_mean": ["a"] * 5}, ValueError, "obs_mean must be 5 numbers"),
    ],
)
def test_bad_mlp_options(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        MLPEvaluator(*args, **kwargs)


def test_for_game_and_train_mlp_bad_arguments(pr_data):
    with pytest.raises(TypeError, match="game must be a caribsim game"):
        MLPEvaluator.for_game("puerto_rico")
    with pytest.raises(TypeError, match="normalise must be True or False"):
        train_mlp(pr_data, normalise="yes")
    with pytest.raises(TypeError, match="hidden must be a tuple"):
        train_mlp(pr_data, hidden=None)
