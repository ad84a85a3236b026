"""The conversion between hsw2v's and gensim 4.4's models, in memory, for any model class.

:mod:`hsw2v.gensim_compat` is the public face (it fills in hsw2v's classes); the models'
own ``to_gensim`` / ``from_gensim`` methods call this module with their class, so that no
model imports the face above it. How both libraries store a model, and so why converting
only copies arrays and settings, is told in :mod:`hsw2v.gensim_compat`. The settings and
state copied are the gensim column of the parameter table (:mod:`hsw2v.running.params`).

gensim is optional: it is imported inside the functions that need it (:func:`gensim_classes`),
and a missing install raises an ImportError that says what to install.
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np

from hsw2v.huffman import Tree, build_huffman_tree
from hsw2v.running.objectives import SWITCHES, active, rebuild_lookups
from hsw2v.running.params import GENSIM_SETTINGS, GENSIM_STATE


def gensim_class(module: str, name: str):
    """gensim's class ``module.name`` (e.g. ``gensim.models``, ``Word2Vec``), or a clear
    ImportError when gensim is not installed."""
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise ImportError(
            "converting to or from gensim needs gensim, which is not installed: "
            "pip install gensim==4.4.0"
        ) from exc


def gensim_classes():
    """gensim's ``Word2Vec`` and ``KeyedVectors`` classes, or a clear ImportError."""
    return gensim_class("gensim.models", "Word2Vec"), gensim_class("gensim.models", "KeyedVectors")


def _path_arrays(values, dtype) -> np.ndarray:
    """An object array of contiguous per-word arrays of ``dtype`` (gensim's code/point)."""
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = np.ascontiguousarray(value, dtype=dtype)
    return out


def _copy_expandos(expandos: dict, point_dtype) -> dict:
    copied = {}
    for attr, values in expandos.items():
        if attr == "code":
            copied[attr] = _path_arrays(values, np.uint8)
        elif attr == "point":
            copied[attr] = _path_arrays(values, point_dtype)
        else:
            copied[attr] = np.array(values, copy=True)
    return copied


def _copy_keys(src, dst, point_dtype) -> None:
    """Copy keys, vectors and per-key attributes from one KeyedVectors to another (either
    library's), leaving no array shared."""
    dst.index_to_key = list(src.index_to_key)
    dst.key_to_index = {key: i for i, key in enumerate(dst.index_to_key) if key is not None}
    dst.vectors = np.array(src.vectors, copy=True, order="C")
    dst.next_index = int(getattr(src, "next_index", len(dst.index_to_key)))
    dst.norms = None
    dst.expandos = _copy_expandos(getattr(src, "expandos", {}), point_dtype)


# ------------------------------------------------------------------------ KeyedVectors
def kv_to_gensim(kv):
    """A ``gensim.models.KeyedVectors`` with ``kv``'s keys, vectors and per-key attributes
    (copies; ``code``/``point`` become gensim's uint8/uint32 arrays).

    >>> from hsw2v import KeyedVectors
    >>> kv = KeyedVectors(2)
    >>> kv.add_vectors(["a", "b"], [[1.0, 2.0], [3.0, 4.0]])
    >>> g = kv_to_gensim(kv)
    >>> type(g).__module__, g.index_to_key, g["b"].tolist()
    ('gensim.models.keyedvectors', ['a', 'b'], [3.0, 4.0])
    """
    _, GensimKeyedVectors = gensim_classes()
    out = GensimKeyedVectors(kv.vector_size, count=0, dtype=kv.vectors.dtype)
    _copy_keys(kv, out, np.uint32)
    return out


