"""build_vocab(update=True): the old tree is kept, new words are grafted on, syn1 stays sound."""

import numpy as np
import pytest

from hsw2v import Word2Vec
from hsw2v._kernels._inner import log_prob_all
from hsw2v._kernels._query import leaf_log_probs, top_leaves, tree_root
from hsw2v.huffman import build_huffman_tree
from hsw2v.scoring import child_table, output_word_probabilities
from hsw2v.vocab import keep_probabilities
from hsw2v.vocab_update import ROOT, graft_site, grow_huffman_tree
from tests.conftest import cluster_recovery, planted_corpus


def check_tree(tree, n_words):
    """A full binary tree over n_words leaves: child_table validates it; returns its table."""
    assert len(tree.lengths) == n_words
    table = child_table(tree.codes, tree.points, tree.lengths)
    assert table.shape == (n_words - 1, 2)
    assert tree_root(table) == tree.root
    # prefix-free: no word's (code) is a prefix of another's
    codes = {tuple(tree.code(w).tolist()) for w in range(n_words)}
    assert len(codes) == n_words
    for c in codes:
        for k in range(1, len(c)):
            assert c[:k] not in codes
    return table


def leaf_mass(tree, seed):
    """Total probability of all leaves under a random h and random syn1 rows."""
    rng = np.random.default_rng(seed)
    n, d = len(tree.lengths), 6
    syn1 = rng.normal(size=(n, d)).astype(np.float32)
    h = rng.normal(size=d).astype(np.float32)
    return float(np.exp(log_prob_all(h, syn1, tree.codes, tree.points, tree.lengths)).sum())


@pytest.mark.parametrize(
    "old, new, where",
    [
        ([50, 30, 20, 10, 5], [2, 1], "leaf"),  # rare new words: under a rare old word
        ([50, 30, 20, 10, 5], [400, 300, 10], "root"),  # frequent new words: above the root
        ([9, 8, 7], [1], "leaf"),  # one new word
        ([7], [3, 2, 2], "one-word"),  # a one-word model: node 0's empty side
        ([7], [3], "one-word"),
        ([5, 3], [], "nothing"),
    ],
)
def test_grown_tree_is_valid_and_keeps_the_old_paths(old, new, where):
    tree = build_huffman_tree(old)
    counts = old + new
    grown, site = grow_huffman_tree(tree, counts)
    n_old, n = len(old), len(counts)
    if n > 1:
        check_tree(grown, n)
        for seed in range(3):
            assert leaf_mass(grown, seed) == pytest.approx(1.0, abs=1e-9)
    if where == "nothing":
        assert site is None and grown is tree
        return
    assert (grown.points[:, : grown.max_length] < n - 1).all()
    new_nodes = set(range(max(n_old - 1, 1), n - 1))
    for w in range(n_old):
        p_old, c_old = tree.point(w).tolist(), tree.code(w).tolist()
        p, c = grown.point(w).tolist(), grown.code(w).tolist()
        if where == "root":
            assert site == ROOT and grown.root == n - 2
            assert p[1:] == p_old and c[1:] == c_old and p[0] == n - 2
        elif where == "leaf" and w == site:
            assert p[:-1] == p_old and c[:-1] == c_old and p[-1] == n - 2
        else:  # every other old word: exactly its old path
            assert (p, c) == (p_old, c_old)
    if where == "leaf":
        assert site not in (None, ROOT) and grown.root == tree.root == n_old - 2
    for w in range(n_old, n):  # new words pass through new inner nodes only below the graft
        below = grown.point(w).tolist()
        assert below[-1] in new_nodes if new_nodes else below == [0]


def test_graft_site_minimises_the_added_weighted_path_length():
    old = [40, 30, 20, 10, 6, 3]
    tree = build_huffman_tree(old)
    for new in ([1], [5, 5], [30, 20], [200]):
        counts = np.array(old + new)
        costs = {}
        for site in [ROOT, *range(len(old))]:
            grown, _ = _graft_at(tree, counts, site)
            costs[site] = int((counts * grown.lengths).sum())
        best = min(costs.values())
        assert costs[graft_site(tree, counts)] == best


def _graft_at(tree, counts, site):
    """grow_huffman_tree with the site forced (for comparing every choice)."""
    import hsw2v.vocab_update as vu

    saved = vu.graft_site
    vu.graft_site = lambda *_: site
    try:
        return grow_huffman_tree(tree, counts)
    finally:
        vu.graft_site = saved


@pytest.fixture(scope="module")
def old_corpus():
    return planted_corpus(n_clusters=3, words_per_cluster=8, n_sentences=600, seed=3)


