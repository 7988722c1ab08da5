# The C game interface. Every game fills one GameVTable with functions over its
# own state struct (passed as void*); the search and the batch drivers use only
# this table, so adding a game means filling a table, not changing the search.
# All functions are nogil and touch no Python object.
from caribsim._types cimport int16, int32, uint64


ctypedef struct GameVTable:
    const char* name
    Py_ssize_t state_size          # bytes of the state struct: a clone is a memcpy of this size
    int num_actions                # size of the flat action space
    int max_chance_outcomes
    int max_players
    # flow
    int (*num_players)(const void* s) noexcept nogil
    int (*current_player)(const void* s) noexcept nogil      # seat, PLAYER_CHANCE or PLAYER_TERMINAL
    int (*legal_actions)(const void* s, int16* out) noexcept nogil   # sorted; out holds num_actions
    void (*apply_action)(void* s, int action) noexcept nogil  # the action must be legal
    # chance: outcomes with integer weights (probability = weight / sum)
    int (*chance_outcomes)(const void* s, int16* actions, int32* weights) noexcept nogil
    int (*sample_chance)(void* s) noexcept nogil             # an outcome drawn with the state's own RNG
    # results
    void (*returns)(const void* s, double* out) noexcept nogil   # per seat, at the end
    void (*scores)(const void* s, double* out) noexcept nogil    # per seat: game score (e.g. total VP) now
    # randomness and hidden information
    void (*reseed)(void* s, uint64 seed, uint64 stream) noexcept nogil  # reseed the state's RNG
    # resample what `observer` cannot see (NULL: perfect information)
    void (*determinize)(void* s, int observer) noexcept nogil
    # observations (the acting seat's view; see each game's docs for the layout)
    int (*observation_size)(const void* s) noexcept nogil
    void (*observation)(const void* s, int seat, float* out) noexcept nogil
    # whole games: uniformly random decisions (the state's RNG) and sampled chance to the
    # end; returns the number of decisions
    int32 (*random_playout)(void* s) noexcept nogil
    # playout policy and evaluation
    int (*heuristic_action)(void* s, const int16* legal, int n) noexcept nogil  # a cheap rollout choice
    # static value per seat in [0, 1] (for cut-off rollouts)
    void (*evaluate)(const void* s, double* out) noexcept nogil


# The shims of the table, written once. CARIBSIM_VT_SHIMS(T, P) declares the functions of a
# game with struct T and function prefix P (P_current_player, P_legal_actions, P_apply, ...;
# T and the functions keep these names in C: cnames in the game's .pxd) and defines static
# inline shims over void* that call them (C converts void* to T*); CARIBSIM_VT_FILL(t, P)
# points table t at them; CARIBSIM_VT_DETERMINIZE(T, P) adds the shim of P_determinize.
# (T has an n_players field.) scores, reseed and observation_size differ per game and
# stay in its .pyx.
# A game expands the macros in a late-included block (directive preliminary_late_includes_cy28),
# where T is defined.
cdef extern from *:
    """
    #include <stdint.h>
    #define CARIBSIM_VT_SHIMS(T, P) \
    static inline int P##_vt_num_players(const void* s) { return ((const T*)s)->n_players; } \
    static int P##_current_player(const T* s); \
    static inline int P##_vt_current_player(const void* s) { return P##_current_player(s); } \
    static int P##_legal_actions(const T* s, int16_t* out); \
    static inline int P##_vt_legal_actions(const void* s, int16_t* out) { return P##_legal_actions(s, out); } \
    static void P##_apply(T* s, int action); \
    static inline void P##_vt_apply(void* s, int action) { P##_apply(s, action); } \
    static int P##_chance_outcomes(const T* s, int16_t* actions, int32_t* weights); \
    static inline int P##_vt_chance_outcomes(const void* s, int16_t* actions, int32_t* weights) { \
        return P##_chance_outcomes(s, actions, weights); } \
    static int P##_sample_chance(T* s); \
    static inline int P##_vt_sample_chance(void* s) { return P##_sample_chance(s); } \
    static void P##_returns(const T* s, double* out); \
    static inline void P##_vt_returns(const void* s, double* out) { P##_returns(s, out); } \
    static void P##_observation(const T* s, int seat, float* out); \
    static inline void P##_vt_observation(const void* s, int seat, float* out) { P##_observation(s, seat, out); } \
    static int32_t P##_random_playout(T* s); \
    static inline int32_t P##_vt_random_playout(void* s) { return P##_random_playout(s); } \
    static int P##_heuristic_action(T* s, const int16_t* legal, int n); \
    static inline int P##_vt_heuristic_action(void* s, const int16_t* legal, int n) { \
        return P##_heuristic_action(s, legal, n); } \
    static void P##_evaluate(const T* s, double* out); \
    static inline void P##_vt_evaluate(const void* s, double* out) { P##_evaluate(s, out); }
    #define CARIBSIM_VT_DETERMINIZE(T, P) \
    static void P##_determinize(T* s, int observer); \
    static inline void P##_vt_determinize(void* s, int observer) { P##_determinize(s, observer); }
    #define CARIBSIM_VT_FILL(t, P) ( \
     (t)->num_players = P##_vt_num_players, \
     (t)->current_player = P##_vt_current_player, \
     (t)->legal_actions = P##_vt_legal_actions, \
     (t)->apply_action = P##_vt_apply, \
     (t)->chance_outcomes = P##_vt_chance_outcomes, \
     (t)->sample_chance = P##_vt_sample_chance, \
     (t)->returns = P##_vt_returns, \
     (t)->observation = P##_vt_observation, \
     (t)->random_playout = P##_vt_random_playout, \
     (t)->heuristic_action = P##_vt_heuristic_action, \
     (t)->evaluate = P##_vt_evaluate, \
     (void)0)
    """


