"""Thread scaling of hsw2v, with and without private copies of the hottest inner nodes.

Alternates, in one process, workers=1 and workers=2 with ``HOT_NODES`` (the number of top
inner nodes each job trains in a private copy, see ``hsw2v._inner.Trainer``) set to each
value asked for, and reports median training words/s and the workers=2 / workers=1 ratio.

    python benchmarks/scaling.py --corpus CORPUS --sg 1 --epochs 2 --repeats 3 --hot 0,1024
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ensure_corpus  # noqa: E402

import hsw2v.word2vec as w2v  # noqa: E402
from hsw2v import LineSentence, Word2Vec  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--sg", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hot", default="0,1024", help="HOT_NODES values for workers=2")
    args = parser.parse_args(argv)

    corpus = LineSentence(str(ensure_corpus(args.corpus)))
    configs = [(1, 0)] + [(2, int(h)) for h in args.hot.split(",")]
    speeds: dict = {c: [] for c in configs}
    words = 0
    for _ in range(args.repeats):
        for workers, hot in configs:
            w2v.HOT_NODES = hot
            model = Word2Vec(vector_size=100, window=5, min_count=5, sample=1e-3, sg=args.sg,
                             workers=workers, epochs=args.epochs)
            model.build_vocab(corpus)
            started = time.perf_counter()
            _, words = model.train(corpus, total_examples=model.corpus_count,
                                   epochs=args.epochs)
            speeds[workers, hot].append(words / (time.perf_counter() - started))
    base = statistics.median(speeds[1, 0])
    mode = "sg" if args.sg else "cbow"
    print(f"{mode}, {args.epochs} epochs, {args.repeats} alternated runs, median words/s:")
    for (workers, hot), runs in speeds.items():
        med = statistics.median(runs)
        print(f"  workers={workers} HOT_NODES={hot:5d}: {med / 1e3:6.0f}k  "
              f"(x{med / base:.2f} of workers=1)  runs: "
              + " ".join(f"{r / 1e3:.0f}k" for r in runs))


if __name__ == "__main__":
    main()
