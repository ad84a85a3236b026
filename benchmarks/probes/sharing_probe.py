"""What two training threads cost each other, split by weight matrix.

Two threads call the training kernel (``hsw2v._kernels._inner.Trainer.train_job``) directly on the
corpus's jobs (one thread the even jobs, the other the odd ones), once with every weight
shared as in training, and once each with its own copy of ``syn0``, of ``syn1``, or of both;
a single thread running all jobs is the reference (and the same thread with the private top
rows: what they cost one thread, all of it paid on the two-thread side, since
``Word2Vec(workers=1)`` trains every row in place). With separate copies of both matrices the
threads share nothing (the ceiling: what the cores give when no cache line passes between
them); the runs in between say how much of the two-thread cost comes from the input rows
(``syn0``) and how much from the inner nodes (``syn1``). All runs start from the same weights
(the model after one epoch), use the same private top nodes as ``Word2Vec`` (``HOT_NODES``,
``HOT_SYNC`` and their CBOW twins, unless ``--hot`` gives ``N:S[:K]``), and are alternated
``--repeats`` times; per run it prints words/s, the ratio to one thread, and the threads' own
CPU seconds per million words (``time.thread_time``, so the main thread is not counted).

    python benchmarks/probes/sharing_probe.py --corpus CORPUS [--sg 1] [--repeats 3] [--hot 63:100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # common.py

from common import ensure_corpus  # noqa: E402

import hsw2v.running._tuning as w2v  # noqa: E402
from hsw2v import LineSentence, Word2Vec  # noqa: E402
from hsw2v._kernels._inner import Trainer  # noqa: E402
from hsw2v.running._train import iter_jobs  # noqa: E402


def run_threads(trainers: list, parts: list[list]) -> tuple[float, float]:
    """Thread k trains the jobs ``parts[k]`` with ``trainers[k]``; returns (words/s, the
    threads' CPU seconds per million raw words). A constant learning rate: the schedule does
    not change the cost."""
    cpu = [0.0] * len(parts)

    def work(k: int) -> None:
        started = time.thread_time()
        for j, job in enumerate(parts[k]):
            trainers[k].train_job(job.ids, job.ends, 0.01, 0.01, j + 1)
        cpu[k] = time.thread_time() - started

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(parts))]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    words = sum(job.raw_words for part in parts for job in part)
    return words / seconds, sum(cpu) / words * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--sg", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hot", help="private top nodes as N:S[:K] (nodes, sync interval, visits)")
    args = parser.parse_args(argv)
    sentences = list(LineSentence(str(ensure_corpus(args.corpus))))
    model = Word2Vec(
        vector_size=100, window=5, min_count=5, sample=1e-3, sg=args.sg, workers=2, seed=1
    )
    model.build_vocab(sentences)
    model.train(sentences, total_examples=model.corpus_count, epochs=1)
    jobs = list(iter_jobs(sentences, model.wv.key_to_index, model.batch_words))
    halves = [jobs[0::2], jobs[1::2]]
    if args.hot:
        hot = [int(x) for x in args.hot.split(":")]
    elif args.sg:
        hot = [w2v.HOT_NODES, w2v.HOT_SYNC, w2v.HOT_VISITS]
    else:
        hot = [w2v.HOT_NODES_CBOW, w2v.HOT_SYNC_CBOW, w2v.HOT_VISITS_CBOW]
    hot = (hot + [2**30])[:3]

    def trainer(syn0, syn1, private: bool):
        return Trainer(
            syn0, syn1, model.tree.codes, model.tree.points, model.tree.lengths,
            model.wv.expandos["sample_int"], model.window, bool(args.sg),
            kernel=model._kernel_variant(), hot_nodes=hot[0] if private else 0,
            hot_sync=hot[1], hot_visits=hot[2],
        )  # fmt: skip

    def pair(share_syn0: bool, share_syn1: bool) -> list:
        syn0, syn1 = model.wv.vectors.copy(), model.syn1.copy()
        return [
            trainer(syn0 if share_syn0 else syn0.copy(), syn1 if share_syn1 else syn1.copy(), True)
            for _ in range(2)
        ]

    settings = {
        "one thread": lambda: ([trainer(model.wv.vectors.copy(), model.syn1.copy(), False)],
                               [jobs]),
        "one, private rows": lambda: ([trainer(model.wv.vectors.copy(), model.syn1.copy(), True)],
                                      [jobs]),
        "two, nothing shared": lambda: (pair(False, False), halves),
        "two, syn0 shared": lambda: (pair(True, False), halves),
        "two, syn1 shared": lambda: (pair(False, True), halves),
        "two, both shared": lambda: (pair(True, True), halves),
    }  # fmt: skip
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in settings}
    for _ in range(args.repeats):
        for name, make in settings.items():
            runs[name].append(run_threads(*make()))
            speed, cpu = runs[name][-1]
            print(f"  {name}: {speed / 1e3:.0f}k words/s, {cpu:.3f} CPU s/Mword", flush=True)
    one = statistics.median(s for s, _ in runs["one thread"])
    print(
        f"sg={args.sg}, private top nodes {hot[0]} synced every {hot[1]} centre words, "
        f"{args.repeats} alternated runs, medians:"
    )
    for name, r in runs.items():
        speed = statistics.median(s for s, _ in r)
        print(
            f"{name:22s} {speed / 1e3:6.0f}k words/s  {speed / one:.2f}x one thread  "
            f"{statistics.median(c for _, c in r):.3f} CPU s per million words"
        )


if __name__ == "__main__":
    main()
