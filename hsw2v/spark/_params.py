"""The Params of :class:`hsw2v.spark.Word2Vec` and its model, and their input column's check."""

from __future__ import annotations

from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import HasInputCol, HasMaxIter, HasOutputCol, HasSeed, HasStepSize
from pyspark.sql.types import ArrayType, StringType


class _Word2VecParams(HasInputCol, HasOutputCol, HasMaxIter, HasStepSize, HasSeed):
    """The parameters of the estimator and its model: MLlib's Word2Vec names and meanings,
    plus gensim's names for what MLlib lacks."""

    vectorSize = Param(
        Params._dummy(),
        "vectorSize",
        "the dimension of the word vectors (gensim: vector_size)",
        typeConverter=TypeConverters.toInt,
    )
    windowSize = Param(
        Params._dummy(),
        "windowSize",
        "the largest distance between a word and a context word (gensim: window)",
        typeConverter=TypeConverters.toInt,
    )
    minCount = Param(
        Params._dummy(),
        "minCount",
        "the least number of times a word must occur to be in the vocabulary (gensim: min_count)",
        typeConverter=TypeConverters.toInt,
    )
    numPartitions = Param(
        Params._dummy(),
        "numPartitions",
        "the number of partitions (shards) that train in parallel; the input is repartitioned "
        "to it",
        typeConverter=TypeConverters.toInt,
    )
    maxSentenceLength = Param(
        Params._dummy(),
        "maxSentenceLength",
        "rows longer than this many words are cut into sentences of at most this many",
        typeConverter=TypeConverters.toInt,
    )
    sg = Param(
        Params._dummy(), "sg", "1: skip-gram (MLlib's only model), 0: CBOW (gensim's sg)",
        typeConverter=TypeConverters.toInt,
    )  # fmt: skip
    hs = Param(
        Params._dummy(), "hs", "1: hierarchical softmax (MLlib's only objective), 0: none",
        typeConverter=TypeConverters.toInt,
    )  # fmt: skip
    negative = Param(
        Params._dummy(), "negative", "negative samples per word (0: none; gensim's negative)",
        typeConverter=TypeConverters.toInt,
    )  # fmt: skip
    sample = Param(
        Params._dummy(), "sample",
        "the threshold for downsampling frequent words (0: none, as MLlib; gensim's sample)",
        typeConverter=TypeConverters.toFloat,
    )  # fmt: skip
    workers = Param(
        Params._dummy(), "workers",
        "threads per Spark task (gensim's workers); 1 trains each partition on one core",
        typeConverter=TypeConverters.toInt,
    )  # fmt: skip
    min_alpha = Param(
        Params._dummy(), "min_alpha",
        "the learning rate reached at the end of training (gensim's min_alpha)",
        typeConverter=TypeConverters.toFloat,
    )  # fmt: skip
    ns_exponent = Param(
        Params._dummy(), "ns_exponent",
        "the exponent of the negative-sampling distribution (gensim's ns_exponent)",
        typeConverter=TypeConverters.toFloat,
    )  # fmt: skip
    sync_every = Param(
        Params._dummy(), "sync_every",
        "corpus words (all partitions together) trained between two merges of the "
        "partitions; one partition trains each epoch in one round",
        typeConverter=TypeConverters.toInt,
    )  # fmt: skip
    merge = Param(
        Params._dummy(), "merge",
        "how the rows several partitions changed in a round are merged: adasum, average "
        "(MLlib's rule) or sum",
        typeConverter=TypeConverters.toString,
    )  # fmt: skip

    def __init__(self, *args):
        super().__init__(*args)
        self._setDefault(
            vectorSize=100, windowSize=5, minCount=5, maxIter=1, stepSize=0.025, seed=1,
            numPartitions=1, maxSentenceLength=1000, outputCol="vector",
            sg=1, hs=1, negative=0, sample=0.0, workers=1, min_alpha=0.0001,
            ns_exponent=0.75, sync_every=1_000_000, merge="adasum",
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
