"""Every index a Word2Vec model's kernels follow, checked where the arrays enter (public as
``hsw2v.validation`` too).

The nogil kernels read rows of ``wv.vectors`` and of each objective's output matrix
(``syn1``, ``syn1neg``; :mod:`hsw2v.running.objectives`) at word ids and tree node ids without
bounds checks (that is what makes them fast). So each array is checked once on its way in,
by :func:`check_word2vec_arrays`:

* :meth:`hsw2v.Word2Vec.load` (through :func:`hsw2v.word2vec._schema.check_word2vec_bundle`), with
  and without ``mmap``, names the file and the array;
* every training (``train()``, ``corpus_file`` mode and the distributed tasks, all through
  :func:`hsw2v.running.trainer.trainer_settings`) checks the model as it is then
  (:func:`check_model_for_training`), because a
  user may have assigned ``wv.vectors``, ``syn1``, ``tree``, ``cum_table`` or a parameter
  since; it names the attribute. This costs a few vectorised passes over the tree (about
  ``V x max_length`` bytes), far below one epoch.

What is checked: shapes agree (``V`` words, ``d`` columns), dtypes and C order are the ones
the kernels are compiled for, the tree's lengths, bits and inner-node ids are in range
(:func:`hsw2v.trees.check_tree_indices`: ids below ``V - 1``, the rows of the private hot-row
table), ``cum_table`` is non-decreasing with a positive last entry, ``key_to_index`` maps to
rows that exist. NaN and infinite weights are refused separately, by ``train()`` before it
builds the trainer (see ``docs/robustness.md``).
"""

from __future__ import annotations

import numpy as np

from hsw2v._tree_checks import check_tree_indices
from hsw2v.running.objectives import OBJECTIVES, active, matrix_shapes, outputs_of, switches_of
from hsw2v.running.params import WORD2VEC_PARAMS, check_word2vec_params

_ATTRIBUTES = {
    "vectors": "model.wv.vectors",
    **{o.matrix: f"model.{o.matrix}" for o in OBJECTIVES},  # syn1, syn1neg
    "count": "model.wv.expandos['count']",
    "sample_int": "model.wv.expandos['sample_int']",
    "codes": "model.tree.codes",
    "points": "model.tree.points",
    "lengths": "model.tree.lengths",
    **{key: f"model.{key}" for o in OBJECTIVES for key in o.lookup_keywords},  # cum_table
}


def _describe(arr) -> str:
    if not isinstance(arr, np.ndarray):
        return "missing" if arr is None else type(arr).__name__
    order = "" if arr.flags.c_contiguous else " (not C-contiguous)"
    return f"{arr.dtype} {arr.shape}{order}"


def check_word2vec_arrays(arrays: dict, n: int, d: int, switches: dict, name=None):
    """Check a Word2Vec model's arrays (keys as in a saved model: ``vectors``, the output
    matrices ``syn1`` and ``syn1neg``, ``count``, ``sample_int``, ``codes``, ``points``,
    ``lengths`` and optionally ``cum_table``) for ``n`` words of ``d`` dimensions, with the
    objectives ``switches`` turns on (``{"hs": 1, "negative": 0}``, see
    :func:`hsw2v.running.objectives.switches_of`): each output matrix of an objective that is on
    must be ``n x d``. ``name(key)`` gives the name to report. Raises ValueError naming the
    array and what it should be.

    >>> from hsw2v.huffman import build_huffman_tree
    >>> t = build_huffman_tree([3, 2, 1])
    >>> good = {"vectors": np.zeros((3, 4), np.float32), "syn1": np.zeros((3, 4), np.float32),
    ...         "count": np.array([3, 2, 1]), "sample_int": np.zeros(3, np.uint32),
    ...         "codes": t.codes, "points": t.points, "lengths": t.lengths}
    >>> on = {"hs": 1, "negative": 0}
    >>> check_word2vec_arrays(good, 3, 4, on)
    >>> check_word2vec_arrays(dict(good, vectors=np.zeros((3, 5), np.float32)), 3, 4, on)
    Traceback (most recent call last):
        ...
    ValueError: vectors must be a C-contiguous float32 array of shape (3, 4), got float32 (3, 5)
    """
    name = name or (lambda key: key)
    want = {"vectors": (np.float32, (n, d)), "count": (np.int64, (n,))}
    want["sample_int"] = (np.uint32, (n,))
    shapes = matrix_shapes(switches, n, d)
    want.update({o.matrix: (np.float32, shapes[o.matrix]) for o in active(switches)})
    for key, (dtype, shape) in want.items():
        arr = arrays.get(key)
        if (
            not isinstance(arr, np.ndarray)
            or arr.dtype != dtype
            or arr.shape != shape
            or not arr.flags.c_contiguous
        ):
            raise ValueError(
                f"{name(key)} must be a C-contiguous {np.dtype(dtype)} array of shape {shape}, "
                f"got {_describe(arr)}"
            )
    for objective in active(switches):  # its lookup beyond the tree (cum_table)
        if objective.check_lookup is not None:
            objective.check_lookup(arrays, n, name, _describe)
    check_tree_indices(arrays.get("codes"), arrays.get("points"), arrays.get("lengths"), n, name)


def check_model_for_training(model) -> None:
    """Check a Word2Vec model just before its arrays go to the kernels: its parameters
    (:mod:`hsw2v.running.params`), its arrays (:func:`check_word2vec_arrays`, naming
    attributes such as ``model.wv.vectors``), that the weights it trains are writable, and
    that ``wv.key_to_index`` maps every word to a row. Raises ValueError saying what to fix."""
    params = {key: getattr(model, key) for key in WORD2VEC_PARAMS if hasattr(model, key)}
    check_word2vec_params(params)
    wv = model.wv
    n, d = len(wv.index_to_key), model.vector_size
    tree = model.tree
    arrays = {
        "vectors": wv.vectors,
        **outputs_of(model),  # syn1, syn1neg
        "count": wv.expandos.get("count"),
        "sample_int": wv.expandos.get("sample_int"),
        "codes": getattr(tree, "codes", None),
        "points": getattr(tree, "points", None),
        "lengths": getattr(tree, "lengths", None),
        **{key: getattr(model, key, None) for o in OBJECTIVES for key in o.lookup_keywords},
    }
    check_word2vec_arrays(arrays, n, d, switches_of(model), _ATTRIBUTES.get)
    trained = ["vectors"] + [o.matrix for o in active(model)]
    for key in trained:
        if not arrays[key].flags.writeable:
            raise ValueError(
                f"{_ATTRIBUTES[key]} is read-only (a model loaded with mmap='r' can be queried "
                "but not trained): load it with mmap=None or mmap='c' to train"
            )
    index = wv.key_to_index
    if len(index) != n:
        raise ValueError(
            f"model.wv.key_to_index has {len(index)} words but model.wv.index_to_key {n}"
        )
    ids = np.fromiter(index.values(), dtype=np.int64, count=n) if n else np.zeros(0, np.int64)
    if n and (ids.min() < 0 or ids.max() >= n):
        raise ValueError(f"model.wv.key_to_index maps a word outside the {n} rows of vectors")


def check_model_tree(model) -> None:
    """Check ``model.tree`` for the query kernels (scoring), which follow its ids into
    ``syn1`` like training does; ValueError names the attribute."""
    tree = model.tree
    check_tree_indices(
        getattr(tree, "codes", None),
        getattr(tree, "points", None),
        getattr(tree, "lengths", None),
        len(model.wv.index_to_key),
        _ATTRIBUTES.get,
    )
