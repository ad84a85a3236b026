"""The standalone hierarchical-softmax layer: kernels against NumPy, gradients against finite
differences, the distribution, top-k search, the fitted classifier, files and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from hsw2v import HierarchicalSoftmax, layer, persist
from hsw2v._kernels import _layer
from hsw2v.trees import split_tree


# ---------------------------------------------------------------- NumPy references
def ref_log_prob(W, tree, h, y):
    """log P(y | h) in float64, straight from the definition."""
    n = tree.lengths[y]
    f = W[tree.points[y, :n]].astype(np.float64) @ np.asarray(h, dtype=np.float64)
    s = 1.0 - 2.0 * tree.codes[y, :n]
    return -np.logaddexp(0.0, -s * f).sum()


def ref_loss(W, tree, H, y):
    return -sum(ref_log_prob(W, tree, h, c) for h, c in zip(H, y, strict=True))


def numeric_weight_grad(W, tree, H, y, eps):
    """dL/dW by central differences of :func:`ref_loss`, entry by entry (float64)."""
    num = np.zeros_like(W)
    for n in range(W.shape[0]):
        for k in range(W.shape[1]):
            Wp, Wm = W.copy(), W.copy()
            Wp[n, k] += eps
            Wm[n, k] -= eps
            num[n, k] = (ref_loss(Wp, tree, H, y) - ref_loss(Wm, tree, H, y)) / (2 * eps)
    return num


def random_tree(n, rng):
    """A random full binary tree over n leaves with inner nodes numbered in a random order
    (root anywhere), given as ragged paths for from_paths."""
    t = split_tree(n, lambda ids: np.split(rng.permutation(ids), [rng.integers(1, len(ids))]))
    relabel = rng.permutation(n - 1)
    codes = [t.code(w).tolist() for w in range(n)]
    points = [relabel[t.point(w)].tolist() for w in range(n)]
    return codes, points


def make_layer(kind, n, dim, rng):
    if kind == "huffman":
        lay = HierarchicalSoftmax.from_counts(rng.zipf(1.5, n).clip(1, 10**6), dim)
    elif kind == "balanced":
        lay = HierarchicalSoftmax.balanced(n, dim)
    else:
        lay = HierarchicalSoftmax.from_paths(*random_tree(n, rng), dim=dim)
    lay.weights[:] = rng.normal(0, 1.0, lay.weights.shape)
    return lay


KINDS = ["huffman", "balanced", "explicit"]


def predict(lay, X):
    """The most probable class of each row of features X, from the layer's own methods."""
    return lay.topk(lay.transform(X), 1)[0][:, 0]


