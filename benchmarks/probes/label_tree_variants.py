"""Which learned tree helps the layer most: p@1 of HierarchicalSoftmax (intercept on) on the
next-word task of benchmarks/classify.py, for Huffman's tree and k-means trees that cut at
half the class-frequency mass or at half the leaves (Parabel), with plain or
frequency-weighted centroids, and for the projection width.

    python3 benchmarks/probes/label_tree_variants.py --corpus ../data/gcide.txt --classes 1000
    python3 benchmarks/probes/label_tree_variants.py --variants huffman,kmeans-mass --epochs 5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classify import build_task  # noqa: E402

from hsw2v import HierarchicalSoftmax  # noqa: E402
from hsw2v.label_trees import kmeans_tree, label_centroids, label_tree  # noqa: E402

VARIANTS = {
    "huffman": None,
    "kmeans-mass": {"balance": "mass"},
    "kmeans-count": {"balance": "count"},
    "kmeans-mass-weighted": {"balance": "mass", "weighted": True},
    "kmeans-count-weighted": {"balance": "count", "weighted": True},
    "kmeans-mass-dim32": {"balance": "mass", "dim": 32},
    "kmeans-mass-dim512": {"balance": "mass", "dim": 512},
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="../data/gcide.txt")
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--train", type=int, default=1_500_000)
    ap.add_argument("--test", type=int, default=100_000)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "hsw2v-classify"))
    args = ap.parse_args()
    X, y, Xt, yt = build_task(Path(args.corpus), args.classes, 50_000, args.train, args.test,
                              Path(args.cache))
    counts = np.bincount(y, minlength=args.classes)
    C = label_centroids(X, y, args.classes)
    print("| tree | build s | mean path | p@1 | p@5 |\n|---|---|---|---|---|")
    for name in args.variants.split(","):
        for seed in range(1, args.seeds + 1):
            t0 = time.perf_counter()
            if VARIANTS[name] is None:
                tree = label_tree("huffman", y, args.classes)
            else:
                tree = kmeans_tree(C, counts, seed=seed, **VARIANTS[name])
            build = time.perf_counter() - t0
            layer = HierarchicalSoftmax(tree, args.dim, seed=seed, intercept=True)
            layer.fit(X, y, epochs=args.epochs, lr=args.lr, workers=2)
            top, _ = layer.topk(layer.transform(Xt), 5)
            hit = top == yt[:, None]
            mean_path = np.average(tree.lengths, weights=counts)
            print(f"| {name} (seed {seed}) | {build:.1f} | {mean_path:.2f} | "
                  f"{100 * hit[:, 0].mean():.2f} % | {100 * hit.any(1).mean():.2f} % |",
                  flush=True)


if __name__ == "__main__":
    main()
