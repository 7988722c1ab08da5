# cython: language_level=3, binding=False
"""The base class of compiled game states and what works for every game through the
C interface (see _game.pxd): the state methods alike in every game, and random
playouts in C, threaded without the GIL."""
import json
import operator
import threading
import time

import numpy as np

cimport cython
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, strcmp
from cpython.ref cimport Py_INCREF, Py_REFCNT
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_CheckExact, PyLong_AsLongAndOverflow
from caribsim._types cimport int16, int32, uint64, PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._common import _int_in

MAX_THREADS = 256          # playout threads beyond the cores only add start-up cost

cdef enum:
    STACK_ITEMS = 1024     # action/outcome buffers up to this size live on the stack, larger ones on the heap

# The int objects of every action id, made once: legal_actions() fills its list with them.
cdef tuple _ACTION_INTS = tuple(range(STACK_ITEMS))


cdef void* _scratch(void* local, Py_ssize_t items, Py_ssize_t item_size) except NULL:
    """`local` (a STACK_ITEMS buffer) when `items` fit in it, else a heap buffer the caller frees."""
    if items <= STACK_ITEMS:
        return local
    cdef void* p = malloc(items * item_size)
    if p == NULL:
        raise MemoryError()
    return p


cdef inline int _action_arg(object action, int n_actions) except -1:
    """The action id of a Python argument: a plain int in range is read in C; anything else
    (numpy ints, bools, other types, out of range) goes through _int_in, whose messages
    say what was wrong."""
    cdef int overflow = 0
    cdef long v
    if PyLong_CheckExact(action):
        v = PyLong_AsLongAndOverflow(action, &overflow)
        if overflow == 0 and 0 <= v < n_actions:
            return <int>v
    return _int_in(action, "action", 0, n_actions - 1)


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


@cython.no_gc          # a chain only refers to older chunks: no cycle for the collector to find
@cython.freelist(256)
@cython.final
cdef class Moves:
    """A chunk of a state's history: up to HISTORY_CHUNK actions and the chunk before
    (see _game.pxd)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("a history is made by the game state's moves")

    def __dealloc__(self):
        # free a long chain without a recursion per chunk: each older chunk only this one
        # holds is emptied before it goes
        cdef object p = self.prev
        cdef object older
        self.prev = None
        while type(p) is Moves and Py_REFCNT(p) == 1:
            older = (<Moves>p).prev
            (<Moves>p).prev = None
            p = older                   # the emptied chunk goes here, with nothing to free after it
            older = None                # (p is then the only reference again)

    def __repr__(self):
        return f"<Moves {self.n} actions>"


cdef list history_list(object h, int n):
    cdef int i
    chunks = []
    while h is not None:
        chunks.append(h)
        h = (<Moves>h).prev
    out = []
    for k in range(len(chunks) - 1, -1, -1):
        c = <Moves>chunks[k]
        for i in range(n if k == 0 else HISTORY_CHUNK):
            out.append(c.actions[i])
    return out


cdef int set_history(GameState st, list actions) except -1:
    cdef object h = None
    cdef Moves c = None
    cdef int i = HISTORY_CHUNK
    for a in actions:
        if i == HISTORY_CHUNK:
            c = Moves.__new__(Moves)
            c.prev = h
            h = c
            i = 0
        c.actions[i] = a
        i += 1
        c.n = i
    st._hist = h
    st._hist_n = i if h is not None else 0
    return 0


cdef inline Moves _fresh_chunk(GameState st):
    """A chunk for st's next move, made before the move: empty after st's full chunk, or a
    copy of st's part of a chunk that another state has gone on in."""
    cdef Moves old = <Moves>st._hist
    cdef Moves c = Moves.__new__(Moves)
    if old is None or st._hist_n == HISTORY_CHUNK:
        c.prev = old
    else:
        c.prev = old.prev
        memcpy(c.actions, old.actions, st._hist_n * sizeof(int16))
        c.n = st._hist_n
    return c


cdef inline int _make_room(GameState st) except -1:
    """Before a move changes the state: make st's newest chunk one it may append to. Only
    the else branch allocates (and so may run Python), and it leaves the history's actions
    as they were: no other thread can see the new position with the old history."""
    cdef Moves h = <Moves>st._hist
    if h is None or h.n != st._hist_n or st._hist_n == HISTORY_CHUNK:
        h = _fresh_chunk(st)
        st._hist = h
        st._hist_n = h.n
    return 0


cdef inline void* _struct(GameState st) except NULL:
    """st.c_state() without its method call once the state has been checked (the hot path)."""
    return st._ready_struct if st._ready_struct != NULL else st.c_state()


