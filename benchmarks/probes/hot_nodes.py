"""Speed of several-worker training with private copies of the top of the tree.

Builds the vocabulary once, then trains copies of the same model (``--epochs``, default 2)
with every (hot nodes, sync interval) setting in turn, alternated (A B C A B C ...), and
prints the median words/s and CPU seconds per million words of the last epoch per setting
(the epoch alone: no Trainer setup). Quality of a setting: ``benchmarks/quality.py --hot N
--hot-sync S``.

    python benchmarks/probes/hot_nodes.py --corpus CORPUS [--workers 2] [--configs 0:100,63:100:8]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # common.py

from common import ensure_corpus  # noqa: E402

import hsw2v.running._tuning  # noqa: E402
from hsw2v import LineSentence, Word2Vec  # noqa: E402
from hsw2v.callbacks import CallbackAny2Vec  # noqa: E402


class LastEpochTimer(CallbackAny2Vec):
    """Wall and process CPU time (all threads), and raw words, of the last epoch of a train()
    call (also used by ``scaling_probe.py``)."""

    def on_epoch_begin(self, model):
        self.started = time.perf_counter()
        self.cpu_started = time.process_time()

    def on_epoch_end(self, model):
        self.seconds = time.perf_counter() - self.started
        self.cpu_seconds = time.process_time() - self.cpu_started
        self.raw_words = model.latest_epoch_report.raw_words


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--sg", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--epochs",
        type=int,
        default=2,
        help="train this many epochs and time the last (the epoch alone: no setup, and the "
        "ids already mapped)",
    )
    parser.add_argument(
        "--configs",
        default="0:100,15:50,31:100,63:100,127:100,1024:1000",
        help="comma-separated HOT_NODES:HOT_SYNC[:HOT_VISITS] settings",
    )
    args = parser.parse_args(argv)
    configs = [tuple(int(x) for x in c.split(":")) for c in args.configs.split(",")]
    configs = [c if len(c) == 3 else (*c, 2**30) for c in configs]
    corpus = LineSentence(str(ensure_corpus(args.corpus)))
    base = Word2Vec(
        vector_size=100, window=5, min_count=5, sample=1e-3, sg=args.sg,
        workers=args.workers, epochs=1, seed=1,
    )  # fmt: skip
    base.build_vocab(corpus)
    speeds: dict[tuple, list[float]] = {c: [] for c in configs}
    cpu: dict[tuple, list[float]] = {c: [] for c in configs}
    w2v = hsw2v.running._tuning
    for _ in range(args.repeats):
        for hot, sync, visits in configs:
            w2v.HOT_NODES, w2v.HOT_SYNC, w2v.HOT_VISITS = hot, sync, visits
            w2v.HOT_NODES_CBOW, w2v.HOT_SYNC_CBOW, w2v.HOT_VISITS_CBOW = hot, sync, visits
            model = copy.deepcopy(base)
            timer = LastEpochTimer()
            model.train(
                corpus, total_examples=model.corpus_count, epochs=args.epochs, callbacks=[timer]
            )
            speeds[(hot, sync, visits)].append(timer.raw_words / timer.seconds)
            cpu[(hot, sync, visits)].append(timer.cpu_seconds / timer.raw_words * 1e6)
    print(
        f"sg={args.sg} workers={args.workers}, words/s of epoch {args.epochs} of {args.epochs}, "
        f"{args.repeats} alternated runs"
    )
    for config in configs:
        hot, sync, visits = config
        runs = speeds[config]
        print(
            f"  hot={hot:5d} sync={sync:5d} visits={visits:10d}: median "
            f"{statistics.median(runs) / 1e3:5.0f}k words/s, "
            f"{statistics.median(cpu[config]):.3f} CPU s per million words  "
            f"runs: {', '.join(f'{x / 1e3:.0f}k' for x in runs)}"
        )


if __name__ == "__main__":
    main()
