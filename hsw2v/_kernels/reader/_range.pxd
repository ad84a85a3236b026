"""One range: read its lines, map tokens to ids, group whole sentences into jobs and train
each job (or count the tokens instead) (inline). With ``Run.n_docs >= 0`` each line is one
Doc2Vec document instead (``TaggedLineDocument``'s): its ids are led by its tag token
``-(line + 1)``, its line number from 0 (``first_doc`` is the range's first), and it is kept
whole, however long, or empty, as the iterable path keeps it.

Design note: a job is made as hsw2v.running.epochs.iter_jobs makes it (``_corpus_file`` design note
E): whole sentences until it holds at least batch_words raw tokens; its learning rates come
from ``_rates.schedule_alpha`` over the shared count of units handed out (atomic), its random
stream from (seed, epoch, thread * 2**40 + job). A full batch goes to ``run.sink``:
``train_batch``, or the recording sinks of ``reader/_replay.pxd``. ``train_batch`` trains
through the Trainer's typed view and job entry (``Run.model``, ``Run.job``). Buffers grow
with the input (``grow``), never truncate it.
"""

from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

from hsw2v._kernels._rates cimport schedule_alpha
from hsw2v._kernels.reader._codes cimport ERR_IO, ERR_MEMORY, OK, resize
from hsw2v._kernels.reader._lines cimport Failure, Reader, next_line_tokens
from hsw2v._kernels.reader._lookup cimport Lookup, append_known
from hsw2v._kernels.reader._token_table cimport Table, table_count
from hsw2v._kernels.reader._utf8_split cimport Spans
from hsw2v._kernels.train._model cimport ModelView, job_fn
from hsw2v._kernels.train._rng cimport job_seed_nogil


cdef extern from *:
    """
    #define HSW2V_LOAD64(p) __atomic_load_n((p), __ATOMIC_RELAXED)
    #define HSW2V_STORE64(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
    #define HSW2V_FETCH_ADD64(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
    """
    int64_t HSW2V_LOAD64(int64_t *p) noexcept nogil
    void HSW2V_STORE64(int64_t *p, int64_t v) noexcept nogil
    int64_t HSW2V_FETCH_ADD64(int64_t *p, int64_t v) noexcept nogil


# Progress counters, one row per thread.
cdef enum:
    P_RAW = 0
    P_KEPT = 1
    P_SENTENCES = 2
    P_JOBS = 3
    N_PROGRESS = 4


cdef struct Batch:
    int32_t *ids
    int64_t *ends
    int64_t n_ids
    int64_t n_sentences
    int64_t raw
    int64_t cap_ids
    int64_t cap_ends


cdef inline int grow(void **p, int64_t *capacity, int64_t need, size_t item) noexcept nogil:
    cdef int64_t c = capacity[0]
    if need <= c:
        return OK
    while c < need:
        c = max(2 * c, 1024)
    if resize(p, c * item):
        return ERR_MEMORY
    capacity[0] = c
    return OK


cdef struct Marks:
    # where a counted range can later be cut: per mark, the file offset of a line start and
    # the raw tokens and sentences of the range before it
    int64_t *v
    int64_t n             # marks (3 values each)
    int64_t cap           # int64 values allocated


cdef struct Run:
    # what a full batch is given to: train_batch, or record_batch (the twin)
    int (*sink)(const Run *run, Batch *b, int64_t thread, int64_t job,
                double *loss) noexcept nogil
    void *recorder
    void *ahead           # the read-ahead slot of hand_batch (reader/_ahead.pxd), or NULL
    # the model (a Trainer's view and job entry, _inner.pxd) and the schedule
    const ModelView *model
    job_fn job
    int64_t batch_words
    int64_t max_sentence_length
    int64_t n_docs        # documents: the rows of the document vectors; -1: sentences
    int64_t first_doc     # documents: the line number of the range's first line
    int64_t carried_raw   # raw tokens of a job begun before the range (its first job's
                          # threshold is reached that much sooner; the recorded raw holds them)
    double start_alpha
    double end_alpha
    int64_t epoch
    int64_t epochs
    int64_t total
    bint by_words
    uint64_t seed
    # shared between threads
    int64_t *units_done   # schedule units handed out this epoch (atomic)
    int64_t *stop         # non-zero: stop after the current job
    int64_t *progress     # this thread's row of the progress counters


