"""The compiled kernels: the Cython and C sources of every nogil loop of hsw2v.

The vector kernels (``_inner``, ``_query``, ``_layer``, and ``_bench_walks`` where built) are
compiled once per CPU level into ``hsw2v/_cpu/<level>/``, and :mod:`hsw2v._cpu` binds
``hsw2v._kernels._inner`` etc. to the chosen level's module at import; the others
(``_corpus_file``, ``_rates``, ``_merge``, ``_recording``, ``_array_passes``,
``_transport``) are compiled once, here.
``docs/architecture.md`` maps each file to the idea it holds.
"""
