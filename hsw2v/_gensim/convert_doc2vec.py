"""Doc2Vec to and from gensim 4.4's ``Doc2Vec``: Word2Vec's conversion, and the documents.

The words, the tree, the output layers and the settings convert as Word2Vec's
(:mod:`hsw2v._gensim.convert`); a Doc2Vec adds its document vectors (``dv``: keys, rows,
``doc_count``) and its own settings (``dm``, ``dbow_words``, ``dm_tag_count``).
"""

from __future__ import annotations

import numpy as np

from hsw2v._gensim.convert import from_gensim, gensim_class, to_gensim
from hsw2v.keyedvectors import KeyedVectors


def doc2vec_to_gensim(model):
    """A ``gensim.models.Doc2Vec`` equal to ``model`` (see :meth:`hsw2v.Doc2Vec.to_gensim`)."""
    GensimDoc2Vec = gensim_class("gensim.models.doc2vec", "Doc2Vec")
    gensim_kv = gensim_class("gensim.models.keyedvectors", "KeyedVectors")
    out = to_gensim(model, GensimDoc2Vec)
    out.dbow_words = int(model.dbow_words)
    out.dm_tag_count = int(model.dm_tag_count)
    out.dm_concat = 0
    dv = gensim_kv(model.vector_size, len(model.dv))
    for key in model.dv.index_to_key:
        dv.add_vector(key, np.zeros(model.vector_size, np.float32))
    dv.vectors = np.array(model.dv.vectors, dtype=np.float32, copy=True, order="C")
    dv.vectors_lockf = np.ones(1, dtype=np.float32)
    counts = model.dv.expandos.get("doc_count")
    if counts is not None:
        dv.expandos["doc_count"] = np.asarray(counts, dtype=np.int64).copy()
    out.dv = dv
    return out


def doc2vec_from_gensim(cls, gensim_model):
    """A ``cls`` (:class:`hsw2v.Doc2Vec`) equal to a gensim ``Doc2Vec``."""
    from hsw2v.word2vec import Word2Vec

    if not hasattr(gensim_model, "dv"):
        raise TypeError(
            f"expected a gensim Doc2Vec, got {type(gensim_model).__name__}: use "
            "hsw2v.Word2Vec.from_gensim for a Word2Vec"
        )
    if getattr(gensim_model, "dm_concat", 0):
        raise NotImplementedError(
            "the gensim model trains with dm_concat=1, which hsw2v's Doc2Vec does not (see "
            "docs/doc2vec.md)"
        )
    words = from_gensim(gensim_model, Word2Vec)  # the words, tree, outputs and settings
    model = cls(
        dm=int(not gensim_model.sg),
        dbow_words=int(bool(getattr(gensim_model, "dbow_words", 0))),  # gensim's truth
        dm_tag_count=int(getattr(gensim_model, "dm_tag_count", 1)),
        vector_size=words.vector_size,
        workers=words.workers,
    )
    kept = {name: getattr(model, name) for name in ("dbow_words", "dm_tag_count", "dm_concat")}
    model.__dict__.update(words.__dict__)
    model.__dict__.update(kept)
    gdv = gensim_model.dv
    dv = KeyedVectors(model.vector_size)
    dv.index_to_key = [k.item() if isinstance(k, np.generic) else k for k in gdv.index_to_key]
    dv.key_to_index = {key: i for i, key in enumerate(dv.index_to_key)}
    dv.next_index = len(dv.index_to_key)
    dv.vectors = np.array(gdv.vectors, dtype=np.float32, copy=True, order="C")
    if dv.vectors.shape != (len(dv.index_to_key), model.vector_size):
        raise ValueError(
            f"the gensim model's dv.vectors {dv.vectors.shape} do not match its "
            f"{len(dv.index_to_key)} tags"
        )
    counts = gdv.expandos.get("doc_count") if hasattr(gdv, "expandos") else None
    dv.expandos = {
        "doc_count": np.zeros(len(dv.index_to_key), np.int64)
        if counts is None
        else np.asarray(counts, dtype=np.int64).copy()
    }
    dv.vectors_lockf = np.ones(1, dtype=np.float32)
    model.dv = dv
    model._tag_scan = None
    model._inference = None
    return model
