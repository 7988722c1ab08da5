# cython: language_level=3
"""Calibration workloads for the benchmarks.

A benchmark's absolute speed says as much about the machine as about the code: CPUs differ
2-3x, and a busy neighbour slows the one that is shared. The benchmarks therefore time a
fixed workload of the same kind in the same process, in alternating rounds, and assert the
ratio. ``c_work`` is the C-level workload: the work a random playout or a search does per
decision without the rules (copy a state-sized buffer, draw from the state's generator,
walk a small table with data-dependent branches, write into the copy). It runs without
the GIL, so ``c_work_threads`` also probes whether the machine has idle cores.
"""
import threading

from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from caribsim._rng cimport Rng, rng_next, rng_seed
from caribsim._types cimport int16, uint8, uint64

DEF TABLE_SIZE = 1024            # int16 entries: 2 KiB, like a game's move and price tables
DEF STEPS_PER_COPY = 24          # table steps per state copy, about one playout decision's share

# sink for results, so the compiler cannot drop the loop
cdef volatile uint64 _sink = 0


cdef uint64 _work(Py_ssize_t iterations, Py_ssize_t state_bytes, Py_ssize_t states,
                  uint64 seed) noexcept nogil:
    """The loop itself: returns a checksum of everything it touched."""
    cdef uint8* base = <uint8*>malloc(state_bytes * states)
    cdef uint8* copy = <uint8*>malloc(state_bytes)
    cdef uint8* src
    cdef int16 table[TABLE_SIZE]
    cdef Rng rng
    cdef Py_ssize_t i, k, pos
    cdef uint64 r, acc = 0
    cdef int16 v
    if base == NULL or copy == NULL:
        free(base)
        free(copy)
        return 0
    rng_seed(&rng, seed, 0)
    for k in range(TABLE_SIZE):
        table[k] = <int16>(rng_next(&rng) & 0x7FFF)
    for k in range(state_bytes * states):
        base[k] = <uint8>rng_next(&rng)
    for i in range(iterations):
        src = base + (i % states) * state_bytes             # states in turn, as a batch steps them
        memcpy(copy, src, state_bytes)                      # a clone
        for k in range(STEPS_PER_COPY):
            r = rng_next(&rng)
            v = table[(r >> 11) & (TABLE_SIZE - 1)]
            pos = <Py_ssize_t>((r >> 32) % <uint64>state_bytes)
            if v & 1:                                       # unpredictable, like a rule's test
                copy[pos] = <uint8>(copy[pos] + v)
            else:
                acc ^= <uint64>v << (k & 31)
            acc += copy[(pos + v) % state_bytes]
        src[i % state_bytes] ^= copy[(acc >> 3) % state_bytes]    # the next visit depends on this one
    free(base)
    free(copy)
    return acc


def c_work(Py_ssize_t iterations, Py_ssize_t state_bytes=512, uint64 seed=1, Py_ssize_t states=1):
    """Run the C calibration loop ``iterations`` times (one state copy and 24 table steps
    each, over ``states`` states of ``state_bytes`` in turn) without the GIL; returns its
    checksum (the same for the same arguments)."""
    global _sink
    cdef uint64 out
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    if state_bytes < 8 or state_bytes > 1 << 20:
        raise ValueError(f"state_bytes must be in [8, 1048576], got {state_bytes}")
    if states < 1 or states * state_bytes > 1 << 28:
        raise ValueError(f"states must be >= 1 with states * state_bytes <= 2**28, got {states}")
    with nogil:
        out = _work(iterations, state_bytes, states, seed)
    _sink ^= out
    return out


def c_work_threads(Py_ssize_t iterations, int threads, Py_ssize_t state_bytes=512):
    """Run ``c_work(iterations)`` on ``threads`` threads at once; returns when all are done.
    On a machine with that many idle cores this takes as long as one call."""
    if threads < 1 or threads > 256:
        raise ValueError(f"threads must be in [1, 256], got {threads}")
    workers = [threading.Thread(target=c_work, args=(iterations, state_bytes, t + 1))
               for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
