# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""In-place passes over a token recording (see :class:`hsw2v.vocab.TokenRecording`).

Design note
-----------
A. What runs without the GIL: both functions, whole, once their arguments are checked.
   They exist so that counting and mapping a recorded corpus make no temporary copy of it
   (NumPy's ``bincount`` and fancy indexing would each allocate one ``intp`` array per token,
   twice the recording's size, and the C allocator keeps much of that afterwards).

B. What is shared: nothing; each call owns its arrays for its duration. ``finalize_ids``
   writes ``ids`` in place: the write position never passes the read position, so every id
   is read before it is overwritten.

C. Notation. ``ids``: int32 token ids, provisional (0 .. n_keys-1) before finalize and final
   vocabulary ids after; ``to_final``: int32, provisional id -> final id or -1 (not kept);
   ``lengths``: int64 raw tokens per sentence; ``kept_lengths``: int64 kept tokens per
   sentence (output).

D. Making a recording (``JoinedRecorder``): the rows of a Spark partition travel as lines,
   each row's words joined by ``\x1f`` (a row with a word that is empty or holds ``\x1f``
   or ``\n`` travels as its list of words instead), and are counted and recorded without the GIL in
   the ``corpus_file`` reader's token table (``_token_table``), as
   :func:`hsw2v.vocab.scan_counts` counts and records lists of words. A line is split at
   every ``\x1f`` and nowhere else (``str.split("\x1f")``: a word may hold spaces, or be
   empty), so the words are exactly the row's. The text is encoded with ``surrogatepass``
   and the keys decoded the same way, so a lone surrogate reaches the vocabulary's check
   (:func:`hsw2v.vocab.check_keys`) as it would from lists. What is shared: nothing; one
   recorder belongs to one task.
