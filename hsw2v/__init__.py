"""hsw2v: fast word2vec with hierarchical softmax, a drop-in for gensim's Word2Vec.

>>> from hsw2v import Word2Vec
>>> model = Word2Vec([["hello", "world"]] * 20, vector_size=8, min_count=1, workers=1)
>>> len(model.wv)
2
"""

import importlib
import logging
from typing import TYPE_CHECKING

# First: importing hsw2v._cpu chooses the CPU level whose kernels hsw2v._kernels._inner, _query and
# _layer will be. The public classes load on first use (PEP 562), so `import hsw2v` does not
# pay for SciPy's import until a model or corpus class is touched.
from hsw2v import _cpu  # noqa: F401
from hsw2v._version import __version__

# A library logs and lets the application choose where messages go (as gensim does): without
# a handler here, Python's last-resort handler would print hsw2v's warnings to stderr.
logging.getLogger(__name__).addHandler(logging.NullHandler())

if TYPE_CHECKING:  # what the lazy names below are, for type checkers and documentation tools
    from hsw2v.classifier import HierarchicalSoftmaxClassifier  # noqa: F401 (not in __all__)
    from hsw2v.corpora import FixedCorpus, LineSentence, PathLineSentences, Text8Corpus
    from hsw2v.divergence import TrainingDivergedError
    from hsw2v.doc2vec import Doc2Vec, TaggedDocument, TaggedLineDocument
    from hsw2v.fasttext import FastText, FastTextKeyedVectors
    from hsw2v.keyedvectors import KeyedVectors
    from hsw2v.layer import HierarchicalSoftmax
    from hsw2v.word2vec import Word2Vec

_PUBLIC = {
    "Doc2Vec": "hsw2v.doc2vec",
    "FastText": "hsw2v.fasttext",
    "FastTextKeyedVectors": "hsw2v.fasttext",
    "FixedCorpus": "hsw2v.corpora",
    "HierarchicalSoftmax": "hsw2v.layer",
    # needs scikit-learn, so it stays out of __all__: `from hsw2v import *` works without it
    "HierarchicalSoftmaxClassifier": "hsw2v.classifier",
    "KeyedVectors": "hsw2v.keyedvectors",
    "LineSentence": "hsw2v.corpora",
    "PathLineSentences": "hsw2v.corpora",
    "TaggedDocument": "hsw2v.doc2vec",
    "TaggedLineDocument": "hsw2v.doc2vec",
    "Text8Corpus": "hsw2v.corpora",
    "TrainingDivergedError": "hsw2v.divergence",
    "Word2Vec": "hsw2v.word2vec",
}


def __getattr__(name: str):
    """Load a public class on first use (``from hsw2v import Word2Vec`` works as before)."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'hsw2v' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))


def show_config() -> None:
    """Print the version, the kernel level in use, the levels compiled, the BLAS and the
    compiler flags per level (see :mod:`hsw2v._config`)."""
    from hsw2v._config import show_config as show

    show()


__all__ = [
    "Doc2Vec",
    "FastText",
    "FastTextKeyedVectors",
    "FixedCorpus",
    "HierarchicalSoftmax",
    "KeyedVectors",
    "LineSentence",
    "PathLineSentences",
    "TaggedDocument",
    "TaggedLineDocument",
    "Text8Corpus",
    "TrainingDivergedError",
    "Word2Vec",
    "__version__",
    "show_config",
]
