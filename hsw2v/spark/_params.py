"""The Params of :class:`hsw2v.spark.Word2Vec` and its model, and their input column's check."""

from __future__ import annotations

from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import HasInputCol, HasMaxIter, HasOutputCol, HasSeed, HasStepSize
from pyspark.sql.types import ArrayType, StringType


def _param(name: str, doc: str, convert) -> Param:
    return Param(Params._dummy(), name, doc, typeConverter=convert)


_int, _float, _str = TypeConverters.toInt, TypeConverters.toFloat, TypeConverters.toString


class _Word2VecParams(HasInputCol, HasOutputCol, HasMaxIter, HasStepSize, HasSeed):
    """The parameters of the estimator and its model: MLlib's Word2Vec names and meanings,
    plus gensim's names for what MLlib lacks."""

    vectorSize = _param(
        "vectorSize", "the dimension of the word vectors (gensim: vector_size)", _int
    )
    windowSize = _param(
        "windowSize", "the largest distance between a word and a context word (gensim: window)",
        _int,
    )  # fmt: skip
    minCount = _param(
        "minCount",
        "the least number of times a word must occur to be in the vocabulary (gensim: min_count)",
        _int,
    )
    numPartitions = _param(
        "numPartitions",
        "the number of partitions (shards) that train in parallel, each its own copy of the "
        "model, at most the cluster's task slots; the input is joined or cut, in order, into "
        "them",
        _int,
    )
    maxSentenceLength = _param(
        "maxSentenceLength",
        "rows longer than this many words are cut into sentences of at most this many",
        _int,
    )
    sg = _param("sg", "1: skip-gram (MLlib's only model), 0: CBOW (gensim's sg)", _int)
    hs = _param("hs", "1: hierarchical softmax (MLlib's only objective), 0: none", _int)
    negative = _param("negative", "negative samples per word (0: none; gensim's negative)", _int)
    sample = _param(
        "sample",
        "the threshold for downsampling frequent words (0: none, as MLlib; gensim's sample)",
        _float,
    )
    workers = _param(
        "workers",
        "threads per Spark task (gensim's workers); 1 trains each partition on one core",
        _int,
    )
    min_alpha = _param(
        "min_alpha", "the learning rate reached at the end of training (gensim's min_alpha)",
        _float,
    )  # fmt: skip
    ns_exponent = _param(
        "ns_exponent", "the exponent of the negative-sampling distribution (gensim's ns_exponent)",
        _float,
    )  # fmt: skip
    sync_every = _param(
        "sync_every",
        "corpus words (all partitions together) trained between two merges of the "
        "partitions; one partition trains each epoch in one round",
        _int,
    )
    merge = _param(
        "merge",
        "how the rows several partitions changed in a round are merged: hybrid (adasum "
        "on the input rows and on the output rows much of the round trained, the sum on "
        "the others), adasum, average (MLlib's rule) or sum",
        _str,
    )
    execution = _param(
        "execution",
        "how the fit runs on the cluster: 'stage' (one Spark stage whose tasks stay up from "
        "the first read of their partitions to the last round, exchanging each round with "
        "the driver; a task per partition, or per task slot where the cluster has fewer) or "
        "'jobs' (a Spark job per round)",
        _str,
    )

    def __init__(self, *args):
        super().__init__(*args)
        self._setDefault(
            vectorSize=100, windowSize=5, minCount=5, maxIter=1, stepSize=0.025, seed=1,
            numPartitions=1, maxSentenceLength=1000, outputCol="vector",
            sg=1, hs=1, negative=0, sample=0.0, workers=1, min_alpha=0.0001,
            ns_exponent=0.75, sync_every=1_000_000, merge="hybrid", execution="stage",
        )  # fmt: skip

    def word2vec_params(self) -> dict:
        """The :class:`hsw2v.Word2Vec` parameters these params give."""
        get = self.getOrDefault
        return {
            "vector_size": get("vectorSize"),
            "window": get("windowSize"),
            "min_count": get("minCount"),
            "epochs": get("maxIter"),
            "alpha": get("stepSize"),
            "seed": get("seed") & (2**64 - 1),  # a Spark seed is a signed long
            "sg": get("sg"),
            "hs": get("hs"),
            "negative": get("negative"),
            "sample": get("sample"),
            "workers": get("workers"),
            "min_alpha": get("min_alpha"),
            "ns_exponent": get("ns_exponent"),
        }

    # MLlib's getters
    def getVectorSize(self) -> int:
        return self.getOrDefault(self.vectorSize)

    def getWindowSize(self) -> int:
        return self.getOrDefault(self.windowSize)

    def getMinCount(self) -> int:
        return self.getOrDefault(self.minCount)

    def getNumPartitions(self) -> int:
        return self.getOrDefault(self.numPartitions)

    def getMaxSentenceLength(self) -> int:
        return self.getOrDefault(self.maxSentenceLength)


def sentences_of(dataset, column: str):
    """The DataFrame's ``column`` alone, after checking it is an ``array<string>`` (one
    sentence per row), or a clear error naming the column and its type."""
    fields = {f.name: f.dataType for f in dataset.schema.fields}
    if column not in fields:
        raise ValueError(
            f"inputCol {column!r} is not a column of the DataFrame (its columns: "
            f"{', '.join(fields) or 'none'})"
        )
    kind = fields[column]
    if not (isinstance(kind, ArrayType) and isinstance(kind.elementType, StringType)):
        raise TypeError(
            f"inputCol {column!r} must be an array<string> column (the words of one sentence "
            f"per row), but it is {kind.simpleString()}; split text first, e.g. with "
            "pyspark.ml.feature.Tokenizer or pyspark.sql.functions.split"
        )
    return dataset.select(column)
