"""Token bytes -> word id: an open-addressing hash table (linear probing, 64-bit FNV-1a).

Design note: ``_corpus_file`` design note (after G). Each counting thread fills its own (the
vocabulary scan, ``_recording``); the vocabulary's read-only table for training is
``reader/_lookup.pxd``'s, which hashes with the same ``fnv1a``.
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from hsw2v._kernels.reader._codes cimport ERR_MEMORY, OK, resize


cdef inline uint64_t fnv1a(const uint8_t *p, int64_t n) noexcept nogil:
    """64-bit FNV-1a hash of n bytes."""
    cdef uint64_t h = 14695981039346656037ULL
    cdef int64_t i
    for i in range(n):
        h = (h ^ p[i]) * 1099511628211ULL
    return h


cdef struct Table:
    int64_t *slot       # entry index per slot, -1 when empty; size mask + 1
    uint64_t mask
    uint64_t *hash      # per entry
    int64_t *offset     # per entry: its bytes are keys[offset : offset + length]
    int64_t *length
    int64_t *value      # per entry: word id (vocabulary) or count (counting)
    int64_t n           # entries
    int64_t capacity    # entries allocated
    uint8_t *keys
    int64_t keys_used
    int64_t keys_capacity


cdef inline void table_free(Table *t) noexcept nogil:
    """Free the table's arrays and leave it empty: every pointer NULL, every count 0."""
    free(t.slot)
    free(t.hash)
    free(t.offset)
    free(t.length)
    free(t.value)
    free(t.keys)
    memset(t, 0, sizeof(Table))


cdef inline int table_init(Table *t, int64_t expected) noexcept nogil:
    """An empty table for about ``expected`` entries (it grows)."""
    cdef uint64_t size = 16
    while size < <uint64_t>(2 * expected + 2):
        size <<= 1
    t.mask = size - 1
    t.n = 0
    t.capacity = max(expected, 16)
    t.keys_used = 0
    t.keys_capacity = max(8 * t.capacity, 1024)
    t.slot = <int64_t *>malloc(size * sizeof(int64_t))
    t.hash = <uint64_t *>malloc(t.capacity * sizeof(uint64_t))
    t.offset = <int64_t *>malloc(t.capacity * sizeof(int64_t))
    t.length = <int64_t *>malloc(t.capacity * sizeof(int64_t))
    t.value = <int64_t *>malloc(t.capacity * sizeof(int64_t))
    t.keys = <uint8_t *>malloc(t.keys_capacity)
    if (t.slot == NULL or t.hash == NULL or t.offset == NULL or t.length == NULL
            or t.value == NULL or t.keys == NULL):
        table_free(t)
        return ERR_MEMORY
    cdef uint64_t i
    for i in range(size):
        t.slot[i] = -1
    return OK


cdef inline int64_t table_find(const Table *t, const uint8_t *p, int64_t n,
                               uint64_t h) noexcept nogil:
    """Slot holding the key p[:n] (hash h), or the empty slot where it would go."""
    cdef uint64_t i = h & t.mask
    cdef int64_t e
    while True:
        e = t.slot[i]
        if e < 0:
            return i
        if t.hash[e] == h and t.length[e] == n and memcmp(t.keys + t.offset[e], p, n) == 0:
            return i
        i = (i + 1) & t.mask


cdef inline int64_t table_lookup(const Table *t, const uint8_t *p, int64_t n) noexcept nogil:
    """The value of key p[:n], or -1."""
    cdef int64_t e = t.slot[table_find(t, p, n, fnv1a(p, n))]
    return t.value[e] if e >= 0 else -1


cdef inline int table_grow(Table *t) noexcept nogil:
    """Double the slots (rehash from the stored hashes) and the entry arrays."""
    cdef uint64_t size = 2 * (t.mask + 1), i
    cdef int64_t e
    cdef int64_t *slot = <int64_t *>malloc(size * sizeof(int64_t))
    if slot == NULL:
        return ERR_MEMORY
    for i in range(size):
        slot[i] = -1
    for e in range(t.n):
        i = t.hash[e] & (size - 1)
        while slot[i] >= 0:
            i = (i + 1) & (size - 1)
        slot[i] = e
    free(t.slot)
    t.slot = slot
    t.mask = size - 1
    return OK


cdef inline int table_add(Table *t, const uint8_t *p, int64_t n, uint64_t h, int64_t i,
                   int64_t value) noexcept nogil:
    """Insert key p[:n] (hash h, not present) into empty slot i."""
    cdef void *grown
    cdef int64_t capacity
    if t.keys_used + n > t.keys_capacity:
        capacity = max(2 * t.keys_capacity, t.keys_used + n)
        grown = realloc(t.keys, capacity)
        if grown == NULL:
            return ERR_MEMORY
        t.keys = <uint8_t *>grown
        t.keys_capacity = capacity
    if t.n == t.capacity:
        capacity = 2 * t.capacity
        if (resize(<void **>&t.hash, capacity * sizeof(uint64_t))
                or resize(<void **>&t.offset, capacity * sizeof(int64_t))
                or resize(<void **>&t.length, capacity * sizeof(int64_t))
                or resize(<void **>&t.value, capacity * sizeof(int64_t))):
            return ERR_MEMORY
        t.capacity = capacity
    memcpy(t.keys + t.keys_used, p, n)
    t.hash[t.n] = h
    t.offset[t.n] = t.keys_used
    t.length[t.n] = n
    t.value[t.n] = value
    t.slot[i] = t.n
    t.keys_used += n
    t.n += 1
    if <uint64_t>(2 * t.n) > t.mask:
        return table_grow(t)
    return OK


cdef inline int64_t table_count(Table *t, const uint8_t *p, int64_t n) noexcept nogil:
    """Add one to the count of key p[:n] (new keys are appended: first-seen order); returns
    the key's entry (its rank in first-seen order), or ERR_MEMORY."""
    cdef uint64_t h = fnv1a(p, n)
    cdef int64_t i = table_find(t, p, n, h)
    cdef int64_t e = t.slot[i]
    if e >= 0:
        t.value[e] += 1
        return e
    e = t.n
    if table_add(t, p, n, h, i, 1) != OK:
        return ERR_MEMORY
    return e
