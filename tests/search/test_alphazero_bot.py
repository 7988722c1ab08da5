"""AlphaZeroBot: a guided search (caribsim.search.guided) as a bot, and its spec strings."""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest

import caribsim
from caribsim import arena
from caribsim.search import bots, guided
from caribsim.search.evaluators import MLPEvaluator

GAMES = ("puerto_rico", "port_royal", "cuba")


def _decision(game, seed=1, skip=0):
    """A decision node with more than one legal move, after ``skip`` random moves."""
    state = game.new_initial_state(seed=seed)
    rng = random.Random(seed)
    while True:
        while state.is_chance_node():
            state.resolve_chance()
        if len(state.legal_actions()) > 1:
            if skip == 0:
                return state
            skip -= 1
        state.apply_action(rng.choice(state.legal_actions()))


def _play(game, bots_by_seat, seed, max_moves=None):
    """A whole game (or its first ``max_moves`` decisions); every move checked legal.
    Returns the actions chosen."""
    for s, b in enumerate(bots_by_seat):
        b.restart(seed + s)
    state = game.new_initial_state(seed=seed)
    moves = []
    while not state.is_terminal() and (max_moves is None or len(moves) < max_moves):
        if state.is_chance_node():
            state.resolve_chance()
            continue
        legal = state.legal_actions()
        a = bots_by_seat[state.current_player()].step(state)
        assert a in legal, (a, legal)
        moves.append(a)
        state.apply_action(a)
    return moves


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("kind", ["puct", "gumbel", "uniform"])
def test_the_bot_plays_only_legal_moves_to_the_end(name, kind):
    game = caribsim.load_game(name)
    n = game.num_players()
    if kind == "uniform":  # an uninformed search need not end a game (Port Royal): 400 moves
        seats = [
            bots.AlphaZeroBot(guided.UniformEvaluator(n), 6, leaves_per_tree=3) for _ in range(n)
        ]
        moves = _play(game, seats, seed=3, max_moves=400)
    else:
        seats = [bots.parse_bot(f"{kind}:6") for _ in range(n)]
        moves = _play(game, seats, seed=3, max_moves=5000)
        assert len(moves) < 5000  # the game ended
    assert len(moves) > 10
    assert any(b.last_result is not None for b in seats)


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("gumbel", [False, True])
def test_last_result_is_the_guided_search_with_the_drawn_seed(name, gumbel):
    game = caribsim.load_game(name)
    state = _decision(game, seed=4, skip=3)
    ev = guided.RolloutEvaluator()
    bot = bots.AlphaZeroBot(ev, 40, gumbel=gumbel, seed=9, c_puct=1.5)
    action = bot.step(state)
    seed = random.Random(9).getrandbits(64)
    ref = guided.search(state, ev, 40, gumbel=gumbel, seed=seed, c_puct=1.5, leaves_per_tree=1)
    r = bot.last_result
    assert action == r.action == ref.action
    assert np.array_equal(r.policy, ref.policy) and np.array_equal(r.visits, ref.visits)
    assert r.policy.sum() == pytest.approx(1.0)
    legal = state.legal_actions()
    assert set(np.flatnonzero(r.policy)) <= set(legal)
    # a second step draws the next seed of the bot's RNG
    rng = random.Random(9)
    rng.getrandbits(64)
    bot.step(state)
    ref2 = guided.search(state, ev, 40, gumbel=gumbel, seed=rng.getrandbits(64), c_puct=1.5)
    assert np.array_equal(bot.last_result.visits, ref2.visits)


def test_a_forced_move_is_played_without_search():
    game = caribsim.load_game("puerto_rico", players=3)
    state = game.new_initial_state(seed=1)
    rng = random.Random(0)
    while True:
        while state.is_chance_node():
            state.resolve_chance()
        if len(state.legal_actions()) == 1:
            break
        state.apply_action(rng.choice(state.legal_actions()))
    bot = bots.parse_bot("puct:10")
    assert bot.step(state) == state.legal_actions()[0] and bot.last_result is None
    assert bot.rng.getstate() == random.Random(0).getstate()  # no seed drawn


