"""One job of Word2Vec training: its state, subsampling, the skip-gram and CBOW callers of
the walks, and the job loop itself (inline).

Design note: see ``_inner`` design notes A-H. ``ModelView`` (``_inner_model.pxd``) is the
read-only view of the model every thread shares (its input kind and its list of outputs);
``JobState`` everything one job owns (scratch vectors, the window's input rows, kept ids, the
private hot rows of each output, the random stream, the loss and the divergence check).
``train_sentence`` is one step per centre in fastText's shape: it gathers the window's input
rows, and each output in turn forms h from them by the input kind (a context row for
skip-gram, the window's mean / sum for CBOW), walks its targets for the centre (hs: the
path, ``hs_contexts`` / ``cbow_hs``; ns: the drawn words, ``ns_contexts`` / ``ns_pair``) and
sends h's step back to the input rows; ``run_job`` is one whole job. A module that trains composes its nogil job entry
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
from hsw2v._kernels._inner_model cimport (
    INPUT_CONTEXT, INPUT_SUBWORD_CENTRE, INPUT_WINDOW, MAX_OUTPUTS, HotSet, ModelView, Output,
)
from hsw2v._kernels._inner_rng cimport draw_negatives, lend_negatives, next_random
from hsw2v._kernels._inner_walks cimport (
    KERNEL_FUSED, KERNEL_WINDOW, RefWalks, hs_path_fused, ns_path_fused,
)
from hsw2v._kernels._ns_pair cimport hsw2v_rows_sum, ns_pair_block, rows_distinct
from hsw2v._kernels._ns_shared cimport ns_shared_block
from hsw2v._kernels._rates cimport job_alpha
from hsw2v._kernels._tree_view cimport path_code, path_point
from hsw2v._kernels._vecops cimport hsw2v_axpy, hsw2v_loss_acc, loss_init, loss_total


# CBOW takes the two-pass negative-sampling block (``_ns_pair.pxd``) up to this vector size
# and the word-by-word fused walk above it (the same bits either way): the block measured
# faster at d=100 and slower at d=300 (benchmarks/RESULTS.md, "The CBOW block by width"),
# and the widths between were not measured, so they keep the walk.
DEF NS_BLOCK_MAX_D = 128


cdef struct JobState:
    float *work       # d floats: error accumulated for h
    float *neu1       # d floats: CBOW hidden vector
    float *acc        # d floats: FastText's skip-gram, the steps of a centre's rows so far
    float **xrows     # window kernel: a block's context rows of syn0 (MAX_BLOCK pointers)
    int32_t *xwords   # window kernel: a block's context words (MAX_BLOCK)
    float **wrows     # window kernel: a block's error rows, pointers into W (MAX_BLOCK)
    float **yrows     # window kernel: the path rows of syn1 (max_length pointers)
    float *W          # window kernel: the block's errors, MAX_BLOCK x d
    float *xlock      # window kernel: the lock factors of a block's context words (MAX_BLOCK)
    HotCopy hot[MAX_OUTPUTS]  # this job's private copies of each output's hot rows
    float **nrows     # negative sampling: the rows of one (target, negatives) set
    float **ahead     # negative sampling: the next set's shared rows to prefetch (see ns_pair)
    float **nlive     # negative sampling: the rows that step (ns_pair_block's scratch)
    float *nscore     # negative sampling: scores and coefficients, 2 x (negative + 1)
                      # (ns_pair's, and the shared-negatives block's scratch)
    float **crows     # the window's input rows but the centre's as a list (min(2 x window,
                      # ids) pointers): CBOW's h, skip-gram's contexts with shared negatives
    float *clock      # their lock factors (as many)
    int64_t since     # centre words trained since the last flush of the hot rows
    int32_t *kept     # the job's ids that survived subsampling
    int64_t *ends     # sentence ends in ``kept``
    int32_t *negs     # negative sampling: the words of two centres' (target, negatives)
                      # sets, drawn ahead (2 x pairs_max x (negative + 1); see draw_centre)
    int *neg_counts   # the entries of each set (2 x pairs_max)
    int32_t *share_negs  # CBOW shared: the fresh sets' draws (cbow_stride x negative);
                         # FastText's skip-gram shared: the centre's one draw (negative + 1)
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


cdef inline float *output_row(const ModelView *m, JobState *st, int k,
                              int32_t r) noexcept nogil:
    """The row ``r`` of output ``k``'s matrix this job trains for one visit (``private_row``
    over the output's hot rows): an inner node of the centre's path (hs), a target or a
    negative (ns)."""
    return private_row(m, m.outputs[k].matrix, &m.outputs[k].hot, &st.hot[k], r)


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
    """Flush the job's private rows of every output (``flush_rows``)."""
    cdef int k
    for k in range(m.n_outputs):
        if m.outputs[k].hot.n:
            flush_rows(m, m.outputs[k].matrix, &m.outputs[k].hot, &st.hot[k])


