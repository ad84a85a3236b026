# The reading side of a range's read-ahead (design note I): a RangeReader reads one range on a
# thread of its own and hands its jobs to the range's training thread (``reader/_ahead.pxd``).
# Part of ``_corpus_file.pyx`` (included; one module).

cdef class RangeReader:
    """The reading side of one range's read-ahead (design note I, ``reader/_ahead.pxd``):
    ``read()``, run on a thread of its own, reads the range into jobs and hands each to the
    range's training thread, which takes them from ``ahead``."""

    cdef Ahead ahead
    cdef Reader r
    cdef Failure fail
    cdef Run run
    cdef int thread
    cdef Vocab vocab  # kept alive while the thread reads
    cdef bint ready   # set up, and not read yet: read() runs once

    cdef setup(self, FileTrainer owner, const Run *run, int64_t start, int64_t end, int thread):
        """Ready to read ``[start, end)`` of ``owner``'s file as range ``thread`` (``run``:
        the range's, whose sink ``hand_batch`` replaces here)."""
        self.ahead.end = False
        self.ahead.full = PyThread_allocate_lock()
        self.ahead.free = PyThread_allocate_lock()
        if (batch_init(&self.ahead.slot, run) != OK
                or self.ahead.full == NULL or self.ahead.free == NULL):
            raise MemoryError("could not allocate the read-ahead buffers")
        PyThread_acquire_lock(self.ahead.full, NOWAIT_LOCK)  # nothing in the slot yet
        self.run = run[0]
        self.run.sink = hand_batch
        self.run.recorder = NULL
        self.run.ahead = &self.ahead
        self.thread = thread
        self.vocab = owner.vocab
        self.fail.code = OK
        if reader_init(&self.r, owner.fd, start, end) != OK:
            raise MemoryError("could not allocate a read buffer")
        self.ready = True

    def read(self):
        """Read the range, hand every job over, then the end (whatever happened)."""
        cdef double unused = 0.0
        if not self.ready:
            raise RuntimeError("a RangeReader reads once, after FileTrainer set it up")
        self.ready = False
        with nogil:
            train_range_nogil(&self.run, &self.vocab.t, &self.r, self.thread, &unused,
                              &self.fail)
            hand_end(&self.ahead)

    def __dealloc__(self):
        free(self.r.buf)
        free(self.ahead.slot.ids)
        free(self.ahead.slot.ends)
        if self.ahead.full != NULL:
            PyThread_free_lock(self.ahead.full)
        if self.ahead.free != NULL:
            PyThread_free_lock(self.ahead.free)
