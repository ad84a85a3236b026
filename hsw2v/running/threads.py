"""Worker threads that an exception or Ctrl-C cannot leave running: the one place where hsw2v
starts, stops and waits for threads (iterable and ``corpus_file`` training, scoring, the
layer's fit, the vocabulary scan of a ``corpus_file``).

Why not ``Thread.join``. On CPython 3.11 a KeyboardInterrupt that lands inside
``join(timeout=...)`` while the thread runs can mark the thread stopped: the interrupted
``_wait_for_tstate_lock`` finds the thread's state lock held (by the running thread, not by
the waiter) and releases it. Every later ``join`` then returns at once and ``is_alive()``
says False while the thread keeps training. So ``join`` is never trusted to say that a worker
has ended; it is only used at the very end, to tidy up threads already known to be done.

The contract instead:

1. Each worker runs inside a wrapper whose ``finally`` marks it finished (a plain attribute,
   then the release of a lock the waiting thread sleeps on). That is the last thing the
   worker does: nothing after it touches the model. Neither step can block or be confused
   by the waiting thread.
2. ``stop`` (given by each mode) sets the flag its kernels poll between jobs, so a stopped
   worker ends within its current job.
3. The waiting thread waits for every finished mark. An exception or interrupt raised in it
   (in the ``with`` body or in the wait itself) stops the workers and the wait starts again;
   the first one is re-raised once every worker has finished. An exception raised in a
   worker stops the others and is raised in the waiting thread after all have finished.
4. Once stopping, a worker that has not marked itself finished is waited for while its
   thread is alive. One that does not exist, has not started or is no longer alive (e.g.
   its ``start()`` was cut short by an interrupt) is skipped: it can never run its target,
   because the wrapper checks the pool's stop mark first. (``is_alive`` can be fooled like
   ``join``, but only by a second interrupt landing within that one call.)

Finally each thread is joined for a moment, so that none is still listed by
``threading.enumerate()`` when the ``with`` block ends.

5. One exception: a thread started with ``abandon_after=SECONDS`` runs only user code that
   never writes the model (the producer that reads the user's corpus iterator and turns it
   into jobs). If the pool is stopping and such a thread has not finished SECONDS later, it
   is stuck in the user's code (a network stream, a queue whose producer died) and the
   wait stops waiting for it: Ctrl-C then returns promptly. Whatever it makes afterwards is
   dropped (the job queue refuses items once ``stop`` is set), and it ends, unlisted by no
   one, when the user's iterator returns; it is a daemon thread, so it never keeps the
   interpreter alive.

6. A Ctrl-C that CPython drops is not lost (:mod:`hsw2v.running.ctrl_c`). The pool holds
   the Ctrl-C latch from ``__enter__`` to the end of ``__exit__``: every ``wait`` first
   raises a Ctrl-C whose KeyboardInterrupt was dropped in a finalizer, and ``__exit__``
   frees the finished threads (whose weakref callbacks run Python code on the main thread,
   where such a drop happens) while it still holds the latch.

7. What the caller's thread touches while it waits holds no lock that Python code takes:
   an interrupt can land just after such code took its lock (``threading.Condition``'s
   ``__enter__`` is a Python function), leaving it taken for good. A ``queue.Queue`` the
   workers report to then blocks them forever, and a second ``Event.set()`` from the same
   thread waits on itself: Ctrl-C hung ``train()``. So the stop mark is a
   :class:`StopFlag` (a plain attribute) and the workers report through a
   ``queue.SimpleQueue`` (written in C).
"""

from __future__ import annotations

import _thread
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from hsw2v.running.ctrl_c import as_ctrl_c, ctrl_c_latch, delivered, raise_if_dropped

_POLL_SECONDS = 0.1  # how often a wait re-checks `stop` or workers whose start() was interrupted
_TIDY_SECONDS = 1.0  # how long the final joins wait for threads already marked finished
_ABANDON_SECONDS = 0.5  # how long a stopped pool waits for a producer stuck in user code


