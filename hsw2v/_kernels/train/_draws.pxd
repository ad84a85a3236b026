"""Negative sampling in the training step: the draws of a centre, and one set's step.

Design note: see ``_inner`` design note D'. ``draw_centre`` draws what a centre needs from
the job's stream, in gensim's order (its reduced window, then its sets of negatives: per
context, per centre, or shared), one centre ahead of training; ``ns_pair`` is one (h,
target + negatives) set's step through the chosen walk, sending h's step to the input
rows; ``ns_shared_centre`` skip-gram's shared set as one block; ``set_after`` which set the
next pair prefetches. Nogil, on a job's ``JobState``.
"""

from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.string cimport memcpy

from hsw2v._kernels.math._vecops cimport hsw2v_axpy, prefetch_row
from hsw2v._kernels.train._hot cimport is_private
from hsw2v._kernels.train._inputs cimport cbow_spread
from hsw2v._kernels.train._model cimport (
    INPUT_CONTEXT, INPUT_DOC_CONTEXT, INPUT_DOC_WINDOW, INPUT_SUBWORD_CENTRE, ModelView, Output,
)
from hsw2v._kernels.train._ns_pair cimport ns_pair_block, rows_distinct
from hsw2v._kernels.train._ns_shared cimport ns_shared_block
from hsw2v._kernels.train._rng cimport draw_negatives, lend_negatives, next_random
from hsw2v._kernels.train._sigmoid cimport SIGMOID
from hsw2v._kernels.train._state cimport JobState, job_tally, output_row
from hsw2v._kernels.train._walks cimport WALK_FUSED, WALK_WINDOW, RefWalks, ns_path_fused


# CBOW takes the two-pass negative-sampling block (``train/_ns_pair.pxd``) up to this vector size
# and the word-by-word fused walk above it (the same bits either way): the block measured
# faster at d=100 and slower at d=300 (benchmarks/RESULTS.md, "The CBOW block by width"),
# and the widths between were not measured, so they keep the walk.
cdef enum:
    NS_BLOCK_MAX_D = 128


cdef inline int64_t pairs_max(const ModelView *m, int64_t n_ids) noexcept nogil:
    """The most (h, target) pairs of one centre word in a job of ``n_ids`` ids: its contexts
    (skip-gram and FastText's; fewer than the job's ids, however large the window), or 1
    (CBOW)."""
    cdef int64_t pairs = (2 * <int64_t>m.params.window
                          if m.input == INPUT_CONTEXT or m.input == INPUT_SUBWORD_CENTRE else 1)
    return pairs if pairs < n_ids else n_ids


cdef inline int draw_per_context(const Output *o, JobState *st, int64_t lo, int64_t hi,
                                 int64_t i, int32_t *negs, int *counts) noexcept nogil:
    """Skip-gram's sets for centre ``i``: one per context of kept[lo:hi] (but ``i``), each
    for the centre word, in order, into ``negs`` / ``counts``; returns their number."""
    cdef int64_t j
    cdef int p = 0, stride = o.negative + 1
    for j in range(lo, hi):
        if j != i:
            counts[p] = draw_negatives(&o.neg, st.kept[i], o.negative,
                                       negs + <int64_t>p * stride, &st.rng)
            p += 1
    return p


cdef inline const Output *slot_sets(const ModelView *m, JobState *st, int slot, int64_t lo,
                                    int64_t hi, int32_t **negs, int **counts) noexcept nogil:
    """Store a centre's window kept[lo:hi] in ``slot``; with negative sampling point ``negs``
    and ``counts`` at the slot's sets and return the output that draws them (NULL
    without)."""
    st.win_lo[slot] = lo
    st.win_hi[slot] = hi
    if m.ns < 0:
        return NULL
    negs[0] = st.negs + <int64_t>slot * st.pairs * (m.outputs[m.ns].negative + 1)
    counts[0] = st.neg_counts + <int64_t>slot * st.pairs
    return &m.outputs[m.ns]


