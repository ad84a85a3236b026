"""FastText, the model: gensim's API and meaning, its files, and training beyond gensim.

The kernel's subword step is checked against NumPy in tests/test_kernel_subwords.py; the
n-grams and ``FastTextKeyedVectors`` in tests/test_fasttext_ngrams.py; these tests train
whole models.
"""

import inspect

import numpy as np
import pytest

from hsw2v import FastText, FastTextKeyedVectors, Word2Vec
from hsw2v.fasttext._ngrams import ngram_hashes

TOPICS = {
    "animals": "cat cats dog dogs horse horses bird birds kitten puppy".split(),
    "walking": "walk walks walked walking run runs running ran jump jumping".split(),
    "cooking": "cook cooks cooked cooking bake baked baking boil boiled boiling".split(),
}


def corpus(n=600, seed=0):
    """Sentences of one topic each: words of a topic share contexts (and many n-grams)."""
    r = np.random.default_rng(seed)
    names = sorted(TOPICS)
    out = []
    for _ in range(n):
        words = TOPICS[names[r.integers(len(names))]]
        out.append([words[k] for k in r.integers(0, len(words), size=8)])
    return out


def small(**kw):
    """A model of the topics (no subsampling: every word of so small a vocabulary is
    frequent, and sample=1e-3 would drop most of them, for gensim as for hsw2v)."""
    settings = dict(vector_size=16, min_count=1, bucket=500, workers=1, epochs=3, seed=3,
                    sample=0)  # fmt: skip
    settings.update(kw)
    return FastText(corpus(), **settings)


def test_signature_is_gensims_with_hsw2vs_objective_rule():
    gensim = pytest.importorskip("gensim.models")
    ours = inspect.signature(FastText).parameters
    theirs = inspect.signature(gensim.FastText).parameters
    assert list(theirs) == [p for p in ours if p in theirs]  # gensim's order, then ours
    for name, p in theirs.items():
        if name in ("hs", "negative"):  # None: "not given" (hsw2v's rule, as Word2Vec)
            assert ours[name].default is None
        else:
            assert ours[name].default == p.default, name
    model = FastText(vector_size=8)
    assert (model.hs, model.negative) == (1, 0)
    assert (FastText(negative=5).hs, FastText(hs=1).negative) == (0, 5)


def test_vectors_are_means_of_word_and_ngram_rows():
    model = small()
    wv = model.wv
    assert isinstance(wv, FastTextKeyedVectors) and isinstance(model, Word2Vec)
    V = len(wv)
    assert wv.input_matrix.shape == (V + 500, 16)
    i = wv.get_index("walking")
    rows = [i] + [V + int(h) for h in ngram_hashes("walking", 3, 6, 500)]
    assert np.allclose(wv["walking"], wv.input_matrix[rows].mean(axis=0), atol=1e-6)
    oov = [V + int(h) for h in ngram_hashes("walkingg", 3, 6, 500)]
    assert "walkingg" not in wv.key_to_index and "walkingg" in wv  # gensim's answer
    assert np.allclose(wv["walkingg"], wv.input_matrix[oov].mean(axis=0), atol=1e-6)


@pytest.mark.parametrize("sg", [0, 1])
@pytest.mark.parametrize("hs,negative", [(1, 0), (0, 5), (1, 5)])
def test_one_worker_is_bit_identical_and_learns_the_topics(sg, hs, negative):
    a = small(sg=sg, hs=hs, negative=negative, epochs=5)
    b = small(sg=sg, hs=hs, negative=negative, epochs=5)
    assert a.wv.input_matrix.tobytes() == b.wv.input_matrix.tobytes()
    # a misspelt word, never seen, lands among its topic's words through its n-grams
    near = [w for w, _ in a.wv.most_similar("walkingg", topn=4)]
    assert sum(w in TOPICS["walking"] for w in near) >= 3, near
    same = a.wv.similarity("cooking", "baking")
    other = a.wv.similarity("cooking", "horses")
    assert same > other + 0.1, (same, other)


def test_ngram_rows_train_and_lock_factors_freeze_them():
    model = FastText(vector_size=16, min_count=1, bucket=500, workers=1, sample=0)
    model.build_vocab(corpus())
    before = model.wv.input_matrix.copy()
    V = len(model.wv)
    model.wv.vectors_ngrams_lockf = np.zeros(1, np.float32)  # gensim's lock: n-grams frozen
    model.train(corpus(), total_examples=600, epochs=1)
    assert (model.wv.input_matrix[V:] == before[V:]).all()
    assert not np.allclose(model.wv.input_matrix[:V], before[:V])
    model.wv.vectors_ngrams_lockf = np.ones(1, np.float32)
    model.train(corpus(), total_examples=600, epochs=1)
    assert not np.allclose(model.wv.input_matrix[V:], before[V:])


def test_save_load_keeps_everything_and_continues_identically(tmp_path):
    model = small(negative=5)
    path = tmp_path / "ft.hsw2v"
    model.save(path)
    loaded = FastText.load(path)
    assert type(loaded.wv) is FastTextKeyedVectors
    for name in ("min_n", "max_n", "bucket", "hs", "negative", "sg", "window"):
        assert getattr(loaded, name) == getattr(model, name)
    assert (loaded.wv.input_matrix == model.wv.input_matrix).all()
    assert np.allclose(loaded.wv["unseenword"], model.wv["unseenword"])
    model.train(corpus(seed=1), total_examples=600, epochs=1)
    loaded.train(corpus(seed=1), total_examples=600, epochs=1)
    assert loaded.wv.input_matrix.tobytes() == model.wv.input_matrix.tobytes()
    assert loaded.syn1.tobytes() == model.syn1.tobytes()
    with pytest.raises(ValueError):  # a FastText file is not a Word2Vec one
        Word2Vec.load(path)


