# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The merge of a distributed round's row deltas (:func:`hsw2v._dist_merge.merge_rows`), one
pass over the rows instead of NumPy's sorts, scatters and temporaries.

Design note
-----------
A. What it computes. A round's shards each send, per matrix, the rows they changed (int32,
   unique within a part), their deltas and weights. ``sum_rows``: the union of the rows
   (sorted) and, per row, the deltas summed in float64 in the parts' order (``"sum"``), or
   weighted by the parts' weights and divided by the summed weights (``"average"``): the
   same float64 operations, in the same order, as the NumPy form, so the same bits.
   ``adasum_two``: two subtrees of Adaptive Summation (Maleki et al., MLSys 2021), each a
   sorted row list with float16, float32 or float64 deltas (widened exactly to float64 a row
   at a time, so a task's float16 deltas are read as they came), into one: a row one side
   holds keeps its delta, a row both hold gets ``(1 - a.b / (2 |a|^2)) a + (1 - a.b / (2
   |b|^2)) b`` (a zero side's factor is 1), or, where a ``hot`` flag per row is given and
   the row's is 0, the plain sum ``a + b``. Its dot products sum in the coordinates' order
   (NumPy's ``einsum`` sums in its own blocks), so a merged row may differ from the NumPy
   form in the last bits of float64, never beyond (the tests compare the two).

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
   ``astype``, without their temporaries or their value-at-a-time float16 casts: float16
   is narrowed and widened a row at a time, into a row of scratch (a round's temporaries
   were fresh pages every round, which the first rounds of a process paid for in faults).

Built once at the baseline, with strict IEEE arithmetic (no reassociation, no fused
multiply-add): the same bits in every build (setup.py's ``STRICT``).
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

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


cdef enum:  # how a part's deltas are stored (``kind_of``)
    HALF = 0  # float16, widened a row at a time
    SINGLE = 1
    DOUBLE = 2


cdef int kind_of(dtype) except -1:
    if dtype == np.float16:
        return HALF
    if dtype == np.float32:
        return SINGLE
    if dtype == np.float64:
        return DOUBLE
    raise TypeError(f"deltas must be float16, float32 or float64, got {dtype}")


cdef inline const double *wide_row(const void *base, int kind, Py_ssize_t i, Py_ssize_t d,
                                   float *single, double *wide) noexcept nogil:
    """Row ``i`` of a part's deltas as float64 (exactly: every narrower value widens
    exactly), in ``wide`` unless it is float64 already."""
    cdef Py_ssize_t j
    cdef const float *row
    if kind == DOUBLE:
        return <const double *>base + i * d
    if kind == HALF:
        hsw2v_to_singles(<const uint16_t *>base + i * d, single, d, 0)
        row = single
    else:
        row = <const float *>base + i * d
    for j in range(d):
        wide[j] = row[j]
    return wide


cdef inline void put_row(void *out, int kind, Py_ssize_t n, Py_ssize_t d, const double *x,
                         float *single) noexcept nogil:
    """One merged row into row ``n`` of ``out``: float64 as it is; float32 rounded once from
    float64, as ``astype`` rounds; float16 rounded from that float32, as ``halves`` rounds
    it (the bits of ``halves(deltas.astype(float32))``)."""
    cdef Py_ssize_t j
    if kind == DOUBLE:
        memcpy(<double *>out + n * d, x, d * sizeof(double))
        return
    for j in range(d):
        single[j] = <float>x[j]
    if kind == SINGLE:
        memcpy(<float *>out + n * d, single, d * sizeof(float))
    else:
        hsw2v_to_halves(single, <uint16_t *>out + n * d, d, 0)


cdef Py_ssize_t adasum_walk(const int32_t *rows_a, Py_ssize_t na, const void *a, int kind_a,
                            const int32_t *rows_b, Py_ssize_t nb, const void *b, int kind_b,
                            Py_ssize_t d, int32_t *out_rows, void *out, int kind_out,
                            double *scratch, const uint8_t *hot) noexcept nogil:
    """The merge walk of :func:`adasum_two`: writes the union's rows and their deltas
    (:func:`put_row`) and returns how many. ``scratch``: 4 ``d`` doubles of row space.
    ``hot``: NULL (every row both sides hold gets the adaptive sum), or a flag per row
    (over ``0 .. max row``): a row both sides hold whose flag is 0 gets the plain sum."""
    cdef Py_ssize_t i = 0, k = 0, n = 0, j
    cdef double dot, aa, bb, ca, cb, x, y
    cdef double *xa = scratch
    cdef double *xb = scratch + d
    cdef double *merged = scratch + 2 * d
    cdef float *single = <float *>(scratch + 3 * d)
    cdef const double *ra
    cdef const double *rb
    while i < na or k < nb:
        if k >= nb or (i < na and rows_a[i] < rows_b[k]):  # a's row alone
            out_rows[n] = rows_a[i]
            put_row(out, kind_out, n, d, wide_row(a, kind_a, i, d, single, xa), single)
            i += 1
        elif i >= na or rows_b[k] < rows_a[i]:  # b's row alone
            out_rows[n] = rows_b[k]
            put_row(out, kind_out, n, d, wide_row(b, kind_b, k, d, single, xb), single)
            k += 1
        else:  # both: the adaptive sum, or the plain sum on a row the flags keep out
            out_rows[n] = rows_a[i]
            ra = wide_row(a, kind_a, i, d, single, xa)
            rb = wide_row(b, kind_b, k, d, single, xb)
            if hot != NULL and not hot[rows_a[i]]:
                for j in range(d):
                    merged[j] = ra[j] + rb[j]
            else:
                dot = aa = bb = 0.0
                for j in range(d):
                    x = ra[j]
                    y = rb[j]
                    dot += x * y
                    aa += x * x
                    bb += y * y
                ca = 1.0 - dot / (2.0 * aa) if aa > 0 else 1.0
                cb = 1.0 - dot / (2.0 * bb) if bb > 0 else 1.0
                for j in range(d):
                    merged[j] = ca * ra[j] + cb * rb[j]
            put_row(out, kind_out, n, d, merged, single)
            i += 1
            k += 1
        n += 1
    return n


cdef const void *data_of(x):
    """The first byte of a C-contiguous array (NULL when it is empty)."""
    cdef const uint8_t[::1] raw
    if x.size == 0:
        return NULL
    raw = x.reshape(-1).view(np.uint8)
    return &raw[0]


def adasum_two(rows_a, a, rows_b, b, bint last=False, out_dtype=None, hot=None):
    """Two subtrees' ``(rows, deltas)`` (rows int32 sorted ascending, deltas float16, float32
    or float64 ``[n, d]`` C-contiguous) into their union (rows sorted): the one delta on a row
    one side holds, the adaptive sum on a row both hold, in float64 from the exact widening
    of each side's values. The deltas come back in float64, or in float32 where ``last`` (the
    tree's root: no temporary of twice the size), or in ``out_dtype`` (float16: rounded to
    float32 first, then to float16, as ``halves`` of the float32 result would). ``hot``: a
    flag per row (longer than the largest row): a row both hold whose flag is false gets the
    sum ``a + b`` (in float64) instead of the adaptive sum."""
    cdef Py_ssize_t na = len(rows_a), nb = len(rows_b), n = 0
    cdef Py_ssize_t d = a.shape[1] if na else (b.shape[1] if nb else 0)
    dtype = np.dtype(out_dtype if out_dtype is not None else (np.float32 if last else np.float64))
    if na + nb == 0 or d == 0:  # no values to merge: the rows alone
        rows = np.union1d(rows_a, rows_b).astype(np.int32)
        return rows, np.zeros((len(rows), d), dtype)
    cdef int kind_a = kind_of(a.dtype), kind_b = kind_of(b.dtype), kind_out = kind_of(dtype)
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    ra_array = np.ascontiguousarray(rows_a, np.int32)
    rb_array = np.ascontiguousarray(rows_b, np.int32)
    out_rows_array = np.empty(na + nb, np.int32)
    out_array = np.empty((na + nb, d), dtype)
    cdef const void *pa = data_of(a)
    cdef const void *pb = data_of(b)
    cdef void *out = <void *>data_of(out_array)
    cdef const int32_t *ra = <const int32_t *>data_of(ra_array)
    cdef const int32_t *rb = <const int32_t *>data_of(rb_array)
    cdef int32_t *out_rows = <int32_t *>data_of(out_rows_array)
    cdef const uint8_t *flags = NULL
    if hot is not None:
        hot = np.ascontiguousarray(hot, np.uint8)
        top = max(int(ra_array.max()) if na else -1, int(rb_array.max()) if nb else -1)
        if hot.ndim != 1 or len(hot) <= top or (na and ra_array.min() < 0) or (
                nb and rb_array.min() < 0):
            raise ValueError(f"hot holds {hot.size} flags; rows run up to {top}")
        flags = <const uint8_t *>data_of(hot)
    cdef double *scratch = <double *>malloc(4 * d * sizeof(double))
    if scratch == NULL:
        raise MemoryError()
    try:
        with nogil:
            n = adasum_walk(ra, na, pa, kind_a, rb, nb, pb, kind_b, d, out_rows, out, kind_out,
                            scratch, flags)
    finally:
        free(scratch)
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
    their deltas ``matrix[row] - old`` as float16 (``half``, each row narrowed as it is
    made: no float32 temporary) or float32: the bits of ``changed = (matrix[rows] !=
    old).any(1)`` and ``(matrix[rows][changed] - old[changed]).astype(...)``."""
    cdef Py_ssize_t n = rows.shape[0], d = matrix.shape[1], i, j, m = 0
    if old.shape[0] != n or (n and old.shape[1] != d):
        raise ValueError(f"old holds {old.shape[0]} rows of {old.shape[1]} for {n} rows of {d}")
    out_rows_array = np.empty(n, np.int32)
    out_array = np.empty((n, d), np.float16 if half else np.float32)
    cdef int32_t[::1] out_rows = out_rows_array
    cdef float *out = <float *>data_of(out_array) if not half else NULL
    cdef uint16_t *out_half = <uint16_t *>data_of(out_array) if half else NULL
    cdef float *row
    cdef float *single = <float *>malloc(max(d, 1) * sizeof(float))
    if single == NULL:
        raise MemoryError()
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
            row = single if half else out + m * d
            for j in range(d):
                row[j] = matrix[r, j] - old[i, j]
            if half:
                hsw2v_to_halves(single, out_half + m * d, d, 0)
            m += 1
    free(single)
    return out_rows_array[:m], out_array[:m]


def add_rows(float[:, ::1] matrix, const int32_t[::1] rows, deltas):
    """``matrix[rows] += deltas`` in place (``rows`` unique, ``deltas`` float16 or float32
    ``[len(rows), d]``, float16 widened a row at a time), in float32: the bits of NumPy's
    in-place add. A row outside the matrix is refused before any row changes, as NumPy
    refuses it."""
    cdef Py_ssize_t n = rows.shape[0], d = matrix.shape[1], i, j, top = matrix.shape[0]
    deltas = np.asarray(deltas)
    if deltas.shape != (n, d):
        raise ValueError(f"deltas of shape {deltas.shape} for {n} rows of {d}")
    cdef bint half = deltas.dtype == np.float16
    if not half:
        deltas = np.ascontiguousarray(deltas, np.float32)
    else:
        deltas = np.ascontiguousarray(deltas)
    cdef const float *add = <const float *>data_of(deltas) if not half else NULL
    cdef const uint16_t *add_half = <const uint16_t *>data_of(deltas) if half else NULL
    cdef const float *row
    cdef int32_t r
    cdef Py_ssize_t bad = -1
    with nogil:
        for i in range(n):
            if rows[i] < 0 or rows[i] >= top:
                bad = i
                break
    if bad >= 0:
        raise IndexError(f"row {rows[bad]} is outside a matrix of {top} rows")
    cdef float *single = <float *>malloc(max(d, 1) * sizeof(float))
    if single == NULL:
        raise MemoryError()
    with nogil:
        for i in range(n):
            r = rows[i]
            if half:
                hsw2v_to_singles(add_half + i * d, single, d, 0)
                row = single
            else:
                row = add + i * d
            for j in range(d):
                matrix[r, j] += row[j]
    free(single)
