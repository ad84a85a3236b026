"""Distributed training's quality per merge rule, over seeds, against one machine.

For every seed: one machine's ``Word2Vec(workers=N)`` for each ``--single`` N, then
``hsw2v.distributed.train`` on a ``LocalCluster(n_workers=--workers, threads_per_worker=1)``
with each ``--merge`` rule, the same settings; every model scored by the benchmark's judge
(``evaluate.py``: questions-words.txt analogies with restrict_vocab=30000, wordsim353
Spearman). Training is deterministic for a seed (one machine with one worker, and the
distributed rounds), so each cell is exact for its seeds. Prints one JSON line per model and
the means per setting.

    PYTHONPATH=. python3 benchmarks/probes/merge_rules_quality.py --corpus ../data/gcide.txt \\
        --workers 2 --merge adasum,hybrid --seeds 1,2,3 --single 1,2
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the benchmarks' distributed.py would shadow the ``distributed`` package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() not in (HERE, HERE.parent)]


def score(wv) -> tuple[float, float]:
    """Analogy % and WordSim-353 by ``benchmarks/distributed.py``'s judge (loaded by file
    name: its name would shadow the ``distributed`` package)."""
    spec = importlib.util.spec_from_file_location(
        "hsw2v_bench_distributed", HERE.parent / "distributed.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.score(wv)
    return result["analogy_pct"], result["wordsim_spearman"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--workers", type=int, default=2, help="Dask workers (one shard each)")
    parser.add_argument("--merge", default="adasum,hybrid", help="rules, comma-separated")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--single", default="", help="one machine's workers, e.g. 1,2")
    parser.add_argument("--sync", type=int, default=500_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--sample", type=float, default=1e-3)
    parser.add_argument("--negative", type=int, default=0, help="N: hs=0, negative=N")
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster

    from hsw2v import Word2Vec, distributed

    params = dict(vector_size=100, window=5, min_count=5, sample=args.sample, sg=1,
                  epochs=args.epochs)  # fmt: skip
    if args.negative:
        params.update(hs=0, negative=args.negative)
    seeds = [int(s) for s in args.seeds.split(",")]
    singles = [int(n) for n in args.single.split(",") if n]
    scores = defaultdict(list)

    def record(setting, seed, model):
        analogy, ws = score(model.wv)
        scores[setting].append((analogy, ws))
        row = {"setting": setting, "seed": seed, "analogy_pct": analogy, "wordsim": ws,
               "sync_every": args.sync, **params}  # fmt: skip
        print(json.dumps(row), flush=True)

    with (
        LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                     dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):  # fmt: skip
        for seed in seeds:
            for n in singles:
                model = Word2Vec(workers=n, seed=seed, **params)
                model.build_vocab(corpus_file=args.corpus)
                model.train(corpus_file=args.corpus, total_words=model.corpus_total_words,
                            epochs=args.epochs)  # fmt: skip
                record(f"one machine, workers={n}", seed, model)
            for rule in args.merge.split(","):
                model = distributed.train(client, args.corpus, sync_every=args.sync,
                                          merge=rule, seed=seed, **params)  # fmt: skip
                record(f"{args.workers} shards, {rule}", seed, model)
    print()
    print("| setting | seeds | analogy % | WordSim-353 |")
    print("|---|---|---:|---:|")
    for setting, values in scores.items():
        analogy = statistics.mean(a for a, _ in values)
        ws = statistics.mean(w for _, w in values)
        print(f"| {setting} | {len(values)} | {analogy:.2f} | {ws:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
