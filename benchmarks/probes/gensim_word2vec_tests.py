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

from _gensim_tests import run_gensim_tests

SWAP = (
    "from gensim.models import word2vec, keyedvectors",
    "from gensim.models import keyedvectors\nimport hsw2v_word2vec as word2vec",
)
SHIM = '''import gensim.models.word2vec as _gensim_word2vec
from hsw2v import LineSentence, PathLineSentences, Text8Corpus, Word2Vec  # noqa: F401


def __getattr__(name):
    return getattr(_gensim_word2vec, name)
'''


def main() -> int:
    return run_gensim_tests("test_word2vec.py", dict([SWAP]), {"hsw2v_word2vec.py": SHIM})


if __name__ == "__main__":
    sys.exit(main())