cdef inline bint has_hot_rows(const ModelView *m) noexcept nogil:
    """Whether any output has private hot rows (then the job flushes them)."""
    cdef int k
    for k in range(m.n_outputs):
        if m.outputs[k].hot.n:
            return True
    return False


cdef inline int ns_negative(const ModelView *m) noexcept nogil:
    """Negatives per step of the negative-sampling output; 0 without one."""
    return m.outputs[m.ns].negative if m.ns >= 0 else 0


cdef inline hsw2v_loss_acc *job_tally(const ModelView *m, JobState *st) noexcept nogil:
    """The job's loss tally for the walks, or NULL without compute_loss."""
    return &st.tally if m.compute_loss else NULL


cdef inline void sg_window(const ModelView *m, JobState *st, int64_t r, int64_t e, int64_t i,
                           const uint8_t *code, int length, float alpha) noexcept nogil:
    """Skip-gram's hierarchical softmax for centre ``i``: the contexts of kept[r:e] (but i)
    walk the centre's path (rows in st.yrows) in blocks of up to ``m.block`` distinct words
    (_window.h), with exactly word2vec.c's updates. The loss terms go to the job's tally when
    compute_loss."""
    cdef int d = m.d, B = 0, b
    cdef int64_t p
    cdef int32_t word
    cdef bint repeated
    for p in range(r, e + 1):
        if p < e:
            if p == i:
                continue
            word = st.kept[p]
            repeated = False
            for b in range(B):
                if st.xwords[b] == word:
                    repeated = True
        if B and (p == e or B == m.block or repeated):
            hsw2v_sg_block_tally(B, d, st.xrows, st.wrows, length, st.yrows, code, alpha,
                                 &SIGMOID, job_tally(m, st), &st.check,
                                 st.xlock if m.lockf != NULL else NULL)
            B = 0
        if p < e:
            st.xwords[B] = word
            st.xrows[B] = m.syn0 + <int64_t>word * d
            st.xlock[B] = lock_of(m, word)
            B += 1


cdef inline float lock_of(const ModelView *m, int32_t word) noexcept nogil:
    """The factor of ``word``'s syn0 updates (gensim's ``vectors_lockf``; design note H)."""
    if m.lockf == NULL:
        return 1.0
    return m.lockf[word % m.lockf_len]


cdef inline void prefetch_path(const ModelView *m, const Output *o,
                               int32_t word) noexcept nogil:
    """Prefetch the inner-node rows of ``word``'s path (the next centre's) in the
    hierarchical-softmax output ``o``, below the top levels, which stay cached anyway."""
    cdef const int32_t *point = path_point(&o.tree, word)
    cdef int j
    for j in range(4, o.tree.lengths[word]):
        if not is_private(&o.hot, point[j]):
            prefetch_row(o.matrix + <int64_t>point[j] * m.d, m.d)


cdef inline float cbow_inv(int count) noexcept nogil:
    """1 / count in float32: CBOW's factor of the mean (cbow_mean) or of the spread error."""
    cdef float inv = 1.0 / count
    return inv


cdef inline int gather_window(const ModelView *m, JobState *st, int64_t lo, int64_t hi,
                              int64_t i) noexcept nogil:
    """The window's input rows as a list: the syn0 rows of kept[lo:hi] but the centre ``i``,
    in order, into st.crows, and their lock factors into st.clock (CBOW's h, and skip-gram's
    contexts against one shared set of negatives). Returns their count."""
    cdef int64_t j
    cdef int count = 0
    for j in range(lo, hi):
        if j == i:
            continue
        st.crows[count] = m.syn0 + <int64_t>st.kept[j] * m.d
        st.clock[count] = lock_of(m, st.kept[j])
        count += 1
    return count


cdef inline int gather_subwords(const ModelView *m, JobState *st, int32_t word,
                                int count) noexcept nogil:
    """Append ``word``'s input rows (its own row, then its n-gram rows: ``m.sub_rows``) to
    st.crows from position ``count``, their lock factors to st.clock; returns the new
    count."""
    cdef int64_t j
    cdef int32_t row
    for j in range(m.sub_ptr[word], m.sub_ptr[word + 1]):
        row = m.sub_rows[j]
        st.crows[count] = m.syn0 + <int64_t>row * m.d
        st.clock[count] = lock_of(m, row)
        count += 1
    return count


cdef inline int gather_subword_window(const ModelView *m, JobState *st, int64_t lo, int64_t hi,
                                      int64_t i) noexcept nogil:
    """FastText CBOW's input rows: every row of every word of kept[lo:hi] but the centre
    ``i`` (``gather_subwords``), in order, into st.crows / st.clock. Returns their count."""
    cdef int64_t j
    cdef int count = 0
    for j in range(lo, hi):
        if j != i:
            count = gather_subwords(m, st, st.kept[j], count)
    return count


