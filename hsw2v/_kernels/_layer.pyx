# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernels of the standalone hierarchical-softmax layer (:mod:`hsw2v.layer`).

Design note
-----------
A. What runs without the GIL. Each public function here checks shapes and ranges with the GIL,
   then runs one nogil loop over a whole batch: ``path_batch`` (log-probabilities, gradients
   and the SGD step of a batch of paths), ``fill_log_proba`` (every class's log-probability
   from precomputed node scores) and ``FitTrainer.train_job`` (one job of a supervised
   classifier, run by the threads of :func:`hsw2v.running.epochs.run_epoch`). The best-first top-k
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
               of :mod:`hsw2v._kernels.math._path`); IN/OUT
   slot        int32 V: the root's child above each class; with a wide root, ``codes`` /
               ``points`` / ``lengths`` are the paths below that child (length 0 for a class
               that is a child of the root itself); IN
   ==========  =============================================================================

D. Exactness. The sigmoid is computed exactly in float64 (no table; the layer's gradients are
   checked against finite differences), and the loss is the exact ``-log sigmoid`` of
   ``math/_vec.h``. Dot products are float32 (``hsw2v_dot``), accumulated with several registers.

E. The gradient (Morin & Bengio 2005; Mikolov et al. 2013): with ``L = -sum_j log
   sigmoid(s_j f_j)``, ``dL/dh = sum_j g_j syn1[n_j]`` and ``dL/dsyn1[n_j] = g_j h``. The
   step itself is the one reference step of every kernel (``hs_step``,
   :mod:`hsw2v._kernels.math._path`), called with the exact sigmoid and the optional per-node
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
   come from :class:`hsw2v.running.schedule.Schedule`.

The inline nogil routines live in two modules this one cimports: ``layer/_example_path.pxd`` (one
example's path: ``path_step``, ``path_loss``, the top-down pass ``fill_row``, the bounds
check ``bad_path``) and ``layer/_fit.pxd`` (one example of the classifier: ``FitView``,
``fit_example`` and its AdaGrad form, a job's copy of the wide root). Every nogil routine has
a Python-callable twin (``py_*``) or is itself callable, and the tests compare them with
NumPy references.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

from hsw2v._kernels._rates cimport job_alpha
from hsw2v._kernels.layer._example_path cimport bad_path, fill_row, path_loss, path_step
from hsw2v._kernels.layer._fit cimport FitView, fit_example, root_copy, root_sync
from hsw2v._kernels.math._path cimport softmax_step
from hsw2v._kernels.math._tree_view cimport fill_tree_view, tree_fits
from hsw2v._kernels.math._vecops cimport hsw2v_axpy, neg_log_sigmoid
from hsw2v._kernels.math._vecops cimport sigmoid_exact  # exact, float64; NaN -> NaN


# --------------------------------------------------------------------------------------------
# A batch of paths: loss, gradient and step (one example's path: ``layer/_example_path.pxd``).
# --------------------------------------------------------------------------------------------

def _check_paths(Py_ssize_t V, const float[:, ::1] syn1, const uint8_t[:, ::1] codes,
                 const int32_t[:, ::1] points, const int32_t[::1] lengths, Py_ssize_t d):
    if (syn1.shape[0] != V - 1 or syn1.shape[1] != d
            or not tree_fits(codes, points, lengths, V) or d < 1 or V < 2):
        raise ValueError("inconsistent layer arrays (tree, weights and hidden size differ)")


def _refuse_bad_path(const int32_t[:, ::1] points, const int32_t[::1] lengths, Py_ssize_t c):
    cdef Py_ssize_t V = points.shape[0]
    raise ValueError(
        f"the tree's path of class {c} leaves the tree (length {lengths[c]}, nodes "
        f"{np.asarray(points[c, :max(0, min(lengths[c], points.shape[1]))]).tolist()}; "
        f"lengths must lie in [0, {points.shape[1]}] and nodes in [0, {V - 1})): the tree "
        "arrays were changed after the layer checked them; do not edit a layer's tree, "
        "build a new layer (HierarchicalSoftmax.from_paths) instead")


def _check_wide_root_arrays(Py_ssize_t V, Py_ssize_t d, const float[:, ::1] root_w,
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
    cdef Py_ssize_t bad_row = -1
    if B:
        with nogil:
            bad_row = bad_path(points, lengths, &y[0], B)
    if bad_row >= 0:
        _refuse_bad_path(points, lengths, y[bad_row])
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
    if not want_grad and not want_g:  # the loss alone: read the weights, never write them
        with nogil:
            for b in range(B):
                lo[b] = path_loss(&H[b, 0], &syn1[0, 0], b_ptr, &codes[y[b], 0],
                                  &points[y[b], 0], lengths[y[b]], d)
        return loss, grad
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
    cdef Py_ssize_t i
    cdef bint bad = False
    with nogil:  # every call: fill_row writes out[-1 - child] and node_lp[child] unchecked
        for i in range(n_inner):
            if (order[i] < 0 or order[i] >= n_inner
                    or children[i, 0] < -(n_inner + 1) or children[i, 0] >= n_inner
                    or children[i, 1] < -(n_inner + 1) or children[i, 1] >= n_inner):
                bad = True
    if bad:
        raise ValueError("the layer's child table or node order leaves the tree: its arrays "
                         "were changed after the layer checked them; build a new layer")
    with nogil:
        for b in range(B):
            fill_row(&S[b, 0], &LS[b, 0], &children[0, 0], &order[0], n_inner, &out[b, 0],
                     &node_lp[0])


# --------------------------------------------------------------------------------------------
# Supervised linear classifier: h = x W_in, hierarchical-softmax loss, Hogwild jobs (one
# example's step: ``layer/_fit.pxd``).
# --------------------------------------------------------------------------------------------

cdef class FitTrainer:
    """Borrows the classifier's arrays for the nogil job kernel; one instance serves all
    threads. Has the ``train_job`` signature :func:`hsw2v.running.epochs.run_epoch` expects, with
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
        _check_wide_root_arrays(V, W_in.shape[1], root_w, root_b, slot)
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
        cdef Py_ssize_t bad_class
        with nogil:
            bad_class = bad_path(points, lengths, NULL, V)
        if bad_class >= 0:
            _refuse_bad_path(points, lengths, bad_class)
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

def py_sigmoid_exact(double f):
    """Twin of ``sigmoid_exact`` (``math/_vec.h``): the exact float64 sigmoid of the layer's step
    (``_inner.py_sigmoid`` is the training kernel's table sigmoid)."""
    return sigmoid_exact(f)


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
    """Twin of ``softmax_step`` (:mod:`hsw2v._kernels.math._path`): returns ``(loss, grad_h)``;
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