cdef inline void split_win(int n, const int32* total, const int32* tiebreak, double* out) noexcept nogil:
    """Every game's returns at the end: 1 for the best (total, then tiebreak), a shared win
    split equally, 0 for the others. A seat that may not win has a total below everyone's."""
    cdef int i, winners = 0
    cdef int32 best_total = total[0], best_tie = tiebreak[0]
    for i in range(1, n):
        if total[i] > best_total or (total[i] == best_total and tiebreak[i] > best_tie):
            best_total = total[i]
            best_tie = tiebreak[i]
    for i in range(n):
        winners += total[i] == best_total and tiebreak[i] == best_tie
    for i in range(n):
        out[i] = 1.0 / winners if total[i] == best_total and tiebreak[i] == best_tie else 0.0

cdef class GameState:
    """Base of every compiled state class: gives the search the game's table and
    a pointer to the C state inside the Python object."""
    cdef const GameVTable* vtable
    cdef readonly object game        # the Game object that made the state; None: not initialised
    cdef object _hist                # the newest Moves chunk of the history (shared by clones); None when empty
    cdef int _hist_n                 # how many of that chunk's actions are this state's
    # The legal moves last listed by legal_actions(), one bit per action, so that the
    # apply_action after it checks a bit instead of listing them again. Valid while _legal_ok:
    # set by legal_actions(), cleared by every move; a new object (a clone, a state read from
    # a dict) starts without, so it lists anew.
    cdef uint64 _legal_bits[16]      # 1024 bits: every game's action space (checked in c_state)
    cdef bint _legal_ok
    cdef void* _ready_struct         # _raw() once c_state() has found the state made by its game; NULL before
    cdef void* _raw(self) noexcept   # the struct inside the object (each game's class); NULL in the base
    # The struct of a state made by its game. An object made without it (GameState.__new__,
    # a subclass's __new__) raises RuntimeError here, so every method refuses it.
    cdef void* c_state(self) except NULL
    cdef int _ready(self) except -1
    # What differs per game on the Python call path; the path itself (apply_action, clone,
    # child) is the base's, so a call from Python stays in C from the argument to the history.
    cdef GameState _blank(self)                                     # a new state of the same class, to fill
    cdef int _illegal(self, int action, const int16* legal, int n) except -1   # raise the game's ValueError
    cpdef GameState clone(self)


# The history: a chain of chunks of actions, the newest last, each holding the full one
# before it, shared by clones as a game only grows. A state owns the first `_hist_n` actions
# of its newest chunk; a move appends in place while nobody has appended past them, else
# (another state went on from the same position, or the chunk is full) it starts a chunk:
# a copy of its own part, or an empty one after the full one. So a move allocates once per
# HISTORY_CHUNK moves on a line of play, and a clone copies two fields. Chunks are not
# tracked by the garbage collector (a chain holds no cycle) and are kept on a free list.
cdef enum:
    HISTORY_CHUNK = 32               # actions per chunk: 64 bytes of them, a 96-byte object

cdef class Moves:
    cdef readonly object prev        # the (full) chunk before; None at the start of the history
    cdef int n                       # actions written into `actions` (by every state sharing it)
    cdef int16 actions[HISTORY_CHUNK]

cdef list history_list(object h, int n)                # the actions of chunk h's chain, h holding n of them
cdef int set_history(GameState st, list actions) except -1   # st's history: these action ids (a state read from a dict)
