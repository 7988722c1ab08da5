"""OpenSpiel adapter (caribsim.openspiel): every caribsim game registered as an OpenSpiel
Python game, checked with OpenSpiel's own random-simulation consistency test
(pyspiel.random_sim_test), played in full by OpenSpiel's Python MCTSBot and ISMCTSBot, and
its information states (caribsim.infostate) checked against the hidden facts of each game;
every option of every game as a parameter; the information-state tensor's room for every
event of a game. (The observers of every IIGObservationType: test_openspiel_observers.py.)"""

from __future__ import annotations

import inspect
import pickle
from importlib import resources

import numpy as np
import pytest
from extras import need

pyspiel = need("openspiel")
from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts
from open_spiel.python.observation import make_observation

import caribsim
import caribsim.openspiel as cos
import caribsim.puerto_rico.game

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


@pytest.mark.parametrize(
    "name,players,evaluator",
    [(n, p, "stock") for n, p in STOCK] + [(n, p, "c") for n, p in CASES],
    ids=[f"{n}-{p}p-stock" for n, p in STOCK] + [f"{i}-c" for i in IDS],
)
def test_mcts_bot_plays_full_games(name, players, evaluator):
    """OpenSpiel's Python MCTSBot takes every decision of a full game: with OpenSpiel's own
    RandomRolloutEvaluator (rollouts through pybind11, slow: the smallest player count), and
    with caribsim's CRolloutEvaluator (rollouts in C) at every player count."""
    game = pyspiel.load_game(f"caribsim_{name}", {"players": players})
    rs = np.random.RandomState(players)
    ev = (
        mcts.RandomRolloutEvaluator(1, rs)
        if evaluator == "stock"
        else cos.CRolloutEvaluator(1, seed=players)
    )
    bot = mcts.MCTSBot(
        game,
        uct_c=2.0,
        max_simulations=2 if evaluator == "stock" else 8,
        evaluator=ev,
        random_state=rs,
        solve=False,
    )
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
    assert (
        game.max_chance_outcomes()
        >= max(a for a, _ in game.new_initial_state().chance_outcomes()) + 1
    )
    assert game.observation_tensor_shape() == list(cg.observation_tensor_shape())
    gtype = game.get_type()
    assert gtype.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert gtype.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert gtype.utility == pyspiel.GameType.Utility.CONSTANT_SUM and game.utility_sum() == 1.0
    assert (game.min_utility(), game.max_utility()) == (0.0, 1.0)
    assert gtype.provides_information_state_string and gtype.provides_information_state_tensor
    assert game.max_game_length() == cos.MAX_GAME_LENGTH
    assert (gtype.min_num_players, gtype.max_num_players) == (2, 5)
    with pytest.raises(Exception, match=r"players must be 2\.\.5"):
        pyspiel.load_game("caribsim_puerto_rico", {"players": 7})


def test_state_mirrors_the_caribsim_state():
    game = pyspiel.load_game("caribsim_puerto_rico", {"players": 4})
    state = game.new_initial_state()
    mirror = caribsim.load_game("puerto_rico", players=4).new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(300):
        if state.is_terminal():
            break
        assert state.current_player() == (
            pyspiel.PlayerId.CHANCE if mirror.is_chance_node() else mirror.current_player()
        )
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
    for copy in (clone, restored, pickle.loads(pickle.dumps(state))):
        assert copy.information_state_string(1) == state.information_state_string(1)
        np.testing.assert_array_equal(
            copy.information_state_tensor(1), state.information_state_tensor(1)
        )


def _random_walk(state, rng, steps):
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize("name", caribsim.games())
def test_returns_are_constant_sum(name):
    """The declared CONSTANT_SUM with utility_sum 1: random games in C (all player counts)."""
    for players in _player_counts(name):
        game = pyspiel.load_game(f"caribsim_{name}", {"players": players})
        result = caribsim.random_playouts(
            game.caribsim_game.new_initial_state(seed=0), 300, seed=players
        )
        np.testing.assert_allclose(result.returns.sum(axis=1), game.utility_sum())
        assert (
            result.returns.min() >= game.min_utility()
            and result.returns.max() <= game.max_utility()
        )


