"""Conversions between hsw2v and gensim 4.4, and a gensim tutorial-style script run on hsw2v."""

import logging
import os
import sys

import numpy as np
import pytest

from hsw2v import KeyedVectors, Word2Vec
from hsw2v.gensim_compat import from_gensim, kv_from_gensim, kv_to_gensim, to_gensim
from tests.conftest import gensim_models, planted_corpus
from tests.test_scoring import reference_score


@pytest.fixture(scope="module")
def corpus():
    sentences, _ = planted_corpus(n_clusters=4, words_per_cluster=8, n_sentences=400, seed=5)
    return sentences


@pytest.fixture(scope="module")
def hs_model(corpus):
    return Word2Vec(
        corpus, vector_size=16, window=3, min_count=1, sg=1, workers=1, epochs=3, seed=2
    )


@pytest.fixture(scope="module")
def gensim_hs_model(corpus):
    return gensim_models.Word2Vec(
        corpus,
        vector_size=16,
        window=3,
        min_count=1,
        sg=0,
        hs=1,
        negative=0,
        workers=1,
        epochs=3,
        seed=2,
    )


def assert_same_model(ours, theirs):
    """Vocabulary, counts, vectors, syn1, paths and settings agree (``ours`` is hsw2v)."""
    assert ours.wv.index_to_key == list(theirs.wv.index_to_key)
    np.testing.assert_array_equal(ours.wv.vectors, theirs.wv.vectors)
    np.testing.assert_array_equal(ours.syn1, theirs.syn1)
    np.testing.assert_array_equal(ours.wv.expandos["count"], theirs.wv.expandos["count"])
    np.testing.assert_array_equal(ours.wv.expandos["sample_int"], theirs.wv.expandos["sample_int"])
    for i in range(len(ours.wv)):
        np.testing.assert_array_equal(ours.tree.code(i), theirs.wv.expandos["code"][i])
        np.testing.assert_array_equal(ours.tree.point(i), theirs.wv.expandos["point"][i])
    for name in ("vector_size", "window", "sg", "cbow_mean", "alpha", "min_alpha", "sample"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert theirs.hs == 1


def test_to_gensim_is_the_same_model_and_gensim_can_use_it(hs_model, corpus):
    pytest.importorskip("gensim")
    g = hs_model.to_gensim()
    assert isinstance(g, gensim_models.Word2Vec)
    assert_same_model(hs_model, g)
    assert g.wv.expandos["point"][0].dtype == np.uint32
    assert g.corpus_count == hs_model.corpus_count
    # gensim's queries see the same vectors.
    ours = hs_model.wv.most_similar("c0w1", topn=5)
    theirs = g.wv.most_similar("c0w1", topn=5)
    assert [w for w, _ in ours] == [w for w, _ in theirs]
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], rtol=1e-5)
    # gensim's score walks our tree with our weights (its own table terms, none saturated).
    sentences = corpus[:5]
    for sentence, score in zip(sentences, g.score(sentences), strict=True):
        emulated, skipped, _ = reference_score(hs_model, sentence, emulate_gensim=True)
        assert skipped == 0 and score == pytest.approx(emulated, rel=1e-4)
    # The copy is independent, and gensim can keep training it.
    before = g.wv.vectors.copy()
    g.train(corpus, total_examples=len(corpus), epochs=1)
    assert not np.array_equal(before, g.wv.vectors)
    np.testing.assert_array_equal(before, hs_model.wv.vectors)
    assert np.isfinite(g.wv.vectors).all()


def test_from_gensim_is_the_same_model_and_hsw2v_can_use_it(gensim_hs_model, corpus):
    model = Word2Vec.from_gensim(gensim_hs_model)
    assert isinstance(model, Word2Vec)
    assert_same_model(model, gensim_hs_model)
    assert model.corpus_count == gensim_hs_model.corpus_count
    # hsw2v scores and predicts with gensim's tree and weights.
    sentences = corpus[:5]
    np.testing.assert_allclose(
        model.score(sentences), [reference_score(model, s) for s in sentences], rtol=1e-6
    )
    top = model.predict_output_word(["c1w1", "c1w2"], topn=3)
    assert len(top) == 3 and all(p > 0 for _, p in top)
    # ... and keeps training it.
    before = model.wv.vectors.copy()
    model.train(corpus, total_examples=len(corpus), epochs=1)
    assert not np.array_equal(before, model.wv.vectors)
    np.testing.assert_array_equal(before, gensim_hs_model.wv.vectors)


def test_round_trips_preserve_everything(hs_model, gensim_hs_model, tmp_path):
    back = from_gensim(to_gensim(hs_model))
    assert_same_model(back, to_gensim(hs_model))
    np.testing.assert_array_equal(back.tree.codes, hs_model.tree.codes)
    np.testing.assert_array_equal(back.tree.points, hs_model.tree.points)
    np.testing.assert_array_equal(back.tree.lengths, hs_model.tree.lengths)
    again = to_gensim(Word2Vec.from_gensim(gensim_hs_model))
    np.testing.assert_array_equal(again.wv.vectors, gensim_hs_model.wv.vectors)
    np.testing.assert_array_equal(again.syn1, gensim_hs_model.syn1)
    # A converted model saves and loads natively.
    path = os.path.join(tmp_path, "converted.hsw2v")
    back.save(path)
    np.testing.assert_array_equal(Word2Vec.load(path).syn1, hs_model.syn1)


