"""Which dim, epochs and lr HierarchicalSoftmaxClassifier should default to: a grid on a subset
of the next-word task of benchmarks/classify.py (label = the next word among the 10,000 most
frequent; features = binary bag of the previous 3 words over 50,000 words, L2-normalised CSR).

Run from the repository root:
    python3 benchmarks/probes/classifier_defaults.py --corpus ../data/gcide.txt
"""

from __future__ import annotations

import argparse
import collections
import itertools
import time

import numpy as np
import scipy.sparse as sp

from hsw2v import HierarchicalSoftmax, TrainingDivergedError


def next_word_task(path, n_labels=10_000, n_features=50_000, context=3):
    """(X CSR float32, y int64) over every position of the corpus whose next word is a label
    and whose context holds at least one feature word; rows in corpus order."""
    with open(path, encoding="utf-8") as fin:
        lines = [line.split() for line in fin]
    counts = collections.Counter(w for line in lines for w in line)
    ranked = [w for w, _ in counts.most_common(n_features)]
    ids = {w: i for i, w in enumerate(ranked)}
    rows, cols, labels = [], [], []
    for line in lines:
        seq = [ids.get(w, -1) for w in line]
        for t in range(1, len(seq)):
            if not 0 <= seq[t] < n_labels:
                continue
            bag = {c for c in seq[max(0, t - context) : t] if c >= 0}
            if not bag:
                continue
            rows.extend([len(labels)] * len(bag))
            cols.extend(bag)
            labels.append(seq[t])
    n = len(labels)
    rows, cols = np.asarray(rows), np.asarray(cols)
    nnz_per_row = np.bincount(rows, minlength=n)
    data = (1.0 / np.sqrt(nnz_per_row))[rows].astype(np.float32)
    X = sp.csr_matrix((data, (rows, cols)), shape=(n, n_features), dtype=np.float32)
    return X, np.asarray(labels, dtype=np.int64)


def p_at_1(layer, X, y):
    return float((layer.topk(layer.transform(X), 1)[0][:, 0] == y).mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--train", type=int, default=500_000)
    ap.add_argument("--test", type=int, default=50_000)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    t0 = time.perf_counter()
    X, y = next_word_task(args.corpus)
    print(f"task: {X.shape[0]:,} rows, {X.shape[1]:,} features, built in "
          f"{time.perf_counter() - t0:.1f} s")
    # the subset: the first rows for training, the last rows for testing (disjoint text)
    Xtr, ytr = X[: args.train], y[: args.train]
    Xte, yte = X[-args.test :], y[-args.test :]
    counts = np.bincount(ytr, minlength=10_000) + 1

    def run(dim, epochs, lr):
        layer = HierarchicalSoftmax.from_counts(counts, dim=dim, seed=1)
        t = time.perf_counter()
        try:
            layer.fit(Xtr, ytr, epochs=epochs, lr=lr, workers=args.workers)
        except TrainingDivergedError:
            print(f"dim={dim:4d} epochs={epochs:3d} lr={lr:<5g} diverged", flush=True)
            return 0.0
        fit_s = time.perf_counter() - t
        p1 = p_at_1(layer, Xte, yte)
        print(f"dim={dim:4d} epochs={epochs:3d} lr={lr:<5g} p@1={100 * p1:6.2f} % "
              f"fit={fit_s:6.1f} s", flush=True)
        return p1

    print("stage 1: epochs x lr at dim 64")
    best = max(
        itertools.product([1, 2, 3, 5], [0.05, 0.1, 0.2, 0.3]),
        key=lambda el: run(64, *el),
    )
    print(f"stage 2: dim at epochs={best[0]} lr={best[1]}")
    for dim in (16, 32, 128, 256):
        run(dim, *best)


if __name__ == "__main__":
    main()
