"""Helpers shared by the caribsim benchmarks (imported by the bench modules and conftest.py).

Every floor is a RATIO, never an absolute throughput: machines here differ 2-3x and are
shared, so a benchmark times a calibration workload of the same kind in the same process,
in alternating rounds (calibration, benchmark, benchmark, calibration, ...), and asserts the
median of the rounds' ratios (benchmark rate / calibration rate) against its floor:
- C-level work (playouts, search, VectorGame) is paired with ``caribsim._calibrate.c_work``,
  a fixed C loop of state copies, generator draws and table walks;
- Python-level work (a game loop driven from Python, per-call costs) with ``py_work``, a fixed
  pure-Python loop of comparable calls (a clone, a method call, a list, ``random.choice``).
Each benchmark still reports its absolute figure, the calibration's and the ratio in
``extra_info`` (``--benchmark-json``) and on one line of the terminal summary.

Speed-up benchmarks (two threads over one, Ray over one process) need idle cores: they
assert only when ``idle_cores`` finds enough at their start and at their end, and otherwise
report the figure and why it was not asserted.

Memory-bound benchmarks (the guided search's 64 trees, VectorGame's batch of 1024 games,
numpy training: working sets past the core's L2, in the L3 the VM shares with its host's
other guests) move by 25-45% against any calibration from one minute to the next, with the
host's load: their floor (``guard=True``) is a collapse guard, about half their ratio on a quiet host, and
the summary says so. A 30% loss of the engine under them shows in the playout, clone and
call benchmarks, whose ratios hold within a few percent.

``CARIBSIM_BENCH_SHORT=1`` selects the short mode used by CI: fewer and smaller rounds.
``CARIBSIM_BENCH_SLOWDOWN=F`` (0 < F < 1, for testing the harness) adds C work to every
paired benchmark's timed rounds so that its throughput drops by the fraction F, as a
regression would: with F = 0.3 every paired benchmark must fail, but the collapse guards.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import caribsim
from caribsim import _calibrate

SHORT = os.environ.get("CARIBSIM_BENCH_SHORT", "").strip() not in ("", "0")


def _slowdown() -> float:
    text = os.environ.get("CARIBSIM_BENCH_SLOWDOWN", "").strip()
    if not text:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        raise ValueError(
            f"CARIBSIM_BENCH_SLOWDOWN must be a number in [0, 1), got {text!r}"
        ) from None
    if not 0.0 <= value < 1.0:
        raise ValueError(f"CARIBSIM_BENCH_SLOWDOWN must be in [0, 1), got {value}")
    return value


SLOWDOWN = _slowdown()
SUMMARY: list[str] = []  # one line per benchmark, printed by conftest at the end


def rounds(full: int, short: int) -> int:
    """Number of timed rounds for the current mode."""
    return short if SHORT else full


def size(full: int, short: int) -> int:
    """Work per round (games, calls, ...) for the current mode."""
    return short if SHORT else full


def median(values) -> float:
    return statistics.median(values)


def cpu_timed(fn, *args, **kwargs):
    """Call ``fn``; return (its result, the CPU seconds it took)."""
    c0 = time.process_time()
    out = fn(*args, **kwargs)
    return out, time.process_time() - c0


# --------------------------------------------------------------------------------------
# calibration workloads
# --------------------------------------------------------------------------------------
class _PyObj:
    """A stand-in for a game state in the Python calibration loop."""

    __slots__ = ("moves", "value")

    def __init__(self, value, moves):
        self.value = value
        self.moves = moves

    def clone(self):
        return _PyObj(self.value, self.moves)

    def legal(self):
        return [m for m in self.moves if m != self.value & 7]

    def apply(self, move):
        self.value = (self.value * 31 + move) & 0xFFFF


def py_work(n: int, seed: int = 1) -> int:
    """The Python calibration loop: ``n`` times clone + list of moves + random.choice +
    apply, the calls a Python-driven game loop makes per decision. Returns a checksum."""
    choice = random.Random(seed).choice
    state = _PyObj(1, (0, 1, 2, 3, 4, 5, 6, 7, 8, 9))
    for _ in range(n):
        child = state.clone()
        child.apply(choice(child.legal()))
        state = child
    return state.value


@dataclass
class Calibration:
    """A fixed workload: ``run(units)`` does ``units`` units of it."""

    name: str
    unit: str
    run: object
    units: int = 0  # per round, sized once per benchmark (see _size_calibration)


def c_calibration(states: int = 1) -> Calibration:
    """The C loop over one state (a playout, a search) or over ``states`` states in turn
    (a batch of games, whose states do not all stay in the core's cache)."""
    if states == 1:
        return Calibration("c_work", "iterations", lambda n: _calibrate.c_work(n))
    return Calibration(
        f"c_work_{states}_states", "iterations", lambda n: _calibrate.c_work(n, 512, 1, states)
    )


def py_calibration() -> Calibration:
    return Calibration("py_work", "calls", py_work)


def _size_calibration(cal: Calibration, seconds: float) -> None:
    """Give the calibration round about the CPU time of a benchmark round, so that the two
    halves of a pair see the same stretch of machine time."""
    n = 1000
    while True:
        _, t = cpu_timed(cal.run, n)
        if t >= 0.005 or n >= 1 << 30:
            break
        n *= 4
    cal.units = max(1000, int(n * max(seconds, 0.002) / max(t, 1e-9)))


class _Extra:
    """The CARIBSIM_BENCH_SLOWDOWN knob: C work that takes F / (1 - F) of a round's time."""

    def __init__(self, round_seconds: float):
        self.iterations = 0
        if SLOWDOWN > 0:
            probe = 20000
            _, t = cpu_timed(_calibrate.c_work, probe)
            per_iteration = max(t, 1e-9) / probe
            self.iterations = int(round_seconds * SLOWDOWN / (1 - SLOWDOWN) / per_iteration)

    def __call__(self):
        if self.iterations:
            _calibrate.c_work(self.iterations, 512, 7)


class Slowed:
    """``cpu_timed`` for the numerator of a ratio benchmark (3p over 2p, expansion over
    base): CARIBSIM_BENCH_SLOWDOWN slows this side only, as a regression of that path would."""

    def __init__(self):
        self.extra = None

    def __call__(self, fn, *args, **kwargs):
        c0 = time.process_time()
        out = fn(*args, **kwargs)
        if SLOWDOWN:
            if self.extra is None:
                self.extra = _Extra(time.process_time() - c0)
            self.extra()
        return out, time.process_time() - c0


# --------------------------------------------------------------------------------------
# paired rounds
# --------------------------------------------------------------------------------------
@dataclass
class Paired:
    """What ``paired`` measured: per round, the benchmark's and the calibration's rates."""

    rates: list = field(default_factory=list)
    calibration_rates: list = field(default_factory=list)
    results: list = field(default_factory=list)

    @property
    def ratios(self):
        return [w / c for w, c in zip(self.rates, self.calibration_rates)]

    @property
    def ratio(self) -> float:
        return median(self.ratios)


def paired(
    benchmark,
    work,
    *,
    units,
    calibration: Calibration,
    n_rounds: int,
    floor: float,
    unit: str,
    warmup: int = 1,
    group: str | None = None,
    guard: bool = False,
    **extra,
) -> Paired:
    """Time ``work`` against ``calibration`` in ``n_rounds`` alternating pairs (CPU time);
    report both rates and their ratio; assert the median of the rounds' ratios >= ``floor``.

    ``work()`` does one round; ``units`` is the work per round (games, calls, decisions) or
    a function of ``work()``'s result that gives it. Returns the measurements."""
    count = units if callable(units) else (lambda _r, n=units: n)
    out = Paired()
    first = None
    for _ in range(max(warmup, 1)):
        first = cpu_timed(work)
    _size_calibration(calibration, first[1])
    slow = _Extra(first[1])
    for _ in range(warmup):
        calibration.run(calibration.units)

    def one_pair():
        order = len(out.rates) % 2  # calibration first in even rounds, last in odd
        if order == 0:
            _, tc = cpu_timed(calibration.run, calibration.units)
        c0 = time.process_time()
        result = work()
        slow()
        tw = time.process_time() - c0
        if order == 1:
            _, tc = cpu_timed(calibration.run, calibration.units)
        out.results.append(result)
        out.rates.append(count(result) / max(tw, 1e-9))
        out.calibration_rates.append(calibration.units / max(tc, 1e-9))

    benchmark.pedantic(one_pair, rounds=n_rounds, iterations=1, warmup_rounds=0)
    assert len(out.rates) == n_rounds, "the benchmark function did not run every round"
    if group:
        benchmark.group = group
    report(
        benchmark,
        unit,
        median(out.rates),
        calibration,
        median(out.calibration_rates),
        out.ratio,
        floor,
        guard=guard,
        ratio_of_medians=median(out.rates) / median(out.calibration_rates),
        rounds=n_rounds,
        **extra,
    )
    return out


def playouts(
    benchmark, state, n_games: int, *, floor: float, group: str, n_rounds: int, seed: int = 2024
) -> Paired:
    """The C random-playout benchmark of every game: ``n_games`` games from ``state`` per
    round (the same games each round), games/s against the C calibration."""

    def run():
        return caribsim.random_playouts(state, n_games, seed=seed, threads=1)

    first = run()
    m = paired(
        benchmark,
        run,
        units=n_games,
        calibration=c_calibration(),
        n_rounds=n_rounds,
        floor=floor,
        unit="games_per_second",
        group=group,
        games_per_round=n_games,
        players=state.num_players(),
        mean_decisions_per_game=first.decisions / n_games,
    )
    assert all(r.decisions == first.decisions for r in m.results), (
        "playouts are not deterministic per seed"
    )
    return m


def report(
    benchmark, unit, rate, calibration, calibration_rate, ratio, floor, guard: bool = False, **extra
) -> None:
    """Store the absolute figures and the ratio in extra_info; assert the ratio (``guard``:
    the floor of a memory-bound benchmark, a collapse guard; see the module's docstring)."""
    info = benchmark.extra_info
    info[unit] = _round(rate)
    info[f"calibration_{calibration.name}_{calibration.unit}_per_second"] = _round(calibration_rate)
    info.setdefault("ratio_to_calibration", round(ratio, 5))  # the benchmark's first figure
    info[f"ratio_{unit}"] = round(ratio, 5)
    info["floor_ratio"] = floor
    info["floor_is_a_collapse_guard"] = guard
    info["short_mode"] = SHORT
    if SLOWDOWN:
        info["slowdown"] = SLOWDOWN
    for key, value in extra.items():
        info[key] = _round(value) if isinstance(value, float) else value
    name = getattr(benchmark, "name", "?")
    verdict = "ok" if ratio >= floor else "BELOW FLOOR"
    kind = ", a collapse guard" if guard else ""
    SUMMARY.append(
        f"{name}: {unit} {rate:,.4g}; {calibration.name} {calibration_rate:,.4g} "
        f"{calibration.unit}/s; ratio {ratio:.4g} (floor {floor}{kind}) {verdict}"
    )
    assert ratio >= floor, (
        f"{unit}: ratio to the {calibration.name} calibration {ratio:.4g} is below the floor {floor} "
        f"(benchmark {rate:,.4g}/s, calibration {calibration_rate:,.4g} {calibration.unit}/s, "
        f"median of paired rounds)"
    )


def report_ratio(benchmark, name: str, ratio: float, floor: float, **extra) -> None:
    """A benchmark whose figure is itself a ratio of two workloads timed in alternating rounds
    (3p over 2p playouts, expansion over base): report and assert it."""
    info = benchmark.extra_info
    info[name] = round(ratio, 5)
    info["floor_ratio"] = floor
    info["short_mode"] = SHORT
    for key, value in extra.items():
        info[key] = _round(value) if isinstance(value, float) else value
    verdict = "ok" if ratio >= floor else "BELOW FLOOR"
    SUMMARY.append(
        f"{getattr(benchmark, 'name', '?')}: {name} {ratio:.4g} (floor {floor}) {verdict}"
    )
    assert ratio >= floor, f"{name}: median of paired rounds {ratio:.4g} is below the floor {floor}"


def _round(x: float) -> float:
    return round(x, 1) if x >= 100 else round(x, 5)


# --------------------------------------------------------------------------------------
# idle cores, for the speed-up benchmarks
# --------------------------------------------------------------------------------------
def _cpu_times():
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    values = [int(x) for x in fields]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return sum(values[:8]), idle


@dataclass
class IdleProbe:
    cores: int  # CPUs this process may run on
    busy_cores: float  # CPUs busy with other work while this process slept
    scaling: float  # wall-clock speed-up of the C calibration on `needed` threads
    needed: int
    idle: bool
    why: str

    def as_dict(self, prefix):
        return {
            f"{prefix}_busy_cores": round(self.busy_cores, 3),
            f"{prefix}_thread_scaling": round(self.scaling, 3),
            f"{prefix}_idle": self.idle,
        }


def idle_cores(needed: int, *, sleep: float = 0.3, min_scaling: float | None = None) -> IdleProbe:
    """Whether ``needed`` cores are free now: the machine's CPU use while this process
    sleeps (from /proc/stat; where that file is missing, the load average), then the C
    calibration on ``needed`` threads at once against one (it must scale nearly
    linearly)."""
    cores = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )
    ncpu = os.cpu_count() or cores
    try:
        t0, i0 = _cpu_times()
        time.sleep(sleep)
        t1, i1 = _cpu_times()
        busy = ncpu * (1 - (i1 - i0) / max(t1 - t0, 1))
    except OSError:
        busy = os.getloadavg()[0]
    if min_scaling is None:
        min_scaling = 0.85 * needed
    iterations = 60000
    best_one = min(_wall(lambda: _calibrate.c_work(iterations)) for _ in range(3))
    best_many = min(_wall(lambda: _calibrate.c_work_threads(iterations, needed)) for _ in range(3))
    scaling = needed * best_one / max(best_many, 1e-9)
    if cores < needed:
        why = f"this process may use {cores} CPU(s), the benchmark needs {needed}"
    elif busy > max(0.25, cores - needed + 0.25):
        why = f"{busy:.2f} of {ncpu} CPUs were busy with other work"
    elif scaling < min_scaling:
        why = f"{needed} threads of C work ran {scaling:.2f}x one thread (< {min_scaling:.2f}): cores are shared"
    else:
        why = ""
    return IdleProbe(cores, busy, scaling, needed, not why, why)


