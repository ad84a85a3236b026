"""The two-pass negative-sampling step (``train/_ns_pair.pxd`` / ``train/_ns_pair.h``) against the
word-by-word fused walk, bit for bit, and against a NumPy reference of the step.

The block takes every dot product of a set first and then one update pass, which is exact
only for a set whose rows are distinct; it groups its dot products six at a time and splits
a row into 16-, 8- and 4-float steps and a scalar tail, so it is checked at the widths and set
sizes that cross each of those edges.
"""

import numpy as np
import pytest

from hsw2v._kernels import _inner

WIDTHS = (1, 4, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 50, 100, 200, 300, 301)
COUNTS = (1, 2, 5, 6, 7, 11, 12, 13)


def _case(d, count, seed, scale=0.4):
    r = np.random.default_rng(seed)
    syn1neg = r.normal(0, scale, size=(40, d)).astype(np.float32)
    h = r.normal(0, scale, size=d).astype(np.float32)
    negs = r.choice(40, size=count, replace=False).astype(np.int32)
    return syn1neg, h, negs


@pytest.mark.parametrize("d", WIDTHS)
def test_block_is_the_fused_walk_bit_for_bit(d):
    """CBOW's call (work returned) and skip-gram's (work added into h, with and without a
    lock factor) give the fused walk's rows, work and h bits; the loss to float rounding."""
    for count in COUNTS:
        syn1neg, h, negs = _case(d, count, seed=d * 100 + count)
        a, b = syn1neg.copy(), syn1neg.copy()
        work_b, loss_b, check_b = _inner.py_ns_pair_block(h.copy(), a, negs, 0.05)
        work_f, loss_f = _inner.py_ns_path(h, b, negs, 0.05, "fused")
        assert np.array_equal(work_b, work_f), (d, count)
        assert np.array_equal(a, b), (d, count)
        assert loss_b == pytest.approx(loss_f, rel=1e-6)
        assert np.isfinite(check_b)
        assert not np.array_equal(a, syn1neg)  # control: the rows did move
        for lock in (1.0, 0.25):
            a, b = syn1neg.copy(), syn1neg.copy()
            h_block, h_fused = h.copy(), h.copy()
            out, _, _ = _inner.py_ns_pair_block(h_block, a, negs, 0.05, True, lock=[lock])
            assert out is None
            work_f, _ = _inner.py_ns_path(h_fused, b, negs, 0.05, "fused")
            _inner.py_axpy(lock, work_f, h_fused)  # the caller's step after the walk
            assert np.array_equal(a, b) and np.array_equal(h_block, h_fused), (d, count, lock)
            assert not np.array_equal(h_block, h)


@pytest.mark.parametrize("d", (7, 16, 100, 300))
@pytest.mark.parametrize("mean", (True, False))
def test_cbow_block_is_hidden_then_fused_walk_then_spread(d, mean):
    """CBOW's path through the new passes (the window's sum in one pass, the block, the error
    sent to every window row, a repeated context twice) against the passes it replaces:
    a zeroed h, ``h += row`` per context and ``h *= 1 / count`` (cbow_mean), the fused walk,
    then ``work *= 1 / count`` (sum mode) and ``row += lock * work`` per context. Bit for bit."""
    r = np.random.default_rng(d + mean)
    syn0 = r.normal(0, 0.5, size=(12, d)).astype(np.float32)
    syn1neg = r.normal(0, 0.4, size=(30, d)).astype(np.float32)
    contexts = np.array([3, 5, 3, 9, 0], dtype=np.int32)
    lock = np.array([1.0, 0.5, 1.0, 0.0, 1.0], dtype=np.float32)
    negs = np.array([4, 17, 2, 29, 11, 8], dtype=np.int32)
    inv = np.float32(1.0) / np.float32(len(contexts))
    h = _inner.py_rows_sum(syn0, contexts, inv if mean else 1.0)
    h_ref = np.zeros(d, dtype=np.float32)
    for c in contexts:
        _inner.py_axpy(1.0, syn0[c], h_ref)
    if mean:
        h_ref *= inv
    assert np.array_equal(h, h_ref)
    a, b = syn1neg.copy(), syn1neg.copy()
    s0a, s0b = syn0.copy(), syn0.copy()
    scale = 1.0 if mean else inv
    out, _, _ = _inner.py_ns_pair_block(
        h.copy(), a, negs, 0.05, syn0=s0a, contexts=contexts, lock=lock, scale=scale
    )
    assert out is None
    work, _ = _inner.py_ns_path(h_ref, b, negs, 0.05, "fused")
    if not mean:
        work *= inv
    for c, f in zip(contexts, lock, strict=True):
        _inner.py_axpy(float(f), work, s0b[c])
    assert np.array_equal(a, b) and np.array_equal(s0a, s0b)
    assert np.array_equal(s0a[9], syn0[9])  # lock 0: frozen
    assert not np.array_equal(s0a[3], syn0[3])


def numpy_ns_step(h, syn1neg, negs, alpha):
    """Word by word in float64: f = h . row, g = sigmoid(f) - label, a = -alpha g,
    work += a row (old row), row += a h; returns work and the loss."""
    rows = syn1neg.astype(np.float64)
    h = h.astype(np.float64)
    work = np.zeros_like(h)
    loss = 0.0
    for k, w in enumerate(negs):
        f = rows[w] @ h
        label = 1.0 if k == 0 else 0.0
        loss += np.logaddexp(0.0, -f if k == 0 else f)
        a = -alpha * (1.0 / (1.0 + np.exp(-f)) - label)
        work += a * rows[w]
        rows[w] += a * h
    return work, rows, loss


