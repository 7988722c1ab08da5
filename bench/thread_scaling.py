"""Two search threads over one, and the machine's own two-core scaling, in the same run.

    python bench/thread_scaling.py [ROUNDS] [SIMULATIONS]     # defaults 9, 2000

UCT from the Puerto Rico 3p opening: alternating rounds of 10 searches per side
(`mcts.search`, a new searcher each), the median of the rounds' ratios; then, as the
reference for this machine at this moment, C playouts spread over one and two threads
(no search at all) in as many rounds (docs/performance.md, "MCTS").
"""

import statistics
import sys
import time

import caribsim
from caribsim import mcts

g = caribsim.load_game("puerto_rico", players=3)
st = g.new_initial_state(seed=1)
while st.is_chance_node():
    st.resolve_chance()
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
it = int(sys.argv[2]) if len(sys.argv) > 2 else 2000


def side(threads):
    t = time.perf_counter()
    for i in range(10):
        mcts.search(st, iterations=it, threads=threads, seed=i)
    return 10 * it / (time.perf_counter() - t)


ratios, ones, twos = [], [], []
for r in range(rounds):
    if r % 2 == 0:
        a = side(1)
        b = side(2)
    else:
        b = side(2)
        a = side(1)
    ones.append(a)
    twos.append(b)
    ratios.append(b / a)
print(
    f"{it} sims: 1 thread {statistics.median(ones):,.0f} sims/s, 2 threads {statistics.median(twos):,.0f}; "
    f"ratio median {statistics.median(ratios):.3f} (rounds {min(ratios):.3f}-{max(ratios):.3f})"
)
# the machine's own scaling: independent C playouts, 1 thread against 2, same rounds
pr, games = [], 1500
for r in range(rounds):
    t = time.perf_counter()
    caribsim.random_playouts(st, games, seed=r, threads=1)
    a = time.perf_counter() - t
    t = time.perf_counter()
    caribsim.random_playouts(st, games, seed=r, threads=2)
    b = time.perf_counter() - t
    pr.append(a / b)
print(
    f"independent playouts ({games} games ~ the same time): 2 threads / 1 thread median {statistics.median(pr):.3f} (rounds {min(pr):.3f}-{max(pr):.3f})"
)