class _ISMCTSBot(ismcts.ISMCTSBot):
    # evaluate_bots calls restart_at, which OpenSpiel's Python ISMCTSBot lacks (it keeps no
    # state between moves: every step searches from scratch)
    def restart_at(self, state):
        self.reset()


@pytest.mark.parametrize("name", caribsim.games())
def test_evaluate_bots_with_ismcts_and_mcts(name):
    """OpenSpiel's evaluate_bots runs full 2-player games: its Python ISMCTSBot (sampling
    worlds with state.resample_from_infostate) against its Python MCTSBot on the hidden-
    information games; MCTSBot against MCTSBot on Puerto Rico, which is perfect information
    (ISMCTSBot asserts an imperfect-information game)."""
    game = pyspiel.load_game(f"caribsim_{name}", {"players": 2})
    rs = np.random.RandomState(3)
    ev = cos.CRolloutEvaluator(1, seed=1)
    first = (
        mcts.MCTSBot(game, 2.0, 4, ev, random_state=rs, solve=False)
        if name == "puerto_rico"
        else _ISMCTSBot(game, ev, 2.0, 4, random_state=rs)
    )
    bots = [first, mcts.MCTSBot(game, 2.0, 4, ev, random_state=rs, solve=False)]
    state = game.new_initial_state()
    returns = evaluate_bots.evaluate_bots(state, bots, rs)
    assert state.is_terminal() and returns == state.returns() == list(state.inner.returns())
    assert sum(returns) == pytest.approx(1.0)
    assert len(state.history()) > 50


def test_ismcts_refuses_perfect_information_puerto_rico():
    game = pyspiel.load_game("caribsim_puerto_rico", {"players": 2})
    bot = _ISMCTSBot(game, cos.CRolloutEvaluator(1), 2.0, 4)
    state = _random_walk(game.new_initial_state(), np.random.RandomState(0), 30)
    while state.is_chance_node() or len(state.legal_actions()) < 2:
        _random_walk(state, np.random.RandomState(1), 1)
    with pytest.raises(AssertionError):
        bot.step(state)


def _branch_with_other_outcome(name, hidden_kind):
    """Two states of one game that differ only by one hidden event: the first chance event
    of ``hidden_kind`` (Port Royal: a coin drawn) gets two different outcomes, then the
    same later events are applied to both while they are legal in both."""
    game = pyspiel.load_game(f"caribsim_{name}", {"players": 3})
    rng = np.random.RandomState(5)
    a = game.new_initial_state()
    while True:
        if (
            a.is_chance_node()
            and a.inner.chance_event()[0] == hidden_kind
            and len(a.chance_outcomes()) > 1
        ):
            break
        _random_walk(a, rng, 1)
    b = a.clone()
    (x, _), (y, _) = a.chance_outcomes()[:2]
    a.apply_action(x)
    b.apply_action(y)
    return game, a, b, rng


def _assert_same_information_state(a, b, player):
    assert a.information_state_string(player) == b.information_state_string(player)
    np.testing.assert_array_equal(
        a.information_state_tensor(player), b.information_state_tensor(player)
    )
    assert a.current_player() == b.current_player()
    if not a.is_chance_node() and not a.is_terminal():
        assert a.legal_actions() == b.legal_actions()


def _assert_resample_consistent(state, player, seed):
    sampler = iter(np.random.RandomState(seed).uniform(size=10))
    r = state.resample_from_infostate(player, lambda: next(sampler))
    assert r.information_state_string(player) == state.information_state_string(player)
    np.testing.assert_array_equal(
        r.information_state_tensor(player), state.information_state_tensor(player)
    )
    np.testing.assert_array_equal(r.observation_tensor(player), state.observation_tensor(player))
    assert r.legal_actions() == state.legal_actions()
    assert pickle.loads(pickle.dumps(r)).inner == r.inner  # serialisation keeps the sample
    return r


