"""The one binary-logistic node step, and the hierarchical-softmax and negative-sampling
steps built on it, for every kernel.

Design note
-----------
A. One sign convention: the gradient of the loss. At a node with score ``f = h . row (+ bias)``
   and bit ``code``, ``sigmoid(f) = P(bit 0)`` and the loss is ``L = -log P(code | f) =
   -log sigmoid((1 - 2 code) f)`` (``hs_node_nll``). Its gradient is

       g = dL/df = sigmoid(f) - label,   label = 1 - code   (hierarchical softmax)
                                         label = 1 / 0      (ns: the target / a negative)

   so ``dL/dh = sum_j g_j row_j`` and ``dL/drow_j = g_j h`` (Morin & Bengio 2005; Mikolov et
   al. 2013; fastText's ``binaryLogistic`` is the same step). A step of size ``lr`` is
   ``row -= lr g h``. word2vec.c writes the same step with the other sign (its ``g`` is
   ``(label - sigmoid(f)) * alpha = -alpha * dL/df``); the fast variants keep that arithmetic
   (``_inner`` fused walk, ``train/_window.h``), which is the same number: IEEE subtraction and
   multiplication are exact under negation, ``(label - s) * a == -((s - label) * a)`` bit
   for bit, so the convention is a matter of naming, not of rounding.

B. One node step, ``node_step``: ``f``, the loss, ``g``, then ``grad_h += scale_h g row``
   with the old row, then ``row -= lr g h``. The two reference steps are loops over it:
   ``hs_step`` along one path (label ``1 - code``), ``ns_step`` over a target (label 1) and
   its negatives (label 0). Negative sampling rounds ``g`` to float32 before scaling it
   (``float_g``: gensim's float arithmetic, kept so that training gives the same bits as
   before), hierarchical softmax scales the float64 ``g`` and rounds once; both apply float32
   coefficients. ``hs_step`` serves every caller of the path:

   ==================  ===========================================================
   caller              arguments
   ==================  ===========================================================
   Word2Vec training   table sigmoid, ``scale_h = -alpha``, ``lr = alpha``: ``grad_h``
   (reference variant) is word2vec's ``work`` (the step for ``h``)
   layer (path_step)   ``table = NULL`` (exact float64 sigmoid), ``scale_h = 1``
                       (the gradient itself), ``lr`` 0 or the SGD step, ``g_out``,
                       optional per-node ``bias`` (the intercept)
   loss only           ``hs_path_nll`` (float32 ``h``, or float64 for scoring)
   ==================  ===========================================================

   A node whose two coefficients (``scale_h g`` and ``-lr g``, as float32) are both 0 is
   skipped, as word2vec.c's ``if g == 0``; this changes nothing but for non-finite rows
   (``0 * inf``).

C. The fast variants are optimisations of this step, each tested as its twin
   (``tests/test_kernel_twins.py``): ``hs_path_fused`` (``_inner``; each node's update fused
   with the next node's dot product: the same arithmetic, bit for bit, but for skip-gram's
   final ``h += work`` folded into the last node's pass, one add reassociated) and the 4-context
   block of ``train/_window.h`` (several contexts walk one path together with Gram corrections: the
   same updates to float rounding). ``dot`` / ``axpy`` choose the vector loops: ``math/_vec.h``'s
   (several accumulators) for the reference; ``_inner`` also passes plain loops
   (word2vec.c's shape) and BLAS (``scipy.linalg.cython_blas``, gensim's shape), the
   benchmark-only variants measured against.

D. The layer's ``path_step`` (``_layer.pyx``) is this step with exact sigmoid and unit
   gradient scale, bit for bit (``test_layer_path_step_is_the_reference_step_bit_for_bit``);
   its body becomes ``cdef double check = 0.0; return hs_step(d, h, grad_h, 1.0, NULL, syn1,
   code, point, length, bias, lr, NULL, NULL, NULL, True, g_out, &check)``, with
   ``bias`` NULL or the per-node intercept (``hsw2v_dot`` / ``hsw2v_axpy`` may be passed as
   NULL: the same loops).

E. The wide root (``softmax_step``): a node with ``K`` children scored by one softmax,
   ``P(k | h) = exp(z_k) / sum_j exp(z_j)`` with ``z_k = h . R_k (+ b_k)``, the k-ary top of
   a tree whose lower levels are binary (the class-based factorisation of Goodman 2001 and the
   adaptive softmax's head of Grave et al. 2017, over the children of a tree's top levels).
   Its loss for child ``s`` is ``log sum_j exp(z_j) - z_s`` and ``g_k = dL/dz_k = P(k | h) -
   [k = s]``, so ``dL/dh = sum_k g_k R_k`` and ``dL/dR_k = g_k h``: the same convention as
   the binary step, and the binary step when ``K = 2`` with ``R_0 - R_1`` as the node's row.
   The step is ``grad_h += g_k R_k`` with the old row, then ``R_k -= lr g_k h``, as above,
   for every child but those with ``|g_k| < SOFTMAX_MIN_G`` (1e-20): such a step is below
   float32's resolution for any weight larger than about 1e-13, and skipping it keeps
   float32 subnormals (hundreds of cycles per operation on x86) out of rows that start at 0,
   as word2vec.c skips the steps of saturated nodes.

F. NaN safety: the table sigmoid and the exact one are ``math/_vec.h``'s NaN-safe definitions; a
   NaN ``f`` gives a NaN ``g``, never a table index. Every ``f`` is added to ``check[0]`` (the
   job's divergence check, ``_inner`` design note G).
"""

