"""Two workers against one in one process: words/s and CPU seconds per million words.

Builds the vocabulary once, then trains copies of the same model with ``workers=1`` and
``workers=2`` in turn (alternated, ``--repeats`` times) for two epochs and times the second
(no setup, the ids already mapped), printing each run and the medians. CPU time is that of all
the process's threads, so the CPU seconds per million words of the two-worker runs against the
one-worker runs show what the threads cost each other.

    python benchmarks/probes/scaling_probe.py --corpus CORPUS [--sg 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # common.py

from common import ensure_corpus  # noqa: E402
from hot_nodes import LastEpochTimer  # noqa: E402

from hsw2v import LineSentence, Word2Vec  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--sg", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    corpus = LineSentence(str(ensure_corpus(args.corpus)))
    base = Word2Vec(
        vector_size=100, window=5, min_count=5, sample=1e-3, sg=args.sg, workers=1, epochs=2,
        seed=1,
    )  # fmt: skip
    base.build_vocab(corpus)
    runs: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    for _ in range(args.repeats):
        for workers in (1, 2):
            model = copy.deepcopy(base)
            model.workers = workers
            timer = LastEpochTimer()
            model.train(corpus, total_examples=model.corpus_count, epochs=2, callbacks=[timer])
            speed = timer.raw_words / timer.seconds
            cpu = timer.cpu_seconds / timer.raw_words * 1e6
            runs[workers].append((speed, cpu))
            print(
                f"workers={workers}: {speed / 1e3:.0f}k words/s, {cpu:.3f} CPU s per million words",
                flush=True,
            )
    medians = {w: statistics.median(s for s, _ in r) for w, r in runs.items()}
    for workers, r in runs.items():
        print(
            f"median workers={workers}: {medians[workers] / 1e3:.0f}k words/s, "
            f"{statistics.median(c for _, c in r):.3f} CPU s per million words"
        )
    print(f"workers=2 / workers=1: {medians[2] / medians[1]:.2f}x")


if __name__ == "__main__":
    main()
