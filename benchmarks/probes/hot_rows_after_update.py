"""Which inner nodes several workers keep private after a vocabulary update.

Builds a vocabulary on the first ``--fraction`` of the corpus's lines, grows it with the whole
corpus (``build_vocab(update=True)``, which grafts the new words' subtree onto the old tree),
and prints the share of all path-node visits (each word's path length times its count) that
fall on the ``N`` private rows, for two choices of those rows: the ``N`` highest node ids (the
top of a fresh Huffman tree) and the ``N`` most visited nodes
(``Tree.most_visited_nodes``, what training uses). A fresh tree over the whole corpus is
the reference. Deterministic: no training, no timing.

    python benchmarks/probes/hot_rows_after_update.py --corpus CORPUS [--fraction 0.1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # common.py

from common import ensure_corpus  # noqa: E402

from hsw2v import LineSentence, Word2Vec  # noqa: E402


def node_visits(model) -> tuple[np.ndarray, float]:
    """Visits of every inner node (count-weighted) and the total over all nodes."""
    visits = model.tree.node_visits(model.wv.expandos["count"])
    return visits, float(visits.sum())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--nodes", default="63,255,1023")
    args = parser.parse_args(argv)
    path = ensure_corpus(args.corpus)
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    part = [line.split() for line in lines[: int(len(lines) * args.fraction)]]
    settings = dict(vector_size=100, window=5, min_count=5, sample=1e-3, workers=2, seed=1)
    grown = Word2Vec(**settings)
    grown.build_vocab(part)
    before = len(grown.wv)
    grown.build_vocab(LineSentence(str(path)), update=True)
    fresh = Word2Vec(**settings)
    fresh.build_vocab(LineSentence(str(path)))
    visits, total = node_visits(grown)
    fresh_visits, fresh_total = node_visits(fresh)
    inner, fresh_inner = len(visits), len(fresh_visits)
    print(
        f"vocabulary {before:,} words, grown to {len(grown.wv):,} by the update "
        f"(a fresh tree over the whole corpus: {len(fresh.wv):,} words)"
    )
    print(
        "| private rows | highest ids after the update | most visited after the update | fresh tree |"
    )
    print("|---:|---:|---:|---:|")
    for n in (int(x) for x in args.nodes.split(",")):
        highest = visits[inner - n :].sum() / total
        best = visits[grown.tree.most_visited_nodes(grown.wv.expandos["count"], n)].sum() / total
        reference = fresh_visits[fresh_inner - n :].sum() / fresh_total
        print(f"| {n:,} | {highest:.1%} | {best:.1%} | {reference:.1%} |")


if __name__ == "__main__":
    main()
