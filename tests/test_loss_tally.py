"""The training loss tally of the walks (``math/_loss.h``): -log sigmoid(y) of float32 scores,
eight terms at a time, summed in float64. Its twin against NumPy's float64 ``logaddexp``, and
the loss the default walks report (hierarchical softmax, negative sampling, both) against the
reference walks', which take each term from libm one node at a time (the negative-sampling
step's loss is also checked against NumPy in tests/test_negative.py)."""

import numpy as np
import pytest

from hsw2v import Word2Vec
from hsw2v._kernels import _inner
from hsw2v.running import trainer as running_trainer
from tests.conftest import planted_corpus


def reference(y):
    return np.logaddexp(0.0, -np.asarray(y, dtype=np.float64))


@pytest.mark.parametrize("scale", [0.5, 4.0, 30.0])
def test_sum_matches_numpy(scale):
    y = (np.random.default_rng(int(scale)).normal(size=10_001) * scale).astype(np.float32)
    assert _inner.py_neg_log_sigmoid_sum(y) == pytest.approx(reference(y).sum(), rel=2e-7)


def test_each_term_to_float32_precision():
    y = np.concatenate([np.linspace(-100, 100, 4001), [0.0, -87.0, 87.0, 86.9, -1e-8, 1e-8]])
    y = y.astype(np.float32)
    got = np.array([_inner.py_neg_log_sigmoid_sum(y[i : i + 1]) for i in range(len(y))])
    want = reference(y)
    big = want > 1e-30
    assert np.all(np.abs(got[big] - want[big]) <= 5e-6 * want[big])  # any level, FMA or not
    assert np.all(np.abs(got - want) <= 2e-38 + 5e-6 * want)  # the tiny ones: absolute


def test_every_count_and_odd_values():
    y = np.linspace(-9, 9, 37).astype(np.float32)
    for n in range(len(y) + 1):
        assert _inner.py_neg_log_sigmoid_sum(y[:n]) == pytest.approx(
            reference(y[:n]).sum(), rel=2e-7, abs=1e-12
        )
    inf = np.float32(np.inf)
    assert np.isnan(_inner.py_neg_log_sigmoid_sum(np.array([1, np.nan, 2], np.float32)))
    assert _inner.py_neg_log_sigmoid_sum(np.array([inf], np.float32)) == 0.0
    assert _inner.py_neg_log_sigmoid_sum(np.array([-inf], np.float32)) == np.inf


def test_long_sums_keep_their_exponent():
    """The running product of the factors 1 + t is kept as mantissa and exponent: 10^5 terms
    of log 2 (a product of 2^100000, far beyond float64) sum right, and a NaN or an infinite
    term late in a long array still shows."""
    y = np.zeros(100_000, np.float32)
    assert _inner.py_neg_log_sigmoid_sum(y) == pytest.approx(1e5 * np.log(2.0), rel=1e-12)
    y[-70_001] = np.nan
    assert np.isnan(_inner.py_neg_log_sigmoid_sum(y))
    y[-70_001] = -np.inf
    assert _inner.py_neg_log_sigmoid_sum(y) == np.inf
    y = np.random.default_rng(5).normal(size=1_000_003).astype(np.float32)
    assert _inner.py_neg_log_sigmoid_sum(y) == pytest.approx(reference(y).sum(), rel=2e-7)


MODES = {"sg-hs": (1, 1, 0), "cbow-hs": (0, 1, 0), "sg-ns": (1, 0, 5), "cbow-ns": (0, 0, 5),
         "sg-hs+ns": (1, 1, 5), "cbow-hs+ns": (0, 1, 5)}


@pytest.mark.parametrize("sg,hs,negative", MODES.values(), ids=MODES.keys())
def test_training_loss_matches_the_reference_walk(monkeypatch, sg, hs, negative):
    """The default walks (the window walks of skip-gram and CBOW, the fused
    negative-sampling step) tally through math/_loss.h; the reference walks take libm's
    -log sigmoid per node. One worker, one seed: the same training, to the
    float rounding by which the walks' updates differ."""
    sentences, _ = planted_corpus(n_clusters=4, words_per_cluster=8, n_sentences=300, seed=3)
    losses = {}
    for kernel in ("auto", "reference"):
        monkeypatch.setattr(running_trainer, "WALK", kernel)
        model = Word2Vec(
            sentences, vector_size=16, window=3, min_count=1, sg=sg, hs=hs, negative=negative,
            workers=1, seed=4, epochs=2, compute_loss=True,
        )  # fmt: skip
        losses[kernel] = model.get_latest_training_loss()
    assert losses["auto"] > 0
    assert losses["auto"] == pytest.approx(losses["reference"], rel=1e-4)
