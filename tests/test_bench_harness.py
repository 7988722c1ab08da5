"""The benchmark harness itself (bench/_bench_helpers.py): floors are ratios to a
calibration workload timed in the same process, so the suite must pass on a busy machine
and fail on a real regression.

- a fake benchmark wired to the same assert: the calibration against itself passes its
  floor, the same work made 30% slower fails it;
- speed-ups are asserted only on idle cores, and the probe sees a CPU-bound neighbour;
- the whole short benchmark suite passes with one CPU-bound process per core beside it;
- the whole short suite fails, every paired benchmark, when each is made 30% slower
  (CARIBSIM_BENCH_SLOWDOWN=0.3 adds C work to each timed round).

The floors of five memory-bound benchmarks are collapse guards (their ratios move by up to
half with the host): they must pass beside the CPU-bound processes, and are not asked to fail
at a 30% slowdown.

A benchmark that lands on the wrong side of its floor is run again on its own (up to 3 runs
beside the CPU-bound processes, 2 when slowed): one a few percent from its floor crosses it
now and then on a shared VM, a real 30% change crosses it in every run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from extras import need

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


@contextmanager
def cpu_hogs(count=None):
    """One CPU-bound process per core (or ``count``), ended on exit."""
    count = count or os.cpu_count() or 1
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5)
        yield hogs
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait()


def _bench_env(**extra):
    env = dict(os.environ)
    env["CARIBSIM_BENCH_SHORT"] = "1"
    env.pop("CARIBSIM_BENCH_SLOWDOWN", None)
    env.update(extra)
    return env


def _run_suite(env, timeout=1200, only=()):
    """The short suite in a subprocess; ``only``: the benchmarks (by name, parameters
    dropped) to run again, as ``-k`` does."""
    select = ["-k", " or ".join(sorted({name.split("[")[0] for name in only}))] if only else []
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(BENCH),
            "--benchmark-only",
            "-p",
            "no:cacheprovider",
            "-rN",
            "--benchmark-columns=median,rounds",
            *select,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _tries(env, wanted, tries):
    """Run the short suite, then again (up to ``tries`` runs in all) just the benchmarks
    whose summary lines are not ``wanted``: a benchmark a few percent from its floor crosses
    it now and then on a shared VM, a real 30% change crosses it in every run. Returns the
    last summary line(s) of every benchmark, every run's output and the first run's exit code."""
    r = _run_suite(env)
    outputs = [r.stdout + r.stderr]
    lines = _summary(outputs[0])
    for _ in range(tries - 1):
        again = {name for name, ls in lines.items() if not wanted(name, ls)}
        if not again:
            break
        r2 = _run_suite(env, only=again)
        outputs.append(r2.stdout + r2.stderr)
        later = _summary(outputs[-1])
        for name in again:
            if name in later:
                lines[name] = later[name]
    return lines, outputs, r.returncode


def _summary(output):
    """The harness's summary lines: {benchmark: line}."""
    part = output.split("caribsim benchmarks: absolute figures, calibration, ratio", 1)
    assert len(part) == 2, f"no benchmark summary in the output:\n{output[-3000:]}"
    lines = {}
    for line in part[1].splitlines():
        m = re.match(r"^(test_bench_\S+): ", line)
        if m:
            lines.setdefault(m.group(1), []).append(line)
    return lines


# --------------------------------------------------------------------------------------
# the assert, with fake benchmarks
# --------------------------------------------------------------------------------------
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
    with cpu_hogs():
        probe = bh.idle_cores(2)
    assert not probe.idle, probe
    assert probe.why


# --------------------------------------------------------------------------------------
# the whole short suite: busy machine, and a regression
# --------------------------------------------------------------------------------------
SPEEDUPS = {"test_bench_mcts_two_threads_speedup", "test_bench_ray_over_one_process"}
# the web server's move latency asserts the target (a p95 of 50 ms, as a ratio to its
# calibration, with a margin), not a floor 20% below its own measured ratio: latency among 20
# busy games does not follow the calibration closely enough for such a floor. Slowed by 30% it
# reports its ratio like the others and passes while within the target.
TARGETS = {"test_bench_web_move_latency_20_games"}


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


def test_short_suite_passes_with_a_cpu_bound_process_per_core():
    need("ray")
    need("web")
    with cpu_hogs():
        lines, outputs, _ = _tries(
            _bench_env(),
            lambda name, ls: name in SPEEDUPS or all(" ok" in line for line in ls),
            tries=3,
        )
    out = outputs[-1]
    # nothing but a floor may fail, and no benchmark fails it twice
    for o in outputs:
        _only_floors_failed(o)
    below = {
        name: ls
        for name, ls in lines.items()
        if name not in SPEEDUPS and not all(" ok" in line for line in ls)
    }
    assert not below, f"{below}\n...\n{out[-6000:]}"
    assert len(lines) >= 30, lines
    # the speed-up benchmarks saw the neighbours and said so instead of asserting
    for name in SPEEDUPS:
        assert name in lines, sorted(lines)
        assert "NOT ASSERTED" in lines[name][0], lines[name]


GUARDS = {
    "test_bench_guided_leaf_evaluations",
    "test_bench_vector_env_steps",
    "test_bench_vector_env_steps_no_observations",
    "test_bench_vector_parts",
    "test_bench_mlp_fit",
}


def _is_guard(ls):
    return all("a collapse guard)" in line for line in ls)


def test_short_suite_fails_when_every_benchmark_is_30_percent_slower():
    """Every benchmark fails, but the collapse guards of the memory-bound ones (see
    _bench_helpers), whose ratios move with the host by more than 30%: just those five."""
    need("ray")
    need("web")
    env = _bench_env(CARIBSIM_BENCH_SLOWDOWN="0.3")
    floored = lambda name, ls: name not in SPEEDUPS and name not in TARGETS and not _is_guard(ls)  # noqa: E731
    lines, outputs, code = _tries(
        env,
        lambda name, ls: not floored(name, ls) or any("BELOW FLOOR" in line for line in ls),
        tries=2,
    )
    out = outputs[0]
    assert code == 1, out[-6000:]
    assert len(lines) >= 30, lines
    guards = {name for name, ls in lines.items() if _is_guard(ls)}
    assert guards == GUARDS, sorted(guards ^ GUARDS)
    failed = {
        name for name, ls in lines.items() if any("BELOW FLOOR" in line for line in ls)
    } - SPEEDUPS
    must = {name for name, ls in lines.items() if floored(name, ls)}
    assert must <= failed, sorted(must - failed)
    assert all(name in lines and " ok" in lines[name][0] for name in TARGETS), [
        lines.get(n) for n in TARGETS
    ]
    for o in outputs:
        _only_floors_failed(o)


def _only_floors_failed(out):
    """Every failed test of a run is a benchmark under its floor: no error, no other assert."""
    below = {
        name for name, ls in _summary(out).items() if any("BELOW FLOOR" in line for line in ls)
    }
    closing = [
        line for line in out.splitlines() if re.search(r"\d+ (passed|failed).* in [\d.]+s", line)
    ]
    assert closing, out[-6000:]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (failed|errors?)\b", closing[-1])}
    assert counts.get("error", 0) + counts.get("errors", 0) == 0, out[-6000:]
    assert counts.get("failed", 0) == len(below), (sorted(below), out[-6000:])
