"""Shared negatives (skip-gram): the block step and whole jobs against NumPy references.

Ji et al. 2016, "Parallelizing Word2Vec in Shared and Distributed Memory": one set of
negatives per centre word, shared by its contexts (``hsw2v/_kernels/train/_ns_shared.pxd``).
"""

import numpy as np
import pytest
from conftest import word2vec_trainer

from hsw2v import Word2Vec
from hsw2v._kernels import _inner
from hsw2v.huffman import build_huffman_tree
from hsw2v.negative import make_cum_table
from tests.test_kernels import XorShift64Star, numpy_hs_path

D = 16


def numpy_shared_block(syn0, contexts, syn1neg, negs, alpha, lockf=None):
    """The block step of ``train/_ns_shared.pxd`` design note B in float64, in place: each context
    in window order scores every row of the set as it stands, then the set's rows in order:
    the context takes the row's step from the row before it, the row from the context before
    its step. Returns the loss."""
    labels = np.zeros(len(negs))
    labels[0] = 1.0
    loss = 0.0
    for c, w in enumerate(contexts):
        h = syn0[w].copy()
        f = syn1neg[negs] @ h
        loss += np.logaddexp(0.0, -(2 * labels - 1) * f).sum()
        g = (labels - 1 / (1 + np.exp(-f))) * alpha
        step = np.zeros_like(h)
        for k, row in enumerate(negs):
            step += g[k] * syn1neg[row]
            syn1neg[row] += g[k] * h
        syn0[w] += (1.0 if lockf is None else lockf[c]) * step
    return loss


def block_case(seed, contexts, negs, lockf=None, V=12):
    r = np.random.default_rng(seed)
    syn0 = r.uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
    syn1neg = r.normal(0, 0.3, size=(V, D)).astype(np.float32)
    ref0, ref1 = syn0.astype(np.float64), syn1neg.astype(np.float64)
    contexts = np.asarray(contexts, dtype=np.int32)
    negs = np.asarray(negs, dtype=np.int32)
    exp_loss = numpy_shared_block(ref0, contexts, ref1, negs, 0.05, lockf)
    loss, check = _inner.py_ns_shared_block(syn0, contexts, syn1neg, negs, 0.05, lockf=lockf)
    return (syn0, syn1neg, loss, check), (ref0, ref1, exp_loss)


@pytest.mark.parametrize(
    "contexts,negs",
    [
        ([1, 2, 3, 4], [5, 6, 7, 8]),  # distinct
        ([1, 2, 1, 3], [5, 6, 6, 7]),  # a context twice, a negative drawn twice
        ([9], [9, 0]),  # the context word is also the target (different matrices)
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [0]),  # no negative kept
    ],
)
def test_shared_block_matches_numpy(contexts, negs):
    (syn0, syn1neg, loss, check), (ref0, ref1, exp_loss) = block_case(3, contexts, negs)
    assert np.allclose(syn0, ref0, atol=2e-4)
    assert np.allclose(syn1neg, ref1, atol=2e-4)
    # a repeated context scores against its stepped row, whose step carries the table
    # sigmoid's error (about 1e-3 in sigmoid): the loss agrees to 1e-4
    assert loss == pytest.approx(exp_loss, rel=1e-4)
    assert np.isfinite(check)


def test_shared_block_moves_rows_it_should_and_no_other():
    (syn0, syn1neg, _, _), (ref0, _, _) = block_case(4, [1, 2], [5, 6])
    r = np.random.default_rng(4)
    start0 = r.uniform(-0.5, 0.5, size=(12, D)).astype(np.float32)
    start1 = r.normal(0, 0.3, size=(12, D)).astype(np.float32)
    moved0 = np.flatnonzero(np.any(syn0 != start0, axis=1))
    moved1 = np.flatnonzero(np.any(syn1neg != start1, axis=1))
    assert moved0.tolist() == [1, 2]
    assert moved1.tolist() == [5, 6]


