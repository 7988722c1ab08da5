# cython: language_level=3
"""Vectorised batch of games over the C game interface (caribsim._game.GameVTable).

``VectorGame`` keeps n game states in one contiguous malloc'd array of state structs
(``vtable.state_size`` bytes each) and drives them with the game's C table only, so it
works unchanged for every game in the registry. Every batch call releases the GIL for
the whole batch.

Invariant between calls: every state is at a decision node (chance nodes are resolved
with the state's own RNG right after each step and each reset; a finished game is reset
at once, after its returns were recorded).
"""
cimport cython
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy
from caribsim._types cimport int16, int32, uint8, uint64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._game cimport GameVTable, GameState

import operator
import numpy as np
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


def game_info(state):
    """The C table of a compiled game state, as a dict (for adapters and tests)."""
    if not isinstance(state, GameState):
        raise TypeError(f"state must be a compiled caribsim game state, got {type(state).__name__}")
    cdef const GameVTable* vt = (<GameState>state).vtable
    return {
        "name": vt.name.decode(),
        "state_size": vt.state_size,
        "num_actions": vt.num_actions,
        "max_chance_outcomes": vt.max_chance_outcomes,
        "max_players": vt.max_players,
        "perfect_information": vt.determinize == NULL,
    }


def _index(value, what, lo, hi):
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, got bool")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, got {type(value).__name__}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{what} must be in {lo}..{hi}, got {v}")
    return v


