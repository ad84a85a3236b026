"""fastText's ``.bin`` files as hsw2v models (:mod:`hsw2v.fasttext._facebook_model`), checked
against the fastText tool itself (pip ``fasttext-wheel``) and gensim 4.4's functions of the
same names:

* a model trained by fastText loads as a trainable ``hsw2v.FastText`` whose vectors are
  fastText's and gensim's, for known and unknown words, and whose output layer gives
  fastText's hierarchical-softmax probabilities (its tree, its rows negated);
* it continues training on more text, new words included, and saves back byte for byte;
* a model trained by hsw2v saves as a file that fastText and gensim load with the same
  vectors; a model fastText would read wrongly (another tree) is refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import demo_lines, facebook_models, fasttext_tool

from hsw2v import Word2Vec
from hsw2v.fasttext import (  # not hsw2v.FastText, which tests/test_package.py stands in for
    FastText,
    FastTextKeyedVectors,
    load_facebook_model,
    load_facebook_vectors,
    save_facebook_model,
)
from hsw2v.fasttext._facebook import facebook_hs_tree, read_facebook_bin
from hsw2v.validation import check_model_for_training

OOV = ["catastrophically", "zzyzx", "réunion", "thee", "a", "xq"]


def gensim_fasttext():
    return pytest.importorskip("gensim.models.fasttext")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """fastText models trained on a little text: {kind: (path of the .bin, loaded model)}."""
    return facebook_models(tmp_path_factory.mktemp("ftfiles"))


@pytest.fixture(scope="module")
def ours(trained):
    return {kind: load_facebook_model(path) for kind, (path, _) in trained.items()}


KINDS = ["skipgram-hs", "cbow-ns"]


def sample_words(model_or_kv, n=40):
    """The most and least frequent words but ``</s>`` (see test_vectors_equal_fasttext...)."""
    wv = getattr(model_or_kv, "wv", model_or_kv)
    words = [w for w in wv.index_to_key if w != "</s>"]
    return words[:20] + words[-(n - 20) :]


# ------------------------------------------------------------------------- loading
@pytest.mark.parametrize("kind", KINDS)
def test_loaded_settings_vocabulary_and_counts(trained, ours, kind):
    path, ft = trained[kind]
    model = ours[kind]
    fb = read_facebook_bin(path)
    assert isinstance(model, FastText) and isinstance(model.wv, FastTextKeyedVectors)
    assert model.wv.index_to_key == ft.words == fb.words
    assert (model.wv.expandos["count"] == fb.counts).all()
    assert (model.vector_size, model.window, model.epochs, model.min_count) == (10, 3, 2, 2)
    assert (model.min_n, model.max_n, model.bucket, model.sample) == (2, 4, 2000, fb.t)
    assert (model.sg, model.hs, model.negative) == (
        (1, 1, 0) if kind == "skipgram-hs" else (0, 0, 3)
    )
    assert model.corpus_total_words == fb.ntokens
    assert model.corpus_count == 600  # one </s> per line
    assert model.alpha == 0.025  # fastText's lr is not in the file: gensim's default
    # sample_int as hsw2v's vocabulary computes it for these counts
    reference = Word2Vec(vector_size=10, min_count=1, sample=fb.t, workers=1)
    reference.build_vocab_from_freq(dict(zip(fb.words, fb.counts.tolist(), strict=True)))
    by_word = dict(zip(reference.wv.index_to_key, reference.wv.expandos["sample_int"], strict=True))
    assert [by_word[w] for w in fb.words] == model.wv.expandos["sample_int"].tolist()
    np.testing.assert_array_equal(model.wv.input_matrix, fb.input_matrix)
    check_model_for_training(model)


@pytest.mark.parametrize("kind", KINDS)
def test_vectors_equal_fasttext_and_gensim(trained, ours, kind):
    """``wv[word]`` is fastText's ``get_word_vector`` and gensim's ``wv[word]``, for words of
    the vocabulary and for words outside it (the mean of their n-gram rows)."""
    path, ft = trained[kind]
    model = ours[kind]
    theirs = gensim_fasttext().load_facebook_model(str(path))
    for word in sample_words(model) + OOV:
        np.testing.assert_allclose(model.wv[word], ft.get_word_vector(word), atol=1e-6)
        np.testing.assert_allclose(model.wv[word], theirs.wv[word], atol=1e-6)
    # fastText gives "</s>" no n-grams (its vector is its own row); gensim and hsw2v compose
    # it with the n-grams of "<</s>>" like any other word.
    eos = model.wv.key_to_index["</s>"]
    np.testing.assert_allclose(model.wv.vectors_vocab[eos], ft.get_word_vector("</s>"), atol=1e-6)
    np.testing.assert_allclose(model.wv["</s>"], theirs.wv["</s>"], atol=1e-6)


def test_load_facebook_vectors_equals_gensim(trained):
    path, ft = trained["skipgram-hs"]
    kv = load_facebook_vectors(path)
    theirs = gensim_fasttext().load_facebook_vectors(str(path))
    assert isinstance(kv, FastTextKeyedVectors) and kv.index_to_key == theirs.index_to_key
    for word in OOV + sample_words(kv):
        np.testing.assert_allclose(kv[word], theirs[word], atol=1e-6)
        np.testing.assert_allclose(kv[word], ft.get_word_vector(word), atol=1e-6)
    assert kv.get_vecattr("the", "count") == theirs.get_vecattr("the", "count")
    assert kv.get_vecattr("the", "sample_int") == theirs.get_vecattr("the", "sample_int")


def fasttext_hs_log_probability(fb, word: int, hidden: np.ndarray) -> float:
    """log P(word | hidden) as fastText computes it: its tree over the counts in file order,
    ``sigmoid(output[node] . h)`` the probability of code bit 1."""
    codes, points, lengths = facebook_hs_tree(fb.counts[: fb.nwords])
    bits = codes[word, : lengths[word]].astype(np.float64)
    x = fb.output_matrix[points[word, : lengths[word]]].astype(np.float64) @ hidden
    p = 1 / (1 + np.exp(-x))
    return float(np.log(np.where(bits == 1, p, 1 - p)).sum())


def test_hs_layer_gives_fasttext_probabilities(trained, ours):
    """The loaded tree with the negated rows gives fastText's hierarchical-softmax
    probabilities, in hsw2v's convention (``sigmoid(syn1[node] . h)`` = P(bit 0)), and
    the loaded model's ``score`` is their sum over a sentence's (word, context) pairs."""
    path, _ = trained["skipgram-hs"]
    model = ours["skipgram-hs"]
    fb = read_facebook_bin(path)
    codes, points, lengths = facebook_hs_tree(fb.counts)
    tree = model.tree
    np.testing.assert_array_equal(tree.lengths, lengths)
    for w in range(len(lengths)):
        assert (tree.code(w) == codes[w, : lengths[w]]).all()
        assert (tree.point(w) == points[w, : lengths[w]]).all()
    np.testing.assert_array_equal(model.syn1, -fb.output_matrix)
    hidden = model.wv["night"].astype(np.float64)  # skip-gram's h: the mean of the rows
    ours_p, theirs_p = [], []
    for w in range(len(lengths)):
        bits = tree.code(w).astype(np.float64)
        x = model.syn1[tree.point(w)].astype(np.float64) @ hidden
        ours_p.append(np.log(1 / (1 + np.exp(-(1 - 2 * bits) * x))).sum())
        theirs_p.append(fasttext_hs_log_probability(fb, w, hidden))
    np.testing.assert_allclose(ours_p, theirs_p, rtol=1e-9, atol=1e-12)
    assert abs(np.exp(theirs_p).sum() - 1) < 1e-6
    # score() (gensim's score_sg: each word predicted from each context word's vector)
    sentence = "the night was dark and the sea was calm".split()
    sentence = [w for w in sentence if w in model.wv.key_to_index]
    expected = 0.0
    for pos, word in enumerate(sentence):
        for pos2 in range(max(0, pos - model.window), min(len(sentence), pos + model.window + 1)):
            if pos2 != pos:
                h = model.wv[sentence[pos2]].astype(np.float64)
                expected += fasttext_hs_log_probability(fb, model.wv.key_to_index[word], h)
    assert model.score([sentence], total_sentences=1)[0] == pytest.approx(expected, rel=1e-4)


def test_ns_output_layer(trained, ours):
    path, _ = trained["cbow-ns"]
    model = ours["cbow-ns"]
    fb = read_facebook_bin(path)
    np.testing.assert_array_equal(model.syn1neg, fb.output_matrix)
    assert model.cum_table is not None and len(model.cum_table) == fb.nwords


@pytest.mark.parametrize("kind", KINDS)
def test_load_then_save_is_byte_identical(trained, ours, kind, tmp_path):
    path, _ = trained[kind]
    out = tmp_path / "again.bin"
    save_facebook_model(ours[kind], out)
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("kind", KINDS)
def test_loaded_model_continues_training(trained, kind):
    """``build_vocab(update=True)`` then ``train`` on more text: the new words get rows, the
    old rows move by training only (a small step from where fastText left them)."""
    path, _ = trained[kind]
    model = load_facebook_model(path)
    model.workers = 1
    before = model.wv.input_matrix.copy()
    old_words = list(model.wv.index_to_key)
    more = [line.split() for line in demo_lines(600, 800)]
    more += [["brandnewword", "anotherfreshword"] + s[:5] for s in more[:20]]
    model.build_vocab(more, update=True)
    assert model.wv.index_to_key[: len(old_words)] == old_words
    assert "brandnewword" in model.wv.key_to_index
    n_old, n = len(old_words), len(model.wv.index_to_key)
    np.testing.assert_array_equal(model.wv.vectors_vocab[:n_old], before[:n_old])
    np.testing.assert_array_equal(model.wv.vectors_ngrams, before[n_old:])
    model.alpha, model.min_alpha = 0.005, 0.0001
    model.train(more, total_examples=len(more), epochs=1)
    after = model.wv.input_matrix
    assert np.isfinite(after).all() and after.shape == (n + model.bucket, model.vector_size)
    old_rows = np.concatenate([after[:n_old], after[n:]])
    assert not np.array_equal(old_rows, before), "training changed nothing"
    moved = np.linalg.norm(old_rows - before, axis=1)
    scale = np.linalg.norm(before, axis=1)
    assert np.median(moved / np.maximum(scale, 1e-6)) < 0.2
    new = model.wv.key_to_index["brandnewword"]
    assert new >= n_old and not np.array_equal(after[new], before[0])
    np.testing.assert_allclose(model.wv["brandnewword"], model.wv.vectors[new], atol=1e-6)


# ------------------------------------------------------------------------- saving
def hsw2v_model(**settings):
    sentences = [line.split() for line in demo_lines(0, 300)]
    params = dict(vector_size=8, min_count=2, window=3, min_n=2, max_n=4, bucket=2000,
                  workers=1, epochs=1, seed=3)  # fmt: skip
    params.update(settings)
    return FastText(sentences, **params)


@pytest.mark.parametrize("sg,objective", [(1, "hs"), (0, "hs"), (1, "ns"), (0, "ns")])
def test_saved_model_loads_in_fasttext_and_gensim(sg, objective, tmp_path):
    fasttext = fasttext_tool()
    switches = {"hs": 1, "negative": 0} if objective == "hs" else {"hs": 0, "negative": 4}
    model = hsw2v_model(sg=sg, **switches)
    path = tmp_path / "hsw2v.bin"
    save_facebook_model(model, path)
    ft = fasttext.load_model(str(path))
    theirs = gensim_fasttext().load_facebook_model(str(path))
    assert ft.words == model.wv.index_to_key == theirs.wv.index_to_key
    assert ft.get_dimension() == 8
    args = ft.f.getArgs()
    assert (args.ws, args.minn, args.maxn, args.bucket) == (3, 2, 4, 2000)
    assert str(args.loss).endswith(objective) and str(args.model).endswith(
        "skipgram" if sg else "cbow"
    )
    for word in sample_words(model) + OOV:
        np.testing.assert_allclose(ft.get_word_vector(word), model.wv[word], atol=1e-6)
        np.testing.assert_allclose(theirs.wv[word], model.wv[word], atol=1e-6)
    fb = read_facebook_bin(path)
    if objective == "hs":
        np.testing.assert_array_equal(fb.output_matrix, -model.syn1)
    else:
        np.testing.assert_array_equal(fb.output_matrix, model.syn1neg)
    again = load_facebook_model(path)
    assert (again.sg, again.hs, again.negative) == (sg, *switches.values())
    np.testing.assert_array_equal(again.wv.input_matrix, model.wv.input_matrix)


def test_hs_save_refuses_a_tree_fasttext_would_not_build(tmp_path):
    balanced = hsw2v_model(tree="balanced")
    with pytest.raises(ValueError, match='tree="balanced"'):
        save_facebook_model(balanced, tmp_path / "balanced.bin")
    grown = hsw2v_model()
    grown.build_vocab([["unseenword", "otherunseen"]] * 5, update=True)
    with pytest.raises(ValueError, match="build_vocab"):
        save_facebook_model(grown, tmp_path / "grown.bin")
    assert not list(tmp_path.iterdir())  # nothing written
    # negative sampling has no tree: a grown ns model saves
    ns = hsw2v_model(hs=0, negative=3)
    ns.build_vocab([["unseenword", "otherunseen"]] * 5, update=True)
    save_facebook_model(ns, tmp_path / "grown-ns.bin")
    assert load_facebook_model(tmp_path / "grown-ns.bin").wv.index_to_key == ns.wv.index_to_key


def test_save_refuses_other_models(tmp_path):
    with pytest.raises(TypeError, match="FastText"):
        save_facebook_model(Word2Vec([["a", "b"]] * 5, min_count=1, workers=1), tmp_path / "x")
    with pytest.raises(ValueError, match="build the vocabulary"):
        save_facebook_model(FastText(bucket=10), tmp_path / "y")


def test_supervised_model_is_refused(tmp_path):
    fasttext = fasttext_tool()
    text = tmp_path / "labelled.txt"
    lines = [
        f"__label__{i % 3} " + " ".join(f"w{(i * j) % 7}" for j in range(5)) for i in range(60)
    ]
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = fasttext.train_supervised(str(text), dim=4, epoch=1, thread=1, verbose=0, bucket=100)
    path = tmp_path / "supervised.bin"
    model.save_model(str(path))
    with pytest.raises(ValueError, match="supervised"):
        load_facebook_model(path)
    kv = load_facebook_vectors(path)  # its words' vectors are readable
    np.testing.assert_allclose(kv["w3"], model.get_word_vector("w3"), atol=1e-6)


def test_both_objectives_save_hs_with_a_warning(tmp_path, caplog):
    model = hsw2v_model(hs=1, negative=3)
    with caplog.at_level("WARNING"):
        save_facebook_model(model, tmp_path / "both.bin")
    assert "syn1neg" in caplog.text
    fb = read_facebook_bin(tmp_path / "both.bin")
    assert fb.loss == "hs" and fb.neg == 3


def test_encoding_other_than_utf8(tmp_path):
    model = FastText([["café", "noël", "café"]] * 10, vector_size=4, min_count=1, bucket=20,
                     workers=1, epochs=1)  # fmt: skip
    path = tmp_path / "latin.bin"
    save_facebook_model(model, path, encoding="latin-1")
    assert b"caf\xe9\0" in path.read_bytes()
    assert load_facebook_model(path, encoding="latin-1").wv.index_to_key == ["café", "noël"]
    assert load_facebook_vectors(path).index_to_key == ["caf\\xe9", "no\\xebl"]  # as gensim