def new_corpus(n_sentences=1500, seed=4):
    """Sentences from three planted clusters of new words, mixed with old words and fillers."""
    sentences, clusters = planted_corpus(
        n_clusters=3, words_per_cluster=6, n_sentences=n_sentences, seed=seed
    )
    rename = {w: "n" + w for c in clusters for w in c}
    sentences = [[rename.get(w, w) for w in s] + ["c0w1"] for s in sentences]
    return sentences, [[rename[w] for w in c] for c in clusters]


def trained_model(corpus, **kw):
    params = dict(vector_size=24, window=3, min_count=1, sg=1, workers=1, epochs=4, seed=7)
    params.update(kw)
    return Word2Vec(corpus, **params)


def test_update_keeps_old_state_and_initialises_new_words(old_corpus):
    sentences, _ = old_corpus
    model = trained_model(sentences)
    n_old = len(model.wv)
    keys, vectors, syn1 = list(model.wv.index_to_key), model.wv.vectors.copy(), model.syn1.copy()
    counts = model.wv.expandos["count"].copy()
    tree = model.tree
    update, _ = new_corpus(200)
    model.build_vocab(update, update=True)
    wv = model.wv
    assert wv.index_to_key[:n_old] == keys  # old indices stable, new words after them
    new = wv.index_to_key[n_old:]
    assert len(new) == 18 and all(w.startswith("nc") for w in new)
    new_counts = wv.expandos["count"][n_old:]
    assert (np.diff(new_counts) <= 0).all()  # sorted by descending count
    np.testing.assert_array_equal(wv.vectors[:n_old], vectors)
    np.testing.assert_array_equal(model.syn1[: n_old - 1], syn1[: n_old - 1])
    assert not model.syn1[n_old - 1 :].any()  # new inner nodes start at zero
    # gensim's seeded init for the new rows: rows n_old.. of one default_rng(seed) draw
    fresh = np.random.default_rng(model.seed).random((len(wv), 24), dtype=np.float32)
    np.testing.assert_array_equal(wv.vectors[n_old:], ((fresh * 2.0 - 1.0) / 24)[n_old:])
    # counts grow by the new scan (gensim); sampling follows the grown counts
    flat = [w for s in update for w in s]
    assert wv.get_vecattr("c0w1", "count") == counts[keys.index("c0w1")] + flat.count("c0w1")
    assert wv.get_vecattr("the", "count") == counts[keys.index("the")] + flat.count("the")
    assert wv.get_vecattr("c1w1", "count") == counts[keys.index("c1w1")]
    expected, _ = keep_probabilities(wv.expandos["count"], model.sample)
    np.testing.assert_array_equal(wv.expandos["sample_int"], expected)
    # the exposed paths are the grown tree's, and old paths are kept
    check_tree(model.tree, len(wv))
    for w in range(n_old):
        if model.tree.lengths[w] == tree.lengths[w]:
            np.testing.assert_array_equal(model.tree.point(w), tree.point(w))
    for word in ("c0w1", new[0]):
        i = wv.get_index(word)
        np.testing.assert_array_equal(wv.get_vecattr(word, "code"), model.tree.code(i))
        np.testing.assert_array_equal(wv.get_vecattr(word, "point"), model.tree.point(i))


def test_old_words_keep_their_probabilities(old_corpus):
    """With the junction's row at zero, an old word's P(w | h) is unchanged unless it lies
    below the junction, where it is exactly halved."""
    sentences, _ = old_corpus
    for extra, expect_root in (([["zz"]] * 3, False), ([["zz", "yy"]] * 5000, True)):
        model = trained_model(sentences, epochs=1)
        n_old = len(model.wv)
        h = np.random.default_rng(0).normal(size=24).astype(np.float32) * 0.5
        before = log_prob_all(
            h, model.syn1, model.tree.codes, model.tree.points, model.tree.lengths
        )
        model.build_vocab(extra, update=True)
        t = model.tree
        after = log_prob_all(h, model.syn1, t.codes, t.points, t.lengths)
        assert np.exp(after).sum() == pytest.approx(1.0, abs=1e-9)
        junction = len(model.wv) - 2
        below = np.array([junction in t.point(w) for w in range(n_old)])
        assert below.all() == expect_root and below.any()
        np.testing.assert_allclose(after[:n_old][~below], before[~below], rtol=0, atol=1e-12)
        np.testing.assert_allclose(after[:n_old][below], before[below] - np.log(2), atol=1e-9)


def test_new_words_are_learned_and_old_ones_kept(old_corpus):
    sentences, old_clusters = old_corpus
    model = trained_model(sentences)
    old_score = cluster_recovery(model.wv, old_clusters)
    assert old_score > 0.9
    update, new_clusters = new_corpus()
    model.build_vocab(update, update=True)
    control = cluster_recovery(model.wv, new_clusters)  # fresh random vectors: chance level
    model.train(update, total_examples=model.corpus_count, epochs=model.epochs)
    learned = cluster_recovery(model.wv, new_clusters)
    assert control < 0.5 < 0.9 < learned, (control, learned)
    assert cluster_recovery(model.wv, old_clusters) > 0.9  # old words were not disturbed
    # and the whole model agrees with the exact tree probabilities after training
    probs = output_word_probabilities(model, ["nc0w1"])
    assert probs.sum() == pytest.approx(1.0, abs=1e-9)
    best = model.wv.index_to_key[int(np.argmax(probs))]
    assert best in new_clusters[0] + ["c0w1", "the", "of", "and"]