def test_port_royal_states_differing_by_a_coin_face_share_information_states():
    _game, a, b, rng = _branch_with_other_outcome("port_royal", "draw")
    assert a.inner.to_dict() != b.inner.to_dict()  # different true states
    compared = 0
    for _ in range(60):
        if a.is_terminal():
            break
        for p in range(3):
            _assert_same_information_state(a, b, p)
        if not a.is_chance_node():
            for p in range(3):
                _assert_resample_consistent(a, p, compared)
                _assert_resample_consistent(b, p, compared)
            compared += 1
        if a.is_chance_node():
            common = sorted(
                {x for x, _ in a.chance_outcomes()} & {x for x, _ in b.chance_outcomes()}
            )
            if not common:
                break  # the piles now differ visibly: stop here
            action = int(rng.choice(common))
        else:
            action = int(rng.choice(a.legal_actions()))
        a.apply_action(action)
        b.apply_action(action)
    assert compared >= 3
    assert "hidden coin face (draw, p" in a.information_state_string(0)


def test_cuba_secret_bid_is_hidden_until_the_reveal():
    """Two games that differ only by p's secret bid: other players' information states are
    equal until the bids are revealed, p's own differ; the reveal is recorded for all."""
    game = pyspiel.load_game("caribsim_cuba", {"players": 3})
    rng = np.random.RandomState(2)
    bid0, nbids = caribsim._cuba.ACTION_RANGES["bid"]
    while True:
        a = _random_walk(game.new_initial_state(), rng, 0)
        while not a.is_terminal():
            if not a.is_chance_node():
                bids = [x for x in a.legal_actions() if bid0 <= x < bid0 + nbids]
                if len(bids) >= 2 and not a.inner.hidden_bids_pending():
                    break
            _random_walk(a, rng, 1)
        if not a.is_terminal():
            break
    bidder = a.current_player()
    b = a.clone()
    a.apply_action(bids[0])
    b.apply_action(bids[1])
    others = [p for p in range(3) if p != bidder]
    revealed = False
    for _ in range(10):
        for p in others:
            _assert_same_information_state(a, b, p)
            _assert_resample_consistent(a, p, 0)
        assert a.information_state_string(bidder) != b.information_state_string(bidder)
        assert f"p{bidder}: hidden bid" in a.information_state_string(others[0])
        assert a.observation_string(bidder) != b.observation_string(bidder)  # his own bid
        bids_now = [x for x in a.legal_actions() if bid0 <= x < bid0 + nbids]
        action = bids_now[0]
        a.apply_action(action)
        b.apply_action(action)
        if f"p{bidder} bid revealed" in a.information_state_string(others[0]):
            revealed = True
            break
    assert revealed
    # after the reveal the amounts are public: every player now tells the games apart
    for p in range(3):
        assert a.information_state_string(p) != b.information_state_string(p)
    assert f"p{bidder} bid revealed: {bids[0] - bid0}" in a.information_state_string(others[0])


@pytest.mark.parametrize("name", caribsim.games())
def test_hidden_events_are_exactly_those_the_observation_hides(name):
    """The per-game table of hidden events (caribsim.infostate) agrees with the games'
    observations: at a hidden event every outcome leaves each observer that does not see it
    the same observation; at a seen event with several outcomes they differ (Puerto Rico:
    every event is seen)."""
    game = pyspiel.load_game(f"caribsim_{name}", {"players": 3})
    rng = np.random.RandomState(4)
    state = game.new_initial_state()
    kinds = set()
    for _ in range(400):
        if state.is_terminal():
            break
        options = (
            [x for x, _ in state.chance_outcomes()]
            if state.is_chance_node()
            else state.legal_actions()
        )
        if len(options) >= 2:
            children = [state.child(x) for x in options[:6]]
            mover = state.current_player()
            for p in range(3):
                obs = {tuple(c.observation_tensor(p)) for c in children}
                seen = all(
                    "hidden" not in c.information_state_string(p).splitlines()[-1] for c in children
                )
                kinds.add(seen)
                if p != mover or state.is_chance_node():
                    assert (len(obs) == 1) == (not seen), state.information_state_string(
                        p
                    ).splitlines()[-1]
        _random_walk(state, rng, 1)
    assert kinds == ({True} if name == "puerto_rico" else {True, False})


