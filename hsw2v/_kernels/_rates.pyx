# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The learning-rate schedule: its formulas, compiled with strict floating-point flags.

Design note
-----------
A. What it holds. ``schedule_alpha`` (declared in ``_rates.pxd``), the run-level linear decay
   of word2vec.c and gensim (Mikolov et al. 2013; gensim's ``_get_next_alpha`` /
   ``_update_alpha``), and the Python twins of both formulas of ``_rates.pxd``. Nothing else
   computes a rate: ``_corpus_file`` cimports ``schedule_alpha`` (one call through this
   module's C API per job), :class:`hsw2v.running.schedule.Schedule` calls ``linear_alpha``, and
   the kernels inline ``job_alpha`` (``_rates.pxd``) for the rate inside a job.
B. Flags. Built once at the baseline level with ``GCC_STRICT`` (``setup.py``): no fused
   multiply-add, no reassociation, so a rate has the same bits on every CPU and in every
   build, whether a C caller or Python asks for it.
C. What runs without the GIL: ``schedule_alpha``; nothing here is shared or written.
"""

from libc.stdint cimport int64_t


cdef double schedule_alpha(double start_alpha, double end_alpha, int64_t epoch, int64_t epochs,
                           int64_t done, int64_t total) noexcept nogil:
    """alpha = start - (start - end) * (epoch + min(done / total, 1)) / epochs, >= end."""
    cdef double fraction = <double>done / <double>total
    if fraction > 1.0:
        fraction = 1.0
    cdef double alpha = start_alpha - (start_alpha - end_alpha) * (
        (<double>epoch + fraction) / <double>epochs)
    return alpha if alpha > end_alpha else end_alpha


def linear_alpha(double start_alpha, double end_alpha, int64_t epoch, int64_t epochs,
                 int64_t done, int64_t total):
    """The learning rate after ``done`` of ``total`` units of epoch ``epoch`` (0-based) of
    ``epochs``, falling linearly from ``start_alpha`` to ``end_alpha`` over the whole run
    (twin of ``schedule_alpha``).

    >>> linear_alpha(0.025, 0.0001, 0, 2, 50, 100)  # a quarter of the run
    0.018775
    """
    if total <= 0 or epochs <= 0:
        raise ValueError(f"total and epochs must be positive, got {total} and {epochs}")
    return schedule_alpha(start_alpha, end_alpha, epoch, epochs, done, total)


def within_job(float alpha0, float alpha1, int64_t i, int64_t total):
    """The rate at token ``i`` of a job of ``total`` tokens that falls from ``alpha0`` to
    ``alpha1`` (twin of ``job_alpha``, float32, with this module's strict arithmetic).

    >>> within_job(0.5, 0.25, 1, 4)
    0.4375
    """
    if total <= 0 or not 0 <= i <= total:
        raise ValueError(f"need 0 <= i <= total and total > 0, got i={i}, total={total}")
    return job_alpha(alpha0, alpha1, i, total)
