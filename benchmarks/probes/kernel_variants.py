"""Compare the path-walk kernels on the same jobs, alternated in one process.

Trains one warm-up epoch (so the weights are realistic: saturated nodes are skipped as they
would be mid-training), then times ``Trainer.train_job`` over the same jobs with each kernel
variant in turn (A B C A B C ...), restoring the weights before every run, and reports median
effective words/s and ratios. Single thread, no Python in the timed loop; timed by the thread's CPU time, which other
processes on a shared machine disturb far less than wall time.

    python benchmarks/probes/kernel_variants.py --corpus CORPUS [--words 600000] [--repeats 7]

A variant is a kernel name (``fused``, ``loop``, ``blas``, ``window``), optionally with
``-noprefetch`` and, for ``window``, ``:B`` for blocks of at most B contexts (``window:8``).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

from hsw2v import LineSentence, Word2Vec
from hsw2v._kernels._inner import Trainer, job_seed

try:  # the "loop" and "blas" walks' own module (HSW2V_BENCH_WALKS=1 builds)
    from hsw2v._kernels._bench_walks import Trainer as BenchTrainer
except ImportError:
    BenchTrainer = Trainer  # builds before it: the shipped Trainer held them
from hsw2v.running.epochs import iter_jobs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--words", type=int, default=600_000, help="corpus prefix to use")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--variants", default="fused,loop,blas")
    parser.add_argument("--modes", default="sg,cbow")
    parser.add_argument("--hs", type=int, default=1, help="hierarchical softmax (0/1)")
    parser.add_argument("--negative", type=int, default=0, help="negative samples (0: none)")
    args = parser.parse_args(argv)

    sentences, n = [], 0
    for sentence in LineSentence(args.corpus):
        sentences.append(sentence)
        n += len(sentence)
        if n >= args.words:
            break
    variants = args.variants.split(",")
    for mode in args.modes.split(","):
        sg = int(mode == "sg")
        model = Word2Vec(
            sentences, sg=sg, workers=1, epochs=1, min_count=5, hs=args.hs, negative=args.negative
        )
        jobs = list(iter_jobs(sentences, model.wv.key_to_index, model.batch_words))
        syn0, syn1, syn1neg = model.wv.vectors.copy(), model.syn1.copy(), model.syn1neg.copy()
        times = {v: [] for v in variants}
        kept_words = 0
        for _, variant in itertools.product(range(args.repeats), variants):
            work0, work1, work_neg = syn0.copy(), syn1.copy(), syn1neg.copy()
            t = model.tree
            name, _, block = variant.partition(":")
            trainer = (BenchTrainer if name in ("loop", "blas") else Trainer)(
                work0,
                work1,
                t.codes,
                t.points,
                t.lengths,
                model.wv.expandos["sample_int"],
                model.window,
                bool(sg),
                True,
                True,
                False,
                name.removesuffix("-noprefetch"),
                prefetch=not name.endswith("-noprefetch"),
                block=int(block or 4),
                hs=bool(args.hs),
                syn1neg=work_neg if args.negative else None,
                cum_table=model.cum_table if args.negative else None,
                negative=args.negative,
            )
            started = time.thread_time()
            kept_words = 0
            for index, job in enumerate(jobs):
                kept, _ = trainer.train_job(job.ids, job.ends, 0.01, 0.01, job_seed(1, 0, index))
                kept_words += kept
            times[variant].append(time.thread_time() - started)
        base = statistics.median(times[variants[0]])
        print(
            f"{mode} hs={args.hs} negative={args.negative}: {kept_words} effective words per "
            f"run, {args.repeats} alternated runs"
        )
        for variant in variants:
            med = statistics.median(times[variant])
            print(
                f"  {variant:10s} median {kept_words / med / 1e3:8.0f}k effective words/s  "
                f"time ratio vs {variants[0]}: {med / base:5.2f}  "
                f"runs: {' '.join(f'{x:.3f}' for x in times[variant])}"
            )


if __name__ == "__main__":
    main()
