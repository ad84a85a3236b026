"""The tree of fastText's hierarchical softmax (``-loss hs``), built as fastText builds it.

:func:`facebook_hs_tree` ports ``HierarchicalSoftmaxLoss::buildTree`` into hsw2v's flat
arrays (:mod:`hsw2v.huffman`), so that a ``.bin`` model's output matrix keeps its rows
(:mod:`hsw2v.fasttext._facebook_model`); :mod:`hsw2v.fasttext._facebook` re-exports it.
"""

from __future__ import annotations

import numpy as np

from hsw2v._kernels._array_passes import huffman_merges
from hsw2v._tree_shapes import fill_paths

__all__ = ["facebook_hs_tree"]


def facebook_hs_tree(counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tree of fastText's hierarchical softmax (``-loss hs``) over ``counts``, as flat
    arrays in hsw2v's convention (:mod:`hsw2v.huffman`): ``codes`` (uint8, ``V x max_len``),
    ``points`` (int32, ``V x max_len``) and ``lengths`` (int32, ``V``), root first.

    A port of fastText's ``HierarchicalSoftmaxLoss::buildTree``: the counts are taken in
    the order given (fastText passes the dictionary's, words most frequent first, and does
    not sort them); the rarest unmerged leaf is the last one not taken, and on equal counts
    the inner node is taken before the leaf. Of the two nodes merged, the second gets code
    bit 1. Inner node ``k`` (the ``k``-th created; fastText's node ``V + k``) is row ``k`` of
    the output matrix; the root is ``V - 2``. fastText stores each path leaf first; here it
    is reversed, root first. For counts in descending order this is exactly the tree
    :func:`hsw2v.huffman.build_huffman_tree` builds (same codes, same points); that one
    sorts the counts first, so for counts in another order the two differ. A single word
    (``V = 1``) has an empty path: ``lengths == [0]``, ``codes`` of shape ``(1, 0)``.
    (fastText marks unmerged inner nodes with a count of 1e15, so its tree goes wrong for
    counts at or above that; here it does not.)

    Sign convention. fastText's ``binaryLogistic`` trains ``sigmoid(output[point] . h)`` as
    the probability that the code bit is 1; word2vec.c, gensim and hsw2v train
    ``sigmoid(syn1[point] . h)`` as the probability that the bit is 0. With the same tree,
    ``syn1 = -output`` gives the same probabilities (``sigmoid(-x) = 1 - sigmoid(x)``):

    ``P(w | h) = prod_j sigmoid((2 codes[w, j] - 1) * output[points[w, j]] . h)``
    ``         = prod_j sigmoid((1 - 2 codes[w, j]) * syn1[points[w, j]] . h)``.

    fastText's output matrix has ``V`` rows with hs too; the tree uses the first ``V - 1``
    (the last is never trained and stays zero), so ``syn1 = -output[:-1]``.

    Examples
    --------
    >>> codes, points, lengths = facebook_hs_tree([5, 3, 1, 1])
    >>> lengths.tolist(), points[3].tolist(), codes[3].tolist(), codes[0].tolist()
    ([1, 2, 3, 3], [2, 1, 0], [0, 0, 0], [1, 0, 0])
    """
    raw = np.asarray(counts)
    if raw.ndim != 1 or not (np.issubdtype(raw.dtype, np.integer) or raw.dtype == bool):
        raise ValueError(f"counts must be a 1-D sequence of integers, got {raw.dtype} {raw.shape}")
    n_leaves = len(raw)
    if n_leaves == 0:
        raise ValueError("cannot build a tree over no words")
    if raw.min() < 0:
        raise ValueError("counts must be >= 0")
    if raw.astype(np.float64).sum() > 2**62:
        raise ValueError("the counts sum to more than 2**62, which int64 cannot add safely")
    if n_leaves == 1:  # one word: no merge, an empty path
        parent_of, bit_of = np.zeros(1, np.int64), np.zeros(1, np.int8)
        lengths = np.zeros(1, np.int32)
    else:  # the two-queue merge over the counts as given (fastText's order), in C
        parent_of, bit_of, depth = huffman_merges(np.ascontiguousarray(raw, np.int64))
        lengths = depth.copy()
    codes, points = fill_paths(parent_of, bit_of, lengths)
    return codes, points, lengths
