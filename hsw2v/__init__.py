"""hsw2v: fast word2vec with hierarchical softmax, a drop-in for gensim's Word2Vec.

>>> from hsw2v import Word2Vec
>>> model = Word2Vec([["hello", "world"]] * 20, vector_size=8, min_count=1, workers=1)
>>> len(model.wv)
2
"""

__version__ = "0.1.0"

# First (isort keeps it first): importing hsw2v._cpu binds hsw2v._inner, _query and _layer
# to the kernels compiled for this CPU's level.
from hsw2v import _cpu  # noqa: F401
from hsw2v.corpora import LineSentence, PathLineSentences, Text8Corpus
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.layer import HierarchicalSoftmax
from hsw2v.word2vec import Word2Vec


def show_config() -> None:
    """Print the version, the kernel level in use, the levels compiled, the BLAS and the
    compiler flags per level (see :mod:`hsw2v._config`)."""
    from hsw2v._config import show_config as show

    show()


__all__ = [
    "HierarchicalSoftmax",
    "KeyedVectors",
    "LineSentence",
    "PathLineSentences",
    "Text8Corpus",
    "Word2Vec",
    "__version__",
    "show_config",
]
