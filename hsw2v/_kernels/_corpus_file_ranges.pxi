# The reader's Python entry points (design notes A, C, D): the twins of the nogil splitter and
# range reader, and the range scans and encodings of the distributed tasks
# (``hsw2v.running.file_scan``). Part of ``_corpus_file.pyx`` (included; one module).


def split_line(bytes line):
    """Twin of the nogil splitter: the tokens of one line (UTF-8 bytes, no newline) as
    ``bytes``, as ``line.decode("utf-8").split()`` would give them (encoded).

    >>> split_line("a\\u00a0b \\t c\\r".encode())
    [b'a', b'b', b'c']
    """
    cdef Spans sp
    cdef int64_t k
    memset(&sp, 0, sizeof(Spans))
    try:
        split_or_raise(line, &sp)
        return [line[sp.start[k]:sp.start[k] + sp.length[k]] for k in range(sp.n)]
    finally:
        free(sp.start)
        free(sp.length)


def read_range(str path, int64_t start, int64_t end):
    """Twin of the range reader: ``(line_offset, line_bytes)`` of every line of the file
    that starts in ``[start, end)`` (newline removed)."""
    cdef Reader r
    cdef const uint8_t *line
    cdef int64_t length, offset
    cdef int rc
    fd = os.open(path, _OPEN_FLAGS)
    try:
        if reader_init(&r, fd, start, end) != OK:
            raise MemoryError()
        out = []
        try:
            while True:
                rc = reader_next(&r, &line, &length, &offset)
                if rc == 1:
                    out.append((offset, (<const char *>line)[:length]))
                elif rc == 0:
                    return out
                elif rc == ERR_IO:
                    raise OSError(r.error, os.strerror(r.error), path)
                else:
                    raise MemoryError()
        finally:
            free(r.buf)
    finally:
        os.close(fd)


def encode_range(str path, int64_t start, int64_t end, Vocab vocab, int64_t batch_words,
                 int64_t max_sentence_length=10000, int64_t n_docs=-1, int64_t first_doc=0,
                 int64_t carried_raw=0):
    """Twin of the training reader: the jobs it would train for the lines starting in
    ``[start, end)``, as ``[(ids, ends, raw_words), ...]`` (``ids`` int32, ``ends`` int64:
    sentence ends within the job), made by the same nogil code. ``n_docs >= 0``: each line is
    a document led by its tag token (design note H), the first one numbered ``first_doc``.
    ``carried_raw``: the raw tokens of a job begun before the range, which the range's first
    job completes (its raw words include them; the caller joins the two)."""
    cdef Reader r
    cdef Failure fail
    cdef Recorder rec
    cdef Run run
    cdef int64_t stop_flag = 0, units = 0, j, i = 0, e = 0
    cdef int64_t progress[N_PROGRESS]
    cdef double loss = 0.0
    cdef int rc
    if batch_words < 1 or max_sentence_length < 1 or carried_raw < 0:
        raise ValueError("batch_words and max_sentence_length must be >= 1, carried_raw >= 0")
    memset(&rec, 0, sizeof(Recorder))
    rec.limit = 1 << 62
    memset(&run, 0, sizeof(Run))
    run.sink = record_batch
    run.recorder = &rec
    run.batch_words = batch_words
    run.max_sentence_length = max_sentence_length
    run.n_docs = n_docs
    run.first_doc = first_doc
    run.carried_raw = carried_raw
    run.stop = &stop_flag
    run.units_done = &units
    run.progress = progress
    fail.code = OK
    fd = os.open(path, _OPEN_FLAGS)
    try:
        if reader_init(&r, fd, start, end) != OK:
            raise MemoryError("could not allocate a read buffer")
        with nogil:
            rc = train_range_nogil(&run, &vocab.t, &r, 0, &loss, &fail)
        free(r.buf)
        if rc != OK:
            raise_failure(&fail, path)
        jobs = []
        for j in range(rec.n_jobs):
            n_ids, n_sentences, raw = rec.jobs[3 * j], rec.jobs[3 * j + 1], rec.jobs[3 * j + 2]
            ids = np.array(<int32_t[:n_ids]>(rec.ids + i) if n_ids else [], dtype=np.int32)
            ends = np.array(<int64_t[:n_sentences]>(rec.ends + e), dtype=np.int64)
            jobs.append((ids, ends, raw))
            i += n_ids
            e += n_sentences
        return jobs
    finally:
        free(rec.ids)
        free(rec.ends)
        free(rec.jobs)
        os.close(fd)