def test_shared_block_lock_factors_scale_each_context():
    lockf = np.array([0.0, 1.0, 0.5], dtype=np.float32)
    (syn0, syn1neg, _, _), (ref0, ref1, _) = block_case(5, [1, 2, 3], [5, 6, 7], lockf=lockf)
    start0 = np.random.default_rng(5).uniform(-0.5, 0.5, size=(12, D)).astype(np.float32)
    assert np.array_equal(syn0[1], start0[1])  # frozen
    assert np.allclose(syn0, ref0, atol=2e-4)
    assert np.allclose(syn1neg, ref1, atol=2e-4)  # the output rows are trained as usual


def test_shared_block_is_the_pair_walk_for_one_context():
    """With one context the shared block is the pair-by-pair step (to rounding): the same
    scores, the same steps in the same order."""
    r = np.random.default_rng(6)
    syn0 = r.uniform(-0.5, 0.5, size=(8, D)).astype(np.float32)
    syn1neg = r.normal(0, 0.3, size=(8, D)).astype(np.float32)
    negs = np.array([3, 4, 5], dtype=np.int32)
    a0, a1 = syn0.copy(), syn1neg.copy()
    work, loss_pair = _inner.py_ns_path(a0[2].copy(), a1, negs, 0.05, walk="reference")
    a0[2] += work
    loss, _ = _inner.py_ns_shared_block(syn0, np.array([2], np.int32), syn1neg, negs, 0.05)
    assert np.allclose(syn0, a0, atol=1e-6)
    assert np.allclose(syn1neg, a1, atol=1e-6)
    assert loss == pytest.approx(loss_pair, rel=1e-6)


def test_shared_block_twin_rejects_bad_input():
    syn0 = np.zeros((4, D), np.float32)
    syn1neg = np.zeros((4, D), np.float32)
    with pytest.raises(ValueError, match="not a row of syn0"):
        _inner.py_ns_shared_block(syn0, np.array([4], np.int32), syn1neg,
                                  np.array([0], np.int32), 0.1)
    with pytest.raises(ValueError, match="not a row of syn1neg"):
        _inner.py_ns_shared_block(syn0, np.array([0], np.int32), syn1neg,
                                  np.array([-1], np.int32), 0.1)
    with pytest.raises(ValueError, match="at least one context"):
        _inner.py_ns_shared_block(syn0, np.zeros(0, np.int32), syn1neg,
                                  np.array([0], np.int32), 0.1)


def numpy_shared_job(ids, ends, syn0, syn1, syn1neg, tree, cum_table, sample_int, window,
                     alpha0, alpha1, negative, seed, hs):
    """Reference of one skip-gram job with shared negatives, in float64, replaying the
    kernel's stream: a draw per token (subsampling), then per centre the reduced window and
    one set of ``negative`` draws (when it has a context); per context the hierarchical-
    softmax walk (if hs), then the centre's block step."""
    syn0, syn1, syn1neg = (a.astype(np.float64) for a in (syn0, syn1, syn1neg))
    rng = XorShift64Star(seed)
    kept, kept_ends, start = [], [], 0
    for end in ends:
        for w in ids[start:end]:
            if sample_int[w] >= rng.next():
                kept.append(int(w))
        kept_ends.append(len(kept))
        start = end
    total, loss, start = len(kept), 0.0, 0
    for end in kept_ends:
        if end - start < 2:
            start = end
            continue
        for i in range(start, end):
            alpha = alpha0 + (alpha1 - alpha0) * (i / total)
            b = rng.next() % window
            lo, hi = max(start, i - window + b), min(end, i + window + 1 - b)
            ctx = [kept[j] for j in range(lo, hi) if j != i]
            if not ctx:
                continue
            negs, rng.state = _inner.py_draw_negatives(cum_table, kept[i], negative, rng.state)
            if hs:
                for c in ctx:
                    s1, work, path_loss = numpy_hs_path(syn0[c], syn1, tree.code(kept[i]),
                                                        tree.point(kept[i]), alpha)
                    syn1[:] = s1
                    syn0[c] += work
                    loss += path_loss
            loss += numpy_shared_block(syn0, ctx, syn1neg, negs, alpha)
        start = end
    return syn0, syn1, syn1neg, total, loss


