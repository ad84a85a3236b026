# The Python-callable twins of the nogil kernels of ``_inner.pyx`` (included; one module):
# each calls one inline routine on NumPy arrays, for the tests that check it against a NumPy
# reference (tests/test_kernels.py, test_kernel_twins.py, test_ns_pair.py, test_ns_shared.py).

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

def py_dot(const float[::1] x, const float[::1] y):
    """Twin of the dot product of the walks (``math/_vec.h``'s ``hsw2v_dot``)."""
    return hsw2v_dot(x.shape[0], &x[0], &y[0])


def py_axpy(float a, const float[::1] x, float[::1] y):
    """Twin of y := a*x + y of the walks (``math/_vec.h``'s ``hsw2v_axpy``), in place on ``y``."""
    hsw2v_axpy(x.shape[0], a, &x[0], &y[0])


def py_neg_log_sigmoid_sum(const float[::1] y):
    """sum_i -log sigmoid(y[i]) in float64, as the training walks tally their loss (math/_loss.h:
    eight float32 terms at a time); twin of ``numpy.logaddexp(0, -y).sum()``."""
    if y.shape[0] == 0:
        return 0.0
    return neg_log_sigmoid_sum(&y[0], <int>y.shape[0])


def py_job_alpha(float alpha0, float alpha1, int64_t i, int64_t total):
    """Twin of the rate at kept token ``i`` of a job (``_rates.job_alpha``, compiled here with
    this level's flags, as the job loop runs it)."""
    if total <= 0 or not 0 <= i <= total:
        raise ValueError(f"need 0 <= i <= total and total > 0, got i={i}, total={total}")
    return job_alpha(alpha0, alpha1, i, total)


def py_sigmoid(float f):
    """Twin of the table sigmoid."""
    return sigmoid(f)


def py_sigmoid_residual(int bit, float f):
    """Twin of ``label - sigmoid(f)`` from the stored differences (``hsw2v_sigmoid_residual``,
    skip-gram's window block), for a node's code bit (0 or 1; label = 1 - bit)."""
    if bit not in (0, 1):
        raise ValueError(f"a code bit is 0 or 1, got {bit}")
    return sigmoid_residual(&SIGMOID, SIGMOID.residual[bit], <float>(1 - bit), f)


def py_node_coef(double label, double s, float alpha, bint round_residual):
    """Twin of the node's coefficient ``alpha * (label - s)`` (``_path.node_coef``, every
    walk's): float64 rounded once, or with ``round_residual`` the residual rounded to float32
    first."""
    return node_coef(label, s, alpha, round_residual)


def py_hs_path(const float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
               const int32_t[::1] point, float alpha):
    """Twin of Word2Vec's reference walk (``hs_path``: the reference step with the table
    sigmoid and ``math/_vec.h``'s loops): updates ``syn1`` in place, returns (work, -log P)."""
    work = np.empty(h.shape[0], dtype=np.float32)
    return work, twin_hs(hs_path_reference, h, syn1, code, point, alpha, work)


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


cdef int ahead_rows(float[:, ::1] matrix, ahead, str name, float ***rows) except -1:
    """The row pointers of a twin's ``ahead`` ids (-1: a NULL entry) into ``rows[0]``, for
    the walks' prefetch (freed by the caller), and their number; NULL and 0 for None. A
    ValueError names a row that ``matrix`` lacks."""
    cdef Py_ssize_t j, n
    cdef float **out
    rows[0] = NULL
    if ahead is None:
        return 0
    ids = [int(i) for i in ahead]
    n = len(ids)
    for i in ids:
        if not -1 <= i < matrix.shape[0]:
            raise ValueError(f"{i} is not a row of {name} (0..{matrix.shape[0] - 1}) nor -1")
    out = <float **>malloc(max(n, 1) * sizeof(float *))
    if out == NULL:
        raise MemoryError()
    for j in range(n):
        out[j] = NULL if ids[j] < 0 else &matrix[ids[j], 0]
    rows[0] = out
    return n


def py_hs_path_fused(float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
                     const int32_t[::1] point, float alpha, bint apply_to_h=False):
    """Twin of the fused path routine: updates ``syn1`` (and ``h`` when ``apply_to_h``) in
    place, returns (work, -log P); with ``apply_to_h`` the last node's share of ``work`` goes
    to ``h`` only."""
    work = np.empty(h.shape[0], dtype=np.float32)
    cdef float[::1] w = work
    cdef float **rows = walk_rows(syn1, point, code.shape[0], h.shape[0], "syn1")
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


