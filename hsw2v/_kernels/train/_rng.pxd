"""The random streams and the negative draw of the training kernels (inline).

Design note: one xorshift64* stream per job (Vigna 2016), seeded through splitmix64 from
(seed, epoch, job index), so that a run with one worker is bit-identical from run to run
(``_inner`` design note F). The subsampling, the reduced windows and the negatives are drawn
from it, in the order the reference of tests/test_kernels.py replays. The negative draw is
gensim's (a uniform integer below ``cum[-1]``, the first entry ``>=`` it), found through the
bucket index ``_inner.neg_index`` builds. Integer arithmetic only: every module that cimports
it (``_inner`` at each CPU level, ``_corpus_file`` for ``job_seed_nogil``) draws the same.
"""

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

from hsw2v._kernels.train._model cimport NegTable

# The bucket index over the cumulative table has at most 2**NEG_INDEX_BITS buckets (32 KiB of
# int32: it stays in the first cache levels, which a bisection over V entries does not)
cdef enum:
    NEG_INDEX_BITS = 13


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


cdef inline uint64_t job_seed_nogil(uint64_t seed, uint64_t epoch, uint64_t job) noexcept nogil:
    """The random stream's start for one job: a mix of (seed, epoch, job), never zero."""
    cdef uint64_t s = splitmix64(splitmix64(splitmix64(seed) ^ epoch) ^ job)
    return s if s != 0 else <uint64_t>0x9E3779B97F4A7C15ULL


cdef inline int32_t draw_word(const NegTable *t, uint64_t *rng) noexcept nogil:
    """A word drawn with probability proportional to its step in ``t.cum``: the first index
    whose entry is >= a uniform integer below cum[n-1] (gensim's ``bisect_left``), found by
    bisecting only the entries of that integer's bucket (``neg_index``): the same word as a
    bisection over the whole table, for the same random number."""
    cdef uint32_t x = next_random(rng) % t.cum[t.n - 1]
    cdef const int32_t *bucket = t.index + (x >> t.shift)
    cdef int64_t base = bucket[0], n = bucket[1] - bucket[0], half
    if n <= 0:
        return <int32_t>base
    while n > 1:  # branch-free: the step is a conditional move, not a jump
        half = n >> 1
        base = base + half if t.cum[base + half - 1] < x else base
        n -= half
    return <int32_t>(base + (t.cum[base] < x))


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


cdef inline int lend_negatives(
    int32_t target,             # IN   the word to predict
    const int32_t *draws,       # IN   a set drawn for another word (its draws, not its target)
    int n,                      # IN   their number
    int32_t *negs,              # OUT  target, then the draws kept (n + 1 slots)
) noexcept nogil:
    """Fill ``negs`` with the target and a shared set's draws, leaving out draws equal to the
    target, the rule ``draw_negatives`` applies to fresh ones (CBOW's shared negatives,
    ``_job.draw_centre``); returns how many entries were written."""
    cdef int k, count = 1
    negs[0] = target
    for k in range(n):
        if draws[k] != target:
            negs[count] = draws[k]
            count += 1
    return count
