"""Skip-gram negative sampling with shared negatives: one centre's contexts against one set.

Design note
-----------
A. The walk. Ji et al. 2016 ("Parallelizing Word2Vec in Shared and Distributed Memory", the
   idea also behind BlazingText's ``batch_skipgram``) draw one set of ``negative`` words per
   centre word and share it among all the centre's contexts, instead of one set per (context,
   centre) pair as word2vec.c and gensim do. The centre's syn1neg row (label 1) and the
   negatives' rows (label 0) form a small output block ``O`` ((1 + K) x d); the ``m``
   context rows of syn0 form ``H`` (m x d). Then ``F = H O^T``, ``G = -alpha (sigmoid(F) -
   label)`` (the reference sign of ``math/_path.pxd`` note A, float32 ``g`` as ``ns_step``),
   ``dH = G O`` and ``dO = G^T H``. One pair's draws cost a random number and a table
   bisection each and bring K rows that are mostly not cached; here the K rows are drawn and
   fetched once per centre and stay in the first-level cache while every context uses them.

B. Order, exactly (what ``tests/test_ns_shared.py``'s NumPy reference replays): the
   pair-by-pair walk's, with the draws shared. The contexts are taken in window order; for
   each, every ``f_ck`` is computed from ``O`` as it stands (stepped by the contexts before),
   then, row by row in set order, ``h_c`` takes ``G_ck O_k`` from the row before its step and
   the row takes ``G_ck h_c`` from ``h_c`` before its step (``h_c += lockf_c (G_c O)``, ``O_k
   += G_ck h_c``: gensim's ``fast_sentence_sg_neg`` order). A word drawn twice is stepped by
   both entries, the second reading the first's step (its score, though, comes before it:
   gensim scores it after); a word that occurs twice in one window sees its first step at
   its second occurrence. A negative equal to the centre is skipped when drawn
   (``draw_negatives``). (A first version stepped ``O`` once after the block, from ``sum_c
   G_c^T h_c``: about 7 % slower, and its WordSim-353 score on the bundled Bible fell below
   gensim's by more than 0.01; ``benchmarks/RESULTS.md``, "Shared negatives in the pair
   walk's order".)

C. The vector loops are ``train/_ns_shared.h``'s: per context, one pass computes every ``f_ck``
   of the set (``hsw2v_multi_dot``), and one pass steps ``h_c`` and the set's rows
   (``hsw2v_shared_update``), so a context row is read twice however large the set. At d =
   100 and 300 the set is (1 + K) x d = 6 x d floats and stays in the first-level cache over
   the centre's contexts; BLAS ``sgemm`` on such a block would first have to copy the
   scattered rows together, and its deferred ``O`` step is the order note B left.

D. NaN safety and the divergence check as every walk (``_inner`` design note G): every ``f``
   is added to ``check[0]``; a NaN gives a NaN ``g`` through the table sigmoid.
"""

from hsw2v._kernels.math._path cimport node_coef
from hsw2v._kernels.math._vecops cimport hsw2v_sigmoid_table, neg_log_sigmoid, sigmoid_lookup


cdef extern from "train/_ns_shared.h" nogil:
    void hsw2v_multi_dot(int d, const float *h, float *const *rows, int n, float *f)
    void hsw2v_shared_update(int d, float *h, float lock, float *const *rows, const float *a,
                             int n)


cdef inline double ns_shared_block(
    int d,                   # IN   vector size
    int m,                   # IN   contexts (rows of H, >= 1)
    float *const *H,         # IN/OUT the contexts' syn0 rows, window order (repeats allowed)
    const float *hlock,      # IN   each context's lock factor (m), or NULL: all 1
    float *const *O,         # IN/OUT the centre's syn1neg row, then the negatives' (count)
    int count,               # IN   rows of O (>= 1)
    float alpha,             # IN   learning rate
    const hsw2v_sigmoid_table *table,  # IN the table sigmoid
    float *scratch,          # SCRATCH 2 x count floats: f and a of a context
    bint compute_loss,       # IN   return the loss (else 0)
    double *check,           # OUT  += the sum of every f (the divergence check)
) noexcept nogil:
    """One centre's shared-negatives step (design note B): each context ``h_c`` in turn
    against the rows ``O`` (target first) as they stand, ``h_c += lockf_c * -alpha sum_k g_ck
    O_k`` and ``O_k += -alpha g_ck h_c`` (each from the other before its step). Returns
    ``sum_c [-log sigmoid(f_c0) - sum_k>0 log sigmoid(-f_ck)]`` when ``compute_loss``."""
    cdef int c, k
    cdef double loss = 0.0, fsum = 0.0
    cdef float *f = scratch
    cdef float *a = scratch + count
    for c in range(m):
        hsw2v_multi_dot(d, H[c], O, count, f)
        for k in range(count):
            fsum += f[k]
            if compute_loss:
                loss += neg_log_sigmoid((1.0 if k == 0 else -1.0) * f[k])
            a[k] = node_coef(1.0 if k == 0 else 0.0, sigmoid_lookup(table, f[k]), alpha, True)
        hsw2v_shared_update(d, H[c], 1.0 if hlock == NULL else hlock[c], O, a, count)
    check[0] += fsum
    return loss
