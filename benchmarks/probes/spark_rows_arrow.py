"""How fast a DataFrame's ``array<string>`` rows reach Python: hsw2v.spark's joined UTF-8
strings (``rows_to_python``), iterated and counted (``scan_partition``), against Arrow
batches (``mapInArrow``) whose buffers are only looked at, in one Spark application, each
repetition in turn.

The first repetition is the application's first use of each path (the executors' Python
workers import what it needs: for Arrow, pandas and pyarrow); later ones are warm. Arrow
needs pandas and pyarrow on the executors (``pip install pandas pyarrow``), which hsw2v does
not install.

    python3 benchmarks/probes/spark_rows_arrow.py --corpus ../data/gcide.txt --repeats 3
"""

from __future__ import annotations

import argparse
import time

from spark_fit_phases import bench_module, ready_frame  # this folder's


def iterate(rows):
    n = 0
    for _ in rows:
        n += 1
    return [n]


def scan(index, rows):
    from hsw2v.spark._engine import scan_partition

    return [scan_partition(index, rows, 10_000, 10_000, 10**9).words]


def arrow_buffers(batches):
    import pyarrow as pa

    words = size = 0
    for batch in batches:
        column = batch.column(0)
        words += len(column.values)
        size += column.values.buffers()[2].size
    yield pa.RecordBatch.from_pydict({"words": [words], "bytes": [size]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--master", default="local-cluster[2,1,1536]")
    args = ap.parse_args()
    bench = bench_module()

    from hsw2v.spark._estimator import rows_to_python

    spark = bench.session(args.master)
    try:
        df = ready_frame(bench, spark, args.corpus)
        rdd = rows_to_python(df, "words")
        ways = {
            "joined rows, iterated": lambda: rdd.mapPartitions(iterate).collect(),
            "joined rows, counted (scan_partition)": lambda: rdd.mapPartitionsWithIndex(scan).collect(),
            "Arrow batches, buffers read": lambda: [
                tuple(r) for r in df.mapInArrow(arrow_buffers, "words long, bytes long").collect()
            ],
        }
        for repeat in range(args.repeats):
            for name, run in ways.items():
                started = time.perf_counter()
                result = run()
                print(f"repeat {repeat + 1}, {name}: {time.perf_counter() - started:.3f} s "
                      f"{result}", flush=True)  # fmt: skip
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
