"""Two or more builds of hsw2v side by side: the training kernel alone, timed by CPU time.

The question: did a kernel change cost speed? Whole training runs (``ab_builds.py``) answer
it for users, but on a busy shared machine their wall times wander by more than the few
percent in question. This probe times only ``Trainer.train_job`` over the same jobs, by the
thread's CPU time, which other processes disturb far less. For every repeat and setting,
each build runs once in a fresh subprocess (``PYTHONPATH=DIR``, single-threaded BLAS), in
the order given on even repeats and reversed on odd ones (A B B A A B ...), so that neither
build always runs right after the other. A run reads a prefix of the corpus, trains one warm-up epoch
with one worker (the same seed, so every build starts from the same weights), then trains
the epoch's jobs ``--inner`` times from those weights and reports the fastest pass. The
medians over repeats and their ratio to the first build close the output.

    python3 benchmarks/ab_kernel.py --corpus CORPUS --build OLD_CHECKOUT --build . \\
        [--settings sg,cbow,sg-ns] [--repeats 7] [--words 600000] [--kernel loop] [--size 100]

``--kernel`` times one path walk by name ("window", "fused", "reference", "loop", "blas"; the
Trainer's ``kernel``, not a parameter of Word2Vec) instead of the one Word2Vec picks; it
works across builds, also those that predate the ``HSW2V_KERNEL`` switch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import child_env  # noqa: E402

SETTINGS = {  # name: (sg, hs, negative); kernels as Word2Vec picks them
    "sg": (1, 1, 0),
    "cbow": (0, 1, 0),
    "sg-ns": (1, 0, 5),
    "cbow-ns": (0, 0, 5),
    "sg-ns-shared": (1, 0, 5),  # shared negatives (Trainer(shared_negatives=True))
    "cbow-ns-shared": (0, 0, 5),  # the same (builds before CBOW shared draw a set per centre)
}
SHARED = {"sg-ns-shared", "cbow-ns-shared"}  # settings that only builds with shared negatives can run


def child(
    corpus: str, words: int, setting: str, inner: int, kernel: str | None = None, size: int = 100
) -> dict:
    """One run (in the subprocess): the fastest of ``inner`` timed passes over the jobs."""
    import time

    from hsw2v import LineSentence, Word2Vec
    try:
        from hsw2v._kernels._inner import Trainer, job_seed
    except ImportError:  # a build from before the kernels had a folder
        from hsw2v._inner import Trainer, job_seed
    try:
        from hsw2v.running._train import iter_jobs
    except ImportError:  # a build of the flat layout, before the running layer had a folder
        from hsw2v._train import iter_jobs

    if kernel in ("loop", "blas"):
        try:  # the benchmark-only walks' own module (HSW2V_BENCH_WALKS=1 builds)
            from hsw2v._kernels._bench_walks import Trainer
        except ImportError:
            try:  # a build from before the kernels had a folder
                from hsw2v._bench_walks import Trainer
            except ImportError:
                pass  # builds before it: the shipped Trainer held them

    sg, hs, negative = SETTINGS[setting]
    sentences, n = [], 0
    for sentence in LineSentence(corpus):
        sentences.append(sentence)
        n += len(sentence)
        if n >= words:
            break
    model = Word2Vec(
        sentences, sg=sg, hs=hs, negative=negative, workers=1, epochs=1, seed=1, vector_size=size
    )
    jobs = list(iter_jobs(sentences, model.wv.key_to_index, model.batch_words))
    weights = (model.wv.vectors, model.syn1, model.syn1neg)
    best, kept_words = float("inf"), 0
    for _ in range(inner):
        syn0, syn1, syn1neg = (w.copy() for w in weights)
        t = model.tree
        trainer = Trainer(
            syn0, syn1, t.codes, t.points, t.lengths, model.wv.expandos["sample_int"],
            model.window, bool(sg), True, True, False, kernel or model._kernel_variant(),
            hs=bool(hs), syn1neg=syn1neg if negative else None,
            cum_table=model.cum_table if negative else None, negative=negative,
            **({"shared_negatives": True} if setting in SHARED else {}),
        )  # fmt: skip
        started = time.thread_time()
        kept_words = 0
        for index, job in enumerate(jobs):
            kept, _ = trainer.train_job(job.ids, job.ends, 0.02, 0.01, job_seed(1, 0, index))
            kept_words += kept
        best = min(best, time.thread_time() - started)
    return {"seconds": best, "kept_words": kept_words}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus")
    parser.add_argument("--build", action="append", default=[])
    parser.add_argument("--settings", default="sg,cbow")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--words", type=int, default=600_000)
    parser.add_argument("--inner", type=int, default=3)
    parser.add_argument("--kernel", help="a path walk by name (default: Word2Vec's choice)")
    parser.add_argument("--size", type=int, default=100, help="vector_size")
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*json.loads(args.child))))
        return
    if len(args.build) < 2 or not args.corpus:
        parser.error("give --corpus and at least two --build directories")
    settings = args.settings.split(",")
    times: dict = {(s, b): [] for s in settings for b in args.build}
    for repeat in range(args.repeats):
        for setting in settings:
            for build in args.build if repeat % 2 == 0 else args.build[::-1]:
                env = child_env()
                env["PYTHONPATH"] = str(Path(build).resolve())
                spec = json.dumps(
                    [args.corpus, args.words, setting, args.inner, args.kernel, args.size]
                )
                out = subprocess.run(
                    [sys.executable, __file__, "--child", spec],
                    env=env, capture_output=True, text=True, check=True,
                )  # fmt: skip
                result = json.loads(out.stdout.strip().splitlines()[-1])
                times[setting, build].append(result["seconds"])
                rate = result["kept_words"] / result["seconds"] / 1e3
                print(f"[{repeat + 1}/{args.repeats}] {setting} {build}: {rate:,.0f}k words/s "
                      f"({result['seconds']:.3f} CPU s)", flush=True)  # fmt: skip
    print("\nmedian CPU seconds of the kernel (ratio to the first build; < 1 is faster)")
    for setting in settings:
        base = statistics.median(times[setting, args.build[0]])
        for build in args.build:
            med = statistics.median(times[setting, build])
            print(f"  {setting:8s} {build:30s} {med:.3f} s  ratio {med / base:.3f}")


if __name__ == "__main__":
    main()
