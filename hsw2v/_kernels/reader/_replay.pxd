"""Later epochs without reading the file again: a range's first-epoch jobs kept as ids and
trained again (inline).

Design note: the Recorder holds every job of one range (ids, sentence ends, and per job
n_ids, n_sentences, raw) up to ``limit`` ids; past that the recording is dropped
(``overflow``) and later epochs read the file (``_corpus_file`` design note F).
``replay_nogil`` trains the same jobs with the same job indices, so with the same random
streams as a second read would give. ``record_batch`` is the sink of the ``encode_range``
twin.
"""

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from hsw2v._kernels.reader._codes cimport ERR_MEMORY, OK
from hsw2v._kernels.reader._range cimport (
    HSW2V_LOAD64, Batch, Run, batch_clear, grow, train_batch,
)


cdef struct Recorder:
    int32_t *ids        # every job's ids, concatenated
    int64_t n_ids
    int64_t *ends       # every job's sentence ends (within its job), concatenated
    int64_t n_ends
    int64_t *jobs       # per job: n_ids, n_sentences, raw
    int64_t n_jobs
    int64_t cap_ids, cap_ends, cap_jobs
    int64_t limit       # most ids kept
    bint overflow       # the range has more: not kept
    bint complete       # the whole range is kept


cdef inline void recorder_clear(Recorder *rec) noexcept nogil:
    free(rec.ids)
    free(rec.ends)
    free(rec.jobs)
    rec.ids = NULL
    rec.ends = NULL
    rec.jobs = NULL
    rec.n_ids = rec.n_ends = rec.n_jobs = 0
    rec.cap_ids = rec.cap_ends = rec.cap_jobs = 0
    rec.complete = False


cdef inline int copy_batch(Recorder *rec, const Batch *b) noexcept nogil:
    """Append a batch to a recording; past ``rec.limit`` ids the recording is dropped."""
    if rec.overflow:
        return OK
    if rec.n_ids + b.n_ids > rec.limit:
        recorder_clear(rec)
        rec.overflow = True
        return OK
    if (grow(<void **>&rec.ids, &rec.cap_ids, rec.n_ids + b.n_ids, sizeof(int32_t))
            or grow(<void **>&rec.ends, &rec.cap_ends, rec.n_ends + b.n_sentences,
                    sizeof(int64_t))
            or grow(<void **>&rec.jobs, &rec.cap_jobs, 3 * (rec.n_jobs + 1), sizeof(int64_t))):
        return ERR_MEMORY
    memcpy(rec.ids + rec.n_ids, b.ids, b.n_ids * sizeof(int32_t))
    memcpy(rec.ends + rec.n_ends, b.ends, b.n_sentences * sizeof(int64_t))
    rec.jobs[3 * rec.n_jobs] = b.n_ids
    rec.jobs[3 * rec.n_jobs + 1] = b.n_sentences
    rec.jobs[3 * rec.n_jobs + 2] = b.raw
    rec.n_ids += b.n_ids
    rec.n_ends += b.n_sentences
    rec.n_jobs += 1
    return OK


cdef inline int record_batch(const Run *run, Batch *b, int64_t thread, int64_t job,
                      double *loss) noexcept nogil:
    """The twin's sink: keep the batch instead of training it."""
    if copy_batch(<Recorder *>run.recorder, b) != OK:
        return ERR_MEMORY
    batch_clear(b)
    return OK


cdef inline int train_and_record_batch(const Run *run, Batch *b, int64_t thread, int64_t job,
                                double *loss) noexcept nogil:
    """The first epoch's sink: keep the batch for later epochs, then train it."""
    if copy_batch(<Recorder *>run.recorder, b) != OK:
        return ERR_MEMORY
    return train_batch(run, b, thread, job, loss)


cdef inline int replay_nogil(const Run *run, const Recorder *rec, int64_t thread,
                      double *loss) noexcept nogil:
    """Train a range's recorded jobs again: the same jobs, job indices and so random streams
    as reading the range again would give."""
    cdef Batch b
    cdef int64_t j, i = 0, e = 0
    cdef int rc
    for j in range(rec.n_jobs):
        if HSW2V_LOAD64(run.stop):
            break
        b.ids = rec.ids + i
        b.ends = rec.ends + e
        b.n_ids = rec.jobs[3 * j]
        b.n_sentences = rec.jobs[3 * j + 1]
        b.raw = rec.jobs[3 * j + 2]
        i += b.n_ids
        e += b.n_sentences
        rc = train_batch(run, &b, thread, j, loss)
        if rc != OK:
            return rc
    return OK
