"""The vector primitives every Cython kernel uses, declared once (defined in ``math/_vec.h``).

The NaN-safe sigmoid (table and exact) and log-sigmoid live here and nowhere else: a NaN
gives a NaN, never a table index (see ``math/_vec.h``). ``cimport`` what a kernel needs::

    from hsw2v._kernels.math._vecops cimport hsw2v_dot, neg_log_sigmoid

The hierarchical-softmax and negative-sampling steps built on them live in ``math/_path.pxd``.
"""

cdef extern from "math/_vec.h" nogil:
    # -log(sigmoid(x)), exact in float64 for any x; NaN -> NaN
    double neg_log_sigmoid "hsw2v_neg_log_sigmoid" (double x)
    # 1 / (1 + exp(-x)), exact in float64 for any x; NaN -> NaN
    double sigmoid_exact "hsw2v_sigmoid_exact" (double x)

    enum: SIGMOID_TABLE_SIZE "HSW2V_SIGMOID_TABLE_SIZE"
    ctypedef struct hsw2v_sigmoid_table:
        const float *table
        const float *residual[2]
        float range
        float scale
    void hsw2v_sigmoid_table_init(hsw2v_sigmoid_table *t, float *values)
    # the table sigmoid: 0 / 1 beyond +-range, NaN -> NaN, never an index out of the table
    float sigmoid_lookup "hsw2v_sigmoid" (const hsw2v_sigmoid_table *t, float f)
    # the node's coefficient a = alpha * (label - sigmoid(f)), its two roundings (math/_vec.h);
    # the walks take it through math/_path.pxd (node_coef, residual_coef)
    float hsw2v_node_coef(double label, double s, float alpha, int round_residual)
    float hsw2v_residual_coef(float residual, float alpha)
    # label - sigmoid_lookup(t, f), label = 1 - bit, residual = t.residual[bit]: the same float
    float sigmoid_residual "hsw2v_sigmoid_residual" (const hsw2v_sigmoid_table *t,
                                                     const float *residual, float label, float f)

    float hsw2v_dot(int d, const float *x, const float *y)  # x . y
    void hsw2v_axpy(int d, float a, const float *x, float *y)  # y := a*x + y
    float hsw2v_update_then_dot(int d, float g, const float *h, float *row, float *work,
                                const float *next_row)
    void hsw2v_update_last(int d, float g, float *h, float *row, const float *work)
    void hsw2v_update_spread(int d, float g, const float *h, float *row, const float *work,
                             float *const *ctx, const float *lock, int nctx, float scale)
    void HSW2V_PREFETCH(const void *p)  # a cache hint ahead of a write; no effect on results


cdef extern from "math/_loss.h" nogil:
    # the walks' loss tally: push -log sigmoid(y) terms, reduced eight at a time (math/_loss.h)
    ctypedef struct hsw2v_loss_acc:
        int n
        double sum
    void loss_init "hsw2v_loss_init" (hsw2v_loss_acc *a)
    void loss_push "hsw2v_loss_push" (hsw2v_loss_acc *a, float y)
    void tally_push "hsw2v_tally_push" (hsw2v_loss_acc *a, float y)  # a job's tally
    double loss_total "hsw2v_loss_total" (hsw2v_loss_acc *a)
    double neg_log_sigmoid_sum "hsw2v_neg_log_sigmoid_sum" (const float *y, int count)


cdef inline void prefetch_row(const float *row, int d) noexcept nogil:
    """Ask for a row's cache lines ahead of use (a hint; no effect on results)."""
    cdef int k
    for k in range(0, d, 16):
        HSW2V_PREFETCH(row + k)
