# What both searches share about their pools of plain C items (nodes, paths): growth by
# doubling, with the GIL taken only to raise when memory or the int32 index space runs out.
from libc.stdlib cimport realloc
from caribsim._types cimport int32


cdef inline int grow_pool(void** items, int32* capacity, size_t item_size, const char* what) except -1 nogil:
    """Double the pool ``*items`` of ``*capacity`` items of ``item_size`` bytes (indices are
    int32); ``what`` names it in the error ("the MCTS node pool")."""
    cdef void* grown
    if capacity[0] > 0x3fffffff:
        with gil:
            raise MemoryError(f"{what.decode()} is full ({capacity[0]} entries)")
    grown = realloc(items[0], 2 * <size_t>capacity[0] * item_size)
    if grown == NULL:
        with gil:
            raise MemoryError(f"cannot grow {what.decode()} beyond {capacity[0]} entries")
    items[0] = grown
    capacity[0] *= 2
    return 0
