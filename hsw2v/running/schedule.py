"""The learning-rate schedule and the jobs' random seeds: one object, passed whole to every
way of training.

Progress ``p`` in [0, 1] over all epochs counts raw words when ``total`` counts words
(``by_words``), else sentences; ``alpha(p) = start - (start - end) * p``, never below
``end`` (word2vec.c's and gensim's linear decay). Each job is given ``alpha`` at the progress
where it starts and where it ends, and the kernel interpolates in between, so a job's rate
does not depend on how the corpus was cut into jobs. Each job's random stream is seeded from
``(seed, epoch, job's stream id)`` (:func:`hsw2v._kernels._inner.job_seed`), so that one worker with
a fixed seed reproduces bit for bit.

The users of one :class:`Schedule`:

* :func:`hsw2v.running.epochs.run_epoch` (a corpus iterable on worker threads, and the layer's fit):
  :meth:`Schedule.job_alphas` and :meth:`Schedule.job_seed` for each job, in corpus order;
* :class:`hsw2v._kernels._corpus_file.FileTrainer` (``corpus_file`` mode): takes the schedule whole
  and computes the same values without the GIL, with the formula compiled once in
  ``_rates.pyx`` (``schedule_alpha``, under strict floating-point flags;
  :func:`hsw2v._kernels._rates.linear_alpha`, which :meth:`Schedule.alpha` calls, is its Python
  twin, so both give bit-identical rates);
* the kernels (``_inner``, ``_layer``): the rate inside a job falls linearly from the job's
  first rate to its last (``_rates.job_alpha``, inline, twin
  :func:`hsw2v._kernels._rates.within_job`);
* the layer's fit (:mod:`hsw2v.layer._fit`) and the classifier's epochs
  (:mod:`hsw2v.classifier`): :meth:`Schedule.job_alphas`;
* distributed training (:mod:`hsw2v.distributed`): the driver gives each shard's piece the
  rates at the piece's start and end, and the task spreads them over the piece's jobs
  (:func:`within`) and seeds them with :meth:`Schedule.job_seed`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hsw2v._kernels._inner import job_seed
from hsw2v._kernels._rates import linear_alpha


@dataclass(frozen=True)
class Schedule:
    """Linear learning-rate decay over ``epochs`` passes of ``total`` units (raw words when
    ``by_words``, else sentences), and the seed of every job's random stream.

    >>> schedule = Schedule(0.025, 0.0001, epochs=2, total=100, by_words=True)
    >>> schedule.alpha(0, 50) == schedule.job_alphas(0, 0, 50)[1]
    True
    >>> schedule.alpha(1, 100)
    0.0001
    """

    start_alpha: float
    end_alpha: float
    epochs: int
    total: int
    by_words: bool
    seed: int = 1

    def alpha(self, epoch: int, done_units: int) -> float:
        """The rate after ``done_units`` units of epoch ``epoch`` (0-based)."""
        return linear_alpha(
            self.start_alpha, self.end_alpha, epoch, self.epochs, done_units, self.total
        )

    def units(self, job) -> int:
        """How far a job (:class:`hsw2v.running.epochs.Job`) moves the schedule."""
        return job.raw_words if self.by_words else job.n_sentences

    def job_alphas(self, epoch: int, done_units: int, units: int) -> tuple[float, float]:
        """The rates at the start and at the end of a job of ``units`` units that starts
        after ``done_units`` units of epoch ``epoch``."""
        return self.alpha(epoch, done_units), self.alpha(epoch, done_units + units)

    def job_seed(self, epoch: int, stream: int) -> int:
        """The seed of a job's random stream; ``stream`` tells the jobs of an epoch apart
        (the job's index, or a worker's or piece's id in the high bits beside it)."""
        return job_seed(self.seed, epoch, stream)


def within(alpha0: float, alpha1: float, done: int, total: int) -> float:
    """The rate after ``done`` of ``total`` units of a span of the schedule that runs from
    ``alpha0`` to ``alpha1`` (a distributed shard's piece, whose size the driver planned from
    byte ranges and whose words the task counts as it reads them).

    >>> within(0.02, 0.01, 1, 4)
    0.0175
    """
    return alpha0 + (alpha1 - alpha0) * done / total
