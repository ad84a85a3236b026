"""``hsw2v.spark.Word2Vec``: the pyspark.ml Estimator (see :mod:`hsw2v.spark`)."""

from __future__ import annotations

import logging
import math
import time
import uuid

from pyspark import StorageLevel
from pyspark.ml import Estimator
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable

from hsw2v import _dist_core as core  # the engine-free core, shared with Dask
from hsw2v import _dist_tasks as tasks
from hsw2v.spark._engine import (
    AS_JSON,
    SEPARATOR,
    PartitionCount,
    SparkEngine,
    encode_partition,
    lend,
    merge_partition_counts,
    plan_shards,
    row_of,
    scan_partition,
    task_error,
)
from hsw2v.spark._model import Word2VecModel
from hsw2v.spark._params import _Word2VecParams, sentences_of
from hsw2v.spark._stage import Stage, stage_tasks

logger = logging.getLogger(__name__)

SNAPSHOT_EVERY = 8  # rounds between two full snapshots of the model (broadcast once each)
MARK_EVERY = 10_000  # words between two places a partition can be cut into pieces
MAX_LENT_WORDS = 20_000_000  # words a balanced plan may move between tasks (via the driver)
EXECUTIONS = ("stage", "jobs")  # the execution param: see hsw2v.spark._stage


class Word2Vec(Estimator, _Word2VecParams, DefaultParamsReadable, DefaultParamsWritable):
    """Word2Vec on Spark with hsw2v's kernels: a drop-in for ``pyspark.ml.feature.Word2Vec``
    (see :mod:`hsw2v.spark`).

    Example (a local Spark session):

    >>> from pyspark.sql import SparkSession  # doctest: +SKIP
    >>> spark = SparkSession.builder.master("local[2]").getOrCreate()  # doctest: +SKIP
    >>> df = spark.createDataFrame([("a b c a b".split(),)] * 100, ["text"])  # doctest: +SKIP
    >>> model = Word2Vec(inputCol="text", vectorSize=8, minCount=1).fit(df)  # doctest: +SKIP
    >>> model.findSynonymsArray("a", 2)  # doctest: +SKIP
    """

    def __init__(self, **kwargs):
        super().__init__()
        self._set(**kwargs)

    def setParams(self, **kwargs) -> Word2Vec:
        return self._set(**kwargs)

    def _fit(self, dataset):
        column = self.getInputCol()
        frame = sentences_of(dataset, column)
        get = self.getOrDefault
        model = core.check_request(self.word2vec_params(), get("sync_every"), get("merge"), 1)
        n = get("numPartitions")
        if n < 1:
            raise ValueError(f"numPartitions must be a positive integer, got {n}")
        max_len = get("maxSentenceLength")
        if max_len < 1:
            raise ValueError(f"maxSentenceLength must be a positive integer, got {max_len}")
        if get("execution") not in EXECUTIONS:
            raise ValueError(
                f"execution must be one of {', '.join(map(repr, EXECUTIONS))}, "
                f"got {get('execution')!r}"
            )
        sc = dataset.sparkSession.sparkContext
        n = training_partitions(sc, n)
        # in the JVM, before the rows reach Python; fewer partitions are joined in order (the
        # corpus keeps its order, so one partition trains it as one machine does), more are
        # cut out of them in order (MLlib deals the rows out round-robin)
        have = frame.rdd.getNumPartitions()
        if have > n:
            frame = frame.coalesce(n)
        elif have < n:
            frame = split_in_order(frame, n)
        rdd = rows_to_python(frame, column)
        record = model.cache_words  # words a partition may hold to be recorded as it is read
        scan_args = (max_len, MARK_EVERY, record)
        train = dict(merge=get("merge"), snapshot_every=SNAPSHOT_EVERY)
        if get("execution") == "stage":
            # the whole fit as one Spark stage (hsw2v.spark._stage): each task counts its
            # partitions, keeps them, and trains their pieces at the driver's word
            with Stage(sc, rdd, n, scan_args) as stage:
                started = time.perf_counter()
                counts, shapes = stage.counts()
                if all(shapes[k][3] for k in range(n)):
                    pieces, spec = self._plan(model, counts, shapes, n, max_len)
                    _train(stage.engine(), model, pieces, spec, started, train)
                    return self._copyValues(Word2VecModel(model))
            logger.info("a partition is too large to keep in its task: a Spark job per round")
        scans = rdd.mapPartitionsWithIndex(
            lambda k, rows: [scan_partition(k, rows, *scan_args)]
        ).persist(StorageLevel.MEMORY_AND_DISK)
        encoded = None
        try:
            started = time.perf_counter()
            try:
                counted = scans.map(PartitionCount.of).treeReduce(
                    merge_partition_counts, depth=2
                )
            except Exception as exc:  # a task's error, after Spark's retries
                raise core.DistributedTrainingError(
                    f"counting the vocabulary failed in a Spark task: {task_error(exc)}"
                ) from exc
            pieces, spec = self._plan(model, counted.counts.ordered(), counted.shapes, n, max_len)
            # what the rounds' tasks read: the partitions' recordings, from which each task
            # cuts its own piece's jobs (design note of hsw2v.spark._engine), or (a partition
            # too large to record) every round's pieces encoded once from the rows
            source = scans
            if not all(counted.shapes[k][3] for k in range(n)):
                spec_b = sc.broadcast(spec)
                encoded = rdd.mapPartitionsWithIndex(
                    lambda k, rows: encode_partition(rows, spec_b.value, pieces[k])
                ).persist(StorageLevel.MEMORY_AND_DISK)
                encoded.count()
                scans.unpersist()
                spec_b.unpersist()
                source = encoded
            _train(SparkEngine(sc, source), model, pieces, spec, started, train)
        finally:
            scans.unpersist()
            if encoded is not None:
                encoded.unpersist()
        return self._copyValues(Word2VecModel(model))

    def _plan(self, model, counts: dict, shapes: dict, n: int, max_len: int):
        """Install the vocabulary of the merged counts (``counts``, in the corpus's first-seen
        order) on ``model`` (its tree and initial weights, as on one machine) and plan the
        run from the partitions' ``shapes``: each partition's pieces, one per round of an
        epoch, and the tasks' settings."""
        get = self.getOrDefault
        vocab, n_raw = tasks.vocabulary_task(counts, core.vocabulary_options(model, None))
        shapes = [shapes[k] for k in range(n)]
        words = sum(shape[0] for shape in shapes)
        core.install_vocabulary(model, vocab, n_raw, words, sum(shape[1] for shape in shapes))
        # one partition has no one to merge with: it trains each epoch in one round
        # (what the rounds would give, less a transfer and a merge each)
        n_rounds = 1 if n == 1 else max(1, math.ceil(words / get("sync_every")))
        # shards of equal words where the partitions differ (stretches lent between tasks
        # through the driver), which only recorded partitions can lend
        recorded = all(shape[3] for shape in shapes)
        pieces = plan_shards(shapes, n_rounds, MAX_LENT_WORDS if recorded else 0)
        lent = sum(b - a for shard in pieces for piece in shard for _, a, b in piece.borrowed())
        if lent:
            logger.info("shards of equal words: %i sentences lent between partitions", lent)
        spec = core.run_spec(
            model, uuid.uuid4().hex[:12], max_len, threads=get("workers"),
            delta_dtype="float16",  # half the bytes per round, quality unchanged
        )  # fmt: skip
        logger.info(
            "spark vocabulary: %i words kept of %i, %i raw words in %i partitions, "
            "cut in %i rounds' pieces",
            len(vocab.index_to_key), n_raw, words, n, n_rounds,
        )  # fmt: skip
        return pieces, spec


