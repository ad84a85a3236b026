"""The input side of the training step: the input rows of a window, h, and h's step back.

Design note: see ``_inner`` design notes A-H. An input kind (``ModelView.input``) says which
rows of ``syn0`` form the hidden vector h: skip-gram's contexts are rows each (read in
place by the steps), CBOW gathers the window's rows (``gather_window``), FastText each
word's own row and n-gram rows (``gather_subwords``; CBOW through the span's sums,
``span_enter``), Doc2Vec's PV-DM the window's rows and the document's
(``gather_doc_window``). CBOW's h is their sum or mean (``cbow_hidden``) and its step goes to
each row (``cbow_spread``); FastText's skip-gram moves h as the mean of the stepped rows
(``take_step``). Nogil, on a job's ``JobState``.

FastText's CBOW (``INPUT_SUBWORD_WINDOW``) keeps, for each position of the span
[i - window, i + window] around the centre i, the sum of its word's input rows (S) and the
steps its rows are owed (G), in the ring ``st.span`` (one slot of 2 x d floats a position).
A position's rows are read once, when it comes into the span (``span_enter``), and written
once, when it leaves (``span_leave``), instead of at every centre whose window holds it
(each of a word's 10-40 n-gram rows, up to 2 x window times). Between the two the sums move
exactly as the rows would (``span_step``): a step g of the centre's window adds g to G of
each context position and n_w x sub_coef[w] x g (the change of the rows' sum) to S of every
position of the span whose word w is in the window, as many times as w is. A word's own
rows are therefore exact, whatever its repeats in the span; an n-gram row that two
different words of the span share sees the other word's steps when that position leaves
(at most 2 x window centres later), as a row another thread trains sees them anyway.
"""

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy, memset

from hsw2v._kernels.math._vecops cimport HSW2V_PREFETCH, hsw2v_axpy, prefetch_row
from hsw2v._kernels.train._model cimport ModelView
from hsw2v._kernels.train._ns_pair cimport hsw2v_rows_sum
from hsw2v._kernels.train._state cimport JobState, doc_lock, lock_of


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


cdef inline float *span_slot(const ModelView *m, const JobState *st, int64_t j) noexcept nogil:
    """Position j's slot of the span ring: S (d floats, the sum of its word's input rows),
    then G (d floats, the steps its rows are owed)."""
    return st.span + ((j - st.span_start) % st.span_n) * 2 * <int64_t>m.d


cdef inline float word_owed(const ModelView *m, int32_t w) noexcept nogil:
    """How the sum of word w's input rows moves when each takes a step g (times g): n_w x
    sub_coef[w], which counts a repeated row and the lock factors."""
    return <float>(m.sub_ptr[w + 1] - m.sub_ptr[w]) * m.sub_coef[w]


cdef inline void span_enter(const ModelView *m, JobState *st, int64_t j,
                            int64_t live) noexcept nogil:
    """Position j comes into the span (FastText's CBOW): S = the sum of its word's input
    rows, plus the steps still owed to those rows by the positions live..j-1 of the same
    word; G = 0. Uses st.crows / st.clock as scratch."""
    cdef int32_t w = st.kept[j]
    cdef float *s = span_slot(m, st, j)
    cdef int n = gather_subwords(m, st, w, 0)
    cdef int64_t p
    hsw2v_rows_sum(m.d, st.crows, n, 1.0, s)
    memset(s + m.d, 0, m.d * sizeof(float))
    for p in range(live, j):
        if st.kept[p] == w:
            hsw2v_axpy(m.d, word_owed(m, w), span_slot(m, st, p) + m.d, s)


cdef inline void span_leave(const ModelView *m, JobState *st, int64_t j) noexcept nogil:
    """Position j leaves the span: each of its word's input rows takes its steps G, times
    its lock factor (a repeated row once per listing, as each listing would)."""
    cdef int32_t w = st.kept[j]
    cdef const float *g = span_slot(m, st, j) + m.d
    cdef int64_t k
    cdef int32_t row
    for k in range(m.sub_ptr[w], m.sub_ptr[w + 1]):
        row = m.sub_rows[k]
        hsw2v_axpy(m.d, lock_of(m, row), g, m.syn0 + <int64_t>row * m.d)


cdef inline int span_window(const ModelView *m, JobState *st, int64_t lo, int64_t hi,
                            int64_t i, int *rows) noexcept nogil:
    """FastText CBOW's h as a list: the sums S of kept[lo:hi] but the centre ``i`` into
    st.crows; their words' input rows in all into ``rows``. Returns the list's length."""
    cdef int64_t j
    cdef int count = 0
    rows[0] = 0
    for j in range(lo, hi):
        if j != i:
            st.crows[count] = span_slot(m, st, j)
            rows[0] += <int>(m.sub_ptr[st.kept[j] + 1] - m.sub_ptr[st.kept[j]])
            count += 1
    return count


