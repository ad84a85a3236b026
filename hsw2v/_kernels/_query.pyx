# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Query kernels of a trained hierarchical-softmax model: sentence scores and output-word
prediction. Nothing here writes to the model.

Design note
-----------
A. What runs without the GIL. ``Scorer.score_job`` takes one job (whole sentences already
   mapped to word ids, with their end offsets), releases the GIL and computes the
   log-probability of every sentence (``score_sentence``). ``top_leaves`` and
   ``leaf_log_probs`` release the GIL for a whole tree search. Python builds the jobs, the
   hidden vector of a prediction and the child table, and runs the threads
   (:mod:`hsw2v.scoring`); the nogil blocks see only pointers and integers.

B. What is shared. The weight matrices ``syn0`` and ``syn1``, the tree arrays and the child
   table are shared by all threads, read-only. Each call owns its scratch: the float64 hidden
   vector ``h``, the search heap or stack, and its output array.

C. Notation (as in :mod:`hsw2v._kernels._inner`; ``d`` = vector size, ``V`` = vocabulary size).

   ==========  =============================================================================
   syn0        input vectors, V x d float32 (``model.wv.vectors``); IN
   syn1        inner-node vectors, V x d float32 (rows 0..V-2 used); IN
   codes       uint8 V x L: bit taken at each step of a word's path, root first; IN
   points      int32 V x L: inner node (row of syn1) at each step, root first; IN
   children    int32 (V-1) x 2: ``children[n, b]`` is the node reached from inner node ``n``
               by bit ``b``; an inner node as its id (>= 0), leaf ``w`` as ``-1 - w``; IN
   root        the root inner node: ``V - 2`` in a freshly built tree; after
               ``build_vocab(update=True)`` it may be another (the one node that is nobody's
               child), so the search takes it as an argument
   h           hidden vector, float64, d entries (scratch)
   f           h . syn1[n]; ``sigmoid(f)`` = P(bit 0 at n), ``sigmoid(-f)`` = P(bit 1 at n)
   ==========  =============================================================================

D. Exactness. Every term is the exact ``log sigmoid(+-f)`` computed stably in float64
   (``neg_log_sigmoid``), with the dot products accumulated in float64: there is no sigmoid
   table and no skipped term, so a saturated node (|f| large) contributes its true, possibly
   very negative, log-probability where gensim/word2vec.c would add nothing.

E. Sentence scores (Taddy 2015, "Document Classification by Inversion of Distributed Language
   Representations", as in gensim's ``score_sentence_sg`` / ``score_sentence_cbow``): over a
   sentence's in-vocabulary tokens ``w_0..w_{n-1}``, with the full window (no random
   shrinking) and no subsampling,

   * skip-gram: ``sum_i sum_{0 < |j - i| <= window} log P(w_i | h = syn0[w_j])``, the path of
     the centre word ``w_i`` scored from each context word's input vector;
   * CBOW: ``sum_i log P(w_i | h)``, ``h`` the mean (``cbow_mean``) or sum of the context
     words' input vectors; a position with no context word scores its path with ``h = 0``
     (every node then contributes ``log 1/2``), as gensim does.

F. Output-word prediction is a best-first search of the tree (``best_first``): a max-heap
   ordered by the log-probability of the path from the root to each frontier node. A path's
   log-probability only falls going down (every step adds ``log sigmoid <= 0``), so the first
   ``n`` leaves popped are exactly the ``n`` most probable words, after expanding at most the
   inner nodes whose path probability beats the n-th word's.

Every nogil routine has a Python-callable twin at the bottom of this file (``py_*``), which
the tests compare with NumPy references.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

# The loss-only walk of the reference step (``math/_path.pxd``) with a float64 hidden vector, and
# the one node loss -log P(bit | f) the search adds up.
from hsw2v._kernels.math._path cimport hs_node_nll, hs_path_nll
from hsw2v._kernels.math._path cimport plain_dot as dot_df  # float64 h: float64 sums
from hsw2v._kernels.math._tree_view cimport TreeView, fill_tree_view, path_code, path_point, tree_fits
from hsw2v._kernels.math._vecops cimport neg_log_sigmoid  # -log(sigmoid(x)), exact; NaN -> NaN


