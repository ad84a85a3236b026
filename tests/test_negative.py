"""Negative sampling: the draw table and the draw, the ns routine against NumPy and finite
differences, learning, determinism, persistence, gensim conversion, score and prediction."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import (
    BENCH_WALKS,
    NOISE,
    WEAKENED,
    bench_walks,
    cluster_recovery,
    gensim_models,
    planted_corpus,
    weakened_settings,
    word2vec_trainer,
)

from hsw2v import Word2Vec, persist
from hsw2v._kernels import _inner
from hsw2v.negative import make_cum_table
from hsw2v.word2vec import _schema as _w2v_schema

D = 37  # not a multiple of the SIMD width, to exercise loop tails
KERNELS = ["fused", "reference", "loop", "blas"]


@pytest.fixture
def rng():
    return np.random.default_rng(2024)


@pytest.fixture(scope="module")
def small():
    sentences, clusters = planted_corpus(n_sentences=600, seed=4)
    return sentences, clusters


def zipf_counts(n, seed=0, ties=True):
    """Descending, Zipf-like counts with a long tail of small counts (with ties, or all
    distinct so that every library orders the vocabulary alike)."""
    rng = np.random.default_rng(seed)
    counts = (3_000_000 / np.arange(1, n + 1) ** 1.07).astype(np.int64)
    if ties:
        return np.maximum(np.sort(counts + rng.integers(0, 3, n))[::-1], 5)
    return counts + np.arange(n, 0, -1)


# ----------------------------------------------------------------------------- cum_table
@pytest.mark.parametrize("ns_exponent", [0.75, 1.0, 0.0, -0.5, 0.3])
def test_cum_table_equals_gensims(ns_exponent):
    counts = zipf_counts(2000, ties=False)
    freq = {f"w{i}": int(c) for i, c in enumerate(counts)}
    theirs = gensim_models.Word2Vec(
        vector_size=4, min_count=1, hs=0, negative=5, ns_exponent=ns_exponent
    )
    theirs.build_vocab_from_freq(freq)
    ours = Word2Vec(vector_size=4, min_count=1, hs=0, negative=5, ns_exponent=ns_exponent)
    ours.build_vocab_from_freq(freq)
    assert ours.wv.index_to_key == list(theirs.wv.index_to_key)
    assert ours.cum_table.dtype == np.uint32
    np.testing.assert_array_equal(ours.cum_table, theirs.cum_table)
    assert ours.cum_table[-1] == 2**31 - 1


def test_cum_table_with_tied_counts_equals_gensims():
    freq = {f"w{i}": int(c) for i, c in enumerate(zipf_counts(2000))}
    theirs = gensim_models.Word2Vec(vector_size=4, min_count=1, hs=0, negative=5)
    theirs.build_vocab_from_freq(freq)
    counts = [theirs.wv.get_vecattr(i, "count") for i in range(len(theirs.wv))]
    np.testing.assert_array_equal(make_cum_table(counts, 0.75), theirs.cum_table)


def test_cum_table_rejects_unusable_counts():
    with pytest.raises(ValueError, match="non-empty"):
        make_cum_table([])
    with pytest.raises(ValueError, match="every count must be positive"):
        make_cum_table([0, 0], ns_exponent=0.75)


# ----------------------------------------------------------------------------- the draw
def test_draws_follow_the_table_and_skip_the_target():
    counts = np.array([50, 20, 10, 10, 5, 3, 1, 1])
    table = make_cum_table(counts, 0.75)
    expected = np.diff(np.concatenate([[0], table.astype(np.float64)])) / table[-1]
    seen = np.zeros(len(counts))
    n_draws, state, skipped = 0, 99, 0
    for _ in range(4000):
        negs, state = _inner.py_draw_negatives(table, 2, 10, state)
        assert negs[0] == 2 and 2 not in negs[1:].tolist()
        skipped += 10 - (len(negs) - 1)
        np.add.at(seen, negs[1:], 1)
        n_draws += 10
    seen[2] = skipped  # draws of the target are left out, not redrawn
    # 40,000 draws: each share within 5 standard errors of the table's
    sd = np.sqrt(expected * (1 - expected) / n_draws)
    assert np.all(np.abs(seen / n_draws - expected) < 5 * sd + 1e-4)


def test_draws_are_a_function_of_the_stream():
    table = make_cum_table(zipf_counts(300), 0.75)
    a, sa = _inner.py_draw_negatives(table, 5, 20, 123)
    b, sb = _inner.py_draw_negatives(table, 5, 20, 123)
    c, _ = _inner.py_draw_negatives(table, 5, 20, 124)
    assert a.tolist() == b.tolist() and sa == sb
    assert a.tolist() != c.tolist()


# ----------------------------------------------------------------------------- ns routine
def numpy_ns_path(h, syn1neg, negs, alpha, sigmoid):
    """The update equations, written out: for each word k (label 1 for the first, 0 after),
    in order, f = u_k . h,  g = (label - sigmoid(f)) * alpha,  work += g u_k,  u_k += g h."""
    syn1neg = syn1neg.astype(np.float64).copy()
    h = h.astype(np.float64)
    work = np.zeros_like(h)
    loss = 0.0
    for k, w in enumerate(negs):
        label = 1.0 if k == 0 else 0.0
        f = syn1neg[w] @ h
        loss += np.logaddexp(0.0, -(2 * label - 1) * f)  # -log sigmoid(+-f)
        g = (label - sigmoid(f)) * alpha
        work += g * syn1neg[w]
        syn1neg[w] += g * h
    return syn1neg, work, loss


@pytest.mark.parametrize("kernel", KERNELS)
def test_ns_path_matches_numpy(rng, kernel):
    syn1neg = rng.normal(0, 0.4, size=(40, D)).astype(np.float32)
    table_sigmoid = _inner.py_sigmoid
    for negs in ([3, 7, 11, 7, 0], [39], [5, 1, 2, 3, 4, 6, 8, 9, 10, 12, 13]):
        h = rng.normal(0, 0.4, size=D).astype(np.float32)
        negs = np.array(negs, dtype=np.int32)
        expected_syn1neg, expected_work, expected_loss = numpy_ns_path(
            h, syn1neg, negs, 0.05, table_sigmoid
        )
        walks = bench_walks() if kernel in BENCH_WALKS else _inner
        work, loss = walks.py_ns_path(h, syn1neg, negs, 0.05, kernel)
        # same table sigmoid on both sides: only float32 vs float64 rounding differs
        assert np.allclose(syn1neg, expected_syn1neg, atol=2e-5)
        assert np.allclose(work, expected_work, atol=2e-5)
        assert loss == pytest.approx(expected_loss, rel=1e-5)


def test_ns_gradient_matches_finite_differences(rng):
    """work / alpha is -dL/dh and each row's step / alpha is -dL/du, for the loss
    L = -log sigmoid(h.u_0) - sum_k log sigmoid(-h.u_k) (distinct words)."""
    syn1neg = rng.normal(0, 0.5, size=(12, D)).astype(np.float64)
    h = rng.normal(0, 0.5, size=D)
    negs = np.array([4, 0, 9, 2, 7], dtype=np.int32)
    signs = np.array([1.0, -1, -1, -1, -1])

    def loss(hh, uu):
        return float(np.sum(np.logaddexp(0.0, -signs * (uu[negs] @ hh))))

    eps = 1e-6
    grad_h = np.array(
        [(loss(h + eps * e, syn1neg) - loss(h - eps * e, syn1neg)) / (2 * eps) for e in np.eye(D)]
    )
    grad_u = np.zeros((len(negs), D))
    for k, w in enumerate(negs):
        for a in range(D):
            bumped = syn1neg.copy()
            bumped[w, a] += eps
            lowered = syn1neg.copy()
            lowered[w, a] -= eps
            grad_u[k, a] = (loss(h, bumped) - loss(h, lowered)) / (2 * eps)
    alpha = 0.01
    rows = syn1neg.astype(np.float32)
    before = rows.copy()
    work, _ = _inner.py_ns_path(h.astype(np.float32), rows, negs, alpha)
    scale = np.abs(grad_h).max()
    # the kernel's sigmoid is a 2048-entry table (~1e-3 of the gradient's size)
    assert np.abs(work / alpha - -grad_h).max() < 5e-3 * scale
    for k, w in enumerate(negs):
        step = (rows[w] - before[w]) / alpha
        assert np.abs(step - -grad_u[k]).max() < 5e-3 * np.abs(grad_u[k]).max() + 1e-6


def test_ns_path_twin_rejects_bad_words():
    syn1neg = np.zeros((3, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="not a row"):
        _inner.py_ns_path(np.ones(4, np.float32), syn1neg, np.array([0, 3], np.int32), 0.1)


# ----------------------------------------------------------------------------- training
@pytest.mark.parametrize("hs", [0, 1])
@pytest.mark.parametrize("sg", [0, 1])
def test_planted_clusters_are_recovered(sg, hs):
    """Full training recovers the noisy planted clusters; the weakened controls must not
    (skip-gram with both hs and ns makes two updates per pair, so one epoch of it is not a
    weakened training: only the tenth of the learning rate is its control)."""
    sentences, clusters = planted_corpus(noise=NOISE, seed=4)
    settings = dict(vector_size=32, window=3, min_count=1, sg=sg, hs=hs, negative=5,
                    workers=2, epochs=5, sample=0, seed=3)  # fmt: skip
    model = Word2Vec(sentences, **settings)
    assert model.syn1neg.shape == model.wv.vectors.shape
    assert model.syn1.shape == (len(model.wv) if hs else 0, 32)
    assert np.abs(model.syn1neg).sum() > 0
    assert cluster_recovery(model.wv, clusters) > 0.9
    for name, weakened in WEAKENED.items():
        if sg and hs and name == "one epoch":
            continue
        control = Word2Vec(sentences, **weakened_settings(settings, weakened))
        assert cluster_recovery(control.wv, clusters) < 0.9


def test_control_untrained_ns_model_does_not_recover_clusters(small):
    sentences, clusters = small
    model = Word2Vec(vector_size=32, min_count=1, hs=0, negative=5, workers=1)
    model.build_vocab(sentences)
    assert not np.abs(model.syn1neg).any()  # syn1neg starts at zero, as in gensim
    assert cluster_recovery(model.wv, clusters) < 0.4


@pytest.mark.parametrize("sg", [0, 1])
def test_window_kernel_with_negative_trains_as_fused(small, sg, training_kernel):
    sentences, _ = small
    runs = []
    for kernel in ("window", "fused"):
        training_kernel(kernel)
        runs.append(Word2Vec(sentences, vector_size=16, min_count=1, sg=sg, hs=1, negative=3,
                             workers=1, epochs=1, seed=5))  # fmt: skip
    np.testing.assert_array_equal(runs[0].wv.vectors, runs[1].wv.vectors)
    np.testing.assert_array_equal(runs[0].syn1neg, runs[1].syn1neg)


@pytest.mark.parametrize("kernel", ["loop", "blas"])
def test_kernel_variants_train_alike(small, kernel, training_kernel):
    sentences, clusters = small
    training_kernel(kernel)
    model = Word2Vec(sentences, vector_size=32, window=3, min_count=1, sg=1, hs=0, negative=5,
                     workers=1, epochs=3, sample=0, seed=3)  # fmt: skip
    assert cluster_recovery(model.wv, clusters) > 0.9


def digest(model) -> str:
    data = model.wv.vectors.tobytes() + model.syn1.tobytes() + model.syn1neg.tobytes()
    return hashlib.sha256(data).hexdigest()


TRAIN_DIGESTS = """
import hashlib
from conftest import planted_corpus
from hsw2v import Word2Vec