from libc.math cimport exp, fabs, log
from libc.stdint cimport int32_t, int64_t, uint8_t

from hsw2v._kernels.math._vecops cimport (
    hsw2v_axpy, hsw2v_dot, hsw2v_node_coef, hsw2v_residual_coef, hsw2v_sigmoid_table,
    neg_log_sigmoid, sigmoid_exact, sigmoid_lookup,
)
from hsw2v._kernels.math._vecops cimport hsw2v_loss_acc, loss_init, loss_push, loss_total

# The smallest |g| of a wide root's child that still steps (design note E)
DEF SOFTMAX_MIN_G = 1e-20

# The vector loops a step uses (design note C): NULL for ``math/_vec.h``'s ``hsw2v_dot`` /
# ``hsw2v_axpy`` (the reference, the layer and the fast variants' ns walk: called directly and
# inlined); ``_inner`` passes its plain-loop and BLAS loops for the variants measured against
# (so that only ``_inner`` links BLAS), as constants in out-of-line copies of its walks, where
# the compiler calls them directly too.
ctypedef float (*dot_fn)(int n, const float *x, const float *y) noexcept nogil  # x . y
ctypedef void (*axpy_fn)(int n, float a, const float *x, float *y) noexcept nogil  # y += a*x


cdef inline void step_axpy(axpy_fn axpy, int d, float a, const float *x,
                           float *y) noexcept nogil:
    """y := a*x + y with ``axpy``, or ``hsw2v_axpy`` when it is NULL."""
    if axpy != NULL:
        axpy(d, a, x, y)
    else:
        hsw2v_axpy(d, a, x, y)


# The element type of a hidden vector: float32 (training, the twins) or float64 (scoring).
ctypedef fused hidden_t:
    float
    double


cdef inline hidden_t plain_dot(int d, const hidden_t *h, const float *row) noexcept nogil:
    """h . row in one plain loop, accumulated in h's type: float64 for the query kernels'
    exact scores, float32 for word2vec.c's loop (the benchmark-only "loop" walk)."""
    cdef hidden_t s = 0.0
    cdef int k
    for k in range(d):
        s += h[k] * row[k]
    return s


