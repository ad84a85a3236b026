"""Does FastText's training wait on memory for its n-gram rows? The same training with the
default 2,000,000 buckets (an 800 MB n-gram matrix at d=100, far larger than the caches) and
with few (20,000: 8 MB, inside the L3 cache), alternated in one process.

The same words touch the same number of rows either way (only where the rows lie changes,
and a few more n-grams share a row with few buckets), so a large gap says the n-gram rows'
loads from memory are what the kernel waits on; none says its prefetches hide them.

    PYTHONPATH=. python3 benchmarks/probes/ngram_buckets.py --corpus ../data/gcide.txt \\
        --buckets 2000000,20000
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    from hsw2v import FastText

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--buckets", default="2000000,20000")
    ap.add_argument("--sg", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    buckets = [int(b) for b in args.buckets.split(",")]
    models = {}
    for b in buckets:
        models[b] = FastText(sg=args.sg, hs=1, negative=0, vector_size=100, window=5,
                             min_count=5, min_n=3, max_n=6, sample=1e-3, workers=args.workers,
                             seed=1, bucket=b)  # fmt: skip
        models[b].build_vocab(corpus_file=args.corpus)
    seconds = {b: [] for b in buckets}
    for repeat in range(args.repeats):
        for b in buckets if repeat % 2 == 0 else buckets[::-1]:
            m = models[b]
            t0 = time.perf_counter()
            m.train(corpus_file=args.corpus, total_words=m.corpus_total_words,
                    total_examples=m.corpus_count, epochs=1)  # fmt: skip
            seconds[b].append(time.perf_counter() - t0)
            print(f"bucket {b}: {seconds[b][-1]:.2f} s", flush=True)
    for b in buckets:
        print(f"bucket {b}: median {statistics.median(seconds[b]):.2f} s")


if __name__ == "__main__":
    main()
