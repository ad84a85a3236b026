# The arrays the training kernels take from Python, made and checked here: a job's word ids
# (``encode_sentences``), its random seed (``job_seed``), the negative draw's bucket index
# (``neg_index``) and the private hot-row sets (``_fill_hot_set``); and FastText's word
# vectors from its trained rows (``mean_rows``). Part of ``_inner.pyx`` (included; one module).

def bench_walks_missing(str walk):
    """The error message for a benchmark-only walk asked of a module that does not hold it."""
    return (f"the {walk!r} walk is benchmark-only and not in the shipped kernels: "
            "hsw2v._kernels._bench_walks.Trainer trains it, in a source checkout built with "
            "`HSW2V_BENCH_WALKS=1 python3 setup.py build_ext --inplace` (no wheel holds it); "
            "the shipped walks are 'window', 'fused' and 'reference'")


def subword_coef(const int64_t[::1] ptr, const int32_t[::1] rows, lockf, int max_sub):
    """FastText's ``ModelView.sub_coef``: how the mean of word w's input rows
    ``rows[ptr[w]:ptr[w + 1]]`` moves when each row takes a step, ``sum(m_r**2 * lock_r) / n_w``
    over its distinct rows r (a row listed m_r times takes the step m_r times and counts m_r
    times in the mean; ``lock_r`` its factor, ``lockf[r % len(lockf)]``, 1 when ``lockf`` is
    None), summed in float64 by ascending row (``np.unique``'s order), then float32.
    ``max_sub``: the most rows of a word. One pass without the GIL, a word's rows sorted in
    a scratch of ``max_sub`` ids."""
    cdef Py_ssize_t V = ptr.shape[0] - 1, w, a, b, n, n_lock = 0
    cdef int32_t r
    cdef double s, m
    cdef const float[::1] lock_view
    if lockf is not None:
        lock_view = lockf
        n_lock = lock_view.shape[0]
    coef = np.empty(max(V, 0), dtype=np.float32)
    cdef float[::1] out = coef
    cdef int32_t *ids = <int32_t *>malloc(max(max_sub, 1) * sizeof(int32_t))
    if ids == NULL:
        raise MemoryError("could not allocate the subword scratch")
    with nogil:
        for w in range(V):
            n = ptr[w + 1] - ptr[w]
            for a in range(n):  # insertion sort: a word has a few dozen rows at most
                r = rows[ptr[w] + a]
                b = a
                while b > 0 and ids[b - 1] > r:
                    ids[b] = ids[b - 1]
                    b -= 1
                ids[b] = r
            s = 0.0
            a = 0
            while a < n:
                b = a
                while b < n and ids[b] == ids[a]:
                    b += 1
                m = <double>(b - a)
                s += m * m * (<double>lock_view[ids[a] % n_lock] if n_lock else 1.0)
                a = b
            out[w] = <float>(s / <double>n)
    free(ids)
    return coef


# --------------------------------------------------------------------------------------------
# Corpus to ids (holds the GIL: dictionary lookups), and exact log-probabilities.
# --------------------------------------------------------------------------------------------

def encode_sentences(list sentences, dict key_to_index, Py_ssize_t n_words=-1):
    """Map a list of token lists to ``(ids int32, ends int64, raw_words)``; unknown tokens are
    dropped (as gensim does), sentences are kept whole however long.

    Nothing about the user's objects is trusted: a sentence that is not exactly a ``list``
    (a list subclass, a tuple, a lazy sequence) is read once into a list, whatever its
    ``len()`` says, and the write into the id buffer is bounded by its size even so (a
    token's ``__hash__`` may run code that changes a sentence). With ``n_words >= 0`` every
    id must lie in ``[0, n_words)`` (the rows the kernels will index)."""
    cdef Py_ssize_t total = 0, k = 0, s = 0, id_
    cdef object sentence, token, index
    cdef list read = []
    for sentence in sentences:
        if isinstance(sentence, (str, bytes)):
            raise TypeError(
                "a sentence is a string; each sentence must be a list of str tokens "
                "(split your text first, or use LineSentence)")
        if type(sentence) is not list:
            sentence = list(sentence)
        read.append(sentence)
        total += len(<list>sentence)
    ids = np.empty(total, dtype=np.int32)
    ends = np.empty(len(read), dtype=np.int64)
    cdef int32_t[::1] ids_view = ids
    cdef int64_t[::1] ends_view = ends
    for sentence in read:
        for token in <list>sentence:
            index = key_to_index.get(token)
            if index is not None:
                id_ = index
                if k >= total:
                    raise RuntimeError(
                        f"sentence #{s} changed while its tokens were read (it now holds more "
                        "tokens than it did): do not change the corpus while training reads it")
                if n_words >= 0 and not 0 <= id_ < n_words:
                    raise RuntimeError(
                        f"the vocabulary maps token {token!r} to id {id_}, outside the "
                        f"{n_words} rows of the weights: do not change wv.key_to_index while "
                        "training runs")
                ids_view[k] = <int32_t>id_
                k += 1
        ends_view[s] = k
        s += 1
    return ids[:k], ends, total