# --------------------------------------------------------------------------------------------
# The node's coefficient: every walk's one arithmetic
# --------------------------------------------------------------------------------------------

cdef inline float node_coef(double label, double s, float alpha,
                            bint round_residual) noexcept nogil:
    """The node's coefficient ``a = alpha * (label - s) = -alpha * dL/df`` for the sigmoid's
    value ``s`` (design note A), as float32: the factor of both of the node's updates (``row
    += a h``, h's step ``+= a row``), as fastText's ``binaryLogistic`` computes it for every
    loss. ``round_residual`` rounds ``label - s`` to float32 before the product (negative
    sampling's arithmetic); else it and the product are float64, rounded once (hierarchical
    softmax's). The reference step and every fast walk take their coefficient here (the C
    walks from ``math/_vec.h``'s ``hsw2v_node_coef``, which this is); they differ in how they
    loop, never in this arithmetic."""
    return hsw2v_node_coef(label, s, alpha, round_residual)


cdef inline float residual_coef(float residual, float alpha) noexcept nogil:
    """``node_coef`` from a residual ``label - s`` already rounded to float32 (the window
    walk's stored differences, ``sigmoid_residual``)."""
    return hsw2v_residual_coef(residual, alpha)


# --------------------------------------------------------------------------------------------
# The node loss and the reference steps
# --------------------------------------------------------------------------------------------

cdef inline double hs_node_nll(double f, uint8_t code) noexcept nogil:
    """-log P(code | f) at one node: -log sigmoid(f) for bit 0, -log sigmoid(-f) for bit 1
    (exact, float64; NaN -> NaN)."""
    return neg_log_sigmoid((1.0 - 2.0 * code) * f)


cdef inline void node_step(
    int d,                   # IN   vector size
    const float *h,          # IN   hidden vector, d floats (not moved by the step)
    float *grad_h,           # OUT  += scale_h * dL/dh with the old row, or NULL
    float scale_h,           # IN   1: the gradient; -alpha: word2vec's work (h's step)
    float *row,              # IN/OUT the node's row (an inner node, a target or a negative)
    float *bias,             # IN/OUT the node's bias (f += bias[0]), or NULL
    double label,            # IN   1 - code (hierarchical softmax); 1 / 0 (target / negative);
                             #      0 or 1
    float lr,                # IN   row (and bias) -= lr * g * h; 0 leaves them alone
    const hsw2v_sigmoid_table *table,  # IN the table sigmoid, or NULL: exact float64
    dot_fn dot,              # IN   x . y; NULL: hsw2v_dot (the reference)
    axpy_fn axpy,            # IN   y += a*x; NULL: hsw2v_axpy (the reference)
    bint compute_loss,       # IN   add the node's loss to loss[0]
    bint float_g,            # IN   round g to float32 first (negative sampling's arithmetic)
    float *g_out,            # OUT  g = dL/df, or NULL
    double *loss,            # OUT  += the node's loss when compute_loss
    double *fsum,            # OUT  += f (the divergence check)
) noexcept nogil:
    """The one binary-logistic node step (design note A): ``f = h . row (+ bias)``, ``g =
    dL/df = sigmoid(f) - label``, ``grad_h += scale_h g row`` with the old row, then ``row -=
    lr g h``. Adds the node's loss ``-log sigmoid(+-f)`` (``+`` for label 1, ``-`` for 0) to
    ``loss[0]`` when ``compute_loss`` (a conditional add, as the callers' sums were written
    before: the build's reassociation then leaves their order alone).

    ``float_g`` keeps negative sampling's float32 ``g`` (gensim's arithmetic): ``g`` is
    rounded to float32 before it is scaled, where hierarchical softmax scales the float64
    ``g`` and rounds once; either way the coefficients are float32 (design note B)."""
    cdef float a_h, a_row
    cdef double f, g, s
    f = dot(d, h, row) if dot != NULL else hsw2v_dot(d, h, row)
    if bias != NULL:
        f += bias[0]
    fsum[0] += f
    if compute_loss:  # the sign as a choice, not arithmetic on label
        loss[0] += neg_log_sigmoid((1.0 if label != 0.0 else -1.0) * f)
    if table != NULL:
        s = sigmoid_lookup(table, <float>f)
    else:
        s = sigmoid_exact(f)
    g = s - label
    if float_g:
        g = <float>g
    if g_out != NULL:
        g_out[0] = <float>g
    a_h = <float>(scale_h * g)
    a_row = node_coef(label, s, lr, float_g)
    if a_h == 0.0 and a_row == 0.0:
        return
    if grad_h != NULL:
        step_axpy(axpy, d, a_h, row, grad_h)
    if a_row != 0.0 and lr != 0.0:  # lr 0 leaves the row alone, even for a NaN g
        step_axpy(axpy, d, a_row, h, row)
        if bias != NULL:
            bias[0] += a_row


