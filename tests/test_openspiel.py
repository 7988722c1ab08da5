"""OpenSpiel adapter (caribsim.openspiel, issue 8): every caribsim game registered as an
OpenSpiel Python game, checked with OpenSpiel's own random-simulation consistency test
(pyspiel.random_sim_test) and played in full by OpenSpiel's Python MCTSBot, for every game
and player count."""
from __future__ import annotations

import pickle

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import mcts

import caribsim
import caribsim.openspiel as cos

cos.register()


def _player_counts(name):
    counts = []
    for n in range(1, 11):
        try:
            caribsim.load_game(name, players=n)
        except (ValueError, TypeError):
            continue
        counts.append(n)
    return counts


CASES = [(name, p) for name in caribsim.games() for p in _player_counts(name)]
IDS = [f"{name}-{p}p" for name, p in CASES]


def test_register_lists_every_game_once():
    names = cos.register()
    assert names == [f"caribsim_{g}" for g in caribsim.games()]
    assert cos.register() == names  # idempotent
    registered = set(pyspiel.registered_names())
    assert set(names) <= registered


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_random_sim_test(name, players):
    game = pyspiel.load_game(f"caribsim_{name}", {"players": players})
    assert game.num_players() == players
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


STOCK = [(name, min(_player_counts(name))) for name in caribsim.games()]


@pytest.mark.parametrize("name,players,evaluator",
                         [(n, p, "stock") for n, p in STOCK] + [(n, p, "c") for n, p in CASES],
                         ids=[f"{n}-{p}p-stock" for n, p in STOCK] + [f"{i}-c" for i in IDS])
def test_mcts_bot_plays_full_games(name, players, evaluator):
    """OpenSpiel's Python MCTSBot takes every decision of a full game: with OpenSpiel's own
    RandomRolloutEvaluator (rollouts through pybind11, slow: the smallest player count), and
    with caribsim's CRolloutEvaluator (rollouts in C) at every player count."""
    game = pyspiel.load_game(f"caribsim_{name}", {"players": players})
    rs = np.random.RandomState(players)
    ev = mcts.RandomRolloutEvaluator(1, rs) if evaluator == "stock" else cos.CRolloutEvaluator(1, seed=players)
    bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=2 if evaluator == "stock" else 8,
                       evaluator=ev, random_state=rs, solve=False)
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rs.choice(actions, p=probs)))
        else:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            decisions += 1
    returns = state.returns()
    assert len(returns) == players and sum(returns) == pytest.approx(1.0)
    assert decisions > players  # a real game, not an immediate end
    # the wrapped caribsim state agrees
    assert state.inner.is_terminal() and list(state.inner.returns()) == returns


def test_game_parameters_and_info():
    game = pyspiel.load_game("caribsim_puerto_rico", {"players": 3, "all_colonists_and_vp": True})
    cg = game.caribsim_game
    assert cg.options()["players"] == 3 and cg.options()["all_colonists_and_vp"] is True
    assert game.num_distinct_actions() == cg.num_distinct_actions()
    assert game.max_chance_outcomes() >= max(a for a, _ in game.new_initial_state().chance_outcomes()) + 1
    assert game.observation_tensor_shape() == list(cg.observation_tensor_shape())
    gtype = game.get_type()
    assert gtype.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert gtype.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert (gtype.min_num_players, gtype.max_num_players) == (2, 5)
    with pytest.raises(Exception, match="players must be 2..5"):
        pyspiel.load_game("caribsim_puerto_rico", {"players": 7})


def test_state_mirrors_the_caribsim_state():
    game = pyspiel.load_game("caribsim_puerto_rico", {"players": 4})
    state = game.new_initial_state()
    mirror = caribsim.load_game("puerto_rico", players=4).new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(300):
        if state.is_terminal():
            break
        assert state.current_player() == (pyspiel.PlayerId.CHANCE if mirror.is_chance_node()
                                          else mirror.current_player())
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            assert outcomes == mirror.chance_outcomes()
            assert sum(p for _, p in outcomes) == pytest.approx(1.0)
            a = outcomes[rng.integers(len(outcomes))][0]
        else:
            assert state.legal_actions() == mirror.legal_actions()
            p = state.current_player()
            np.testing.assert_array_equal(state.observation_tensor(p), mirror.observation_tensor(p))
            a = int(rng.choice(state.legal_actions()))
            assert state.action_to_string(p, a) == mirror.action_to_string(a)
        state.apply_action(a)
        mirror.apply_action(a)
    clone = state.clone()
    assert clone.history() == state.history() == mirror.history()
    assert str(clone) == str(state) == str(mirror)
    restored = game.deserialize_state(state.serialize())
    assert str(restored) == str(state)
    assert str(pickle.loads(pickle.dumps(state))) == str(state)
