"""Distributed training on a local Dask cluster: words/s and analogy accuracy against workers,
``sync_every`` and ``merge``, with one-machine hsw2v on the same settings as the reference.

Each setting starts a ``LocalCluster(n_workers=N, threads_per_worker=1, processes=True)``,
trains with :func:`hsw2v.distributed.train` and scores the vectors with the benchmark's judge
(``evaluate.py``: questions-words.txt analogies with restrict_vocab=30000, wordsim353
Spearman). words/s counts raw corpus words per second of training (the vocabulary pass is
timed apart). Prints one JSON line per run and a Markdown table at the end.

    python3 benchmarks/distributed.py --corpus CORPUS --workers 1,2,4 \\
        --sync 100000,500000,2000000 --merge adasum,average,sum --epochs 2

``--pairs N`` measures one setting against one machine instead: N pairs of runs, one machine's
``Word2Vec(workers=--single-threads)`` and the distributed run alternated (which goes first
swaps every pair) on one cluster, and prints each pair's words/s ratio and their median
(each model scored in the first pair only):

    python3 benchmarks/distributed.py --corpus CORPUS --workers 2 --sync 500000 \\
        --merge hybrid --epochs 3 --single-threads 2 --pairs 5
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from functools import partial
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
    parser.add_argument("--pairs", type=int, default=0, help="alternated pairs (see above)")
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster

    from hsw2v._dist_merge import MERGES

    unknown = [m for m in args.merge.split(",") if m not in MERGES]
    if unknown:
        parser.error(f"--merge: unknown rule(s) {unknown}; choose from {', '.join(MERGES)}")

    params = dict(
        vector_size=100, window=5, min_count=5, sample=1e-3, sg=args.sg, epochs=args.epochs, seed=1
    )
    if args.pairs:
        if any("," in str(v) for v in (args.workers, args.sync, args.merge)):
            parser.error("--pairs measures one setting: give one --workers, --sync and --merge")
        return alternate(args, params)
    rows = []
    if args.single_threads:
        row = {
            "setting": f"one machine, Word2Vec(workers={args.single_threads})",
            "merge": None,
            "sync_every": None,
            "rounds": None,
            "kib_in": None,
            "kib_out": None,
            **one_machine(args.corpus, args.single_threads, params, scored=True),
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


def placement():
    """``benchmarks/placement.py`` (loaded by file name: this folder is off the path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hsw2v_bench_placement", HERE / "placement.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_machine(corpus: str, threads: int, params: dict, scored: bool) -> dict:
    """One machine's ``Word2Vec(workers=threads)`` on the corpus: its training words/s."""
    from hsw2v import Word2Vec

    model = Word2Vec(workers=threads, **params)
    model.build_vocab(corpus_file=corpus)
    started = time.perf_counter()
    _, raw = model.train(
        corpus_file=corpus, total_words=model.corpus_total_words, epochs=params["epochs"]
    )
    row = {"words_per_s": raw / (time.perf_counter() - started), "load1": os.getloadavg()[0]}
    return {**row, **score(model.wv)} if scored else row


def alternate(args, params: dict) -> int:
    """``--pairs``: one setting against one machine, the runs alternated (see the docstring)."""
    import statistics

    from dask.distributed import Client, LocalCluster

    from hsw2v import distributed

    n, sync, merge = int(args.workers), int(args.sync), args.merge
    threads = args.single_threads or n
    ratios, placed, where = [], placement(), {"one machine": [], "distributed": []}
    with (
        LocalCluster(n_workers=n, threads_per_worker=1, processes=True) as cluster,
        Client(cluster) as client,
    ):
        for i in range(args.pairs):
            got = {}
            for side in ("one", "dist") if i % 2 == 0 else ("dist", "one"):
                if side == "one":  # the CPUs' placement read before and after (placement.py)
                    got[side], at = placed.run_placed(
                        partial(one_machine, args.corpus, threads, params, scored=i == 0)
                    )
                    where["one machine"].append(at)
                else:
                    model, at = placed.run_placed(
                        partial(distributed.train, client, args.corpus, sync_every=sync,
                                merge=merge, **params)  # fmt: skip
                    )
                    where["distributed"].append(at)
                    report = model.distributed_report
                    got[side] = {"words_per_s": report.words_per_second,
                                 "merge_s": report.merge_seconds, "seconds": report.seconds,
                                 "load1": os.getloadavg()[0],
                                 **(score(model.wv) if i == 0 else {})}  # fmt: skip
                got[side]["placement"] = at
            ratios.append(got["dist"]["words_per_s"] / got["one"]["words_per_s"])
            print(json.dumps({"pair": i, "first": "one" if i % 2 == 0 else "dist",
                              "ratio": ratios[-1], **{f"{k}_{side}": v for side in got
                                                      for k, v in got[side].items()}}),
                  flush=True)  # fmt: skip
    print(
        f"{n} workers, sync_every={sync:,}, merge={merge}, against Word2Vec(workers={threads}):"
        f" words/s ratios {', '.join(f'{r:.3f}' for r in ratios)}; median "
        f"{statistics.median(ratios):.3f}"
    )
    print(placed.placements_line(where))
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
