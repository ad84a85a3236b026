"""The layer's wide root (``root_width``): a softmax over the children of the tree's top
levels. The frontier's structure, the distribution against the definition in NumPy, the step
kernel against its NumPy reference, gradients against finite differences, fitting, files, the
classifier's parameter and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit, log_softmax
from test_layer import blobs, random_tree

from hsw2v import HierarchicalSoftmax
from hsw2v._kernels import _layer
from hsw2v.divergence import TrainingDivergedError
from hsw2v.layer._root import WideRoot
from hsw2v.trees import check_tree

V, DIM = 23, 5


def make(kind, width, rng, intercept=True, n=V):
    if kind == "huffman":
        lay = HierarchicalSoftmax.from_counts(rng.zipf(1.5, n).clip(1, 10**6), DIM,
                                              intercept=intercept, root_width=width)
    elif kind == "balanced":
        lay = HierarchicalSoftmax.balanced(n, DIM, intercept=intercept, root_width=width)
    else:
        lay = HierarchicalSoftmax.from_paths(*random_tree(n, rng), dim=DIM,
                                             intercept=intercept, root_width=width)
    for name in ("weights", "intercept", "root_weights", "root_intercept"):
        a = getattr(lay, name)
        if a is not None:
            a[...] = rng.normal(0, 1.0, a.shape)
    return lay


def ref_log_prob(lay, h, y):
    """log P(y | h) from the definition: the root's log-softmax at the child above y, plus
    the binary path from that child down, read off the whole tree's path of y (float64)."""
    wide = lay._wide
    h = np.asarray(h, dtype=np.float64)
    z = lay.root_weights.astype(np.float64) @ h
    if lay.root_intercept is not None:
        z = z + lay.root_intercept
    lp = log_softmax(z)[wide.slot[y]]
    n = lay.tree.lengths[y]
    pts, code = lay.tree.points[y, :n], lay.tree.codes[y, :n]
    below = ~np.isin(pts, wide.expanded)
    f = lay.weights[pts[below]].astype(np.float64) @ h
    if lay.intercept is not None:
        f = f + lay.intercept[pts[below]]
    return lp - np.logaddexp(0.0, -(1.0 - 2.0 * code[below]) * f).sum()


def ref_loss(lay, H, y):
    return -sum(ref_log_prob(lay, h, c) for h, c in zip(H, y, strict=True))


KINDS = ["huffman", "balanced", "explicit"]
WIDTHS = [2, 3, 7, 16, V - 1, V, 100]


# ---------------------------------------------------------------- the frontier
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("width", WIDTHS)
def test_frontier_partitions_the_classes_into_subtrees_below_expanded_top_nodes(kind, width):
    lay = make(kind, width, np.random.default_rng(width))
    tree, wide = lay.tree, lay._wide
    K = min(width, V)
    assert wide.width == K == len(lay.root_weights) == lay.root_width
    assert len(wide.expanded) == K - 1 and len(set(wide.expanded.tolist())) == K - 1
    assert wide.expanded[0] == lay.root
    for c in range(V):
        n, start = tree.lengths[c], tree.lengths[c] - wide.below.lengths[c]
        path = tree.points[c, :n].tolist()
        # the expanded nodes are exactly the leading part of every path ...
        assert all(p in wide.expanded for p in path[:start])
        assert not any(p in wide.expanded for p in path[start:])
        # ... the root's child above c is where the rest starts (or c itself) ...
        entry = path[start] if start < n else -1 - c
        assert wide.children[wide.slot[c]] == entry
        # ... and the paths below are that rest
        m = wide.below.lengths[c]
        assert wide.below.points[c, :m].tolist() == path[start:]
        assert wide.below.codes[c, :m].tolist() == tree.codes[c, start:n].tolist()
    # every child is used, and subtrees are disjoint: each inner child's classes share it
    assert set(wide.slot.tolist()) == set(range(K))
    if K == V:
        assert sorted(wide.children.tolist()) == sorted((-1 - np.arange(V)).tolist())