cdef class VectorGame:
    """n games of one kind stepped together in C.

        >>> import numpy as np, caribsim
        >>> vg = caribsim.VectorGame("puerto_rico", n=1024, players=4, seed=0)
        >>> mask = vg.legal_mask()            # (n, A) uint8, read-only view
        >>> obs = vg.observations()           # (n, obs) float32, acting seat's view
        >>> vg.step(actions)                  # (n,) ints, each legal in its game
        >>> vg.rewards(), vg.terminated()     # returns of the games that just ended

    ``game`` is a game name (with ``**options`` passed to ``caribsim.load_game``) or a
    loaded game object. Game slot ``i`` draws its randomness from ``(seed, i, episode)``
    only. The arrays returned by ``legal_mask``, ``observations``, ``current_players``,
    ``rewards``, ``terminated`` and ``scores`` are read-only views of buffers owned by
    the VectorGame, overwritten by the next call: copy them to keep them.
    """
    cdef const GameVTable* vt
    cdef char* states
    cdef char* template
    cdef int16* legal_buf
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
    cdef bint busy             # a batch call runs without the GIL: no second call meanwhile
    cdef object _mask, _obs, _players, _rewards, _term, _episodes, _lengths, _final_lengths
    cdef uint8[:, ::1] mask_v
    cdef float[:, ::1] obs_v
    cdef int32[::1] players_v
    cdef float[:, ::1] rewards_v
    cdef uint8[::1] term_v
    cdef uint64[::1] episodes_v
    cdef int32[::1] lengths_v
    cdef int32[::1] final_lengths_v

    def __cinit__(self):
        self.states = NULL
        self.template = NULL
        self.legal_buf = NULL

    def __dealloc__(self):
        free(self.states)
        free(self.template)
        free(self.legal_buf)

    def __init__(self, game, n=1024, seed=0, **options):
        from caribsim._api import load_game
        cdef Py_ssize_t count = _index(n, "n", 1, 2 ** 31 - 1)
        cdef uint64 seed_value = _index(seed, "seed", 0, 2 ** 64 - 1)
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
        self.vt = gs.vtable
        if self.vt.observation_size == NULL or self.vt.observation == NULL:
            raise ValueError(f"game {self.vt.name.decode()!r} has no observation in its C table")
        self.game = game
        self.name = self.vt.name.decode()
        self.count = count
        self.ssize = self.vt.state_size
        self.num_actions = self.vt.num_actions
        self.seed = seed_value
        self.template = <char*>malloc(self.ssize)
        self.states = <char*>malloc(self.ssize * count)
        self.legal_buf = <int16*>malloc(sizeof(int16) * (self.num_actions + 1))
        if self.template == NULL or self.states == NULL or self.legal_buf == NULL:
            raise MemoryError(f"cannot allocate {count} states of {self.ssize} bytes")
        memcpy(self.template, gs.c_state(), self.ssize)
        self.num_players = self.vt.num_players(self.template)
        if not 1 <= self.num_players <= 64:
            raise ValueError(f"VectorGame supports up to 64 players, got {self.num_players}")
        self.observation_size = self.vt.observation_size(self.template)
        P = self.num_players
        self._mask = np.zeros((count, self.num_actions), dtype=np.uint8)
        self._obs = np.zeros((count, self.observation_size), dtype=np.float32)
        self._players = np.zeros(count, dtype=np.int32)
        self._rewards = np.zeros((count, P), dtype=np.float32)
        self._term = np.zeros(count, dtype=np.bool_)
        self._episodes = np.zeros(count, dtype=np.uint64)
        self._lengths = np.zeros(count, dtype=np.int32)
        self._final_lengths = np.zeros(count, dtype=np.int32)
        self.mask_v = self._mask
        self.obs_v = self._obs
        self.players_v = self._players
        self.rewards_v = self._rewards
        self.term_v = self._term.view(np.uint8)
        self.episodes_v = self._episodes
        self.lengths_v = self._lengths
        self.final_lengths_v = self._final_lengths
        self.reset()

    # --- C loops -------------------------------------------------------------------
    cdef inline void* _state(self, Py_ssize_t i) noexcept nogil:
        return self.states + i * self.ssize

    cdef void _reset_slot(self, Py_ssize_t i) noexcept nogil:
        cdef void* s = self.states + i * self.ssize
        memcpy(s, self.template, self.ssize)
        self.vt.reseed(s, self.seed, _stream(i, self.episodes_v[i]))
        self.players_v[i] = _resolve_chance(self.vt, s)
        self.lengths_v[i] = 0

    cdef inline void _mask_row(self, Py_ssize_t i) noexcept nogil:
        cdef int k, m
        cdef uint8* row = &self.mask_v[i, 0]
        memset(row, 0, self.num_actions)
        m = self.vt.legal_actions(self.states + i * self.ssize, self.legal_buf)
        for k in range(m):
            row[self.legal_buf[k]] = 1

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
                if a < 0 or a >= self.num_actions or self.mask_v[i, a] == 0:
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

    cdef void _step(self, const Py_ssize_t* acts) noexcept nogil:
        cdef Py_ssize_t i
        cdef int p, j
        cdef void* s
        cdef double ret[64]
        for i in range(self.count):
            s = self.states + i * self.ssize
            self.vt.apply_action(s, <int>acts[i])
            self.lengths_v[i] += 1
            p = _resolve_chance(self.vt, s)
            if p == PLAYER_TERMINAL:
                self.vt.returns(s, ret)
                for j in range(self.num_players):
                    self.rewards_v[i, j] = <float>ret[j]
                self.term_v[i] = 1
                self.final_lengths_v[i] = self.lengths_v[i]
                self.episodes_v[i] += 1
                self._reset_slot(i)
            else:
                if self.term_v[i]:
                    for j in range(self.num_players):
                        self.rewards_v[i, j] = 0.0
                    self.term_v[i] = 0
                self.players_v[i] = p
            self._mask_row(i)            # while the state is in cache: the next step checks against it
        self.mask_fresh = True
        self.obs_fresh = False

    # --- Python API ------------------------------------------------------------------
    cdef _enter(self):
        if self.busy:
            raise RuntimeError("this VectorGame is being used by another thread; "
                               "use one VectorGame per thread")
        self.busy = True

    def __len__(self):
        return self.count

    @property
    def n(self):
        return self.count

    def reset(self, seed=None):
        """Start every game afresh (episode counters back to 0; ``seed`` replaces the seed)."""
        cdef Py_ssize_t i
        if seed is not None:
            self.seed = _index(seed, "seed", 0, 2 ** 64 - 1)
        self._enter()
        with nogil:
            for i in range(self.count):
                self.episodes_v[i] = 0
                self.term_v[i] = 0
                self.final_lengths_v[i] = 0
                memset(&self.rewards_v[i, 0], 0, sizeof(float) * self.num_players)
                self._reset_slot(i)
            self._fill_mask()
            self.obs_fresh = False
        self.busy = False

    def legal_mask(self):
        """(n, num_actions) uint8: 1 where the action is legal for the player to act."""
        if not self.mask_fresh:
            self._enter()
            with nogil:
                self._fill_mask()
            self.busy = False
        return self._ro(self._mask)

    def observations(self):
        """(n, observation_size) float32: each game from its acting player's seat."""
        cdef Py_ssize_t i
        if not self.obs_fresh:
            self._enter()
            with nogil:
                for i in range(self.count):
                    self.vt.observation(self.states + i * self.ssize, self.players_v[i], &self.obs_v[i, 0])
            self.obs_fresh = True
            self.busy = False
        return self._ro(self._obs)

    def current_players(self):
        """(n,) int32: the seat to act in each game (always a seat: no chance, no end)."""
        return self._ro(self._players)

    def rewards(self):
        """(n, players) float32: the returns of the games that ended at the last step
        (1 for the winner, shared wins split), 0 for the others."""
        return self._ro(self._rewards)

    def terminated(self):
        """(n,) bool: games that ended at the last step (they were reset already)."""
        return self._ro(self._term)

    def episode_lengths(self):
        """(n,) int32: decisions of each game's last finished episode (0 before any)."""
        return self._ro(self._final_lengths)

    def episodes(self):
        """(n,) uint64: finished episodes per game slot since the last reset()."""
        return self._ro(self._episodes)

    def step(self, actions):
        """Apply ``actions[i]`` in game i for every i, resolve chance, record the returns
        of the games that end and reset them. An illegal action raises ValueError naming
        the game index, with every state unchanged (all actions are checked first)."""
        arr = np.asarray(actions)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"actions must be an integer array, got dtype {arr.dtype}")
        if arr.shape != (self.count,):
            raise ValueError(f"actions must have shape ({self.count},), got {arr.shape}")
        acts = np.ascontiguousarray(arr, dtype=np.intp)
        cdef Py_ssize_t[::1] av = acts
        cdef Py_ssize_t bad
        self._enter()
        with nogil:
            bad = self._first_illegal(&av[0])
            if bad < 0:
                self._step(&av[0])
        self.busy = False
        if bad >= 0:
            self._illegal(bad, int(arr[bad]))

    def get_state(self, i):
        """A copy of game i as a Python state object of the game (for inspection)."""
        cdef Py_ssize_t k = _index(i, "game index", 0, self.count - 1)
        st = self.game.new_initial_state(seed=0)
        self._enter()
        memcpy((<GameState>st).c_state(), self._state(k), self.ssize)
        self.busy = False
        return st

    def scores(self):
        """(n, players) float64: each game's current score per seat (e.g. total VP)."""
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

    cdef _illegal(self, Py_ssize_t i, long a):
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
                         f"{self.players_v[i]}; legal: {shown}. No game was changed.")

    @staticmethod
    def _ro(arr):
        v = arr.view()
        v.flags.writeable = False
        return v

    def __repr__(self):
        return (f"<VectorGame {self.name} n={self.count} players={self.num_players} "
                f"actions={self.num_actions} observation={self.observation_size}>")
