"""The one-pass checks of ``hsw2v._kernels._array_passes`` against their NumPy references: a
tree's paths (``paths_in_range``; ``check_tree_indices`` still names the wrong entry), the
rows that hold a NaN or an infinity (``nonfinite_rows``, under ``count_nonfinite_rows``) and a
Huffman tree's merges (``huffman_merges``, against the loop as Python runs it)."""

import numpy as np
import pytest

from hsw2v._kernels._array_passes import (
    huffman_merges,
    nonfinite_rows,
    path_node_visits,
    paths_in_range,
)
from hsw2v._tree_checks import check_tree_indices
from hsw2v.divergence import count_nonfinite_rows
from hsw2v.huffman import build_huffman_tree
from hsw2v.trees import balanced_tree


def numpy_paths_in_range(codes, points, lengths, high) -> bool:
    """The reference: the mask of used entries, then every used code and point in range."""
    width = codes.shape[1]
    if len(lengths) and (lengths.min() < 0 or lengths.max() > width):
        return False
    used = np.arange(width) < lengths[:, None]
    return not (used & (codes > 1)).any() and not (used & ((points < 0) | (points > high))).any()


def random_paths(rng, V, L):
    codes = rng.integers(0, 2, size=(V, L), dtype=np.uint8)
    points = rng.integers(0, max(V - 1, 1), size=(V, L), dtype=np.int32)
    lengths = rng.integers(0, L + 1, size=V, dtype=np.int32)
    return codes, points, lengths


@pytest.mark.parametrize("seed", range(40))
def test_the_pass_agrees_with_numpy_on_planted_errors(seed):
    rng = np.random.default_rng(seed)
    V, L = int(rng.integers(1, 60)), int(rng.integers(1, 12))
    codes, points, lengths = random_paths(rng, V, L)
    high = max(V - 1, 1) - 1
    assert paths_in_range(codes, points, lengths, high) is True
    for _ in range(6):  # one bad entry at a time, used or not, in each array
        c, p, n = codes.copy(), points.copy(), lengths.copy()
        w, j = int(rng.integers(V)), int(rng.integers(L))
        kind = int(rng.integers(5))
        if kind == 0:
            c[w, j] = rng.integers(2, 256)
        elif kind == 1:
            p[w, j] = -int(rng.integers(1, 2**31 - 1))
        elif kind == 2:
            p[w, j] = high + int(rng.integers(1, 1000))
        elif kind == 3:
            n[w] = L + int(rng.integers(1, 5))
        else:
            n[w] = -int(rng.integers(1, 5))
        assert paths_in_range(c, p, n, high) == numpy_paths_in_range(c, p, n, high)


def test_unused_entries_are_not_read_as_errors():
    codes = np.array([[0, 200], [1, 0]], np.uint8)
    points = np.array([[0, -5], [0, 0]], np.int32)
    assert paths_in_range(codes, points, np.array([1, 1], np.int32), 0)
    assert not paths_in_range(codes, points, np.array([2, 1], np.int32), 0)


def test_arrays_of_other_shapes_are_refused():
    codes, points, lengths = random_paths(np.random.default_rng(1), 5, 4)
    with pytest.raises(ValueError, match="differ"):
        paths_in_range(codes, points[:4], lengths, 3)
    with pytest.raises(ValueError, match="differ"):
        paths_in_range(codes, points, lengths[:4], 3)


def test_check_tree_indices_still_names_the_first_wrong_entry():
    tree = balanced_tree(9)
    codes, points, lengths = tree.codes.copy(), tree.points.copy(), tree.lengths.copy()
    check_tree_indices(codes, points, lengths, 9)  # a valid tree passes
    read_only = [a.copy() for a in (codes, points, lengths)]
    for a in read_only:
        a.flags.writeable = False
    check_tree_indices(*read_only, 9)  # memory-mapped files are read-only
    points[4, 1] = 8
    with pytest.raises(
        ValueError, match=r"points\[4, 1\] is 8: inner-node ids must be in \[0, 7\]"
    ):
        check_tree_indices(codes, points, lengths, 9)
    points[4, 1] = tree.points[4, 1]
    codes[2, 0] = 3
    with pytest.raises(ValueError, match=r"codes\[2, 0\] is 3: codes must be bits"):
        check_tree_indices(codes, points, lengths, 9)
    codes[2, 0] = tree.codes[2, 0]
    lengths[7] = codes.shape[1] + 1
    with pytest.raises(ValueError, match=r"lengths\[7\] is"):
        check_tree_indices(codes, points, lengths, 9)