def test_make_observation_honours_perfect_recall():
    game = pyspiel.load_game("caribsim_port_royal", {"players": 2})
    state = _random_walk(game.new_initial_state(), np.random.RandomState(0), 120)
    info = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    plain = make_observation(game)
    for p in range(2):
        info.set_from(state, p)
        np.testing.assert_array_equal(info.tensor, state.information_state_tensor(p))
        assert info.string_from(state, p) == state.information_state_string(p)
        plain.set_from(state, p)
        np.testing.assert_array_equal(plain.tensor, state.observation_tensor(p))
        assert plain.string_from(state, p) == state.observation_string(p)
    n_obs = plain.tensor.size
    assert game.event_slots == cos.MAX_EVENTS  # Port Royal: the working limit
    assert info.tensor.size == n_obs + 2 * game.event_slots
    assert list(game.information_state_tensor_shape()) == [info.tensor.size]
    # the event part: one (actor, action) pair per event, the rest zeros
    events = info.tensor[n_obs:].reshape(-1, 2)
    assert (events[: len(state.history())] != 0).any(axis=1).all()
    assert not events[len(state.history()) :].any()
    with pytest.raises(ValueError, match="private-only information state"):
        make_observation(game, pyspiel.IIGObservationType(perfect_recall=True, public_info=False))


@pytest.mark.parametrize("name", caribsim.games())
def test_observation_string_is_the_players_readable_view(name):
    game = pyspiel.load_game(f"caribsim_{name}", {"players": 3})
    state = _random_walk(game.new_initial_state(), np.random.RandomState(1), 150)
    text = state.observation_string(1)
    assert text.startswith("view of p1\n") and str(state.inner) in text
    assert "0:" not in text.split("\n")[0]
    if name != "puerto_rico":
        # hidden facts resampled: the same view
        other = state.resample_from_infostate(1, lambda: 0.25)
        assert other.inner.to_dict() != state.inner.to_dict() or name == "cuba"
        assert other.observation_string(1) == text


def test_resample_from_infostate_bad_player():
    game = pyspiel.load_game("caribsim_cuba", {"players": 3})
    state = game.new_initial_state()
    with pytest.raises(ValueError, match=r"seat in 0\.\.2"):
        state.resample_from_infostate(3, lambda: 0.5)
    with pytest.raises(TypeError, match="int seat"):
        state.resample_from_infostate("p0", lambda: 0.5)


def _stalling_action(state):
    """A legal policy that never ends Puerto Rico or Port Royal: decline, pass or stop
    whenever allowed, never take the roles or cards that end the game (Mayor, Captain,
    a take in Port Royal's harbour, an expedition)."""
    legal = state.legal_actions()
    names = [state.action_to_string(a) for a in legal]
    for key in ("pass", "stop", "decline", "no ", "end"):
        for a, name in zip(legal, names):
            if name.startswith(key) or name == key.strip():
                return a
    for a, name in zip(legal, names):
        if not any(w in name for w in ("mayor", "captain", "take", "fulfil")):
            return a
    return legal[0]


@pytest.mark.parametrize("name", ["puerto_rico", "port_royal"])
def test_puerto_rico_and_port_royal_have_no_finite_length(name):  # 3 players
    """max_game_length is a working limit, not a bound: a legal stalling game runs past it
    (and far past the longest random games), and the information-state tensor, which holds
    MAX_EVENTS events, then refuses with a clear error instead of truncating."""
    game = pyspiel.load_game(f"caribsim_{name}", {"players": 3})
    state = game.caribsim_game.new_initial_state(seed=0)
    decisions = 0
    while decisions <= game.max_game_length() and not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(_stalling_action(state))
            decisions += 1
    assert not state.is_terminal() and decisions > game.max_game_length()
    longest = int(
        caribsim.random_playouts(
            game.caribsim_game.new_initial_state(seed=0), 2000, seed=1
        ).lengths.max()
    )
    assert game.max_game_length() >= 2.5 * longest
    events = cos.infostate.Events(name)
    for a in (state.history() * 3)[: cos.MAX_EVENTS + 1]:  # one record more than the slots
        events = cos.infostate.Events(None, events, ((0, a, 0, ""),))
    out = np.zeros(2 * cos.MAX_EVENTS, np.float32)
    with pytest.raises(
        ValueError, match=f"more than the information-state tensor's {cos.MAX_EVENTS} slots"
    ):
        cos.infostate.encode_events(events, 0, 3, out)


