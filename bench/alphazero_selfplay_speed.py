"""Decisions per second of self-play with an AlphaZeroBot: the games one by one (a search,
and one evaluator call per leaf, per decision) against ``batch=`` (every running game's
decision searched by one BatchSearch run, one evaluator call per step for all of them).
Paired, one process; the MLP is trained first on a little MCTS self-play (an untrained one
may never end a Puerto Rico game).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/alphazero_selfplay_speed.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time

from caribsim import selfplay
from caribsim.search import bots, evaluators


def main(games=16, simulations=32, reps=2):
    tmp = tempfile.mkdtemp()
    try:
        selfplay.generate(
            "puerto_rico", "mcts:20", 20, f"{tmp}/data", players=3, seed=0, progress=False
        )
        net, _ = evaluators.train_mlp(f"{tmp}/data", hidden=(64, 64), epochs=10, lr=2e-3, seed=0)
        for label, bot in (
            ("mlp", bots.AlphaZeroBot(net, simulations)),
            ("rollout", bots.parse_bot(f"puct:{simulations}")),
        ):
            for rep in range(reps):
                rates = {}
                for batch in (None, games):
                    out = f"{tmp}/{label}_{rep}_{batch}"
                    t = time.perf_counter()
                    m = selfplay.generate(
                        "puerto_rico",
                        bot,
                        games,
                        out,
                        players=3,
                        seed=rep,
                        batch=batch,
                        games_per_shard=games,
                        progress=False,
                    )
                    rates[batch] = m["decisions"] / (time.perf_counter() - t)
                    shutil.rmtree(out)
                print(
                    f"{label} rep {rep}: one by one {rates[None]:,.0f} decisions/s, batch={games} "
                    f"{rates[games]:,.0f} decisions/s, x{rates[games] / rates[None]:.2f}",
                    flush=True,
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
