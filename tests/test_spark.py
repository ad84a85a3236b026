"""hsw2v.spark in Spark's local mode: the estimator's contract, its files, the vocabulary and
tree against one machine, training, and the errors."""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest
from conftest import cluster_recovery, planted_corpus

pytest.importorskip("pyspark")
if not shutil.which("java"):
    pytest.skip("Spark needs a Java runtime: no Java runtime found (java)", allow_module_level=True)

from pyspark.ml.linalg import Vectors  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from hsw2v import Word2Vec as LocalWord2Vec  # noqa: E402
from hsw2v import _dist_tasks  # noqa: E402
from hsw2v._dist_core import check_request  # noqa: E402
from hsw2v.distributed import DistributedTrainingError  # noqa: E402
from hsw2v.spark import Word2Vec, Word2VecModel, _estimator, load_without_spark  # noqa: E402

MLLIB_DEFAULTS = dict(vectorSize=100, windowSize=5, minCount=5, maxIter=1, stepSize=0.025,
                      numPartitions=1, maxSentenceLength=1000)  # fmt: skip


@pytest.fixture(scope="module")
def spark():
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hsw2v-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def frame(spark, sentences, partitions=2):
    rdd = spark.sparkContext.parallelize([(s,) for s in sentences], partitions)
    return spark.createDataFrame(rdd, "text array<string>")


@pytest.fixture(scope="module")
def planted(spark):
    """One fit on planted clusters, shared by the tests that read a trained model."""
    sentences, clusters = planted_corpus(n_sentences=2000, seed=4)
    estimator = Word2Vec(inputCol="text", vectorSize=24, windowSize=4, minCount=1, maxIter=3,
                         numPartitions=2, sync_every=5000, seed=3)  # fmt: skip
    return estimator.fit(frame(spark, sentences)), clusters, sentences


# ------------------------------------------------------------------ the params' contract
def test_params_have_mllibs_names_defaults_and_meaning(spark):
    from pyspark.ml.feature import Word2Vec as MLlibWord2Vec

    ours, theirs = Word2Vec(), MLlibWord2Vec()
    for name, value in MLLIB_DEFAULTS.items():
        assert ours.getOrDefault(name) == value == theirs.getOrDefault(name), name
    shared = {p.name for p in theirs.params} - {"seed"}  # MLlib's seed: a hash of its class name
    assert shared <= {p.name for p in ours.params}
    explained = ours.explainParams()
    for name in (*MLLIB_DEFAULTS, "inputCol", "outputCol", "sg", "hs", "sync_every", "merge"):
        assert f"{name}:" in explained, name
    # MLlib's getters and a gensim parameter, set and copied
    est = Word2Vec(inputCol="text", vectorSize=16, negative=3)
    assert (est.getVectorSize(), est.getInputCol(), est.getOrDefault("negative")) == (16, "text", 3)
    copy = est.copy({est.vectorSize: 8})
    assert (copy.getVectorSize(), est.getVectorSize(), copy.getInputCol()) == (8, 16, "text")
    assert copy.uid == est.uid
    assert est.word2vec_params()["vector_size"] == 16
    assert Word2Vec(seed=-5).word2vec_params()["seed"] == 2**64 - 5


def test_estimator_save_and_load(spark, tmp_path):
    est = Word2Vec(inputCol="words", vectorSize=12, merge="average", sample=1e-3)
    est.save(str(tmp_path / "est"))
    again = Word2Vec.load(str(tmp_path / "est"))
    assert again.uid == est.uid
    assert again.extractParamMap() == {again.getParam(p.name): v
                                       for p, v in est.extractParamMap().items()}  # fmt: skip


# ------------------------------------------------------------------ one machine's vocabulary
def too_large_to_record(monkeypatch):
    """Every fit from here on takes its partitions as too large to record as they are
    counted (``cache_words`` 10), so the rounds' pieces are encoded from the rows again."""
    from hsw2v import _dist_core

    def small_cache(*args):
        model = check_request(*args)
        model.cache_words = 10
        return model

    monkeypatch.setattr(_dist_core, "check_request", small_cache)


