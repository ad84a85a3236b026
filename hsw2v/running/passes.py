"""Where each epoch's jobs come from: the two drivers of ``train()``'s epochs.

:class:`FilePasses` trains a local ``corpus_file``: each worker reads its own byte range
(:class:`hsw2v._kernels._corpus_file.FileTrainer`), and keeps the ids it read for later
epochs while the file is proven unchanged. :class:`CorpusPasses` trains a corpus iterable:
read every epoch into jobs (:func:`hsw2v.running.epochs.iter_jobs`), as gensim's epochs are,
or replayed from the jobs of an earlier pass (:class:`JobCache`, or the vocabulary scan's
recording) while the corpus is proven unchanged (:func:`hsw2v.corpora.corpus_identity`,
within ``cache_words``). :func:`epoch_passes` picks one for a ``train()`` call; each
``run(epoch, ...)`` trains one epoch through :mod:`hsw2v.running.epochs` and returns its
:class:`~hsw2v.running.epochs.EpochReport`.

They read the model's settings (``workers``, ``batch_words``, ``cache_words``,
``wv.key_to_index``) and never write the model.
"""

from __future__ import annotations

import os

from hsw2v._kernels._corpus_file import FileTrainer, Vocab, byte_ranges
from hsw2v.corpora import MAX_WORDS_IN_BATCH as LINE_SENTENCE_MAX
from hsw2v.corpora import corpus_identity, file_identity
from hsw2v.running.epochs import Job, jobs_from_recording, run_epoch, run_file_epoch
from hsw2v.running.file_scan import lines_before
from hsw2v.running.schedule import Schedule
from hsw2v.running.threads import Workers, usable_cpus


def kept_identity(corpus, cache_words: int):
    """The corpus's identity when its ids may be kept between passes (``cache_words > 0``;
    :func:`hsw2v.corpora.corpus_identity`), else None."""
    return corpus_identity(corpus) if cache_words > 0 else None


def epoch_passes(model, corpus, path, trainer, schedule: Schedule, recorded=None,
                 documents: bool = False):
    """Where each epoch's jobs come from: a local ``corpus_file`` (``path``, not None)'s byte
    ranges, read by the workers, or the corpus iterable, read each epoch unless proven
    unchanged since the ids kept in memory were read. ``recorded`` is the vocabulary scan's
    ``(..., identity, recording)``, replayed when it still describes the corpus and the
    vocabulary. ``documents``: the file's lines are Doc2Vec's documents."""
    if path is not None:
        return FilePasses(model, path, trainer, schedule, documents)
    passes = CorpusPasses(model, corpus, trainer, schedule)
    if (
        recorded is not None
        and recorded[1] == kept_identity(corpus, model.cache_words)
        and recorded[2].matches(model.wv.index_to_key)
    ):
        passes.replay(jobs_from_recording(recorded[2], model.batch_words), recorded[1])
    return passes


