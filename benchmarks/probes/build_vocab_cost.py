"""What ``Word2Vec.build_vocab(corpus_file=...)`` costs in two checkouts: fresh processes
alternated, each timing three calls; prints the medians of the first and the third call and
the paired median ratio (the first checkout's time over the second's).

Run from the repository root, e.g.
``python3 benchmarks/probes/build_vocab_cost.py --corpus ../data/gcide.txt --build OLD --build .``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

CALLS = r"""
import sys, time
from hsw2v import Word2Vec
out = []
for _ in range(3):
    model = Word2Vec(vector_size=100, window=5, min_count=5, sg=1, hs=1, negative=0, seed=1,
                     workers=int(sys.argv[1]))
    started = time.perf_counter()
    model.build_vocab(corpus_file=sys.argv[2])
    out.append(time.perf_counter() - started)
print(" ".join(f"{x:.4f}" for x in out))
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--build", action="append", required=True, help="a checkout, twice")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=6)
    args = parser.parse_args(argv)
    if len(args.build) != 2:
        parser.error("give --build twice: the two checkouts to compare")
    corpus = os.path.abspath(args.corpus)
    roots = [os.path.abspath(b) for b in args.build]
    times: dict = {root: [] for root in roots}
    for pair in range(args.pairs):
        for root in roots if pair % 2 == 0 else roots[::-1]:
            run = subprocess.run(
                [sys.executable, "-c", CALLS, str(args.workers), corpus],
                cwd=root, capture_output=True, text=True, check=True,
                env={**os.environ, "PYTHONPATH": root},
            )  # fmt: skip
            times[root].append([float(x) for x in run.stdout.split()])
    first, second = roots
    for call in (0, 2):
        a = [t[call] for t in times[first]]
        b = [t[call] for t in times[second]]
        ratio = statistics.median(x / y for x, y in zip(a, b, strict=True))
        print(f"call {call + 1}: {args.build[0]} {statistics.median(a):.3f} s, "
              f"{args.build[1]} {statistics.median(b):.3f} s, ratio {ratio:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
