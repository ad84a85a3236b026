"""The running layer: what turns a model's settings into trained weights.

:mod:`~hsw2v.running.params` (the one parameter table, also importable as ``hsw2v.params``),
:mod:`~hsw2v.running.objectives` (the objectives as rows of one table, and beside it each
objective's queries: ``hierarchical``, also ``hsw2v.scoring``, and ``negative``, also
``hsw2v.negative``), :mod:`~hsw2v.running.validation` (every index the kernels follow, checked;
also ``hsw2v.validation``), :mod:`~hsw2v.running.trainer` (the kernel's trainer built from a
model) and ``_tuning`` (its constants, a hook the benchmarks set),
:mod:`~hsw2v.running.schedule` (the learning-rate schedule and job seeds),
:mod:`~hsw2v.running.passes` (where each epoch's jobs come from: a corpus iterable or a
``corpus_file``), :mod:`~hsw2v.running.file_scan` (a ``corpus_file``'s byte ranges: which files,
the vocabulary scan), :mod:`~hsw2v.running.epochs` (one epoch: jobs, workers, progress),
:mod:`~hsw2v.running.threads` (the one place threads are started and joined) and
:mod:`~hsw2v.running.ctrl_c` (a Ctrl-C that CPython dropped, raised again). It imports the
kernels and the ground below it, never the models or the faces above it
(``tests/test_imports.py``).
"""