cdef inline double path_log_prob(
    const double *h,         # IN  hidden vector, d doubles
    const float *syn1,       # IN  inner-node vectors
    const uint8_t *code,     # IN  bits along the path, root first
    const int32_t *point,    # IN  inner nodes along the path, root first
    int length,              # IN  path length
    int d,                   # IN  vector size
) noexcept nogil:
    """log P(word | h) along one path, exact (``_path.hs_path_nll``, float64 ``h``)."""
    return -hs_path_nll(h, syn1, code, point, length, d)


# --------------------------------------------------------------------------------------------
# Sentence scores
# --------------------------------------------------------------------------------------------

cdef struct ScoreView:
    const float *syn0
    const float *syn1
    TreeView tree
    int d
    int window
    bint sg
    bint cbow_mean


cdef double score_sentence(const ScoreView *m, const int32_t *ids, int64_t n,
                           double *h) noexcept nogil:
    """log-probability of one sentence of ``n`` word ids (design note E); ``h`` is scratch."""
    cdef int64_t i, j, lo, hi
    cdef int k, count
    cdef int d = m.d
    cdef int32_t w
    cdef const float *row
    cdef const uint8_t *code
    cdef const int32_t *point
    cdef double total = 0.0
    for i in range(n):
        w = ids[i]
        code = path_code(&m.tree, w)
        point = path_point(&m.tree, w)
        lo = i - m.window
        if lo < 0:
            lo = 0
        hi = i + m.window + 1
        if hi > n:
            hi = n
        if m.sg:
            for j in range(lo, hi):
                if j == i:
                    continue
                row = m.syn0 + <int64_t>ids[j] * d
                for k in range(d):
                    h[k] = row[k]
                total += path_log_prob(h, m.syn1, code, point, m.tree.lengths[w], d)
        else:
            memset(h, 0, d * sizeof(double))
            count = 0
            for j in range(lo, hi):
                if j == i:
                    continue
                row = m.syn0 + <int64_t>ids[j] * d
                for k in range(d):
                    h[k] += row[k]
                count += 1
            if m.cbow_mean and count > 1:
                for k in range(d):
                    h[k] /= count
            total += path_log_prob(h, m.syn1, code, point, m.tree.lengths[w], d)
    return total


cdef class Scorer:
    """Holds a model's arrays (borrowed, read-only) for scoring sentences on any thread."""

    cdef ScoreView m
    cdef Py_ssize_t V
    cdef object _keep_alive

    def __init__(self, const float[:, ::1] syn0, const float[:, ::1] syn1,
                 const uint8_t[:, ::1] codes, const int32_t[:, ::1] points,
                 const int32_t[::1] lengths, int window, bint sg, bint cbow_mean=True):
        if window < 0:
            raise ValueError(f"window must be >= 0, got {window}")
        cdef Py_ssize_t V = syn0.shape[0]
        if (V < 1 or syn1.shape[0] < V - 1 or syn1.shape[1] != syn0.shape[1]
                or not tree_fits(codes, points, lengths, V) or syn0.shape[1] < 1):
            raise ValueError("inconsistent model arrays (vocabulary, tree and weights differ)")
        self._keep_alive = (syn0, syn1, codes, points, lengths)
        self.V = V
        self.m.syn0 = &syn0[0, 0]
        self.m.syn1 = &syn1[0, 0]
        fill_tree_view(&self.m.tree, codes, points, lengths)
        self.m.d = syn0.shape[1]
        self.m.window = window
        self.m.sg = sg
        self.m.cbow_mean = cbow_mean

    def score_job(self, const int32_t[::1] ids, const int64_t[::1] ends):
        """log-probability (float64) of each sentence of one job, computed without the GIL.

        ``ids``: word ids of the job's sentences, concatenated; ``ends[s]``: end offset of
        sentence ``s`` in ``ids``."""
        cdef Py_ssize_t n_ids = ids.shape[0], n_sentences = ends.shape[0], s, i
        cdef int64_t start = 0
        cdef bint bad = False
        out = np.zeros(n_sentences, dtype=np.float64)
        if n_ids == 0:
            return out
        cdef double[::1] o = out
        if ends[n_sentences - 1] != n_ids:
            raise ValueError("the last sentence end must equal the number of ids")
        with nogil:
            for i in range(n_ids):
                if ids[i] < 0 or ids[i] >= self.V:
                    bad = True
            for s in range(n_sentences):
                if ends[s] < start or ends[s] > n_ids:
                    bad = True
                start = ends[s]
        if bad:
            raise ValueError("word ids or sentence ends out of range")
        cdef double *h = <double *>malloc(self.m.d * sizeof(double))
        if h == NULL:
            raise MemoryError("could not allocate a scoring job's buffer")
        start = 0
        try:
            with nogil:
                for s in range(n_sentences):
                    o[s] = score_sentence(&self.m, &ids[0] + start, ends[s] - start, h)
                    start = ends[s]
        finally:
            free(h)
        return out