def kv_from_gensim(gensim_kv, cls):
    """A ``cls`` (an hsw2v :class:`~hsw2v.keyedvectors.KeyedVectors`) with ``gensim_kv``'s
    keys, vectors and per-key attributes (copies).

    >>> from gensim.models import KeyedVectors as GensimKeyedVectors
    >>> from hsw2v import KeyedVectors
    >>> g = GensimKeyedVectors(2)
    >>> g.add_vectors(["x", "y"], [[1.0, 0.0], [0.0, 1.0]])
    >>> kv = kv_from_gensim(g, KeyedVectors)
    >>> type(kv).__module__, kv.index_to_key, kv["y"].tolist()
    ('hsw2v.keyedvectors', ['x', 'y'], [0.0, 1.0])
    """
    if not hasattr(gensim_kv, "vectors") or not hasattr(gensim_kv, "index_to_key"):
        raise TypeError(f"expected a gensim KeyedVectors, got {type(gensim_kv).__name__}")
    out = cls(int(gensim_kv.vector_size), 0, dtype=gensim_kv.vectors.dtype)
    _copy_keys(gensim_kv, out, np.int32)
    return out


# ------------------------------------------------------------------------ Word2Vec
def to_gensim(model, gensim_class=None, extra_settings=(), kv_to=None):
    """A ``gensim.models.Word2Vec`` equal to ``model``: same vocabulary and counts, vectors,
    ``syn1`` (with ``hs=1``), ``syn1neg`` and ``cum_table`` (with ``negative > 0``), codes and
    points, settings and corpus statistics, so gensim can continue training it (``train``) or
    query it (``wv``, ``score``, ``predict_output_word``).

    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1, epochs=1)
    >>> g = to_gensim(model)
    >>> g.hs, g.negative, g.wv.index_to_key, bool((g.wv.vectors == model.wv.vectors).all())
    (1, 0, ['a', 'b'], True)

    A subclass with more state (FastText) names gensim's class, its own settings
    (``extra_settings``) and the conversion of its ``wv`` (``kv_to``).
    """
    GensimWord2Vec, _ = gensim_classes()
    if model.tree is None or not len(model.wv.index_to_key):
        raise RuntimeError("nothing to convert: build the vocabulary first")
    settings = {name: getattr(model, name) for name in (*GENSIM_SETTINGS, *extra_settings)}
    gensim_class = gensim_class or GensimWord2Vec
    accepted = inspect.signature(gensim_class).parameters  # FastText's takes fewer
    out = gensim_class(**{k: v for k, v in settings.items() if k in accepted})
    for name, value in settings.items():
        if name not in accepted:
            setattr(out, name, value)
    out.wv = (kv_to or kv_to_gensim)(model.wv)
    out.wv.vectors = np.array(model.wv.vectors, dtype=np.float32, copy=True, order="C")
    out.wv.vectors_lockf = np.ones(1, dtype=np.float32)  # gensim's "all rows trainable"
    n = len(model.wv.index_to_key)
    out.wv.expandos["count"] = np.asarray(model.wv.expandos["count"], dtype=np.int64).copy()
    out.wv.expandos["sample_int"] = np.asarray(
        model.wv.expandos["sample_int"], dtype=np.uint32
    ).copy()
    tree = model.tree
    lengths = [int(x) for x in tree.lengths]
    if n == 1:
        lengths = [0]  # gensim's single-word tree: an empty path
    out.wv.expandos["code"] = _path_arrays(
        [tree.codes[i, : lengths[i]] for i in range(n)], np.uint8
    )
    out.wv.expandos["point"] = _path_arrays(
        [tree.points[i, : lengths[i]] for i in range(n)], np.uint32
    )
    for objective in active(model):  # gensim has the same names: syn1, syn1neg
        matrix = getattr(model, objective.matrix)
        setattr(out, objective.matrix, np.array(matrix, dtype=np.float32, copy=True, order="C"))
    if model.negative:
        out.make_cum_table()  # gensim's own table, for gensim's training
    for name in GENSIM_STATE:
        setattr(out, name, getattr(model, name))
    model._record_to_gensim(out)
    return out


