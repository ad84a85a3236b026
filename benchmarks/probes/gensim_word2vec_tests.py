"""gensim 4.4's own ``test_word2vec.py``, run against hsw2v's Word2Vec.

The test file inside the gensim wheel is copied to a temporary folder with its ``word2vec``
module swapped for one whose ``Word2Vec`` and corpus readers (``LineSentence``,
``PathLineSentences``, ``Text8Corpus``) are
hsw2v's (every other name stays gensim's ``gensim.models.word2vec``). Everything else (its
test data, ``keyedvectors``, the Word2Vec helpers it imports) stays gensim's. The pytest
summary and every failure's line are printed.

Usage:  python3 benchmarks/probes/gensim_word2vec_tests.py   (needs gensim 4.4.0, pytest and
        testfixtures, which gensim's tests import)
"""

from __future__ import annotations

import sys

from _gensim_tests import run_with_module


def main() -> int:
    return run_with_module("test_word2vec.py", "word2vec", "LineSentence, PathLineSentences, Text8Corpus, Word2Vec")


if __name__ == "__main__":
    sys.exit(main())
