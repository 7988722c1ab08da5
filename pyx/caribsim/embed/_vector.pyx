# cython: language_level=3
"""Vectorised batch of games over the C game interface (caribsim._game.GameVTable).

``VectorGame`` keeps n game states in one contiguous malloc'd array of state structs
(``vtable.state_size`` bytes each) and drives them with the game's C table only, so it
works unchanged for every game in the registry. Every batch call releases the GIL for
the whole batch.

Invariant between calls: every state is at a decision node (chance nodes are resolved
with the state's own RNG right after each step and each reset; a finished game is reset
at once, after its returns, scores and final state were recorded in the "final" buffers).

The C loops trust only memory no caller can write: the states, the actions (copied in
before the check) and the buffers behind the returned arrays, which are exported
read-only (``_Buffer``), so no view can be made writable.
"""
from libc.stdlib cimport malloc, calloc, free
from cpython.buffer cimport PyBUF_WRITABLE, PyBUF_FORMAT
from libc.string cimport memset, memcpy
from caribsim._types cimport int16, int32, uint8, uint64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL, popcount64, uint32
from caribsim._rng cimport Rng, rng_seed, rng_below
from caribsim._game cimport GameVTable, GameState

import numpy as np
from caribsim._common import _int_in
cimport numpy as cnp
cnp.import_array()


# --- C helpers (nogil) ------------------------------------------------------------

cdef inline int _resolve_chance(const GameVTable* vt, void* s) noexcept nogil:
    """Sample and apply chance outcomes until a decision or the end; returns the player."""
    cdef int p = vt.current_player(s)
    while p == PLAYER_CHANCE:
        vt.apply_action(s, vt.sample_chance(s))
        p = vt.current_player(s)
    return p


cdef inline uint64 _stream(Py_ssize_t i, uint64 episode) noexcept nogil:
    """RNG stream of game slot i's episode: depends only on (i, episode)."""
    return ((<uint64>i + 1) << 32) ^ episode


cdef inline uint64 _sampler_stream(Py_ssize_t i, uint64 episode) noexcept nogil:
    """Stream of the generator of ``sample_legal`` beside game slot i: bit 63 (never set in
    a game stream, i < 2**31) keeps it apart from the game's own chance stream."""
    return _stream(i, episode) | (<uint64>1 << 63)


def game_info(state):
    """The C table of a compiled game state, as a dict (for adapters and tests)."""
    if not isinstance(state, GameState):
        raise TypeError(f"state must be a compiled caribsim game state, got {type(state).__name__}")
    (<GameState>state)._ready()
    cdef const GameVTable* vt = (<GameState>state).vtable
    return {
        "name": vt.name.decode(),
        "state_size": vt.state_size,
        "num_actions": vt.num_actions,
        "max_chance_outcomes": vt.max_chance_outcomes,
        "max_players": vt.max_players,
        "perfect_information": vt.determinize == NULL,
    }


cdef class _Buffer:
    """Zeroed memory written by a VectorGame's C loops and exported read-only: numpy
    arrays over it cannot be made writable (nor can their base), so what the C code
    trusts (the legal mask, the acting seats) stays the engine's."""
    cdef char* data
    cdef Py_ssize_t size
    cdef Py_ssize_t itemsize

    def __cinit__(self, Py_ssize_t size):
        if size < 0:
            raise ValueError(f"buffer size must be >= 0, got {size}")
        self.size = size
        self.itemsize = 1
        self.data = <char*>calloc(size if size > 0 else 1, 1)
        if self.data == NULL:
            raise MemoryError(f"cannot allocate a buffer of {size} bytes")

    def __dealloc__(self):
        free(self.data)

    def __getbuffer__(self, Py_buffer* view, int flags):
        if flags & PyBUF_WRITABLE:
            raise BufferError("the arrays of a VectorGame are read-only: copy them to change them")
        view.buf = self.data
        view.obj = self
        view.len = self.size
        view.readonly = 1
        view.itemsize = 1
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = "B"
        view.ndim = 1
        view.shape = &self.size
        view.strides = &self.itemsize
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer* view):
        pass


