"""Label trees learned from labelled data, for the hierarchical-softmax layer and classifier.

:func:`label_tree` builds the tree over the classes ``0..n_classes-1`` of a labelled data set:
Huffman's over the class frequencies, balanced, or learned from the features (``"kmeans"``:
recursive balanced spherical 2-means of the label centroids, each cut at half the class
frequency mass, as probabilistic label trees build them: Prabhu et al., "Parabel", WWW 2018;
Jasinska-Kobus et al., napkinXC, 2020). The trees are stored as :mod:`hsw2v.trees` stores
every tree, and built with its level-wise builder.
"""

from __future__ import annotations

import numpy as np

from hsw2v.huffman import Tree, build_huffman_tree
from hsw2v.layer._args import checked_features
from hsw2v.trees import balanced_tree, level_tree

LABEL_TREE_KINDS = ("huffman", "balanced", "kmeans")


def label_tree(kind: str, y, n_classes: int, X=None, *, seed: int = 1) -> Tree:
    """A tree over the classes ``0..n_classes-1`` of a labelled data set, for
    :class:`hsw2v.HierarchicalSoftmax`.

    * ``"huffman"``: the Huffman tree of the class frequencies in ``y`` (frequent classes
      get short paths; :func:`hsw2v.huffman.build_huffman_tree`).
    * ``"balanced"``: :func:`balanced_tree` over the class ids in order.
    * ``"kmeans"``: :func:`kmeans_tree` of the label centroids of ``X``
      (:func:`label_centroids`), each split cutting the sorted labels where each side
      carries about half the frequency mass: classes that share features share a path, as
      in probabilistic label trees (Prabhu et al., "Parabel", WWW 2018; Jasinska-Kobus et
      al., "Probabilistic Label Trees for Extreme Multi-label Classification", 2020), and
      frequent classes still get short paths, as in Huffman's. Needs ``X`` (dense or CSR,
      one row per label in ``y``).

    Examples
    --------
    >>> y = np.array([0, 0, 0, 1, 2, 3])
    >>> label_tree("huffman", y, 4).lengths.tolist()
    [1, 2, 3, 3]
    >>> X = np.array([[1, 0], [1, 0], [1, 0], [1, .1], [0, 1], [.1, 1]], dtype=np.float32)
    >>> t = label_tree("kmeans", y, 4, X)
    >>> t.point(2)[-1] == t.point(3)[-1]  # 2 and 3 share features: siblings
    np.True_
    """
    if kind not in LABEL_TREE_KINDS:
        raise ValueError(f"kind must be one of {LABEL_TREE_KINDS}, got {kind!r}")
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)):
        raise ValueError(f"n_classes must be an integer of at least 2, got {n_classes!r}")
    n_classes = int(n_classes)
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2, got {n_classes}")
    y = np.asarray(y)
    if y.ndim != 1 or (len(y) and not np.issubdtype(y.dtype, np.integer)):
        raise ValueError(f"y must be a 1-D array of integer class ids, got {y.dtype} {y.shape}")
    if len(y) and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"class ids in y must be in [0, {n_classes}), got {y.min()}..{y.max()}")
    counts = np.bincount(y.astype(np.int64), minlength=n_classes)
    if kind == "huffman":
        return build_huffman_tree(counts)
    if kind == "balanced":
        return balanced_tree(n_classes)
    if X is None:
        raise ValueError('kind="kmeans" needs X, the features of the rows labelled by y')
    return kmeans_tree(label_centroids(X, y, n_classes), mass=counts, seed=seed)


def label_centroids(X, y, n_classes: int) -> np.ndarray | object:
    """Row ``c``: the sum of the L2-normalised rows of ``X`` labelled ``c``, normalised to
    length 1 (zero for a class without rows). CSR in, CSR out (float32); dense in, dense out.

    Examples
    --------
    >>> label_centroids(np.array([[3, 4], [0, 2], [1, 0]]), np.array([0, 0, 1]), 3).tolist()
    [[0.316..., 0.948...], [1.0, 0.0], [0.0, 0.0]]
    """
    import scipy.sparse as sp

    n = len(y)
    if sp.issparse(X):
        X = checked_features(X)  # every id checked before SciPy's products use it
    else:
        X = np.asarray(X, dtype=np.float32)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array or CSR matrix, got shape {X.shape}")
    if X.shape[0] != n:
        raise ValueError(f"X has {X.shape[0]} rows but y has {n} labels")
    values = X.data if sp.issparse(X) else X
    if not np.isfinite(values).all():
        raise ValueError("X holds NaN or infinite values")
    Y = sp.csr_matrix(
        (np.ones(n, dtype=np.float32), (np.asarray(y, dtype=np.int64), np.arange(n))),
        shape=(n_classes, n),
    )
    C = Y @ (_scale_rows(X, _inverse_norms(X)))
    return _scale_rows(C, _inverse_norms(C))


def _inverse_norms(X) -> np.ndarray:
    import scipy.sparse as sp

    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else (X * X).sum(1)
    norms = np.sqrt(sq.astype(np.float64))
    return np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0).astype(np.float32)


def _scale_rows(X, scale):
    import scipy.sparse as sp

    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(scale) @ X, dtype=np.float32)
    return (X * scale[:, None]).astype(np.float32)


