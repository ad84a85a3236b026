"""Each input kind's step over the outputs, for one centre word.

Design note: see ``_inner`` design notes A-H. Skip-gram: each context row is h, walking the
centre's path (``hs_contexts``; in blocks, ``sg_window``) and its drawn set
(``ns_contexts``). CBOW: the window's h walks the centre's path (``cbow_hs``, over
``hidden_hs``). FastText's skip-gram: the centre's rows form one h that predicts each
context (``subword_centre``). Doc2Vec's PV-DBOW: each document row is an h that predicts the
centre (``doc_contexts``, over ``hs_row``). Every walk is one of ``train/_walks.pxd`` /
``train/_window.h``'s; these functions choose and feed them. Nogil, on a job's ``JobState``.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memset

from hsw2v._kernels.math._tree_view cimport TreeView, path_code, path_point
from hsw2v._kernels.math._vecops cimport HSW2V_PREFETCH, hsw2v_axpy, prefetch_row
from hsw2v._kernels.train._draws cimport NS_BLOCK_MAX_D, ns_pair, set_after
from hsw2v._kernels.train._hot cimport is_private
from hsw2v._kernels.train._inputs cimport (
    cbow_inv, cbow_spread, gather_subwords, prefetch_subword_heads, prefetch_subword_tails,
    prefetch_subwords, span_enter, span_leave, span_step, span_window, subword_tail_lines,
    take_step,
)
from hsw2v._kernels.train._model cimport INPUT_SUBWORD_CENTRE, ModelView, Output
from hsw2v._kernels.train._ns_pair cimport hsw2v_rows_sum
from hsw2v._kernels.train._sigmoid cimport SIGMOID
from hsw2v._kernels.train._state cimport (
    JobRoutines, JobState, doc_lock, job_tally, lock_of, ns_negative, output_row,
)
from hsw2v._kernels.train._walks cimport WALK_FUSED, WALK_WINDOW, hs_path_fused
from hsw2v._kernels.train._window cimport hsw2v_cbow_walk, hsw2v_sg_block_tally


cdef inline void sg_window(const ModelView *m, JobState *st, int64_t r, int64_t e, int64_t i,
                           const uint8_t *code, int length, float alpha) noexcept nogil:
    """Skip-gram's hierarchical softmax for centre ``i``: the contexts of kept[r:e] (but i)
    walk the centre's path (rows in st.yrows) in blocks of up to ``m.block`` distinct words
    (train/_window.h), with exactly word2vec.c's updates. The loss terms go to the job's tally when
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


cdef inline void prefetch_path(const ModelView *m, const Output *o,
                               int32_t word) noexcept nogil:
    """Prefetch the inner-node rows of ``word``'s path (the next centre's) in the
    hierarchical-softmax output ``o``, below the top levels, which stay cached anyway."""
    cdef const int32_t *point = path_point(&o.tree, word)
    cdef int j
    for j in range(4, o.tree.lengths[word]):
        if not is_private(&o.hot, point[j]):
            prefetch_row(o.matrix + <int64_t>point[j] * m.d, m.d)


cdef inline void prefetch_tree_rows(const TreeView *t, int32_t word) noexcept nogil:
    """Prefetch ``word``'s rows of the tree arrays (its length, codes and inner nodes), which
    ``prefetch_path`` reads for it a centre later: with one walk a centre (CBOW, PV-DBOW)
    their misses were the step's largest stall."""
    cdef const int32_t *point = path_point(t, word)
    HSW2V_PREFETCH(t.lengths + word)
    HSW2V_PREFETCH(path_code(t, word))
    HSW2V_PREFETCH(point)
    HSW2V_PREFETCH(point + 16)


