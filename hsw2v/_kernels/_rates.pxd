"""The learning-rate schedule of every kernel, declared once (owner: ``_rates.pyx``).

Two formulas, one home (word2vec.c's and gensim's linear decay):

* ``schedule_alpha``: the rate after ``done`` of ``total`` units of epoch ``epoch`` of
  ``epochs``, ``start - (start - end) * (epoch + min(done / total, 1)) / epochs``, never below
  ``end``. Compiled once, in ``_rates.pyx``, with the strict floating-point flags of
  ``setup.py`` (``GCC_STRICT``: no contraction, no reassociation), so every caller gets the
  same bits: ``_corpus_file`` per job (a call through this module's C API) and Python's
  :class:`hsw2v.running.schedule.Schedule` through the twin ``linear_alpha``.
* ``job_alpha``: the rate at kept token ``i`` of ``total`` inside one job, falling linearly
  from the job's first rate ``alpha0`` to its last ``alpha1``,
  ``alpha0 + (alpha1 - alpha0) * (i / total)`` in float32. It runs once per token in the
  training walks (``_inner``) and per example in the layer (``_layer``), so it is inline
  here and compiled inside each kernel, with that kernel's flags: at the avx2 level GCC fuses
  its multiply-add (FMA), which gives other bits than the strict owner would, and the
  kernels' weights must keep their bits (``tests/test_kernel_twins.py``,
  ``test_job_rate_is_the_one_formula_and_the_strict_twin_at_the_baseline``).
  ``within_job``, the Python twin, is the strict owner's copy.

    from hsw2v._kernels._rates cimport job_alpha, schedule_alpha
"""

from libc.stdint cimport int64_t


cdef double schedule_alpha(double start_alpha, double end_alpha, int64_t epoch, int64_t epochs,
                           int64_t done, int64_t total) noexcept nogil


cdef inline float job_alpha(float alpha0, float alpha1, int64_t i, int64_t total) noexcept nogil:
    """The rate at token ``i`` of a job of ``total`` tokens whose rate falls from ``alpha0``
    (its first token) to ``alpha1`` (after its last)."""
    return alpha0 + (alpha1 - alpha0) * (<float>i / <float>total)