# ---------------------------------------------------------------- kernel twins
def test_sigmoid_twin_is_exact_and_stable():
    for f in (-800.0, -30.0, -1.0, 0.0, 0.5, 30.0, 800.0):
        assert _layer.py_sigmoid_exact(f) == pytest.approx(expit(f), rel=1e-12, abs=0)


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("lr", [0.0, 0.3])
def test_path_step_twin_matches_numpy(lr, with_bias):
    """The layer's step against NumPy, without and with the per-node intercept."""
    rng = np.random.default_rng(0)
    d, n_inner = 13, 9
    syn1 = rng.normal(0, 1, (n_inner, d)).astype(np.float32)
    bias = rng.normal(0, 1, n_inner).astype(np.float32)
    h = rng.normal(0, 1, d).astype(np.float32)
    code = np.array([1, 0, 0, 1], dtype=np.uint8)
    point = np.array([8, 3, 5, 0], dtype=np.int32)
    syn1_0, bias_0 = syn1.copy(), bias.copy()
    if with_bias:
        loss, grad, g = _layer.py_path_step(h, syn1, code, point, lr, bias)
    else:
        loss, grad, g = _layer.py_path_step(h, syn1, code, point, lr)
    f = syn1_0[point].astype(np.float64) @ h + (bias_0[point] if with_bias else 0.0)
    want_g = 1 / (1 + np.exp(-f)) - (1 - code)
    assert loss == pytest.approx(np.logaddexp(0, -(1 - 2.0 * code) * f).sum(), rel=1e-5)
    np.testing.assert_allclose(g, want_g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, want_g @ syn1_0[point], rtol=1e-4, atol=1e-5)
    want_syn1, want_bias = syn1_0.copy(), bias_0.copy()
    want_syn1[point] -= lr * want_g[:, None] * h[None, :]
    if with_bias:
        want_bias[point] -= lr * want_g
    np.testing.assert_allclose(syn1, want_syn1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bias, want_bias, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_fill_row_twin_matches_numpy(kind):
    rng = np.random.default_rng(1)
    lay = make_layer(kind, 11, 5, rng)
    h = rng.normal(0, 1, 5).astype(np.float32)
    out = _layer.py_fill_row(lay.weights @ h, lay.children, lay.order)
    want = [ref_log_prob(lay.weights, lay.tree, h, c) for c in range(11)]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_fit_example_twin_matches_numpy():
    rng = np.random.default_rng(2)
    lay = HierarchicalSoftmax.balanced(6, dim=4)
    lay.weights[:] = rng.normal(0, 1, lay.weights.shape)
    W_in = rng.normal(0, 1, (7, 4)).astype(np.float32)
    X = sp.random(3, 7, density=0.5, random_state=3, format="csr", dtype=np.float32)
    y = np.array([5, 0, 2], dtype=np.int32)
    syn1, W_before, syn1_before = lay.weights, W_in.copy(), lay.weights.copy()
    trainer = _layer.FitTrainer(
        W_in,
        syn1,
        lay.tree.codes,
        lay.tree.points,
        lay.tree.lengths,
        y,
        indptr=X.indptr.astype(np.int64),
        indices=X.indices.astype(np.int32),
        data=X.data,
    )
    loss = _layer.py_fit_example(trainer, 1, 0.25)
    x = X[1].toarray()[0].astype(np.float64)
    h = x @ W_before
    c = y[1]
    n = lay.tree.lengths[c]
    pts, code = lay.tree.points[c, :n], lay.tree.codes[c, :n]
    f = syn1_before[pts] @ h
    g = 1 / (1 + np.exp(-f)) - (1 - code)
    assert loss == pytest.approx(np.logaddexp(0, -(1 - 2.0 * code) * f).sum(), rel=1e-5)
    want_syn1 = syn1_before.astype(np.float64)
    want_syn1[pts] -= 0.25 * g[:, None] * h
    np.testing.assert_allclose(syn1, want_syn1, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(
        W_in, W_before - 0.25 * np.outer(x, g @ syn1_before[pts]), rtol=1e-4, atol=1e-6
    )


def test_fit_job_matches_numpy():
    """A whole job (examples in a given order, repeats, a step size falling over the job):
    weights and the summed loss equal the NumPy reference's, example after example."""
    rng = np.random.default_rng(7)
    lay = make_layer("huffman", 9, 6, rng)
    W_in = rng.normal(0, 0.5, (5, 6)).astype(np.float32)
    X = rng.normal(0, 1, (4, 5)).astype(np.float32)
    y = np.array([8, 0, 3, 3], dtype=np.int32)
    ids = np.array([2, 0, 3, 1, 2, 2], dtype=np.int32)
    W, syn1 = W_in.astype(np.float64), lay.weights.astype(np.float64)
    want_loss = 0.0
    for t, i in enumerate(ids):
        lr = 0.3 + (0.01 - 0.3) * t / len(ids)
        h = X[i].astype(np.float64) @ W
        n = lay.tree.lengths[y[i]]
        pts, code = lay.tree.points[y[i], :n], lay.tree.codes[y[i], :n]
        f = syn1[pts] @ h
        want_loss += np.logaddexp(0, -(1 - 2.0 * code) * f).sum()
        g = 1 / (1 + np.exp(-f)) - (1 - code)
        grad_h = g @ syn1[pts]
        syn1[pts] -= lr * g[:, None] * h
        W -= lr * np.outer(X[i], grad_h)
    trainer = _layer.FitTrainer(
        W_in, lay.weights, lay.tree.codes, lay.tree.points, lay.tree.lengths, y, dense=X
    )
    n_done, loss = trainer.train_job(ids, np.array([6], dtype=np.int64), 0.3, 0.01)
    assert n_done == 6
    assert loss == pytest.approx(want_loss, rel=1e-5)
    np.testing.assert_allclose(lay.weights, syn1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(W_in, W, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- the distribution
@pytest.mark.parametrize("kind", KINDS)
def test_probabilities_sum_to_one_and_match_log_prob(kind):
    rng = np.random.default_rng(3)
    lay = make_layer(kind, 37, 8, rng)
    H = rng.normal(0, 1, (5, 8))
    logp = lay.log_proba(H)
    np.testing.assert_allclose(np.exp(logp).sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(lay.proba(H), np.exp(logp))
    for c in (0, 17, 36):
        np.testing.assert_allclose(lay.log_prob(H, np.full(5, c)), logp[:, c], rtol=1e-5)
    want = [ref_log_prob(lay.weights, lay.tree, H[2], c) for c in range(37)]
    np.testing.assert_allclose(logp[2], want, rtol=1e-5, atol=1e-6)


def test_log_proba_in_chunks_equals_one_chunk(monkeypatch):
    rng = np.random.default_rng(4)
    lay = make_layer("huffman", 50, 6, rng)
    H = rng.normal(0, 1, (23, 6))
    whole = lay.log_proba(H)
    monkeypatch.setattr(layer._distribution, "SCORE_BUDGET", 3 * 49)  # 3 rows per matrix product
    np.testing.assert_array_equal(lay.log_proba(H), whole)


def traced_peak(call):
    """``(call(), the peak of the memory Python's allocators traced while it ran)``."""
    import tracemalloc

    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_log_proba_memory_is_the_output_plus_small_scratch():
    V, B = 100_000, 4
    lay = HierarchicalSoftmax.balanced(V, dim=8)
    out, peak = traced_peak(lambda: lay.log_proba(np.ones((B, 8), dtype=np.float32)))
    assert out.shape == (B, V)
    # output 3.2 MB + scores and their log-sigmoids 2 x 1.6 MB + a mask 0.4 MB + node
    # log-probabilities 0.8 MB (measured 7.6 MB in all); never anything V x (V - 1)
    assert peak < out.nbytes + 5 * 1024 * 1024, peak


# ---------------------------------------------------------------- top-k
@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 60),
    k=st.integers(1, 8),
    seed=st.integers(0, 2**16),
    kind=st.sampled_from(KINDS),
    scale=st.sampled_from([0.1, 1.0, 10.0]),
)
def test_topk_equals_brute_force(n, k, seed, kind, scale):
    rng = np.random.default_rng(seed)
    lay = make_layer(kind, n, 4, rng)
    lay.weights *= scale
    H = rng.normal(0, 1, (3, 4))
    k = min(k, n)
    idx, p = lay.topk(H, k)
    full = lay.proba(H)
    for b in range(3):
        np.testing.assert_allclose(p[b], np.sort(full[b])[::-1][:k], rtol=1e-5, atol=1e-12)
        np.testing.assert_allclose(full[b, idx[b]], p[b], rtol=1e-5, atol=1e-12)
        assert len(set(idx[b].tolist())) == k


# ---------------------------------------------------------------- gradients
@pytest.mark.parametrize("kind", KINDS)
def test_backward_matches_finite_differences(kind):
    rng = np.random.default_rng(5)
    lay = make_layer(kind, 19, 6, rng)
    H = rng.normal(0, 1, (4, 6)).astype(np.float32)
    y = np.array([0, 7, 18, 7])
    W = lay.weights.astype(np.float64)
    grad = lay.backward(H, y)
    eps = 1e-5
    num = np.zeros_like(H, dtype=np.float64)
    for b in range(4):
        for k in range(6):
            Hp, Hm = H.astype(np.float64), H.astype(np.float64)
            Hp[b, k] += eps
            Hm[b, k] -= eps
            num[b, k] = (ref_loss(W, lay.tree, Hp, y) - ref_loss(W, lay.tree, Hm, y)) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-3, atol=1e-5)


def test_update_steps_weights_by_the_finite_difference_gradient():
    rng = np.random.default_rng(6)
    lay = make_layer("huffman", 12, 5, rng)
    H = rng.normal(0, 1, (3, 5)).astype(np.float32)
    y = np.array([1, 1, 11])
    W = lay.weights.astype(np.float64)
    eps, lr = 1e-5, 0.01
    num = numeric_weight_grad(W, lay.tree, H, y, eps)
    grad_before = lay.backward(H, y)
    grad = lay.update(H, y, lr)
    np.testing.assert_array_equal(grad, grad_before)  # taken at the weights on entry
    np.testing.assert_allclose((W - lay.weights) / lr, num, rtol=1e-3, atol=1e-4)
    assert ref_loss(lay.weights, lay.tree, H, y) < ref_loss(W, lay.tree, H, y)


# ---------------------------------------------------------------- the fitted classifier
def blobs(n, n_classes, m, seed, noise=0.5):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1, (n_classes, m))
    y = rng.integers(0, n_classes, n)
    return (centres[y] + noise * rng.normal(0, 1, (n, m))).astype(np.float32), y


def test_fit_learns_a_separable_problem_and_a_shuffled_control_does_not():
    X, y = blobs(4000, 20, 30, seed=7)
    Xt, yt = X[3000:], y[3000:]
    lay = HierarchicalSoftmax.balanced(20, dim=16, seed=1)
    lay.fit(X[:3000], y[:3000], epochs=10, lr=0.05)
    acc = (predict(lay, Xt) == yt).mean()
    assert acc > 0.85, acc  # chance is 0.05; measured 0.93
    assert lay.history[-1] < lay.history[0]
    # Control: the same fit on shuffled labels. A cluster's prediction then matches its true
    # label by chance, all or nothing, so one shuffle's accuracy varies a lot around 1/20;
    # the mean of three does not.
    control = []
    for seed in range(3):
        shuffled = np.random.default_rng(seed).permutation(y[:3000])
        lay = HierarchicalSoftmax.balanced(20, dim=16, seed=1)
        lay.fit(X[:3000], shuffled, epochs=10, lr=0.05)
        control.append((predict(lay, Xt) == yt).mean())
    assert np.mean(control) < 0.15, control  # measured 0.16, 0.01, 0.04


def test_fit_dense_and_csr_agree_and_threads_learn():
    X, y = blobs(600, 8, 12, seed=8)
    X[np.abs(X) < 0.7] = 0.0  # genuinely sparse
    dense = HierarchicalSoftmax.from_counts(np.bincount(y), dim=6).fit(X, y, epochs=3)
    csr = HierarchicalSoftmax.from_counts(np.bincount(y), dim=6).fit(sp.csr_matrix(X), y, epochs=3)
    np.testing.assert_array_equal(dense.weights, csr.weights)
    np.testing.assert_array_equal(dense.input_weights, csr.input_weights)
    np.testing.assert_array_equal(predict(dense, X), predict(csr, sp.csr_matrix(X)))
    threaded = HierarchicalSoftmax.from_counts(np.bincount(y), dim=6).fit(
        X, y, epochs=5, workers=2, job_size=50
    )
    assert (predict(threaded, X) == y).mean() > 0.7  # chance is 1/8


# ---------------------------------------------------------------- files
def test_save_load_round_trip_keeps_predicting_and_training(tmp_path):
    rng = np.random.default_rng(9)
    X, y = blobs(300, 5, 6, seed=9)
    lay = make_layer("explicit", 5, 4, rng).fit(X, y, epochs=2)
    path = tmp_path / "layer.hsw2v"
    lay.save(path)
    back = HierarchicalSoftmax.load(path)
    for name in ("weights", "input_weights"):
        np.testing.assert_array_equal(getattr(back, name), getattr(lay, name))
    for name in ("codes", "points", "lengths"):
        np.testing.assert_array_equal(getattr(back.tree, name), getattr(lay.tree, name))
    assert back.root == lay.root and back.history == lay.history
    np.testing.assert_array_equal(
        back.proba(X[:5] @ lay.input_weights), lay.proba(X[:5] @ lay.input_weights)
    )
    back.fit(X, y, epochs=1)
    lay.fit(X, y, epochs=1)
    np.testing.assert_array_equal(back.weights, lay.weights)


def test_load_refuses_a_bundle_whose_tree_leaves_the_weights(tmp_path):
    lay = HierarchicalSoftmax.balanced(4, dim=2)
    path = tmp_path / "bad.hsw2v"
    points = lay.tree.points.copy()
    points[3, 1] = 40  # a row that does not exist
    persist.save_bundle(
        path,
        "HierarchicalSoftmax",
        {"dim": 2, "n_classes": 4},
        {
            "weights": lay.weights,
            "codes": lay.tree.codes,
            "points": points,
            "lengths": lay.tree.lengths,
        },
    )
    with pytest.raises(ValueError, match="inconsistent HierarchicalSoftmax.*inner-node ids"):
        HierarchicalSoftmax.load(path)
    lay.save(path)
    with pytest.raises(ValueError, match="holds a 'HierarchicalSoftmax', not a 'Word2Vec'"):
        persist.load_bundle(path, kind="Word2Vec")


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "codes, points, message",
    [
        ([[0], [0]], [[0], [0]], "same path"),
        ([[0, 0], [0, 1], [1, 0]], [[1, 0], [1, 0], [1, 0]], "full binary tree"),  # clash
        ([[0], [1, 0], [1, 1]], [[1], [1, 1], [1, 1]], "full binary tree"),  # cycle, 0 unused
        ([[0], [2]], [[0], [0]], "bits"),
        ([[0], [1]], [[0], [3]], r"inner-node ids must be in \[0, 0\]"),
        ([[0], [1], [1, 0]], [[1], [1], [1, 0]], "start of another"),
        ([[0], [1, 0], [1, 1]], [[1], [0, 1], [0, 1]], "same root"),
    ],
)
def test_from_paths_rejects_what_is_not_a_tree(codes, points, message):
    with pytest.raises(ValueError, match=message):
        HierarchicalSoftmax.from_paths(codes, points, dim=2)


