"""MCTS, bots and arena (docs/search.md): known best moves, determinism, threads,
tree reuse, bad options."""

import json

import pytest
from pr_scenario import Scenario, act, legal

import caribsim
from caribsim import arena, bots, mcts

ALL_BUT_BUILDER = ("settler", "mayor", "craftsman", "trader", "captain")
ALL_BUT_CAPTAIN = ("settler", "mayor", "builder", "craftsman", "trader")


def opening(players=3, seed=1):
    s = caribsim.load_game("puerto_rico", players=players).new_initial_state(seed=seed)
    while s.is_chance_node():
        s.resolve_chance()
    return s


def captain_blocking_position():
    """2p, last role of the last round. Seat 0 (Captain) holds 4 corn + 1 coffee, seat 1
    holds 6 sugar; both ships (4 and 6) are empty. Only corn on the 6-ship wins: it leaves
    seat 1 the 4-ship (4 VP, a tie that seat 0 wins on doubloons); corn on the 4-ship lets
    seat 1 ship 6, and coffee first leaves no ship for the corn."""
    sc = Scenario(players=2)
    sc.d["end_triggered"] = True
    sc.goods(0, corn=4, coffee=1).goods(1, sugar=6)
    sc.vp(0, 20).vp(1, 21).doubloons(0, 5).doubloons(1, 0)
    return sc.play_role("captain", 0, taken=ALL_BUT_CAPTAIN)


def final_build_position():
    """2p, last role of the last round: seat 0 (20 VP, 9 doubloons) against seat 1
    (23 VP, 0 doubloons, 5 corn). Only the Builder with a large building (4 VP for a
    price of 9) wins outright; a 3-VP building ties on VP and loses the tie-break."""
    sc = Scenario(players=2)
    sc.d["end_triggered"] = True
    sc.vp(0, 20).vp(1, 23).doubloons(0, 9).doubloons(1, 0).goods(1, corn=5)
    return sc.at_role_selection(0, taken=ALL_BUT_BUILDER)


LARGE = {
    "build guild hall",
    "build residence",
    "build fortress",
    "build customs house",
    "build city hall",
}


def test_captain_loading_order_known_best_move():
    st = captain_blocking_position()
    assert legal(st) == {"ship corn on 4", "ship corn on 6", "ship coffee on 4", "ship coffee on 6"}
    r = mcts.search(st, iterations=3000, seed=0)
    assert st.action_to_string(r.action) == "ship corn on 6"
    assert r.mean_reward[r.action] > 0.99
    # and the others lose: check by playing them out with the same search
    for name in legal(st) - {"ship corn on 6"}:
        child = st.clone()
        act(child, name)
        while not child.is_terminal():
            child.apply_action(
                mcts.search(child, iterations=300, seed=1).action
                if len(child.legal_actions()) > 1
                else child.legal_actions()[0]
            )
        assert child.returns()[0] < 1.0, name


def test_final_round_build_known_best_move():
    st = final_build_position()
    r = mcts.search(st, iterations=4000, seed=0)
    assert st.action_to_string(r.action) == "role builder"
    st.apply_action(r.action)
    assert st.step_name() == "build" and st.current_player() == 0
    r = mcts.search(st, iterations=4000, seed=0)
    assert st.action_to_string(r.action) in LARGE
    st.apply_action(r.action)
    while not st.is_terminal():
        st.apply_action(st.legal_actions()[0])
    assert st.returns() == [1.0, 0.0]


@pytest.mark.parametrize("reward", ["win", "rank", "score"])
@pytest.mark.parametrize("rollout", ["random", "heuristic"])
def test_every_reward_and_rollout_finds_the_block(reward, rollout):
    st = captain_blocking_position()
    r = mcts.search(st, iterations=3000, reward=reward, rollout=rollout, seed=3)
    assert st.action_to_string(r.action) == "ship corn on 6"


def test_cut_off_rollouts_use_the_static_evaluation():
    st = opening(3)
    r = mcts.search(st, iterations=500, max_depth=5, seed=0)
    assert sum(r.visits.values()) == 500
    assert all(0.0 <= v <= 1.0 for v in r.mean_reward.values())
    r2 = mcts.search(st, iterations=500, max_depth=5, seed=0)
    assert r2.visits == r.visits and r2.mean_reward == r.mean_reward


def test_root_statistics():
    st = opening(4)
    r = mcts.search(st, iterations=2000, seed=0)
    assert set(r.visits) == set(st.legal_actions())
    assert sum(r.visits.values()) == 2000 == r.iterations
    assert r.action == max(r.visits, key=lambda a: (r.visits[a], r.mean_reward[a], -a))
    assert abs(sum(r.policy().values()) - 1.0) < 1e-12
    assert r.nodes > 2000  # one new decision node per iteration, plus chance nodes


