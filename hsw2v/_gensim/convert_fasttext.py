"""The conversion between hsw2v's and gensim 4.4's ``FastTextKeyedVectors``, in memory.

Both hold the same arrays: the keys and their composed ``vectors``, the word rows
``vectors_vocab`` and the ``bucket`` n-gram rows ``vectors_ngrams`` (in hsw2v two views of one
``input_matrix``), the lock factors and ``min_n``, ``max_n``, ``bucket``. Converting copies
them; gensim recomputes its per-word buckets (``buckets_word``) from the keys.

gensim is imported inside the functions, as in :mod:`hsw2v._gensim.convert`.
"""

from __future__ import annotations

import numpy as np

from hsw2v._gensim.convert import _copy_keys, gensim_class


def _gensim_fasttext_kv():
    return gensim_class("gensim.models.fasttext", "FastTextKeyedVectors")


def _copy(values):
    return None if values is None else np.array(values, copy=True, order="C")


def ftkv_to_gensim(kv):
    """A ``gensim.models.fasttext.FastTextKeyedVectors`` equal to the hsw2v one `kv`
    (copies), giving the same vectors for any word.

    >>> from hsw2v.fasttext._keyedvectors import FastTextKeyedVectors
    >>> kv = FastTextKeyedVectors(2, 3, 4, bucket=8); kv.add_vectors(["ab"], [[0.0, 0.0]])
    >>> kv.resize_vectors(); g = kv.to_gensim()  # ftkv_to_gensim(kv)
    >>> type(g).__name__, g.bucket, bool((g["abc"] == kv["abc"]).all())
    ('FastTextKeyedVectors', 8, True)
    """
    gensim_class = _gensim_fasttext_kv()
    dtype = kv.input_matrix.dtype
    out = gensim_class(kv.vector_size, kv.min_n, kv.max_n, kv.bucket, count=0, dtype=dtype)
    _copy_keys(kv, out, np.uint32)
    out.vectors_vocab = _copy(kv.vectors_vocab)
    out.vectors_ngrams = _copy(kv.vectors_ngrams)
    out.vectors_vocab_lockf = _copy(kv.vectors_vocab_lockf)
    out.vectors_ngrams_lockf = _copy(kv.vectors_ngrams_lockf)
    out.recalc_char_ngram_buckets()
    return out


def ftkv_from_gensim(gensim_kv, cls):
    """A `cls` (hsw2v's FastTextKeyedVectors) equal to gensim's `gensim_kv` (copies).

    >>> from gensim.models.fasttext import FastTextKeyedVectors as GensimFTKV
    >>> from hsw2v.fasttext._keyedvectors import FastTextKeyedVectors
    >>> g = GensimFTKV(2, 3, 4, 8); g.add_vectors(["ab"], [[0.0, 0.0]]); g.resize_vectors()
    >>> kv = ftkv_from_gensim(g, FastTextKeyedVectors)
    >>> kv.input_matrix.shape, bool((g["abc"] == kv["abc"]).all())
    ((9, 2), True)
    """
    needed = ("vectors", "index_to_key", "vectors_vocab", "min_n", "max_n", "bucket")
    if not all(hasattr(gensim_kv, name) for name in needed):
        raise TypeError(f"expected a gensim FastTextKeyedVectors, got {type(gensim_kv).__name__}")
    vocab = np.asarray(gensim_kv.vectors_vocab)
    out = cls(int(gensim_kv.vector_size), gensim_kv.min_n, gensim_kv.max_n, gensim_kv.bucket,
              0, dtype=vocab.dtype)  # fmt: skip
    _copy_keys(gensim_kv, out, np.int32)
    out.vectors_vocab = vocab
    if gensim_kv.vectors_ngrams is not None:
        out.vectors_ngrams = gensim_kv.vectors_ngrams
    for name in ("vectors_vocab_lockf", "vectors_ngrams_lockf"):
        values = getattr(gensim_kv, name, None)
        if values is not None:
            setattr(out, name, np.array(values, dtype=np.float32, copy=True).reshape(-1))
    if gensim_kv.bucket == 0:
        out.vectors = out.vectors_vocab  # gensim's alias, kept
    return out
