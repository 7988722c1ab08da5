"""Runs split into chunks on the local, processes and Ray backends (caribsim.distributed):
identical results on every backend, workers that die, interrupted runs resumed.

The Ray tests start one local Ray instance with 2 CPUs for the module. Ray is the optional
extra caribsim[ray]; without it they are skipped, except where CARIBSIM_REQUIRE_RAY=1 (CI)
makes a missing Ray an error.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
from extras import need

import caribsim
from caribsim import arena, bots, distributed, selfplay, simulation
from caribsim.__main__ import main

BACKENDS = ["local", "processes", "ray"]


@pytest.fixture(scope="module")
def ray_up():
    ray = need("ray")
    started = not ray.is_initialized()
    distributed.ray_connect(None, 2)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(params=BACKENDS)
def backend(request):
    if request.param == "ray":
        request.getfixturevalue("ray_up")
    return request.param


def _one_call(players=4, n=3000, seed=5):
    state = caribsim.load_game("puerto_rico", players=players).new_initial_state(seed=seed)
    return caribsim.random_playouts(state, n, seed=seed)


# --- chunks and the C driver -------------------------------------------------------


def test_random_playouts_first_game_gives_the_rows_of_one_call():
    whole = _one_call(n=400)
    state = caribsim.load_game("puerto_rico", players=4).new_initial_state(seed=5)
    part = caribsim.random_playouts(state, 150, seed=5, first_game=250)
    assert np.array_equal(part.returns, whole.returns[250:])
    assert np.array_equal(part.lengths, whole.lengths[250:])
    other = caribsim.random_playouts(state, 150, seed=5, first_game=249)
    assert not np.array_equal(other.lengths, whole.lengths[250:])


@pytest.mark.parametrize("first", [-1, 2**63])
def test_random_playouts_rejects_bad_first_game(first):
    state = caribsim.load_game("puerto_rico", players=3).new_initial_state()
    with pytest.raises(ValueError, match="first_game"):
        caribsim.random_playouts(state, 10, first_game=first)


def test_plan_chunks_covers_every_game_once():
    chunks = distributed.plan_chunks(1001, 250)
    assert [c.count for c in chunks] == [250, 250, 250, 250, 1]
    games = [g for c in chunks for g in range(c.first, c.first + c.count)]
    assert games == list(range(1001))
    assert [c.index for c in chunks] == list(range(5))


# --- determinism across backends ------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [None, 777])
def test_simulate_is_identical_on_every_backend(backend, chunk_size):
    ref = _one_call()
    kw = {} if backend == "local" else {"workers": 2}
    r = caribsim.simulate(
        "puerto_rico", 3000, players=4, seed=5, backend=backend, chunk_size=chunk_size, **kw
    )
    assert np.array_equal(r.returns, ref.returns)
    assert np.array_equal(r.scores, ref.scores)
    assert np.array_equal(r.lengths, ref.lengths)
    assert r.backend == backend and r.workers == (1 if backend == "local" else 2)
    size = chunk_size or distributed.default_chunk_size(
        3000, r.workers, minimum=simulation.PLAYOUT_CHUNK_MIN
    )
    assert r.chunks == -(-3000 // size) and r.resumed_chunks == 0
    assert r.decisions == int(ref.lengths.sum())
    s = r.summary()
    assert s["win_rate"] == pytest.approx(list(ref.returns.mean(axis=0)))


def test_simulate_other_games_and_bots_across_backends(backend):
    kw = {} if backend == "local" else {"backend": backend, "workers": 2}
    for name, players in (("port_royal", 2), ("cuba", 3)):
        state = caribsim.load_game(name, players=players).new_initial_state(seed=3)
        ref = caribsim.random_playouts(state, 600, seed=3)
        r = caribsim.simulate(name, 600, players=players, seed=3, chunk_size=200, **kw)
        assert np.array_equal(r.returns, ref.returns) and np.array_equal(r.lengths, ref.lengths)
    specs = ["greedy", "random", "mcts:20"]
    r = caribsim.simulate("puerto_rico", 5, players=3, seed=8, bots=specs, **kw)
    one = [
        arena.play_game(
            caribsim.load_game("puerto_rico", players=3),
            [bots.parse_bot(s) for s in specs],
            arena.derive_seed(8, g),
        )
        for g in range(5)
    ]
    assert r.returns.tolist() == [g["returns"] for g in one]
    assert r.scores.tolist() == [g["scores"] for g in one]
    assert r.lengths.tolist() == [g["length"] for g in one]
    assert r.bots == specs


def test_arena_is_identical_on_every_backend(backend):
    players = [bots.MCTSBot(iterations=30), bots.GreedyBot(), bots.RandomBot()]
    ref = arena.play_match("puerto_rico", players, 6, seed=4, players=3, chunk_size=6)
    kw = {"backend": backend, "chunk_size": 1}
    if backend != "local":
        kw["workers"] = 2
    r = arena.play_match("puerto_rico", players, 6, seed=4, players=3, **kw)
    assert r.games == ref.games
    assert [b.wins for b in r.bots] == [b.wins for b in ref.bots]
    assert r.backend == backend and r.chunks == 6 and ref.chunks == 1
    for b in r.bots:
        assert b.seat_games == [2, 2, 2]


def test_selfplay_is_identical_on_every_backend(backend, tmp_path):
    kw = {} if backend == "local" else {"backend": backend, "workers": 2}
    ref = selfplay.generate(
        "port_royal", "mcts:25", 3, tmp_path / "ref", players=2, seed=6, games_per_shard=3
    )
    m = selfplay.generate(
        "port_royal", "mcts:25", 3, tmp_path / "run", players=2, seed=6, games_per_shard=1, **kw
    )
    a, b = selfplay.load(tmp_path / "ref"), selfplay.load(tmp_path / "run")
    assert ref["decisions"] == m["decisions"] == len(a["player"]) > 0
    for k in selfplay.ARRAYS:
        assert np.array_equal(a[k], b[k]), k
    assert [s["games"] for s in m["shards"]] == [1, 1, 1]


# --- workers that die ------------------------------------------------------------------


@pytest.mark.parametrize("kill_backend", ["processes", "ray"])
def test_a_killed_worker_has_its_chunk_retried(kill_backend, tmp_path, monkeypatch, request):
    if kill_backend == "ray":
        request.getfixturevalue("ray_up")
    ref = _one_call()
    marker = tmp_path / "killed"
    monkeypatch.setenv(distributed.FAULT_ENV, f"2:{marker}")
    r = caribsim.simulate(
        "puerto_rico",
        3000,
        players=4,
        seed=5,
        backend=kill_backend,
        workers=2,
        chunk_size=500,
        resume=tmp_path / "chunks",
    )
    assert marker.exists()  # the worker running chunk 2 did die
    assert np.array_equal(r.returns, ref.returns) and np.array_equal(r.lengths, ref.lengths)
    assert r.chunks == 6 and r.resumed_chunks == 0
    assert sorted(os.listdir(tmp_path / "chunks")) == [f"chunk_{i:06d}.npz" for i in range(6)] + [
        "run.json"
    ]


def test_arena_survives_a_killed_worker(tmp_path, monkeypatch):
    players = [bots.GreedyBot(), bots.RandomBot()]
    ref = arena.play_match("port_royal", players, 8, seed=2, players=2)
    monkeypatch.setenv(distributed.FAULT_ENV, f"1:{tmp_path / 'killed'}")
    r = arena.play_match(
        "port_royal", players, 8, seed=2, players=2, backend="processes", workers=2, chunk_size=2
    )
    assert (tmp_path / "killed").exists()
    assert r.games == ref.games


def test_workers_that_keep_dying_give_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(distributed.FAULT_ENV, f"0:{tmp_path / 'killed'}")
    with pytest.raises(RuntimeError, match=r"died 1 times.*retries=0"):
        caribsim.simulate(
            "puerto_rico",
            2000,
            players=3,
            backend="processes",
            workers=2,
            chunk_size=1000,
            retries=0,
        )


# --- interrupted runs resumed -----------------------------------------------------------


class _Interrupt:
    """A progress callback that stops the run like Ctrl-C once ``after`` games are done."""

    def __init__(self, after):
        self.after = after

    def __call__(self, done, total):
        if done >= self.after:
            raise KeyboardInterrupt


@pytest.mark.parametrize("resume_backend", ["local", "processes"])
def test_an_interrupted_run_resumes_from_its_finished_chunks(resume_backend, tmp_path):
    ref = _one_call()
    folder = tmp_path / "run"
    kw = {"players": 4, "seed": 5, "chunk_size": 500, "resume": folder, "backend": resume_backend}
    with pytest.raises(KeyboardInterrupt):
        caribsim.simulate("puerto_rico", 3000, progress=_Interrupt(1000), **kw)
    saved = sorted(n for n in os.listdir(folder) if n.endswith(".npz"))
    assert 2 <= len(saved) < 6
    seen = []
    r = caribsim.simulate("puerto_rico", 3000, progress=lambda d, t: seen.append(d), **kw)
    assert r.resumed_chunks == len(saved) and r.chunks == 6 - len(saved)
    assert seen[-1] == 3000 and len(seen) == 6
    assert np.array_equal(r.returns, ref.returns) and np.array_equal(r.scores, ref.scores)
    again = caribsim.simulate("puerto_rico", 3000, **kw)  # everything on disk: nothing runs
    assert again.chunks == 0 and again.resumed_chunks == 6
    assert np.array_equal(again.lengths, ref.lengths)


def test_resume_refuses_a_folder_of_another_run(tmp_path):
    caribsim.simulate("puerto_rico", 600, players=3, seed=1, chunk_size=300, resume=tmp_path)
    with pytest.raises(ValueError, match=r"another run.*seed"):
        caribsim.simulate("puerto_rico", 600, players=3, seed=2, chunk_size=300, resume=tmp_path)
    with pytest.raises(ValueError, match="chunk_size"):
        caribsim.simulate("puerto_rico", 600, players=3, seed=1, chunk_size=200, resume=tmp_path)
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "chunk_000000.npz").write_bytes(b"")
    with pytest.raises(ValueError, match=r"no run\.json"):
        caribsim.simulate("puerto_rico", 600, players=3, resume=stray)


def test_arena_resume(tmp_path):
    players = [bots.GreedyBot(), bots.RandomBot(), bots.RandomBot()]
    ref = arena.play_match("puerto_rico", players, 6, seed=3, players=3)
    with pytest.raises(KeyboardInterrupt):
        arena.play_match(
            "puerto_rico",
            players,
            6,
            seed=3,
            players=3,
            chunk_size=2,
            resume=tmp_path,
            progress=_Interrupt(2),
        )
    r = arena.play_match(
        "puerto_rico", players, 6, seed=3, players=3, chunk_size=2, resume=tmp_path
    )
    assert r.resumed_chunks == 1 and r.chunks == 2
    assert r.games == ref.games


def test_selfplay_resumes_in_its_output_folder(tmp_path):
    ref = selfplay.generate(
        "puerto_rico", "mcts:20", 4, tmp_path / "ref", players=2, seed=1, games_per_shard=2
    )
    with pytest.raises(KeyboardInterrupt):
        selfplay.generate(
            "puerto_rico",
            "mcts:20",
            4,
            tmp_path / "run",
            players=2,
            seed=1,
            games_per_shard=1,
            progress=_Interrupt(1),
        )
    assert not (tmp_path / "run" / "manifest.json").exists()
    m = selfplay.generate(
        "puerto_rico", "mcts:20", 4, tmp_path / "run", players=2, seed=1, games_per_shard=1
    )
    assert m["decisions"] == ref["decisions"]
    a, b = selfplay.load(tmp_path / "ref"), selfplay.load(tmp_path / "run")
    assert all(np.array_equal(a[k], b[k]) for k in selfplay.ARRAYS)
    with pytest.raises(ValueError, match="another run"):
        selfplay.generate(
            "puerto_rico", "mcts:30", 4, tmp_path / "run", players=2, seed=1, games_per_shard=1
        )


# --- self-play data ----------------------------------------------------------------------


def test_selfplay_rows_are_the_games_decisions(tmp_path):
    game = caribsim.load_game("puerto_rico", players=3)
    m = selfplay.generate("puerto_rico", "mcts:30", 2, tmp_path, players=3, seed=11)
    data = selfplay.load(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest == json.loads(json.dumps(m))
    assert (
        manifest["format"] == "caribsim-selfplay"
        and manifest["num_actions"] == game.num_distinct_actions()
    )
    n = m["decisions"]
    assert data["observation"].shape == (n, *game.observation_tensor_shape())
    assert data["policy"].shape == data["legal_mask"].shape == (n, game.num_distinct_actions())
    assert np.allclose(data["policy"].sum(axis=1), 1.0)
    assert not (data["policy"] * (1 - data["legal_mask"])).any()  # visits only on legal moves
    assert (data["legal_mask"].sum(axis=1) > 1).all()  # forced moves left out
    assert np.array_equal(data["value"], data["returns"][np.arange(n), data["player"]])
    assert set(np.unique(data["game"])) == {0, 1}
    # replay game 0 with the same seeds: the rows are the positions the bots saw
    seats = [bots.MCTSBot(iterations=30) for _ in range(3)]
    for s, b in enumerate(seats):
        b.restart(arena.derive_seed(11, 0, s))
    state = game.new_initial_state(seed=arena.derive_seed(11, 0))
    row, move = 0, 0
    while not state.is_terminal() and row < 25:
        if state.is_chance_node():
            state.resolve_chance()
            continue
        p = state.current_player()
        forced = len(state.legal_actions()) == 1
        action = seats[p].step(state)
        if not forced:
            assert data["move"][row] == move and data["player"][row] == p
            assert np.array_equal(data["observation"][row], state.observation_tensor(p))
            assert data["policy"][row][action] == data["policy"][row].max()  # the most visited move
            row += 1
        state.apply_action(action)
        move += 1


def test_selfplay_include_forced_adds_one_hot_rows(tmp_path):
    a = selfplay.generate("puerto_rico", "mcts:10", 1, tmp_path / "a", players=2, seed=3)
    b = selfplay.generate(
        "puerto_rico", "mcts:10", 1, tmp_path / "b", players=2, seed=3, include_forced=True
    )
    assert b["decisions"] > a["decisions"]
    data = selfplay.load(tmp_path / "b")
    forced = data["legal_mask"].sum(axis=1) == 1
    assert forced.sum() == b["decisions"] - a["decisions"]
    assert np.array_equal(data["policy"][forced], data["legal_mask"][forced].astype(np.float32))


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"backend": "gpu"}, ValueError, "backend must be one of local, processes, ray"),
        ({"backend": "processes", "workers": 0}, ValueError, "workers must be >= 1"),
        ({"backend": "processes", "workers": 1.5}, TypeError, "workers must be an int"),
        ({"backend": "processes", "address": "auto"}, ValueError, "address= is for backend='ray'"),
        ({"chunk_size": 0}, ValueError, "chunk_size must be >= 1"),
        ({"retries": -1}, ValueError, "retries must be an int >= 0"),
        ({"threads": 0}, ValueError, "threads must be in 1"),
        ({"seed": -1}, ValueError, "seed must be in 0"),
        ({"bots": ["random"]}, ValueError, "3 seats; got 1 bots"),
        ({"bots": ["alpha"]}, ValueError, "unknown bot spec"),
    ],
)
def test_simulate_rejects_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        caribsim.simulate("puerto_rico", 10, players=3, **kwargs)


def test_simulate_rejects_bad_game_arguments():
    with pytest.raises(ValueError, match="unknown game"):
        caribsim.simulate("monopoly", 10)
    with pytest.raises(TypeError, match="game must be a game name"):
        caribsim.simulate(object(), 10)
    with pytest.raises(ValueError, match="only accepted with a game name"):
        caribsim.simulate(caribsim.load_game("cuba"), 10, players=3)
    with pytest.raises(ValueError, match="n_games must be >= 1"):
        caribsim.simulate("cuba", 0)


def test_selfplay_rejects_bad_bots_and_folders(tmp_path):
    with pytest.raises(TypeError, match="needs an MCTS bot"):
        selfplay.generate("puerto_rico", "random", 2, tmp_path / "x")
    with pytest.raises(ValueError, match="iteration budget"):
        selfplay.generate("puerto_rico", bots.MCTSBot(seconds=0.01), 2, tmp_path / "y")
    with pytest.raises(ValueError, match="games_per_shard"):
        selfplay.generate("puerto_rico", "mcts:10", 2, tmp_path / "z", games_per_shard=0)
    with pytest.raises(ValueError, match="not a caribsim-selfplay manifest"):
        (tmp_path / "w").mkdir()
        (tmp_path / "w" / "manifest.json").write_text('{"format": "other"}')
        selfplay.load(tmp_path / "w")


def test_ray_backend_without_ray_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails
    with pytest.raises(RuntimeError, match=r"pip install 'caribsim\[ray\]'"):
        caribsim.simulate("puerto_rico", 10, players=3, backend="ray")


# --- command line -------------------------------------------------------------------------


def test_cli_simulate_backend_and_resume(tmp_path, capsys):
    ref = _one_call()
    with pytest.raises(KeyboardInterrupt):
        caribsim.simulate(
            "puerto_rico",
            3000,
            players=4,
            seed=5,
            chunk_size=500,
            resume=tmp_path,
            progress=_Interrupt(500),
        )
    assert (
        main(
            [
                "simulate",
                "puerto_rico",
                "-p",
                "4",
                "--games",
                "3000",
                "--seed",
                "5",
                "--chunk-size",
                "500",
                "--resume",
                str(tmp_path),
                "--backend",
                "processes",
                "--workers",
                "2",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["backend"] == "processes" and out["workers"] == 2
    assert out["resumed_chunks"] >= 1 and out["resumed_chunks"] + out["chunks"] == 6
    assert out["mean_score"] == pytest.approx(list(ref.scores.mean(axis=0)))
    assert (
        main(
            [
                "simulate",
                "puerto_rico",
                "-p",
                "4",
                "--games",
                "3000",
                "--backend",
                "processes",
                "-w",
                "2",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "processes, 2 workers" in text and "games/s" in text


def test_cli_arena_and_selfplay_on_ray(ray_up, tmp_path, capsys):
    assert (
        main(
            [
                "arena",
                "port_royal",
                "--bots",
                "greedy,random",
                "--games",
                "4",
                "--seed",
                "1",
                "--backend",
                "ray",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    ref = arena.play_match("port_royal", [bots.GreedyBot(), bots.RandomBot()], 4, seed=1, players=2)
    assert out["backend"] == "ray" and out["workers"] == 2
    assert out["games"] == json.loads(ref.to_json())["games"]
    assert (
        main(
            [
                "selfplay",
                "port_royal",
                "-p",
                "2",
                "--bot",
                "mcts:10",
                "--games",
                "2",
                "--out",
                str(tmp_path),
                "--backend",
                "ray",
            ]
        )
        == 0
    )
    assert "2 games" in capsys.readouterr().out and (tmp_path / "manifest.json").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["simulate", "cuba", "--backend", "gpu"], "invalid choice: 'gpu'"),
        (["simulate", "cuba", "--workers", "0"], "workers must be an integer in 1..1024, got 0"),
        (["simulate", "cuba", "--address", "auto"], "address= is for backend='ray'"),
        (
            [
                "arena",
                "cuba",
                "--bots",
                "random,random,random,random",
                "-j",
                "2",
                "--backend",
                "ray",
            ],
            "--processes K is --backend processes",
        ),
        (["selfplay", "cuba", "--out", "x", "--bot", "random"], "needs an MCTS bot"),
        (["selfplay", "cuba", "--out", "x", "--resume", "y"], "--out is already resumable"),
    ],
)
def test_cli_rejects_bad_backend_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


class _Stalling:
    """A legal bot that never ends Port Royal: it takes nothing and passes whenever it can."""

    name = "stalling"

    def restart(self, seed):
        pass

    def step(self, state):
        legal = state.legal_actions()
        names = [state.action_to_string(a) for a in legal]
        for a, name in zip(legal, names):
            if name.startswith(("pass", "stop", "decline", "end")):
                return a
        return legal[0]


def test_a_game_of_stalling_bots_stops_with_a_clear_error(monkeypatch):
    """Port Royal has no bound on a game's length: a match of bots that never end it stops
    at MAX_DECISIONS with an error naming the game, instead of running for ever."""
    from caribsim.scale import arena

    monkeypatch.setattr(arena, "MAX_DECISIONS", 3000)
    game = caribsim.load_game("port_royal", players=2)
    with pytest.raises(
        RuntimeError, match=r"seed 7 has not ended after 3,000 decisions: the bots are stalling"
    ):
        arena.play_game(game, [_Stalling(), _Stalling()], seed=7)
    # ordinary games are far below the limit
    r = arena.play_game(game, [caribsim.bots.RandomBot(), caribsim.bots.RandomBot()], seed=7)
    assert 0 < r["length"] < 3000
