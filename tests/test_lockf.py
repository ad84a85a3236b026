"""``wv.vectors_lockf``: gensim's per-word factor of input-vector updates (0 freezes a word).

The same code runs on gensim 4.4.0 and on hsw2v and the two are held to the same contract:
frozen words keep their vectors bit for bit, the other words train, and a factor scales a
word's update exactly.
"""

import warnings

import numpy as np
import pytest
from conftest import BENCH_WALKS, bench_walks
from gensim.models import Word2Vec as GensimWord2Vec

from hsw2v import Word2Vec
from hsw2v.running import trainer as running_trainer

rng = np.random.default_rng(0)
SENTENCES = [[f"w{j}" for j in rng.integers(0, 60, size=12)] for _ in range(300)]

SETTINGS = {
    "sg_hs_window": dict(sg=1, hs=1, negative=0, kernel="window"),
    "sg_hs_fused": dict(sg=1, hs=1, negative=0, kernel="fused"),
    "sg_hs_loop": dict(sg=1, hs=1, negative=0, kernel="loop"),
    "sg_hs_blas": dict(sg=1, hs=1, negative=0, kernel="blas"),
    "cbow_hs_fused": dict(sg=0, hs=1, negative=0, kernel="fused"),
    "cbow_hs_loop": dict(sg=0, hs=1, negative=0, kernel="loop"),
    "sg_ns": dict(sg=1, hs=0, negative=5),
    "cbow_ns": dict(sg=0, hs=0, negative=5),
    "sg_hs_ns": dict(sg=1, hs=1, negative=3),
    "cbow_mean0_hs": dict(sg=0, hs=1, negative=0, cbow_mean=0),
}


@pytest.fixture(autouse=True)
def _restore_kernel_switch(monkeypatch):
    """``make`` sets the path-walk switch for the rest of its test; restored afterwards."""
    monkeypatch.setattr(running_trainer, "WALK", running_trainer.WALK)


def make(library, settings, sentences=SENTENCES, **extra):
    settings = dict(settings)
    kernel = settings.pop("kernel", None)
    kw = dict(vector_size=16, min_count=1, workers=1, seed=1, epochs=1, **settings, **extra)
    if library == "gensim":
        return GensimWord2Vec(sentences, **kw)
    if kernel in BENCH_WALKS:
        bench_walks()  # skips where the build lacks the benchmark-only walks
    running_trainer.WALK = kernel or "auto"  # this model's later train() calls too
    return Word2Vec(sentences, **kw)


@pytest.mark.parametrize("library", ["gensim", "hsw2v"])
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_frozen_words_keep_their_vectors_bit_for_bit(library, name):
    if library == "gensim" and "kernel" in SETTINGS[name] and SETTINGS[name]["kernel"] != "fused":
        pytest.skip("gensim has one kernel")
    model = make(library, SETTINGS[name])
    n = len(model.wv)
    frozen = np.arange(0, n, 3)
    model.wv.vectors_lockf = np.ones(n, dtype=np.float32)
    model.wv.vectors_lockf[frozen] = 0.0
    before = model.wv.vectors.copy()
    model.train(SENTENCES, total_examples=len(SENTENCES), epochs=2)
    after = model.wv.vectors
    np.testing.assert_array_equal(after[frozen], before[frozen])
    trained = np.setdiff1d(np.arange(n), frozen)
    assert (after[trained] != before[trained]).any(axis=1).all()


