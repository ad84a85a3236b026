"""Sentence scores and output-word prediction: nogil twins and results against NumPy references,
and against gensim's own ``score`` on the same weights."""

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hsw2v import Word2Vec
from hsw2v._kernels import _query
from hsw2v.huffman import build_huffman_tree
from hsw2v.scoring import child_table, output_word_probabilities
from tests.conftest import planted_corpus

# ------------------------------------------------------------------------ NumPy references


def log_sigmoid(x):
    return -np.logaddexp(0.0, -np.asarray(x, dtype=np.float64))


def path_log_prob(h, syn1, tree, word):
    """log P(word | h) = sum_j log sigmoid((1 - 2 code_j) h . syn1[point_j]), in float64."""
    length = tree.lengths[word]
    f = syn1[tree.points[word, :length]].astype(np.float64) @ np.asarray(h, dtype=np.float64)
    return log_sigmoid((1.0 - 2.0 * tree.codes[word, :length]) * f).sum()


def gensim_table_term(f):
    """gensim 4.4's score term for a signed dot product ``f``: a 1000-entry log-sigmoid table
    over (-6, 6) read at index ``int((f + 6) * 83)`` (its scale is an integer division), and 0
    for ``|f| >= 6``."""
    grid = np.exp((np.arange(1000) / 1000 * 2 - 1) * 6.0).astype(np.float32)
    table = np.log(grid / (grid + 1)).astype(np.float32)
    f = np.asarray(f, dtype=np.float32)
    keep = (f > -6) & (f < 6)
    return float(table[((f[keep] + 6) * 83).astype(int)].sum()), int((~keep).sum())


def reference_score(model, sentence, emulate_gensim=False):
    """The sentence's log-probability written out (see hsw2v.scoring.score_sentences); with
    ``emulate_gensim``, gensim's table terms instead, and the number of terms gensim skips."""
    wv, tree = model.wv, model.tree
    ids = [wv.key_to_index[t] for t in sentence if t in wv.key_to_index]
    syn0 = wv.vectors.astype(np.float64)
    total, skipped, terms = 0.0, 0, 0

    def path(h, word):
        nonlocal total, skipped, terms
        length = tree.lengths[word]
        terms += length
        if emulate_gensim:
            f = (model.syn1[tree.points[word, :length]] @ h.astype(np.float32)) * (
                1.0 - 2.0 * tree.codes[word, :length]
            )
            value, n_skipped = gensim_table_term(f)
            total += value
            skipped += n_skipped
        else:
            total += path_log_prob(h, model.syn1, tree, word)

    n = len(ids)
    for i in range(n):
        context = [ids[j] for j in range(max(0, i - model.window), min(n, i + model.window + 1))]
        context.pop(min(i, model.window))  # the centre itself
        if model.sg:
            for c in context:
                path(syn0[c], ids[i])
        else:
            h = syn0[context].sum(axis=0) if context else np.zeros(model.vector_size)
            if model.cbow_mean and context:
                h /= len(context)
            path(h, ids[i])
    return (total, skipped, terms) if emulate_gensim else total


@pytest.fixture(scope="module")
def corpus():
    sentences, _ = planted_corpus(n_clusters=4, words_per_cluster=8, n_sentences=400, seed=3)
    return sentences


def small_model(corpus, sg, cbow_mean=1, window=3):
    return Word2Vec(
        corpus,
        vector_size=12,
        window=window,
        min_count=1,
        sg=sg,
        cbow_mean=cbow_mean,
        workers=1,
        epochs=2,
        seed=7,
    )


@pytest.fixture(scope="module", params=[(1, 1), (0, 1), (0, 0)], ids=["sg", "cbow", "cbow-sum"])
def model(request, corpus):
    sg, cbow_mean = request.param
    return small_model(corpus, sg, cbow_mean)


def probe_sentences(corpus):
    """Ordinary sentences plus the edge cases: unknown tokens (dropped before windowing), a
    single known word, an empty sentence, only unknown words."""
    return corpus[:12] + [
        ["c0w1", "zzz", "c0w2", "unknown", "c0w3"],
        ["c1w4"],
        [],
        ["nope", "never"],
    ]


# ------------------------------------------------------------------------ nogil twins


def test_neg_log_sigmoid_twin_is_exact_everywhere():
    for x in (-1000.0, -40.0, -1.5, 0.0, 1e-9, 2.5, 40.0, 1000.0):
        assert _query.py_neg_log_sigmoid(x) == pytest.approx(-log_sigmoid(x), rel=1e-14, abs=1e-300)
    assert _query.py_neg_log_sigmoid(-1000.0) == pytest.approx(1000.0)
    assert _query.py_neg_log_sigmoid(1000.0) == 0.0