def train_digests():
    sentences, _ = planted_corpus(n_sentences=200)
    out = []
    for sg, hs in ((0, 0), (1, 0), (1, 1)):  # all with negative=5
        m = Word2Vec(sentences, vector_size=16, min_count=1, sg=sg, hs=hs, negative=5,
                     workers=1, epochs=1, seed=7)
        data = m.wv.vectors.tobytes() + m.syn1.tobytes() + m.syn1neg.tobytes()
        out.append(hashlib.sha256(data).hexdigest())
    return out
"""


def test_one_worker_is_bit_identical_across_runs_and_hash_seeds():
    """Two runs in this process, and one in a child process with another PYTHONHASHSEED."""
    scope = {}
    exec(TRAIN_DIGESTS, scope)
    here = scope["train_digests"]()
    assert scope["train_digests"]() == here
    assert len(set(here)) == 3  # the settings do train differently
    env = dict(
        os.environ,
        PYTHONHASHSEED=str(1 + int(os.environ.get("PYTHONHASHSEED", "0") or 0)),
        PYTHONPATH=os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]),
    )
    code = TRAIN_DIGESTS + "print(' '.join(train_digests()))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == here


def test_seeds_differ(small):
    sentences, _ = small
    a, b = (
        Word2Vec(sentences, vector_size=16, min_count=1, hs=0, negative=5, workers=1,
                 epochs=1, seed=seed)
        for seed in (1, 2)
    )  # fmt: skip
    assert digest(a) != digest(b)


def test_save_load_round_trip_then_identical_training(tmp_path, small):
    sentences, _ = small
    model = Word2Vec(sentences, vector_size=16, min_count=1, sg=1, hs=0, negative=4,
                     ns_exponent=0.5, workers=1, epochs=1, seed=11)  # fmt: skip
    path = tmp_path / "ns.hsw2v"
    model.save(str(path))
    loaded = Word2Vec.load(str(path))
    assert (loaded.hs, loaded.negative, loaded.ns_exponent) == (0, 4, 0.5)
    np.testing.assert_array_equal(loaded.syn1neg, model.syn1neg)
    np.testing.assert_array_equal(loaded.cum_table, model.cum_table)
    assert digest(loaded) == digest(model)
    saved = model.syn1neg.copy()
    for m in (model, loaded):
        m.train(sentences, total_examples=len(sentences), epochs=1)
    assert not np.array_equal(model.syn1neg, saved)  # training went on
    assert digest(loaded) == digest(model)


def test_loss_is_finite_and_falls(small):
    sentences, _ = small
    model = Word2Vec(vector_size=16, min_count=1, sg=0, hs=0, negative=5, workers=1, sample=0)
    model.build_vocab(sentences)
    losses = []
    for _ in range(4):
        model.train(sentences, total_examples=len(sentences), epochs=1, compute_loss=True)
        losses.append(model.get_latest_training_loss())
    assert all(np.isfinite(losses)) and all(x > 0 for x in losses)
    assert losses[0] > losses[-1]
    # negative sampling alone, with the same draws, adds terms: hs + ns > ns
    both = Word2Vec(sentences, vector_size=16, min_count=1, sg=0, hs=1, negative=5, workers=1,
                    sample=0, epochs=1, compute_loss=True)  # fmt: skip
    assert both.get_latest_training_loss() > losses[0]


# ----------------------------------------------------------------------------- files
def test_bundle_checks_accept_ns_and_reject_inconsistent(tmp_path, small):
    sentences, _ = small
    model = Word2Vec(sentences[:100], vector_size=8, min_count=1, hs=0, negative=3, workers=1,
                     epochs=1)  # fmt: skip
    path = str(tmp_path / "m.hsw2v")
    model.save(path)
    meta, arrays = persist.load_bundle(path, kind="Word2Vec")
    _w2v_schema.check_word2vec_bundle(path, meta, arrays)
    assert arrays["syn1"].shape == (0, 8) and arrays["syn1neg"].shape == (len(model.wv), 8)
    bad_cases = [
        (dict(arrays, syn1neg=arrays["syn1neg"][:-1]), meta, "syn1neg"),
        ({k: v for k, v in arrays.items() if k != "syn1neg"}, meta, "syn1neg"),
        (arrays, dict(meta, negative=0), "no output layer"),
        (arrays, dict(meta, hs=1), "syn1"),
        (arrays, dict(meta, hs=1, negative=0), "syn1"),
        (dict(arrays, count=-arrays["count"]), meta, "count is negative"),
    ]
    for bad_arrays, bad_meta, match in bad_cases:
        with pytest.raises(ValueError, match=match):
            _w2v_schema.check_word2vec_bundle(path, bad_meta, bad_arrays)
    hs_only = Word2Vec(sentences[:100], vector_size=8, min_count=1, workers=1, epochs=1)
    hs_only.save(path)
    meta, arrays = persist.load_bundle(path, kind="Word2Vec")
    _w2v_schema.check_word2vec_bundle(path, meta, arrays)
    with pytest.raises(ValueError, match="syn1neg but negative is 0"):
        _w2v_schema.check_word2vec_bundle(path, meta, dict(arrays, syn1neg=arrays["vectors"]))


# ----------------------------------------------------------------------------- queries, gensim
def test_score_needs_hs(small):
    sentences, _ = small
    ns = Word2Vec(sentences[:100], vector_size=8, min_count=1, hs=0, negative=3, workers=1)
    with pytest.raises(RuntimeError, match="hs=0"):
        ns.score([sentences[0]])
    both = Word2Vec(sentences[:100], vector_size=8, min_count=1, hs=1, negative=3, workers=1)
    assert both.score([sentences[0]])[0] < 0


def test_predict_output_word_ns_is_gensims_formula(small):
    pytest.importorskip("gensim")
    sentences, _ = small
    model = Word2Vec(sentences, vector_size=16, min_count=1, hs=0, negative=5, workers=1,
                     epochs=2, seed=2)  # fmt: skip
    theirs = model.to_gensim().predict_output_word(["c0w1", "c0w2", "the"], topn=5)
    ours = model.predict_output_word(["c0w1", "c0w2", "the"], topn=5)
    assert [w for w, _ in ours] == [w for w, _ in theirs]
    np.testing.assert_allclose([p for _, p in ours], [p for _, p in theirs], rtol=1e-4)
    everything = model.predict_output_word(["c0w1"], topn=None)
    assert len(everything) == len(model.wv)
    assert sum(p for _, p in everything) == pytest.approx(1.0)
    assert model.predict_output_word(["nope"]) is None


def test_predict_output_word_with_hs_uses_the_tree(small):
    from hsw2v.scoring import predict_output_word

    sentences, _ = small
    model = Word2Vec(sentences[:200], vector_size=8, min_count=1, hs=1, negative=3, workers=1)
    assert model.predict_output_word(["c1w1"], topn=4) == predict_output_word(
        model, ["c1w1"], topn=4
    )


@pytest.mark.parametrize("hs", [0, 1])
def test_gensim_round_trip_carries_syn1neg(small, hs):
    pytest.importorskip("gensim")
    sentences, _ = small
    model = Word2Vec(sentences[:200], vector_size=8, min_count=1, hs=hs, negative=4, workers=1,
                     epochs=1)  # fmt: skip
    g = model.to_gensim()
    assert (g.hs, g.negative) == (hs, 4)
    np.testing.assert_array_equal(g.syn1neg, model.syn1neg)
    np.testing.assert_array_equal(g.cum_table, model.cum_table)
    assert hasattr(g, "syn1") == bool(hs)
    g.train(sentences[:200], total_examples=200, epochs=1)  # gensim continues training it
    back = Word2Vec.from_gensim(g)
    assert (back.hs, back.negative) == (hs, 4)
    np.testing.assert_array_equal(back.syn1neg, g.syn1neg)
    np.testing.assert_array_equal(back.cum_table, g.cum_table)
    if hs:
        np.testing.assert_array_equal(back.syn1, g.syn1)
    back.train(sentences[:200], total_examples=200, epochs=1)


def test_gensim_default_configuration_runs(small):
    """gensim's default output layer (hs=0, negative=5), given explicitly."""
    sentences, _ = small
    model = Word2Vec(sentences, min_count=1, hs=0, negative=5, workers=1, epochs=1)
    assert model.negative == 5 and model.ns_exponent == 0.75
    assert model.syn1neg.shape == (len(model.wv), 100)
    with pytest.raises(ValueError, match="either 'hs' or 'negative'"):
        Word2Vec(hs=0, negative=0)


