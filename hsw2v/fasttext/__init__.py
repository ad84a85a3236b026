"""FastText: word vectors built from character n-grams (gensim 4.4's ``FastText``).

The model (:mod:`hsw2v.fasttext._model`) is Word2Vec with another input side; the n-gram
hashing lives in :mod:`hsw2v.fasttext._ngrams`, the vectors users keep in
:mod:`hsw2v.fasttext._keyedvectors`, and Facebook's ``.bin`` files in
:mod:`hsw2v.fasttext._facebook` (the bytes, read through
:mod:`~hsw2v.fasttext._byte_source`; fastText's tree in :mod:`~hsw2v.fasttext._facebook_tree`)
and :mod:`hsw2v.fasttext._facebook_model` (as models: gensim's ``load_facebook_model``,
``load_facebook_vectors``, ``save_facebook_model``).
"""

from hsw2v.fasttext._facebook_model import (
    load_facebook_model,
    load_facebook_vectors,
    save_facebook_model,
)
from hsw2v.fasttext._keyedvectors import FastTextKeyedVectors
from hsw2v.fasttext._model import FastText

__all__ = [
    "FastText",
    "FastTextKeyedVectors",
    "load_facebook_model",
    "load_facebook_vectors",
    "save_facebook_model",
]