def test_cuba_games_end_within_the_limit():
    game = pyspiel.load_game("caribsim_cuba", {"players": 5})
    result = caribsim.random_playouts(game.caribsim_game.new_initial_state(seed=0), 2000, seed=2)
    assert result.lengths.max() * 2.5 <= game.max_game_length()
    state = game.caribsim_game.new_initial_state(seed=0)
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(_stalling_action(state))
            decisions += 1
    assert decisions <= game.max_game_length()


def test_cuba_every_secret_bid_is_revealed_with_its_amount():
    """Over whole random games: each secret bid is followed, before the same seat bids
    again, by exactly one reveal record carrying the amount it bid (the rebid case included)."""
    bid0, nbids = caribsim._cuba.ACTION_RANGES["bid"]
    checked = 0
    for players, seed in [(3, 0), (4, 1), (5, 2), (2, 3)]:
        game = pyspiel.load_game("caribsim_cuba", {"players": players})
        state = game.new_initial_state()
        rng = np.random.RandomState(seed)
        while not state.is_terminal():
            _random_walk(state, rng, 1)
        open_bids = {}
        for actor, action, _hidden, label in state.events.list():
            if actor == cos.infostate.REVEAL:
                # a seat without pesos bids 0 automatically (no decision, no event of its own)
                assert open_bids.pop(action, 0) == label
                checked += 1
            elif actor >= 0 and bid0 <= action < bid0 + nbids:
                assert actor not in open_bids
                open_bids[actor] = action - bid0
        assert not open_bids
    assert checked >= 10


def test_information_state_string_cache_gives_the_string_built_from_scratch():
    game = pyspiel.load_game("caribsim_port_royal", {"players": 2})
    state = game.new_initial_state()
    rng = np.random.RandomState(7)
    cached = []
    for _ in range(40):  # ask at every step: each builds on the last one
        _random_walk(state, rng, 3)
        cached.append((state.clone(), state.information_state_string(0)))
    cos.infostate._STRINGS.clear()
    for copy, text in cached:
        assert copy.information_state_string(0) == text
        cos.infostate._STRINGS.clear()
    assert len(cached[-1][1].splitlines()) == len(cached[-1][0].history()) + 1


# --- parameters: every option of every game, None defaults by their stand-ins -----------------

_VIOLET = caribsim.puerto_rico.game.VIOLET_BUILDINGS
_ROWS = caribsim.puerto_rico.game._ROWS
_BASE_SET = [b for b in _VIOLET if _ROWS[b]["set"] == "base"]
# the base set with Forest house (cost 2) for Construction hut: legal, Hacienda beside it
# only without the exclusions
_WITH_FOREST_HOUSE = [b for b in _BASE_SET if b != "construction_hut"] + ["forest_house"]
# the base set with five expansion kinds of the same costs
_CUSTOM_SET = [
    b for b in _BASE_SET if b not in ("small_market", "hacienda", "hospice", "harbor", "guild_hall")
] + ["aqueduct", "forest_house", "guest_house", "library", "statue"]


def _options_of_the_signature(name):
    sig = inspect.signature(caribsim._api._registry()[name].__init__)
    return [p for p in sig.parameters if p != "self"]


def _first_decision(state):
    state = state.clone()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


def _violets_in_play(state):
    return {b for b, n in state.inner.to_dict()["buildings"].items() if b in _VIOLET and n > 0}