def test_dot_and_path_twins_match_numpy():
    rng = np.random.default_rng(0)
    tree = build_huffman_tree(rng.integers(1, 100, size=30))
    syn1 = rng.normal(0, 2.0, size=(30, 37)).astype(np.float32)
    h = rng.normal(size=37)
    assert _query.py_dot(h, syn1[3]) == pytest.approx(float(h @ syn1[3].astype(np.float64)))
    for word in (0, 11, 29):
        code, point = tree.code(word).copy(), tree.point(word).copy()
        got = _query.py_path_log_prob(h, syn1, code, point)
        assert got == pytest.approx(path_log_prob(h, syn1, tree, word), rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-50, 50), min_size=1, max_size=60))
def test_heap_twin_pops_in_descending_order(values):
    logp = np.array(values, dtype=np.float64)
    nodes = np.arange(len(values), dtype=np.int32)
    order = _query.py_heap_order(logp, nodes)
    assert sorted(order.tolist()) == nodes.tolist()
    assert np.all(np.diff(logp[order]) <= 0)


def test_score_sentence_twin_matches_reference(model, corpus):
    scorer = _query.Scorer(
        model.wv.vectors,
        model.syn1,
        model.tree.codes,
        model.tree.points,
        model.tree.lengths,
        model.window,
        bool(model.sg),
        bool(model.cbow_mean),
    )
    sentence = corpus[5]
    ids = np.array([model.wv.key_to_index[t] for t in sentence], dtype=np.int32)
    assert _query.py_score_sentence(scorer, ids) == pytest.approx(
        reference_score(model, sentence), rel=1e-10
    )
    with pytest.raises(ValueError):
        scorer.score_job(np.array([0, 10_000], dtype=np.int32), np.array([2], dtype=np.int64))


# ------------------------------------------------------------------------ score


def test_score_matches_numpy_reference(model, corpus):
    sentences = probe_sentences(corpus)
    scores = model.score(sentences)
    assert scores.dtype == np.float32 and scores.shape == (len(sentences),)
    expected = np.array([reference_score(model, s) for s in sentences])
    np.testing.assert_allclose(scores, expected, rtol=1e-6, atol=1e-6)
    assert scores[-2] == 0.0 and scores[-1] == 0.0  # nothing known, nothing scored
    one_word = scores[-3]
    if model.sg:
        assert one_word == 0.0  # no context word, no pair
    else:  # gensim's convention: scored with h = 0, log(1/2) per node
        length = model.tree.lengths[model.wv.key_to_index["c1w4"]]
        assert one_word == pytest.approx(-length * np.log(2.0), rel=1e-6)


def test_score_matches_gensim_where_terms_are_not_saturated(model, corpus):
    pytest.importorskip("gensim")
    sentences = probe_sentences(corpus)
    ours = model.score(sentences)
    theirs = model.to_gensim().score(sentences)
    for sentence, mine, gensims in zip(sentences, ours, theirs, strict=True):
        emulated, skipped, terms = reference_score(model, sentence, emulate_gensim=True)
        assert skipped == 0
        # gensim computes exactly its table's terms for the same (path, vector) pairs ...
        assert gensims == pytest.approx(emulated, rel=1e-4, abs=1e-4)
        # ... which differ from the exact log-sigmoid by the table's resolution only.
        assert abs(mine - gensims) <= 0.06 * terms + 1e-4


def test_score_stays_exact_where_gensim_skips_saturated_terms(corpus):
    pytest.importorskip("gensim")
    model = small_model(corpus, sg=1)
    rng = np.random.default_rng(1)
    # Large weights put most |h . v'| far beyond gensim's +-6 cutoff, on either side.
    model.wv.vectors[:] = rng.normal(0, 3.0, size=model.wv.vectors.shape)
    model.syn1[:] = rng.normal(0, 3.0, size=model.syn1.shape)
    sentences = corpus[:6]
    ours = model.score(sentences)
    theirs = model.to_gensim().score(sentences)
    assert np.all(np.isfinite(ours))
    expected = np.array([reference_score(model, s) for s in sentences])
    np.testing.assert_allclose(ours, expected, rtol=1e-6)
    for sentence, gensims in zip(sentences, theirs, strict=True):
        emulated, skipped, terms = reference_score(model, sentence, emulate_gensim=True)
        assert skipped > terms // 2
        assert gensims == pytest.approx(emulated, rel=1e-4, abs=1e-3)
    # The confidently wrong nodes gensim drops are large negative terms.
    assert np.all(ours < theirs - 10.0)


def test_multithreaded_score_equals_single_threaded(corpus):
    model = small_model(corpus, sg=1)
    sentences = corpus[:300]
    model.workers = 1
    single = model.score(sentences, chunksize=300)
    model.workers = 2
    threaded = model.score(sentences, chunksize=7)
    np.testing.assert_array_equal(single, threaded)


