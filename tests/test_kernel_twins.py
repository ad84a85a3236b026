"""Every kernel variant against the one reference step (``hsw2v/_kernels/math/_path.pxd``).

The reference hierarchical-softmax step ``hs_step`` and negative-sampling step ``ns_step``
hold the gradient once, with one sign convention (``g = dL/df = sigmoid(f) - label``). Each
fast variant is an optimisation of them and is checked here as their twin: bit for bit where
the arithmetic is the same (the fused walk, the plain-loop / BLAS loops on integer-valued
data), to float rounding where it is reordered (the window walks, other loops).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import bench_walks, trainer_type, word2vec_trainer

from hsw2v._kernels import _inner, _layer, _query
from hsw2v.huffman import build_huffman_tree
from hsw2v.negative import make_cum_table

D = 37  # not a multiple of the SIMD width: loop tails run
ROOT = Path(__file__).resolve().parent.parent  # this checkout, for the tests' fresh interpreters


def path_case(seed, V=60, d=D):
    r = np.random.default_rng(seed)
    tree = build_huffman_tree(np.sort(r.integers(1, 1000, size=V))[::-1])
    syn1 = r.normal(0, 0.3, size=(V, d)).astype(np.float32)
    h = r.normal(0, 0.3, size=d).astype(np.float32)
    return r, tree, syn1, h


def numpy_step(h, syn1, code, point, lr, bias=None):
    """The reference step written out in float64 with the exact sigmoid: per node, in order,
    f = h . row (+ bias), g = sigmoid(f) - (1 - code), grad += g row, row -= lr g h."""
    syn1 = syn1.astype(np.float64).copy()
    bias = None if bias is None else bias.astype(np.float64).copy()
    h = h.astype(np.float64)
    grad, gs, loss = np.zeros_like(h), [], 0.0
    for c, p in zip(code, point, strict=True):
        f = syn1[p] @ h + (0.0 if bias is None else bias[p])
        loss += np.logaddexp(0.0, -(1 - 2.0 * c) * f)
        g = 1 / (1 + np.exp(-f)) - (1 - c)
        gs.append(g)
        grad += g * syn1[p]
        syn1[p] -= lr * g * h
        if bias is not None:
            bias[p] -= lr * g
    return loss, grad, np.array(gs), syn1, bias


@pytest.mark.parametrize("lr", [0.0, 0.05])
def test_reference_step_is_the_gradient_of_the_loss(lr):
    """Sign convention: g = dL/df, grad_h = dL/dh, rows step by -lr g h (NumPy, float64)."""
    _, tree, syn1, h = path_case(1)
    for word in (0, 17, 59):
        code, point = tree.code(word).copy(), tree.point(word).copy()
        loss0, grad0, g0, syn1_0, _ = numpy_step(h, syn1, code, point, lr)
        ours = syn1.copy()
        loss, grad, g = _inner.py_hs_step(h, ours, code, point, lr=lr)
        assert loss == pytest.approx(loss0, rel=1e-6)
        assert np.allclose(g, g0, atol=1e-6)
        assert np.allclose(grad, grad0, atol=1e-5)
        assert np.allclose(ours, syn1_0, atol=1e-6)
        syn1 = ours if lr else syn1


def test_reference_step_with_a_per_node_bias():
    """The optional bias (the layer's intercept): f = h . row + bias[node], bias -= lr g."""
    r, tree, syn1, h = path_case(2)
    bias = r.normal(0, 1.0, size=len(syn1)).astype(np.float32)
    code, point = tree.code(40).copy(), tree.point(40).copy()
    loss0, grad0, g0, syn1_0, bias0 = numpy_step(h, syn1, code, point, 0.1, bias)
    ours, ours_bias = syn1.copy(), bias.copy()
    loss, grad, g = _inner.py_hs_step(h, ours, code, point, lr=0.1, bias=ours_bias)
    assert loss == pytest.approx(loss0, rel=1e-6)
    assert np.allclose(g, g0, atol=1e-6) and np.allclose(grad, grad0, atol=1e-5)
    assert np.allclose(ours, syn1_0, atol=1e-6) and np.allclose(ours_bias, bias0, atol=1e-6)
    changed = np.flatnonzero(ours_bias != bias)
    assert sorted(changed.tolist()) == sorted(set(point.tolist()))
    # control: without the bias the loss is another
    assert _inner.py_hs_step(h, syn1.copy(), code, point)[0] != pytest.approx(loss0, rel=1e-3)


@pytest.mark.parametrize("lr", [0.0, 0.03])
def test_layer_path_step_is_the_reference_step_bit_for_bit(lr):
    """The layer's ``path_step`` (exact sigmoid, gradient of the loss, SGD step) gives the
    reference step's numbers exactly: it can call ``hs_step`` with no change of results."""
    _, tree, syn1, h = path_case(3)
    for word in (0, 5, 33, 59):
        code, point = tree.code(word).copy(), tree.point(word).copy()
        theirs, ours = syn1.copy(), syn1.copy()
        loss_l, grad_l, g_l = _layer.py_path_step(h, theirs, code, point, lr)
        loss_r, grad_r, g_r = _inner.py_hs_step(h, ours, code, point, lr=lr)
        assert loss_l == loss_r
        assert np.array_equal(grad_l, grad_r) and np.array_equal(g_l, g_r)
        assert np.array_equal(theirs, ours)


def test_word2vec_walk_is_the_reference_step_with_table_and_step_scale():
    """Word2Vec's walk (``hs_path``) is the reference step with the table sigmoid and
    ``scale_h = -alpha``: its work is -alpha dL/dh and its rows the same, bit for bit."""
    _, tree, syn1, h = path_case(4)
    code, point = tree.code(21).copy(), tree.point(21).copy()
    a, b = syn1.copy(), syn1.copy()
    work, loss = _inner.py_hs_path(h, a, code, point, 0.05)
    loss_r, grad_r, _ = _inner.py_hs_step(h, b, code, point, lr=0.05, scale_h=-0.05, exact=False)
    assert loss == loss_r and np.array_equal(work, grad_r) and np.array_equal(a, b)


@pytest.mark.parametrize("apply_to_h", [False, True])
def test_fused_walk_is_the_reference_bit_for_bit(apply_to_h):
    """``hs_path_fused`` (each update fused with the next dot product) against the reference
    walk with the same ``math/_vec.h`` loops: identical syn1 and work, the loss to 2e-7; with ``apply_to_h``
    (skip-gram without lock factors: ``h += work`` folded into the last node's pass) ``h``
    to one rounding of that add."""
    _, tree, syn1, h = path_case(5)
    for word in (0, 17, 59):
        code, point = tree.code(word).copy(), tree.point(word).copy()
        fused_syn1, ref_syn1 = syn1.copy(), syn1.copy()
        fused_h = h.copy()
        work_f, loss_f = _inner.py_hs_path_fused(fused_h, fused_syn1, code, point, 0.05, apply_to_h)
        work_r, loss_r = _inner.py_hs_path(h, ref_syn1, code, point, 0.05)
        assert loss_f == pytest.approx(loss_r, rel=2e-7)  # math/_loss.h's tally against libm's
        assert np.array_equal(fused_syn1, ref_syn1)
        if apply_to_h:  # h += work fused into the last node's pass: one add reassociated
            expected = h.copy()
            _inner.py_axpy(1.0, work_r, expected)
            assert np.allclose(fused_h, expected, rtol=0, atol=1e-6)
            assert not np.allclose(fused_h, h, atol=1e-4)  # control: h did move
        else:
            assert np.array_equal(work_f, work_r)


@pytest.mark.parametrize("prims", ["loop", "blas"])
def test_benchmark_loops_are_the_reference_to_rounding(prims):
    """The plain-loop and BLAS variants run the same reference step with other vector loops:
    the same numbers to float rounding (the dot products sum in another order)."""
    _, tree, syn1, h = path_case(6)
    code, point = tree.code(9).copy(), tree.point(9).copy()
    a, b = syn1.copy(), syn1.copy()
    work_a, loss_a = bench_walks().py_hs_path(h, a, code, point, 0.05, prims == "blas")
    work_b, loss_b = _inner.py_hs_path(h, b, code, point, 0.05)
    assert loss_a == pytest.approx(loss_b, rel=1e-6)
    assert np.allclose(work_a, work_b, atol=1e-7) and np.allclose(a, b, atol=1e-7)


def _twins():
    """Every walk twin with the rows it steps: ``(name, call(h, matrix, ids, code))``."""
    twins = [
        ("hs reference", lambda h, m, ids, code: _inner.py_hs_path(h, m, code, ids, 0.05)),
        ("hs fused", lambda h, m, ids, code: _inner.py_hs_path_fused(h, m, code, ids, 0.05)),
        ("ns fused", lambda h, m, ids, code: _inner.py_ns_path(h, m, ids, 0.05, "fused")),
        ("ns reference", lambda h, m, ids, code: _inner.py_ns_path(h, m, ids, 0.05, "reference")),
    ]
    try:
        walks = bench_walks()
    except pytest.skip.Exception:
        return twins
    return twins + [
        ("hs loop", lambda h, m, ids, code: walks.py_hs_path(h, m, code, ids, 0.05)),
        ("ns blas", lambda h, m, ids, code: walks.py_ns_path(h, m, ids, 0.05, "blas")),
    ]


@pytest.mark.parametrize(
    "ids, code, width, message",
    [
        ([0, 12], [0, 1], D, r"12 is not a row of syn1(neg)? \(0..11\)"),
        ([-1], [0], D, r"-1 is not a row"),
        ([], [], D, r"needs 1 or more rows"),
        ([0, 1], [0, 1], D + 1, rf"have {D + 1} entries, h has {D}"),
    ],
)
def test_every_twin_refuses_what_its_walk_cannot_index(ids, code, width, message):
    """The twins check what their walks would index blindly (``_walks.walk_rows``, one
    check for the twins of both modules): a clear ValueError, and no row is touched."""
    h = np.ones(D, dtype=np.float32)
    for name, call in _twins():
        matrix = np.zeros((12, width), dtype=np.float32)
        with pytest.raises(ValueError, match=message):
            call(h, matrix, np.array(ids, np.int32), np.array(code, np.uint8))
        assert not matrix.any(), name
    for name, call in _twins():
        if name.startswith("hs"):  # a path's bits and nodes must pair up
            with pytest.raises(ValueError, match="2 steps and 3 ids"):
                call(h, np.zeros((12, D), np.float32), np.arange(3, dtype=np.int32),
                     np.zeros(2, np.uint8))


def test_scoring_walk_is_the_reference_loss_in_float64():
    """The query kernels' loss-only walk (float64 hidden vector) against the reference step's
    loss (float32 dot products): the same log-probability to float32 rounding."""
    _, tree, syn1, h = path_case(7)
    for word in (0, 30, 59):
        code, point = tree.code(word).copy(), tree.point(word).copy()
        loss, _, _ = _inner.py_hs_step(h, syn1.copy(), code, point)
        log_p = _query.py_path_log_prob(h.astype(np.float64), syn1, code, point)
        assert -log_p == pytest.approx(loss, rel=1e-5)
        every = _inner.log_prob_all(h, syn1, tree.codes, tree.points, tree.lengths)
        assert every[word] == -loss  # the loss-only walk of the same float32 step


# ---------------------------------------------------------------- whole jobs, every variant


def job_case(
    sg, kernel, hs=True, negative=0, cbow_mean=True, lockf=None, d=D, spread=1.0, counts=None,
    **trainer_args,
):
    """One job on the default path (reduced windows, subsampling, falling alpha, repeated
    words) trained by ``kernel`` (more Trainer arguments in ``trainer_args``); returns the
    weights and the loss. ``spread`` scales the output rows (large: many dot products past
    the sigmoid table's range, whose coefficient is 0). ``counts``: the 40 words' counts,
    in falling order, that the Huffman tree is built from (random by default)."""
    r = np.random.default_rng(41 + sg)
    V = 40
    if counts is None:
        counts = np.sort(r.integers(1, 500, size=V))[::-1]
    tree = build_huffman_tree(counts)
    syn0 = r.uniform(-0.5, 0.5, size=(V, d)).astype(np.float32)
    syn1 = r.normal(0, 0.2 * spread, size=(V, d)).astype(np.float32)
    syn1neg = r.normal(0, 0.2 * spread, size=(V, d)).astype(np.float32) if negative else None
    cum_table = make_cum_table(np.sort(r.integers(1, 500, size=V))[::-1]) if negative else None
    sample_int = (np.linspace(0.125, 1.0, V) * (2**32 - 1)).astype(np.uint32)
    ids = r.integers(0, V, size=400).astype(np.int32)
    ends = np.array([1, 60, 61, 63, 250, 400], dtype=np.int64)
    trainer = word2vec_trainer(
        trainer_type(kernel),
        syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int, window=4, sg=sg,
        cbow_mean=cbow_mean, compute_loss=True, walk=kernel, hs=hs, negative=negative,
        syn1neg=syn1neg, cum_table=cum_table, lockf=lockf, **trainer_args,
    )  # fmt: skip
    out = syn1 if hs else syn1neg
    start = out.copy()
    kept, loss = trainer.train_job(ids, ends, 0.05, 0.001, 99)
    assert not np.allclose(out, start, atol=1e-3)  # the job did train: a tolerance means much
    return [w for w in (syn0, syn1, syn1neg) if w is not None], kept, loss


OBJECTIVES = [(True, 0), (False, 3), (True, 3)]
LOCKF = [None, np.linspace(0.0, 1.0, 40, dtype=np.float32)]


@pytest.mark.parametrize("lockf", LOCKF, ids=["no_lockf", "lockf"])
@pytest.mark.parametrize("hs,negative", OBJECTIVES)
@pytest.mark.parametrize("sg,cbow_mean", [(1, 1), (0, 1), (0, 0)])
def test_fused_job_is_the_reference_job_bit_for_bit(sg, cbow_mean, hs, negative, lockf):
    """The fused walk trains the reference's bits, except skip-gram hs without lock factors,
    where the context row's ``+= work`` is folded into the last node's pass (one add
    reassociated, then carried through the job): there to 1e-6. The loss: the fused walks
    tally it through ``math/_loss.h`` (float32 terms), the reference with libm per node: to 2e-7
    (tests/test_loss_tally.py)."""
    ref, kept_r, loss_r = job_case(sg, "reference", hs, negative, bool(cbow_mean), lockf)
    fused, kept_f, loss_f = job_case(sg, "fused", hs, negative, bool(cbow_mean), lockf)
    assert kept_f == kept_r
    if sg and hs and lockf is None:
        assert loss_f == pytest.approx(loss_r, rel=1e-6)
        for a, b in zip(fused, ref, strict=True):
            assert np.allclose(a, b, rtol=0, atol=1e-6)
        return
    assert loss_f == pytest.approx(loss_r, rel=2e-7)
    for a, b in zip(fused, ref, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("d", [300, 100, 50])
@pytest.mark.parametrize(
    "hs,negative,shared",
    [(h, n, False) for h, n in OBJECTIVES] + [(False, 3, True), (True, 3, True)],
)
def test_fused_cbow_job_is_the_reference_job_bit_for_bit_where_dot_products_saturate(
    d, hs, negative, shared
):
    """CBOW at the widths people train, with output rows large enough that many dot products
    fall past the sigmoid table (coefficient 0: the fused walk then takes the next dot
    product on its own, ``hsw2v_dot``, not in a fused pass), so that both ways of summing a
    dot product run. A dot product's tail (its last d mod 8 floats) must compile alike at
    every inlined call site: when it was a scalar loop, GCC 12 turned it into a vector
    reduction at some call sites of the avx512 level and not at others (reassociation is on,
    setup.py), and this check failed there (d=100); ``math/_vec.h`` now ends every dot product
    with one accumulator step and straight-line code ("Widths")."""
    extra = {"shared_negatives": True} if shared else {}
    runs = [
        job_case(0, kernel, hs, negative, True, None, d=d, spread=4.0, **extra)
        for kernel in ("reference", "fused")
    ]
    (ref, kept_r, _), (fused, kept_f, _) = runs
    assert kept_f == kept_r
    for a, b in zip(fused, ref, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("lockf", LOCKF, ids=["no_lockf", "lockf"])
@pytest.mark.parametrize("hs,negative", [(True, 0), (True, 3)])
@pytest.mark.parametrize("sg,cbow_mean", [(1, 1), (0, 1), (0, 0)])
def test_window_job_is_the_reference_job_to_rounding(sg, cbow_mean, hs, negative, lockf):
    """The 4-context block (skip-gram, hs) reorders sums (Gram terms), and CBOW's walk of one
    h in the block's phases rounds its coefficients in float32: the reference's updates to
    float rounding, the same kept tokens, the loss to 1e-6."""
    case = dict(hs=hs, negative=negative, cbow_mean=cbow_mean, lockf=lockf)
    ref, kept_r, loss_r = job_case(sg, "reference", **case)
    window, kept_w, loss_w = job_case(sg, "window", **case)
    assert kept_w == kept_r and loss_w == pytest.approx(loss_r, rel=1e-6)
    for a, b in zip(window, ref, strict=True):
        assert np.allclose(a, b, atol=2e-6)


@pytest.mark.parametrize("sg", [1, 0])
def test_window_job_walks_paths_longer_than_a_segment(sg):
    """Counts that halve from word to word make a Huffman tree of depth 39, so that most
    centres' paths cross the window block's segments of 32 nodes (the work rows carry the
    contexts' steps between segments): still the reference's updates to float rounding.
    Paths this long take steps large enough that rounding differences grow to about 7e-6
    over the job (as before segments existed); a step lost between segments moves rows
    by 1e-2 and more."""
    counts = 2 ** np.arange(39, -1, -1, dtype=np.int64)
    assert build_huffman_tree(counts).lengths.max() == 39
    ref, kept_r, loss_r = job_case(sg, "reference", counts=counts)
    window, kept_w, loss_w = job_case(sg, "window", counts=counts)
    assert kept_w == kept_r and loss_w == pytest.approx(loss_r, rel=1e-6)
    for a, b in zip(window, ref, strict=True):
        assert np.allclose(a, b, atol=2e-5)


@pytest.mark.parametrize("kernel", ["loop", "blas"])
@pytest.mark.parametrize("hs,negative", OBJECTIVES)
@pytest.mark.parametrize("sg", [0, 1])
def test_benchmark_variant_jobs_are_the_reference_job_to_rounding(sg, hs, negative, kernel):
    ref, kept_r, loss_r = job_case(sg, "reference", hs, negative)
    other, kept_o, loss_o = job_case(sg, kernel, hs, negative)
    assert kept_o == kept_r and loss_o == pytest.approx(loss_r, rel=1e-6)
    for a, b in zip(other, ref, strict=True):
        assert np.allclose(a, b, atol=2e-6)


# ---------------------------------------------------------------- negative sampling


@pytest.mark.parametrize(
    "counts",
    [
        [1],
        [5, 5, 5, 5],
        [10**9, 1, 1, 1, 1, 1, 1, 1],
        (3_000_000 / np.arange(1, 20_001) ** 1.07).astype(np.int64) + 1,
        np.ones(50_000, dtype=np.int64),
    ],
    ids=["one_word", "ties", "one_heavy_word", "zipf_20000", "uniform_50000"],
)
@pytest.mark.parametrize("domain", [2**31 - 1, 7, 1000])
def test_indexed_draw_is_the_bisection_draw(counts, domain):
    """The kernels' draw through the bucket index (``neg_index``) gives the same words as
    gensim's bisection over the whole cumulative table, for the same random stream."""
    table = make_cum_table(np.asarray(counts), 0.75, domain=domain)
    state = 7
    for target in (0, len(counts) - 1, 3):
        for _ in range(40):
            fast, state_f = _inner.py_draw_negatives(table, target, 25, state)
            slow, state_s = _inner.py_draw_negatives(table, target, 25, state, bisect=True)
            assert fast.tolist() == slow.tolist() and state_f == state_s
            state = state_f


def test_draw_index_bounds_every_bucket():
    """Each bucket's word range holds the first entry >= any number of the bucket."""
    table = make_cum_table(np.arange(3000, 0, -1), 0.75)
    index, shift = _inner.neg_index(table)
    assert len(index) == ((int(table[-1]) - 1) >> shift) + 2 and len(index) <= 2**13 + 1
    for k in range(len(index) - 1):
        for x in (k << shift, min((k + 1) << shift, int(table[-1])) - 1):
            word = int(np.searchsorted(table, x, side="left"))
            assert index[k] <= word <= index[k + 1]
    with pytest.raises(ValueError, match="positive last entry"):
        _inner.neg_index(np.zeros(3, dtype=np.uint32))


def test_fused_ns_walk_is_the_reference_bit_for_bit():
    """``ns_path_fused`` (each update fused with the next word's dot product) against the
    reference step with the same ``math/_vec.h`` loops: identical rows and work, also with a word
    drawn twice in a row (not fused: its second dot product sees the first update); the loss
    (``math/_loss.h``'s tally against libm's terms) to 2e-7."""
    r = np.random.default_rng(8)
    syn1neg = r.normal(0, 0.4, size=(30, D)).astype(np.float32)
    for negs in ([3, 7, 11, 7, 0], [29], [5, 5, 5, 1, 2, 2], [4, 9, 9, 4, 4, 9]):
        h = r.normal(0, 0.6, size=D).astype(np.float32)
        negs = np.array(negs, dtype=np.int32)
        a, b = syn1neg.copy(), syn1neg.copy()
        work_f, loss_f = _inner.py_ns_path(h, a, negs, 0.05, "fused")
        work_r, loss_r = _inner.py_ns_path(h, b, negs, 0.05, "reference")
        assert loss_f == pytest.approx(loss_r, rel=2e-7)
        assert np.array_equal(work_f, work_r) and np.array_equal(a, b)
        assert not np.array_equal(a, syn1neg)  # control: the rows did move


@pytest.mark.parametrize("d", (1, 4, 7, 8, 12, 16, 17, 33, 100, 300))
def test_fused_ns_walk_takes_its_callers_step_bit_for_bit(d):
    """The fused walk with the input rows' step folded into its last word's update (skip-gram:
    ``h += lock * work``, h being the context row; CBOW: ``row += lock * scale * work`` for
    each window row in order, a repeated context twice) against the walk that returns work
    and that step taken after it (``work *= scale``, then ``py_axpy`` per row): the same bits
    for rows, h and the window, with repeated words in the set and at the widths where the
    16-, 8- and 4-float steps and the scalar tail begin."""
    r = np.random.default_rng(d + 5)
    syn0 = r.normal(0, 0.5, size=(12, d)).astype(np.float32)
    syn1neg = r.normal(0, 0.4, size=(30, d)).astype(np.float32)
    contexts = np.array([3, 5, 3, 9, 0], dtype=np.int32)
    window_lock = np.array([1.0, 0.5, 1.0, 0.0, 1.0], dtype=np.float32)
    inv = np.float32(1.0) / np.float32(len(contexts))
    for negs in ([3, 7, 11, 7, 0], [29], [5, 5, 1], [4, 9, 9, 4, 4, 9]):
        negs = np.array(negs, dtype=np.int32)
        h = r.normal(0, 0.6, size=d).astype(np.float32)
        for lock in (1.0, 0.25):  # skip-gram: h is the context row
            a, b = syn1neg.copy(), syn1neg.copy()
            h_fused, h_after = h.copy(), h.copy()
            out, loss_f = _inner.py_ns_path(h_fused, a, negs, 0.05, into_h=True, lock=[lock])
            assert out is None
            work, loss_a = _inner.py_ns_path(h_after, b, negs, 0.05)
            _inner.py_axpy(lock, work, h_after)
            assert np.array_equal(a, b) and np.array_equal(h_fused, h_after), (d, negs, lock)
            assert loss_f == loss_a and not np.array_equal(h_fused, h)
        for scale in (np.float32(1.0), inv):  # CBOW: cbow_mean, and the sum's 1 / count
            a, b = syn1neg.copy(), syn1neg.copy()
            s0a, s0b = syn0.copy(), syn0.copy()
            out, _ = _inner.py_ns_path(
                h, a, negs, 0.05, syn0=s0a, contexts=contexts, lock=window_lock, scale=scale
            )
            assert out is None
            work, _ = _inner.py_ns_path(h, b, negs, 0.05)
            if scale != 1:
                work *= scale
            for c, f in zip(contexts, window_lock, strict=True):
                _inner.py_axpy(float(f), work, s0b[c])
            assert np.array_equal(a, b) and np.array_equal(s0a, s0b), (d, negs, scale)
            assert np.array_equal(s0a[9], syn0[9]) and not np.array_equal(s0a[3], syn0[3])


def test_fused_ns_walk_leaves_the_step_to_its_caller_after_a_zero_coefficient():
    """When the last word's coefficient is exactly 0 (its sigmoid saturates at 0: a negative
    far below h), the walk spreads nothing and returns work, as the walk without the step
    does, for the caller to add; the window rows are untouched."""
    r = np.random.default_rng(21)
    syn0 = r.normal(0, 0.5, size=(6, D)).astype(np.float32)
    syn1neg = r.normal(0, 0.4, size=(10, D)).astype(np.float32)
    h = r.normal(0, 0.6, size=D).astype(np.float32)
    syn1neg[7] = -50.0 * h / float(h @ h)  # h . row = -50: sigmoid 0, coefficient 0
    negs = np.array([2, 4, 7], dtype=np.int32)
    a, b, s0 = syn1neg.copy(), syn1neg.copy(), syn0.copy()
    out, _ = _inner.py_ns_path(h, a, negs, 0.05, syn0=s0, contexts=[1, 3], lock=[1.0, 1.0])
    work, _ = _inner.py_ns_path(h, b, negs, 0.05)
    assert out is not None and np.array_equal(out, work) and np.any(work != 0)
    assert np.array_equal(s0, syn0) and np.array_equal(a, b)
    assert np.array_equal(a[7], syn1neg[7])  # the zero-coefficient row did not move
    with pytest.raises(ValueError, match="not a row of syn0"):
        _inner.py_ns_path(h, syn1neg.copy(), negs, 0.05, syn0=s0, contexts=[6], lock=[1.0])
    with pytest.raises(ValueError, match="reference walk returns work"):
        _inner.py_ns_path(h, syn1neg.copy(), negs, 0.05, "reference", into_h=True)


@pytest.mark.parametrize(
    "ahead", [[], [-1], [2, -1, 7, 7], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [29, 28]],
    ids=["none", "only_null", "some", "more_than_steps", "walked_rows"],
)
def test_the_walks_prefetch_changes_no_result(ahead):
    """The rows the negative-sampling walk prefetches for the next pair (``ahead``: one per
    word, the rest after the walk, -1 none) are a hint: the fused walk gives the same bits with
    them as without, whatever their number, also when they are rows being walked."""
    r = np.random.default_rng(12)
    syn1neg = r.normal(0, 0.4, size=(30, D)).astype(np.float32)
    h = r.normal(0, 0.6, size=D).astype(np.float32)
    for negs in ([3, 7, 11, 7, 0], [29], [28, 28, 1]):
        negs = np.array(negs, dtype=np.int32)
        a, b = syn1neg.copy(), syn1neg.copy()
        plain = _inner.py_ns_path(h, a, negs, 0.05, "fused")
        hinted = _inner.py_ns_path(h, b, negs, 0.05, "fused", ahead=ahead)
        assert np.array_equal(plain[0], hinted[0]) and plain[1] == hinted[1]
        assert np.array_equal(a, b) and not np.array_equal(a, syn1neg)
    with pytest.raises(ValueError, match="is not a row of syn1neg"):
        _inner.py_ns_path(h, syn1neg.copy(), np.array([1], dtype=np.int32), 0.05, ahead=[30])


def test_ns_step_is_the_node_step_with_float32_g():
    """The reference ns walk against NumPy in float32 arithmetic, node by node in order:
    ``g = float32(sigmoid(f) - label)``, ``a = float32(-alpha g)``, ``work += a row`` (old
    row), ``row += a h``; ties checked with the same table sigmoid."""
    r = np.random.default_rng(9)
    syn1neg = r.normal(0, 0.4, size=(12, 16)).astype(np.float32)  # d = 16: no loop tails
    h = r.normal(0, 0.4, size=16).astype(np.float32)
    negs = np.array([2, 5, 5, 11], dtype=np.int32)
    rows, work, alpha = syn1neg.copy(), np.zeros(16, dtype=np.float32), np.float32(0.05)
    for k, w in enumerate(negs):
        f = _inner.py_dot(h, rows[w])
        g = np.float32(_inner.py_sigmoid(f)) - np.float32(1.0 if k == 0 else 0.0)
        a = np.float32(-alpha * g)
        work += a * rows[w]
        rows[w] += a * h
    ours = syn1neg.copy()
    work_r, _ = _inner.py_ns_path(h, ours, negs, 0.05, "reference")
    assert np.allclose(work_r, work, rtol=0, atol=1e-7) and np.allclose(ours, rows, atol=1e-7)


def test_private_word_rows_train_as_the_shared_rows():
    """With ``hot_words`` a job trains private copies of those syn1neg rows and adds their
    change back at every sync and at its end: alone, the same weights as without them, to
    the rounding of ``shared + (private - pulled)`` (a lost sync would lose those rows'
    training, far beyond that)."""
    for sg in (0, 1):
        plain, kept_p, loss_p = job_case(sg, "fused", False, 3)
        hot, kept_h, loss_h = job_case(sg, "fused", False, 3, hot_words=np.arange(8),
                                       hot_sync=7)
        assert kept_h == kept_p and loss_h == pytest.approx(loss_p, rel=1e-5)
        for a, b in zip(hot, plain, strict=True):
            assert np.allclose(a, b, rtol=0, atol=1e-5)
    V, d = 40, D
    with pytest.raises(ValueError, match="hot_words must be distinct words"):
        word2vec_trainer(
            _inner.Trainer, np.zeros((V, d), np.float32), np.zeros((0, d), np.float32),
            np.zeros((V, 2), np.uint8), np.zeros((V, 2), np.int32), np.ones(V, np.int32),
            np.full(V, 2**32 - 1, np.uint32), window=4, sg=1, hs=False, negative=3,
            syn1neg=np.zeros((V, d), np.float32), cum_table=make_cum_table(np.ones(V)),
            hot_words=[0, 0],
        )  # fmt: skip


# ---------------------------------------------------------------- the schedule


def test_job_rate_is_the_one_formula_and_the_strict_twin_at_the_baseline():
    """The rate inside a job (``_rates.job_alpha``) as the walks compile it (``_inner``, this
    level's flags) against its strict owner's twin (``_rates.within_job``) and float32 NumPy:
    the same bits at the baseline level; at the levels with fused multiply-add, within the
    one rounding that the fused product skips (why the kernels inline it: ``_rates.pxd``)."""
    from hsw2v import _cpu
    from hsw2v._kernels import _rates

    r = np.random.default_rng(11)
    exact = 0
    for _ in range(2000):
        a0 = np.float32(r.uniform(0, 0.05))
        a1 = np.float32(a0 * r.uniform(0, 1))
        total = int(r.integers(1, 20_000))
        i = int(r.integers(0, total + 1))
        kernel = np.float32(_inner.py_job_alpha(a0, a1, i, total))
        strict = np.float32(_rates.within_job(a0, a1, i, total))
        q = np.float32(np.float32(i) / np.float32(total))
        assert strict == a0 + (a1 - a0) * q  # float32 arithmetic, one rounding per operation
        if _cpu.level == "baseline":
            assert kernel == strict
        else:
            # the fused product skips one rounding of (a1 - a0) * q, which is at most a0
            assert abs(float(kernel) - float(strict)) <= 2 * float(np.spacing(a0))
        exact += kernel == strict
    assert exact > 0
    with pytest.raises(ValueError, match="0 <= i <= total"):
        _rates.within_job(0.1, 0.0, 5, 4)


EMPTY_PATH_JOB = """
import json, sys
import numpy as np
from hsw2v._kernels._inner import Trainer, tree_output
from hsw2v.huffman import build_huffman_tree
sg, kernel = int(sys.argv[1]), sys.argv[2]
r = np.random.default_rng(5)
V, d = 40, 37
tree = build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
lengths = tree.lengths.copy()
lengths[[3, 7]] = 0
ids = r.integers(0, V, size=400).astype(np.int32)
ids[::5] = 3
out = {}
for variant in ("reference", kernel):
    rows = np.random.default_rng(6)
    syn0 = rows.uniform(-0.5, 0.5, size=(V, d)).astype(np.float32)
    syn1 = rows.normal(0, 0.2, size=(V, d)).astype(np.float32)
    trainer = Trainer(syn0, np.full(V, 2**32 - 1, np.uint32),
                      [tree_output(syn1, tree.codes, tree.points, lengths)],
                      dict(window=4, sg=sg, cbow_mean=True, shrink_windows=True,
                           compute_loss=True), walk=variant)
    _, loss = trainer.train_job(ids, np.array([400], dtype=np.int64), 0.05, 0.001, 99)
    out[variant] = (syn0, syn1, loss)
(s0r, s1r, loss_r), (s0k, s1k, loss_k) = out["reference"], out[kernel]
print(json.dumps({"syn0": float(np.abs(s0k - s0r).max()), "syn1": float(np.abs(s1k - s1r).max()),
                  "loss": [loss_r, loss_k]}))
"""


@pytest.mark.parametrize("kernel", ["window", "fused"])
@pytest.mark.parametrize("sg", [1, 0])
def test_fast_jobs_leave_a_word_with_an_empty_path_untrained(sg, kernel):
    """A tree may give a word no inner node (a length of 0: the reference walks nothing and
    h takes no step). The fast walks do the same: CBOW's window walk then sends no step to
    the context rows (not the work row of the centre before), and the fused walk reads no
    row (it read a stale one, and crashed: hence a fresh interpreter)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-c", EMPTY_PATH_JOB, str(sg), kernel],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["loss"][1] == pytest.approx(result["loss"][0], rel=1e-6)
    assert result["syn0"] <= 2e-6 and result["syn1"] <= 2e-6
