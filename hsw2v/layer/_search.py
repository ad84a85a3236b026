"""The exact top-k search of the hierarchical-softmax layers, NumPy and PyTorch alike.

A path's probability only falls going down the tree, so a best-first search (a heap of
nodes by their path log-probability) that stops once ``k`` classes are out returns exactly
the ``k`` most probable classes, and never scores most of the tree (the nogil kernel
``top_leaves_batch`` of :mod:`hsw2v._kernels._query`; the search of word2vec's
``predict_output_word``). A per-node intercept rides along as a constant-1 coordinate of the
hidden vector; a wide root starts the search from its ``K`` children at their softmax
log-probabilities (:mod:`hsw2v.layer._root`).
"""

from __future__ import annotations

import numpy as np

from hsw2v._kernels._query import top_leaves_batch
from hsw2v.layer._root import root_log_softmax

_ROOT_SCORES = 1 << 20  # float64 root log-probabilities per chunk of rows (8 MB)


def best_first_topk(H, weights, intercept, children, root: int, k: int, wide_children=None,
                    root_weights=None, root_intercept=None):
    """``(classes int64 B x k, log-probabilities float64 B x k)``, most probable first, for
    hidden vectors ``H`` (B x dim), inner-node ``weights`` (float32, ``(V-1) x dim``) and
    ``intercept`` (``V - 1`` or None), over the tree of child table ``children`` rooted at
    ``root``, or below a wide root (``wide_children``, ``root_weights``, ``root_intercept``).

    Examples
    --------
    >>> children = np.array([[-1, -2]], dtype=np.int32)  # one node over classes 0 and 1
    >>> idx, lp = best_first_topk(np.ones((1, 1)), np.ones((1, 1), np.float32), None,
    ...                           children, 0, 2)
    >>> idx.tolist(), np.exp(lp).round(3).tolist()   # sigmoid(1) for bit 0
    ([[0, 1]], [[0.731, 0.269]])
    """
    dim = weights.shape[1]
    if intercept is None:
        H = np.ascontiguousarray(H, dtype=np.float64)
    else:  # a constant-1 coordinate carries the intercept (no copy of H beyond float64's)
        H1 = np.empty((len(H), dim + 1))
        H1[:, :dim], H1[:, dim] = H, 1.0
        H, weights = H1, np.hstack([weights, np.asarray(intercept, np.float32)[:, None]])
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    if wide_children is None:
        words, logp = top_leaves_batch(H, weights, children, root, k)
        return words.astype(np.int64), logp
    words = np.empty((len(H), k), dtype=np.int64)
    logp = np.empty((len(H), k), dtype=np.float64)
    rows = max(1, _ROOT_SCORES // len(wide_children))
    for start in range(0, len(H), rows):
        chunk = H[start : start + rows]
        root_lp = root_log_softmax(chunk[:, :dim], root_weights, root_intercept)
        w, lp = top_leaves_batch(chunk, weights, children, root, k, wide_children, root_lp)
        words[start : start + len(chunk)] = w
        logp[start : start + len(chunk)] = lp
    return words, logp