def test_score_length_follows_gensim(corpus, caplog):
    model = small_model(corpus, sg=0)
    short = model.score(iter(corpus[:10]), total_sentences=100, chunksize=3)
    assert short.shape == (10,)  # the filled prefix only, as gensim returns
    with caplog.at_level(logging.WARNING, logger="hsw2v.scoring"):
        capped = model.score((s for s in corpus[:10]), total_sentences=4, chunksize=3)
    assert capped.shape == (4,)
    np.testing.assert_array_equal(capped, short[:4])
    assert "terminating after 4 sentences" in caplog.text
    assert model.score([], total_sentences=5).shape == (0,)


def test_score_rejects_bad_input(corpus):
    model = small_model(corpus, sg=0)
    with pytest.raises(TypeError, match="is a string"):
        model.score([["c0w1"], "c0w1 c0w2"])
    with pytest.raises(RuntimeError, match="build vocabulary"):
        Word2Vec(vector_size=4).score([["a"]])


# ------------------------------------------------------------------------ prediction


def brute_force_log_probs(h, syn1, tree):
    return np.array([path_log_prob(h, syn1, tree, w) for w in range(len(tree.lengths))])


@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.integers(1, 1000), min_size=2, max_size=40),
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from([0.1, 1.0, 5.0]),
    topn=st.integers(1, 45),
)
def test_tree_search_is_exact_top_n(counts, seed, scale, topn):
    rng = np.random.default_rng(seed)
    tree = build_huffman_tree(counts)
    n_words, d = len(counts), 5
    syn1 = rng.normal(0, scale, size=(n_words, d)).astype(np.float32)
    h = rng.normal(size=d)
    children = child_table(tree.codes, tree.points, tree.lengths)
    brute = brute_force_log_probs(h, syn1, tree)
    everything = _query.leaf_log_probs(h, syn1, children)
    np.testing.assert_allclose(everything, brute, rtol=1e-12, atol=1e-12)
    assert np.exp(everything).sum() == pytest.approx(1.0, rel=1e-12)
    words, log_probs = _query.top_leaves(h, syn1, children, topn)
    n = min(topn, n_words)
    assert len(words) == n == len(set(words.tolist()))
    np.testing.assert_allclose(log_probs, brute[words], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(log_probs, np.sort(brute)[::-1][:n], rtol=1e-12, atol=1e-12)


def test_child_table_rejects_malformed_trees():
    tree = build_huffman_tree([5, 3, 2, 1])
    codes = tree.codes.copy()
    codes[0, 0] = 1 - codes[0, 0]  # two leaves now claim the same branch
    with pytest.raises(ValueError):
        child_table(codes, tree.points, tree.lengths)
    with pytest.raises(ValueError):
        child_table(tree.codes, tree.points + 1, tree.lengths)
    bad = np.array([[1, -1], [0, -2]], dtype=np.int32)  # a cycle
    with pytest.raises(ValueError):
        _query.leaf_log_probs(np.ones(2), np.ones((3, 2), dtype=np.float32), bad)


def test_predict_output_word_matches_brute_force(model):
    context = ["c2w1", "c2w5", "not-a-word", "c2w1"]
    rows = [model.wv.key_to_index[w] for w in context if w in model.wv.key_to_index]
    h = model.wv.vectors[rows].astype(np.float64).sum(axis=0)
    if model.cbow_mean:
        h /= len(rows)
    brute = np.exp(brute_force_log_probs(h, model.syn1, model.tree))
    assert brute.sum() == pytest.approx(1.0)
    probs = output_word_probabilities(model, context)
    np.testing.assert_allclose(probs, brute, rtol=1e-10)
    top = model.predict_output_word(context, topn=5)
    order = np.argsort(-brute, kind="stable")[:5]
    assert [w for w, _ in top] == [model.wv.index_to_key[i] for i in order]
    np.testing.assert_allclose([p for _, p in top], brute[order], rtol=1e-10)
    everything = model.predict_output_word(context, topn=None)
    assert len(everything) == len(model.wv)
    assert sum(p for _, p in everything) == pytest.approx(1.0, rel=1e-10)
    # Row indices work as keys, as in gensim.
    as_indices = model.predict_output_word([rows[0], rows[1], rows[2]], topn=5)
    assert as_indices == top


def test_predict_output_word_unknown_context_and_cache(corpus, caplog):
    model = small_model(corpus, sg=0)
    with caplog.at_level(logging.WARNING, logger="hsw2v.scoring"):
        assert model.predict_output_word(["nope", "nothing"]) is None
    assert "out-of-vocabulary" in caplog.text
    model.predict_output_word(["c0w1"])
    cached = model._hs_children
    model.predict_output_word(["c0w2"])
    assert model._hs_children is cached
    assert model.predict_output_word(["c0w1"], topn=0) == []


def test_single_word_vocabulary():
    model = Word2Vec([["only"]] * 5, vector_size=4, min_count=1, workers=1, epochs=1)
    assert model.predict_output_word(["only"]) == [("only", 1.0)]
    assert model.score([["only", "only"]]).shape == (1,)
