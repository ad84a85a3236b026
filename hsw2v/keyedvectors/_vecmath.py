"""Small vector helpers shared by KeyedVectors and its evaluation routines."""

from __future__ import annotations

import numpy as np

__all__ = ["unitvec", "top_indices"]


def _dnrm2(vec) -> float:
    """BLAS's ``dnrm2`` (SciPy's), imported where it is first needed: training, and a Spark
    or Dask task, never import ``scipy.linalg`` (a quarter of a second)."""
    from scipy.linalg.blas import dnrm2

    return dnrm2(vec)


def unitvec(vec):
    """`vec` scaled to unit L2 length, computed in double precision and returned in its own
    float dtype (integers give float64). A zero or empty vector is returned unchanged.

    >>> unitvec(np.array([3.0, 4.0], dtype=np.float32)).tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    vec = np.asarray(vec)
    if not np.issubdtype(vec.dtype, np.floating):
        vec = vec.astype(np.float64)
    if vec.size == 0:
        return vec
    length = _dnrm2(vec)
    if length > 0.0:
        return (vec.astype(np.float64) * (1.0 / length)).astype(vec.dtype)
    return vec


def top_indices(scores, topn):
    """Indices of the `topn` largest `scores`, largest first.

    >>> top_indices(np.array([0.1, 0.9, 0.5]), 2).tolist()
    [1, 2]
    """
    neg = -np.asarray(scores)
    if topn <= 0:
        return np.zeros(0, dtype=np.intp)
    if topn >= neg.size:
        return np.argsort(neg)[:topn]
    best = np.argpartition(neg, topn)[:topn]
    return best.take(np.argsort(neg.take(best)))
