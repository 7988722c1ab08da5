"""The compiled MLP (caribsim.search._mlp, evaluators.CompiledMLP): the numpy MLPEvaluator's
network in C, evaluated by the guided search without a Python call.

Tolerances. Both forward passes sum float32 products in float32, in different orders
(numpy's BLAS blocks the sums its own way; the compiled one adds the inputs in ascending
order and starts the first layer from a reference observation's sums). Each is within the
float32 error of a sum of K products, of the order of sqrt(K) * 2**-24 relative to the sum
of the terms' sizes (K <= 400 here: about 1e-6 of a layer's scale). So the tests compare
each with a float64 forward pass of the same weights and ask the compiled error to be
at most 4 times numpy's own (or 1e-6 of the outputs' scale, where numpy happens to be
exact), and the two outputs to agree within rtol 1e-5 and atol 1e-5 (the logits here are
of order 1-10; the values, in [0, 1], are a softmax whose derivative is at most 1/4)."""

from __future__ import annotations

import pickle
import random
import threading

import numpy as np
import pytest

import caribsim
from caribsim import _blas
from caribsim.search import _mlp, bots, guided
from caribsim.search.evaluators import CompiledMLP, MLPEvaluator

KERNELS = ["generic"] + (["avx2"] if _mlp.cpu_has_avx2() else [])


def _observations(game, n, seed=0):
    """(obs float32 [n, O], mask bool [n, A]) of positions met in random play of `game`."""
    rng = random.Random(seed)
    obs, mask, g = [], [], 0
    while len(obs) < n:
        state = game.new_initial_state(seed=seed + g)
        g += 1
        while not state.is_terminal() and len(obs) < n:
            if state.is_chance_node():
                state.resolve_chance()
                continue
            if rng.random() < 0.2:
                obs.append(state.observation_tensor())
                mask.append(state.legal_actions_mask().astype(bool))
            state.apply_action(rng.choice(state.legal_actions()))
    return np.array(obs, dtype=np.float32), np.array(mask)


def _reference(net, obs):
    """The network's (logits, values) in float64, from the same float32 weights."""
    p = {k: v.astype(np.float64) for k, v in net.parameters().items()}
    inv_std = (1.0 / net.parameters()["obs_std"]).astype(np.float32).astype(np.float64)
    h = (obs.astype(np.float64) - p["obs_mean"]) * inv_std
    for i in range(len(net.hidden)):
        h = np.maximum(h @ p[f"w{i}"] + p[f"b{i}"], 0.0)
    logits = h @ p["policy_w"] + p["policy_b"]
    u = h @ p["value_w"] + p["value_b"]
    e = np.exp(u - u.max(axis=1, keepdims=True))
    return logits, e / e.sum(axis=1, keepdims=True)


def _assert_within_rounding(compiled, numpy_out, exact):
    scale = max(float(np.abs(exact).max()), 1e-30)
    err_c = float(np.abs(compiled.astype(np.float64) - exact).max())
    err_n = float(np.abs(numpy_out.astype(np.float64) - exact).max())
    assert err_c <= 4 * max(err_n, 1e-6 * scale), (err_c, err_n, scale)
    np.testing.assert_allclose(compiled, numpy_out, rtol=1e-5, atol=1e-5)


