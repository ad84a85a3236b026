"""``hsw2v.spark.Word2VecModel``: the fitted model, its queries and its files."""

from __future__ import annotations

import os

import numpy as np
from pyspark.ml import Model
from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.ml.util import DefaultParamsReader, DefaultParamsWriter, MLReader, MLWriter
from pyspark.sql import SparkSession
from pyspark.sql.functions import udf
from pyspark.sql.types import DoubleType, StringType, StructField, StructType

from hsw2v.spark._params import _Word2VecParams, sentences_of
from hsw2v.word2vec import Word2Vec as _LocalWord2Vec

WEIGHTS = "hsw2v-model"  # the hsw2v model file inside a saved model's directory


class Word2VecModel(Model, _Word2VecParams):
    """A fitted :class:`hsw2v.spark.Word2Vec`: MLlib's ``Word2VecModel`` methods over an
    :class:`hsw2v.Word2Vec` held by the driver (``to_word2vec()``; its vectors: ``wv``)."""

    def __init__(self, model: _LocalWord2Vec | None = None):
        super().__init__()
        self._model = model

    @property
    def wv(self):
        """The word vectors, an :class:`hsw2v.KeyedVectors` (gensim's queries)."""
        return self._model.wv

    def to_word2vec(self) -> _LocalWord2Vec:
        """The trained :class:`hsw2v.Word2Vec` (it can train on, save, convert to gensim)."""
        return self._model

    @property
    def distributed_report(self):
        """What the fit did (:class:`hsw2v._dist_core.DistributedReport`); None after load."""
        return getattr(self._model, "distributed_report", None)

    # ------------------------------------------------------------------ MLlib's queries
    def getVectors(self):
        """A DataFrame of ``word`` (string) and ``vector`` (pyspark.ml.linalg dense vector),
        one row per word of the vocabulary, most frequent first."""
        wv = self.wv
        rows = [(w, Vectors.dense(v.astype(np.float64))) for w, v in zip(wv.index_to_key, wv.vectors, strict=True)]  # fmt: skip
        schema = StructType([StructField("word", StringType()), StructField("vector", VectorUDT())])
        return _spark().createDataFrame(rows, schema)

    def findSynonymsArray(self, word, num: int) -> list[tuple[str, float]]:
        """The ``num`` words closest to ``word`` (a word, left out of its own answer, or a
        vector) by cosine similarity, as ``(word, similarity)`` pairs, closest first."""
        if isinstance(word, str):
            if word not in self.wv.key_to_index:
                raise KeyError(f"{word!r} is not in the vocabulary")
            found = self.wv.most_similar(word, topn=num)
        else:
            vector = np.asarray(word.toArray() if hasattr(word, "toArray") else word, np.float32)
            found = self.wv.similar_by_vector(vector, topn=num)
        return [(w, float(s)) for w, s in found]

    def findSynonyms(self, word, num: int):
        """:meth:`findSynonymsArray` as a DataFrame of ``word`` and ``similarity``."""
        schema = StructType(
            [StructField("word", StringType()), StructField("similarity", DoubleType())]
        )
        return _spark().createDataFrame(self.findSynonymsArray(word, num), schema)

    def _transform(self, dataset):
        """Each row's mean word vector in ``outputCol``, as MLlib: the sum of the vectors of
        its words in the vocabulary divided by all its words; an empty row gives zeros."""
        column = self.getInputCol()
        sentences_of(dataset, column)  # the column's checks
        wv = self.wv
        spark = dataset.sparkSession
        table = spark.sparkContext.broadcast(
            (dict(wv.key_to_index), np.asarray(wv.vectors, np.float64))
        )
        d = int(wv.vector_size)

        def mean(words):
            if not words:
                return Vectors.sparse(d, [], [])
            index, vectors = table.value
            ids = [index[w] for w in words if w in index]
            total = vectors[ids].sum(axis=0) if ids else np.zeros(d)
            return Vectors.dense(total / len(words))

        return dataset.withColumn(
            self.getOutputCol(), udf(mean, VectorUDT(), useArrow=False)(dataset[column])
        )

    # ------------------------------------------------------------------ files
    def write(self) -> MLWriter:
        """A writer: ``model.write().save(path)`` (or ``model.save(path)``)."""
        return _ModelWriter(self)

    def save(self, path: str) -> None:
        self.write().save(path)

    @classmethod
    def read(cls) -> MLReader:
        return _ModelReader(cls)

    @classmethod
    def load(cls, path: str) -> Word2VecModel:
        """A model written by :meth:`save` (see :func:`load_without_spark` for reading its
        weights without Spark)."""
        return cls.read().load(path)


def _spark() -> SparkSession:
    return SparkSession.builder.getOrCreate()


class _ModelWriter(MLWriter):
    """Writes Spark's params metadata (JSON, ``metadata/part-00000``) and the weights in hsw2v's
    pickle-free format (``hsw2v-model``) into the directory; local paths only."""

    def __init__(self, instance: Word2VecModel):
        super().__init__()
        self.instance = instance

    def saveImpl(self, path: str) -> None:
        DefaultParamsWriter.saveMetadata(self.instance, path, self.sparkSession)
        self.instance._model.save(os.path.join(path, WEIGHTS))


class _ModelReader(MLReader):
    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def load(self, path: str) -> Word2VecModel:
        metadata = DefaultParamsReader.loadMetadata(path, self.sparkSession)
        model = self.cls(_LocalWord2Vec.load(os.path.join(path, WEIGHTS)))
        DefaultParamsReader.getAndSetParams(model, metadata)
        model._resetUid(metadata["uid"])
        return model


def load_without_spark(path: str | os.PathLike) -> tuple[_LocalWord2Vec, dict]:
    """A saved model's :class:`hsw2v.Word2Vec` and its Spark params, read without Spark
    (plain files: the params are the JSON line of ``metadata/part-00000``).

    >>> model, params = load_without_spark("w2v.model")  # doctest: +SKIP
    >>> model.wv.most_similar("king")  # doctest: +SKIP
    """
    import glob
    import json

    [part] = sorted(glob.glob(os.path.join(os.fspath(path), "metadata", "part-*")))[:1]
    with open(part, encoding="utf-8") as f:
        metadata = json.loads(f.readline())
    params = {**metadata.get("defaultParamMap", {}), **metadata.get("paramMap", {})}
    return _LocalWord2Vec.load(os.path.join(os.fspath(path), WEIGHTS)), params
