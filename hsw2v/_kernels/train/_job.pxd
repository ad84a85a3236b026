"""One job of training: the step of each centre word (``train_sentence``) and the job
loop (``run_job``), inline.

Design note: see ``_inner`` design notes A-H. ``ModelView`` (``train/_model.pxd``) is the
read-only view of the model every thread shares (its input kind and its list of outputs);
``JobState`` everything one job owns (``train/_state.pxd``). ``train_sentence`` is one step
per centre in fastText's shape (``Model::update``): the input rows of the window
(``train/_inputs.pxd``), then each output in turn walks its targets for the centre and
sends h's step back (the input kinds' steps, ``train/_steps.pxd``; negative sampling's
draws and sets, ``train/_draws.pxd``). ``run_job`` is one whole job: its buffers,
subsampling, the sentences, the flush of the private hot rows and the loss. A module that
trains composes its nogil job entry from ``run_job`` and its ``JobRoutines``, what the loop
calls out of line: the reference walks (``_inner.train_job_nogil``: ``hs_path`` /
``ns_path``; the benchmark-only ``_bench_walks``: plain loops or BLAS) and the flush of the
private hot rows (it runs every ``hot_sync`` centre words; inlined into the centre loop it
would cost that loop its registers). The rate inside a job is ``_rates.job_alpha``.
"""

from libc.math cimport NAN, isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport malloc
from libc.string cimport memset

from hsw2v._kernels._rates cimport job_alpha
from hsw2v._kernels.math._tree_view cimport path_code, path_point
from hsw2v._kernels.math._vecops cimport loss_init, loss_total, prefetch_row
from hsw2v._kernels.train._draws cimport (
    NS_BLOCK_MAX_D, draw_centre, ns_pair, ns_shared_centre, pairs_max, prefetch_negs,
)
from hsw2v._kernels.train._hot cimport alloc_hot_copy
from hsw2v._kernels.train._inputs cimport (
    cbow_hidden, cbow_inv, distinct_run, gather_doc_window, gather_window, prefetch_subword_heads,
)
from hsw2v._kernels.train._model cimport (
    INPUT_CONTEXT, INPUT_DOC_CONTEXT, INPUT_DOC_WINDOW, INPUT_SUBWORD_CENTRE,
    INPUT_SUBWORD_WINDOW, INPUT_WINDOW, ModelView, Output,
)
from hsw2v._kernels.train._state cimport (
    JobRoutines, JobState, flush_hot, free_job_state, has_hot_rows, max_tags, ns_negative,
    output_row, subsample, subsample_docs,
)
from hsw2v._kernels.train._steps cimport (
    cbow_hs, doc_contexts, hs_contexts, ns_contexts, prefetch_path, prefetch_tree_rows,
    subword_centre, subword_window_end,
)
from hsw2v._kernels.train._window cimport MAX_BLOCK


