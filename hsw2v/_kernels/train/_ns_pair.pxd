"""Negative sampling per pair, in two passes: the dot products of a set side by side, then one
update pass (inline; the passes are ``train/_ns_pair.h``'s).

Design note: ``train/_ns_pair.h`` (A: why the bits are the word-by-word walk's; B: why it is
faster). ``ns_pair_block`` is the step of one (h, target + negatives) set of gensim's per-pair
negative sampling (Mikolov et al. 2013, negative sampling objective): the reference step of
``math/_path.pxd`` (``ns_step``) with the table sigmoid, and the same rows, work and loss terms as
``ns_path_fused`` bit for bit (twin test: tests/test_ns_pair.py). It takes a set only when its
rows are distinct (``rows_distinct``); the caller walks a set with a repeated row word by
word. The update pass also sends ``work`` back to the input rows, the step the caller would
take next: skip-gram passes its context row (``nctx = 1``; it is ``h`` itself), CBOW its
window's rows with ``scale`` 1 (cbow_mean) or 1 / count; with ``nctx = 0`` ``work`` is
returned instead (the twin). ``hsw2v_rows_sum`` forms CBOW's hidden vector in one pass.
Training uses the block for CBOW only: for skip-gram it measured no faster than the fused
walk (benchmarks/RESULTS.md, "Negative sampling in two passes"), whose time at d=300 goes
to bringing the negatives' rows in, not to the passes over them; with those rows prefetched
over its dot products it measured 1.17x slower at d=300 ("what is left at d=300").
"""

from hsw2v._kernels.math._path cimport node_coef
from hsw2v._kernels.math._vecops cimport hsw2v_loss_acc, tally_push
from hsw2v._kernels.train._sigmoid cimport sigmoid


cdef extern from "train/_ns_pair.h" nogil:
    void hsw2v_ns_dots(int d, const float *x, float *const *rows, int n, float *out)
    void hsw2v_ns_update(int d, const float *h, float *const *rows, const float *a, int n,
                         float *const *ctx, const float *lock, int nctx, float scale,
                         float *work)
    void hsw2v_rows_sum(int d, float *const *rows, int count, float scale, float *out)


cdef inline bint rows_distinct(float *const *rows, int count) noexcept nogil:
    """Whether the ``count`` row pointers of a set are pairwise different."""
    cdef int j, k
    for k in range(1, count):
        for j in range(k):
            if rows[j] == rows[k]:
                return False
    return True


cdef inline void ns_pair_block(
    int d,                   # IN   vector size
    const float *h,          # IN   hidden vector, d floats (not moved during the set)
    float *const *rows,      # IN/OUT the target's row (label 1), then the negatives' (label 0);
                             #      pairwise distinct (rows_distinct), none of them h or ctx
    int count,               # IN   rows (>= 1)
    float alpha,             # IN   learning rate
    float *const *ctx,       # IN/OUT the input rows: ctx[c] += lock[c] * scale * work (in
                             #      order; skip-gram's one row may be h itself)
    const float *lock,       # IN   their lock factors (nctx floats)
    int nctx,                # IN   input rows; 0: store work instead
    float scale,             # IN   work's factor before it is sent (1, or CBOW's 1 / count)
    float *work,             # OUT  with nctx == 0: -alpha * dL/dh over the words (old rows)
    float *f,                # scratch: count floats (the scores)
    float *a,                # scratch: count floats (the nonzero coefficients)
    float **live,            # scratch: count pointers (their rows)
    hsw2v_loss_acc *tally,   # OUT  the job's loss tally: += each word's term; NULL: no loss
    double *check,           # OUT  += the sum of every f (the job's divergence check)
) noexcept nogil:
    """The negative-sampling step of one set with distinct rows: ``f_k = h . rows[k]`` for
    every word at once, ``g = sigmoid(f) - label`` in float32, ``a = -alpha g`` (as
    ``ns_path_fused``: word2vec's sign, ``math/_path.pxd`` note A), then one pass that moves
    every row with ``a != 0`` (``rows[k] += a h``) and forms ``work = sum a rows[k]`` (old
    rows), in word order; a word with ``a == 0`` is skipped, as the word-by-word walk skips
    it."""
    cdef int k, n = 0
    cdef float ak
    cdef double fsum = 0.0
    hsw2v_ns_dots(d, h, rows, count, f)
    for k in range(count):
        fsum += f[k]
        if tally != NULL:
            tally_push(tally, f[k] if k == 0 else -f[k])  # reduced in blocks (math/_loss.h)
        ak = node_coef(1.0 if k == 0 else 0.0, sigmoid(f[k]), alpha, True)
        if ak != 0.0:
            a[n] = ak
            live[n] = rows[k]
            n += 1
    check[0] += fsum
    hsw2v_ns_update(d, h, live, a, n, ctx, lock, nctx, scale, work)
