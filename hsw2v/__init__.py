"""hsw2v: fast word2vec with hierarchical softmax, a drop-in for gensim's Word2Vec.

>>> from hsw2v import Word2Vec
>>> model = Word2Vec([["hello", "world"]] * 20, vector_size=8, min_count=1, workers=1)
>>> len(model.wv)
2
"""

from hsw2v.corpora import FixedCorpus, LineSentence, PathLineSentences, Text8Corpus
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.layer import HierarchicalSoftmax
from hsw2v.word2vec import Word2Vec

__version__ = "0.1.0"

__all__ = [
    "FixedCorpus",
    "HierarchicalSoftmax",
    "KeyedVectors",
    "LineSentence",
    "PathLineSentences",
    "Text8Corpus",
    "Word2Vec",
    "__version__",
]