@pytest.mark.parametrize("name", GAMES)
def test_the_same_seed_plays_the_same_game(name):
    game = caribsim.load_game(name)
    n = game.num_players()

    def seats(spec):
        return [bots.parse_bot(spec) for _ in range(n)]

    a = _play(game, seats("puct:8:temperature=1"), seed=5)
    b = _play(game, seats("puct:8:temperature=1"), seed=5)
    assert a == b
    again = seats("puct:8:temperature=1")
    _play(game, again, seed=11)
    assert _play(game, again, seed=5) == a  # restart() forgets the previous game
    assert _play(game, seats("puct:8:temperature=1"), seed=6) != a


@pytest.mark.parametrize(
    "spec, options, text",
    [
        ("puct:50", {"simulations": 50, "gumbel": False, "leaves_per_tree": 1}, "puct:50"),
        ("gumbel:30", {"simulations": 30, "gumbel": True, "leaves_per_tree": 1}, "gumbel:30"),
        (
            "PUCT:20:c_puct=2:temperature=0.5:leaves_per_tree=4",
            {
                "simulations": 20,
                "gumbel": False,
                "leaves_per_tree": 4,
                "c_puct": 2.0,
                "temperature": 0.5,
            },
            "puct:20:leaves_per_tree=4:c_puct=2.0:temperature=0.5",
        ),
        (
            "gumbel:simulations=12:max_considered=4:rollouts=3",
            {"simulations": 12, "gumbel": True, "leaves_per_tree": 1, "max_considered": 4},
            "gumbel:12:rollouts=3:max_considered=4",
        ),
        ("puct", {"simulations": 200, "gumbel": False, "leaves_per_tree": 1}, "puct:200"),
        (
            "puct:9:dirichlet_alpha=0.3:interior=gumbel",
            {
                "simulations": 9,
                "gumbel": False,
                "leaves_per_tree": 1,
                "dirichlet_alpha": 0.3,
                "interior": "gumbel",
            },
            "puct:9:dirichlet_alpha=0.3:interior=gumbel",
        ),
    ],
)
def test_guided_specs_round_trip(spec, options, text):
    bot = bots.parse_bot(spec)
    assert isinstance(bot, bots.AlphaZeroBot)
    assert bot.options == options
    assert isinstance(bot.evaluator, guided.RolloutEvaluator)
    assert bot.to_spec() == text
    again = bots.parse_bot(bot.to_spec())
    assert again.options == bot.options and repr(again) == repr(bot)
    assert again.evaluator.rollouts == bot.evaluator.rollouts