def input_rows_args(int d, bint into_h, syn0, contexts, lock):
    """The input rows a twin sends a step's error to, checked: ``(syn0, contexts, locks)``,
    with ``into_h`` skip-gram's one row (``h``; syn0 and contexts None), with ``contexts``
    CBOW's window (rows of ``syn0``, repeats allowed); ``locks`` one float32 factor per row
    (default 1), None when there are none."""
    if into_h and contexts is not None:
        raise ValueError("give into_h (skip-gram) or contexts (CBOW), not both")
    if into_h:
        nctx = 1
        syn0 = contexts = None
    elif contexts is not None:
        if syn0 is None:
            raise ValueError("contexts are rows of syn0: give syn0 too")
        contexts = np.ascontiguousarray(contexts, dtype=np.int32)
        nctx = contexts.shape[0]
        if syn0.shape[1] != d:
            raise ValueError("syn0 and h differ in vector size")
        for k in range(nctx):
            if not 0 <= contexts[k] < syn0.shape[0]:
                raise ValueError(f"context {contexts[k]} is not a row of syn0")
    else:
        return None, None, None
    locks = np.ones(nctx, dtype=np.float32)
    if lock is not None:
        given = np.asarray(lock, dtype=np.float32).reshape(-1)
        if given.size != nctx:
            raise ValueError("lock needs one factor per input row")
        locks[:] = given
    return syn0, contexts, locks


cdef float **input_row_pointers(float *h, bint into_h, syn0, contexts, int nctx) except NULL:
    """The rows of ``input_rows_args`` as pointers, for a twin's kernel call: ``h`` itself with
    ``into_h``, else ``syn0[contexts[c]]``; at least one slot (none used when ``nctx`` is 0).
    The caller frees it."""
    cdef float **ctx = <float **>malloc(max(nctx, 1) * sizeof(float *))
    cdef float[:, ::1] xv
    cdef const int32_t[::1] cv
    cdef int k
    if ctx == NULL:
        raise MemoryError()
    if into_h:
        ctx[0] = h
    elif nctx:
        xv, cv = syn0, contexts
        for k in range(nctx):
            ctx[k] = &xv[cv[k], 0]
    return ctx


def py_ns_path(float[::1] h, float[:, ::1] syn1neg, const int32_t[::1] negs,
               float alpha, str walk="fused", ahead=None, bint into_h=False, syn0=None,
               contexts=None, lock=None, float scale=1.0):
    """Twin of the negative-sampling walk ``walk`` for given words (``negs[0]`` the
    target, the rest negatives): "fused" (and "window") the fused walk ``ns_path_fused``,
    "reference" the reference step (``ns_path``); the benchmark-only "loop" and "blas" are
    ``_bench_walks.py_ns_path``'s. Updates ``syn1neg`` in place, returns (work, loss).
    ``ahead``: rows of ``syn1neg`` (-1: none) the fused walk prefetches one per word, as
    training asks for the next set's rows (a hint: no effect on the results).

    The fused walk can also take the step after it, as training does: the input rows get
    ``+= lock[c] * scale * work`` in order, fused into the last word's update, with
    ``into_h`` skip-gram's context row (``h`` itself), with ``contexts`` CBOW's window (rows
    of ``syn0``; ``input_rows_args``). Then ``work`` is None when that step was fused, and
    the walk's work when it was not (the last word's coefficient 0: the caller's step)."""
    if walk in BENCH_WALKS:
        raise ValueError(bench_walks_missing(walk))
    if walk not in WALKS:
        raise ValueError(f"walk must be one of {sorted(WALKS)}, got {walk!r}")
    cdef int d = h.shape[0]
    X, cw, locks = input_rows_args(d, into_h, syn0, contexts, lock)
    work = np.empty(d, dtype=np.float32)
    if WALKS[walk] == WALK_REFERENCE:
        if locks is not None:
            raise ValueError("the reference walk returns work; its caller takes the next step")
        return work, twin_ns(ns_path_reference, h, syn1neg, negs, alpha, work)
    cdef float[::1] w = work
    cdef float[::1] lk
    cdef int nctx = 0 if locks is None else locks.shape[0]
    if nctx:
        lk = locks
    cdef double check = 0.0
    cdef bint spread = False
    cdef hsw2v_loss_acc tally
    loss_init(&tally)
    cdef float **rows = walk_rows(syn1neg, negs, negs.shape[0], d, "syn1neg")
    cdef float **pf = NULL
    cdef float **ctx = NULL
    cdef int n_pf = 0
    try:
        ctx = input_row_pointers(&h[0], into_h, X, cw, nctx)
        n_pf = ahead_rows(syn1neg, ahead, "syn1neg", &pf)
        spread = ns_path_fused(d, &h[0], &w[0], rows, negs.shape[0], alpha, &tally, &check,
                               pf, n_pf, ctx, &lk[0] if nctx else NULL, nctx, scale)
    finally:
        free(rows)
        free(pf)
        free(ctx)
    return (None if spread else work), loss_total(&tally)


