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
(:class:`hsw2v.huffman.HuffmanTree`) and exposes per-word views under the same names.

>>> from hsw2v import Word2Vec
>>> model = Word2Vec([["a", "b", "c"]] * 20, vector_size=8, min_count=1, workers=1, epochs=1)
>>> g = to_gensim(model)            # doctest: +SKIP
>>> back = from_gensim(g)           # doctest: +SKIP
"""

from __future__ import annotations

import logging

import numpy as np

logger = logging.getLogger(__name__)

__all__ = [
    "from_gensim",
    "kv_from_gensim",
    "kv_to_gensim",
    "load_gensim_pickle",
    "to_gensim",
]

# Settings shared by both Word2Vec classes, passed to the other's constructor.
_SETTINGS = (
    "vector_size",
    "alpha",
    "window",
    "min_count",
    "max_vocab_size",
    "sample",
    "seed",
    "workers",
    "min_alpha",
    "sg",
    "hs",
    "negative",
    "ns_exponent",
    "cbow_mean",
    "epochs",
    "null_word",
    "sorted_vocab",
    "batch_words",
    "compute_loss",
    "max_final_vocab",
    "shrink_windows",
    "comment",
)
# State after build_vocab/train, copied attribute by attribute.
_STATE = (
    "corpus_count",
    "corpus_total_words",
    "effective_min_count",
    "train_count",
    "total_train_time",
    "running_training_loss",
)


def _gensim():
    """gensim's ``Word2Vec`` and ``KeyedVectors`` classes, or a clear ImportError."""
    try:
        from gensim.models import KeyedVectors, Word2Vec
    except ImportError as exc:
        raise ImportError(
            "converting to or from gensim needs gensim, which is not installed: "
            "pip install gensim==4.4.0"
        ) from exc
    return Word2Vec, KeyedVectors


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
    _, GensimKeyedVectors = _gensim()
    out = GensimKeyedVectors(kv.vector_size, count=0, dtype=kv.vectors.dtype)
    _copy_keys(kv, out, np.uint32)
    return out


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
    if cls is None:
        from hsw2v.keyedvectors import KeyedVectors as cls
    if not hasattr(gensim_kv, "vectors") or not hasattr(gensim_kv, "index_to_key"):
        raise TypeError(f"expected a gensim KeyedVectors, got {type(gensim_kv).__name__}")
    out = cls(int(gensim_kv.vector_size), 0, dtype=gensim_kv.vectors.dtype)
    _copy_keys(gensim_kv, out, np.int32)
    return out


# ------------------------------------------------------------------------ Word2Vec
def to_gensim(model):
    """A ``gensim.models.Word2Vec`` equal to ``model``: same vocabulary and counts, vectors,
    ``syn1`` (with ``hs=1``), ``syn1neg`` and ``cum_table`` (with ``negative > 0``), codes and
    points, settings and corpus statistics, so gensim can continue training it (``train``) or
    query it (``wv``, ``score``, ``predict_output_word``).

    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1, epochs=1)
    >>> g = to_gensim(model)
    >>> g.hs, g.negative, g.wv.index_to_key, bool((g.wv.vectors == model.wv.vectors).all())
    (1, 0, ['a', 'b'], True)
    """
    GensimWord2Vec, _ = _gensim()
    if model.tree is None or not len(model.wv.index_to_key):
        raise RuntimeError("nothing to convert: build the vocabulary first")
    settings = {name: getattr(model, name) for name in _SETTINGS}
    out = GensimWord2Vec(**settings)
    out.wv = kv_to_gensim(model.wv)
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
    if model.hs:
        out.syn1 = np.array(model.syn1, dtype=np.float32, copy=True, order="C")
    if model.negative:
        out.syn1neg = np.array(model.syn1neg, dtype=np.float32, copy=True, order="C")
        out.make_cum_table()
    for name in _STATE:
        setattr(out, name, getattr(model, name))
    if model.train_count:
        out.min_alpha_yet_reached = float(model.min_alpha)
    return out


def from_gensim(gensim_model, cls=None):
    """An hsw2v :class:`~hsw2v.word2vec.Word2Vec` (or ``cls``) equal to a gensim model:
    same vocabulary, counts, vectors, settings, and output layers: ``syn1`` with its codes and
    points (``hs=1``), ``syn1neg`` (``negative > 0``; ``cum_table`` rebuilt from the counts);
    training continues from where gensim left off. A negative-sampling-only model (``hs=0``)
    gets hsw2v's own Huffman tree over its counts, unused unless ``hs`` is turned on.

    >>> from gensim.models import Word2Vec as GensimWord2Vec
    >>> g = GensimWord2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1,
    ...                    epochs=1, hs=1, negative=0)
    >>> model = from_gensim(g)
    >>> type(model).__module__, model.wv.index_to_key, bool((model.syn1 == g.syn1).all())
    ('hsw2v.word2vec', ['a', 'b'], True)
    """
    if cls is None:
        from hsw2v.word2vec import Word2Vec as cls
    from hsw2v.huffman import HuffmanTree, build_huffman_tree

    if not hasattr(gensim_model, "wv") or not hasattr(gensim_model, "hs"):
        raise TypeError(f"expected a gensim Word2Vec, got {type(gensim_model).__name__}")
    hs, negative = int(gensim_model.hs), int(gensim_model.negative)
    gwv = gensim_model.wv
    n = len(gwv.index_to_key)
    if (
        n == 0
        or (hs and not hasattr(gensim_model, "syn1"))
        or (negative and not hasattr(gensim_model, "syn1neg"))
    ):
        raise ValueError("nothing to convert: the gensim model has no vocabulary yet")
    settings = {name: getattr(gensim_model, name) for name in _SETTINGS}
    settings["workers"] = max(1, int(settings["workers"]))
    model = cls(**settings)
    model.wv = kv_from_gensim(gwv)
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
        tree = HuffmanTree(codes=flat_codes, points=flat_points, lengths=lengths)
    model.tree = tree
    for name, on in (("syn1", hs), ("syn1neg", negative)):
        if not on:
            continue
        weights = np.array(getattr(gensim_model, name), dtype=np.float32, copy=True, order="C")
        if weights.shape != model.wv.vectors.shape:
            raise ValueError(
                f"the gensim model's {name} {weights.shape} does not match its vectors "
                f"{model.wv.vectors.shape}"
            )
        setattr(model, name, weights)
    if negative:
        model.make_cum_table()
    for name in _STATE:
        if hasattr(gensim_model, name):
            setattr(model, name, getattr(gensim_model, name))
    model.running_training_loss = float(model.running_training_loss)
    if hasattr(gensim_model, "min_alpha_yet_reached"):  # where gensim's schedule got to
        model.min_alpha_yet_reached = float(gensim_model.min_alpha_yet_reached)
    model._expose_tree()
    return model