@pytest.mark.parametrize("hs", [0, 1])
def test_shared_job_matches_numpy_reference_with_the_kernels_draws(hs):
    """A whole job on the default path (reduced windows, subsampling, alpha falling, several
    sentences, repeated words) with shared negatives: the reference replays the kernel's
    stream, so kept tokens, loss and weights agree (to the sigmoid table's error)."""
    r = np.random.default_rng(41)
    V = 40
    tree = build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
    syn0 = r.uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
    syn1 = r.normal(0, 0.2, size=(V, D)).astype(np.float32) if hs else np.zeros((0, D), np.float32)
    syn1neg = r.normal(0, 0.2, size=(V, D)).astype(np.float32)
    cum_table = make_cum_table(np.sort(r.integers(1, 500, size=V))[::-1])
    sample_int = (np.linspace(0.125, 1.0, V) * (2**32 - 1)).astype(np.uint32)
    ids = r.integers(0, V, size=300).astype(np.int32)
    ends = np.array([1, 40, 41, 43, 150, 300], dtype=np.int64)
    expected = numpy_shared_job(ids, ends, syn0, syn1, syn1neg, tree, cum_table, sample_int,
                                4, 0.05, 0.001, 3, 99, hs)
    trainer = word2vec_trainer(
        _inner.Trainer,
        syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int, window=4, sg=True,
        compute_loss=True, hs=bool(hs), negative=3, syn1neg=syn1neg, cum_table=cum_table,
        shared_negatives=True,
    )  # fmt: skip
    kept, loss = trainer.train_job(ids, ends, 0.05, 0.001, 99)
    assert 150 < kept < 250 and kept == expected[3]
    assert loss == pytest.approx(expected[4], rel=1e-5)
    assert np.allclose(syn0, expected[0], atol=3e-4)
    assert np.allclose(syn1neg, expected[2], atol=3e-4)
    if hs:
        assert np.allclose(syn1, expected[1], atol=3e-4)


def test_shared_job_differs_from_per_pair_draws():
    """Control: the per-pair job with the same seed draws other negatives (one set per
    context), so the reference above checks the shared draws and not gensim's."""
    r = np.random.default_rng(42)
    V = 30
    tree = build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
    cum_table = make_cum_table(np.sort(r.integers(1, 500, size=V))[::-1])
    sample_int = np.full(V, 2**32 - 1, dtype=np.uint32)
    ids = r.integers(0, V, size=120).astype(np.int32)
    ends = np.array([120], dtype=np.int64)
    out = []
    for shared in (False, True):
        syn0 = np.random.default_rng(1).uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
        syn1neg = np.zeros((V, D), np.float32)
        trainer = word2vec_trainer(
            _inner.Trainer,
            syn0, np.zeros((0, D), np.float32), tree.codes, tree.points, tree.lengths,
            sample_int, window=3, sg=True, hs=False, negative=5, syn1neg=syn1neg,
            cum_table=cum_table, shared_negatives=shared,
        )  # fmt: skip
        trainer.train_job(ids, ends, 0.05, 0.05, 5)
        out.append(syn0)
    assert not np.allclose(out[0], out[1], atol=1e-3)


def test_shared_negatives_word2vec_is_reproducible_and_learns():
    """workers=1 and a fixed seed give the same bits twice; the model trains (finite, moved);
    CBOW shares too (a set per run of centres, ``tests/test_kernels.py`` checks the rule),
    reproducibly, and ``False`` gives its set per centre."""
    from hsw2v.corpora import LineSentence
    from hsw2v.datasets import demo_corpus_path

    corpus = list(LineSentence(demo_corpus_path()))[:400]
    runs = [Word2Vec(corpus, sg=1, hs=0, negative=5, vector_size=20, min_count=2, epochs=1,
                     workers=1, seed=3, shared_negatives=True) for _ in range(2)]
    assert np.array_equal(runs[0].wv.vectors, runs[1].wv.vectors)
    assert np.array_equal(runs[0].syn1neg, runs[1].syn1neg)
    assert np.isfinite(runs[0].wv.vectors).all() and np.abs(runs[0].syn1neg).max() > 0
    per_pair = Word2Vec(corpus, sg=1, hs=0, negative=5, vector_size=20, min_count=2,
                        epochs=1, workers=1, seed=3, shared_negatives=False)
    assert not np.array_equal(per_pair.wv.vectors, runs[0].wv.vectors)
    default = Word2Vec(corpus, sg=1, hs=0, negative=5, vector_size=20, min_count=2, epochs=1,
                       workers=1, seed=3)  # shared negatives are the default
    assert default.shared_negatives is True
    assert np.array_equal(default.wv.vectors, runs[0].wv.vectors)
    cbow = [Word2Vec(corpus, sg=0, hs=0, negative=5, vector_size=20, min_count=2, epochs=1,
                     workers=1, seed=3, shared_negatives=s) for s in (False, True, True)]
    assert not np.array_equal(cbow[0].wv.vectors, cbow[1].wv.vectors)
    assert np.array_equal(cbow[1].wv.vectors, cbow[2].wv.vectors)
    assert np.array_equal(cbow[1].syn1neg, cbow[2].syn1neg)
    assert np.isfinite(cbow[1].wv.vectors).all()


