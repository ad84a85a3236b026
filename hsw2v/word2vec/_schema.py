"""The Word2Vec file schema: what :meth:`hsw2v.Word2Vec.save` writes into a bundle and how
:meth:`~hsw2v.Word2Vec.load` checks and rebuilds a model from it.

:mod:`hsw2v.persist` knows only the generic bundle (JSON metadata and ``.npy`` arrays in a
zip); this module, beside the model, knows what a Word2Vec bundle holds:

``meta``
    every saved parameter and piece of state of the parameter table
    (:data:`hsw2v.running.params.SAVED`), and ``index_to_key``. A file written before a parameter
    was saved lacks it; the model's default is kept, unless :data:`BEFORE_SAVED` names the
    value such a file was trained with.
arrays
    ``vectors`` (V x d), each objective's output matrix (:mod:`hsw2v.running.objectives`: ``syn1``,
    V x d with ``hs``, else 0 x d; ``syn1neg``, V x d, only with ``negative``), ``count``
    (int64), ``sample_int`` (uint32), the tree's ``codes``, ``points`` and ``lengths``
    (:class:`hsw2v.huffman.Tree`), and ``vectors_lockf`` (float32, one or more
    factors; files of earlier versions have none: one factor of 1.0).

Nothing a file holds is trusted: :func:`check_word2vec_bundle` checks every parameter and
index before a model is built on it.
"""

from __future__ import annotations

import os

import numpy as np

from hsw2v import persist
from hsw2v._gensim.files import explain_save_options, not_a_bundle_error
from hsw2v.exceptions import WrongFileKindError
from hsw2v.huffman import Tree
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.running.objectives import (
    OBJECTIVES,
    OUTPUTS,
    matrix_shapes,
    rebuild_lookups,
    saved_outputs,
    switches_of,
)
from hsw2v.running.params import SAVED, check_word2vec_params
from hsw2v.running.validation import check_word2vec_arrays

KIND = "Word2Vec"  # the bundle kind of a Word2Vec file
# saved parameters whose default changed after files without them were written: the value
# those files were trained with (shared negatives became the default after the parameter was
# saved; a file without it predates the parameter and trained with gensim's per-pair draws)
BEFORE_SAVED = {"shared_negatives": False}


def save_model(model, fname, separately, sep_limit, ignore, pickle_protocol) -> None:
    """Write ``model`` to ``fname`` atomically (see :meth:`hsw2v.Word2Vec.save`): a bundle of
    the model class's kind (``FILE_KIND``), with what the class adds to Word2Vec's state
    (``_file_state``: FastText's n-gram settings and input matrix)."""
    if model.tree is None:
        raise RuntimeError("nothing to save: build the vocabulary first")
    stored = ("wv", *OUTPUTS, "tree", *SAVED)
    explain_save_options(separately, sep_limit, ignore, pickle_protocol, stored)
    meta = {name: getattr(model, name) for name in SAVED}
    meta["index_to_key"] = model.wv.index_to_key
    arrays = {
        "vectors": model.wv.vectors,
        **saved_outputs(model),  # syn1 (always), syn1neg (with negative)
        "count": np.asarray(model.wv.expandos["count"]),
        "sample_int": np.asarray(model.wv.expandos["sample_int"]),
        "codes": model.tree.codes,
        "points": model.tree.points,
        "lengths": model.tree.lengths,
        "vectors_lockf": lock_factors(getattr(model.wv, "vectors_lockf", None), fname),
    }
    more_meta, more_arrays = model._file_state()
    meta.update(more_meta)
    arrays.update(more_arrays)
    refuse_unloadable(fname, meta, arrays, model.FILE_KIND, model._check_file_state)
    persist.save_bundle(fname, model.FILE_KIND, meta, arrays)


def refuse_unloadable(fname, meta: dict, arrays: dict, kind: str = KIND, check_more=None) -> None:
    """``save()`` never writes what ``load()`` would refuse: the same checks
    (:func:`check_word2vec_bundle`, then ``check_more(meta, arrays, fname)``: what the class
    adds, Doc2Vec's) run on what is about to be written, and a ValueError names what is wrong
    before any file is touched (a good file at ``fname`` stays)."""

    def check():
        check_word2vec_bundle(fname, meta, arrays)
        if check_more is not None:
            check_more(meta, arrays, fname)

    persist.refuse_unloadable(fname, kind, "this model", check, meta["index_to_key"])


