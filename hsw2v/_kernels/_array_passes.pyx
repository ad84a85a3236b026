# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One pass each over the arrays the kernels read: a tree's paths checked and their nodes'
visits summed, the weights' finiteness checked, a Huffman tree's merges.

Design note
-----------
A. What it holds. ``paths_in_range``: whether every entry a tree's paths use is valid, the
   fast part of :func:`hsw2v._tree_checks.check_tree_indices` (which checks the arrays' types
   and shapes first, and on a False here finds and names the first wrong entry with NumPy).
   The NumPy form builds a ``V x L`` mask and two comparisons of the same size, which cost
   milliseconds for a large vocabulary at every ``train()``, ``load()`` and the first
   ``infer_vector``; this pass reads each used entry once and allocates nothing.
   ``nonfinite_rows``: how many rows of a float32 matrix hold a NaN or an infinity, the fast
   path of :func:`hsw2v.divergence.count_nonfinite_rows` (every ``train()`` checks the
   weights first): a float is not finite exactly when its exponent bits are all ones, so one
   pass of integer tests replaces NumPy's float64 row sums (a cast of the whole matrix).

   ``path_node_visits``: each inner node's visits, the total count of the words whose path
   passes through it (:meth:`hsw2v.huffman.Tree.node_visits`, which picks the private hot
   rows at every ``train()`` with several workers), summed in float64 in NumPy's
   ``bincount`` order (word by word, root first), so the sums are the same bits, without the
   ``V x L`` mask and the repeated counts.

   ``huffman_merges``: the two-queue merge of a Huffman tree over counts sorted in
   descending order (Huffman 1952; van Leeuwen's linear-time form for sorted weights, the
   one word2vec.c runs), the parent table, each node's bit and the leaves' depths, with
   word2vec.c's ties: the rarer leaf is taken while its count is below the oldest unmerged
   inner node's (fastText's tree, :mod:`hsw2v.fasttext._facebook_tree`, is the same merge).
   The same loop in Python took about 0.05 s of every ``build_vocab`` over 42,000 words.

B. What runs without the GIL: every pass, once the arguments are typed. What is shared:
   nothing; the arrays are only read (``path_node_visits`` and ``huffman_merges`` write
   their own results).

C. Notation. A tree's flat arrays (:mod:`hsw2v.huffman`): ``codes`` (uint8, V x L),
   ``points`` (int32, V x L), ``lengths`` (int32, V); row ``w``'s path is its first
   ``lengths[w]`` entries. ``high``: the largest valid inner-node id.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t

import numpy as np


cdef inline Py_ssize_t walk_paths(const int32_t *points, const int32_t *lengths,
                                  Py_ssize_t V, Py_ssize_t L, int32_t high,
                                  const uint8_t *codes, const double *counts,
                                  double *visits) noexcept nogil:
    """Read every used path entry once: -1 when each length is in ``[0, L]``, each point in
    ``[0, high]`` and, where ``codes`` is given, each code 0 or 1; else the first word whose
    path breaks that. Where ``visits`` is given, ``visits[point] += counts[w]`` for each entry
    in order (only over valid entries: the walk stops at the first invalid one)."""
    cdef Py_ssize_t w, j, n
    cdef int32_t node
    for w in range(V):
        n = lengths[w]
        if n < 0 or n > L:
            return w
        for j in range(n):
            node = points[w * L + j]
            if node < 0 or node > high or (codes != NULL and codes[w * L + j] > 1):
                return w
            if visits != NULL:
                visits[node] += counts[w]
    return -1


cdef Py_ssize_t empty_paths(const int32_t[::1] lengths, Py_ssize_t V):
    """For arrays of paths without entries (L = 0): -1 when every length is 0, else the first
    word whose length is not."""
    cdef Py_ssize_t w
    for w in range(V):
        if lengths[w] != 0:
            return w
    return -1


def paths_in_range(const uint8_t[:, ::1] codes, const int32_t[:, ::1] points,
                   const int32_t[::1] lengths, int32_t high):
    """Whether every path is valid: each length in ``[0, L]``, and on each path's first
    ``lengths[w]`` entries every code 0 or 1 and every point in ``[0, high]``. The arrays must
    have one shape (``codes`` and ``points`` V x L, ``lengths`` V), else ValueError.

    >>> import numpy as np
    >>> codes, points = np.array([[0, 9], [1, 0]], np.uint8), np.array([[0, 7], [0, 0]], np.int32)
    >>> paths_in_range(codes, points, np.array([1, 1], np.int32), 0)  # the 9 and 7 are unused
    True
    >>> paths_in_range(codes, points, np.array([2, 1], np.int32), 0)
    False
    """
    cdef Py_ssize_t V = codes.shape[0], L = codes.shape[1]
    if points.shape[0] != V or points.shape[1] != L or lengths.shape[0] != V:
        raise ValueError(
            f"paths_in_range: codes {codes.shape[0]} x {codes.shape[1]}, points "
            f"{points.shape[0]} x {points.shape[1]} and lengths {lengths.shape[0]} differ")
    cdef Py_ssize_t bad = empty_paths(lengths, V)
    if V and L:
        with nogil:
            bad = walk_paths(&points[0, 0], &lengths[0], V, L, high, &codes[0, 0], NULL, NULL)
    return bad < 0