def _cuba_data_folder(tmp_path, start_pesos):
    """A data folder whose cuba_setup.csv gives every player ``start_pesos``."""
    shipped = resources.files("caribsim") / "data" / "cuba_setup.csv"
    lines = shipped.read_text().splitlines()
    rows = [
        f"start_pesos,{start_pesos},{ln.split(',')[2]}" if ln.startswith("start_pesos,") else ln
        for ln in lines
    ]
    assert rows != lines
    (tmp_path / "cuba_setup.csv").write_text("\n".join(rows) + "\n")
    return str(tmp_path)


def _default_start(name, players):
    return caribsim.load_game(name, players=players).new_initial_state().to_dict()["start_player"]


# (game, OpenSpiel parameters, the engine's options, what the state shows of the option)
PARAMETER_CASES = {
    "pr-players": (
        "puerto_rico",
        {"players": 3},
        {"players": 3},
        lambda g, s: g.num_players() == 3,
    ),
    "pr-all_colonists_and_vp": (
        "puerto_rico",
        {"players": 3, "all_colonists_and_vp": True},
        {"players": 3, "all_colonists_and_vp": True},
        # §8.3: 122 VP chips in every player count
        lambda g, s: s.inner.to_dict()["vp_chips"] == 122,
    ),
    "pr-expansion": (
        "puerto_rico",
        {"expansion": True},
        {"expansion": True},
        lambda g, s: all(
            _first_decision(s).action_to_string(a).startswith("draft ")
            for a in _first_decision(s).legal_actions()
        ),
    ),
    "pr-all_31_buildings": (
        "puerto_rico",
        {"expansion": True, "all_31_buildings": True},
        {"expansion": True, "all_31_buildings": True},
        lambda g, s: (
            _violets_in_play(s) == set(_VIOLET)
            and not _first_decision(s)
            .action_to_string(_first_decision(s).legal_actions()[0])
            .startswith("draft ")
        ),
    ),
    "pr-buildings": (
        "puerto_rico",
        {"expansion": True, "buildings": " ".join(_CUSTOM_SET)},
        {"expansion": True, "buildings": _CUSTOM_SET},
        lambda g, s: _violets_in_play(s) == set(_CUSTOM_SET),
    ),
    "pr-buildings-commas": (
        "puerto_rico",
        {"expansion": True, "buildings": ", ".join(_CUSTOM_SET)},
        {"expansion": True, "buildings": _CUSTOM_SET},
        lambda g, s: _violets_in_play(s) == set(_CUSTOM_SET),
    ),
    "pr-draft": (
        "puerto_rico",
        {"expansion": True, "draft": False, "buildings": " ".join(_CUSTOM_SET)},
        {"expansion": True, "draft": False, "buildings": _CUSTOM_SET},
        lambda g, s: g.options()["draft"] is False and _violets_in_play(s) == set(_CUSTOM_SET),
    ),
    "pr-exclusions": (
        "puerto_rico",
        {"expansion": True, "exclusions": False, "buildings": " ".join(_WITH_FOREST_HOUSE)},
        {"expansion": True, "exclusions": False, "buildings": _WITH_FOREST_HOUSE},
        lambda g, s: {"hacienda", "forest_house"} <= _violets_in_play(s),
    ),
    "pry-require_expedition": (
        "port_royal",
        {"players": 3, "require_expedition": True},
        {"players": 3, "require_expedition": True},
        lambda g, s: s.inner.to_dict()["options"]["require_expedition"] is True,
    ),
    "pry-start_player": (
        "port_royal",
        {"players": 3, "start_player": 2},
        {"players": 3, "start_player": 2},
        lambda g, s: (
            _default_start("port_royal", 3) != 2 and s.inner.to_dict()["start_player"] == 2
        ),
    ),
    "cuba-start_player": (
        "cuba",
        {"players": 3, "start_player": 2},
        {"players": 3, "start_player": 2},
        # no chance node draws the start player (its outcomes are the ids 0..4)
        lambda g, s: (
            _first_decision(s).inner.to_dict()["start_player"] == 2
            and not any(a < 5 for a in _first_decision(s).history())
        ),
    ),
    "cuba-data": (
        "cuba",
        {"players": 3, "data": "<folder>"},
        {"players": 3, "data": "<folder>"},
        lambda g, s: [b["pesos"] for b in s.inner.to_dict()["boards"]] == [13] * 3,
    ),
    "cuba-supply_limited": (  # the example
        "cuba",
        {"players": 2, "supply_limited": True},
        {"players": 2, "supply_limited": True},
        lambda g, s: (
            np.isfinite(g.observation_bounds()[1][2:10]).all()  # seat 0's yard
            and np.isinf(caribsim.load_game("cuba", players=2).observation_bounds()[1][2:10]).all()
        ),
    ),
    "cuba-pesos_limited": (
        "cuba",
        {"players": 2, "pesos_limited": True},
        {"players": 2, "pesos_limited": True},
        lambda g, s: (
            np.isfinite(g.observation_bounds()[1][0])  # seat 0's pesos
            and np.isinf(caribsim.load_game("cuba", players=2).observation_bounds()[1][0])
        ),
    ),
}


