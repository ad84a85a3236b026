"""A tree given as flat arrays (``codes``, ``points``, ``lengths``; see :mod:`hsw2v.huffman`)
read back and checked: its child table, its inner nodes top-down, the cheap index check every
loaded tree gets and the full check of a user's tree.

Functions over arrays only, below :class:`hsw2v.huffman.Tree`, so that the tree's constructors
and the builders of :mod:`hsw2v.trees` can both use them; :mod:`hsw2v.huffman`
(``child_table``) and :mod:`hsw2v.trees` (the checks) re-export them.
"""

from __future__ import annotations

import numpy as np

from hsw2v._kernels._array_passes import paths_in_range


def check_tree_indices(codes, points, lengths, n_leaves: int, name=None) -> None:
    """Check what the training kernels follow in a tree without bounds checks: ``codes`` uint8
    and ``points`` int32, both C-contiguous ``V x L`` with ``V = n_leaves``, ``lengths`` int32
    with ``V`` entries in ``[0, L]``, and on each path (the first ``lengths[w]`` entries) bits
    0/1 and inner-node ids in ``[0, max(V - 1, 1))``: ``V - 1`` inner nodes, one row each
    (one node for a single word). The full shape of the tree is :func:`check_tree`'s job;
    this is the cheap, vectorised part every loaded or assigned tree gets.

    ``name(field)`` gives the name to report for ``"codes"``, ``"points"`` or ``"lengths"``
    (default: the field itself).

    Raises
    ------
    ValueError
        Saying which entry is wrong.

    Examples
    --------
    >>> check_tree_indices(np.zeros((2, 1), np.uint8), np.zeros((2, 1), np.int32),
    ...                    np.ones(2, np.int32), 2)
    >>> check_tree_indices(np.zeros((2, 1), np.uint8), np.ones((2, 1), np.int32),
    ...                    np.ones(2, np.int32), 2)
    Traceback (most recent call last):
        ...
    ValueError: points[0, 0] is 1: inner-node ids must be in [0, 0] for 2 leaves
    """
    name = name or (lambda field: field)
    want = {"codes": (codes, np.uint8, 2), "points": (points, np.int32, 2)}
    want["lengths"] = (lengths, np.int32, 1)
    for field, (arr, dtype, ndim) in want.items():
        if (
            not isinstance(arr, np.ndarray)
            or arr.dtype != dtype
            or arr.ndim != ndim
            or not arr.flags.c_contiguous
            or arr.shape[0] != n_leaves
        ):
            got = f"{arr.dtype} {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
            rows = f"{n_leaves}" if ndim == 1 else f"{n_leaves} x L"
            raise ValueError(
                f"{name(field)} must be a C-contiguous {np.dtype(dtype)} array of shape "
                f"({rows}), got {got}"
            )
    if codes.shape != points.shape:
        raise ValueError(
            f"{name('codes')} and {name('points')} must have the same shape, got {codes.shape} "
            f"and {points.shape}"
        )
    width = codes.shape[1]
    inner = max(n_leaves - 1, 1)
    if paths_in_range(codes, points, lengths, inner - 1):
        return  # one pass without temporaries; else NumPy finds and names the wrong entry
    if n_leaves and (lengths.min() < 0 or lengths.max() > width):
        w = int(np.flatnonzero((lengths < 0) | (lengths > width))[0])
        raise ValueError(
            f"{name('lengths')}[{w}] is {int(lengths[w])}: path lengths must be in [0, {width}]"
        )
    used = np.arange(width) < lengths[:, None]
    for field, arr, high, what in (
        ("codes", codes, 1, "codes must be bits (0 or 1)"),
        (
            "points",
            points,
            inner - 1,
            f"inner-node ids must be in [0, {inner - 1}] for {n_leaves} leaves",
        ),
    ):
        wrong = used & ((arr < 0) | (arr > high))
        if wrong.any():
            w, j = (int(i[0]) for i in np.nonzero(wrong))
            raise ValueError(f"{name(field)}[{w}, {j}] is {int(arr[w, j])}: {what}")


