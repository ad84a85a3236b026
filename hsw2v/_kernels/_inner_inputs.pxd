"""The input side of the training step: the input rows of a window, h, and h's step back.

Design note: see ``_inner`` design notes A-H. An input kind (``ModelView.input``) says which
rows of ``syn0`` form the hidden vector h: skip-gram's contexts are rows each (read in
place by the steps), CBOW gathers the window's rows (``gather_window``), FastText each
word's own row and n-gram rows (``gather_subwords``, ``gather_subword_window``), Doc2Vec's
PV-DM the window's rows and the document's (``gather_doc_window``). CBOW's
h is their sum or mean (``cbow_hidden``) and its step goes to each row (``cbow_spread``);
FastText's skip-gram moves h as the mean of the stepped rows (``take_step``). Nogil, on a
job's ``JobState``.
"""

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy

from hsw2v._kernels._inner_loops cimport prefetch_row
from hsw2v._kernels._inner_model cimport ModelView
from hsw2v._kernels._inner_state cimport JobState, doc_lock, lock_of
from hsw2v._kernels._ns_pair cimport hsw2v_rows_sum
from hsw2v._kernels._vecops cimport hsw2v_axpy


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


cdef inline int gather_doc_window(const ModelView *m, JobState *st, int64_t lo, int64_t hi,
                                  int64_t i, const int32_t *tags, int ntags) noexcept nogil:
    """PV-DM's input rows (``INPUT_DOC_WINDOW``): the window's rows (``gather_window``), then
    the document's rows (``m.docs``), into st.crows / st.clock, as gensim sums them. In
    inference (``m.frozen``) the word rows are copies in st.scratch with a lock factor of 0:
    the step writes only the document's row. Returns their count."""
    cdef int count = gather_window(m, st, lo, hi, i), k
    if m.frozen:  # copies that take no step: h stays theirs for each output
        for k in range(count):
            memcpy(st.scratch + <int64_t>k * m.d, st.crows[k], m.d * sizeof(float))
            st.crows[k] = st.scratch + <int64_t>k * m.d
            st.clock[k] = 0.0
    for k in range(ntags):
        st.crows[count] = m.docs + <int64_t>tags[k] * m.d
        st.clock[count] = doc_lock(m, tags[k])
        count += 1
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