def _train(engine, model, pieces: list, spec, started: float, train: dict) -> None:
    """The rounds on ``engine``, after the stretches a balanced plan's pieces borrow are
    fetched (:func:`hsw2v.spark._engine.lend`; counted with the vocabulary's seconds, from
    ``started``)."""
    spec_h = engine.put(spec, "spec")
    lend(engine, pieces, spec_h)
    vocab_seconds = time.perf_counter() - started
    core.train_rounds(engine, model, pieces, spec, **train, vocab_seconds=vocab_seconds,
                      spec_handle=spec_h)  # fmt: skip


def training_partitions(sc, n: int) -> int:
    """How many partitions train, each its own copy of the model: ``numPartitions``, but
    never more than the cluster runs tasks at once (its task slots, as Spark counts them
    for a barrier stage; :func:`hsw2v.spark._stage.stage_tasks`).

    Copies beyond the task slots would train one after another, so they add no speed, only
    work: every copy more is one more delta to send and merge each round, and more copies
    want smaller rounds to keep the one-machine score (1 epoch of the benchmark corpus on two
    task slots: 4 copies 1.4-1.6x the time of 2; benchmarks/RESULTS.md, "hsw2v on Spark
    against MLlib"). The rows of the partitions beyond are joined in
    order into these, as fewer partitions than the DataFrame's are. The model then depends on
    the cluster's task slots where ``numPartitions`` exceeds them: a fit is reproducible for
    a given DataFrame, ``numPartitions`` and number of slots."""
    used = stage_tasks(sc, n)
    if used < n:
        logger.info(
            "numPartitions=%i but the cluster runs %i tasks at once: %i partitions train, "
            "each a copy of the model (more would run in turn, no faster, and merge worse)",
            n, used, used,
        )  # fmt: skip
    return used