# --------------------------------------------------------------------------------------------
# Best-first search of the tree
# --------------------------------------------------------------------------------------------

cdef struct HeapItem:
    double logp
    int32_t node


cdef inline bint heap_before(HeapItem a, HeapItem b) noexcept nogil:
    """Order of the max-heap: higher log-probability first; ties by node id, for determinism."""
    return a.logp > b.logp or (a.logp == b.logp and a.node > b.node)


cdef inline void heap_push(HeapItem *heap, int64_t *size, double logp,
                           int32_t node) noexcept nogil:
    """Insert (logp, node) into the binary max-heap ``heap[0:size]``."""
    cdef int64_t i = size[0], parent
    cdef HeapItem item
    item.logp = logp
    item.node = node
    size[0] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not heap_before(item, heap[parent]):
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = item


cdef inline HeapItem heap_pop(HeapItem *heap, int64_t *size) noexcept nogil:
    """Remove and return the top of a non-empty binary max-heap ``heap[0:size]``."""
    cdef HeapItem top = heap[0], last
    cdef int64_t n, i = 0, child
    size[0] -= 1
    n = size[0]
    if n == 0:
        return top
    last = heap[n]
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and heap_before(heap[child + 1], heap[child]):
            child += 1
        if not heap_before(heap[child], last):
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top


cdef int64_t best_first(
    const double *h,          # IN  hidden vector, d doubles
    const float *syn1,        # IN  inner-node vectors
    const int32_t *children,  # IN  (V-1) x 2 child table (design note C)
    int32_t root,             # IN  root inner node
    int d,                    # IN  vector size
    int64_t n,                # IN  number of leaves wanted
    int32_t *out_words,       # OUT the n most probable words, most probable first
    double *out_logp,         # OUT their log-probabilities
    HeapItem *heap,           # scratch: room for ``capacity`` items (2 V - 1 + K suffice)
    int64_t capacity,
    const int32_t *starts,    # IN  K child-table entries to start from (a wide root's
    const double *start_logp, #     children) with their log-probabilities; NULL: root
    int64_t n_starts,         # IN  K
) noexcept nogil:
    """The ``n`` most probable leaves under ``h`` (design note F); returns how many were found
    (``min(n, V)`` for a well-formed tree; fewer if the heap would overflow, which only a
    malformed child table can cause). With ``starts``, the search begins from those subtrees
    (leaves as ``-1 - w``) at their log-probabilities instead of from ``root``."""
    cdef int64_t size = 0, found = 0, s
    cdef HeapItem item
    cdef double f
    if starts == NULL:
        heap_push(heap, &size, 0.0, root)
    else:
        for s in range(n_starts):
            heap_push(heap, &size, start_logp[s], starts[s])
    while found < n and size > 0:
        item = heap_pop(heap, &size)
        if item.node < 0:
            out_words[found] = -1 - item.node
            out_logp[found] = item.logp
            found += 1
            continue
        if size + 2 > capacity:
            break
        f = dot_df(d, h, syn1 + <int64_t>item.node * d)
        heap_push(heap, &size, item.logp - hs_node_nll(f, 0), children[2 * item.node])
        heap_push(heap, &size, item.logp - hs_node_nll(f, 1), children[2 * item.node + 1])
    return found


cdef int64_t all_leaves(const double *h, const float *syn1, const int32_t *children,
                        int32_t root, int d, double *out, int32_t *stack_node,
                        double *stack_logp, int64_t capacity) noexcept nogil:
    """log P(w | h) of every leaf w into ``out``, walking the tree top-down once (one dot
    product per inner node); the stacks hold ``capacity`` items (V suffice). Returns the
    number of leaves written (V for a tree over V leaves; NaN weights give NaN entries, not
    fewer), or -1 if the stacks would overflow (a malformed child table)."""
    cdef int64_t top = 0, expanded = 0, written = 0
    cdef int32_t node, child
    cdef int b
    cdef double f, lp, step
    stack_node[0] = root
    stack_logp[0] = 0.0
    top = 1
    while top > 0:
        expanded += 1
        if expanded >= capacity:  # a tree over V leaves has V - 1 inner nodes
            return -1
        top -= 1
        node = stack_node[top]
        lp = stack_logp[top]
        f = dot_df(d, h, syn1 + <int64_t>node * d)
        for b in range(2):
            step = hs_node_nll(f, b)
            child = children[2 * node + b]
            if child < 0:
                out[-1 - child] = lp - step
                written += 1
            else:
                if top >= capacity:
                    return -1
                stack_node[top] = child
                stack_logp[top] = lp - step
                top += 1
    return written


