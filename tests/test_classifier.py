"""HierarchicalSoftmaxClassifier: scikit-learn's estimator checks, labels of any kind, dense and
CSR features, early stopping, sample weights, partial_fit, and the confusing cases of the
layer's API that the estimator removes."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from sklearn.model_selection import cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import Normalizer  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from hsw2v import HierarchicalSoftmaxClassifier  # noqa: E402
from hsw2v.classifier import encode_labels  # noqa: E402

EXPECTED_FAILURES = {
    # sample_weight is honoured by weighted sampling of the rows (fit's docstring): equal to
    # repeating rows in expectation, not bit for bit as these two checks demand
    "check_sample_weight_equivalence_on_dense_data": "weights are sampled, not exact",
    "check_sample_weight_equivalence_on_sparse_data": "weights are sampled, not exact",
}


@parametrize_with_checks(
    [HierarchicalSoftmaxClassifier(), HierarchicalSoftmaxClassifier(root_width=None)],
    expected_failed_checks=lambda est: EXPECTED_FAILURES,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def blobs(n=600, n_classes=6, m=10, seed=1, noise=0.3):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, m))
    y = rng.integers(0, n_classes, n)
    X = (centres[y] + noise * rng.normal(size=(n, m))).astype(np.float32)
    return X, y


def test_any_hashable_labels_and_dense_or_csr_features():
    X, y = blobs()
    names = np.array(["ant", "bee", "cat", "dog", "eel", "fox"], dtype=object)
    for labels in (names[y], names[y].astype(str), y + 10, y * 2.0):
        clf = HierarchicalSoftmaxClassifier(dim=16, epochs=10, random_state=0).fit(X, labels)
        assert len(clf.classes_) == 6
        assert clf.score(X, labels) > 0.9
        dense = clf.predict(X)
        np.testing.assert_array_equal(clf.predict(sp.csr_matrix(X)), dense)
    assert clf.classes_.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_the_regression_warning_counts_rows_not_distinct_labels():
    """The targets are checked on the distinct labels (no second sort of y); scikit-learn's
    warning about a class per row must still count the rows."""
    X, y = blobs(n=600)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        HierarchicalSoftmaxClassifier(epochs=1).fit(X, y)
    with pytest.warns(UserWarning, match="greater than 50%"):
        HierarchicalSoftmaxClassifier(epochs=1).fit(X[:40], np.arange(40))


def test_labels_that_cannot_be_sorted_keep_first_seen_order():
    codes, classes = encode_labels(np.array(["b", 2, "a", 2, "b"], dtype=object))
    assert classes.tolist() == ["b", 2, "a"]
    assert codes.tolist() == [0, 1, 2, 1, 0]
    codes, classes = encode_labels(np.array(["b", "c", "a", "c"], dtype=object))
    assert classes.tolist() == ["a", "b", "c"] and codes.tolist() == [1, 2, 0, 2]


def test_features_as_wide_as_dim_are_features_not_hidden_vectors():
    """The layer's old predict_proba(X) with m == dim silently scored X as hidden vectors;
    the estimator's predict_proba takes features, and agrees with predict."""
    X, y = blobs(m=16)
    clf = HierarchicalSoftmaxClassifier(dim=16, epochs=10, random_state=0).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (600, 6)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-5)  # float32 node scores
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    assert (clf.predict(X) == y).mean() > 0.9
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba, rtol=1e-6)


def test_predict_topk_takes_features_and_matches_the_full_distribution():
    X, y = blobs()
    labels = np.array(list("abcdef"))[y]
    clf = HierarchicalSoftmaxClassifier(dim=8, epochs=5, random_state=0).fit(X, labels)
    top, p = clf.predict_topk(X[:20], k=3)
    assert top.shape == p.shape == (20, 3)
    proba = clf.predict_proba(X[:20])
    best = np.argsort(-proba, axis=1, kind="stable")[:, :3]
    np.testing.assert_allclose(p, np.take_along_axis(proba, best, axis=1), rtol=1e-5)
    np.testing.assert_array_equal(top[:, 0], clf.predict(X[:20]))
    assert set(top.ravel()) <= set("abcdef")


