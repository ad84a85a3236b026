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

cdef inline int32_t draw_word(const uint32_t *cum_table, int64_t n, uint64_t *rng) noexcept nogil:
    """A word drawn with probability proportional to its step in ``cum_table`` (n > 0 words,
    cum_table[n-1] > 0): the first index whose entry is >= a uniform integer below
    cum_table[n-1] (gensim's ``bisect_left``)."""
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
    const uint32_t *cum_table,  # IN   V entries
    int64_t n,                  # IN   V
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
        w = draw_word(cum_table, n, rng)
        if w != target:
            negs[count] = w
            count += 1
    return count
