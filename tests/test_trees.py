"""Trees beyond Huffman's: the builders, and Word2Vec(tree=...) training, predicting, saving."""

from __future__ import annotations

import numpy as np
import pytest

from hsw2v import Word2Vec
from hsw2v.huffman import HuffmanTree, Tree, build_huffman_tree
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


def test_every_tree_kind_is_a_tree_built_by_its_constructor():
    from hsw2v.label_trees import label_tree
    from hsw2v.trees import level_tree

    assert HuffmanTree is Tree  # the former name, for existing code
    vectors = np.random.default_rng(0).normal(size=(9, 3))
    pairs = [
        (Tree.huffman([5, 3, 1, 1]), build_huffman_tree([5, 3, 1, 1])),
        (Tree.balanced(7), balanced_tree(7)),
        (Tree.split(5, lambda ids: (ids[:1], ids[1:])), split_tree(5, lambda i: (i[:1], i[1:]))),
        (Tree.level(4, lambda o, s, e: s + 1), level_tree(4, lambda o, s, e: s + 1)),
        (Tree.semantic(vectors), semantic_tree(vectors)),
        (Tree.canonical([[0], [1]], [[0], [0]], [1, 1]), canonical([[0], [1]], [[0], [0]], [1, 1])),
    ]
    for made, built in pairs:
        assert type(made) is Tree and type(built) is Tree
        for name in ("codes", "points", "lengths"):
            np.testing.assert_array_equal(getattr(made, name), getattr(built, name))
    assert type(label_tree("balanced", np.arange(6) % 3, 3)) is Tree


def test_an_explicit_tree_is_checked_and_keeps_its_numbering():
    from hsw2v.huffman import Tree

    ragged = Tree.explicit([[0], [1, 0], [1, 1]], [[0], [0, 1], [0, 1]])
    padded = Tree.explicit(ragged.codes, ragged.points, ragged.lengths)
    assert ragged.root == 0 and ragged.lengths.tolist() == [1, 2, 2]
    for name, dtype in (("codes", np.uint8), ("points", np.int32), ("lengths", np.int32)):
        assert getattr(ragged, name).dtype == dtype
        np.testing.assert_array_equal(getattr(ragged, name), getattr(padded, name))
    with pytest.raises(ValueError, match="prefix-free"):
        Tree.explicit([[0], [0]], [[0], [0]])
    with pytest.raises(ValueError, match="same length"):
        Tree.explicit([[0], [1, 0]], [[0], [0]])


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
    with pytest.raises(TypeError, match="must return a Tree"):
        Word2Vec(corpus(), min_count=1, workers=1, tree=lambda counts: 42)

    def broken(counts):
        n = len(counts)
        return Tree(  # every word on one path: not prefix-free
            codes=np.zeros((n, 1), np.uint8),
            points=np.zeros((n, 1), np.int32),
            lengths=np.ones(n, np.int32),
        )

    with pytest.raises(ValueError, match="same path"):
        Word2Vec(corpus(), min_count=1, workers=1, tree=broken)


