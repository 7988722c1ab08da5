# cython: language_level=3
"""The base class of compiled game states and what works for every game through the
C interface (see _game.pxd): the state methods alike in every game, and random
playouts in C, threaded without the GIL."""
import json
import operator
import threading
import time

import numpy as np

from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, strcmp
from caribsim._types cimport int16, int32, uint64, PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._common import _int_in

MAX_THREADS = 256          # playout threads beyond the cores only add start-up cost

cdef enum:
    STACK_ITEMS = 1024     # action/outcome buffers up to this size live on the stack, larger ones on the heap


cdef void* _scratch(void* local, Py_ssize_t items, Py_ssize_t item_size) except NULL:
    """`local` (a STACK_ITEMS buffer) when `items` fit in it, else a heap buffer the caller frees."""
    if items <= STACK_ITEMS:
        return local
    cdef void* p = malloc(items * item_size)
    if p == NULL:
        raise MemoryError()
    return p


def _check_seat(player, int n):
    return _int_in(player, "player (a seat)", 0, n - 1)


cdef int _observer(GameState st, player) except -1:
    """The seat an observation is made for: `player`, or by default the player to act
    (seat 0 at chance and terminal nodes)."""
    cdef int p
    if player is None:
        p = st.vtable.current_player(st.c_state())
        return p if p >= 0 else 0
    return _check_seat(player, st.vtable.num_players(st.c_state()))


def _restore(game, text):
    """Unpickling: the state from its serialized text."""
    return game.deserialize_state(text)


cdef class GameState:
    """The methods every game's state has alike, over the game's C interface."""

    cdef void* c_state(self) noexcept:
        return NULL

    def __init__(self, *args, **kwargs):
        raise TypeError("use game.new_initial_state(seed) or game.state_from_dict(d)")

    def num_players(self):
        return self.vtable.num_players(self.c_state())

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

    # --- actions and chance ----------------------------------------------------
    def legal_actions(self, player=None):
        """Sorted legal action ids (chance outcomes at a chance node; [] at the end)."""
        cdef int16 local[STACK_ITEMS]
        cdef const void* s = self.c_state()
        cdef int i, n
        if player is not None and _check_seat(player, self.vtable.num_players(s)) != self.vtable.current_player(s):
            return []
        cdef int16* buf = <int16*>_scratch(local, self.vtable.num_actions, sizeof(int16))
        try:
            n = self.vtable.legal_actions(s, buf)
            return [buf[i] for i in range(n)]
        finally:
            if buf != local:
                free(buf)

    def legal_actions_mask(self, player=None):
        """uint8 vector over the game's action space: 1 where the action is legal (all 0
        when `player` is given and not to act)."""
        cdef int16 local[STACK_ITEMS]
        cdef const void* s = self.c_state()
        cdef int i, n
        mask = np.zeros(self.vtable.num_actions, dtype=np.uint8)
        cdef unsigned char[::1] m = mask
        if player is not None and _check_seat(player, self.vtable.num_players(s)) != self.vtable.current_player(s):
            return mask
        cdef int16* buf = <int16*>_scratch(local, self.vtable.num_actions, sizeof(int16))
        try:
            n = self.vtable.legal_actions(s, buf)
            for i in range(n):
                m[buf[i]] = 1
        finally:
            if buf != local:
                free(buf)
        return mask

    def chance_outcomes(self):
        """[(action, probability)] at a chance node, the outcomes weighted as the game's
        rules say (see the game's docs); [] elsewhere."""
        cdef int16 la[STACK_ITEMS]
        cdef int32 lw[STACK_ITEMS]
        cdef const void* s = self.c_state()
        cdef int i, n, total = 0
        if self.vtable.current_player(s) != PLAYER_CHANCE:
            return []
        cdef int16* acts = <int16*>_scratch(la, self.vtable.max_chance_outcomes, sizeof(int16))
        cdef int32* weights = NULL
        try:
            weights = <int32*>_scratch(lw, self.vtable.max_chance_outcomes, sizeof(int32))
            n = self.vtable.chance_outcomes(s, acts, weights)
            for i in range(n):
                total += weights[i]
            return [(acts[i], <double>weights[i] / total) for i in range(n)]
        finally:
            if acts != la:
                free(acts)
            if weights != NULL and weights != lw:
                free(weights)

    def resolve_chance(self):
        """At a chance node, sample an outcome from the state's own RNG and apply it.
        Returns the outcome."""
        cdef void* s = self.c_state()
        if self.vtable.current_player(s) != PLAYER_CHANCE:
            raise ValueError(f"not a chance node (step {self.step_name()!r})")
        cdef int a = self.vtable.sample_chance(s)
        self.vtable.apply_action(s, a)
        self._hist = (self._hist, a)
        return a

    # --- observations ----------------------------------------------------------
    def observation_tensor(self, player=None):
        """Float32 vector of game.observation_tensor_shape(): what `player` sees (default:
        the player to act; seat 0 at chance and terminal nodes). The layout is in the
        game's docs."""
        cdef int seat = _observer(self, player)
        out = np.empty(self.vtable.observation_size(self.c_state()), dtype=np.float32)
        cdef float[::1] view = out
        self.vtable.observation(self.c_state(), seat, &view[0])
        return out

    def write_observation(self, float[::1] out not None, player=None):
        """Write the observation into a preallocated float32 buffer (no allocation)."""
        cdef int seat = _observer(self, player)
        cdef int size = self.vtable.observation_size(self.c_state())
        if out.shape[0] != size:
            raise ValueError(f"buffer has {out.shape[0]} entries, the observation has {size}")
        self.vtable.observation(self.c_state(), seat, &out[0])

    # --- serialization, pickling, equality ---------------------------------------
    def serialize(self):
        """The position as compact JSON text (to_dict(); game.deserialize_state reads it)."""
        return json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=True)

    def __reduce__(self):
        return (_restore, (self.game, self.serialize()))

    def __eq__(self, other):
        """Equal positions of the same game (the same to_dict())."""
        if not isinstance(other, GameState) or strcmp((<GameState>other).vtable.name, self.vtable.name) != 0:
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self):
        raise TypeError(f"{type(self).__name__} is mutable and unhashable; hash state.serialize() instead")

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