def test_pipeline_and_cross_validation():
    X, y = blobs(n=300)
    pipe = make_pipeline(Normalizer(), HierarchicalSoftmaxClassifier(epochs=10, random_state=0))
    scores = cross_val_score(pipe, sp.csr_matrix(X), y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.8
    assert pipe.get_params()["hierarchicalsoftmaxclassifier__dim"] == 64


def test_early_stopping_stops_and_keeps_the_best_epoch(capsys):
    X, y = blobs()
    clf = HierarchicalSoftmaxClassifier(
        epochs=30, validation_fraction=0.2, n_iter_no_change=2, tol=1e9, random_state=0,
        verbose=1,
    ).fit(X, y)  # fmt: skip
    # the first epoch improves on nothing seen; no later one improves by 1e9
    assert clf.n_iter_ == 3 == len(clf.validation_loss_) == len(clf.loss_curve_)
    out = capsys.readouterr().out
    assert out.count("validation loss") == 3 and "stopped" in out
    # without the hold-out, the same rule watches the training loss
    clf = HierarchicalSoftmaxClassifier(epochs=30, n_iter_no_change=4, tol=1e9).fit(X, y)
    assert clf.n_iter_ == 5 and clf.validation_loss_ == []
    # a real run keeps improving and runs all its epochs; the weights kept are the best epoch's
    clf = HierarchicalSoftmaxClassifier(epochs=4, validation_fraction=0.25, random_state=0)
    clf.fit(X, y)
    assert clf.n_iter_ == 4 and clf.validation_loss_[-1] < clf.validation_loss_[0]


@pytest.mark.parametrize("root_width", [None, 3])
def test_early_stopping_restores_the_best_weights(monkeypatch, root_width):
    X, y = blobs()
    seen = []
    real = HierarchicalSoftmaxClassifier._weights_copy

    def record(self):
        copy = real(self)
        seen.append(copy)
        return copy

    monkeypatch.setattr(HierarchicalSoftmaxClassifier, "_weights_copy", record)
    # lr so high that later epochs make the hold-out loss worse (on the Huffman tree without
    # intercepts; the default learned tree fits these blobs too well to ever get worse), but
    # not so high that the loss grows tenfold (divergence, backed off: lr=2.0 did)
    clf = HierarchicalSoftmaxClassifier(
        epochs=8, lr=1.0, validation_fraction=0.3, n_iter_no_change=8, random_state=3,
        tree="huffman", fit_intercept=False, root_width=root_width,
    ).fit(X * 20, y)
    best = int(np.argmin(clf.validation_loss_))
    assert best < clf.n_iter_ - 1, clf.validation_loss_  # a later epoch was worse
    names = ["weights", "input_weights"] + (["root_weights"] if root_width else [])
    assert sorted(seen[-1]) == sorted(names)
    for name in names:
        np.testing.assert_array_equal(getattr(clf.layer_, name), seen[-1][name])


def test_uniform_weights_train_as_no_weights_and_skewed_weights_move_the_prior():
    rng = np.random.default_rng(0)
    X = np.ones((400, 3), dtype=np.float32)  # nothing to learn but the class prior
    y = np.array(["a", "b"] * 200)
    kw = dict(dim=4, epochs=20, lr=0.05, random_state=0)
    plain = HierarchicalSoftmaxClassifier(**kw).fit(X, y)
    uniform = HierarchicalSoftmaxClassifier(**kw).fit(X, y, sample_weight=np.full(400, 2.5))
    np.testing.assert_array_equal(plain.layer_.weights, uniform.layer_.weights)
    assert abs(plain.predict_proba(X[:1])[0, 0] - 0.5) < 0.1
    w = np.where(y == "a", 3.0, 1.0) * rng.uniform(0.9, 1.1, 400)
    skewed = HierarchicalSoftmaxClassifier(**kw).fit(X, y, sample_weight=w)
    assert 0.65 < skewed.predict_proba(X[:1])[0, 0] < 0.85  # 3:1 -> 0.75
    # zero weight: those rows are never trained on (their labels are flipped here)
    Xb, yb = blobs(n=400, n_classes=3)
    noisy = yb.copy()
    noisy[:150] = (yb[:150] + 1) % 3
    w = np.r_[np.zeros(150), np.ones(250)]
    clean = HierarchicalSoftmaxClassifier(epochs=10, random_state=0)
    assert clean.fit(Xb, noisy, sample_weight=w).score(Xb[:150], yb[:150]) > 0.9
    with pytest.raises(ValueError, match="1 class with positive weight"):
        clean.fit(Xb, yb, sample_weight=(yb == 0).astype(float))
    with pytest.raises(ValueError, match="Negative values"):
        clean.fit(Xb, yb, sample_weight=-np.ones(400))


def test_partial_fit_learns_in_batches_and_checks_its_input():
    X, y = blobs(n=900)
    names = np.array(list("uvwxyz"))[y]
    clf = HierarchicalSoftmaxClassifier(dim=16, lr=0.05, random_state=0)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X[:10], names[:10])
    for _epoch in range(5):
        for s in range(0, 900, 300):
            clf.partial_fit(X[s : s + 300], names[s : s + 300], classes=list("zyxwvu"))
    assert clf.classes_.tolist() == list("uvwxyz") and clf.n_iter_ == 15
    assert clf.score(X, names) > 0.9
    with pytest.raises(ValueError, match="X has 9 features"):
        clf.partial_fit(X[:5, :9], names[:5])
    with pytest.raises(ValueError, match="'q', not in classes_"):
        clf.partial_fit(X[:2], ["u", "q"])
    with pytest.raises(ValueError, match="differs from the classes"):
        clf.partial_fit(X[:2], ["u", "v"], classes=["u", "v"])


