"""Distributed training on a local Dask cluster: words/s and analogy accuracy against workers,
``sync_every`` and ``merge``, with one-machine hsw2v on the same settings as the reference.

Each setting starts a ``LocalCluster(n_workers=N, threads_per_worker=1, processes=True)``,
trains with :func:`hsw2v.distributed.train` and scores the vectors with the benchmark's judge
(``evaluate.py``: questions-words.txt analogies with restrict_vocab=30000, wordsim353
Spearman). words/s counts raw corpus words per second of training (the vocabulary pass is
timed apart). Prints one JSON line per run and a Markdown table at the end.

    python3 benchmarks/distributed.py --corpus CORPUS --workers 1,2,4 \\
        --sync 100000,500000,2000000 --merge adasum,average,sum --epochs 2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# This file's name would shadow the ``distributed`` package: drop its folder from the path
# and load the judge by file name.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def evaluate(path: str) -> dict:
    import importlib.util

    spec = importlib.util.spec_from_file_location("hsw2v_bench_evaluate", HERE / "evaluate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.evaluate(path)


def score(wv) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vectors.bin")
        wv.save_word2vec_format(path, binary=True)
        return evaluate(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--sync", default="100000,500000,2000000")
    parser.add_argument(
        "--merge",
        default="adasum,average,sum",
        help="merge rules, comma-separated (adasum, average, sum)",
    )
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--sg", type=int, default=1)
    parser.add_argument("--single-threads", type=int, default=2, help="0 skips the reference")
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster

    from hsw2v import Word2Vec
    from hsw2v._dist_merge import MERGES

    unknown = [m for m in args.merge.split(",") if m not in MERGES]
    if unknown:
        parser.error(f"--merge: unknown rule(s) {unknown}; choose from {', '.join(MERGES)}")

    params = dict(
        vector_size=100, window=5, min_count=5, sample=1e-3, sg=args.sg, epochs=args.epochs, seed=1
    )
    rows = []
    if args.single_threads:
        model = Word2Vec(workers=args.single_threads, **params)
        model.build_vocab(corpus_file=args.corpus)
        started = time.perf_counter()
        _, raw = model.train(
            corpus_file=args.corpus, total_words=model.corpus_total_words, epochs=args.epochs
        )
        seconds = time.perf_counter() - started
        row = {
            "setting": f"one machine, Word2Vec(workers={args.single_threads})",
            "words_per_s": raw / seconds,
            "merge": None,
            "sync_every": None,
            "rounds": None,
            "kib_in": None,
            "kib_out": None,
            "load1": os.getloadavg()[0],
            **score(model.wv),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    for n in [int(x) for x in args.workers.split(",")]:
        with (
            LocalCluster(n_workers=n, threads_per_worker=1, processes=True) as cluster,
            Client(cluster) as client,
        ):
            for sync in [int(x) for x in args.sync.split(",")]:
                for merge in args.merge.split(","):
                    rows.append(run(client, args.corpus, n, sync, merge, params))
    print()
    print(
        "| setting | merge | sync_every | rounds | words/s | analogy % | wordsim ρ | "
        "KiB sent to merge / round | KiB of update / round | load (1 min) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        sync = f"{r['sync_every']:,}" if r["sync_every"] else "-"
        rounds = r["rounds"] if r["rounds"] else "-"
        kin = f"{r['kib_in']:,.0f}" if r["kib_in"] is not None else "-"
        kout = f"{r['kib_out']:,.0f}" if r["kib_out"] is not None else "-"
        print(
            f"| {r['setting']} | {r['merge'] or '-'} | {sync} | {rounds} | "
            f"{r['words_per_s']:,.0f} | {r['analogy_pct']:.1f} | {r['wordsim_spearman']:.3f} | "
            f"{kin} | {kout} | {r['load1']:.1f} |"
        )
    return 0


def run(client, corpus: str, n: int, sync: int, merge: str, params: dict) -> dict:
    from hsw2v import distributed

    model = distributed.train(client, corpus, sync_every=sync, merge=merge, **params)
    report = model.distributed_report
    row = {
        "setting": f"distributed, {n} worker(s)",
        "words_per_s": report.words_per_second,
        "merge": merge,
        "sync_every": sync,
        "rounds": report.rounds,
        "vocab_s": report.vocab_seconds,
        "kib_in": report.bytes_in_per_round / 1024,
        "kib_out": report.bytes_out_per_round / 1024,
        "model_kib": report.model_bytes / 1024,
        "merge_s": report.merge_seconds,
        "seconds": report.seconds,
        "snapshots": report.snapshots,
        "load1": os.getloadavg()[0],
        "finite": bool(np.isfinite(model.wv.vectors).all() and np.isfinite(model.syn1).all()),
        **score(model.wv),
    }
    print(json.dumps(row), flush=True)
    return row


if __name__ == "__main__":
    sys.exit(main())