def encode_documents(documents, dict key_to_index, dict tag_index, Py_ssize_t n_docs,
                     Py_ssize_t n_words, Py_ssize_t batch_words, check, Py_ssize_t first):
    """Read documents from the iterator ``documents`` until they hold ``batch_words`` raw
    words (or it ends) and map them to one Doc2Vec job: ``(ids int32, ends int64,
    raw_words, n_documents)``, each document's ids led by its tag tokens ``-(row + 1)`` (an
    int tag is its row, another tag ``tag_index[tag]``; a tag outside the ``n_docs`` rows, or
    unknown, is skipped), unknown words dropped; ``n_documents`` is 0 once the iterator is
    done. ``check(document, index)`` returns ``(words, tags)`` or raises the error a bad
    document gets (numbered from ``first``); it is called for what is not plainly a
    document (a ``words`` list and a ``tags`` list)."""
    cdef list docs = [], tag_lists = []
    cdef Py_ssize_t raw = 0, total = 0, k = 0, s = 0, id_, row
    cdef object document, words, tags, tag, index
    for document in documents:
        try:
            words = document.words
            tags = document.tags
        except AttributeError:
            words, tags = check(document, first + len(docs))
        if type(words) is not list or type(tags) is not list:
            words, tags = check(document, first + len(docs))
            if type(words) is not list:
                words = list(words)
            if type(tags) is not list:
                tags = list(tags)
        docs.append(words)
        tag_lists.append(tags)
        raw += len(<list>words)
        total += len(<list>words) + len(<list>tags)
        if raw >= batch_words:
            break
    ids = np.empty(total, dtype=np.int32)
    ends = np.empty(len(docs), dtype=np.int64)
    cdef int32_t[::1] ids_view = ids
    cdef int64_t[::1] ends_view = ends
    for words in docs:
        for tag in <list>tag_lists[s]:
            if isinstance(tag, (int, np.integer)) and not isinstance(tag, bool):
                row = tag if 0 <= tag < n_docs else -1
            else:
                index = tag_index.get(tag)
                row = index if index is not None else -1
            if row >= 0 and k < total:
                ids_view[k] = <int32_t>(-row - 1)
                k += 1
        for token in <list>words:
            index = key_to_index.get(token)
            if index is not None:
                id_ = index
                if k >= total:
                    raise RuntimeError(
                        f"document #{first + s} changed while its words were read: do not "
                        "change the corpus while training reads it")
                if n_words >= 0 and not 0 <= id_ < n_words:
                    raise RuntimeError(
                        f"the vocabulary maps token {token!r} to id {id_}, outside the "
                        f"{n_words} rows of the weights: do not change wv.key_to_index while "
                        "training runs")
                ids_view[k] = <int32_t>id_
                k += 1
        ends_view[s] = k
        s += 1
    return ids[:k], ends, raw, len(docs)


# --------------------------------------------------------------------------------------------
# The random streams' seeds, the negative draw's bucket index and the private rows' tables
# (Python level, for the Trainer and the twins).
# --------------------------------------------------------------------------------------------

def job_seed(uint64_t seed, uint64_t epoch, uint64_t job):
    """The random stream's start for one job: a mix of (seed, epoch, job), never zero."""
    return job_seed_nogil(seed, epoch, job)


