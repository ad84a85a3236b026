"""The shapes of hierarchical softmax's trees as flat arrays ``(codes, points, lengths)``, before
they become a :class:`hsw2v.huffman.Tree`: a recursive split of the leaves (any split, one whole
level at a time, balanced, semantic), a user's tree renumbered as Huffman's, ragged paths padded.

Every shape here follows Huffman's numbering (root ``V - 2``, every child's id below its
parent's; see :mod:`hsw2v.trees`). Functions over arrays only, below the ``Tree`` class, whose
constructors (``Tree.balanced``, ``Tree.split``, ``Tree.semantic``, ...) wrap them; the
public builders of :mod:`hsw2v.trees` are those constructors.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import numpy as np

from hsw2v._tree_checks import check_tree

Paths = tuple[np.ndarray, np.ndarray, np.ndarray]  # codes uint8 V x L, points int32, lengths


def one_leaf_paths() -> Paths:
    """A single leaf's tree: one path of one node, so that training stays defined."""
    return (
        np.zeros((1, 1), dtype=np.uint8),
        np.zeros((1, 1), dtype=np.int32),
        np.ones(1, dtype=np.int32),
    )


def split_paths(n_leaves: int, split: Callable[[np.ndarray], tuple]) -> Paths:
    """The tree made by splitting the leaves ``0..n_leaves-1`` in two, recursively.

    ``split(leaves)`` gets an int array of at least two leaf ids and returns two non-empty
    arrays that partition it: the first goes under bit 0, the second under bit 1. Inner nodes
    are numbered breadth-first from the root ``V - 2`` downward.
    """
    n_leaves = int(n_leaves)
    if n_leaves < 1:
        raise ValueError(f"a tree needs at least one leaf, got {n_leaves}")
    if n_leaves == 1:
        return one_leaf_paths()
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
    return paths_from_parents(parent, bit, n_leaves)


def fill_paths(parent, bit, lengths, rows_of=None) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, points)`` of leaves ``0 .. V-1`` from a parent table (leaves ``0 .. V-1``,
    inner nodes ``V ..``, every child's id below its parent's), each node's ``bit`` and the
    leaves' depths ``lengths``: all leaves walk up together, one level a step, filling their
    paths from the end. Leaf ``i``'s path lands in row ``rows_of[i]`` (default ``i``)."""
    n_leaves = len(lengths)
    max_length = int(lengths.max()) if n_leaves else 0
    codes = np.zeros((n_leaves, max_length), dtype=np.uint8)
    points = np.zeros((n_leaves, max_length), dtype=np.int32)
    node = np.flatnonzero(lengths > 0)  # the leaves whose paths are not filled yet
    rows = node if rows_of is None else rows_of[node]
    pos = lengths[node].astype(np.int64) - 1
    while rows.size:
        codes[rows, pos] = bit[node]
        node = parent[node]
        points[rows, pos] = node - n_leaves
        pos -= 1
        keep = pos >= 0
        rows, node, pos = rows[keep], node[keep], pos[keep]
    return codes, points


def paths_from_parents(parent: np.ndarray, bit: np.ndarray, n_leaves: int) -> Paths:
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
    lengths = depth[:n_leaves].astype(np.int32)
    codes, points = fill_paths(parent, bit, lengths)
    return codes, points, lengths


def balanced_paths(n_leaves: int) -> Paths:
    """A balanced tree over leaves ``0..n_leaves-1`` in order (left half under bit 0): every
    path has ``floor`` or ``ceil`` of ``log2(n_leaves)`` nodes.
    """
    n = int(n_leaves)
    if n < 2:
        return split_paths(max(n, 0) or 0, lambda ids: (ids[:1], ids[1:]))
    return level_paths(n, lambda order, s, e: s + (e - s) // 2)


def level_paths(n_leaves: int, split_level: Callable) -> Paths:
    """The tree made by splitting segments of a leaf order in two, one whole level at a time
    (vectorised: one call per level, not per node).

    ``split_level(order, start, end)`` gets the current leaf order (int64, ``n_leaves``
    entries, a permutation of the leaves) and the segments ``[start, end)`` of it to split
    (each of at least two leaves); it may reorder ``order`` in place within each segment and
    returns the cut ``mid`` of each (``start < mid < end``): ``order[start:mid]`` goes under
    bit 0, ``order[mid:end]`` under bit 1. Inner nodes are numbered breadth-first from the
    root ``V - 2`` downward, as :func:`split_paths` numbers them.
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
    return paths_from_parents(parent, bit, n)


def _is_permutation(order: np.ndarray) -> bool:
    n = len(order)
    return bool(n == 0 or (order.min() >= 0 and (np.bincount(order, minlength=n) == 1).all()))


def semantic_paths(vectors, iterations: int = 6, seed: int = 1, small: int = 16) -> Paths:
    """A tree whose splits follow the geometry of ``vectors`` (one row per leaf): each node's
    leaves are split by 2-means (Lloyd's algorithm, ``iterations`` rounds, on unit-length
    rows), started from a split at the median of the projection on the principal direction
    (a few rounds of power iteration), as in Mnih & Hinton (2008), who split learned word
    representations recursively with a two-component mixture. A split that leaves one side
    empty falls back to the median split. Each side comes back ordered by its projection, and
    a node of at most ``small`` leaves is split in halves of that order (the last principal
    direction above it) instead of by a new 2-means: the bottom levels of the tree then cost
    no per-node linear algebra.
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

    return split_paths(len(x), split)


def canonical_paths(codes, points, lengths) -> Paths:
    """A valid tree (see :func:`check_tree`) renumbered as Huffman's: root ``V - 2``, every
    child's id below its parent's (breadth-first from the root downward).
    """
    _, _, order = check_tree(codes, points, lengths)
    n = len(order) + 1
    new_id = np.empty(n - 1, dtype=np.int64)
    new_id[order] = np.arange(n - 2, -1, -1)
    lengths = np.asarray(lengths, dtype=np.int32)
    used = np.arange(np.shape(points)[1])[None, :] < lengths[:, None]
    relabelled = np.where(used, new_id[np.where(used, points, 0)], 0).astype(np.int32)
    return np.where(used, codes, 0).astype(np.uint8), relabelled, lengths


def padded_paths(codes, points) -> Paths:
    """Ragged per-class code and point lists as padded ``V x L`` int64 arrays and their
    ``lengths``, or a ValueError when the lists disagree or a path is empty.

    Examples
    --------
    >>> codes, points, lengths = padded_paths([[0], [1, 0], [1, 1]], [[0], [0, 1], [0, 1]])
    >>> codes.tolist(), lengths.tolist()
    ([[0, 0], [1, 0], [1, 1]], [1, 2, 2])
    """
    if len(codes) != len(points):
        raise ValueError(f"{len(codes)} codes but {len(points)} point lists")
    lengths = np.array([len(c) for c in codes], dtype=np.int64)
    if any(len(p) != n for p, n in zip(points, lengths, strict=True)):
        raise ValueError("each class's code and point lists must have the same length")
    if len(lengths) and lengths.min() < 1:
        raise ValueError("every class needs a path of at least one node")
    width = int(lengths.max()) if len(lengths) else 1
    padded_c = np.zeros((len(lengths), width), dtype=np.int64)
    padded_p = np.zeros((len(lengths), width), dtype=np.int64)
    for w, (c, p) in enumerate(zip(codes, points, strict=True)):
        padded_c[w, : len(c)] = c
        padded_p[w, : len(p)] = p
    return padded_c, padded_p, lengths
