# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The merge of a distributed round's row deltas (:func:`hsw2v._dist_tasks.merge_rows`), one
pass over the rows instead of NumPy's sorts, scatters and temporaries.

Design note
-----------
A. What it computes. A round's shards each send, per matrix, the rows they changed (int32,
   unique within a part), their deltas and weights. ``sum_rows``: the union of the rows
   (sorted) and, per row, the deltas summed in float64 in the parts' order (``"sum"``), or
   weighted by the parts' weights and divided by the summed weights (``"average"``): the
   same float64 operations, in the same order, as the NumPy form, so the same bits.
   ``adasum_two``: two subtrees of Adaptive Summation (Maleki et al., MLSys 2021), each a
   sorted row list with float64 deltas, into one: a row one side holds keeps its delta, a
   row both hold gets ``(1 - a.b / (2 |a|^2)) a + (1 - a.b / (2 |b|^2)) b`` (a zero side's
   factor is 1). Its dot products sum in the coordinates' order (NumPy's ``einsum`` sums
   in its own blocks), so a merged row may differ from the NumPy form in the last bits of
   float64, never beyond (the tests compare the two).

B. What runs without the GIL: every loop over rows, once the arrays are typed. What is
   shared: nothing; the results are new arrays.

C. Notation. ``d``: the vector size. ``pos[r]``: where row ``r`` lands in the union (-1:
   nowhere), a table over ``0 .. max row`` (a vocabulary's or a tree's size: cheaper than
   sorting the concatenated rows).

D. The round's two ends. A task's deltas (``changed_rows``: the rows its piece changed and
   new - old, in one pass over the candidate rows) and the merged update's addition to a
   copy (``add_rows``) are here too, with the float16 conversions between them
   (``halves``, ``singles``; ``math/_half.h``): the bits of NumPy's ``(matrix[rows] !=
   old).any(1)``, ``(matrix[rows] - old).astype(float16)``, ``matrix[rows] += deltas`` and
   ``astype``, without their temporaries or their value-at-a-time float16 casts.

