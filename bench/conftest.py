"""pytest configuration for the caribsim benchmarks (pytest-benchmark).

Every benchmark runs in pedantic mode with a fixed number of rounds, each round a pair of
the benchmark and a calibration workload timed in the same process (see _bench_helpers);
it stores its absolute throughput, the calibration's and their ratio in
``benchmark.extra_info`` and asserts only the ratio. The terminal summary lists them all.

``CARIBSIM_BENCH_SHORT=1`` selects the short mode used by CI (fewer, smaller rounds).
"""

import pytest
from _bench_helpers import SHORT, SLOWDOWN, SUMMARY, sample_positions


def pytest_report_header(config):
    mode = "SHORT mode (CARIBSIM_BENCH_SHORT=1)" if SHORT else "full mode"
    if SLOWDOWN:
        mode += f", SLOWDOWN {SLOWDOWN} (every paired benchmark made slower on purpose)"
    return f"caribsim benchmarks: {mode}"


def pytest_terminal_summary(terminalreporter):
    if SUMMARY:
        terminalreporter.section("caribsim benchmarks: absolute figures, calibration, ratio")
        for line in SUMMARY:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def positions_4p():
    """512 (state, action) pairs from random 4-player games."""
    return sample_positions(4, 512)