class FilePasses:
    """The ``FileTrainer`` and byte ranges of each epoch of a ``corpus_file``. Its workers keep
    the ids they read for later epochs (within ``cache_words``) only while the file keeps the
    identity it had when they read it (:func:`hsw2v.corpora.file_identity`: device, inode,
    size, mtime and ctime); a changed file, or one too recently modified to tell, is read
    again, split into ranges of its current size."""

    def __init__(self, model, path: str, trainer, schedule: Schedule, documents: bool = False):
        self.model, self.path, self.trainer, self.schedule = model, path, trainer, schedule
        self.documents = documents  # each line a document, numbered (Doc2Vec)
        self.vocab = Vocab(model.wv.key_to_index)
        self.file_trainer = None
        self.identity = None
        self.first_docs = None

    def _new_file_trainer(self, cache_words: int):
        model = self.model
        return FileTrainer(
            self.path,
            self.trainer,
            self.vocab,
            model.workers,
            model.batch_words,
            LINE_SENTENCE_MAX,  # LineSentence's chunks of a long line
            self.schedule,
            cache_words,
            documents=self.documents,
            read_ahead=2 * model.workers <= usable_cpus(),  # a core for each range's reader
            reader_pool=Workers,
        )

    def run(self, epoch: int, report_delay, on_progress):
        """Train one epoch on the workers' byte ranges; returns its report."""
        file_trainer, ranges, from_memory = self.for_epoch(epoch)
        report = run_file_epoch(
            file_trainer,
            ranges,
            epoch=epoch,
            schedule=self.schedule,
            report_delay=report_delay,
            on_progress=on_progress,
            first_docs=self.first_docs,
        )
        report.from_memory = from_memory
        return report

    def for_epoch(self, epoch: int):
        """``(file_trainer, ranges, from_memory)`` for this epoch."""
        identity = file_identity(self.path) if self.model.cache_words > 0 else None
        if self.file_trainer is not None and identity is not None and identity == self.identity:
            return self.file_trainer, self.ranges, self.file_trainer.replaying()
        if self.file_trainer is None or self.identity is not None:
            # first epoch, or ids kept from a file that has changed since: start afresh
            self.file_trainer = self._new_file_trainer(
                self.model.cache_words if identity is not None else 0
            )
        self.identity = identity  # taken before the read
        self.ranges = byte_ranges(os.path.getsize(self.path), self.model.workers)
        if self.documents:  # each range's first line number
            self.first_docs = lines_before(self.path, [start for start, _ in self.ranges])
        return self.file_trainer, self.ranges, False


class JobCache:
    """The id-encoded jobs of one corpus pass, kept while they fit in ``limit`` tokens, with
    the corpus identity taken before that pass (:func:`hsw2v.corpora.corpus_identity`)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.identity = None
        self.reset()

    def reset(self) -> None:
        self.jobs: list[Job] = []
        self.tokens = 0
        self.overflow = self.limit <= 0
        self.complete = False

    def add(self, job: Job) -> None:
        if self.overflow:
            return
        self.tokens += len(job.ids)
        if self.tokens > self.limit:
            self.overflow = True
            self.jobs = []
        else:
            self.jobs.append(job)

    def finish(self) -> None:
        self.complete = not self.overflow and bool(self.jobs)


class CorpusPasses:
    """The jobs of each epoch over a corpus iterable: read from the corpus, as gensim's
    epochs do, or replayed from the id-encoded jobs of an earlier pass (:class:`JobCache`)
    while the corpus keeps the identity it had when they were read."""

    def __init__(self, model, corpus, trainer, schedule: Schedule):
        self.model, self.corpus, self.trainer, self.schedule = model, corpus, trainer, schedule
        self.cache = JobCache(model.cache_words)
        self.n_words = len(model.wv.vectors)  # the rows the trainer's kernels index

    def replay(self, jobs: list[Job], identity) -> None:
        """Train every epoch from ``jobs`` (the scan's recording) while ``identity`` holds."""
        self.cache.jobs, self.cache.identity, self.cache.complete = jobs, identity, True

    def run(self, epoch: int, report_delay, on_progress):
        """Train one epoch on the worker threads; returns its report."""
        model, cache = self.model, self.cache
        on_job = None
        from_memory = cache.complete and cache.identity == kept_identity(
            self.corpus, model.cache_words
        )
        if from_memory:
            jobs = cache.jobs
        else:
            cache.reset()
            cache.identity = kept_identity(self.corpus, model.cache_words)  # taken before the read
            jobs = model._corpus_jobs(self.corpus, self.n_words)
            on_job = cache.add if cache.identity is not None else None
        report = run_epoch(
            self.trainer,
            jobs,
            epoch=epoch,
            workers=model.workers,
            schedule=self.schedule,
            report_delay=report_delay,
            on_job=on_job,
            on_progress=on_progress,
        )
        report.from_memory = from_memory
        if on_job is not None:
            cache.finish()
        return report