def _check_search(const double[::1] h, const float[:, ::1] syn1,
                  const int32_t[:, ::1] children):
    cdef Py_ssize_t n_inner = children.shape[0]
    if n_inner < 1 or children.shape[1] != 2:
        raise ValueError("the child table must be (V-1) x 2 with V >= 2")
    if syn1.shape[0] < n_inner or syn1.shape[1] != h.shape[0] or h.shape[0] < 1:
        raise ValueError("syn1, h and the child table disagree in shape")
    lo, hi = int(np.min(children)), int(np.max(children))
    if hi >= n_inner or lo < -(n_inner + 1):
        raise ValueError("the child table holds out-of-range entries")
    return n_inner + 1


def tree_root(const int32_t[:, ::1] children):
    """The root of a child table: the one inner node that is no node's child."""
    table = np.asarray(children)
    is_child = np.zeros(table.shape[0], dtype=bool)
    is_child[table[table >= 0]] = True
    roots = np.flatnonzero(~is_child)
    if len(roots) != 1:
        raise ValueError(f"the child table has {len(roots)} roots, not 1")
    return int(roots[0])


def _search_start(Py_ssize_t root, const int32_t[:, ::1] children):
    """The node a search starts from: ``root`` checked to be an inner node of ``children``,
    or the table's own root (:func:`tree_root`) when ``root`` is negative."""
    if root < 0:
        return tree_root(children)
    if root >= children.shape[0]:
        raise ValueError(f"root {root} is not an inner node of the child table")
    return root


def top_leaves(const double[::1] h, const float[:, ::1] syn1, const int32_t[:, ::1] children,
               Py_ssize_t n, Py_ssize_t root=-1):
    """The ``n`` most probable words under ``h`` by best-first search from ``root`` (by
    default the table's root, found by :func:`tree_root`): ``(words int32, log_probs
    float64)``, most probable first, ``min(n, V)`` of them."""
    cdef Py_ssize_t V = _check_search(h, syn1, children)
    root = _search_start(root, children)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if n > V:
        n = V
    words = np.empty(n, dtype=np.int32)
    logp = np.empty(n, dtype=np.float64)
    if n == 0:
        return words, logp
    cdef int32_t[::1] w = words
    cdef double[::1] lp = logp
    cdef int64_t found
    cdef HeapItem *heap = <HeapItem *>malloc((2 * V) * sizeof(HeapItem))
    if heap == NULL:
        raise MemoryError("could not allocate the search heap")
    try:
        with nogil:
            found = best_first(&h[0], &syn1[0, 0], &children[0, 0], <int32_t>root,
                               h.shape[0], n, &w[0], &lp[0], heap, 2 * V, NULL, NULL, 0)
    finally:
        free(heap)
    if found != n:
        raise ValueError("the child table is not a tree over V leaves")
    return words, logp


