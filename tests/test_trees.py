"""Trees beyond Huffman's: the builders, and Word2Vec(tree=...) training, predicting, saving."""

from __future__ import annotations

import numpy as np
import pytest

from hsw2v import Word2Vec
from hsw2v.huffman import HuffmanTree, build_huffman_tree
from hsw2v.scoring import output_word_probabilities
from hsw2v.trees import balanced_tree, canonical, check_tree, semantic_tree, split_tree


def corpus(seed=0, n=300):
    """Sentences over two topics of 12 words each, so vectors have structure to find."""
    rng = np.random.default_rng(seed)
    topics = [[f"a{i}" for i in range(12)], [f"b{i}" for i in range(12)]]
    return [[str(w) for w in rng.choice(topics[s % 2], 8)] for s in range(n)]


def test_balanced_tree_equals_halving_splits_and_is_balanced():
    for n in (2, 3, 5, 6, 17, 100, 1000):
        a = balanced_tree(n)
        b = split_tree(n, lambda ids: (ids[: len(ids) // 2], ids[len(ids) // 2 :]))
        for name in ("codes", "points", "lengths"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert a.lengths.max() == int(np.ceil(np.log2(n)))
        assert a.lengths.min() == int(np.floor(np.log2(n)))
        check_tree(a.codes, a.points, a.lengths, n_leaves=n)


def test_split_tree_refuses_a_bad_split():
    with pytest.raises(ValueError, match="non-empty parts"):
        split_tree(4, lambda ids: (ids, ids[:0]))
    with pytest.raises(ValueError, match="lost or repeated"):
        split_tree(4, lambda ids: (ids[:1], np.full(len(ids) - 1, ids[0])))


def test_semantic_tree_puts_each_cluster_under_its_own_node():
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 1, (4, 10))
    label = np.repeat(np.arange(4), 40)
    vectors = centres[label] + 0.05 * rng.normal(0, 1, (160, 10))
    tree = semantic_tree(vectors)
    check_tree(tree.codes, tree.points, tree.lengths, n_leaves=160)
    # the first two bits name the cluster: each cluster one prefix, each prefix one cluster
    prefixes = [tuple(tree.code(w)[:2]) for w in range(160)]
    for c in range(4):
        assert len({prefixes[w] for w in np.nonzero(label == c)[0]}) == 1
    assert len(set(prefixes)) == 4
    # a control: the balanced tree over the same (shuffled) leaves mixes the clusters
    shuffled = balanced_tree(160)
    order = rng.permutation(160)
    mixed = {tuple(shuffled.code(order[w])[:2]) for w in np.nonzero(label == 0)[0]}
    assert len(mixed) > 1


def test_canonical_renumbers_any_valid_tree_as_huffman_does():
    rng = np.random.default_rng(1)
    t = split_tree(9, lambda ids: np.split(rng.permutation(ids), [rng.integers(1, len(ids))]))
    relabel = rng.permutation(8)
    points = np.where(np.arange(t.points.shape[1]) < t.lengths[:, None], relabel[t.points], 0)
    c = canonical(t.codes, points, t.lengths)
    assert (c.points[:, 0] == 7).all()
    np.testing.assert_array_equal(
        c.codes, t.codes * (np.arange(t.codes.shape[1]) < t.lengths[:, None])
    )
    _, root, order = check_tree(c.codes, c.points, c.lengths)
    assert root == 7 and (np.diff(order) < 0).all()  # ids fall going down, as Huffman's


@pytest.mark.parametrize("tree", ["huffman", "balanced", "semantic", "callable"])
def test_word2vec_trains_predicts_saves_and_resumes_with_every_tree(tree, tmp_path):
    sentences = corpus()
    kind = (lambda counts: balanced_tree(len(counts))) if tree == "callable" else tree
    model = Word2Vec(
        sentences, vector_size=16, min_count=1, workers=1, epochs=5, sg=1, sample=0, tree=kind
    )
    V = len(model.wv)
    check_tree(model.tree.codes, model.tree.points, model.tree.lengths, n_leaves=V)
    assert model.tree.points[0, 0] == V - 2
    if tree in ("balanced", "callable"):
        assert model.tree.lengths.max() == int(np.ceil(np.log2(V)))
    if tree == "semantic":
        assert model.semantic_pending == 0
        huffman = build_huffman_tree(model.wv.expandos["count"])
        assert not np.array_equal(model.tree.lengths, huffman.lengths)
    probs = output_word_probabilities(model, ["a1", "a2"])
    assert probs.sum() == pytest.approx(1.0, rel=1e-6)
    top = [w for w, _ in model.predict_output_word(["a1", "a2"], topn=5)]
    assert sum(w.startswith("a") for w in top) >= 4  # the topic is learned
    path = tmp_path / "m.hsw2v"
    model.save(path)
    back = Word2Vec.load(path)
    assert back.tree_type == model.tree_type and back.semantic_pending == 0
    for name in ("codes", "points", "lengths"):
        np.testing.assert_array_equal(getattr(back.tree, name), getattr(model.tree, name))
    back.train(sentences, total_examples=len(sentences), epochs=1)
    np.testing.assert_array_equal(back.tree.codes, model.tree.codes)  # same tree
    assert not np.array_equal(back.syn1, model.syn1)  # and it trained


def test_semantic_tree_waits_across_save_and_load(tmp_path):
    sentences = corpus()
    model = Word2Vec(vector_size=8, min_count=1, workers=1, tree="semantic")
    model.build_vocab(sentences)
    assert model.semantic_pending == 1
    model.save(tmp_path / "m.hsw2v")
    back = Word2Vec.load(tmp_path / "m.hsw2v")
    assert back.semantic_pending == 1
    huffman = back.tree.codes.copy()
    trained, _ = back.train(sentences, total_examples=len(sentences), epochs=1)
    assert back.semantic_pending == 0 and trained > 0
    assert back.tree.codes.shape != huffman.shape or not np.array_equal(back.tree.codes, huffman)


def test_bad_trees_get_clear_errors():
    with pytest.raises(ValueError, match="tree must be one of"):
        Word2Vec(tree="random")
    with pytest.raises(TypeError, match="must return a HuffmanTree"):
        Word2Vec(corpus(), min_count=1, workers=1, tree=lambda counts: 42)

    def broken(counts):
        n = len(counts)
        return HuffmanTree(  # every word on one path: not prefix-free
            codes=np.zeros((n, 1), np.uint8),
            points=np.zeros((n, 1), np.int32),
            lengths=np.ones(n, np.int32),
        )

    with pytest.raises(ValueError, match="same path"):
        Word2Vec(corpus(), min_count=1, workers=1, tree=broken)