def _check_equal(net, obs, mask, kernel, reference=None):
    c = CompiledMLP(net, kernel=kernel)
    assert c.kernel == kernel
    logits_n, values_n = net(obs, mask)
    if reference is None:
        logits_c, values_c = c(obs, mask)
    else:
        logits_c, values_c = c.forward(obs, reference)
    assert logits_c.dtype == values_c.dtype == np.float32
    assert logits_c.shape == logits_n.shape and values_c.shape == values_n.shape
    exact_logits, exact_values = _reference(net, obs)
    _assert_within_rounding(logits_c, logits_n, exact_logits)
    _assert_within_rounding(values_c, values_n, exact_values)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize(
    "sizes",
    [
        (390, 143, 2, (256, 256)),  # the shipped network's shape
        (37, 7, 3, (5, 33, 17)),  # widths that are not multiples of the 16-output panels
        (20, 9, 4, ()),  # no hidden layer: the head on the scaled observation
        (64, 30, 1, (48,)),  # one seat: its value is 1
    ],
)
def test_equal_to_numpy_on_random_inputs(kernel, sizes):
    n_obs, n_actions, n_players, hidden = sizes
    rng = np.random.default_rng(1)
    mean = rng.normal(0, 2, n_obs).astype(np.float32)
    std = rng.uniform(0.2, 3, n_obs).astype(np.float32)
    net = MLPEvaluator(
        n_obs, n_actions, n_players, hidden=hidden, seed=3, obs_mean=mean, obs_std=std
    )
    for n in (1, 2, 3, 4, 5, 31, 32, 33, 70):  # single rows, blocks of 2-4, chunks and tails
        obs = rng.normal(0, 3, (n, n_obs)).astype(np.float32)
        obs[rng.random((n, n_obs)) < 0.6] = 0.0  # sparse, like the games' observations
        mask = rng.random((n, n_actions)) < 0.5
        _check_equal(net, obs, mask, kernel)
        _check_equal(net, obs, mask, kernel, reference=obs[0].copy())


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize(
    "name, players", [("puerto_rico", 2), ("puerto_rico", 4), ("port_royal", 3), ("cuba", 4)]
)
def test_equal_to_numpy_on_real_observations(kernel, name, players):
    game = caribsim.load_game(name, players=players)
    obs, mask = _observations(game, 150, seed=5)
    mean, std = obs.mean(axis=0), obs.std(axis=0)
    std[std < 1e-6] = 1.0  # as evaluators.observation_stats
    for norm in ({}, {"obs_mean": mean, "obs_std": std}):
        net = MLPEvaluator.for_game(game, hidden=(64, 48), seed=2, **norm)
        _check_equal(net, obs, mask, kernel)
        _check_equal(net, obs, mask, kernel, reference=obs[len(obs) // 2].copy())


def test_equal_to_numpy_with_the_shipped_network():
    net = MLPEvaluator.load(bots.SHIPPED_MODEL)
    obs, mask = _observations(caribsim.load_game("puerto_rico", players=2), 200, seed=9)
    for kernel in KERNELS:
        _check_equal(net, obs, mask, kernel)


@pytest.mark.parametrize("kernel", KERNELS)
def test_a_row_gives_the_same_bits_in_any_batch(kernel):
    game = caribsim.load_game("puerto_rico", players=3)
    obs, _ = _observations(game, 45, seed=2)
    net = CompiledMLP(MLPEvaluator.for_game(game, hidden=(40, 24), seed=1), kernel=kernel)
    logits, values = net.forward(obs)
    order = np.random.default_rng(0).permutation(len(obs))
    logits_p, values_p = net.forward(obs[order])
    assert np.array_equal(logits_p, logits[order]) and np.array_equal(values_p, values[order])
    for i in (0, 1, 17, 44):  # alone, and in blocks of 2 and 3
        one = net.forward(obs[i : i + 1])
        two = net.forward(obs[[i, 0]])
        three = net.forward(obs[[3, i, 5]])
        for got in (one[0][0], two[0][0], three[0][1]):
            assert np.array_equal(got, logits[i])
        assert np.array_equal(one[1][0], values[i])


def test_kernels_and_their_errors():
    net = MLPEvaluator(10, 4, 2, hidden=(8,), seed=0)
    assert _mlp.default_kernel() in ("avx2", "generic")
    assert CompiledMLP(net).kernel == _mlp.default_kernel()
    assert net.compiled().kernel == _mlp.default_kernel()
    with pytest.raises(ValueError, match="kernel must be"):
        CompiledMLP(net, kernel="sse9")
    if not _mlp.cpu_has_avx2():
        with pytest.raises(ValueError, match="AVX2"):
            CompiledMLP(net, kernel="avx2")
    with pytest.raises(TypeError, match=r"compiles an evaluators\.MLPEvaluator"):
        CompiledMLP(guided.UniformEvaluator(2))


def test_bad_inputs_raise():
    net = MLPEvaluator(10, 4, 2, hidden=(8,), seed=0)
    c = net.compiled()
    good = np.zeros((3, 10), dtype=np.float32)
    mask = np.ones((3, 4), dtype=bool)
    with pytest.raises(ValueError, match="O = 10 columns"):
        c(np.zeros((3, 11), dtype=np.float32), mask)
    with pytest.raises(ValueError, match="same number of rows"):
        c(good, np.ones((2, 4), dtype=bool))
    with pytest.raises(ValueError, match="A = 4 columns"):
        c(good, np.ones((3, 5), dtype=bool))
    with pytest.raises(ValueError, match="NaN or inf"):
        c(np.full((3, 10), np.nan, dtype=np.float32), mask)
    with pytest.raises(TypeError, match="float32"):
        c(good.astype(np.float64), mask)
    with pytest.raises(ValueError, match=r"float32 array \[L, 10\]"):
        c.forward(np.zeros((3, 9), dtype=np.float32))
    with pytest.raises(ValueError, match=r"float32 array \[L, 10\]"):
        c.forward(np.zeros(10, dtype=np.float32))
    with pytest.raises(ValueError, match=r"reference must be a float32 array \[10\]"):
        c.forward(good, np.zeros(9, dtype=np.float32))
    with pytest.raises(ValueError, match="NaN or inf"):
        c.forward(good, np.full(10, np.inf, dtype=np.float32))
    empty = c.forward(np.zeros((0, 10), dtype=np.float32))
    assert empty[0].shape == (0, 4) and empty[1].shape == (0, 2)


def test_bad_weights_raise():
    class Weights:
        obs_size, num_actions, num_players, hidden = 6, 3, 2, (4,)

        def __init__(self, **change):
            net = MLPEvaluator(6, 3, 2, hidden=(4,), seed=0)
            self.params = {**net.parameters(), **change}

        def parameters(self):
            return self.params

    assert CompiledMLP(Weights()).kernel
    with pytest.raises(ValueError, match=r"'w0' must be float32 \(6, 4\)"):
        CompiledMLP(Weights(w0=np.zeros((6, 5), dtype=np.float32)))
    with pytest.raises(ValueError, match="'policy_b' must be float32"):
        CompiledMLP(Weights(policy_b=np.zeros(3, dtype=np.float64)))
    with pytest.raises(ValueError, match="NaN or inf"):
        CompiledMLP(Weights(b0=np.full(4, np.nan, dtype=np.float32)))
    with pytest.raises(ValueError, match="'obs_std' must be > 0"):
        CompiledMLP(Weights(obs_std=np.zeros(6, dtype=np.float32)))
    bad = Weights()
    del bad.params["value_w"]
    with pytest.raises(ValueError, match="no 'value_w' array"):
        CompiledMLP(bad)


def test_a_copy_is_the_same_network():
    net = MLPEvaluator(12, 5, 3, hidden=(9, 7), seed=4)
    c = net.compiled()
    copy = pickle.loads(pickle.dumps(c))
    obs = np.random.default_rng(0).normal(size=(6, 12)).astype(np.float32)
    assert np.array_equal(copy.forward(obs)[0], c.forward(obs)[0])
    assert copy.sizes == c.sizes and repr(copy) == repr(c)
    for k, v in c.parameters().items():
        assert np.array_equal(v, net.parameters()[k])


def _decisions(game, n, seed=0):
    rng = random.Random(seed)
    out, g = [], 0
    while len(out) < n:
        state = game.new_initial_state(seed=seed + g)
        g += 1
        while not state.is_terminal() and len(out) < n:
            if state.is_chance_node():
                state.resolve_chance()
                continue
            if len(state.legal_actions()) > 1 and rng.random() < 0.1:
                out.append(state.clone())
            state.apply_action(rng.choice(state.legal_actions()))
    return out


def test_a_search_with_it_chooses_what_the_numpy_search_chooses():
    net = MLPEvaluator.load(bots.SHIPPED_MODEL)
    states = _decisions(caribsim.load_game("puerto_rico", players=2), 24)
    same_visits = 0
    for i, state in enumerate(states):
        c = guided.search(state, net, simulations=60, seed=i, mix=0.5)
        n = guided.search(state, net, simulations=60, seed=i, mix=0.5, compiled=False)
        # the values agree within float32 rounding: the same choices, move for move (the
        # visits too, but where two scores tie within rounding)
        assert c.action == n.action
        np.testing.assert_allclose(c.value, n.value, rtol=1e-5, atol=1e-6)
        same_visits += np.array_equal(c.visits, n.visits)
    assert same_visits >= 0.9 * len(states)


@pytest.mark.parametrize("name, players", [("port_royal", 2), ("cuba", 3)])
def test_hidden_information_games_search_the_same(name, players):
    game = caribsim.load_game(name, players=players)
    net = MLPEvaluator.for_game(game, hidden=(32, 32), seed=1)
    for i, state in enumerate(_decisions(game, 6, seed=3)):
        c = guided.search(state, net, simulations=40, seed=i, leaves_per_tree=4)
        n = guided.search(state, net, simulations=40, seed=i, leaves_per_tree=4, compiled=False)
        assert c.action == n.action
        np.testing.assert_allclose(c.value, n.value, rtol=1e-5, atol=1e-6)


def test_a_batch_gives_what_separate_runs_give():
    game = caribsim.load_game("puerto_rico", players=3)
    net = MLPEvaluator.for_game(game, hidden=(32,), seed=2)
    states = _decisions(game, 7, seed=1)
    seeds = [11 * i + 5 for i in range(len(states))]
    batch = guided.BatchSearch(net, 50, leaves_per_tree=4, mix=0.5, seed=0).run(states, seeds)
    for state, seed, got in zip(states, seeds, batch):
        alone = guided.search(state, net, 50, leaves_per_tree=4, mix=0.5, seed=seed)
        assert alone.action == got.action
        assert np.array_equal(alone.visits, got.visits) and np.array_equal(alone.q, got.q, True)


def test_the_search_uses_the_network_in_c():
    game = caribsim.load_game("puerto_rico", players=2)
    net = MLPEvaluator.for_game(game, hidden=(16,), seed=0)
    state = _decisions(game, 1)[0]
    bs = guided.BatchSearch(net, 30, leaves_per_tree=2)
    assert bs.network is net.compiled() and bs.compiled is True
    bs.run([state])
    assert bs.profile["python"] == 0.0 and bs.profile["network"] > 0.0
    assert bs._engine.audit()["pending"] == 0
    # a CompiledMLP given itself is evaluated in C too; compiled=False calls it from Python
    c = net.compiled()
    assert guided.BatchSearch(c, 30).network is c
    off = guided.BatchSearch(c, 30, compiled=False)
    assert off.network is None
    off.run([state])
    assert off.profile["python"] > 0.0 and off.profile["network"] == 0.0
    assert "compiled=False" in repr(off)
    assert pickle.loads(pickle.dumps(off)).compiled is False


def test_other_evaluators_are_still_called_from_python():
    game = caribsim.load_game("puerto_rico", players=2)
    state = _decisions(game, 1)[0]
    net = MLPEvaluator.for_game(game, hidden=(16,), seed=0)
    calls = []

    class Logged(MLPEvaluator):  # a subclass with its own __call__ is its own evaluator
        def __call__(self, obs, mask):
            calls.append(len(obs))
            return super().__call__(obs, mask)

    logged = Logged._from_params(*net._sizes, net.parameters())
    bs = guided.BatchSearch(logged, 20, leaves_per_tree=2)
    assert bs.network is None
    result = bs.run([state])[0]
    assert calls and sum(calls) == result.simulations + 1
    uniform = guided.BatchSearch(guided.UniformEvaluator(2), 20)
    assert uniform.network is None and uniform.run([state])[0].simulations == 20


def test_training_the_mlp_recompiles_it_for_the_search():
    game = caribsim.load_game("puerto_rico", players=2)
    net = MLPEvaluator.for_game(game, hidden=(16,), seed=0)
    state = _decisions(game, 1)[0]
    bs = guided.BatchSearch(net, 40, leaves_per_tree=2, seed=3)
    before = bs.network
    bs.run([state])
    obs, mask = _observations(game, 64, seed=1)
    rng = np.random.default_rng(0)
    policy = np.where(mask, rng.random(mask.shape), 0).astype(np.float32)
    returns = rng.dirichlet(np.ones(2), size=len(obs)).astype(np.float32)
    net.fit(
        {"observation": obs, "legal_mask": mask, "policy": policy, "returns": returns},
        epochs=1,
        lr=0.05,
    )
    assert bs.network is not before and bs.network is net.compiled()
    got = bs.run([state])[0]
    want = guided.search(state, net, 40, leaves_per_tree=2, seed=3, compiled=False)
    assert got.action == want.action
    np.testing.assert_allclose(got.value, want.value, rtol=1e-5, atol=1e-6)


def test_a_network_for_another_game_is_refused():
    net = MLPEvaluator.for_game(caribsim.load_game("puerto_rico", players=3), hidden=(8,))
    state = _decisions(caribsim.load_game("puerto_rico", players=2), 1)[0]
    with pytest.raises(ValueError, match="obs must have O = 489 columns"):
        guided.search(state, net, 10)


def test_an_overflowing_network_is_a_clear_error_and_the_search_stays_usable():
    game = caribsim.load_game("puerto_rico", players=2)
    net = MLPEvaluator.for_game(game, hidden=(8,), seed=0)
    params = net.parameters()
    params["w0"] = np.full_like(params["w0"], 3e38)  # finite weights whose sums overflow
    huge = MLPEvaluator._from_params(*net._sizes, params)
    state = _decisions(game, 1)[0]
    bs = guided.BatchSearch(huge, 20, leaves_per_tree=2)
    with pytest.raises(ValueError, match=r"compiled network's (logits|values)"):
        bs.run([state])
    audit = bs._engine.audit()
    assert audit["pending"] == 0 and audit["vloss"] == 0 and audit["inflight"] == 0


def test_searches_on_threads_share_one_network():
    game = caribsim.load_game("puerto_rico", players=2)
    net = MLPEvaluator.load(bots.SHIPPED_MODEL)
    states = _decisions(game, 8, seed=4)
    want = [guided.search(s, net, 80, seed=i, mix=0.5).visits for i, s in enumerate(states)]
    got = [None] * len(states)
    errors = []

    def work(k):
        try:  # each thread its own search, all of them over the same compiled network
            for i in range(k, len(states), 4):
                got[i] = guided.search(states[i], net, 80, seed=i, mix=0.5).visits
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_a_python_evaluator_runs_with_openblas_on_one_thread():
    blas = _blas._openblas()
    if blas is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS this process can reach")
    game = caribsim.load_game("puerto_rico", players=2)
    state = _decisions(game, 1)[0]
    seen = []

    def evaluator(obs, mask):
        seen.append(blas[0]())
        return guided.UniformEvaluator(2)(obs, mask)

    before = blas[0]()
    guided.search(state, evaluator, 10)
    assert seen and set(seen) == {1}
    assert blas[0]() == before
    with _blas.one_thread():  # blocks nest: the outer one restores
        with _blas.one_thread():
            assert blas[0]() == 1
        assert blas[0]() == 1
    assert blas[0]() == before


def test_the_bots_play_with_it():
    az = bots.parse_bot("az:20")
    assert az.search.network is not None and az.search.compiled
    off = bots.parse_bot("az:20:compiled=false")
    assert off.search.network is None and off.to_spec() == "az:20:compiled=false"
    state = _decisions(caribsim.load_game("puerto_rico", players=2), 3, seed=8)
    for s in state:
        az.restart(1)
        off.restart(1)
        assert az.step(s) == off.step(s)