def test_vocabulary_update_with_hs_keeps_paths_where_gensim_moves_them():
    """gensim issue #2884: a FastText with hierarchical softmax that learns new words. hsw2v
    keeps each old word's path (so its trained syn1 rows still mean the same) and its rows;
    gensim 4.4 builds a new tree, so an old word's path changes under the trained rows."""
    model = small(hs=1, negative=0)
    old_points = [model.wv.get_vecattr(w, "point").tolist() for w in ("cat", "walk")]
    old_rows = model.wv.vectors_vocab.copy()
    more = [["zebra", "zebras", "cat", "walk"]] * 30
    model.build_vocab(more, update=True)
    assert [model.wv.get_vecattr(w, "point").tolist() for w in ("cat", "walk")] == old_points
    assert (model.wv.vectors_vocab[: len(old_rows)] == old_rows).all()
    model.train(more, total_examples=30, epochs=2)
    assert "zebras" in model.wv.key_to_index
    assert np.isfinite(model.wv.vectors).all()

    gensim = pytest.importorskip("gensim.models")
    g = gensim.FastText(corpus(), vector_size=16, min_count=1, bucket=500, workers=1, epochs=3,
                        hs=1, negative=0, seed=3)  # fmt: skip
    before = [g.wv.get_vecattr(w, "point").tolist() for w in ("cat", "walk")]
    g.build_vocab(more, update=True)
    after = [g.wv.get_vecattr(w, "point").tolist() for w in ("cat", "walk")]
    assert after != before


def test_gensim_round_trip():
    pytest.importorskip("gensim")
    model = small(negative=5)
    g = model.to_gensim()
    assert type(g).__name__ == "FastText" and g.wv.bucket == 500
    for word in ("cat", "catz", "walkingg"):
        assert np.allclose(g.wv[word], model.wv[word], atol=1e-6)
    back = FastText.from_gensim(g)
    assert (back.min_n, back.max_n, back.bucket) == (3, 6, 500)
    assert (back.wv.input_matrix == model.wv.input_matrix).all()
    assert (back.syn1neg == model.syn1neg).all() and (back.syn1 == model.syn1).all()
    back.train(corpus(), total_examples=600, epochs=1)


def test_corpus_file_trains_the_same_words(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("\n".join(" ".join(s) for s in corpus()) + "\n", encoding="utf-8")
    model = FastText(corpus_file=str(path), vector_size=16, min_count=1, bucket=500,
                     workers=2, epochs=2)  # fmt: skip
    assert sorted(model.wv.index_to_key) == sorted({w for s in corpus() for w in s})
    assert np.isfinite(model.wv.input_matrix).all()


def test_compute_loss_and_queries():
    model = small(compute_loss=True)
    assert model.get_latest_training_loss() > 0
    assert model.predict_output_word(["walk", "run"], topn=3)
    assert np.isfinite(model.score([["walk", "run", "jump"]])).all()


@pytest.mark.parametrize(
    "kw,error",
    [
        ({"word_ngrams": 2}, NotImplementedError),
        ({"bucket": -1}, ValueError),
        ({"min_n": -1}, ValueError),
        ({"bucket": 2**31}, ValueError),
    ],
)
def test_bad_parameters_say_what_is_wrong(kw, error):
    with pytest.raises(error, match=next(iter(kw))):
        FastText(**kw)


def test_no_ngram_lengths_means_no_buckets():
    model = FastText(corpus(), vector_size=8, min_count=1, min_n=5, max_n=3, workers=1)
    assert model.bucket == 0 and model.wv.input_matrix.shape == (len(model.wv), 8)
    assert np.allclose(model.wv["cat"], model.wv.vectors_vocab[model.wv.get_index("cat")])


def test_memory_estimate_has_gensims_keys():
    gensim = pytest.importorskip("gensim.models")
    settings = dict(vector_size=8, min_count=1, bucket=1000, workers=1, hs=1, negative=5)
    ours = small(**settings).estimate_memory()
    theirs = gensim.FastText(corpus(), **settings).estimate_memory()
    assert set(ours) == set(theirs)
    for key in ("vocab", "syn0_vocab", "syn1", "syn1neg", "syn0_ngrams"):
        assert ours[key] == theirs[key], key


def test_a_gensim_fasttext_pickle_converts_to_fasttext(tmp_path):
    gensim = pytest.importorskip("gensim.models")
    from hsw2v.gensim_compat import load_gensim_pickle

    path = tmp_path / "gensim.model"
    g = gensim.FastText(corpus(), vector_size=8, min_count=1, bucket=500, workers=1, epochs=1)
    g.save(str(path))
    with pytest.raises(ValueError, match=r"FastText\.from_gensim\(gensim\.models\.FastText\.load"):
        FastText.load(path)  # never unpickled; the message names the way through gensim
    model = load_gensim_pickle(path, trusted=True)
    assert type(model) is FastText and model.bucket == 500
    assert np.allclose(model.wv["walkingg"], g.wv["walkingg"], atol=1e-6)
    g.wv.save(str(tmp_path / "gensim.kv"))
    kv = load_gensim_pickle(tmp_path / "gensim.kv", trusted=True)
    assert type(kv) is FastTextKeyedVectors
    assert np.allclose(kv["walkingg"], g.wv["walkingg"], atol=1e-6)
