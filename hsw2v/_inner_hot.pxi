# The private hot rows: each job's own copy of the hottest inner nodes. Included by _inner.pyx.
#
# Design note: see _inner design note B. With several workers each job trains a private copy
# of the most visited inner nodes (rows of syn1) and of the most frequent words' rows of
# syn1neg (every thread draws them as negatives), and adds its change back (Vuurens et al.
# 2016), so threads do not pass those cache lines back and forth. ``HotSet`` names the rows
# (shared, read-only), ``HotCopy`` is one job's copies; ``private_row`` and ``flush_rows`` (in
# _inner_job.pxi, beside the job's state) pull and push them.

cdef struct HotSet:  # which rows (of syn1 or syn1neg) each job trains a private copy of
    int n             # private rows (0: none)
    int lo            # when slot is NULL: the private rows are rows lo .. lo + n - 1
    const int32_t *ids   # n: the shared row of each private row
    const int32_t *slot  # per shared row: its private row, -1 for none; or NULL (see lo)


cdef struct HotCopy:  # one job's private copies of the HotSet's rows
    float *hot        # n x d: the private rows
    float *base       # n x d: the same rows as they were when the job last pulled them
    int32_t *count    # per private row: visits since its last pull (0: not pulled yet)
    int32_t *dirty    # the private rows pulled since the last flush (n_dirty of them)
    int n_dirty


cdef inline int32_t private_slot(const HotSet *hs, int32_t r) noexcept nogil:
    """The private row of shared row ``r``, or -1 when jobs train ``r`` in place."""
    if hs.slot != NULL:
        return hs.slot[r]
    if <uint32_t>(r - hs.lo) < <uint32_t>hs.n:
        return r - hs.lo
    return -1


cdef inline bint is_private(const HotSet *hs, int32_t r) noexcept nogil:
    """Whether jobs train a private copy of row ``r`` (then its shared row is not prefetched:
    the prefetch asks for the line to write, which would take it from the other cores)."""
    return private_slot(hs, r) >= 0


cdef inline void sync_hot(float *shared, float *hot, float *base, size_t n,
                          float scale) noexcept nogil:
    """Add a job's change of private hot rows to the shared rows
    (shared += scale * (hot - base)), then restart both private copies from the result, which
    holds the other threads' changes too."""
    cdef size_t q
    cdef float v
    for q in range(n):
        v = shared[q] + scale * (hot[q] - base[q])
        shared[q] = v
        hot[q] = v
        base[q] = v


cdef int alloc_hot_copy(HotCopy *c, int n, int d) noexcept nogil:
    """Buffers for a job's private copies of n rows; 0, or -1 when out of memory."""
    c.hot = <float *>malloc(max(<size_t>n * d, 1) * sizeof(float))
    c.base = <float *>malloc(max(<size_t>n * d, 1) * sizeof(float))
    c.count = <int32_t *>calloc(max(n, 1), sizeof(int32_t))
    c.dirty = <int32_t *>malloc(max(n, 1) * sizeof(int32_t))
    c.n_dirty = 0
    if c.hot == NULL or c.base == NULL or c.count == NULL or c.dirty == NULL:
        return -1
    return 0


cdef void free_hot_copy(HotCopy *c) noexcept nogil:
    free(c.hot)
    free(c.base)
    free(c.count)
    free(c.dirty)


cdef tuple _fill_hot_set(HotSet *hs, ids, Py_ssize_t n_rows):
    """Fill ``hs`` for the private rows ``ids`` of a matrix of ``n_rows`` rows: a plain range
    when they are the highest ids (the top of a tree) or the lowest (the most frequent words),
    else a slot table. Returns the arrays ``hs`` points into (keep them alive)."""
    cdef Py_ssize_t n = len(ids)
    cdef int32_t[::1] ids_view
    cdef int32_t[::1] slot_view
    lo = n_rows - n
    if n and np.array_equal(np.sort(ids), np.arange(n)):
        lo = 0
    hs.n = <int>n
    hs.lo = <int>lo
    hs.slot = NULL
    slot = None
    if n and np.array_equal(np.sort(ids), np.arange(lo, lo + n)):
        ids = np.arange(lo, lo + n, dtype=np.int32)
    elif n:
        slot = np.full(n_rows, -1, dtype=np.int32)
        slot[ids] = np.arange(n, dtype=np.int32)
        slot_view = slot
        hs.slot = &slot_view[0]
    if not n:
        ids = np.zeros(1, dtype=np.int32)  # never read
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    ids_view = ids
    hs.ids = &ids_view[0]
    return ids, slot
