# Exact log-probabilities and the Python-callable twins of the training kernels' nogil
# routines, for the tests. Included by _inner.pyx.
#
# Design note: every nogil routine of _inner has a twin here (``py_*``); tests/test_kernels.py
# and tests/test_kernel_twins.py compare them with NumPy references and with the reference
# steps of _path.pxd. ``log_prob_all`` (log P(w | h) of every word, exact) serves the tests.

def log_prob_all(const float[::1] h, const float[:, ::1] syn1, const uint8_t[:, ::1] codes,
                 const int32_t[:, ::1] points, const int32_t[::1] lengths):
    """log P(w | h) for every word w of the tree, exact, in float64."""
    cdef Py_ssize_t V = codes.shape[0], w
    cdef int d = h.shape[0], L = codes.shape[1]
    out = np.empty(V, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for w in range(V):
            o[w] = -hs_path_nll(&h[0], &syn1[0, 0], &codes[w, 0], &points[w, 0],
                                      lengths[w], d)
    return out


# --------------------------------------------------------------------------------------------
# Python-callable twins of the nogil routines, for tests.
# --------------------------------------------------------------------------------------------

PRIMS = {"vec": PRIMS_VEC, "loop": PRIMS_LOOP, "blas": PRIMS_BLAS}


cdef int prims_of(prims, bint use_blas) except -1:
    """The twins' choice of vector loops: a name of ``PRIMS``, else BLAS or plain loops."""
    if prims is None:
        return PRIMS_BLAS if use_blas else PRIMS_LOOP
    if prims not in PRIMS:
        raise ValueError(f"prims must be one of {sorted(PRIMS)}, got {prims!r}")
    return PRIMS[prims]


def py_dot(const float[::1] x, const float[::1] y, bint use_blas=False, prims=None):
    """Twin of the dot product (plain loop, BLAS sdot, or ``prims`` by name)."""
    return pdot(prims_of(prims, use_blas), x.shape[0], &x[0], &y[0])


def py_axpy(float a, const float[::1] x, float[::1] y, bint use_blas=False, prims=None):
    """Twin of y := a*x + y, in place on ``y``."""
    paxpy(prims_of(prims, use_blas), x.shape[0], a, &x[0], &y[0])


def py_neg_log_sigmoid_sum(const float[::1] y):
    """sum_i -log sigmoid(y[i]) in float64, as the training walks tally their loss (_loss.h:
    eight float32 terms at a time); twin of ``numpy.logaddexp(0, -y).sum()``."""
    if y.shape[0] == 0:
        return 0.0
    return neg_log_sigmoid_sum(&y[0], <int>y.shape[0])


def py_sigmoid(float f):
    """Twin of the table sigmoid."""
    return sigmoid(f)


cdef float **path_rows(float[:, ::1] syn1, const int32_t[::1] point) except NULL:
    """Row pointers of a path, for the twins (freed by the caller)."""
    cdef float **rows = <float **>malloc(max(point.shape[0], 1) * sizeof(float *))
    cdef Py_ssize_t j
    if rows == NULL:
        raise MemoryError()
    for j in range(point.shape[0]):
        rows[j] = &syn1[point[j], 0]
    return rows


def py_hs_path(const float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
               const int32_t[::1] point, float alpha, bint use_blas=False, prims=None):
    """Twin of Word2Vec's reference walk (``hs_path``: the reference step with the table
    sigmoid; plain loops, BLAS, or ``prims`` by name): updates ``syn1`` in place, returns
    (work, -log P)."""
    cdef int p = prims_of(prims, use_blas)
    work = np.empty(h.shape[0], dtype=np.float32)
    cdef float[::1] w = work
    cdef float **rows = path_rows(syn1, point)
    cdef double check = 0.0
    try:
        loss = hs_path(&h[0], &w[0], rows, &code[0], code.shape[0], alpha, h.shape[0],
                       p, True, &check)
    finally:
        free(rows)
    return work, loss


def py_hs_step(const float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
               const int32_t[::1] point, float lr=0.0, float scale_h=1.0, bias=None,
               bint exact=True):
    """Twin of the reference step ``_path.hs_step`` in full: ``h``'s path over ``syn1`` rows
    ``point`` with bits ``code``, the exact float64 sigmoid (``exact``) or the table, the
    per-node ``bias`` (float32, one per row of syn1, stepped in place) or none. Steps
    ``syn1`` in place by ``-lr g h``; returns ``(loss, grad_h, g)`` with ``grad_h = scale_h
    dL/dh`` and ``g = dL/df`` per node."""
    cdef int d = h.shape[0], n = code.shape[0]
    if point.shape[0] != n or n == 0 or syn1.shape[1] != d:
        raise ValueError("code, point, h and syn1 disagree")
    if np.min(point) < 0 or np.max(point) >= syn1.shape[0]:
        raise ValueError("point out of range")
    cdef float[::1] b
    cdef float *bias_ptr = NULL
    if bias is not None:
        b = bias
        if b.shape[0] != syn1.shape[0]:
            raise ValueError("bias needs one entry per row of syn1")
        bias_ptr = &b[0]
    grad = np.zeros(d, dtype=np.float32)
    g = np.zeros(n, dtype=np.float32)
    cdef float[::1] gr = grad, gv = g
    cdef double check = 0.0
    loss = hs_step(d, &h[0], &gr[0], scale_h, NULL, &syn1[0, 0], &code[0], &point[0], n,
                   bias_ptr, lr, NULL if exact else &SIGMOID, NULL, NULL, True, &gv[0], &check)
    return loss, grad, g


def py_hs_path_fused(float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
                     const int32_t[::1] point, float alpha, bint apply_to_h=False):
    """Twin of the fused path routine: updates ``syn1`` (and ``h`` when ``apply_to_h``) in
    place, returns (work, -log P); with ``apply_to_h`` the last node's share of ``work`` goes
    to ``h`` only."""
    work = np.empty(h.shape[0], dtype=np.float32)
    cdef float[::1] w = work
    cdef float **rows = path_rows(syn1, point)
    cdef double check = 0.0
    cdef hsw2v_loss_acc tally
    loss_init(&tally)
    try:
        hs_path_fused(&h[0], &w[0], rows, &code[0], code.shape[0], alpha, h.shape[0],
                      &tally, apply_to_h, &check)
        loss = loss_total(&tally)
    finally:
        free(rows)
    return work, loss


def py_draw_negatives(const uint32_t[::1] cum_table, int32_t target, int negative,
                      uint64_t seed, bint bisect=False):
    """Twin of the negative draw: ``(negs, state)``, the target then the kept draws (int32)
    and the random stream's state after them, starting from ``seed`` (not 0). The kernels'
    draw (through the bucket index, ``neg_index``), or with ``bisect`` a bisection over the
    whole table (gensim's ``bisect_left``), the draw it must equal."""
    if cum_table.shape[0] < 1 or cum_table[cum_table.shape[0] - 1] == 0 or negative < 0:
        raise ValueError("cum_table must be non-empty with a positive last entry, negative >= 0")
    out = np.empty(negative + 1, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef uint64_t rng = seed if seed else 1
    cdef NegTable t
    cdef int count = 1, k
    cdef int32_t w
    index, shift = neg_index(cum_table)
    cdef const int32_t[::1] index_view = index
    t.cum = &cum_table[0]
    t.n = cum_table.shape[0]
    t.index = &index_view[0]
    t.shift = shift
    if not bisect:
        count = draw_negatives(&t, target, negative, &o[0], &rng)
    else:
        o[0] = target
        for k in range(negative):
            w = draw_word_bisect(&cum_table[0], cum_table.shape[0], &rng)
            if w != target:
                o[count] = w
                count += 1
    return out[:count], rng


def py_ns_path(const float[::1] h, float[:, ::1] syn1neg, const int32_t[::1] negs,
               float alpha, str kernel="fused"):
    """Twin of the negative-sampling walk of ``kernel`` for given words (``negs[0]`` the
    target, the rest negatives): "fused" (and "window") the fused walk ``ns_path_fused``,
    "reference" / "loop" / "blas" the reference step with those loops. Updates ``syn1neg``
    in place, returns (work, loss)."""
    if negs.shape[0] < 1:
        raise ValueError("negs needs at least the target")
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
    for k in range(negs.shape[0]):
        if not 0 <= negs[k] < syn1neg.shape[0]:
            raise ValueError(f"word {negs[k]} is not a row of syn1neg")
    work = np.empty(h.shape[0], dtype=np.float32)
    cdef float[::1] w = work
    cdef double check = 0.0
    cdef float **rows = path_rows(syn1neg, negs)
    cdef hsw2v_loss_acc tally
    loss_init(&tally)
    try:
        if KERNELS[kernel] in (KERNEL_FUSED, KERNEL_WINDOW):
            ns_path_fused(h.shape[0], &h[0], &w[0], rows, negs.shape[0], alpha, &tally, &check)
            loss = loss_total(&tally)
        else:
            loss = ns_path(h.shape[0], &h[0], &w[0], rows, negs.shape[0], alpha,
                           kernel_prims(KERNELS[kernel]), True, &check)
    finally:
        free(rows)
    return work, loss
