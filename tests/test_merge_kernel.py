"""The merge kernel of distributed rounds (hsw2v._kernels._merge) against its NumPy forms:
"sum" and "average" bit for bit, Adaptive Summation's pair to the last bits of float64."""

from __future__ import annotations

import numpy as np
import pytest

from hsw2v._dist_tasks import adasum_pair, merge_rows
from hsw2v._kernels._merge import adasum_two, sum_rows


def numpy_sum_rows(parts, average: bool):
    """The NumPy form: the sorted union of the rows, float64 sums in the parts' order."""
    rows = np.unique(np.concatenate([p[0] for p in parts])).astype(np.int32)
    d = parts[0][1].shape[1]
    sums = np.zeros((len(rows), d), np.float64)
    weights = np.zeros(len(rows), np.float64)
    for part_rows, deltas, part_weights in parts:
        at = np.searchsorted(rows, part_rows)
        if average:
            sums[at] += part_weights[:, None] * deltas
            weights[at] += part_weights
        else:
            sums[at] += deltas
    if average:
        sums /= weights[:, None]
    return rows, sums


def parts_of(rng, n_parts, n_rows, d, dtype, shuffled):
    parts = []
    for _ in range(n_parts):
        rows = np.flatnonzero(rng.random(n_rows) < 0.5).astype(np.int32)
        if shuffled:
            rng.shuffle(rows)
        deltas = rng.normal(scale=1e-2, size=(len(rows), d)).astype(dtype)
        parts.append((rows, deltas, rng.uniform(0.5, 9.0, len(rows))))
    return parts


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("average", [False, True])
def test_sum_rows_gives_the_numpy_forms_bits(dtype, average):
    rng = np.random.default_rng(3)
    for n_parts, shuffled in ((1, False), (2, True), (5, False)):
        parts = parts_of(rng, n_parts, 300, 17, dtype, shuffled)
        wide = [(r, np.asarray(x, np.float64 if dtype == np.float64 else np.float32), w)
                for r, x, w in parts]  # fmt: skip
        rows, merged = sum_rows(
            [p[0] for p in wide], [p[1] for p in wide], [p[2] for p in wide], 17, average
        )
        want_rows, want = numpy_sum_rows(parts, average)
        assert rows.dtype == np.int32 and np.array_equal(rows, want_rows)
        assert merged.dtype == np.float64 and np.array_equal(merged, want)
        # and through merge_rows, as a round merges (float32 out)
        rule = "average" if average else "sum"
        got_rows, got = merge_rows(parts, rule)
        assert np.array_equal(got_rows, want_rows)
        assert np.array_equal(got, want.astype(np.float32))


def test_adasum_two_against_the_pair_formula():
    rng = np.random.default_rng(4)
    d = 23
    rows_a = np.array([0, 2, 5, 9, 11], np.int32)
    rows_b = np.array([1, 2, 9, 12], np.int32)
    a = rng.normal(size=(5, d))
    b = rng.normal(size=(4, d))
    b[2] = 0.0  # a zero delta is the identity
    rows, out = adasum_two(rows_a, a, rows_b, b)
    assert rows.tolist() == [0, 1, 2, 5, 9, 11, 12]
    assert np.array_equal(out[[0, 3, 5]], a[[0, 2, 4]])  # rows only a holds: a's, bit for bit
    assert np.array_equal(out[[1, 6]], b[[0, 3]])
    np.testing.assert_allclose(out[2], adasum_pair(a[1:2], b[1:2])[0], rtol=1e-13, atol=1e-15)
    assert np.array_equal(out[4], a[3])  # with b's zero row
    # empty sides
    none = np.zeros(0, np.int32), np.zeros((0, d))
    rows, out = adasum_two(*none, rows_b, b)
    assert np.array_equal(rows, rows_b) and np.array_equal(out, b)
    rows, out = adasum_two(*none, *none)
    assert len(rows) == 0


def test_adasum_two_on_round_sized_parts_matches_numpy_to_float64_rounding():
    rng = np.random.default_rng(5)
    d = 100
    rows_a = np.flatnonzero(rng.random(5000) < 0.6).astype(np.int32)
    rows_b = np.flatnonzero(rng.random(5000) < 0.6).astype(np.int32)
    a = rng.normal(size=(len(rows_a), d))
    b = rng.normal(size=(len(rows_b), d))
    rows, out = adasum_two(rows_a, a, rows_b, b)
    assert np.array_equal(rows, np.union1d(rows_a, rows_b))
    both, in_a, in_b = np.intersect1d(rows_a, rows_b, assume_unique=True, return_indices=True)
    np.testing.assert_allclose(
        out[np.searchsorted(rows, both)], adasum_pair(a[in_a], b[in_b]), rtol=1e-12, atol=1e-14
    )