def nonfinite_rows(const float[:, ::1] matrix):
    """How many rows of ``matrix`` (float32, C-contiguous) hold a NaN or an infinity.

    >>> import numpy as np
    >>> m = np.ones((4, 3), np.float32); m[1, 2] = np.nan; m[3, 0] = -np.inf
    >>> nonfinite_rows(m)
    2
    """
    cdef Py_ssize_t n_rows = matrix.shape[0], d = matrix.shape[1], r, k
    cdef int64_t bad = 0
    cdef uint32_t any_bad
    cdef const uint32_t *bits
    if n_rows == 0 or d == 0:
        return 0
    with nogil:
        for r in range(n_rows):
            bits = <const uint32_t *>&matrix[r, 0]
            any_bad = 0
            for k in range(d):  # all exponent bits set: an infinity or a NaN
                any_bad |= <uint32_t>((bits[k] & 0x7F800000u) == 0x7F800000u)
            bad += any_bad
    return bad


def path_node_visits(const int32_t[:, ::1] points, const int32_t[::1] lengths,
                     const double[::1] counts, Py_ssize_t n_inner):
    """``visits[node] = sum of counts[w]`` over the words ``w`` whose path (the first
    ``lengths[w]`` entries of ``points[w]``) holds ``node``; float64, ``n_inner`` entries.
    Every path entry must lie in ``[0, n_inner)`` and every length in ``[0, L]`` (checked:
    ValueError).

    >>> import numpy as np
    >>> points = np.array([[2, 1, 0], [2, 1, 0], [2, 1, 0], [2, 0, 0]], np.int32)
    >>> path_node_visits(points, np.array([3, 3, 2, 1], np.int32), np.array([5., 3, 1, 1]), 3)
    array([ 8.,  9., 10.])
    """
    cdef Py_ssize_t V = points.shape[0], L = points.shape[1], bad
    if lengths.shape[0] != V or counts.shape[0] != V or n_inner < 1:
        raise ValueError(
            f"path_node_visits: points has {V} rows, lengths {lengths.shape[0]}, counts "
            f"{counts.shape[0]}; n_inner is {n_inner}")
    visits = np.zeros(n_inner, dtype=np.float64)
    cdef double[::1] out = visits
    cdef int32_t high = <int32_t>min(n_inner - 1, 2**31 - 1)
    bad = empty_paths(lengths, V)
    if V and L:
        with nogil:
            bad = walk_paths(&points[0, 0], &lengths[0], V, L, high, NULL, &counts[0], &out[0])
    if bad >= 0:
        raise ValueError(f"path_node_visits: a path leaves [0, {n_inner}) or its row (word {bad})")
    return visits


def huffman_merges(const int64_t[::1] counts):
    """``(parent, bit, depth)`` of the Huffman tree over ``counts`` in the order given
    (descending, which makes the two-queue merge optimal: :mod:`hsw2v.huffman` sorts them,
    fastText's vocabulary comes sorted; leaves ``0 .. V-1`` in that order, inner nodes
    ``V .. 2V-2`` in the order they are made, the root last): ``parent`` (int64, ``2V - 1``; the root's 0), ``bit`` (int8: 1 for
    the second node of a merge) and the leaves' ``depth`` (int32, ``V``). Each merge takes the
    two smallest nodes, the rarest unmerged leaf first while its count is below the oldest
    unmerged inner node's (word2vec.c's ties). ``V >= 2``; the sums must fit in int64 (the
    caller checks both).

    >>> parent, bit, depth = huffman_merges(np.array([5, 3, 1, 1], np.int64))
    >>> parent.tolist(), bit.tolist(), depth.tolist()
    ([6, 5, 4, 4, 5, 6, 0], [1, 1, 1, 0, 0, 0, 0], [1, 2, 3, 3])
    """
    cdef Py_ssize_t V = counts.shape[0], n_nodes, k, node
    if V < 2:
        raise ValueError(f"huffman_merges needs at least 2 counts, got {V}")
    n_nodes = 2 * V - 1
    parent_array = np.zeros(n_nodes, np.int64)
    bit_array = np.zeros(n_nodes, np.int8)
    depth_array = np.zeros(n_nodes, np.int32)
    node_count_array = np.empty(n_nodes, np.int64)
    cdef int64_t[::1] parent = parent_array
    cdef int8_t[::1] bit = bit_array
    cdef int32_t[::1] depth = depth_array
    cdef int64_t[::1] node_count = node_count_array
    cdef Py_ssize_t leaf = V - 1, inner = V, new
    cdef Py_ssize_t picked[2]
    cdef int side
    with nogil:
        for k in range(V):
            node_count[k] = counts[k]
        for k in range(V - 1):
            new = V + k
            for side in range(2):
                if leaf >= 0 and (inner >= new or node_count[leaf] < node_count[inner]):
                    picked[side] = leaf
                    leaf -= 1
                else:
                    picked[side] = inner
                    inner += 1
            node_count[new] = node_count[picked[0]] + node_count[picked[1]]
            parent[picked[0]] = new
            parent[picked[1]] = new
            bit[picked[1]] = 1
        for node in range(n_nodes - 2, -1, -1):  # every child is made before its parent
            depth[node] = depth[parent[node]] + 1
    return parent_array, bit_array, depth_array[:V]