def test_every_option_is_a_parameter_and_the_defaults_are_the_games():
    """The parameter specification holds every constructor option of every game, each of an
    OpenSpiel type; the defaults (None written as its stand-in) build the engine's default
    game."""
    for name in caribsim.games():
        spec = pyspiel.load_game(f"caribsim_{name}").get_type().parameter_specification
        assert sorted(spec) == sorted(_options_of_the_signature(name))
        assert all(type(v) in (bool, int, float, str) for v in spec.values())
        game = pyspiel.load_game(f"caribsim_{name}", dict(spec))
        assert game.caribsim_game.options() == caribsim.load_game(name).options()


@pytest.mark.parametrize("case", PARAMETER_CASES, ids=list(PARAMETER_CASES))
def test_each_parameter_reaches_the_engine(case, tmp_path):
    """Each option given as an OpenSpiel parameter builds the game the engine builds with
    it (the same states along a random game), the state shows it, and the game's string
    loads the same game again."""
    name, params, options, shows = PARAMETER_CASES[case]
    if params.get("data") == "<folder>":
        params["data"] = options["data"] = _cuba_data_folder(tmp_path, start_pesos=13)
    game = pyspiel.load_game(f"caribsim_{name}", params)
    engine = caribsim.load_game(name, **options)
    assert game.caribsim_game.options() == engine.options()
    state, mirror = game.new_initial_state(), engine.new_initial_state()
    assert shows(game.caribsim_game, state)
    default = caribsim.load_game(name, players=engine.num_players()).new_initial_state()
    assert state.inner.to_dict()["options"] != default.to_dict()["options"] or case.endswith(
        "players"
    )
    rng = np.random.RandomState(0)
    for _ in range(40):
        assert state.inner.to_dict() == mirror.to_dict()
        if state.is_terminal():
            break
        _random_walk(state, rng, 1)
        mirror.apply_action(state.history()[-1])
    again = pyspiel.load_game(str(game))
    assert again.caribsim_game.options() == engine.options()
    assert again.get_parameters() == game.get_parameters()


