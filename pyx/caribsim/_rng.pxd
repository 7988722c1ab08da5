# xoshiro256** seeded through splitmix64: a small, fast generator whose whole
# state lives inside a game's state struct, so that a memcpy'd state carries its
# own random stream and the same seed gives the same game on any machine.
from caribsim._types cimport uint64, uint32


ctypedef struct Rng:
    uint64 s[4]     # xoshiro256** state words; never all zero


cdef inline uint64 _rotl(uint64 x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64 splitmix64(uint64* x) noexcept nogil:
    x[0] += <uint64>0x9E3779B97F4A7C15
    cdef uint64 z = x[0]
    z = (z ^ (z >> 30)) * <uint64>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef inline void rng_seed(Rng* r, uint64 seed, uint64 stream) noexcept nogil:
    """Seed from (seed, stream): the stream lets game i of a run get its own
    sequence that depends only on the run's seed and i."""
    cdef uint64 x = seed ^ (stream * <uint64>0xD1B54A32D192ED03)
    cdef int i
    for i in range(4):
        r.s[i] = splitmix64(&x)
    if r.s[0] == 0 and r.s[1] == 0 and r.s[2] == 0 and r.s[3] == 0:
        r.s[0] = 1


cdef inline uint64 rng_next(Rng* r) noexcept nogil:
    cdef uint64 result = _rotl(r.s[1] * 5, 7) * 9
    cdef uint64 t = r.s[1] << 17
    r.s[2] ^= r.s[0]
    r.s[3] ^= r.s[1]
    r.s[1] ^= r.s[2]
    r.s[0] ^= r.s[3]
    r.s[2] ^= t
    r.s[3] = _rotl(r.s[3], 45)
    return result


cdef inline uint32 rng_below(Rng* r, uint32 n) noexcept nogil:
    """Uniform integer in [0, n) for n >= 1 (Lemire's multiply-shift with rejection)."""
    cdef uint64 m = (rng_next(r) >> 32) * <uint64>n
    cdef uint32 low = <uint32>m
    cdef uint32 threshold
    if low < n:
        threshold = (<uint32>(-n)) % n
        while low < threshold:
            m = (rng_next(r) >> 32) * <uint64>n
            low = <uint32>m
    return <uint32>(m >> 32)