@pytest.mark.parametrize("seed", range(20))
def test_nonfinite_rows_agrees_with_numpy(seed):
    """Planted NaNs (any payload, either sign) and infinities among finite values at every
    scale (the largest float32, subnormals, -0.0): the rows counted are NumPy's."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 300)), int(rng.integers(1, 40))
    m = (rng.standard_normal((n, d)) * 10.0 ** rng.integers(-40, 38, size=(n, d))).astype(
        np.float32
    )
    m.flat[rng.integers(0, m.size, size=3)] = [np.finfo(np.float32).max, 1e-45, -0.0]
    bits = m.view(np.uint32)
    for _ in range(int(rng.integers(0, 8))):
        r, k = int(rng.integers(n)), int(rng.integers(d))
        sign = np.uint32(rng.integers(2)) << np.uint32(31)
        payload = np.uint32(rng.integers(0, 1 << 23))  # 0: an infinity, else a NaN
        bits[r, k] = sign | np.uint32(0x7F800000) | payload
    want = int((~np.isfinite(m)).any(axis=1).sum())
    assert nonfinite_rows(m) == want
    assert count_nonfinite_rows({"m": m}) == {"m": want}
    # the NumPy path, for what the pass does not take: float64, a strided view (signalling
    # NaNs among the planted ones make NumPy's cast and sums warn)
    with np.errstate(invalid="ignore"):
        assert count_nonfinite_rows({"m": m.astype(np.float64)}) == {"m": want}
        assert count_nonfinite_rows({"m": m[:, ::-1]}) == {"m": want}


def test_nonfinite_rows_of_empty_and_read_only_matrices():
    assert nonfinite_rows(np.zeros((0, 5), np.float32)) == 0
    assert nonfinite_rows(np.zeros((5, 0), np.float32)) == 0
    m = np.ones((3, 4), np.float32)
    m[2, 3] = np.inf
    m.flags.writeable = False  # as a memory-mapped model file gives it
    assert nonfinite_rows(m) == 1


@pytest.mark.parametrize("seed", range(12))
def test_node_visits_are_numpys_bincount_bit_for_bit(seed):
    """``Tree.node_visits`` (one pass, ``path_node_visits``) against the ``bincount`` it
    replaces, on Huffman and balanced trees with float counts of every size: the same
    float64 sums, so the same private hot rows."""
    rng = np.random.default_rng(seed)
    V = int(rng.integers(2, 3000))
    counts = rng.zipf(1.2, V).astype(np.float64) * rng.random(V) * 10.0 ** rng.integers(0, 9)
    for tree in (build_huffman_tree(np.sort(rng.integers(1, 10**6, V))[::-1]), balanced_tree(V)):
        on_path = np.arange(tree.max_length) < tree.lengths[:, None]
        want = np.bincount(tree.points[on_path], weights=np.repeat(counts, tree.lengths),
                           minlength=V - 1)  # fmt: skip
        got = tree.node_visits(counts)
        assert got.dtype == np.float64 and got.tobytes() == want.tobytes()


def test_path_node_visits_refuses_paths_outside_the_nodes():
    points = np.array([[1, 0], [1, 5]], np.int32)
    with pytest.raises(ValueError, match="leaves"):
        path_node_visits(points, np.array([2, 2], np.int32), np.ones(2), 2)
    with pytest.raises(ValueError, match="leaves"):
        path_node_visits(points, np.array([3, 1], np.int32), np.ones(2), 2)
    with pytest.raises(ValueError, match="rows"):
        path_node_visits(points, np.array([2], np.int32), np.ones(2), 2)


def python_huffman_merges(counts):
    """The reference: word2vec.c's two-queue merge over counts sorted in descending order,
    in Python (the rarest unmerged leaf while its count is below the oldest unmerged inner
    node's), then the depths top-down."""
    V = len(counts)
    node_count = [int(c) for c in counts] + [0] * (V - 1)
    parent, bit = [0] * (2 * V - 1), [0] * (2 * V - 1)
    leaf, inner = V - 1, V
    for k in range(V - 1):
        picked = []
        for _ in range(2):
            if leaf >= 0 and (inner >= V + k or node_count[leaf] < node_count[inner]):
                picked.append(leaf)
                leaf -= 1
            else:
                picked.append(inner)
                inner += 1
        node_count[V + k] = node_count[picked[0]] + node_count[picked[1]]
        parent[picked[0]] = parent[picked[1]] = V + k
        bit[picked[1]] = 1
    depth = [0] * (2 * V - 1)
    for node in range(2 * V - 3, -1, -1):
        depth[node] = depth[parent[node]] + 1
    return parent, bit, depth[:V]


@pytest.mark.parametrize("seed", range(30))
def test_huffman_merges_equal_the_python_loop(seed):
    """Ties everywhere (few distinct counts), heavy tails, equal counts, two leaves."""
    rng = np.random.default_rng(seed)
    V = int(rng.integers(2, 400))
    kind = seed % 4
    if kind == 0:
        counts = rng.integers(1, 4, size=V)
    elif kind == 1:
        counts = np.minimum(rng.zipf(1.3, size=V), 10**9)
    elif kind == 2:
        counts = np.full(V, int(rng.integers(1, 10)))
    else:
        counts = rng.integers(1, 2**40, size=V)
    counts = np.sort(counts.astype(np.int64))[::-1].copy()
    parent, bit, depth = huffman_merges(counts)
    want = python_huffman_merges(counts)
    assert parent.dtype == np.int64 and bit.dtype == np.int8 and depth.dtype == np.int32
    assert parent.tolist() == want[0] and bit.tolist() == want[1] and depth.tolist() == want[2]
    # a full binary tree: every inner node is the parent of exactly two nodes, bits 0 and 1
    children = np.bincount(parent[:-1], minlength=2 * V - 1)
    assert (children[V:] == 2).all() and (children[:V] == 0).all()
    assert np.bincount(parent[:-1], weights=bit[:-1], minlength=2 * V - 1)[V:].tolist() == [1] * (V - 1)


def test_huffman_merges_refuses_fewer_than_two_counts():
    with pytest.raises(ValueError, match="at least 2 counts"):
        huffman_merges(np.array([3], np.int64))