@pytest.mark.parametrize("library", ["gensim", "hsw2v"])
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_factor_scales_the_update(library, name):
    """One sentence of two distinct words, window 1, no subsampling: each word's row moves once,
    by its factor times the error its walk accumulated, which no other factor changes."""
    if library == "gensim" and "kernel" in SETTINGS[name] and SETTINGS[name]["kernel"] != "fused":
        pytest.skip("gensim has one kernel")
    if SETTINGS[name]["hs"] and SETTINGS[name]["negative"]:
        pytest.skip("the ns step starts from the row the hs step moved (by its factor)")
    sentences = [["a", "b"]] * 1
    deltas = {}
    for factor in (1.0, 0.5, -2.0):
        model = make(library, SETTINGS[name], sentences, window=1, sample=0, alpha=0.5)
        model.wv.vectors = np.random.default_rng(5).standard_normal(
            model.wv.vectors.shape).astype(np.float32)  # fmt: skip
        if SETTINGS[name]["hs"]:
            model.syn1[:] = np.random.default_rng(6).standard_normal(model.syn1.shape)
        if SETTINGS[name]["negative"]:
            model.syn1neg[:] = np.random.default_rng(7).standard_normal(model.syn1neg.shape)
        model.wv.vectors_lockf = np.full(1, factor, dtype=np.float32)  # one factor for all
        before = model.wv.vectors.copy()
        model.train(sentences, total_examples=1, epochs=1)
        deltas[factor] = model.wv.vectors - before
    assert np.abs(deltas[1.0]).max() > 1e-3
    np.testing.assert_allclose(deltas[0.5], 0.5 * deltas[1.0], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(deltas[-2.0], -2.0 * deltas[1.0], rtol=1e-4, atol=1e-6)


def test_default_is_one_factor_of_one_as_gensim():
    ours, theirs = make("hsw2v", SETTINGS["sg_ns"]), make("gensim", SETTINGS["sg_ns"])
    for model in (ours, theirs):
        assert model.wv.vectors_lockf.dtype == np.float32
        assert model.wv.vectors_lockf.tolist() == [1.0]


def test_all_ones_trains_exactly_as_without_factors():
    plain = make("hsw2v", SETTINGS["sg_hs_window"])
    ones = make("hsw2v", SETTINGS["sg_hs_window"])
    ones.wv.vectors_lockf = np.ones(len(ones.wv), dtype=np.float32)
    for model in (plain, ones):
        model.train(SENTENCES, total_examples=len(SENTENCES), epochs=1)
    np.testing.assert_array_equal(plain.wv.vectors, ones.wv.vectors)


def test_frozen_words_in_corpus_file_mode(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("\n".join(" ".join(s) for s in SENTENCES))
    model = Word2Vec(corpus_file=str(path), vector_size=16, min_count=1, workers=2, epochs=1)
    frozen = np.arange(1, len(model.wv), 4)
    model.wv.vectors_lockf = np.ones(len(model.wv), dtype=np.float32)
    model.wv.vectors_lockf[frozen] = 0.0
    before = model.wv.vectors.copy()
    model.train(corpus_file=str(path), total_words=model.corpus_total_words, epochs=1)
    np.testing.assert_array_equal(model.wv.vectors[frozen], before[frozen])
    assert (model.wv.vectors != before).any(axis=1).sum() > len(model.wv) // 2


def test_bad_factors_are_refused():
    model = make("hsw2v", SETTINGS["sg_hs_fused"])
    model.wv.vectors_lockf = np.array([1.0, np.nan], dtype=np.float32)
    with pytest.raises(ValueError, match="vectors_lockf"):
        model.train(SENTENCES, total_examples=len(SENTENCES), epochs=1)


def test_intersect_with_lockf_zero_freezes_the_merged_vectors(tmp_path):
    model = make("hsw2v", SETTINGS["sg_ns"])
    path = tmp_path / "pre.txt"
    path.write_text("2 16\n" + "\n".join(
        f"{w} " + " ".join(["0.25"] * 16) for w in ("w3", "w5")) + "\n")  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.wv.intersect_word2vec_format(str(path), lockf=0.0)
    rows = [model.wv.key_to_index["w3"], model.wv.key_to_index["w5"]]
    assert model.wv.vectors_lockf.shape == (len(model.wv),)
    assert model.wv.vectors_lockf[rows].tolist() == [0.0, 0.0]
    assert (model.wv.vectors_lockf == 1.0).sum() == len(model.wv) - 2
    model.train(SENTENCES, total_examples=len(SENTENCES), epochs=1)
    np.testing.assert_array_equal(model.wv.vectors[rows], np.full((2, 16), 0.25, np.float32))


@pytest.mark.parametrize("library", ["gensim", "hsw2v"])
def test_lock_factors_are_saved_with_the_model(library, tmp_path):
    """As gensim's pickle keeps ``wv.vectors_lockf``, ``save()``/``load()`` keep it: a word
    frozen before saving stays frozen when the loaded model trains on."""
    model = make(library, SETTINGS["sg_hs_fused"] if library == "hsw2v" else dict(sg=1, hs=1))
    lockf = np.ones(len(model.wv), dtype=np.float32)
    frozen = model.wv.key_to_index["w7"]
    lockf[frozen] = 0.0
    model.wv.vectors_lockf = lockf
    path = str(tmp_path / "m.model")
    model.save(path)
    loaded = type(model).load(path)
    np.testing.assert_array_equal(loaded.wv.vectors_lockf, lockf)
    before = loaded.wv.vectors[frozen].copy()
    other = loaded.wv.key_to_index["w8"]
    other_before = loaded.wv.vectors[other].copy()
    loaded.train(SENTENCES, total_examples=len(SENTENCES), epochs=1)
    np.testing.assert_array_equal(loaded.wv.vectors[frozen], before)
    assert not np.array_equal(loaded.wv.vectors[other], other_before)


def test_non_finite_saved_lock_factors_are_refused_at_load(tmp_path):
    from hsw2v import persist

    model = make("hsw2v", SETTINGS["sg_hs_fused"])
    path = tmp_path / "m.hsw2v"
    model.save(str(path))
    meta, arrays = persist.load_bundle(str(path), kind="Word2Vec")
    arrays = {name: np.array(a) for name, a in arrays.items()}
    arrays["vectors_lockf"] = np.array([1.0, np.nan], dtype=np.float32)
    persist.save_bundle(str(path), "Word2Vec", meta, arrays)
    with pytest.raises(ValueError, match="m.hsw2v.*vectors_lockf must hold"):
        Word2Vec.load(str(path))
