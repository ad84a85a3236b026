"""Token bytes -> word id for the readers: the vocabulary's read-only table (inline).

Design note: ``_corpus_file`` design note (after G). Filled once with the GIL
(``_corpus_file.Vocab``), then only read, by every range's thread at once. One 32-byte slot
(half a cache line, aligned) per entry holds the key's 64-bit FNV-1a hash (``fnv1a`` of
``reader/_token_table.pxd``, the counting table's), its word id, its length and, up to
``INLINE_KEY`` bytes, the key itself; a longer key's bytes lie in ``long_keys`` and the slot
holds their offset. So looking up a token reads one cache line of the table, where the
counting table (slot -> entry arrays -> key bytes) reads four, each a miss for a word outside
the cache. Open addressing, linear probing, a power-of-two table at most half full.

``append_known`` looks up a span of a line's tokens in groups of ``GROUP``: it hashes the
group's tokens and prefetches their slots first, then resolves them, so that the group's
misses overlap instead of following one another. The ids it appends are exactly the
per-token lookups' (``lookup``), in order: only when the memory is read changes.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t, uintptr_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

from hsw2v._kernels.reader._codes cimport ERR_MEMORY, OK
from hsw2v._kernels.reader._token_table cimport fnv1a


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define HSW2V_PREFETCH_READ(p) __builtin_prefetch((const void *)(p), 0, 3)
    #else
    #define HSW2V_PREFETCH_READ(p) ((void)0)
    #endif
    """
    void HSW2V_PREFETCH_READ(const void *p) noexcept nogil  # a hint; no effect on results


cdef enum:
    INLINE_KEY = 16  # key bytes a slot holds itself
    GROUP = 16       # tokens hashed and prefetched before they are resolved


cdef struct Slot:
    uint64_t hash
    int32_t value            # the word id; -1: an empty slot
    int32_t length           # the key's bytes
    uint8_t key[INLINE_KEY]  # the key (length <= INLINE_KEY), else its offset in long_keys


cdef struct Lookup:
    Slot *slot           # mask + 1 slots, 64-byte aligned (inside ``memory``)
    void *memory         # what was allocated for the slots
    uint64_t mask
    int64_t n            # entries
    uint8_t *long_keys   # the bytes of the keys longer than INLINE_KEY
    int64_t long_used
    int64_t long_capacity


cdef inline void lookup_free(Lookup *t) noexcept nogil:
    """Free the table and leave it empty: every pointer NULL, every count 0."""
    free(t.memory)
    free(t.long_keys)
    memset(t, 0, sizeof(Lookup))


cdef inline int lookup_init(Lookup *t, int64_t entries) noexcept nogil:
    """An empty table for at most ``entries`` keys (it does not grow)."""
    cdef uint64_t size = 16, i
    memset(t, 0, sizeof(Lookup))
    while size < <uint64_t>(2 * entries + 2):
        size <<= 1
    t.memory = malloc(size * sizeof(Slot) + 64)
    if t.memory == NULL:
        return ERR_MEMORY
    t.slot = <Slot *>((<uintptr_t>t.memory + 63) & ~(<uintptr_t>63))
    t.mask = size - 1
    for i in range(size):
        t.slot[i].value = -1
    return OK


cdef inline const uint8_t *slot_key(const Lookup *t, const Slot *s) noexcept nogil:
    """The bytes of slot ``s``'s key."""
    cdef int64_t offset
    if s.length <= INLINE_KEY:
        return s.key
    memcpy(&offset, s.key, sizeof(int64_t))
    return t.long_keys + offset


cdef inline bint same_key(const Lookup *t, const Slot *s, const uint8_t *p,
                          int64_t n) noexcept nogil:
    """Whether slot ``s`` holds the key p[:n] (its hash already equal)."""
    if s.length != n:
        return False
    cdef const uint8_t *key = slot_key(t, s)
    cdef int64_t j
    for j in range(n):
        if key[j] != p[j]:
            return False
    return True


cdef inline int64_t find_slot(const Lookup *t, const uint8_t *p, int64_t n,
                              uint64_t h) noexcept nogil:
    """The slot holding the key p[:n] (hash h), or the empty slot where it would go."""
    cdef uint64_t i = h & t.mask
    cdef const Slot *s
    while True:
        s = &t.slot[i]
        if s.value < 0 or (s.hash == h and same_key(t, s, p, n)):
            return <int64_t>i
        i = (i + 1) & t.mask


cdef inline int lookup_add(Lookup *t, const uint8_t *p, int64_t n, int32_t value) noexcept nogil:
    """Add the key p[:n] with ``value`` (>= 0), unless it is there: OK, 1 when it was kept
    (the first value stays), or ERR_MEMORY. At most the ``entries`` of ``lookup_init``."""
    cdef uint64_t h = fnv1a(p, n)
    cdef Slot *s = &t.slot[find_slot(t, p, n, h)]
    cdef int64_t capacity
    cdef void *grown
    if s.value >= 0:
        return 1
    if n > INLINE_KEY:
        if t.long_used + n > t.long_capacity:
            capacity = max(2 * t.long_capacity, t.long_used + n, 1024)
            grown = realloc(t.long_keys, capacity)
            if grown == NULL:
                return ERR_MEMORY
            t.long_keys = <uint8_t *>grown
            t.long_capacity = capacity
        memcpy(t.long_keys + t.long_used, p, n)
        memcpy(s.key, &t.long_used, sizeof(int64_t))
        t.long_used += n
    else:
        memcpy(s.key, p, n)
    s.hash = h
    s.length = <int32_t>n
    s.value = value
    t.n += 1
    return OK


cdef inline int64_t lookup(const Lookup *t, const uint8_t *p, int64_t n) noexcept nogil:
    """The word id of the key p[:n], or -1."""
    return t.slot[find_slot(t, p, n, fnv1a(p, n))].value


cdef inline void append_known(const Lookup *t, const uint8_t *line, const int64_t *start,
                              const int64_t *length, int64_t count, int32_t *ids,
                              int64_t *n_ids) noexcept nogil:
    """Append to ids[n_ids[0]:] the word id of each of the ``count`` tokens
    line[start[k] : start[k] + length[k]] that has one, in order (see the design note)."""
    cdef uint64_t hashes[GROUP]
    cdef int64_t k0 = 0, k, g, value
    while k0 < count:
        g = min(<int64_t>GROUP, count - k0)
        for k in range(g):
            hashes[k] = fnv1a(line + start[k0 + k], length[k0 + k])
            HSW2V_PREFETCH_READ(&t.slot[hashes[k] & t.mask])
        for k in range(g):
            value = t.slot[find_slot(t, line + start[k0 + k], length[k0 + k], hashes[k])].value
            if value >= 0:
                ids[n_ids[0]] = <int32_t>value
                n_ids[0] += 1
        k0 += g
