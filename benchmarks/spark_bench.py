"""MLlib's Word2Vec against hsw2v.spark on one corpus: fit seconds, words/s, analogy, WordSim-353.

Every run is one fresh process (a fresh Spark application): the corpus is read with
``spark.read.text``, split on whitespace (blank lines dropped), cached and counted before the
clock starts; ``fit`` is timed end to end (vocabulary pass included, for both systems). The
vectors are scored by the benchmark's one judge (``evaluate.py``: questions-words.txt analogies
with restrict_vocab=30000, wordsim353 Spearman, through gensim), MLlib's ordered by the words'
corpus counts as hsw2v orders its own. words/s is the corpus's raw words per second of fit;
training words/s, per second of training alone (hsw2v.spark's rounds, one machine's
``train()``; MLlib's fit cannot be split).
``--local`` adds one-machine hsw2v (``Word2Vec(corpus_file=..., workers=N)``) as the reference.

The master is ``local-cluster[2,1,1536]`` by default (two executor processes of one core; it
needs ``SPARK_HOME``, set here to the pyspark install when unset); if it does not start, the
run falls back to ``local[2]`` and says so in its JSON (``master``).

    python3 benchmarks/spark_bench.py --corpus ../data/gcide.txt --partitions 1,2,4 \\
        --systems mllib,hsw2v --local 1,2 --epochs 1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PARAMS = dict(vectorSize=100, windowSize=5, minCount=5, seed=1)


def judge(kv) -> dict:
    import importlib.util

    spec = importlib.util.spec_from_file_location("hsw2v_bench_evaluate", HERE / "evaluate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vectors.bin")
        kv.save_word2vec_format(path, binary=True)
        return module.evaluate(path)


def session(master: str):
    import pyspark
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_HOME", os.path.dirname(pyspark.__file__))
    os.environ["PYSPARK_PYTHON"] = sys.executable
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    builder = (
        SparkSession.builder.master(master)
        .appName("hsw2v-spark-bench")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.executorEnv.PYTHONPATH", os.pathsep.join(p for p in paths if p))
        .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
        .config("spark.driver.memory", "2g")
    )
    if master.startswith("local-cluster"):
        builder = builder.config("spark.executor.memory", "1g")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def corpus_frame(spark, corpus: str):
    """The corpus as every system here fits it: a row per non-blank line, its words split on
    whitespace (column ``words``), cached (count it to fill the cache)."""
    from pyspark.sql import functions as F

    text = spark.read.text(corpus)
    words = F.split(F.trim("value"), r"\s+").alias("words")
    return text.where(F.trim("value") != "").select(words).cache()


def one_spark(
    system: str, partitions: int, epochs: int, corpus: str, master: str, sync_every=None,
    repeat=False, merge=None, input_partitions=None,
) -> dict:
    import numpy as np

    used = master
    try:
        spark = session(master)
        spark.sparkContext.parallelize(range(4), 2).map(lambda x: x).collect()  # executors up
    except Exception as exc:  # noqa: BLE001 - say so, and run on local[2]
        print(f"{master} did not start ({type(exc).__name__}); falling back to local[2]",
              file=sys.stderr)  # fmt: skip
        from pyspark.sql import SparkSession

        if SparkSession.getActiveSession() is not None:
            SparkSession.getActiveSession().stop()
        used = "local[2]"
        spark = session(used)
    df = corpus_frame(spark, corpus)
    if input_partitions:  # the DataFrame's own partitions, before the estimator's
        df = df.coalesce(input_partitions).cache()
    df.count()
    have = df.rdd.getNumPartitions()
    params = dict(PARAMS, inputCol="words", maxIter=epochs, numPartitions=partitions)
    if system == "mllib":
        from pyspark.ml.feature import Word2Vec

        estimator = Word2Vec(**params)
    else:
        from hsw2v.spark import Word2Vec

        extra = {"sync_every": sync_every} if sync_every else {}
        if merge:
            extra["merge"] = merge
        estimator = Word2Vec(**params, sg=1, hs=1, negative=0, sample=0.0, **extra)
    started = time.perf_counter()
    model = estimator.fit(df)
    seconds = time.perf_counter() - started
    out = {"system": system, "partitions": partitions, "input_partitions": have, "master": used,
           "seconds": seconds}  # fmt: skip
    if repeat and system != "mllib":  # a second fit of the same frame: the same vectors?
        again = estimator.fit(df)
        out["same_vectors_when_fit_again"] = bool(
            np.array_equal(model.wv.vectors, again.wv.vectors)
            and model.wv.index_to_key == again.wv.index_to_key
        )
    if system != "mllib":
        out["sync_every"] = estimator.getOrDefault("sync_every")
        out["merge"] = estimator.getOrDefault("merge")
    if system == "mllib":
        from hsw2v import KeyedVectors, Word2Vec

        rows = model.getVectors().collect()
        counter = Word2Vec(min_count=PARAMS["minCount"])
        counter.build_vocab(corpus_file=corpus)
        rank = counter.wv.key_to_index
        rows.sort(key=lambda r: rank.get(r.word, len(rank)))
        kv = KeyedVectors(PARAMS["vectorSize"])
        kv.add_vectors([r.word for r in rows], [r.vector.toArray() for r in rows])
        out["words"] = counter.corpus_total_words
    else:
        kv = model.wv
        report = model.distributed_report
        out["words"] = report.raw_words // epochs
        out.update(
            rounds=report.rounds,
            vocab_seconds=report.vocab_seconds,
            train_seconds=report.seconds,
            merge_seconds=report.merge_seconds,
            task_seconds=report.task_seconds,
            bytes_in_per_round=report.bytes_in_per_round,
            bytes_out_per_round=report.bytes_out_per_round,
            model_bytes=report.model_bytes,
        )
    spark.stop()
    out["words_per_second"] = out["words"] * epochs / seconds
    return {**out, **judge(kv)}


def one_local(workers: int, epochs: int, corpus: str) -> dict:
    from hsw2v import Word2Vec

    started = time.perf_counter()
    model = Word2Vec(
        vector_size=100, window=5, min_count=5, sg=1, hs=1, negative=0, sample=0,
        epochs=epochs, workers=workers, seed=1,
    )  # fmt: skip
    model.build_vocab(corpus_file=corpus)
    vocab_seconds = time.perf_counter() - started
    model.train(corpus_file=corpus, total_words=model.corpus_total_words, epochs=epochs)
    seconds = time.perf_counter() - started
    words = model.corpus_total_words
    out = {"system": "hsw2v-local", "workers": workers, "seconds": seconds, "words": words,
           "words_per_second": words * epochs / seconds, "vocab_seconds": vocab_seconds,
           "train_seconds": seconds - vocab_seconds}  # fmt: skip
    return {**out, **judge(model.wv)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--partitions", default="1,2,4")
    ap.add_argument("--systems", default="mllib,hsw2v")
    ap.add_argument("--local", default="", help="one-machine hsw2v with these workers, e.g. 1,2")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--master", default="local-cluster[2,1,1536]")
    ap.add_argument("--sync-every", type=int, default=None, help="hsw2v.spark's sync_every")
    ap.add_argument(
        "--merge", default=None, help="hsw2v.spark's merge (hybrid, adasum, average, sum)"
    )
    ap.add_argument("--input-partitions", type=int, default=None,
                    help="join the read DataFrame into this many partitions before fitting")
    ap.add_argument("--repeat", action="store_true",
                    help="fit hsw2v.spark twice and say whether the vectors are the same")
    ap.add_argument("--one", nargs=2, metavar=("SYSTEM", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    corpus = str(Path(args.corpus).resolve())
    if args.one:
        system, n = args.one[0], int(args.one[1])
        if system == "local":
            result = one_local(n, args.epochs, corpus)
        else:
            result = one_spark(
                system, n, args.epochs, corpus, args.master, args.sync_every, args.repeat,
                args.merge, args.input_partitions,
            )
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    runs = [("local", int(w)) for w in args.local.split(",") if w]
    runs += [(s, int(n)) for n in args.partitions.split(",") for s in args.systems.split(",")]
    results = []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}  # fmt: skip
    for system, n in runs:
        cmd = [sys.executable, __file__, "--corpus", corpus, "--epochs", str(args.epochs),
               "--master", args.master, "--one", system, str(n)]  # fmt: skip
        if args.sync_every:
            cmd += ["--sync-every", str(args.sync_every)]
        if args.repeat:
            cmd += ["--repeat"]
        if args.merge:
            cmd += ["--merge", args.merge]
        if args.input_partitions:
            cmd += ["--input-partitions", str(args.input_partitions)]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            print(f"{system} {n}: failed\n{done.stderr[-3000:]}", file=sys.stderr)
            continue
        result = json.loads(line[len("RESULT ") :])
        results.append(result)
        print(json.dumps(result), flush=True)
    print("\n| system | partitions / workers | master | fit s | words/s | training s | "
          "training words/s | analogy % | WS353 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        n = r.get("partitions", r.get("workers"))
        train = r.get("train_seconds")  # hsw2v's rounds or train(); MLlib's cannot be split
        rate = f"{r['words'] * args.epochs / train:,.0f}" if train else "-"
        print(f"| {r['system']} | {n} | {r.get('master', '-')} | {r['seconds']:.1f} | "
              f"{r['words_per_second']:,.0f} | {f'{train:.1f}' if train else '-'} | {rate} | "
              f"{r['analogy_pct']:.2f} | {r['wordsim_spearman']:.3f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