def test_a_model_file_spec_loads_the_mlp(tmp_path):
    game = caribsim.load_game("puerto_rico", players=3)
    net = MLPEvaluator.for_game(game, hidden=(16,), seed=3)
    path = str(tmp_path / "net.npz")
    net.save(path)
    bot = bots.parse_bot(f"alphazero:12:model={path}:gumbel=true:c_scale=0.2")
    assert isinstance(bot.evaluator, MLPEvaluator) and bot.model == path
    assert bot.options == {"simulations": 12, "gumbel": True, "leaves_per_tree": 1, "c_scale": 0.2}
    assert np.array_equal(bot.evaluator.parameters()["w0"], net.parameters()["w0"])
    assert path in repr(bot)
    assert bot.to_spec() == f"alphazero:12:model={path}:gumbel=true:c_scale=0.2"
    assert bots.parse_bot(bot.to_spec()).options == bot.options
    puct = bots.parse_bot(f"puct:7:model={path}")
    assert isinstance(puct.evaluator, MLPEvaluator) and puct.options["gumbel"] is False
    assert bots.AlphaZeroBot(path, 5).model == path  # a path as the evaluator
    state = _decision(game)
    assert bot.step(state) in state.legal_actions()
    assert (
        bot.describe()["weights_sha256"] == bots.AlphaZeroBot(net, 12).describe()["weights_sha256"]
    )
    other = MLPEvaluator.for_game(game, hidden=(16,), seed=4)
    assert (
        bots.AlphaZeroBot(other, 12).describe()["weights_sha256"]
        != bot.describe()["weights_sha256"]
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        ("alphazero:10", "alphazero: needs the MLP file"),
        ("puct:10:gumbel=true", "gumbel= is an option of alphazero: specs only"),
        ("gumbel:10:gumbel=false", "already says whether the root is Gumbel"),
        ("puct:10:foo=1", "unknown option 'foo'"),
        ("puct:10:c_puct=2:c_puct=3", "option 'c_puct' is given twice"),
        ("puct:10:simulations=5", "option 'simulations' is given twice"),
        ("puct:0", "simulations must be in 1.."),
        ("puct:ten", "simulations must be int, got 'ten'"),
        ("puct:10:c_puct=-1", "c_puct must be a finite number >= 0"),
        ("puct:10:temperature=nan", "temperature must be a finite number"),
        ("gumbel:10:temperature=1", "temperature applies to the PUCT root only"),
        ("gumbel:10:dirichlet_alpha=0.3", "dirichlet_alpha applies to the PUCT root only"),
        ("puct:10:interior=best", "interior must be one of"),
        ("puct:10:rollouts=0", "rollouts must be in 1.."),
        ("puct:10:5", "expected key=value, got '5'"),
        ("alphazero:10:model=/no/such/net.npz", "no such file"),
        ("alphazero:10:model=", "model= needs a file name"),
        ("alphazero:10:model=x.npz:rollouts=2", "rollouts= sets the C rollout evaluator"),
        ("alphazero:10:gumbel=maybe", "gumbel must be bool"),
        ("azero:10", "use random, greedy, mcts:ITERATIONS"),
    ],
)
def test_bad_guided_specs_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=_re(message)):
        bots.parse_bot(spec)


def _re(text):
    import re

    return re.escape(text)


def test_the_unknown_spec_error_lists_every_kind():
    with pytest.raises(ValueError) as e:
        bots.parse_bot("nope")
    for kind in (
        "random",
        "greedy",
        "mcts:ITERATIONS",
        "puct:SIMULATIONS",
        "gumbel:SIMULATIONS",
        "alphazero:SIMULATIONS:model=FILE.npz",
    ):
        assert kind in str(e.value)


def test_bad_options_of_the_class_raise_clear_errors():
    ev = guided.RolloutEvaluator()
    with pytest.raises(TypeError, match="unknown option 'iterations'"):
        bots.AlphaZeroBot(ev, 10, iterations=5)
    with pytest.raises(TypeError, match="unknown option 'seeds'"):
        bots.AlphaZeroBot(ev, 10, seeds=[1])
    with pytest.raises(TypeError, match="evaluator must be callable"):
        bots.AlphaZeroBot(42, 10)
    with pytest.raises(ValueError, match="simulations must be in"):
        bots.AlphaZeroBot(ev, 0)
    with pytest.raises(TypeError, match="gumbel must be True or False"):
        bots.AlphaZeroBot(ev, 10, gumbel="yes")
    with pytest.raises(ValueError, match="seed must be in"):
        bots.AlphaZeroBot(ev, 10, seed=-1)
    with pytest.raises(ValueError, match="no such file"):
        bots.AlphaZeroBot("/no/such/file.npz", 10)
    with pytest.raises(ValueError, match="no bot spec names the evaluator"):
        bots.AlphaZeroBot(guided.UniformEvaluator(3), 10).to_spec()
    bot = bots.parse_bot("puct:5")
    state = caribsim.load_game("cuba").new_initial_state(seed=1)
    if state.is_chance_node():
        with pytest.raises(ValueError, match="chance"):
            bot.step(state)
    with pytest.raises(TypeError):
        bot.step("not a state")