def _restore(game, text):
    """Unpickling: the state from its serialized text."""
    return game.deserialize_state(text)


cdef inline void _push(GameState st, int action) noexcept:
    """Append `action` to the history, after _make_room (no Python in between)."""
    cdef Moves h = <Moves>st._hist
    h.actions[h.n] = action
    h.n += 1
    st._hist_n += 1
    st._legal_ok = False


cdef inline int _apply(GameState st, object action) except -1:
    """apply_action's body (child's too), written once for every game."""
    cdef int16 buf[STACK_ITEMS]        # every game's action space fits (checked in c_state)
    cdef void* s = _struct(st)
    cdef int a = _action_arg(action, st.vtable.num_actions)
    cdef int i, n
    _make_room(st)
    # from here to _push no Python runs; an action listed at this position is legal (and the
    # game not over), else the terminal check and the list decide
    if not st._legal_ok or not (st._legal_bits[a >> 6] >> (a & 63)) & 1:
        if st.vtable.current_player(s) == PLAYER_TERMINAL:
            raise ValueError("the game is over: no action is legal")
        n = st.vtable.legal_actions(s, buf)      # not listed at this position, or not legal: look
        for i in range(n):
            if buf[i] == a:
                break
        else:
            return st._illegal(a, buf, n)
    st.vtable.apply_action(s, a)
    _push(st, a)
    return 0