def test_update_then_save_load_trains_identically(old_corpus, tmp_path):
    sentences, _ = old_corpus
    model = trained_model(sentences, epochs=1)
    update, _ = new_corpus(300)
    model.build_vocab(update, update=True)
    path = tmp_path / "grown.hsw2v"
    model.save(path)
    loaded = Word2Vec.load(path)
    assert loaded.tree.root == model.tree.root
    for m in (model, loaded):
        m.train(update, total_examples=len(update), epochs=2)
    np.testing.assert_array_equal(model.wv.vectors, loaded.wv.vectors)
    np.testing.assert_array_equal(model.syn1, loaded.syn1)
    # and it can grow again after loading
    loaded.build_vocab([["brand", "new", "words"]] * 3, update=True)
    check_tree(loaded.tree, len(loaded.wv))
    assert loaded.wv.index_to_key[-3:] == ["brand", "new", "words"]


def test_queries_work_when_the_root_is_not_v_minus_2(old_corpus):
    sentences, _ = old_corpus
    model = trained_model(sentences, epochs=1)
    model.build_vocab([["zz", "c0w1"]] * 2, update=True)  # a rare word: a leaf graft
    n = len(model.wv)
    assert model.tree.root != n - 2
    model.train([["zz", "c0w1", "c0w2"]] * 50, total_examples=50, epochs=1)
    t = model.tree
    table = child_table(t.codes, t.points, t.lengths)
    h = np.ascontiguousarray(model.wv.vectors[:3].mean(axis=0), dtype=np.float64)
    brute = log_prob_all(h.astype(np.float32), model.syn1, t.codes, t.points, t.lengths)
    for root in (-1, t.root):
        np.testing.assert_allclose(leaf_log_probs(h, model.syn1, table, root), brute, atol=1e-5)
        words, logp = top_leaves(h, model.syn1, table, 5, root)
        np.testing.assert_array_equal(words, np.argsort(-brute, kind="stable")[:5])
    with pytest.raises(ValueError, match="not an inner node"):
        top_leaves(h, model.syn1, table, 5, n - 1)
    pairs = model.predict_output_word(["c0w1", "c0w2"], topn=None)
    assert len(pairs) == n and sum(p for _, p in pairs) == pytest.approx(1.0, abs=1e-9)
    assert np.isfinite(model.score([["zz", "c0w1"]])).all()


def test_build_vocab_from_freq_update_and_dry_run():
    model = Word2Vec(vector_size=8, min_count=2, workers=1, sample=0)
    model.build_vocab_from_freq({"a": 10, "b": 6, "c": 3})
    report = model.build_vocab_from_freq({"a": 1, "d": 5, "e": 1}, update=True)
    assert report is None  # gensim's build_vocab_from_freq returns nothing either
    assert model.wv.index_to_key == ["a", "b", "c", "d"]  # "e" is under min_count
    assert model.wv.get_vecattr("a", "count") == 11  # counted although under min_count
    assert model.wv.vectors.shape == model.syn1.shape == (4, 8)
    check_tree(model.tree, 4)
    model.raw_vocab = {"f": 9}
    report = model.prepare_vocab(update=True, dry_run=True)
    assert report["num_new_words"] == 1 and len(model.wv) == 4


def test_update_needs_a_vocabulary_first():
    model = Word2Vec(vector_size=8, min_count=1, workers=1)
    with pytest.raises(RuntimeError, match="no prior vocabulary"):
        model.build_vocab([["a", "b"]], update=True)
    gensim_models = pytest.importorskip("gensim.models")
    g = gensim_models.Word2Vec(vector_size=8, min_count=1, workers=1, hs=1, negative=0)
    with pytest.raises(RuntimeError, match="no prior vocabulary"):
        g.build_vocab([["a", "b"]], update=True)


