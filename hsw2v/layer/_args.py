"""Argument checks shared by the layer and its training (:mod:`hsw2v.layer`): integers and
seeds, sparse features checked in full, and the layer's three inputs (hidden vectors ``H``,
features ``X``, class ids ``y``), each refused with a message that says what was expected."""

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
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not (0 <= value <= UINT64_MAX)
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
        raise ValueError(f"{kind} ids must lie in [0, {minor}), got {used.min()}..{used.max()}")


def is_sparse(a) -> bool:
    """A SciPy sparse matrix or array, without importing SciPy for dense input."""
    return type(a).__module__.startswith("scipy.sparse")


def hidden_vectors(H, dim: int, method: str, n_features: int | None) -> np.ndarray:
    """Hidden vectors, dense float32 B x ``dim``, or a TypeError / ValueError that says what
    ``method`` expected and what it got instead (``n_features``: the fitted layer's number of
    features, named when ``H`` looks like features; None before fit)."""
    want = f"{method}(H) takes hidden vectors, a dense 2-D array of shape (batch, {dim})"
    if is_sparse(H):
        raise TypeError(
            f"{want}, got a sparse {type(H).__name__} of shape {H.shape}: sparse input "
            "is features; map features to hidden vectors with layer.transform(X) (after "
            "fit), or use HierarchicalSoftmaxClassifier, whose predict/predict_proba take X"
        )
    H = np.asarray(H)
    if not np.issubdtype(H.dtype, np.number) or H.dtype.kind == "c":
        raise TypeError(f"{want} of real numbers, got dtype {H.dtype}")
    if H.ndim != 2 or H.shape[1] != dim:
        got = f"shape {H.shape}"
        if H.ndim == 1 and len(H) == dim:
            got += " (one vector: give H[None, :])"
        elif H.ndim == 2 and n_features is not None and H.shape[1] == n_features:
            got += (
                f" ({H.shape[1]} columns = the fitted number of features: for features "
                "call layer.transform(X) first)"
            )
        raise ValueError(f"{want}, got {got}")
    H = np.ascontiguousarray(H, dtype=np.float32)
    if not np.isfinite(H).all():
        raise ValueError("H holds NaN or infinite values")
    return H


def features(X, method: str, n_features: int | None, dim: int):
    """Features, dense C-contiguous float32 or CSR with float32 data, checked finite, with
    ``n_features`` columns (the fitted number; any before fit), or an error that says what
    was expected (``dim``: the hidden size, named when ``X`` looks like hidden vectors)."""
    m = n_features
    want = f"{method}(X) takes features, a 2-D numeric array or SciPy CSR matrix (n, " + (
        f"{m})" if m is not None else "m)"
    )
    if is_sparse(X):
        X = checked_features(X)  # every id checked before any product reads with it
        values = X.data
    else:
        X = np.asarray(X)
        if X.ndim != 2 or not np.issubdtype(X.dtype, np.number) or X.dtype.kind == "c":
            raise ValueError(f"{want}, got shape {X.shape} dtype {X.dtype}")
        X = np.ascontiguousarray(X, dtype=np.float32)
        values = X
    if m is not None and X.shape[1] != m:
        hint = (
            f": {dim} columns are hidden vectors, which log_proba(H), proba(H) and topk(H, k) take"
            if X.shape[1] == dim
            else ": give the same features as in fit"
        )
        raise ValueError(
            f"{want}: X has {X.shape[1]} features but the layer was fitted with {m}{hint}"
        )
    if not np.isfinite(values).all():
        raise ValueError("X holds NaN or infinite values")
    return X


def class_ids(y, n: int, n_classes: int) -> np.ndarray:
    """``n`` class ids in ``[0, n_classes)`` as int32, or a ValueError that says what was
    expected (and points labels of any kind to the classifier)."""
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must hold one class id per row ({n}), got shape {y.shape}")
    if n and not np.issubdtype(y.dtype, np.integer):
        raise ValueError(
            f"class ids must be integers in [0, {n_classes}), got dtype {y.dtype}: "
            "for labels of any kind (strings, ...) use HierarchicalSoftmaxClassifier"
        )
    if n and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(
            f"class ids must be in [0, {n_classes}), got {y.min()}..{y.max()}: for "
            "labels of any kind use HierarchicalSoftmaxClassifier"
        )
    return np.ascontiguousarray(y, dtype=np.int32)