"""

import numpy as np

cimport numpy as cnp
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free
from libc.string cimport memchr, memcpy, memset

from hsw2v._kernels.reader._codes cimport ERR_MEMORY, OK, resize
from hsw2v._kernels.reader._token_table cimport Table, table_count, table_free, table_init

cnp.import_array()

cdef enum:
    SEPARATOR = 0x1F  # ASCII's unit separator: joins a row's words


def count_ids(const int32_t[::1] ids, Py_ssize_t n_keys):
    """How often each id in ``0 .. n_keys-1`` occurs in ``ids`` (int64).

    >>> count_ids(np.array([0, 2, 2, 1, 2], np.int32), 4).tolist()
    [1, 1, 3, 0]
    """
    cdef cnp.ndarray[int64_t, ndim=1] counts = np.zeros(n_keys, np.int64)
    cdef int64_t[::1] tally = counts
    cdef Py_ssize_t i, n = ids.shape[0]
    cdef int32_t bad = 0
    with nogil:
        for i in range(n):
            if ids[i] < 0 or ids[i] >= n_keys:
                bad = 1
                break
            tally[ids[i]] += 1
    if bad:
        raise ValueError(f"id {ids[i]} at position {i} is outside 0..{n_keys - 1}")
    return counts


def finalize_ids(
    int32_t[::1] ids,
    const int32_t[::1] to_final,
    const int64_t[::1] lengths,
    int64_t[::1] kept_lengths,
):
    """Map ``ids`` through ``to_final`` in place, keeping only ids that map to ``>= 0``, packed
    at the front in their order; write each sentence's kept count to ``kept_lengths``; return
    the number of kept tokens.

    >>> ids = np.array([0, 1, 1, 2, 0], np.int32)
    >>> kept = np.zeros(2, np.int64)
    >>> finalize_ids(ids, np.array([1, -1, 0], np.int32), np.array([2, 3], np.int64), kept)
    3
    >>> ids[:3].tolist(), kept.tolist()
    ([1, 0, 1], [1, 2])
    """
    cdef Py_ssize_t n_keys = to_final.shape[0], n_sentences = lengths.shape[0]
    cdef Py_ssize_t s, read = 0, write = 0, n = ids.shape[0], stop, bad = -1
    cdef int64_t total = 0
    cdef int32_t word, final
    if kept_lengths.shape[0] != n_sentences:
        raise ValueError("kept_lengths must have one entry per sentence")
    for s in range(n_sentences):
        if lengths[s] < 0:
            raise ValueError(f"sentence {s} has a negative length")
        total += lengths[s]
    if total != n:
        raise ValueError(f"the sentence lengths add up to {total}, the recording has {n} ids")
    with nogil:
        for s in range(n_sentences):
            stop = read + lengths[s]
            kept_lengths[s] = 0
            while read < stop:
                word = ids[read]
                if word < 0 or word >= n_keys:
                    bad = read
                    break
                read += 1
                final = to_final[word]
                if final >= 0:
                    ids[write] = final
                    write += 1
                    kept_lengths[s] += 1
            if bad >= 0:
                break
    if bad >= 0:  # ids before ``write`` are already final: the recording is unusable
        raise ValueError(f"id {ids[bad]} at position {bad} is outside 0..{n_keys - 1}")
    return write



cdef struct Grown:
    void *data
    int64_t n         # items used
    int64_t capacity  # items allocated


cdef inline int grow_push(Grown *g, const void *item, size_t size) noexcept nogil:
    """Append one ``size``-byte item, doubling the allocation when full."""
    cdef int64_t capacity
    if g.n == g.capacity:
        capacity = max(2 * g.capacity, 1024)
        if resize(&g.data, capacity * size):
            return ERR_MEMORY
        g.capacity = capacity
    memcpy(<char *>g.data + g.n * size, item, size)
    g.n += 1
    return OK


cdef class JoinedRecorder:
    """Counts and records a Spark partition's rows (design note D), block by block, as
    :func:`hsw2v.vocab.scan_counts` counts and records lists of words: ``counts`` in
    first-seen order, provisional ``ids`` (int32) and sentence ``lengths`` (int64; a row
    without words is none, a row longer than ``max_sentence_length`` several) while at most
    ``record_tokens`` words were seen (then only counting goes on), and ``marks``
    ``(sentence, words before, sentences before)`` before the first sentence after each
    ``mark_every`` words.

    >>> r = JoinedRecorder(2, 100, 3)
    >>> r.add_lines("a\\x1fb\\n\\nb\\x1fc\\x1fa\\n".encode(), 3)
    >>> r.add_words(["x\\x1fy", "a"])
    >>> counts, ids, lengths, words, sentences, marks = r.result()
    >>> counts, ids.tolist(), lengths.tolist(), words, sentences, marks
    ({'a': 3, 'b': 2, 'c': 1, 'x\\x1fy': 1}, [0, 1, 1, 2, 0, 3, 0], [2, 2, 1, 2], 7, 4, [(2, 4, 2)])
    """

    cdef Table t
    cdef Grown ids, lengths, marks  # marks: triples of int64
    cdef int64_t max_sentence_length, record_tokens, mark_every
    cdef int64_t words, sentences, since_mark
    cdef bint recording

    def __cinit__(self, int64_t max_sentence_length, int64_t record_tokens, int64_t mark_every):
        if max_sentence_length < 1 or mark_every < 1:
            raise ValueError("max_sentence_length and mark_every must be >= 1")
        memset(&self.ids, 0, sizeof(Grown))
        memset(&self.lengths, 0, sizeof(Grown))
        memset(&self.marks, 0, sizeof(Grown))
        if table_init(&self.t, 1 << 16) != OK:
            raise MemoryError("could not allocate the counting table")
        self.max_sentence_length = max_sentence_length
        self.record_tokens = record_tokens
        self.mark_every = mark_every
        self.recording = record_tokens > 0

    def __dealloc__(self):
        table_free(&self.t)
        free(self.ids.data)
        free(self.lengths.data)
        free(self.marks.data)

    cdef int add_token(self, const uint8_t *p, int64_t n) noexcept nogil:
        cdef int64_t entry = table_count(&self.t, p, n)
        cdef int32_t e = <int32_t>entry  # its provisional id
        if entry < 0:
            return ERR_MEMORY
        if self.recording:
            return grow_push(&self.ids, &e, sizeof(int32_t))
        return OK

    cdef int end_row(self, int64_t n_words) noexcept nogil:
        """Cut a row of ``n_words`` (just added) into sentences; stop recording past the
        limit, as ``scan_counts`` does."""
        cdef int64_t chunk, mark[3]
        while n_words > 0:
            chunk = min(n_words, self.max_sentence_length)
            if self.since_mark >= self.mark_every:
                mark[0], mark[1], mark[2] = self.sentences, self.words, self.sentences
                if grow_push(&self.marks, mark, sizeof(mark)):
                    return ERR_MEMORY
                self.since_mark = 0
            self.words += chunk
            self.sentences += 1
            self.since_mark += chunk
            if self.recording and grow_push(&self.lengths, &chunk, sizeof(int64_t)):
                return ERR_MEMORY
            n_words -= chunk
        if self.recording and self.words > self.record_tokens:
            self.recording = False
            free(self.ids.data)
            free(self.lengths.data)
            memset(&self.ids, 0, sizeof(Grown))
            memset(&self.lengths, 0, sizeof(Grown))
        return OK

    def add_lines(self, const uint8_t[::1] text, Py_ssize_t n_rows):
        """Add ``n_rows`` rows given as lines, each ending at ``\\n`` and holding its row's
        words joined by ``\\x1f`` (a word holding either travels by :meth:`add_words`)."""
        cdef int64_t n = text.shape[0], at = 0, stop, rows = 0, start, k, words
        cdef const uint8_t *base = &text[0] if n else NULL
        cdef const uint8_t *newline
        cdef int rc = OK
        with nogil:
            while at < n and rc == OK:
                newline = <const uint8_t *>memchr(base + at, 10, n - at)
                stop = (newline - base) if newline != NULL else n
                rows += 1
                words = 0
                if stop > at:  # an empty line is a row without words
                    start = at
                    for k in range(at, stop + 1):
                        if k == stop or base[k] == SEPARATOR:
                            rc = self.add_token(base + start, k - start)
                            if rc != OK:
                                break
                            words += 1
                            start = k + 1
                if rc == OK:
                    rc = self.end_row(words)
                at = stop + 1
        if rc != OK:
            raise MemoryError("could not grow the partition's counts or recording")
        if rows != n_rows:
            raise ValueError(f"expected {n_rows} lines, the text holds {rows}")

    def add_words(self, list words):
        """Add one row given as its words (str)."""
        cdef bytes raw
        cdef int rc = OK
        for word in words:
            raw = (<str>word).encode("utf-8", "surrogatepass")
            rc = self.add_token(<const uint8_t *>(<char *>raw), len(raw))
            if rc != OK:
                break
        if rc == OK:
            rc = self.end_row(len(words))
        if rc != OK:
            raise MemoryError("could not grow the partition's counts or recording")

    def result(self):
        """``(counts, ids, lengths, words, sentences, marks)``; ``ids`` and ``lengths`` are
        None when more than ``record_tokens`` words were seen. Keys holding a lone surrogate
        (``surrogatepass``) come back as they went in."""
        cdef int64_t e
        counts = {}
        for e in range(self.t.n):
            word = PyUnicode_DecodeUTF8(
                <const char *>(self.t.keys + self.t.offset[e]), self.t.length[e], "surrogatepass"
            )
            counts[word] = self.t.value[e]
        ids = lengths = None
        if self.recording:
            ids = np.array(<int32_t[:self.ids.n]>self.ids.data if self.ids.n else [], np.int32)
            lengths = np.array(
                <int64_t[:self.lengths.n]>self.lengths.data if self.lengths.n else [], np.int64
            )
        triples = <int64_t *>self.marks.data
        marks = [
            (triples[3 * e], triples[3 * e + 1], triples[3 * e + 2]) for e in range(self.marks.n)
        ]
        return counts, ids, lengths, self.words, self.sentences, marks