def test_gensim_reassigns_old_codes_under_trained_rows_and_hsw2v_does_not(old_corpus):
    """The defect the docs describe: gensim's update rebuilds every code, keeping syn1 rows."""
    gensim_models = pytest.importorskip("gensim.models")
    sentences, _ = old_corpus
    update = [[f"x{i % 40}" for i in range(j, j + 8)] for j in range(300)]
    kw = dict(vector_size=16, window=3, min_count=1, sg=1, workers=1, epochs=1, seed=3)
    g = gensim_models.Word2Vec(sentences, hs=1, negative=0, **kw)
    ours = Word2Vec(sentences, **kw)
    old_words = list(g.wv.index_to_key)

    def paths(model):
        return {
            w: (
                tuple(model.wv.get_vecattr(w, "code").tolist()),
                tuple(model.wv.get_vecattr(w, "point").tolist()),
            )
            for w in old_words
        }

    g_before, g_syn1 = paths(g), g.syn1.copy()
    ours_before = paths(ours)
    g.build_vocab(update, update=True)
    ours.build_vocab(update, update=True)
    g_after, ours_after = paths(g), paths(ours)
    changed = [w for w in old_words if g_after[w] != g_before[w]]
    assert len(changed) > len(old_words) // 2  # most old words got another path ...
    np.testing.assert_array_equal(g.syn1[: len(g_syn1)], g_syn1)  # ... under the same rows
    # hsw2v: every old path survives, inside the grown tree (one step added at most)
    for w in old_words:
        (c0, p0), (c1, p1) = ours_before[w], ours_after[w]
        assert (c1[-len(c0) :], p1[-len(p0) :]) == (c0, p0) or (
            c1[: len(c0)],
            p1[: len(p0)],
        ) == (c0, p0)
        assert len(c1) - len(c0) in (0, 1)


def test_grown_model_converts_to_gensim_and_draws_its_root(old_corpus):
    sentences, _ = old_corpus
    model = trained_model(sentences, epochs=1)
    model.build_vocab([["zz", "c0w1"]] * 2, update=True)  # a leaf graft: root is not V-2
    gensim_models = pytest.importorskip("gensim.models")
    g = model.to_gensim()
    assert isinstance(g, gensim_models.Word2Vec)
    for i, word in enumerate(model.wv.index_to_key):
        np.testing.assert_array_equal(g.wv.get_vecattr(word, "code"), model.tree.code(i))
        np.testing.assert_array_equal(g.wv.get_vecattr(word, "point"), model.tree.point(i))
    back = Word2Vec.from_gensim(g)
    assert back.tree.root == model.tree.root != len(model.wv) - 2
    pytest.importorskip("matplotlib")
    from hsw2v.plot import tree as draw_tree

    fig = draw_tree(model, ["zz", "c0w1"])
    assert f"root n{model.tree.root})" in fig.axes[0].get_title()
    import matplotlib.pyplot as plt

    plt.close(fig)


@pytest.mark.parametrize("hs,negative", [(0, 5), (1, 5)])
def test_update_grows_negative_sampling_rows(hs, negative):
    """With negative sampling, syn1neg keeps its trained rows and gets zero rows for the new
    words (as gensim), syn1 exists only with hs, and the grown model trains."""
    old = [["a", "b", "c", "a"]] * 30
    model = Word2Vec(old, vector_size=8, min_count=1, workers=1, epochs=2, hs=hs,
                     negative=negative, seed=3)  # fmt: skip
    before = model.syn1neg.copy()
    model.build_vocab([["d", "e", "a"]] * 30, update=True)
    assert model.syn1neg.shape == (5, 8)
    assert np.array_equal(model.syn1neg[:3], before)
    assert not model.syn1neg[3:].any()
    assert model.syn1.shape == ((5, 8) if hs else (0, 8))
    model.train([["d", "e", "a"]] * 30, total_examples=30, epochs=2)
    assert model.syn1neg[3:].any()
    assert len(model.cum_table) == 5


def test_private_rows_after_an_update_are_the_most_visited_nodes(old_corpus, monkeypatch):
    """With several workers each job trains a private copy of the most visited inner nodes;
    after a graft those are the old tree's top plus the joining node, not the new words'
    subtree that holds the highest ids."""
    import hsw2v.running._tuning

    monkeypatch.setattr(hsw2v.running._tuning, "HOT_NODES", 8)
    sentences, _ = old_corpus
    model = trained_model(sentences, epochs=1, workers=2)
    n_old = len(model.wv)
    before = model._hot_rows()
    assert sorted(before.tolist()) == list(range(n_old - 9, n_old - 1))
    rare = [[f"zz{i}", "c0w1"] for i in range(40)] * 2
    model.build_vocab(rare, update=True)
    n = len(model.wv)
    hot = model._hot_rows()
    assert len(hot) == 8
    assert model.tree.root in hot and set(before) & set(hot.tolist())
    assert not set(hot.tolist()) <= set(range(n - 1 - len(hot), n - 1))
    counts = model.wv.expandos["count"]
    t = model.tree
    visits = np.zeros(n - 1)
    for w in range(n):
        visits[t.point(w)] += counts[w]
    assert sorted(visits[hot]) == sorted(visits)[-len(hot) :]
    model.train(rare, total_examples=len(rare), epochs=1)
    assert np.isfinite(model.syn1).all() and n_old < n
