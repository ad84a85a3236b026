"""The running layer: what turns a model's settings into trained weights.

:mod:`~hsw2v.running.params` (the one parameter table, also importable as ``hsw2v.params``),
:mod:`~hsw2v.running.objectives` (the objectives as rows of one table),
:mod:`~hsw2v.running.trainer` (the kernel's trainer built from a model) and ``_tuning`` (its
constants, a hook the benchmarks set), :mod:`~hsw2v.running.schedule` (the learning-rate
schedule and job seeds), :mod:`~hsw2v.running.epochs` (the epoch driver: jobs, workers,
progress), :mod:`~hsw2v.running.threads` (the one place threads are started and joined) and
:mod:`~hsw2v.running.ctrl_c` (a Ctrl-C that CPython dropped, raised again). It imports the
kernels and the ground below it, never the models or the faces above it.
"""