def from_gensim(gensim_model, cls, extra_settings=(), kv_from=None):
    """A ``cls`` (an hsw2v :class:`~hsw2v.word2vec.Word2Vec`, or a subclass with its
    ``extra_settings`` and ``kv_from``, the conversion of its ``wv``) equal to a gensim model:
    same vocabulary, counts, vectors, settings, and output layers: ``syn1`` with its codes and
    points (``hs=1``), ``syn1neg`` (``negative > 0``; ``cum_table`` rebuilt from the counts);
    training continues from where gensim left off. A negative-sampling-only model (``hs=0``)
    gets hsw2v's own Huffman tree over its counts, unused unless ``hs`` is turned on.

    >>> from gensim.models import Word2Vec as GensimWord2Vec
    >>> from hsw2v import Word2Vec
    >>> g = GensimWord2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1,
    ...                    epochs=1, hs=1, negative=0)
    >>> model = from_gensim(g, Word2Vec)
    >>> type(model).__module__, model.wv.index_to_key, bool((model.syn1 == g.syn1).all())
    ('hsw2v.word2vec', ['a', 'b'], True)
    """
    if not hasattr(gensim_model, "wv") or not hasattr(gensim_model, "hs"):
        raise TypeError(f"expected a gensim Word2Vec, got {type(gensim_model).__name__}")
    hs = int(gensim_model.hs)
    on = active({name: int(getattr(gensim_model, name)) for name in SWITCHES})
    gwv = gensim_model.wv
    n = len(gwv.index_to_key)
    if n == 0 or any(not hasattr(gensim_model, o.matrix) for o in on):
        raise ValueError("nothing to convert: the gensim model has no vocabulary yet")
    # A model saved by gensim 3 (or older) and loaded by gensim 4.4 lacks the settings that
    # came later (``comment``, ``compute_loss``, ...): those take their defaults.
    settings = {
        name: getattr(gensim_model, name)
        for name in (*GENSIM_SETTINGS, *extra_settings)
        if hasattr(gensim_model, name)
    }
    settings["workers"] = max(1, int(settings.get("workers", 1)))
    for name in SWITCHES:
        settings.setdefault(name, int(getattr(gensim_model, name)))
    accepted = inspect.signature(cls).parameters
    model = cls(**{k: v for k, v in settings.items() if k in accepted})
    model.wv = (kv_from or kv_from_gensim)(gwv, type(model.wv))
    model.wv.vectors = np.array(gwv.vectors, dtype=np.float32, copy=True, order="C")
    expandos = model.wv.expandos
    expandos["count"] = np.asarray(expandos.get("count", np.ones(n)), dtype=np.int64)
    expandos["sample_int"] = np.asarray(
        expandos.get("sample_int", np.full(n, 2**32 - 1)), dtype=np.uint32
    )
    if n == 1 or not hs:
        tree = build_huffman_tree(expandos["count"])
    else:
        codes, points = gwv.expandos["code"], gwv.expandos["point"]
        lengths = np.array([len(c) for c in codes], dtype=np.int32)
        if lengths.min() < 1 or any(len(p) != k for p, k in zip(points, lengths, strict=True)):
            raise ValueError("the gensim model's Huffman codes and points are inconsistent")
        width = int(lengths.max())
        flat_codes = np.zeros((n, width), dtype=np.uint8)
        flat_points = np.zeros((n, width), dtype=np.int32)
        for i in range(n):
            flat_codes[i, : lengths[i]] = codes[i]
            flat_points[i, : lengths[i]] = points[i]
        tree = Tree(codes=flat_codes, points=flat_points, lengths=lengths)
    model._install_tree(tree)
    for name in (o.matrix for o in on):  # syn1, syn1neg
        weights = np.array(getattr(gensim_model, name), dtype=np.float32, copy=True, order="C")
        if weights.shape != model.wv.vectors.shape:
            raise ValueError(
                f"the gensim model's {name} {weights.shape} does not match its vectors "
                f"{model.wv.vectors.shape}"
            )
        setattr(model, name, weights)
    rebuild_lookups(model)  # cum_table from the counts, as hsw2v builds it
    for name in GENSIM_STATE:  # gensim 3 files may hold None (corpus_total_words): default
        if getattr(gensim_model, name, None) is not None:
            setattr(model, name, getattr(gensim_model, name))
    model._record_from_gensim(gensim_model)  # the loss's type, where its schedule got to
    return model
