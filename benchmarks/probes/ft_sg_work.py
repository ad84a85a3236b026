"""How much work FastText's skip-gram with hierarchical softmax does per centre word, counted
from the corpus and the model's tree: the input rows whose mean is h (the word's row and its
n-gram rows), the path nodes its contexts walk, and how many of those nodes are distinct.

Why: hsw2v's step reads and writes a centre's rows once (their mean predicts every context),
so what remains per context is its walk. The distinct nodes bound what any walk that visits a
node once per centre (h fixed across the contexts, which is not gensim's arithmetic) could
save: the top of the tree is on every path, the rest mostly is not.

Sampling and windows as the kernel draws them (each word kept with the model's own
``sample_int``, each centre's window reduced uniformly to 1..window), with this script's
own random numbers.

    PYTHONPATH=. python3 benchmarks/probes/ft_sg_work.py --corpus ../data/gcide.txt \\
        --lines 20000
"""

from __future__ import annotations

import argparse
import itertools
import random

import numpy as np


def main(argv=None) -> int:
    from hsw2v import Word2Vec
    from hsw2v.fasttext._ngrams import compute_ngrams_bytes

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--lines", type=int, default=20_000, help="lines walked (the head)")
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--sample", type=float, default=1e-3)
    parser.add_argument("--min-n", type=int, default=3)
    parser.add_argument("--max-n", type=int, default=6)
    args = parser.parse_args(argv)

    # the vocabulary and Huffman tree a FastText model of these settings builds (the same
    # counting and tree as Word2Vec's)
    model = Word2Vec(min_count=5, sg=1, hs=1, negative=0, vector_size=8, sample=args.sample)
    model.build_vocab(corpus_file=args.corpus)
    wv = model.wv
    key_to_index = wv.key_to_index
    points = [np.asarray(wv.get_vecattr(w, "point")) for w in wv.index_to_key]
    # the keep probabilities the kernel draws against (the model's own sample_int)
    keep = np.array([wv.get_vecattr(w, "sample_int") for w in wv.index_to_key]) / (2**32 - 1)
    rows = np.array([1 + len(compute_ngrams_bytes(w, args.min_n, args.max_n))
                     for w in wv.index_to_key], float)  # fmt: skip

    rng = random.Random(1)
    centres = visits = distinct = 0
    input_rows = 0.0
    with open(args.corpus, encoding="utf-8", errors="replace") as lines:
        for line in itertools.islice(lines, args.lines):
            ids = [key_to_index[t] for t in line.split() if t in key_to_index]
            ids = [i for i in ids if rng.random() < keep[i]]
            for c, centre in enumerate(ids):
                b = rng.randint(1, args.window)
                contexts = ids[max(0, c - b) : c] + ids[c + 1 : c + b + 1]
                if not contexts:
                    continue
                centres += 1
                input_rows += rows[centre]
                nodes = set()
                for w in contexts:
                    visits += len(points[w])
                    nodes.update(points[w].tolist())
                distinct += len(nodes)
    if not centres:
        raise SystemExit("no centre word with a context in those lines")
    print(f"{centres:,} centres in the first {args.lines:,} lines; per centre: "
          f"{input_rows / centres:.1f} input rows, {visits / centres:.1f} path nodes walked, "
          f"{distinct / centres:.1f} distinct ({distinct / visits:.3f} of the walked)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