@pytest.mark.parametrize("recorded", [True, False])
def test_vocabulary_and_tree_equal_one_machine(spark, monkeypatch, recorded):
    if not recorded:  # partitions too large to record as they are counted: read again
        too_large_to_record(monkeypatch)
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(40)]
    sentences = [[str(w) for w in rng.choice(words, size=rng.integers(0, 12))] for _ in range(700)]
    params = dict(vector_size=8, min_count=3, sample=1e-2, epochs=1, seed=1)
    single = LocalWord2Vec(**params, workers=1)
    single.build_vocab([s[i : i + 5] for s in sentences for i in range(0, len(s), 5)])
    est = Word2Vec(inputCol="text", vectorSize=8, minCount=3, sample=1e-2, seed=1,
                   maxSentenceLength=5, numPartitions=3, sync_every=1000, workers=2)  # fmt: skip
    # 5 joined in order into 2: numPartitions=3, but the local[2] master has two task slots
    model = est.fit(frame(spark, sentences, partitions=5)).to_word2vec()
    assert model.wv.index_to_key == single.wv.index_to_key
    for name in ("count", "sample_int"):
        assert (model.wv.expandos[name] == single.wv.expandos[name]).all(), name
    assert (model.tree.codes == single.tree.codes).all()
    assert (model.tree.points == single.tree.points).all()
    assert model.corpus_count == single.corpus_count
    assert model.corpus_total_words == single.corpus_total_words
    assert model.distributed_report.raw_words == single.corpus_total_words
    assert model.distributed_report.shards == 2
    assert np.isfinite(model.wv.vectors).all()  # trained by two threads per task


def test_pieces_cut_from_the_recording_train_as_pieces_read_from_the_rows(spark, monkeypatch):
    """The rounds' tasks cut their pieces from the partitions' recordings; a partition too
    large to record is read again from its rows. Both give the same jobs, so the same
    weights bit for bit (one thread per task). (Recorded partitions of unequal words are
    balanced by lending stretches, which partitions read again cannot lend: here both
    train the partitions as they are.)"""
    monkeypatch.setattr(_estimator, "MAX_LENT_WORDS", 0)
    sentences, _ = planted_corpus(n_sentences=600, seed=8)
    df = frame(spark, sentences, partitions=3)
    params = dict(inputCol="text", vectorSize=12, minCount=1, maxIter=2, numPartitions=2,
                  sync_every=2000, seed=5, workers=1)  # fmt: skip
    recorded = Word2Vec(**params).fit(df).to_word2vec()
    too_large_to_record(monkeypatch)
    read = Word2Vec(**params).fit(df).to_word2vec()
    assert recorded.distributed_report.rounds == read.distributed_report.rounds > 2
    assert np.array_equal(recorded.wv.vectors, read.wv.vectors)
    assert np.array_equal(recorded.syn1, read.syn1)


def test_more_partitions_than_the_frame_has_fit_the_same_model_twice(spark):
    """Rows dealt out to more partitions than the DataFrame has come back in the corpus's
    order, so the vocabulary's ties and the pieces, hence the model, are the same in every
    fit. (A local master's shuffle reads its blocks in the tasks' order anyway; on separate
    executors it hands them over as they arrive, which ``benchmarks/spark_bench.py
    --repeat`` checks on ``local-cluster``.)"""
    rng = np.random.default_rng(9)
    words = [f"w{i}" for i in range(30)]
    sentences = [[str(w) for w in rng.choice(words, size=8)] for _ in range(400)]
    df = frame(spark, sentences, partitions=1)
    params = dict(inputCol="text", vectorSize=8, minCount=1, maxIter=1, numPartitions=2,
                  sync_every=1600, seed=2, workers=1)  # fmt: skip
    first, second = (Word2Vec(**params).fit(df).to_word2vec() for _ in range(2))
    assert first.wv.index_to_key == second.wv.index_to_key
    assert first.distributed_report.shards == 2 and first.distributed_report.rounds == 2
    assert np.array_equal(first.wv.vectors, second.wv.vectors)