def test_bad_input_gets_clear_errors():
    lay = HierarchicalSoftmax.balanced(5, dim=3)
    H = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"shape \(batch, 3\)"):
        lay.log_proba(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="NaN"):
        lay.log_prob(np.full((2, 3), np.nan), [0, 1])
    with pytest.raises(ValueError, match=r"class ids must be in \[0, 5\)"):
        lay.backward(H, [0, 5])
    with pytest.raises(ValueError, match="integers"):
        lay.log_prob(H, [0.5, 1.0])
    with pytest.raises(ValueError, match="one class id per row"):
        lay.update(H, [0], lr=0.1)
    with pytest.raises(ValueError, match="lr must be a positive"):
        lay.update(H, [0, 1], lr=-1)
    with pytest.raises(ValueError, match="k must be at most"):
        lay.topk(H, 6)
    with pytest.raises(ValueError, match="at least 2"):
        HierarchicalSoftmax.balanced(1, dim=3)
    with pytest.raises(ValueError, match="counts must be"):
        HierarchicalSoftmax.from_counts([3], dim=3)
    with pytest.raises(ValueError, match="dim must be a positive integer"):
        HierarchicalSoftmax.balanced(4, dim=0)
    with pytest.raises(RuntimeError, match="fit"):
        lay.transform(H)
    lay.fit(np.eye(3), [0, 1, 2], epochs=1)
    with pytest.raises(ValueError, match="X has 4 features"):
        lay.fit(np.eye(4), [0, 1, 2, 3])
    with pytest.raises(ValueError, match="NaN"):
        lay.fit(np.full((3, 3), np.nan), [0, 1, 2])