cdef inline double hs_step(
    int d,                   # IN   vector size
    const float *h,          # IN   hidden vector, d floats (not moved by the step)
    float *grad_h,           # OUT  += scale_h * dL/dh over the path (old rows), or NULL
    float scale_h,           # IN   1: the gradient; -alpha: word2vec's work (h's step)
    float *const *rows,      # IN/OUT the path's rows, root first; NULL: syn1 + point[j] * d
    float *syn1,             # IN/OUT inner-node rows when rows is NULL (else not read)
    const uint8_t *code,     # IN   bits along the path, root first
    const int32_t *point,    # IN   inner nodes along the path (read with syn1 or bias)
    int length,              # IN   path length
    float *bias,             # IN/OUT per-node bias indexed by node id (f += bias), or NULL
    float lr,                # IN   rows (and bias) -= lr * g * h; 0 leaves them alone
    const hsw2v_sigmoid_table *table,  # IN the table sigmoid, or NULL: exact float64
    dot_fn dot,              # IN   x . y; NULL: hsw2v_dot (the reference)
    axpy_fn axpy,            # IN   y += a*x; NULL: hsw2v_axpy (the reference)
    bint compute_loss,       # IN   return the loss (else 0)
    float *g_out,            # OUT  g_j = dL/df_j of each node (length floats), or NULL
    double *check,           # OUT  += the sum of every f (the divergence check)
) noexcept nogil:
    """The reference hierarchical-softmax step (design note B): ``node_step`` along one path,
    label ``1 - code[j]`` at node j. Returns -log P(word | h) when ``compute_loss``, else 0."""
    cdef int j
    cdef double loss = 0.0, fsum = 0.0
    for j in range(length):
        node_step(
            d, h, grad_h, scale_h, rows[j] if rows != NULL else syn1 + <int64_t>point[j] * d,
            bias + point[j] if bias != NULL else NULL, 1.0 - code[j], lr, table, dot, axpy,
            compute_loss, False, g_out + j if g_out != NULL else NULL, &loss, &fsum)
    check[0] += fsum
    return loss


cdef inline double hs_path_nll(
    const hidden_t *h, const float *syn1, const uint8_t *code, const int32_t *point,
    int length, int d,
) noexcept nogil:
    """-log P(word | h) along one path, exact (no table, no skipped terms): the loss of
    ``hs_step`` without its update. A float32 ``h`` takes ``math/_vec.h``'s dot products (the
    training kernels' scores), a float64 one float64 dot products (scoring)."""
    cdef int j
    cdef double f, loss = 0.0
    for j in range(length):
        if hidden_t is float:
            f = hsw2v_dot(d, h, syn1 + <int64_t>point[j] * d)
        else:
            f = plain_dot(d, h, syn1 + <int64_t>point[j] * d)
        loss += hs_node_nll(f, code[j])
    return loss


