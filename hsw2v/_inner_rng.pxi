# The random streams and the negative draw of the training kernels. Included by _inner.pyx.
#
# Design note: one xorshift64* stream per job (Vigna 2016), seeded through splitmix64 from
# (seed, epoch, job index), so that a run with one worker is bit-identical from run to run
# (_inner design note F). The subsampling, the reduced windows and the negatives are drawn
# from it, in the order the reference of tests/test_kernels.py replays.

# --------------------------------------------------------------------------------------------
# Random streams: xorshift64* per job, seeded through splitmix64 from (seed, epoch, job).
# --------------------------------------------------------------------------------------------

cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += <uint64_t>0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline uint32_t next_random(uint64_t *state) noexcept nogil:
    """Next 32 random bits (xorshift64*, Vigna 2016)."""
    cdef uint64_t x = state[0]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    state[0] = x
    return <uint32_t>((x * <uint64_t>0x2545F4914F6CDD1DULL) >> 32)


cdef uint64_t job_seed_nogil(uint64_t seed, uint64_t epoch, uint64_t job) noexcept nogil:
    """The random stream's start for one job: a mix of (seed, epoch, job), never zero."""
    cdef uint64_t s = splitmix64(splitmix64(splitmix64(seed) ^ epoch) ^ job)
    return s if s != 0 else <uint64_t>0x9E3779B97F4A7C15ULL


def job_seed(uint64_t seed, uint64_t epoch, uint64_t job):
    """The random stream's start for one job: a mix of (seed, epoch, job), never zero."""
    return job_seed_nogil(seed, epoch, job)


# --------------------------------------------------------------------------------------------
# Negative sampling's draw (the step itself is _path.pxd's ns_step).
# --------------------------------------------------------------------------------------------

# The bucket index over the cumulative table has at most 2**NEG_INDEX_BITS buckets (32 KiB of
# int32: it stays in the first cache levels, which a bisection over V entries does not)
DEF NEG_INDEX_BITS = 13


cdef struct NegTable:  # the draw's tables (shared, read-only)
    const uint32_t *cum    # V entries: cumulative count**ns_exponent, cum[V-1] > 0
    int64_t n              # V
    const int32_t *index   # (cum[V-1] - 1 >> shift) + 2 entries, see neg_index
    int shift


def neg_index(const uint32_t[::1] cum_table):
    """The bucket index of the negative draw over ``cum_table`` (non-decreasing, last > 0):
    ``(index, shift)`` with ``index[k]`` the first word whose entry is ``>= k << shift``
    (``bisect_left``), at most ``n - 1``. A uniform ``x`` below ``cum_table[-1]`` falls in
    bucket ``k = x >> shift``, and its word (the first entry ``>= x``) lies in ``index[k] ..
    index[k + 1]``: the bisection runs over those few entries instead of all V."""
    cdef int64_t n = cum_table.shape[0]
    if n < 1 or cum_table[n - 1] == 0:
        raise ValueError("cum_table must be non-empty with a positive last entry")
    cum = np.asarray(cum_table)
    total = int(cum[n - 1])
    shift = max(0, int(total - 1).bit_length() - NEG_INDEX_BITS)
    buckets = ((total - 1) >> shift) + 1
    bounds = np.arange(buckets + 1, dtype=np.uint64) << np.uint64(shift)
    index = np.minimum(np.searchsorted(cum.astype(np.uint64), bounds, side="left"), n - 1)
    return np.ascontiguousarray(index, dtype=np.int32), shift


cdef inline int32_t draw_word(const NegTable *t, uint64_t *rng) noexcept nogil:
    """A word drawn with probability proportional to its step in ``t.cum``: the first index
    whose entry is >= a uniform integer below cum[n-1] (gensim's ``bisect_left``), found by
    bisecting only the entries of that integer's bucket (``neg_index``): the same word as a
    bisection over the whole table, for the same random number."""
    cdef uint32_t x = next_random(rng) % t.cum[t.n - 1]
    cdef const int32_t *bucket = t.index + (x >> t.shift)
    cdef int64_t lo = bucket[0], hi = bucket[1], mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if t.cum[mid] >= x:
            hi = mid
        else:
            lo = mid + 1
    return <int32_t>lo


cdef inline int32_t draw_word_bisect(const uint32_t *cum_table, int64_t n,
                                     uint64_t *rng) noexcept nogil:
    """``draw_word`` by bisection over the whole table (its twin for the tests)."""
    cdef uint32_t x = next_random(rng) % cum_table[n - 1]
    cdef int64_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if cum_table[mid] >= x:
            hi = mid
        else:
            lo = mid + 1
    return <int32_t>lo


cdef inline int draw_negatives(
    const NegTable *t,          # IN   the draw's tables
    int32_t target,             # IN   the word to predict
    int negative,               # IN   number of draws
    int32_t *negs,              # OUT  target, then the kept draws (negative + 1 slots)
    uint64_t *rng,              # IN/OUT the job's random stream
) noexcept nogil:
    """Fill ``negs`` with the target and ``negative`` draws, leaving out draws equal to the
    target (as gensim, which skips them); returns how many entries were written."""
    cdef int k, count = 1
    cdef int32_t w
    negs[0] = target
    for k in range(negative):
        w = draw_word(t, rng)
        if w != target:
            negs[count] = w
            count += 1
    return count
