"""One job of Word2Vec training: its state, subsampling, the skip-gram and CBOW callers of
the walks, and the job loop itself (inline).

Design note: see ``_inner`` design notes A-H. ``ModelView`` (``_inner_model.pxd``) is the
read-only view of the model every thread shares; ``JobState`` everything one job owns
(scratch vectors, kept ids, the private hot rows, the random stream, the loss and the
divergence check). ``train_sentence`` forms h (a context row, or the window's mean / sum for
CBOW), walks the centre's path (hs) and its negatives (ns), and sends the error back to the
input rows; ``run_job`` is one whole job. A module that trains composes its nogil job entry
from ``run_job`` and its ``JobRoutines``, what the loop calls out of line: the reference
walks (``_inner.train_job_nogil``: ``hs_path`` / ``ns_path``; the benchmark-only
``_bench_walks``: plain loops or BLAS) and the flush of the private hot rows (it runs every
``hot_sync`` centre words; inlined into the centre loop it would cost that loop its
registers). The rate inside a job is ``_rates.job_alpha``.
"""

from libc.math cimport NAN, isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from hsw2v._kernels._inner_hot cimport (
    HotCopy, alloc_hot_copy, free_hot_copy, is_private, private_slot, sync_hot,
)
from hsw2v._kernels._inner_loops cimport (
    MAX_BLOCK, SIGMOID, hsw2v_cbow_walk, hsw2v_sg_block_tally, prefetch_row,
)
from hsw2v._kernels._inner_model cimport HotSet, ModelView
from hsw2v._kernels._inner_rng cimport draw_negatives, lend_negatives, next_random
from hsw2v._kernels._inner_walks cimport (
    KERNEL_FUSED, KERNEL_WINDOW, RefWalks, hs_path_fused, ns_path_fused,
)
from hsw2v._kernels._ns_pair cimport hsw2v_rows_sum, ns_pair_block, rows_distinct
from hsw2v._kernels._ns_shared cimport ns_shared_block
from hsw2v._kernels._rates cimport job_alpha
from hsw2v._kernels._vecops cimport hsw2v_axpy, hsw2v_loss_acc, loss_init, loss_total


# CBOW takes the two-pass negative-sampling block (``_ns_pair.pxd``) up to this vector size
# and the word-by-word fused walk above it (the same bits either way): the block measured
# faster at d=100 and slower at d=300 (benchmarks/RESULTS.md, "The CBOW block by width"),
# and the widths between were not measured, so they keep the walk.
DEF NS_BLOCK_MAX_D = 128


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
    HotCopy words     # this job's private copies of m.hot_words
    float **nrows     # negative sampling: the rows of one (target, negatives) set
    float **ahead     # negative sampling: the next set's shared rows to prefetch (see ns_pair)
    float **nlive     # negative sampling: the rows that step (ns_pair_block's scratch)
    float *nscore     # negative sampling: scores and coefficients, 2 x (negative + 1)
                      # (ns_pair's, and the shared-negatives block's scratch)
    float **crows     # CBOW: the window's input rows (min(2 x window, ids) pointers)
    float *clock      # CBOW: their lock factors (as many)
    float **hrows     # shared negatives: one centre's context rows (pairs_max pointers)
    float *hlock      # shared negatives: their lock factors (pairs_max)
    int64_t since     # centre words trained since the last flush of the hot rows
    int32_t *kept     # the job's ids that survived subsampling
    int64_t *ends     # sentence ends in ``kept``
    int32_t *negs     # negative sampling: the words of two centres' (target, negatives)
                      # sets, drawn ahead (2 x pairs_max x (negative + 1); see draw_centre)
    int *neg_counts   # the entries of each set (2 x pairs_max)
    int32_t *share_negs  # CBOW shared: the fresh sets' draws (cbow_stride x negative)
    int *share_n      # their numbers (cbow_stride)
    int64_t share_t   # CBOW centres with a context so far in this job
    int64_t pairs     # pairs_max of this job (the slot size of negs / neg_counts)
    int64_t win_lo[2]  # the two centres' windows kept[lo:hi] (see draw_centre)
    int64_t win_hi[2]
    uint64_t rng
    double loss
    hsw2v_loss_acc tally  # the walks' loss terms, reduced 64 at a time (_loss.h)
    double check      # the sum of every f the job computed: non-finite iff the job met a
                      # non-finite weight (its divergence check, design note G)


