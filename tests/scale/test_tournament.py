"""Tournaments (caribsim.scale.tournament): balanced seat schedules, the same results on every
backend, Plackett-Luce ratings and pairwise win shares, and clear errors."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
import sys
from collections import Counter

import pytest
from extras import need

from caribsim.human import records
from caribsim.scale import tournament
from caribsim.search.bots import RandomBot

POOLS = [(3, 2), (4, 2), (5, 2), (5, 3), (6, 3), (6, 4), (5, 5), (7, 5)]


def wilson(p, n, z=1.96):
    """The Wilson score interval, written out from its formula."""
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def seat_counts(seatings, n_bots, players):
    counts = Counter((b, s) for seating in seatings for s, b in enumerate(seating))
    return [counts[b, s] for b in range(n_bots) for s in range(players)]


def games_per_bot(seatings, n_bots):
    counts = Counter(b for seating in seatings for b in seating)
    return [counts[b] for b in range(n_bots)]


# --------------------------------------------------------------------------------------
# seat schedules
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("n_bots, players", POOLS)
def test_round_robin_seats_every_combination_in_every_rotation(n_bots, players):
    cycle = math.comb(n_bots, players) * players
    seatings = tournament.seat_schedule("round-robin", n_bots, players, 2 * cycle)
    assert len(seatings) == 2 * cycle
    assert all(len(set(s)) == players for s in seatings)
    # every combination comes 2 x players times, each of its bots once in each seat per cycle
    by_combination = Counter(tuple(sorted(s)) for s in seatings)
    assert set(by_combination) == set(itertools.combinations(range(n_bots), players))
    assert set(by_combination.values()) == {2 * players}
    per_seat = 2 * math.comb(n_bots - 1, players - 1)  # combinations holding a bot, twice
    assert set(seat_counts(seatings, n_bots, players)) == {per_seat}
    assert set(games_per_bot(seatings, n_bots)) == {per_seat * players}


@pytest.mark.parametrize("n_bots, players", POOLS)
@pytest.mark.parametrize("n_games", [3, 7, 10, 23])
def test_random_schedule_is_balanced_within_one(n_bots, players, n_games):
    if n_games * players < n_bots:
        n_games = -(-n_bots // players)  # the fewest games where all play
    for seed in range(4):
        seatings = tournament.seat_schedule("random", n_bots, players, n_games, seed)
        assert len(seatings) == n_games
        assert all(len(set(s)) == players and set(s) <= set(range(n_bots)) for s in seatings)
        seats = seat_counts(seatings, n_bots, players)
        played = games_per_bot(seatings, n_bots)
        assert max(seats) - min(seats) <= 1, (seed, seats)
        assert max(played) - min(played) <= 1, (seed, played)
        assert sum(played) == n_games * players


def test_random_schedule_depends_on_the_seed_only():
    one = tournament.seat_schedule("random", 6, 3, 40, seed=9)
    assert one == tournament.seat_schedule("random", 6, 3, 40, seed=9)
    assert one != tournament.seat_schedule("random", 6, 3, 40, seed=10)
    # every pair of bots meets somewhere in 40 random games
    met = {frozenset(p) for s in one for p in itertools.combinations(s, 2)}
    assert len(met) == math.comb(6, 2)


@pytest.mark.parametrize(
    "args, match",
    [
        (("swiss", 4, 2, 12), "schedule must be one of round-robin, random, got 'swiss'"),
        (("round-robin", 2, 3, 6), "at least as many bots as seats: 3 seats, got 2 bots"),
        (("random", 1, 2, 6), "at least as many bots as seats: 2 seats, got 1 bot$"),
        (
            ("round-robin", 4, 2, 13),
            r"round-robin of 4 bots in 2 seats is 12 games \(6 combinations x 2 "
            r"rotations\): games must be a multiple of 12, got 13",
        ),
        (("random", 7, 2, 3), "needs at least 4 games for every bot to play, got 3"),
    ],
)
def test_bad_schedules_are_refused(args, match):
    with pytest.raises(ValueError, match=match):
        tournament.seat_schedule(*args)


# --------------------------------------------------------------------------------------
# rankings, ratings, pairwise shares on synthetic games
# --------------------------------------------------------------------------------------
def test_a_game_is_ranked_by_returns_then_scores():
    assert tournament.game_ranks([0.5, 0.5, 0.0], [40, 40, 30]) == [1, 1, 3]  # a shared win
    assert tournament.game_ranks([1.0, 0.0, 0.0], [50, 45, 45]) == [1, 2, 2]  # an equal loss
    assert tournament.game_ranks([0.0, 1.0, 0.0], [45, 45, 30]) == [2, 1, 3]  # won on the tie-break
    assert tournament.game_ranks([0.5, 0.0, 0.5], [41, 44, 40]) == [
        1,
        3,
        1,
    ]  # shared, whatever the scores


def synthetic_games(winner, n_bots, players, n_games, seed):
    """Random seatings where ``winner`` always finishes first and the others in random order."""
    rng = random.Random(seed)
    games = []
    for _ in range(n_games):
        seats = rng.sample(range(n_bots), players)
        if winner not in seats:
            seats[rng.randrange(players)] = winner
        scores = [100 if b == winner else rng.randrange(50) for b in seats]
        returns = [1.0 if b == winner else 0.0 for b in seats]
        games.append({"seat_bot": seats, "returns": returns, "scores": scores, "length": 1})
    return games


def test_ratings_put_a_bot_that_always_wins_first():
    need("rating")
    games = synthetic_games(winner=2, n_bots=5, players=3, n_games=60, seed=4)
    rated = tournament.ratings(games, 5)
    ordinals = [mu - 3 * sigma for mu, sigma in rated]
    assert max(range(5), key=lambda b: ordinals[b]) == 2
    assert all(rated[2][0] > rated[b][0] + 3 for b in range(5) if b != 2)
    names = ["a", "b", "c", "d", "e"]
    result = tournament.summarize(
        "cuba", {}, names, [g["seat_bot"] for g in games], games, "random", 0
    )
    top = result.leaderboard()[0]
    assert top.name == "c" and top.rank == 1 and top.win_rate == 1.0
    assert top.ordinal == pytest.approx(top.mu - 3 * top.sigma)
    assert top.interval == pytest.approx((top.mu - 3 * top.sigma, top.mu + 3 * top.sigma))
    assert [b.rank for b in result.leaderboard()] == [1, 2, 3, 4, 5]
    assert [b.ordinal for b in result.leaderboard()] == sorted(ordinals, reverse=True)
    # a sixth bot that sat in no game keeps the prior rating and has no win rate
    idle = tournament.summarize(
        "cuba", {}, [*names, "f"], [g["seat_bot"] for g in games], games, "random", 0
    )
    f = idle.bots[5]
    assert (f.games, f.win_rate, f.ci95, f.mean_score, f.seat_games) == (
        0,
        None,
        None,
        None,
        [0, 0, 0],
    )
    assert (f.mu, f.sigma) == pytest.approx((25.0, 25.0 / 3))
    assert all(p.games == 0 and p.share is None for p in idle.pairs if "f" in (p.a, p.b))
    assert re.search(r"\bf\s+-?\d+\.\d\d  \[.*\]\s+0\s+-$", idle.table(), re.M)


def test_ratings_are_openskill_plackett_luce_game_by_game():
    need("rating")
    from openskill.models import PlackettLuce

    games = synthetic_games(winner=0, n_bots=3, players=2, n_games=5, seed=1)
    model = PlackettLuce()
    rated = [model.rating() for _ in range(3)]
    for g in games:
        order = sorted(range(2), key=lambda s: -g["scores"][s])
        ranks = [order.index(s) + 1 for s in range(2)]
        new = model.rate([[rated[b]] for b in g["seat_bot"]], ranks=ranks)
        for b, team in zip(g["seat_bot"], new):
            rated[b] = team[0]
    assert tournament.ratings(games, 3) == [
        (pytest.approx(r.mu), pytest.approx(r.sigma)) for r in rated
    ]


def test_pairwise_shares_and_intervals():
    need("rating")

    def game(seats, returns, scores):
        return {"seat_bot": seats, "returns": returns, "scores": scores, "length": 10}

    games = (
        [game([0, 1], [1.0, 0.0], [30, 20])] * 3  # 0 above 1, three times
        + [game([1, 0], [1.0, 0.0], [30, 20])]  # 1 above 0
        + [game([0, 1], [0.5, 0.5], [25, 25])]  # a tie: a half each
        + [game([2, 1], [1.0, 0.0], [40, 10])] * 2
    )  # 2 above 1; 0 and 2 never meet
    met, above = tournament.pairwise(games, 3)
    assert met[0][1] == met[1][0] == 5 and met[1][2] == 2 and met[0][2] == 0
    assert above[0][1] == 3.5 and above[1][0] == 1.5 and above[2][1] == 2.0
    result = tournament.summarize(
        "cuba", {}, ["x", "y", "z"], [g["seat_bot"] for g in games], games, "random", 0
    )
    pairs = {(p.a, p.b): p for p in result.pairs}
    assert len(pairs) == 3
    xy = pairs.get(("x", "y")) or pairs[("y", "x")]
    share_x = 3.5 / 5
    expect = share_x if xy.a == "x" else 1 - share_x
    assert xy.games == 5 and xy.share == pytest.approx(expect)
    assert xy.ci95 == pytest.approx(wilson(expect, 5))
    zy = pairs.get(("z", "y")) or pairs[("y", "z")]
    assert zy.share == (1.0 if zy.a == "z" else 0.0)
    assert zy.ci95 == pytest.approx(tuple(min(1.0, max(0.0, v)) for v in wilson(zy.share, 2)))
    xz = pairs.get(("x", "z")) or pairs[("z", "x")]
    assert xz.games == 0 and xz.share is None and xz.ci95 is None
    assert "never met" in result.table()
    # every pair is listed once, the higher on the leaderboard first
    ranks = {b.name: b.rank for b in result.bots}
    assert all(ranks[p.a] < ranks[p.b] for p in result.pairs)


# --------------------------------------------------------------------------------------
# real tournaments
# --------------------------------------------------------------------------------------
def test_greedy_tops_a_small_tournament_of_random_bots(tmp_path):
    need("rating")
    result = tournament.play_tournament(
        "cuba", ["random", "greedy", "random"], 12, players=2, seed=1, save_games=tmp_path
    )
    names = [b.name for b in result.bots]
    assert names == ["random #1", "greedy", "random #2"]
    assert result.leaderboard()[0].name == "greedy"
    # the per-bot figures are those of the games the bot sat in
    for b, bot in enumerate(result.bots):
        mine = [(g, g["seat_bot"].index(b)) for g in result.games if b in g["seat_bot"]]
        assert bot.games == len(mine) == 8
        assert bot.wins == sum(g["returns"][s] for g, s in mine)
        assert bot.mean_score == pytest.approx(sum(g["scores"][s] for g, s in mine) / len(mine))
        assert bot.seat_games == [4, 4]
    # greedy's pairwise shares are what its games say, and each game's record names its seats
    for p in result.pairs:
        a, b = names.index(p.a), names.index(p.b)
        both = [g for g in result.games if a in g["seat_bot"] and b in g["seat_bot"]]
        above = sum(
            1.0
            if g["ranks"][g["seat_bot"].index(a)] < g["ranks"][g["seat_bot"].index(b)]
            else 0.5
            if g["ranks"][g["seat_bot"].index(a)] == g["ranks"][g["seat_bot"].index(b)]
            else 0.0
            for g in both
        )
        assert p.games == len(both) == 4 and p.share == pytest.approx(above / len(both))
    for g, game in enumerate(result.games):
        rec = records.load(tmp_path / f"game_{g:05d}.json")
        assert rec["players"] == [names[b] for b in game["seat_bot"]]
        assert records.replay(rec).returns() == game["returns"]


def test_the_same_seed_gives_the_same_tournament_on_every_backend():
    need("rating")
    pool = ["random", "greedy", "random", "random"]
    kwargs = dict(schedule="random", seed=5, players=3, progress=False)
    local = tournament.play_tournament("puerto_rico", pool, 7, **kwargs)
    procs = tournament.play_tournament(
        "puerto_rico", pool, 7, backend="processes", workers=2, chunk_size=2, **kwargs
    )
    assert (local.backend, procs.backend, procs.chunks) == ("local", "processes", 4)
    assert procs.games == local.games
    assert procs.bots == local.bots and procs.pairs == local.pairs
    other = tournament.play_tournament("puerto_rico", pool, 7, **{**kwargs, "seed": 6})
    assert other.games != local.games


def test_the_result_as_json(tmp_path):
    need("rating")
    result = tournament.play_tournament(
        "cuba", ["greedy", "random", "random"], 6, players=2, save=tmp_path / "t.json"
    )
    data = json.loads((tmp_path / "t.json").read_text())
    assert data == json.loads(result.to_json())
    assert [b["name"] for b in data["bots"]] == [b.name for b in result.bots]
    assert data["schedule"] == "round-robin" and data["players"] == 2 and len(data["games"]) == 6
    assert data["rating"] == {"model": "openskill PlackettLuce", "z": 3.0}


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="at least as many bots as seats: 3 seats, got 2 bots"):
        tournament.play_tournament("cuba", ["random", "greedy"], 6, players=3)
    with pytest.raises(ValueError, match="unknown bot spec 'sleepy'"):
        tournament.play_tournament("cuba", ["random", "sleepy"], 2, players=2)
    with pytest.raises(ValueError, match="schedule must be one of round-robin, random"):
        tournament.play_tournament("cuba", ["random"] * 3, 6, schedule="league", players=2)
    bot = RandomBot()
    with pytest.raises(ValueError, match="bots 0 and 2 are the same object"):
        tournament.play_tournament("cuba", [bot, RandomBot(), bot], 6, players=2)
    with pytest.raises(TypeError, match="a bot needs step"):
        tournament.play_tournament("cuba", [RandomBot(), object()], 2, players=2)
    with pytest.raises(ValueError, match="backend must be one of"):
        tournament.play_tournament("cuba", ["random"] * 3, 6, players=2, backend="cloud")


def test_a_missing_openskill_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "openskill", None)
    monkeypatch.setitem(sys.modules, "openskill.models", None)
    with pytest.raises(RuntimeError, match=r"need openskill: pip install 'caribsim\[rating\]'"):
        tournament.play_tournament("cuba", ["random"] * 3, 6, players=2, save_games=tmp_path / "g")
    assert not (tmp_path / "g").exists()  # refused before any game was played


def test_the_plot_names_the_bots_in_leaderboard_order(tmp_path):
    need("rating")
    need("plot")
    result = tournament.play_tournament("cuba", ["random", "greedy", "random"], 6, players=2)
    fig = tournament.figure(result)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == [b.name for b in result.leaderboard()]
    tournament.plot(result, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_tournament_resumes_from_its_finished_chunks(tmp_path):
    need("rating")
    kwargs = dict(schedule="random", seed=2, players=2, chunk_size=2, resume=tmp_path / "r")
    first = tournament.play_tournament("cuba", ["random", "greedy", "random"], 5, **kwargs)
    again = tournament.play_tournament("cuba", ["random", "greedy", "random"], 5, **kwargs)
    assert (first.chunks, first.resumed_chunks, again.chunks, again.resumed_chunks) == (3, 0, 0, 3)
    assert again.games == first.games and again.bots == first.bots
    with pytest.raises(ValueError, match="holds chunks of another run"):
        tournament.play_tournament(
            "cuba", ["random", "greedy", "random"], 6, **{**kwargs, "schedule": "round-robin"}
        )