def test_deterministic_for_a_seed_with_one_thread():
    st = opening(3)
    a = mcts.search(st, iterations=3000, seed=11)
    b = mcts.search(st, iterations=3000, seed=11)
    c = mcts.search(st, iterations=3000, seed=12)
    assert (a.visits, a.mean_reward, a.nodes) == (b.visits, b.mean_reward, b.nodes)
    assert (a.visits, a.mean_reward) != (c.visits, c.mean_reward)


def test_two_threads_repeatedly_give_identical_totals():
    """Root parallelism: independent trees, merged at the root. No shared state, so the
    totals (and here even every statistic) repeat exactly."""
    st = opening(4)
    runs = [mcts.search(st, iterations=4000, threads=2, seed=5) for _ in range(5)]
    for r in runs:
        assert sum(r.visits.values()) == 4000 == r.iterations
        assert (r.visits, r.mean_reward) == (runs[0].visits, runs[0].mean_reward)
    one = mcts.search(st, iterations=4000, threads=1, seed=5)
    assert one.visits != runs[0].visits  # a different tree shape, same budget


def test_seconds_budget():
    st = opening(3)
    r = mcts.search(st, seconds=0.2, seed=0)
    assert 0.15 < r.seconds < 1.0
    assert r.iterations > 100 and sum(r.visits.values()) == r.iterations
    r = mcts.search(st, seconds=5.0, iterations=300, seed=0)  # the first budget reached stops it
    assert r.iterations == 300


def test_chance_nodes_get_a_child_per_sampled_outcome():
    """The Settler's refill is a chain of chance nodes: from a Settler phase the tree
    holds more nodes than iterations (chance children), and the search still runs."""
    st = opening(3)
    act(st, "role settler")
    r = mcts.search(st, iterations=2000, seed=0)
    assert r.nodes > 2000 + 100
    assert r.action in st.legal_actions()


def test_tree_reuse_keeps_the_subtree():
    st = opening(3)
    s = mcts.Searcher(iterations=2000, seed=0, reuse=True)
    fresh = mcts.Searcher(iterations=2000, seed=0, reuse=False)
    first = s.search(st)
    st.apply_action(first.action)
    while st.current_player() != 1 or st.is_chance_node():  # walk to seat 1's decision
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(st.legal_actions()[0])
    again = s.search(st)
    assert sum(again.visits.values()) > 2000  # visits kept from the first search
    assert sum(fresh.search(st).visits.values()) == 2000


def test_reuse_starts_afresh_on_another_game():
    s = mcts.Searcher(iterations=500, seed=0)
    s.search(opening(3, seed=1))
    r = s.search(opening(3, seed=2))
    assert sum(r.visits.values()) == 500


@pytest.mark.parametrize(
    "options, error",
    [
        ({}, ValueError),  # no budget
        ({"iterations": 0}, ValueError),
        ({"iterations": -5}, ValueError),
        ({"iterations": 1.5}, TypeError),
        ({"iterations": True}, TypeError),
        ({"seconds": 0}, ValueError),
        ({"seconds": float("nan")}, ValueError),
        ({"seconds": "1"}, TypeError),
        ({"iterations": 10, "c": -1}, ValueError),
        ({"iterations": 10, "c": float("inf")}, ValueError),
        ({"iterations": 10, "reward": "vp"}, ValueError),
        ({"iterations": 10, "rollout": "smart"}, ValueError),
        ({"iterations": 10, "max_depth": 0}, ValueError),
        ({"iterations": 10, "threads": 0}, ValueError),
        ({"iterations": 10, "threads": 65}, ValueError),
        ({"iterations": 10, "seed": -1}, ValueError),
    ],
)
def test_bad_options_raise_clear_errors(options, error):
    st = opening(3)
    before = st.to_dict()
    with pytest.raises(error):
        mcts.search(st, **options)
    assert st.to_dict() == before


def test_bad_states_raise_clear_errors():
    g = caribsim.load_game("puerto_rico", players=3)
    with pytest.raises(ValueError, match="chance"):
        mcts.search(g.new_initial_state(), iterations=10)
    st = opening(3)
    caribsim.random_playouts(st, 1)  # leaves st unchanged
    end = st.clone()
    while not end.is_terminal():
        end.apply_action(
            end.legal_actions()[0]
        ) if not end.is_chance_node() else end.resolve_chance()
    with pytest.raises(ValueError, match="terminal"):
        mcts.search(end, iterations=10)
    with pytest.raises(TypeError):
        mcts.search("state", iterations=10)


# --- bots -------------------------------------------------------------------------


def test_random_bot_is_reproducible_and_legal():
    st = opening(4)
    a, b = bots.RandomBot(seed=3), bots.RandomBot(seed=3)
    for _ in range(50):
        if st.is_terminal():
            break
        if st.is_chance_node():
            st.resolve_chance()
            continue
        x, y = a.step(st), b.step(st)
        assert x == y and x in st.legal_actions()
        st.apply_action(x)