def test_more_partitions_than_the_frame_has_are_cut_from_it_in_order(spark):
    """Each partition is a stretch of consecutive rows, in order, of about equal numbers
    of rows (so each copy learns from its own part of the corpus, not MLlib's round-robin
    mix), whatever the frame's own partitions."""
    for have, n in ((1, 3), (2, 5), (3, 4)):
        df = frame(spark, [[f"s{i}", "x"] for i in range(103)], partitions=have)
        parts = _estimator.split_in_order(df, n).rdd.glom().collect()
        assert len(parts) == n
        assert [row.text[0] for part in parts for row in part] == [f"s{i}" for i in range(103)]
        assert max(map(len, parts)) - min(map(len, parts)) <= 1, (have, n)


def test_rows_reach_python_exactly(spark):
    """Every row's words arrive exactly (joined, or through JSON where a word is empty or
    holds the separator, a newline or the JSON mark), and the partition's counting in C
    equals scan_counts'."""
    from hsw2v.spark._engine import SEPARATOR, chunked, scan_partition, words_of
    from hsw2v.spark._estimator import rows_to_python
    from hsw2v.vocab import scan_counts

    rows = [
        ["a", "b"], [], None, ["x" + SEPARATOR + "y", "z"], ["", "c"], ["d"],
        ["two words", "line\nbreak", "é"], ["", ""], ["a", "b", "c", "a", "e"], [""],
        ["\x1estarts", "x"], ['"quoted"', "back\\slash", "", "é\ttab"], ["tab\tin", "a"],
        ["ends\x1e", "b"], ["mid\x1fdle"], ["tail\n"],
    ]  # fmt: skip
    df = spark.createDataFrame([(r,) for r in rows], "text array<string>")
    arrived = rows_to_python(df, "text").collect()
    assert [words_of(r) for r in arrived] == [r or [] for r in rows]
    assert sum(type(r) is list for r in arrived) == 10  # the ten that cannot be joined
    scan = scan_partition(0, iter(arrived), 2, 3, 100)
    counts, words, sentences, recording = scan_counts(
        chunked([r or [] for r in rows], 2), progress_per=0, record_tokens=100
    )
    assert list(scan.counts.items()) == list(counts.items())
    assert (scan.words, scan.sentences) == (words, sentences)
    assert scan.recording.ids.tolist() == recording.ids.tolist()
    assert scan.recording.lengths.tolist() == recording.lengths.tolist()


# ------------------------------------------------------------------ a trained model
def test_training_gives_finite_vectors_and_the_planted_neighbours(planted):
    model, clusters, _ = planted
    assert np.isfinite(model.wv.vectors).all()
    assert cluster_recovery(model.wv, clusters) >= 0.95
    report = model.distributed_report
    assert report.shards == 2 and report.epochs == 3 and report.rounds == 3 * 4
    assert 0 < report.bytes_in_per_round and report.raw_words == 3 * 20000
    assert 0 < report.merge_seconds < report.seconds  # the merges' own time, on the driver


