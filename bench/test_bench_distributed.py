"""Scale-out benchmark: ``caribsim.simulate`` on Ray against one process, in the same run.

Run:    python -m pytest bench/test_bench_distributed.py --benchmark-only
CI:     CARIBSIM_BENCH_SHORT=1 python -m pytest bench --benchmark-only

A speed-up over one process: on this 2-core machine a Ray run of 20,000 random 4-player
Puerto Rico games reaches about 1.6-1.75x the games/s of one process. Both are wall-clock
games/s of ``caribsim.simulate`` (a parallel run is judged by its wall time), alternating
within each round so both see the same machine load; the Ray instance (2 CPUs) is started
and its workers warmed before timing, as on a cluster that is already up. The median of the
rounds' ratios is asserted only when the machine has 2 idle cores at the start and at the
end (see _bench_helpers.idle_cores); otherwise it is reported with the reason.
"""

from __future__ import annotations

import os
import time

import pytest
from _bench_helpers import idle_cores, median, report_speedup, rounds, size

import caribsim
from caribsim import distributed

FLOORS = {
    # Ray (2 CPUs) games/s over one process, 20,000 random 4p games, idle machine only.
    # Medians of 7 alternating rounds measured 1.57-1.77 on an idle 2-vCPU VM (single rounds
    # 1.35-2.0); C threads reach 1.81 in the same run, the hardware's limit for two games
    # at once. The floor catches a collapse (serialised tasks, a worker count of 1).
    "ray_over_one_process_4p": 1.3,
}


@pytest.fixture(scope="module")
def ray_up():
    try:
        import ray
    except ImportError:
        if os.environ.get("CARIBSIM_REQUIRE_RAY") == "1":
            raise
        pytest.skip("Ray is not installed (pip install 'caribsim[ray]')")
    started = not ray.is_initialized()
    distributed.ray_connect(None, 2)
    caribsim.simulate("puerto_rico", 4000, players=4, backend="ray")  # workers import caribsim
    yield ray
    if started:
        ray.shutdown()


def test_bench_ray_over_one_process(benchmark, ray_up):
    n = size(20_000, 20_000)
    local, ray = [], []

    def run():
        for backend, out in (("local", local), ("ray", ray)):
            t0 = time.perf_counter()
            r = caribsim.simulate("puerto_rico", n, players=4, seed=len(out), backend=backend)
            out.append(n / (time.perf_counter() - t0))
            assert r.workers == (1 if backend == "local" else 2)

    n_rounds = rounds(7, 3)
    before = idle_cores(2)
    benchmark.pedantic(run, rounds=n_rounds, iterations=1, warmup_rounds=0)
    after = idle_cores(2)
    gl, gr = median(local), median(ray)
    benchmark.group = "scale-out"
    report_speedup(
        benchmark,
        "ratio_ray_over_one_process_4p",
        median([rr / lr for lr, rr in zip(local, ray)]),
        FLOORS["ray_over_one_process_4p"],
        before,
        after,
        games_per_second_one_process=gl,
        games_per_second_ray=gr,
        ratio_of_medians=gr / gl,
        games=n,
        runs=len(local),
        ray_cpus=2,
    )