# ---------------------------------------------------------------- the API's confusing cases
def test_constructing_from_numbers_names_the_constructors():
    with pytest.raises(TypeError, match=r"from_counts.*balanced.*from_paths"):
        HierarchicalSoftmax(50, 16)


@pytest.mark.parametrize("method", ["log_proba", "proba", "topk", "log_prob", "backward"])
def test_sparse_input_where_hidden_vectors_are_wanted_says_so(method):
    lay = HierarchicalSoftmax.balanced(5, dim=3)
    X = sp.csr_matrix(np.eye(3))
    args = {"log_prob": ([0, 1, 2],), "backward": ([0, 1, 2],), "topk": (2,)}.get(method, ())
    with pytest.raises(TypeError, match=rf"{method}\(H\) takes hidden vectors.*got a sparse.*"
                       r"layer.transform\(X\)"):  # fmt: skip
        getattr(lay, method)(X, *args)


def test_features_and_hidden_vectors_swapped_get_errors_that_say_which_is_which():
    X = np.eye(10, dtype=np.float32)[np.arange(40) % 10]
    lay = HierarchicalSoftmax.balanced(10, dim=4).fit(X, np.arange(40) % 10, epochs=2)
    with pytest.raises(ValueError, match=r"10 columns = the fitted number of features: for "
                       r"features call layer.transform\(X\) first"):  # fmt: skip
        lay.proba(X)
    with pytest.raises(ValueError, match=r"one vector: give H\[None, :\]"):
        lay.topk(np.zeros(4), 1)
    with pytest.raises(ValueError, match=r"transform\(X\) takes features.*X has 4 features but "
                       r"the layer was fitted with 10: 4 columns are hidden vectors"):  # fmt: skip
        lay.transform(lay.transform(X))
    with pytest.raises(TypeError, match="real numbers"):
        lay.log_proba(np.array([["a", "b", "c", "d"]]))


