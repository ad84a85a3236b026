"""The private hot rows: each job's own copy of the hottest rows (inline).

Design note: see ``_inner`` design note B. With several workers each job trains a private
copy of the most visited inner nodes (rows of syn1) and of the most frequent words' rows of
syn1neg (every thread draws them as negatives), and adds its change back (Vuurens et al.
2016), so threads do not pass those cache lines back and forth. ``HotSet``
(``train/_model.pxd``) names the rows (shared, read-only), ``HotCopy`` is one job's copies;
``private_row`` and ``flush_rows`` (``train/_job.pxd``, beside the job's state) pull and push
them.
"""

from libc.stdint cimport int32_t, uint32_t
from libc.stdlib cimport calloc, free, malloc

from hsw2v._kernels.train._model cimport HotSet


cdef struct HotCopy:  # one job's private copies of the HotSet's rows
    float *hot        # n x d: the private rows
    float *base       # n x d: the same rows as they were when the job last pulled them
    int32_t *count    # per private row: visits since its last pull (0: not pulled yet)
    int32_t *dirty    # the private rows pulled since the last flush (n_dirty of them)
    int n_dirty


cdef inline int32_t private_slot(const HotSet *rows, int32_t r) noexcept nogil:
    """The private row of shared row ``r``, or -1 when jobs train ``r`` in place."""
    if rows.slot != NULL:
        return rows.slot[r]
    if <uint32_t>(r - rows.lo) < <uint32_t>rows.n:
        return r - rows.lo
    return -1


cdef inline bint is_private(const HotSet *rows, int32_t r) noexcept nogil:
    """Whether jobs train a private copy of row ``r`` (then its shared row is not prefetched:
    the prefetch asks for the line to write, which would take it from the other cores)."""
    return private_slot(rows, r) >= 0


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


cdef inline int alloc_hot_copy(HotCopy *c, int n, int d) noexcept nogil:
    """Buffers for a job's private copies of n rows; 0, or -1 when out of memory."""
    c.hot = <float *>malloc(max(<size_t>n * d, 1) * sizeof(float))
    c.base = <float *>malloc(max(<size_t>n * d, 1) * sizeof(float))
    c.count = <int32_t *>calloc(max(n, 1), sizeof(int32_t))
    c.dirty = <int32_t *>malloc(max(n, 1) * sizeof(int32_t))
    c.n_dirty = 0
    if c.hot == NULL or c.base == NULL or c.count == NULL or c.dirty == NULL:
        return -1
    return 0


cdef inline void free_hot_copy(HotCopy *c) noexcept nogil:
    free(c.hot)
    free(c.base)
    free(c.count)
    free(c.dirty)