def test_mllibs_queries(planted, spark):
    model, clusters, sentences = planted
    word = clusters[0][0]
    pairs = model.findSynonymsArray(word, 3)
    assert [w for w, _ in pairs] == [w for w, _ in model.wv.most_similar(word, topn=3)]
    assert word not in [w for w, _ in pairs]
    table = model.findSynonyms(word, 3)
    assert table.columns == ["word", "similarity"]
    assert [tuple(r) for r in table.collect()] == pytest.approx(pairs)
    by_vector = model.findSynonymsArray(Vectors.dense(model.wv[word]), 1)
    assert by_vector[0][0] == word
    vectors = model.getVectors()
    assert vectors.columns == ["word", "vector"] and vectors.count() == len(model.wv)
    row = vectors.filter(vectors.word == word).first()
    assert np.allclose(row.vector.toArray(), model.wv[word])
    # transform: the mean of the words' vectors over all the row's words (as MLlib)
    docs = spark.createDataFrame([([word, "never-seen"],), ([],)], "text array<string>")
    out = model.transform(docs).collect()
    assert np.allclose(out[0].vector.toArray(), model.wv[word] / 2, atol=1e-6)
    assert out[1].vector.toArray().tolist() == [0.0] * model.wv.vector_size


def test_model_save_and_load(planted, tmp_path):
    model, _, _ = planted
    path = str(tmp_path / "model")
    model.write().save(path)
    again = Word2VecModel.load(path)
    assert again.uid == model.uid and again.getInputCol() == "text"
    assert again.getVectorSize() == 24
    assert again.wv.index_to_key == model.wv.index_to_key
    assert (again.wv.vectors == model.wv.vectors).all()
    # without Spark: the weights are an hsw2v model file, the params one JSON line
    local, params = load_without_spark(path)
    assert (local.wv.vectors == model.wv.vectors).all()
    assert params["vectorSize"] == 24 and params["inputCol"] == "text"
    assert isinstance(model.to_word2vec(), LocalWord2Vec)


# ------------------------------------------------------------------ errors
def test_a_column_that_is_not_array_of_strings_is_refused(spark):
    df = spark.createDataFrame([("a b c",)], ["text"])
    with pytest.raises(TypeError, match=r"inputCol 'text' must be an array<string>.*it is string"):
        Word2Vec(inputCol="text", minCount=1).fit(df)
    with pytest.raises(ValueError, match=r"'nope' is not a column.*text"):
        Word2Vec(inputCol="nope").fit(df)


@pytest.mark.parametrize("words", [["c", None, "d"], ["c", None, "x\x1fy"], ["c", None, ""]])
def test_a_null_word_is_refused_with_a_clear_error(spark, words):
    """Also beside a word that holds the separator (its two halves would stand in for the
    null word's place if the row were joined) or an empty one."""
    df = spark.createDataFrame([(["a", "b"],), (words,)], "text array<string>")
    with pytest.raises(
        DistributedTrainingError,
        match=r"counting the vocabulary failed in a Spark task: TypeError: row 1 of "
        r"partition 0 holds a null word \(position 1\): drop null words first",
    ):
        Word2Vec(inputCol="text", minCount=1, numPartitions=1).fit(df)


def failing_train_task(*args, **kwargs):
    raise RuntimeError("planted failure in a training task")


def dying_train_task(*args, **kwargs):
    """Round 2's task of shard 1 dies (its Python process ends, as when an executor is
    lost); every other call trains (in the executor's Python worker, where ``train_task``
    is not patched)."""
    import os

    from hsw2v import _dist_tasks

    if kwargs["shard"] == 1 and kwargs["this_round"] == 1:
        os._exit(3)
    return _dist_tasks.train_task(*args, **kwargs)


