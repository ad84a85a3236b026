"""Train hsw2v once with chosen settings and score it with the benchmark's judge.

For quality questions that the speed benchmark does not ask: a kernel variant, a setting, a
commit. Prints one line: settings, training words/s, analogy accuracy (questions-words.txt,
restrict_vocab=30000) and wordsim353 Spearman.

    python benchmarks/quality.py --corpus CORPUS --sg 1 --workers 2 --epochs 5 --kernel auto
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from common import ensure_corpus  # noqa: E402
from evaluate import evaluate  # noqa: E402

from hsw2v import LineSentence, Word2Vec  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--sg", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--kernel", default="auto")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--tree", default="huffman", help="Word2Vec(tree=...): huffman, balanced or semantic"
    )
    parser.add_argument(
        "--hot",
        type=int,
        default=None,
        help="override hsw2v.word2vec.HOT_NODES (private top nodes per job)",
    )
    parser.add_argument(
        "--hot-sync",
        type=int,
        default=None,
        help="override hsw2v.word2vec.HOT_SYNC (tokens between syncs)",
    )
    args = parser.parse_args(argv)
    import hsw2v.word2vec

    if args.hot is not None:
        hsw2v.word2vec.HOT_NODES = args.hot
    if args.hot_sync is not None:
        hsw2v.word2vec.HOT_SYNC = args.hot_sync

    corpus = LineSentence(str(ensure_corpus(args.corpus)))
    model = Word2Vec(
        vector_size=100,
        window=5,
        min_count=5,
        sample=1e-3,
        sg=args.sg,
        workers=args.workers,
        epochs=args.epochs,
        kernel=args.kernel,
        seed=args.seed,
        tree=args.tree,
    )
    model.build_vocab(corpus)
    started, cpu_started = time.perf_counter(), time.process_time()
    _, raw = model.train(corpus, total_examples=model.corpus_count, epochs=args.epochs)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.bin"
        model.wv.save_word2vec_format(str(path), binary=True)
        scores = evaluate(str(path))
    print(
        f"sg={args.sg} workers={args.workers} epochs={args.epochs} kernel={args.kernel} "
        f"seed={args.seed} hot={hsw2v.word2vec.HOT_NODES} sync={hsw2v.word2vec.HOT_SYNC}: "
        f"{raw / seconds:,.0f} words/s, "
        f"analogy {scores['analogy_pct']:.2f} %, wordsim {scores['wordsim_spearman']:.3f}"
    )
    mean_path = np.average(model.tree.lengths, weights=model.wv.expandos["count"])
    print(
        f"  tree={args.tree}: {raw / cpu_seconds:,.0f} words per CPU-second, {seconds:.0f} s "
        f"for {raw:,} words, mean path {mean_path:.2f} nodes per token"
    )


if __name__ == "__main__":
    main()
