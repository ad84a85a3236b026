"""The gensim 4.4 names hsw2v adds (reset_from, estimate_memory, init_sims, words_closer_than,
vectors_for_all, intersect_word2vec_format, wmdistance) and train()'s contract, each checked
against gensim itself on the same input."""

import inspect
import itertools
import logging
import warnings

import numpy as np
import pytest
from conftest import gensim_models

from hsw2v import KeyedVectors, Word2Vec
from hsw2v.keyedvectors._wmd import nbow, transport_cost

SENTENCES = [
    ["human", "interface", "computer"],
    ["survey", "user", "computer", "system", "response", "time"],
    ["eps", "user", "interface", "system"],
    ["system", "human", "system", "eps"],
    ["user", "response", "time"],
    ["trees"],
    ["graph", "trees"],
    ["graph", "minors", "trees"],
    ["graph", "minors", "survey"],
] * 10
SETTINGS = dict(vector_size=12, min_count=1, workers=1, seed=3, sample=0, window=2)


def both(**kw):
    """An unbuilt hsw2v model and a gensim hs model with the same settings."""
    params = {**SETTINGS, **kw}
    return Word2Vec(**params), gensim_models.Word2Vec(hs=1, negative=0, **params)


# ------------------------------------------------------------------------------ signatures
WORD2VEC_METHODS = [
    "train",
    "build_vocab",
    "build_vocab_from_freq",
    "scan_vocab",
    "prepare_vocab",
    "prepare_weights",
    "reset_from",
    "estimate_memory",
    "init_sims",
    "score",
    "predict_output_word",
    "get_latest_training_loss",
]
KV_METHODS = ["words_closer_than", "vectors_for_all", "intersect_word2vec_format", "wmdistance"]


@pytest.mark.parametrize(
    "ours, theirs, name",
    [(Word2Vec, "Word2Vec", m) for m in WORD2VEC_METHODS]
    + [(KeyedVectors, "KeyedVectors", m) for m in KV_METHODS],
)
def test_gensim_parameters_come_first_with_the_same_defaults(ours, theirs, name):
    """Every gensim parameter exists in ours, in gensim's order, with gensim's default; hsw2v
    may add keyword parameters of its own after them."""
    g = list(inspect.signature(getattr(getattr(gensim_models, theirs), name)).parameters.values())
    o = list(inspect.signature(getattr(ours, name)).parameters.values())
    g_named = [p for p in g if p.kind is not p.VAR_KEYWORD]
    o_named = [p for p in o if p.kind is not p.VAR_KEYWORD]
    assert [p.name for p in o_named[: len(g_named)]] == [p.name for p in g_named]
    for gp, op in zip(g_named, o_named, strict=False):
        assert (op.kind, op.default) == (gp.kind, gp.default), (name, gp.name)
    assert any(p.kind is p.VAR_KEYWORD for p in o) >= any(p.kind is p.VAR_KEYWORD for p in g)


# ------------------------------------------------------------------------------ train()
def build_both(**kw):
    ours, theirs = both(**kw)
    ours.build_vocab(SENTENCES)
    theirs.build_vocab(SENTENCES)
    return ours, theirs


def generator():
    return (s for s in SENTENCES)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda m: m.train(SENTENCES, epochs=1), ValueError),  # no total_examples/total_words
        (lambda m: m.train(SENTENCES, total_examples=90), ValueError),  # no epochs
        (lambda m: m.train(SENTENCES, total_examples=90, epochs=0), ValueError),
        (lambda m: m.train(generator(), total_examples=90, epochs=2), TypeError),
        (lambda m: m.train(SENTENCES, corpus_file="x.txt", total_examples=9, epochs=1), TypeError),
        (lambda m: m.train(total_examples=90, epochs=1), TypeError),  # no corpus at all
    ],
    ids=["no-counts", "no-epochs", "zero-epochs", "one-shot-generator", "two-corpora", "none"],
)
def test_train_raises_what_gensim_raises(call, error):
    for model in build_both():
        with pytest.raises(error):
            call(model)


def test_train_needs_a_vocabulary_like_gensim():
    for model in both():
        with pytest.raises(RuntimeError):
            model.train(SENTENCES, total_examples=90, epochs=1)