cdef inline void batch_clear(Batch *b) noexcept nogil:
    """Empty a batch (its buffers kept): what every sink leaves of the batch it took."""
    b.n_ids = 0
    b.n_sentences = 0
    b.raw = 0


cdef inline int batch_init(Batch *b, const Run *run) noexcept nogil:
    """An empty batch with buffers for one of ``run``'s jobs (the caller frees ``b.ids`` and
    ``b.ends``, also when this fails). A job holds fewer than batch_words raw tokens before
    its last sentence, which has at most max_sentence_length; the buffers start smaller for
    huge batch_words, and grow."""
    batch_clear(b)
    b.cap_ids = min(run.batch_words + run.max_sentence_length, 1 << 20)
    b.cap_ends = b.cap_ids
    b.ids = <int32_t *>malloc(b.cap_ids * sizeof(int32_t))
    b.ends = <int64_t *>malloc(b.cap_ends * sizeof(int64_t))
    return ERR_MEMORY if b.ids == NULL or b.ends == NULL else OK


cdef inline int train_batch(const Run *run, Batch *b, int64_t thread, int64_t job,
                     double *loss) noexcept nogil:
    """Train one batch with its learning rates and random stream (design note E)."""
    cdef int64_t units = b.raw if run.by_words else b.n_sentences
    cdef int64_t done = HSW2V_FETCH_ADD64(run.units_done, units)
    cdef float alpha0 = <float>schedule_alpha(run.start_alpha, run.end_alpha, run.epoch,
                                              run.epochs, done, run.total)
    cdef float alpha1 = <float>schedule_alpha(run.start_alpha, run.end_alpha, run.epoch,
                                              run.epochs, done + units, run.total)
    cdef uint64_t seed = job_seed_nogil(run.seed, run.epoch, (<uint64_t>thread << 40) + job)
    cdef int64_t kept = 0
    cdef double job_loss = 0.0
    if run.job(run.model, b.ids, b.ends, b.n_ids, b.n_sentences, alpha0, alpha1, seed, &kept,
               &job_loss) != 0:
        return ERR_MEMORY
    loss[0] += job_loss
    if not isfinite(job_loss):  # the job met non-finite weights: every range stops
        HSW2V_STORE64(run.stop, 1)
    cdef int64_t *p = run.progress
    HSW2V_STORE64(&p[P_RAW], p[P_RAW] + b.raw)
    HSW2V_STORE64(&p[P_KEPT], p[P_KEPT] + kept)
    HSW2V_STORE64(&p[P_SENTENCES], p[P_SENTENCES] + b.n_sentences)
    HSW2V_STORE64(&p[P_JOBS], p[P_JOBS] + 1)
    batch_clear(b)
    return OK