# What a job loop calls out of line, set by the module that composes it (``run_job``).
ctypedef void (*flush_fn)(const ModelView *m, JobState *st) noexcept nogil

cdef struct JobRoutines:
    RefWalks walks   # the "reference" variant's walks along a path and over negatives
    flush_fn flush   # flush_hot (every hot_sync centre words), out of the centre loop


cdef inline int64_t subsample(const ModelView *m, JobState *st, const int32_t *ids,
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


cdef inline float *private_row(const ModelView *m, float *matrix, const HotSet *rows,
                               HotCopy *c, int32_t r) noexcept nogil:
    """The row ``r`` of ``matrix`` (syn1 or syn1neg) this job trains for one visit: the shared
    row, or for the hottest rows (``rows``, see ``Trainer``) the job's private copy in ``c``,
    pulled from the shared row at the first visit after a flush, and synced alone (its change
    added back, then pulled again) once it has been trained for ``hot_visits`` visits."""
    cdef int32_t k = private_slot(rows, r), v
    cdef int64_t at
    cdef float *shared = matrix + <int64_t>r * m.d
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


cdef inline float *node_row(const ModelView *m, JobState *st, int32_t node) noexcept nogil:
    """The row of inner node ``node`` this job trains for one centre word (``private_row`` of
    syn1 over the hottest inner nodes)."""
    return private_row(m, m.syn1, &m.hot_nodes, &st.nodes, node)


cdef inline float *word_row(const ModelView *m, JobState *st, int32_t word) noexcept nogil:
    """The syn1neg row of ``word`` this job trains for one (target, negatives) set
    (``private_row`` of syn1neg over the most frequent words)."""
    return private_row(m, m.syn1neg, &m.hot_words, &st.words, word)


cdef inline void flush_rows(const ModelView *m, float *matrix, const HotSet *rows,
                            HotCopy *c) noexcept nogil:
    """Add the change of every private row of ``c`` pulled since the last flush back to the
    shared rows of ``matrix`` (times hot_scale); each is pulled again at its next visit."""
    cdef int i, k
    cdef int64_t at
    cdef size_t q
    cdef float *shared
    cdef float *hot
    cdef float *base
    for i in range(c.n_dirty):
        k = c.dirty[i]
        at = <int64_t>k * m.d
        shared = matrix + <int64_t>rows.ids[k] * m.d
        hot = c.hot + at
        base = c.base + at
        for q in range(<size_t>m.d):
            shared[q] = shared[q] + m.hot_scale * (hot[q] - base[q])
        c.count[k] = 0
    c.n_dirty = 0


cdef inline void flush_hot(const ModelView *m, JobState *st) noexcept nogil:
    """Flush the job's private rows of syn1 and of syn1neg (``flush_rows``)."""
    if m.hot_nodes.n:
        flush_rows(m, m.syn1, &m.hot_nodes, &st.nodes)
    if m.hot_words.n:
        flush_rows(m, m.syn1neg, &m.hot_words, &st.words)


cdef inline hsw2v_loss_acc *job_tally(const ModelView *m, JobState *st) noexcept nogil:
    """The job's loss tally for the walks, or NULL without compute_loss."""
    return &st.tally if m.compute_loss else NULL


cdef inline void sg_window(const ModelView *m, JobState *st, int64_t lo, int64_t hi,
                           int64_t i, const uint8_t *code, int length,
                           float alpha) noexcept nogil:
    """Skip-gram for centre ``i``: the contexts of kept[lo:hi] walk the centre's path (rows
    in st.yrows) in blocks of up to ``m.block`` distinct words (_window.h), with exactly word2vec.c's
    updates. The window's loss terms go to the job's tally when compute_loss."""
    cdef int d = m.d, B = 0, b, j
    cdef int64_t p
    cdef int32_t word
    cdef bint repeated
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
            hsw2v_sg_block_tally(B, d, st.xrows, st.wrows, length, st.yrows, code, alpha,
                                 &SIGMOID, job_tally(m, st), &st.check,
                                 st.xlock if m.lockf != NULL else NULL)
            B = 0
        if p < hi:
            st.xwords[B] = word
            st.xrows[B] = m.syn0 + <int64_t>word * d
            st.xlock[B] = lock_of(m, word)
            B += 1


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


cdef inline float cbow_inv(int count) noexcept nogil:
    """1 / count in float32: CBOW's factor of the mean (cbow_mean) or of the spread error."""
    cdef float inv = 1.0 / count
    return inv


cdef inline int cbow_hidden(const ModelView *m, JobState *st, int64_t lo, int64_t hi,
                            int64_t i) noexcept nogil:
    """CBOW's h into st.neu1: the sum of the context rows kept[lo:hi] except i, divided by
    their count when cbow_mean, in one pass (``_ns_pair.h``'s ``hsw2v_rows_sum``: the bits
    of a sum row by row, then a scaling pass); the rows and their lock factors are left in
    st.crows / st.clock. Returns the count."""
    cdef int64_t j
    cdef int count = 0
    for j in range(lo, hi):
        if j == i:
            continue
        st.crows[count] = m.syn0 + <int64_t>st.kept[j] * m.d
        st.clock[count] = lock_of(m, st.kept[j])
        count += 1
    if count:
        hsw2v_rows_sum(m.d, st.crows, count, cbow_inv(count) if m.cbow_mean else 1.0,
                       st.neu1)
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


cdef inline int64_t pairs_max(const ModelView *m, int64_t n_ids) noexcept nogil:
    """The most (h, target) pairs of one centre word in a job of ``n_ids`` ids: its contexts
    (skip-gram; fewer than the job's ids, however large the window), or 1 (CBOW)."""
    cdef int64_t pairs = 2 * <int64_t>m.window if m.sg else 1
    return pairs if pairs < n_ids else n_ids


cdef inline void draw_centre(const ModelView *m, JobState *st, int64_t start, int64_t end,
                             int64_t i, int slot) noexcept nogil:
    """Draw what centre ``i`` of kept[start:end] needs from the job's stream, in the order
    gensim's loops would: its reduced window (into ``win_lo/win_hi[slot]``), then with
    negative sampling the negatives of each of its pairs (skip-gram: one per context, in
    order; CBOW: one), into set ``slot`` of ``st.negs``; with shared negatives one set
    (skip-gram), or CBOW's set drawn or taken from the ring ``st.share_negs`` (``_inner.pyx``'s
    design note D'). The draws do not depend on the weights, so drawing a centre ahead of
    training the one before it changes no result; the kernels then prefetch the rows
    (``prefetch_negs``)."""
    cdef int b = <int>(next_random(&st.rng) % <uint32_t>m.window) if m.shrink_windows else 0
    cdef int64_t lo = i - m.window + b, hi = i + m.window + 1 - b, j
    cdef int p = 0, stride = m.negative + 1
    cdef int64_t q
    cdef int32_t *negs
    cdef int32_t *kept_draws
    cdef int *counts
    if lo < start:
        lo = start
    if hi > end:
        hi = end
    st.win_lo[slot] = lo
    st.win_hi[slot] = hi
    if not m.negative:
        return
    negs = st.negs + <int64_t>slot * st.pairs * stride
    counts = st.neg_counts + <int64_t>slot * st.pairs
    if m.sg and m.shared_negs:  # one set for all the contexts (_ns_shared.pxd)
        if hi - lo > 1:
            counts[0] = draw_negatives(&m.neg, st.kept[i], m.negative, negs, &st.rng)
    elif m.sg:
        for j in range(lo, hi):
            if j != i:
                counts[p] = draw_negatives(&m.neg, st.kept[i], m.negative,
                                           negs + <int64_t>p * stride, &st.rng)
                p += 1
    elif hi - lo > 1 and m.cbow_run > 1:  # CBOW, shared
        q = st.share_t % m.cbow_stride
        kept_draws = st.share_negs + q * m.negative
        if (st.share_t // m.cbow_stride) % m.cbow_run == 0:
            counts[0] = draw_negatives(&m.neg, st.kept[i], m.negative, negs, &st.rng)
            st.share_n[q] = counts[0] - 1
            memcpy(kept_draws, negs + 1, st.share_n[q] * sizeof(int32_t))
        else:
            counts[0] = lend_negatives(st.kept[i], kept_draws, st.share_n[q], negs)
        st.share_t += 1
    elif hi - lo > 1:
        counts[0] = draw_negatives(&m.neg, st.kept[i], m.negative, negs, &st.rng)


cdef inline int rows_ahead(const ModelView *m, const int32_t *negs, int count,
                           float **out) noexcept nogil:
    """The syn1neg rows of one (target, negatives) set to prefetch, into ``out``: NULL for
    the private ones (their shared rows are not asked for: see ``is_private``). Returns
    ``count``."""
    cdef int k
    for k in range(count):
        out[k] = (NULL if is_private(&m.hot_words, negs[k])
                  else m.syn1neg + <int64_t>negs[k] * m.d)
    return count


cdef inline void prefetch_negs(const ModelView *m, JobState *st, const int32_t *negs,
                               int count) noexcept nogil:
    """Prefetch the rows of one (target, negatives) set at once (``rows_ahead``)."""
    cdef int k
    rows_ahead(m, negs, count, st.ahead)
    for k in range(count):
        if st.ahead[k] != NULL:
            prefetch_row(st.ahead[k], m.d)


cdef inline double ns_pair(const ModelView *m, JobState *st, const float *h,
                           const int32_t *negs, int count, float alpha,
                           const RefWalks *walks, float *const *ctx, const float *lock,
                           int nctx, float scale, bint block,
                           const int32_t *next_negs, int next_count) noexcept nogil:
    """The negative-sampling step of one (h, target) pair over its drawn words ``negs``
    (target first), and its error sent back to the input rows: ``ctx[c] += lock[c] * scale *
    work`` in order (skip-gram: its context row; CBOW: the window's rows, scale 1 / count
    without cbow_mean). With ``block`` (CBOW) the two-pass block (``_ns_pair.pxd``) when the
    set's rows are distinct, else the fused walk, or the reference walk ``walks.ns``, and the
    same update of the input rows (``cbow_spread``'s arithmetic); CBOW's fused walk takes that
    update in its last word's pass (``ns_path_fused``'s ``spread``: the same bits; measured
    0.87-1.01x the walk plus a pass per row at d=200 and 300, benchmarks/RESULTS.md, "CBOW's
    spread in the walk's last pass"). Skip-gram passes ``block = False``: the block measured
    no faster there (benchmarks/RESULTS.md, "Negative sampling in two passes"), and 1.17x
    slower at d=300 with the next set's rows prefetched over its dot products ("what is left
    at d=300"); its one context row keeps the update after the walk. The rows of the next set
    (``next_negs``, ``next_count`` words; 0: none) are prefetched: word by word inside the
    fused walk, all at once before the others. Returns the loss the step did not push onto
    the job's tally."""
    cdef int k, c
    cdef double loss = 0.0
    for k in range(count):
        st.nrows[k] = word_row(m, st, negs[k])
    if m.kernel == KERNEL_FUSED or m.kernel == KERNEL_WINDOW:  # its loss: on st.tally
        if block and rows_distinct(st.nrows, count):
            if next_count:  # before a block: asked for at once
                prefetch_negs(m, st, next_negs, next_count)
            ns_pair_block(m.d, h, st.nrows, count, alpha, ctx, lock, nctx, scale, st.work,
                          st.nscore, st.nscore + count, st.nlive, job_tally(m, st),
                          &st.check)
            return 0.0
        if ns_path_fused(m.d, h, st.work, st.nrows, count, alpha, job_tally(m, st), &st.check,
                         st.ahead, rows_ahead(m, next_negs, next_count, st.ahead), ctx, lock,
                         nctx if block else 0, scale):
            return 0.0  # the input rows' step was fused into the last word's update
    else:
        if next_count:
            prefetch_negs(m, st, next_negs, next_count)
        loss = walks.ns(m.d, h, st.work, st.nrows, count, alpha, m.compute_loss, &st.check)
    if scale != 1.0:
        for k in range(m.d):
            st.work[k] *= scale
    for c in range(nctx):
        hsw2v_axpy(m.d, lock[c], st.work, ctx[c])
    return loss


cdef inline double ns_shared_centre(const ModelView *m, JobState *st, int npairs,
                                    const int32_t *negs, int count, float alpha) noexcept nogil:
    """Shared negatives (skip-gram): the centre's ``npairs`` contexts (``st.hrows``, their
    lock factors ``st.hlock``) against its one drawn set ``negs`` (target first), the block
    step of ``_ns_shared.pxd``."""
    cdef int k
    for k in range(count):
        st.nrows[k] = word_row(m, st, negs[k])
    return ns_shared_block(m.d, npairs, st.hrows, st.hlock if m.lockf != NULL else NULL,
                           st.nrows, count, alpha, &SIGMOID, st.nscore, m.compute_loss,
                           &st.check)


cdef inline void train_sentence(const ModelView *m, JobState *st, int64_t start,
                                int64_t end, int64_t total, float alpha0, float alpha1,
                                const JobRoutines *r) noexcept nogil:
    """Train every centre position of kept[start:end]; alpha falls linearly from alpha0 at the
    job's first kept token to alpha1 after its last (``total`` kept tokens).

    Per (h, centre): the hierarchical-softmax walk and its update of the input rows (if hs),
    then the negative-sampling step and its update (if negative > 0), as gensim. With
    negative sampling each centre's draws are made while the centre before it trains
    (``draw_centre``), and each pair prefetches the rows of the next pair's set. The
    "reference" variant walks with ``r.walks`` (``_inner_walks.RefWalks``); the private
    rows are flushed through ``r.flush``."""
    cdef int64_t i, j, lo, hi
    cdef int b, k, count, p, npairs, n_ahead
    cdef int d = m.d
    cdef int slot = 0, stride = m.negative + 1
    cdef bint drawn = False, fresh
    cdef float alpha, ctx_lock
    cdef int32_t centre
    cdef const uint8_t *code = NULL
    cdef const int32_t *point
    cdef float *ctx
    cdef int32_t *negs = NULL
    cdef int32_t *next_negs = NULL
    cdef const int32_t *ahead
    cdef int *counts = NULL
    cdef int *next_counts = NULL
    for i in range(start, end):
        alpha = job_alpha(alpha0, alpha1, i, total)
        fresh = not drawn
        if drawn:  # drawn ahead, while centre i - 1 trained
            slot = 1 - slot
        else:
            draw_centre(m, st, start, end, i, slot)
        lo = st.win_lo[slot]
        hi = st.win_hi[slot]
        drawn = False
        if m.negative:
            negs = st.negs + <int64_t>slot * st.pairs * stride
            counts = st.neg_counts + <int64_t>slot * st.pairs
            if i + 1 < end:
                draw_centre(m, st, start, end, i + 1, 1 - slot)
                drawn = True
                next_negs = st.negs + <int64_t>(1 - slot) * st.pairs * stride
                next_counts = st.neg_counts + <int64_t>(1 - slot) * st.pairs
            if m.prefetch and fresh and hi - lo > 1:  # else prefetched with centre i - 1
                prefetch_negs(m, st, negs, counts[0])
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
        if m.sg and m.kernel == KERNEL_WINDOW and not m.negative:  # hs only
            sg_window(m, st, lo, hi, i, code, m.lengths[centre], alpha)
        elif m.sg:
            p = 0
            npairs = <int>(hi - lo - 1)
            for j in range(lo, hi):
                if j == i:
                    continue
                ctx = m.syn0 + <int64_t>st.kept[j] * d
                if m.hs:
                    if m.kernel != KERNEL_FUSED and m.kernel != KERNEL_WINDOW:
                        st.loss += r.walks.hs(ctx, st.work, st.yrows, code,
                                              m.lengths[centre], alpha, d, m.compute_loss,
                                              &st.check)
                        hsw2v_axpy(d, lock_of(m, st.kept[j]), st.work, ctx)
                    elif m.lockf == NULL:  # the last node's update of ctx fused in
                        hs_path_fused(ctx, st.work, st.yrows, code, m.lengths[centre],
                                      alpha, d, job_tally(m, st), True, &st.check)
                    else:
                        hs_path_fused(ctx, st.work, st.yrows, code, m.lengths[centre],
                                      alpha, d, job_tally(m, st), False, &st.check)
                        hsw2v_axpy(d, lock_of(m, st.kept[j]), st.work, ctx)
                if m.shared_negs:  # after the window: ns_shared_centre
                    st.hrows[p] = ctx
                    st.hlock[p] = lock_of(m, st.kept[j])
                elif m.negative:
                    ahead, n_ahead = NULL, 0  # the next pair's set (this centre's or the next)
                    if m.prefetch:
                        if p + 1 < npairs:
                            ahead, n_ahead = negs + <int64_t>(p + 1) * stride, counts[p + 1]
                        elif drawn and st.win_hi[1 - slot] - st.win_lo[1 - slot] > 1:
                            ahead, n_ahead = next_negs, next_counts[0]
                    ctx_lock = lock_of(m, st.kept[j])
                    st.loss += ns_pair(m, st, ctx, negs + <int64_t>p * stride, counts[p],
                                       alpha, &r.walks, &ctx, &ctx_lock, 1, 1.0, False,
                                       ahead, n_ahead)
                p += 1
            if m.shared_negs and p:
                if m.prefetch and drawn and st.win_hi[1 - slot] - st.win_lo[1 - slot] > 1:
                    prefetch_negs(m, st, next_negs, next_counts[0])
                st.loss += ns_shared_centre(m, st, p, negs, counts[0], alpha)
        else:
            count = cbow_hidden(m, st, lo, hi, i)
            if count == 0:
                continue
            if m.hs:
                if m.kernel == KERNEL_WINDOW:
                    hsw2v_cbow_walk(d, st.neu1, st.work, m.lengths[centre], st.yrows, code,
                                    alpha, &SIGMOID, job_tally(m, st), &st.check)
                elif m.kernel != KERNEL_FUSED:
                    st.loss += r.walks.hs(st.neu1, st.work, st.yrows, code,
                                          m.lengths[centre], alpha, d, m.compute_loss,
                                          &st.check)
                else:
                    hs_path_fused(st.neu1, st.work, st.yrows, code, m.lengths[centre],
                                  alpha, d, job_tally(m, st), False, &st.check)
                cbow_spread(m, st, lo, hi, i, count)
            if m.negative:
                if m.hs:  # gensim forms h again from the rows the hs step moved
                    cbow_hidden(m, st, lo, hi, i)
                ahead, n_ahead = NULL, 0
                if m.prefetch and drawn and st.win_hi[1 - slot] - st.win_lo[1 - slot] > 1:
                    ahead, n_ahead = next_negs, next_counts[0]
                st.loss += ns_pair(m, st, st.neu1, negs, counts[0], alpha, &r.walks, st.crows,
                                   st.clock, count, 1.0 if m.cbow_mean else cbow_inv(count),
                                   d <= NS_BLOCK_MAX_D, ahead, n_ahead)
        if m.hot_nodes.n or m.hot_words.n:
            st.since += 1
            if st.since >= m.hot_sync:
                r.flush(m, st)
                st.since = 0


cdef inline void free_job_state(JobState *st) noexcept nogil:
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
    free_hot_copy(&st.words)
    free(st.nrows)
    free(st.ahead)
    free(st.nlive)
    free(st.nscore)
    free(st.crows)
    free(st.clock)
    free(st.hrows)
    free(st.hlock)
    free(st.negs)
    free(st.neg_counts)
    free(st.share_negs)
    free(st.share_n)


cdef inline int run_job(const ModelView *m, const int32_t *ids, const int64_t *ends,
                        int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                        uint64_t seed, int64_t *kept, double *loss,
                        const JobRoutines *r) noexcept nogil:
    """One job without the GIL (``_inner.Trainer.train_job``): ``ends[n_sentences - 1] ==
    n_ids``; ``r``: what the loop calls out of line (``JobRoutines``). Writes the kept
    (effective) tokens and the loss; returns 0, or -1 if its buffers could not be
    allocated."""
    cdef int64_t s, start, total
    cdef int b
    cdef int rc_nodes
    cdef JobState st
    kept[0] = 0
    loss[0] = 0.0
    if n_ids == 0:
        return 0
    memset(&st, 0, sizeof(JobState))
    loss_init(&st.tally)
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
    st.pairs = pairs_max(m, n_ids)
    st.negs = <int32_t *>malloc(2 * <size_t>st.pairs * (m.negative + 1) * sizeof(int32_t))
    st.neg_counts = <int *>malloc(2 * <size_t>st.pairs * sizeof(int))
    if m.cbow_run > 1:
        st.share_negs = <int32_t *>malloc(<size_t>m.cbow_stride * m.negative
                                          * sizeof(int32_t))
        st.share_n = <int *>malloc(<size_t>m.cbow_stride * sizeof(int))
    st.nrows = <float **>malloc((m.negative + 1) * sizeof(float *))
    st.ahead = <float **>malloc((m.negative + 1) * sizeof(float *))
    st.nlive = <float **>malloc((m.negative + 1) * sizeof(float *))
    st.nscore = <float *>malloc(2 * (m.negative + 1) * sizeof(float))
    # CBOW's window rows: at most 2 x window, and fewer than the job's ids
    st.crows = <float **>malloc(<size_t>min(2 * <int64_t>m.window, n_ids) * sizeof(float *))
    st.clock = <float *>malloc(<size_t>min(2 * <int64_t>m.window, n_ids) * sizeof(float))
    if m.shared_negs:
        st.hrows = <float **>malloc(<size_t>st.pairs * sizeof(float *))
        st.hlock = <float *>malloc(<size_t>st.pairs * sizeof(float))
    rc_nodes = alloc_hot_copy(&st.nodes, m.hot_nodes.n, m.d)
    rc_nodes |= alloc_hot_copy(&st.words, m.hot_words.n, m.d)
    if (st.work == NULL or st.neu1 == NULL or st.kept == NULL or st.ends == NULL
            or st.xrows == NULL or st.xwords == NULL or st.wrows == NULL
            or st.yrows == NULL or st.W == NULL or rc_nodes or st.negs == NULL
            or st.neg_counts == NULL or st.nrows == NULL or st.ahead == NULL or st.xlock == NULL
            or st.nlive == NULL or st.nscore == NULL or st.crows == NULL or st.clock == NULL
            or (m.shared_negs and (st.hrows == NULL or st.hlock == NULL))
            or (m.cbow_run > 1 and (st.share_negs == NULL or st.share_n == NULL))):
        free_job_state(&st)
        return -1
    for b in range(MAX_BLOCK):
        st.wrows[b] = st.W + b * m.d
    total = subsample(m, &st, ids, ends, n_sentences)
    start = 0
    for s in range(n_sentences):
        if st.ends[s] - start > 1:
            train_sentence(m, &st, start, st.ends[s], total, alpha0, alpha1, r)
        start = st.ends[s]
    if m.hot_nodes.n or m.hot_words.n:
        flush_hot(m, &st)
    kept[0] = total
    if m.compute_loss:  # the walks' terms (the job's tally)
        st.loss += loss_total(&st.tally)
    # design note G: a job that met a non-finite weight reports a NaN loss
    loss[0] = st.loss if isfinite(st.check) else NAN
    free_job_state(&st)
    return 0
