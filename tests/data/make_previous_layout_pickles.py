"""Writes previous_layout.pickle: games, states, bots and a searcher pickled by caribsim
before the layered tree (commit 85f7830, when these were caribsim.puerto_rico,
caribsim.mcts, caribsim.bots, ...), with what each must equal when loaded.
tests/test_layout.py loads it with today's caribsim. Run it with that older caribsim:

    git worktree add --detach /tmp/old 85f7830 && cd /tmp/old
    python setup.py build_ext --inplace
    PYTHONPATH=src python /path/to/tests/data/make_previous_layout_pickles.py OUT.pickle
"""
import pickle
import random
import sys

import caribsim
from caribsim import bots, mcts

cases = []
for name, options in [("puerto_rico", {"players": 3}), ("puerto_rico", {"players": 4, "expansion": True}),
                      ("port_royal", {"players": 3}), ("cuba", {"players": 4})]:
    game = caribsim.load_game(name, **options)
    state = game.new_initial_state(seed=11)
    rng = random.Random(5)
    for _ in range(60):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    cases.append({"game": game, "state": state, "name": name, "options": game.options(),
                  "serialized": state.serialize(), "history": state.history()})
objects = {"cases": cases,
           "bots": [bots.MCTSBot(iterations=50, seed=3), bots.RandomBot(seed=4), bots.GreedyBot(seed=5)],
           "bot_reprs": None,
           "searcher": mcts.Searcher(iterations=40, c=1.1),
           "searcher_options": None}
objects["bot_reprs"] = [repr(b) for b in objects["bots"]]
objects["searcher_options"] = objects["searcher"]._kwargs()
with open(sys.argv[1], "wb") as f:
    pickle.dump(objects, f, protocol=4)
