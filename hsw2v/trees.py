"""Binary trees for hierarchical softmax, beyond Huffman's: balanced, explicit, semantic.

Every tree here is stored as :class:`hsw2v.huffman.HuffmanTree` holds Huffman's: flat arrays
``codes`` / ``points`` / ``lengths`` (root first; ``sigmoid(h . w[point])`` is the probability
of bit 0), over ``V`` leaves and ``V - 1`` inner nodes. The trees built here follow Huffman's
numbering too: the root is inner node ``V - 2`` and every child has a smaller id than its
parent, so walking the ids downward visits parents first. Explicit trees given by a user may
number their inner nodes any way; :func:`check_tree` validates them and returns the root and
a top-down order.

* :func:`balanced_tree`: leaves ``0..V-1`` split in halves, recursively (depth
  ``ceil(log2 V)``; Morin & Bengio 2005 used such a tree, built from WordNet).
* :func:`split_tree`: any recursive two-way split of the leaves into a tree.
* :func:`semantic_tree`: recursive 2-means of learned vectors (Mnih & Hinton, "A Scalable
  Hierarchical Distributed Language Model", NIPS 2008), so that similar words share a path.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import numpy as np

from hsw2v.huffman import HuffmanTree, child_table


def split_tree(n_leaves: int, split: Callable[[np.ndarray], tuple]) -> HuffmanTree:
    """The tree made by splitting the leaves ``0..n_leaves-1`` in two, recursively.

    ``split(leaves)`` gets an int array of at least two leaf ids and returns two non-empty
    arrays that partition it: the first goes under bit 0, the second under bit 1. Inner nodes
    are numbered breadth-first from the root ``V - 2`` downward.

    Examples
    --------
    >>> t = split_tree(3, lambda ids: (ids[:1], ids[1:]))
    >>> t.lengths.tolist(), t.code(2).tolist(), t.point(2).tolist()
    ([1, 2, 2], [1, 1], [1, 0])
    """
    n_leaves = int(n_leaves)
    if n_leaves < 1:
        raise ValueError(f"a tree needs at least one leaf, got {n_leaves}")
    if n_leaves == 1:
        return HuffmanTree(
            codes=np.zeros((1, 1), dtype=np.uint8),
            points=np.zeros((1, 1), dtype=np.int32),
            lengths=np.ones(1, dtype=np.int32),
        )
    parent = np.empty(2 * n_leaves - 1, dtype=np.int64)  # leaves 0..V-1, inner V + id
    bit = np.zeros(2 * n_leaves - 1, dtype=np.uint8)
    next_id = n_leaves - 2
    reached = np.zeros(n_leaves, dtype=np.int64)
    queue = deque([(np.arange(n_leaves), -1, 0)])
    while queue:
        ids, up, b = queue.popleft()
        if len(ids) == 1:
            node = int(ids[0])
            if not 0 <= node < n_leaves:
                raise ValueError(f"split() returned leaf {node}, outside [0, {n_leaves})")
            reached[node] += 1
        else:
            node = n_leaves + next_id
            next_id -= 1
            left, right = split(ids)
            left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
            if len(left) == 0 or len(right) == 0 or len(left) + len(right) != len(ids):
                raise ValueError(
                    "split() must return two non-empty parts that partition its input, got "
                    f"{len(left)} + {len(right)} of {len(ids)}"
                )
            queue.append((left, node, 0))
            queue.append((right, node, 1))
        parent[node] = up
        bit[node] = b
    if next_id != -1 or (reached != 1).any():
        raise ValueError("split() did not partition its input (some leaf was lost or repeated)")
    return _paths_from_parents(parent, bit, n_leaves)


def _paths_from_parents(parent: np.ndarray, bit: np.ndarray, n_leaves: int) -> HuffmanTree:
    """Flat arrays from a parent table in which every child has a smaller id than its parent
    (nodes: leaves 0..V-1, inner V..2V-2, root 2V-2)."""
    root = 2 * n_leaves - 2
    # Depths by pointer jumping: each node's distance to an ancestor, the ancestor pointer
    # doubling every round (log(depth) vectorised rounds).
    ancestor = parent.astype(np.int64).copy()
    ancestor[root] = root
    depth = np.ones(2 * n_leaves - 1, dtype=np.int64)
    depth[root] = 0
    while (ancestor != root).any():
        depth = depth + depth[ancestor]
        ancestor = ancestor[ancestor]
    max_length = int(depth[:n_leaves].max())
    codes = np.zeros((n_leaves, max_length), dtype=np.uint8)
    points = np.zeros((n_leaves, max_length), dtype=np.int32)
    # Walk all leaves up together, one level per step (vectorised over leaves).
    node = np.arange(n_leaves, dtype=np.int64)
    step = depth[:n_leaves] - 1
    active = step >= 0
    while active.any():
        rows = np.nonzero(active)[0]
        here = node[rows]
        codes[rows, step[rows]] = bit[here]
        points[rows, step[rows]] = parent[here] - n_leaves
        node[rows] = parent[here]
        step[rows] -= 1
        active = step >= 0
    return HuffmanTree(codes=codes, points=points, lengths=depth[:n_leaves].astype(np.int32))


def balanced_tree(n_leaves: int) -> HuffmanTree:
    """A balanced tree over leaves ``0..n_leaves-1`` in order (left half under bit 0): every
    path has ``floor`` or ``ceil`` of ``log2(n_leaves)`` nodes.

    Examples
    --------
    >>> t = balanced_tree(5)
    >>> t.lengths.tolist(), t.code(0).tolist(), t.code(4).tolist()
    ([2, 2, 2, 3, 3], [0, 0], [1, 1, 1])
    """
    n = int(n_leaves)
    if n < 2:
        return split_tree(max(n, 0) or 0, lambda ids: (ids[:1], ids[1:]))
    return level_tree(n, lambda order, s, e: s + (e - s) // 2)


def level_tree(n_leaves: int, split_level: Callable) -> HuffmanTree:
    """The tree made by splitting segments of a leaf order in two, one whole level at a time
    (vectorised: one call per level, not per node).

    ``split_level(order, start, end)`` gets the current leaf order (int64, ``n_leaves``
    entries, a permutation of the leaves) and the segments ``[start, end)`` of it to split
    (each of at least two leaves); it may reorder ``order`` in place within each segment and
    returns the cut ``mid`` of each (``start < mid < end``): ``order[start:mid]`` goes under
    bit 0, ``order[mid:end]`` under bit 1. Inner nodes are numbered breadth-first from the
    root ``V - 2`` downward, as :func:`split_tree` numbers them.

    Examples
    --------
    >>> level_tree(4, lambda order, s, e: s + 1).lengths.tolist()  # a caterpillar
    [1, 2, 3, 3]
    """
    n = int(n_leaves)
    if n < 2:
        raise ValueError(f"a level tree needs at least two leaves, got {n}")
    order = np.arange(n, dtype=np.int64)
    parent = np.empty(2 * n - 1, dtype=np.int64)
    bit = np.zeros(2 * n - 1, dtype=np.uint8)
    start, end = np.array([0]), np.array([n])
    up, side = np.array([-1]), np.array([0], dtype=np.uint8)
    next_id = n - 2
    while len(start):
        inner = end - start > 1
        node = order[start]  # a one-leaf segment is that leaf
        k = int(inner.sum())
        node[inner] = n + next_id - np.arange(k)
        next_id -= k
        parent[node] = up
        bit[node] = side
        s, e, here = start[inner], end[inner], node[inner]
        if k == 0:
            break
        mid = np.asarray(split_level(order, s, e), dtype=np.int64)
        if mid.shape != s.shape or ((mid <= s) | (mid >= e)).any():
            raise ValueError("split_level must cut every segment into two non-empty parts")
        start = np.stack([s, mid], axis=1).ravel()
        end = np.stack([mid, e], axis=1).ravel()
        up = np.repeat(here, 2)
        side = np.tile(np.array([0, 1], dtype=np.uint8), k)
    if not _is_permutation(order):
        raise ValueError("split_level must only reorder the leaves within each segment")
    return _paths_from_parents(parent, bit, n)


def _is_permutation(order: np.ndarray) -> bool:
    n = len(order)
    return bool(
        n == 0 or (order.min() >= 0 and (np.bincount(order, minlength=n) == 1).all())
    )


def semantic_tree(vectors, iterations: int = 6, seed: int = 1, small: int = 16) -> HuffmanTree:
    """A tree whose splits follow the geometry of ``vectors`` (one row per leaf): each node's
    leaves are split by 2-means (Lloyd's algorithm, ``iterations`` rounds, on unit-length
    rows), started from a split at the median of the projection on the principal direction
    (a few rounds of power iteration), as in Mnih & Hinton (2008), who split learned word
    representations recursively with a two-component mixture. A split that leaves one side
    empty falls back to the median split. Each side comes back ordered by its projection, and
    a node of at most ``small`` leaves is split in halves of that order (the last principal
    direction above it) instead of by a new 2-means: the bottom levels of the tree then cost
    no per-node linear algebra.

    Examples
    --------
    >>> v = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]], dtype=np.float32)
    >>> t = semantic_tree(v)
    >>> first_bits = [int(t.code(w)[0]) for w in range(4)]
    >>> first_bits == [0, 0, 1, 1]
    True
    """
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or len(x) == 0:
        raise ValueError(f"vectors must be a non-empty 2-D array, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("vectors hold NaN or infinite values")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = x / np.where(norms > 0, norms, 1.0)
    rng = np.random.default_rng(seed)

    def split(ids):
        if len(ids) <= max(small, 2):
            return ids[: len(ids) // 2], ids[len(ids) // 2 :]
        part = x[ids]
        centred = part - part.mean(axis=0)
        direction = rng.standard_normal(x.shape[1])
        for _ in range(4):
            direction = centred.T @ (centred @ direction)
            norm = np.linalg.norm(direction)
            if norm == 0:
                break
            direction /= norm
        proj = centred @ direction
        order = np.argsort(proj, kind="stable")
        median_side = np.zeros(len(ids), dtype=bool)
        median_side[order[len(ids) // 2 :]] = True
        side = median_side
        for _ in range(iterations):
            if side.all() or not side.any():
                break
            c0, c1 = part[~side].mean(axis=0), part[side].mean(axis=0)
            new = ((part - c1) ** 2).sum(axis=1) < ((part - c0) ** 2).sum(axis=1)
            if (new == side).all():
                break
            side = new
        if side.all() or not side.any():
            side = median_side
        ranked = ids[order]
        return ranked[~side[order]], ranked[side[order]]

    return split_tree(len(x), split)


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
    if n_leaves and (lengths.min() < 0 or lengths.max() > width):
        w = int(np.flatnonzero((lengths < 0) | (lengths > width))[0])
        raise ValueError(
            f"{name('lengths')}[{w}] is {int(lengths[w])}: path lengths must be in [0, {width}]"
        )
    used = np.arange(width) < lengths[:, None]
    inner = max(n_leaves - 1, 1)
    for field, arr, high, what in (
        ("codes", codes, 1, "codes must be bits (0 or 1)"),
        ("points", points, inner - 1, f"inner-node ids must be in [0, {inner - 1}] for "
         f"{n_leaves} leaves"),
    ):
        wrong = used & ((arr < 0) | (arr > high))
        if wrong.any():
            w, j = (int(i[0]) for i in np.nonzero(wrong))
            raise ValueError(
                f"{name(field)}[{w}, {j}] is {int(arr[w, j])}: {what}"
            )


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


def canonical(codes, points, lengths) -> HuffmanTree:
    """A valid tree (see :func:`check_tree`) renumbered as Huffman's: root ``V - 2``, every
    child's id below its parent's (breadth-first from the root downward).

    Examples
    --------
    >>> t = canonical([[0, 0], [1, 0], [1, 1]], [[0, 0], [0, 1], [0, 1]], [1, 2, 2])
    >>> t.point(1).tolist(), t.point(2).tolist()
    ([1, 0], [1, 0])
    """
    _, _, order = check_tree(codes, points, lengths)
    n = len(order) + 1
    new_id = np.empty(n - 1, dtype=np.int64)
    new_id[order] = np.arange(n - 2, -1, -1)
    lengths = np.asarray(lengths, dtype=np.int32)
    used = np.arange(np.shape(points)[1])[None, :] < lengths[:, None]
    relabelled = np.where(used, new_id[np.where(used, points, 0)], 0).astype(np.int32)
    return HuffmanTree(
        codes=np.where(used, codes, 0).astype(np.uint8), points=relabelled, lengths=lengths
    )


TREE_KINDS = ("huffman", "balanced", "semantic")


def word2vec_tree(kind, counts) -> HuffmanTree:
    """The tree Word2Vec trains over for ``tree=kind``: ``"huffman"`` (word2vec's), or
    ``"balanced"`` over the words in vocabulary order, or ``"semantic"``'s first pass
    (Huffman), or a callable ``kind(counts)`` returning a :class:`HuffmanTree` or a
    ``(codes, points, lengths)`` triple, checked and renumbered by :func:`canonical`.

    Examples
    --------
    >>> word2vec_tree("balanced", [5, 3, 1, 1]).lengths.tolist()
    [2, 2, 2, 2]
    >>> word2vec_tree(lambda c: ([[0], [1]], [[0], [0]], [1, 1]), [3, 1]).lengths.tolist()
    [1, 1]
    """
    from hsw2v.huffman import build_huffman_tree

    if callable(kind):
        made = kind(np.asarray(counts))
        if isinstance(made, HuffmanTree):
            made = (made.codes, made.points, made.lengths)
        try:
            codes, points, lengths = made
        except (TypeError, ValueError):
            raise TypeError(
                "a tree callable must return a HuffmanTree or a (codes, points, lengths) triple, "
                f"got {type(made).__name__}"
            ) from None
        if len(counts) == 1:
            return build_huffman_tree(counts)
        return canonical(np.asarray(codes), np.asarray(points), np.asarray(lengths))
    if kind in ("huffman", "semantic"):
        return build_huffman_tree(counts)
    if kind == "balanced":
        return balanced_tree(len(counts))
    raise ValueError(f"tree must be one of {TREE_KINDS} or a callable, got {kind!r}")