def test_labels_that_are_not_class_ids_point_to_the_classifier():
    lay = HierarchicalSoftmax.balanced(3, dim=2)
    with pytest.raises(ValueError, match="integers in .0, 3.*HierarchicalSoftmaxClassifier"):
        lay.fit(np.eye(3), ["cat", "dog", "eel"])
    with pytest.raises(ValueError, match=r"in \[0, 3\), got 1..7: .*HierarchicalSoftmaxClassifier"):
        lay.fit(np.eye(3), [1, 4, 7])


def test_one_index_dtype_and_deprecated_names_warn_and_agree():
    X = np.eye(6, dtype=np.float32)
    lay = HierarchicalSoftmax.balanced(6, dim=4).fit(X, np.arange(6), epochs=30, lr=0.5)
    H = lay.transform(X)
    idx, _ = lay.topk(H, 2)
    assert idx.dtype == np.int64
    with pytest.warns(DeprecationWarning, match=r"predict\(X\) is deprecated.*"
                      r"HierarchicalSoftmaxClassifier"):  # fmt: skip
        old = lay.predict(X)
    assert old.dtype == np.int64
    np.testing.assert_array_equal(old, idx[:, 0])
    with pytest.warns(DeprecationWarning, match=r"use layer.proba\(H\)"):
        np.testing.assert_array_equal(lay.predict_proba(H), lay.proba(H))


