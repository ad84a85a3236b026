"""The running layer: what turns a model's settings into trained weights.

:mod:`~hsw2v.running.params` (the one parameter table, also importable as ``hsw2v.params``),
``_objectives`` (the objectives as rows of one table), ``_make_trainer`` (the kernel's trainer
built from a model) and ``_tuning`` (its constants), ``_schedule`` (the learning-rate schedule
and job seeds), ``_train`` (the epoch driver: jobs, workers, progress) and ``_threads`` (the
one place threads are started and joined). It imports the kernels and the ground below it,
never the models or the faces above it.
"""
