"""The wide root of :class:`hsw2v.layer.HierarchicalSoftmax`: the top levels of a binary tree
replaced by one softmax over ``K`` children.

A binary tree decides a class by a chain of two-way choices, each a linear classifier of the
hidden vector; near the root those choices split large groups of classes and are the hardest
to make linearly. The wide root keeps the tree below a frontier of ``K`` subtrees (some of them
single classes) and scores the frontier with one softmax, ``P(k | h) = exp(z_k) / sum_j
exp(z_j)``, ``z_k = h . R_k + b_k``:

    ``P(y | h) = P(slot(y) | h) * prod_j sigmoid(s_j h . w_{n_j})``

over the binary path from the child ``slot(y)`` down to ``y``. This is the class-based
factorisation of Goodman ("Classes for fast maximum entropy training", ICASSP 2001) and the
adaptive softmax's head (Grave et al., "Efficient softmax approximation for GPUs", ICML
2017), with the tree's own top levels as the classes: the frontier is the first ``K - 1``
inner nodes in breadth-first order, expanded, so on a Huffman or a frequency-balanced tree
the most frequent classes become children of the root themselves and the rest stay in
subtrees. ``K = 2`` is the binary root in another parametrisation; ``K >= V`` is a flat
softmax over all classes.

A training step costs ``K`` dot products more than the binary path (``softmax_step`` of
:mod:`hsw2v._kernels.math._path`); scoring every class costs the same as without; the top-k search starts
from the ``K`` children at their probabilities.
"""

from __future__ import annotations

import numpy as np

from hsw2v.huffman import Tree


class WideRoot:
    """Where the frontier lies in a tree, and the paths below it.

    ``children``: the frontier as child-table entries (inner node ``n`` or leaf ``-1 - w``),
    K of them; ``expanded``: the inner nodes above it (K - 1; their rows in the layer's
    ``weights`` are not used); ``slot``: int32, the frontier child above each class;
    ``below``: the tree's paths from that child down (length 0 for a class that is itself a
    child of the root).

    Examples
    --------
    >>> from hsw2v.trees import balanced_tree, check_tree
    >>> tree = balanced_tree(4)  # root 2 over node 1 (classes 0, 1) and node 0 (2, 3)
    >>> children, root, order = check_tree(tree.codes, tree.points, tree.lengths)
    >>> wide = WideRoot(tree, children, order, 2)
    >>> wide.children.tolist(), wide.slot.tolist(), wide.below.lengths.tolist()
    ([1, 0], [0, 0, 1, 1], [1, 1, 1, 1])
    >>> WideRoot(tree, children, order, 4).children.tolist()  # all leaves: a flat softmax
    [-1, -2, -3, -4]
    """

    def __init__(self, tree: Tree, children: np.ndarray, order: np.ndarray, width: int):
        n_inner = len(children)
        width = min(int(width), n_inner + 1)
        # expanding the first K - 1 nodes of a breadth-first order keeps every expanded node's
        # parent expanded, and each expansion adds one child to the frontier
        is_expanded = np.zeros(n_inner, dtype=bool)
        self.expanded = np.ascontiguousarray(order[: width - 1], dtype=np.int64)
        is_expanded[self.expanded] = True
        below = children[self.expanded].ravel()  # parents in breadth-first order, bit 0 first
        keep = np.ones(len(below), dtype=bool)
        keep[below >= 0] = ~is_expanded[below[below >= 0]]
        self.children = np.ascontiguousarray(below[keep], dtype=np.int32)
        if len(self.children) != width:  # cannot happen for a checked tree
            raise ValueError(f"the tree's top {width - 1} nodes do not give {width} children")
        codes, points, lengths = tree.codes, tree.points, tree.lengths
        V, L = codes.shape
        steps = np.arange(L)
        on_path = steps < lengths[:, None]
        points = np.where(on_path, points, 0)  # entries past a path's end are not checked
        start = (is_expanded[points] & on_path).sum(axis=1)  # expanded nodes lead each path
        entry = np.where(
            start < lengths,
            points[np.arange(V), np.minimum(start, L - 1)],
            -1 - np.arange(V),
        )
        by_entry = np.argsort(self.children)  # each class's child: its entry's position
        found = by_entry[np.searchsorted(self.children[by_entry], entry)]
        self.slot = np.ascontiguousarray(found, dtype=np.int32)
        shifted = np.minimum(start[:, None] + steps, L - 1)
        keep_step = steps < (lengths - start)[:, None]
        self.below = Tree(
            codes=np.ascontiguousarray(
                np.take_along_axis(codes, shifted, 1) * keep_step, dtype=np.uint8
            ),
            points=np.ascontiguousarray(
                np.take_along_axis(points, shifted, 1) * keep_step, dtype=np.int32
            ),
            lengths=np.ascontiguousarray(lengths - start, dtype=np.int32),
        )

    @property
    def width(self) -> int:
        """K, the number of children of the root."""
        return len(self.children)


def root_log_softmax(H: np.ndarray, R: np.ndarray, bias) -> np.ndarray:
    """``log P(k | h_i)`` of every root child for each row of ``H``: float64 B x K, the
    scores shifted by their row maximum before ``exp`` (NaN scores give NaN rows).

    Examples
    --------
    >>> root_log_softmax(np.zeros((1, 2)), np.ones((4, 2), np.float32), None).round(4).tolist()
    [[-1.3863, -1.3863, -1.3863, -1.3863]]
    """
    Z = np.asarray(H, dtype=np.float64) @ np.asarray(R, dtype=np.float64).T
    if bias is not None:
        Z += bias
    Z -= Z.max(axis=1, keepdims=True)
    Z -= np.log(np.exp(Z).sum(axis=1, keepdims=True))
    return Z


def root_gradient(H: np.ndarray, R: np.ndarray, bias, target: np.ndarray):
    """The root's loss ``-log P(target_i | h_i)`` (float64, B) and ``dL/dZ`` (float64 B x K:
    the probabilities minus the one-hot target), from which ``dL/dH = dZ R``,
    ``dL/dR = dZ^T H`` and ``dL/dbias = sum_i dZ_i`` (design note E of :mod:`hsw2v._kernels.math._path`).

    Examples
    --------
    >>> loss, dZ = root_gradient(np.zeros((1, 2)), np.ones((2, 2), np.float32), None, [1])
    >>> loss.round(4).tolist(), dZ.tolist()
    ([0.6931], [[0.5, -0.5]])
    """
    logp = root_log_softmax(H, R, bias)
    rows = np.arange(len(logp))
    loss = -logp[rows, target]
    dZ = np.exp(logp, out=logp)
    dZ[rows, target] -= 1.0
    return loss, dZ


def root_step(H: np.ndarray, R: np.ndarray, bias, target: np.ndarray, lr: float):
    """The wide root's part of the gradient at the weights on entry, ``(dL/dH, dL/dR,
    dL/dbias or None)`` as float32, then with ``lr`` its batch step on ``R`` and ``bias`` in
    place (every row's gradient taken before the step)."""
    _, dZ = root_gradient(H, R, bias, target)
    grad_h = (dZ @ R).astype(np.float32)
    grad_r = (dZ.T @ H).astype(np.float32)
    grad_b = None if bias is None else dZ.sum(axis=0).astype(np.float32)
    if lr:
        R -= np.float32(lr) * grad_r
        if grad_b is not None:
            bias -= np.float32(lr) * grad_b
    return grad_h, grad_r, grad_b