cdef inline int train_range_nogil(const Run *run, const Lookup *vocab, Reader *r, int64_t thread,
                           double *loss, Failure *fail) noexcept nogil:
    """Train every line of the range; see the design note (D, E)."""
    cdef Spans sp
    cdef Batch b
    cdef const uint8_t *line
    cdef int64_t length, chunk, stop_at, job = 0, doc = run.first_doc
    cdef int rc = OK
    sp.start = NULL
    sp.length = NULL
    sp.n = 0
    sp.capacity = 0
    rc = batch_init(&b, run)
    b.raw = run.carried_raw
    while rc == OK and not HSW2V_LOAD64(run.stop):
        rc = next_line_tokens(r, &line, &length, &sp, fail)
        if rc != 1:
            break
        rc = OK
        if run.n_docs >= 0:  # the line is one document, led by its tag token
            if (grow(<void **>&b.ids, &b.cap_ids, b.n_ids + sp.n + 1, sizeof(int32_t))
                    or grow(<void **>&b.ends, &b.cap_ends, b.n_sentences + 1,
                            sizeof(int64_t))):
                rc = ERR_MEMORY
                break
            if doc < run.n_docs:  # a row the vectors hold (the file may have grown)
                b.ids[b.n_ids] = <int32_t>(-doc - 1)
                b.n_ids += 1
            doc += 1
            append_known(vocab, line, sp.start, sp.length, sp.n, b.ids, &b.n_ids)
            b.raw += sp.n
            b.ends[b.n_sentences] = b.n_ids
            b.n_sentences += 1
            if b.raw >= run.batch_words:
                rc = run.sink(run, &b, thread, job, loss)
                job += 1
            continue
        chunk = 0
        while chunk < sp.n and rc == OK:
            stop_at = min(chunk + run.max_sentence_length, sp.n)
            if (grow(<void **>&b.ids, &b.cap_ids, b.n_ids + stop_at - chunk, sizeof(int32_t))
                    or grow(<void **>&b.ends, &b.cap_ends, b.n_sentences + 1,
                            sizeof(int64_t))):
                rc = ERR_MEMORY
                break
            append_known(vocab, line, sp.start + chunk, sp.length + chunk, stop_at - chunk,
                         b.ids, &b.n_ids)
            b.raw += stop_at - chunk
            b.ends[b.n_sentences] = b.n_ids
            b.n_sentences += 1
            chunk = stop_at
            if b.raw >= run.batch_words:
                rc = run.sink(run, &b, thread, job, loss)
                job += 1
    if rc == OK and b.n_sentences and not HSW2V_LOAD64(run.stop):
        rc = run.sink(run, &b, thread, job, loss)
    if rc == ERR_IO:
        fail.error = r.error
    fail.code = rc
    free(sp.start)
    free(sp.length)
    free(b.ids)
    free(b.ends)
    return rc


cdef inline int scan_vocab_nogil(Table *counts, Reader *r, int64_t max_sentence_length,
                           int64_t *raw, int64_t *sentences, Failure *fail,
                           int64_t *stop, int64_t mark_every, Marks *marks) noexcept nogil:
    """Count every token of the range (first-seen order), its raw tokens and sentences;
    end early, between lines, once ``stop`` (if not NULL) holds a non-zero value. With
    ``marks``, mark the first line start after every ``mark_every`` or more raw tokens
    (``hsw2v._shards.count_and_mark_range``'s marks)."""
    cdef Spans sp
    cdef const uint8_t *line
    cdef int64_t length, k, since = 0
    cdef int rc = OK
    sp.start = NULL
    sp.length = NULL
    sp.n = 0
    sp.capacity = 0
    while rc == OK:
        if stop != NULL and HSW2V_LOAD64(stop):
            break
        rc = next_line_tokens(r, &line, &length, &sp, fail)
        if rc != 1:
            break
        rc = OK
        if marks != NULL and since >= mark_every:
            if grow(<void **>&marks.v, &marks.cap, 3 * (marks.n + 1), sizeof(int64_t)):
                rc = ERR_MEMORY
                break
            marks.v[3 * marks.n] = r.line_start
            marks.v[3 * marks.n + 1] = raw[0]
            marks.v[3 * marks.n + 2] = sentences[0]
            marks.n += 1
            since = 0
        raw[0] += sp.n
        since += sp.n
        sentences[0] += (sp.n + max_sentence_length - 1) // max_sentence_length
        for k in range(sp.n):
            if table_count(counts, line + sp.start[k], sp.length[k]) < 0:
                rc = ERR_MEMORY
                break
    if rc == ERR_IO:
        fail.error = r.error
    fail.code = rc
    free(sp.start)
    free(sp.length)
    return rc
