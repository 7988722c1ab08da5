# cython: language_level=3
"""The base class of compiled game states and what works for every game through the
C interface (see _game.pxd): random playouts in C, threaded without the GIL."""
import operator
import threading
import time

import numpy as np

from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from caribsim._types cimport int32, uint64, PLAYER_CHANCE, PLAYER_TERMINAL

MAX_THREADS = 256          # playout threads beyond the cores only add start-up cost


cdef class GameState:
    """The methods every game's state has alike, over the game's C interface."""

    cdef void* c_state(self) noexcept:
        return NULL

    def current_player(self):
        """The seat to act, CHANCE (-1) at a chance node, TERMINAL (-4) at the end."""
        return self.vtable.current_player(self.c_state())

    def is_terminal(self):
        return self.vtable.current_player(self.c_state()) == PLAYER_TERMINAL

    def is_chance_node(self):
        return self.vtable.current_player(self.c_state()) == PLAYER_CHANCE

    def child(self, action):
        """A clone with `action` applied."""
        c = self.clone()
        c.apply_action(action)
        return c

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return self.clone()

    def history(self):
        """Every action applied since the state was made (chance outcomes included)."""
        out = []
        h = self._hist
        while h is not None:
            out.append(h[1])
            h = h[0]
        out.reverse()
        return out

    def returns(self):
        """Per seat: 1 for the winner, a shared win split equally, 0 otherwise (all 0 before the end)."""
        cdef double r[16]
        cdef const void* s = self.c_state()
        cdef int i, n = self.vtable.num_players(s)
        self.vtable.returns(s, r)
        return [r[i] for i in range(n)]

    def _random_playouts(self, n_games, seed, threads, first_game=0):
        return random_playouts(self, n_games, seed, threads, first_game)


cdef int _playout_range(const GameVTable* vt, const void* start, int n, int lo, int hi, uint64 seed,
                        uint64 first, double* returns, int32* totals, int32* lengths) except -1 nogil:
    """Games lo..hi-1 of the call from `start`; the call's game g is the run's game first + g,
    and its RNG depends only on (seed, first + g), so a run split into chunks plays the same games."""
    cdef void* s = malloc(vt.state_size)
    cdef double scores[16]
    cdef int g, i
    if s == NULL:
        with gil:
            raise MemoryError("random_playouts: cannot allocate a state")
    for g in range(lo, hi):
        memcpy(s, start, vt.state_size)
        vt.reseed(s, seed, first + <uint64>g + 1)
        lengths[g] = vt.random_playout(s)
        vt.returns(s, &returns[g * n])
        vt.scores(s, scores)
        for i in range(n):
            totals[g * n + i] = <int32>scores[i]
    free(s)
    return 0


def random_playouts(GameState st not None, n_games, seed, threads, first_game=0):
    """Whole random games from `st` in C: (returns, total scores, decisions, seconds).
    Row g holds the run's game first_game + g."""
    cdef Py_ssize_t games = operator.index(n_games)
    if games < 0:
        raise ValueError(f"n_games must be >= 0, got {games}")
    first = operator.index(first_game)
    if not 0 <= first <= 2**63 - 1 - games:
        raise ValueError(f"first_game must be in 0..{2**63 - 1 - games} (2**63-1 - n_games), got {first}")
    cdef uint64 first_value = first
    if not 1 <= operator.index(threads) <= MAX_THREADS:
        raise ValueError(f"threads must be 1..{MAX_THREADS}, got {threads}")
    cdef int n_threads = min(operator.index(threads), max(games, 1))
    cdef uint64 seed_value = operator.index(seed)
    cdef const GameVTable* vt = st.vtable
    if vt.max_players > 16:
        raise ValueError("random_playouts supports up to 16 players")
    cdef int n = vt.num_players(st.c_state())
    returns = np.zeros((games, n), dtype=np.float64)
    totals = np.zeros((games, n), dtype=np.int32)
    lengths = np.zeros(games, dtype=np.int32)
    cdef double[:, ::1] rv = returns
    cdef int32[:, ::1] tv = totals
    cdef int32[::1] lv = lengths
    cdef bytes start = (<char*>st.c_state())[:vt.state_size]     # a frozen copy of the position
    cdef const char* sp = start
    cdef double* rp = &rv[0, 0] if games else NULL
    cdef int32* tp = &tv[0, 0] if games else NULL
    cdef int32* lp = &lv[0] if games else NULL
    t0 = time.perf_counter()
    if games:
        if n_threads == 1:
            with nogil:
                _playout_range(vt, sp, n, 0, games, seed_value, first_value, rp, tp, lp)
        else:
            bounds = [games * t // n_threads for t in range(n_threads + 1)]
            errors = []

            def work(int lo, int hi):
                try:
                    with nogil:
                        _playout_range(vt, sp, n, lo, hi, seed_value, first_value, rp, tp, lp)
                except BaseException as e:              # re-raised in the caller
                    errors.append(e)

            workers = [threading.Thread(target=work, args=(bounds[t], bounds[t + 1]))
                       for t in range(n_threads)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            if errors:
                raise errors[0]
    seconds = time.perf_counter() - t0
    return returns, totals, lengths, seconds
