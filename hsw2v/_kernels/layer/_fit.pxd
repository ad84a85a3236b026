"""One example of the layer's supervised classifier: ``h = x W_in``, the wide root's softmax,
the path's step, then the input rows' step, by SGD or AdaGrad (inline, for ``_layer``).

Design note: see ``_layer``'s design notes B (a job's own copy of the wide root), C
(notation) and F (AdaGrad). ``FitView`` borrows the classifier's arrays (``FitTrainer`` fills
it once, every job reads it); ``fit_example`` is one example's step, ``adagrad_example`` its
AdaGrad form; ``root_copy`` / ``root_sync`` take and merge a job's copy of the wide root.
"""

from libc.math cimport sqrt, sqrtf
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy, memset

from hsw2v._kernels.layer._example_path cimport path_step
from hsw2v._kernels.math._path cimport softmax_step
from hsw2v._kernels.math._tree_view cimport TreeView, path_code, path_point
from hsw2v._kernels.math._vecops cimport hsw2v_axpy, hsw2v_dot

# AdaGrad's epsilon (design note F): keeps the first step finite when a row's gradient is 0
DEF ADAGRAD_EPS = 1e-10


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


cdef inline double adagrad_example(const FitView *v, int64_t i, float lr, float *h,
                                   float *grad_h, float *g) noexcept nogil:
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


cdef inline double fit_example(const FitView *v, int64_t i, float lr, float *h,
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


cdef inline void root_copy(const FitView *shared, float *mine, float *start) noexcept nogil:
    """A job's own copy of the wide root (rows, then bias), twice: ``mine`` to train and
    ``start`` to know later what the job changed (design note B)."""
    cdef int64_t rows = <int64_t>shared.K * shared.d
    memcpy(mine, shared.root_w, rows * sizeof(float))
    if shared.root_b != NULL:
        memcpy(mine + rows, shared.root_b, shared.K * sizeof(float))
    else:
        memset(mine + rows, 0, shared.K * sizeof(float))
    memcpy(start, mine, (rows + shared.K) * sizeof(float))


cdef inline void root_sync(FitView *shared, const float *mine, const float *start) noexcept nogil:
    """Add what the job changed in its copy of the wide root to the shared one."""
    cdef int64_t i, rows = <int64_t>shared.K * shared.d
    for i in range(rows):
        shared.root_w[i] += mine[i] - start[i]
    if shared.root_b != NULL:
        for i in range(shared.K):
            shared.root_b[i] += mine[rows + i] - start[rows + i]
