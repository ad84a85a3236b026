"""How far the shards' row deltas agree in a round of distributed training (a diagnostic for
the ``merge`` rules of :mod:`hsw2v.distributed`).

Runs the first rounds of one epoch of ``distributed.train``'s tasks in this process (no
cluster: the same ``train_task`` and ``merge_round_task`` the workers run), and for the rows
that *every* shard changed in a round prints the mean pairwise cosine between the shards'
deltas, over all those rows and over the 20 rows trained most (the most frequent words for
``syn0``, the inner nodes near the root for ``syn1``). Near 0: the shards learnt different
things and adding the deltas is right; near 1: they pushed the row the same way and adding
them overshoots.

    python3 benchmarks/probes/dist_delta_cosines.py --corpus CORPUS --shards 4 --rounds 11
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np


def pairwise_cosines(results, rows_of: str, deltas_of: str, weights_of: str):
    """Rows every result holds, the mean pairwise cosine of their deltas, their weights."""
    common = set(getattr(results[0], rows_of).tolist())
    for res in results[1:]:
        common &= set(getattr(res, rows_of).tolist())
    common = np.array(sorted(common), dtype=np.int64)
    deltas, weights = [], np.zeros(len(common))
    for res in results:
        order = np.argsort(getattr(res, rows_of))
        at = order[np.searchsorted(getattr(res, rows_of)[order], common)]
        deltas.append(getattr(res, deltas_of)[at].astype(np.float64))
        weights += getattr(res, weights_of)[at]
    units = [d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-300) for d in deltas]
    k = len(units)
    cos = [np.einsum("rd,rd->r", units[i], units[j]) for i in range(k) for j in range(i + 1, k)]
    return common, np.mean(cos, axis=0), weights


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=11, help="rounds to run from the start")
    parser.add_argument("--sync", type=int, default=100_000)
    parser.add_argument("--merge", default="adasum")
    args = parser.parse_args(argv)
    from hsw2v import Word2Vec, _dist_tasks
    from hsw2v._shards import count_and_mark_range, cut_shard, plan_ranges, splittable_size
    from hsw2v.distributed import run_spec

    model = Word2Vec(
        vector_size=100, window=5, min_count=5, sample=1e-3, sg=1, epochs=1, seed=1, workers=1
    )
    model.build_vocab(corpus_file=args.corpus)
    n_rounds = max(1, math.ceil(model.corpus_total_words / args.sync))
    spec = run_spec(model, "cosines", 10_000)
    shards = plan_ranges([args.corpus], args.shards, [splittable_size(args.corpus)])
    pieces = [
        cut_shard(shard, [count_and_mark_range(r, 10_000, mark_every=2_000) for r in shard], n_rounds)
        for shard in shards
    ]
    snapshot, updates = (model.wv.vectors, model.syn1), []
    try:
        for r in range(min(args.rounds, n_rounds)):
            results = [
                _dist_tasks.train_task(
                    spec,
                    snapshot,
                    updates,
                    piece[r],
                    shard=k,
                    piece_index=k * n_rounds + r,
                    epoch=0,
                    first_round=0,
                    this_round=r,
                    alpha0=model.alpha + (model.min_alpha - model.alpha) * r / n_rounds,
                    alpha1=model.alpha + (model.min_alpha - model.alpha) * (r + 1) / n_rounds,
                )
                for k, piece in enumerate(pieces)
            ]
            updates.append(_dist_tasks.merge_round_task(*results, merge=args.merge))
            if r % 5 and r != args.rounds - 1:
                continue
            for name in ("syn0", "syn1"):
                rows, cos, weights = pairwise_cosines(
                    results, f"{name}_rows", f"{name}_deltas", f"{name}_weights"
                )
                top = np.argsort(-weights)[:20]
                rest = np.setdiff1d(np.arange(len(rows)), top)
                print(
                    f"round {r} {name}: {len(rows)} rows changed by all {len(results)} shards, "
                    f"mean pairwise cosine {cos.mean():.3f} (median {np.median(cos):.3f}); "
                    f"20 most trained {cos[top].mean():.3f}, the others {cos[rest].mean():.3f}",
                    flush=True,
                )
    finally:
        _dist_tasks.forget_run(spec.run_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
