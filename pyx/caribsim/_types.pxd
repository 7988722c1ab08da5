# Fixed-width integer types and the constants shared by every game module.
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

ctypedef int8_t int8
ctypedef int16_t int16
ctypedef int32_t int32
ctypedef int64_t int64
ctypedef uint8_t uint8
ctypedef uint16_t uint16
ctypedef uint32_t uint32
ctypedef uint64_t uint64

# current_player() values that are not seats (OpenSpiel's numbering).
cdef enum:
    PLAYER_CHANCE = -1
    PLAYER_TERMINAL = -4


cdef extern from *:
    """
    static inline int caribsim_popcount64(unsigned long long x) { return __builtin_popcountll(x); }
    static inline int caribsim_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    """
    int popcount64 "caribsim_popcount64"(uint64 x) nogil
    int ctz64 "caribsim_ctz64"(uint64 x) nogil
