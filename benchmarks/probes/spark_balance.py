"""hsw2v.spark's shards of equal words against the partitions as they are, in one Spark
application: ``time`` alternates the two plans fit by fit (after one warm fit) and reports
each fit's seconds and its rounds' (``train_rounds``) with the paired ratio of the rounds;
``quality`` fits both plans for each seed and scores them (analogies, WordSim-353).

The benchmark's settings (``spark_bench.py``: ``local-cluster[2,1,1536]``, the corpus read
with ``spark.read.text`` into two partitions of 58 and 42 % of its words, sg hs, d=100,
window 5, min_count 5, no subsampling), ``numPartitions=2``. The partitions as they are is
``MAX_LENT_WORDS = 0`` (nothing may be lent, so each partition trains its own pieces).

    python3 benchmarks/probes/spark_balance.py --corpus ../data/gcide.txt time --pairs 8
    python3 benchmarks/probes/spark_balance.py --corpus ../data/gcide.txt quality \\
        --seeds 1,2,3 --epochs 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from spark_fit_phases import bench_module, ready_frame, timed  # this folder's

PLANS = {"balanced": 20_000_000, "as-is": 0}  # MAX_LENT_WORDS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--master", default="local-cluster[2,1,1536]")
    ap.add_argument("what", choices=("time", "quality"))
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--epochs", type=int, default=1)
    args = ap.parse_args()
    bench = bench_module()

    import hsw2v._dist_core as core
    import hsw2v.spark._estimator as estimator
    from hsw2v.spark import Word2Vec

    spark = bench.session(args.master)
    try:
        df = ready_frame(bench, spark, args.corpus)

        def fit(plan: str, seed: int):
            estimator.MAX_LENT_WORDS = PLANS[plan]
            params = dict(bench.PARAMS, inputCol="words", maxIter=args.epochs, numPartitions=2,
                          sg=1, hs=1, negative=0, sample=0, seed=seed)  # fmt: skip
            return Word2Vec(**params).fit(df)

        if args.what == "quality":
            for seed in map(int, args.seeds.split(",")):
                for plan in PLANS:
                    scores = bench.judge(fit(plan, seed).wv)
                    print(json.dumps(dict(plan=plan, seed=seed, epochs=args.epochs,
                                          analogy=round(scores["analogy_pct"], 2),
                                          ws353=round(scores["wordsim_spearman"], 3))),
                          flush=True)  # fmt: skip
            return
        seconds: list = []
        timed(core, "train_rounds", seconds)
        fit("balanced", 1)  # warm
        got: dict = {plan: [] for plan in PLANS}
        for pair in range(args.pairs):
            for plan in PLANS if pair % 2 == 0 else reversed(PLANS):
                seconds.clear()
                started = time.perf_counter()
                fit(plan, 1)
                got[plan].append((time.perf_counter() - started, seconds[0][1]))
                print(f"{plan}: fit {got[plan][-1][0]:.2f} s, rounds {got[plan][-1][1]:.2f} s",
                      flush=True)  # fmt: skip
        for plan, runs in got.items():
            print(f"{plan}: median fit {statistics.median(f for f, _ in runs):.2f} s, "
                  f"median rounds {statistics.median(r for _, r in runs):.2f} s")  # fmt: skip
        ratios = [b[1] / a[1] for b, a in zip(got["balanced"], got["as-is"], strict=True)]
        print(f"rounds, balanced / as-is, paired: {' '.join(f'{r:.3f}' for r in ratios)}; "
              f"median {statistics.median(ratios):.3f}")  # fmt: skip
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
