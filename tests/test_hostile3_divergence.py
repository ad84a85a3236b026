"""Hostile input, round three: a loss that grows by orders of magnitude but stays finite is
divergence (class 8). The classifier on standardized features backs off its rate and keeps
learning; the layer's ``fit`` refuses the epoch and restores its weights."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hsw2v.divergence import TrainingDivergedError
from hsw2v.huffman import build_huffman_tree
from hsw2v.layer import HierarchicalSoftmax

sklearn = pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    scaler = StandardScaler().fit(Xtr)
    return (
        scaler.transform(Xtr).astype(np.float32),
        ytr,
        scaler.transform(Xte).astype(np.float32),
        yte,
    )


def _accuracy(digits, **params):
    from hsw2v.classifier import HierarchicalSoftmaxClassifier

    Xtr, ytr, Xte, yte = digits
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = HierarchicalSoftmaxClassifier(workers=1, **params).fit(Xtr, ytr)
    said = [str(w.message) for w in caught if "diverged" in str(w.message)]
    return float((clf.predict(Xte) == yte).mean()), clf, said


@pytest.mark.parametrize("seed", [0, 1])
def test_standardized_digits_at_20_epochs_score_as_well_as_at_3(digits, seed):
    short, _, _ = _accuracy(digits, epochs=3, random_state=seed)
    long, clf, said = _accuracy(digits, epochs=20, random_state=seed)
    assert long >= short - 0.02, (short, long, clf.loss_curve_)
    assert long > 0.9
    # the training loss never grew by orders of magnitude, and the back-off was said
    assert max(clf.loss_curve_) < 10 * np.log(10) * 2
    assert said and "run again at lr=" in said[0] and "mean loss grew more than tenfold" in said[0]


def test_the_classifier_early_stopping_never_keeps_a_grown_loss(digits):
    _, clf, _ = _accuracy(digits, epochs=20, random_state=0, validation_fraction=0.2)
    assert np.isfinite(clf.validation_loss_).all()
    assert max(clf.validation_loss_) < 10


def test_the_layer_fit_refuses_an_epoch_whose_loss_grew_and_restores_its_weights(digits):
    Xtr, ytr, _, _ = digits
    counts = np.bincount(ytr, minlength=10).astype(np.int64)
    layer = HierarchicalSoftmax(build_huffman_tree(counts), 16, seed=0)
    layer.fit(Xtr, ytr, epochs=1, lr=0.001, workers=1)  # healthy
    before = (layer.weights.copy(), layer.input_weights.copy(), list(layer.history))
    with pytest.raises(TrainingDivergedError, match="mean loss grew to .* more than 10 times") as e:
        layer.fit(Xtr, ytr, epochs=3, lr=0.1, workers=1)
    assert e.value.cause == "growth"
    assert np.array_equal(layer.weights, before[0])
    assert np.array_equal(layer.input_weights, before[1])
    assert layer.history == before[2]


def test_healthy_fits_are_not_called_divergent():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 8)).astype(np.float32) * 0.3
    y = (X[:, 0] > 0).astype(int) + 2 * (X[:, 1] > 0)
    layer = HierarchicalSoftmax.balanced(4, 8, seed=1)
    layer.fit(X, y, epochs=30, lr=0.1, workers=1)
    assert layer.history[-1] < layer.history[0]


def test_loss_grew():
    from hsw2v.divergence import loss_grew

    assert loss_grew(float("nan"), 1.0) and loss_grew(float("inf"), 1.0)
    assert loss_grew(24.0, 2.3) and not loss_grew(22.0, 2.3)
    assert not loss_grew(40.0, 2.3, best=5.0) and loss_grew(51.0, 2.3, best=5.0)