cdef inline void cbow_hidden(const ModelView *m, JobState *st, int count) noexcept nogil:
    """CBOW's h into st.neu1: the sum of the window's ``count`` rows (st.crows, at least one),
    divided by their count when cbow_mean, in one pass (``_ns_pair.h``'s
    ``hsw2v_rows_sum``: the bits of a sum row by row, then a scaling pass)."""
    hsw2v_rows_sum(m.d, st.crows, count, cbow_inv(count) if m.cbow_mean else 1.0, st.neu1)


cdef inline void cbow_spread(const ModelView *m, JobState *st, int count) noexcept nogil:
    """CBOW's error back to the inputs: every row of the window (st.crows) gets += st.work
    times its lock factor (st.work divided by the count first when not cbow_mean)."""
    cdef int k
    cdef float inv
    if not m.cbow_mean:
        inv = 1.0 / count
        for k in range(m.d):
            st.work[k] *= inv
    for k in range(count):
        hsw2v_axpy(m.d, st.clock[k], st.work, st.crows[k])


cdef inline int64_t distinct_run(const JobState *st, int64_t r, int64_t hi,
                                 int64_t i) noexcept nogil:
    """The end (past r, at most ``hi``) of the longest run of positions kept[r:end] whose
    words, the centre ``i`` left out, are distinct."""
    cdef int64_t e, b
    for e in range(r + 1, hi):
        if e == i:
            continue
        for b in range(r, e):
            if b != i and st.kept[b] == st.kept[e]:
                return e
    return hi


cdef inline int64_t pairs_max(const ModelView *m, int64_t n_ids) noexcept nogil:
    """The most (h, target) pairs of one centre word in a job of ``n_ids`` ids: its contexts
    (skip-gram and FastText's; fewer than the job's ids, however large the window), or 1
    (CBOW)."""
    cdef int64_t pairs = (2 * <int64_t>m.window
                          if m.input == INPUT_CONTEXT or m.input == INPUT_SUBWORD_CENTRE else 1)
    return pairs if pairs < n_ids else n_ids


