"""The epoch driver: jobs, worker threads, the learning-rate schedule, progress and faults.

One producer thread turns the corpus into jobs (whole sentences mapped to word ids, about
``batch_words`` raw tokens each; a longer sentence makes a job of its own, never cut).
``workers`` threads take jobs from a bounded queue and train them in the nogil kernel
(:class:`hsw2v._kernels._inner.Trainer`). The calling thread only watches: it logs progress,
and on an exception or Ctrl-C it stops the producer and workers (each finishes at most its
current job) before re-raising, so the model stays consistent and usable. A job whose loss comes
back non-finite (the kernels' divergence check, :mod:`hsw2v.divergence`) stops the epoch the
same way with :class:`~hsw2v.divergence.TrainingDivergedError`. A Ctrl-C whose
KeyboardInterrupt CPython dropped in a finalizer is raised at the next job
(:mod:`hsw2v.running.ctrl_c`).

Every epoch reads the corpus, as gensim's do, the producer mapping each batch of sentences to
ids in Cython (:func:`hsw2v._kernels._inner.encode_sentences`) while the workers train earlier jobs.
Only a corpus proven unchanged (:func:`hsw2v.corpora.corpus_identity`) that holds at most
``cache_words`` in-vocabulary tokens (4 bytes each) is read once per ``train()`` call, later
epochs reusing its id-encoded jobs (:mod:`hsw2v.running.passes` decides which).

The learning-rate schedule and the jobs' seeds are one :class:`hsw2v.running.schedule.Schedule`
(re-exported here), given whole to :func:`run_epoch`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from hsw2v._kernels._inner import Trainer, encode_sentences
from hsw2v.divergence import TrainingDivergedError
from hsw2v.running.schedule import Schedule
from hsw2v.running.threads import _POLL_SECONDS, StopFlag, Workers, run_jobs
from hsw2v.vocab import check_sentence

logger = logging.getLogger(__name__)


@dataclass
class Job:
    """Whole sentences as word ids: ``ids[ends[s-1]:ends[s]]`` is sentence ``s``."""

    ids: np.ndarray
    ends: np.ndarray
    raw_words: int
    n_sentences: int


def iter_jobs(
    corpus: Iterable, key_to_index: dict, batch_words: int, n_words: int = -1
) -> Iterator[Job]:
    """Group a corpus into jobs of about ``batch_words`` raw tokens, whole sentences only;
    with ``n_words >= 0`` every id must lie below it (the rows the kernels index). A
    sentence that is not exactly a list (e.g. a list subclass whose ``len()`` disagrees with
    what it yields) is read once into a list."""
    batch: list = []
    raw = 0
    for index, sentence in enumerate(corpus):
        if type(sentence) is not list:
            check_sentence(sentence, index)
            sentence = list(sentence)
        batch.append(sentence)
        raw += len(sentence)
        if raw >= batch_words:
            yield _make_job(batch, key_to_index, n_words)
            batch, raw = [], 0
    if batch:
        yield _make_job(batch, key_to_index, n_words)


def jobs_from_recording(recording, batch_words: int) -> list[Job]:
    """The jobs :func:`iter_jobs` would make from the corpus a finalized
    :class:`hsw2v.vocab.TokenRecording` holds, without reading it again. Each job's ids are a
    view into the recording (no copy of the corpus); only the per-job sentence ends are new."""
    if not recording.final:
        raise ValueError("the recording still holds provisional ids: finalize it first")
    lengths = recording.lengths.tolist()
    jobs = []
    first, kept_start, raw = 0, 0, 0
    for s, length in enumerate(lengths):
        raw += length
        if raw >= batch_words or s == len(lengths) - 1:
            ends = np.cumsum(recording.kept_lengths[first : s + 1])
            kept = int(ends[-1])
            jobs.append(
                Job(
                    ids=recording.ids[kept_start : kept_start + kept],
                    ends=ends,
                    raw_words=raw,
                    n_sentences=s + 1 - first,
                )
            )
            first, kept_start, raw = s + 1, kept_start + kept, 0
    return jobs


def _make_job(batch: list, key_to_index: dict, n_words: int = -1) -> Job:
    ids, ends, raw = encode_sentences(batch, key_to_index, n_words)
    return Job(ids=ids, ends=ends, raw_words=raw, n_sentences=len(batch))


@dataclass
class Progress:
    """What an ``on_progress`` hook of :func:`run_epoch` is told, from the caller's thread.

    ``fraction`` is the share of the epoch done (by words or sentences, as the schedule
    counts), ``trained_words`` the effective words so far (after subsampling), ``raw_words``
    the raw words so far, ``seconds`` the time since the epoch started and ``alpha`` the
    learning rate reached.
    """

    epoch: int
    epochs: int
    fraction: float
    trained_words: int
    raw_words: int
    seconds: float
    alpha: float


@dataclass
class EpochReport:
    trained_words: int = 0  # tokens left after subsampling (gensim's "effective words")
    raw_words: int = 0
    sentences: int = 0
    loss: float = 0.0
    seconds: float = 0.0
    from_memory: bool = False  # trained from ids kept in memory; the corpus was not read


def run_epoch(
    trainer: Trainer,
    jobs: Iterable[Job],
    *,
    epoch: int,
    workers: int,
    schedule: Schedule,
    seed: int | None = None,
    report_delay: float = 1.0,
    on_job: Callable[[Job], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    progress_delay: float = 0.2,
) -> EpochReport:
    """Train one epoch of ``jobs`` on ``workers`` threads; see the module docstring. Each
    job's rates and seed come from ``schedule`` (``seed``, when given, replaces its seed).

    ``on_progress``, if given, is called in the caller's thread with a :class:`Progress`
    at most every ``progress_delay`` seconds while jobs finish, and once when the epoch ends.
    """
    stop = StopFlag()
    report = EpochReport()
    if seed is not None:
        schedule = replace(schedule, seed=int(seed))

    def produced():  # the jobs with their rates and seeds, read from the user's corpus
        done_units = 0
        for index, job in enumerate(jobs):
            if stop.is_set():
                return
            if on_job is not None:
                on_job(job)
            units = schedule.units(job)
            alpha0, alpha1 = schedule.job_alphas(epoch, done_units, units)
            done_units += units
            yield job, alpha0, alpha1, schedule.job_seed(epoch, index)

    def train_job(item):  # on a worker thread
        job, alpha0, alpha1, job_random = item
        kept, loss = trainer.train_job(job.ids, job.ends, alpha0, alpha1, job_random)
        if not math.isfinite(loss):  # the job met non-finite weights: stop all
            raise _diverged(epoch)
        return job, kept, loss

    started = time.perf_counter()
    next_report = started + report_delay
    next_progress = started + progress_delay

    def progress_now(now: float) -> Progress:
        return _progress_of(report, schedule, epoch, now - started)

    def on_result(item) -> None:  # in this thread: a job's result, or None (a poll)
        nonlocal next_report, next_progress
        if item is not None:
            job, kept, loss = item
            report.trained_words += kept
            report.raw_words += job.raw_words
            report.sentences += job.n_sentences
            report.loss += loss
        now = time.perf_counter()
        if now >= next_report:
            _log_progress(report, schedule, epoch, now - started)
            next_report = now + report_delay
        if on_progress is not None and item is not None and now >= next_progress:
            on_progress(progress_now(now))
            next_progress = now + progress_delay

    # one producer reads the user's corpus into jobs, `workers` threads train them; any
    # error or interrupt stops them all, waited for (hsw2v.running.threads)
    run_jobs(
        produced(),
        train_job,
        workers,
        on_result,
        stop,
        queue_size=2 * workers,
        names=("hsw2v-producer", "hsw2v-worker"),
    )
    if on_progress is not None:
        on_progress(progress_now(time.perf_counter()))
    report.seconds = time.perf_counter() - started
    return report


def _diverged(epoch: int) -> TrainingDivergedError:
    """The error of a job whose loss came back non-finite (the kernels' divergence check);
    the model's ``train``/``fit`` replaces it with one that names what to change."""
    return TrainingDivergedError(
        f"training met non-finite weights in epoch {epoch + 1}", epoch=epoch
    )


def _progress_of(report: EpochReport, schedule: Schedule, epoch: int, seconds: float) -> Progress:
    done = report.raw_words if schedule.by_words else report.sentences
    return Progress(
        epoch=epoch,
        epochs=schedule.epochs,
        fraction=min(done / schedule.total, 1.0),
        trained_words=report.trained_words,
        raw_words=report.raw_words,
        seconds=seconds,
        alpha=schedule.alpha(epoch, done),
    )


def warn_count_mismatch(
    epoch: int, report: EpochReport, total_examples: int | None, total_words: int | None
) -> None:
    """Log gensim's warnings when an epoch read another number of sentences or words than
    ``train()`` was told (the corpus changed since ``build_vocab()``, or wrong totals): the
    learning rate then does not decay as planned."""
    if total_examples and total_examples != report.sentences:
        logger.warning(
            "EPOCH %i: supplied example count (%i) did not equal expected count (%i)",
            epoch + 1,
            report.sentences,
            total_examples,
        )
    if total_words and total_words != report.raw_words:
        logger.warning(
            "EPOCH %i: supplied raw word count (%i) did not equal expected count (%i)",
            epoch + 1,
            report.raw_words,
            total_words,
        )


def _log_progress(report: EpochReport, schedule: Schedule, epoch: int, seconds: float) -> None:
    logger.info(
        "EPOCH %i - PROGRESS: at %.2f%% %s, %.0f words/s",
        epoch + 1,
        100.0 * (report.raw_words if schedule.by_words else report.sentences) / schedule.total,
        "words" if schedule.by_words else "examples",
        report.trained_words / max(seconds, 1e-9),
    )


def run_file_epoch(
    file_trainer,
    ranges: list[tuple[int, int]],
    *,
    epoch: int,
    schedule: Schedule,
    report_delay: float = 1.0,
    on_progress: Callable[[Progress], None] | None = None,
    progress_delay: float = 0.2,
    first_docs: list[int] | None = None,
) -> EpochReport:
    """Train one epoch of a ``corpus_file``: one thread per byte range, each reading,
    tokenising and training its own lines without the GIL
    (:class:`hsw2v._kernels._corpus_file.FileTrainer`). The calling thread watches as in
    :func:`run_epoch`: it logs, reports progress and, on an exception or Ctrl-C, stops every
    range after its current job before re-raising. ``first_docs``: with documents, each
    range's first line number.
    """
    report = EpochReport()
    losses = [0.0] * len(ranges)
    first_docs = first_docs or [0] * len(ranges)

    def work(thread: int, start: int, end: int) -> None:
        losses[thread] = file_trainer.train_range(thread, start, end, first_docs[thread])

    def update() -> None:
        raw, kept, sentences, _jobs = file_trainer.progress()
        report.raw_words, report.trained_words, report.sentences = raw, kept, sentences

    started = time.perf_counter()
    next_report = started + report_delay
    next_progress = started + progress_delay
    file_trainer.begin_epoch(epoch)
    try:
        # file_trainer.stop() sets the flag every range polls between jobs; leaving the
        # block waits for them all (hsw2v.running.threads), whatever was raised.
        with Workers(file_trainer.stop) as pool:
            for k, (start, end) in enumerate(ranges):
                pool.start(work, k, start, end, name=f"hsw2v-file-{k}")
            while not pool.wait(_POLL_SECONDS):
                now = time.perf_counter()
                update()
                if now >= next_report:
                    _log_progress(report, schedule, epoch, now - started)
                    next_report = now + report_delay
                if on_progress is not None and now >= next_progress:
                    on_progress(_progress_of(report, schedule, epoch, now - started))
                    next_progress = now + progress_delay
    finally:
        file_trainer.end_epoch()  # only once no range reads the file any more
    report.seconds = time.perf_counter() - started
    update()
    report.loss = float(sum(losses))
    if not math.isfinite(report.loss):  # a job met non-finite weights (the ranges stopped)
        raise _diverged(epoch)
    if on_progress is not None:
        on_progress(_progress_of(report, schedule, epoch, report.seconds))
    return report