def test_an_mlp_of_another_game_is_refused_at_the_first_search():
    pr = caribsim.load_game("puerto_rico", players=3)
    bot = bots.AlphaZeroBot(MLPEvaluator.for_game(pr, hidden=(8,)), 5)
    state = _decision(caribsim.load_game("cuba"))
    with pytest.raises(ValueError, match="obs must have O"):
        bot.step(state)


@pytest.mark.parametrize("make", ["puct", "mlp", "uniform"])
def test_copies_and_pickles_are_fresh_bots_with_the_same_options(make):
    game = caribsim.load_game("puerto_rico", players=3)
    if make == "puct":
        bot = bots.parse_bot("puct:12:c_puct=2")
    elif make == "mlp":
        bot = bots.AlphaZeroBot(MLPEvaluator.for_game(game, hidden=(16,), seed=1), 12, gumbel=True)
    else:
        bot = bots.AlphaZeroBot(guided.UniformEvaluator(3), 12, leaves_per_tree=4)
    bot.restart(7)
    state = _decision(game, skip=2)
    for other in (copy.copy(bot), copy.deepcopy(bot), pickle.loads(pickle.dumps(bot))):
        assert type(other) is bots.AlphaZeroBot and other is not bot
        assert repr(other) == repr(bot) and other.options == bot.options
        assert other.seed == 7 and other.last_result is None
        assert other.search is not bot.search
        other.restart(3)
        a = other.step(state)
        bot.restart(3)
        assert bot.step(state) == a
        assert np.array_equal(bot.last_result.policy, other.last_result.policy)
    assert pickle.loads(pickle.dumps(guided.RolloutEvaluator(4))).rollouts == 4


def test_the_model_path_survives_a_pickle(tmp_path):
    net = MLPEvaluator.for_game(caribsim.load_game("cuba"), hidden=(8,))
    path = str(tmp_path / "cuba.npz")
    net.save(path)
    bot = bots.parse_bot(f"gumbel:4:model={path}")
    other = pickle.loads(pickle.dumps(bot))
    assert other.model == path and other.to_spec() == bot.to_spec()


def test_the_arena_plays_it_on_processes_as_locally():
    seats = [bots.parse_bot("puct:8"), bots.RandomBot(), bots.parse_bot("gumbel:8")]
    local = arena.play_match("puerto_rico", seats, 6, seed=2, players=3, progress=False)
    procs = arena.play_match(
        "puerto_rico",
        seats,
        6,
        seed=2,
        players=3,
        progress=False,
        backend="processes",
        workers=2,
        chunk_size=2,
    )
    assert procs.backend == "processes"
    assert [g["returns"] for g in procs.games] == [g["returns"] for g in local.games]
    assert [b.wins for b in procs.bots] == [b.wins for b in local.bots]
    assert arena.bot_label(seats[0]).startswith("AlphaZeroBot(RolloutEvaluator")


def test_the_play_session_takes_it_as_an_opponent():
    from caribsim.human import play

    game = caribsim.load_game("puerto_rico", players=3)
    session = play.Session(game, 1, [bots.parse_bot("puct:4"), bots.parse_bot("gumbel:4")], seed=2)
    said = []
    while True:
        session.advance(lambda text, kind=None: said.append(text))
        if session.state.is_terminal():
            break
        session.state.apply_action(session.state.legal_actions()[0])  # the person's move
    assert any(
        "(puct:4)" in line for line in said if line.startswith("seat 0")
    )  # the bot's one name
    assert any("(gumbel:4)" in line for line in said if line.startswith("seat 2"))


# --- az: the network shipped with the package ------------------------------------------------