cdef inline void hs_row(const ModelView *m, JobState *st, float *ctx, float lock, bint locked,
                        const uint8_t *code, int length, float alpha,
                        const JobRoutines *rt) noexcept nogil:
    """One input row ``ctx`` is h and predicts the centre's path (rows in st.yrows); its step
    goes back to it times ``lock`` (``locked``: lock factors are on): the fused walk, or the
    reference walk ``rt.walks.hs``. A lone row under the window walk (a PV-DBOW document
    row) takes the fused walk: a block of one measured 1.13x slower (0.89 s against 1.00 s
    for an epoch of gcide's PV-DBOW)."""
    cdef int walk = m.outputs[m.hs].walk
    if walk != WALK_FUSED and walk != WALK_WINDOW:
        st.loss += rt.walks.hs(ctx, st.work, st.yrows, code, length, alpha, m.d,
                               m.params.compute_loss, &st.check)
        hsw2v_axpy(m.d, lock, st.work, ctx)
    elif not locked:  # the last node's update of ctx fused in
        hs_path_fused(ctx, st.work, st.yrows, code, length, alpha, m.d, job_tally(m, st),
                      True, &st.check)
    else:
        hs_path_fused(ctx, st.work, st.yrows, code, length, alpha, m.d, job_tally(m, st),
                      False, &st.check)
        hsw2v_axpy(m.d, lock, st.work, ctx)


