"""One example's path through the layer's tree: its loss, its step, the full distribution's
top-down pass, and the bounds check of the paths (inline, for ``_layer``).

Design note: see ``_layer``'s design notes C (notation), D (exactness) and E (the gradient).
``path_step`` is the reference hierarchical-softmax step of every kernel (``hs_step`` of
``math/_path.pxd``) with the exact sigmoid; ``path_loss`` is its loss without the step (a query
never writes the weights); ``fill_row`` gives every class its log-probability from one row of
node scores; ``bad_path`` is the one compare per step that every call makes before a nogil
loop follows the paths.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t

from hsw2v._kernels.math._path cimport hs_step
from hsw2v._kernels.math._vecops cimport hsw2v_dot, neg_log_sigmoid


cdef inline double path_step(
    const float *h,          # IN   hidden vector, d floats
    float *grad_h,           # OUT  dL/dh is added here (d floats), or NULL
    float *g_out,            # OUT  g_j of each step (length floats), or NULL
    float *syn1,             # IN/OUT inner-node vectors (written only when lr != 0)
    float *bias,             # IN/OUT per-node intercept (written only when lr != 0), or NULL
    const uint8_t *code,     # IN   bits along the path, root first
    const int32_t *point,    # IN   inner nodes along the path, root first
    int length,              # IN   path length
    int d,                   # IN   dimension
    float lr,                # IN   step size; 0 leaves syn1 alone
) noexcept nogil:
    """-log P(y | h) along one path (design note E): the reference hierarchical-softmax step
    (``hs_step`` of :mod:`hsw2v._kernels.math._path`, the one home of the gradient) with the exact
    sigmoid, ``grad_h`` taking dL/dh and each node's row (and bias) its step right after its old
    value went into ``grad_h``."""
    cdef double check = 0.0  # hs_step's sum of f; the layer checks its loss instead
    return hs_step(d, h, grad_h, 1.0, NULL, syn1, code, point, length, bias, lr, NULL, NULL,
                   NULL, True, g_out, &check)


cdef inline double path_loss(const float *h, const float *syn1, const float *bias,
                             const uint8_t *code, const int32_t *point, int length,
                             int d) noexcept nogil:
    """-log P(y | h) along one path, the loss ``path_step`` returns (the same dot product,
    intercept and ``neg_log_sigmoid`` of ``node_step``), without its step: it never writes
    ``syn1``. (``node_step`` at ``lr = 0`` still writes a row whose ``g`` is NaN, as a float32
    dot product that overflowed on weights near the float32 limit gives: ``-0 * NaN`` is
    not 0; a query must not change the weights.)"""
    cdef int j
    cdef double f, loss = 0.0
    for j in range(length):
        f = hsw2v_dot(d, h, syn1 + <int64_t>point[j] * d)
        if bias != NULL:
            f += bias[point[j]]
        loss += neg_log_sigmoid((1.0 if code[j] == 0 else -1.0) * f)
    return loss


cdef inline Py_ssize_t bad_path(const int32_t[:, ::1] points, const int32_t[::1] lengths,
                                const int32_t *ys, Py_ssize_t n) noexcept nogil:
    """The first ``t < n`` whose class (``ys[t]``, or ``t`` itself when ``ys`` is NULL) has a
    path the kernels cannot follow: a length outside ``[0, L]`` or a node outside
    ``[0, V - 1)``; -1 when every path is in bounds. One integer compare per step, run on
    every call: the layer's own arrays are read-only, but numpy lets an owner set its
    ``writeable`` flag back, so identity alone cannot prove what they hold."""
    cdef Py_ssize_t t, c, V = points.shape[0], L = points.shape[1]
    cdef int32_t length, j, node
    for t in range(n):
        c = t if ys == NULL else ys[t]
        length = lengths[c]
        if length < 0 or length > L:
            return t
        for j in range(length):
            node = points[c, j]
            if node < 0 or node >= V - 1:
                return t
    return -1


cdef inline void fill_row(
    const float *scores,     # IN   f of every inner node for this row (V-1 floats)
    const float *logsig,     # IN   log sigmoid(f) of every inner node (V-1 floats)
    const int32_t *children, # IN   (V-1) x 2 child table
    const int32_t *order,    # IN   inner nodes top-down
    int64_t n_inner,         # IN   V - 1
    double *out,             # OUT  log P(w | h) of every class w (V doubles)
    double *node_lp,         # scratch: log-probability of reaching each inner node
) noexcept nogil:
    """log P(w | h) for every leaf: each inner node's path log-probability is its parent's
    plus ``log sigmoid(+-f)``, parents first. ``log sigmoid(f)`` comes precomputed (by
    vectorised NumPy, see :meth:`hsw2v.layer.HierarchicalSoftmax.log_proba`) and
    ``log sigmoid(-f) = log sigmoid(f) - f``, so this pass only adds and scatters."""
    cdef int64_t i
    cdef int32_t n, c0, c1
    cdef double f, lp, lp0, lp1
    node_lp[order[0]] = 0.0
    for i in range(n_inner):
        n = order[i]
        f = scores[n]
        lp = node_lp[n]
        lp0 = lp + logsig[n]
        lp1 = lp0 - f
        c0 = children[2 * n]
        c1 = children[2 * n + 1]
        if c0 < 0:
            out[-1 - c0] = lp0
        else:
            node_lp[c0] = lp0
        if c1 < 0:
            out[-1 - c1] = lp1
        else:
            node_lp[c1] = lp1