def test_keyed_vectors_round_trip(hs_model):
    pytest.importorskip("gensim")
    g = hs_model.wv.to_gensim()
    assert isinstance(g, gensim_models.KeyedVectors)
    np.testing.assert_array_equal(g.vectors, hs_model.wv.vectors)
    assert g.get_vecattr("c0w1", "count") == hs_model.wv.get_vecattr("c0w1", "count")
    assert g.most_similar("c2w2", topn=3)[0][0] == hs_model.wv.most_similar("c2w2", topn=3)[0][0]
    back = KeyedVectors.from_gensim(g)
    assert isinstance(back, KeyedVectors)
    assert back.index_to_key == hs_model.wv.index_to_key
    np.testing.assert_array_equal(back.vectors, hs_model.wv.vectors)
    np.testing.assert_array_equal(back.expandos["count"], hs_model.wv.expandos["count"])
    back.vectors[0] += 1.0  # copies, not views
    assert not np.array_equal(back.vectors, hs_model.wv.vectors)
    plain = gensim_models.KeyedVectors(3)
    plain.add_vectors(["x", "y"], np.eye(2, 3, dtype=np.float32))
    assert kv_from_gensim(plain)["y"].tolist() == [0.0, 1.0, 0.0]
    assert kv_to_gensim(kv_from_gensim(plain)).index_to_key == ["x", "y"]


def test_missing_gensim_gives_a_clear_import_error(hs_model, monkeypatch):
    monkeypatch.setitem(sys.modules, "gensim", None)
    monkeypatch.setitem(sys.modules, "gensim.models", None)
    with pytest.raises(ImportError, match="pip install gensim"):
        hs_model.to_gensim()


# The shape of gensim's Word2Vec tutorial (build, train, save, load, continue training, query,
# word2vec format); only the import line differs between the two runs.
TUTORIAL = """
sentences = [
    ["human", "interface", "computer"],
    ["survey", "user", "computer", "system", "response", "time"],
    ["eps", "user", "interface", "system"],
    ["system", "human", "system", "eps"],
    ["user", "response", "time"],
    ["trees"],
    ["graph", "trees"],
    ["graph", "minors", "trees"],
    ["graph", "minors", "survey"],
] * 20

model = Word2Vec(sentences=sentences, vector_size=20, window=5, min_count=1, workers=2, seed=1)
model.save(os.path.join(tmp, "word2vec.model"))
model = Word2Vec.load(os.path.join(tmp, "word2vec.model"))
model.train([["hello", "world"]], total_examples=1, epochs=1)
vector = model.wv["computer"]
sims = model.wv.most_similar("computer", topn=10)
similarity = model.wv.similarity("graph", "trees")
model.wv.save_word2vec_format(os.path.join(tmp, "vectors.bin"), binary=True)
wv = KeyedVectors.load_word2vec_format(os.path.join(tmp, "vectors.bin"), binary=True)
n_words = len(model.wv)

more = [["new", "words", "arrive"], ["graph", "new", "words"]] * 10
model.build_vocab(more, update=True)
trained = model.train(more, total_examples=model.corpus_count, epochs=model.epochs)
closer = model.wv.closer_than("graph", "trees")
subset = model.wv.vectors_for_all(["graph", "new", "nope"])
memory = model.estimate_memory()
fresh = Word2Vec(vector_size=20, min_count=1, seed=2)
fresh.reset_from(model)
result = dict(
    vector=vector, sims=sims, similarity=similarity, loaded=wv["computer"],
    n_words=n_words, keys=list(wv.index_to_key), grown=list(model.wv.index_to_key),
    trained=trained, closer=closer, subset=list(subset.index_to_key), memory=memory,
    fresh=fresh.wv.vectors.shape,
)
"""


@pytest.mark.parametrize("library", ["hsw2v", "gensim"])
def test_tutorial_script_runs_unchanged(library, tmp_path, caplog):
    pytest.importorskip("gensim")
    header = {
        "hsw2v": "from hsw2v import Word2Vec, KeyedVectors\n",
        "gensim": "from gensim.models import Word2Vec, KeyedVectors\n",
    }[library]
    namespace = {"os": os, "tmp": str(tmp_path)}
    with caplog.at_level(logging.WARNING):
        exec(compile(header + TUTORIAL, f"tutorial-{library}", "exec"), namespace)
    result = namespace["result"]
    assert result["vector"].shape == (20,)
    assert len(result["sims"]) == 10 and all(isinstance(w, str) for w, _ in result["sims"])
    assert -1.0 <= float(result["similarity"]) <= 1.0
    np.testing.assert_array_equal(result["loaded"], result["vector"])
    assert result["n_words"] == 12 and len(result["keys"]) == 12
    assert set(result["grown"][:12]) == set(result["keys"])  # old words first, new ones after
    assert sorted(result["grown"][12:]) == ["arrive", "new", "words"]
    assert result["trained"][1] == 60  # raw words of one epoch (the last train() set epochs=1)
    assert all(isinstance(w, str) for w in result["closer"])
    assert result["subset"] == ["graph", "new"]
    assert {"vocab", "vectors", "total"} <= set(result["memory"])
    assert result["fresh"] == (15, 20)
    if library == "hsw2v":  # the file hsw2v wrote is read by gensim too
        g = gensim_models.KeyedVectors.load_word2vec_format(
            os.path.join(tmp_path, "vectors.bin"), binary=True
        )
        np.testing.assert_array_equal(g["computer"], result["vector"])