cdef class _Arrays:
    """Every buffer of one VectorGame size, allocated together so that a failed
    (re)allocation changes nothing."""
    cdef object mask_b, obs_b, players_b, rewards_b, term_b, episodes_b, final_b
    cdef object sample_b, fret_b, fscore_b, fobs_b
    cdef object mask, obs, players, rewards, term, episodes, final_lengths
    cdef object sample, final_returns, final_scores, final_obs
    cdef char* states
    cdef char* template
    cdef char* finals            # per game: the state its last finished episode ended in
    cdef int16* legal_buf
    cdef int32* lengths
    cdef int32* counts           # per game: number of legal actions (set with the mask row)
    cdef int32* seats            # 2n: per game a seat argument, then (step's until_next) the seat
    #                              a game advances to once its episode ended; copied in before the C loop
    cdef Rng* rngs               # per game: the generator of sample_legal and until
    cdef Py_ssize_t* acts

    def __cinit__(self):
        self.states = self.template = self.finals = NULL
        self.legal_buf = NULL
        self.lengths = self.counts = self.seats = NULL
        self.rngs = NULL
        self.acts = NULL

    def __dealloc__(self):
        free(self.states)
        free(self.template)
        free(self.finals)
        free(self.legal_buf)
        free(self.lengths)
        free(self.counts)
        free(self.seats)
        free(self.rngs)
        free(self.acts)


cdef _array(_Buffer b, dtype, shape):
    return np.frombuffer(b, dtype=dtype).reshape(shape)


cdef _Arrays _allocate(Py_ssize_t count, Py_ssize_t ssize, int actions, int obs_size, int players):
    cdef _Arrays a = _Arrays()
    a.states = <char*>malloc(ssize * count)
    a.template = <char*>malloc(ssize)
    a.legal_buf = <int16*>malloc(sizeof(int16) * (actions + 1))
    a.lengths = <int32*>calloc(count, sizeof(int32))
    a.acts = <Py_ssize_t*>malloc(sizeof(Py_ssize_t) * count)
    a.finals = <char*>calloc(count, ssize)
    a.counts = <int32*>calloc(count, sizeof(int32))
    a.seats = <int32*>calloc(2 * count, sizeof(int32))
    a.rngs = <Rng*>calloc(count, sizeof(Rng))
    if (a.states == NULL or a.template == NULL or a.legal_buf == NULL or a.lengths == NULL
            or a.acts == NULL or a.finals == NULL or a.counts == NULL or a.seats == NULL
            or a.rngs == NULL):
        raise MemoryError(f"cannot allocate {count} states of {ssize} bytes")
    a.mask_b = _Buffer(count * actions)
    a.obs_b = _Buffer(count * obs_size * sizeof(float))
    a.players_b = _Buffer(count * sizeof(int32))
    a.rewards_b = _Buffer(count * players * sizeof(float))
    a.term_b = _Buffer(count)
    a.episodes_b = _Buffer(count * sizeof(uint64))
    a.final_b = _Buffer(count * sizeof(int32))
    a.sample_b = _Buffer(count * sizeof(Py_ssize_t))
    a.fret_b = _Buffer(count * players * sizeof(float))
    a.fscore_b = _Buffer(count * players * sizeof(double))
    a.fobs_b = _Buffer(count * obs_size * sizeof(float))
    a.mask = _array(a.mask_b, np.uint8, (count, actions))
    a.obs = _array(a.obs_b, np.float32, (count, obs_size))
    a.players = _array(a.players_b, np.int32, (count,))
    a.rewards = _array(a.rewards_b, np.float32, (count, players))
    a.term = _array(a.term_b, np.bool_, (count,))
    a.episodes = _array(a.episodes_b, np.uint64, (count,))
    a.final_lengths = _array(a.final_b, np.int32, (count,))
    a.sample = _array(a.sample_b, np.intp, (count,))
    a.final_returns = _array(a.fret_b, np.float32, (count, players))
    a.final_scores = _array(a.fscore_b, np.float64, (count, players))
    a.final_obs = _array(a.fobs_b, np.float32, (count, obs_size))
    return a


