"""CPU seconds of one and two workers for the same training, in one process: Word2Vec
skip-gram or PV-DBOW / PV-DM, hierarchical softmax, from a ``corpus_file``; hsw2v's, or
gensim's (``--system gensim``) for comparison.

Builds one model per worker count, then trains them in turn (alternated, every other repeat
two workers first), each ``train(corpus_file=...)`` over ``--epochs`` epochs, and prints the
wall seconds and the CPU seconds of all the process's threads (``getrusage``), then the
medians. The same work takes more CPU seconds with two workers by what the threads cost each
other (the shared rows' cache lines) and the jobs' hand-over.

    PYTHONPATH=. python3 benchmarks/probes/workers_cpu.py --corpus ../data/gcide.txt \\
        --model sg --epochs 3 [--system gensim]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time


def make(kind: str, workers: int, epochs: int, system: str):
    if system == "gensim":
        from gensim.models import Doc2Vec, Word2Vec
    else:
        from hsw2v import Doc2Vec, Word2Vec

    common = dict(hs=1, negative=0, vector_size=100, workers=workers, epochs=epochs, seed=1)
    if kind == "sg":
        return Word2Vec(sg=1, **common)
    return Doc2Vec(dm=int(kind == "dm"), **common)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed_train(model, corpus: str, epochs: int) -> tuple:
    """Wall and CPU seconds (all threads) of ``model.train(corpus_file=corpus)``."""
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    model.train(corpus_file=corpus, total_examples=model.corpus_count,
                total_words=model.corpus_total_words, epochs=epochs)  # fmt: skip
    return time.perf_counter() - t0, cpu_seconds() - cpu0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--model", choices=("sg", "dbow", "dm"), default="sg")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--system", choices=("hsw2v", "gensim"), default="hsw2v")
    args = ap.parse_args()
    models = {}
    for workers in (1, 2):
        models[workers] = make(args.model, workers, args.epochs, args.system)
        models[workers].build_vocab(corpus_file=args.corpus)
    runs = {1: [], 2: []}
    for repeat in range(args.repeats):
        for workers in (1, 2) if repeat % 2 == 0 else (2, 1):
            wall, cpu = timed_train(models[workers], args.corpus, args.epochs)
            runs[workers].append((wall, cpu))
            print(f"workers={workers} wall {wall:.2f} s cpu {cpu:.2f} s", flush=True)
    for workers in (1, 2):
        wall = statistics.median(r[0] for r in runs[workers])
        cpu = statistics.median(r[1] for r in runs[workers])
        print(f"{args.system} {args.model} workers={workers}: median wall {wall:.2f} s, median cpu {cpu:.2f} s")


if __name__ == "__main__":
    main()