cdef inline void hs_contexts(const ModelView *m, JobState *st, int64_t r, int64_t e,
                             int64_t i, const uint8_t *code, int length, float alpha,
                             const JobRoutines *rt) noexcept nogil:
    """Skip-gram's hierarchical-softmax output: each context of kept[r:e] (but the centre
    ``i``) is an h, its syn0 row, that predicts the centre's path (rows in st.yrows), and its
    step goes back to its row: in blocks (the window walk, ``sg_window``), or context by
    context (the fused walk, or the reference walk ``rt.walks.hs``)."""
    cdef int64_t p
    if m.outputs[m.hs].walk == WALK_WINDOW:
        sg_window(m, st, r, e, i, code, length, alpha)
        return
    for p in range(r, e):
        if p != i:
            hs_row(m, st, m.syn0 + <int64_t>st.kept[p] * m.d, lock_of(m, st.kept[p]),
                   m.lockf != NULL, code, length, alpha, rt)


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
    if walk == WALK_WINDOW:
        hsw2v_cbow_walk(m.d, st.neu1, st.work, length, st.yrows, code, alpha, &SIGMOID,
                        job_tally(m, st), &st.check)
    elif walk != WALK_FUSED:
        st.loss += rt.walks.hs(st.neu1, st.work, st.yrows, code, length, alpha, m.d,
                               m.params.compute_loss, &st.check)
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
    that); no other walk touches these rows in between. The next centre's rows are
    prefetched while this one trains, across sentences up to the job's last kept word
    (``st.n_kept``)."""
    cdef int32_t centre = st.kept[i]
    cdef int n = gather_subwords(m, st, centre, 0)
    cdef int q = 0, npairs = <int>(hi - lo - 1), n_ahead
    cdef int stride = ns_negative(m) + 1, length, k
    cdef float coef = m.sub_coef[centre]
    cdef int64_t p
    cdef int32_t target
    cdef const int32_t *ahead
    cdef const Output *tree_out
    cdef int32_t ahead_word = -1
    cdef int64_t cursor = 0, per_pair = 0
    if m.prefetch and i + 1 < st.n_kept:  # the next centre's rows (the next sentence's first
        ahead_word = st.kept[i + 1]    # after a sentence's last), scattered over the matrix
        prefetch_subword_heads(m, ahead_word)
        per_pair = (subword_tail_lines(m, ahead_word) + npairs - 1) // npairs
    hsw2v_rows_sum(m.d, st.crows, n, cbow_inv(n), st.neu1)
    memset(st.acc, 0, m.d * sizeof(float))
    for p in range(lo, hi):
        if p == i:
            continue
        target = st.kept[p]
        if ahead_word >= 0:  # the rest of its lines, a share a context
            cursor = prefetch_subword_tails(m, ahead_word, cursor, per_pair)
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


cdef inline void subword_window(const ModelView *m, JobState *st, int64_t i, int64_t lo,
                                int64_t hi, int64_t end, const uint8_t *code, int length,
                                float alpha, const int32_t *negs, const int *counts,
                                const int32_t *next_negs, int next_count,
                                const JobRoutines *rt) noexcept nogil:
    """FastText's CBOW step for centre ``i`` of a sentence ending at ``end``
    (``INPUT_SUBWORD_WINDOW``): the positions out of reach leave the span and the farthest in
    reach comes in (``train/_inputs.pxd``), h is formed from the span's sums of the context
    words of kept[lo:hi] (their rows' mean, or sum), each output walks the centre's targets
    (hs: its path, st.yrows; ns: its set ``negs``) and h's step moves the sums (``span_step``),
    gensim's order: hs, then ns from the h it left. Called out of line (``JobRoutines.span``):
    inlined, it cost Word2Vec's CBOW loop, which it shares, its registers."""
    cdef int n, n_rows = 0, k
    cdef float *acc_row = st.acc
    cdef float acc_lock = 1.0
    cdef float scale
    while st.span_live < i - m.params.window:
        span_leave(m, st, st.span_live)
        st.span_live += 1
    while st.span_entered <= i + m.params.window and st.span_entered < end:
        span_enter(m, st, st.span_entered, st.span_live)
        st.span_entered += 1
    if m.prefetch and st.span_entered < end:  # the word coming in at the next centre
        prefetch_subwords(m, st.kept[st.span_entered])
    elif m.prefetch and i + m.params.window + 1 < st.n_kept:  # the next sentence's, as soon
        prefetch_subwords(m, st.kept[i + m.params.window + 1])
    n = span_window(m, st, lo, hi, i, &n_rows)
    if n == 0:
        return
    scale = cbow_inv(n_rows) if m.params.cbow_mean else 1.0
    if m.hs >= 0:
        hsw2v_rows_sum(m.d, st.crows, n, scale, st.neu1)
        hidden_hs(m, st, code, length, alpha, rt)
        if not m.params.cbow_mean:
            for k in range(m.d):
                st.work[k] *= cbow_inv(n_rows)
        span_step(m, st, lo, hi, i, st.span_live, st.span_entered, st.work)
    if m.ns >= 0:
        hsw2v_rows_sum(m.d, st.crows, n, scale, st.neu1)
        memset(st.acc, 0, m.d * sizeof(float))
        st.loss += ns_pair(m, st, st.neu1, negs, counts[0], alpha, &rt.walks, &acc_row,
                           &acc_lock, 1, 1.0 if m.params.cbow_mean else cbow_inv(n_rows),
                           m.d <= NS_BLOCK_MAX_D, next_negs, next_count)
        span_step(m, st, lo, hi, i, st.span_live, st.span_entered, st.acc)


cdef inline void subword_window_end(const ModelView *m, JobState *st) noexcept nogil:
    """FastText's CBOW after a sentence's last centre: every position still in the span
    leaves it (its rows take their owed steps)."""
    while st.span_live < st.span_entered:
        span_leave(m, st, st.span_live)
        st.span_live += 1


cdef inline void doc_contexts(const ModelView *m, JobState *st, const int32_t *tags, int ntags,
                              const uint8_t *code, int length, int q, int npairs,
                              const int32_t *negs, const int *counts, const int32_t *next_negs,
                              int next_count, float alpha, const JobRoutines *rt) noexcept nogil:
    """Doc2Vec's PV-DBOW step for one centre (``INPUT_DOC_CONTEXT``): each of the document's
    rows (``tags``, rows of ``m.docs``) is an h that predicts the centre word, as gensim's
    ``train_document_dbow``: hierarchical softmax along its path (st.yrows), negative
    sampling against its own drawn set (the ``q``-th of the centre's ``npairs``, after the
    window's), and the step goes back to the document's row. The walks are skip-gram's."""
    cdef int stride = ns_negative(m) + 1, n_ahead, t
    cdef const int32_t *ahead
    cdef float *ctx
    cdef float lock
    for t in range(ntags):
        ctx = m.docs + <int64_t>tags[t] * m.d
        lock = doc_lock(m, tags[t])
        if m.hs >= 0:
            hs_row(m, st, ctx, lock, m.doc_lockf != NULL, code, length, alpha, rt)
        if m.ns >= 0:
            n_ahead = set_after(m, q, npairs, negs, counts, stride, next_negs, next_count,
                                &ahead)
            st.loss += ns_pair(m, st, ctx, negs + <int64_t>q * stride, counts[q], alpha,
                               &rt.walks, &ctx, &lock, 1, 1.0, False, ahead, n_ahead)
        q += 1
