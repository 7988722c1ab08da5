"""pytest configuration for the caribsim benchmarks (pytest-benchmark).

Every benchmark runs in pedantic mode with a fixed number of rounds, times each round
itself (so a median is available even under ``--benchmark-disable``), stores its
throughput in ``benchmark.extra_info`` and asserts a floor (see the FLOORS table at the
top of ``test_bench_puerto_rico.py``). Helpers live in ``_bench_helpers.py``.

``CARIBSIM_BENCH_SHORT=1`` selects the short mode used by CI (fewer, smaller rounds).
"""
import pytest

from _bench_helpers import SHORT, sample_positions


def pytest_report_header(config):
    return f"caribsim benchmarks: {'SHORT mode (CARIBSIM_BENCH_SHORT=1)' if SHORT else 'full mode'}"


@pytest.fixture(scope="session")
def positions_4p():
    """512 (state, action) pairs from random 4-player games."""
    return sample_positions(4, 512)
