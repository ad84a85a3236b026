"""The layer's AdaGrad steps (``fit(optimizer="adagrad" | "rowwise-adagrad")``): the kernel's
one-example step against a NumPy reference, both accumulator layouts, the option's checks,
NaN-safety (a diverging epoch restores weights and accumulators) and that SGD is unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hsw2v import HierarchicalSoftmax
from hsw2v._kernels import _layer
from hsw2v.divergence import TrainingDivergedError

EPS = 1e-10


def setup(intercept, dense, seed=4, n_classes=6, dim=4, m=7):
    rng = np.random.default_rng(seed)
    lay = HierarchicalSoftmax.balanced(n_classes, dim=dim, intercept=intercept)
    lay.weights[:] = rng.normal(0, 1, lay.weights.shape)
    if intercept:
        lay.intercept[:] = rng.normal(0, 1, n_classes - 1)
    W_in = rng.normal(0, 1, (m, dim)).astype(np.float32)
    X = sp.random(3, m, density=0.5, random_state=seed, format="csr", dtype=np.float32)
    inputs = (
        {"dense": X.toarray()}
        if dense
        else {"indptr": X.indptr.astype(np.int64), "indices": X.indices.astype(np.int32),
              "data": X.data}
    )
    return lay, W_in, X, np.array([5, 0, 2], dtype=np.int32), inputs


def reference_step(lay, W_in, x, c, lr, acc_in, acc_node, full, b0):
    """The step of design note F of ``_layer.pyx`` in float64: returns the loss and the new
    (W_in, syn1, bias, acc_in, acc_node)."""
    d = W_in.shape[1]
    W, S = W_in.astype(np.float64), lay.weights.astype(np.float64)
    b = None if b0 is None else b0.astype(np.float64)
    A_in, A_node = acc_in.astype(np.float64), acc_node.astype(np.float64)
    h = x @ W
    n = lay.tree.lengths[c]
    pts, code = lay.tree.points[c, :n], lay.tree.codes[c, :n]
    f = S[pts] @ h + (0 if b is None else b[pts])
    loss = np.logaddexp(0, -(1 - 2.0 * code) * f).sum()
    g = 1 / (1 + np.exp(-f)) - (1 - code)
    grad_h = g @ S[pts]
    for gj, p in zip(g, pts, strict=True):
        u = gj * h
        if full:
            A = A_node.reshape(-1, d + 1)
            A[p, :d] += u * u
            S[p] -= lr * u / np.sqrt(A[p, :d] + EPS)
            if b is not None:
                A[p, d] += gj * gj
                b[p] -= lr * gj / np.sqrt(A[p, d] + EPS)
        else:
            sq = (u @ u + (gj * gj if b is not None else 0.0)) / (d + (b is not None))
            A_node[p] += sq
            s = lr / np.sqrt(A_node[p] + EPS)
            S[p] -= s * u
            if b is not None:
                b[p] -= s * gj
    for k in np.flatnonzero(x):
        u = x[k] * grad_h
        if full:
            A = A_in.reshape(-1, d)
            A[k] += u * u
            W[k] -= lr * u / np.sqrt(A[k] + EPS)
        else:
            A_in[k] += u @ u / d
            W[k] -= lr / np.sqrt(A_in[k] + EPS) * u
    return loss, W, S, b, A_in, A_node


@pytest.mark.parametrize("full", [True, False], ids=["per-weight", "row-wise"])
@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("dense", [True, False], ids=["dense", "csr"])
def test_one_adagrad_step_matches_the_numpy_reference(full, intercept, dense):
    lay, W_in, X, y, inputs = setup(intercept, dense)
    d, m, V = lay.dim, W_in.shape[0], lay.n_classes
    rng = np.random.default_rng(1)  # accumulators part-way through training
    acc_in = rng.random(m * d if full else m).astype(np.float32)
    acc_node = rng.random((V - 1) * (d + 1) if full else V - 1).astype(np.float32)
    state = (W_in.copy(), acc_in.copy(), acc_node.copy(),
             None if lay.intercept is None else lay.intercept.copy())
    trainer = _layer.FitTrainer(
        W_in, lay.weights, lay.tree.codes, lay.tree.points, lay.tree.lengths, y,
        bias=lay.intercept, acc_in=acc_in, acc_node=acc_node, **inputs,
    )
    want = reference_step(lay, state[0], X[1].toarray()[0].astype(np.float64), int(y[1]),
                          0.3, state[1], state[2], full, state[3])
    loss = _layer.py_fit_example(trainer, 1, 0.3)
    assert loss == pytest.approx(want[0], rel=1e-5)
    for got, ref in zip((W_in, lay.weights, lay.intercept, acc_in, acc_node), want[1:], strict=True):
        if ref is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, ref, rtol=2e-4, atol=1e-6)
    assert not np.array_equal(acc_node, state[2])  # the step did touch the accumulators


def test_the_trainer_checks_its_accumulators():
    lay, W_in, X, y, inputs = setup(True, False)
    args = (W_in, lay.weights, lay.tree.codes, lay.tree.points, lay.tree.lengths, y)
    with pytest.raises(ValueError, match="both AdaGrad accumulators"):
        _layer.FitTrainer(*args, acc_in=np.zeros(7, np.float32), **inputs)
    with pytest.raises(ValueError, match="AdaGrad accumulators need 7 and 5 entries"):
        _layer.FitTrainer(*args, acc_in=np.zeros(7, np.float32),
                          acc_node=np.zeros(6, np.float32), **inputs)


def data(seed=0, n=3000, m=40, n_classes=12):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centres = rng.normal(0, 1, (n_classes, m))
    X = (centres[y] + rng.normal(0, 1.5, (n, m))).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, y


@pytest.mark.parametrize("optimizer", ["adagrad", "rowwise-adagrad"])
def test_fit_with_adagrad_learns_and_keeps_its_state_across_calls(optimizer):
    X, y = data()
    lay = HierarchicalSoftmax.balanced(12, dim=16, intercept=True)
    lay.fit(X[:2000], y[:2000], epochs=4, lr=0.1, optimizer=optimizer)
    assert lay.history[-1] < lay.history[0] < np.log(12) * 1.1
    acc = tuple(a.copy() for a in lay._adagrad)
    assert all(np.all(a >= 0) and np.any(a > 0) for a in acc)
    lay.fit(X[:2000], y[:2000], epochs=1, lr=0.1, optimizer=optimizer)  # goes on from them
    assert all(np.all(b >= a) for a, b in zip(acc, lay._adagrad, strict=True))
    p1 = np.mean(lay.topk(lay.transform(X[2000:]), 1)[0][:, 0] == y[2000:])
    assert p1 > 0.5  # 12 classes: chance is 8 %


def test_fit_rejects_an_unknown_optimizer():
    X, y = data(n=50)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        HierarchicalSoftmax.balanced(12, dim=4).fit(X, y, optimizer="adam")


def test_sgd_does_not_touch_adagrad_state_and_stays_reproducible():
    X, y = data(n=500)
    a = HierarchicalSoftmax.balanced(12, dim=8, intercept=True).fit(X, y, epochs=2)
    b = HierarchicalSoftmax.balanced(12, dim=8, intercept=True).fit(X, y, epochs=2,
                                                                     optimizer="sgd")
    assert a._adagrad is None
    np.testing.assert_array_equal(a.input_weights, b.input_weights)
    np.testing.assert_array_equal(a.weights, b.weights)
    c = HierarchicalSoftmax.balanced(12, dim=8, intercept=True).fit(X, y, epochs=2,
                                                                     optimizer="adagrad")
    assert not np.array_equal(a.weights, c.weights)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("optimizer", ["adagrad", "rowwise-adagrad"])
def test_a_diverging_adagrad_epoch_restores_weights_and_accumulators(optimizer, workers):
    X, y = data(n=2000)
    lay = HierarchicalSoftmax.balanced(12, dim=8, intercept=True)
    lay.fit(X, y, epochs=1, lr=0.1, optimizer=optimizer, workers=workers)
    before = (lay.input_weights.copy(), lay.weights.copy(), lay.intercept.copy(),
              *(a.copy() for a in lay._adagrad), list(lay.history))
    bad = X.copy()
    bad[len(bad) // 2 :] = 3e38  # h overflows to inf: NaN gradients in the second half
    with pytest.raises(TrainingDivergedError, match="fit diverged in epoch 1"):
        lay.fit(bad, y, epochs=2, lr=0.1, optimizer=optimizer, workers=workers)
    got = (lay.input_weights, lay.weights, lay.intercept, *lay._adagrad)
    for g, b in zip(got, before[:-1], strict=True):
        np.testing.assert_array_equal(g, b)
    assert lay.history == before[-1]
    lay.fit(X, y, epochs=1, lr=0.1, optimizer=optimizer, workers=workers)  # goes on
    assert np.isfinite(lay.history[-1])