def test_trainer_rejects_missing_or_mismatched_ns_arrays():
    from hsw2v.huffman import build_huffman_tree

    n, d = 5, 4
    tree = build_huffman_tree(np.array([5, 4, 3, 2, 1]))
    syn0 = np.zeros((n, d), np.float32)
    syn1 = np.zeros((n, d), np.float32)
    sample_int = np.full(n, 2**32 - 1, np.uint32)
    args = (syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int, 2, True)
    table = make_cum_table(np.arange(5, 0, -1))
    with pytest.raises(ValueError, match="syn1neg"):
        word2vec_trainer(_inner.Trainer, *args, negative=2)
    with pytest.raises(ValueError, match="syn1neg"):
        word2vec_trainer(_inner.Trainer, *args, negative=2, syn1neg=np.zeros((n - 1, d), np.float32),
                       cum_table=table)  # fmt: skip
    with pytest.raises(ValueError, match="nothing to train"):
        word2vec_trainer(_inner.Trainer, *args, hs=False)
    word2vec_trainer(_inner.Trainer, *args, hs=False, negative=2, syn1neg=np.zeros((n, d), np.float32),
                   cum_table=table)  # fmt: skip


def test_tree_queries_refuse_models_without_syn1(small):
    from hsw2v import scoring

    sentences, _ = small
    ns = Word2Vec(sentences[:100], vector_size=8, min_count=1, hs=0, negative=3, workers=1)
    for call in (
        lambda: scoring.score_sentences(ns, [sentences[0]]),
        lambda: scoring.output_word_probabilities(ns, ["c0w1"]),
        lambda: scoring.predict_output_word(ns, ["c0w1"]),
    ):
        with pytest.raises(RuntimeError, match="hs=0"):
            call()


def test_command_line_trains_negative_sampling(tmp_path, small, capsys):
    from hsw2v.cli import main

    sentences, _ = small
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in sentences[:200]) + "\n")
    out = tmp_path / "ns.hsw2v"
    argv = ["train", str(corpus), "-o", str(out), "-hs", "0", "-negative", "3", "--size", "8",
            "--min-count", "1", "--epochs", "1", "--workers", "1", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    model = Word2Vec.load(str(out))
    assert (model.hs, model.negative, model.syn1neg.shape) == (0, 3, (len(model.wv), 8))
    assert main(["predict", str(out), "c0w1", "c0w2"]) == 0
    assert "c0w" in capsys.readouterr().out