cdef inline double softmax_step(
    int d,                   # IN   vector size
    const float *h,          # IN   hidden vector, d floats
    float *grad_h,           # OUT  += dL/dh (old rows), or NULL
    float *R,                # IN/OUT the K child rows, K x d
    float *bias,             # IN/OUT per-child bias (z += bias), or NULL
    int K,                   # IN   number of children (>= 1)
    int target,              # IN   the child on the path, in [0, K)
    float lr,                # IN   rows (and bias) -= lr * g * h; 0 leaves them alone
    double *z,               # scratch: K doubles (the scores, then the probabilities)
    double *check,           # OUT  += the sum of every z (the divergence check)
) noexcept nogil:
    """The wide root's step (design note E): returns ``-log P(target | h)``, exact in float64
    (the scores shifted by their maximum before ``exp``; a NaN score gives a NaN loss)."""
    cdef int k
    cdef double top, total = 0.0, g, zsum = 0.0
    cdef float *row
    for k in range(K):
        z[k] = hsw2v_dot(d, h, R + <int64_t>k * d)
        if bias != NULL:
            z[k] += bias[k]
        zsum += z[k]
    top = z[0]
    for k in range(1, K):
        if z[k] > top:
            top = z[k]
    for k in range(K):
        total += exp(z[k] - top)
    cdef double loss = log(total) + top - z[target]
    for k in range(K):
        z[k] = exp(z[k] - top) / total
    for k in range(K):
        g = z[k] - (1.0 if k == target else 0.0)
        if fabs(g) < SOFTMAX_MIN_G:  # design note E (also skips g == 0)
            continue
        row = R + <int64_t>k * d
        if grad_h != NULL:
            hsw2v_axpy(d, <float>g, row, grad_h)
        if lr != 0.0:
            hsw2v_axpy(d, <float>(-lr * g), h, row)
            if bias != NULL:
                bias[k] -= <float>(lr * g)
    check[0] += zsum
    return loss


cdef inline double ns_step(
    int d,                   # IN   vector size
    const float *h,          # IN   hidden vector, d floats
    float *work,             # OUT  -alpha * dL/dh over the words (old rows): h's step
    float *const *rows,      # IN/OUT the words' rows, target first; NULL: syn1neg + negs[k] * d
    float *syn1neg,          # IN/OUT output vectors of negative sampling, V x d (when rows is
                             #      NULL, else not read)
    const int32_t *negs,     # IN   the target (label 1), then the negatives (label 0)
    int count,               # IN   words (>= 1)
    float alpha,             # IN   learning rate: syn1neg[w] -= alpha * g * h
    const hsw2v_sigmoid_table *table,  # IN the table sigmoid
    dot_fn dot,              # IN   x . y; NULL: hsw2v_dot (the reference)
    axpy_fn axpy,            # IN   y += a*x; NULL: hsw2v_axpy (the reference)
    bint compute_loss,       # IN   return the loss (else 0)
    double *check,           # OUT  += the sum of every f (the divergence check)
) noexcept nogil:
    """The reference negative-sampling step (Mikolov et al. 2013, negative sampling
    objective): ``node_step`` over the target (label 1) and its negatives (label 0) with
    ``scale_h = -alpha``, ``lr = alpha`` and gensim's float32 ``g``: ``work = -alpha sum_k
    g_k syn1neg[negs[k]]`` (old rows), ``syn1neg[negs[k]] -= alpha g_k h``. Returns
    -log sigmoid(f_target) - sum_neg log sigmoid(-f_neg) when ``compute_loss``, else 0."""
    cdef int k
    cdef double loss = 0.0, fsum = 0.0
    for k in range(d):
        work[k] = 0.0
    for k in range(count):
        node_step(d, h, work, -alpha,
                  rows[k] if rows != NULL else syn1neg + <int64_t>negs[k] * d, NULL,
                  1.0 if k == 0 else 0.0, alpha, table, dot, axpy, compute_loss, True, NULL,
                  &loss, &fsum)
    check[0] += fsum
    return loss
