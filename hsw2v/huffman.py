"""The Huffman tree of hierarchical softmax, built once into flat arrays.

Construction follows word2vec.c's ``CreateBinaryTree`` (Mikolov et al. 2013; Huffman 1952):
over the leaf counts sorted in descending order, repeatedly merge the two smallest nodes,
found with two cursors (one walking the leaves from the rarest word up, one walking the inner
nodes in creation order), which takes linear time. On equal counts the inner node is taken
first, as in word2vec.c. Of the two merged nodes the smaller gets code bit 0, the other bit 1.

Conventions (shared with gensim and word2vec.c, so ``syn1`` rows are interchangeable):

* inner node ``k`` (created k-th, ``0 <= k < V - 1``) is row ``k`` of ``syn1``; the root is
  ``V - 2`` in a tree built here (a tree grown by :mod:`hsw2v.vocab_update` may keep its old
  root: code that needs the root reads :attr:`Tree.root`, never assumes ``V - 2``);
* ``points[w, :lengths[w]]`` lists the inner nodes from the root down to ``w``'s parent and
  ``codes[w, :lengths[w]]`` the bits taken at each of them;
* ``sigmoid(h . syn1[points[w, j]])`` is the probability of bit 0 at step ``j``, so
  ``P(w | h) = prod_j sigmoid((1 - 2 codes[w, j]) * h . syn1[points[w, j]])``.

:class:`Tree` holds the flat arrays of every tree kind; its constructors name the kinds
(``Tree.huffman``, ``Tree.balanced``, ``Tree.explicit``, ...; :mod:`hsw2v.trees` holds the
builders as functions too). :func:`child_table` (from :mod:`hsw2v._tree_checks`) reads the
flat arrays back as a table of children (any tree kind, checked), for the walks that go down
the tree (prediction, the layer's top-k, :mod:`hsw2v.trees`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hsw2v import _tree_shapes
from hsw2v._kernels._array_passes import huffman_merges, path_node_visits
from hsw2v._tree_checks import check_tree, child_table

__all__ = ["COUNT_TOTAL_MAX", "HuffmanTree", "Tree", "build_huffman_tree", "child_table"]


@dataclass
class Tree:
    """Flat arrays of a binary tree over ``V`` leaves (see the module docstring): every kind
    of tree hsw2v trains over is one, whatever built it.

    Build one with a constructor named for its kind: :meth:`huffman` (word2vec's, from
    counts), :meth:`balanced`, :meth:`split` (any recursive split), :meth:`level` (a split
    one level at a time), :meth:`semantic` (2-means of vectors), :meth:`explicit` (your own
    paths, checked) or :meth:`canonical` (your own paths renumbered as Huffman's);
    ``Tree(codes, points, lengths)`` takes arrays as they are. :class:`HuffmanTree` is the
    same class under its former name, kept for existing code.

    Examples
    --------
    >>> tree = Tree.huffman([5, 3, 1, 1])
    >>> tree.codes.shape, tree.points.shape, tree.lengths.tolist(), tree.max_length
    ((4, 3), (4, 3), [1, 2, 3, 3], 3)
    >>> Tree.balanced(4).lengths.tolist(), HuffmanTree is Tree
    ([2, 2, 2, 2], True)
    """

    codes: np.ndarray  # uint8 [V, max_length]
    points: np.ndarray  # int32 [V, max_length]
    lengths: np.ndarray  # int32 [V]

    # ------------------------------------------------------------------ constructors
    @classmethod
    def huffman(cls, counts) -> Tree:
        """The Huffman tree of ``counts`` (:func:`build_huffman_tree`: word2vec.c's
        construction; frequent leaves get short paths).

        Examples
        --------
        >>> Tree.huffman([5, 3, 1, 1]).lengths.tolist()
        [1, 2, 3, 3]
        """
        return cls(*_huffman_paths(counts))

    @classmethod
    def balanced(cls, n_leaves: int) -> Tree:
        """A balanced tree over leaves ``0..n_leaves-1`` in order (left half under bit 0):
        every path has ``floor`` or ``ceil`` of ``log2(n_leaves)`` nodes.

        Examples
        --------
        >>> t = Tree.balanced(5)
        >>> t.lengths.tolist(), t.code(0).tolist(), t.code(4).tolist()
        ([2, 2, 2, 3, 3], [0, 0], [1, 1, 1])
        """
        return cls(*_tree_shapes.balanced_paths(n_leaves))

    @classmethod
    def split(cls, n_leaves: int, split: Callable[[np.ndarray], tuple]) -> Tree:
        """The tree made by splitting the leaves ``0..n_leaves-1`` in two, recursively.

        ``split(leaves)`` gets an int array of at least two leaf ids and returns two
        non-empty arrays that partition it: the first goes under bit 0, the second under
        bit 1. Inner nodes are numbered breadth-first from the root ``V - 2`` downward.

        Examples
        --------
        >>> t = Tree.split(3, lambda ids: (ids[:1], ids[1:]))
        >>> t.lengths.tolist(), t.code(2).tolist(), t.point(2).tolist()
        ([1, 2, 2], [1, 1], [1, 0])
        """
        return cls(*_tree_shapes.split_paths(n_leaves, split))

    @classmethod
    def level(cls, n_leaves: int, split_level: Callable) -> Tree:
        """The tree made by splitting segments of a leaf order in two, one whole level at a
        time (vectorised: one call per level, not per node).

        ``split_level(order, start, end)`` gets the current leaf order (int64, ``n_leaves``
        entries, a permutation of the leaves) and the segments ``[start, end)`` of it to
        split (each of at least two leaves); it may reorder ``order`` in place within each
        segment and returns the cut ``mid`` of each (``start < mid < end``):
        ``order[start:mid]`` goes under bit 0, ``order[mid:end]`` under bit 1. Inner nodes
        are numbered breadth-first from the root ``V - 2`` downward, as :meth:`split`
        numbers them.

        Examples
        --------
        >>> Tree.level(4, lambda order, s, e: s + 1).lengths.tolist()  # a caterpillar
        [1, 2, 3, 3]
        """
        return cls(*_tree_shapes.level_paths(n_leaves, split_level))

    @classmethod
    def semantic(cls, vectors, iterations: int = 6, seed: int = 1, small: int = 16) -> Tree:
        """A tree whose splits follow the geometry of ``vectors`` (one row per leaf): each
        node's leaves are split by 2-means (Lloyd's algorithm, ``iterations`` rounds, on
        unit-length rows), started from a split at the median of the projection on the
        principal direction (a few rounds of power iteration), as in Mnih & Hinton (2008),
        who split learned word representations recursively with a two-component mixture. A
        split that leaves one side empty falls back to the median split. Each side comes
        back ordered by its projection, and a node of at most ``small`` leaves is split in
        halves of that order (the last principal direction above it) instead of by a new
        2-means: the bottom levels of the tree then cost no per-node linear algebra.

        Examples
        --------
        >>> v = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]], dtype=np.float32)
        >>> t = Tree.semantic(v)
        >>> [int(t.code(w)[0]) for w in range(4)] == [0, 0, 1, 1]
        True
        """
        return cls(*_tree_shapes.semantic_paths(vectors, iterations, seed, small))

    @classmethod
    def explicit(cls, codes, points, lengths=None) -> Tree:
        """Your own tree, as given: for each leaf its code bits and inner-node ids from the
        root down, as ragged sequences, or as padded ``V x L`` arrays with ``lengths``. The
        paths must form a full binary tree over at least two leaves (prefix-free codes, two
        children per inner node, ids in ``[0, V-2]``), else ValueError says what is wrong
        (:func:`hsw2v.trees.check_tree`). The numbering is kept; :meth:`canonical`
        renumbers it as Huffman's.

        Examples
        --------
        >>> t = Tree.explicit([[0], [1, 0], [1, 1]], [[0], [0, 1], [0, 1]])
        >>> t.root, t.lengths.tolist()
        (0, [1, 2, 2])
        """
        if lengths is None:
            codes, points, lengths = _tree_shapes.padded_paths(codes, points)
        codes, points, lengths = np.asarray(codes), np.asarray(points), np.asarray(lengths)
        check_tree(codes, points, lengths)
        return cls(codes.astype(np.uint8), points.astype(np.int32), lengths.astype(np.int32))

    @classmethod
    def canonical(cls, codes, points, lengths) -> Tree:
        """A valid tree (see :func:`hsw2v.trees.check_tree`) renumbered as Huffman's: root
        ``V - 2``, every child's id below its parent's (breadth-first from the root
        downward).

        Examples
        --------
        >>> t = Tree.canonical([[0, 0], [1, 0], [1, 1]], [[0, 0], [0, 1], [0, 1]], [1, 2, 2])
        >>> t.point(1).tolist(), t.point(2).tolist()
        ([1, 0], [1, 0])
        """
        return cls(*_tree_shapes.canonical_paths(codes, points, lengths))

    # ------------------------------------------------------------------ queries

    @property
    def max_length(self) -> int:
        """The longest path's length: the width of ``codes`` and ``points``.

        Examples
        --------
        >>> build_huffman_tree([5, 3, 1, 1]).max_length
        3
        """
        return int(self.codes.shape[1])

    @property
    def root(self) -> int:
        """The root inner node: the first step of every path.

        Examples
        --------
        >>> build_huffman_tree([5, 3, 1, 1]).root
        2
        """
        return int(self.points[0, 0])

    def code(self, index: int) -> np.ndarray:
        """The code bits of leaf ``index``, root first.

        Examples
        --------
        >>> tree = build_huffman_tree([5, 3, 1, 1])
        >>> tree.code(0).tolist(), tree.code(3).tolist()
        ([1], [0, 0, 0])
        """
        return self.codes[index, : self.lengths[index]]

    def point(self, index: int) -> np.ndarray:
        """The inner-node ids on the path of leaf ``index``, root first.

        Examples
        --------
        >>> tree = build_huffman_tree([5, 3, 1, 1])
        >>> tree.point(0).tolist(), tree.point(3).tolist()
        ([2], [2, 1, 0])
        """
        return self.points[index, : self.lengths[index]]

    def node_visits(self, counts) -> np.ndarray:
        """How often each inner node is on a path in a corpus with these word ``counts``: the
        total count of the words below it, as float64 (one entry per inner node).

        Examples
        --------
        >>> build_huffman_tree([5, 3, 1, 1]).node_visits([5, 3, 1, 1]).tolist()
        [2.0, 5.0, 10.0]
        """
        counts = np.ascontiguousarray(counts, dtype=np.float64)
        if counts.shape != self.lengths.shape:
            raise ValueError(f"counts must have one entry per leaf ({len(self.lengths)})")
        n_inner = max(len(self.lengths) - 1, 1)
        points, lengths = self.points, self.lengths
        if (
            points.dtype == np.int32
            and lengths.dtype == np.int32
            and points.flags.c_contiguous
            and lengths.flags.c_contiguous
        ):  # one pass, the same sums in the same order as the bincount below
            return path_node_visits(points, lengths, counts, n_inner)
        on_path = np.arange(self.max_length) < lengths[:, None]
        return np.bincount(points[on_path], weights=np.repeat(counts, lengths), minlength=n_inner)

    def most_visited_nodes(self, counts, n: int) -> np.ndarray:
        """The ``n`` inner nodes on the most paths of a corpus with these word ``counts``
        (each node weighted by the total count of the words below it), most visited first,
        ties to the higher id, as int32.

        In a Huffman tree these are the ``n`` highest ids (the last created), but not after a
        vocabulary update grafts a new subtree on (:mod:`hsw2v.vocab_update`).

        Examples
        --------
        >>> tree = build_huffman_tree([5, 3, 1, 1])
        >>> tree.most_visited_nodes([5, 3, 1, 1], 2).tolist()
        [2, 1]
        """
        visits = self.node_visits(counts)
        inner = len(visits)
        order = np.lexsort((-np.arange(inner), -visits))  # most visited, then higher id
        return order[: max(0, min(n, inner))].astype(np.int32)


#: The class's former name: every kind of tree is a :class:`Tree`, and code and files that
#: name ``HuffmanTree`` keep working.
HuffmanTree = Tree


# The merge adds counts in int64; every partial sum is at most the total, so a total below
# this bound (checked in float64, whose rounding error is far below the margin) cannot wrap.
COUNT_TOTAL_MAX = 2**62


def _int64_counts(counts) -> np.ndarray:
    """``counts`` as int64, refusing values the merge could not add without wrapping.

    >>> _int64_counts([2**62, 2**62])
    Traceback (most recent call last):
        ...
    ValueError: the counts sum to about 9.2e+18, more than 2**62, which the Huffman merge cannot add in int64: scale them down (only their ratios matter)
    """
    raw = np.asarray(counts)
    if raw.ndim != 1:
        raise ValueError(f"counts must be a 1-D sequence, got shape {raw.shape}")
    if raw.dtype == object or not (np.issubdtype(raw.dtype, np.number) or raw.dtype == bool):
        raise ValueError(f"counts must be numbers, got dtype {raw.dtype}")
    as_float = raw.astype(np.float64)
    if len(raw) and (not np.isfinite(as_float).all() or as_float.min() < 0):
        raise ValueError("counts must be finite and non-negative")
    total = float(as_float.sum())
    if total > COUNT_TOTAL_MAX:
        raise ValueError(
            f"the counts sum to about {total:.2g}, more than 2**62, which the Huffman merge "
            "cannot add in int64: scale them down (only their ratios matter)"
        )
    return raw.astype(np.int64)


def build_huffman_tree(counts) -> Tree:
    """Build the Huffman tree of ``counts`` (any order; ties broken as word2vec.c does when
    the counts are sorted in descending order, which :func:`hsw2v.vocab.build_vocabulary`
    produces by default).

    Examples
    --------
    >>> tree = build_huffman_tree([5, 3, 1, 1])
    >>> tree.code(0).tolist(), tree.point(0).tolist()
    ([1], [2])
    >>> sorted(tree.lengths.tolist())
    [1, 2, 3, 3]
    """
    return Tree.huffman(counts)


def _huffman_paths(counts) -> _tree_shapes.Paths:
    """The flat arrays of the Huffman tree of ``counts`` (see :func:`build_huffman_tree`)."""
    counts = _int64_counts(counts)
    n_leaves = len(counts)
    if n_leaves == 0:
        raise ValueError("cannot build a Huffman tree over an empty vocabulary")
    if n_leaves == 1:
        # A single word needs no decision; give it a one-node path so training stays defined.
        return _tree_shapes.one_leaf_paths()
    # The two-cursor merge needs the leaves in descending order of count (leaves 0..V-1 in
    # that order, inner nodes V..2V-2; one pass in C, hsw2v._kernels._array_passes).
    order = np.argsort(-counts, kind="stable")
    parent_of, bit_of, lengths_sorted = huffman_merges(np.ascontiguousarray(counts[order]))
    # Paths bottom-up, all leaves at once: row ``order[i]`` is the word of sorted leaf ``i``.
    codes, points = _tree_shapes.fill_paths(parent_of, bit_of, lengths_sorted, rows_of=order)
    lengths = np.empty(n_leaves, dtype=np.int32)
    lengths[order] = lengths_sorted
    return codes, points, lengths
