"""Tuning constants of the trainer, measured on the benchmark corpus; the benchmarks set them
here (``benchmarks/ab_builds.py``, ``DIR@JSON``; ``benchmarks/quality.py``) before training.

With several workers, each job trains a private copy of the ``HOT_NODES`` hottest inner nodes
(the top six levels of the tree, on nearly every path) and adds its change back (all of it
with two workers, a share of it with more: ``HOT_MERGE``) every ``HOT_SYNC`` centre words
(:class:`hsw2v._kernels._inner.Trainer`; Vuurens et al., "Efficient Parallel Learning of
Word2Vec", 2016), so that threads do not fight over those rows' cache lines.
Measured on the benchmark corpus with 2 workers (``benchmarks/RESULTS.md``, "Private top
nodes"): for skip-gram, 63 nodes synced every 100 words gives most of the speed of 1,024
synced every 1,000 without their cost in analogy accuracy. CBOW walks one path per centre
word (skip-gram about six), so the same staleness allows a sync every 1,000 centre words, and
255 nodes (eight levels) then measured fastest, at the same quality as no private rows
("Private top nodes for CBOW"). A model says which it trains like
(``_skip_gram_walks``): PV-DBOW alone walks once per word, from its document's row, and takes
CBOW's (2 workers: 0.85-0.90x the time with hierarchical softmax, 0.92-0.93x with negative
sampling, at the same classification accuracy; "Doc2Vec's PV-DBOW with CBOW's private rows").

:func:`hsw2v.running.trainer.trainer_settings` reads them when it builds a trainer; this module
imports nothing, so reading them closes no import circle.
"""

HOT_NODES = 63  # skip-gram
HOT_SYNC = 100  # trained centre words between two syncs of the private rows (skip-gram)
HOT_NODES_CBOW = 255
HOT_SYNC_CBOW = 1000
HOT_VISITS = 2**30  # a private row is synced alone after this many visits (centre words)
HOT_VISITS_CBOW = 2**30
# How a job's change of its private rows goes back, with T threads: "sum" adds the whole
# change, "mean" change / T (the shared row becomes an average of the jobs' copies), "capped"
# change x min(1, HOT_MERGE_THREADS / T): as "sum" up to HOT_MERGE_THREADS threads, and beyond
# them the hottest rows still move by at most HOT_MERGE_THREADS jobs' worth per sync.
# With "sum" the hottest rows take T steps computed from the same stale value: on 16 cores it
# made the weights NaN when synced every 300 centre words (every seed) and lost a point of
# analogy accuracy at every 100, where "mean" kept one worker's accuracy (13.39 % against
# 13.47 %, 3 seeds); with 2 workers "sum" measured a little better than "mean" (analogy 0.2
# point, wordsim 0.01, 3 seeds) (benchmarks/RESULTS.md, "16 cores again"). "capped" keeps the
# 2-worker training as it was and bounds the step at any T.
HOT_MERGE = "capped"
HOT_MERGE_THREADS = 2

# Negative sampling with several threads: each job trains a private copy of the syn1neg rows
# of the HOT_WORDS most frequent words (every thread draws them as negatives), synced with
# the private inner nodes (benchmarks/RESULTS.md, "Negative sampling as fast as hierarchical
# softmax").
HOT_WORDS = 64

# CBOW with shared negatives: CBOW_SHARED_RUN centre words share one set of negatives, each
# CBOW_SHARED_STRIDE centres after the last (0: 2 x window + 1, so that their windows do not
# overlap) (benchmarks/RESULTS.md, "Shared negatives for CBOW").
CBOW_SHARED_RUN = 4
CBOW_SHARED_STRIDE = 0
