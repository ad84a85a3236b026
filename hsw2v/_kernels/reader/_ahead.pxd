"""Read-ahead for one range (inline): a reader thread makes the range's next job while the
range's training thread trains the one before.

Design note: two job buffers change hands through a one-job slot guarded by two PyThread
locks used as binary semaphores (they may be released by another thread than the one that
took them, and taken and released without the GIL): ``full`` (a job, or the end, waits in the
slot) and ``free`` (the training thread is done with the slot's buffer). The reader runs
``reader/_range.pxd``'s ``train_range_nogil`` with ``hand_batch`` as its sink: it waits for
``free``, swaps its full batch with the slot's emptied buffer and signals ``full``; once its
range ends (or fails, or stops) it puts the end in the slot (``hand_end``). The training
thread (``train_ahead``) takes each job from the slot, gives it to the range's own sink
(``train_batch``, or ``train_and_record_batch`` in a first epoch that keeps its ids) with the
job index the reader gave it, and signals ``free``. So the jobs are trained in the order, and
with the job indices, rates and random streams, of the one-thread read: only when the file is
read changes, never the result. An error on the training side sets the stop flag, which the
reader polls between lines; the training thread still takes every job from the slot, untrained,
until the end, so neither thread can wait for good.
"""

from cpython.pythread cimport (
    PyThread_acquire_lock, PyThread_release_lock, PyThread_type_lock, WAIT_LOCK,
)
from libc.stdint cimport int64_t

from hsw2v._kernels.reader._codes cimport OK
from hsw2v._kernels.reader._range cimport HSW2V_STORE64, Batch, Run, batch_clear


cdef struct Ahead:
    Batch slot                # the job handed over, or the buffer handed back (emptied)
    int64_t job               # the slot's job index
    bint end                  # the reader is done: no job follows
    PyThread_type_lock full   # taken: nothing waits in the slot
    PyThread_type_lock free   # taken: the training thread still holds the slot's buffer


cdef inline int hand_batch(const Run *run, Batch *b, int64_t thread, int64_t job,
                           double *loss) noexcept nogil:
    """The reader's sink: hand the full batch ``b`` to the training thread, and go on
    filling the buffer it gives back."""
    cdef Ahead *ahead = <Ahead *>run.ahead
    cdef Batch spare
    PyThread_acquire_lock(ahead.free, WAIT_LOCK)
    spare = ahead.slot
    ahead.slot = b[0]
    ahead.job = job
    b[0] = spare  # emptied by train_ahead (or batch_init's, the first time)
    PyThread_release_lock(ahead.full)
    return OK


cdef inline void hand_end(Ahead *ahead) noexcept nogil:
    """The reader's last word: no job follows (after its range's end, an error or a stop)."""
    PyThread_acquire_lock(ahead.free, WAIT_LOCK)
    ahead.end = True
    PyThread_release_lock(ahead.full)


cdef inline int train_ahead(Ahead *ahead, const Run *run, int64_t thread,
                            double *loss) noexcept nogil:
    """The training thread's loop: every job the reader hands over, in turn, through
    ``run.sink``, until the end. Returns the first error of the sink (the stop flag is then
    set and the jobs that follow are dropped), else OK."""
    cdef int rc = OK
    while True:
        PyThread_acquire_lock(ahead.full, WAIT_LOCK)
        if ahead.end:
            return rc
        if rc == OK:
            rc = run.sink(run, &ahead.slot, thread, ahead.job, loss)
            if rc != OK:
                HSW2V_STORE64(run.stop, 1)
        batch_clear(&ahead.slot)  # handed back empty, also where the job was dropped
        PyThread_release_lock(ahead.free)
