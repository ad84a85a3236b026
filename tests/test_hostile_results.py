"""Hostile input, silent-wrong-result class: divergence is never returned as a model of NaN
(distributed training, the classifier's retries, the layer's ``update``), and degenerate
trees give exact probabilities in every query."""

from __future__ import annotations

import contextlib
import math
import threading
import warnings

import numpy as np
import pytest

from hsw2v import HierarchicalSoftmax, Word2Vec
from hsw2v.divergence import TrainingDivergedError
from hsw2v.exceptions import EmptyCorpusError


# ---------------------------------------------------------------- 12. distributed
@contextlib.contextmanager
def local_client(n_workers: int):
    """A client of an in-process Dask cluster of ``n_workers`` workers (2 threads each), and
    the cluster."""
    distributed = pytest.importorskip("dask.distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=2, processes=False, dashboard_address=None
        )
        with cluster, distributed.Client(cluster) as client:
            yield client, cluster


@pytest.fixture(scope="module")
def client():
    with local_client(1) as (client, _):
        yield client


def random_corpus(path, n=2000, vocab=300, seed=0):
    rng = np.random.default_rng(seed)
    lines = (" ".join(f"w{j}" for j in rng.integers(0, vocab, 20)) for _ in range(n))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize(
    "params",
    [dict(sg=1), dict(sg=0), dict(sg=1, hs=0, negative=5)],
    ids=["sg-hs", "cbow-hs", "sg-ns"],
)
def test_distributed_divergence_raises_as_local_training_does(client, params, tmp_path):
    from hsw2v import distributed

    path = random_corpus(tmp_path / "c.txt")
    with pytest.raises(TrainingDivergedError, match="distributed training diverged.*lower alpha"):
        distributed.train(
            client, path, sync_every=5000, vector_size=50, min_count=1, epochs=3, alpha=1.0,
            **params,
        )
    model = distributed.train(  # the same cluster trains a sane setting afterwards
        client, path, sync_every=5000, vector_size=16, min_count=1, epochs=1, **params
    )
    assert np.isfinite(model.wv.vectors).all()


@pytest.mark.parametrize("content", ["", "\n\n  \n"], ids=["no bytes", "blank lines"])
def test_an_empty_corpus_on_dask_is_an_empty_corpus_error(client, content, tmp_path):
    from hsw2v import distributed

    path = tmp_path / "empty.txt"
    path.write_text(content)
    with pytest.raises(EmptyCorpusError, match="empty"):
        distributed.train(client, str(path), vector_size=8, min_count=1, epochs=1)


def test_failed_runs_leave_the_client_connected(client, tmp_path):
    """A run that fails (diverged, empty corpus) drops its tasks without tripping the
    scheduler: Client.cancel of a task whose dependents were just released asserts in
    distributed's scheduler, which dropped the client's connection and cancelled the next
    run's futures (scheduler-connection-lost)."""
    from hsw2v import distributed

    path = random_corpus(tmp_path / "c.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n  \n")
    for params in [dict(sg=1), dict(sg=0), dict(sg=1, hs=0, negative=5)]:
        with pytest.raises(TrainingDivergedError):
            distributed.train(
                client, path, sync_every=5000, vector_size=50, min_count=1, epochs=3,
                alpha=1.0, **params,
            )
        model = distributed.train(
            client, path, sync_every=5000, vector_size=16, min_count=1, epochs=1, **params
        )
        with pytest.raises(EmptyCorpusError, match="empty"):
            distributed.train(client, str(empty), vector_size=8, min_count=1, epochs=1)
    assert np.isfinite(model.wv.vectors).all()


# ---------------------------------------------------------------- 13. classifier retries
def test_the_classifier_raises_diverged_when_its_retries_run_out(monkeypatch):
    from hsw2v import classifier

    monkeypatch.setattr(classifier, "BACKOFFS", 2)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 10)).astype(np.float32) * 1e18  # diverges at any step size
    y = rng.integers(0, 5, 200)
    clf = classifier.HierarchicalSoftmaxClassifier(dim=8, epochs=2, lr=1.0, tree="balanced")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(TrainingDivergedError, match="2 times ten times lower"):
            clf.fit(X, y)


def test_the_backoff_count_is_exact_in_integers():
    # 10.0**-8 is not reached by dividing 1.0 by ten eight times: the old loop never stopped
    scale = 1.0
    for _ in range(8):
        scale /= 10
    assert scale != 10.0**-8


