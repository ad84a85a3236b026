"""One judge for every system: score word vectors stored in word2vec format with gensim.

- analogy: ``KeyedVectors.evaluate_word_analogies(datapath('questions-words.txt'),
  restrict_vocab=30000)``, the overall accuracy in % (questions with a word outside the 30000 most
  frequent words are skipped, as gensim does by default);
- wordsim: ``KeyedVectors.evaluate_word_pairs(datapath('wordsim353.tsv'))[1][0]``, the Spearman
  correlation (pairs with an unknown word are skipped; their share is reported as ``wordsim_oov_pct``).

Usage:  python3 benchmarks/evaluate.py VECTORS.bin [VECTORS2.bin ...] [--text]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys


def load(path: str, binary: bool = True):
    from gensim.models import KeyedVectors

    return KeyedVectors.load_word2vec_format(path, binary=binary)


def evaluate_keyed_vectors(kv, restrict_vocab: int = 30000) -> dict:
    from gensim.test.utils import datapath

    logging.getLogger("gensim").setLevel(logging.ERROR)
    score, sections = kv.evaluate_word_analogies(
        datapath("questions-words.txt"), restrict_vocab=restrict_vocab
    )
    total = next((s for s in sections if s["section"] == "Total accuracy"), None)
    n_questions = len(total["correct"]) + len(total["incorrect"]) if total else None
    pearson, spearman, oov = kv.evaluate_word_pairs(datapath("wordsim353.tsv"))
    return {
        "analogy_pct": 100.0 * float(score),
        "analogy_questions": n_questions,
        "wordsim_spearman": float(spearman[0]),
        "wordsim_pearson": float(pearson[0]),
        "wordsim_oov_pct": float(oov),
        "vocab_size": len(kv.index_to_key),
    }


def evaluate(path: str, binary: bool = True, restrict_vocab: int = 30000) -> dict:
    """Analogy accuracy (%) and wordsim353 Spearman of the vectors in ``path``."""
    return evaluate_keyed_vectors(load(path, binary), restrict_vocab)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Score word2vec-format vectors with gensim's judges.")
    ap.add_argument("vectors", nargs="+")
    ap.add_argument("--text", action="store_true", help="the files are in text format")
    ap.add_argument("--restrict-vocab", type=int, default=30000)
    args = ap.parse_args(argv)
    for p in args.vectors:
        r = evaluate(p, binary=not args.text, restrict_vocab=args.restrict_vocab)
        print(json.dumps({"vectors": p, **r}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