@pytest.mark.parametrize("d", (8, 50, 100, 300))
def test_block_against_numpy(d):
    """The step against a float64 NumPy reference (the table sigmoid's resolution apart)."""
    syn1neg, h, negs = _case(d, 6, seed=d, scale=0.3)
    a = syn1neg.copy()
    work, loss, check = _inner.py_ns_pair_block(h, a, negs, 0.05)
    ref_work, ref_rows, ref_loss = numpy_ns_step(h, syn1neg, negs, 0.05)
    scale = np.abs(ref_work).max()
    assert np.allclose(work, ref_work, rtol=0, atol=0.01 * scale)
    assert np.allclose(a, ref_rows, rtol=0, atol=1e-3)
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    ref_check = (syn1neg[negs].astype(np.float64) @ h.astype(np.float64)).sum()
    assert check == pytest.approx(ref_check, rel=1e-4, abs=1e-4)


def test_zero_coefficient_words_are_skipped_as_the_walk_skips_them():
    """A word whose sigmoid saturates at its label (a == 0: a target far above 8, a negative
    far below -8) moves no row, and its row is not part of work, as in the fused walk."""
    d = 16
    r = np.random.default_rng(3)
    syn1neg = r.normal(0, 0.3, size=(6, d)).astype(np.float32)
    h = np.full(d, 1.0, dtype=np.float32)
    syn1neg[0] = 2.0  # the target: f = 32, sigmoid 1, g = 0
    syn1neg[2] = -2.0  # a negative: f = -32, sigmoid 0, g = 0
    negs = np.array([0, 1, 2, 3], dtype=np.int32)
    a, b = syn1neg.copy(), syn1neg.copy()
    work_b, _, _ = _inner.py_ns_pair_block(h, a, negs, 0.05)
    work_f, _ = _inner.py_ns_path(h, b, negs, 0.05, "fused")
    assert np.array_equal(a, b) and np.array_equal(work_b, work_f)
    assert np.array_equal(a[0], syn1neg[0]) and np.array_equal(a[2], syn1neg[2])
    assert not np.array_equal(a[1], syn1neg[1])


def test_bad_input_is_refused():
    syn1neg, h, _ = _case(8, 3, seed=1)
    with pytest.raises(ValueError, match="one factor per input row"):
        _inner.py_ns_pair_block(h, syn1neg, np.array([1, 2], dtype=np.int32), 0.05, True,
                                lock=[1.0, 1.0])  # fmt: skip
    with pytest.raises(ValueError, match="pairwise different"):
        _inner.py_ns_pair_block(h, syn1neg, np.array([1, 2, 1], dtype=np.int32), 0.05)
    with pytest.raises(ValueError, match="not a row"):
        _inner.py_ns_pair_block(h, syn1neg, np.array([1, 99], dtype=np.int32), 0.05)


def test_training_with_repeated_negatives_is_the_reference_walk(monkeypatch):
    """Whole jobs on a six-word vocabulary, where negatives often repeat inside a set, so
    CBOW's job loop mixes the block and its word-by-word fallback (skip-gram takes the fused
    walk): the weights of the "reference" kernel bit for bit, skip-gram and CBOW (three
    epochs of updates compounding)."""
    from hsw2v import Word2Vec
    from hsw2v.running import trainer as running_trainer

    words = [f"w{k}" for k in range(6)]
    r = np.random.default_rng(0)
    sentences = [[str(w) for w in r.choice(words, size=12)] for _ in range(60)]
    for sg in (1, 0):
        weights = []
        for kernel in ("fused", "reference"):
            monkeypatch.setattr(running_trainer, "WALK", kernel)
            model = Word2Vec(
                sentences,
                vector_size=20,
                min_count=1,
                sg=sg,
                hs=0,
                negative=5,
                workers=1,
                epochs=3,
                seed=4,
                sample=0,
            )
            weights.append((model.wv.vectors.copy(), model.syn1neg.copy()))
        (v_a, o_a), (v_b, o_b) = weights
        assert np.isfinite(v_a).all() and np.abs(o_a).max() > 0
        assert np.array_equal(v_a, v_b) and np.array_equal(o_a, o_b), sg


@pytest.mark.parametrize("d", (1, 4, 15, 16, 64, 100, 129, 136, 300))
@pytest.mark.parametrize("count", (1, 2, 9, 40))
def test_rows_sum_is_numpy_row_by_row_in_order(d, count):
    """The rows' sum (``hsw2v_rows_sum``: CBOW's h, FastText's mean of a word's rows) is
    float32 ``out += row`` row by row, from a zeroed out, then ``out *= scale``: bit for
    bit, at widths that end on each step width and tail, for 1 to 40 rows (FastText's rows
    of a word), a repeated row too."""
    r = np.random.default_rng(d * 100 + count)
    rows = r.normal(0, 1.0, size=(count + 3, d)).astype(np.float32)
    which = r.integers(0, count + 3, size=count).astype(np.int32)
    which[-1] = which[0]  # a row listed twice counts twice
    for scale in (1.0, 1.0 / count):
        expected = np.zeros(d, dtype=np.float32)
        for w in which:
            expected += rows[w]
        if scale != 1.0:
            expected *= np.float32(scale)
        got = _inner.py_rows_sum(rows, which, scale)
        assert got.dtype == np.float32
        assert np.array_equal(got, expected), (d, count, scale)
