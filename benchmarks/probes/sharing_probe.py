"""What two training threads cost each other, split by weight matrix.

Two threads call the training kernel (``Trainer.train_job``, built as ``Word2Vec`` builds it:
``hsw2v.running.trainer.trainer_settings``) directly on the corpus's jobs (one thread the
even jobs, the other the odd ones), once with every weight shared as in training, and once
each with its own copy of ``syn0``, of the output matrices (``syn1`` for hierarchical softmax,
``syn1neg`` for negative sampling), or of both; a single thread running all jobs is the
reference (and the same thread with the private rows that several workers get: the hottest
inner nodes and, with negative sampling, the most frequent words' output rows; what they cost
one thread, all of it paid on the two-thread side, since ``Word2Vec(workers=1)`` trains every
row in place). With separate copies of every matrix the threads share nothing (the ceiling:
what the cores give when no cache line passes between them); the runs in between say how much
of the two-thread cost comes from the input rows and how much from the output rows. All runs
start from the same weights (the model after one epoch), use the private rows of
``hsw2v.running._tuning`` (``--hot N:S[:K]`` overrides the inner nodes', ``--hot-words N`` the
words'), and are alternated ``--repeats`` times; per run it prints words/s, and the threads'
own CPU seconds per million words (``time.thread_time``, so the main thread is not counted).

    python benchmarks/probes/sharing_probe.py --corpus CORPUS [--sg 1] [--repeats 3]
        [--negative 0] [--size 100] [--words 0] [--hot 63:100] [--hot-words 64]

``--negative N`` trains ``hs=0, negative=N`` (default 0: hierarchical softmax alone);
``--words`` keeps the corpus's first N words (0: all).
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

import hsw2v.running._tuning as tuning  # noqa: E402
from hsw2v import LineSentence, Word2Vec  # noqa: E402
from hsw2v.running.epochs import iter_jobs  # noqa: E402
from hsw2v.running.objectives import outputs_of  # noqa: E402
from hsw2v.running.trainer import trainer_settings  # noqa: E402


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


def first_words(sentences, limit: int) -> list:
    """The sentences holding the corpus's first ``limit`` words (all of them for 0)."""
    if not limit:
        return list(sentences)
    kept, n = [], 0
    for s in sentences:
        kept.append(s)
        n += len(s)
        if n >= limit:
            break
    return kept


def set_private_rows(args) -> None:
    """Apply ``--hot`` and ``--hot-words`` to the tuning constants the trainer reads."""
    if args.hot:
        hot = ([int(x) for x in args.hot.split(":")] + [2**30])[:3]
        names = (("HOT_NODES", "HOT_SYNC", "HOT_VISITS") if args.sg
                 else ("HOT_NODES_CBOW", "HOT_SYNC_CBOW", "HOT_VISITS_CBOW"))  # fmt: skip
        for name, value in zip(names, hot, strict=True):
            setattr(tuning, name, value)
    if args.hot_words is not None:
        tuning.HOT_WORDS = args.hot_words


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--sg", type=int, default=1)
    parser.add_argument("--negative", type=int, default=0)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--words", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hot", help="private top nodes as N:S[:K] (nodes, sync interval, visits)")
    parser.add_argument("--hot-words", type=int, help="private syn1neg rows (most frequent words)")
    args = parser.parse_args(argv)
    set_private_rows(args)
    sentences = first_words(LineSentence(str(ensure_corpus(args.corpus))), args.words)
    model = Word2Vec(
        vector_size=args.size, window=5, min_count=5, sample=1e-3, sg=args.sg,
        hs=int(not args.negative), negative=args.negative, workers=2, seed=1,
    )  # fmt: skip
    model.build_vocab(sentences)
    model.train(sentences, total_examples=model.corpus_count, epochs=1)
    jobs = list(iter_jobs(sentences, model.wv.key_to_index, model.batch_words))
    halves = [jobs[0::2], jobs[1::2]]
    alone, private = trainer_settings(model, 1), trainer_settings(model, 2)
    syn0, outputs = model.wv.vectors, list(outputs_of(model).values())

    def copies(matrices: list) -> list:
        return [m.copy() for m in matrices]

    def pair(share_syn0: bool, share_out: bool) -> list:
        own0, own_out = syn0.copy(), copies(outputs)
        return [
            private.build(own0 if share_syn0 else own0.copy(),
                          *(own_out if share_out else copies(own_out)))
            for _ in range(2)
        ]  # fmt: skip

    settings = {
        "one thread": lambda: ([alone.build(syn0.copy(), *copies(outputs))], [jobs]),
        "one, private rows": lambda: ([private.build(syn0.copy(), *copies(outputs))], [jobs]),
        "two, nothing shared": lambda: (pair(False, False), halves),
        "two, syn0 shared": lambda: (pair(True, False), halves),
        "two, output shared": lambda: (pair(False, True), halves),
        "two, both shared": lambda: (pair(True, True), halves),
    }  # fmt: skip
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in settings}
    for _ in range(args.repeats):
        for name, make in settings.items():
            runs[name].append(run_threads(*make()))
            speed, cpu = runs[name][-1]
            print(f"  {name}: {speed / 1e3:.0f}k words/s, {cpu:.3f} CPU s/Mword", flush=True)
    one = statistics.median(s for s, _ in runs["one thread"])
    objective = f"negative={args.negative}" if args.negative else "hs"
    print(
        f"sg={args.sg}, {objective}, vector_size {args.size}, private top nodes "
        f"{0 if private.hot_rows is None else len(private.hot_rows)}, "
        f"private word rows {0 if private.hot_words is None else len(private.hot_words)}, "
        f"synced every {private.hot_sync} centre words, "
        f"{args.repeats} alternated runs, medians (CPU: min-max):"
    )
    for name, r in runs.items():
        speed = statistics.median(s for s, _ in r)
        cpus = [c for _, c in r]
        print(
            f"{name:22s} {speed / 1e3:6.0f}k words/s  {speed / one:.2f}x one thread  "
            f"{statistics.median(cpus):.3f} CPU s per million words "
            f"({min(cpus):.3f}-{max(cpus):.3f})"
        )


if __name__ == "__main__":
    main()
