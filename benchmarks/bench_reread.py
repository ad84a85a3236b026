"""Training speed when the corpus is read every epoch: hsw2v against gensim, both reading a
plain Python iterable once for the vocabulary and once per epoch.

    python3 benchmarks/bench_reread.py --corpus ../data/gcide.txt \\
        [--kinds list,restartable] [--mode sg] [--workers 2] [--epochs 5] [--repeats 3]

A plain iterable (a list of token lists, or a class whose ``__iter__`` reads the file again:
``systems.RestartableFile``) is nothing hsw2v can prove unchanged, so, like gensim, it reads
it every epoch (the tokens are mapped to ids in ``hsw2v._kernels._inner.encode_sentences`` by a
producer thread while the workers train). Each run is a fresh subprocess of ``systems.py``
with the settings of ``bench_speed.py`` (hs=1, negative=0, vector_size=100, window=5,
min_count=5, sample=1e-3, seed=1, gensim's alpha); for every repeat and kind, hsw2v and gensim
run in turn (alternated), and the medians of training words/s (corpus words x epochs /
``train()`` seconds; ``build_vocab()`` and making the list are not timed) close the output,
with hsw2v / gensim.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import count_words, display_path, ensure_corpus  # noqa: E402
from systems import CORPUS_KINDS, get_system  # noqa: E402

SYSTEMS = ("hsw2v", "gensim-iter")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--kinds", default="list,restartable")
    parser.add_argument("--mode", choices=("sg", "cbow"), default="sg")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    for kind in kinds:
        if kind not in CORPUS_KINDS:
            parser.error(f"unknown kind {kind!r}; choose from {', '.join(CORPUS_KINDS)}")
    corpus = str(ensure_corpus(args.corpus).resolve())
    words = count_words(corpus)
    print(
        f"corpus {display_path(args.corpus)}: {words:,} words; {args.mode}, "
        f"workers={args.workers}, epochs={args.epochs}",
        flush=True,
    )
    speeds: dict[tuple, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_reread-") as tmp:
        for repeat in range(args.repeats):
            for kind in kinds:
                for name in SYSTEMS:
                    result = get_system(name).train(
                        corpus,
                        args.mode,
                        args.workers,
                        args.epochs,
                        out_dir=tmp,
                        corpus_words=words,
                        corpus_kind=kind,
                    )
                    Path(result.vectors_path).unlink(missing_ok=True)
                    speeds.setdefault((kind, name), []).append(result.words_per_second)
                    print(
                        f"[{repeat + 1}/{args.repeats}] {kind} {name}: "
                        f"{result.words_per_second / 1e3:,.0f}k words/s (train "
                        f"{result.train_seconds:.1f}s, vocab {result.vocab_seconds:.1f}s)",
                        flush=True,
                    )
    print(f"medians of {args.repeats} alternated runs:")
    for kind in kinds:
        median = {name: statistics.median(speeds[kind, name]) for name in SYSTEMS}
        runs = {name: ", ".join(f"{s / 1e3:,.0f}k" for s in speeds[kind, name]) for name in SYSTEMS}
        print(
            f"{kind}: hsw2v {median['hsw2v'] / 1e3:,.0f}k ({runs['hsw2v']}), gensim "
            f"{median['gensim-iter'] / 1e3:,.0f}k ({runs['gensim-iter']}), hsw2v / gensim "
            f"{median['hsw2v'] / median['gensim-iter']:.2f}x",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