def top_leaves_batch(const double[:, ::1] H, const float[:, ::1] syn1,
                     const int32_t[:, ::1] children, int32_t root, Py_ssize_t n,
                     const int32_t[::1] starts=None, const double[:, ::1] start_logp=None):
    """``top_leaves`` for every row of ``H`` from any ``root``, in one nogil loop:
    ``(words int32 B x n, log_probs float64 B x n)``, each row most probable first. With
    ``starts`` (K child-table entries: the children of a wide root, disjoint subtrees that
    together hold every leaf) and ``start_logp`` (B x K, their log-probabilities per row),
    the search starts from those instead of from ``root``."""
    cdef Py_ssize_t V = children.shape[0] + 1, B = H.shape[0], b, K = 0
    cdef const int32_t *st = NULL
    if B == 0:
        return np.empty((0, n), dtype=np.int32), np.empty((0, n), dtype=np.float64)
    _check_search(H[0], syn1, children)
    if not 0 <= root < V - 1:
        raise ValueError(f"root must be an inner node in [0, {V - 2}], got {root}")
    if not 1 <= n <= V:
        raise ValueError(f"n must be in [1, {V}], got {n}")
    if (starts is None) != (start_logp is None):
        raise ValueError("give starts and start_logp together")
    if starts is not None:
        K = starts.shape[0]
        if K < 1 or start_logp.shape[0] != B or start_logp.shape[1] != K:
            raise ValueError(f"start_logp must be B x K = {B} x {K}")
        if int(np.min(starts)) < -V or int(np.max(starts)) >= V - 1:
            raise ValueError(f"starts must be inner nodes [0, {V - 1}) or leaves -1 - w")
        st = &starts[0]
    words = np.empty((B, n), dtype=np.int32)
    logp = np.empty((B, n), dtype=np.float64)
    cdef int32_t[:, ::1] w = words
    cdef double[:, ::1] lp = logp
    cdef bint bad = False
    cdef HeapItem *heap = <HeapItem *>malloc((2 * V + K) * sizeof(HeapItem))
    if heap == NULL:
        raise MemoryError("could not allocate the search heap")
    try:
        with nogil:
            for b in range(B):
                if best_first(&H[b, 0], &syn1[0, 0], &children[0, 0], root, H.shape[1], n,
                              &w[b, 0], &lp[b, 0], heap, 2 * V + K, st,
                              &start_logp[b, 0] if st != NULL else NULL, K) != n:
                    bad = True
                    break
    finally:
        free(heap)
    if bad:
        raise ValueError("the child table is not a tree over V leaves")
    return words, logp


def leaf_log_probs(const double[::1] h, const float[:, ::1] syn1,
                   const int32_t[:, ::1] children, Py_ssize_t root=-1):
    """log P(w | h) of every word w (float64, V entries), one top-down pass over the tree
    from ``root`` (by default the table's root, found by :func:`tree_root`)."""
    cdef Py_ssize_t V = _check_search(h, syn1, children)
    root = _search_start(root, children)
    # +inf marks a leaf not reached: a log-probability is <= 0 (or NaN from NaN weights)
    out = np.full(V, np.inf, dtype=np.float64)
    cdef double[::1] o = out
    cdef int64_t written
    cdef int32_t *stack_node = <int32_t *>malloc((V + 1) * sizeof(int32_t))
    cdef double *stack_logp = <double *>malloc((V + 1) * sizeof(double))
    if stack_node == NULL or stack_logp == NULL:
        free(stack_node)
        free(stack_logp)
        raise MemoryError("could not allocate the traversal stack")
    try:
        with nogil:
            written = all_leaves(&h[0], &syn1[0, 0], &children[0, 0], <int32_t>root,
                                 h.shape[0], &o[0], stack_node, stack_logp, V + 1)
    finally:
        free(stack_node)
        free(stack_logp)
    if written != V or np.isposinf(out).any():
        raise ValueError("the child table is not a tree over V leaves")
    return out


# --------------------------------------------------------------------------------------------
# Python-callable twins of the nogil routines, for tests.
# --------------------------------------------------------------------------------------------

def py_neg_log_sigmoid(double x):
    """Twin of ``neg_log_sigmoid``."""
    return neg_log_sigmoid(x)


def py_dot(const double[::1] h, const float[::1] row):
    """Twin of ``dot_df``."""
    return dot_df(h.shape[0], &h[0], &row[0])


def py_path_log_prob(const double[::1] h, const float[:, ::1] syn1, const uint8_t[::1] code,
                     const int32_t[::1] point):
    """Twin of ``path_log_prob``."""
    if code.shape[0] != point.shape[0] or code.shape[0] == 0:
        raise ValueError("code and point must be non-empty and of equal length")
    return path_log_prob(&h[0], &syn1[0, 0], &code[0], &point[0], code.shape[0], h.shape[0])


def py_score_sentence(Scorer scorer, const int32_t[::1] ids):
    """Twin of ``score_sentence``: the log-probability of one sentence of word ids."""
    return scorer.score_job(ids, np.array([ids.shape[0]], dtype=np.int64))[0]


def py_heap_order(const double[::1] logp, const int32_t[::1] nodes):
    """Twin of the heap: push every (logp, node), pop them all; returns the nodes in order."""
    cdef Py_ssize_t n = logp.shape[0], i
    cdef int64_t size = 0
    out = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef HeapItem *heap = <HeapItem *>malloc((n + 1) * sizeof(HeapItem))
    if heap == NULL:
        raise MemoryError
    for i in range(n):
        heap_push(heap, &size, logp[i], nodes[i])
    for i in range(n):
        o[i] = heap_pop(heap, &size).node
    free(heap)
    return out