@pytest.mark.parametrize("epochs", [1, 3])
def test_train_returns_gensims_counts(epochs):
    """(effective words, raw words): raw counts every token, unknown ones too; effective the
    trained ones (sample=0: every known token)."""
    corpus = SENTENCES + [["unknown", "graph"]]
    ours, theirs = build_both()
    assert ours.train(corpus, total_examples=len(corpus), epochs=epochs) == theirs.train(
        corpus, total_examples=len(corpus), epochs=epochs
    )
    # a one-shot generator is fine for one epoch, in both
    if epochs == 1:
        assert ours.train(generator(), total_words=270, epochs=1) == theirs.train(
            generator(), total_words=270, epochs=1
        )


def recording_callback():
    """A gensim callback (gensim's own base class) that records its calls."""

    class Counter(gensim_models.callbacks.CallbackAny2Vec):
        def __init__(self):
            self.calls = []

        def on_train_begin(self, model):
            self.calls.append("train_begin")

        def on_epoch_end(self, model):
            self.calls.append("epoch_end")

    return Counter()


def test_train_updates_the_model_settings_as_gensim_does():
    results = []
    for model in build_both():
        made_with = recording_callback()
        model.callbacks = (made_with,)
        before = model.train_count
        model.train(
            SENTENCES,
            total_examples=90,
            epochs=3,
            start_alpha=0.05,
            end_alpha=0.001,
            compute_loss=True,
        )
        loss_on = model.get_latest_training_loss()
        model.train(SENTENCES, total_examples=90, epochs=2)  # compute_loss back to False
        results.append(
            (
                model.alpha,
                model.min_alpha,
                model.epochs,
                model.train_count - before,
                model.compute_loss,
                loss_on > 0,
                model.get_latest_training_loss(),
                made_with.calls,  # only callbacks passed to train() are called
            )
        )
    assert results[0] == results[1] == (0.05, 0.001, 2, 2, False, True, 0.0, [])


def test_constructor_callbacks_and_loss_apply_to_its_own_training_only():
    outcomes = []
    for cls, extra in ((Word2Vec, {}), (gensim_models.Word2Vec, {"hs": 1, "negative": 0})):
        counter = recording_callback()
        model = cls(
            SENTENCES, epochs=2, callbacks=[counter], compute_loss=True, **SETTINGS, **extra
        )
        seen = list(counter.calls)
        model.train(SENTENCES, total_examples=90, epochs=1, callbacks=[counter])
        outcomes.append((seen, counter.calls[len(seen) :], model.train_count))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == ["train_begin", "epoch_end", "epoch_end"]


# ------------------------------------------------------------------------------ Word2Vec names
def test_estimate_memory_matches_gensim():
    ours, theirs = build_both(vector_size=40)
    assert ours.estimate_memory() == theirs.estimate_memory()
    assert ours.estimate_memory(vocab_size=12345) == theirs.estimate_memory(vocab_size=12345)
    assert ours.estimate_memory(report={"mine": 1}) == theirs.estimate_memory(report={"mine": 1})
    assert set(ours.estimate_memory()) == {"vocab", "vectors", "syn1", "total"}
    real = ours.wv.vectors.nbytes
    assert ours.estimate_memory()["vectors"] == real == ours.syn1.nbytes


def test_reset_from_shares_the_vocabulary_and_restarts_the_weights():
    source = Word2Vec(SENTENCES, epochs=2, **SETTINGS)
    ours, theirs = both(vector_size=6)
    ours.reset_from(source)
    theirs.reset_from(source.to_gensim())
    for model in (ours, theirs):
        assert model.wv.index_to_key == source.wv.index_to_key
        assert model.wv.vectors.shape == (len(source.wv), 6) == model.syn1.shape
        assert model.corpus_count == source.corpus_count
        assert not model.syn1.any()
    np.testing.assert_array_equal(ours.wv.vectors, theirs.wv.vectors)  # gensim's seeded init
    assert ours.wv.index_to_key is source.wv.index_to_key  # shared, as in gensim
    assert ours.train(SENTENCES, total_examples=90, epochs=1) == (290, 290)
    # gensim's reset model cannot train: its new KeyedVectors lacks the vectors_lockf its
    # kernels read, so the worker threads die and train() waits forever (not run here)
    assert hasattr(theirs.wv, "vectors_lockf") is False


