# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Training kernels of word2vec: hierarchical softmax, and negative sampling beside it.

Design note
-----------
A. What runs without the GIL. ``Trainer.train_job`` takes one job (a batch of whole sentences,
   already mapped to word ids, with their end offsets), releases the GIL and runs: subsampling,
   window reduction, the path walks and the weight updates. Python prepares jobs, the schedule
   and the threads (``hsw2v._train``); the nogil block sees only pointers and integers.
   ``train_job_nogil`` (declared in ``_inner.pxd``) is that block, for C callers that make
   their jobs without the GIL (``hsw2v._corpus_file``).

B. What is shared. Only the weight matrices ``syn0``, ``syn1`` and ``syn1neg`` are written by
   several threads at once, without locks (Hogwild, Recht et al. 2011), as word2vec.c and
   gensim do, except the top of the tree: with ``hot_nodes > 0`` each job trains a private
   copy of the hottest inner nodes (Vuurens et al. 2016), so threads do not pass those cache
   lines back and forth. A private row is pulled from the shared row at its first visit, and
   its change is added back after ``hot_visits`` visits (then pulled again), at the latest
   every ``hot_sync`` centre words and at the job's end; see ``node_row``. The shared copy
   of a private row is never prefetched (``is_private``): the prefetch asks for the lines in
   order to write them, which would take them from the other cores. Everything else a job
   touches is its own: the ``JobState`` struct (hidden vector, error accumulator, subsampled
   ids, path row pointers, private hot rows, drawn negatives, random stream, loss tally) lives
   on that call's stack and heap. ``cum_table`` is shared read-only.

C. Notation (word2vec.c heritage; ``d`` = vector size, ``V`` = vocabulary size).

   =========  ==============================================================================
   syn0       input vectors, V x d (``model.wv.vectors``); IN/OUT
   syn1       inner-node vectors of the Huffman tree, V x d (rows 0..V-2 used); IN/OUT
   codes      uint8 V x L: bit taken at each step of a word's path, root first; IN
   points     int32 V x L: inner node (row of syn1) at each step, root first; IN
   h          the hidden vector predicting a path: a context word's syn0 row (skip-gram) or
              the sum / mean of the window's syn0 rows (CBOW)
   work       accumulated error for h over one path walk, d floats (scratch)
   f          h . syn1[node]; sigmoid(f) = P(bit 0)
   g          dL/df = sigmoid(f) - (1 - code), L = -log P(word | h) (``_path.pxd``, note A);
              the step is ``syn1[node] -= alpha g h``, ``work = -alpha sum g syn1[node]``
   syn1neg    output vectors of negative sampling, V x d, one per word; IN/OUT
   cum_table  uint32 V: cumulative count**ns_exponent scaled to [0, 2**31 - 1]; IN
   negs       the words of one negative-sampling step: the target (label 1) then the drawn
              negatives (label 0), ``negative`` draws with the target's own draws left out
   =========  ==============================================================================

D. The path walks. The hierarchical-softmax gradient has one home, the reference step
   ``hs_step`` of ``_path.pxd`` (Mikolov et al. 2013, eq. for hierarchical softmax; Morin &
   Bengio 2005), with its sign convention (``g = dL/df``); ``hs_path`` here is Word2Vec's
   call of it (table sigmoid, ``work = -alpha dL/dh``), used by the "loop" and "blas"
   variants. The two fast variants are optimisations of that step, each tested as its twin
   (``tests/test_kernel_twins.py``): ``hs_path_fused`` ("fused", CBOW's default) gives the
   reference's bits with ``_vec.h`` loops (the "reference" variant; in skip-gram without
   lock factors, where the context row's ``+= work`` is folded into the last node's pass,
   to the rounding of that one add), and ``_window.h``'s block ("window", skip-gram's
   default) the reference's updates to float rounding. Both keep word2vec.c's arithmetic
   (``g_w2v = (1 - code - sigmoid(f)) * alpha``), which equals the reference's ``-alpha *
   dL/df`` bit for bit (``_path.pxd``, note A). Skip-gram and CBOW differ only in how ``h``
   is formed and where ``work`` goes afterwards.

D'. The one negative-sampling step (Mikolov et al. 2013, "Distributed Representations of
   Words and Phrases", negative sampling objective): ``ns_step`` of ``_path.pxd`` (here
   ``ns_path``), ``hs_step``'s sibling: for one ``h`` it walks the target and its drawn
   negatives instead of the nodes of a path, with label 1 for the target and 0 for the
   negatives, ``g = dL/df = sigmoid(f) - label``, ``work -= alpha g syn1neg[w]``,
   ``syn1neg[w] -= alpha g h``. ``draw_negatives`` draws the words first
   (gensim's draw: a uniform integer below ``cum_table[-1]``, bisected into ``cum_table``; a
   draw equal to the target is skipped, not redrawn); the draws do not depend on the weights,
   so drawing before the walk is the same as gensim's interleaving. With ``negative > 0`` the
   sg and CBOW callers run, per (h, target), first the hierarchical-softmax walk (if ``hs``)
   and its update of the input rows, then the negative-sampling walk with its own ``work``
   and the same update, exactly gensim's order (gensim's ``train_batch_sg`` / ``_cbow`` call
   ``fast_sentence_*_hs`` then ``fast_sentence_*_neg``; CBOW forms ``h`` again from the
   updated rows for the second). The hs code is untouched: ``negative == 0`` costs a branch per
   (context, centre) pair outside the walks. The "window" kernel is hs-only (its blocks move
   a window's contexts together, which would reorder the ns steps), so with ``negative > 0``
   skip-gram takes the "fused" hs walk; "fused" and "window" models use ``_vec.h`` loops for
   the ns walk, "loop" plain loops and "blas" BLAS, as for hs.

E. Departures from word2vec.c/gensim, on purpose: a node with |f| beyond the sigmoid table's
   range is not skipped; sigmoid saturates to 0 or 1 there, so a confidently wrong node still
   gets its full gradient (as fastText does); the same holds for negative sampling, where
   gensim skips a target or negative with |f| >= 6. The loss is the exact -log sigmoid in
   float64, tallied per job, never in a shared float32. Sentences are never truncated.

F. Reproducibility. Every job seeds its random stream from (seed, epoch, job index), so a run
   with one worker is bit-identical from run to run, whatever ``PYTHONHASHSEED`` is. The
   negatives are drawn from the same stream (gensim uses its own 48-bit LCG per thread; the
   distribution of the draws is the same, the sequence is not).

G. NaN safety and the divergence check. The table sigmoid is ``_vec.h``'s (via
   ``_vecops.pxd``, the one definition): a NaN never becomes a table index, it gives a NaN
   gradient. Every walk adds each ``f`` it computes to the job's ``check`` (one float64 add
   per node, off the critical path); ``f`` is a dot product with the hidden vector, so the sum
   is non-finite iff some row the job read (syn0 via ``h``, syn1 / syn1neg) or wrote was. The
   window block, whose per-node loop is the tightest, adds instead the first entry of each
   context row it updated, once per block: a NaN ``f`` at any node makes that row all NaN
   (an infinity is seen once it has produced a NaN, as inf - inf or 0 * inf do). A job
   whose check is non-finite reports its loss as NaN (with or without ``compute_loss``), and
   the epoch drivers (``hsw2v._train``) stop training on it with
   ``hsw2v.divergence.TrainingDivergedError``.

