"""The path walks of Word2Vec training: its calls of the reference steps (``math/_path.pxd``)
and the fused walks, optimisations of the reference (inline).

Design note: see ``_inner`` design note D. ``hs_path`` and ``ns_path`` run the one
hierarchical-softmax / negative-sampling step of ``math/_path.pxd`` with the table sigmoid and
``math/_vec.h``'s loops (the "reference" variant); ``hs_path_fused`` and ``ns_path_fused`` are the
same arithmetic with each node's update fused into the next node's dot product (their twin
tests: tests/test_kernel_twins.py), one loop for both objectives (``fused_walk``, compiled
once per objective, chosen by the type of its labels). The 4-context window block is
``train/_window.h``'s (``train/_window.pxd``). ``RefWalks`` lets a module that composes the job loop
(``train/_job.pxd``) put other reference walks in place of ``hs_path`` / ``ns_path``: the
benchmark-only plain-loop and BLAS walks of ``_bench_walks.pyx``. The Python-callable twins
of both modules run a reference-shaped walk through ``twin_hs`` / ``twin_ns``, after the
argument checks of ``walk_rows``.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from hsw2v._kernels.math._path cimport hs_step, node_coef, ns_step
from hsw2v._kernels.math._vecops cimport (
    hsw2v_axpy, hsw2v_dot, hsw2v_loss_acc, hsw2v_update_last, hsw2v_update_spread,
    hsw2v_update_then_dot,
    loss_init, loss_push, loss_total, neg_log_sigmoid, prefetch_row, tally_push,
)
from hsw2v._kernels.train._sigmoid cimport SIGMOID, sigmoid


# The walk variants (Trainer's ``kernel``). The benchmark-only "loop" and "blas" walks train
# as WALK_REFERENCE with other RefWalks (``_bench_walks.pyx``).
cdef enum:
    WALK_FUSED = 0   # path walk with each update fused into the next dot (default)
    WALK_WINDOW = 3  # skip-gram: blocks of a window's contexts walk the path together
    WALK_REFERENCE = 4  # pair-by-pair: the reference step with math/_vec.h loops (fused's twin)


# A reference walk along a path (``hs_path``'s signature) and over one (target, negatives)
# set (``ns_path``'s), and the pair a job loop calls for WALK_REFERENCE (NULL: these two).
ctypedef double (*hs_walk_fn)(const float *h, float *work, float **rows, const uint8_t *code,
                              int length, float alpha, int d, bint compute_loss,
                              double *check) noexcept nogil
ctypedef double (*ns_walk_fn)(int d, const float *h, float *work, float *const *rows,
                              int count, float alpha, bint compute_loss,
                              double *check) noexcept nogil

cdef struct RefWalks:
    hs_walk_fn hs
    ns_walk_fn ns


cdef inline float **walk_rows(float[:, ::1] matrix, const int32_t[::1] ids, Py_ssize_t n,
                              int d, str name) except NULL:
    """The row pointers of a twin's walk (``n`` of them: a path's inner nodes, or a target and
    its negatives), ``&matrix[ids[j], 0]``, after checking the arguments every twin takes: at
    least one row, ``n`` ids, each a row of ``matrix``, whose rows have ``d`` entries (the
    hidden vector's). A ValueError names ``name`` (the matrix) and what was wrong; freed by
    the caller."""
    cdef Py_ssize_t j
    if n < 1 or ids.shape[0] != n:
        raise ValueError(f"the walk needs 1 or more rows of {name} and one id each: got {n} "
                         f"steps and {ids.shape[0]} ids")
    if matrix.shape[1] != d:
        raise ValueError(f"the rows of {name} have {matrix.shape[1]} entries, h has {d}")
    for j in range(n):
        if not 0 <= ids[j] < matrix.shape[0]:
            raise ValueError(f"{ids[j]} is not a row of {name} (0..{matrix.shape[0] - 1})")
    cdef float **rows = <float **>malloc(n * sizeof(float *))
    if rows == NULL:
        raise MemoryError()
    for j in range(n):
        rows[j] = &matrix[ids[j], 0]
    return rows


cdef inline object twin_hs(hs_walk_fn walk, const float[::1] h, float[:, ::1] syn1,
                           const uint8_t[::1] code, const int32_t[::1] point, float alpha,
                           float[::1] work):
    """Run the reference-shaped path walk ``walk`` as a Python-callable twin: ``h``'s path
    (bits ``code``, inner nodes ``point``) over ``syn1``, updated in place, its error into
    ``work`` (d floats); returns -log P."""
    cdef double check = 0.0
    cdef float **rows = walk_rows(syn1, point, code.shape[0], h.shape[0], "syn1")
    try:
        return walk(&h[0], &work[0], rows, &code[0], code.shape[0], alpha, h.shape[0], True,
                    &check)
    finally:
        free(rows)


cdef inline object twin_ns(ns_walk_fn walk, const float[::1] h, float[:, ::1] syn1neg,
                           const int32_t[::1] negs, float alpha, float[::1] work):
    """Run the reference-shaped negative-sampling walk ``walk`` as a Python-callable twin
    over the words ``negs`` (the target first), their rows of ``syn1neg`` updated in place,
    the error into ``work`` (d floats); returns the loss."""
    cdef double check = 0.0
    cdef float **rows = walk_rows(syn1neg, negs, negs.shape[0], h.shape[0], "syn1neg")
    try:
        return walk(h.shape[0], &h[0], &work[0], rows, negs.shape[0], alpha, True, &check)
    finally:
        free(rows)


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
    """Word2Vec's use of the reference step (``_path.hs_step``, table sigmoid, ``math/_vec.h``
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
    sigmoid, ``math/_vec.h`` loops) over the rows of one (target, negatives) set, target first."""
    return ns_step(d, h, work, rows, NULL, NULL, count, alpha, &SIGMOID, NULL, NULL,
                   compute_loss, check)


# The labels of a fused walk's rows, one type per objective (``fused_walk`` is compiled once
# for each: its objective is a compile-time choice, never a branch in the loop).
cdef struct PathLabels:      # hierarchical softmax: row j's label is 1 - code[j]
    const uint8_t *code
cdef struct TargetLabels:    # negative sampling: the first row's label is 1, the others' 0
    int unused

ctypedef fused labels_t:
    PathLabels
    TargetLabels


cdef inline bint fused_walk(
    int d,                   # IN   vector size
    float *h,                # IN (OUT when apply_to_h)  hidden vector, d floats
    float *work,             # OUT  -alpha * dL/dh over the rows (old rows): h's step
    float *const *rows,      # IN/OUT the rows walked: a path's inner nodes, root first (hs),
                             #      or a target's row then its negatives' (ns)
    int count,               # IN   rows (0: an empty path, work 0 and nothing moved)
    const labels_t *labels,  # IN   the rows' labels: a path's bits, or target then negatives
    float alpha,             # IN   learning rate
    hsw2v_loss_acc *tally,   # OUT  the job's loss tally: += each row's term; NULL: no loss
    bint apply_to_h,         # IN   add work to h at the end (skip-gram hs: h is the context)
    double *check,           # OUT  += the sum of every f (the job's divergence check)
    float *const *ahead=NULL,  # IN rows to prefetch, row j before step j (NULL entries: none)
    int n_ahead=0,           # IN   their number (0: none)
    float *const *spread=NULL,  # IN/OUT ns: the input rows work goes to (see below)
    const float *spread_lock=NULL,  # IN their factors
    int nspread=0,           # IN   their number (0: work is returned)
    float spread_scale=1.0,  # IN   work's factor before it goes to them
) noexcept nogil:
    """The fused walk of both objectives: the reference step's arithmetic (``hs_path`` /
    ``ns_path`` with ``PRIMS_VEC``), bit for bit (the twin tests), with each row's update
    fused with the next row's dot product, so ``h`` is read once for both (row j+1 is not
    touched by row j's update, and h does not change during the walk). The labels' type
    selects the objective at compile time (one copy of the loop per objective):

    * hs keeps word2vec.c's sign and rounding: its coefficient (``_path.node_coef``, as every
      walk's) is ``(1 - code - sigmoid(f)) * alpha`` rounded once (``= -alpha * dL/df``,
      ``math/_path.pxd`` design note A); with ``apply_to_h`` the final ``h += work`` is fused
      into the last node's update;
    * ns rounds the residual ``label - sigmoid(f)`` to float32 first, then ``a = residual *
      alpha`` (``node_coef``'s other rounding, ``math/_path.pxd`` design note B); a word drawn
      twice in a row is not fused (its second
      dot product must see the first update). With ``nspread`` the caller's next step,
      ``spread[c] += spread_lock[c] * spread_scale * work`` in order, is fused into the last
      word's update (``hsw2v_update_spread``: the same bits, work not written), unless that
      word's coefficient is 0 (then nothing is spread). Returns whether it was.

    The vector loops are ``math/_vec.h``'s (several accumulators, one pass per row). The loss
    goes to ``tally`` (``math/_loss.h``; the reference's libm terms to 2e-7 relative)."""
    cdef int j
    cdef float f, a
    cdef float *row = rows[0]
    cdef float *next_row
    cdef double fsum = 0.0
    cdef bint spread_done = False
    cdef const uint8_t *code = NULL  # a local: the loop never reloads it through ``labels``
    if labels_t is PathLabels:
        code = labels.code
    memset(work, 0, d * sizeof(float))
    if count < 1:  # an empty path (no tree builds one): no step
        return False
    f = hsw2v_dot(d, h, row)
    for j in range(count):
        if j < n_ahead and ahead[j] != NULL:
            prefetch_row(ahead[j], d)
        fsum += f
        if labels_t is PathLabels:
            if tally != NULL:
                tally_push(tally, (1.0 - 2.0 * code[j]) * f)  # reduced in blocks (math/_loss.h)
            a = node_coef(1.0 - code[j], sigmoid(f), alpha, False)
        else:
            if tally != NULL:
                tally_push(tally, f if j == 0 else -f)
            a = node_coef(1.0 if j == 0 else 0.0, sigmoid(f), alpha, True)
        if j + 1 < count:
            next_row = rows[j + 1]
            if a == 0.0:
                f = hsw2v_dot(d, h, next_row)
            elif labels_t is TargetLabels and next_row == row:
                hsw2v_axpy(d, a, row, work)
                hsw2v_axpy(d, a, h, row)
                f = hsw2v_dot(d, h, next_row)
            else:
                f = hsw2v_update_then_dot(d, a, h, row, work, next_row)
            row = next_row
        elif apply_to_h:
            hsw2v_update_last(d, a, h, row, work)
        elif a != 0.0:
            if labels_t is TargetLabels and nspread:
                hsw2v_update_spread(d, a, h, row, work, spread, spread_lock, nspread,
                                    spread_scale)
                spread_done = True
            else:
                hsw2v_axpy(d, a, row, work)
                hsw2v_axpy(d, a, h, row)
    for j in range(count, n_ahead):  # rows beyond this walk's steps
        if ahead[j] != NULL:
            prefetch_row(ahead[j], d)
    check[0] += fsum
    return spread_done


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
    """An optimisation of the reference step (``hs_path``): ``fused_walk`` along a path, the
    same results bit for bit (its twin test; with ``apply_to_h`` ``h`` to the rounding of the
    one add folded in)."""
    cdef PathLabels labels
    labels.code = code
    fused_walk(d, h, work, rows, length, &labels, alpha, tally, apply_to_h, check)


cdef inline bint ns_path_fused(
    int d,                   # IN   vector size
    const float *h,          # IN   hidden vector, d floats (not moved)
    float *work,             # OUT  -alpha * dL/dh over the words (old rows): h's step
    float *const *rows,      # IN/OUT the target's row (label 1), then the negatives' (label 0)
    int count,               # IN   rows (>= 1)
    float alpha,             # IN   learning rate
    hsw2v_loss_acc *tally,   # OUT  the job's loss tally: += each word's term; NULL: no loss
    double *check,           # OUT  += the sum of every f (the job's divergence check)
    float *const *ahead=NULL,  # IN the next set's rows, prefetched one per word (fused_walk)
    int n_ahead=0,           # IN   their number
    float *const *spread=NULL,  # IN/OUT the input rows that get += lock * scale * work
    const float *spread_lock=NULL,  # IN their factors
    int nspread=0,           # IN   their number (0: none, work is returned)
    float spread_scale=1.0,  # IN   work's factor
) noexcept nogil:
    """An optimisation of the reference negative-sampling step (``ns_path``): ``fused_walk``
    over a target and its negatives, the same rows and work bit for bit (its twin test).
    The rows of the set after it are prefetched one per word, while this set's steps run
    (``ahead``): asked for all at once before the walk (114 cache lines at d=300), skip-gram
    ran 1.3x slower there (benchmarks/RESULTS.md, "The negatives' rows prefetched word by
    word"). With ``nspread`` the step after the walk, ``spread[c] += spread_lock[c] *
    spread_scale * work`` in order (skip-gram: the context row, which may be ``h``; CBOW:
    the window's rows), is fused into the last word's update; returns whether it was (not
    when the last word's coefficient is 0: the caller then takes that step from ``work``)."""
    cdef TargetLabels labels
    labels.unused = 0
    return fused_walk(d, <float *>h, work, rows, count, &labels, alpha, tally, False, check,
                      ahead, n_ahead, spread, spread_lock, nspread, spread_scale)
