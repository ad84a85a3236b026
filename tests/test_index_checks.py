"""The one-pass check of a tree's paths (``hsw2v._kernels._index_checks.paths_in_range``)
against its NumPy reference, and ``check_tree_indices`` naming the wrong entry as before."""

import numpy as np
import pytest

from hsw2v._kernels._index_checks import paths_in_range
from hsw2v._tree_checks import check_tree_indices
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