cdef inline void train_sentence(const ModelView *m, JobState *st, int64_t start,
                                int64_t end, int64_t total, float alpha0, float alpha1,
                                const int32_t *tags, int ntags, const JobRoutines *rt,
                                bint docs) noexcept nogil:
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
    output, from the rows the one before moved (gensim's order). The document kinds (Doc2Vec)
    add the document's rows (``tags``, ``ntags`` rows of ``m.docs``): PV-DBOW
    (``INPUT_DOC_CONTEXT``) as contexts of their own, after the window's (``doc_contexts``),
    PV-DM (``INPUT_DOC_WINDOW``) to the window's list (``gather_doc_window``). FastText's
    CBOW (``INPUT_SUBWORD_WINDOW``) steps out of line (``rt.span``:
    ``_steps.subword_window``), from the span's sums of the context words' rows.

    With negative sampling each centre's draws are made while the centre before it trains
    (``draw_centre``), and each pair prefetches the rows of the next pair's set. The rows a
    centre soon reads (the next centre's path; the word the next centre's widest window
    reaches, kept[i + window + 1], so that every word is asked for once, at least a centre
    before any reduced window reads it; FastText's next centre's rows; the next document's
    rows, a sentence ahead, in ``run_job``) are prefetched past the sentence's end, into
    the job's next sentence (kept[] runs on to the job's ``total``-th kept word), so that a
    sentence's first centres do not start cold (benchmarks/RESULTS.md,
    "prefetch across a sentence's end; Dask on a quieter host"). The
    "reference" walks are ``rt.walks`` (``_walks.RefWalks``); the private rows are
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
    cdef bint spans = m.input == INPUT_SUBWORD_WINDOW  # FastText's CBOW
    cdef int32_t *negs = NULL
    cdef int32_t *next_negs = NULL
    cdef int *counts = NULL
    cdef int *next_counts = NULL
    # PV-DBOW alone reads no word row of the window
    cdef bint window_words = not docs or m.input != INPUT_DOC_CONTEXT or m.doc_words
    if m.hs >= 0:
        tree_out = &m.outputs[m.hs]
    st.ntags = ntags
    st.span_start = st.span_live = st.span_entered = start
    for i in range(start, end):
        alpha = job_alpha(alpha0, alpha1, i, total)
        fresh = not drawn
        if drawn:  # drawn ahead, while centre i - 1 trained
            slot = 1 - slot
        else:
            draw_centre(m, st, start, end, i, slot, docs)
        lo = st.win_lo[slot]
        hi = st.win_hi[slot]
        drawn = False
        if negative:
            negs = st.negs + <int64_t>slot * st.pairs * stride
            counts = st.neg_counts + <int64_t>slot * st.pairs
            if i + 1 < end:
                draw_centre(m, st, start, end, i + 1, 1 - slot, docs)
                drawn = True
                next_negs = st.negs + <int64_t>(1 - slot) * st.pairs * stride
                next_counts = st.neg_counts + <int64_t>(1 - slot) * st.pairs
            if m.prefetch and fresh and hi - lo > 1:  # else prefetched with centre i - 1
                prefetch_negs(m, st, negs, counts[0])
        # the next centre's first set, when it has one (prefetched by this centre's last pair)
        next_count = 0
        if m.prefetch and drawn and (st.win_hi[1 - slot] - st.win_lo[1 - slot] > 1
                                       or (docs and ntags)):
            next_count = next_counts[0]
        centre = st.kept[i]
        if m.input == INPUT_SUBWORD_CENTRE:  # its targets are the contexts (their paths)
            # what is read soon, up to the job's last kept word: near a sentence's end the
            # words coming in are the next sentence's first (kept[] runs on across sentences)
            if m.prefetch and tree_out != NULL:  # the paths of the words coming in
                if i + m.params.window + 1 < total:
                    prefetch_path(m, tree_out, st.kept[i + m.params.window + 1])
                if i + m.params.window + 2 < total:  # the tree rows that prefetch reads next
                    prefetch_tree_rows(&tree_out.tree, st.kept[i + m.params.window + 2])
            if m.prefetch and i + 1 < end and hi < end:  # coming in: a centre soon
                prefetch_subword_heads(m, st.kept[hi])
            elif m.prefetch and i + m.params.window + 1 < total:  # the next sentence's, as soon
                prefetch_subword_heads(m, st.kept[i + m.params.window + 1])
            if hi - lo > 1:
                subword_centre(m, st, lo, hi, i, negs, counts, next_negs, next_count, alpha, rt)
        elif tree_out != NULL:  # the centre's path: its rows, and the next centre's prefetched
            code = path_code(&tree_out.tree, centre)
            point = path_point(&tree_out.tree, centre)
            length = tree_out.tree.lengths[centre]
            for k in range(length):
                st.yrows[k] = output_row(m, st, m.hs, point[k])
            if m.prefetch and i + 1 < total:  # (the next sentence's first after the last)
                prefetch_path(m, tree_out, st.kept[i + 1])
            if m.prefetch and i + 2 < total:  # the tree rows that prefetch reads next
                prefetch_tree_rows(&tree_out.tree, st.kept[i + 2])
        if m.prefetch and window_words and m.sub_ptr == NULL:  # (FastText's: above)
            if i + m.params.window + 1 < total:  # the word the next centre's widest window reaches
                prefetch_row(m.syn0 + <int64_t>st.kept[i + m.params.window + 1] * d, d)
        if m.input == INPUT_CONTEXT or (docs and m.input == INPUT_DOC_CONTEXT):
            # the contexts are the positions kept[lo:hi] but i (then the document's rows)
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
                        ns_contexts(m, st, r, e, i, <int>(r - lo - (i < r)), npairs + ntags,
                                    negs, counts, next_negs, next_count, alpha, rt)
                    r = e
            if docs and ntags:  # PV-DBOW: each document row predicts the centre
                doc_contexts(m, st, tags, ntags, code, length, npairs, npairs + ntags, negs,
                             counts, next_negs, next_count, alpha, rt)
        elif spans:  # FastText's CBOW, out of line
            rt.span(m, st, i, lo, hi, end, code, length, alpha, negs, counts, next_negs,
                    next_count, rt)
        elif m.input != INPUT_SUBWORD_CENTRE:
            if m.input == INPUT_WINDOW:
                n = gather_window(m, st, lo, hi, i)
            else:  # docs and INPUT_DOC_WINDOW
                n = gather_doc_window(m, st, lo, hi, i, tags, ntags)
            if n == 0:
                continue
            if m.hs >= 0:
                cbow_hidden(m, st, n)
                cbow_hs(m, st, n, code, length, alpha, rt)
            if m.ns >= 0:
                cbow_hidden(m, st, n)  # again after hs: gensim's order
                st.loss += ns_pair(m, st, st.neu1, negs, counts[0], alpha, &rt.walks,
                                   st.crows, st.clock, n,
                                   1.0 if m.params.cbow_mean else cbow_inv(n),
                                   d <= NS_BLOCK_MAX_D, next_negs, next_count)
        if hot:
            st.since += 1
            if st.since >= m.hot_sync:
                rt.flush(m, st)
                st.since = 0
    if spans:
        subword_window_end(m, st)


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
                        const JobRoutines *r, bint docs) noexcept nogil:
    """One job without the GIL (``_inner.Trainer.train_job``): ``ends[n_sentences - 1] ==
    n_ids``; ``r``: what the loop calls out of line (``JobRoutines``); ``docs``: the job
    names document rows (the document kinds, ``m.docs``), a constant of each job entry (GCC
    keeps one copy of ``run_job`` and ``train_sentence`` whatever it is: a branch on it, not
    a compiled-out kind; the larger steps that Word2Vec's loop must not carry are called out
    of line, ``JobRoutines``). Writes the kept
    (effective) tokens and the loss; returns 0, or -1 if its buffers could not be
    allocated."""
    cdef int64_t s, start, total, tag_start
    cdef int b, k
    cdef int most_tags = max_tags(ids, ends, n_sentences) if docs else 0
    cdef int rc_hot = 0
    cdef int negative = ns_negative(m)
    cdef int cbow_run = m.outputs[m.ns].cbow_run if m.ns >= 0 else 1
    cdef int cbow_stride = m.outputs[m.ns].cbow_stride if m.ns >= 0 else 1
    cdef bint shared_draw = (m.ns >= 0 and m.outputs[m.ns].shared
                             and m.input == INPUT_SUBWORD_CENTRE)
    cdef int max_length = m.outputs[m.hs].tree.max_length if m.hs >= 0 else 1
    cdef size_t window_rows = <size_t>min(2 * <int64_t>m.params.window, n_ids)
    cdef JobState st
    if m.sub_ptr != NULL:  # subwords: at most max_sub rows a word, and the job's rows in all
        window_rows = <size_t>min(<int64_t>window_rows * m.max_sub, job_rows(m, ids, n_ids))
    elif docs:  # the window's words and the document's rows
        window_rows = <size_t>min(2 * <int64_t>m.params.window + most_tags, n_ids)
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
    if docs and m.input == INPUT_DOC_CONTEXT:  # the window's contexts, then the document's
        st.pairs = max(1, min((2 * <int64_t>m.params.window if m.doc_words else 0) + most_tags,
                              n_ids))
    if docs:
        st.tags = <int32_t *>malloc(max(n_ids, 1) * sizeof(int32_t))
        st.tag_ends = <int64_t *>malloc(n_sentences * sizeof(int64_t))
    if m.input == INPUT_SUBWORD_WINDOW:  # FastText's CBOW: the span's sums and owed steps
        st.span_n = min(2 * <int64_t>m.params.window + 1, n_ids)
        st.span = <float *>malloc(<size_t>st.span_n * 2 * m.d * sizeof(float))
    if m.frozen:  # inference: the window's word rows are read through copies
        st.scratch = <float *>malloc(max(window_rows, 1) * m.d * sizeof(float))
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
            or (shared_draw and st.share_negs == NULL)
            or (docs and (st.tags == NULL or st.tag_ends == NULL))
            or (m.frozen and st.scratch == NULL)
            or (m.input == INPUT_SUBWORD_WINDOW and st.span == NULL)):
        free_job_state(&st)
        return -1
    for b in range(MAX_BLOCK):
        st.wrows[b] = st.W + b * m.d
    if docs:  # a document trains from its first word: its rows predict it
        total = st.n_kept = subsample_docs(m, &st, ids, ends, n_sentences)
        start = 0
        tag_start = 0
        for s in range(n_sentences):
            if m.prefetch and s + 1 < n_sentences:  # the next document's rows, a sentence ahead
                for k in range(<int>(st.tag_ends[s + 1] - st.tag_ends[s])):
                    prefetch_row(m.docs + <int64_t>st.tags[st.tag_ends[s] + k] * m.d, m.d)
            if st.ends[s] > start:
                train_sentence(m, &st, start, st.ends[s], total, alpha0, alpha1,
                               st.tags + tag_start, <int>(st.tag_ends[s] - tag_start), r, True)
            start = st.ends[s]
            tag_start = st.tag_ends[s]
    else:
        total = st.n_kept = subsample(m, &st, ids, ends, n_sentences)
        start = 0
        for s in range(n_sentences):
            if st.ends[s] - start > 1:
                train_sentence(m, &st, start, st.ends[s], total, alpha0, alpha1, NULL, 0, r,
                               False)
            start = st.ends[s]
    if has_hot_rows(m):
        flush_hot(m, &st)
    kept[0] = total
    if m.params.compute_loss:  # the walks' terms (the job's tally)
        st.loss += loss_total(&st.tally)
    # design note G: a job that met a non-finite weight reports a NaN loss
    loss[0] = st.loss if isfinite(st.check) else NAN
    free_job_state(&st)
    return 0
