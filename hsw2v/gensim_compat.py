"""Convert models and vectors between hsw2v and gensim 4.4, in memory.

gensim is optional: it is imported inside the functions, and a missing install raises an
ImportError that says what to install.

Both libraries store a hierarchical-softmax model the same way (word2vec.c's layout, Mikolov et
al. 2013): ``wv.vectors`` is the V x d input matrix in vocabulary order; ``syn1`` is V x d, row
``k`` the k-th inner node created while building the Huffman tree (rows 0..V-2 used, root
``V-2``, or another node after hsw2v's ``build_vocab(update=True)``); each word's ``code`` (bits, root first) and ``point`` (inner-node rows, root first)
give its path, and ``sigmoid(h . syn1[point])`` is the probability of bit 0. The conversion
therefore copies arrays and settings; it never rebuilds a tree. (gensim and hsw2v may break
ties between equal counts differently when *building* a tree, so the converted model always
carries the source's own codes and points, which is what its ``syn1`` rows were trained for.)

A negative-sampling model (``negative > 0``) also carries ``syn1neg`` (V x d, one output vector
per word, in vocabulary order) in both libraries; it is copied, and ``cum_table`` is rebuilt by
the receiving library from the counts and ``ns_exponent`` (both give the same table).

gensim keeps each word's code as a uint8 array and its point as a uint32 array, in the
``"code"`` / ``"point"`` per-key attributes; hsw2v keeps them in flat padded arrays
(:class:`hsw2v.huffman.Tree`) and exposes per-word views under the same names.

>>> from hsw2v import Word2Vec
>>> model = Word2Vec([["a", "b", "c"]] * 20, vector_size=8, min_count=1, workers=1, epochs=1)
>>> g = to_gensim(model)            # doctest: +SKIP
>>> back = from_gensim(g)           # doctest: +SKIP
"""

from __future__ import annotations

import logging

from hsw2v._gensim.convert import from_gensim as _from_gensim
from hsw2v._gensim.convert import gensim_classes, kv_to_gensim, to_gensim
from hsw2v._gensim.convert import kv_from_gensim as _kv_from_gensim
from hsw2v._gensim.files import explain_save_options, is_pickle, not_a_bundle_error
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.word2vec import Word2Vec

logger = logging.getLogger(__name__)

__all__ = [
    "from_gensim",
    "kv_from_gensim",
    "kv_to_gensim",
    "load_gensim_pickle",
    "to_gensim",
    # the file notes live in hsw2v._gensim.files; named here, where gensim users look
    "explain_save_options",
    "is_pickle",
    "not_a_bundle_error",
]


def from_gensim(gensim_model, cls=None):
    """An hsw2v :class:`~hsw2v.word2vec.Word2Vec` (or ``cls``) equal to a gensim model:
    same vocabulary, counts, vectors, settings, and output layers: ``syn1`` with its codes and
    points (``hs=1``), ``syn1neg`` (``negative > 0``; ``cum_table`` rebuilt from the counts);
    training continues from where gensim left off. A negative-sampling-only model (``hs=0``)
    gets hsw2v's own Huffman tree over its counts, unused unless ``hs`` is turned on
    (:func:`hsw2v._gensim.convert.from_gensim`).

    >>> from gensim.models import Word2Vec as GensimWord2Vec
    >>> g = GensimWord2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1,
    ...                    epochs=1, hs=1, negative=0)
    >>> model = from_gensim(g)
    >>> type(model).__module__, model.wv.index_to_key, bool((model.syn1 == g.syn1).all())
    ('hsw2v.word2vec', ['a', 'b'], True)
    """
    return _from_gensim(gensim_model, Word2Vec if cls is None else cls)


def kv_from_gensim(gensim_kv, cls=None):
    """An hsw2v :class:`~hsw2v.keyedvectors.KeyedVectors` (or ``cls``) with ``gensim_kv``'s
    keys, vectors and per-key attributes (copies).

    >>> from gensim.models import KeyedVectors as GensimKeyedVectors
    >>> g = GensimKeyedVectors(2)
    >>> g.add_vectors(["x", "y"], [[1.0, 0.0], [0.0, 1.0]])
    >>> kv = kv_from_gensim(g)
    >>> type(kv).__module__, kv.index_to_key, kv["y"].tolist()
    ('hsw2v.keyedvectors', ['x', 'y'], [0.0, 1.0])
    """
    return _kv_from_gensim(gensim_kv, KeyedVectors if cls is None else cls)


def load_gensim_pickle(path, *, trusted=False, mmap=None):
    """Load a file written by gensim's ``save()`` (a pickle, with gensim's side ``.npy``
    files) through gensim itself, and convert it: a gensim ``Word2Vec`` becomes an hsw2v
    :class:`~hsw2v.word2vec.Word2Vec` (:func:`from_gensim`), a ``KeyedVectors`` an hsw2v
    :class:`~hsw2v.keyedvectors.KeyedVectors` (:func:`kv_from_gensim`), a ``FastText`` and
    its ``FastTextKeyedVectors`` hsw2v's (their ``from_gensim``).

    Unpickling runs whatever code the file holds, so this is an explicit opt-in for files you
    made or trust: ``trusted=True`` is required. hsw2v's own ``load()`` never unpickles.
    Needs gensim (``pip install gensim==4.4.0``).

    >>> import os, tempfile
    >>> from gensim.models import Word2Vec as GensimWord2Vec
    >>> path = os.path.join(tempfile.mkdtemp(), "gensim.model")
    >>> GensimWord2Vec([["a", "b", "a"]] * 10, vector_size=4, min_count=1, hs=1, negative=0).save(path)
    >>> load_gensim_pickle(path)
    Traceback (most recent call last):
    ...
    ValueError: load_gensim_pickle() unpickles the file, which runs any code it holds: pass trusted=True only for a file you made or trust
    >>> model = load_gensim_pickle(path, trusted=True)
    >>> type(model).__module__, model.wv.index_to_key
    ('hsw2v.word2vec', ['a', 'b'])
    """
    if trusted is not True:
        raise ValueError(
            "load_gensim_pickle() unpickles the file, which runs any code it holds: pass "
            "trusted=True only for a file you made or trust"
        )
    GensimWord2Vec, GensimKeyedVectors = gensim_classes()
    from gensim.utils import SaveLoad

    loaded = SaveLoad.load(str(path), mmap=mmap)
    # gensim's FastText classes subclass its Word2Vec and KeyedVectors: they come first
    from gensim.models.fasttext import FastText as GensimFastText
    from gensim.models.fasttext import FastTextKeyedVectors as GensimFastTextKeyedVectors

    if isinstance(loaded, GensimFastText):
        from hsw2v.fasttext import FastText

        return FastText.from_gensim(loaded)
    if isinstance(loaded, GensimFastTextKeyedVectors):
        from hsw2v.fasttext import FastTextKeyedVectors

        return FastTextKeyedVectors.from_gensim(loaded)
    if isinstance(loaded, GensimWord2Vec):
        return from_gensim(loaded)
    if isinstance(loaded, GensimKeyedVectors):
        return kv_from_gensim(loaded)
    raise TypeError(
        f"{str(path)!r} holds a gensim {type(loaded).__name__}, not a Word2Vec, FastText or "
        "KeyedVectors"
    )