def test_greedy_bot_takes_the_best_immediate_gain():
    """Trader: selling coffee gains 4 doubloons (the tie-break), corn nothing."""
    sc = Scenario(players=3)
    sc.goods(0, corn=1, coffee=1)
    st = sc.play_role("trader", 0)
    assert legal(st) == {"sell corn", "sell coffee", "pass"}
    assert st.action_to_string(bots.GreedyBot().step(st)) == "sell coffee"


def test_mcts_bot_plays_the_only_move_without_searching():
    st = captain_blocking_position()
    act(st, "ship corn on 6")  # seat 1 must load sugar on the 4-ship
    assert legal(st) == {"ship sugar on 4"}
    bot = bots.MCTSBot(iterations=100)
    assert st.action_to_string(bot.step(st)) == "ship sugar on 4"
    assert bot.last_result is None


def test_bots_refuse_non_decision_nodes():
    g = caribsim.load_game("puerto_rico", players=3)
    for bot in (bots.RandomBot(), bots.GreedyBot(), bots.MCTSBot(iterations=10)):
        with pytest.raises(ValueError, match="chance"):
            bot.step(g.new_initial_state())


@pytest.mark.parametrize(
    "spec, kind",
    [
        ("random", bots.RandomBot),
        ("greedy", bots.GreedyBot),
        ("mcts:200", bots.MCTSBot),
        ("mcts:200:rollout=heuristic:c=0.7", bots.MCTSBot),
    ],
)
def test_parse_bot(spec, kind):
    assert isinstance(bots.parse_bot(spec), kind)


def test_parse_bot_options():
    b = bots.parse_bot("mcts:300:reward=rank:threads=2:reuse=false")
    assert b.options == {"iterations": 300, "reward": "rank", "threads": 2, "reuse": False}


@pytest.mark.parametrize(
    "spec",
    ["", "randomly", "mcts:x", "mcts:100:speed=3", "mcts:100:c", "mcts:100:reward=vp", "greedy:3"],
)
def test_parse_bot_rejects_bad_specs(spec):
    with pytest.raises((ValueError, TypeError)):
        bots.parse_bot(spec)


# --- arena ------------------------------------------------------------------------


def test_arena_rotates_seats_and_is_reproducible_across_processes(tmp_path):
    players = [bots.GreedyBot(), bots.RandomBot(), bots.RandomBot()]
    one = arena.play_match("puerto_rico", players, n_games=6, seed=4, players=3)
    two = arena.play_match(
        "puerto_rico",
        players,
        n_games=6,
        seed=4,
        players=3,
        processes=2,
        save=tmp_path / "match.json",
    )
    assert one.games == two.games
    for b in one.bots:
        assert b.seat_games == [2, 2, 2]
    assert abs(sum(b.wins for b in one.bots) - 6) < 1e-9
    saved = json.loads((tmp_path / "match.json").read_text())
    assert saved["n_games"] == 6 and len(saved["bots"]) == 3
    assert [b["wins"] for b in saved["bots"]] == [b.wins for b in two.bots]
    for b in one.bots:
        lo, hi = b.ci95
        assert 0.0 <= lo <= b.win_rate <= hi <= 1.0


def test_arena_mcts_beats_random_players():
    result = arena.play_match(
        "puerto_rico",
        [bots.MCTSBot(iterations=200), bots.RandomBot(), bots.RandomBot(), bots.RandomBot()],
        n_games=8,
        players=4,
    )
    assert result.bots[0].win_rate >= 0.75
    assert result.bots[0].mean_score > max(b.mean_score for b in result.bots[1:])


def test_wilson_interval():
    lo, hi = arena.wilson_interval(1.0, 200)
    assert 0.98 < lo < 1.0 and hi == 1.0
    lo, hi = arena.wilson_interval(0.5, 100)
    assert abs(lo - 0.404) < 0.002 and abs(hi - 0.596) < 0.002


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"bots": [bots.RandomBot()] * 2}, ValueError),  # 3 seats, 2 bots
        ({"n_games": 0}, ValueError),
        ({"n_games": 2.0}, TypeError),
        ({"processes": 0}, ValueError),
        ({"bots": [object()] * 3}, TypeError),
    ],
)
def test_arena_bad_arguments(kwargs, error):
    args = {"bots": [bots.RandomBot()] * 3, "n_games": 2}
    args.update(kwargs)
    with pytest.raises(error):
        arena.play_match("puerto_rico", players=3, **args)


def test_derive_seed_depends_only_on_its_inputs():
    assert arena.derive_seed(1, 2) == arena.derive_seed(1, 2)
    assert len({arena.derive_seed(0, g) for g in range(1000)}) == 1000
