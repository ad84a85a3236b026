"""gensim 4.4's own ``test_fasttext.py``, run against hsw2v's FastText.

The test file inside the gensim wheel is copied to a temporary folder with two imports
changed: ``FastText`` (imported there as ``FT_gensim``) and ``FastTextKeyedVectors`` come
from hsw2v, and so do ``compute_ngrams_bytes`` and ``ft_hash_bytes``. Everything else
(gensim's loaders of Facebook's files, its test data, the Word2Vec tests the file imports)
stays gensim's. The pytest summary and every failure's last line are printed.

Usage:  python3 benchmarks/probes/gensim_fasttext_tests.py   (needs gensim 4.4.0, pytest and
        testfixtures, which gensim's tests import)
"""

from __future__ import annotations

import sys

from _gensim_tests import run_gensim_tests

SWAPS = {
    "from gensim.models.fasttext import FastText as FT_gensim, FastTextKeyedVectors, _unpack": (
        "from gensim.models.fasttext import _unpack\n"
        "from hsw2v import FastText as FT_gensim, FastTextKeyedVectors"
    ),
    "from gensim.models.fasttext_inner import compute_ngrams, compute_ngrams_bytes, ft_hash_bytes": (
        "from gensim.models.fasttext_inner import compute_ngrams\n"
        "from hsw2v.fasttext._ngrams import compute_ngrams_bytes, ft_hash_bytes"
    ),
}


def main() -> int:
    return run_gensim_tests("test_fasttext.py", SWAPS)


if __name__ == "__main__":
    sys.exit(main())