# ---------------------------------------------------------------- 14. update()
@pytest.mark.parametrize("width", [None, 3])
@pytest.mark.parametrize("intercept", [False, True])
def test_update_refuses_a_step_that_leaves_nonfinite_weights(width, intercept):
    layer = HierarchicalSoftmax.from_counts(
        [9, 5, 4, 3, 2, 1], dim=4, intercept=intercept, root_width=width
    )
    rng = np.random.default_rng(0)
    H = rng.normal(size=(16, 4)).astype(np.float32)
    y = rng.integers(0, 6, 16)
    layer.update(H, y, lr=0.5)
    before = (layer.weights.copy(), None if layer.intercept is None else layer.intercept.copy())
    with pytest.raises(TrainingDivergedError, match="update diverged"):
        layer.update(H * np.float32(1e18), y, lr=1e30)
    assert np.array_equal(layer.weights, before[0])
    if intercept:
        assert np.array_equal(layer.intercept, before[1])
    P = layer.proba(H)
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1.0)
    assert np.isfinite(layer.log_prob(H, y)).all()


# ---------------------------------------------------------------- 15. degenerate trees
@pytest.mark.parametrize("sg", [0, 1])
def test_a_one_word_vocabulary_scores_log_one(sg):
    model = Word2Vec(
        [["a"] * 6] * 10, vector_size=8, min_count=1, workers=1, hs=1, negative=0, sg=sg,
        epochs=1,
    )
    scores = model.score([["a", "a", "a"], ["a"], ["a", "zzz", "a"]], total_sentences=3)
    assert scores.tolist() == [0.0, 0.0, 0.0]
    assert model.predict_output_word(["a"]) == [("a", 1.0)]


@pytest.mark.parametrize("sg", [0, 1])
def test_a_two_word_vocabulary_scores_a_distribution(sg):
    model = Word2Vec(
        [["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1, hs=1, negative=0,
        sg=sg, epochs=2,
    )
    # each prediction's two outcomes are the two sides of the root: they sum to one
    pa = math.exp(model.score([["a", "a"]], total_sentences=1)[0] / (1 if sg == 0 else 2))
    pb = math.exp(model.score([["a", "b"]], total_sentences=1)[0] / (1 if sg == 0 else 2))
    assert 0 < pa < 1 and 0 < pb < 1
    probs = dict(model.predict_output_word(["a"], topn=2))
    assert abs(sum(probs.values()) - 1.0) < 1e-6


def test_a_two_class_layer_gives_exact_distributions():
    layer = HierarchicalSoftmax.from_counts([3, 1], dim=2)
    H = np.array([[1.0, -2.0], [0.0, 0.0]], dtype=np.float32)
    layer.weights[:] = [[0.5, 0.25]]
    P = layer.proba(H)
    assert np.allclose(P.sum(axis=1), 1.0)
    assert np.allclose(np.exp(layer.log_prob(H, [0, 0])), P[:, 0])
    idx, p = layer.topk(H, 2)
    assert np.allclose(p.sum(axis=1), 1.0)


@pytest.mark.parametrize("lr", [0.1, 1e3, 1e30])
def test_update_on_weights_near_the_float32_limit_never_leaves_them_nonfinite(lr):
    layer = HierarchicalSoftmax.balanced(4, dim=2)
    layer.weights[:] = [[3e38, -3e38]] * 3  # finite, but their products with H overflow
    H = np.full((2, 2), 10.0, dtype=np.float32)
    try:
        layer.update(H, [0, 3], lr=lr)
    except TrainingDivergedError as exc:
        assert "update diverged" in str(exc)
    assert np.isfinite(layer.weights).all()


def test_shards_wait_for_a_worker_when_none_is_listed():
    """Between a lost worker and its replacement the scheduler may list none: the engine
    waits for one (up to its timeout) instead of failing to place the shards."""
    from hsw2v.distributed import DaskEngine

    with local_client(0) as (client, cluster):
        engine = DaskEngine(client, timeout=1)
        with pytest.raises(TimeoutError):
            engine.submit_shards(abs, [((-1,), {})], name="none")
        threading.Timer(0.5, cluster.scale, args=(1,)).start()
        engine = DaskEngine(client, timeout=60)
        [future] = engine.submit_shards(abs, [((-3,), {})], name="one")
        assert future.result(timeout=60) == 3