def neg_index(const uint32_t[::1] cum_table):
    """The bucket index of the negative draw over ``cum_table`` (non-decreasing, last > 0):
    ``(index, shift)`` with ``index[k]`` the first word whose entry is ``>= k << shift``
    (``bisect_left``), at most ``n - 1``. A uniform ``x`` below ``cum_table[-1]`` falls in
    bucket ``k = x >> shift``, and its word (the first entry ``>= x``) lies in ``index[k] ..
    index[k + 1]``: the bisection runs over those few entries instead of all V."""
    cdef int64_t n = cum_table.shape[0]
    if n < 1 or cum_table[n - 1] == 0:
        raise ValueError("cum_table must be non-empty with a positive last entry")
    cum = np.asarray(cum_table)
    total = int(cum[n - 1])
    shift = max(0, int(total - 1).bit_length() - NEG_INDEX_BITS)
    buckets = ((total - 1) >> shift) + 1
    bounds = np.arange(buckets + 1, dtype=np.uint64) << np.uint64(shift)
    index = np.minimum(np.searchsorted(cum.astype(np.uint64), bounds, side="left"), n - 1)
    return np.ascontiguousarray(index, dtype=np.int32), shift


cdef distinct_rows(rows, Py_ssize_t n_rows, str name, str what):
    """``rows`` as int32 ids of distinct rows of a matrix of ``n_rows`` rows (the private rows
    of syn1, ``hot_rows``, or of syn1neg, ``hot_words``), or a ValueError that names them."""
    ids = np.asarray(rows, dtype=np.int64).ravel()
    if len(np.unique(ids)) != len(ids) or (len(ids) and (ids.min() < 0 or ids.max() >= n_rows)):
        raise ValueError(f"{name} must be distinct {what} in 0..{n_rows - 1}")
    return ids.astype(np.int32)


cdef tuple _fill_hot_set(HotSet *hs, ids, Py_ssize_t n_rows):
    """Fill ``hs`` for the private rows ``ids`` of a matrix of ``n_rows`` rows: a plain range
    when they are the highest ids (the top of a tree) or the lowest (the most frequent words),
    else a slot table. Returns the arrays ``hs`` points into (keep them alive)."""
    cdef Py_ssize_t n = len(ids)
    cdef int32_t[::1] ids_view
    cdef int32_t[::1] slot_view
    lo = n_rows - n
    if n and np.array_equal(np.sort(ids), np.arange(n)):
        lo = 0
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


# --------------------------------------------------------------------------------------------
# Exact log-probabilities and the Python-callable twins of the nogil routines, for tests:
# tests/test_kernels.py and tests/test_kernel_twins.py compare them with NumPy references and
# with the reference steps of math/_path.pxd.
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# FastText's word vectors from the trained rows (nogil).
# --------------------------------------------------------------------------------------------

from hsw2v._kernels.math._vecops cimport prefetch_row


def mean_rows(const float[:, ::1] matrix, const int64_t[::1] ptr, const int32_t[::1] rows,
              float[:, ::1] out):
    """``out[w]`` = the mean of ``matrix[rows[ptr[w]:ptr[w + 1]]]`` for every word w:
    FastText's word vector, its own row and its n-gram rows averaged (Bojanowski et al. 2017;
    fastText's ``getWordVector``). The rows are added in their order in float32, starting
    from the first, and the sum divided by their count: gensim's ``adjust_vectors``, bit for
    bit. Every index is checked first; the loop runs without the GIL, each word's rows
    prefetched two words ahead."""
    cdef Py_ssize_t W = out.shape[0], d = out.shape[1], w, j, k
    cdef const float *row
    cdef float *o
    cdef float inv
    counts = np.diff(np.asarray(ptr))
    if len(ptr) != W + 1 or matrix.shape[1] != d:
        raise ValueError(f"mean_rows: ptr must hold {W + 1} offsets and matrix {d} columns, "
                         f"got {len(ptr)} and {matrix.shape[1]}")
    if W and (ptr[0] != 0 or ptr[W] != len(rows) or (counts < 1).any()):
        raise ValueError("mean_rows: ptr must rise from 0 to len(rows), a row or more a word")
    if len(rows) and (np.asarray(rows).min() < 0 or np.asarray(rows).max() >= matrix.shape[0]):
        raise ValueError("mean_rows: every row must be a row of matrix "
                         f"(0..{matrix.shape[0] - 1})")
    with nogil:
        for w in range(W):
            if w + 2 < W:
                for j in range(ptr[w + 2], ptr[w + 3]):
                    prefetch_row(&matrix[rows[j], 0], <int>d)
            o = &out[w, 0]
            row = &matrix[rows[ptr[w]], 0]
            for k in range(d):
                o[k] = row[k]
            for j in range(ptr[w] + 1, ptr[w + 1]):
                row = &matrix[rows[j], 0]
                for k in range(d):
                    o[k] = o[k] + row[k]
            inv = <float>(ptr[w + 1] - ptr[w])
            for k in range(d):
                o[k] = o[k] / inv