class _Worker:
    __slots__ = ("thread", "done", "finished", "abandon_after")

    def __init__(self, abandon_after: float | None = None) -> None:
        self.thread: threading.Thread | None = None
        self.done = _thread.allocate_lock()
        self.done.acquire()  # released by the worker as its last act
        self.finished = False
        self.abandon_after = abandon_after  # rule 5 of the module docstring


class Workers:
    """A pool of named worker threads; use it as a context manager::

        with Workers(stop_flag.set) as pool:
            pool.start(work, name="hsw2v-worker-0")
            while not pool.wait(0.1):
                ...  # report progress
        # here every worker has finished, whatever was raised

    ``stop`` is called (from any thread, possibly more than once) to ask every worker to end
    after its current job. Leaving the block waits for all workers (see the module docstring)
    and then raises, in this order: the exception that left the block, else an interrupt
    that landed while waiting, else the first exception raised in a worker.
    """

    def __init__(self, stop: Callable[[], None]) -> None:
        self._stop = stop
        self._workers: list[_Worker] = []
        self.stopping = False
        self._stopped_at: float | None = None
        self.error: BaseException | None = None
        self._latch = ctrl_c_latch()

    def start(
        self,
        target: Callable[..., object],
        *args: object,
        name: str,
        abandon_after: float | None = None,
    ) -> None:
        """Run ``target(*args)`` in a new daemon thread called ``name``. With
        ``abandon_after``, a ``target`` that never writes the model is no longer waited for
        that many seconds after the pool began stopping (rule 5 of the module docstring)."""
        worker = _Worker(abandon_after)
        worker.thread = threading.Thread(
            target=self._run, args=(worker, target, args), name=name, daemon=True
        )
        self._workers.append(worker)  # before start(): an interrupt in it leaves it known
        worker.thread.start()

    def stop(self) -> None:
        """Ask every worker to end after its current job."""
        if self._stopped_at is None:
            self._stopped_at = time.monotonic()
        self.stopping = True
        self._stop()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; True once every worker has finished. Raises
        KeyboardInterrupt for a Ctrl-C that CPython dropped (rule 6)."""
        raise_if_dropped()
        deadline = time.monotonic() + timeout
        for worker in self._workers:
            while not self._ended(worker):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                worker.done.acquire(timeout=min(remaining, _POLL_SECONDS))
        return True

    def __enter__(self) -> Workers:
        self._latch.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        delivered(exc)  # a Ctrl-C that arrived as this exception is not raised again
        replacement = as_ctrl_c(exc)  # a Ctrl-C that turned into ``exc`` on its way (rule 6)
        interrupted: BaseException | None = None
        must_stop = exc is not None
        while True:
            # Each pass is one try: an interrupt anywhere in it (even in stop()) leads to
            # another pass that stops the workers again and resumes the wait.
            try:
                try:
                    if must_stop:
                        self.stop()
                    while not self.wait(_POLL_SECONDS):
                        pass
                    break
                except BaseException as caught:  # noqa: BLE001 - re-raised below
                    must_stop = True
                    delivered(caught)
                    if interrupted is None:
                        interrupted = caught
            except BaseException as caught:  # noqa: BLE001 - an interrupt in the handler
                must_stop = True
                delivered(caught)
                if interrupted is None:
                    interrupted = caught
        tidy_interrupted = self._tidy()
        if interrupted is None:
            interrupted = tidy_interrupted
        released = self._release(exc if exc is not None else interrupted)
        if replacement is not None:
            raise replacement from exc
        if exc is not None:
            if isinstance(released, KeyboardInterrupt) and not isinstance(exc, KeyboardInterrupt):
                raise released from exc  # a Ctrl-C landing as the latch was released
            return False
        if interrupted is None:
            interrupted = released
        if interrupted is not None:
            raise interrupted
        if self.error is not None:
            raise self.error
        return False

    def _release(self, leaving: BaseException | None) -> BaseException | None:
        """Free the finished threads, then release the Ctrl-C latch (rule 6); returns a
        KeyboardInterrupt for a Ctrl-C dropped meanwhile or one landing now, else None.
        ``leaving`` is what the pool raises anyway (a dropped Ctrl-C is then forgotten)."""
        result = None
        try:
            for worker in self._workers:
                worker.thread = None  # the last reference to a finished thread, mostly
        except BaseException as caught:  # noqa: BLE001 - returned, raised by the caller
            result = caught
        for _ in range(5):  # again if an interrupt cut it short (it may be called again)
            try:
                self._latch.__exit__(None if leaving is None else type(leaving), leaving, None)
                break
            except BaseException as caught:  # noqa: BLE001 - returned, raised by the caller
                result = result or caught
        return result

    def _ended(self, worker: _Worker) -> bool:
        if worker.finished:
            return True
        if not self.stopping:
            return False
        if self._abandoned(worker):
            return True
        # Once the pool is stopping, a thread that has not entered the wrapper never runs its
        # target (rule 4): one without an ident, or not (or not yet) alive, e.g. one whose
        # start() was cut short so that it never reached, or is stuck before, its run().
        # A thread inside its target holds its state lock and is alive.
        thread = worker.thread
        return thread.ident is None or not thread.is_alive()

    def _abandoned(self, worker: _Worker) -> bool:
        """A thread of user code only, stuck there since the pool began stopping (rule 5)."""
        return (
            worker.abandon_after is not None
            and not worker.finished
            and self._stopped_at is not None
            and time.monotonic() - self._stopped_at >= worker.abandon_after
        )

    def _run(self, worker: _Worker, target: Callable[..., object], args: tuple) -> None:
        try:
            if not self.stopping:
                target(*args)
        except BaseException as exc:  # noqa: BLE001 - raised in the waiting thread
            if self.error is None:
                self.error = exc
            self.stop()
        finally:
            worker.finished = True
            worker.done.release()

    def _tidy(self) -> BaseException | None:
        """Wait a moment for every thread, already done with its work, to be gone from
        ``threading.enumerate()``; returns an interrupt that landed meanwhile. ``join`` is
        tried first (it wakes at once); a join fooled by an interrupt returns early, so the
        thread list is what decides."""
        interrupted = None
        for worker in self._workers:
            if self._abandoned(worker):
                continue
            thread = worker.thread
            deadline = time.monotonic() + _TIDY_SECONDS
            while time.monotonic() < deadline:
                try:
                    try:
                        thread.join(max(0.0, deadline - time.monotonic()))
                    except RuntimeError:  # its start() was cut short: not marked started yet
                        pass
                    if thread not in threading.enumerate():
                        break
                    time.sleep(0.001)
                except BaseException as caught:  # noqa: BLE001 - returned, raised by the caller
                    if interrupted is None:
                        interrupted = caught
        return interrupted


class StopFlag:
    """The stop mark of a pool's threads: ``set()`` and ``is_set()`` as ``threading.Event``
    has them, without its lock (rule 7 of the module docstring).

    >>> stop = StopFlag(); stop.set(); stop.is_set()
    True
    """

    __slots__ = ("_set",)

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


def usable_cpus() -> int:
    """The processors this process may run on (its affinity where the system says it, as a
    container's CPU set limits it), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def put_unless_stopped(jobs: queue.Queue, item: object, stop: StopFlag | threading.Event) -> bool:
    """Put `item` on the bounded queue `jobs`, waiting for room while `stop` is not set.

    The feeding side of every pool (training, scoring): a producer never blocks for good on a
    queue whose workers have stopped. Returns False, with `item` not queued, once `stop` is set.

    Examples
    --------
    >>> jobs, stop = queue.Queue(maxsize=1), threading.Event()
    >>> put_unless_stopped(jobs, 1, stop), jobs.get_nowait()
    (True, 1)
    >>> stop.set(); put_unless_stopped(jobs, 2, stop), jobs.empty()
    (False, True)
    """
    while not stop.is_set():
        try:
            jobs.put(item, timeout=_POLL_SECONDS)
            return True
        except queue.Full:
            continue
    return False


def feed(
    jobs: queue.Queue, items: Iterable, stop: StopFlag | threading.Event, workers: int
) -> None:
    """Put every item of `items` on the bounded queue `jobs`, then one ``None`` per worker.

    The producer thread of every pool (training, scoring) runs this over a generator of its
    jobs: it ends early once `stop` is set; an exception from `items` sets `stop` before the
    sentinels (the workers then drop the queued jobs) and goes on to the pool, which raises it
    in the caller's thread.

    Examples
    --------
    >>> jobs, stop = queue.Queue(maxsize=4), StopFlag()
    >>> feed(jobs, iter([1, 2]), stop, workers=2)
    >>> [jobs.get_nowait() for _ in range(4)]
    [1, 2, None, None]
    """
    try:
        for item in items:
            if not put_unless_stopped(jobs, item, stop):
                break
    except BaseException:
        stop.set()  # before the sentinels below: the workers drop the queued jobs
        raise
    finally:
        for _ in range(workers):
            if not put_unless_stopped(jobs, None, stop):
                break


def items_until_stopped(jobs: queue.Queue, stop: StopFlag | threading.Event) -> Iterator:
    """The items of `jobs` up to a ``None`` sentinel, ending early once `stop` is set.

    The working side of every pool (training, scoring): a worker waits for jobs while
    re-checking `stop`, so a stopped pool ends within one poll.

    Examples
    --------
    >>> jobs, stop = queue.Queue(), threading.Event()
    >>> for item in (1, 2, None, 3):
    ...     jobs.put(item)
    >>> list(items_until_stopped(jobs, stop))
    [1, 2]
    >>> stop.set(); list(items_until_stopped(jobs, stop))
    []
    """
    while not stop.is_set():
        try:
            item = jobs.get(timeout=_POLL_SECONDS)
        except queue.Empty:
            continue
        if item is None:
            return
        yield item


def run_jobs(
    items: Iterable,
    do_job: Callable[[object], object],
    workers: int,
    on_result: Callable[[object], None],
    stop: StopFlag,
    *,
    queue_size: int,
    names: tuple[str, str],
) -> None:
    """Run ``do_job(item)`` for every item of ``items`` on ``workers`` threads fed by one
    producer thread, and give each job's result (never None) to ``on_result`` in the
    caller's thread, which also gets None each time a worker ends or a poll brings nothing
    (so that it can report progress on time). The pipeline of every pool that runs jobs
    (an epoch of training, scoring): ``names`` are the producer's thread name and the
    workers' prefix.

    ``stop`` (set by the pool on any error or interrupt) ends the producer and the workers;
    returning waits for them all, and raises what stopped them (the module docstring). The
    producer runs the user's iterator, which may block for good: once the pool stops it is
    waited for at most ``_ABANDON_SECONDS`` (rule 5). The caller's thread waits on a
    ``queue.SimpleQueue`` and ``stop`` is a :class:`StopFlag` (rule 7).

    Examples
    --------
    >>> results = []
    >>> run_jobs(range(5), lambda x: x * x, 2, results.append, StopFlag(), queue_size=4,
    ...          names=("example-producer", "example-worker"))
    >>> sorted(r for r in results if r is not None)
    [0, 1, 4, 9, 16]
    """
    jobs: queue.Queue = queue.Queue(maxsize=queue_size)
    done: queue.SimpleQueue = queue.SimpleQueue()

    def produce() -> None:
        feed(jobs, items, stop, workers)

    def work() -> None:
        try:
            for item in items_until_stopped(jobs, stop):
                done.put(do_job(item))
        finally:
            done.put(None)

    producer, worker = names
    finished = 0
    with Workers(stop.set) as pool:
        pool.start(produce, name=producer, abandon_after=_ABANDON_SECONDS)
        for i in range(workers):
            pool.start(work, name=f"{worker}-{i}")
        while finished < workers:
            raise_if_dropped()  # a Ctrl-C CPython dropped stops the pool too (ctrl_c)
            try:
                result = done.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if pool.wait(0):  # all ended, some without a word: stopped before they ran
                    break
                on_result(None)
                continue
            if result is None:  # a worker ended
                finished += 1
            on_result(result)
