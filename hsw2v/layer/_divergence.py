"""The guard of :meth:`hsw2v.layer.HierarchicalSoftmax.update` and ``backward``: the rows a
step may change, copied when it could overflow and put back when it made them NaN or
infinite (then :class:`~hsw2v.divergence.TrainingDivergedError`, as ``fit`` raises).

Design note. The copy is taken only for steps that could overflow: a weight changes by at
most ``lr * |g| * |h| <= lr * max|h|`` per example (``|g| <= 1``), so by at most
``lr * B * max|h|`` per batch; at or below ``SAFE_STEP = 1e30``, less than half a float32
unit in the last place at the largest finite value (2**104), a finite weight stays finite.
A NaN can then only come from a dot product that overflowed on weights already near the
float32 limit, which the step's loss or gradient shows (non-finite); those rows are then
found but cannot be put back, and the error says so.
"""

from __future__ import annotations

import numpy as np

SAFE_STEP = 1e30  # a batch step at most this long keeps finite weights finite


def nodes_on_paths(layer, y) -> np.ndarray:
    """The inner nodes (rows of ``weights``) the paths of classes ``y`` visit."""
    codes, points, lengths = layer._tree_arrays()
    width = points.shape[1] if points.ndim == 2 else 0
    on_path = np.arange(width) < lengths[y][:, None]
    return np.unique(points[y][on_path])


def rows_if_overflow(layer, H, y):
    """``(nodes, their rows, their intercepts or None)`` when a float32 dot product on the
    paths of ``y`` could overflow (``max|h| * max|w| * dim`` beyond 1e38, weights near the
    float32 limit), else None. The kernels' node step writes a row whose gradient is NaN
    even at step size 0, and an overflowed dot product gives NaN: ``backward`` puts the rows
    back. Costs one pass over the rows on the batch's paths (at most the backward's own)."""
    if not len(H):
        return None
    try:
        nodes = nodes_on_paths(layer, y)
    except IndexError:  # paths edited out of bounds: the kernel refuses them (ValueError)
        return None
    if not len(nodes) or nodes[0] < 0 or nodes[-1] >= len(layer.weights):
        return None
    rows = layer.weights[nodes]
    bound = float(np.abs(H).max()) * float(np.abs(rows).max()) * layer.dim
    if bound <= 1e38:
        return None
    return nodes, rows, None if layer.intercept is None else layer.intercept[nodes]


def rows_on_paths(layer, y, nodes: bool = True) -> dict:
    """A copy of every parameter ``update`` may change (the rows on the batch's paths only
    when ``nodes``; the wide root's always, K rows), put back if the step diverges."""
    copies = {}
    if nodes:
        rows = nodes_on_paths(layer, y)
        copies["weights"] = (rows, layer.weights[rows])
        if layer.intercept is not None:
            copies["intercept"] = (rows, layer.intercept[rows])
    for name in ("root_weights", "root_intercept"):
        if getattr(layer, name) is not None:
            copies[name] = (slice(None), getattr(layer, name).copy())
    return copies


def refuse_divergence(layer, y, saved: dict, lr: float) -> None:
    """After a step: if a parameter it changed is no longer finite, put back what was
    copied (``saved``, from :func:`rows_on_paths`) and raise
    :class:`~hsw2v.divergence.TrainingDivergedError`."""
    from hsw2v.divergence import TrainingDivergedError

    rows = saved["weights"][0] if "weights" in saved else nodes_on_paths(layer, y)
    bad = {"weights": int((~np.isfinite(layer.weights[rows])).any(axis=1).sum())}
    if layer.intercept is not None:
        bad["intercept"] = int((~np.isfinite(layer.intercept[rows])).sum())
    for name in ("root_weights", "root_intercept"):
        arr = getattr(layer, name)
        if arr is not None:
            bad[name] = int((~np.isfinite(arr.reshape(len(arr), -1))).any(axis=1).sum())
    bad = {k: v for k, v in bad.items() if v}
    if not bad:
        return
    for name, (where, before) in saved.items():
        getattr(layer, name)[where] = before
    restored = all(name in saved for name in bad)
    raise TrainingDivergedError(
        f"update diverged at lr={lr:g}: the step made weights NaN or infinite "
        f"({', '.join(f'{k}: {v} rows' for k, v in bad.items())}); "
        + (
            "they were put back as they were before the step. Lower lr or scale H"
            if restored
            else "the weights on those paths were already near the float32 limit before "
            "the step, and are left as they are: reset them (e.g. layer.weights[:] = 0) "
            "and lower lr"
        ),
        nonfinite_rows=bad,
    )