cdef inline void span_step(const ModelView *m, JobState *st, int64_t lo, int64_t hi, int64_t i,
                           int64_t live, int64_t entered, const float *g) noexcept nogil:
    """The window kept[lo:hi] (but ``i``) took the step ``g`` (every row of every context
    word += g times its lock factor): G of each context position += g, and S of each
    position of the span (live..entered-1) whose word is in the window moves as its rows
    did, by word_owed x g for each time the word is there."""
    cdef int64_t j, p
    cdef int times
    cdef int32_t w
    for j in range(lo, hi):
        if j != i:
            hsw2v_axpy(m.d, 1.0, g, span_slot(m, st, j) + m.d)
    for p in range(live, entered):
        w = st.kept[p]
        times = 0
        for j in range(lo, hi):
            if j != i and st.kept[j] == w:
                times += 1
        if times:
            hsw2v_axpy(m.d, times * word_owed(m, w), g, span_slot(m, st, p))


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
    divided by their count when cbow_mean, in one pass (``train/_ns_pair.h``'s
    ``hsw2v_rows_sum``: the bits of a sum row by row, then a scaling pass)."""
    hsw2v_rows_sum(m.d, st.crows, count, cbow_inv(count) if m.params.cbow_mean else 1.0, st.neu1)


cdef inline void cbow_spread(const ModelView *m, JobState *st, int count) noexcept nogil:
    """CBOW's error back to the inputs: every row of the window (st.crows) gets += st.work
    times its lock factor (st.work divided by the count first when not cbow_mean)."""
    cdef int k
    cdef float inv
    if not m.params.cbow_mean:
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
    """Prefetch every input row of ``word`` (FastText's CBOW: the word coming into the
    span): its n-gram rows are scattered over the whole input matrix."""
    cdef int64_t j
    for j in range(m.sub_ptr[word], m.sub_ptr[word + 1]):
        prefetch_row(m.syn0 + <int64_t>m.sub_rows[j] * m.d, m.d)


cdef inline void prefetch_subword_heads(const ModelView *m, int32_t word) noexcept nogil:
    """Prefetch the first cache line of every input row of ``word`` (FastText's skip-gram:
    the next centre, the word coming in). A word has dozens of rows; all their lines at once
    stalled the step on the prefetches themselves (the core's miss buffers full); the rest
    of each row follows its first line when the rows are summed (the hardware's stream)."""
    cdef int64_t j
    for j in range(m.sub_ptr[word], m.sub_ptr[word + 1]):
        HSW2V_PREFETCH(m.syn0 + <int64_t>m.sub_rows[j] * m.d)


cdef inline int64_t subword_tail_lines(const ModelView *m, int32_t word) noexcept nogil:
    """How many cache lines of ``word``'s input rows lie past their first lines (those
    ``prefetch_subword_heads`` asks for): ``prefetch_row``'s lines 2.. of each row."""
    return (m.sub_ptr[word + 1] - m.sub_ptr[word]) * ((m.d - 1) // 16)


cdef inline int64_t prefetch_subword_tails(const ModelView *m, int32_t word, int64_t cursor,
                                           int64_t count) noexcept nogil:
    """Prefetch ``count`` more of ``word``'s tail lines (``subword_tail_lines``) from
    ``cursor`` on, across the rows line by line (every row's second line, then every row's
    third, ...), the order in which the rows' sum reads them; returns the new cursor.
    FastText's skip-gram spreads the next centre's lines over the current centre's walks:
    asked for at once they filled the core's miss buffers and stalled the step; left to
    the hardware's stream, the rows' sum waits on them (its loads hold most of the step's
    own samples)."""
    cdef int64_t start = m.sub_ptr[word], n = m.sub_ptr[word + 1] - start
    cdef int64_t end = cursor + count, total = subword_tail_lines(m, word)
    cdef int64_t r, line
    if end > total:
        end = total
    if cursor >= end:
        return cursor
    line = 1 + cursor // n
    r = cursor % n
    while cursor < end:
        HSW2V_PREFETCH(m.syn0 + <int64_t>m.sub_rows[start + r] * m.d + 16 * line)
        cursor += 1
        r += 1
        if r == n:
            r = 0
            line += 1
    return cursor


cdef inline void take_step(const ModelView *m, JobState *st, float coef) noexcept nogil:
    """FastText's skip-gram: add h's step (st.work) to the centre's pending step (st.acc),
    and move h (st.neu1) as the mean of the centre's rows moves when they take it."""
    cdef int k
    for k in range(m.d):
        st.acc[k] += st.work[k]
        st.neu1[k] += coef * st.work[k]
