"""Word2Vec on Apache Spark: a pyspark.ml Estimator and Model trained with hsw2v's kernels.

A drop-in for ``pyspark.ml.feature.Word2Vec`` (MLlib's): the same Params (``inputCol``,
``outputCol``, ``vectorSize``, ``windowSize``, ``minCount``, ``maxIter``, ``stepSize``,
``numPartitions``, ``maxSentenceLength``, ``seed``) with the same meanings, plus gensim's names
for what MLlib lacks (``sg``, ``hs``, ``negative``, ``sample``, ``workers``, ``min_alpha``,
``ns_exponent``), the distributed core's ``sync_every`` and ``merge``, and ``execution``.
``fit(df)`` trains on an ``array<string>`` column where the data lives, as one Spark stage
whose tasks stay up for the whole fit (:mod:`hsw2v.spark._stage`): each task counts its
partition and keeps it, the driver builds the vocabulary, the tree and the initial weights
once, and in each round every task trains its partition's next piece with the nogil kernel
and sends back only the rows it changed, merged on the driver by the rules of
:mod:`hsw2v._dist_tasks` (:mod:`hsw2v._dist_core`, the engine-free core shared with the Dask
trainer :mod:`hsw2v.distributed`). ``execution="jobs"`` runs each round as a Spark job
instead (:mod:`hsw2v.spark._engine`).

The model (:class:`Word2VecModel`) has MLlib's ``getVectors``, ``findSynonyms``,
``findSynonymsArray`` and ``transform``, and hsw2v's ``wv`` and ``to_word2vec()``. Its files
(``save``/``load``) hold Spark's params metadata (JSON) and the weights in hsw2v's pickle-free
format: :func:`load_without_spark` reads them as an :class:`hsw2v.Word2Vec`.

pyspark is an optional dependency: ``pip install "pyspark>=3.5"``, or from a source checkout
``pip install ".[spark]"``; Spark needs a Java runtime. See docs/spark.md.
"""

__all__ = ["Word2Vec", "Word2VecModel", "load_without_spark"]


def __getattr__(name: str):
    # imported at the first use: an executor's task imports hsw2v.spark._engine, and with it
    # this package, without pyspark.ml (a quarter of a second for every Python worker)
    if name == "Word2Vec":
        from hsw2v.spark._estimator import Word2Vec

        return Word2Vec
    if name in ("Word2VecModel", "load_without_spark"):
        from hsw2v.spark import _model

        return getattr(_model, name)
    raise AttributeError(f"module 'hsw2v.spark' has no attribute {name!r}")
