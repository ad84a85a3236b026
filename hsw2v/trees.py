"""Binary trees for hierarchical softmax, beyond Huffman's: balanced, explicit, semantic.

Every tree is a :class:`hsw2v.huffman.Tree` (formerly named ``HuffmanTree``, a name kept):
flat arrays ``codes`` / ``points`` / ``lengths`` (root first; ``sigmoid(h . w[point])`` is the
probability of bit 0), over ``V`` leaves and ``V - 1`` inner nodes. The trees built here follow
Huffman's numbering too: the root is inner node ``V - 2`` and every child has a smaller id than
its parent, so walking the ids downward visits parents first. Explicit trees given by a user
may number their inner nodes any way; :func:`check_tree` validates them and returns the root
and a top-down order.

* :func:`balanced_tree`: leaves ``0..V-1`` split in halves, recursively (depth
  ``ceil(log2 V)``; Morin & Bengio 2005 used such a tree, built from WordNet).
* :func:`split_tree`: any recursive two-way split of the leaves into a tree.
* :func:`semantic_tree`: recursive 2-means of learned vectors (Mnih & Hinton, "A Scalable
  Hierarchical Distributed Language Model", NIPS 2008), so that similar words share a path.

Each builder here is the :class:`~hsw2v.huffman.Tree` constructor of its kind
(``balanced_tree(n)`` is ``Tree.balanced(n)``); the shapes are computed as arrays in
:mod:`hsw2v._tree_shapes`, and the checks live in :mod:`hsw2v._tree_checks` (re-exported
here: :func:`check_tree`, :func:`check_tree_indices`, :func:`top_down_order`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hsw2v._tree_checks import check_tree, check_tree_indices, top_down_order
from hsw2v.huffman import Tree, build_huffman_tree

__all__ = [
    "TREE_KINDS",
    "balanced_tree",
    "canonical",
    "check_tree",
    "check_tree_indices",
    "level_tree",
    "semantic_tree",
    "split_tree",
    "top_down_order",
    "word2vec_tree",
]


def split_tree(n_leaves: int, split: Callable[[np.ndarray], tuple]) -> Tree:
    """The tree made by splitting the leaves ``0..n_leaves-1`` in two, recursively, by
    ``split(leaves)``: :meth:`Tree.split <hsw2v.huffman.Tree.split>`."""
    return Tree.split(n_leaves, split)


def balanced_tree(n_leaves: int) -> Tree:
    """A balanced tree over leaves ``0..n_leaves-1`` in order: :meth:`Tree.balanced
    <hsw2v.huffman.Tree.balanced>`."""
    return Tree.balanced(n_leaves)


def level_tree(n_leaves: int, split_level: Callable) -> Tree:
    """The tree made by splitting segments of a leaf order in two, one whole level at a time:
    :meth:`Tree.level <hsw2v.huffman.Tree.level>`."""
    return Tree.level(n_leaves, split_level)


def semantic_tree(vectors, iterations: int = 6, seed: int = 1, small: int = 16) -> Tree:
    """A tree whose splits follow the geometry of ``vectors`` (recursive 2-means, one row per
    leaf): :meth:`Tree.semantic <hsw2v.huffman.Tree.semantic>`."""
    return Tree.semantic(vectors, iterations, seed, small)


def canonical(codes, points, lengths) -> Tree:
    """A valid tree renumbered as Huffman's (root ``V - 2``, every child's id below its
    parent's): :meth:`Tree.canonical <hsw2v.huffman.Tree.canonical>`."""
    return Tree.canonical(codes, points, lengths)


TREE_KINDS = ("huffman", "balanced", "semantic")


def word2vec_tree(kind, counts) -> Tree:
    """The tree Word2Vec trains over for ``tree=kind``: ``"huffman"`` (word2vec's), or
    ``"balanced"`` over the words in vocabulary order, or ``"semantic"``'s first pass
    (Huffman), or a callable ``kind(counts)`` returning a :class:`~hsw2v.huffman.Tree` or a
    ``(codes, points, lengths)`` triple, checked and renumbered by :func:`canonical`.

    Examples
    --------
    >>> word2vec_tree("balanced", [5, 3, 1, 1]).lengths.tolist()
    [2, 2, 2, 2]
    >>> word2vec_tree(lambda c: ([[0], [1]], [[0], [0]], [1, 1]), [3, 1]).lengths.tolist()
    [1, 1]
    """
    if callable(kind):
        made = kind(np.asarray(counts))
        if isinstance(made, Tree):
            made = (made.codes, made.points, made.lengths)
        try:
            codes, points, lengths = made
        except (TypeError, ValueError):
            raise TypeError(
                "a tree callable must return a Tree or a (codes, points, lengths) triple, "
                f"got {type(made).__name__}"
            ) from None
        if len(counts) == 1:
            return build_huffman_tree(counts)
        return canonical(np.asarray(codes), np.asarray(points), np.asarray(lengths))
    if kind in ("huffman", "semantic"):
        return build_huffman_tree(counts)
    if kind == "balanced":
        return balanced_tree(len(counts))
    raise ValueError(f"tree must be one of {TREE_KINDS} or a callable, got {kind!r}")
