# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""``corpus_file`` mode: worker threads read, tokenise and train their own part of a file.

Design note
-----------
A. What runs without the GIL. For a byte range ``[start, end)`` of a plain local file, one
   call reads the file (positioned reads, ``reader/_pread.h``), cuts it into lines, splits each line into tokens, maps the
   tokens to word ids through a C hash table, groups whole sentences into jobs of about
   ``batch_words`` raw tokens and trains each job with the Trainer's C entry point
   (``Trainer.job``, ``hsw2v._kernels._inner.train_job_nogil``): no Python object is touched between
   the first byte and the last job. Counting the vocabulary (``scan_range_vocab``) is the same
   reader with counting instead of training. Python only opens the file, starts one thread per range and watches.
   The distributed tasks (``hsw2v.running.file_scan``) use the same reader for a shard's
   local ranges: ``scan_range_marks`` counts one and marks line starts where it can be cut
   into pieces, ``encode_range`` makes a piece's jobs (``carried_raw``: a job begun in the
   piece's previous range, so that jobs run on across ranges as over one stream).

B. What is shared. The vocabulary table (read-only), the model's weights (Hogwild, as in
   ``hsw2v._kernels._inner``), the count of schedule units handed out in this epoch (one atomic
   fetch-add per job: every job's learning rate comes from the progress of all threads) and
   the stop flag. Each thread writes its own row of the progress counters (relaxed atomic
   stores, read by the watching thread). Everything else (read buffer, token spans, job
   buffers) belongs to one call. The model is reached through a cimported
   ``hsw2v._kernels._inner.Trainer`` (``_inner.pxd``): its typed view ``m`` and job entry ``job``.

C. Which lines a range owns. A line belongs to the range where it starts: a reader for
   ``[start, end)`` begins at the first line starting at or after ``start`` (``start`` itself
   when the byte before it is a newline) and stops before the first line starting at or
   after ``end``. Ranges that tile the file therefore train every line exactly once.

D. Tokens, exactly as :class:`hsw2v.corpora.LineSentence` gives them. Lines end at ``\\n``
   (the file is read in binary, as ``LineSentence`` does). Each line must be valid UTF-8
   (checked as strictly as Python's decoder: Unicode 15, table 3-7; an error says where) and
   is split as ``str.split()`` splits: at the ASCII whitespace bytes ``\\t \\n \\v \\f \\r``,
   ``\\x1c``-``\\x1f`` and space, and at the Unicode whitespace characters U+0085, U+00A0,
   U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000. Lines without tokens
   are no sentence; a line of more than ``max_sentence_length`` tokens becomes consecutive
   sentences of that many tokens (``LineSentence``'s chunks: no token is ever dropped).
   Unknown tokens are dropped after counting as raw words, as in the iterable path.

E. Jobs, as ``hsw2v.running.epochs.iter_jobs`` makes them: whole sentences are added until the
   job holds at least ``batch_words`` raw tokens. The job's learning rates come from
   ``hsw2v._kernels._rates.schedule_alpha`` (the one schedule formula, compiled with strict flags;
   ``hsw2v.running.schedule.Schedule``, which ``FileTrainer`` takes whole, calls its twin) and its
   random stream from ``job_seed(seed, epoch, thread * 2**40 + job)``; with one worker the
   jobs, rates and seeds are those of the iterable path, so training is bit-identical to it.
   A job whose loss comes back non-finite (the kernel's divergence check, design note G of
   ``hsw2v._kernels._inner``) sets the stop flag, so every range stops after its current job,
   and its range's loss is NaN, which ``hsw2v.running.epochs.run_file_epoch`` turns into an error.

F. Later epochs. Unless ``cache_words`` is 0 (or too small), each range keeps the jobs it
   made in the first epoch as ids (4 bytes a token) and later epochs train those again
   (``replay_nogil``) instead of reading the file: the same jobs with the same job indices,
   so the same random streams as reading again.

G. Notation. ``V`` vocabulary size; ``raw`` tokens read (known or not); ``kept`` tokens left
   after subsampling (gensim's effective words); ``units`` what the schedule counts (raw
   words, or sentences when only ``total_examples`` is known).

H. Documents (Doc2Vec's ``corpus_file``, gensim's ``TaggedLineDocument``): each line is one
   document whose tag is its line number from 0. A range's reader numbers its lines from
   ``first_doc`` (``lines_before``: the lines that start before the range), leads each line's
   ids with its tag token ``-(line + 1)`` (the document kinds' job format, ``_inner``) and
   keeps the line whole, however long, and also when it has no token, so that the numbers,
   the jobs and, with one worker, the training are the iterable path's.

I. Read-ahead (``FileTrainer(read_ahead=True)``, for when a core is spare for each range). A
   range read from the file gets a second thread (``RangeReader``) that reads it into jobs
   one job ahead of the range's training thread, the two handing job buffers back and forth
   (``reader/_ahead.pxd``). The jobs, their order, indices, rates and random streams are
   those of design note E, so the weights are the same bits; only the reading overlaps the
   training. Replayed epochs (note F) read nothing and are unchanged.

The token -> id table uses open addressing with linear probing over a power-of-two table at
most half full, hashed with 64-bit FNV-1a (Fowler, Noll & Vo; ``offset basis
14695981039346656037``, ``prime 1099511628211``).

Each nogil routine has a Python-callable twin (``split_line``, ``lookup``, ``lookup_line``, ``read_range``,
``encode_range``; the schedule's is ``hsw2v._kernels._rates.linear_alpha``) that the tests compare
with ``LineSentence`` and ``key_to_index``.

Files. The nogil pieces are cimported inline modules, each with its own names: result codes
(``reader/_codes.pxd``), the line splitter (``reader/_utf8_split.pxd``), the counting table
(``reader/_token_table.pxd``), the vocabulary's read-only table (``reader/_lookup.pxd``: one
cache line a token, a line's tokens looked up in prefetched groups), the range reader (``reader/_lines.pxd``), one range's jobs
(``reader/_range.pxd``), their replay (``reader/_replay.pxd``) and the read-ahead hand-off
(``reader/_ahead.pxd``). This file keeps ``Vocab`` (the table's owner) and ``FileTrainer``;
it includes the Python entry points (the twins, the distributed tasks' range scans:
``_corpus_file_ranges.pxi``) and ``RangeReader`` (``_corpus_file_ahead.pxi``).
"""

from cpython.pythread cimport (
    NOWAIT_LOCK, PyThread_acquire_lock, PyThread_allocate_lock, PyThread_free_lock,
)
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

import os

import numpy as np

# O_BINARY exists on Windows only: no newline translation of what is read there.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)

# The text layer and one range, each in its own inline module (design notes C-F):
from hsw2v._kernels._inner cimport Trainer
from hsw2v._kernels.reader._ahead cimport Ahead, hand_batch, hand_end, train_ahead
from hsw2v._kernels.reader._codes cimport ERR_IO, ERR_MEMORY, ERR_UTF8, OK
from hsw2v._kernels.reader._lines cimport Failure, Reader, reader_init, reader_next
from hsw2v._kernels.reader._range cimport (
    HSW2V_LOAD64, HSW2V_STORE64, N_PROGRESS, Marks, Run, batch_init, scan_vocab_nogil,
    train_batch, train_range_nogil,
)
from hsw2v._kernels.reader._replay cimport (
    Recorder, record_batch, recorder_clear, replay_nogil, train_and_record_batch,
)
from hsw2v._kernels.reader._lookup cimport (
    Lookup, append_known, lookup, lookup_add, lookup_free, lookup_init,
)
from hsw2v._kernels.reader._token_table cimport Table, table_free, table_init
from hsw2v._kernels.reader._utf8_split cimport Spans, split_tokens
from hsw2v._kernels.train._model cimport INPUT_DOC_CONTEXT, INPUT_DOC_WINDOW


cdef class Vocab:
    """The token -> word id table of a vocabulary (``key_to_index``), for nogil lookups.

    Keys that are not ``str`` or cannot be encoded as UTF-8 can never be read from a file
    and are left out.

    >>> vocab = Vocab({"the": 0, "cat": 1})
    >>> vocab.lookup("cat".encode()), vocab.lookup(b"dog"), len(vocab)
    (1, -1, 2)
    """

    cdef Lookup t

    def __cinit__(self, dict key_to_index):
        if lookup_init(&self.t, len(key_to_index)) != OK:
            raise MemoryError("could not allocate the vocabulary table")
        cdef bytes raw
        for key, index in key_to_index.items():
            if type(key) is not str:
                continue
            if not 0 <= index < 2**31:
                raise ValueError(f"word id {index!r} of {key!r} is outside 0 to 2**31 - 1")
            try:
                raw = (<str>key).encode("utf-8")
            except UnicodeEncodeError:
                continue
            if lookup_add(&self.t, <const uint8_t *><char *>raw, len(raw), index) == ERR_MEMORY:
                raise MemoryError("could not allocate the vocabulary table")

    def __dealloc__(self):
        lookup_free(&self.t)

    def __len__(self):
        return self.t.n

    def lookup(self, bytes token):
        """Twin of the nogil lookup: the word id of a token's UTF-8 bytes, or -1."""
        return lookup(&self.t, <const uint8_t *><char *>token, len(token))

    def lookup_line(self, bytes line):
        """Twin of the nogil lookup of a line's tokens (``append_known``): the word ids of
        the known tokens of ``line.split()`` (UTF-8 bytes), in order.

        >>> Vocab({"the": 0, "cat": 1}).lookup_line(b"the dog the cat")
        [0, 0, 1]
        """
        cdef Spans sp
        cdef int64_t n_ids = 0, k
        cdef const uint8_t *p = <const uint8_t *><char *>line
        cdef int32_t *ids = NULL
        memset(&sp, 0, sizeof(Spans))
        try:
            split_or_raise(line, &sp)
            ids = <int32_t *>malloc(max(sp.n, 1) * sizeof(int32_t))
            if ids == NULL:
                raise MemoryError()
            append_known(&self.t, p, sp.start, sp.length, sp.n, ids, &n_ids)
            return [ids[k] for k in range(n_ids)]
        finally:
            free(ids)
            free(sp.start)
            free(sp.length)


cdef int split_or_raise(bytes line, Spans *sp) except -1:
    """The twins' split of one line into ``sp`` (the caller frees its arrays): a
    UnicodeDecodeError at the first invalid byte, a MemoryError when out of memory."""
    cdef int64_t bad = 0
    cdef int rc = split_tokens(<const uint8_t *><char *>line, len(line), sp, &bad)
    if rc == ERR_MEMORY:
        raise MemoryError()
    if rc == ERR_UTF8:
        raise UnicodeDecodeError("utf-8", line, bad, bad + 1, "invalid UTF-8")
    return 0


cdef raise_failure(const Failure *fail, str path):
    cdef bytes snippet
    if fail.code == ERR_MEMORY:
        raise MemoryError(f"{path}: out of memory while reading the corpus file")
    if fail.code == ERR_IO:
        raise OSError(fail.error, f"{path}: reading the corpus file failed: "
                      f"{os.strerror(fail.error)}", path)
    if fail.code == ERR_UTF8:
        with open(path, "rb") as f:
            f.seek(fail.offset)
            snippet = f.read(4)
        raise UnicodeDecodeError(
            "utf-8", snippet, 0, 1,
            f"invalid UTF-8 in {path} at byte {fail.offset} (in the line starting at byte "
            f"{fail.line_offset}); corpus files must be UTF-8 text")


include "_corpus_file_ranges.pxi"  # the Python entry points: twins, range scans


cdef class FileTrainer:
    """Trains ``corpus_file`` ranges for one Trainer and vocabulary; one instance serves all
    worker threads of a ``train()`` call (see the design note).

    ``begin_epoch`` resets the shared counters; each worker thread then calls
    ``train_range`` for its own byte range while another thread may read ``progress``
    and call ``stop``.
    """

    cdef Run run
    cdef int64_t units_done
    cdef int64_t stop_flag
    cdef Trainer trainer
    cdef object path
    cdef Vocab vocab
    cdef int64_t[:, ::1] counters
    cdef readonly object progress_array
    cdef int fd
    cdef Recorder *recordings  # one per range: its jobs as ids, kept for later epochs
    cdef int n_recordings
    cdef readonly bint read_ahead
    cdef object reader_pool

    def __cinit__(self, *args, **kwargs):
        self.fd = -1  # no file of its own until begin_epoch (an __init__ that raises closes none)

    def __init__(self, path, Trainer trainer, Vocab vocab, int workers, int64_t batch_words,
                 int64_t max_sentence_length, schedule, int64_t cache_words=0,
                 bint documents=False, bint read_ahead=False, reader_pool=None):
        """``schedule``: the run's :class:`hsw2v.running.schedule.Schedule`, taken whole (its rates,
        epochs, units and seed are copied into the nogil ``Run``). ``cache_words``: the ids of
        the ranges are kept after the first epoch, and later epochs train from them instead
        of reading the file again, while all ranges together hold at most this many ids (4
        bytes each); 0 reads the file every epoch. ``documents``: each line is a document of
        the trainer's document rows (design note H; the trainer must train a document
        kind). ``read_ahead``: a range read from the file (not replayed) is read by a thread
        of its own one job ahead of its training (design note I), the same jobs trained in
        the same order; for when there is a core to spare for each range. ``reader_pool``
        (with ``read_ahead``): the running layer's pool of threads
        (:class:`hsw2v.running.threads.Workers`), in which a range's reader thread runs and
        is waited for (never by ``Thread.join``, which an interrupt can fool)."""
        cdef int k
        cdef double start_alpha = schedule.start_alpha, end_alpha = schedule.end_alpha
        cdef int64_t epochs = schedule.epochs, total = schedule.total
        cdef bint by_words = schedule.by_words
        cdef uint64_t seed = schedule.seed
        if batch_words < 1 or max_sentence_length < 1 or total < 1 or epochs < 1:
            raise ValueError("batch_words, max_sentence_length, total and epochs must be >= 1")
        doc_kind = (trainer.m.input == INPUT_DOC_CONTEXT or trainer.m.input == INPUT_DOC_WINDOW)
        if read_ahead and reader_pool is None:
            raise ValueError("read_ahead=True needs reader_pool, the pool of threads that runs "
                             "and waits for the reader (hsw2v.running.threads.Workers)")
        if documents != doc_kind:
            raise ValueError("documents=True needs a Trainer of a document kind (docs=...), "
                             "and such a Trainer needs documents=True")
        self.recordings = <Recorder *>calloc(workers, sizeof(Recorder))
        if self.recordings == NULL:
            raise MemoryError()
        self.n_recordings = workers
        for k in range(workers):
            self.recordings[k].limit = cache_words // workers
            self.recordings[k].overflow = cache_words <= 0 or epochs == 1
        self.path = os.fspath(path)
        self.trainer = trainer
        self.vocab = vocab
        self.run.model = &self.trainer.m  # typed (_inner.pxd); the trainer is kept alive
        self.run.job = self.trainer.job
        self.run.sink = train_batch
        self.run.recorder = NULL
        self.run.ahead = NULL
        self.read_ahead = read_ahead
        self.reader_pool = reader_pool
        self.run.batch_words = batch_words
        self.run.max_sentence_length = max_sentence_length
        self.run.n_docs = trainer.m.n_docs if documents else -1
        self.run.first_doc = 0
        self.run.start_alpha = start_alpha
        self.run.end_alpha = end_alpha
        self.run.epochs = epochs
        self.run.total = total
        self.run.by_words = by_words
        self.run.seed = seed
        self.run.units_done = &self.units_done
        self.run.stop = &self.stop_flag
        self.progress_array = np.zeros((workers, N_PROGRESS), dtype=np.int64)
        self.counters = self.progress_array
        self.fd = -1

    def begin_epoch(self, int64_t epoch):
        """Reset the shared counters for epoch ``epoch`` (0-based) and open the file."""
        self.run.epoch = epoch
        self.units_done = 0
        self.stop_flag = 0
        self.progress_array[:] = 0
        if self.fd < 0:
            self.fd = os.open(self.path, _OPEN_FLAGS)

    def end_epoch(self):
        """Close the file."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def stop(self):
        """Ask every range to stop after its current job."""
        HSW2V_STORE64(&self.stop_flag, 1)

    def progress(self):
        """``(raw_words, kept_words, sentences, jobs)`` so far this epoch, summed over
        threads."""
        cdef Py_ssize_t k, j
        cdef int64_t total[N_PROGRESS]
        for j in range(N_PROGRESS):
            total[j] = 0
        for k in range(self.counters.shape[0]):
            for j in range(N_PROGRESS):
                total[j] += HSW2V_LOAD64(&self.counters[k, j])
        return tuple(total[j] for j in range(N_PROGRESS))

    def train_range(self, int thread, int64_t start, int64_t end, int64_t first_doc=0):
        """Train the lines starting in ``[start, end)`` as thread ``thread``; returns the
        range's summed loss (its counts are in ``progress``). Raises what reading raised.
        ``first_doc``: with documents, the line number of the range's first line
        (``lines_before``)."""
        cdef Reader r
        cdef Failure fail
        cdef double loss = 0.0
        cdef int rc
        cdef Run run = self.run
        cdef Recorder *rec
        if not 0 <= thread < self.counters.shape[0]:
            raise ValueError(f"thread must be in [0, {self.counters.shape[0]}), got {thread}")
        if self.fd < 0:
            raise RuntimeError("call begin_epoch() first")
        if first_doc < 0:
            raise ValueError(f"first_doc must be >= 0, got {first_doc}")
        run.progress = &self.counters[thread, 0]
        run.first_doc = first_doc
        rec = &self.recordings[thread]
        if rec.complete:
            with nogil:
                rc = replay_nogil(&run, rec, thread, &loss)
            if rc != OK:
                self.stop()
                raise MemoryError("out of memory while training")
            return loss
        if not rec.overflow:
            recorder_clear(rec)
            run.sink = train_and_record_batch
            run.recorder = rec
        if self.read_ahead:
            loss = self._train_ahead(&run, start, end, thread)
        else:
            fail.code = OK
            if reader_init(&r, self.fd, start, end) != OK:
                raise MemoryError("could not allocate a read buffer")
            try:
                with nogil:
                    rc = train_range_nogil(&run, &self.vocab.t, &r, thread, &loss, &fail)
                if rc != OK:
                    self.stop()
                    raise_failure(&fail, self.path)
            finally:
                free(r.buf)
        rec.complete = not rec.overflow and not HSW2V_LOAD64(&self.stop_flag)
        return loss

    cdef double _train_ahead(self, Run *run, int64_t start, int64_t end, int thread) except? -1:
        """``train_range``'s read-ahead form (design note I): a thread of its own reads the
        range into jobs while this one trains them."""
        cdef RangeReader reader = RangeReader()
        reader.setup(self, run, start, end, thread)
        cdef double loss = 0.0
        cdef int rc
        # The reader has handed over its end when train_ahead returns; leaving the block
        # waits until its thread is gone (a fooled ``join`` would leave it running, listed)
        with self.reader_pool(self.stop) as pool:
            pool.start(reader.read, name=f"hsw2v-read-{thread}")
            with nogil:
                rc = train_ahead(&reader.ahead, run, thread, &loss)
        if reader.fail.code != OK:
            self.stop()
            raise_failure(&reader.fail, self.path)
        if rc != OK:
            self.stop()
            raise MemoryError("out of memory while training")
        return loss

    def replaying(self):
        """Whether every range will train its next epoch from the ids it kept (no read)."""
        return all(self.recordings[k].complete for k in range(self.n_recordings))

    def cached_ids(self):
        """Ids kept for later epochs, summed over ranges."""
        return sum(self.recordings[k].n_ids for k in range(self.n_recordings)
                   if self.recordings[k].complete)

    def __dealloc__(self):
        cdef int k
        if self.fd >= 0:
            os.close(self.fd)
        if self.recordings != NULL:
            for k in range(self.n_recordings):
                recorder_clear(&self.recordings[k])
            free(self.recordings)


include "_corpus_file_ahead.pxi"  # RangeReader: the reading side of a read-ahead