H. Lock factors (gensim's ``wv.vectors_lockf``, "lockf"). Every update of a syn0 row (the
   context row in skip-gram, each window row in CBOW, for hs and ns, in every kernel) is
   scaled by ``lockf[w % len(lockf)]`` of its word ``w``, as gensim's ``our_saxpy(...,
   &words_lockf[w % lockf_len], work, ...)``: 0 freezes a word, a scalar (one entry) scales
   all. syn1 and syn1neg are trained as usual. When every factor is 1 the Trainer keeps no
   factors (``lockf == NULL``) and the kernels take their usual path (the fused skip-gram walk
   still adds ``work`` to the context row inside its last node's pass).

Every nogil routine has a Python-callable twin at the bottom of this file (``py_*``), which
the tests compare with NumPy references.
"""

from libc.math cimport NAN, isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset
from cpython.pycapsule cimport PyCapsule_New

import numpy as np

from scipy.linalg.cython_blas cimport saxpy, sdot

from hsw2v._path cimport axpy_fn, dot_fn, hs_path_nll, hs_step, ns_step as ns_ref_step
from hsw2v._vecops cimport (
    SIGMOID_TABLE_SIZE, hsw2v_axpy, hsw2v_dot, hsw2v_sigmoid_table, hsw2v_sigmoid_table_init,
    hsw2v_update_last, hsw2v_update_then_dot, neg_log_sigmoid, sigmoid_lookup,
)


cdef extern from "_window.h" nogil:
    enum: MAX_BLOCK "HSW2V_MAX_BLOCK"
    double hsw2v_sg_block(int B, int d, float **x, float **work, int L, float **y,
                          const uint8_t *code, float alpha, const hsw2v_sigmoid_table *sig,
                          int compute_loss, double *check, const float *lock)


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define HSW2V_PREFETCH(p) __builtin_prefetch((const void *)(p), 1, 3)
    #else
    #define HSW2V_PREFETCH(p) ((void)0)
    #endif
    """
    void HSW2V_PREFETCH(const void *p) noexcept nogil


cdef inline void prefetch_row(const float *row, int d) noexcept nogil:
    """Ask for a row's cache lines ahead of use (a hint; no effect on results)."""
    cdef int k
    for k in range(0, d, 16):
        HSW2V_PREFETCH(row + k)

# --------------------------------------------------------------------------------------------
# The vector loops of the steps: _vec.h's (the reference), and plain loops and BLAS
# (scipy.linalg.cython_blas), the benchmark-only variants they are measured against.
# --------------------------------------------------------------------------------------------

cdef enum:
    PRIMS_VEC = 0    # _vec.h loops (several accumulators)
    PRIMS_LOOP = 1   # plain loops, vectorised by the compiler (word2vec.c's shape)
    PRIMS_BLAS = 2   # BLAS sdot / saxpy (gensim's shape)

cdef int ONE = 1


cdef inline float blas_dot(int n, const float *x, const float *y) noexcept nogil:
    """x . y (BLAS sdot)"""
    return sdot(&n, <float *>x, &ONE, <float *>y, &ONE)


cdef inline void blas_axpy(int n, float a, const float *x, float *y) noexcept nogil:
    """y := a*x + y (BLAS saxpy)"""
    saxpy(&n, &a, <float *>x, &ONE, y, &ONE)


cdef inline float loop_dot(int n, const float *x, const float *y) noexcept nogil:
    """x . y (plain loop, vectorised by the compiler)"""
    cdef float s = 0.0
    cdef int k
    for k in range(n):
        s += x[k] * y[k]
    return s


cdef inline void loop_axpy(int n, float a, const float *x, float *y) noexcept nogil:
    """y := a*x + y (plain loop, vectorised by the compiler)"""
    cdef int k
    for k in range(n):
        y[k] += a * x[k]


cdef inline dot_fn prims_dot(int prims) noexcept nogil:
    """The step's dot product for ``prims`` (NULL: ``_vec.h``'s, called directly)."""
    if prims == PRIMS_BLAS:
        return blas_dot
    if prims == PRIMS_LOOP:
        return loop_dot
    return NULL


cdef inline axpy_fn prims_axpy(int prims) noexcept nogil:
    """The step's axpy for ``prims`` (NULL: ``_vec.h``'s, called directly)."""
    if prims == PRIMS_BLAS:
        return blas_axpy
    if prims == PRIMS_LOOP:
        return loop_axpy
    return NULL


cdef inline float pdot(int prims, int n, const float *x, const float *y) noexcept nogil:
    """x . y with the ``prims`` loops."""
    if prims == PRIMS_BLAS:
        return blas_dot(n, x, y)
    if prims == PRIMS_LOOP:
        return loop_dot(n, x, y)
    return hsw2v_dot(n, x, y)


cdef inline void paxpy(int prims, int n, float a, const float *x, float *y) noexcept nogil:
    """y := a*x + y with the ``prims`` loops."""
    if prims == PRIMS_BLAS:
        blas_axpy(n, a, x, y)
    elif prims == PRIMS_LOOP:
        loop_axpy(n, a, x, y)
    else:
        hsw2v_axpy(n, a, x, y)


# --------------------------------------------------------------------------------------------
# Sigmoid table and the exact log-sigmoid
# --------------------------------------------------------------------------------------------

cdef float SIGMOID_VALUES[SIGMOID_TABLE_SIZE + 1]
cdef hsw2v_sigmoid_table SIGMOID
hsw2v_sigmoid_table_init(&SIGMOID, SIGMOID_VALUES)


cdef inline float sigmoid(float f) noexcept nogil:
    """sigmoid(f) from the table (nearest entry); 0 or 1 beyond +-8; NaN for NaN (the one
    NaN-safe definition, ``_vec.h``)."""
    return sigmoid_lookup(&SIGMOID, f)


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
# The path walks: the reference step (``_path.pxd``) and its fused optimisation.
# --------------------------------------------------------------------------------------------

cdef double hs_path(
    const float *h,          # IN   hidden vector, d floats
    float *work,             # OUT  -alpha * dL/dh over the path (h's step), d floats
    float **rows,            # IN/OUT the path's inner-node rows (of syn1), root first
    const uint8_t *code,     # IN   bits along the path, root first
    int length,              # IN   path length
    float alpha,             # IN   learning rate
    int d,                   # IN   vector size
    int prims,               # IN   PRIMS_VEC / PRIMS_LOOP / PRIMS_BLAS
    bint compute_loss,
    double *check,           # OUT  += the sum of every f (the job's divergence check)
) noexcept nogil:
    """Word2Vec's use of the reference step (``_path.hs_step``, table sigmoid): work =
    -alpha sum_j g_j rows[j] (old rows), rows[j] -= alpha g_j h, g_j = dL/df_j.

    Returns -log P(word | h) when compute_loss, else 0."""
    memset(work, 0, d * sizeof(float))
    return hs_step(d, h, work, -alpha, rows, NULL, code, NULL, length, NULL, alpha, &SIGMOID,
                   prims_dot(prims), prims_axpy(prims), compute_loss, NULL, check)


cdef inline double ns_path(
    int d, const float *h, float *work, float *syn1neg, const int32_t *negs, int count,
    float alpha, int prims, bint compute_loss, double *check,
) noexcept nogil:
    """Word2Vec's call of the one negative-sampling step (``_path.ns_step``, table sigmoid)
    with the ``prims`` loops."""
    return ns_ref_step(d, h, work, syn1neg, negs, count, alpha, &SIGMOID, prims_dot(prims),
                       prims_axpy(prims), compute_loss, check)


cdef inline double hs_path_fused(
    float *h,                # IN (OUT when apply_to_h)  hidden vector, d floats
    float *work,             # OUT  error for h accumulated over the path, d floats
    float **rows,            # IN/OUT the path's inner-node rows (of syn1), root first
    const uint8_t *code,     # IN   bits along the path, root first
    int length,              # IN   path length (>= 1)
    float alpha,             # IN   learning rate
    int d,                   # IN   vector size
    bint compute_loss,
    bint apply_to_h,         # IN   add work to h at the end (skip-gram: h is the context row)
    double *check,           # OUT  += the sum of every f (the job's divergence check)
) noexcept nogil:
    """An optimisation of the reference step (``hs_path`` with ``PRIMS_VEC``), the same
    results bit for bit (its twin test; with ``apply_to_h`` ``h`` to the rounding of the one
    add folded in): each node's update is fused with the next node's
    dot product, so ``h`` is read once for both (node j+1's row is not touched by node j's
    update, and h does not change during the walk); with ``apply_to_h`` the final
    ``h += work`` is fused into the last node's update. The vector loops are in ``_vec.h``
    (several accumulators, one pass per node). It keeps word2vec.c's sign: its ``g`` is
    ``(1 - code - sigmoid(f)) * alpha = -alpha * dL/df``, the reference's row coefficient
    bit for bit (``_path.pxd``, design note A)."""
    cdef int j
    cdef float f, g
    cdef float *row = rows[0]
    cdef float *next_row
    cdef double loss = 0.0, fsum = 0.0
    memset(work, 0, d * sizeof(float))
    f = hsw2v_dot(d, h, row)
    for j in range(length):
        fsum += f
        if compute_loss:
            loss += neg_log_sigmoid((1.0 - 2.0 * code[j]) * f)
        g = (1.0 - code[j] - sigmoid(f)) * alpha
        if j + 1 < length:
            next_row = rows[j + 1]
            if g == 0.0:
                f = hsw2v_dot(d, h, next_row)
            else:
                f = hsw2v_update_then_dot(d, g, h, row, work, next_row)
            row = next_row
        elif apply_to_h:
            hsw2v_update_last(d, g, h, row, work)
        elif g != 0.0:
            hsw2v_axpy(d, g, row, work)
            hsw2v_axpy(d, g, h, row)
    check[0] += fsum
    return loss


# --------------------------------------------------------------------------------------------
# One job: subsample, then train skip-gram or CBOW over whole sentences.
# --------------------------------------------------------------------------------------------

cdef enum:
    KERNEL_FUSED = 0   # path walk with each update fused into the next dot (default)
    KERNEL_LOOP = 1    # pair-by-pair: dot, then two axpy, as plain loops (word2vec.c's shape)
    KERNEL_BLAS = 2    # pair-by-pair through BLAS sdot/saxpy (gensim's shape)
    KERNEL_WINDOW = 3  # skip-gram: blocks of a window's contexts walk the path together
    KERNEL_REFERENCE = 4  # pair-by-pair: the reference step with _vec.h loops (fused's twin)

KERNELS = {"fused": KERNEL_FUSED, "loop": KERNEL_LOOP, "blas": KERNEL_BLAS,
           "window": KERNEL_WINDOW, "reference": KERNEL_REFERENCE}


# --------------------------------------------------------------------------------------------
# Negative sampling: the draw and the one routine that holds its gradient.
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


cdef inline int kernel_prims(int kernel) noexcept nogil:
    """The vector loops a kernel variant's reference steps use (``_path.pxd``)."""
    if kernel == KERNEL_BLAS:
        return PRIMS_BLAS
    if kernel == KERNEL_LOOP:
        return PRIMS_LOOP
    return PRIMS_VEC


cdef struct HotSet:  # which inner nodes (rows of syn1) each job trains a private copy of
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


cdef struct ModelView:
    float *syn0
    float *syn1
    const uint8_t *codes
    const int32_t *points
    const int32_t *lengths
    const uint32_t *sample_int
    int d
    int max_length
    int window
    bint sg
    bint cbow_mean
    bint shrink_windows
    bint compute_loss
    int kernel
    bint prefetch
    bint hs           # train hierarchical softmax (syn1, the tree)
    int negative      # negatives per step; 0: no negative sampling
    float *syn1neg    # V x d when negative > 0
    const uint32_t *cum_table  # V entries when negative > 0
    int64_t n_words   # V
    int block         # window kernel: most contexts walking a path together (<= MAX_BLOCK)
    int64_t hot_sync  # trained centre words between two flushes of the private hot rows
    int hot_visits    # a private row is synced alone after this many visits
    float hot_scale   # a job adds hot_scale x its change of the hot rows back at a sync
    HotSet hot_nodes  # the hottest inner nodes (rows of syn1), private per job
    const float *lockf  # gensim's vectors_lockf: word w's syn0 updates are scaled by
                        # lockf[w % lockf_len]; NULL when every factor is 1 (design note H)
    int64_t lockf_len


cdef struct JobState:
    float *work       # d floats: error accumulated for h
    float *neu1       # d floats: CBOW hidden vector
    float **xrows     # window kernel: a block's context rows of syn0 (MAX_BLOCK pointers)
    int32_t *xwords   # window kernel: a block's context words (MAX_BLOCK)
    float **wrows     # window kernel: a block's error rows, pointers into W (MAX_BLOCK)
    float **yrows     # window kernel: the path rows of syn1 (max_length pointers)
    float *W          # window kernel: the block's errors, MAX_BLOCK x d
    float *xlock      # window kernel: the lock factors of a block's context words (MAX_BLOCK)
    HotCopy nodes     # this job's private copies of m.hot_nodes
    int64_t since     # centre words trained since the last flush of the hot rows
    int32_t *kept     # the job's ids that survived subsampling
    int64_t *ends     # sentence ends in ``kept``
    int32_t *negs     # negative sampling: the target and its negatives (negative + 1)
    uint64_t rng
    double loss
    double check      # the sum of every f the job computed: non-finite iff the job met a
                      # non-finite weight (its divergence check, design note G)


cdef int64_t subsample(const ModelView *m, JobState *st, const int32_t *ids,
                       const int64_t *ends, int64_t n_sentences) noexcept nogil:
    """Keep each token with its word's keep probability; returns the number kept."""
    cdef int64_t s, i, start = 0, k = 0
    cdef int32_t w
    for s in range(n_sentences):
        for i in range(start, ends[s]):
            w = ids[i]
            if m.sample_int[w] < next_random(&st.rng):
                continue
            st.kept[k] = w
            k += 1
        st.ends[s] = k
        start = ends[s]
    return k


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


cdef inline float *node_row(const ModelView *m, JobState *st, int32_t node) noexcept nogil:
    """The row of inner node ``node`` this job trains for one centre word (one visit): the
    shared row of syn1, or for the hottest nodes (see ``Trainer``) the job's private copy,
    pulled from the shared row at the first visit after a flush, and synced alone (its change
    added back, then pulled again) once it has been trained for ``hot_visits`` visits."""
    cdef int32_t k = private_slot(&m.hot_nodes, node), v
    cdef int64_t at
    cdef float *shared = m.syn1 + <int64_t>node * m.d
    cdef HotCopy *c = &st.nodes
    if k < 0:
        return shared
    at = <int64_t>k * m.d
    v = c.count[k]
    if v == 0:
        memcpy(c.hot + at, shared, m.d * sizeof(float))
        memcpy(c.base + at, c.hot + at, m.d * sizeof(float))
        c.dirty[c.n_dirty] = k
        c.n_dirty += 1
    elif v >= m.hot_visits:
        sync_hot(shared, c.hot + at, c.base + at, m.d, m.hot_scale)
        v = 0
    c.count[k] = v + 1
    return c.hot + at


cdef void flush_hot(const ModelView *m, JobState *st) noexcept nogil:
    """Add the change of every private row pulled since the last flush back to the shared
    rows (times hot_scale); each is pulled again at its next visit."""
    cdef int i, k
    cdef int64_t at
    cdef size_t q
    cdef float *shared
    cdef float *hot
    cdef float *base
    cdef HotCopy *c = &st.nodes
    for i in range(c.n_dirty):
        k = c.dirty[i]
        at = <int64_t>k * m.d
        shared = m.syn1 + <int64_t>m.hot_nodes.ids[k] * m.d
        hot = c.hot + at
        base = c.base + at
        for q in range(<size_t>m.d):
            shared[q] = shared[q] + m.hot_scale * (hot[q] - base[q])
        c.count[k] = 0
    c.n_dirty = 0


cdef double sg_window(const ModelView *m, JobState *st, int64_t lo, int64_t hi, int64_t i,
                      const uint8_t *code, int length, float alpha) noexcept nogil:
    """Skip-gram for centre ``i``: the contexts of kept[lo:hi] walk the centre's path (rows
    in st.yrows) in blocks of up to ``m.block`` distinct words (_window.h), with exactly word2vec.c's
    updates.
    Returns the window's -log-likelihood when compute_loss."""
    cdef int d = m.d, B = 0, b, j
    cdef int64_t p
    cdef int32_t word
    cdef bint repeated
    cdef double loss = 0.0
    for p in range(lo, hi + 1):
        if p < hi:
            if p == i:
                continue
            word = st.kept[p]
            repeated = False
            for b in range(B):
                if st.xwords[b] == word:
                    repeated = True
        if B and (p == hi or B == m.block or repeated):
            loss += hsw2v_sg_block(B, d, st.xrows, st.wrows, length, st.yrows, code, alpha,
                                   &SIGMOID, m.compute_loss, &st.check,
                                   st.xlock if m.lockf != NULL else NULL)
            B = 0
        if p < hi:
            st.xwords[B] = word
            st.xrows[B] = m.syn0 + <int64_t>word * d
            st.xlock[B] = lock_of(m, word)
            B += 1
    return loss


cdef inline float lock_of(const ModelView *m, int32_t word) noexcept nogil:
    """The factor of ``word``'s syn0 updates (gensim's ``vectors_lockf``; design note H)."""
    if m.lockf == NULL:
        return 1.0
    return m.lockf[word % m.lockf_len]


cdef inline void prefetch_path(const ModelView *m, int32_t word) noexcept nogil:
    """Prefetch the inner-node rows of ``word``'s path (the next centre's), below the top
    levels, which stay cached anyway."""
    cdef const int32_t *point = m.points + <int64_t>word * m.max_length
    cdef int j
    for j in range(4, m.lengths[word]):
        if not is_private(&m.hot_nodes, point[j]):
            prefetch_row(m.syn1 + <int64_t>point[j] * m.d, m.d)


cdef inline int cbow_hidden(const ModelView *m, JobState *st, int64_t lo, int64_t hi,
                            int64_t i) noexcept nogil:
    """CBOW's h into st.neu1: the sum of the context rows kept[lo:hi] except i, divided by
    their count when cbow_mean; returns the count."""
    cdef int64_t j
    cdef int k, count = 0
    cdef float inv
    memset(st.neu1, 0, m.d * sizeof(float))
    for j in range(lo, hi):
        if j == i:
            continue
        hsw2v_axpy(m.d, 1.0, m.syn0 + <int64_t>st.kept[j] * m.d, st.neu1)
        count += 1
    if count and m.cbow_mean:
        inv = 1.0 / count
        for k in range(m.d):
            st.neu1[k] *= inv
    return count


cdef inline void cbow_spread(const ModelView *m, JobState *st, int64_t lo, int64_t hi,
                             int64_t i, int count) noexcept nogil:
    """CBOW's error back to the inputs: every context row of kept[lo:hi] except i gets
    += st.work (divided by the count first when not cbow_mean)."""
    cdef int64_t j
    cdef int k
    cdef float inv
    if not m.cbow_mean:
        inv = 1.0 / count
        for k in range(m.d):
            st.work[k] *= inv
    for j in range(lo, hi):
        if j != i:
            hsw2v_axpy(m.d, lock_of(m, st.kept[j]), st.work,
                       m.syn0 + <int64_t>st.kept[j] * m.d)


cdef inline double ns_step(const ModelView *m, JobState *st, const float *h, int32_t target,
                           float alpha) noexcept nogil:
    """Draw the negatives of ``target`` from the job's stream, then walk them with ``h``
    (``ns_path``); the error is left in st.work."""
    cdef int count = draw_negatives(m.cum_table, m.n_words, target, m.negative, st.negs,
                                    &st.rng)
    return ns_path(m.d, h, st.work, m.syn1neg, st.negs, count, alpha, kernel_prims(m.kernel),
                   m.compute_loss, &st.check)


cdef void train_sentence(const ModelView *m, JobState *st, int64_t start, int64_t end,
                         int64_t total, float alpha0, float alpha1) noexcept nogil:
    """Train every centre position of kept[start:end]; alpha falls linearly from alpha0 at the
    job's first kept token to alpha1 after its last (``total`` kept tokens).

    Per (h, centre): the hierarchical-softmax walk and its update of the input rows (if hs),
    then the negative-sampling step and its update (if negative > 0), as gensim."""
    cdef int64_t i, j, lo, hi
    cdef int b, k, count
    cdef int d = m.d
    cdef float alpha
    cdef int32_t centre
    cdef const uint8_t *code = NULL
    cdef const int32_t *point
    cdef float *ctx
    for i in range(start, end):
        alpha = alpha0 + (alpha1 - alpha0) * (<float>i / <float>total)
        b = <int>(next_random(&st.rng) % <uint32_t>m.window) if m.shrink_windows else 0
        lo = i - m.window + b
        if lo < start:
            lo = start
        hi = i + m.window + 1 - b
        if hi > end:
            hi = end
        centre = st.kept[i]
        if m.hs:
            code = m.codes + <int64_t>centre * m.max_length
            point = m.points + <int64_t>centre * m.max_length
            for k in range(m.lengths[centre]):
                st.yrows[k] = node_row(m, st, point[k])
            if m.prefetch and i + 1 < end:
                prefetch_path(m, st.kept[i + 1])
        if m.prefetch and i + 1 < end and hi < end:
            prefetch_row(m.syn0 + <int64_t>st.kept[hi] * d, d)
        if m.sg and m.kernel == KERNEL_WINDOW:  # hs only (the Trainer's choice)
            st.loss += sg_window(m, st, lo, hi, i, code, m.lengths[centre], alpha)
        elif m.sg:
            for j in range(lo, hi):
                if j == i:
                    continue
                ctx = m.syn0 + <int64_t>st.kept[j] * d
                if m.hs:
                    if m.kernel != KERNEL_FUSED:
                        st.loss += hs_path(ctx, st.work, st.yrows, code, m.lengths[centre],
                                           alpha, d, kernel_prims(m.kernel), m.compute_loss,
                                           &st.check)
                        hsw2v_axpy(d, lock_of(m, st.kept[j]), st.work, ctx)
                    elif m.lockf == NULL:  # the last node's update of ctx fused in
                        st.loss += hs_path_fused(ctx, st.work, st.yrows, code,
                                                 m.lengths[centre], alpha, d, m.compute_loss,
                                                 True, &st.check)
                    else:
                        st.loss += hs_path_fused(ctx, st.work, st.yrows, code,
                                                 m.lengths[centre], alpha, d, m.compute_loss,
                                                 False, &st.check)
                        hsw2v_axpy(d, lock_of(m, st.kept[j]), st.work, ctx)
                if m.negative:
                    st.loss += ns_step(m, st, ctx, centre, alpha)
                    hsw2v_axpy(d, lock_of(m, st.kept[j]), st.work, ctx)
        else:
            count = cbow_hidden(m, st, lo, hi, i)
            if count == 0:
                continue
            if m.hs:
                if m.kernel not in (KERNEL_FUSED, KERNEL_WINDOW):  # "window" is sg-only
                    st.loss += hs_path(st.neu1, st.work, st.yrows, code, m.lengths[centre],
                                       alpha, d, kernel_prims(m.kernel), m.compute_loss,
                                       &st.check)
                else:
                    st.loss += hs_path_fused(st.neu1, st.work, st.yrows, code,
                                             m.lengths[centre], alpha, d, m.compute_loss,
                                             False, &st.check)
                cbow_spread(m, st, lo, hi, i, count)
            if m.negative:
                if m.hs:  # gensim forms h again from the rows the hs step moved
                    cbow_hidden(m, st, lo, hi, i)
                st.loss += ns_step(m, st, st.neu1, centre, alpha)
                cbow_spread(m, st, lo, hi, i, count)
        if m.hot_nodes.n:
            st.since += 1
            if st.since >= m.hot_sync:
                flush_hot(m, st)
                st.since = 0


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


cdef void free_job_state(JobState *st) noexcept nogil:
    free(st.work)
    free(st.neu1)
    free(st.kept)
    free(st.ends)
    free(st.xrows)
    free(st.xwords)
    free(st.wrows)
    free(st.yrows)
    free(st.W)
    free(st.xlock)
    free_hot_copy(&st.nodes)
    free(st.negs)


cdef tuple _fill_hot_set(HotSet *hs, ids, Py_ssize_t n_rows):
    """Fill ``hs`` for the private rows ``ids`` of a matrix of ``n_rows`` rows: a plain range
    when they are the highest ids, else a slot table. Returns the arrays ``hs`` points into
    (keep them alive)."""
    cdef Py_ssize_t n = len(ids)
    cdef int32_t[::1] ids_view
    cdef int32_t[::1] slot_view
    lo = n_rows - n
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


cdef class Trainer:
    """Holds the model's arrays for the nogil kernels; one instance serves all worker threads.

    The arrays are borrowed, not copied: training writes into ``syn0``, ``syn1`` and
    ``syn1neg`` in place. ``hs=False`` trains no tree (``syn1`` and the tree arrays are then
    not read; ``syn1`` may be empty); ``negative > 0`` needs ``syn1neg`` (V x d) and
    ``cum_table`` (V entries, last > 0). With ``negative > 0`` the "window" kernel trains as
    "fused" (see the design note, D').
    """

    cdef ModelView m
    cdef object _keep_alive
    cdef object _hot_arrays
    cdef readonly object lockf  # the lock factors in use (float32), None when all are 1
    cdef Py_ssize_t n_hot

    def __init__(self, float[:, ::1] syn0, float[:, ::1] syn1, const uint8_t[:, ::1] codes,
                 const int32_t[:, ::1] points, const int32_t[::1] lengths,
                 const uint32_t[::1] sample_int, int window, bint sg, bint cbow_mean=True,
                 bint shrink_windows=True, bint compute_loss=False, str kernel="fused",
                 bint prefetch=True, int hot_nodes=0, int hot_sync=1000,
                 int hot_visits=2**30, float hot_scale=1.0, hot_rows=None, int block=4,
                 bint hs=True,
                 float[:, ::1] syn1neg=None, const uint32_t[::1] cum_table=None,
                 int negative=0, lockf=None):
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        if negative < 0:
            raise ValueError(f"negative must be >= 0, got {negative}")
        if not hs and not negative:
            raise ValueError("nothing to train: hs is off and negative is 0")
        cdef Py_ssize_t V = syn0.shape[0]
        if V < 1:
            raise ValueError("the vocabulary is empty")
        if (codes.shape[0] != V or points.shape[0] != V or lengths.shape[0] != V
                or sample_int.shape[0] != V or codes.shape[1] != points.shape[1]
                or (hs and (syn1.shape[0] < V - 1 or syn1.shape[1] != syn0.shape[1]))):
            raise ValueError("inconsistent model arrays (vocabulary, tree and weights differ)")
        if negative and (syn1neg is None or cum_table is None
                         or syn1neg.shape[0] != V or syn1neg.shape[1] != syn0.shape[1]
                         or cum_table.shape[0] != V or cum_table[V - 1] == 0):
            raise ValueError("negative > 0 needs syn1neg (V x d) and cum_table (V entries, "
                             "the last > 0) for the same vocabulary")
        # gensim's vectors_lockf (design note H): None or all ones trains every row fully
        self.lockf = None
        cdef const float[::1] lockf_view
        if lockf is not None:
            lockf = np.ascontiguousarray(np.atleast_1d(lockf), dtype=np.float32).ravel()
            if len(lockf) < 1 or not np.isfinite(lockf).all():
                raise ValueError("vectors_lockf must hold at least one factor, all finite")
            if not (lockf == 1.0).all():
                self.lockf = lockf
        self.m.lockf = NULL
        self.m.lockf_len = 1
        if self.lockf is not None:
            lockf_view = self.lockf
            self.m.lockf = &lockf_view[0]
            self.m.lockf_len = lockf_view.shape[0]
        self._keep_alive = (syn0, syn1, codes, points, lengths, sample_int, syn1neg, cum_table)
        self.m.syn0 = &syn0[0, 0]
        self.m.syn1 = &syn1[0, 0] if hs else NULL
        self.m.hs = hs
        self.m.negative = negative
        self.m.syn1neg = &syn1neg[0, 0] if negative else NULL
        self.m.cum_table = &cum_table[0] if negative else NULL
        self.m.n_words = V
        self.m.codes = &codes[0, 0]
        self.m.points = &points[0, 0]
        self.m.lengths = &lengths[0]
        self.m.sample_int = &sample_int[0]
        self.m.d = syn0.shape[1]
        self.m.max_length = codes.shape[1]
        self.m.window = window
        self.m.sg = sg
        self.m.cbow_mean = cbow_mean
        self.m.shrink_windows = shrink_windows
        self.m.compute_loss = compute_loss
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
        self.m.kernel = KERNELS[kernel]
        if negative and self.m.kernel == KERNEL_WINDOW:
            self.m.kernel = KERNEL_FUSED  # the window kernel is hs-only (design note, D')
        self.m.prefetch = prefetch
        # The top of the tree is on almost every path: threads writing the same rows would
        # pass those cache lines back and forth between cores all the time. Each job trains
        # a private copy of the hottest inner nodes (the last created, highest ids) and adds
        # its change back (Vuurens et al., "Efficient Parallel Learning of Word2Vec", 2016),
        # times ``hot_scale`` (1: every update counts, as in Hogwild; 1/workers: the changes
        # are averaged): a row alone after ``hot_visits`` visits (centre words whose path
        # holds it), and every row every ``hot_sync`` trained centre words and at the job's
        # end. A row is copied from the shared one at its first visit after a sync, so a row
        # the job never visits costs nothing.
        # Word2Vec asks for it only with several workers (``hot_nodes=0`` trains every row in
        # place).
        # ``hot_rows`` (inner-node ids) names the private rows instead: after a vocabulary
        # update the most visited nodes are no longer the highest ids (hsw2v.vocab_update).
        cdef Py_ssize_t inner = max(V - 1, 1)
        if hot_rows is not None and hs:
            ids = np.asarray(hot_rows, dtype=np.int64).ravel()
            if len(np.unique(ids)) != len(ids) or (
                    len(ids) and (ids.min() < 0 or ids.max() >= inner)):
                raise ValueError(f"hot_rows must be distinct inner nodes in 0..{inner - 1}")
            hot_rows = ids.astype(np.int32)
        else:
            n = min(inner, max(hot_nodes, 0)) if hs else 0
            hot_rows = np.arange(inner - n, inner, dtype=np.int32)
        self._hot_arrays = _fill_hot_set(&self.m.hot_nodes, hot_rows, inner)
        self.n_hot = len(hot_rows)
        self.m.hot_sync = max(hot_sync, 1)
        self.m.hot_visits = max(hot_visits, 1)
        self.m.hot_scale = hot_scale
        if not 1 <= block <= MAX_BLOCK:
            raise ValueError(f"block must be in 1..{MAX_BLOCK}, got {block}")
        self.m.block = block

    def train_job(self, const int32_t[::1] ids, const int64_t[::1] ends, float alpha0,
                  float alpha1, uint64_t seed):
        """Train one job of whole sentences without the GIL.

        ``ids``: word ids of the job's sentences, concatenated; ``ends[s]``: end offset of
        sentence ``s`` in ``ids``. Returns ``(kept_tokens, loss)``: the tokens left after
        subsampling (the "effective words") and the summed -log-likelihood of every path
        trained (0.0 unless the Trainer was made with ``compute_loss``); the loss is NaN when
        the job met a non-finite weight (design note G)."""
        cdef int64_t n_ids = ids.shape[0]
        cdef int64_t n_sentences = ends.shape[0]
        cdef int64_t kept = 0
        cdef double loss = 0.0
        cdef int rc
        if n_sentences and ends[n_sentences - 1] != n_ids:
            raise ValueError("the last sentence end must equal the number of ids")
        if n_ids == 0:
            return 0, 0.0
        with nogil:
            rc = train_job_nogil(&self.m, &ids[0], &ends[0], n_ids, n_sentences, alpha0,
                                 alpha1, seed, &kept, &loss)
        if rc != 0:
            raise MemoryError("could not allocate a training job's buffers")
        return kept, loss

    def private_row_mask(self):
        """Twin of the private-row test (``is_private``) over every inner node: True where
        jobs train a private copy (those shared rows are never prefetched)."""
        cdef Py_ssize_t n = max(self.m.n_words - 1, 1) if self.m.hs else 0
        out = np.zeros(n, dtype=bool)
        cdef Py_ssize_t r
        for r in range(n):
            out[r] = is_private(&self.m.hot_nodes, <int32_t>r)
        return out

    def job_routine_model(self):
        """This Trainer's model as a capsule for ``train_job_nogil`` (declared in
        ``_inner.pxd``), so that other nogil code can train jobs; keep the Trainer alive while
        it is used."""
        return PyCapsule_New(&self.m, "hsw2v._inner.ModelView", NULL)


cdef int train_job_nogil(const void *model, const int32_t *ids, const int64_t *ends,
                         int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                         uint64_t seed, int64_t *kept, double *loss) noexcept nogil:
    """``Trainer.train_job`` without the GIL: ``model`` is a ``ModelView`` (from
    ``Trainer.job_routine_model``), ``ends[n_sentences - 1] == n_ids``. Writes the kept
    (effective) tokens and the loss; returns 0, or -1 if its buffers could not be allocated."""
    cdef const ModelView *m = <const ModelView *>model
    cdef int64_t s, start, total
    cdef int b
    cdef int rc_nodes
    cdef JobState st
    kept[0] = 0
    loss[0] = 0.0
    if n_ids == 0:
        return 0
    memset(&st, 0, sizeof(JobState))
    st.rng = seed if seed else 1
    st.work = <float *>malloc(m.d * sizeof(float))
    st.neu1 = <float *>malloc(m.d * sizeof(float))
    st.kept = <int32_t *>malloc(n_ids * sizeof(int32_t))
    st.ends = <int64_t *>malloc(n_sentences * sizeof(int64_t))
    st.xrows = <float **>malloc(MAX_BLOCK * sizeof(float *))
    st.xwords = <int32_t *>malloc(MAX_BLOCK * sizeof(int32_t))
    st.wrows = <float **>malloc(MAX_BLOCK * sizeof(float *))
    st.yrows = <float **>malloc(m.max_length * sizeof(float *))
    st.W = <float *>malloc(MAX_BLOCK * m.d * sizeof(float))
    st.xlock = <float *>malloc(MAX_BLOCK * sizeof(float))
    st.negs = <int32_t *>malloc((m.negative + 1) * sizeof(int32_t))
    rc_nodes = alloc_hot_copy(&st.nodes, m.hot_nodes.n, m.d)
    if (st.work == NULL or st.neu1 == NULL or st.kept == NULL or st.ends == NULL
            or st.xrows == NULL or st.xwords == NULL or st.wrows == NULL
            or st.yrows == NULL or st.W == NULL or rc_nodes or st.negs == NULL
            or st.xlock == NULL):
        free_job_state(&st)
        return -1
    for b in range(MAX_BLOCK):
        st.wrows[b] = st.W + b * m.d
    total = subsample(m, &st, ids, ends, n_sentences)
    start = 0
    for s in range(n_sentences):
        if st.ends[s] - start > 1:
            train_sentence(m, &st, start, st.ends[s], total, alpha0, alpha1)
        start = st.ends[s]
    if m.hot_nodes.n:
        flush_hot(m, &st)
    kept[0] = total
    # design note G: a job that met a non-finite weight reports a NaN loss
    loss[0] = st.loss if isfinite(st.check) else NAN
    free_job_state(&st)
    return 0


# --------------------------------------------------------------------------------------------
# Corpus to ids (holds the GIL: dictionary lookups), and exact log-probabilities.
# --------------------------------------------------------------------------------------------

def encode_sentences(list sentences, dict key_to_index):
    """Map a list of token lists to ``(ids int32, ends int64, raw_words)``; unknown tokens are
    dropped (as gensim does), sentences are kept whole however long."""
    cdef Py_ssize_t total = 0, k = 0, s = 0
    cdef object sentence, token, index
    for sentence in sentences:
        if isinstance(sentence, (str, bytes)):
            raise TypeError(
                "a sentence is a string; each sentence must be a list of str tokens "
                "(split your text first, or use LineSentence)")
        total += len(sentence)
    ids = np.empty(total, dtype=np.int32)
    ends = np.empty(len(sentences), dtype=np.int64)
    cdef int32_t[::1] ids_view = ids
    cdef int64_t[::1] ends_view = ends
    for sentence in sentences:
        for token in sentence:
            index = key_to_index.get(token)
            if index is not None:
                ids_view[k] = <int32_t>index
                k += 1
        ends_view[s] = k
        s += 1
    return ids[:k], ends, total


def log_prob_all(const float[::1] h, const float[:, ::1] syn1, const uint8_t[:, ::1] codes,
                 const int32_t[:, ::1] points, const int32_t[::1] lengths):
    """log P(w | h) for every word w of the tree, exact, in float64."""
    cdef Py_ssize_t V = codes.shape[0], w
    cdef int d = h.shape[0], L = codes.shape[1]
    out = np.empty(V, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for w in range(V):
            o[w] = -hs_path_nll(&h[0], &syn1[0, 0], &codes[w, 0], &points[w, 0],
                                      lengths[w], d)
    return out


# --------------------------------------------------------------------------------------------
# Python-callable twins of the nogil routines, for tests.
# --------------------------------------------------------------------------------------------

PRIMS = {"vec": PRIMS_VEC, "loop": PRIMS_LOOP, "blas": PRIMS_BLAS}


cdef int prims_of(prims, bint use_blas) except -1:
    """The twins' choice of vector loops: a name of ``PRIMS``, else BLAS or plain loops."""
    if prims is None:
        return PRIMS_BLAS if use_blas else PRIMS_LOOP
    if prims not in PRIMS:
        raise ValueError(f"prims must be one of {sorted(PRIMS)}, got {prims!r}")
    return PRIMS[prims]


def py_dot(const float[::1] x, const float[::1] y, bint use_blas=False, prims=None):
    """Twin of the dot product (plain loop, BLAS sdot, or ``prims`` by name)."""
    return pdot(prims_of(prims, use_blas), x.shape[0], &x[0], &y[0])


def py_axpy(float a, const float[::1] x, float[::1] y, bint use_blas=False, prims=None):
    """Twin of y := a*x + y, in place on ``y``."""
    paxpy(prims_of(prims, use_blas), x.shape[0], a, &x[0], &y[0])


def py_sigmoid(float f):
    """Twin of the table sigmoid."""
    return sigmoid(f)


cdef float **path_rows(float[:, ::1] syn1, const int32_t[::1] point) except NULL:
    """Row pointers of a path, for the twins (freed by the caller)."""
    cdef float **rows = <float **>malloc(max(point.shape[0], 1) * sizeof(float *))
    cdef Py_ssize_t j
    if rows == NULL:
        raise MemoryError()
    for j in range(point.shape[0]):
        rows[j] = &syn1[point[j], 0]
    return rows


def py_hs_path(const float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
               const int32_t[::1] point, float alpha, bint use_blas=False, prims=None):
    """Twin of Word2Vec's reference walk (``hs_path``: the reference step with the table
    sigmoid; plain loops, BLAS, or ``prims`` by name): updates ``syn1`` in place, returns
    (work, -log P)."""
    cdef int p = prims_of(prims, use_blas)
    work = np.empty(h.shape[0], dtype=np.float32)
    cdef float[::1] w = work
    cdef float **rows = path_rows(syn1, point)
    cdef double check = 0.0
    try:
        loss = hs_path(&h[0], &w[0], rows, &code[0], code.shape[0], alpha, h.shape[0],
                       p, True, &check)
    finally:
        free(rows)
    return work, loss


def py_hs_step(const float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
               const int32_t[::1] point, float lr=0.0, float scale_h=1.0, bias=None,
               bint exact=True):
    """Twin of the reference step ``_path.hs_step`` in full: ``h``'s path over ``syn1`` rows
    ``point`` with bits ``code``, the exact float64 sigmoid (``exact``) or the table, the
    per-node ``bias`` (float32, one per row of syn1, stepped in place) or none. Steps
    ``syn1`` in place by ``-lr g h``; returns ``(loss, grad_h, g)`` with ``grad_h = scale_h
    dL/dh`` and ``g = dL/df`` per node."""
    cdef int d = h.shape[0], n = code.shape[0]
    if point.shape[0] != n or n == 0 or syn1.shape[1] != d:
        raise ValueError("code, point, h and syn1 disagree")
    if np.min(point) < 0 or np.max(point) >= syn1.shape[0]:
        raise ValueError("point out of range")
    cdef float[::1] b
    cdef float *bias_ptr = NULL
    if bias is not None:
        b = bias
        if b.shape[0] != syn1.shape[0]:
            raise ValueError("bias needs one entry per row of syn1")
        bias_ptr = &b[0]
    grad = np.zeros(d, dtype=np.float32)
    g = np.zeros(n, dtype=np.float32)
    cdef float[::1] gr = grad, gv = g
    cdef double check = 0.0
    loss = hs_step(d, &h[0], &gr[0], scale_h, NULL, &syn1[0, 0], &code[0], &point[0], n,
                   bias_ptr, lr, NULL if exact else &SIGMOID, NULL, NULL, True, &gv[0], &check)
    return loss, grad, g


def py_hs_path_fused(float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
                     const int32_t[::1] point, float alpha, bint apply_to_h=False):
    """Twin of the fused path routine: updates ``syn1`` (and ``h`` when ``apply_to_h``) in
    place, returns (work, -log P); with ``apply_to_h`` the last node's share of ``work`` goes
    to ``h`` only."""
    work = np.empty(h.shape[0], dtype=np.float32)
    cdef float[::1] w = work
    cdef float **rows = path_rows(syn1, point)
    cdef double check = 0.0
    try:
        loss = hs_path_fused(&h[0], &w[0], rows, &code[0], code.shape[0], alpha, h.shape[0],
                             True, apply_to_h, &check)
    finally:
        free(rows)
    return work, loss


def py_draw_negatives(const uint32_t[::1] cum_table, int32_t target, int negative,
                      uint64_t seed):
    """Twin of the negative draw: ``(negs, state)``, the target then the kept draws (int32)
    and the random stream's state after them, starting from ``seed`` (not 0)."""
    if cum_table.shape[0] < 1 or cum_table[cum_table.shape[0] - 1] == 0 or negative < 0:
        raise ValueError("cum_table must be non-empty with a positive last entry, negative >= 0")
    out = np.empty(negative + 1, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef uint64_t rng = seed if seed else 1
    cdef int count = draw_negatives(&cum_table[0], cum_table.shape[0], target, negative,
                                    &o[0], &rng)
    return out[:count], rng


def py_ns_path(const float[::1] h, float[:, ::1] syn1neg, const int32_t[::1] negs,
               float alpha, str kernel="fused"):
    """Twin of the negative-sampling routine for given words (``negs[0]`` the target, the
    rest negatives): updates ``syn1neg`` in place, returns (work, loss)."""
    if negs.shape[0] < 1:
        raise ValueError("negs needs at least the target")
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
    for k in range(negs.shape[0]):
        if not 0 <= negs[k] < syn1neg.shape[0]:
            raise ValueError(f"word {negs[k]} is not a row of syn1neg")
    work = np.empty(h.shape[0], dtype=np.float32)
    cdef float[::1] w = work
    cdef double check = 0.0
    loss = ns_path(h.shape[0], &h[0], &w[0], &syn1neg[0, 0], &negs[0], negs.shape[0], alpha,
                   kernel_prims(KERNELS[kernel]), True, &check)
    return work, loss