def test_the_shipped_network_fits_its_card_and_is_small():
    card = bots.shipped_card()
    game = caribsim.load_game(card["game"], **card["options"])
    net = MLPEvaluator.load(bots.SHIPPED_MODEL)
    assert (net.obs_size, net.num_actions, net.num_players) == (
        game.observation_tensor_shape()[0],
        game.num_distinct_actions(),
        game.num_players(),
    )
    import os

    assert os.path.getsize(bots.SHIPPED_MODEL) <= 5 * 2**20
    assert set(card["search"]) <= {"simulations", "mix", "gumbel", *bots._GUIDED_OPTIONS}


def test_az_is_the_shipped_network_played_as_its_card_says():
    card = bots.shipped_card()
    bot = bots.parse_bot("az")
    assert isinstance(bot, bots.AlphaZeroBot) and isinstance(bot.evaluator, MLPEvaluator)
    assert bot.model == bots.SHIPPED_MODEL and bot.card == card
    assert bot.options["simulations"] == card["search"]["simulations"]
    assert bot.options["mix"] == card["search"]["mix"]
    assert bot.name == f"az:{card['search']['simulations']}"
    again = bots.parse_bot(bot.name)
    assert again.options == bot.options and again.name == bot.name
    other = bots.parse_bot("az:12:mix=0.25:c_puct=2")
    assert other.options["simulations"] == 12 and other.options["mix"] == 0.25
    assert other.name == "az:12:c_puct=2.0:mix=0.25"
    assert bots.parse_bot(other.name).options == other.options
    copied = pickle.loads(pickle.dumps(other))
    assert copied.name == other.name and copied.card == card
    game = caribsim.load_game(card["game"], **card["options"])
    state = _decision(game, seed=4)
    assert other.step(state) in state.legal_actions()
    assert other.last_result.simulations == 12


@pytest.mark.parametrize(
    "spec, message",
    [
        ("az:0", "simulations must be in 1.."),
        ("az:10:model=x.npz", "az is the shipped network; model= does not apply"),
        ("az:10:rollouts=2", "az is the shipped network; rollouts= does not apply"),
        ("az:10:mix=2", "mix must be a finite number >= 0.0 and <= 1.0, got 2.0"),
        ("az:10:foo=1", "unknown option 'foo'"),
    ],
)
def test_bad_az_specs_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=_re(message)):
        bots.parse_bot(spec)


@pytest.mark.parametrize(
    "game, options",
    [
        ("puerto_rico", {"players": 3}),
        ("cuba", {"players": 2}),
        ("puerto_rico", {"players": 2, "expansion": True}),
        ("puerto_rico", {"players": 2, "all_colonists_and_vp": True}),
    ],
)
def test_az_refuses_another_game_before_the_first_move(game, options):
    g = caribsim.load_game(game, **options)
    bot = bots.parse_bot("az:5")
    with pytest.raises(ValueError, match="az is the network trained for puerto_rico"):
        bot.check_game(g)
    with pytest.raises(ValueError, match="az is the network trained for puerto_rico"):
        arena.play_match(g, [bot] + [bots.RandomBot() for _ in range(g.num_players() - 1)], 1)
    bot.check_game(caribsim.load_game("puerto_rico", players=2))  # its own game is fine


def test_an_mlp_file_of_other_sizes_is_refused_by_check_game(tmp_path):
    pr3 = caribsim.load_game("puerto_rico", players=3)
    path = str(tmp_path / "net3.npz")
    MLPEvaluator.for_game(pr3, hidden=(8,)).save(path)
    bot = bots.parse_bot(f"alphazero:5:model={path}")
    bot.check_game(pr3)
    with pytest.raises(
        ValueError, match=r"the network takes \d+ observation numbers, 143 actions and 3 seats"
    ):
        bot.check_game(caribsim.load_game("puerto_rico", players=2))
    bots.RandomBot().check_game(pr3)  # bots without a network take any game


def test_play_with_az_on_another_game_is_one_error_line():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "caribsim", "play", "cuba", "--bots", "az"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert (
        "az is the network trained for puerto_rico" in lines[-1] and "Traceback" not in out.stderr
    )