@pytest.fixture
def by_value():
    """This module's functions shipped to the executors by value (their Python workers
    cannot import a test module)."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.parametrize("execution", ["stage", "jobs"])
def test_a_failing_task_stops_the_fit_with_a_clear_error(spark, monkeypatch, by_value, execution):
    monkeypatch.setattr(_dist_tasks, "train_task", failing_train_task)
    est = Word2Vec(inputCol="text", vectorSize=8, minCount=1, numPartitions=2, execution=execution)
    with pytest.raises(
        DistributedTrainingError, match="training round 1 failed.*RuntimeError: planted failure"
    ):
        est.fit(frame(spark, [["a", "b", "c"]] * 50))


def test_a_task_lost_mid_fit_stops_it_with_a_clear_error_and_the_next_fit_trains(
    spark, monkeypatch, by_value
):
    """A task whose process dies in round 2: the fit stops naming the round and the lost
    partition (no model, no hang), and the same session fits again."""
    monkeypatch.setattr(_dist_tasks, "train_task", dying_train_task)
    sentences, _ = planted_corpus(n_sentences=300, seed=2)
    df = frame(spark, sentences)
    params = dict(inputCol="text", vectorSize=8, minCount=1, numPartitions=2, sync_every=1000,
                  execution="stage")  # fmt: skip
    with pytest.raises(
        DistributedTrainingError,
        match=r"training round 2 failed in a Spark task: the task of partition 1 was lost",
    ):
        Word2Vec(**params).fit(df)
    monkeypatch.undo()
    model = Word2Vec(**params).fit(df)
    assert model.distributed_report.rounds == 3 and np.isfinite(model.wv.vectors).all()


def test_no_more_partitions_train_than_the_cluster_has_task_slots(spark):
    """numPartitions beyond the task slots (two on local[2]) would train copies one after
    another, each one more delta to merge: the fit trains one copy per slot, the model that
    numPartitions=2 gives, bit for bit (one thread per task), with either execution."""
    sentences, _ = planted_corpus(n_sentences=500, seed=11)
    df = frame(spark, sentences, partitions=2)
    params = dict(inputCol="text", vectorSize=8, minCount=1, maxIter=1, sync_every=1000,
                  seed=4, workers=1)  # fmt: skip
    two = Word2Vec(**params, numPartitions=2).fit(df).to_word2vec()
    for execution in ("stage", "jobs"):
        eight = Word2Vec(**params, numPartitions=8, execution=execution).fit(df)
        assert eight.getOrDefault("numPartitions") == 8  # the param as the user set it
        eight = eight.to_word2vec()
        assert eight.distributed_report.shards == two.distributed_report.shards == 2
        assert eight.distributed_report.rounds == two.distributed_report.rounds > 2
        assert np.array_equal(eight.wv.vectors, two.wv.vectors), execution
        assert np.array_equal(eight.syn1, two.syn1), execution


# ------------------------------------------------------------------ one stage or a job a round
def test_one_stage_and_a_job_per_round_train_the_same_weights(spark, monkeypatch):
    """The fit as one stage (tasks that stay up and exchange each round with the driver) and
    as a Spark job per round merge the same results: the same weights bit for bit with one
    thread per task: on a frame joined into one partition, on one dealt out to more
    partitions than it has, and with more partitions than the cluster's two task slots (as
    where slots were lost after the partitions were planned: two tasks, one serving two
    partitions in turn)."""
    sentences, _ = planted_corpus(n_sentences=800, seed=6)
    for have, n in ((3, 1), (1, 2), (2, 3)):
        if n > 2:  # plan more partitions than the slots: the stage's tasks serve several
            monkeypatch.setattr(_estimator, "training_partitions", lambda sc, n: n)
        df = frame(spark, sentences, partitions=have)
        params = dict(inputCol="text", vectorSize=12, minCount=1, maxIter=2, numPartitions=n,
                      sync_every=1000, seed=7, workers=1)  # fmt: skip
        staged = Word2Vec(**params, execution="stage").fit(df).to_word2vec()
        jobs = Word2Vec(**params, execution="jobs").fit(df).to_word2vec()
        assert staged.distributed_report.rounds == jobs.distributed_report.rounds
        # 8,000 words an epoch: 8 rounds each, two snapshots (every 8 rounds) on the way
        assert staged.distributed_report.rounds == (2 if n == 1 else 2 * 8)
        assert staged.distributed_report.shards == jobs.distributed_report.shards == n
        assert staged.wv.index_to_key == jobs.wv.index_to_key
        assert np.array_equal(staged.wv.vectors, jobs.wv.vectors), (have, n)
        assert np.array_equal(staged.syn1, jobs.syn1), (have, n)


def test_partitions_of_unequal_words_train_equal_shards_the_same_either_way(
    spark, monkeypatch, caplog
):
    """Partitions of 3,600 and 900 words train shards of about 2,250 each: the first ends at
    its first place to cut past 2,250 words (marks every 5 sentences of 12 words: sentence
    190, 2,280 words), and its last 110 sentences are lent to the second's task through the
    driver. The weights are the same bit for bit whether the fit runs as one stage or as a
    job per round."""
    monkeypatch.setattr(_estimator, "MARK_EVERY", 50)  # places to cut (the default: 10,000)
    rng = np.random.default_rng(12)
    words = [f"w{i}" for i in range(30)]
    sentences = [[str(w) for w in rng.choice(words, size=12 if i < 300 else 3)]
                 for i in range(600)]  # fmt: skip
    df = frame(spark, sentences, partitions=2)
    params = dict(inputCol="text", vectorSize=8, minCount=1, maxIter=2, numPartitions=2,
                  sync_every=1000, seed=3, workers=1)  # fmt: skip
    caplog.set_level("INFO", logger="hsw2v.spark._estimator")
    staged = Word2Vec(**params, execution="stage").fit(df).to_word2vec()
    assert "110 sentences lent between partitions" in caplog.text
    jobs = Word2Vec(**params, execution="jobs").fit(df).to_word2vec()
    assert staged.distributed_report.rounds == jobs.distributed_report.rounds == 2 * 5
    assert staged.distributed_report.raw_words == 2 * 4500
    assert np.array_equal(staged.wv.vectors, jobs.wv.vectors)
    assert np.array_equal(staged.syn1, jobs.syn1)


def test_execution_is_checked(spark):
    df = frame(spark, [["a", "b"]] * 10)
    with pytest.raises(ValueError, match=r"execution must be one of 'stage', 'jobs', got 'barrier'"):
        Word2Vec(inputCol="text", minCount=1, execution="barrier").fit(df)


def test_stage_messages_carry_arrays_apart_and_back_exactly():
    """The stage's wire (``_stage.send`` / ``receive_packed``): several packed values in one
    message, their arrays sent from their own memory and unpickled over the bytes read, every
    dtype, shape and layout back as it was (a non-contiguous array travels inside its pickle)."""
    import socket

    from hsw2v.spark import _stage

    rng = np.random.default_rng(0)
    first = {
        "deltas": rng.normal(size=(7, 5)).astype(np.float16),
        "rows": np.arange(7, dtype=np.int32),
        "empty": np.zeros((0, 5), np.float32),
        "strided": rng.normal(size=(6, 4))[:, ::2],
        "fortran": np.asfortranarray(rng.normal(size=(3, 4)).astype(np.float32)),
        "text": "round 3",
    }
    second = [rng.normal(size=300_000).astype(np.float32)]  # larger than a socket's buffer
    left, right = socket.socketpair()
    try:
        import threading

        sender = threading.Thread(
            target=_stage.send,
            args=(left, _stage.pack(first), _stage.pack(second), _stage.pack(("stop",))),
        )
        sender.start()
        values = _stage.receive_packed(right)
        sender.join()
    finally:
        left.close()
        right.close()
    assert len(values) == 3
    assert len(values[0].buffers) >= 3  # the contiguous arrays travelled apart
    got, got_second, stop = (_stage.unpack(v) for v in values)
    assert stop == ("stop",)
    assert got["text"] == "round 3"
    for key in ("deltas", "rows", "empty", "strided", "fortran"):
        assert got[key].dtype == first[key].dtype and got[key].shape == first[key].shape
        assert np.array_equal(got[key], first[key]) and got[key].tobytes() == first[key].tobytes()
    assert got_second[0].tobytes() == second[0].tobytes()
