"""The benchmark harness itself (bench/_bench_helpers.py): floors are ratios to a
calibration workload timed in the same process, so the suite must pass on a busy machine
and fail on a real regression.

- a fake benchmark wired to the same assert: the calibration against itself passes its
  floor, the same work made 30% slower fails it;
- speed-ups are asserted only on idle cores, and the probe sees a CPU-bound neighbour;
- a collapse guard says so and still asserts.

The whole short suite beside CPU-bound processes, and every floor's distance to its ratio
(a 30% slowdown must cross it), is tested in
bench/test_harness_suite.py (it runs every benchmark several times: minutes, so it runs with
the benchmarks, not with every ``pytest tests``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))
import _bench_helpers as bh

from caribsim import _calibrate


class FakeBenchmark:
    """What the helpers use of pytest-benchmark's fixture."""

    def __init__(self, name="fake"):
        self.name = name
        self.extra_info = {}
        self.group = None

    def pedantic(self, fn, rounds, iterations=1, warmup_rounds=0):
        for _ in range(rounds):
            fn()


def _calibration_against_itself(extra_fraction, floor):
    """A fake benchmark: the C calibration loop itself, plus ``extra_fraction`` more of it
    per round, measured by ``paired`` against the calibration."""
    n = 150_000  # ~20 ms a round: long enough for a busy machine's noise
    work = lambda: _calibrate.c_work(int(n * (1 + extra_fraction)), 512, 3)  # noqa: E731
    return bh.paired(
        FakeBenchmark(),
        work,
        units=n,
        calibration=bh.c_calibration(),
        n_rounds=11,
        floor=floor,
        unit="fake_per_second",
    )


def test_paired_ratio_of_the_calibration_to_itself_is_one():
    m = _calibration_against_itself(0.0, floor=0.0)
    assert len(m.ratios) == 11
    assert 0.85 < m.ratio < 1.15, m.ratios


def test_paired_floor_passes_and_a_30_percent_slower_benchmark_fails():
    base = _calibration_against_itself(0.0, floor=0.0).ratio
    floor = round(0.8 * base, 3)  # the margin the bench FLOORS use
    _calibration_against_itself(0.0, floor=floor)  # passes
    with pytest.raises(AssertionError, match=r"below the floor"):
        _calibration_against_itself(1 / 0.7 - 1, floor=floor)  # 30% fewer per second


def test_paired_reports_absolute_calibration_and_ratio():
    fb = FakeBenchmark()
    bh.paired(
        fb,
        lambda: sum(range(20_000)),
        units=20_000,
        calibration=bh.py_calibration(),
        n_rounds=3,
        floor=0.0,
        unit="sums_per_second",
    )
    info = fb.extra_info
    assert info["sums_per_second"] > 0
    assert info["calibration_py_work_calls_per_second"] > 0
    assert info["ratio_to_calibration"] == pytest.approx(
        info["sums_per_second"] / info["calibration_py_work_calls_per_second"], rel=0.5
    )
    assert info["rounds"] == 3


def test_calibration_loop_is_deterministic_and_validates():
    assert _calibrate.c_work(1000, 256, 5) == _calibrate.c_work(1000, 256, 5)
    assert _calibrate.c_work(1000, 256, 5) != _calibrate.c_work(1000, 256, 6)
    with pytest.raises(ValueError, match="iterations must be >= 0"):
        _calibrate.c_work(-1)
    with pytest.raises(ValueError, match="state_bytes"):
        _calibrate.c_work(10, 4)
    with pytest.raises(ValueError, match="states must be >= 1"):
        _calibrate.c_work(10, 512, 1, 0)
    with pytest.raises(ValueError, match="threads must be in"):
        _calibrate.c_work_threads(10, 0)


def test_floor_playouts_are_deterministic_and_validate():
    one = _calibrate.floor_playouts(50, 64, 624, 3)
    assert one == _calibrate.floor_playouts(50, 64, 624, 3)
    # every argument changes what is played
    assert (
        len(
            {
                one,
                *(
                    _calibrate.floor_playouts(*a)
                    for a in [
                        (51, 64, 624, 3),
                        (50, 65, 624, 3),
                        (50, 64, 625, 3),
                        (50, 64, 624, 4),
                    ]
                ),
            }
        )
        == 5
    )
    for args, message in (
        ((-1,), "games must be >= 0"),
        ((1, 0), "decisions must be in"),
        ((1, 8, 4), "state_bytes must be in"),
    ):
        with pytest.raises(ValueError, match=message):
            _calibrate.floor_playouts(*args)


def test_the_clock_chain_computes_its_chain_and_counts_its_operations():
    """The chain's result is its recurrence, step by step (so the compiler kept every step),
    and it counts two one-cycle operations a step."""
    x, mask = 7, (1 << 64) - 1
    for _ in range(1000):
        x = ((x + 0x9E3779B97F4A7C15) & mask) ^ 0xD1B54A32D192ED03
    assert _calibrate.clock_chain(1000, 7) == (x, 2000)
    assert _calibrate.clock_chain(0, 5) == (5, 0)
    with pytest.raises(ValueError, match="steps must be >= 0"):
        _calibrate.clock_chain(-1)


# --------------------------------------------------------------------------------------
# speed-ups: asserted on idle cores only
# --------------------------------------------------------------------------------------
def _probe(idle, why=""):
    return bh.IdleProbe(
        cores=2,
        busy_cores=0.0 if idle else 2.0,
        scaling=2.0 if idle else 1.0,
        needed=2,
        idle=idle,
        why=why,
    )


def test_speedup_is_asserted_on_an_idle_machine():
    with pytest.raises(AssertionError, match=r"below the floor 1\.5 on an idle machine"):
        bh.report_speedup(FakeBenchmark(), "speedup", 1.1, 1.5, _probe(True), _probe(True))
    fb = FakeBenchmark()
    bh.report_speedup(fb, "speedup", 1.8, 1.5, _probe(True), _probe(True))
    assert fb.extra_info["asserted"] is True


@pytest.mark.parametrize("busy_at", ["start", "end"])
def test_speedup_is_reported_not_asserted_on_a_busy_machine(busy_at):
    fb = FakeBenchmark()
    busy = _probe(False, "2.00 of 2 CPUs were busy with other work")
    before, after = (busy, _probe(True)) if busy_at == "start" else (_probe(True), busy)
    bh.report_speedup(fb, "speedup", 0.9, 1.5, before, after)
    assert fb.extra_info["asserted"] is False
    assert fb.extra_info["speedup"] == 0.9
    assert "busy with other work" in fb.extra_info["not_asserted_because"]


def test_idle_probe_sees_a_cpu_bound_neighbour():
    with bh.cpu_hogs():
        probe = bh.idle_cores(2)
    assert not probe.idle, probe
    assert probe.why


def test_a_collapse_guard_says_so_and_still_asserts():
    fb = FakeBenchmark("guarded")
    bh.SUMMARY.clear()
    with pytest.raises(AssertionError, match=r"below the floor 2\.0"):
        bh.report(fb, "fakes_per_second", 1.0, bh.c_calibration(), 1.0, 1.0, 2.0, guard=True)
    assert fb.extra_info["floor_is_a_collapse_guard"] is True
    assert bh.SUMMARY[-1].endswith("(floor 2.0, a collapse guard) BELOW FLOOR"), bh.SUMMARY[-1]
    bh.report(FakeBenchmark("plain"), "fakes_per_second", 3.0, bh.c_calibration(), 1.0, 3.0, 2.0)
    assert bh.SUMMARY[-1].endswith("(floor 2.0) ok"), bh.SUMMARY[-1]
    bh.SUMMARY.clear()
