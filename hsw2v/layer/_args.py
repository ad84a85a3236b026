"""Argument checks shared by the layer and its training (:mod:`hsw2v.layer`)."""

from __future__ import annotations

import numpy as np

from hsw2v.running.params import UINT64_MAX

OPTIMIZERS = ("sgd", "adagrad", "rowwise-adagrad")


def positive_int(value, name: str, high: int | None = None) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < 1
        or (high is not None and value > high)
    ):
        limit = f" (at most {high})" if high is not None else ""
        raise ValueError(f"{name} must be a positive integer{limit}, got {value!r}")
    return int(value)


def check_seed(value) -> int:
    """A seed the random streams take (numpy's generators and the kernels' uint64 state)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not (
        0 <= value <= UINT64_MAX
    ):
        raise ValueError(f"seed must be an integer in [0, {UINT64_MAX}], got {value!r}")
    return int(value)


INDEX_MAX = 2**31 - 1  # the layer's kernels index features and rows with int32


def checked_features(X):
    """``X`` unchanged if dense; if sparse (any SciPy format), a CSR matrix whose structure
    has been checked in full before anything indexes with it: every column and row id
    inside the matrix, ``indptr`` non-decreasing and agreeing with ``indices``, and both
    dimensions below 2**31 (the kernels' int32 ids), checked before any cast.

    SciPy does not check ids it did not build itself (a matrix made from ``(data, indices,
    indptr)``, or whose ``indices`` were edited): its own products and conversions then read
    outside the arrays. This is the one check every route of the layer and the classifier
    takes (``fit``, ``transform``, ``predict``, ``predict_proba``, the label trees).

    >>> import scipy.sparse as sp
    >>> bad = sp.csr_matrix((np.ones(1), np.array([7]), np.array([0, 1])), shape=(1, 3))
    >>> checked_features(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: X (a sparse csr matrix of shape (1, 3)) is malformed: column ids must lie in [0, 3), ...
    """
    if not type(X).__module__.startswith("scipy.sparse"):
        return X
    import scipy.sparse as sp

    shape = tuple(int(s) for s in X.shape)
    where = f"X (a sparse {X.format} matrix of shape {shape}) is malformed"
    if len(shape) != 2 or max(shape) > INDEX_MAX:
        raise ValueError(f"{where}: need 2 dimensions, each below 2**31")
    fmt = X.format
    try:
        if fmt in ("csr", "csc", "bsr"):
            for name in ("indices", "indptr"):
                if not np.issubdtype(np.asarray(getattr(X, name)).dtype, np.integer):
                    raise ValueError(f"{name} must hold integers")
            _check_compressed(X, shape, fmt)
        elif fmt == "coo":
            coords = getattr(X, "coords", None) or (X.row, X.col)
            for axis, ids in enumerate(coords):
                ids = np.asarray(ids)
                if not np.issubdtype(ids.dtype, np.integer):
                    raise ValueError("coordinates must be integers")
                if ids.size and (ids.min() < 0 or ids.max() >= shape[axis]):
                    raise ValueError(
                        f"{'row' if axis == 0 else 'column'} ids must lie in "
                        f"[0, {shape[axis]}), got {ids.min()}..{ids.max()}"
                    )
        X = sp.csr_matrix(X, dtype=np.float32)
        X.check_format(full_check=True)
    except (ValueError, TypeError, IndexError, OverflowError) as exc:
        if str(exc).startswith(where):
            raise
        raise ValueError(
            f"{where}: {exc}; build it with scipy.sparse.csr_matrix((data, (rows, cols)), "
            "shape=...) or check it with X.check_format(full_check=True)"
        ) from None
    return X


def _check_compressed(X, shape, fmt) -> None:
    """The ids of a CSR, CSC or BSR matrix, in exact integers (no cast before the test)."""
    indices = np.asarray(X.indices)
    indptr = np.asarray(X.indptr)
    if fmt == "bsr":
        r, c = X.blocksize
        major, minor = shape[0] // r, shape[1] // c
    elif fmt == "csr":
        major, minor = shape
    else:
        minor, major = shape
    kind = "column" if fmt in ("csr", "bsr") else "row"
    if indptr.ndim != 1 or len(indptr) != major + 1:
        raise ValueError(f"indptr must hold {major + 1} entries, got {indptr.shape}")
    if indptr.size and (indptr[0] != 0 or (np.diff(indptr) < 0).any()):
        raise ValueError("indptr must start at 0 and never decrease")
    if int(indptr[-1]) > len(indices):
        raise ValueError(f"indptr ends at {int(indptr[-1])}, past the {len(indices)} ids")
    used = indices[: int(indptr[-1])]
    if used.size and (used.min() < 0 or used.max() >= minor):
        raise ValueError(
            f"{kind} ids must lie in [0, {minor}), got {used.min()}..{used.max()}"
        )
