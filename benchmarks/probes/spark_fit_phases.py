"""Where hsw2v.spark's fit spends its time: the stage's phases, timed on the driver, for the
first fit of a fresh Spark application (as ``spark_bench.py`` times it) and for the fits
after it in the same application.

Builds the benchmark's session and DataFrame (``spark_bench.py``: ``local-cluster[2,1,1536]``,
the corpus read with ``spark.read.text``, split on whitespace, cached and counted; the
executors' Python workers started by a first small job), then fits ``--fits`` times and
prints, per fit, the seconds of: ``connect`` (until every task of the stage has connected to
the driver: the job's start, the task's Python worker taking it, hsw2v's import), ``counts``
(``connect`` included: the rows reaching Python and counted, the counts sent and merged),
``_plan`` (the vocabulary, the tree and the initial weights on the driver), each round's
``submit_shards`` (sending the round, training, the replies) and ``train_rounds`` (the rounds
and their merges), and of those the rounds' slowest tasks' (``task_seconds`` of the fit's
``distributed_report``: a piece's training and its changed rows) and the merges' on the
driver. ``--conf KEY=VALUE`` sets a Spark SQL option on the session first.

    python3 benchmarks/probes/spark_fit_phases.py --corpus ../data/gcide.txt --partitions 2 \\
        --fits 3 [--conf spark.sql.codegen.wholeStage=false]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench_module():
    """``benchmarks/spark_bench.py`` as a module, with this checkout first on the path."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    spec = importlib.util.spec_from_file_location("spark_bench", ROOT / "benchmarks" / "spark_bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ready_frame(bench, spark, corpus: str):
    """The benchmark's corpus DataFrame, cached and counted, on ``spark`` whose executors are
    up (their Python workers started by a first small job), as ``spark_bench.py`` fits it."""
    spark.sparkContext.parallelize(range(4), 2).map(lambda x: x).collect()
    df = bench.corpus_frame(spark, corpus)
    df.count()
    return df


def timed(owner, name: str, seconds: list) -> None:
    """Wrap ``owner.name`` so that each call appends ``(name, seconds)``."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            seconds.append((name, time.perf_counter() - started))

    setattr(owner, name, wrapper)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--fits", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--master", default="local-cluster[2,1,1536]")
    ap.add_argument("--conf", action="append", default=[], help="KEY=VALUE, a SQL option")
    args = ap.parse_args()
    bench = bench_module()

    import hsw2v._dist_core as core
    import hsw2v.spark._estimator as estimator
    import hsw2v.spark._stage as stage
    from hsw2v.spark import Word2Vec

    spark = bench.session(args.master)
    try:
        for item in args.conf:
            key, _, value = item.partition("=")
            spark.conf.set(key, value)
        df = ready_frame(bench, spark, args.corpus)
        seconds: list = []
        for owner, name in [(stage.Stage, "connect"), (stage.Stage, "counts"),
                            (estimator.Word2Vec, "_plan"), (stage.StageEngine, "submit_shards"),
                            (core, "train_rounds")]:  # fmt: skip
            timed(owner, name, seconds)
        for fit in range(args.fits):
            seconds.clear()
            params = dict(bench.PARAMS, inputCol="words", maxIter=args.epochs,
                          numPartitions=args.partitions, sg=1, hs=1, negative=0, sample=0)  # fmt: skip
            started = time.perf_counter()
            model = Word2Vec(**params).fit(df)
            total = time.perf_counter() - started
            rounds = [f"{s:.2f}" for name, s in seconds if name == "submit_shards"]
            phases = {name: s for name, s in seconds if name != "submit_shards"}
            report = model.to_word2vec().distributed_report
            print(f"fit {fit + 1}: {total:.2f} s; connect {phases['connect']:.2f}, counts "
                  f"{phases['counts']:.2f}, _plan {phases['_plan']:.2f}, train_rounds "
                  f"{phases['train_rounds']:.2f} (rounds {' '.join(rounds)}; the slowest "
                  f"task's {report.task_seconds:.2f}, merging {report.merge_seconds:.2f})",
                  flush=True)  # fmt: skip
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
