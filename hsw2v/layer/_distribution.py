"""Every class's probability at once, for :meth:`hsw2v.layer.HierarchicalSoftmax.log_proba`
and :meth:`~hsw2v.layer.HierarchicalSoftmax.proba`: node scores by one matrix product per
chunk of rows, their log-sigmoids by vectorised NumPy, then one top-down pass per row (the
nogil ``fill_log_proba`` of :mod:`hsw2v._kernels._layer`); and the float64 fallbacks for
scores and path losses whose float32 sums overflowed.
"""

from __future__ import annotations

import numpy as np

from hsw2v._kernels._layer import fill_log_proba
from hsw2v.layer._root import root_log_softmax

SCORE_LIMIT = 1e4  # node scores are clipped here when float32 overflowed (scores_float64)
SCORE_BUDGET = 1 << 22  # float32 node scores per chunk (16 MB, and as much again for their
# log-sigmoids)


def distribution(layer, H, out, exp: bool) -> np.ndarray:
    """``log P(c | h_i)`` (or with ``exp`` ``P(c | h_i)``) of every class ``c`` for each row
    of checked hidden vectors ``H``, float64 B x n_classes, written into ``out`` (made when
    None). Reads the layer's weights and tree, writes nothing on it."""
    V = layer.n_classes
    if out is None:
        out = np.empty((len(H), V), dtype=np.float64)
    elif (
        not isinstance(out, np.ndarray)
        or out.shape != (len(H), V)
        or out.dtype != np.float64
        or not out.flags.c_contiguous
    ):
        raise ValueError(f"out must be a C-contiguous float64 array of shape {(len(H), V)}")
    wide = layer._wide
    rows = max(1, min(len(H), SCORE_BUDGET // (V - 1)))
    scores = np.empty((rows, V - 1), dtype=np.float32)
    logsig = np.empty((rows, V - 1), dtype=np.float32)
    node_lp = np.empty(V - 1, dtype=np.float64)
    wt = layer.weights.T
    for start in range(0, len(H), rows):
        chunk = H[start : start + rows]
        s, ls = scores[: len(chunk)], logsig[: len(chunk)]
        with np.errstate(over="ignore", invalid="ignore"):
            np.matmul(chunk, wt, out=s)
            if layer.intercept is not None:
                s += layer.intercept
        if not np.isfinite(s).all():  # overflowed: saturate, as the kernels do
            scores_float64(chunk, layer.weights, layer.intercept, out=s)
        log_sigmoid(s, ls)
        if wide is not None:  # the nodes above the root's children add nothing...
            s[:, wide.expanded] = 0.0
            ls[:, wide.expanded] = 0.0
        block = out[start : start + len(chunk)]
        fill_log_proba(s, ls, layer.children, layer.order, block, node_lp)
        if wide is not None:  # ...and the root's softmax adds its child's log-prob
            root_lp = root_log_softmax(chunk, layer.root_weights, layer.root_intercept)
            block += root_lp[:, wide.slot]
        if exp:
            np.exp(block, out=block)
    return out


def scores_float64(H, weights, intercept, out) -> np.ndarray:
    """Node scores ``H @ weights.T (+ intercept)`` summed in float64, where no product of
    finite float32 values overflows, then clipped to ``[-1e4, 1e4]`` into ``out``.

    Design note. Float32 sums of weights near the float32 limit overflow to inf, and the
    top-down pass then meets inf - inf = NaN. Beyond ``|f| = 1e4`` a sigmoid is exactly 0
    or 1 in float64 (``exp(-745)`` already underflows), so the clip changes no
    probability; a wider clip (the float32 limit) would not do: the pass adds
    ``log sigmoid(-f) = log sigmoid(f) - f``, and ``lp - 3e38 + 3e38`` loses ``lp``
    (float64 keeps 1e-12 of it at 1e4). Only a chunk whose float32 scores overflowed
    takes this path, so every other answer is bit for bit as before."""
    scores = np.asarray(H, dtype=np.float64) @ weights.T.astype(np.float64)
    if intercept is not None:
        scores += intercept
    return np.clip(scores, -SCORE_LIMIT, SCORE_LIMIT, out=out, casting="unsafe")


def path_loss_float64(H, y, weights, intercept, codes, points, lengths) -> np.ndarray:
    """``-log P(y_i | h_i)`` along the paths ``codes`` / ``points`` / ``lengths``, in float64
    (the rows whose float32 kernel sum overflowed): finite for finite weights and hidden
    vectors."""
    loss = np.empty(len(y), dtype=np.float64)
    for i, (h, c) in enumerate(zip(np.asarray(H, dtype=np.float64), y, strict=True)):
        nodes = points[c, : lengths[c]]
        f = weights[nodes].astype(np.float64) @ h
        if intercept is not None:
            f += intercept[nodes]
        f = np.where(codes[c, : lengths[c]] == 0, f, -f)  # bit 0 takes sigmoid(f)
        loss[i] = float(np.sum(np.maximum(-f, 0.0) + np.log1p(np.exp(-np.abs(f)))))
    return loss


def log_sigmoid(f: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out = log sigmoid(f) = min(f, 0) - log1p(exp(-|f|))``, stable, written into
    ``out`` with NumPy's vectorised exp and log1p (one boolean mask as temporary).

    Examples
    --------
    >>> log_sigmoid(np.array([-100.0, 0.0, 100.0]), np.empty(3)).round(4).tolist()
    [-100.0, -0.6931, -0.0]
    """
    tmp = np.abs(f, out=out)
    np.negative(tmp, out=tmp)
    np.exp(tmp, out=tmp)
    np.log1p(tmp, out=tmp)
    np.negative(tmp, out=tmp)
    np.add(tmp, f, out=tmp, where=f < 0)
    return out
