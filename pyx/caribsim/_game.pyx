# cython: language_level=3
"""The base class of compiled game states (see _game.pxd for the C interface)."""


cdef class GameState:
    cdef void* c_state(self) noexcept:
        return NULL
