"""The index tables :class:`hsw2v.layer.torch.HierarchicalSoftmaxLoss` computes with, from a tree.

NumPy only (no torch here): the tree arrays of :mod:`hsw2v.huffman` become

* the padded paths of the training loss: ``nodes`` (int64 ``V x L``, the inner nodes from the
  top down to each class, 0 on padding) and ``signs`` (``1 - 2 * code``, 0 on padding), so
  that ``log P(y | h) = sum_j log sigmoid(signs[y, j] * h . w[nodes[y, j]])`` over the
  non-padded steps (``sigmoid(h . w[n])`` is the probability of bit 0, as in word2vec.c);
* the level plan of the full distribution: the inner nodes by depth, where each node's parent
  edge lies in the previous level's edges, and where each class's edge lies in the
  concatenation ``[top, edges of level 0, edges of level 1, ...]``. Each level's edges are its
  nodes' path log-probabilities plus the log-sigmoid of the node score, bit 0 then bit 1, so
  the whole distribution costs one pass per level and never a ``rows x classes x depth``
  array.

With a wide root (:class:`hsw2v.layer._root.WideRoot`) the paths start below the root's ``K``
children and the ``top`` columns are the root's log-softmax over them; with the binary root
``top`` is one column of zeros (the root's own log-probability).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class LevelPlan:
    """Level ``d``'s inner nodes are ``levels[d]``; for ``d > 0`` their path log-probabilities
    are columns ``parent_edges[d]`` of level ``d - 1``'s ``2 n_{d-1}`` edges (node position
    ``p``, bit ``b`` -> column ``2 p + b``); level 0's are columns ``top_inner`` of ``top``.
    Class ``c`` is column ``leaf_columns[c]`` of ``[top, edges_0, edges_1, ...]``."""

    n_top: int
    top_inner: np.ndarray
    levels: list
    parent_edges: list
    leaf_columns: np.ndarray


def padded_paths(codes, points, lengths):
    """``(nodes int64 V x L, signs float32 V x L)`` with ``L >= 1`` and zeros past each
    path's end (a class at the top of a wide root has an empty path).

    Examples
    --------
    >>> from hsw2v.huffman import build_huffman_tree
    >>> t = build_huffman_tree([5, 3, 1, 1])
    >>> nodes, signs = padded_paths(t.codes, t.points, t.lengths)
    >>> nodes.tolist(), signs.tolist()
    ([[2, 0, 0], [2, 1, 0], [2, 1, 0], [2, 1, 0]], [[-1.0, 0.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, -1.0], [1.0, 1.0, 1.0]])
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    width = max(1, int(lengths.max()) if len(lengths) else 1)
    on_path = np.arange(width)[None, :] < lengths[:, None]
    nodes = np.zeros((len(lengths), width), dtype=np.int64)
    signs = np.zeros((len(lengths), width), dtype=np.float32)
    cols = min(width, np.asarray(points).shape[1])
    nodes[:, :cols] = np.asarray(points)[:, :cols]
    signs[:, :cols] = 1.0 - 2.0 * np.asarray(codes)[:, :cols].astype(np.float32)
    nodes[~on_path] = 0
    signs[~on_path] = 0.0
    return nodes, signs


def level_plan(children: np.ndarray, root: int, top=None) -> LevelPlan:
    """The level plan of a tree given as a child table (:func:`hsw2v.huffman.child_table`:
    row ``n`` holds node ``n``'s children by bit 0 and bit 1, a class ``c`` as ``-1 - c``).
    ``top``: the wide root's children as child-table entries (None: the binary root).

    Examples
    --------
    >>> children = np.array([[-4, -3], [0, -2], [1, -1]])  # Huffman's tree of 4 classes
    >>> plan = level_plan(children, 2)
    >>> [lv.tolist() for lv in plan.levels], plan.leaf_columns.tolist()
    ([[2], [1], [0]], [2, 4, 6, 5])
    """
    children = np.asarray(children, dtype=np.int64)
    n_classes = len(children) + 1
    top = np.array([root], dtype=np.int64) if top is None else np.asarray(top, dtype=np.int64)
    leaf_columns = np.full(n_classes, -1, dtype=np.int64)
    is_leaf = top < 0
    leaf_columns[-1 - top[is_leaf]] = np.nonzero(is_leaf)[0]
    top_inner = np.nonzero(~is_leaf)[0]
    current = top[top_inner]
    levels, parent_edges = [], [np.zeros(0, dtype=np.int64)]
    offset = len(top)
    while len(current):
        levels.append(current)
        below = children[current].ravel()  # edge 2 p + b
        leaf = below < 0
        leaf_columns[-1 - below[leaf]] = offset + np.nonzero(leaf)[0]
        offset += len(below)
        parent_edges.append(np.nonzero(~leaf)[0])
        current = below[~leaf]
    if (leaf_columns < 0).any():  # cannot happen for a checked tree
        raise ValueError("the tree does not reach every class")
    return LevelPlan(len(top), top_inner, levels, parent_edges[: len(levels)], leaf_columns)
