"""The epoch driver: jobs, worker threads, the learning-rate schedule, progress and faults.

One producer thread turns the corpus into jobs (whole sentences mapped to word ids, about
``batch_words`` raw tokens each; a longer sentence makes a job of its own, never cut).
``workers`` threads take jobs from a bounded queue and train them in the nogil kernel
(:class:`hsw2v._inner.Trainer`). The calling thread only watches: it logs progress, and on an
exception or Ctrl-C it stops the producer and workers (each finishes at most its current
job) before re-raising, so the model stays consistent and usable.

Epochs after the first reuse the id-encoded jobs when the corpus holds at most
``cache_words`` in-vocabulary tokens (4 bytes each): the corpus is then read and mapped to ids
once per ``train()`` call instead of once per epoch.

The schedule (one source of truth): progress ``p`` in [0, 1] over all epochs counts raw words
when ``total_words`` is known, else sentences; ``alpha(p) = start - (start - end) * p``. Each
job gets ``alpha`` at its start and end progress and the kernel interpolates in between.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from hsw2v._inner import Trainer, encode_sentences, job_seed
from hsw2v.vocab import check_sentence

logger = logging.getLogger(__name__)

_POLL_SECONDS = 0.1


@dataclass
class Job:
    """Whole sentences as word ids: ``ids[ends[s-1]:ends[s]]`` is sentence ``s``."""

    ids: np.ndarray
    ends: np.ndarray
    raw_words: int
    n_sentences: int


def iter_jobs(corpus: Iterable, key_to_index: dict, batch_words: int) -> Iterator[Job]:
    """Group a corpus into jobs of about ``batch_words`` raw tokens, whole sentences only."""
    batch: list = []
    raw = 0
    for index, sentence in enumerate(corpus):
        if not isinstance(sentence, list):
            check_sentence(sentence, index)
            sentence = list(sentence)
        batch.append(sentence)
        raw += len(sentence)
        if raw >= batch_words:
            yield _make_job(batch, key_to_index)
            batch, raw = [], 0
    if batch:
        yield _make_job(batch, key_to_index)


def _make_job(batch: list, key_to_index: dict) -> Job:
    ids, ends, raw = encode_sentences(batch, key_to_index)
    return Job(ids=ids, ends=ends, raw_words=raw, n_sentences=len(batch))


@dataclass
class Schedule:
    """Linear learning-rate decay over ``epochs`` passes of ``total`` units (words or
    sentences)."""

    start_alpha: float
    end_alpha: float
    epochs: int
    total: int
    by_words: bool

    def alpha(self, epoch: int, done_units: float) -> float:
        progress = (epoch + min(done_units / self.total, 1.0)) / self.epochs
        return max(
            self.end_alpha, self.start_alpha - (self.start_alpha - self.end_alpha) * progress
        )

    def units(self, job: Job) -> int:
        return job.raw_words if self.by_words else job.n_sentences


@dataclass
class EpochReport:
    trained_words: int = 0  # tokens left after subsampling (gensim's "effective words")
    raw_words: int = 0
    sentences: int = 0
    loss: float = 0.0
    seconds: float = 0.0


class _Stop(Exception):
    pass


def run_epoch(
    trainer: Trainer,
    jobs: Iterable[Job],
    *,
    epoch: int,
    workers: int,
    schedule: Schedule,
    seed: int,
    report_delay: float = 1.0,
    on_job: Callable[[Job], None] | None = None,
) -> EpochReport:
    """Train one epoch of ``jobs`` on ``workers`` threads; see the module docstring."""
    job_queue: queue.Queue = queue.Queue(maxsize=2 * workers)
    done_queue: queue.Queue = queue.Queue()
    stop = threading.Event()
    report = EpochReport()
    errors: list[BaseException] = []

    def put(item) -> None:
        while True:
            if stop.is_set():
                raise _Stop
            try:
                job_queue.put(item, timeout=_POLL_SECONDS)
                return
            except queue.Full:
                continue

    def produce() -> None:
        try:
            done_units = 0
            for index, job in enumerate(jobs):
                if stop.is_set():
                    break
                if on_job is not None:
                    on_job(job)
                units = schedule.units(job)
                alpha0 = schedule.alpha(epoch, done_units)
                done_units += units
                alpha1 = schedule.alpha(epoch, done_units)
                put((job, alpha0, alpha1, job_seed(seed, epoch, index)))
        except _Stop:
            pass
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)
            stop.set()
        finally:
            for _ in range(workers):
                try:
                    put(None)
                except _Stop:
                    break

    def work() -> None:
        try:
            while not stop.is_set():
                try:
                    item = job_queue.get(timeout=_POLL_SECONDS)
                except queue.Empty:
                    continue
                if item is None:
                    break
                job, alpha0, alpha1, job_random = item
                kept, loss = trainer.train_job(job.ids, job.ends, alpha0, alpha1, job_random)
                done_queue.put((job, kept, loss))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)
            stop.set()
        finally:
            done_queue.put(None)

    threads = [threading.Thread(target=produce, name="hsw2v-producer", daemon=True)]
    threads += [
        threading.Thread(target=work, name=f"hsw2v-worker-{i}", daemon=True) for i in range(workers)
    ]
    started = time.perf_counter()
    next_report = started + report_delay
    for thread in threads:
        thread.start()
    finished_workers = 0
    try:
        while finished_workers < workers:
            try:
                item = done_queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                item = False
            if item is None:
                finished_workers += 1
            elif item:
                job, kept, loss = item
                report.trained_words += kept
                report.raw_words += job.raw_words
                report.sentences += job.n_sentences
                report.loss += loss
            now = time.perf_counter()
            if now >= next_report:
                elapsed = now - started
                logger.info(
                    "EPOCH %i - PROGRESS: at %.2f%% of %s, %.0f effective words/s",
                    epoch + 1,
                    100.0
                    * (report.raw_words if schedule.by_words else report.sentences)
                    / schedule.total,
                    "words" if schedule.by_words else "sentences",
                    report.trained_words / max(elapsed, 1e-9),
                )
                next_report = now + report_delay
    except BaseException:
        stop.set()
        raise
    finally:
        for thread in threads:
            thread.join()
        report.seconds = time.perf_counter() - started
    if errors:
        raise errors[0]
    return report
