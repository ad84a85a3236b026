# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The transportation problem between two small histograms, solved exactly by the primal
network simplex method (the earth mover's distance of :mod:`hsw2v.keyedvectors._wmd`).

Design note
-----------
A. The method. Dantzig's primal simplex specialised to networks, as written in Ahuja,
   Magnanti & Orlin, "Network Flows" (1993), ch. 11: a basis is a spanning tree of the
   network, node potentials make every tree arc's reduced cost ``c - pi(tail) + pi(head)``
   zero, an arc with a negative reduced cost enters, the cycle it closes carries the most
   flow it can, and one blocking arc of that cycle leaves. The network: supply node ``i``
   (weight ``a_i``), demand node ``n1 + j`` (weight ``b_j``), arc ``i -> n1 + j`` of cost
   ``C[i, j]`` (index ``i * n2 + j``), and an artificial root ``R`` joined to every node by
   an artificial arc of cost ``M`` (a "big M" start, as ch. 11.5 does): ``i -> R`` carries
   ``a_i``, ``R -> n1 + j`` carries ``b_j`` (``n1 + j -> R`` when ``b_j = 0``). ``M = (N + 1)
   max |C|`` exceeds the cost of any path of real arcs, so an optimum moves no flow through
   ``R`` when the two weights have the same sum.

B. Degeneracy. The start is a strongly feasible tree (every zero-flow arc points toward the
   root), and the leaving arc is the last blocking arc met when the cycle is walked along
   the entering arc's direction from its apex (ch. 11.5): every tree stays strongly
   feasible, and no basis repeats, so the method ends without cycling on ties and zero
   weights. Flows that fall to zero are set to exactly 0.0 (``x - theta`` with ``theta <= x``
   is never negative in IEEE arithmetic).

C. Pricing. Block search (ch. 11.5, "candidate list"): arcs are scanned a block of about
   ``sqrt(n1 n2)`` arcs (whole rows of ``C``) at a time from where the last search stopped,
   and the most negative reduced cost of the first block that has one enters. An arc
   enters only below ``-eps``, ``eps`` a few units in the last place of ``M`` (the rounding of
   the potentials); at the end every reduced cost is at least ``-eps``, so the objective is
   within ``eps`` (times the total weight, 1) of the optimum.

D. The tree. ``parent``, ``pred`` (the arc to the parent), ``up`` (1 when the node is that
   arc's tail), ``depth``, ``pi`` and ``flow`` (on the arc to the parent) per node; the tree
   arcs of each node in a linked list (``head`` per node, ``ent_arc`` / ``ent_next`` from a
   pool of ``2 N`` entries: a tree has ``N - 1`` arcs). A pivot removes the leaving arc, which
   cuts off the subtree below it, and hangs that subtree again from the entering arc: the
   flows on the path from the entering arc's end up to the leaving arc move one node down
   (each arc of that path becomes the parent arc of the node that was above it), and a walk
   over the subtree alone resets its parents, depths and potentials. Only tree arcs carry
   flow, so memory is O(N) beside the cost matrix (an ``N x N`` adjacency array and a flow
   per arc took 2.5 GB at 10,000 words per document).

E. What runs without the GIL: the whole solve, on arrays the caller checked (finite costs,
   non-negative finite weights with equal sums: :func:`hsw2v.keyedvectors._wmd.transport_cost`).
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport fabs, sqrt
from libc.stdlib cimport free, malloc

cnp.import_array()


cdef struct Tree:
    int n1
    int n2
    int nn              # nodes: n1 + n2 + 1 (the root last)
    int root
    double *flow        # per node: the flow on its arc to the parent (pred)
    int *parent
    int *pred
    char *up
    int *depth
    double *pi
    int *head           # per node: its first tree-arc entry, or -1
    int *ent_arc        # per entry (2 nn): a tree arc
    int *ent_next       # per entry: the node's next entry, or -1 (free list: the next free)
    int free_ent


cdef inline double arc_cost(const double *cost, int n12, double big, int arc) noexcept nogil:
    return cost[arc] if arc < n12 else big


cdef inline int other_end(Tree *t, int arc, int v) noexcept nogil:
    """The end of ``arc`` that is not ``v``."""
    cdef int n12 = t.n1 * t.n2, i, j
    if arc < n12:
        i = arc // t.n2
        j = t.n1 + arc % t.n2
        return j if v == i else i
    i = arc - n12
    return t.root if v == i else i


cdef inline bint tail_is(Tree *t, int arc, int v, const char *art_up) noexcept nogil:
    """Whether ``v`` is the tail of ``arc``."""
    cdef int n12 = t.n1 * t.n2
    if arc < n12:
        return v == arc // t.n2
    return (v != t.root) == (art_up[arc - n12] != 0)


cdef inline void adj_remove(Tree *t, int v, int arc) noexcept nogil:
    cdef int e = t.head[v], prev = -1
    while e >= 0:
        if t.ent_arc[e] == arc:
            if prev < 0:
                t.head[v] = t.ent_next[e]
            else:
                t.ent_next[prev] = t.ent_next[e]
            t.ent_next[e] = t.free_ent
            t.free_ent = e
            return
        prev = e
        e = t.ent_next[e]


cdef inline void adj_add(Tree *t, int v, int arc) noexcept nogil:
    cdef int e = t.free_ent
    t.free_ent = t.ent_next[e]
    t.ent_arc[e] = arc
    t.ent_next[e] = t.head[v]
    t.head[v] = e


cdef int solve(
    int n1, int n2,
    const double *a,         # IN   supplies, n1 (>= 0)
    const double *b,         # IN   demands, n2 (>= 0), the same sum as a
    const double *cost,      # IN   n1 x n2, row-major, finite
    double *plan,            # OUT  n1 x n2 flows (zeroed here), or NULL
    double *value,           # OUT  sum of flow * cost over the real arcs
    long max_pivots,         # IN   give up after this many pivots (returns 1)
    long *pivots_out,        # OUT  pivots made
) noexcept nogil:
    """The network simplex (design note). Returns 0 at the optimum, 1 when it gave up after
    ``max_pivots`` pivots, -1 when memory ran out."""
    cdef int nn = n1 + n2 + 1, root = n1 + n2, n12 = n1 * n2
    cdef Tree t
    cdef char *art_up
    cdef double big, eps, maxc = 0.0, r, best, theta, c, carry, held
    cdef int i, j, v, x, y, k, l, s, tt, apex, enter, leave, leave_child, rows_per_block
    cdef int row_start, rows_done, block_rows, e, top
    cdef bint leave_on_l_side, forward
    cdef long pivots = 0
    cdef int *stack
    cdef const double *crow
    cdef double pi_i
    cdef int status = 0

    for i in range(n12):
        if fabs(cost[i]) > maxc:
            maxc = fabs(cost[i])
    if plan != NULL:
        for i in range(n12):
            plan[i] = 0.0
    value[0] = 0.0
    pivots_out[0] = 0
    if maxc == 0.0:
        if plan != NULL:  # any feasible plan: the north-west corner one
            northwest(n1, n2, a, b, plan)
        return 0
    big = (nn + 1) * maxc
    eps = 64.0 * 2.220446049250313e-16 * 2.0 * big

    t.n1, t.n2, t.nn, t.root = n1, n2, nn, root
    t.flow = <double *>malloc(nn * sizeof(double))
    t.parent = <int *>malloc(nn * sizeof(int))
    t.pred = <int *>malloc(nn * sizeof(int))
    t.up = <char *>malloc(nn)
    t.depth = <int *>malloc(nn * sizeof(int))
    t.pi = <double *>malloc(nn * sizeof(double))
    t.head = <int *>malloc(nn * sizeof(int))
    t.ent_arc = <int *>malloc(2 * nn * sizeof(int))
    t.ent_next = <int *>malloc(2 * nn * sizeof(int))
    art_up = <char *>malloc(nn)
    stack = <int *>malloc(nn * sizeof(int))
    if (t.flow == NULL or t.parent == NULL or t.pred == NULL
            or t.up == NULL or t.depth == NULL or t.pi == NULL or t.head == NULL
            or t.ent_arc == NULL or t.ent_next == NULL or art_up == NULL or stack == NULL):
        status = -1
    else:
        for e in range(2 * nn):  # every entry free
            t.ent_next[e] = e + 1 if e + 1 < 2 * nn else -1
        t.free_ent = 0
        # the strongly feasible start: every node hangs from the root by its artificial arc
        t.parent[root] = -1
        t.pred[root] = -1
        t.up[root] = 0
        t.depth[root] = 0
        t.pi[root] = 0.0
        t.flow[root] = 0.0
        t.head[root] = -1
        for v in range(n1 + n2):
            t.parent[v] = root
            t.pred[v] = n12 + v
            t.depth[v] = 1
            t.head[v] = -1
            if v < n1:
                art_up[v] = 1                  # v -> R, carries a_v
                t.flow[v] = a[v]
            else:
                art_up[v] = b[v - n1] == 0.0   # R -> v carries b (v -> R when b = 0)
                t.flow[v] = b[v - n1]
            t.up[v] = art_up[v]
            t.pi[v] = big if art_up[v] else -big
            adj_add(&t, v, n12 + v)
            adj_add(&t, root, n12 + v)

        rows_per_block = <int>(sqrt(<double>n12) / n2 + 0.999)
        if rows_per_block < 1:
            rows_per_block = 1
        row_start = 0
        while True:
            # pricing: the most negative reduced cost in the first block that has one
            best = -eps
            enter = -1
            rows_done = 0
            while rows_done < n1:
                block_rows = 0
                while block_rows < rows_per_block and rows_done < n1:
                    i = row_start
                    crow = cost + <Py_ssize_t>i * n2
                    pi_i = t.pi[i]
                    for j in range(n2):
                        r = crow[j] - pi_i + t.pi[n1 + j]
                        if r < best:
                            best = r
                            enter = i * n2 + j
                    row_start += 1
                    if row_start == n1:
                        row_start = 0
                    block_rows += 1
                    rows_done += 1
                if enter >= 0:
                    break
            if enter < 0:
                break  # every reduced cost >= -eps: optimal
            if pivots >= max_pivots:
                status = 1
                break
            pivots += 1

            # the cycle: k -> l, then up from l to the apex and down from the apex to k
            k = enter // n2
            l = n1 + enter % n2
            x, y = k, l
            while x != y:
                if t.depth[x] >= t.depth[y]:
                    x = t.parent[x]
                else:
                    y = t.parent[y]
            apex = x
            # the leaving arc: the last blocking arc met walking the cycle from the apex
            # along k -> l (design note B); k's side is walked upward, so its first minimum
            # (strict <) is its last one met, and l's side (<=) wins ties
            theta = 1e308
            leave_child = -1
            leave_on_l_side = False
            x = k
            while x != apex:
                if t.up[x] and t.flow[x] < theta:  # traversed against the arc
                    theta = t.flow[x]
                    leave_child = x
                x = t.parent[x]
            x = l
            while x != apex:
                if not t.up[x] and t.flow[x] <= theta:
                    theta = t.flow[x]
                    leave_child = x
                    leave_on_l_side = True
                x = t.parent[x]
            # push theta around the cycle
            if theta > 0.0:
                x = k
                while x != apex:
                    if t.up[x]:
                        t.flow[x] -= theta
                    else:
                        t.flow[x] += theta
                    x = t.parent[x]
                x = l
                while x != apex:
                    if t.up[x]:
                        t.flow[x] += theta
                    else:
                        t.flow[x] -= theta
                    x = t.parent[x]
            leave = t.pred[leave_child]
            # swap the arcs: the subtree under leave_child hangs again from the entering
            # arc's end outside it
            adj_remove(&t, leave_child, leave)
            adj_remove(&t, t.parent[leave_child], leave)
            adj_add(&t, k, enter)
            adj_add(&t, l, enter)
            if leave_on_l_side:
                s, tt = l, k
            else:
                s, tt = k, l
            # the path s .. leave_child turns over: each node's flow moves to the node above
            # it (design note D), s takes the entering arc's theta, leave's flow (0) goes
            x = s
            carry = theta
            while True:
                held = t.flow[x]
                t.flow[x] = carry
                if x == leave_child:
                    break
                carry = held
                x = t.parent[x]
            t.parent[s] = tt
            t.pred[s] = enter
            t.up[s] = s == k
            t.depth[s] = t.depth[tt] + 1
            c = cost[enter]
            t.pi[s] = t.pi[tt] + c if s == k else t.pi[tt] - c
            stack[0] = s
            top = 1
            while top > 0:
                top -= 1
                x = stack[top]
                e = t.head[x]
                while e >= 0:
                    v = t.ent_arc[e]
                    e = t.ent_next[e]
                    if v == t.pred[x]:
                        continue
                    y = other_end(&t, v, x)
                    t.parent[y] = x
                    t.pred[y] = v
                    t.up[y] = tail_is(&t, v, y, art_up)
                    t.depth[y] = t.depth[x] + 1
                    c = arc_cost(cost, n12, big, v)
                    t.pi[y] = t.pi[x] + c if t.up[y] else t.pi[x] - c
                    stack[top] = y
                    top += 1

        if status >= 0:
            for v in range(n1 + n2):  # the tree's real arcs carry every unit of flow
                enter = t.pred[v]
                if enter < n12 and t.flow[v] != 0.0:
                    value[0] += t.flow[v] * cost[enter]
                    if plan != NULL:
                        plan[enter] = t.flow[v]
    pivots_out[0] = pivots
    free(t.flow)
    free(t.parent)
    free(t.pred)
    free(t.up)
    free(t.depth)
    free(t.pi)
    free(t.head)
    free(t.ent_arc)
    free(t.ent_next)
    free(art_up)
    free(stack)
    return status


cdef void northwest(int n1, int n2, const double *a, const double *b, double *plan) noexcept nogil:
    """A feasible plan by the north-west corner rule (used when every cost is 0)."""
    cdef int i = 0, j = 0
    cdef double ra = a[0], rb = b[0], m
    while i < n1 and j < n2:
        m = ra if ra < rb else rb
        plan[<Py_ssize_t>i * n2 + j] = m
        ra -= m
        rb -= m
        if ra <= rb:
            i += 1
            if i < n1:
                ra = a[i]
        else:
            j += 1
            if j < n2:
                rb = b[j]


def network_simplex(
    const double[::1] a, const double[::1] b, const double[:, ::1] cost,
    bint return_plan=False, long max_pivots=-1,
):
    """The minimum of ``sum(T * cost)`` over plans ``T >= 0`` with row sums ``a`` and column
    sums ``b`` (the caller checks the input: finite costs, non-negative weights of equal
    sums; :func:`hsw2v.keyedvectors._wmd.transport_cost`). Returns ``(value, plan or None, pivots,
    optimal)``: ``optimal`` is False when ``max_pivots`` (default ``50 (n1 + n2)^2``) pivots
    were not enough.

    >>> network_simplex(np.array([0.5, 0.5]), np.array([1.0]), np.array([[1.0], [3.0]]))[0]
    2.0
    """
    cdef int n1 = a.shape[0], n2 = b.shape[0]
    if cost.shape[0] != n1 or cost.shape[1] != n2:
        raise ValueError(f"cost must be {n1} x {n2}, got {cost.shape[0]} x {cost.shape[1]}")
    if n1 < 1 or n2 < 1:
        raise ValueError("both weight vectors need at least one entry")
    if <long long>n1 * n2 + n1 + n2 + 1 >= 2**31 - 1:  # arc ids are C ints
        raise ValueError(
            f"a {n1} x {n2} transport problem has more than 2**31 arcs, beyond this solver: "
            "use fewer distinct words per document")
    cdef cnp.ndarray plan_arr = np.empty((n1 if return_plan else 0, n2 if return_plan else 0), np.float64)
    cdef double *plan = <double *>cnp.PyArray_DATA(plan_arr) if return_plan else NULL
    cdef double value = 0.0
    cdef long pivots = 0
    cdef int status
    if max_pivots < 0:
        max_pivots = 50 * <long>(n1 + n2) * (n1 + n2) + 100
    with nogil:
        status = solve(n1, n2, &a[0], &b[0], &cost[0, 0], plan, &value, max_pivots, &pivots)
    if status < 0:
        raise MemoryError("the transport problem's tree did not fit in memory")
    return value, (plan_arr if return_plan else None), pivots, status == 0
