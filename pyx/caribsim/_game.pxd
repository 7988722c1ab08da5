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
    void (*apply_action)(void* s, int action) noexcept nogil # the action must be legal
    # chance: outcomes with integer weights (probability = weight / sum)
    int (*chance_outcomes)(const void* s, int16* actions, int32* weights) noexcept nogil
    int (*sample_chance)(void* s) noexcept nogil             # an outcome drawn with the state's own RNG
    # results
    void (*returns)(const void* s, double* out) noexcept nogil   # per seat, at the end
    void (*scores)(const void* s, double* out) noexcept nogil    # per seat: game score (e.g. total VP) now
    # randomness and hidden information
    void (*reseed)(void* s, uint64 seed, uint64 stream) noexcept nogil  # reseed the state's RNG
    void (*determinize)(void* s, int observer) noexcept nogil  # resample what `observer` cannot see (NULL: perfect information)
    # observations (the acting seat's view; see each game's docs for the layout)
    int (*observation_size)(const void* s) noexcept nogil
    void (*observation)(const void* s, int seat, float* out) noexcept nogil
    # whole games: uniformly random decisions (the state's RNG) and sampled chance to the
    # end; returns the number of decisions
    int32 (*random_playout)(void* s) noexcept nogil
    # playout policy and evaluation
    int (*heuristic_action)(void* s, const int16* legal, int n) noexcept nogil  # a cheap rollout choice
    void (*evaluate)(const void* s, double* out) noexcept nogil # static value per seat in [0, 1] (for cut-off rollouts)


cdef class GameState:
    """Base of every compiled state class: gives the search the game's table and
    a pointer to the C state inside the Python object."""
    cdef const GameVTable* vtable
    cdef readonly object game        # the Game object that made the state; None: not initialised
    cdef object _hist                # history as a shared chain (previous chain, action); None when empty
    cdef void* _raw(self) noexcept   # the struct inside the object (each game's class); NULL in the base
    # The struct of a state made by its game. An object made without it (GameState.__new__,
    # a subclass's __new__) raises RuntimeError here, so every method refuses it.
    cdef void* c_state(self) except NULL
    cdef int _ready(self) except -1
    cdef int _push(self, tuple slot, int action) except -1


cdef list chain_list(object h)       # a history chain as a list of actions
cdef tuple history_slot()            # an unfilled (previous, action) pair for GameState._push
