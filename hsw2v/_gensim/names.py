"""gensim 3's attribute names, answered with the gensim 4 name that replaced them.

Code written for gensim 3 reads ``model.wv.vocab``, ``wv.index2word``, ``model.syn0`` and so
on. gensim 4 raises an AttributeError that names the replacement (its "Migrating from Gensim
3.x to 4" notes); :func:`missing_attribute` gives hsw2v's objects the same answer, and the
plain "has no attribute" error for every other name. Keyed by class kind ("kv" for
KeyedVectors, "model" for Word2Vec), then by the old name.
"""

from __future__ import annotations

MIGRATION = "See https://github.com/RaRe-Technologies/gensim/wiki/Migrating-from-Gensim-3.x-to-4"

_VOCAB = (
    "The vocab attribute was removed from KeyedVectors in gensim 4.0.0. Use .key_to_index "
    "(dict key -> index), .index_to_key (list) and .get_vecattr(key, 'count') / "
    ".set_vecattr(key, attr, value) instead"
)

RENAMED = {
    "kv": {
        "vocab": _VOCAB,
        "index2word": "The index2word attribute has been replaced by index_to_key since gensim 4.0.0",
        "index2entity": (
            "The index2entity attribute has been replaced by index_to_key since gensim 4.0.0"
        ),
        "vectors_norm": (
            "The vectors_norm attribute is computed on demand since gensim 4.0.0: use "
            "get_normed_vectors() instead"
        ),
        "syn0": "The syn0 attribute has been replaced by vectors since gensim 4.0.0",
        "syn0norm": (
            "The syn0norm attribute is computed on demand since gensim 4.0.0: use "
            "get_normed_vectors() instead"
        ),
        "wv": "This is already the KeyedVectors (a model's .wv): query it directly",
    },
    "model": {
        "vocab": "The vocab attribute moved to model.wv in gensim 4.0.0. " + _VOCAB[4:],
        "index2word": "Use model.wv.index_to_key (gensim 4.0.0 replaced index2word)",
        "index2entity": "Use model.wv.index_to_key (gensim 4.0.0 replaced index2entity)",
        "syn0": "Use model.wv.vectors (gensim 4.0.0 replaced syn0)",
        "syn0norm": "Use model.wv.get_normed_vectors() (gensim 4.0.0 replaced syn0norm)",
        "vectors_norm": "Use model.wv.get_normed_vectors()",
        "syn0_lockf": "Use model.wv.vectors_lockf (gensim 4.0.0 replaced syn0_lockf)",
        "iter": "The iter parameter was renamed epochs in gensim 4.0.0: use model.epochs",
        "size": (
            "The size parameter was renamed vector_size in gensim 4.0.0: use model.vector_size"
        ),
        "vocabulary": "gensim 4.0.0 folded model.vocabulary into the model and model.wv",
        "trainables": "gensim 4.0.0 folded model.trainables into the model (syn1, syn1neg)",
        **{
            name: f"Word2Vec.{name}() moved to the KeyedVectors in gensim 4.0.0: use "
            f"model.wv.{name}()"
            for name in (
                "most_similar",
                "most_similar_cosmul",
                "similar_by_word",
                "similar_by_vector",
                "similarity",
                "n_similarity",
                "doesnt_match",
                "wmdistance",
                "evaluate_word_pairs",
                "evaluate_word_analogies",
                "accuracy",
                "distances",
                "distance",
                "closer_than",
                "words_closer_than",
                "rank",
                "get_vector",
                "word_vec",
            )
        },
    },
}


def missing_attribute(obj, kind: str, name: str) -> AttributeError:
    """The AttributeError for ``obj.name`` that normal lookup did not find: with the gensim 4
    replacement when ``name`` is a gensim 3 name (``kind`` "kv" or "model")."""
    hint = RENAMED[kind].get(name)
    message = f"{type(obj).__name__!r} object has no attribute {name!r}"
    if hint is not None:
        message = f"{message}. {hint}.\n{MIGRATION}"
    return AttributeError(message)