@pytest.mark.parametrize(
    "name,params,error,match",
    [
        ("cuba", {"supply_limited": 1}, pyspiel.SpielError, "parameter supply_limited.*kBool"),
        ("cuba", {"data": 5}, pyspiel.SpielError, "parameter data.*kString"),
        ("port_royal", {"start_player": True}, pyspiel.SpielError, "parameter start_player.*kInt"),
        ("cuba", {"colour": 1}, pyspiel.SpielError, "Unknown parameter 'colour'"),
        (
            "cuba",
            {"players": 3, "start_player": -2},
            ValueError,
            r"start_player must be a seat 0\.\.2 or -1 \(a chance node draws the start "
            r"player\), got -2",
        ),
        (
            "port_royal",
            {"players": 3, "start_player": 3},
            ValueError,
            r"start_player must be a seat 0\.\.2 or -1 \(a seat drawn from the game's seed\), got 3",
        ),
        (
            "cuba",
            {"data": "/no/such/folder"},
            ValueError,
            "data: '/no/such/folder' is not a folder",
        ),
        ("puerto_rico", {"buildings": "hacienda"}, ValueError, "need expansion=True"),
        (
            "puerto_rico",
            {"expansion": True, "buildings": "hacienda nope"},
            ValueError,
            "'nope' is not a violet building id; allowed:",
        ),
        ("puerto_rico", {"expansion": True, "draft": False}, ValueError, "draft=False needs"),
        (
            "puerto_rico",
            {"expansion": True, "buildings": " ".join(_WITH_FOREST_HOUSE)},
            ValueError,
            "hacienda and forest_house exclude each other",
        ),
        ("puerto_rico", {"players": 6}, ValueError, r"players must be 2\.\.5, got 6"),
    ],
)
def test_bad_parameters_are_refused_saying_what_is_allowed(name, params, error, match):
    with pytest.raises(error, match=match):
        pyspiel.load_game(f"caribsim_{name}", params)


# --- the information-state tensor holds every event of a game -------------------------------


@pytest.mark.parametrize("name,players", CASES, ids=IDS)
def test_information_state_tensor_covers_the_game_length(name, players):
    """Cuba's tensor holds its derived bound on events: the decisions' bound (the game's
    max_game_length) plus the chance outcomes and revealed bids; the others' holds the
    working limit's decisions at the most events per decision of random games. Exactly that
    many events encode; one more is refused."""
    game = pyspiel.load_game(f"caribsim_{name}", {"players": players})
    n_obs = int(np.prod(game.observation_tensor_shape()))
    slots = game.event_slots
    assert list(game.information_state_tensor_shape()) == [n_obs + 2 * slots]
    if name == "cuba":
        terms = cos.cuba_event_terms(game.caribsim_game)
        assert terms["decisions"] == game.max_game_length() == game.length_bound
        assert (
            slots == terms["total"] == game.max_game_length() + terms["chance"] + terms["reveals"]
        )
    else:
        rng = np.random.default_rng(players)
        ratio = 0.0
        for seed in range(30):
            state = game.caribsim_game.new_initial_state(seed=seed)
            decisions = 0
            while not state.is_terminal():
                if state.is_chance_node():
                    state.resolve_chance()
                else:
                    legal = state.legal_actions()
                    state.apply_action(legal[rng.integers(len(legal))])
                    decisions += 1
            ratio = max(ratio, len(state.history()) / decisions)
        assert slots >= ratio * game.max_game_length()
    events = cos.infostate.Events(name)
    events = cos.infostate.Events(None, events, ((0, 1, 0, ""),) * slots)
    out = np.zeros(2 * slots, np.float32)
    cos.infostate.encode_events(events, 0, players, out)
    assert out[-2:].tolist() == [1.0, 2.0]
    events = cos.infostate.Events(None, events, ((0, 1, 0, ""),))
    with pytest.raises(ValueError, match=f"more than the information-state tensor's {slots} slots"):
        cos.infostate.encode_events(events, 0, players, out)


def test_cuba_events_stay_within_the_terms_of_their_bound():
    """Whole random games (seeded, each player count): the chance outcomes, the revealed
    bids and the decisions each within their term of cuba_event_bound."""
    for players in (2, 3, 4, 5):
        game = pyspiel.load_game("caribsim_cuba", {"players": players})
        terms = cos.cuba_event_terms(game.caribsim_game)
        state = _random_walk(game.new_initial_state(), np.random.RandomState(players), 10**6)
        assert state.is_terminal()
        actors = [actor for actor, *_ in state.events.list()]
        chance, reveals = actors.count(-1), actors.count(cos.infostate.REVEAL)
        assert 0 < chance <= terms["chance"] and 0 < reveals <= terms["reveals"]
        assert len(actors) - chance - reveals <= terms["decisions"]