def byte_ranges(int64_t size, int parts):
    """``parts`` contiguous ``[start, end)`` ranges tiling ``[0, size)``.

    >>> byte_ranges(10, 3)
    [(0, 3), (3, 6), (6, 10)]
    """
    return [(size * k // parts, size * (k + 1) // parts) for k in range(parts)]


def scan_range_vocab(str path, int64_t start, int64_t end, int64_t max_sentence_length=10000,
                     int64_t[::1] stop=None):
    """Count the tokens of the lines starting in ``[start, end)``, without the GIL.

    Returns ``(counts, raw_words, sentences)``: ``counts`` maps each token (str) to its
    count in first-seen order; ``sentences`` counts ``LineSentence``'s sentences (non-empty
    lines, long ones in chunks of ``max_sentence_length`` tokens). ``stop``, an int64 array
    another thread may set to non-zero, ends the count early, between lines (the counts are
    then partial).
    """
    cdef int64_t *stop_at = NULL
    if stop is not None:
        if stop.shape[0] < 1:
            raise ValueError("stop must hold at least one int64 value")
        stop_at = &stop[0]
    return _scan(path, start, end, max_sentence_length, stop_at, 0, NULL)


def scan_range_marks(str path, int64_t start, int64_t end, int64_t max_sentence_length,
                     int64_t mark_every):
    """:func:`scan_range_vocab` with marks, without the GIL: returns ``(counts, raw_words,
    sentences, marks)``, ``marks`` a list of ``(line_offset, raw_words, sentences)`` before
    the first line that starts after every ``mark_every`` or more raw tokens (where the
    range can be cut: ``hsw2v._shards.count_and_mark_range`` gives the same marks)."""
    cdef Marks marks
    if mark_every < 1:
        raise ValueError(f"mark_every must be >= 1, got {mark_every}")
    memset(&marks, 0, sizeof(Marks))
    try:
        counts, raw, sentences = _scan(path, start, end, max_sentence_length, NULL,
                                       mark_every, &marks)
        found = [(marks.v[3 * k], marks.v[3 * k + 1], marks.v[3 * k + 2])
                 for k in range(marks.n)]
        return counts, raw, sentences, found
    finally:
        free(marks.v)


cdef _scan(str path, int64_t start, int64_t end, int64_t max_sentence_length,
           int64_t *stop_at, int64_t mark_every, Marks *marks):
    cdef Reader r
    cdef Table t
    cdef Failure fail
    cdef int64_t raw = 0, sentences = 0, e
    cdef int rc
    if max_sentence_length < 1:
        raise ValueError("max_sentence_length must be >= 1")
    fail.code = OK
    fd = os.open(path, _OPEN_FLAGS)
    try:
        if reader_init(&r, fd, start, end) != OK:
            raise MemoryError("could not allocate a read buffer")
        if table_init(&t, 1 << 16) != OK:
            free(r.buf)
            raise MemoryError("could not allocate the counting table")
        try:
            with nogil:
                rc = scan_vocab_nogil(&t, &r, max_sentence_length, &raw, &sentences, &fail,
                                       stop_at, mark_every, marks)
            if rc != OK:
                raise_failure(&fail, path)
            counts = {}
            for e in range(t.n):
                word = PyUnicode_DecodeUTF8(<const char *>(t.keys + t.offset[e]), t.length[e],
                                            NULL)
                counts[word] = t.value[e]
            return counts, raw, sentences
        finally:
            free(r.buf)
            table_free(&t)
    finally:
        os.close(fd)