def test_proba_writes_into_out_and_exponentiates_each_chunk(monkeypatch):
    rng = np.random.default_rng(4)
    lay = make_layer("huffman", 50, 6, rng)
    H = rng.normal(0, 1, (23, 6))
    want = np.exp(lay.log_proba(H))
    monkeypatch.setattr(layer._distribution, "SCORE_BUDGET", 3 * 49)  # 3 rows per chunk
    out = np.full((23, 50), np.nan)
    assert lay.proba(H, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-12)
    with pytest.raises(ValueError, match="out must be a C-contiguous float64"):
        lay.proba(H, out=np.empty((23, 50), dtype=np.float32))


@pytest.mark.parametrize("B", [4, 128])
def test_proba_memory_is_the_output_plus_a_bounded_scratch(B):
    """np.exp(log_proba(H)) held two outputs at once; proba holds one, plus at most ~33 MB
    of chunk scratch whatever the batch (16 MB of node scores, 16 MB of log-sigmoids, a
    mask and the node log-probabilities)."""
    V = 100_000
    lay = HierarchicalSoftmax.balanced(V, dim=8)
    out, peak = traced_peak(lambda: lay.proba(np.ones((B, 8), dtype=np.float32)))
    budget = layer._distribution.SCORE_BUDGET
    scratch = min(B, budget // (V - 1)) * (V - 1) * 9 + 16 * V  # + 1 MB slack
    assert peak < out.nbytes + scratch + (1 << 20), (peak, out.nbytes)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-6)