def test_shared_negatives_is_saved_and_reaches_every_trainer(tmp_path):
    """The setting is saved with the model and used again after load(), in corpus_file mode
    and from the command line (where 0 turns it off); a model trained without it loads with
    it off."""
    from hsw2v.cli import main
    from hsw2v.corpora import LineSentence
    from hsw2v.datasets import demo_corpus_path

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in list(LineSentence(demo_corpus_path()))[:300])
                      + "\n")  # fmt: skip
    out = tmp_path / "m.hsw2v"
    argv = ["train", str(corpus), "-o", str(out), "-hs", "0", "-negative", "3", "--sg", "1",
            "--size", "8", "--epochs", "1", "--workers", "1", "--no-progress",
            "--shared-negatives", "1"]  # fmt: skip
    assert main(argv) == 0
    model = Word2Vec.load(str(out))
    assert model.shared_negatives is True
    kw = dict(corpus_file=str(corpus), sg=1, hs=0, negative=3, vector_size=8, epochs=1,
              workers=1, seed=2)  # fmt: skip
    shared = Word2Vec(**kw, shared_negatives=True)
    per_pair = Word2Vec(**kw, shared_negatives=False)
    assert np.isfinite(shared.wv.vectors).all()
    assert not np.array_equal(shared.wv.vectors, per_pair.wv.vectors)
    assert Word2Vec(**kw, shared_negatives=True).wv.vectors.tobytes() == shared.wv.vectors.tobytes()
    assert Word2Vec(**kw).wv.vectors.tobytes() == shared.wv.vectors.tobytes()  # the default
    per_pair.save(str(tmp_path / "p.hsw2v"))
    assert Word2Vec.load(str(tmp_path / "p.hsw2v")).shared_negatives is False
    assert main([*argv[:-1], "0"]) == 0
    assert Word2Vec.load(str(out)).shared_negatives is False


def test_cbow_shared_run_and_stride_are_checked_and_a_wide_window_trains():
    """The trainer refuses a run below 1 or a negative stride; a window far past any sentence
    (the default stride, 2 x window + 1, is capped) trains as any other."""
    from hsw2v.corpora import LineSentence
    from hsw2v.datasets import demo_corpus_path

    V = 10
    tree = build_huffman_tree(np.arange(V, 0, -1))
    syn0 = np.zeros((V, D), np.float32)
    args = (syn0, np.zeros((0, D), np.float32), tree.codes, tree.points, tree.lengths,
            np.full(V, 2**32 - 1, dtype=np.uint32))  # fmt: skip
    kw = dict(window=2, sg=False, hs=False, negative=2, syn1neg=np.zeros((V, D), np.float32),
              cum_table=make_cum_table(np.arange(V, 0, -1)), shared_negatives=True)  # fmt: skip
    with pytest.raises(ValueError, match="cbow_run must be >= 1"):
        word2vec_trainer(_inner.Trainer, *args, **kw, cbow_run=0)
    with pytest.raises(ValueError, match="cbow_stride >= 0"):
        word2vec_trainer(_inner.Trainer, *args, **kw, cbow_stride=-1)
    corpus = list(LineSentence(demo_corpus_path()))[:200]
    wide = Word2Vec(corpus, sg=0, hs=0, negative=3, vector_size=8, min_count=2, epochs=1,
                    workers=1, seed=1, window=100_000)  # fmt: skip
    assert np.isfinite(wide.wv.vectors).all() and np.abs(wide.syn1neg).max() > 0
