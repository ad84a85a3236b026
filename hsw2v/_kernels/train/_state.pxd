"""What one training job owns, and the rows of the outputs it trains.

Design note: see ``_inner`` design notes A-H. ``JobState`` is everything one job owns
(scratch vectors, the window's input rows, kept ids, the private hot rows of each output,
the random stream, the loss and the divergence check); ``JobRoutines`` what the job loop
calls out of line. The inline functions here are a job's access to the model it trains:
subsampling, the row of an output to train for one visit (``private_row``: a shared row, or
a job's private copy of a hot one), the flush of those copies, and the lock factor of an
input row. All run without the GIL on the job's own state; only the weights are shared.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from hsw2v._kernels.math._vecops cimport hsw2v_loss_acc
from hsw2v._kernels.train._hot cimport (
    HotCopy, free_hot_copy, private_slot, sync_hot,
)
from hsw2v._kernels.train._model cimport MAX_OUTPUTS, HotSet, ModelView
from hsw2v._kernels.train._ns_pair cimport ns_pair_block
from hsw2v._kernels.train._rng cimport next_random
from hsw2v._kernels.train._walks cimport RefWalks
from hsw2v._kernels.train._window cimport MAX_BLOCK


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
    float *span       # FastText's CBOW: the span's ring, span_n slots of 2 x d floats (each
                      # position's sum of input rows and owed steps; train/_inputs.pxd)
    int64_t span_n    # its slots: min(2 x window + 1, the job's ids)
    int64_t span_start  # the position of slot 0 (the sentence's start)
    int64_t span_live   # positions span_live..span_entered-1 are in the span
    int64_t span_entered
    int32_t *tags     # the document kinds: the job's document rows, each document's in order
    int64_t *tag_ends  # their ends per sentence (document), as ``ends`` for ``kept``
    int ntags         # the rows of the document being trained (draw_centre's extra pairs)
    float *scratch    # frozen word rows (inference): their copies, 2 x window x d floats
    int32_t *kept     # the job's ids that survived subsampling
    int64_t n_kept    # their count: how far a prefetch may look ahead (across sentences)
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
    hsw2v_loss_acc tally  # the walks' loss terms, reduced 64 at a time (math/_loss.h)
    double check      # the sum of every f the job computed: non-finite iff the job met a
                      # non-finite weight (its divergence check, design note G)


# What a job loop calls out of line, set by the module that composes it (``run_job``).
cdef struct JobRoutines
ctypedef void (*flush_fn)(const ModelView *m, JobState *st) noexcept nogil
ctypedef void (*span_fn)(const ModelView *m, JobState *st, int64_t i, int64_t lo, int64_t hi,
                         int64_t end, const uint8_t *code, int length, float alpha,
                         const int32_t *negs, const int *counts, const int32_t *next_negs,
                         int next_count, const JobRoutines *rt) noexcept nogil

cdef struct JobRoutines:
    RefWalks walks   # the "reference" variant's walks along a path and over negatives
    flush_fn flush   # flush_hot (every hot_sync centre words), out of the centre loop
    span_fn span     # FastText's CBOW step of one centre (``_steps.subword_window``),
                     # out of the centre loop, which Word2Vec's CBOW shares


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


cdef inline int64_t subsample_docs(const ModelView *m, JobState *st, const int32_t *ids,
                                   const int64_t *ends, int64_t n_sentences) noexcept nogil:
    """``subsample`` for the document kinds: each document's leading tag tokens (negative
    ids, ``-(row + 1)``) go to st.tags (ending at st.tag_ends[s]), never subsampled; its
    words are kept with their keep probability. Returns the number of words kept."""
    cdef int64_t s, i, start = 0, k = 0, t = 0
    cdef int32_t w
    for s in range(n_sentences):
        for i in range(start, ends[s]):
            w = ids[i]
            if w < 0:
                st.tags[t] = -(w + 1)
                t += 1
                continue
            if m.sample_int[w] < next_random(&st.rng):
                continue
            st.kept[k] = w
            k += 1
        st.ends[s] = k
        st.tag_ends[s] = t
        start = ends[s]
    return k


cdef inline int max_tags(const int32_t *ids, const int64_t *ends,
                         int64_t n_sentences) noexcept nogil:
    """The most tag tokens of one document of a job (``subsample_docs``)."""
    cdef int64_t s, i, start = 0
    cdef int most = 0, n
    for s in range(n_sentences):
        n = 0
        for i in range(start, ends[s]):
            if ids[i] < 0:
                n += 1
        if n > most:
            most = n
        start = ends[s]
    return most


cdef inline float doc_lock(const ModelView *m, int32_t row) noexcept nogil:
    """The factor of document row ``row``'s updates (gensim's ``dv.vectors_lockf``)."""
    if m.doc_lockf == NULL:
        return 1.0
    return m.doc_lockf[row]


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
    return &st.tally if m.params.compute_loss else NULL


cdef inline float lock_of(const ModelView *m, int32_t word) noexcept nogil:
    """The factor of ``word``'s syn0 updates (gensim's ``vectors_lockf``; design note H)."""
    if m.lockf == NULL:
        return 1.0
    return m.lockf[word % m.lockf_len]


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
    free(st.tags)
    free(st.tag_ends)
    free(st.scratch)
    free(st.span)