def kmeans_tree(
    vectors,
    mass=None,
    *,
    balance: str = "mass",
    weighted: bool = False,
    iterations: int = 10,
    dim: int = 128,
    seed: int = 1,
) -> Tree:
    """A tree by recursive balanced spherical 2-means of ``vectors`` (one row per leaf,
    dense or CSR), as Parabel (Prabhu et al., WWW 2018) builds its label trees: each node's
    leaves start from two random members as centroids; each round ranks the leaves by
    ``x . (c0 - c1)`` and cuts the ranking in two, then takes each side's normalised mean
    as its centroid. The cut puts about half of the node's ``mass`` on each side (the leaf
    that straddles the half goes to its nearer centroid)
    (``balance="mass"``; every leaf weighs 1 without ``mass``, which is Parabel's halving,
    also ``balance="count"``), so with class frequencies as mass frequent classes get
    short paths, as in a Huffman tree. With ``weighted=True`` each centroid is the
    mass-weighted mean of its side (frequent leaves pull harder).

    Rows are L2-normalised; rows with more than ``dim`` columns are first projected to
    ``dim`` dimensions by a Gaussian random projection (Johnson-Lindenstrauss), so every
    level costs ``O(V dim iterations)`` whatever the width. Each level of the tree is one
    vectorised step over all of its nodes (:func:`level_tree`), and the result depends only
    on the input and ``seed``.

    Examples
    --------
    >>> v = np.array([[1, 0], [0, 1], [0.9, 0.1], [0.1, 0.9]], dtype=np.float32)
    >>> t = kmeans_tree(v)
    >>> [int(t.code(w)[0]) for w in range(4)] in ([0, 1, 0, 1], [1, 0, 1, 0])
    True
    """
    import scipy.sparse as sp

    if balance not in ("mass", "count"):
        raise ValueError(f'balance must be "mass" or "count", got {balance!r}')
    iterations = int(iterations)
    if iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations}")
    rng = np.random.default_rng(seed)
    if sp.issparse(vectors):
        x = checked_features(vectors)
        values = x.data
    else:
        x = np.asarray(vectors, dtype=np.float32)
        if x.ndim != 2:
            raise ValueError(f"vectors must be a 2-D array, got shape {x.shape}")
        values = x
    if not np.isfinite(values).all():
        raise ValueError("vectors hold NaN or infinite values")
    if x.shape[1] > dim:
        x = np.asarray(x @ rng.standard_normal((x.shape[1], dim), dtype=np.float32))
    else:
        x = x.toarray() if sp.issparse(x) else x.copy()
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"a tree needs at least two leaves, got {n}")
    x *= _inverse_norms(x)[:, None]
    if mass is None:
        weight = np.ones(n)
    else:
        weight = np.asarray(mass, dtype=np.float64)
        if weight.shape != (n,) or not np.isfinite(weight).all() or (weight < 0).any():
            raise ValueError(f"mass must be {n} finite non-negative numbers, one per row")
        # a class never seen still needs a place: give it the smallest mass seen
        weight = np.maximum(weight, weight[weight > 0].min() if (weight > 0).any() else 1.0)
    cut_weight = np.ones(n) if balance == "count" else weight

    def split_level(order, start, end):
        size = end - start
        seg = np.repeat(np.arange(len(start)), size)
        pos = _ranges(start, end)
        off = np.concatenate([[0], np.cumsum(size)[:-1]])  # segment starts in pos
        leaves = order[pos]
        xs, ws, cw = x[leaves], weight[leaves], cut_weight[leaves]
        # two distinct random members of each segment as the first centroids
        a = rng.integers(0, size)
        b = (a + 1 + rng.integers(0, size - 1)) % size
        c0, c1 = xs[off + a], xs[off + b]
        rank, cut = None, None
        for _ in range(iterations):
            score = np.einsum("ij,ij->i", xs, (c1 - c0)[seg])  # low: nearer c0
            new_rank = np.lexsort((score, seg))
            ranked_w = cw[new_rank]
            before = np.cumsum(ranked_w) - ranked_w  # mass ahead of each leaf (global)
            seg_before = before - before[off][seg]
            half = np.add.reduceat(ranked_w, off) / 2
            cut = np.bincount(seg, weights=seg_before < half[seg], minlength=len(start))
            cut = np.clip(cut.astype(np.int64), 1, size)
            # the leaf that straddles the half mass goes to the side whose centroid is nearer
            last = off + cut - 1
            straddles = seg_before[last] + ranked_w[last] > half
            cut -= straddles & (score[new_rank[last]] > 0)
            cut = np.clip(cut, 1, size - 1)
            if rank is not None and (new_rank == rank).all():
                break
            rank = new_rank
            bounds = np.stack([off, off + cut], axis=1).ravel()
            pull = xs[rank] * ws[rank][:, None] if weighted else xs[rank]
            sums = np.add.reduceat(pull, bounds, axis=0)
            sums *= _inverse_norms(sums)[:, None]
            c0, c1 = sums[0::2], sums[1::2]
        order[pos] = leaves[rank]
        return start + cut

    return level_tree(n, split_level)


def _ranges(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(s, e)`` for each segment, vectorised.

    Examples
    --------
    >>> _ranges(np.array([0, 5]), np.array([2, 8])).tolist()
    [0, 1, 5, 6, 7]
    """
    size = end - start
    first = np.cumsum(size) - size
    return np.repeat(start - first, size) + np.arange(size.sum())