# ------------------------------------------------------------------------------ label trees
def clustered_labels(n_clusters=4, per_cluster=8, rows=40, width=60, seed=0, sparse=False):
    """Rows whose features come from their label's cluster: labels of one cluster share a
    block of feature columns."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    n_classes = n_clusters * per_cluster
    y = np.repeat(np.arange(n_classes), rows)
    block = width // n_clusters
    cluster = y // per_cluster
    cols = cluster[:, None] * block + rng.integers(0, block, (len(y), 3))
    X = np.zeros((len(y), width), dtype=np.float32)
    np.put_along_axis(X, cols, 1.0, axis=1)
    return (sp.csr_matrix(X) if sparse else X), y, n_classes, per_cluster


@pytest.mark.parametrize("kind", ["huffman", "balanced", "kmeans"])
@pytest.mark.parametrize("sparse", [False, True])
def test_label_tree_is_a_valid_tree_whose_leaf_probabilities_sum_to_one(kind, sparse):
    from hsw2v import HierarchicalSoftmax
    from hsw2v.label_trees import label_tree

    X, y, n_classes, _ = clustered_labels(sparse=sparse)
    y = y[: len(y) - 7]  # uneven class counts
    X = X[: len(y)]
    tree = label_tree(kind, y, n_classes, X, seed=3)
    check_tree(tree.codes, tree.points, tree.lengths, n_leaves=n_classes)  # prefix-free, full
    codes = {tuple(tree.code(c)) for c in range(n_classes)}
    assert len(codes) == n_classes  # every class its own leaf
    layer = HierarchicalSoftmax(tree, 5)
    layer.weights[:] = np.random.default_rng(0).normal(0, 1, layer.weights.shape)
    p = layer.predict_proba(np.random.default_rng(1).normal(0, 1, (3, 5)))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-6)  # float32 node scores


def test_kmeans_label_tree_is_deterministic_for_a_seed_and_puts_clusters_together():
    from hsw2v.label_trees import label_tree

    X, y, n_classes, per = clustered_labels(sparse=True)
    a = label_tree("kmeans", y, n_classes, X, seed=7)
    b = label_tree("kmeans", y, n_classes, X, seed=7)
    for name in ("codes", "points", "lengths"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    # equal class masses: the first two bits name the cluster, one prefix per cluster
    prefixes = [tuple(a.code(c)[:2]) for c in range(n_classes)]
    for k in range(n_classes // per):
        assert len({prefixes[c] for c in range(k * per, (k + 1) * per)}) == 1
    assert len(set(prefixes)) == n_classes // per


def test_kmeans_label_tree_gives_frequent_classes_short_paths():
    from hsw2v.label_trees import kmeans_tree, label_tree

    X, y, n_classes, _ = clustered_labels(sparse=True)
    heavy = np.concatenate([y, np.full(2000, 5)])  # class 5 carries most of the mass
    X_heavy = np.vstack([X.toarray(), np.repeat(X.toarray()[y == 5][:1], 2000, axis=0)])
    tree = label_tree("kmeans", heavy, n_classes, X_heavy)
    assert tree.lengths[5] <= 2 < tree.lengths.max()
    # balance="count" halves by leaves whatever the mass (Parabel's split): all paths 5 long
    from hsw2v.label_trees import label_centroids

    counts = np.bincount(heavy, minlength=n_classes)
    flat = kmeans_tree(label_centroids(X_heavy, heavy, n_classes), counts, balance="count")
    assert flat.lengths.tolist() == [5] * n_classes


def test_label_centroids_are_unit_sums_of_unit_rows():
    import scipy.sparse as sp

    from hsw2v.label_trees import label_centroids

    X = np.array([[3, 4, 0], [0, 0, 2], [1, 0, 0]], dtype=np.float64)
    y = np.array([0, 0, 2])
    want = np.array([[0.6, 0.8, 1.0], [0, 0, 0], [1, 0, 0]])
    want[0] /= np.linalg.norm(want[0])
    np.testing.assert_allclose(label_centroids(X, y, 3), want, rtol=1e-6)
    np.testing.assert_allclose(label_centroids(sp.csr_matrix(X), y, 3).toarray(), want,
                               rtol=1e-6)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda lt, X, y: lt("random", y, 32, X), "kind must be one of"),
        (lambda lt, X, y: lt("huffman", y, 1, X), "n_classes must be at least 2"),
        (lambda lt, X, y: lt("huffman", y, 2.5, X), "n_classes must be an integer"),
        (lambda lt, X, y: lt("huffman", y, 10, X), r"class ids in y must be in \[0, 10\)"),
        (lambda lt, X, y: lt("huffman", y.astype(float), 32, X), "integer class ids"),
        (lambda lt, X, y: lt("kmeans", y, 32), "needs X"),
        (lambda lt, X, y: lt("kmeans", y, 32, X[:-1]), "rows but y has"),
        (lambda lt, X, y: lt("kmeans", y, 32, np.full(X.shape, np.nan)), "NaN"),
        (lambda lt, X, y: lt("kmeans", y, 32, X[:, 0]), "2-D"),
    ],
)
def test_label_tree_refuses_bad_input_saying_what_is_wrong(call, match):
    from hsw2v.label_trees import label_tree

    X, y, _, _ = clustered_labels()
    with pytest.raises(ValueError, match=match):
        call(label_tree, X, y)


def test_level_tree_refuses_a_bad_split():
    from hsw2v.trees import level_tree

    with pytest.raises(ValueError, match="two non-empty parts"):
        level_tree(4, lambda order, s, e: s)
    with pytest.raises(ValueError, match="only reorder"):
        level_tree(4, lambda order, s, e: (order.__setitem__(slice(None), 0), s + 1)[1])


def test_kmeans_tree_projects_wide_dense_rows_and_leaves_its_input_alone():
    from hsw2v.label_trees import kmeans_tree

    X, y, n_classes, per = clustered_labels(width=400)
    C = np.zeros((n_classes, 400), dtype=np.float32)
    np.add.at(C, y, X)
    before = C.copy()
    tree = kmeans_tree(C, dim=64, seed=2)
    np.testing.assert_array_equal(C, before)
    check_tree(tree.codes, tree.points, tree.lengths, n_leaves=n_classes)
    prefixes = [tuple(tree.code(c)[:2]) for c in range(n_classes)]
    assert len(set(prefixes)) == n_classes // per


@pytest.mark.parametrize("kind", ["huffman", "balanced", "kmeans"])
def test_label_tree_gives_classes_without_rows_a_leaf_too(kind):
    import scipy.sparse as sp

    from hsw2v.label_trees import label_tree

    X = sp.random(50, 30, density=0.2, format="csr", random_state=0)
    y = np.random.default_rng(0).integers(0, 3, 50)  # classes 3..8 never seen
    tree = label_tree(kind, y, 9, X)
    check_tree(tree.codes, tree.points, tree.lengths, n_leaves=9)
    two = label_tree(kind, y % 2, 2, X)
    assert two.lengths.tolist() == [1, 1]