cdef inline void draw_document(const ModelView *m, JobState *st, int64_t start, int64_t end,
                               int64_t i, int slot) noexcept nogil:
    """``draw_centre`` for the document kinds, in gensim's order: the reduced window (PV-DM,
    and PV-DBOW with ``doc_words``; PV-DBOW alone has none, the window is the centre), then
    with negative sampling PV-DBOW's sets (one per context of the window, then one per
    document row, each for the centre word) or PV-DM's one set."""
    cdef int64_t lo = i, hi = i + 1
    cdef int b = 0, p = 0, t, stride
    cdef int32_t *negs
    cdef int *counts
    cdef const Output *o
    if m.input == INPUT_DOC_WINDOW or m.doc_words:
        if m.params.shrink_windows:
            b = <int>(next_random(&st.rng) % <uint32_t>m.params.window)
        lo = max(i - m.params.window + b, start)
        hi = min(i + m.params.window + 1 - b, end)
    o = slot_sets(m, st, slot, lo, hi, &negs, &counts)
    if o == NULL:
        return
    stride = o.negative + 1
    if m.input == INPUT_DOC_CONTEXT:
        p = draw_per_context(o, st, lo, hi, i, negs, counts)
        for t in range(st.ntags):
            counts[p] = draw_negatives(&o.neg, st.kept[i], o.negative,
                                       negs + <int64_t>p * stride, &st.rng)
            p += 1
    elif hi - lo > 1 or st.ntags > 0:
        counts[0] = draw_negatives(&o.neg, st.kept[i], o.negative, negs, &st.rng)


cdef inline void draw_centre(const ModelView *m, JobState *st, int64_t start, int64_t end,
                             int64_t i, int slot, bint docs) noexcept nogil:
    """Draw what centre ``i`` of kept[start:end] needs from the job's stream, in the order
    gensim's loops would: its reduced window (into ``win_lo/win_hi[slot]``), then with
    negative sampling the negatives of each of its pairs (skip-gram: one per context, in
    order; FastText's skip-gram: one per context, the context its target; CBOW: one), into set ``slot`` of ``st.negs``; with shared negatives one set
    (skip-gram), or CBOW's set drawn or taken from the ring ``st.share_negs`` (``_inner.pyx``'s
    design note D'). The draws do not depend on the weights, so drawing a centre ahead of
    training the one before it changes no result; the kernels then prefetch the rows
    (``prefetch_negs``). The document kinds draw theirs in ``draw_document``."""
    if docs:
        draw_document(m, st, start, end, i, slot)
        return
    cdef int b = (<int>(next_random(&st.rng) % <uint32_t>m.params.window)
                  if m.params.shrink_windows else 0)
    cdef int64_t lo = i - m.params.window + b, hi = i + m.params.window + 1 - b, j
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
    o = slot_sets(m, st, slot, lo, hi, &negs, &counts)
    if o == NULL:
        return
    stride = o.negative + 1
    if m.input == INPUT_CONTEXT and o.shared:  # one set for all the contexts (train/_ns_shared.pxd)
        if hi - lo > 1:
            counts[0] = draw_negatives(&o.neg, st.kept[i], o.negative, negs, &st.rng)
    elif m.input == INPUT_CONTEXT:
        draw_per_context(o, st, lo, hi, i, negs, counts)
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
    without cbow_mean). With ``block`` (CBOW) the two-pass block (``train/_ns_pair.pxd``) when the
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
    if walk == WALK_FUSED or walk == WALK_WINDOW:  # its loss: on st.tally
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
        loss = walks.ns(m.d, h, st.work, st.nrows, count, alpha, m.params.compute_loss, &st.check)
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
    step of ``train/_ns_shared.pxd``."""
    cdef int k
    for k in range(count):
        st.nrows[k] = output_row(m, st, m.ns, negs[k])
    return ns_shared_block(m.d, npairs, st.crows, st.clock if m.lockf != NULL else NULL,
                           st.nrows, count, alpha, &SIGMOID, st.nscore, m.params.compute_loss,
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
