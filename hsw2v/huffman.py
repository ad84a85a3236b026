"""The Huffman tree of hierarchical softmax, built once into flat arrays.

Construction follows word2vec.c's ``CreateBinaryTree`` (Mikolov et al. 2013; Huffman 1952):
over the leaf counts sorted in descending order, repeatedly merge the two smallest nodes,
found with two cursors (one walking the leaves from the rarest word up, one walking the inner
nodes in creation order), which takes linear time. On equal counts the inner node is taken
first, as in word2vec.c. Of the two merged nodes the smaller gets code bit 0, the other bit 1.

Conventions (shared with gensim and word2vec.c, so ``syn1`` rows are interchangeable):

* inner node ``k`` (created k-th, ``0 <= k < V - 1``) is row ``k`` of ``syn1``; the root is
  ``V - 2`` in a tree built here (a tree grown by :mod:`hsw2v.vocab_update` may keep its old
  root: code that needs the root reads :attr:`HuffmanTree.root`, never assumes ``V - 2``);
* ``points[w, :lengths[w]]`` lists the inner nodes from the root down to ``w``'s parent and
  ``codes[w, :lengths[w]]`` the bits taken at each of them;
* ``sigmoid(h . syn1[points[w, j]])`` is the probability of bit 0 at step ``j``, so
  ``P(w | h) = prod_j sigmoid((1 - 2 codes[w, j]) * h . syn1[points[w, j]])``.

:func:`child_table` reads the flat arrays back as a table of children (any tree kind, checked),
for the walks that go down the tree (prediction, the layer's top-k, :mod:`hsw2v.trees`).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np


@dataclass
class HuffmanTree:
    """Flat arrays of a binary tree over ``V`` leaves (see the module docstring).

    Examples
    --------
    >>> tree = build_huffman_tree([5, 3, 1, 1])
    >>> tree.codes.shape, tree.points.shape, tree.lengths.tolist(), tree.max_length
    ((4, 3), (4, 3), [1, 2, 3, 3], 3)
    """

    codes: np.ndarray  # uint8 [V, max_length]
    points: np.ndarray  # int32 [V, max_length]
    lengths: np.ndarray  # int32 [V]

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
        counts = np.asarray(counts, dtype=np.float64)
        if counts.shape != self.lengths.shape:
            raise ValueError(f"counts must have one entry per leaf ({len(self.lengths)})")
        on_path = np.arange(self.max_length) < self.lengths[:, None]
        return np.bincount(
            self.points[on_path],
            weights=np.repeat(counts, self.lengths),
            minlength=max(len(self.lengths) - 1, 1),
        )

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


def build_huffman_tree(counts) -> HuffmanTree:
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
    counts = _int64_counts(counts)
    n_leaves = len(counts)
    if n_leaves == 0:
        raise ValueError("cannot build a Huffman tree over an empty vocabulary")
    if n_leaves == 1:
        # A single word needs no decision; give it a one-node path so training stays defined.
        return HuffmanTree(
            codes=np.zeros((1, 1), dtype=np.uint8),
            points=np.zeros((1, 1), dtype=np.int32),
            lengths=np.ones(1, dtype=np.int32),
        )
    # The two-cursor merge needs the leaves in descending order of count.
    order = np.argsort(-counts, kind="stable")
    n_inner = n_leaves - 1
    n_nodes = 2 * n_leaves - 1
    # Compact typed arrays, not lists of Python ints: a million-word tree stays small.
    node_count = array("q", counts[order].tobytes())  # leaves 0..V-1 (sorted), inner V..2V-2
    node_count.extend(bytes(8 * n_inner))
    parent = array("q", bytes(8 * n_nodes))
    bit = array("b", bytes(n_nodes))
    leaf = n_leaves - 1  # rarest leaf not merged yet
    inner = n_leaves  # oldest inner node not merged yet
    for k in range(n_inner):
        picked = []
        for _ in range(2):
            if leaf >= 0 and (inner >= n_leaves + k or node_count[leaf] < node_count[inner]):
                picked.append(leaf)
                leaf -= 1
            else:
                picked.append(inner)
                inner += 1
        new = n_leaves + k
        node_count[new] = node_count[picked[0]] + node_count[picked[1]]
        parent[picked[0]] = new
        parent[picked[1]] = new
        bit[picked[1]] = 1
    # Depths top-down: the root is the last inner node; every child is created before its
    # parent, so walking ids downward visits parents first.
    root = n_nodes - 1
    depth = array("i", bytes(4 * n_nodes))
    for node in range(root - 1, -1, -1):
        depth[node] = depth[parent[node]] + 1
    parent_of = np.frombuffer(parent, dtype=np.int64)
    bit_of = np.frombuffer(bit, dtype=np.int8)
    lengths_sorted = np.frombuffer(depth, dtype=np.int32)[:n_leaves]
    max_length = int(lengths_sorted.max())
    # Paths bottom-up, all leaves at once: step ``pos`` of a leaf's path is its ancestor at
    # depth ``pos``; row ``order[i]`` is the word of sorted leaf ``i``.
    codes = np.zeros((n_leaves, max_length), dtype=np.uint8)
    points = np.zeros((n_leaves, max_length), dtype=np.int32)
    rows = order
    node = np.arange(n_leaves, dtype=np.int64)
    pos = lengths_sorted.astype(np.int64) - 1
    while rows.size:
        codes[rows, pos] = bit_of[node]
        node = parent_of[node]
        points[rows, pos] = node - n_leaves
        pos -= 1
        keep = pos >= 0
        rows, node, pos = rows[keep], node[keep], pos[keep]
    lengths = np.empty(n_leaves, dtype=np.int32)
    lengths[order] = lengths_sorted
    return HuffmanTree(codes=codes, points=points, lengths=lengths)


def child_table(codes, points, lengths, root=None) -> np.ndarray:
    """The children of every inner node of a tree given as flat arrays (see
    :mod:`hsw2v.huffman`): an int32 ``(V-1) x 2`` array whose row ``n`` holds the node reached
    from inner node ``n`` by bit 0 and by bit 1; an inner node as its id, leaf ``w`` as
    ``-1 - w``. Raises ValueError if the arrays do not describe one binary tree rooted at
    ``root`` (default: the first node of every path; ``V-2`` for a freshly built Huffman
    tree, not always after ``build_vocab(update=True)``).

    Examples
    --------
    >>> t = build_huffman_tree([5, 3, 1, 1])
    >>> child_table(t.codes, t.points, t.lengths).tolist()
    [[-4, -3], [0, -2], [1, -1]]
    """
    codes = np.asarray(codes)
    points = np.asarray(points)
    lengths = np.asarray(lengths, dtype=np.int64)
    n_words = len(lengths)
    n_inner = n_words - 1
    if n_inner < 1:
        raise ValueError("a tree needs at least two leaves")
    if lengths.min() < 1 or lengths.max() > points.shape[1]:
        raise ValueError("path lengths out of range")
    root = int(points[0, 0]) if root is None else int(root)
    if (points[:, 0] != root).any():
        raise ValueError(f"every path must start at the root {root}")
    # Each (node, bit) on a path leads either to the next node on the path or, at the last
    # step, to the word itself. Rows are taken in chunks so that a tree of a million leaves
    # needs only chunk-sized temporaries: a first pass writes every edge, a second checks that
    # no two paths disagree about one.
    empty = np.iinfo(np.int64).min
    table = np.full(2 * n_inner, empty, dtype=np.int64)
    chunk = 1 << 16
    for check in (False, True):
        for lo in range(0, n_words, chunk):
            src, dst = _edges(codes, points, lengths, lo, min(lo + chunk, n_words), n_inner)
            if not check:
                table[src] = dst
            elif (table[src] != dst).any():
                raise ValueError("the codes and points do not describe a binary tree")
    if (table == empty).any() or np.count_nonzero(table < 0) != n_words:
        raise ValueError("the codes and points do not describe a binary tree")
    return table.astype(np.int32).reshape(n_inner, 2)


def _edges(codes, points, lengths, lo: int, hi: int, n_inner: int):
    """The (node, bit) -> child edges on the paths of words ``lo..hi-1``, as flat arrays
    ``src = 2 * node + bit`` and ``dst`` (an inner node, or ``-1 - w`` for word ``w``)."""
    pts = np.asarray(points[lo:hi], dtype=np.int64)
    steps = np.arange(pts.shape[1])
    on_path = steps[None, :] < lengths[lo:hi, None]
    last = steps[None, :] == (lengths[lo:hi, None] - 1)
    if (pts[on_path] < 0).any() or (pts[on_path] >= n_inner).any():
        raise ValueError("inner-node ids out of range")
    following = np.empty_like(pts)
    following[:, :-1] = pts[:, 1:]
    following[last] = -1 - (lo + np.nonzero(last)[0])
    src = pts[on_path] * 2 + np.asarray(codes[lo:hi])[on_path].astype(np.int64)
    return src, following[on_path]