def test_frontier_of_a_huffman_tree_makes_the_most_frequent_classes_children_of_the_root():
    counts = np.array([1000, 500, 250, 125, 60, 30, 15, 8, 4, 2, 1, 1])
    lay = HierarchicalSoftmax.from_counts(counts, 2, root_width=4)
    leaves = sorted(-1 - e for e in lay.root_children.tolist() if e < 0)
    assert leaves == [0, 1, 2]  # and one subtree holding the other nine


# ---------------------------------------------------------------- the distribution
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("intercept", [False, True])
def test_distribution_matches_the_definition_and_sums_to_one(kind, width, intercept):
    rng = np.random.default_rng(7 + width)
    lay = make(kind, width, rng, intercept)
    H = rng.normal(0, 1, (6, DIM)).astype(np.float32)
    lp = lay.log_proba(H)
    want = np.array([[ref_log_prob(lay, h, c) for c in range(V)] for h in H])
    np.testing.assert_allclose(lp, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(lay.proba(H).sum(axis=1), 1.0, rtol=1e-6)
    y = rng.integers(0, V, len(H))
    np.testing.assert_allclose(lay.log_prob(H, y), want[np.arange(len(H)), y], rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("width", [2, 5, 16, V])
@pytest.mark.parametrize("k", [1, 4, V])
def test_topk_is_the_brute_force_top_k(kind, width, k):
    rng = np.random.default_rng(width * 31 + k)
    lay = make(kind, width, rng)
    H = rng.normal(0, 2, (9, DIM)).astype(np.float32)
    lp = lay.log_proba(H)
    idx, p = lay.topk(H, k)
    assert idx.dtype == np.int64 and idx.shape == (len(H), k)
    np.testing.assert_allclose(np.log(p), np.take_along_axis(lp, idx, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.log(p), -np.sort(-lp, axis=1)[:, :k], rtol=1e-5, atol=1e-6)


def test_topk_in_chunks_equals_one_chunk(monkeypatch):
    rng = np.random.default_rng(3)
    lay = make("huffman", 8, rng)
    H = rng.normal(0, 1, (50, DIM)).astype(np.float32)
    whole = lay.topk(H, 3)
    monkeypatch.setattr("hsw2v.layer._distribution.SCORE_BUDGET", 4 * 8 * 7)  # 7 rows per chunk
    chunked = lay.topk(H, 3)
    np.testing.assert_array_equal(whole[0], chunked[0])
    np.testing.assert_array_equal(whole[1], chunked[1])


def test_root_as_wide_as_the_classes_is_a_flat_softmax():
    rng = np.random.default_rng(5)
    lay = make("huffman", V, rng)
    H = rng.normal(0, 1, (4, DIM)).astype(np.float32)
    flat = log_softmax(H.astype(np.float64) @ lay.root_weights.T.astype(np.float64)
                       + lay.root_intercept, axis=1)
    np.testing.assert_allclose(lay.log_proba(H), flat[:, lay.root_slot], rtol=1e-6, atol=1e-7)


def test_without_root_width_the_layer_is_unchanged():
    rng = np.random.default_rng(9)
    a = make("huffman", None, rng)
    assert a.root_width is None and a.root_weights is None and a.root_slot is None
    assert repr(a) == f"HierarchicalSoftmax(n_classes={V}, dim={DIM})"


# ---------------------------------------------------------------- kernel and gradients
@pytest.mark.parametrize("lr", [0.0, 0.3])
@pytest.mark.parametrize("with_bias", [False, True])
def test_softmax_step_twin_matches_numpy(lr, with_bias):
    rng = np.random.default_rng(11)
    K, d = 9, 6
    h = rng.normal(0, 1, d).astype(np.float32)
    R = rng.normal(0, 1, (K, d)).astype(np.float32)
    b = rng.normal(0, 1, K).astype(np.float32) if with_bias else None
    R0, b0 = R.copy(), None if b is None else b.copy()
    loss, grad = _layer.py_softmax_step(h, R, 4, lr, b)
    z = R0.astype(np.float64) @ h + (0 if b0 is None else b0)
    g = np.exp(log_softmax(z))
    g[4] -= 1.0
    assert loss == pytest.approx(-log_softmax(z)[4], rel=1e-6)
    np.testing.assert_allclose(grad, g @ R0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(R, R0 - lr * np.outer(g, h), rtol=1e-5, atol=1e-6)
    if b is not None:
        np.testing.assert_allclose(b, b0 - lr * g, rtol=1e-5, atol=1e-6)


def test_softmax_step_with_two_children_is_the_binary_step():
    """K = 2 with rows (w, 0) is the binary node w: the same loss and dL/dh."""
    rng = np.random.default_rng(12)
    h = rng.normal(0, 1, 4).astype(np.float32)
    w = rng.normal(0, 1, (1, 4)).astype(np.float32)
    for child, code in ((0, 0), (1, 1)):
        R = np.vstack([w, np.zeros_like(w)])
        loss, grad = _layer.py_softmax_step(h, R, child)
        loss2, grad2, _ = _layer.py_path_step(h, w.copy(), np.array([code], np.uint8),
                                              np.array([0], np.int32))
        assert loss == pytest.approx(loss2, rel=1e-6)
        np.testing.assert_allclose(grad, grad2, rtol=1e-5, atol=1e-7)


def test_softmax_step_is_nan_safe():
    R = np.ones((3, 2), np.float32)
    R[1, 0] = np.nan
    loss, grad = _layer.py_softmax_step(np.ones(2, np.float32), R, 0, 0.1)
    assert np.isnan(loss)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("width", [3, 8])
def test_backward_matches_finite_differences(kind, width):
    rng = np.random.default_rng(width)
    lay = make(kind, width, rng)
    H = rng.normal(0, 1, (5, DIM)).astype(np.float32)
    y = rng.integers(0, V, len(H))
    grad = lay.backward(H, y, nodes=True)
    eps = 1e-4
    for name, got in (("root_weights", grad.root), ("root_intercept", grad.root_intercept),
                      ("weights", grad.dense_weights(V - 1))):
        arr = getattr(lay, name)
        flat = arr.reshape(-1)
        num = np.zeros(flat.shape)
        saved = arr.astype(np.float64).copy()
        for i in range(len(flat)):
            ref = saved.reshape(-1).copy()
            vals = []
            for sign in (1, -1):
                ref[i] = saved.reshape(-1)[i] + sign * eps
                flat[:] = ref
                vals.append(ref_loss(lay, H, y))
            num[i] = (vals[0] - vals[1]) / (2 * eps)
            flat[:] = saved.reshape(-1)
        np.testing.assert_allclose(got.reshape(-1), num, rtol=2e-3, atol=2e-3, err_msg=name)
    numh = np.zeros_like(H, dtype=np.float64)
    for b in range(len(H)):
        for k in range(DIM):
            hp, hm = H[b].astype(np.float64).copy(), H[b].astype(np.float64).copy()
            hp[k] += eps
            hm[k] -= eps
            numh[b, k] = -(ref_log_prob(lay, hp, y[b]) - ref_log_prob(lay, hm, y[b])) / (2 * eps)
    np.testing.assert_allclose(grad.hidden, numh, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(lay.backward(H, y), grad.hidden, rtol=1e-6, atol=1e-7)


def test_update_steps_the_root_along_its_gradient():
    rng = np.random.default_rng(4)
    lay = make("huffman", 6, rng)
    H = rng.normal(0, 1, (8, DIM)).astype(np.float32)
    y = rng.integers(0, V, len(H))
    g = lay.backward(H, y, nodes=True)
    R0, b0 = lay.root_weights.copy(), lay.root_intercept.copy()
    grad = lay.update(H, y, lr=0.5)
    np.testing.assert_allclose(grad, g.hidden, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(lay.root_weights, R0 - 0.5 * g.root, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lay.root_intercept, b0 - 0.5 * g.root_intercept, rtol=1e-5,
                               atol=1e-6)


def test_fit_example_twin_matches_numpy():
    rng = np.random.default_rng(2)
    lay = make("huffman", 5, rng)
    W_in = rng.normal(0, 1, (7, DIM)).astype(np.float32)
    X = sp.random(3, 7, density=0.5, random_state=3, format="csr", dtype=np.float32)
    y = np.array([5, 0, 2], dtype=np.int32)
    before = {n: getattr(lay, n).astype(np.float64).copy()
              for n in ("weights", "intercept", "root_weights", "root_intercept")}
    W0 = W_in.astype(np.float64).copy()
    trainer = _layer.FitTrainer(W_in, lay.weights, *lay._tree_arrays(), y,
                                indptr=X.indptr.astype(np.int64),
                                indices=X.indices.astype(np.int32), data=X.data,
                                bias=lay.intercept, **lay._root_arrays())
    lr = 0.25
    loss = _layer.py_fit_example(trainer, 1, lr)
    x = X[1].toarray()[0].astype(np.float64)
    h = x @ W0
    c = y[1]
    assert loss == pytest.approx(-ref_log_prob_at(before, lay, h, c), rel=1e-5)
    z = before["root_weights"] @ h + before["root_intercept"]
    gz = np.exp(log_softmax(z))
    gz[lay.root_slot[c]] -= 1
    below = lay._wide.below
    n = below.lengths[c]
    pts, code = below.points[c, :n], below.codes[c, :n]
    f = before["weights"][pts] @ h + before["intercept"][pts]
    g = expit(f) - (1 - code)
    want = {n_: a.copy() for n_, a in before.items()}
    want["root_weights"] -= lr * np.outer(gz, h)
    want["root_intercept"] -= lr * gz
    want["weights"][pts] -= lr * g[:, None] * h
    want["intercept"][pts] -= lr * g
    for name, arr in want.items():
        np.testing.assert_allclose(getattr(lay, name), arr, rtol=1e-4, atol=1e-6,
                                   err_msg=name)
    grad_h = gz @ before["root_weights"] + g @ before["weights"][pts]
    np.testing.assert_allclose(W_in, W0 - lr * np.outer(x, grad_h), rtol=1e-4, atol=1e-6)


def ref_log_prob_at(arrays, lay, h, c):
    """:func:`ref_log_prob` at saved weights."""
    saved = {n: getattr(lay, n).copy() for n in arrays}
    try:
        for n, a in arrays.items():
            getattr(lay, n)[...] = a
        return ref_log_prob(lay, h, c)
    finally:
        for n, a in saved.items():
            getattr(lay, n)[...] = a


# ---------------------------------------------------------------- fitting and files
def test_fit_learns_reproducibly_and_beats_a_shuffled_control():
    X, y = blobs(3000, 40, 20, seed=1)
    accs = []
    for labels in (y, np.random.default_rng(0).permutation(y)):
        lay = HierarchicalSoftmax.balanced(40, 16, intercept=True, root_width=8)
        lay.fit(X[:2000], labels[:2000], epochs=10, lr=0.05)
        accs.append((lay.topk(lay.transform(X[2000:]), 1)[0][:, 0] == labels[2000:]).mean())
        assert lay.history[-1] < lay.history[0]
    assert accs[0] > 0.75 and accs[1] < 0.1
    a = HierarchicalSoftmax.balanced(40, 16, intercept=True, root_width=8).fit(X, y, epochs=2,
                                                                               lr=0.05)
    b = HierarchicalSoftmax.balanced(40, 16, intercept=True, root_width=8).fit(X, y, epochs=2,
                                                                               lr=0.05)
    for name in ("weights", "input_weights", "intercept", "root_weights", "root_intercept"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_a_wider_root_separates_what_the_binary_root_cannot():
    """Blobs whose classes a balanced tree groups arbitrarily: a linear split of 20 random
    blobs from 20 others at the root is hard; one softmax over all 40 is not."""
    X, y = blobs(3000, 40, 20, seed=1)
    acc = {}
    for width in (None, 8, 40):
        lay = HierarchicalSoftmax.balanced(40, 16, intercept=True, root_width=width)
        lay.fit(X[:2000], y[:2000], epochs=10, lr=0.05)
        acc[width] = (lay.topk(lay.transform(X[2000:]), 1)[0][:, 0] == y[2000:]).mean()
    assert acc[None] + 0.03 < acc[8] and acc[8] + 0.1 < acc[40] and acc[40] > 0.95, acc


def test_fit_with_threads_learns_too():
    X, y = blobs(4000, 30, 20, seed=2)
    lay = HierarchicalSoftmax.from_counts(np.bincount(y), 16, root_width=6)
    lay.fit(sp.csr_matrix(X[:3000]), y[:3000], epochs=8, lr=0.05, workers=2)
    assert (lay.topk(lay.transform(X[3000:]), 1)[0][:, 0] == y[3000:]).mean() > 0.6  # chance: 1/30


def test_diverging_fit_restores_the_root_and_says_so():
    X, y = blobs(500, 10, 8, seed=3)
    lay = HierarchicalSoftmax.balanced(10, 4, intercept=True, root_width=4).fit(X, y, epochs=1)
    saved = lay.root_weights.copy(), lay.root_intercept.copy()
    lay.root_weights[0, 0] = np.nan
    saved = (lay.root_weights.copy(), saved[1])
    with pytest.raises(TrainingDivergedError, match="root_weights"):
        lay.fit(X, y, epochs=1)
    np.testing.assert_array_equal(lay.root_weights, saved[0])  # as before the epoch
    np.testing.assert_array_equal(lay.root_intercept, saved[1])


def test_save_load_round_trip(tmp_path):
    X, y = blobs(400, 12, 6, seed=4)
    lay = HierarchicalSoftmax.from_counts(np.bincount(y, minlength=12) + 1, 8, intercept=True,
                                          root_width=5).fit(X, y, epochs=3)
    path = tmp_path / "layer.hsw2v"
    lay.save(path)
    back = HierarchicalSoftmax.load(path)
    assert back.root_width == 5
    for name in ("weights", "intercept", "root_weights", "root_intercept", "input_weights"):
        assert np.array_equal(getattr(back, name), getattr(lay, name)), name
    np.testing.assert_array_equal(back.topk(back.transform(X), 3)[0],
                                  lay.topk(lay.transform(X), 3)[0])


def test_load_refuses_a_root_that_does_not_fit(tmp_path):
    from hsw2v import persist

    lay = HierarchicalSoftmax.balanced(6, 3, intercept=True, root_width=3)
    path = tmp_path / "layer.hsw2v"
    lay.save(path)
    meta, arrays = persist.load_bundle(path, kind="HierarchicalSoftmax")
    for change, message in (
        (lambda m, a: a.update(root_weights=np.zeros((4, 3), np.float32)), "root_weights"),
        (lambda m, a: a.update(root_intercept=np.zeros(4, np.float32)), "root_intercept"),
        (lambda m, a: a.pop("root_weights"), "come together"),
        (lambda m, a: a.pop("root_intercept"), "intercept exactly when"),
        (lambda m, a: a.pop("intercept"), "intercept exactly when"),
        (lambda m, a: m.update(root_width=1), "root_width"),
        (lambda m, a: m.update(root_width="3"), "root_width"),
    ):
        m, a = dict(meta), dict(arrays)
        change(m, a)
        bad = tmp_path / "bad.hsw2v"
        persist.save_bundle(bad, "HierarchicalSoftmax", m, a)
        with pytest.raises(ValueError, match=message):
            HierarchicalSoftmax.load(bad)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("width", [0, 1, -3, 2.5, "8", True])
def test_bad_root_width_gets_a_clear_error(width):
    with pytest.raises((ValueError, TypeError), match="root_width"):
        HierarchicalSoftmax.balanced(8, 3, root_width=width)


def test_adagrad_refuses_a_wide_root_and_says_what_to_do():
    X, y = blobs(100, 5, 4, seed=5)
    lay = HierarchicalSoftmax.balanced(5, 3, root_width=3)
    with pytest.raises(ValueError, match="optimizer='sgd'"):
        lay.fit(X, y, optimizer="adagrad")
    assert lay.input_weights is None and not lay.root_weights.any()  # nothing trained


def test_fit_trainer_checks_the_root_arrays():
    lay = HierarchicalSoftmax.balanced(6, 3, root_width=3)
    W_in = np.zeros((4, 3), np.float32)
    y = np.zeros(2, np.int32)
    X = np.zeros((2, 4), np.float32)
    arrays = lay._root_arrays()
    bad_slot = arrays["slot"].copy()
    bad_slot[0] = 3
    for kwargs, message in (
        ({**arrays, "slot": bad_slot}, "slot entries"),
        ({**arrays, "root_w": np.zeros((3, 2), np.float32)}, "inconsistent wide root"),
        ({"slot": arrays["slot"]}, "need root_w"),
        ({**arrays, "root_b": np.zeros(5, np.float32)}, "root_b has 5"),
    ):
        with pytest.raises(ValueError, match=message):
            _layer.FitTrainer(W_in, lay.weights, *lay._tree_arrays(), y, dense=X, **kwargs)


def test_wide_root_of_a_checked_tree_only():
    tree = HierarchicalSoftmax.balanced(4, 2).tree
    children, _, order = check_tree(tree.codes, tree.points, tree.lengths)
    assert WideRoot(tree, children, order, 2).children.tolist() == children[order[0]].tolist()


# ---------------------------------------------------------------- the classifier's parameter
def test_classifier_root_width_reaches_the_layer_and_bad_values_are_refused():
    pytest.importorskip("sklearn")
    from hsw2v import HierarchicalSoftmaxClassifier

    X, y = blobs(1200, 40, 20, seed=1)
    clf = HierarchicalSoftmaxClassifier(dim=16, epochs=10, lr=0.05, tree="balanced",
                                        root_width=40, random_state=0).fit(X[:800], y[:800])
    assert clf.layer_.root_width == 40
    assert clf.score(X[800:], y[800:]) > 0.9
    for kwargs, message in (({"root_width": 1}, "root_width"),
                            ({"root_width": 8, "optimizer": "adagrad"}, "optimizer='sgd'")):
        with pytest.raises(ValueError, match=message):
            HierarchicalSoftmaxClassifier(**kwargs).fit(X[:50], y[:50])


def test_a_job_trains_its_own_copy_of_the_root_then_adds_what_it_changed():
    """``train_job`` steps a private copy of the wide root and adds its change to the shared
    root at the end (design note B of hsw2v._kernels._layer): one job equals the same steps taken on
    the shared arrays one example at a time, to float rounding."""
    rng = np.random.default_rng(8)
    X = rng.normal(0, 0.3, (60, 9)).astype(np.float32)
    y = rng.integers(0, V, 60).astype(np.int32)
    trained = []
    for one_by_one in (False, True):
        lay = make("huffman", 6, np.random.default_rng(1))
        W_in = np.random.default_rng(2).normal(0, 0.3, (9, DIM)).astype(np.float32)
        trainer = _layer.FitTrainer(W_in, lay.weights, *lay._tree_arrays(), y, dense=X,
                                    bias=lay.intercept, **lay._root_arrays())
        ids = np.arange(60, dtype=np.int32)
        if one_by_one:
            for i in ids:
                _layer.py_fit_example(trainer, int(i), 0.1)
        else:
            trainer.train_job(ids, np.array([60]), 0.1, 0.1)
        trained.append((W_in, lay.weights, lay.intercept, lay.root_weights, lay.root_intercept))
    for job, steps in zip(*trained, strict=True):
        np.testing.assert_allclose(job, steps, rtol=1e-5, atol=1e-6)
    assert not np.allclose(trained[0][3], make("huffman", 6, np.random.default_rng(1))
                           .root_weights)  # the root did move