def split_in_order(frame, n: int):
    """``frame``'s rows cut into ``n`` partitions of consecutive rows (about equal numbers of
    rows each), in the corpus's order: partition ``j`` holds the ``j``-th stretch of the
    corpus, each partition's rows in their order, the same in every fit.

    Consecutive stretches, not MLlib's round-robin: each partition's copy of the model then
    learns from its own part of the corpus, and the merge (by default adasum on the rows
    where the copies' changes collide most) adds up copies that learnt different things but
    counts copies that learnt the same thing once, so copies dealt the same mix of every part of the corpus learn less between them (3 epochs of the
    benchmark corpus, 4 executors, 4 partitions made from 2: 12.04 % analogy dealt out
    round-robin, 14.55 % in stretches, 15.20 % on one machine; benchmarks/RESULTS.md).

    A row's place in the corpus is its partition's rows before it plus its rank in its
    partition (``monotonically_increasing_id``: the partition in the upper 31 bits, the rank
    in the lower 33); the rows travel by hash partitioning on a key chosen per target
    partition (:func:`partition_keys`), and are put back in order within each partition (a
    partition receives its rows from several tasks in whatever order they arrive)."""
    from pyspark.sql import functions as F

    order, key = _free_name(frame, "__hsw2v_row"), _free_name(frame, "__hsw2v_key")
    numbered = frame.withColumn(order, F.monotonically_increasing_id())
    part = F.shiftright(F.col(order), 33).cast("int")
    counts = dict(numbered.groupBy(part.alias("p")).count().collect())
    before, total = [], 0  # rows before each partition that holds any (ids up to the last)
    for k in range(max(counts, default=-1) + 1):
        before.append(total)
        total += counts.get(k, 0)
    if total == 0:
        return frame
    # (the try_ forms and the bound: a frame that is not the same when read again, which
    # Spark's own zipWithIndex does not allow either, moves rows between partitions; no row
    # is lost and nothing fails)
    rank = F.try_element_at(F.array(*(F.lit(b).cast("long") for b in before)), part + 1)
    rank = rank + F.col(order).bitwiseAND(F.lit((1 << 33) - 1))
    target = F.least((rank * F.lit(n) / F.lit(total)).cast("int"), F.lit(n - 1))  # floor
    keys = F.array(*(F.lit(k) for k in partition_keys(frame.sparkSession, n)))
    numbered = numbered.withColumn(key, F.try_element_at(keys, target + 1))
    return numbered.repartition(n, key).sortWithinPartitions(order).drop(order, key)


def partition_keys(spark, n: int) -> list:
    """For each ``j < n``, an int key that Spark's hash partitioning into ``n`` partitions
    sends to partition ``j`` (``pmod(hash(key), n)``, Murmur3 with seed 42, the expression
    ``repartition(n, col)`` uses), the smallest such key."""
    from pyspark.sql import functions as F

    tried = 0
    keys: dict = {}
    while len(keys) < n:
        ks = spark.range(tried, tried + 64 * n).select(F.col("id").cast("int").alias("k"))
        for k, j in ks.select("k", F.pmod(F.hash("k"), F.lit(n))).collect():
            keys.setdefault(j, k)
        tried += 64 * n
    return [keys[j] for j in range(n)]


def _free_name(frame, name: str) -> str:
    while name in frame.columns:
        name += "_"
    return name


def rows_to_python(frame, column: str):
    """The RDD of the rows of ``frame``'s ``array<string>`` column, as :func:`words_of` reads
    them.

    A row's words travel to Python joined into one string (about three times faster than
    Spark's conversion of an array; 1.0-1.2 s against 3.4 s for the 4.5M words of the
    benchmark corpus on two executors), counted there without splitting it into str objects
    (:func:`hsw2v.spark._engine.scan_partition`). The strings travel as UTF-8, one length
    and its bytes each (a Dataset of strings, as ``DataFrame.toJSON`` sends its lines), and
    are counted as those bytes (not decoded into str and encoded back), not as pickled
    rows: 0.6-1.0 s against 1.0-1.6 s per task for that corpus in two partitions. A row with a word that holds the separator, a newline or
    :data:`~hsw2v.spark._engine.AS_JSON`, or is empty or null, travels as
    :data:`~hsw2v.spark._engine.AS_JSON` and its words in JSON, so every row's words arrive
    exactly (a null word is refused when the rows are counted); a null or empty row is an
    empty sentence (which trains nothing)."""
    from pyspark.rdd import RDD
    from pyspark.serializers import UTF8Deserializer
    from pyspark.sql import functions as F

    def unjoinable(w):
        return w.isNull() | (w == "") | w.contains(SEPARATOR) | w.contains("\n") | w.contains(AS_JSON)

    words = F.col(column)
    as_json = F.concat(F.lit(AS_JSON), F.to_json(words))
    line = F.when(F.exists(words, unjoinable), as_json).otherwise(F.concat_ws(SEPARATOR, words))
    jvm = frame.sparkSession.sparkContext._jvm
    strings = getattr(frame.select(line)._jdf, "as")(jvm.org.apache.spark.sql.Encoders.STRING())
    # UTF-8 as it came: the counting reads bytes (not decoded to str and encoded back)
    rdd = RDD(strings.toJavaRDD(), frame.sparkSession.sparkContext, UTF8Deserializer(False))
    return rdd.map(row_of)  # in _engine: a task does not import this module