def py_ns_pair_block(float[::1] h, float[:, ::1] syn1neg, const int32_t[::1] negs,
                     float alpha, bint into_h=False, syn0=None, contexts=None, lock=None,
                     float scale=1.0):
    """Twin of the two-pass negative-sampling step (``_ns_pair.ns_pair_block``) for given
    words (``negs[0]`` the target, the rest negatives; pairwise different). Updates
    ``syn1neg`` in place, and the input rows, which get ``+= lock[c] * scale * work`` in the
    update pass, in order: with ``into_h`` skip-gram's one row, ``h`` itself (the context
    row); with ``contexts`` CBOW's window, the rows ``syn0[contexts[c]]`` (a repeated context
    is the same row twice). ``lock``: one factor per input row (default 1). Returns ``(work,
    loss, check)``, ``work`` None when the error went into input rows."""
    cdef int count = negs.shape[0], d = h.shape[0]
    X, cw, locks = input_rows_args(d, into_h, syn0, contexts, lock)
    cdef int nctx = 0 if locks is None else locks.shape[0]
    cdef float[::1] lk
    if nctx:
        lk = locks
    work = np.zeros(d, dtype=np.float32)
    scratch = np.empty(2 * count, dtype=np.float32)
    cdef float[::1] w = work
    cdef float[::1] sv = scratch
    cdef double check = 0.0
    cdef hsw2v_loss_acc tally
    loss_init(&tally)
    cdef float **rows = walk_rows(syn1neg, negs, count, d, "syn1neg")  # checks negs
    cdef float **live = <float **>malloc(count * sizeof(float *))
    cdef float **ctx = NULL
    try:
        if rows == NULL or live == NULL:
            raise MemoryError()
        if not rows_distinct(rows, count):
            raise ValueError("the block takes pairwise different words; a set with a repeated "
                             "word is walked word by word (py_ns_path)")
        ctx = input_row_pointers(&h[0], into_h, X, cw, nctx)
        ns_pair_block(d, &h[0], rows, count, alpha, ctx, &lk[0] if nctx else NULL, nctx,
                      scale, &w[0], &sv[0], &sv[count], live, &tally, &check)
    finally:
        free(rows)
        free(live)
        free(ctx)
    return (None if nctx else work), loss_total(&tally), check


def py_rows_sum(const float[:, ::1] rows, const int32_t[::1] which, float scale=1.0):
    """Twin of CBOW's one-pass hidden vector (``train/_ns_pair.h``'s ``hsw2v_rows_sum``): the sum
    of ``rows[which[c]]`` in order (repeats allowed), times ``scale`` when it is not 1."""
    cdef int count = which.shape[0], d = rows.shape[1], c
    if count < 1:
        raise ValueError("which needs at least one row")
    for c in range(count):
        if not 0 <= which[c] < rows.shape[0]:
            raise ValueError(f"row {which[c]} is not a row of rows")
    out = np.empty(d, dtype=np.float32)
    cdef float[::1] o = out
    cdef float **ptrs = <float **>malloc(count * sizeof(float *))
    if ptrs == NULL:
        raise MemoryError()
    for c in range(count):
        ptrs[c] = <float *>&rows[which[c], 0]
    hsw2v_rows_sum(d, ptrs, count, scale, &o[0])
    free(ptrs)
    return out


def py_ns_shared_block(float[:, ::1] syn0, const int32_t[::1] contexts,
                       float[:, ::1] syn1neg, const int32_t[::1] negs, float alpha,
                       lockf=None):
    """Twin of the shared-negatives step (``_ns_shared.ns_shared_block``): the syn0 rows of
    ``contexts`` (window order, repeats allowed) against the syn1neg rows of ``negs``
    (target first, then the negatives; repeats allowed), both stepped in place; ``lockf``
    (float32, one factor per context) scales each context's step. Returns ``(loss,
    check)``: the block's -log-likelihood and the sum of its scores."""
    cdef int m = contexts.shape[0], count = negs.shape[0], d = syn0.shape[1], c
    if m < 1 or count < 1:
        raise ValueError("the block needs at least one context and the target")
    if syn1neg.shape[1] != d:
        raise ValueError("syn0 and syn1neg differ in vector size")
    if min(contexts) < 0 or max(contexts) >= syn0.shape[0]:
        raise ValueError("a context is not a row of syn0")
    if min(negs) < 0 or max(negs) >= syn1neg.shape[0]:
        raise ValueError("a word of negs is not a row of syn1neg")
    cdef const float[::1] lock
    if lockf is not None:
        lock = np.ascontiguousarray(lockf, dtype=np.float32)
        if lock.shape[0] != m:
            raise ValueError("lockf needs one factor per context")
    H = np.empty(m, dtype=np.uintp)
    O = np.empty(count, dtype=np.uintp)
    scratch = np.empty(2 * count, dtype=np.float32)
    cdef float[::1] sv = scratch
    cdef float **hp = <float **>malloc(m * sizeof(float *))
    cdef float **op = <float **>malloc(count * sizeof(float *))
    cdef double check = 0.0, loss
    if hp == NULL or op == NULL:
        free(hp)
        free(op)
        raise MemoryError()
    for c in range(m):
        hp[c] = &syn0[contexts[c], 0]
    for c in range(count):
        op[c] = &syn1neg[negs[c], 0]
    try:
        loss = ns_shared_block(d, m, hp, &lock[0] if lockf is not None else NULL, op, count,
                               alpha, &SIGMOID, &sv[0], True, &check)
    finally:
        free(hp)
        free(op)
    return loss, check
