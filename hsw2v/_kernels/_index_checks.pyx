# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Checks of the index arrays the kernels follow without bounds checks, in one pass.

Design note
-----------
A. What it holds. ``paths_in_range``: whether every entry a tree's paths use is valid, the
   fast part of :func:`hsw2v._tree_checks.check_tree_indices` (which checks the arrays' types
   and shapes first, and on a False here finds and names the first wrong entry with NumPy).
   The NumPy form builds a ``V x L`` mask and two comparisons of the same size, which cost
   milliseconds for a large vocabulary at every ``train()``, ``load()`` and the first
   ``infer_vector``; this pass reads each used entry once and allocates nothing.

B. What runs without the GIL: the whole pass, once the arguments are typed. What is shared:
   nothing; the arrays are only read.

C. Notation. A tree's flat arrays (:mod:`hsw2v.huffman`): ``codes`` (uint8, V x L),
   ``points`` (int32, V x L), ``lengths`` (int32, V); row ``w``'s path is its first
   ``lengths[w]`` entries. ``high``: the largest valid inner-node id.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t


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
    cdef Py_ssize_t V = codes.shape[0], L = codes.shape[1], w, j, n
    if points.shape[0] != V or points.shape[1] != L or lengths.shape[0] != V:
        raise ValueError(
            f"paths_in_range: codes {codes.shape[0]} x {codes.shape[1]}, points "
            f"{points.shape[0]} x {points.shape[1]} and lengths {lengths.shape[0]} differ")
    cdef bint ok = True
    with nogil:
        for w in range(V):
            n = lengths[w]
            if n < 0 or n > L:
                ok = False
                break
            for j in range(n):
                if codes[w, j] > 1 or points[w, j] < 0 or points[w, j] > high:
                    ok = False
                    break
            if not ok:
                break
    return ok
