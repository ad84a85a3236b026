# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernels of the standalone hierarchical-softmax layer (:mod:`hsw2v.layer`).

Design note
-----------
A. What runs without the GIL. Each public function here checks shapes and ranges with the GIL,
   then runs one nogil loop over a whole batch: ``path_batch`` (log-probabilities, gradients
   and the SGD step of a batch of paths), ``fill_log_proba`` (every class's log-probability
   from precomputed node scores) and ``FitTrainer.train_job`` (one job of a supervised
   classifier, run by the threads of :func:`hsw2v.running._train.run_epoch`). The best-first top-k
   search lives in :mod:`hsw2v._kernels._query` (``top_leaves_batch``), shared with Word2Vec.

B. What is shared. ``FitTrainer`` jobs on several threads write the input matrix ``W_in`` and
   the inner-node matrix ``syn1`` without locks (Hogwild, Recht et al. 2011), as Word2Vec's
   trainer does. Everything else is per call: the hidden vector, its gradient and the node
   log-probabilities are scratch owned by the call.
   The wide root (``R``, ``rb``) is the exception: every example steps all ``K`` of its rows,
   and threads writing the same ``K x d`` floats at every example would pass their cache
   lines back and forth (measured: 2 workers 7.5 times slower than 1 at K = 256). So each
   ``train_job`` trains its own copy of the root, taken when the job starts, and adds what
   it changed to the shared root when it ends (a delta, as distributed SGD merges workers;
   the root is then at most one job stale, 1,000 examples by default).

C. Notation (``d`` = dimension, ``V`` = number of classes, ``L`` = longest path).

   ==========  =============================================================================
   H, h        hidden vectors, float32 B x d (one row ``h`` per example); IN
   syn1        inner-node vectors, float32 (V-1) x d (``HierarchicalSoftmax.weights``); IN/OUT
   codes       uint8 V x L: bit taken at each step of a class's path, root first; IN
   points      int32 V x L: inner node (row of syn1) at each step, root first; IN
   children    int32 (V-1) x 2: node reached from inner node n by bit b; leaf w as -1 - w; IN
   order       int32 V-1: the inner nodes top-down (parents before children); IN
   f           h . syn1[n]; sigmoid(f) = P(bit 0 at n), so P(y | h) = prod_j sigmoid(s_j f_j)
               with s_j = 1 - 2 code_j
   g           dL/df = sigmoid(f) - (1 - code): the error at a node, for L = -log P(y | h)
   W_in        input matrix of the fitted classifier, float32 m x d; h = x W_in; IN/OUT
   bias        per-inner-node intercept, float32 V-1 (``HierarchicalSoftmax.intercept``),
               or NULL for none: then f = h . syn1[n] + bias[n]; IN/OUT
   R, rb, K    the wide root (``HierarchicalSoftmax(root_width=K)``): K child rows, float32
               K x d, and their bias (K, or NULL), scored by one softmax (``softmax_step``
               of :mod:`hsw2v._kernels._path`); IN/OUT
   slot        int32 V: the root's child above each class; with a wide root, ``codes`` /
               ``points`` / ``lengths`` are the paths below that child (length 0 for a class
               that is a child of the root itself); IN
   ==========  =============================================================================

D. Exactness. The sigmoid is computed exactly in float64 (no table; the layer's gradients are
   checked against finite differences), and the loss is the exact ``-log sigmoid`` of
   ``_vec.h``. Dot products are float32 (``hsw2v_dot``), accumulated with several registers.

E. The gradient (Morin & Bengio 2005; Mikolov et al. 2013): with ``L = -sum_j log
   sigmoid(s_j f_j)``, ``dL/dh = sum_j g_j syn1[n_j]`` and ``dL/dsyn1[n_j] = g_j h``. The
   step itself is the one reference step of every kernel (``hs_step``,
   :mod:`hsw2v._kernels._path`), called with the exact sigmoid and the optional per-node
   bias. A step of size ``lr`` is ``syn1[n_j] -= lr g_j h``, the word2vec update with
   ``alpha = lr``. With an intercept, ``dL/dbias[n_j] = g_j`` and the step is ``bias[n_j] -=
   lr g_j`` (a constant-1 input coordinate whose weight is ``bias``).

