# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One pass each over the arrays the kernels read: a tree's paths checked and their nodes'
visits summed, the weights' finiteness checked.

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

B. What runs without the GIL: every pass, once the arguments are typed. What is shared:
   nothing; the arrays are only read (``path_node_visits`` writes its own result).

C. Notation. A tree's flat arrays (:mod:`hsw2v.huffman`): ``codes`` (uint8, V x L),
   ``points`` (int32, V x L), ``lengths`` (int32, V); row ``w``'s path is its first
   ``lengths[w]`` entries. ``high``: the largest valid inner-node id.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

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
