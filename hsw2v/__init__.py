"""hsw2v: fast word2vec with hierarchical softmax, a drop-in for gensim's Word2Vec.

>>> from hsw2v import Word2Vec
>>> model = Word2Vec([["hello", "world"]] * 20, vector_size=8, min_count=1, workers=1)
>>> len(model.wv)
2
"""

import dis
import importlib
import logging
import sys
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
    from hsw2v.fasttext import FastText, FastTextKeyedVectors
    from hsw2v.keyedvectors import KeyedVectors
    from hsw2v.layer import HierarchicalSoftmax
    from hsw2v.word2vec import Word2Vec

_PUBLIC = {
    "FastText": "hsw2v.fasttext",
    "FastTextKeyedVectors": "hsw2v.fasttext",
    "FixedCorpus": "hsw2v.corpora",
    "HierarchicalSoftmax": "hsw2v.layer",
    # needs scikit-learn, so it stays out of __all__: `from hsw2v import *` works without it
    "HierarchicalSoftmaxClassifier": "hsw2v.classifier",
    "KeyedVectors": "hsw2v.keyedvectors",
    "LineSentence": "hsw2v.corpora",
    "PathLineSentences": "hsw2v.corpora",
    "Text8Corpus": "hsw2v.corpora",
    "TrainingDivergedError": "hsw2v.divergence",
    "Word2Vec": "hsw2v.word2vec",
}


# gensim's other models, not in hsw2v yet (docs/gensim.md, "Which gensim models hsw2v covers"):
# asking for one says what exists instead of a bare "cannot import name". A model that lands
# is added to _PUBLIC, which is looked up first, and its line here goes.
_NOT_YET = {
    "Doc2Vec": "paragraph and document vectors",
}
_IMPORT_FROM = dis.opmap["IMPORT_FROM"]


def _asked_by_import() -> bool:
    """Whether ``__getattr__`` runs for a ``from hsw2v import NAME`` statement: Python
    replaces an AttributeError raised there by a bare "cannot import name", so the message
    is given as an ImportError there, and as an AttributeError to ``hsw2v.NAME`` (and to
    ``hasattr``)."""
    frame = sys._getframe(2)  # the code that asked: 0 is this function, 1 __getattr__
    try:
        return frame.f_code.co_code[frame.f_lasti] == _IMPORT_FROM
    except (AttributeError, IndexError):
        return False


def _not_yet(name: str) -> str:
    return (
        f"hsw2v has no {name} ({_NOT_YET[name]}) yet: it has gensim's Word2Vec and "
        "FastText and KeyedVectors (from hsw2v import Word2Vec, FastText, KeyedVectors), the "
        "corpus readers, and the "
        "hierarchical-softmax layer and classifier. Use gensim's for now (from gensim.models "
        f"import {name}); which gensim models hsw2v covers and which are planned is listed in "
        'docs/gensim.md ("Which gensim models hsw2v covers").'
    )


def __getattr__(name: str):
    """Load a public class on first use (``from hsw2v import Word2Vec`` works as before); a
    gensim model that hsw2v does not have yet gets a message that says so."""
    if name not in _PUBLIC:
        if name in _NOT_YET:
            raise (ImportError if _asked_by_import() else AttributeError)(_not_yet(name))
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
    "FastText",
    "FastTextKeyedVectors",
    "FixedCorpus",
    "HierarchicalSoftmax",
    "KeyedVectors",
    "LineSentence",
    "PathLineSentences",
    "Text8Corpus",
    "TrainingDivergedError",
    "Word2Vec",
    "__version__",
    "show_config",
]
