"""The path walks of Word2Vec training: its calls of the reference steps (``_path.pxd``)
and the fused walks, optimisations of the reference (inline).

Design note: see ``_inner`` design note D. ``hs_path`` and ``ns_path`` run the one
hierarchical-softmax / negative-sampling step of ``_path.pxd`` with the table sigmoid and
``_vec.h``'s loops (the "reference" variant); ``hs_path_fused`` and ``ns_path_fused`` are the
same arithmetic with each node's update fused into the next node's dot product (their twin
tests: tests/test_kernel_twins.py). The 4-context window block is ``_window.h``'s
(``_inner_loops.pxd``). ``RefWalks`` lets a module that composes the job loop
(``_inner_job.pxd``) put other reference walks in place of ``hs_path`` / ``ns_path``: the
benchmark-only plain-loop and BLAS walks of ``_bench_walks.pyx``.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc
from libc.string cimport memset

from hsw2v._kernels._inner_loops cimport SIGMOID, sigmoid
from hsw2v._kernels._path cimport hs_step, ns_step
from hsw2v._kernels._vecops cimport (
    hsw2v_axpy, hsw2v_dot, hsw2v_loss_acc, hsw2v_update_last, hsw2v_update_then_dot,
    loss_init, loss_push, loss_total, neg_log_sigmoid, tally_push,
)


# The walk variants (Trainer's ``kernel``). The benchmark-only "loop" and "blas" walks train
# as KERNEL_REFERENCE with other RefWalks (``_bench_walks.pyx``).
cdef enum:
    KERNEL_FUSED = 0   # path walk with each update fused into the next dot (default)
    KERNEL_WINDOW = 3  # skip-gram: blocks of a window's contexts walk the path together
    KERNEL_REFERENCE = 4  # pair-by-pair: the reference step with _vec.h loops (fused's twin)


# A reference walk along a path (``hs_path``'s signature) and over one (target, negatives)
# set (``ns_path``'s), and the pair a job loop calls for KERNEL_REFERENCE (NULL: these two).
ctypedef double (*hs_walk_fn)(const float *h, float *work, float **rows, const uint8_t *code,
                              int length, float alpha, int d, bint compute_loss,
                              double *check) noexcept nogil
ctypedef double (*ns_walk_fn)(int d, const float *h, float *work, float *const *rows,
                              int count, float alpha, bint compute_loss,
                              double *check) noexcept nogil

cdef struct RefWalks:
    hs_walk_fn hs
    ns_walk_fn ns


cdef inline float **walk_rows(float *matrix, int d, const int32_t *ids,
                              Py_ssize_t n) noexcept nogil:
    """The row pointers ``matrix + ids[j] * d`` of a walk, for the twins (a path's inner
    nodes, or a target and its negatives); NULL when out of memory; freed by the caller."""
    cdef float **rows = <float **>malloc(max(n, 1) * sizeof(float *))
    cdef Py_ssize_t j
    if rows != NULL:
        for j in range(n):
            rows[j] = matrix + <int64_t>ids[j] * d
    return rows


cdef inline double hs_path(
    const float *h,          # IN   hidden vector, d floats
    float *work,             # OUT  -alpha * dL/dh over the path (h's step), d floats
    float **rows,            # IN/OUT the path's inner-node rows (of syn1), root first
    const uint8_t *code,     # IN   bits along the path, root first
    int length,              # IN   path length
    float alpha,             # IN   learning rate
    int d,                   # IN   vector size
    bint compute_loss,
    double *check,           # OUT  += the sum of every f (the job's divergence check)
) noexcept nogil:
    """Word2Vec's use of the reference step (``_path.hs_step``, table sigmoid, ``_vec.h``
    loops): work = -alpha sum_j g_j rows[j] (old rows), rows[j] -= alpha g_j h, g_j = dL/df_j.

    Returns -log P(word | h) when compute_loss, else 0."""
    memset(work, 0, d * sizeof(float))
    return hs_step(d, h, work, -alpha, rows, NULL, code, NULL, length, NULL, alpha, &SIGMOID,
                   NULL, NULL, compute_loss, NULL, check)


cdef inline double ns_path(
    int d, const float *h, float *work, float *const *rows, int count, float alpha,
    bint compute_loss, double *check,
) noexcept nogil:
    """Word2Vec's call of the reference negative-sampling step (``_path.ns_step``, table
    sigmoid, ``_vec.h`` loops) over the rows of one (target, negatives) set, target first."""
    return ns_step(d, h, work, rows, NULL, NULL, count, alpha, &SIGMOID, NULL, NULL,
                   compute_loss, check)


cdef inline void hs_path_fused(
    float *h,                # IN (OUT when apply_to_h)  hidden vector, d floats
    float *work,             # OUT  error for h accumulated over the path, d floats
    float **rows,            # IN/OUT the path's inner-node rows (of syn1), root first
    const uint8_t *code,     # IN   bits along the path, root first
    int length,              # IN   path length (>= 1)
    float alpha,             # IN   learning rate
    int d,                   # IN   vector size
    hsw2v_loss_acc *tally,   # OUT  the job's loss tally: += each node's term; NULL: no loss
    bint apply_to_h,         # IN   add work to h at the end (skip-gram: h is the context row)
    double *check,           # OUT  += the sum of every f (the job's divergence check)
) noexcept nogil:
    """An optimisation of the reference step (``hs_path`` with ``PRIMS_VEC``), the same
    results bit for bit (its twin test; with ``apply_to_h`` ``h`` to the rounding of the one
    add folded in): each node's update is fused with the next node's
    dot product, so ``h`` is read once for both (node j+1's row is not touched by node j's
    update, and h does not change during the walk); with ``apply_to_h`` the final
    ``h += work`` is fused into the last node's update. The vector loops are in ``_vec.h``
    (several accumulators, one pass per node). It keeps word2vec.c's sign: its ``g`` is
    ``(1 - code - sigmoid(f)) * alpha = -alpha * dL/df``, the reference's row coefficient
    bit for bit (``_path.pxd``, design note A). The loss -log P(word | h) goes to ``tally``
    (``_loss.h``; the reference's libm terms to 2e-7 relative)."""
    cdef int j
    cdef float f, g
    cdef float *row = rows[0]
    cdef float *next_row
    cdef double fsum = 0.0
    memset(work, 0, d * sizeof(float))
    f = hsw2v_dot(d, h, row)
    for j in range(length):
        fsum += f
        if tally != NULL:
            tally_push(tally, (1.0 - 2.0 * code[j]) * f)  # reduced in blocks (_loss.h)
        g = (1.0 - code[j] - sigmoid(f)) * alpha
        if j + 1 < length:
            next_row = rows[j + 1]
            if g == 0.0:
                f = hsw2v_dot(d, h, next_row)
            else:
                f = hsw2v_update_then_dot(d, g, h, row, work, next_row)
            row = next_row
        elif apply_to_h:
            hsw2v_update_last(d, g, h, row, work)
        elif g != 0.0:
            hsw2v_axpy(d, g, row, work)
            hsw2v_axpy(d, g, h, row)
    check[0] += fsum


cdef inline void ns_path_fused(
    int d,                   # IN   vector size
    const float *h,          # IN   hidden vector, d floats (not moved)
    float *work,             # OUT  -alpha * dL/dh over the words (old rows): h's step
    float *const *rows,      # IN/OUT the target's row (label 1), then the negatives' (label 0)
    int count,               # IN   rows (>= 1)
    float alpha,             # IN   learning rate
    hsw2v_loss_acc *tally,   # OUT  the job's loss tally: += each word's term; NULL: no loss
    double *check,           # OUT  += the sum of every f (the job's divergence check)
) noexcept nogil:
    """An optimisation of the reference negative-sampling step (``ns_path`` with
    ``PRIMS_VEC``), the same rows and work bit for bit (its twin test): each word's update is
    fused with the next word's dot product, as ``hs_path_fused`` does along a path, so ``h``
    is read once for both. A word drawn twice in a row is not fused (its second dot product
    must see the first update). The arithmetic is the reference's: ``g = sigmoid(f) -
    label`` in float32, coefficient ``a = -alpha g`` (``_path.pxd``, design note B). The loss
    goes to ``tally`` (``_loss.h``; the reference's libm terms to 2e-7 relative)."""
    cdef int k
    cdef float f, g, a
    cdef float *row = rows[0]
    cdef float *next_row
    cdef double fsum = 0.0
    memset(work, 0, d * sizeof(float))
    f = hsw2v_dot(d, h, row)
    for k in range(count):
        fsum += f
        if tally != NULL:
            tally_push(tally, f if k == 0 else -f)  # reduced in blocks (_loss.h)
        g = sigmoid(f) - (1.0 if k == 0 else 0.0)
        a = -alpha * g
        if k + 1 < count:
            next_row = rows[k + 1]
            if a == 0.0:
                f = hsw2v_dot(d, h, next_row)
            elif next_row == row:
                hsw2v_axpy(d, a, row, work)
                hsw2v_axpy(d, a, h, row)
                f = hsw2v_dot(d, h, next_row)
            else:
                f = hsw2v_update_then_dot(d, a, h, row, work, next_row)
            row = next_row
        elif a != 0.0:
            hsw2v_axpy(d, a, row, work)
            hsw2v_axpy(d, a, h, row)
    check[0] += fsum
