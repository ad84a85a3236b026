"""gensim 4.4's contract where gensim code runs unchanged on hsw2v: each test runs the same
code on both libraries (only the import differs) and compares what they do."""

import logging

import numpy as np
import pytest
from conftest import cluster_recovery, planted_corpus

import hsw2v

gensim_models = pytest.importorskip("gensim.models")

LIBRARIES = {"hsw2v": hsw2v, "gensim": gensim_models}
SMALL = dict(vector_size=16, window=3, min_count=1, workers=1, seed=2, epochs=3, sample=0)


@pytest.fixture(scope="module")
def planted():
    return planted_corpus(n_clusters=4, words_per_cluster=8, n_sentences=600, seed=5)


# ------------------------------------------------------------------ hs=0 alone (issue item 2)
@pytest.mark.parametrize("library", ["hsw2v", "gensim"])
@pytest.mark.parametrize("sg", [0, 1])
def test_hs0_alone_trains_negative_sampling_with_gensims_default(library, sg, planted):
    sentences, clusters = planted
    Word2Vec = LIBRARIES[library].Word2Vec
    model = Word2Vec(sentences, hs=0, sg=sg, compute_loss=True, **SMALL)
    assert (model.hs, model.negative) == (0, 5)
    assert model.syn1neg.shape == model.wv.vectors.shape
    assert np.abs(model.syn1neg).sum() > 0
    assert model.get_latest_training_loss() > 0
    assert cluster_recovery(model.wv, clusters) >= 0.9


def test_hs0_default_negative_is_logged_and_hs_stays_the_default(caplog):
    sentences = [["a", "b", "c", "d"]] * 20
    with caplog.at_level(logging.INFO, logger="hsw2v"):
        model = hsw2v.Word2Vec(sentences, hs=0, sg=1, **SMALL)
    text = caplog.text
    assert "gensim's default negative=5" in text
    assert "training skip-gram with negative sampling (negative=5)" in text
    default = hsw2v.Word2Vec(**SMALL)
    assert (default.hs, default.negative) == (1, 0)
    assert (model.hs, model.negative) == (0, 5)
    # an explicit choice is kept: negative=0 with hs=0 is still refused, as gensim refuses it
    assert hsw2v.Word2Vec(hs=0, negative=3, **SMALL).negative == 3
    with pytest.raises(ValueError, match="You must set either 'hs' or 'negative'"):
        hsw2v.Word2Vec(sentences, hs=0, negative=0, **SMALL)
    with pytest.raises(ValueError, match="You must set either 'hs' or 'negative'"):
        gensim_models.Word2Vec(sentences, hs=0, negative=0, **SMALL)


def test_hs0_model_saves_and_loads_with_its_negative(tmp_path):
    model = hsw2v.Word2Vec([["a", "b", "c"]] * 20, hs=0, **SMALL)
    model.save(str(tmp_path / "m"))
    loaded = hsw2v.Word2Vec.load(str(tmp_path / "m"))
    assert (loaded.hs, loaded.negative) == (0, 5)
    np.testing.assert_array_equal(loaded.syn1neg, model.syn1neg)