# ---------------------------------------------------------------- gradients for any optimiser
@pytest.mark.parametrize("kind", KINDS)
def test_backward_node_rows_match_finite_differences(kind):
    rng = np.random.default_rng(6)
    lay = make_layer(kind, 19, 5, rng)
    H = rng.normal(0, 1, (4, 5)).astype(np.float32)
    y = np.array([0, 7, 18, 7])
    g = lay.backward(H, y, nodes=True)
    np.testing.assert_array_equal(g.hidden, lay.backward(H, y))
    on_paths = np.unique(np.concatenate([lay.tree.points[c, : lay.tree.lengths[c]] for c in y]))
    np.testing.assert_array_equal(g.nodes, on_paths)
    assert g.nodes.dtype == np.int64 and g.rows.dtype == np.float32
    W = lay.weights.astype(np.float64)
    eps = 1e-5
    num = numeric_weight_grad(W, lay.tree, H, y, eps)
    dense = g.dense_weights(lay.n_classes - 1)
    np.testing.assert_allclose(dense, num, rtol=1e-3, atol=1e-5)
    np.testing.assert_array_equal(g.sparse_weights(lay.n_classes - 1).toarray(), dense)


def test_backward_node_intercepts_match_finite_differences():
    """dL/dintercept[n] = sum of g over the steps through node n, when the layer has one."""
    rng = np.random.default_rng(8)
    lay = HierarchicalSoftmax.from_counts(rng.integers(1, 50, 11), dim=3, intercept=True)
    lay.weights[:] = rng.normal(0, 1, lay.weights.shape)
    lay.intercept[:] = rng.normal(0, 1, lay.intercept.shape)
    H = rng.normal(0, 1, (4, 3)).astype(np.float32)
    y = np.array([0, 5, 10, 5])
    g = lay.backward(H, y, nodes=True)
    assert g.intercept is not None and g.intercept.shape == g.nodes.shape

    def loss(b):
        keep = lay.intercept.copy()
        lay.intercept[:] = b
        try:
            return -lay.log_prob(H, y).astype(np.float64).sum()
        finally:
            lay.intercept[:] = keep

    b = lay.intercept.astype(np.float64)
    eps = 1e-3
    for slot, n in enumerate(g.nodes):
        up, down = b.copy(), b.copy()
        up[n] += eps
        down[n] -= eps
        np.testing.assert_allclose(g.intercept[slot], (loss(up) - loss(down)) / (2 * eps),
                                   rtol=1e-2, atol=1e-3)  # fmt: skip


