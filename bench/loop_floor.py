"""The Python random loop's floor: the same loop over a stand-in whose methods are the
cheapest C builtins of the same shapes (no game at all), with each game's share of chance
nodes and its mean legal-list length, against the real loop of today's build.

    OPENBLAS_NUM_THREADS=1 python bench/loop_floor.py

What is left between the two is the engine's part of the loop (docs/performance.md).
"""

import itertools
import random
import statistics

from compare_builds import python_loop as loop  # the same loop (bench/ is on the path when run)

import caribsim


class Stand:
    pass


def stand_in(chance_share, legal_len, game_len):
    s = Stand()
    pattern = [True] * round(chance_share * 100) + [False] * (100 - round(chance_share * 100))
    random.Random(1).shuffle(pattern)
    term = [False] * (game_len - 1) + [True]
    s.is_terminal = itertools.cycle(term).__next__
    s.is_chance_node = itertools.cycle(pattern).__next__
    s.legal_actions = list(range(legal_len)).copy
    s.apply_action = set().discard
    s.resolve_chance = int
    return s


for game, opts in (
    ("puerto_rico", {"players": 3}),
    ("puerto_rico", {"players": 5}),
    ("port_royal", {"players": 3}),
    ("cuba", {"players": 4}),
):
    st = caribsim.load_game(game, **opts).new_initial_state(seed=1)
    rng = random.Random(3)
    c = st.clone()
    ch = dec = nl = steps = games = 0
    while steps < 200000:
        if c.is_terminal():
            c = st.clone()
            games += 1
        elif c.is_chance_node():
            c.resolve_chance()
            ch += 1
        else:
            la = c.legal_actions()
            nl += len(la)
            dec += 1
            c.apply_action(rng.choice(la))
        steps += 1
    share, mean_len = ch / (ch + dec), round(nl / dec)
    glen = steps // max(games, 1)
    s = stand_in(share, max(mean_len, 1), glen)
    real, floor = [], []
    for _ in range(7):
        real.append(loop(st, 100000, lambda x: x.clone()))
        floor.append(loop(s, 100000, lambda x: x))
    print(
        f"{game} {opts}: chance share {share:.2f}, legal {nl / dec:.1f}: real {statistics.median(real):,.0f}/s, "
        f"stand-in floor {statistics.median(floor):,.0f}/s; today's engine share of the loop "
        f"{1 - statistics.median(real) / statistics.median(floor):.2f}"
    )
