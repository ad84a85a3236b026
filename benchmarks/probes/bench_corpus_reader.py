"""CPU cost of reading a corpus file: hsw2v's nogil reader against LineSentence in Python.

    python3 benchmarks/probes/bench_corpus_reader.py CORPUS.txt [--repeats 3]

For one thread over the whole file it times, in CPU seconds of this process (so that other
programs on a shared machine do not count), the median of ``--repeats`` runs of:

- counting the vocabulary: ``hsw2v._kernels._corpus_file.scan_range_vocab`` against
  ``hsw2v.vocab.scan_counts(LineSentence(path))``;
- turning the file into training jobs of word ids: ``hsw2v._kernels._corpus_file.encode_range``
  against ``hsw2v.running.epochs.iter_jobs(LineSentence(path), ...)``,

and checks that both give the same counts and the same jobs. The vocabulary is min_count=5.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from hsw2v import LineSentence, Word2Vec  # noqa: E402
from hsw2v._kernels._corpus_file import Vocab, encode_range, scan_range_vocab  # noqa: E402
from hsw2v.running.epochs import iter_jobs  # noqa: E402
from hsw2v.vocab import scan_counts  # noqa: E402


def cpu_seconds(fn, repeats):
    times, result = [], None
    for _ in range(repeats):
        started = time.process_time()
        result = fn()
        times.append(time.process_time() - started)
    return statistics.median(times), result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    path, big = args.corpus, 1 << 62

    c_count, (counts, raw, sentences) = cpu_seconds(lambda: scan_range_vocab(path, 0, big), args.repeats)
    py_count, (counts2, raw2, sentences2, _) = cpu_seconds(
        lambda: scan_counts(LineSentence(path)), args.repeats
    )
    assert counts == counts2 and raw == raw2 and sentences == sentences2, "counts differ"

    model = Word2Vec(vector_size=8, min_count=5)
    model.build_vocab_from_freq(counts)
    key_to_index = model.wv.key_to_index
    vocab = Vocab(key_to_index)
    c_ids, jobs = cpu_seconds(lambda: encode_range(path, 0, big, vocab, 10000), args.repeats)
    py_ids, jobs2 = cpu_seconds(
        lambda: list(iter_jobs(LineSentence(path), key_to_index, 10000)), args.repeats
    )
    assert len(jobs) == len(jobs2), "jobs differ"
    for (ids, ends, n), job in zip(jobs, jobs2, strict=True):
        assert (ids == job.ids).all() and (ends == job.ends).all() and n == job.raw_words

    print(f"{raw:,} words, {sentences:,} sentences, vocabulary {len(key_to_index):,}")
    print("| step | nogil reader | LineSentence + Python | ratio |")
    print("|---|---:|---:|---:|")
    for name, c, py in (
        ("count the vocabulary", c_count, py_count),
        ("jobs of ids", c_ids, py_ids),
    ):
        print(
            f"| {name} | {c:.2f} s ({raw / c / 1e6:.1f}M words/s) | "
            f"{py:.2f} s ({raw / py / 1e6:.2f}M words/s) | {py / c:.1f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