def check_tree(codes, points, lengths, n_leaves: int | None = None):
    """Validate a tree given as flat arrays; return ``(children, root, order)``.

    ``codes`` / ``points``: ``V x L`` arrays (bits in {0, 1}; inner-node ids in ``[0, V-2]``),
    ``lengths``: ``V`` path lengths in ``[1, L]``. The paths must all start at one root and
    describe a full binary tree whose leaves are exactly the ``V`` classes (so the codes are
    prefix-free and every inner node has two children). Returns the child table
    (``children[n, b]``: inner node as its id, leaf ``w`` as ``-1 - w``), the root's id and
    the inner nodes in top-down (breadth-first) order. Raises ValueError saying what is wrong.

    Examples
    --------
    >>> children, root, order = check_tree([[0, 0], [0, 1], [1, 0]], [[1, 0], [1, 0], [1, 0]],
    ...                                    [2, 2, 1])
    >>> children.tolist(), root, order.tolist()
    ([[-1, -2], [0, -3]], 1, [1, 0])
    >>> check_tree([[0], [0]], [[0], [0]], [1, 1])
    Traceback (most recent call last):
        ...
    ValueError: classes 0 and 1 have the same path: the codes must be prefix-free (a code ...
    """
    codes = np.asarray(codes)
    points = np.asarray(points)
    lengths = np.asarray(lengths)
    if codes.ndim != 2 or points.shape != codes.shape or lengths.shape != (codes.shape[0],):
        raise ValueError(
            "codes and points must be V x L arrays and lengths V entries, got shapes "
            f"{codes.shape}, {points.shape}, {lengths.shape}"
        )
    n = codes.shape[0]
    if n_leaves is not None and n != n_leaves:
        raise ValueError(f"the tree has {n} leaves, expected {n_leaves}")
    if n < 2:
        raise ValueError(f"a tree needs at least two classes, got {n}")
    if not (np.issubdtype(codes.dtype, np.integer) or codes.dtype == bool) or not np.issubdtype(
        points.dtype, np.integer
    ):
        raise ValueError("codes and points must be integer arrays")
    if lengths.min() < 1 or lengths.max() > codes.shape[1]:
        raise ValueError(f"path lengths must be in [1, {codes.shape[1]}]")
    used = np.arange(codes.shape[1])[None, :] < lengths[:, None]
    if codes[used].min() < 0 or codes[used].max() > 1:
        raise ValueError("codes must be bits (0 or 1)")
    if points[used].min() < 0 or points[used].max() > n - 2:
        raise ValueError(f"inner-node ids must be in [0, {n - 2}] for {n} classes")
    roots = np.unique(points[:, 0])
    if len(roots) != 1:
        raise ValueError(f"every path must start at the same root, found {roots[:5].tolist()}")
    root = int(roots[0])
    # Two classes with one path, or one path a prefix of another, are the commonest mistakes:
    # name them before the general check.
    keys = {}
    for w in range(n):
        key = codes[w, : lengths[w]].astype(np.uint8).tobytes()
        if key in keys:
            raise ValueError(
                f"classes {keys[key]} and {w} have the same path: the codes must be prefix-free "
                "(a code may not be the start of another)"
            )
        keys[key] = w
    try:
        children = child_table(codes.astype(np.uint8), points, lengths, root=root)
    except ValueError as exc:
        raise ValueError(
            f"the paths do not describe a full binary tree over {n} classes ({exc}): every "
            "inner node needs two children, and no code may be the start of another"
        ) from None
    return children, root, top_down_order(children, root)


def top_down_order(children: np.ndarray, root: int) -> np.ndarray:
    """The inner nodes in breadth-first order from ``root`` (parents before children).

    Examples
    --------
    >>> top_down_order(np.array([[-1, -2], [0, -3]], dtype=np.int32), 1).tolist()
    [1, 0]
    """
    order = []
    frontier = np.array([root], dtype=np.int64)
    while len(frontier):
        order.append(frontier)
        nxt = children[frontier].ravel()
        frontier = nxt[nxt >= 0].astype(np.int64)
    out = np.concatenate(order).astype(np.int32)
    if len(out) != len(children):
        raise ValueError("the child table is not one tree")
    return out


def child_table(codes, points, lengths, root=None) -> np.ndarray:
    """The children of every inner node of a tree given as flat arrays (see
    :mod:`hsw2v.huffman`): an int32 ``(V-1) x 2`` array whose row ``n`` holds the node reached
    from inner node ``n`` by bit 0 and by bit 1; an inner node as its id, leaf ``w`` as
    ``-1 - w``. Raises ValueError if the arrays do not describe one binary tree rooted at
    ``root`` (default: the first node of every path; ``V-2`` for a freshly built Huffman
    tree, not always after ``build_vocab(update=True)``).

    Examples
    --------
    >>> codes = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=np.uint8)
    >>> points = np.array([[2, 0, 0], [2, 1, 0], [2, 1, 0], [2, 1, 0]], dtype=np.int32)
    >>> child_table(codes, points, [1, 2, 3, 3]).tolist()
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
