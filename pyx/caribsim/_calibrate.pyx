# cython: language_level=3
"""Calibration workloads for the benchmarks.

A benchmark's absolute speed says as much about the machine as about the code: CPUs differ
2-3x, and a busy neighbour slows the one that is shared. The benchmarks therefore time a
fixed workload of the same kind in the same process, in alternating rounds, and assert the
ratio. ``c_work`` is the C-level workload: the work a random playout or a search does per
decision without the rules (copy a state-sized buffer, draw from the state's generator,
walk a small table with data-dependent branches, write into the copy). It runs without
the GIL, so ``c_work_threads`` also probes whether the machine has idle cores.

``floor_playouts`` is a random playout with table lookups in place of rules, the limit a
playout loop of this shape could reach on the machine, and ``clock_chain`` a chain of
dependent one-cycle operations that measures the core's clock (docs/performance.md).
"""
import threading

from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from caribsim._rng cimport Rng, rng_below, rng_next, rng_seed
from caribsim._types cimport int16, uint8, uint64

DEF TABLE_SIZE = 1024            # int16 entries: 2 KiB, like a game's move and price tables
DEF STEPS_PER_COPY = 24          # table steps per state copy, about one playout decision's share
DEF FLOOR_ROWS = 64              # the floor loop's legal lists: one per value of a state byte & 63
DEF FLOOR_LEGAL = 16             # the longest of them (a game's mean list is 5-12 moves)
DEF CHAIN_OPS = 2                # one-cycle operations on the critical path of a clock_chain step

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


cdef uint64 _floor(Py_ssize_t games, Py_ssize_t decisions, Py_ssize_t state_bytes,
                   uint64 seed) noexcept nogil:
    """A playout's shape without its rules: per game a copy of a state-sized buffer, per
    decision a legal list read from a table (chosen by a byte of the state, as moves depend
    on it), a uniform pick by the state's generator, and a switch on the move that writes a
    byte or two of the state. Returns a checksum of the final states."""
    cdef uint8* start = <uint8*>malloc(state_bytes)
    cdef uint8* s = <uint8*>malloc(state_bytes)
    cdef int16 legal[FLOOR_ROWS][FLOOR_LEGAL]
    cdef uint8 n_legal[FLOOR_ROWS]
    cdef Rng rng
    cdef Py_ssize_t _g, d, k, pos
    cdef uint64 acc = 0
    cdef int16 a
    cdef uint8 row
    if start == NULL or s == NULL:
        free(start)
        free(s)
        return 0
    rng_seed(&rng, seed, 0)
    for k in range(FLOOR_ROWS):
        n_legal[k] = <uint8>(1 + rng_below(&rng, FLOOR_LEGAL))
        for pos in range(FLOOR_LEGAL):
            legal[k][pos] = <int16>rng_below(&rng, 512)
    for k in range(state_bytes):
        start[k] = <uint8>rng_next(&rng)
    for _g in range(games):
        memcpy(s, start, state_bytes)                       # the game's start state
        for d in range(decisions):
            row = s[d % state_bytes] & (FLOOR_ROWS - 1)      # the legal list depends on the state
            a = legal[row][rng_below(&rng, n_legal[row])]    # the random pick
            pos = (a + d) % state_bytes
            k = a & 7                                        # apply: a switch on the move
            if k == 0:
                s[pos] += 1
            elif k == 1:
                s[pos] -= 1
            elif k == 2:
                s[pos] ^= <uint8>a
            elif k == 3:
                s[pos] = <uint8>(s[pos] + s[(pos + 1) % state_bytes])
            elif k == 4:
                s[(pos + 7) % state_bytes] = <uint8>d
            elif k == 5:
                s[pos] |= 1
            elif k == 6:
                s[pos] &= 0xFE
            else:
                s[pos] = <uint8>(a >> 3)
        acc = acc * 31 + s[acc % state_bytes]                # the outcome depends on the game
    free(start)
    free(s)
    return acc


def floor_playouts(Py_ssize_t games, Py_ssize_t decisions=256, Py_ssize_t state_bytes=624,
                   uint64 seed=1):
    """Play ``games`` floor playouts of ``decisions`` decisions over a state of ``state_bytes``
    (``_floor``) without the GIL; returns their checksum (the same for the same arguments)."""
    global _sink
    cdef uint64 out
    if games < 0:
        raise ValueError(f"games must be >= 0, got {games}")
    if decisions < 1 or decisions > 1 << 20:
        raise ValueError(f"decisions must be in [1, 1048576], got {decisions}")
    if state_bytes < 8 or state_bytes > 1 << 20:
        raise ValueError(f"state_bytes must be in [8, 1048576], got {state_bytes}")
    with nogil:
        out = _floor(games, decisions, state_bytes, seed)
    _sink ^= out
    return out


cdef uint64 _chain(Py_ssize_t steps, uint64 x) noexcept nogil:
    cdef Py_ssize_t _i
    for _i in range(steps):
        x = (x + 0x9E3779B97F4A7C15ULL) ^ 0xD1B54A32D192ED03ULL  # add, xor: each waits for the last
    return x


def clock_chain(Py_ssize_t steps, uint64 seed=1):
    """Run ``steps`` steps of a serial chain of two one-cycle operations (an add and an xor of
    constants held in registers: one cycle of latency each on every x86-64 and ARM core in
    use, and no register copy that a core may or may not eliminate) without the GIL; returns
    (its result, the one-cycle operations it ran: ``CHAIN_OPS * steps``). That count over
    the seconds it took is the core's clock."""
    global _sink
    cdef uint64 out
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    with nogil:
        out = _chain(steps, seed)
    _sink ^= out
    return out, CHAIN_OPS * steps