def test_parameters_are_checked_with_clear_errors():
    X, y = blobs(n=60)
    for params, message in [
        ({"dim": 0}, "dim must be an integer >= 1"),
        ({"epochs": 1.5}, "epochs must be an integer"),
        ({"lr": -1}, "need lr > 0"),
        ({"tree": "random"}, "tree must be one of"),
        ({"optimizer": "adam"}, "optimizer must be one of"),
        ({"validation_fraction": 1.0}, "validation_fraction must be None or in"),
        ({"validation_fraction": 0.001}, "both need at least one row"),
    ]:
        with pytest.raises(ValueError, match=message):
            HierarchicalSoftmaxClassifier(**params).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes in y, got 1 class"):
        HierarchicalSoftmaxClassifier().fit(X, np.zeros(60))


@pytest.mark.parametrize("optimizer", ["adagrad", "rowwise-adagrad"])
def test_the_optimizer_reaches_the_layer_and_trains(optimizer):
    X, y = blobs()
    clf = HierarchicalSoftmaxClassifier(optimizer=optimizer, root_width=None, epochs=10,
                                        random_state=0)
    assert clf.fit(X, y).score(X, y) > 0.9
    assert clf.get_params()["optimizer"] == optimizer
    assert clf.layer_._adagrad is not None  # the layer kept its accumulators
    assert HierarchicalSoftmaxClassifier(random_state=0).fit(X, y).layer_._adagrad is None


def test_trees_and_intercept_follow_the_layer_they_run_on():
    X, y = blobs()
    balanced = HierarchicalSoftmaxClassifier(tree="balanced", epochs=10, random_state=0)
    assert balanced.fit(X, y).score(X, y) > 0.9
    assert balanced.layer_.tree.lengths.max() - balanced.layer_.tree.lengths.min() <= 1
    kmeans = HierarchicalSoftmaxClassifier(tree="kmeans", epochs=10, random_state=0)
    assert kmeans.fit(X, y).score(X, y) > 0.9
    clf = HierarchicalSoftmaxClassifier(
        tree="huffman", fit_intercept=True, root_width=None, epochs=10, random_state=0
    )
    assert clf.fit(X, y).score(X, y) > 0.9 and np.any(clf.layer_.intercept != 0)
    wide = HierarchicalSoftmaxClassifier(tree="huffman", root_width=4, epochs=10, random_state=0)
    assert wide.fit(X, y).score(X, y) > 0.9 and np.any(wide.layer_.root_intercept != 0)
    assert wide.layer_.root_width == 4
    plain = HierarchicalSoftmaxClassifier(fit_intercept=False, epochs=10, random_state=0)
    assert plain.fit(X, y).layer_.intercept is None
    assert plain.layer_.root_intercept is None


def test_unscaled_features_back_off_instead_of_diverging():
    X, y = blobs(n=300)
    clf = HierarchicalSoftmaxClassifier(lr=0.5, epochs=5, random_state=0)
    with pytest.warns(RuntimeWarning, match="(?i)scale the features"):
        clf.fit(X * 1000, y)
    assert np.isfinite(clf.layer_.weights).all() and clf.score(X * 1000, y) > 0.5


def test_two_workers_learn_and_the_fitted_model_pickles():
    X, y = blobs(n=3000)
    clf = HierarchicalSoftmaxClassifier(workers=2, job_size=100, epochs=5).fit(X, y)
    assert clf.score(X, y) > 0.9
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.predict_proba(X[:50]), clf.predict_proba(X[:50]))


def test_without_scikit_learn_the_error_says_how_to_get_it():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "import hsw2v\n"
        "from hsw2v import *  # works without scikit-learn\n"
        "try:\n"
        "    hsw2v.HierarchicalSoftmaxClassifier\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pip install 'scikit-learn>=1.6'" in out.stdout
