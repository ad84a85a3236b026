"""The layer's per-inner-node intercept: node n scores h . weights[n] + intercept[n]. The
trainer's twin against NumPy, gradients against finite differences, every scoring method,
fit, files (the path step's twin with the intercept is in test_layer.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hsw2v import HierarchicalSoftmax
from hsw2v._kernels import _layer
from hsw2v.label_trees import label_tree


def ref_log_prob(W, b, tree, h, y):
    """log P(y | h) in float64 with the intercept, straight from the definition."""
    n = tree.lengths[y]
    pts = tree.points[y, :n]
    f = W[pts].astype(np.float64) @ np.asarray(h, dtype=np.float64) + b[pts]
    s = 1.0 - 2.0 * tree.codes[y, :n]
    return -np.logaddexp(0.0, -s * f).sum()


def make(kind="huffman", n=23, dim=5, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "huffman":
        lay = HierarchicalSoftmax.from_counts(rng.zipf(1.5, n).clip(1, 1000), dim,
                                              intercept=True)
    elif kind == "balanced":
        lay = HierarchicalSoftmax.balanced(n, dim, intercept=True)
    else:
        y = rng.integers(0, n, 400)
        X = rng.normal(0, 1, (400, 6))
        lay = HierarchicalSoftmax(label_tree("kmeans", y, n, X), dim, intercept=True)
    lay.weights[:] = rng.normal(0, 1, lay.weights.shape)
    lay.intercept[:] = rng.normal(0, 1, lay.intercept.shape)
    return lay, rng


def test_the_intercept_is_off_by_default_and_zero_when_asked_for():
    assert HierarchicalSoftmax.balanced(5, 3).intercept is None
    for lay in (
        HierarchicalSoftmax.balanced(5, 3, intercept=True),
        HierarchicalSoftmax.from_counts([4, 3, 2, 1, 1], 3, intercept=True),
        HierarchicalSoftmax.from_paths([[0], [1]], [[0], [0]], dim=3, intercept=True),
        HierarchicalSoftmax(label_tree("balanced", [0, 1, 4], 5), 3, intercept=True),
    ):
        assert lay.intercept.dtype == np.float32
        assert lay.intercept.shape == (lay.n_classes - 1,)
        assert not lay.intercept.any()
    with pytest.raises(ValueError, match="intercept must be True or False"):
        HierarchicalSoftmax.balanced(5, 3, intercept="yes")


@pytest.mark.parametrize("kind", ["huffman", "balanced", "kmeans"])
def test_scoring_methods_use_the_intercept_and_agree(kind):
    lay, rng = make(kind)
    H = rng.normal(0, 1, (4, lay.dim)).astype(np.float32)
    y = rng.integers(0, lay.n_classes, 4)
    b = lay.intercept
    want = [ref_log_prob(lay.weights, b, lay.tree, h, c) for h, c in zip(H, y, strict=True)]
    np.testing.assert_allclose(lay.log_prob(H, y), want, rtol=1e-5)
    full = lay.log_proba(H)
    np.testing.assert_allclose(full[np.arange(4), y], want, rtol=1e-5)
    np.testing.assert_allclose(np.exp(full).sum(axis=1), 1.0, rtol=1e-6)  # still sums to 1
    idx, p = lay.topk(H, 3)
    np.testing.assert_array_equal(idx, np.argsort(-full, axis=1, kind="stable")[:, :3])
    np.testing.assert_allclose(p, np.exp(np.sort(full, axis=1)[:, ::-1][:, :3]), rtol=1e-5)
    # the same layer without its intercept scores differently (the intercept is used)
    lay.intercept[:] = 0
    assert not np.allclose(lay.log_prob(H, y), want, rtol=1e-3)


def test_backward_and_update_match_finite_differences():
    lay, rng = make("huffman", n=17, dim=4, seed=3)
    H = rng.normal(0, 1, (5, 4))
    y = rng.integers(0, 17, 5)

    def loss(H=H, b=None):
        if b is not None:
            saved = lay.intercept.copy()
            lay.intercept[:] = b
        out = -lay.log_prob(H, y).sum()
        if b is not None:
            lay.intercept[:] = saved
        return out

    grad = lay.backward(H, y)
    eps = 1e-2  # float32 node scores: a wide step, a loose tolerance
    num = np.zeros_like(H)
    for i in np.ndindex(H.shape):
        d = np.zeros_like(H)
        d[i] = eps
        num[i] = (loss(H + d) - loss(H - d)) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=2e-2, atol=2e-3)
    # dL/dintercept from update's step: intercept -= lr * dL/db
    b0 = lay.intercept.astype(np.float64).copy()
    num_b = np.zeros_like(b0)
    for n in range(len(b0)):
        d = np.zeros_like(b0)
        d[n] = eps
        num_b[n] = (loss(b=b0 + d) - loss(b=b0 - d)) / (2 * eps)
    lr = 1e-3
    lay.update(H, y, lr)
    np.testing.assert_allclose((b0 - lay.intercept) / lr, num_b, rtol=2e-2, atol=2e-3)


def test_fit_learns_the_class_prior_that_only_an_intercept_can_hold():
    """Rows without features have h = 0: without an intercept every path bit is a coin toss
    (1/4 on a balanced tree of 4); with one the layer learns the class frequencies."""
    rng = np.random.default_rng(0)
    y = rng.choice(4, 4000, p=[0.7, 0.1, 0.1, 0.1])
    X = sp.csr_matrix((4000, 3), dtype=np.float32)
    h0 = np.zeros((1, 8))
    plain = HierarchicalSoftmax.balanced(4, 8).fit(X, y, epochs=3, lr=0.1)
    np.testing.assert_allclose(plain.predict_proba(h0), 0.25, rtol=1e-6)
    for workers in (1, 2):
        lay = HierarchicalSoftmax.balanced(4, 8, intercept=True)
        lay.fit(X, y, epochs=3, lr=0.1, workers=workers)
        np.testing.assert_allclose(lay.predict_proba(h0)[0], [0.7, 0.1, 0.1, 0.1], atol=0.05)
        assert lay.predict(X[:3]).tolist() == [0, 0, 0]


def test_fit_with_features_trains_the_intercept_and_matches_the_kernel_twin():
    rng = np.random.default_rng(4)
    lay = HierarchicalSoftmax.balanced(6, dim=4, intercept=True)
    lay.weights[:] = rng.normal(0, 1, lay.weights.shape)
    lay.intercept[:] = rng.normal(0, 1, 5)
    W_in = rng.normal(0, 1, (7, 4)).astype(np.float32)
    X = sp.random(3, 7, density=0.5, random_state=3, format="csr", dtype=np.float32)
    y = np.array([5, 0, 2], dtype=np.int32)
    syn1_0, b_0, W_0 = lay.weights.copy(), lay.intercept.copy(), W_in.copy()
    trainer = _layer.FitTrainer(
        W_in, lay.weights, lay.tree.codes, lay.tree.points, lay.tree.lengths, y,
        indptr=X.indptr.astype(np.int64), indices=X.indices.astype(np.int32), data=X.data,
        bias=lay.intercept,
    )
    loss = _layer.py_fit_example(trainer, 1, 0.25)
    x = X[1].toarray()[0].astype(np.float64)
    h = x @ W_0
    n = lay.tree.lengths[0]
    pts, code = lay.tree.points[0, :n], lay.tree.codes[0, :n]
    f = syn1_0[pts] @ h + b_0[pts]
    g = 1 / (1 + np.exp(-f)) - (1 - code)
    assert loss == pytest.approx(np.logaddexp(0, -(1 - 2.0 * code) * f).sum(), rel=1e-5)
    want_b = b_0.astype(np.float64)
    want_b[pts] -= 0.25 * g
    np.testing.assert_allclose(lay.intercept, want_b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(W_in, W_0 - 0.25 * np.outer(x, g @ syn1_0[pts]), rtol=1e-4,
                               atol=1e-6)
    with pytest.raises(ValueError, match="bias has 4 entries for 5 inner nodes"):
        _layer.FitTrainer(W_in, lay.weights, lay.tree.codes, lay.tree.points,
                          lay.tree.lengths, y, indptr=X.indptr.astype(np.int64),
                          indices=X.indices.astype(np.int32), data=X.data,
                          bias=np.zeros(4, np.float32))


def test_the_intercept_is_saved_and_loaded(tmp_path):
    from hsw2v import persist

    lay, rng = make("kmeans")
    path = tmp_path / "layer.hsw2v"
    lay.save(path)
    back = HierarchicalSoftmax.load(path)
    np.testing.assert_array_equal(back.intercept, lay.intercept)
    H = rng.normal(0, 1, (2, lay.dim))
    np.testing.assert_allclose(back.log_proba(H), lay.log_proba(H))
    HierarchicalSoftmax.balanced(5, 3).save(path)
    assert HierarchicalSoftmax.load(path).intercept is None
    meta, arrays = persist.load_bundle(path, kind="HierarchicalSoftmax")
    arrays["intercept"] = np.zeros(3, np.float32)  # 4 inner nodes
    persist.save_bundle(path, "HierarchicalSoftmax", meta, arrays)
    with pytest.raises(ValueError, match=r"'intercept' should be float32 \(4,\)"):
        HierarchicalSoftmax.load(path)