F. Row-wise AdaGrad (``FitTrainer`` with accumulators; Duchi et al. 2011, in the row-wise
   form of Gupta et al. 2014 used for large embedding tables): one float32 accumulator per row
   of ``W_in`` and per inner node, not one per weight, so the state is ``m + V - 1`` floats.
   A row whose gradient this example is the vector ``u`` (``g_j h`` for node ``n_j``, with the
   intercept ``g_j`` as one more coordinate; ``x_ik dL/dh`` for feature row ``k``) adds
   ``mean(u**2)`` to its accumulator ``G`` and steps ``row -= lr / sqrt(G + eps) * u``. The
   gradient is taken first for the whole example (``path_step`` with step 0), then every row
   steps: the same gradient as the SGD path, whose steps are interleaved with the walk only
   where they cannot change it. A step is at most ``lr * sqrt(len(u))`` long, so a zero or
   tiny gradient cannot make it blow up; NaN in a gradient reaches the loss, as with SGD.

G. The step size inside a job falls linearly from the job's first rate to its last
   (``FitTrainer.train_job``): the one formula of every kernel, ``job_alpha`` of
   ``_rates.pxd`` (inline, compiled here with this module's flags); the rates at a job's ends
   come from :class:`hsw2v.running._schedule.Schedule`.

Every nogil routine has a Python-callable twin (``py_*``) or is itself callable, and the tests
compare them with NumPy references.
"""

from libc.math cimport sqrt, sqrtf
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

import numpy as np

from hsw2v._kernels._path cimport hs_step, softmax_step
from hsw2v._kernels._rates cimport job_alpha
from hsw2v._kernels._tree_view cimport TreeView, fill_tree_view, path_code, path_point, tree_fits
from hsw2v._kernels._vecops cimport hsw2v_axpy, hsw2v_dot, neg_log_sigmoid
from hsw2v._kernels._vecops cimport sigmoid_exact as sigmoid  # exact, float64; NaN -> NaN

# AdaGrad's epsilon (design note F): keeps the first step finite when a row's gradient is 0
DEF ADAGRAD_EPS = 1e-10


# --------------------------------------------------------------------------------------------
# The path routine: loss, gradient and step of one example.
# --------------------------------------------------------------------------------------------

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
    (``hs_step`` of :mod:`hsw2v._kernels._path`, the one home of the gradient) with the exact
    sigmoid, ``grad_h`` taking dL/dh and each node's row (and bias) its step right after its old
    value went into ``grad_h``."""
    cdef double check = 0.0  # hs_step's sum of f; the layer checks its loss instead
    return hs_step(d, h, grad_h, 1.0, NULL, syn1, code, point, length, bias, lr, NULL, NULL,
                   NULL, True, g_out, &check)


def _check_paths(Py_ssize_t V, const float[:, ::1] syn1, const uint8_t[:, ::1] codes,
                 const int32_t[:, ::1] points, const int32_t[::1] lengths, Py_ssize_t d):
    if (syn1.shape[0] != V - 1 or syn1.shape[1] != d
            or not tree_fits(codes, points, lengths, V) or d < 1 or V < 2):
        raise ValueError("inconsistent layer arrays (tree, weights and hidden size differ)")


def _check_root(Py_ssize_t V, Py_ssize_t d, const float[:, ::1] root_w,
                const float[::1] root_b, const int32_t[::1] slot):
    """The wide root's arrays agree with each other and with the layer (the kernels index
    ``root_w`` by ``slot`` without bounds checks)."""
    if root_w is None:
        if root_b is not None or slot is not None:
            raise ValueError("root_b and slot need root_w")
        return
    cdef Py_ssize_t K = root_w.shape[0]
    if root_w.shape[1] != d or K < 1 or slot is None or slot.shape[0] != V:
        raise ValueError("inconsistent wide root (root_w must be K x d, slot one per class)")
    if root_b is not None and root_b.shape[0] != K:
        raise ValueError(f"root_b has {root_b.shape[0]} entries for {K} root children")
    if int(np.min(slot)) < 0 or int(np.max(slot)) >= K:
        raise ValueError(f"slot entries must be in [0, {K})")


def path_batch(const float[:, ::1] H, float[:, ::1] syn1, const uint8_t[:, ::1] codes,
               const int32_t[:, ::1] points, const int32_t[::1] lengths,
               const int32_t[::1] y, bint want_grad, float lr, float[::1] bias=None,
               g_out=None):
    """For each row ``b``: ``loss[b] = -log P(y[b] | H[b])`` (float64), and with
    ``want_grad`` ``grad[b] = dL/dH[b]`` (float32), both at the weights as they are on entry.
    With ``lr != 0`` the summed step ``syn1 -= lr * dL/dsyn1`` is applied after all rows are
    done (a batch gradient step: no row sees another's update), to ``bias`` too when given
    (the per-node intercept, V-1 floats). Returns ``(loss, grad)``; ``grad`` is None without
    ``want_grad``. ``g_out`` (float32 B x L, OUT), when given, receives ``g_j = dL/df_j`` of
    every step of every row (``dL/dsyn1[points[y[b], j]]`` gets ``g_out[b, j] * H[b]`` and
    ``dL/dbias[points[y[b], j]]`` gets ``g_out[b, j]``); entries past a path's length are 0."""
    cdef Py_ssize_t B = H.shape[0], V = codes.shape[0], b
    cdef int d = H.shape[1], L = codes.shape[1], j
    _check_paths(V, syn1, codes, points, lengths, d)
    if y.shape[0] != B:
        raise ValueError(f"y has {y.shape[0]} entries for {B} rows")
    if g_out is not None and (g_out.dtype != np.float32 or g_out.shape != (B, max(L, 1))):
        raise ValueError(f"g_out must be a float32 array of shape {(B, max(L, 1))}")
    cdef float *b_ptr = NULL
    if bias is not None:
        if bias.shape[0] != V - 1:
            raise ValueError(f"bias has {bias.shape[0]} entries for {V - 1} inner nodes")
        b_ptr = &bias[0]
    cdef bint bad = False
    with nogil:
        for b in range(B):
            if y[b] < 0 or y[b] >= V:
                bad = True
    if bad:
        raise ValueError(f"class ids must be in [0, {V})")
    loss = np.zeros(B, dtype=np.float64)
    cdef double[::1] lo = loss
    grad = np.zeros((B, d), dtype=np.float32) if want_grad else None
    cdef float[:, ::1] gr
    cdef float *grad_row = NULL
    if want_grad and B:
        gr = grad
    G = np.zeros((B, max(L, 1)), dtype=np.float32) if lr != 0.0 or g_out is not None else None
    cdef float[:, ::1] gv
    cdef float *g_row = NULL
    cdef bint want_g = G is not None
    if want_g and B:
        gv = G
    if B == 0:
        return loss, grad
    cdef const uint8_t *code
    cdef const int32_t *point
    with nogil:
        for b in range(B):
            code = &codes[y[b], 0]
            point = &points[y[b], 0]
            if want_grad:
                grad_row = &gr[b, 0]
            if want_g:
                g_row = &gv[b, 0]
            lo[b] = path_step(&H[b, 0], grad_row, g_row, &syn1[0, 0], b_ptr, code, point,
                              lengths[y[b]], d, 0.0)
        if lr != 0.0:
            for b in range(B):
                point = &points[y[b], 0]
                for j in range(lengths[y[b]]):
                    hsw2v_axpy(d, -lr * gv[b, j], &H[b, 0], &syn1[point[j], 0])
                    if b_ptr != NULL:
                        b_ptr[point[j]] -= lr * gv[b, j]
    if g_out is not None:
        g_out[...] = G
    return loss, grad


# --------------------------------------------------------------------------------------------
# The full distribution from node scores: one top-down pass per row.
# --------------------------------------------------------------------------------------------

cdef void fill_row(
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


def fill_log_proba(const float[:, ::1] S, const float[:, ::1] LS,
                   const int32_t[:, ::1] children, const int32_t[::1] order,
                   double[:, ::1] out, double[::1] node_lp):
    """``out[b] = log P(. | h_b)`` from ``S[b] = syn1 . h_b`` (B x (V-1) node scores) and
    ``LS = log sigmoid(S)``, one nogil pass per row. ``children`` and ``order`` must come from
    :func:`hsw2v.trees.check_tree` (not re-checked here beyond shapes)."""
    cdef Py_ssize_t B = S.shape[0], n_inner = children.shape[0], b
    if (S.shape[1] != n_inner or LS.shape[0] != B or LS.shape[1] != n_inner
            or children.shape[1] != 2 or order.shape[0] != n_inner
            or out.shape[0] != B or out.shape[1] != n_inner + 1
            or node_lp.shape[0] != n_inner or n_inner < 1):
        raise ValueError("fill_log_proba: inconsistent shapes")
    with nogil:
        for b in range(B):
            fill_row(&S[b, 0], &LS[b, 0], &children[0, 0], &order[0], n_inner, &out[b, 0],
                     &node_lp[0])


# --------------------------------------------------------------------------------------------
# Supervised linear classifier: h = x W_in, hierarchical-softmax loss, Hogwild jobs.
# --------------------------------------------------------------------------------------------

cdef struct FitView:
    float *W_in
    float *syn1
    float *bias               # per-node intercept (V-1), or NULL
    TreeView tree
    const int32_t *y
    const float *dense        # n x m, or NULL for CSR
    const int64_t *indptr     # CSR row pointers (n + 1)
    const int32_t *indices    # CSR column ids
    const float *data         # CSR values
    float *acc_in             # row-wise AdaGrad: one accumulator per row of W_in (m), or NULL
    float *acc_node           # row-wise AdaGrad: one per inner node (V-1); set with acc_in
    bint acc_full             # per-weight AdaGrad: acc_in is m x d, acc_node (V-1) x (d + 1)
    float *root_w             # the wide root's K x d rows, or NULL (a binary root)
    float *root_b             # their bias (K), or NULL
    const int32_t *slot       # the root's child above each class (V), with root_w
    int K                     # children of the wide root (0 without)
    int64_t m
    int d
    int max_length


cdef inline double row_step(float lr, float *acc, double sq) noexcept nogil:
    """Row-wise AdaGrad (design note F): add the mean squared gradient ``sq`` of one row to
    its accumulator and return that row's step size ``lr / sqrt(acc + eps)``."""
    acc[0] += <float>sq
    return lr / sqrt(<double>acc[0] + ADAGRAD_EPS)


cdef inline void coord_step(int d, float lr, float a, const float *u, float *acc,
                            float *w) noexcept nogil:
    """Per-weight AdaGrad (design note F) of one row whose gradient is ``a * u``:
    ``acc += (a u)**2``, ``w -= lr (a u) / sqrt(acc + eps)``, coordinate by coordinate."""
    cdef int t
    cdef float q
    for t in range(d):
        q = a * u[t]
        acc[t] += q * q
        w[t] -= lr * q / sqrtf(acc[t] + <float>ADAGRAD_EPS)


cdef inline void hidden_of(const FitView *v, int64_t i, float *h, float *grad_h, int64_t *lo,
                           int64_t *hi) noexcept nogil:
    """h = x_i W_in (and grad_h cleared) for example ``i``; ``[lo, hi)``: the positions of its
    features (all ``m`` columns of a dense row, its CSR slice otherwise)."""
    cdef int d = v.d
    cdef int64_t k
    cdef float x
    memset(h, 0, d * sizeof(float))
    memset(grad_h, 0, d * sizeof(float))
    if v.dense != NULL:
        lo[0], hi[0] = 0, v.m
    else:
        lo[0], hi[0] = v.indptr[i], v.indptr[i + 1]
    for k in range(lo[0], hi[0]):
        if v.dense != NULL:
            x = v.dense[i * v.m + k]
            if x != 0.0:
                hsw2v_axpy(d, x, v.W_in + k * d, h)
        else:
            hsw2v_axpy(d, v.data[k], v.W_in + <int64_t>v.indices[k] * d, h)


cdef double adagrad_example(const FitView *v, int64_t i, float lr, float *h, float *grad_h,
                            float *g) noexcept nogil:
    """One row-wise AdaGrad step on example ``i`` (design note F): h = x_i W_in; the path's
    loss, ``g_j`` and ``dL/dh`` at the weights on entry (``path_step`` with step 0, so the
    gradient is the reference one); then each path node ``n`` steps by ``g_j h`` (and its
    intercept by ``g_j``) and each feature row ``k`` by ``x_ik dL/dh``, every row with its own
    step size. Returns the example's loss."""
    cdef int d = v.d, j, length
    cdef int64_t k, lo, hi
    cdef int32_t c = v.y[i], n
    cdef const int32_t *point
    cdef double loss, hh, gg, s
    cdef float x
    hidden_of(v, i, h, grad_h, &lo, &hi)
    length = v.tree.lengths[c]
    point = path_point(&v.tree, c)
    loss = path_step(h, grad_h, g, v.syn1, v.bias, path_code(&v.tree, c),
                     point, length, d, 0.0)
    if v.acc_full:
        for j in range(length):
            n = point[j]
            coord_step(d, lr, g[j], h, v.acc_node + <int64_t>n * (d + 1),
                       v.syn1 + <int64_t>n * d)
            if v.bias != NULL:
                x = 1.0
                coord_step(1, lr, g[j], &x, v.acc_node + <int64_t>n * (d + 1) + d, v.bias + n)
        for k in range(lo, hi):
            if v.dense != NULL:
                x = v.dense[i * v.m + k]
                if x != 0.0:
                    coord_step(d, lr, x, grad_h, v.acc_in + k * d, v.W_in + k * d)
            else:
                coord_step(d, lr, v.data[k], grad_h, v.acc_in + <int64_t>v.indices[k] * d,
                           v.W_in + <int64_t>v.indices[k] * d)
        return loss
    hh = hsw2v_dot(d, h, h)
    for j in range(length):
        n = point[j]
        if v.bias != NULL:  # the intercept is the row's extra coordinate (input 1)
            s = row_step(lr, v.acc_node + n, g[j] * g[j] * (hh + 1.0) / (d + 1))
            v.bias[n] -= <float>(s * g[j])
        else:
            s = row_step(lr, v.acc_node + n, g[j] * g[j] * hh / d)
        hsw2v_axpy(d, <float>(-s * g[j]), h, v.syn1 + <int64_t>n * d)
    gg = hsw2v_dot(d, grad_h, grad_h) / d
    for k in range(lo, hi):
        if v.dense != NULL:
            x = v.dense[i * v.m + k]
            if x != 0.0:
                s = row_step(lr, v.acc_in + k, x * x * gg)
                hsw2v_axpy(d, <float>(-s * x), grad_h, v.W_in + k * d)
        else:
            x = v.data[k]
            s = row_step(lr, v.acc_in + v.indices[k], x * x * gg)
            hsw2v_axpy(d, <float>(-s * x), grad_h, v.W_in + <int64_t>v.indices[k] * d)
    return loss


cdef double fit_example(const FitView *v, int64_t i, float lr, float *h,
                        float *grad_h, float *g, double *z) noexcept nogil:
    """One SGD step on example ``i``: h = x_i W_in, the wide root's step if any
    (``softmax_step``, ``z``: scratch of K doubles), walk y_i's path (updating syn1), then
    W_in[k] -= lr x_ik dL/dh for every feature k of x_i. Returns the example's loss. With the
    AdaGrad accumulators set, the step is :func:`adagrad_example`'s instead (``g``: scratch of
    ``max_length`` floats, used by that step only; no wide root there)."""
    if v.acc_in != NULL:
        return adagrad_example(v, i, lr, h, grad_h, g)
    cdef int d = v.d
    cdef int64_t k, lo, hi
    cdef int32_t c = v.y[i]
    cdef double loss
    cdef float x
    cdef double check = 0.0  # the scores' sum; fit checks the loss instead
    hidden_of(v, i, h, grad_h, &lo, &hi)
    loss = 0.0
    if v.K:  # the wide root first, then the binary path below its child
        loss = softmax_step(d, h, grad_h, v.root_w, v.root_b, v.K, v.slot[c], lr, z, &check)
    loss += path_step(h, grad_h, NULL, v.syn1, v.bias, path_code(&v.tree, c),
                      path_point(&v.tree, c), v.tree.lengths[c], d, lr)
    for k in range(lo, hi):
        if v.dense != NULL:
            x = v.dense[i * v.m + k]
            if x != 0.0:
                hsw2v_axpy(d, -lr * x, grad_h, v.W_in + k * d)
        else:
            hsw2v_axpy(d, -lr * v.data[k], grad_h, v.W_in + <int64_t>v.indices[k] * d)
    return loss


cdef void root_copy(const FitView *shared, float *mine, float *start) noexcept nogil:
    """A job's own copy of the wide root (rows, then bias), twice: ``mine`` to train and
    ``start`` to know later what the job changed (design note B)."""
    cdef int64_t rows = <int64_t>shared.K * shared.d
    memcpy(mine, shared.root_w, rows * sizeof(float))
    if shared.root_b != NULL:
        memcpy(mine + rows, shared.root_b, shared.K * sizeof(float))
    else:
        memset(mine + rows, 0, shared.K * sizeof(float))
    memcpy(start, mine, (rows + shared.K) * sizeof(float))


cdef void root_sync(FitView *shared, const float *mine, const float *start) noexcept nogil:
    """Add what the job changed in its copy of the wide root to the shared one."""
    cdef int64_t i, rows = <int64_t>shared.K * shared.d
    for i in range(rows):
        shared.root_w[i] += mine[i] - start[i]
    if shared.root_b != NULL:
        for i in range(shared.K):
            shared.root_b[i] += mine[rows + i] - start[rows + i]


cdef class FitTrainer:
    """Borrows the classifier's arrays for the nogil job kernel; one instance serves all
    threads. Has the ``train_job`` signature :func:`hsw2v.running._train.run_epoch` expects, with
    example ids in place of word ids."""

    cdef FitView v
    cdef Py_ssize_t n
    cdef object _keep_alive

    def __init__(self, float[:, ::1] W_in, float[:, ::1] syn1, const uint8_t[:, ::1] codes,
                 const int32_t[:, ::1] points, const int32_t[::1] lengths,
                 const int32_t[::1] y, dense=None, indptr=None, indices=None, data=None,
                 float[::1] bias=None, float[::1] acc_in=None, float[::1] acc_node=None,
                 float[:, ::1] root_w=None, float[::1] root_b=None,
                 const int32_t[::1] slot=None):
        cdef Py_ssize_t V = codes.shape[0]
        _check_paths(V, syn1, codes, points, lengths, W_in.shape[1])
        _check_root(V, W_in.shape[1], root_w, root_b, slot)
        if root_w is not None and acc_in is not None:
            raise ValueError("AdaGrad does not train a wide root: use the SGD step")
        if bias is not None and bias.shape[0] != V - 1:
            raise ValueError(f"bias has {bias.shape[0]} entries for {V - 1} inner nodes")
        if (acc_in is None) != (acc_node is None):
            raise ValueError("give both AdaGrad accumulators (acc_in and acc_node) or neither")
        cdef Py_ssize_t d = W_in.shape[1]
        if acc_in is not None and not (
                (acc_in.shape[0] == W_in.shape[0] and acc_node.shape[0] == V - 1)
                or (acc_in.shape[0] == W_in.shape[0] * d
                    and acc_node.shape[0] == (V - 1) * (d + 1))):
            raise ValueError(f"AdaGrad accumulators need {W_in.shape[0]} and {V - 1} entries "
                             f"(row-wise) or {W_in.shape[0] * d} and {(V - 1) * (d + 1)} "
                             "(per weight)")
        if int(np.min(y)) < 0 or int(np.max(y)) >= V:
            raise ValueError(f"class ids must be in [0, {V})")
        cdef const float[:, ::1] X
        cdef const int64_t[::1] ip
        cdef const int32_t[::1] ix
        cdef const float[::1] dv
        memset(&self.v, 0, sizeof(FitView))
        self.n = y.shape[0]
        if dense is not None:
            X = dense
            if X.shape[0] != self.n or X.shape[1] != W_in.shape[0]:
                raise ValueError("X and W_in / y disagree in shape")
            if self.n:
                self.v.dense = &X[0, 0]
        else:
            ip, ix, dv = indptr, indices, data
            if ip.shape[0] != self.n + 1 or ix.shape[0] != dv.shape[0] or ip[0] != 0 \
                    or ip[self.n] != ix.shape[0]:
                raise ValueError("inconsistent CSR arrays")
            if np.any(np.diff(indptr) < 0):
                raise ValueError("CSR row pointers must not decrease")
            if ix.shape[0] and (int(np.min(indices)) < 0
                                or int(np.max(indices)) >= W_in.shape[0]):
                raise ValueError("CSR column ids out of range")
            self.v.indptr = &ip[0]
            if ix.shape[0]:
                self.v.indices = &ix[0]
                self.v.data = &dv[0]
        self._keep_alive = (W_in, syn1, codes, points, lengths, y, dense, indptr, indices, data,
                            bias, acc_in, acc_node, root_w, root_b, slot)
        if root_w is not None:
            self.v.root_w = &root_w[0, 0]
            self.v.root_b = &root_b[0] if root_b is not None else NULL
            self.v.slot = &slot[0]
            self.v.K = root_w.shape[0]
        if bias is not None:
            self.v.bias = &bias[0]
        if acc_in is not None:
            self.v.acc_in = &acc_in[0]
            self.v.acc_node = &acc_node[0]
            self.v.acc_full = acc_node.shape[0] != V - 1
        self.v.W_in = &W_in[0, 0]
        self.v.syn1 = &syn1[0, 0]
        fill_tree_view(&self.v.tree, codes, points, lengths)
        self.v.y = &y[0]
        self.v.m = W_in.shape[0]
        self.v.d = W_in.shape[1]

    def train_job(self, const int32_t[::1] ids, const int64_t[::1] ends, float alpha0,
                  float alpha1, seed=None):
        """One SGD step per example id in ``ids``, in order, without the GIL; the step size
        falls linearly from ``alpha0`` to ``alpha1`` over the job. Returns ``(examples,
        loss)``. (``ends`` and ``seed`` are accepted for the epoch driver and unused.)"""
        cdef Py_ssize_t n_ids = ids.shape[0], t
        cdef bint bad = False
        cdef double loss = 0.0
        cdef float lr
        if n_ids == 0:
            return 0, 0.0
        with nogil:
            for t in range(n_ids):
                if ids[t] < 0 or ids[t] >= self.n:
                    bad = True
        if bad:
            raise ValueError("example ids out of range")
        cdef FitView v = self.v  # the job's view: its own copy of a wide root (design note B)
        cdef int64_t root_n = <int64_t>self.v.K * (self.v.d + 1)  # rows, then bias
        cdef float *h = <float *>malloc((2 * self.v.d + self.v.tree.max_length) * sizeof(float))
        cdef double *z = <double *>malloc((self.v.K + 1) * sizeof(double))
        cdef float *root = <float *>malloc((2 * root_n + 1) * sizeof(float))
        if h == NULL or z == NULL or root == NULL:
            free(h)
            free(z)
            free(root)
            raise MemoryError("could not allocate a job's buffers")
        try:
            with nogil:
                if v.K:
                    root_copy(&self.v, root, root + root_n)
                    v.root_w = root
                    v.root_b = root + <int64_t>v.K * v.d if v.root_b != NULL else NULL
                for t in range(n_ids):
                    lr = job_alpha(alpha0, alpha1, t, n_ids)  # _rates.pxd
                    loss += fit_example(&v, ids[t], lr, h, h + self.v.d,
                                        h + 2 * self.v.d, z)
                if v.K:
                    root_sync(&self.v, root, root + root_n)
        finally:
            free(h)
            free(z)
            free(root)
        return n_ids, loss


# --------------------------------------------------------------------------------------------
# Python-callable twins of the nogil routines, for tests.
# --------------------------------------------------------------------------------------------

def py_sigmoid(double f):
    """Twin of ``sigmoid``."""
    return sigmoid(f)


def py_path_step(const float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
                 const int32_t[::1] point, float lr=0.0, float[::1] bias=None):
    """Twin of ``path_step``: returns ``(loss, grad_h, g)``; steps ``syn1`` (and ``bias``,
    if given) in place when ``lr`` is not 0."""
    cdef int d = h.shape[0], n = code.shape[0]
    if point.shape[0] != n or n == 0 or syn1.shape[1] != d:
        raise ValueError("code, point, h and syn1 disagree")
    if bias is not None and bias.shape[0] != syn1.shape[0]:
        raise ValueError("bias must have one entry per row of syn1")
    if np.min(point) < 0 or np.max(point) >= syn1.shape[0]:
        raise ValueError("point out of range")
    grad = np.zeros(d, dtype=np.float32)
    g = np.zeros(n, dtype=np.float32)
    cdef float[::1] gr = grad, gv = g
    loss = path_step(&h[0], &gr[0], &gv[0], &syn1[0, 0],
                     &bias[0] if bias is not None else NULL, &code[0], &point[0], n, d, lr)
    return loss, grad, g


def py_fill_row(const float[::1] scores, const int32_t[:, ::1] children,
                const int32_t[::1] order):
    """Twin of ``fill_row``: log P(w | h) of every class from one row of node scores (their
    log-sigmoids computed here exactly)."""
    cdef Py_ssize_t n_inner = children.shape[0]
    out = np.full(n_inner + 1, np.nan)
    node_lp = np.zeros(n_inner)
    S = np.asarray(scores).reshape(1, -1)
    LS = np.array([[-neg_log_sigmoid(f) for f in scores]], dtype=np.float32)
    fill_log_proba(S, LS, children, order, out.reshape(1, -1), node_lp)
    return out


def py_fit_example(FitTrainer trainer, int64_t i, float lr):
    """Twin of ``fit_example``: one step on example ``i`` (SGD, or row-wise AdaGrad when the
    trainer has accumulators); returns its loss."""
    if not 0 <= i < trainer.n:
        raise ValueError("example id out of range")
    cdef float *h = <float *>malloc((2 * trainer.v.d + trainer.v.tree.max_length) * sizeof(float))
    cdef double *z = <double *>malloc((trainer.v.K + 1) * sizeof(double))
    if h == NULL or z == NULL:
        free(h)
        free(z)
        raise MemoryError()
    try:
        return fit_example(&trainer.v, i, lr, h, h + trainer.v.d, h + 2 * trainer.v.d, z)
    finally:
        free(h)
        free(z)


def py_softmax_step(const float[::1] h, float[:, ::1] R, int target, float lr=0.0,
                    float[::1] bias=None):
    """Twin of ``softmax_step`` (:mod:`hsw2v._kernels._path`): returns ``(loss, grad_h)``;
    steps ``R`` (and ``bias``, if given) in place when ``lr`` is not 0."""
    cdef int d = h.shape[0], K = R.shape[0]
    if R.shape[1] != d or K < 1 or not 0 <= target < K:
        raise ValueError("h, R and target disagree")
    if bias is not None and bias.shape[0] != K:
        raise ValueError("bias must have one entry per row of R")
    grad = np.zeros(d, dtype=np.float32)
    z = np.empty(K, dtype=np.float64)
    cdef float[::1] gr = grad
    cdef double[::1] zv = z
    cdef double check = 0.0
    loss = softmax_step(d, &h[0], &gr[0], &R[0, 0], &bias[0] if bias is not None else NULL,
                        K, target, lr, &zv[0], &check)
    return loss, grad
