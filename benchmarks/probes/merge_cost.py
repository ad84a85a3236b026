"""What one round's merge costs (``hsw2v._dist_tasks.merge_round_task``) on round-sized parts:
shards of 42,050 rows x 100 each changing 60 % of ``syn0`` and ``syn1``, float16 deltas (what
a Spark round sends), weights that make about half the rows several shards changed hot for
``merge="hybrid"`` (at least 1/256 of the round's 500,000 words). Run once per build,
alternated, e.g.

    python3 benchmarks/probes/merge_cost.py --root OLD_CHECKOUT
    python3 benchmarks/probes/merge_cost.py --root .
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".", help="the checkout whose hsw2v to import")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--rules", default="adasum,average", help="e.g. adasum,hybrid")
    args = ap.parse_args()
    sys.path.insert(0, args.root)
    from hsw2v import _dist_tasks as tasks

    rng = np.random.default_rng(0)
    V, d = 42050, 100
    words = 500_000 // args.shards  # a shard's raw words; the hot weight: 1/256 of the round's

    def part():
        parts = {}
        for name, share in (("syn0", 0.6), ("syn1", 0.6), ("syn1neg", 0.0)):
            rows = np.flatnonzero(rng.random(V) < share).astype(np.int32)
            deltas = (rng.standard_normal((len(rows), d)) * 1e-2).astype(np.float16)
            weights = rng.random(len(rows)) * 2 * (500_000 / 256) / args.shards
            parts[name] = (rows, deltas, weights)
        return tasks.PieceResult(parts, kept=words, raw=words, loss=0.0, seconds=0.0)

    results = [part() for _ in range(args.shards)]
    for rule in args.rules.split(","):
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            tasks.merge_round_task(*results, merge=rule, dtype="float16")
            times.append(time.perf_counter() - started)
        print(f"{rule}: median {sorted(times)[len(times) // 2]:.4f} s of {args.repeats}")


if __name__ == "__main__":
    main()
