"""What Cuba's moves tell a person: the Trader's price (rules §6.4.1: "sell sugar" says what
it pays, "buy rum" what it costs, from the market's tracks in the game's data) and the
Lighthouse's ships by their cargo, never an id."""

from __future__ import annotations

import random

import pytest

import caribsim
from caribsim.human.boards import cuba as board


def _decision(game, verb: str, seed: int):
    """The first state of random play (games of seeds 0..49) where the player to act has a
    move named ``verb ...``."""
    rng = random.Random(seed)
    for game_seed in range(50):
        s = game.new_initial_state(seed=game_seed)
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.choice([a for a, _ in s.chance_outcomes()]))
                continue
            if any(s.action_to_string(a).startswith(verb + " ") for a in s.legal_actions()):
                return s
            s.apply_action(rng.choice(s.legal_actions()))
    raise AssertionError(f"no {verb!r} decision in 50 random games")


def _trader_decision(players=3):
    """A state where the player to act may buy and sell at the market (random play)."""
    game = caribsim.load_game("cuba", players=players)
    return game, _decision(game, "buy", 7)


def _labels(state) -> dict:
    return {
        state.action_to_string(a): board.choice_label(state, a)
        for a in state.legal_actions()
        if state.action_to_string(a).startswith(("buy ", "sell "))
    }


def _with_market(game, state, market: dict, kind=None):
    """``state`` with the market's tokens set, and one ``kind`` more in the acting yard (the
    supply gives and takes the difference: items are conserved)."""
    d = state.to_dict()
    for k, n in market.items():
        d["supply"][k] -= n - d["market"][k]
        d["market"][k] = n
    if kind is not None:
        d["boards"][d["player"]]["yard"][kind] += 1
        d["supply"][kind] -= 1
    return game.state_from_dict(d)


def _data(game):
    data = game.component_data()
    return data["setup"], dict(zip(board.CARGO, (m["prices"] for m in data["market"])))


def test_6_4_1_at_the_start_a_crop_buys_at_4_and_sells_at_3_a_good_buys_at_5_sells_at_4():
    game, s = _trader_decision()
    start = {k: m["start_covered"] for k, m in zip(board.CARGO, game.component_data()["market"])}
    for kind in board.CARGO:
        labels = _labels(_with_market(game, s, start, kind))
        buy, sell = (4, 3) if kind in board.CROPS else (5, 4)
        assert labels[f"buy {kind}"] == f"buy {kind}: costs {buy} pesos", labels
        assert labels[f"sell {kind}"] == f"sell {kind}: +{sell} pesos", labels


@pytest.mark.parametrize("kind", ["sugar", "cigar"])
def test_6_4_1_an_empty_track_buys_from_the_supply_a_full_one_sells_to_it(kind):
    game, s = _trader_decision()
    setup, prices = _data(game)
    empty = _labels(_with_market(game, s, {kind: 0}, kind))
    assert (
        empty[f"buy {kind}"] == f"buy {kind}: costs {setup['market_buy_from_supply_price']} pesos"
    )
    assert empty[f"sell {kind}"] == f"sell {kind}: +{prices[kind][0]} pesos"
    full = _labels(_with_market(game, s, {kind: len(prices[kind])}, kind))
    crop = kind in board.CROPS
    to_supply = setup[f"market_sell_to_supply_price_{'crop' if crop else 'good'}"]
    assert to_supply == (1 if crop else 3)  # the printed rule, read from the data
    assert full[f"sell {kind}"] == f"sell {kind}: +{to_supply} {'peso' if crop else 'pesos'}"
    assert full[f"buy {kind}"] == f"buy {kind}: costs {prices[kind][-1]} pesos"
    # one space free: selling pays the most expensive free space (the track's last)
    one_free = _labels(_with_market(game, s, {kind: len(prices[kind]) - 1}, kind))
    assert one_free[f"sell {kind}"] == f"sell {kind}: +{prices[kind][-1]} pesos"


def test_7_the_lighthouse_names_each_ship_by_what_it_takes_not_its_id():
    """The Lighthouse (rules §7, D37) names any ship of the deck: each choice says the ship's
    cargo slots from the game's data, and no two choices read alike."""
    game = caribsim.load_game("cuba", players=3)
    s = _decision(game, "lighthouse", 2)
    names = {a: s.action_to_string(a) for a in s.legal_actions()}
    ships = {a: n.split(" ", 1)[1] for a, n in names.items() if n.startswith("lighthouse ")}
    slots = {x["id"]: x["slots"] for x in game.component_data()["ships"]}
    labels = {a: board.choice_label(s, a) for a in ships}
    for a, ship in ships.items():
        takes = ", ".join(f"{n} {k}" for k, n in zip(board.CARGO, slots[ship]) if n)
        assert labels[a] == f"lighthouse: to sea the ship for {takes}"
        assert ship not in labels[a]
    assert len(set(labels.values())) == len(labels) >= 2


def test_a_drawn_ship_and_a_drawn_law_are_named_by_what_they_are_not_their_ids():
    """The chance steps of setup and parliament: a ship by the slots its card has in the
    game's data ("ship draw (2 sugar, 1 citrus)"), a law by its text ("law draw tax: 2
    pesos"); never "ship_14" or "tax_2"."""
    game = caribsim.load_game("cuba", players=3)
    slots = {s["id"]: s["slots"] for s in game.component_data()["ships"]}
    cargo = ("sugar", "citrus", "tobacco", "rum", "cigar")
    s, seen = game.new_initial_state(seed=4), set()
    rng = random.Random(4)
    while not s.is_terminal() and len(s.history()) < 400:
        if not s.is_chance_node():
            s.apply_action(rng.choice(s.legal_actions()))
            continue
        for a, _ in s.chance_outcomes():
            name = s.action_to_string(a)
            text = board.move_text(s, name)
            kind, _, what = name.rpartition(" ")
            if kind == "ship draw":
                want = ", ".join(f"{n} {k}" for k, n in zip(cargo, slots[what]) if n)
                assert text == f"ship draw ({want})", (name, text)
                seen.add(kind)
            elif kind == "law draw":
                assert "_" not in text, (name, text)  # no id such as tax_2
                assert text == "law draw " + board._tables(game)["laws"][what]["text"]
                seen.add(kind)
            else:
                assert text == name
        s.resolve_chance()
    assert seen == {"ship draw", "law draw"}
