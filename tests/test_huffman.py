"""The Huffman tree: prefix-free, optimal, word2vec.c's conventions, probabilities sum to 1."""

import heapq

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hsw2v._kernels._inner import log_prob_all
from hsw2v.huffman import build_huffman_tree

counts_strategy = st.lists(st.integers(min_value=1, max_value=10_000), min_size=2, max_size=300)


def optimal_weighted_length(counts):
    """Total cost sum(count * depth) of an optimal prefix code (classic heap Huffman)."""
    heap = list(counts)
    heapq.heapify(heap)
    total = 0
    while len(heap) > 1:
        a, b = heapq.heappop(heap), heapq.heappop(heap)
        total += a + b
        heapq.heappush(heap, a + b)
    return total


def codes_as_strings(tree):
    return ["".join(map(str, tree.code(i))) for i in range(len(tree.lengths))]


@settings(max_examples=200, deadline=None)
@given(counts_strategy)
def test_codes_are_prefix_free_and_unique(counts):
    codes = codes_as_strings(build_huffman_tree(sorted(counts, reverse=True)))
    assert len(set(codes)) == len(codes)
    ordered = sorted(codes)
    for a, b in zip(ordered, ordered[1:], strict=False):
        assert not b.startswith(a), (a, b)


@settings(max_examples=200, deadline=None)
@given(counts_strategy)
def test_weighted_length_is_optimal(counts):
    counts = sorted(counts, reverse=True)
    tree = build_huffman_tree(counts)
    assert int(np.dot(counts, tree.lengths)) == optimal_weighted_length(counts)


@settings(max_examples=100, deadline=None)
@given(counts_strategy)
def test_paths_are_consistent_tree(counts):
    """Root V-2 first on every path; the same prefix always reaches the same inner node; every
    inner node 0..V-2 is used; Kraft's equality holds for a full binary tree."""
    counts = sorted(counts, reverse=True)
    n = len(counts)
    tree = build_huffman_tree(counts)
    node_of_prefix = {}
    for i in range(n):
        code, point = tree.code(i), tree.point(i)
        assert point[0] == n - 2
        for j in range(len(code)):
            prefix = tuple(code[:j])
            assert node_of_prefix.setdefault(prefix, point[j]) == point[j]
    assert sorted(set(node_of_prefix.values())) == list(range(n - 1))
    assert sum(2.0 ** -int(length) for length in tree.lengths) == pytest.approx(1.0)


def test_matches_word2vec_c_conventions():
    """Hand-worked example of word2vec.c's CreateBinaryTree: counts 5, 3, 1, 1."""
    tree = build_huffman_tree([5, 3, 1, 1])
    assert [tree.code(i).tolist() for i in range(4)] == [[1], [0, 1], [0, 0, 1], [0, 0, 0]]
    assert [tree.point(i).tolist() for i in range(4)] == [[2], [2, 1], [2, 1, 0], [2, 1, 0]]


def test_unsorted_counts_give_same_lengths_as_sorted():
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 1000, size=200)
    order = np.argsort(-counts, kind="stable")
    unsorted_tree = build_huffman_tree(counts)
    sorted_tree = build_huffman_tree(counts[order])
    assert np.array_equal(unsorted_tree.lengths[order], sorted_tree.lengths)


def test_same_lengths_as_gensim_on_a_zipf_vocabulary():
    gensim_word2vec = pytest.importorskip("gensim.models.word2vec")
    counts = (100_000 / np.arange(1, 501)).astype(int) + 1
    model = gensim_word2vec.Word2Vec(vector_size=4, min_count=1, hs=1, negative=0)
    model.build_vocab_from_freq({f"w{i}": int(c) for i, c in enumerate(counts)})
    gensim_cost = sum(
        model.wv.get_vecattr(f"w{i}", "count") * len(model.wv.get_vecattr(f"w{i}", "code"))
        for i in range(len(counts))
    )
    tree = build_huffman_tree(counts)
    assert int(np.dot(counts, tree.lengths)) == gensim_cost


def test_single_and_empty_vocabulary():
    tree = build_huffman_tree([7])
    assert tree.lengths.tolist() == [1]
    with pytest.raises(ValueError, match="empty vocabulary"):
        build_huffman_tree([])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_leaf_probabilities_sum_to_one(seed):
    rng = np.random.default_rng(seed)
    counts = np.sort(rng.integers(1, 5000, size=300))[::-1]
    tree = build_huffman_tree(counts)
    d = 24
    syn1 = rng.normal(0, 0.5, size=(len(counts), d)).astype(np.float32)
    h = rng.normal(0, 0.5, size=d).astype(np.float32)
    log_p = log_prob_all(h, syn1, tree.codes, tree.points, tree.lengths)
    assert np.exp(log_p).sum() == pytest.approx(1.0, abs=1e-5)
    # and against a NumPy reference of the product of sigmoids along each path
    reference = np.array(
        [
            np.sum(np.log(1 / (1 + np.exp(-(1 - 2.0 * tree.code(w)) * (syn1[tree.point(w)] @ h)))))
            for w in range(len(counts))
        ]
    )
    assert np.allclose(log_p, reference, rtol=1e-5, atol=1e-5)


def brute_force_visits(tree, counts):
    """Total count of the words whose path holds each inner node, walking every path."""
    visits = np.zeros(max(len(counts) - 1, 1))
    for w, count in enumerate(counts):
        for node in tree.point(w):
            visits[node] += count
    return visits


@settings(max_examples=40, deadline=None)
@given(counts_strategy, st.integers(min_value=0, max_value=400))
def test_most_visited_nodes_of_a_huffman_tree_are_its_highest_ids(counts, n):
    """Each node's visits are its Huffman weight, and the tree creates nodes in order of
    weight, so the most visited are the last created."""
    tree = build_huffman_tree(sorted(counts, reverse=True))
    counts = sorted(counts, reverse=True)
    nodes = tree.most_visited_nodes(counts, n)
    inner = len(counts) - 1
    assert sorted(nodes.tolist()) == list(range(inner - min(n, inner), inner))
    visits = brute_force_visits(tree, counts)
    assert np.all(np.diff(visits[nodes]) <= 0)  # most visited first


def test_most_visited_nodes_follow_the_visits_not_the_ids():
    """A grafted tree (vocabulary update) puts new, rarely visited nodes at the highest ids."""
    from hsw2v.vocab_update import grow_huffman_tree

    old = [900, 800, 700, 600, 500, 400, 300]
    counts = old + [3, 2, 2, 1, 1]
    grown, _ = grow_huffman_tree(build_huffman_tree(old), counts)
    visits = brute_force_visits(grown, counts)
    nodes = grown.most_visited_nodes(counts, 4)
    assert sorted(visits[nodes]) == sorted(visits)[-4:]
    assert set(nodes.tolist()) != set(range(len(counts) - 5, len(counts) - 1))
    with pytest.raises(ValueError, match="one entry per leaf"):
        grown.most_visited_nodes(counts[:-1], 4)
