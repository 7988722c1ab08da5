"""The engines' board text (``str(state)``) as a person reads it."""

from __future__ import annotations

import random
import re

import pytest

import caribsim


@pytest.mark.parametrize("game", ["puerto_rico", "port_royal", "cuba"])
def test_the_board_text_says_one_coin_not_one_coins(game):
    """str(state) puts each count's noun in its number: "1 doubloon", "2 doubloons"."""
    nouns = {
        "puerto_rico": [("doubloon", "doubloons"), ("VP chip", "VP chips")],
        "port_royal": [("coin", "coins"), ("sword", "swords")],
        "cuba": [("peso", "pesos")],
    }[game]
    rng, seen = random.Random(3), set()
    s = caribsim.load_game(game, players=3).new_initial_state(seed=3)
    while not s.is_terminal():
        text = str(s)
        for one, many in nouns:
            for n, word in re.findall(rf"\b(\d+) ({one}|{many})\b", text):
                assert word == (one if n == "1" else many), (n, word)
                seen.add((n == "1", one))
        s.apply_action(
            rng.choice(
                [a for a, _ in s.chance_outcomes()] if s.is_chance_node() else s.legal_actions()
            )
        )
    assert {(False, one) for one, _ in nouns} <= seen  # the plural seen in every game
    assert any(single for single, _ in seen)  # and a singular
