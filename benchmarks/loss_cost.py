"""What ``compute_loss=True`` costs: training time with the loss tally against without it,
for hsw2v and gensim side by side, in every mode (skip-gram / CBOW x hierarchical softmax /
negative sampling / both x 1 / 2 workers).

Every run is a fresh subprocess (single-threaded BLAS, fixed string hashing) that builds the
vocabulary from ``LineSentence`` (untimed) and trains ``--epochs`` epochs; it reports the
wall-clock seconds of ``train()`` and the CPU seconds of all threads. For every repeat and
setting the runs alternate (hsw2v off, hsw2v on, gensim off, gensim on; every other repeat
"on" first), so each pair shares the machine's slow and fast moments and neither side always
runs first. The table holds the medians, the on / off ratios of
the medians, and the range of the repeats' own on / off CPU ratios (the spread).

    python benchmarks/loss_cost.py --corpus ../data/gcide.txt [--words 1000000] \\
        [--repeats 3] [--epochs 1] [--workers 1,2] [--systems hsw2v,gensim]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import child_env, ensure_corpus, make_slice  # noqa: E402

MODES = {  # name: (sg, hs, negative)
    "sg-hs": (1, 1, 0),
    "sg-ns": (1, 0, 5),
    "cbow-hs": (0, 1, 0),
    "cbow-ns": (0, 0, 5),
    "sg-hs+ns": (1, 1, 5),
    "cbow-hs+ns": (0, 1, 5),
}


def child(system: str, corpus: str, mode: str, workers: int, epochs: int, loss: bool) -> dict:
    """One run (in the subprocess): build the vocabulary, time ``train()``."""
    sg, hs, negative = MODES[mode]
    if system == "hsw2v":
        from hsw2v import LineSentence, Word2Vec
    else:
        from gensim.models.word2vec import LineSentence, Word2Vec
    model = Word2Vec(
        vector_size=100, window=5, min_count=5, sample=1e-3, sg=sg, hs=hs, negative=negative,
        workers=workers, seed=1,
    )  # fmt: skip
    model.build_vocab(LineSentence(corpus))
    started, cpu_started = time.perf_counter(), time.process_time()
    model.train(
        LineSentence(corpus), total_examples=model.corpus_count, epochs=epochs,
        compute_loss=loss,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return {"wall": wall, "cpu": cpu, "loss": float(model.get_latest_training_loss())}


def run_one(system, corpus, mode, workers, epochs, loss) -> dict:
    args = [sys.executable, __file__, "--child", json.dumps([system, corpus, mode, workers,
                                                            epochs, loss])]  # fmt: skip
    out = subprocess.run(args, env=child_env(), check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus")
    parser.add_argument("--words", type=int, default=1_000_000, help="slice of the corpus")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--systems", default="hsw2v,gensim")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*json.loads(args.child))))
        return
    if not args.corpus:
        parser.error("--corpus is required")
    corpus = ensure_corpus(args.corpus)
    systems = args.systems.split(",")
    workers_list = [int(w) for w in args.workers.split(",")]
    modes = args.modes.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "slice.txt")
        words = make_slice(corpus, path, args.words)
        print(f"corpus slice: {words} words, {args.epochs} epoch(s), {args.repeats} repeats")
        times: dict = {}
        for repeat in range(args.repeats):
            for mode in modes:
                for workers in workers_list:
                    for system in systems:
                        for loss in (False, True) if repeat % 2 == 0 else (True, False):
                            r = run_one(system, path, mode, workers, args.epochs, loss)
                            times.setdefault((system, mode, workers, loss), []).append(r)
                            print(f"  [{repeat}] {system} {mode} workers={workers} "
                                  f"compute_loss={loss}: {r['wall']:.2f} s wall, "
                                  f"{r['cpu']:.2f} s CPU", flush=True)  # fmt: skip
    print()
    print("| mode | workers | system | train s, off | train s, on | on/off (wall) "
          "| on/off (CPU) | CPU ratio per repeat, min-max |")  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|---|")
    for mode in modes:
        for workers in workers_list:
            for system in systems:
                off = times[(system, mode, workers, False)]
                on = times[(system, mode, workers, True)]
                w0, w1 = (statistics.median(r["wall"] for r in x) for x in (off, on))
                c0, c1 = (statistics.median(r["cpu"] for r in x) for x in (off, on))
                pairs = [b["cpu"] / a["cpu"] for a, b in zip(off, on, strict=True)]
                print(f"| {mode} | {workers} | {system} | {w0:.2f} | {w1:.2f} | "
                      f"{w1 / w0:.2f}x | {c1 / c0:.2f}x | {min(pairs):.2f}-{max(pairs):.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
