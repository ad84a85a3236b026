"""gensim 4.4's own ``test_word2vec.py`` or ``test_doc2vec.py``, run against hsw2v.

The test file inside the gensim wheel is copied to a temporary folder with its model module
(``gensim.models.word2vec`` or ``gensim.models.doc2vec``) swapped for one whose names below
are hsw2v's and every other name gensim's. Everything else (its test data,
``keyedvectors``, the helpers it imports) stays gensim's. The pytest summary and every
failure's line are printed. (FastText's test file imports its names one by one:
``gensim_fasttext_tests.py``.)

Usage:  python3 benchmarks/probes/gensim_module_tests.py word2vec|doc2vec
        (needs gensim 4.4.0, pytest and testfixtures, which gensim's tests import)
"""

from __future__ import annotations

import argparse
import sys

from _gensim_tests import run_with_module

HSW2V_NAMES = {
    "word2vec": "LineSentence, PathLineSentences, Text8Corpus, Word2Vec",
    "doc2vec": "Doc2Vec, TaggedDocument, TaggedLineDocument",
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(HSW2V_NAMES))
    args = parser.parse_args(argv)
    return run_with_module(f"test_{args.model}.py", args.model, HSW2V_NAMES[args.model])


if __name__ == "__main__":
    sys.exit(main())