Built once at the baseline, with strict IEEE arithmetic (no reassociation, no fused
multiply-add): the same bits in every build (setup.py's ``STRICT``).
"""

from libc.stdint cimport int32_t, int64_t, uint16_t

import numpy as np


cdef extern from "math/_half.h" nogil:
    void hsw2v_to_halves(const float *src, uint16_t *dst, int64_t n, int portable)
    void hsw2v_to_singles(const uint16_t *src, float *dst, int64_t n, int portable)


ctypedef fused real:
    float
    double


cdef void add_part(const int32_t[::1] rows, const real[:, ::1] deltas,
                   const double[::1] weights, const int64_t[::1] pos, double[:, ::1] out,
                   double[::1] sums, bint average) noexcept nogil:
    """One part's deltas added into the union's rows, in float64 (weighted where
    ``average``: ``out += w * delta``, ``sums += w``)."""
    cdef Py_ssize_t i, j, p, d = out.shape[1]
    cdef double w
    for i in range(rows.shape[0]):
        p = pos[rows[i]]
        if average:
            w = weights[i]
            for j in range(d):
                out[p, j] += w * <double>deltas[i, j]
            sums[p] += w
        else:
            for j in range(d):
                out[p, j] += <double>deltas[i, j]


def sum_rows(list rows_of, list deltas_of, list weights_of, Py_ssize_t d, bint average):
    """``(rows, merged)`` of ``"sum"`` (``average`` False) or ``"average"`` over the parts:
    ``rows_of[k]`` int32 (unique), ``deltas_of[k]`` float32 or float64 ``[n_k, d]``
    C-contiguous, ``weights_of[k]`` float64 ``[n_k]``. ``merged`` is float64, rows sorted."""
    cdef Py_ssize_t k, i, j, p, n_out, top = -1
    cdef const int32_t[::1] rows
    for k in range(len(rows_of)):
        rows = rows_of[k]
        with nogil:
            for i in range(rows.shape[0]):
                if rows[i] > top:
                    top = rows[i]
    pos_array = np.zeros(top + 1, np.int64)
    cdef int64_t[::1] pos = pos_array
    for k in range(len(rows_of)):
        rows = rows_of[k]
        with nogil:
            for i in range(rows.shape[0]):
                pos[rows[i]] = 1
    out_rows_array = np.flatnonzero(pos_array).astype(np.int32)
    cdef const int32_t[::1] out_rows = out_rows_array
    n_out = out_rows.shape[0]
    with nogil:
        for i in range(n_out):
            pos[out_rows[i]] = i
    out_array = np.zeros((n_out, d), np.float64)
    sums_array = np.zeros(n_out, np.float64)
    cdef double[:, ::1] out = out_array
    cdef double[::1] sums = sums_array
    cdef const float[:, ::1] singles
    cdef const double[:, ::1] doubles
    cdef const double[::1] weights
    for k in range(len(rows_of)):
        rows, weights = rows_of[k], weights_of[k]
        if deltas_of[k].dtype == np.float32:
            singles = deltas_of[k]
            with nogil:
                add_part(rows, singles, weights, pos, out, sums, average)
        else:
            doubles = deltas_of[k]
            with nogil:
                add_part(rows, doubles, weights, pos, out, sums, average)
    if average:
        with nogil:
            for p in range(n_out):
                for j in range(d):
                    out[p, j] /= sums[p]
    return out_rows_array, out_array


ctypedef fused real_a:
    float
    double


ctypedef fused real_b:
    float
    double


cdef inline void put(double *wide, float *narrow, Py_ssize_t at, double x) noexcept nogil:
    """One merged value, into ``wide`` (float64) or, where it is NULL, ``narrow`` (float32:
    rounded once from float64, as ``astype`` rounds)."""
    if wide != NULL:
        wide[at] = x
    else:
        narrow[at] = <float>x


cdef void adasum_walk(const int32_t[::1] rows_a, const real_a[:, ::1] a,
                      const int32_t[::1] rows_b, const real_b[:, ::1] b, Py_ssize_t d,
                      int32_t *out_rows, double *wide, float *narrow,
                      Py_ssize_t *count) noexcept nogil:
    """The merge walk of :func:`adasum_two`: writes the union's rows and their deltas
    (:func:`put`)."""
    cdef Py_ssize_t i = 0, k = 0, n = 0, j, na = rows_a.shape[0], nb = rows_b.shape[0]
    cdef double dot, aa, bb, ca, cb, x, y
    while i < na or k < nb:
        if k >= nb or (i < na and rows_a[i] < rows_b[k]):  # a's row alone
            out_rows[n] = rows_a[i]
            for j in range(d):
                put(wide, narrow, n * d + j, a[i, j])
            i += 1
        elif i >= na or rows_b[k] < rows_a[i]:  # b's row alone
            out_rows[n] = rows_b[k]
            for j in range(d):
                put(wide, narrow, n * d + j, b[k, j])
            k += 1
        else:  # both: the adaptive sum
            out_rows[n] = rows_a[i]
            dot = aa = bb = 0.0
            for j in range(d):
                x = a[i, j]
                y = b[k, j]
                dot += x * y
                aa += x * x
                bb += y * y
            ca = 1.0 - dot / (2.0 * aa) if aa > 0 else 1.0
            cb = 1.0 - dot / (2.0 * bb) if bb > 0 else 1.0
            for j in range(d):
                put(wide, narrow, n * d + j, ca * <double>a[i, j] + cb * <double>b[k, j])
            i += 1
            k += 1
        n += 1
    count[0] = n


def adasum_two(rows_a, a, rows_b, b, bint last=False):
    """Two subtrees' ``(rows, deltas)`` (rows int32 sorted ascending, deltas float32 or
    float64 ``[n, d]`` C-contiguous) into their union (rows sorted): the one delta on a row
    one side holds, the adaptive sum on a row both hold. The deltas come back in float64,
    or in float32 where ``last`` (the tree's root: no temporary of twice the size)."""
    cdef Py_ssize_t na = len(rows_a), nb = len(rows_b), n = 0
    cdef Py_ssize_t d = a.shape[1] if na else (b.shape[1] if nb else 0)
    dtype = np.float32 if last else np.float64
    if na + nb == 0 or d == 0:  # no values to merge: the rows alone
        rows = np.union1d(rows_a, rows_b).astype(np.int32)
        return rows, np.zeros((len(rows), d), dtype)
    out_rows_array = np.empty(na + nb, np.int32)
    out_array = np.empty((na + nb, d), dtype)
    cdef int32_t[::1] out_rows = out_rows_array
    cdef double[:, ::1] wide_view
    cdef float[:, ::1] narrow_view
    cdef double *wide = NULL
    cdef float *narrow = NULL
    if last:
        narrow_view = out_array
        narrow = &narrow_view[0, 0]
    else:
        wide_view = out_array
        wide = &wide_view[0, 0]
    cdef const int32_t[::1] ra = rows_a
    cdef const int32_t[::1] rb = rows_b
    cdef const float[:, ::1] fa
    cdef const double[:, ::1] da
    cdef const float[:, ::1] fb
    cdef const double[:, ::1] db
    cdef bint a_single = a.dtype == np.float32
    cdef bint b_single = b.dtype == np.float32
    if a_single:
        fa = a
    else:
        da = a
    if b_single:
        fb = b
    else:
        db = b
    with nogil:
        if a_single and b_single:
            adasum_walk(ra, fa, rb, fb, d, &out_rows[0], wide, narrow, &n)
        elif a_single:
            adasum_walk(ra, fa, rb, db, d, &out_rows[0], wide, narrow, &n)
        elif b_single:
            adasum_walk(ra, da, rb, fb, d, &out_rows[0], wide, narrow, &n)
        else:
            adasum_walk(ra, da, rb, db, d, &out_rows[0], wide, narrow, &n)
    return out_rows_array[:n], out_array[:n]


# ------------------------------------------------------------------- the round's two ends
def halves(x, bint portable=False):
    """``x`` as float16, the bits of ``np.asarray(x, np.float32).astype(np.float16)``
    (nearest, ties to even; a NaN stays a NaN). ``portable``: the scalar conversion even
    where the CPU has F16C (``math/_half.h``, note B), for the tests."""
    src = np.ascontiguousarray(x, np.float32)
    out = np.empty(src.shape, np.float16)
    cdef const float[::1] s = src.reshape(-1)
    cdef uint16_t[::1] o = out.reshape(-1).view(np.uint16)
    cdef int64_t n = s.shape[0]
    if n:
        with nogil:
            hsw2v_to_halves(&s[0], &o[0], n, portable)
    return out


def singles(x, bint portable=False):
    """float16 ``x`` as float32 (exact; ``portable``: as in :func:`halves`)."""
    src = np.ascontiguousarray(x, np.float16)
    out = np.empty(src.shape, np.float32)
    cdef const uint16_t[::1] s = src.reshape(-1).view(np.uint16)
    cdef float[::1] o = out.reshape(-1)
    cdef int64_t n = s.shape[0]
    if n:
        with nogil:
            hsw2v_to_singles(&s[0], &o[0], n, portable)
    return out


def changed_rows(const float[:, ::1] matrix, const int32_t[::1] rows, const float[:, ::1] old,
                 bint half):
    """``(changed, deltas)``: the rows of ``rows`` whose values in ``matrix`` differ from
    ``old`` (their values before, one row of ``old`` per row of ``rows``), in order, and
    their deltas ``matrix[row] - old`` as float16 (``half``) or float32: the bits of
    ``changed = (matrix[rows] != old).any(1)`` and ``(matrix[rows][changed] -
    old[changed]).astype(...)``."""
    cdef Py_ssize_t n = rows.shape[0], d = matrix.shape[1], i, j, m = 0
    if old.shape[0] != n or (n and old.shape[1] != d):
        raise ValueError(f"old holds {old.shape[0]} rows of {old.shape[1]} for {n} rows of {d}")
    out_rows_array = np.empty(n, np.int32)
    singles_array = np.empty((n, d), np.float32)
    cdef int32_t[::1] out_rows = out_rows_array
    cdef float[:, ::1] out = singles_array
    cdef int32_t r
    cdef bint differs
    with nogil:
        for i in range(n):
            r = rows[i]
            differs = False
            for j in range(d):
                if matrix[r, j] != old[i, j]:
                    differs = True
                    break
            if not differs:
                continue
            out_rows[m] = r
            for j in range(d):
                out[m, j] = matrix[r, j] - old[i, j]
            m += 1
    if half:
        return out_rows_array[:m], halves(singles_array[:m])
    return out_rows_array[:m], singles_array[:m]


def add_rows(float[:, ::1] matrix, const int32_t[::1] rows, deltas):
    """``matrix[rows] += deltas`` in place (``rows`` unique, ``deltas`` float16 or float32
    ``[len(rows), d]``), in float32: the bits of NumPy's in-place add. A row outside the
    matrix is refused before any row changes, as NumPy refuses it."""
    cdef Py_ssize_t n = rows.shape[0], d = matrix.shape[1], i, j, top = matrix.shape[0]
    deltas = np.asarray(deltas)
    if deltas.shape != (n, d):
        raise ValueError(f"deltas of shape {deltas.shape} for {n} rows of {d}")
    cdef const float[:, ::1] add = (
        singles(deltas) if deltas.dtype == np.float16 else np.ascontiguousarray(deltas, np.float32)
    )
    cdef int32_t r
    cdef Py_ssize_t bad = -1
    with nogil:
        for i in range(n):
            if rows[i] < 0 or rows[i] >= top:
                bad = i
                break
    if bad >= 0:
        raise IndexError(f"row {rows[bad]} is outside a matrix of {top} rows")
    with nogil:
        for i in range(n):
            r = rows[i]
            for j in range(d):
                matrix[r, j] += add[i, j]
