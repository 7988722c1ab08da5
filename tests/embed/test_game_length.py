"""OpenSpiel's max_game_length(): Cuba's derived bound (caribsim.openspiel.cuba_length_bound,
docs/embedding.md "Game length") is never exceeded by random games, by a "longest game"
policy, nor by a search that maximises the game's length, and follows the component data;
Puerto Rico with 2 players, like 3-5, has no finite length (a legal stalling game never ends)."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
from extras import need

pyspiel = need("openspiel")

import caribsim
import caribsim.openspiel as cos

cos.register()
CUBA_PLAYERS = [2, 3, 4, 5]
# Longest game found per player count by the three methods below, collected for the
# looseness test (filled as the tests run; the looseness test runs them itself if needed).
_LONGEST: dict[int, int] = {}


def _bound(players, **options):
    return cos.cuba_length_bound(caribsim.load_game("cuba", players=players, **options))


def _note(players, length):
    _LONGEST[players] = max(_LONGEST.get(players, 0), int(length))


@pytest.mark.parametrize("players", CUBA_PLAYERS)
def test_cuba_max_game_length_is_the_derived_bound(players):
    game = pyspiel.load_game("caribsim_cuba", {"players": players})
    assert game.max_game_length() == _bound(players) == game.length_bound
    assert game.max_game_length() != cos.MAX_GAME_LENGTH
    # the derivation's building table is the engine's order and the data's field kinds
    data = game.caribsim_game.component_data()
    assert [b["name"].lower().replace(" ", "_") for b in data["buildings"]] == list(
        cos._CU_BUILDINGS
    )
    assert data["plantation"].count(cos._CU_WAREHOUSE) == 1
    for opts in ({"supply_limited": True}, {"pesos_limited": True}):
        # a limited supply / bank can only shorten the game: the bound does not grow
        assert _bound(players, **opts) <= _bound(players)


@pytest.mark.parametrize("players", CUBA_PLAYERS)
def test_cuba_random_games_stay_within_the_bound(players):
    game = caribsim.load_game("cuba", players=players)
    bound = cos.cuba_length_bound(game)
    lengths = caribsim.random_playouts(game.new_initial_state(seed=0), 50_000, seed=players).lengths
    assert lengths.min() > 0 and lengths.max() <= bound
    _note(players, lengths.max())


def _longest_policy(game, rng):
    """At every decision prefer what keeps the action going and adds pieces or options for
    later: sell and buy one item at a time, harvest every field, activate the Foreman's whole
    cross, pick and load units, build; never pass or take an alternative while anything else
    is legal; bid 0 (keeps the pesos for purchases and ties the parliament into its re-bid);
    decline tax and levy (keeps pesos and items). Random among equals, so many games differ."""
    names = [game.action_to_string(a) for a in range(game.num_distinct_actions())]
    prefs = [
        lambda x: x.startswith("sell"),
        lambda x: x.startswith("buy"),
        lambda x: x.startswith("harvest"),
        lambda x: x == "foreman row and column",
        lambda x: x.startswith(("pick", "receive")),
        lambda x: x.startswith("load"),
        lambda x: x.startswith("build"),
        lambda x: x.startswith("use"),
    ]

    def act(state):
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        nm = [names[a] for a in legal]
        if nm[0].startswith("bid"):
            return legal[0]
        if "pay tax" in nm or "deliver levy" in nm:
            return legal[nm.index("pass")]
        for pref in prefs:
            cands = [a for a, x in zip(legal, nm) if pref(x)]
            if cands and rng.random() < 0.95:
                return int(rng.choice(cands))
        cands = [
            a
            for a, x in zip(legal, nm)
            if x != "pass" and "alternative" not in x and not x.startswith("trader take")
        ]
        return int(rng.choice(cands or legal))

    return act


def _play(state, choose):
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(choose(state))
            decisions += 1
    return decisions


@pytest.mark.parametrize("players", CUBA_PLAYERS)
def test_cuba_longest_game_policy_stays_within_the_bound(players):
    game = caribsim.load_game("cuba", players=players)
    bound = cos.cuba_length_bound(game)
    rng = np.random.default_rng(players)
    policy = _longest_policy(game, rng)
    lengths = [_play(game.new_initial_state(seed=i), policy) for i in range(300)]
    assert max(lengths) <= bound
    # the policy does make games longer than uniformly random play does on average
    random_mean = caribsim.random_playouts(
        game.new_initial_state(seed=0), 2000, seed=1
    ).lengths.mean()
    assert np.mean(lengths) > random_mean
    _note(players, max(lengths))


def _check_terms(game, choose, games):
    """Play ``games`` games and check the derivation's steps one by one (not only the total):
    at every state each player's wealth (pesos + v x items) and items stay within the round's
    W_r and I_r (step 2), each player's action-phase decisions of a round within the round's
    bound (step 4), and the parliament and law-execution decisions within 4n + 1 (5, 6).
    Returns the longest game."""
    terms = cos.cuba_length_terms(game)
    v, longest = terms["v"], 0
    for seed in range(games):
        state = game.new_initial_state(seed=seed)
        acts, others, decisions = {}, {}, 0
        while not state.is_terminal():
            d = state.to_dict()
            r = d["round"] - 1
            for b in d["boards"]:
                items = (
                    sum(b["yard"].values())
                    + sum(b["warehouse"].values())
                    + sum(b["storage"].values())
                )
                assert items <= terms["items"][r] and b["pesos"] + v * items <= terms["wealth"][r]
            if state.is_chance_node():
                state.resolve_chance()
                continue
            if d["phase"] == "actions":
                key = (r, d["player"])
                acts[key] = acts.get(key, 0) + 1
                assert acts[key] <= terms["player_round"][r]
            elif d["phase"] != "setup":
                others[r] = others.get(r, 0) + 1
                assert others[r] <= terms["others"][r]
            state.apply_action(choose(state))
            decisions += 1
        assert decisions <= terms["total"]
        longest = max(longest, decisions)
    return longest


@pytest.mark.parametrize("players", CUBA_PLAYERS)
def test_cuba_derivation_steps_hold_in_play(players):
    game = caribsim.load_game("cuba", players=players)
    rng = np.random.default_rng(100 + players)
    _note(players, _check_terms(game, _longest_policy(game, rng), 100))
    _note(players, _check_terms(game, lambda s: int(rng.choice(s.legal_actions())), 100))


def _held(board):
    return (
        sum(board["yard"].values())
        + sum(board["warehouse"].values())
        + sum(board["storage"].values())
    )


def _cargo(board):
    return sum(
        board["yard"][k] + board["warehouse"].get(k, 0) + board["storage"].get(k, 0)
        for k in ("sugar", "citrus", "tobacco", "rum", "cigar")
    )


def _check_actions(game, choose, games):
    """Each step's count of docs/embedding.md (step 4) at the tightest point: every character
    action's decisions against its bound with the player's actual holding at the action's
    start (Worker 1 + H; Trader cargo + T + (pesos + v x cargo) // p_s + 1; Architect 2;
    Foreman 1 + C + the C largest extras among the buildings he owns, a building without
    limit counting his stock + 2 (the Dam's water, the Black market's exchange); Mayor the
    largest ship), and every player's wealth gain within a round against Delta W (step 2).
    Returns the most decisions seen per character, to show the checks are reached."""
    t = cos.cuba_length_terms(game)
    assert t["factor"] == 1.0
    names = [game.action_to_string(a) for a in range(game.num_distinct_actions())]
    buildings = [b["name"].lower() for b in game.component_data()["buildings"]]
    most = {}
    for seed in range(games):
        state = game.new_initial_state(seed=seed)
        action, round_start, rnd = None, {}, None
        while not state.is_terminal():
            d = state.to_dict()
            if d["phase"] != "setup":
                if d["round"] != rnd:
                    rnd = d["round"]
                    round_start = {
                        q: b["pesos"] + t["v"] * _held(b) for q, b in enumerate(d["boards"])
                    }
                for q, b in enumerate(d["boards"]):
                    assert b["pesos"] + t["v"] * _held(b) - round_start[q] <= t["gain"]
            if state.is_chance_node():
                state.resolve_chance()
                continue
            a = choose(state)
            if action is not None and (d["phase"] != "actions" or d["step"] == "character"):
                who, count, limit = action
                most[who] = max(most.get(who, 0), count)
                assert count <= limit, (who, count, limit)
                action = None
            if d["phase"] == "actions" and d["step"] == "character":
                who = names[a].split()[-1]
                b = d["boards"][d["player"]]
                if who == "worker":
                    limit = 1 + t["harvests"]
                elif who == "trader":
                    limit = (
                        _cargo(b)
                        + t["tokens"]
                        + (b["pesos"] + t["v"] * _cargo(b)) // t["supply_price"]
                        + 1
                    )
                elif who == "architect":
                    limit = 2
                elif who == "foreman":
                    owned = [buildings.index(x.replace("_", " ")) for x in b["buildings"]]
                    extras = t["extras"](_held(b) + 2)
                    limit = 1 + t["cross"] + sum(sorted(extras[i] for i in owned)[-t["cross"] :])
                else:
                    limit = t["slots"]
                action = [who, 0, limit]
            elif action is not None:
                action[1] += 1
            state.apply_action(a)
    return most


@pytest.mark.parametrize("players", [2, 5])
def test_cuba_each_action_stays_within_its_step_bound(players):
    game = caribsim.load_game("cuba", players=players)
    rng = np.random.default_rng(200 + players)
    most = _check_actions(game, _longest_policy(game, rng), 150)
    print(f"cuba {players}p: most decisions per action {most}")
    # the checks are reached: the Worker's and the Architect's bounds are attained
    terms = cos.cuba_length_terms(game)
    assert most["worker"] == 1 + terms["harvests"] and most["architect"] == 2
    assert min(most[c] for c in ("trader", "foreman", "mayor")) >= 2


def _length_search(game, rng, rollouts=16):
    """A one-step search whose reward is the game's length: at each decision, the action
    whose random continuations (rollouts in C) make the most further decisions."""

    def act(state):
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        best, best_a = -1.0, legal[0]
        for a in legal:
            child = state.clone()
            child.apply_action(a)
            n = (
                0.0
                if child.is_terminal()
                else caribsim.random_playouts(
                    child, rollouts, seed=int(rng.integers(2**62))
                ).lengths.mean()
            )
            if n > best:
                best, best_a = n, a
        return best_a

    return act


@pytest.mark.parametrize("players", CUBA_PLAYERS)
def test_cuba_length_maximising_search_stays_within_the_bound(players):
    game = caribsim.load_game("cuba", players=players)
    bound = cos.cuba_length_bound(game)
    rng = np.random.default_rng(players)
    search = _length_search(game, rng)
    lengths = [_play(game.new_initial_state(seed=i), search) for i in range(4)]
    assert max(lengths) <= bound
    _note(players, max(lengths))


@pytest.mark.parametrize("players", CUBA_PLAYERS)
def test_cuba_bound_is_not_absurdly_loose(players):
    """The bound / the longest game found, reported. The bound lets every player hold all
    the items his wealth could buy (W/v, step 2 of the derivation) and sell, re-buy and convert
    each of them every round, which the found games come nowhere near: measured ratios are
    16-18. The factor 40 only guards against a regression of the derivation (a bound twice
    as loose) or of the adversaries (games half as long), it is no claim of tightness."""
    if players not in _LONGEST:
        test_cuba_longest_game_policy_stays_within_the_bound(players)
    bound = _bound(players)
    ratio = bound / _LONGEST[players]
    print(f"cuba {players}p: bound {bound}, longest found {_LONGEST[players]}, ratio {ratio:.1f}")
    assert 1.0 <= ratio <= 40.0


def _data_folder(tmp_path, replace):
    src = resources.files("caribsim") / "data" / "cuba_setup.csv"
    text = src.read_text()
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    (tmp_path / "cuba_setup.csv").write_text(text)
    return str(tmp_path)


def test_cuba_bound_follows_the_component_data(tmp_path):
    base = _bound(4)
    # fewer rounds: the same per-round steps fewer times
    (tmp_path / "short").mkdir()
    short = _data_folder(tmp_path / "short", {"rounds,6,": "rounds,3,"})
    game = caribsim.load_game("cuba", players=4, data=short)
    b = cos.cuba_length_bound(game)
    assert b < base / 1.5
    assert cos.game_length_bound(game) == b
    assert caribsim.random_playouts(game.new_initial_state(seed=0), 5000, seed=3).lengths.max() <= b
    # more start pesos: more purchases possible, a larger bound
    (tmp_path / "rich").mkdir()
    rich = _data_folder(tmp_path / "rich", {"start_pesos,10,": "start_pesos,60,"})
    assert _bound(4, data=rich) > base
    # free purchases from the unlimited supply: a Trader action has no bound (no bound is
    # given, the working limit would be used), and a buying loop shows it
    (tmp_path / "free").mkdir()
    free = _data_folder(
        tmp_path / "free", {"market_buy_from_supply_price,7,": "market_buy_from_supply_price,0,"}
    )
    game = caribsim.load_game("cuba", players=2, data=free)
    with pytest.raises(ValueError, match="no bound"):
        cos.cuba_length_bound(game)
    assert cos.game_length_bound(game) is None
    state = game.new_initial_state(seed=0)
    decisions = 0
    while decisions <= cos.MAX_GAME_LENGTH:
        if state.is_chance_node():
            state.resolve_chance()
            continue
        names = {state.action_to_string(a): a for a in state.legal_actions()}
        buys = [a for nm, a in names.items() if nm.startswith("buy")]
        if buys:
            state.apply_action(buys[-1])  # one more free item, again and again
        elif "play trader" in names:
            state.apply_action(names["play trader"])
        else:
            state.apply_action(state.legal_actions()[0])
        decisions += 1
    assert not state.is_terminal() and state.to_dict()["round"] == 1  # all in one Trader action


def _stall(state, prefer):
    """Decline, pass or stop whenever allowed; take no role that ends the game (Mayor,
    Captain) unless forced, then the one named ``prefer``."""
    legal = state.legal_actions()
    names = [state.action_to_string(a) for a in legal]
    for key in ("pass", "stop", "decline", "no ", "end"):
        for a, name in zip(legal, names):
            if name.startswith(key) or name == key.strip():
                return a
    for a, name in zip(legal, names):
        if not any(w in name for w in ("mayor", "captain")):
            return a
    return next((a for a, name in zip(legal, names) if prefer in name), legal[0])


def test_puerto_rico_two_players_has_no_finite_length():
    """2 players take 6 of the 7 role cards each round, so Mayor or Captain is taken every
    round. Taking Mayor moves colonists out of the supply, which then runs out (an end
    trigger): that is why the stalling policy that takes Mayor ends. Taking Captain instead
    never ends the game: without colonists nothing is produced, so nothing is shipped and no
    VP chip is taken, the city never fills (building is optional), and the colonist supply
    and the VP chips stay as set up for ever."""
    game = pyspiel.load_game("caribsim_puerto_rico", {"players": 2})
    assert game.max_game_length() == cos.MAX_GAME_LENGTH and game.length_bound is None
    ends = game.caribsim_game.new_initial_state(seed=0)
    assert _play(ends, lambda s: _stall(s, "mayor")) < cos.MAX_GAME_LENGTH
    state = game.caribsim_game.new_initial_state(seed=0)
    while state.is_chance_node():
        state.resolve_chance()
    start = state.to_dict()
    decisions = 0
    while decisions <= 2 * cos.MAX_GAME_LENGTH and not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(_stall(state, "captain"))
            decisions += 1
    assert not state.is_terminal() and decisions > 2 * cos.MAX_GAME_LENGTH
    now = state.to_dict()
    assert now["colonists"] == start["colonists"] and now["vp_chips"] == start["vp_chips"]
    assert not now["end_triggered"]
