"""Train hsw2v (or gensim) once with chosen settings and score it with the benchmark's judge.

For quality questions that the speed benchmark does not ask: a kernel variant, a setting, a
commit, negative sampling. Prints one line: settings, training words/s (raw corpus words x
epochs / seconds of ``train()``), the same per CPU-second of the process (all its threads;
steadier than wall time on a shared machine), analogy accuracy (questions-words.txt,
restrict_vocab=30000) and wordsim353 Spearman.

    python benchmarks/quality.py --corpus CORPUS --sg 1 --workers 2 --epochs 5 --kernel auto
    python benchmarks/quality.py --corpus CORPUS --sg 1 --hs 0 --negative 5 --system gensim
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ensure_corpus  # noqa: E402
from evaluate import evaluate  # noqa: E402

from hsw2v import LineSentence, Word2Vec  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--sg", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--kernel", default="auto", help="the path walk (HSW2V_KERNEL switch)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hs", type=int, default=1)
    parser.add_argument("--negative", type=int, default=0)
    parser.add_argument("--size", type=int, default=100, help="vector_size of both systems")
    parser.add_argument(
        "--shared-negatives",
        action="store_true",
        help="hsw2v only: Word2Vec(shared_negatives=True), one set of negatives per centre word "
        "(skip-gram) or per run of centre words (CBOW)",
    )
    parser.add_argument(
        "--tree", default="huffman", help="Word2Vec(tree=...): huffman, balanced or semantic"
    )
    parser.add_argument(
        "--system",
        choices=("hsw2v", "gensim"),
        default="hsw2v",
        help="gensim 4.4 at the same settings (its LineSentence, its train()); --kernel and "
        "--hot are hsw2v's only",
    )
    parser.add_argument(
        "--hot",
        type=int,
        default=None,
        help="override hsw2v.running._tuning.HOT_NODES and HOT_NODES_CBOW (private top nodes per job)",
    )
    parser.add_argument(
        "--hot-sync",
        type=int,
        default=None,
        help="override hsw2v.running._tuning.HOT_SYNC and HOT_SYNC_CBOW (centre words between syncs)",
    )
    parser.add_argument(
        "--hot-visits",
        type=int,
        default=None,
        help="override hsw2v.running._tuning.HOT_VISITS and HOT_VISITS_CBOW (visits after which a "
        "private row is synced alone)",
    )
    parser.add_argument(
        "--hot-words",
        type=int,
        default=None,
        help="override hsw2v.running._tuning.HOT_WORDS (private syn1neg rows per job with "
        "several workers)",
    )
    parser.add_argument(
        "--hot-merge",
        choices=("sum", "mean", "capped"),
        default=None,
        help="override hsw2v.running._tuning.HOT_MERGE (how private changes are added back)",
    )
    parser.add_argument(
        "--cbow-run",
        type=int,
        default=None,
        help="override hsw2v.running._tuning.CBOW_SHARED_RUN (CBOW with --shared-negatives: "
        "the centre words, --cbow-stride apart, that share one set of negatives)",
    )
    parser.add_argument(
        "--cbow-stride",
        type=int,
        default=None,
        help="override hsw2v.running._tuning.CBOW_SHARED_STRIDE (the centres between two that "
        "share a set; 0: 2 x window + 1)",
    )
    args = parser.parse_args(argv)
    import hsw2v.running._tuning

    if args.hot is not None:
        hsw2v.running._tuning.HOT_NODES = hsw2v.running._tuning.HOT_NODES_CBOW = args.hot
    if args.hot_sync is not None:
        hsw2v.running._tuning.HOT_SYNC = hsw2v.running._tuning.HOT_SYNC_CBOW = args.hot_sync
    if args.hot_visits is not None:
        hsw2v.running._tuning.HOT_VISITS = hsw2v.running._tuning.HOT_VISITS_CBOW = args.hot_visits
    if args.hot_merge is not None:
        hsw2v.running._tuning.HOT_MERGE = args.hot_merge
    if args.hot_words is not None:
        hsw2v.running._tuning.HOT_WORDS = args.hot_words
    if args.cbow_run is not None:
        hsw2v.running._tuning.CBOW_SHARED_RUN = args.cbow_run
    if args.cbow_stride is not None:
        hsw2v.running._tuning.CBOW_SHARED_STRIDE = args.cbow_stride

    settings = dict(  # the same model for both systems
        vector_size=args.size,
        window=5,
        min_count=5,
        sample=1e-3,
        sg=args.sg,
        hs=args.hs,
        negative=args.negative,
        workers=args.workers,
        epochs=args.epochs,
        seed=args.seed,
    )
    if args.system == "gensim":
        from gensim.models import Word2Vec as GensimWord2Vec
        from gensim.models.word2vec import LineSentence as GensimLineSentence

        corpus = GensimLineSentence(str(ensure_corpus(args.corpus)))
        model = GensimWord2Vec(**settings)
    else:
        corpus = LineSentence(str(ensure_corpus(args.corpus)))
        from hsw2v.running import trainer as running_trainer

        running_trainer.WALK = args.kernel  # the path-walk switch (HSW2V_KERNEL), not a parameter
        model = Word2Vec(**settings, tree=args.tree, shared_negatives=args.shared_negatives)
    model.build_vocab(corpus)
    started, cpu_started = time.perf_counter(), time.process_time()
    _, raw = model.train(corpus, total_examples=model.corpus_count, epochs=args.epochs)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.bin"
        model.wv.save_word2vec_format(str(path), binary=True)
        scores = evaluate(str(path))
    w2v = hsw2v.running._tuning
    hot_nodes, hot_sync, hot_visits = (
        (w2v.HOT_NODES, w2v.HOT_SYNC, w2v.HOT_VISITS)
        if args.sg
        else (w2v.HOT_NODES_CBOW, w2v.HOT_SYNC_CBOW, w2v.HOT_VISITS_CBOW)
    )
    print(
        f"{args.system} size={args.size} sg={args.sg} hs={args.hs} negative={args.negative} "
        f"shared={int(args.shared_negatives)} cbow_run={hsw2v.running._tuning.CBOW_SHARED_RUN} "
        f"cbow_stride={hsw2v.running._tuning.CBOW_SHARED_STRIDE} "
        f"workers={args.workers} epochs={args.epochs} kernel={args.kernel} "
        f"seed={args.seed} hot={hot_nodes} sync={hot_sync} visits={hot_visits} "
        f"merge={hsw2v.running._tuning.HOT_MERGE}: "
        f"{raw / seconds:,.0f} words/s, {raw / cpu_seconds:,.0f} words per CPU-second, "
        f"analogy {scores['analogy_pct']:.2f} %, wordsim {scores['wordsim_spearman']:.3f}"
    )
    if args.system == "hsw2v":
        mean_path = np.average(model.tree.lengths, weights=model.wv.expandos["count"])
        print(f"  tree={args.tree}: mean path {mean_path:.2f} nodes per token")


if __name__ == "__main__":
    main()