def _wall(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def report_speedup(
    benchmark, name: str, speedup: float, floor: float, before: IdleProbe, after: IdleProbe, **extra
) -> None:
    """Report a speed-up; assert it only if the machine had the cores it needs at the start
    and at the end of the measurement. Otherwise say why it was not asserted."""
    info = benchmark.extra_info
    info[name] = round(speedup, 4)
    info["floor"] = floor
    info["short_mode"] = SHORT
    info.update(before.as_dict("before"))
    info.update(after.as_dict("after"))
    for key, value in extra.items():
        info[key] = _round(value) if isinstance(value, float) else value
    asserted = before.idle and after.idle
    info["asserted"] = asserted
    label = getattr(benchmark, "name", "?")
    if not asserted:
        why = before.why or after.why
        info["not_asserted_because"] = why
        SUMMARY.append(f"{label}: {name} {speedup:.3g} (floor {floor}) NOT ASSERTED: {why}")
        return
    verdict = "ok" if speedup >= floor else "BELOW FLOOR"
    SUMMARY.append(f"{label}: {name} {speedup:.3g} (floor {floor}, machine idle) {verdict}")
    assert speedup >= floor, f"{name}: {speedup:.3g} is below the floor {floor} on an idle machine"


# --------------------------------------------------------------------------------------
def sample_positions(players: int, count: int, seed: int = 12345):
    """``count`` (state, action) pairs taken from random games, spread over whole games
    (all phases, chance nodes included), each with one of its legal actions."""
    rng = random.Random(seed)
    game = caribsim.load_game("puerto_rico", players=players)
    pairs = []
    g = 0
    while len(pairs) < count:
        state = game.new_initial_state(seed=seed + g)
        g += 1
        while not state.is_terminal() and len(pairs) < count:
            action = rng.choice(state.legal_actions())
            if rng.random() < 0.05:
                pairs.append((state.clone(), action))
            state.apply_action(action)
    return game, pairs


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