def test_a_step_along_the_node_gradient_is_the_layers_own_update():
    rng = np.random.default_rng(7)
    lay = make_layer("huffman", 30, 6, rng)
    H = rng.normal(0, 1, (8, 6)).astype(np.float32)
    y = rng.integers(0, 30, 8)
    g = lay.backward(H, y, nodes=True)
    stepped = lay.weights.copy()
    stepped[g.nodes] -= 0.1 * g.rows
    lay.update(H, y, lr=0.1)
    np.testing.assert_allclose(lay.weights, stepped, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- the autograd recipe (docs)
def recipe_source() -> str:
    """The PyTorch recipe of docs/layer.md, as the page shows it."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "layer.md").read_text("utf-8")
    block = page.split("### Recipe: the layer as a PyTorch autograd function", 1)[1]
    return block.split("```python\n", 1)[1].split("```", 1)[0]


def test_recipe_math_chain_rule_through_an_encoder_matches_finite_differences():
    """What the recipe's backward hands the framework, checked without it: an encoder
    H = X A under the layer, dL/dA = X^T dL/dH and dL/dW scattered from the node rows, against
    finite differences of the whole loss in A and W."""
    rng = np.random.default_rng(11)
    lay = make_layer("huffman", 13, 4, rng)
    X = rng.normal(0, 1, (5, 6))
    A = rng.normal(0, 0.5, (6, 4))
    y = np.array([0, 3, 12, 3, 7])

    def loss(A, W):
        return ref_loss(W, lay.tree, X @ A, y)

    H = (X @ A).astype(np.float32)
    g = lay.backward(H, y, nodes=True)
    dA = X.T @ g.hidden.astype(np.float64)
    dW = np.zeros(lay.weights.shape)
    dW[g.nodes] = g.rows  # the recipe's scatter of the touched rows
    W = lay.weights.astype(np.float64)
    eps = 1e-5
    for value, grad in ((A, dA), (W, dW)):
        num = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            keep = value[idx]
            value[idx] = keep + eps
            up = loss(A, W)
            value[idx] = keep - eps
            num[idx] = (up - loss(A, W)) / (2 * eps)
            value[idx] = keep
        np.testing.assert_allclose(grad, num, rtol=2e-3, atol=2e-5)


def test_recipe_runs_in_pytorch():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(recipe_source(), "docs/layer.md", "exec"), namespace)
    torch.manual_seed(0)
    rng = np.random.default_rng(12)
    X, y = blobs(400, 8, 12, seed=12)
    lay = HierarchicalSoftmax.from_counts(np.bincount(y, minlength=8) + 1, dim=6)
    lay.weights[:] = rng.normal(0, 0.1, lay.weights.shape)
    # autograd's gradients are the layer's own
    H = torch.tensor(X[:16, :6], requires_grad=True)
    W = torch.nn.Parameter(torch.from_numpy(lay.weights))
    yt = torch.from_numpy(y[:16])
    namespace["HierarchicalSoftmaxLoss"].apply(H, W, yt, lay).backward()
    g = lay.backward(X[:16, :6], y[:16], nodes=True)
    np.testing.assert_allclose(H.grad.numpy(), g.hidden, rtol=1e-6)
    np.testing.assert_allclose(W.grad.numpy(), g.dense_weights(7), rtol=1e-6)
    # and an encoder trains through it with Adam
    encoder = torch.nn.Linear(12, 6)
    batches = [
        (torch.from_numpy(X[s : s + 40]), torch.from_numpy(y[s : s + 40]))
        for _ in range(15)
        for s in range(0, 400, 40)
    ]
    losses = namespace["train"](encoder, batches, lay, lr=0.02)
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
    with torch.no_grad():
        hidden = encoder(torch.from_numpy(X)).numpy()
    assert (lay.topk(hidden, 1)[0][:, 0] == y).mean() > 0.9