cdef class VectorGame:
    """n games of one kind stepped together in C.

        >>> import numpy as np, caribsim
        >>> vg = caribsim.VectorGame("puerto_rico", n=1024, players=4, seed=0)
        >>> mask = vg.legal_mask()            # (n, A) uint8, read-only view
        >>> obs = vg.observations()           # (n, obs) float32, acting seat's view
        >>> vg.step(actions)                  # (n,) ints, each legal in its game
        >>> vg.rewards(), vg.terminated()     # returns of the games that just ended
        >>> vg.step(vg.sample_legal())        # a uniformly random legal action per game, in C

    ``game`` is a game name (with ``**options`` passed to ``caribsim.load_game``) or a
    loaded game object. Game slot ``i`` draws its randomness from ``(seed, i, episode)``
    only: its chance events from the state's own RNG, ``sample_legal`` from a generator
    beside it. The arrays returned by ``legal_mask``, ``observations``,
    ``current_players``, ``rewards``, ``terminated``, ``episode_lengths``, ``episodes``,
    ``sample_legal`` and the ``final_*`` methods are read-only views of buffers owned by
    the VectorGame (they cannot be made writable), overwritten by the next call: copy
    them to keep them. One thread at a time: a call while another
    thread's call runs raises RuntimeError (docs/thread-safety.md).
    """
    cdef const GameVTable* vt      # NULL until __init__ has succeeded
    cdef _Arrays arrays            # owns every buffer below
    cdef char* states
    cdef char* template
    cdef char* finals
    cdef int16* legal_buf
    cdef int32* lengths
    cdef int32* counts
    cdef int32* seats
    cdef Rng* rngs
    cdef Py_ssize_t* acts
    cdef Py_ssize_t* sample_p
    cdef float* fret_p
    cdef double* fscore_p
    cdef float* fobs_p
    cdef uint8* mask_p
    cdef float* obs_p
    cdef int32* players_p
    cdef float* rewards_p
    cdef uint8* term_p
    cdef uint64* episodes_p
    cdef int32* final_lengths_p
    cdef Py_ssize_t count
    cdef Py_ssize_t ssize
    cdef readonly int num_actions
    cdef readonly int observation_size
    cdef readonly int num_players
    cdef readonly object game
    cdef readonly object name
    cdef uint64 seed
    cdef bint mask_fresh
    cdef bint obs_fresh
    cdef bint busy             # a call is running (its batch without the GIL): no second call meanwhile

    def __cinit__(self):
        self.vt = NULL

    def __init__(self, game, n=1024, seed=0, **options):
        # Everything is checked and allocated before the object changes: a failure leaves it
        # as it was (not initialised), and a VectorGame that is initialised refuses a second
        # __init__ (another thread may be stepping it without the GIL).
        from caribsim._api import load_game
        if self.vt != NULL or self.busy:
            raise RuntimeError("this VectorGame is already initialised: make a new VectorGame")
        cdef Py_ssize_t count = _int_in(n, "n", 1, 2 ** 31 - 1)
        cdef uint64 seed_value = _int_in(seed, "seed", 0, 2 ** 64 - 1)
        if isinstance(game, str):
            game = load_game(game, **options)
        elif options:
            raise TypeError("options are only accepted with a game name, not a loaded game")
        if not hasattr(game, "new_initial_state"):
            raise TypeError(f"game must be a game name or a loaded caribsim game, got {type(game).__name__}")
        proto = game.new_initial_state(seed=0)
        if not isinstance(proto, GameState):
            raise TypeError(f"{type(game).__name__} has no compiled state (GameState) to vectorise")
        cdef GameState gs = <GameState>proto
        cdef const void* ps = gs.c_state()
        cdef const GameVTable* vt = gs.vtable
        if vt.observation_size == NULL or vt.observation == NULL:
            raise ValueError(f"game {vt.name.decode()!r} has no observation in its C table")
        cdef int players = vt.num_players(ps)
        if not 1 <= players <= 64:
            raise ValueError(f"VectorGame supports up to 64 players, got {players}")
        cdef int obs_size = vt.observation_size(ps)
        cdef _Arrays a = _allocate(count, vt.state_size, vt.num_actions, obs_size, players)
        if self.vt != NULL or self.busy:    # another thread initialised it meanwhile
            raise RuntimeError("this VectorGame is already initialised: make a new VectorGame")
        memcpy(a.template, ps, vt.state_size)
        self.arrays = a
        self.states, self.template, self.legal_buf = a.states, a.template, a.legal_buf
        self.lengths, self.acts = a.lengths, a.acts
        self.finals, self.counts, self.seats, self.rngs = a.finals, a.counts, a.seats, a.rngs
        self.sample_p = <Py_ssize_t*>(<_Buffer>a.sample_b).data
        self.fret_p = <float*>(<_Buffer>a.fret_b).data
        self.fscore_p = <double*>(<_Buffer>a.fscore_b).data
        self.fobs_p = <float*>(<_Buffer>a.fobs_b).data
        self.mask_p = <uint8*>(<_Buffer>a.mask_b).data
        self.obs_p = <float*>(<_Buffer>a.obs_b).data
        self.players_p = <int32*>(<_Buffer>a.players_b).data
        self.rewards_p = <float*>(<_Buffer>a.rewards_b).data
        self.term_p = <uint8*>(<_Buffer>a.term_b).data
        self.episodes_p = <uint64*>(<_Buffer>a.episodes_b).data
        self.final_lengths_p = <int32*>(<_Buffer>a.final_b).data
        self.game = game
        self.name = vt.name.decode()
        self.count = count
        self.ssize = vt.state_size
        self.num_actions = vt.num_actions
        self.num_players = players
        self.observation_size = obs_size
        self.seed = seed_value
        self.busy = True            # published busy: no other thread's call runs before the reset
        self.vt = vt
        with nogil:
            self._reset_all()
        self.busy = False

    # --- C loops -------------------------------------------------------------------
    cdef inline void* _state(self, Py_ssize_t i) noexcept nogil:
        return self.states + i * self.ssize

    cdef void _reset_slot(self, Py_ssize_t i) noexcept nogil:
        cdef void* s = self.states + i * self.ssize
        memcpy(s, self.template, self.ssize)
        self.vt.reseed(s, self.seed, _stream(i, self.episodes_p[i]))
        rng_seed(&self.rngs[i], self.seed, _sampler_stream(i, self.episodes_p[i]))
        self.players_p[i] = _resolve_chance(self.vt, s)
        self.lengths[i] = 0

    cdef inline void _mask_row(self, Py_ssize_t i) noexcept nogil:
        cdef int k, m
        cdef uint8* row = self.mask_p + i * self.num_actions
        memset(row, 0, self.num_actions)
        m = self.vt.legal_actions(self.states + i * self.ssize, self.legal_buf)
        for k in range(m):
            row[self.legal_buf[k]] = 1
        self.counts[i] = m

    cdef Py_ssize_t _draw(self, Py_ssize_t i) noexcept nogil:
        """A uniformly random legal action of game i from its mask row (fresh): the k-th
        legal action in id order, k drawn from the game's sampler generator."""
        cdef int m = self.counts[i]
        if m <= 0:
            return -1          # not at a decision node: cannot happen between calls
        cdef int k = <int>rng_below(&self.rngs[i], <uint32>m)
        cdef const uint8* row = self.mask_p + i * self.num_actions
        cdef Py_ssize_t j = 0, A = self.num_actions
        cdef uint64 w
        cdef int c
        while j + 8 <= A:         # mask bytes are 0/1: a word's popcount counts its legal actions
            memcpy(&w, row + j, 8)
            c = popcount64(w)
            if k < c:
                break
            k -= c
            j += 8
        while j < A:
            if row[j]:
                if k == 0:
                    return j
                k -= 1
            j += 1
        return -1

    cdef void _apply(self, Py_ssize_t i, int action) noexcept nogil:
        """Apply a legal action in game i and resolve chance; a finished game has its
        returns, scores and final state recorded, then is reset."""
        cdef void* s = self.states + i * self.ssize
        cdef int p, j, P = self.num_players
        cdef double ret[64]
        self.vt.apply_action(s, action)
        self.lengths[i] += 1
        p = _resolve_chance(self.vt, s)
        if p == PLAYER_TERMINAL:
            self.vt.returns(s, ret)
            for j in range(P):
                self.rewards_p[i * P + j] = <float>ret[j]
                self.fret_p[i * P + j] = <float>ret[j]
            self.vt.scores(s, ret)       # into ret: a game may write more than P entries
            for j in range(P):
                self.fscore_p[i * P + j] = ret[j]
            memcpy(self.finals + i * self.ssize, s, self.ssize)
            self.term_p[i] = 1
            self.final_lengths_p[i] = self.lengths[i]
            self.episodes_p[i] += 1
            self._reset_slot(i)
        else:
            self.players_p[i] = p

    cdef void _advance(self, Py_ssize_t i, int seat, int next_seat, uint64 e0) noexcept nogil:
        """Play uniformly random legal actions (the sampler generator, the same draw as
        ``_draw``: legal_actions is sorted) in game i until ``seat`` is to act, or
        ``next_seat`` once an episode has ended since the slot had finished ``e0``."""
        cdef void* s = self.states + i * self.ssize
        cdef int m
        cdef int target = seat if self.episodes_p[i] == e0 else next_seat
        while self.players_p[i] != target:
            m = self.vt.legal_actions(s, self.legal_buf)
            self._apply(i, self.legal_buf[rng_below(&self.rngs[i], <uint32>m)])
            if self.episodes_p[i] != e0:
                target = next_seat

    cdef void _reset_all(self) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.count):
            self.episodes_p[i] = 0
            self.term_p[i] = 0
            self.final_lengths_p[i] = 0
            memset(self.rewards_p + i * self.num_players, 0, sizeof(float) * self.num_players)
            memset(self.fret_p + i * self.num_players, 0, sizeof(float) * self.num_players)
            memset(self.fscore_p + i * self.num_players, 0, sizeof(double) * self.num_players)
            self._reset_slot(i)
        self._fill_mask()
        self.obs_fresh = False

    cdef void _fill_mask(self) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.count):
            self._mask_row(i)
        self.mask_fresh = True

    cdef Py_ssize_t _first_illegal(self, const Py_ssize_t* acts) noexcept nogil:
        """Index of the first game whose action is not legal, or -1."""
        cdef Py_ssize_t i, a
        cdef int k, m
        if self.mask_fresh:
            for i in range(self.count):
                a = acts[i]
                if a < 0 or a >= self.num_actions or self.mask_p[i * self.num_actions + a] == 0:
                    return i
            return -1
        for i in range(self.count):
            a = acts[i]
            if a < 0 or a >= self.num_actions:
                return i
            m = self.vt.legal_actions(self.states + i * self.ssize, self.legal_buf)
            for k in range(m):
                if self.legal_buf[k] == a:
                    break
            else:
                return i
        return -1

    cdef void _step(self, const Py_ssize_t* acts, bint until) noexcept nogil:
        """One action per game; with ``until``, then random legal actions until the game's
        seat in ``self.seats`` is to act (``self.seats[n + i]`` once its episode has ended in
        this call). rewards/terminated describe this call."""
        cdef Py_ssize_t i
        cdef int P = self.num_players
        cdef uint64 e0
        for i in range(self.count):
            if self.term_p[i]:
                memset(self.rewards_p + i * P, 0, sizeof(float) * P)
                self.term_p[i] = 0
            e0 = self.episodes_p[i]
            self._apply(i, <int>acts[i])
            if until:
                self._advance(i, self.seats[i], self.seats[self.count + i], e0)
            self._mask_row(i)            # while the state is in cache: the next step checks against it
        self.mask_fresh = True
        self.obs_fresh = False

    # --- Python API ------------------------------------------------------------------
    cdef int _enter(self) except -1:
        if self.vt == NULL:
            raise RuntimeError(f"this {type(self).__name__} is not initialised: "
                               f"VectorGame(game, n, seed) makes one")
        if self.busy:
            raise RuntimeError("this VectorGame is being used by another thread; "
                               "use one VectorGame per thread")
        self.busy = True
        return 0

    def __len__(self):
        self._enter()
        self.busy = False
        return self.count

    @property
    def n(self):
        self._enter()
        self.busy = False
        return self.count

    cdef _seat_arg(self, seat, str what):
        """A seat argument as our own int32 array of shape (n,): an int (every game) or
        integers of shape (n,), each a seat 0..players-1; None stays None."""
        if seat is None:
            return None
        P = self.num_players
        if isinstance(seat, (bool, np.bool_)):
            raise TypeError(f"{what} must be a seat (an int 0..{P - 1}) or integers of shape "
                            f"({self.count},), got a bool")
        try:
            arr = np.array(seat, copy=True)     # our own copy: checked, then copied in
        except Exception as e:
            raise TypeError(f"{what} must be a seat (an int 0..{P - 1}) or integers of shape "
                            f"({self.count},): {e}") from None
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{what} must be a seat (an int 0..{P - 1}) or integers of shape "
                            f"({self.count},), got dtype {arr.dtype}")
        if arr.shape == ():
            arr = np.full(self.count, arr, dtype=arr.dtype)
        if arr.shape != (self.count,):
            raise ValueError(f"{what} must be a seat or have shape ({self.count},), got {arr.shape}")
        bad = np.flatnonzero((arr < 0) | (arr >= P))
        if len(bad):
            raise ValueError(f"{what}: game {bad[0]}: seat {arr[bad[0]]} is out of range 0..{P - 1}")
        return arr.astype(np.int32)

    cdef int _copy_seats(self, seats, Py_ssize_t at=0) except -1:
        cdef const int32[:] sv = seats
        cdef Py_ssize_t i
        for i in range(self.count):
            self.seats[at + i] = <int32>sv[i]

    def reset(self, seed=None, until=None):
        """Start every game afresh (episode counters back to 0, the final_* buffers cleared;
        ``seed`` replaces the seed). ``until``: a seat, or one per game: each game then plays
        uniformly random legal actions (as ``sample_legal``) until that seat is to act."""
        cdef uint64 seed_value = 0
        cdef Py_ssize_t i
        if self.vt == NULL:
            self._enter()
        if seed is not None:
            seed_value = _int_in(seed, "seed", 0, 2 ** 64 - 1)
        seats = self._seat_arg(until, "until")
        self._enter()
        if seed is not None:
            self.seed = seed_value
        if seats is not None:
            self._copy_seats(seats)
        with nogil:
            self._reset_all()
            if seats is not None:
                for i in range(self.count):
                    self._advance(i, self.seats[i], self.seats[i], self.episodes_p[i])
                self._fill_mask()
        self.busy = False

    def sample_legal(self):
        """(n,) intp: a uniformly random legal action per game, drawn in C from each game's
        sampler generator (xoshiro256** beside the state, seeded from (seed, i, episode) at
        each episode start; the game's own chance RNG is not touched). Each call draws
        anew; ready to pass to ``step``."""
        cdef Py_ssize_t i
        self._enter()
        with nogil:
            if not self.mask_fresh:
                self._fill_mask()
            for i in range(self.count):
                self.sample_p[i] = self._draw(i)
        self.busy = False
        return self._ro(self.arrays.sample)

    def legal_mask(self):
        """(n, num_actions) uint8: 1 where the action is legal for the player to act."""
        self._enter()
        if not self.mask_fresh:
            with nogil:
                self._fill_mask()
        self.busy = False
        return self._ro(self.arrays.mask)

    def observations(self, seat=None, normalized=False):
        """(n, observation_size) float32: each game from its acting player's seat
        (``seat=None``), from ``seat`` in every game (an int), or from ``seat[i]`` in game i
        (integers of shape (n,)). ``normalized=True``: the game's ``normalize_observation``
        of it (every entry in [0, 1]), a new array rather than a view of the buffer."""
        cdef Py_ssize_t i
        if self.vt == NULL:
            self._enter()
        seats = self._seat_arg(seat, "seat")
        self._enter()
        if seats is not None:
            self._copy_seats(seats)
            with nogil:
                for i in range(self.count):
                    self.vt.observation(self.states + i * self.ssize, self.seats[i],
                                        self.obs_p + i * self.observation_size)
            self.obs_fresh = False        # the buffer holds other seats' views now
        elif not self.obs_fresh:
            with nogil:
                for i in range(self.count):
                    self.vt.observation(self.states + i * self.ssize, self.players_p[i],
                                        self.obs_p + i * self.observation_size)
            self.obs_fresh = True
        self.busy = False
        if normalized:
            return self.game.normalize_observation(self.arrays.obs)
        return self._ro(self.arrays.obs)

    def final_returns(self):
        """(n, players) float32: the returns of each game's last finished episode (kept
        until the next one ends; 0 before any)."""
        self._enter()
        self.busy = False
        return self._ro(self.arrays.final_returns)

    def final_scores(self):
        """(n, players) float64: the scores (as ``scores()``) each game's last finished
        episode ended with (0 before any)."""
        self._enter()
        self.busy = False
        return self._ro(self.arrays.final_scores)

    def final_observations(self, seat, normalized=False):
        """(n, observation_size) float32: the final position of each game's last finished
        episode seen from ``seat`` (an int, or integers of shape (n,)); zeros for games
        that have not finished one. ``normalized=True``: normalised as ``observations``
        (a new array; the rows of games without a finished episode stay zeros)."""
        cdef Py_ssize_t i
        if self.vt == NULL:
            self._enter()
        if seat is None:
            raise TypeError(f"seat must be a seat (an int 0..{self.num_players - 1}) or "
                            f"integers of shape ({self.count},), got None")
        seats = self._seat_arg(seat, "seat")
        self._enter()
        self._copy_seats(seats)
        with nogil:
            for i in range(self.count):
                if self.episodes_p[i] == 0:
                    memset(self.fobs_p + i * self.observation_size, 0,
                           sizeof(float) * self.observation_size)
                else:
                    self.vt.observation(self.finals + i * self.ssize, self.seats[i],
                                        self.fobs_p + i * self.observation_size)
        self.busy = False
        if normalized:
            out = self.game.normalize_observation(self.arrays.final_obs)
            out[np.asarray(self.arrays.episodes) == 0] = 0.0
            return out
        return self._ro(self.arrays.final_obs)

    def final_state(self, i):
        """A copy of the final position of game i's last finished episode as a Python state
        object (terminal); ValueError if game i has not finished an episode."""
        return self._copy_out(i, True)

    def current_players(self):
        """(n,) int32: the seat to act in each game (always a seat: no chance, no end)."""
        self._enter()
        self.busy = False
        return self._ro(self.arrays.players)

    def rewards(self):
        """(n, players) float32: the returns of the games that ended at the last step
        (1 for the winner, shared wins split), 0 for the others."""
        self._enter()
        self.busy = False
        return self._ro(self.arrays.rewards)

    def terminated(self):
        """(n,) bool: games that ended at the last step (they were reset already)."""
        self._enter()
        self.busy = False
        return self._ro(self.arrays.term)

    def episode_lengths(self):
        """(n,) int32: decisions of each game's last finished episode (0 before any)."""
        self._enter()
        self.busy = False
        return self._ro(self.arrays.final_lengths)

    def episodes(self):
        """(n,) uint64: finished episodes per game slot since the last reset()."""
        self._enter()
        self.busy = False
        return self._ro(self.arrays.episodes)

    def step(self, actions, until=None, until_next=None):
        """Apply ``actions[i]`` in game i for every i, resolve chance, record the returns,
        scores and final state of the games that end (``final_*``) and reset them.
        ``actions``: integers of shape (n,) (an array of any integer dtype, read-only and
        strided ones too, or a list). ``until``: a seat, or one per game: after its action
        each game plays uniformly random legal actions (as ``sample_legal``) until that seat
        is to act, across an episode's end too (random opponents in C). ``until_next`` (with
        ``until``; a seat or one per game): the seat a game advances to instead once its
        episode has ended in this call, so that each episode can have its own learner seat
        (the vector environment's ``seat="random"``). An illegal or
        out-of-range action raises ValueError naming the game index, with every state
        unchanged (all actions are checked first)."""
        cdef Py_ssize_t i, bad
        if self.vt == NULL:
            self._enter()
        try:
            arr = np.asarray(actions)
        except Exception as e:
            raise TypeError(f"actions must be integers of shape ({self.count},): {e}") from None
        if arr.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers (an integer array or a list of ints) of shape "
                            f"({self.count},), got dtype {arr.dtype}")
        if arr.shape != (self.count,):
            raise ValueError(f"actions must have shape ({self.count},), got {arr.shape}")
        # uint64 values >= 2**63 wrap to negative ids here: out of range, reported with their value
        cdef const Py_ssize_t[:] av = arr.astype(np.intp, copy=False)
        seats = self._seat_arg(until, "until")
        next_seats = self._seat_arg(until_next, "until_next")
        if next_seats is not None and seats is None:
            raise ValueError("until_next needs until (the seat before the episode ends)")
        self._enter()
        for i in range(self.count):      # into memory no other thread can change during the step
            self.acts[i] = av[i]
        if seats is not None:
            self._copy_seats(seats)
            self._copy_seats(seats if next_seats is None else next_seats, self.count)
        cdef bint use_until = seats is not None
        with nogil:
            bad = self._first_illegal(self.acts)
            if bad < 0:
                self._step(self.acts, use_until)
        self.busy = False
        if bad >= 0:    # the value checked (not arr[bad]: another thread may have changed it)
            a = self.acts[bad]
            self._illegal(bad, a + 2 ** 64 if a < 0 and arr.dtype.kind == "u" else a)

    def get_state(self, i):
        """A copy of game i as a Python state object of the game (for inspection)."""
        return self._copy_out(i, False)

    cdef _copy_out(self, i, bint final):
        if self.vt == NULL:
            self._enter()
        cdef Py_ssize_t k = _int_in(i, "game index", 0, self.count - 1)
        st = self.game.new_initial_state(seed=0)
        if not isinstance(st, GameState) or (<GameState>st).vtable != self.vt:
            raise RuntimeError(f"{type(self.game).__name__}.new_initial_state() no longer makes "
                               f"{self.name} states")
        cdef void* dst = (<GameState>st).c_state()
        self._enter()
        if final and self.episodes_p[k] == 0:
            self.busy = False
            raise ValueError(f"game {k} has not finished an episode since the last reset()")
        memcpy(dst, self.finals + k * self.ssize if final else self._state(k), self.ssize)
        self.busy = False
        return st

    def scores(self):
        """(n, players) float64: each game's current score per seat (e.g. total VP)."""
        if self.vt == NULL:
            self._enter()
        out = np.zeros((self.count, self.num_players), dtype=np.float64)
        cdef double[:, ::1] ov = out
        cdef double buf[64]
        cdef Py_ssize_t i
        cdef int j
        self._enter()
        with nogil:
            for i in range(self.count):
                self.vt.scores(self.states + i * self.ssize, buf)
                for j in range(self.num_players):
                    ov[i, j] = buf[j]
        self.busy = False
        return out

    cdef _illegal(self, Py_ssize_t i, object a):
        st = self.get_state(i)
        legal = st.legal_actions()

        def name(x):
            try:
                return st.action_to_string(x)
            except Exception:
                return "?"
        if 0 <= a < self.num_actions:
            what = f"action {a} ({name(a)})"
        else:
            what = f"action {a} (out of range 0..{self.num_actions - 1})"
        shown = ", ".join(f"{x} ({name(x)})" for x in legal)
        raise ValueError(f"{self.name}: game {i}: {what} is not legal for player "
                         f"{st.current_player()}; legal: {shown}. No game was changed.")

    @staticmethod
    def _ro(arr):
        v = arr.view()
        v.flags.writeable = False
        return v

    def __reduce__(self):
        if self.vt == NULL:
            self._enter()
        raise TypeError("a VectorGame cannot be pickled: make a new one (same game, n and seed "
                        "give the same games)")

    def __repr__(self):
        if self.vt == NULL:
            return f"<{type(self).__name__} (not initialised)>"
        return (f"<VectorGame {self.name} n={self.count} players={self.num_players} "
                f"actions={self.num_actions} observation={self.observation_size}>")
