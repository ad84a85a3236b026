"""Several workers, private hot rows per setting, for any model: Doc2Vec (PV-DBOW, PV-DM),
FastText or Word2Vec, alternated in one process; wall and CPU seconds of each
``train(corpus_file=...)``.

Each job of a multi-worker training keeps private copies of the hottest rows and syncs them
(:mod:`hsw2v.running._tuning`): skip-gram's ``HOT_NODES`` synced every ``HOT_SYNC`` centre
words, CBOW's ``HOT_NODES_CBOW`` every ``HOT_SYNC_CBOW``; a model reads the pair it trains
like (``_skip_gram_walks``). This probe writes each ``NODES:SYNC`` setting of ``--configs``
into the pair the model reads and trains one model with each in turn (every other repeat in
the reverse order), then prints every run, the medians and the paired ratio of each setting
to the first. This host has a slow mode for two threads (about one run in three takes twice
the CPU for the same work, ``workers_cpu.py``), so read the runs, not only the medians.
(``hot_nodes.py`` is the Word2Vec probe from a ``LineSentence``, timing the last epoch.)

    PYTHONPATH=. python3 benchmarks/probes/hot_rows_by_model.py --corpus ../data/gcide.txt \\
        --model dbow --objective hs --configs 63:100,255:1000 --epochs 3 --repeats 8
"""

from __future__ import annotations

import argparse
import statistics

from workers_cpu import timed_train  # this folder's: wall and CPU seconds of a train()


def make(kind: str, objective: str, workers: int, epochs: int):
    from hsw2v import Doc2Vec, FastText, Word2Vec

    hs = objective == "hs"
    common = dict(hs=int(hs), negative=0 if hs else 5, vector_size=100, workers=workers,
                  epochs=epochs, seed=1)  # fmt: skip
    if kind in ("dbow", "dm"):
        return Doc2Vec(dm=int(kind == "dm"), **common)
    if kind.startswith("ft-"):
        return FastText(sg=int(kind == "ft-sg"), **common)
    return Word2Vec(sg=int(kind == "sg"), **common)


def main() -> None:
    from hsw2v.running import _tuning as tuning

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="Doc2Vec: one document per line")
    ap.add_argument("--model", choices=("dbow", "dm", "ft-sg", "ft-cbow", "sg", "cbow"),
                    default="dbow")  # fmt: skip
    ap.add_argument("--objective", choices=("hs", "ns"), default="hs")
    ap.add_argument("--configs", default="63:100,255:1000", help="NODES:SYNC,...")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=8)
    args = ap.parse_args()
    configs = [tuple(int(v) for v in c.split(":")) for c in args.configs.split(",")]
    model = make(args.model, args.objective, args.workers, args.epochs)
    model.build_vocab(corpus_file=args.corpus)
    slots = ("HOT_NODES", "HOT_SYNC") if model._skip_gram_walks() else ("HOT_NODES_CBOW",
                                                                        "HOT_SYNC_CBOW")
    print(f"{args.model} {args.objective}, {args.workers} workers: the model reads "
          f"{' and '.join(slots)}; shipped {tuple(getattr(tuning, s) for s in slots)}")
    runs: dict = {c: [] for c in configs}
    for repeat in range(args.repeats):
        for config in configs if repeat % 2 == 0 else configs[::-1]:
            for slot, value in zip(slots, config, strict=True):
                setattr(tuning, slot, value)
            wall, cpu = timed_train(model, args.corpus, args.epochs)
            runs[config].append((wall, cpu))
            print(f"{config[0]}:{config[1]}: wall {wall:.2f} s cpu {cpu:.2f} s", flush=True)
    base = runs[configs[0]]
    for config, got in runs.items():
        ratios = [r[0] / b[0] for r, b in zip(got, base, strict=True)]
        print(f"{config[0]}:{config[1]}: median wall {statistics.median(r[0] for r in got):.2f} s, "
              f"median cpu {statistics.median(r[1] for r in got):.2f} s; walls "
              + " ".join(f"{r[0]:.2f}" for r in sorted(got))
              + f"; wall / first's, paired: median {statistics.median(ratios):.3f} ("
              + " ".join(f"{r:.2f}" for r in ratios) + ")")  # fmt: skip


if __name__ == "__main__":
    main()