cdef class GameState:
    """The methods every game's state has alike, over the game's C interface."""

    cdef void* _raw(self) noexcept:
        return NULL

    cdef void* c_state(self) except NULL:
        if self._ready_struct != NULL:        # checked before: nothing undoes a made state
            return self._ready_struct
        cdef void* p = self._raw()
        if p == NULL or self.vtable == NULL or self.game is None:
            raise RuntimeError(f"this {type(self).__name__} is not initialised: create states with "
                               f"game.new_initial_state(seed) or game.state_from_dict(d)")
        if self.vtable.num_actions > STACK_ITEMS:     # the legal-move buffers below live on the stack
            raise RuntimeError(f"{self.vtable.name.decode()}: {self.vtable.num_actions} actions, "
                               f"more than the {STACK_ITEMS} the state methods hold")
        self._ready_struct = p
        return p

    cdef int _ready(self) except -1:
        self.c_state()
        return 0

    def __init__(self, *args, **kwargs):
        raise TypeError("use game.new_initial_state(seed) or game.state_from_dict(d)")

    @cython.always_allow_keywords(False)     # METH_NOARGS: the cheapest call
    def num_players(self):
        cdef void* s = _struct(self)
        return self.vtable.num_players(s)

    @cython.always_allow_keywords(False)     # METH_NOARGS: the cheapest call
    def current_player(self):
        """The seat to act, CHANCE (-1) at a chance node, TERMINAL (-4) at the end."""
        cdef void* s = _struct(self)
        return self.vtable.current_player(s)

    @cython.always_allow_keywords(False)     # METH_NOARGS: the cheapest call
    def is_terminal(self):
        cdef void* s = _struct(self)
        return self.vtable.current_player(s) == PLAYER_TERMINAL

    @cython.always_allow_keywords(False)     # METH_NOARGS: the cheapest call
    def is_chance_node(self):
        cdef void* s = _struct(self)
        return self.vtable.current_player(s) == PLAYER_CHANCE

    cdef GameState _blank(self):
        raise NotImplementedError

    cdef int _illegal(self, int action, const int16* legal, int n) except -1:
        raise NotImplementedError

    cpdef GameState clone(self):
        """An independent copy (the struct is copied with one memcpy; the history is shared,
        as it only grows)."""
        cdef void* s = _struct(self)
        cdef GameState c = self._blank()
        memcpy(c._raw(), s, self.vtable.state_size)   # with the fields below: no Python in between
        c.vtable = self.vtable
        c.game = self.game
        c._hist = self._hist
        c._hist_n = self._hist_n
        return c

    @cython.always_allow_keywords(False)     # METH_O: a positional action, as OpenSpiel's
    def apply_action(self, action):
        """Apply a legal action id (a decision, or a chance outcome at a chance node)."""
        _apply(self, action)

    @cython.always_allow_keywords(False)     # METH_O
    def child(self, action):
        """A clone with `action` applied."""
        cdef GameState c = self.clone()
        _apply(c, action)
        return c

    def __copy__(self):
        self._ready()
        return self.clone()

    def __deepcopy__(self, memo):
        self._ready()
        return self.clone()

    def history(self):
        """Every action applied since the state was made (chance outcomes included)."""
        self._ready()
        return history_list(self._hist, self._hist_n)

    def returns(self):
        """Per seat: 1 for the winner, a shared win split equally, 0 otherwise (all 0 before the end)."""
        cdef double r[16]
        cdef const void* s = self.c_state()
        cdef int i, n = self.vtable.num_players(s)
        self.vtable.returns(s, r)
        return [r[i] for i in range(n)]

    # --- actions and chance ----------------------------------------------------
    @cython.always_allow_keywords(False)     # positional only: no keyword parsing per call
    def legal_actions(self, player=None):
        """Sorted legal action ids (chance outcomes at a chance node; [] at the end)."""
        cdef int16 local[STACK_ITEMS]
        cdef const void* s = _struct(self)
        cdef int i, n
        if player is not None and _check_seat(player, self.vtable.num_players(s)) != self.vtable.current_player(s):
            return []
        n = self.vtable.legal_actions(s, local)       # every action space fits (checked in c_state)
        for i in range(16):                           # (16 stores inline, not a memset call)
            self._legal_bits[i] = 0
        for i in range(n):                            # no Python from the listing to the key
            self._legal_bits[local[i] >> 6] |= (<uint64>1) << (local[i] & 63)
        self._legal_ok = True
        out = PyList_New(n)
        for i in range(n):
            item = <object>PyTuple_GET_ITEM(_ACTION_INTS, local[i])
            Py_INCREF(item)                               # PyList_SET_ITEM steals a reference
            PyList_SET_ITEM(out, i, item)
        return out

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

    @cython.always_allow_keywords(False)     # METH_NOARGS: the cheapest call
    def resolve_chance(self):
        """At a chance node, sample an outcome from the state's own RNG and apply it.
        Returns the outcome."""
        cdef void* s = _struct(self)
        cdef int a
        _make_room(self)
        if self.vtable.current_player(s) != PLAYER_CHANCE:
            raise ValueError(f"not a chance node (step {self.step_name()!r})")
        a = self.vtable.sample_chance(s)      # the check, the draw and the move: no Python in between
        self.vtable.apply_action(s, a)
        _push(self, a)
        return <object>PyTuple_GET_ITEM(_ACTION_INTS, a)

    # --- observations ----------------------------------------------------------
    def observation_tensor(self, player=None):
        """Float32 vector of game.observation_tensor_shape(): what `player` sees (default:
        the player to act; seat 0 at chance and terminal nodes). The layout is in the
        game's docs."""
        cdef const void* s = self.c_state()
        out = np.empty(self.vtable.observation_size(s), dtype=np.float32)
        cdef float[::1] view = out
        cdef int seat = _observer(self, player)    # the player to act read right before the observation
        self.vtable.observation(s, seat, &view[0])
        return out

    def write_observation(self, float[::1] out not None, player=None):
        """Write the observation into a preallocated float32 buffer (no allocation)."""
        cdef const void* s = self.c_state()
        cdef int size = self.vtable.observation_size(s)
        if out.shape[0] != size:
            raise ValueError(f"buffer has {out.shape[0]} entries, the observation has {size}")
        cdef int seat = _observer(self, player)
        self.vtable.observation(s, seat, &out[0])

    # --- serialization, pickling, equality ---------------------------------------
    def serialize(self):
        """The position as compact JSON text (to_dict(); game.deserialize_state reads it)."""
        self._ready()
        return json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=True)

    def __reduce__(self):
        self._ready()
        return (_restore, (self.game, self.serialize()))

    def __eq__(self, other):
        """Equal positions of the same game (the same to_dict())."""
        self._ready()
        if not isinstance(other, GameState):
            return NotImplemented
        (<GameState>other)._ready()
        if strcmp((<GameState>other).vtable.name, self.vtable.name) != 0:
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __repr__(self):
        if self._raw() == NULL or self.vtable == NULL or self.game is None:
            return f"<{type(self).__name__} (not initialised)>"
        return f"<{type(self).__name__} of {self.vtable.name.decode()}>"

    def __hash__(self):
        raise TypeError(f"{type(self).__name__} is mutable and unhashable; hash state.serialize() instead")

    def _random_playouts(self, n_games, seed, threads, first_game=0):
        self._ready()
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
    st._ready()
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
    cdef uint64 seed_value = _int_in(seed, "seed", 0, 2 ** 64 - 1)
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


def state_size(GameState st not None):
    """Bytes of the C struct of `st`: what a clone copies and a playout or search works on."""
    st._ready()
    return st.vtable.state_size