def load_model(cls, fname, mmap=None):
    """A ``cls`` (a Word2Vec class) rebuilt from the file ``fname`` after every check (see
    :meth:`hsw2v.Word2Vec.load`)."""
    try:
        meta, arrays = persist.load_bundle(fname, mmap=mmap, kind=cls.FILE_KIND)
    except WrongFileKindError:
        raise
    except ValueError as exc:
        error = not_a_bundle_error(exc, fname, cls.__name__)
        if error is exc:
            raise
        raise error from None
    check_word2vec_bundle(fname, meta, arrays)
    model = cls.__new__(cls)
    defaults = cls(workers=1)
    model.__dict__.update(defaults.__dict__)
    for name in SAVED:
        if name in meta:
            setattr(model, name, meta[name])
        elif name in BEFORE_SAVED:
            setattr(model, name, BEFORE_SAVED[name])
    model._restore_alpha_reached()
    keys = meta["index_to_key"]
    model.wv = KeyedVectors(model.vector_size)
    saved_lockf = arrays.get("vectors_lockf")  # files of earlier versions have none
    model.wv.vectors_lockf = (
        no_lock_factors() if saved_lockf is None else lock_factors(saved_lockf, fname)
    )
    model.wv.index_to_key = list(keys)
    model.wv.key_to_index = {key: i for i, key in enumerate(keys)}
    model.wv.vectors = arrays["vectors"]
    model.wv.expandos = {"count": arrays["count"], "sample_int": arrays["sample_int"]}
    model._restore_file_state(meta, arrays, fname)  # what the class adds (FastText's)
    for name in OUTPUTS:  # syn1, syn1neg: 0 rows where the file holds none
        setattr(model, name, arrays.get(name, np.zeros((0, model.vector_size), np.float32)))
    tree = Tree(codes=arrays["codes"], points=arrays["points"], lengths=arrays["lengths"])
    n = len(keys)
    d = model.vector_size
    shapes = matrix_shapes(switches_of(model), n, d)
    if not (
        model.wv.vectors.shape == (n, d)
        and all(getattr(model, name).shape == shape for name, shape in shapes.items())
        and len(tree.lengths) == n
    ):
        raise ValueError(f"{fname}: the model's arrays disagree with its vocabulary of {n}")
    model._install_tree(tree, model.semantic_pending)
    try:
        rebuild_lookups(model)  # negative sampling's cum_table
    except ValueError as exc:
        raise ValueError(f"{fname}: an objective's lookup table: {exc}") from None
    return model


def check_word2vec_bundle(path, meta, arrays) -> None:
    """Check what :func:`load_bundle` read from a Word2Vec file before a model is built on it.

    The kernels index ``syn1`` with the tree's ``points`` and walk ``lengths`` entries of each
    path, and ``syn1neg`` with word ids, without bounds checks, so a crafted file with
    out-of-range values could make training read or write outside the arrays. Every
    parameter (against :mod:`hsw2v.running.params`, the table the constructor checks too), every
    array's dtype and shape and every tree entry (:mod:`hsw2v.running.validation`) is verified here,
    the same with and without ``mmap``; a file that passes trains safely.

    Raises ValueError naming `path` and what is wrong.

    >>> import os, tempfile
    >>> from hsw2v import Word2Vec
    >>> path = os.path.join(tempfile.mkdtemp(), "m.hsw2v")
    >>> Word2Vec([["a", "b"]] * 10, vector_size=4, min_count=1, workers=1, epochs=1).save(path)
    >>> meta, arrays = persist.load_bundle(path, kind="Word2Vec")
    >>> check_word2vec_bundle(path, meta, arrays)  # consistent: returns None
    >>> arrays["lengths"] = arrays["lengths"] + 5  # paths longer than the tree arrays
    >>> check_word2vec_bundle(path, meta, arrays)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: '...m.hsw2v' holds inconsistent Word2Vec data: array 'lengths'[0] is 6: ...
    """
    where = f"{os.fspath(path)!r} holds inconsistent Word2Vec data"

    def bad(what):
        return ValueError(f"{where}: {what}")

    if not isinstance(meta, dict):
        raise bad("its metadata is not a JSON object")
    # a file written before an objective existed lacks its switch: off (hs: on, the default)
    switches = switches_of({"hs": 1, **meta})
    if not any(switches.values()):
        raise bad("hs is 0 and negative is 0: no output layer to train")
    check_word2vec_params(meta, where=where)
    keys = meta.get("index_to_key")
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        raise bad("index_to_key is not a list of str")
    if len(set(keys)) != len(keys):
        raise bad("index_to_key holds a word twice")
    n, d = len(keys), meta.get("vector_size", 100)
    if not n:
        raise bad("the vocabulary is empty")
    for o in OBJECTIVES:
        if switches[o.switch] or arrays.get(o.matrix) is None:
            continue
        if not o.kept_when_off:
            raise bad(f"it holds {o.matrix} but {o.switch} is 0")
        if arrays[o.matrix].shape != (0, d):
            raise bad(f"array {o.matrix!r} should be <f4 of shape (0, {d}) since {o.switch} is 0")
    try:
        check_word2vec_arrays(arrays, n, d, switches, lambda key: f"array {key!r}")
    except ValueError as exc:
        raise bad(str(exc)) from None


def no_lock_factors() -> np.ndarray:
    """gensim's default ``wv.vectors_lockf``: one factor, 1.0, for every word (train all rows
    fully). Set it to one float32 factor per word (or one for all) to scale each word's
    input-vector updates; 0 freezes a word (design note H of :mod:`hsw2v._kernels._inner`)."""
    return np.ones(1, dtype=np.float32)


def lock_factors(lockf, fname) -> np.ndarray:
    """``wv.vectors_lockf`` as it is saved and loaded: a writable float32 copy of one or more
    finite factors (gensim's default, one factor of 1.0, when there is none); a ValueError
    naming the file otherwise."""
    if lockf is None:
        return no_lock_factors()
    factors = np.array(lockf, dtype=np.float32).reshape(-1)
    if factors.size < 1 or not np.isfinite(factors).all():
        raise ValueError(
            f"{fname!r}: vectors_lockf must hold at least one factor, all finite "
            f"(got {factors.size} factors)"
        )
    return factors