def test_init_sims_is_deprecated_as_in_gensim():
    for model in (
        Word2Vec(SENTENCES, epochs=1, **SETTINGS),
        gensim_models.Word2Vec(SENTENCES, epochs=1, hs=1, negative=0, **SETTINGS),
    ):
        with pytest.warns(DeprecationWarning):
            model.init_sims()
        np.testing.assert_allclose(model.wv.norms, np.linalg.norm(model.wv.vectors, axis=1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.init_sims(replace=True)
        np.testing.assert_allclose(np.linalg.norm(model.wv.vectors, axis=1), 1.0, rtol=1e-5)


# ------------------------------------------------------------------------------ KeyedVectors
@pytest.fixture(scope="module")
def pair():
    """The same vectors as an hsw2v and a gensim KeyedVectors."""
    pytest.importorskip("gensim")
    model = Word2Vec(SENTENCES, epochs=3, **SETTINGS)
    return model.wv, model.wv.to_gensim()


def test_words_closer_than_matches_gensim(pair):
    ours, theirs = pair
    for a, b in itertools.permutations(["graph", "trees", "user", "system"], 2):
        with pytest.warns(DeprecationWarning, match="closer_than"):
            mine = ours.words_closer_than(a, b)
        with pytest.warns(DeprecationWarning, match="closer_than"):
            assert mine == theirs.words_closer_than(a, b) == ours.closer_than(a, b)


def test_vectors_for_all_matches_gensim(pair):
    ours, theirs = pair
    keys = ["trees", "nope", "graph", "trees", "eps"]
    for copy in (False, True):
        mine = ours.vectors_for_all(keys, copy_vecattrs=copy)
        gens = theirs.vectors_for_all(keys, copy_vecattrs=copy)
        assert mine.index_to_key == gens.index_to_key == ["trees", "graph", "eps"]
        np.testing.assert_array_equal(mine.vectors, gens.vectors)
        if copy:
            np.testing.assert_array_equal(mine.expandos["count"], gens.expandos["count"])
        else:
            assert mine.expandos == {}
    assert mine.vectors.base is not ours.vectors  # a copy
    assert len(ours.vectors_for_all([])) == 0


@pytest.mark.parametrize("binary", [False, True])
def test_intersect_word2vec_format_matches_gensim(pair, tmp_path, binary):
    ours_source, theirs_source = pair
    other = KeyedVectors(12)
    rng = np.random.default_rng(0)
    other.add_vectors(["graph", "zzz", "user"], rng.normal(size=(3, 12)).astype(np.float32))
    path = tmp_path / "other.vec"
    other.save_word2vec_format(path, binary=binary)
    ours = ours_source.vectors_for_all(ours_source.index_to_key)
    theirs = theirs_source.vectors_for_all(theirs_source.index_to_key)
    # gensim 4.4 needs a lock-factor array sized by hand, else its call fails (see the docs)
    with pytest.raises(ValueError if binary else AttributeError):
        theirs.intersect_word2vec_format(str(path), binary=binary)
    theirs.vectors_lockf = np.ones(len(theirs), dtype=np.float32)
    ours.intersect_word2vec_format(path, lockf=1.0, binary=binary)
    if binary:  # and its binary reader calls np.fromstring, which NumPy 2 removed
        with pytest.raises(ValueError, match="fromstring"):
            theirs.intersect_word2vec_format(str(path), lockf=1.0, binary=binary)
    else:
        theirs.intersect_word2vec_format(str(path), lockf=1.0, binary=binary)
        np.testing.assert_array_equal(ours.vectors, theirs.vectors)
    expected = ours_source.vectors.copy()
    expected[[ours.get_index("graph"), ours.get_index("user")]] = other[["graph", "user"]]
    np.testing.assert_array_equal(ours.vectors, expected)
    np.testing.assert_array_equal(ours["graph"], other["graph"])
    assert "zzz" not in ours and ours.index_to_key == ours_source.index_to_key
    ours.intersect_word2vec_format(path, binary=binary)  # gensim's default lockf=0.0: frozen
    merged = [ours.get_index("graph"), ours.get_index("user")]
    assert ours.vectors_lockf[merged].tolist() == [0.0, 0.0]
    assert (np.delete(ours.vectors_lockf, merged) == 1.0).all()
    if not binary:
        theirs.intersect_word2vec_format(str(path), binary=binary)
        np.testing.assert_array_equal(ours.vectors_lockf, theirs.vectors_lockf)


def test_intersect_word2vec_format_refuses_bad_files_and_changes_nothing(tmp_path):
    kv = KeyedVectors(2)
    kv.add_vectors(["a", "b"], [[0.0, 0.0], [0.0, 0.0]])
    wrong_size = tmp_path / "three.txt"
    wrong_size.write_text("1 3\na 1 2 3\n")
    with pytest.raises(ValueError, match="incompatible vector size 3"):
        kv.intersect_word2vec_format(wrong_size, lockf=1.0)
    truncated = tmp_path / "short.txt"
    truncated.write_text("3 2\na 1 2\nb 3 4\n")
    with pytest.raises(ValueError, match="line 4: unexpected end of file"):
        kv.intersect_word2vec_format(truncated, lockf=1.0)
    assert not kv.vectors.any()  # nothing merged from a file that failed halfway


def test_wmdistance_hand_worked_example():
    kv = KeyedVectors(2)
    kv.add_vectors(["a", "b", "c", "d"], [[0.0, 0.0], [3.0, 4.0], [0.0, 1.0], [4.0, 4.0]])
    # "a" splits evenly between "b" (distance 5) and "c" (distance 1)
    assert kv.wmdistance(["a"], ["b", "c"], norm=False) == pytest.approx(3.0)
    # a -> c (1) and b -> d (1) beats a -> d, b -> c; with 1/2 mass each: 1.0
    assert kv.wmdistance(["a", "b"], ["c", "d"], norm=False) == pytest.approx(1.0)
    # counts are weights: a,a,b vs c,d: a sends 1/2 to c and 1/6 to d, b sends 1/3 to d
    expected = 0.5 * 1 + (1 / 6) * np.hypot(4, 4) + (1 / 3) * 1
    assert kv.wmdistance(["a", "a", "b"], ["c", "d"], norm=False) == pytest.approx(expected)
    assert kv.wmdistance(["a", "oov"], ["b", "c"], norm=False) == pytest.approx(3.0)
    assert kv.wmdistance(["oov"], ["a"]) == float("inf")
    assert nbow(["x", "y", "x"]) == (["x", "y"], pytest.approx([2 / 3, 1 / 3]))


def test_wmdistance_properties(pair):
    """A metric over bags of words, bounded below by the distance between the documents'
    weighted centroids (Kusner et al. 2015, WCD)."""
    kv = pair[0]
    rng = np.random.default_rng(1)
    words = kv.index_to_key
    docs = [list(rng.choice(words, size=rng.integers(1, 7))) for _ in range(6)]
    for d1, d2 in itertools.combinations(docs, 2):
        dist = kv.wmdistance(d1, d2)
        assert dist == pytest.approx(kv.wmdistance(d2, d1), abs=1e-9)
        unit = kv.get_normed_vectors()
        c1 = unit[[kv.get_index(w) for w in d1]].mean(axis=0)
        c2 = unit[[kv.get_index(w) for w in d2]].mean(axis=0)
        assert dist >= np.linalg.norm(c1 - c2) - 1e-6
    for d1, d2, d3 in itertools.permutations(docs, 3):
        assert kv.wmdistance(d1, d3) <= kv.wmdistance(d1, d2) + kv.wmdistance(d2, d3) + 1e-9
    assert kv.wmdistance(docs[0], list(reversed(docs[0]))) == pytest.approx(0.0, abs=1e-12)
    # the LP against brute force over permutations (uniform weights, equal sizes: an assignment)
    cost = rng.random((4, 4))
    best = min(sum(cost[i, p[i]] for i in range(4)) for p in itertools.permutations(range(4)))
    assert transport_cost([0.25] * 4, [0.25] * 4, cost) == pytest.approx(best / 4)


def test_wmdistance_matches_gensim(pair, caplog):
    pytest.importorskip("ot", reason="gensim's wmdistance needs POT (pip install pot)")
    ours, theirs = pair
    docs = [
        ["human", "computer", "interface", "human"],
        ["graph", "minors", "trees", "unknown"],
        ["user", "system", "response", "time", "system"],
        ["eps"],
    ]
    with caplog.at_level(logging.WARNING):
        for d1, d2 in itertools.combinations(docs, 2):
            for norm in (True, False):
                assert ours.wmdistance(d1, d2, norm=norm) == pytest.approx(
                    theirs.wmdistance(d1, d2, norm=norm), rel=1e-6, abs=1e-9
                )


def test_wmdistance_of_coinciding_words_is_zero_where_gensim_says_inf():
    """The documented difference: gensim gives up (inf) when every distance is zero."""
    pytest.importorskip("gensim")
    ours = KeyedVectors(2)
    ours.add_vectors(["a", "b", "c"], [[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    assert ours.wmdistance(["a"], ["b"]) == 0.0  # same unit vector
    assert ours.wmdistance(["a"], ["b"], norm=False) == pytest.approx(1.0)
    pytest.importorskip("ot", reason="gensim's wmdistance needs POT (pip install pot)")
    theirs = ours.to_gensim()
    assert theirs.wmdistance(["a"], ["b"]) == float("inf")
    assert theirs.wmdistance(["a"], ["b"], norm=False) == pytest.approx(1.0)
