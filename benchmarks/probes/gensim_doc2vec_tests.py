"""gensim 4.4's own ``test_doc2vec.py``, run against hsw2v's Doc2Vec.

The test file inside the gensim wheel is copied to a temporary folder with its ``doc2vec``
module swapped for one whose ``Doc2Vec``, ``TaggedDocument`` and ``TaggedLineDocument`` are
hsw2v's (every other name stays gensim's ``gensim.models.doc2vec``). Everything else (its
test data, ``keyedvectors``, the Word2Vec helpers it imports) stays gensim's. The pytest
summary and every failure's line are printed.

Usage:  python3 benchmarks/probes/gensim_doc2vec_tests.py   (needs gensim 4.4.0, pytest and
        testfixtures, which gensim's tests import)
"""

from __future__ import annotations

import sys

from _gensim_tests import run_with_module


def main() -> int:
    return run_with_module("test_doc2vec.py", "doc2vec", "Doc2Vec, TaggedDocument, TaggedLineDocument")


if __name__ == "__main__":
    sys.exit(main())