# ------------------------------------------------------------------------ gensim's pickles
_PICKLE_PROTOCOL_MARK = b"\x80"  # a pickle of protocol 2 or later starts with PROTO


def is_pickle(path) -> bool:
    """Whether ``path`` starts like a pickle of protocol 2 or later (what gensim's ``save()``
    writes), judged from its first byte; the file is not unpickled."""
    try:
        with open(path, "rb") as fh:
            return fh.read(1) == _PICKLE_PROTOCOL_MARK
    except OSError:
        return False


def not_a_bundle_error(exc: ValueError, path, cls_name: str) -> ValueError:
    """The error ``Word2Vec.load`` / ``KeyedVectors.load`` raise for a file that is not an hsw2v
    bundle: for a gensim pickle it names the ways out (through gensim, which the user runs)."""
    if not is_pickle(path):
        return exc
    gensim_cls = "Word2Vec" if cls_name == "Word2Vec" else "KeyedVectors"
    return ValueError(
        f"{exc}: it is a pickle, as gensim's save() writes, and hsw2v never unpickles files "
        "(loading a pickle can run any code it holds). With gensim installed, load it through "
        f"gensim and convert: {cls_name}.from_gensim(gensim.models.{gensim_cls}.load(path)); "
        "for a file you trust, hsw2v.gensim_compat.load_gensim_pickle(path, trusted=True) does "
        "both; or export it with gensim's save_word2vec_format()"
    )


def load_gensim_pickle(path, *, trusted=False, mmap=None):
    """Load a file written by gensim's ``save()`` (a pickle, with gensim's side ``.npy``
    files) through gensim itself, and convert it: a gensim ``Word2Vec`` becomes an hsw2v
    :class:`~hsw2v.word2vec.Word2Vec` (:func:`from_gensim`), a ``KeyedVectors`` an hsw2v
    :class:`~hsw2v.keyedvectors.KeyedVectors` (:func:`kv_from_gensim`).

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
    GensimWord2Vec, GensimKeyedVectors = _gensim()
    from gensim.utils import SaveLoad

    loaded = SaveLoad.load(str(path), mmap=mmap)
    if isinstance(loaded, GensimWord2Vec):
        return from_gensim(loaded)
    if isinstance(loaded, GensimKeyedVectors):
        return kv_from_gensim(loaded)
    raise TypeError(
        f"{str(path)!r} holds a gensim {type(loaded).__name__}, not a Word2Vec or KeyedVectors"
    )


# ------------------------------------------------------------------------ gensim's save() options
GENSIM_SEP_LIMIT = 10 * 1024**2  # gensim's SaveLoad.save defaults
GENSIM_PICKLE_PROTOCOL = 4


def explain_save_options(separately, sep_limit, ignore, pickle_protocol, saved) -> None:
    """Say what hsw2v's ``save()`` does with gensim's ``SaveLoad.save`` options (logged at
    INFO, or a warning where the request is not honoured); ``saved`` names the attributes
    the file stores. Only options given other than gensim's defaults are mentioned.

    * ``separately`` / ``sep_limit``: gensim stores large arrays outside the pickle so that
      ``load(mmap='r')`` can map them; every hsw2v array is its own aligned ``.npy`` member
      of the bundle, always mappable, so there is nothing to do.
    * ``ignore``: attributes hsw2v never stores (``cum_table``, norms: rebuilt on load) are
      left out as asked; the attributes the file does store are still stored (a model file
      holds everything needed to load and train it), with a warning.
    * ``pickle_protocol``: unused, hsw2v files hold no pickle.
    """
    if separately is not None or sep_limit != GENSIM_SEP_LIMIT:
        logger.info(
            "save(separately=%r, sep_limit=%r): every array is already stored as its own "
            "aligned .npy member, which load(mmap='r') maps; nothing else to do",
            separately,
            sep_limit,
        )
    kept = sorted(set(ignore or ()) & set(saved))
    if kept:
        logger.warning(
            "save(ignore=%r): %s stored anyway, as a model file holds everything needed to "
            "load it again",
            sorted(ignore),
            ", ".join(kept),
        )
    elif ignore:
        logger.info("save(ignore=%r): not stored by hsw2v in any case", sorted(ignore))
    if pickle_protocol != GENSIM_PICKLE_PROTOCOL:
        logger.info("save(pickle_protocol=%r): unused, hsw2v files hold no pickle", pickle_protocol)