cdef inline void draw_centre(const ModelView *m, JobState *st, int64_t start, int64_t end,
                             int64_t i, int slot) noexcept nogil:
    """Draw what centre ``i`` of kept[start:end] needs from the job's stream, in the order
    gensim's loops would: its reduced window (into ``win_lo/win_hi[slot]``), then with
    negative sampling the negatives of each of its pairs (skip-gram: one per context, in
    order; FastText's skip-gram: one per context, the context its target; CBOW: one), into set ``slot`` of ``st.negs``; with shared negatives one set
    (skip-gram), or CBOW's set drawn or taken from the ring ``st.share_negs`` (``_inner.pyx``'s
    design note D'). The draws do not depend on the weights, so drawing a centre ahead of
    training the one before it changes no result; the kernels then prefetch the rows
    (``prefetch_negs``)."""
    cdef int b = <int>(next_random(&st.rng) % <uint32_t>m.window) if m.shrink_windows else 0
    cdef int64_t lo = i - m.window + b, hi = i + m.window + 1 - b, j
    cdef int p = 0, stride, k
    cdef int64_t q
    cdef int32_t *negs
    cdef int32_t *kept_draws
    cdef int *counts
    cdef const Output *o
    if lo < start:
        lo = start
    if hi > end:
        hi = end
    st.win_lo[slot] = lo
    st.win_hi[slot] = hi
    if m.ns < 0:
        return
    o = &m.outputs[m.ns]
    stride = o.negative + 1
    negs = st.negs + <int64_t>slot * st.pairs * stride
    counts = st.neg_counts + <int64_t>slot * st.pairs
    if m.input == INPUT_CONTEXT and o.shared:  # one set for all the contexts (_ns_shared.pxd)
        if hi - lo > 1:
            counts[0] = draw_negatives(&o.neg, st.kept[i], o.negative, negs, &st.rng)
    elif m.input == INPUT_CONTEXT:
        for j in range(lo, hi):
            if j != i:
                counts[p] = draw_negatives(&o.neg, st.kept[i], o.negative,
                                           negs + <int64_t>p * stride, &st.rng)
                p += 1
    elif hi - lo > 1 and o.cbow_run > 1:  # CBOW, shared
        q = st.share_t % o.cbow_stride
        kept_draws = st.share_negs + q * o.negative
        if (st.share_t // o.cbow_stride) % o.cbow_run == 0:
            counts[0] = draw_negatives(&o.neg, st.kept[i], o.negative, negs, &st.rng)
            st.share_n[q] = counts[0] - 1
            memcpy(kept_draws, negs + 1, st.share_n[q] * sizeof(int32_t))
        else:
            counts[0] = lend_negatives(st.kept[i], kept_draws, st.share_n[q], negs)
        st.share_t += 1
    elif m.input == INPUT_SUBWORD_CENTRE and o.shared:  # one draw, lent to every context
        if hi - lo > 1:  # (less its own target), as CBOW's shared sets
            k = draw_negatives(&o.neg, st.kept[i], o.negative, st.share_negs, &st.rng)
            for j in range(lo, hi):
                if j != i:
                    counts[p] = lend_negatives(st.kept[j], st.share_negs + 1, k - 1,
                                               negs + <int64_t>p * stride)
                    p += 1
    elif m.input == INPUT_SUBWORD_CENTRE:  # one set per context, the context the target
        for j in range(lo, hi):
            if j != i:
                counts[p] = draw_negatives(&o.neg, st.kept[j], o.negative,
                                           negs + <int64_t>p * stride, &st.rng)
                p += 1
    elif hi - lo > 1:
        counts[0] = draw_negatives(&o.neg, st.kept[i], o.negative, negs, &st.rng)


cdef inline int rows_ahead(const ModelView *m, const int32_t *negs, int count,
                           float **out) noexcept nogil:
    """The syn1neg rows of one (target, negatives) set to prefetch, into ``out``: NULL for
    the private ones (their shared rows are not asked for: see ``is_private``). Returns
    ``count``."""
    cdef int k
    cdef const Output *o = &m.outputs[m.ns]
    for k in range(count):
        out[k] = (NULL if is_private(&o.hot, negs[k])
                  else o.matrix + <int64_t>negs[k] * m.d)
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
    cdef int k, c, walk = m.outputs[m.ns].walk
    cdef double loss = 0.0
    for k in range(count):
        st.nrows[k] = output_row(m, st, m.ns, negs[k])
    if walk == KERNEL_FUSED or walk == KERNEL_WINDOW:  # its loss: on st.tally
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
    """Shared negatives (skip-gram): the centre's ``npairs`` contexts (``st.crows``, their
    lock factors ``st.clock``) against its one drawn set ``negs`` (target first), the block
    step of ``_ns_shared.pxd``."""
    cdef int k
    for k in range(count):
        st.nrows[k] = output_row(m, st, m.ns, negs[k])
    return ns_shared_block(m.d, npairs, st.crows, st.clock if m.lockf != NULL else NULL,
                           st.nrows, count, alpha, &SIGMOID, st.nscore, m.compute_loss,
                           &st.check)


cdef inline int set_after(const ModelView *m, int q, int npairs, const int32_t *negs,
                          const int *counts, int stride, const int32_t *next_negs,
                          int next_count, const int32_t **ahead) noexcept nogil:
    """The drawn set whose rows the ``q``-th of a centre's ``npairs`` pairs prefetches: the
    centre's next pair's (``negs``, ``counts``), or after its last the next centre's first
    (``next_negs``, ``next_count`` words); into ``ahead``, returning its words (0: none, as
    without prefetch)."""
    if not m.prefetch:
        ahead[0] = NULL
        return 0
    if q + 1 < npairs:
        ahead[0] = negs + <int64_t>(q + 1) * stride
        return counts[q + 1]
    ahead[0] = next_negs
    return next_count


cdef inline void hs_contexts(const ModelView *m, JobState *st, int64_t r, int64_t e,
                             int64_t i, const uint8_t *code, int length, float alpha,
                             const JobRoutines *rt) noexcept nogil:
    """Skip-gram's hierarchical-softmax output: each context of kept[r:e] (but the centre
    ``i``) is an h, its syn0 row, that predicts the centre's path (rows in st.yrows), and its
    step goes back to its row: in blocks (the window walk, ``sg_window``), or context by
    context (the fused walk, or the reference walk ``rt.walks.hs``)."""
    cdef int walk = m.outputs[m.hs].walk
    cdef int64_t p
    cdef float *ctx
    if walk == KERNEL_WINDOW:
        sg_window(m, st, r, e, i, code, length, alpha)
        return
    for p in range(r, e):
        if p == i:
            continue
        ctx = m.syn0 + <int64_t>st.kept[p] * m.d
        if walk != KERNEL_FUSED:
            st.loss += rt.walks.hs(ctx, st.work, st.yrows, code, length, alpha, m.d,
                                   m.compute_loss, &st.check)
            hsw2v_axpy(m.d, lock_of(m, st.kept[p]), st.work, ctx)
        elif m.lockf == NULL:  # the last node's update of ctx fused in
            hs_path_fused(ctx, st.work, st.yrows, code, length, alpha, m.d, job_tally(m, st),
                          True, &st.check)
        else:
            hs_path_fused(ctx, st.work, st.yrows, code, length, alpha, m.d, job_tally(m, st),
                          False, &st.check)
            hsw2v_axpy(m.d, lock_of(m, st.kept[p]), st.work, ctx)


cdef inline void ns_contexts(const ModelView *m, JobState *st, int64_t r, int64_t e,
                             int64_t i, int q, int npairs, const int32_t *negs,
                             const int *counts, const int32_t *next_negs, int next_count,
                             float alpha, const JobRoutines *rt) noexcept nogil:
    """Skip-gram's negative-sampling output, each context its own set: the contexts of
    kept[r:e] (but the centre ``i``), the ``q``-th of the centre's ``npairs`` first, each an
    h (its syn0 row) against its drawn set (``negs``, one per context). Each pair prefetches
    the next pair's set: its centre's next, or the next centre's first (``next_negs``,
    ``next_count`` words; 0: none)."""
    cdef int stride = m.outputs[m.ns].negative + 1, n_ahead
    cdef int64_t p
    cdef const int32_t *ahead
    cdef float *ctx
    cdef float ctx_lock
    for p in range(r, e):
        if p == i:
            continue
        n_ahead = set_after(m, q, npairs, negs, counts, stride, next_negs, next_count, &ahead)
        ctx = m.syn0 + <int64_t>st.kept[p] * m.d
        ctx_lock = lock_of(m, st.kept[p])
        st.loss += ns_pair(m, st, ctx, negs + <int64_t>q * stride, counts[q], alpha,
                           &rt.walks, &ctx, &ctx_lock, 1, 1.0, False, ahead, n_ahead)
        q += 1


cdef inline void hidden_hs(const ModelView *m, JobState *st, const uint8_t *code, int length,
                           float alpha, const JobRoutines *rt) noexcept nogil:
    """The hierarchical-softmax walk of an h that is not a row (st.neu1) along a path
    (st.yrows): the rows of the path step, and h's step is left in st.work."""
    cdef int walk = m.outputs[m.hs].walk
    if walk == KERNEL_WINDOW:
        hsw2v_cbow_walk(m.d, st.neu1, st.work, length, st.yrows, code, alpha, &SIGMOID,
                        job_tally(m, st), &st.check)
    elif walk != KERNEL_FUSED:
        st.loss += rt.walks.hs(st.neu1, st.work, st.yrows, code, length, alpha, m.d,
                               m.compute_loss, &st.check)
    else:
        hs_path_fused(st.neu1, st.work, st.yrows, code, length, alpha, m.d, job_tally(m, st),
                      False, &st.check)


cdef inline void cbow_hs(const ModelView *m, JobState *st, int count, const uint8_t *code,
                         int length, float alpha, const JobRoutines *rt) noexcept nogil:
    """CBOW's hierarchical-softmax output: h (st.neu1, the window's ``count`` rows) predicts
    the centre's path (st.yrows), and its step is spread to the window's rows
    (``cbow_spread``)."""
    hidden_hs(m, st, code, length, alpha, rt)
    cbow_spread(m, st, count)


cdef inline void load_path(const ModelView *m, JobState *st, int32_t word) noexcept nogil:
    """The rows of ``word``'s path in the hierarchical-softmax output (this job's, for its
    private ones) into st.yrows."""
    cdef const Output *o = &m.outputs[m.hs]
    cdef const int32_t *point = path_point(&o.tree, word)
    cdef int k
    for k in range(o.tree.lengths[word]):
        st.yrows[k] = output_row(m, st, m.hs, point[k])


cdef inline void prefetch_subwords(const ModelView *m, int32_t word) noexcept nogil:
    """Prefetch every input row of ``word`` (a word coming into the window, or the next
    centre): its n-gram rows are scattered over the whole input matrix."""
    cdef int64_t j
    for j in range(m.sub_ptr[word], m.sub_ptr[word + 1]):
        prefetch_row(m.syn0 + <int64_t>m.sub_rows[j] * m.d, m.d)


cdef inline void take_step(const ModelView *m, JobState *st, float coef) noexcept nogil:
    """FastText's skip-gram: add h's step (st.work) to the centre's pending step (st.acc),
    and move h (st.neu1) as the mean of the centre's rows moves when they take it."""
    cdef int k
    for k in range(m.d):
        st.acc[k] += st.work[k]
        st.neu1[k] += coef * st.work[k]


cdef inline void subword_centre(const ModelView *m, JobState *st, int64_t lo, int64_t hi,
                                int64_t i, const int32_t *negs, const int *counts,
                                const int32_t *next_negs, int next_count, float alpha,
                                const JobRoutines *rt) noexcept nogil:
    """FastText's skip-gram step for centre ``i`` (``INPUT_SUBWORD_CENTRE``): h is the mean
    of the centre word's input rows (its row and its n-gram rows), and it predicts each
    context word of kept[lo:hi] in turn, as fastText's and gensim's skip-gram do: per
    context, each output walks the context's targets (hs: its path; ns: the context and its
    drawn set ``negs``, one set per context) and h's step goes to every row.

    The same updates in fewer passes over the rows: the rows are gathered and averaged once
    per centre, and their steps are summed (st.acc) and sent once, after the last context,
    while h moves after each step exactly as the mean of the stepped rows would
    (``take_step``; ``sub_coef`` counts a row that is repeated, and the lock factors). Only
    the float rounding differs from stepping the rows after every walk (the NumPy twin does
    that); no other walk touches these rows in between."""
    cdef int32_t centre = st.kept[i]
    cdef int n = gather_subwords(m, st, centre, 0)
    cdef int q = 0, npairs = <int>(hi - lo - 1), n_ahead
    cdef int stride = ns_negative(m) + 1, length, k
    cdef float coef = m.sub_coef[centre]
    cdef int64_t p
    cdef int32_t target
    cdef const int32_t *ahead
    cdef const Output *tree_out
    if m.prefetch and i + 1 < hi:  # the next centre's rows, scattered over the matrix
        prefetch_subwords(m, st.kept[i + 1])
    hsw2v_rows_sum(m.d, st.crows, n, cbow_inv(n), st.neu1)
    memset(st.acc, 0, m.d * sizeof(float))
    for p in range(lo, hi):
        if p == i:
            continue
        target = st.kept[p]
        if m.hs >= 0:
            tree_out = &m.outputs[m.hs]
            length = tree_out.tree.lengths[target]
            load_path(m, st, target)
            hidden_hs(m, st, path_code(&tree_out.tree, target), length, alpha, rt)
            take_step(m, st, coef)
        if m.ns >= 0:
            n_ahead = set_after(m, q, npairs, negs, counts, stride, next_negs, next_count,
                                &ahead)
            st.loss += ns_pair(m, st, st.neu1, negs + <int64_t>q * stride, counts[q], alpha,
                               &rt.walks, NULL, NULL, 0, 1.0, m.d <= NS_BLOCK_MAX_D, ahead,
                               n_ahead)
            take_step(m, st, coef)
        q += 1
    for k in range(n):
        hsw2v_axpy(m.d, st.clock[k], st.acc, st.crows[k])


cdef inline void train_sentence(const ModelView *m, JobState *st, int64_t start,
                                int64_t end, int64_t total, float alpha0, float alpha1,
                                const JobRoutines *rt) noexcept nogil:
    """Train every centre position of kept[start:end]; alpha falls linearly from alpha0 at the
    job's first kept token to alpha1 after its last (``total`` kept tokens).

    One step per centre, in fastText's shape (``Model::update``): the input rows are the
    window's (skip-gram reads them by position, kept[lo:hi] but the centre; CBOW and the
    shared negatives take them as a list, ``gather_window``); each output in turn (``m.outputs``: hierarchical softmax,
    then negative sampling, as gensim; written out by kind, which measured 1-5 % faster for
    CBOW than a loop over the list) forms h from them by the input kind, walks its targets
    for the centre and sends h's step back to the input rows. Skip-gram (``INPUT_CONTEXT``) makes each
    context row its own h; with two outputs that step context by context, they take turns
    over runs of positions with distinct words (``distinct_run``), which gives the updates of gensim's order
    (each context's hs step, then its ns step) bit for bit, as the two outputs write disjoint
    matrices. CBOW (``INPUT_WINDOW``) forms h as the window's mean or sum again for each
    output, from the rows the one before moved (gensim's order).

    With negative sampling each centre's draws are made while the centre before it trains
    (``draw_centre``), and each pair prefetches the rows of the next pair's set. The
    "reference" walks are ``rt.walks`` (``_inner_walks.RefWalks``); the private rows are
    flushed through ``rt.flush``."""
    cdef int64_t i, lo, hi
    cdef int k, n, length = 0, next_count, npairs
    cdef int64_t r, e
    cdef int d = m.d, negative = ns_negative(m)
    cdef int slot = 0, stride = negative + 1
    cdef bint drawn = False, fresh
    cdef bint hot = has_hot_rows(m)
    # skip-gram with two outputs that step context by context: runs of distinct words
    cdef bint shared = m.ns >= 0 and m.outputs[m.ns].shared
    cdef bint runs = m.n_outputs > 1 and not shared
    cdef float alpha
    cdef int32_t centre
    cdef const Output *tree_out = NULL
    cdef const uint8_t *code = NULL
    cdef const int32_t *point
    cdef int32_t *negs = NULL
    cdef int32_t *next_negs = NULL
    cdef int *counts = NULL
    cdef int *next_counts = NULL
    if m.hs >= 0:
        tree_out = &m.outputs[m.hs]
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
        if negative:
            negs = st.negs + <int64_t>slot * st.pairs * stride
            counts = st.neg_counts + <int64_t>slot * st.pairs
            if i + 1 < end:
                draw_centre(m, st, start, end, i + 1, 1 - slot)
                drawn = True
                next_negs = st.negs + <int64_t>(1 - slot) * st.pairs * stride
                next_counts = st.neg_counts + <int64_t>(1 - slot) * st.pairs
            if m.prefetch and fresh and hi - lo > 1:  # else prefetched with centre i - 1
                prefetch_negs(m, st, negs, counts[0])
        # the next centre's first set, when it has one (prefetched by this centre's last pair)
        next_count = 0
        if m.prefetch and drawn and st.win_hi[1 - slot] - st.win_lo[1 - slot] > 1:
            next_count = next_counts[0]
        centre = st.kept[i]
        if m.input == INPUT_SUBWORD_CENTRE:  # its targets are the contexts (their paths)
            if hi - lo > 1:
                subword_centre(m, st, lo, hi, i, negs, counts, next_negs, next_count, alpha, rt)
        elif tree_out != NULL:  # the centre's path: its rows, and the next centre's prefetched
            code = path_code(&tree_out.tree, centre)
            point = path_point(&tree_out.tree, centre)
            length = tree_out.tree.lengths[centre]
            for k in range(length):
                st.yrows[k] = output_row(m, st, m.hs, point[k])
            if m.prefetch and i + 1 < end:
                prefetch_path(m, tree_out, st.kept[i + 1])
        if m.prefetch and i + 1 < end and hi < end:  # the word coming into the window
            if m.sub_ptr == NULL:
                prefetch_row(m.syn0 + <int64_t>st.kept[hi] * d, d)
            else:
                prefetch_subwords(m, st.kept[hi])
        if m.input == INPUT_CONTEXT:  # the contexts are the positions kept[lo:hi] but i
            npairs = <int>(hi - lo - 1)
            if npairs > 0 and shared:  # every context against the centre's one set
                if m.hs >= 0:
                    hs_contexts(m, st, lo, hi, i, code, length, alpha, rt)
                if m.prefetch and next_count:
                    prefetch_negs(m, st, next_negs, next_count)
                st.loss += ns_shared_centre(m, st, gather_window(m, st, lo, hi, i), negs,
                                            counts[0], alpha)
            elif npairs > 0:
                r = lo
                while r < hi:
                    e = distinct_run(st, r, hi, i) if runs else hi
                    if m.hs >= 0:  # the outputs in their order (the Trainer's: hs first)
                        hs_contexts(m, st, r, e, i, code, length, alpha, rt)
                    if m.ns >= 0:
                        ns_contexts(m, st, r, e, i, <int>(r - lo - (i < r)), npairs, negs,
                                    counts, next_negs, next_count, alpha, rt)
                    r = e
        elif m.input != INPUT_SUBWORD_CENTRE:
            if m.input == INPUT_WINDOW:
                n = gather_window(m, st, lo, hi, i)
            else:  # INPUT_SUBWORD_WINDOW: every context word's rows
                n = gather_subword_window(m, st, lo, hi, i)
            if n == 0:
                continue
            if m.hs >= 0:
                cbow_hidden(m, st, n)
                cbow_hs(m, st, n, code, length, alpha, rt)
            if m.ns >= 0:
                cbow_hidden(m, st, n)  # again after hs: gensim's order
                st.loss += ns_pair(m, st, st.neu1, negs, counts[0], alpha, &rt.walks,
                                   st.crows, st.clock, n, 1.0 if m.cbow_mean else cbow_inv(n),
                                   d <= NS_BLOCK_MAX_D, next_negs, next_count)
        if hot:
            st.since += 1
            if st.since >= m.hot_sync:
                rt.flush(m, st)
                st.since = 0


cdef inline void free_job_state(JobState *st) noexcept nogil:
    cdef int k
    free(st.work)
    free(st.neu1)
    free(st.acc)
    free(st.kept)
    free(st.ends)
    free(st.xrows)
    free(st.xwords)
    free(st.wrows)
    free(st.yrows)
    free(st.W)
    free(st.xlock)
    for k in range(MAX_OUTPUTS):
        free_hot_copy(&st.hot[k])
    free(st.nrows)
    free(st.ahead)
    free(st.nlive)
    free(st.nscore)
    free(st.crows)
    free(st.clock)
    free(st.negs)
    free(st.neg_counts)
    free(st.share_negs)
    free(st.share_n)


cdef inline int64_t job_rows(const ModelView *m, const int32_t *ids,
                             int64_t n_ids) noexcept nogil:
    """The input rows of all the job's tokens (subword kinds): the most one window (or one
    centre) can gather, however long its words."""
    cdef int64_t k, rows = 0
    for k in range(n_ids):
        rows += m.sub_ptr[ids[k] + 1] - m.sub_ptr[ids[k]]
    return rows


cdef inline int run_job(const ModelView *m, const int32_t *ids, const int64_t *ends,
                        int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                        uint64_t seed, int64_t *kept, double *loss,
                        const JobRoutines *r) noexcept nogil:
    """One job without the GIL (``_inner.Trainer.train_job``): ``ends[n_sentences - 1] ==
    n_ids``; ``r``: what the loop calls out of line (``JobRoutines``). Writes the kept
    (effective) tokens and the loss; returns 0, or -1 if its buffers could not be
    allocated."""
    cdef int64_t s, start, total
    cdef int b, k
    cdef int rc_hot = 0
    cdef int negative = ns_negative(m)
    cdef int cbow_run = m.outputs[m.ns].cbow_run if m.ns >= 0 else 1
    cdef int cbow_stride = m.outputs[m.ns].cbow_stride if m.ns >= 0 else 1
    cdef bint shared_draw = (m.ns >= 0 and m.outputs[m.ns].shared
                             and m.input == INPUT_SUBWORD_CENTRE)
    cdef int max_length = m.outputs[m.hs].tree.max_length if m.hs >= 0 else 1
    cdef size_t window_rows = <size_t>min(2 * <int64_t>m.window, n_ids)
    cdef JobState st
    if m.sub_ptr != NULL:  # subwords: at most max_sub rows a word, and the job's rows in all
        window_rows = <size_t>min(<int64_t>window_rows * m.max_sub, job_rows(m, ids, n_ids))
    kept[0] = 0
    loss[0] = 0.0
    if n_ids == 0:
        return 0
    memset(&st, 0, sizeof(JobState))
    loss_init(&st.tally)
    st.rng = seed if seed else 1
    st.work = <float *>malloc(m.d * sizeof(float))
    st.neu1 = <float *>malloc(m.d * sizeof(float))
    st.acc = <float *>malloc(m.d * sizeof(float))
    st.kept = <int32_t *>malloc(n_ids * sizeof(int32_t))
    st.ends = <int64_t *>malloc(n_sentences * sizeof(int64_t))
    st.xrows = <float **>malloc(MAX_BLOCK * sizeof(float *))
    st.xwords = <int32_t *>malloc(MAX_BLOCK * sizeof(int32_t))
    st.wrows = <float **>malloc(MAX_BLOCK * sizeof(float *))
    st.yrows = <float **>malloc(max_length * sizeof(float *))
    st.W = <float *>malloc(MAX_BLOCK * m.d * sizeof(float))
    st.xlock = <float *>malloc(MAX_BLOCK * sizeof(float))
    st.pairs = pairs_max(m, n_ids)
    st.negs = <int32_t *>malloc(2 * <size_t>st.pairs * (negative + 1) * sizeof(int32_t))
    st.neg_counts = <int *>malloc(2 * <size_t>st.pairs * sizeof(int))
    if cbow_run > 1:
        st.share_negs = <int32_t *>malloc(<size_t>cbow_stride * negative * sizeof(int32_t))
        st.share_n = <int *>malloc(<size_t>cbow_stride * sizeof(int))
    elif shared_draw:  # FastText's skip-gram: one draw per centre (the centre first)
        st.share_negs = <int32_t *>malloc(<size_t>(negative + 1) * sizeof(int32_t))
    st.nrows = <float **>malloc((negative + 1) * sizeof(float *))
    st.ahead = <float **>malloc((negative + 1) * sizeof(float *))
    st.nlive = <float **>malloc((negative + 1) * sizeof(float *))
    st.nscore = <float *>malloc(2 * (negative + 1) * sizeof(float))
    # the window's input rows: at most 2 x window, and fewer than the job's ids (words; with
    # subwords their rows)
    st.crows = <float **>malloc(window_rows * sizeof(float *))
    st.clock = <float *>malloc(window_rows * sizeof(float))
    for k in range(m.n_outputs):
        rc_hot |= alloc_hot_copy(&st.hot[k], m.outputs[k].hot.n, m.d)
    if (st.work == NULL or st.neu1 == NULL or st.acc == NULL or st.kept == NULL or st.ends == NULL
            or st.xrows == NULL or st.xwords == NULL or st.wrows == NULL
            or st.yrows == NULL or st.W == NULL or rc_hot or st.negs == NULL
            or st.neg_counts == NULL or st.nrows == NULL or st.ahead == NULL or st.xlock == NULL
            or st.nlive == NULL or st.nscore == NULL or st.crows == NULL or st.clock == NULL
            or (cbow_run > 1 and (st.share_negs == NULL or st.share_n == NULL))
            or (shared_draw and st.share_negs == NULL)):
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
    if has_hot_rows(m):
        flush_hot(m, &st)
    kept[0] = total
    if m.compute_loss:  # the walks' terms (the job's tally)
        st.loss += loss_total(&st.tally)
    # design note G: a job that met a non-finite weight reports a NaN loss
    loss[0] = st.loss if isfinite(st.check) else NAN
    free_job_state(&st)
    return 0
