"""The merge kernel of distributed rounds (hsw2v._kernels._merge) against its NumPy forms:
"sum" and "average" bit for bit, Adaptive Summation's pair to the last bits of float64, and
the round's two ends (a task's changed rows and deltas, an update's addition, the float16
conversions) bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from hsw2v._dist_merge import adasum_pair, merge_rows
from hsw2v._kernels._merge import (
    adasum_two,
    add_rows,
    changed_rows,
    halves,
    singles,
    sum_rows,
)


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


def test_adasum_two_reads_float16_as_its_exact_widening_in_every_output_width():
    """float16 deltas (a task's, as they arrive) give the bits of the same deltas widened to
    float32 first, and a float16 root the bits of ``halves`` of the float32 root: the two
    steps the merge took before it read float16 a row at a time."""
    rng = np.random.default_rng(6)
    d = 37
    rows_a = np.flatnonzero(rng.random(600) < 0.5).astype(np.int32)
    rows_b = np.flatnonzero(rng.random(600) < 0.5).astype(np.int32)
    scale_a = rng.choice([1e-7, 1e-3, 1.0, 900.0], (len(rows_a), 1))
    scale_b = rng.choice([1e-7, 1e-3, 1.0, 900.0], (len(rows_b), 1))
    a = (rng.normal(size=(len(rows_a), d)) * scale_a).astype(np.float16)
    b = (rng.normal(size=(len(rows_b), d)) * scale_b).astype(np.float16)
    a[3] = 0.0  # a zero side: the other side's delta
    for out_dtype, last in [(None, False), (None, True), (np.float16, True)]:
        got_rows, got = adasum_two(rows_a, a, rows_b, b, last=last, out_dtype=out_dtype)
        want_rows, want = adasum_two(rows_a, singles(a), rows_b, singles(b), last=last)
        if out_dtype is not None:
            want = halves(want)
        assert np.array_equal(got_rows, want_rows)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    # one side float16, the other float64 (a subtree's), as a tree of several parts meets them
    wide_b = rng.normal(size=(len(rows_b), d))
    got = adasum_two(rows_a, a, rows_b, wide_b)[1]
    assert got.tobytes() == adasum_two(rows_a, singles(a), rows_b, wide_b)[1].tobytes()
    with pytest.raises(TypeError, match="float16, float32 or float64"):
        adasum_two(rows_a, a.astype(np.int16), rows_b, b)


# ----------------------------------------------------------- the round's two ends (note D)
def float32_cases(rng, n_random: int) -> np.ndarray:
    """Random float32 bit patterns (every exponent, NaNs and infinities among them) and, for
    every exponent a float16 can reach or round to, mantissas at and around a rounding tie
    (the 13 bits a float16 drops: 0, 1, just under half, half, just over, all ones), with
    both signs; plus the edges: zeros, the largest float16, the first value that rounds to
    infinity, the least subnormal and half of it."""
    random = rng.integers(0, 2**32, size=n_random, dtype=np.uint64).astype(np.uint32)
    exponents = np.arange(95, 146, dtype=np.uint32)
    mantissas = rng.integers(0, 2**10, size=300, dtype=np.uint32)
    low = np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF], np.uint32)
    ties = (exponents[:, None, None] << 23) | (mantissas[None, :, None] << 13) | low
    edges = np.array([0.0, 65504.0, 65519.99, 65520.0, 2.0**-24, 2.0**-25, 2.0**-14], np.float32)
    bits = np.concatenate([random, ties.ravel(), edges.view(np.uint32)])
    return np.concatenate([bits, bits | np.uint32(0x80000000)]).view(np.float32)


@pytest.mark.parametrize("portable", [False, True])
def test_halves_gives_numpys_float16_bits(portable):
    """Both paths of math/_half.h (F16C where the CPU has it, and the scalar one) round as
    NumPy's cast: nearest, ties to even, overflow to infinity, signed zeros, subnormals."""
    x = float32_cases(np.random.default_rng(5), 400_000)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16)
    got = halves(x.reshape(-1, 2)[:, ::-1], portable=portable)  # any layout in, its shape out
    assert got.dtype == np.float16 and got.shape == (len(x) // 2, 2)
    got = got[:, ::-1].ravel()
    nan = np.isnan(x)
    assert np.array_equal(got[~nan].view(np.uint16), want[~nan].view(np.uint16))
    assert np.isnan(got[nan]).all()


@pytest.mark.parametrize("portable", [False, True])
def test_singles_widens_every_float16_exactly(portable):
    every = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    want = every.astype(np.float32)
    got = singles(every, portable=portable)
    nan = np.isnan(want)
    assert got.dtype == np.float32
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
    assert np.isnan(got[nan]).all()
    assert halves(np.zeros(0, np.float32)).shape == (0,)
    assert singles(np.zeros((0, 3), np.float16)).shape == (0, 3)


@pytest.mark.parametrize("half", [False, True])
def test_changed_rows_gives_the_numpy_forms_bits(half):
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(50, 13)).astype(np.float32)
    rows = np.array([3, 0, 49, 7, 8, 21], np.int32)
    old = matrix[rows].copy()
    matrix[49, 5] += np.float32(1e-3)  # changed rows: one coordinate, all of them, a NaN
    matrix[7] -= np.float32(0.25)
    matrix[21, 12] = np.nan
    matrix[11] += 1.0  # not a candidate: not looked at
    dtype = np.float16 if half else np.float32
    mask = (matrix[rows] != old).any(axis=1)
    want = (matrix[rows[mask]] - old[mask]).astype(dtype)
    changed, deltas = changed_rows(matrix, rows, old, half)
    assert changed.tolist() == [49, 7, 21] == rows[mask].tolist()
    assert deltas.dtype == dtype and deltas.shape == (3, 13)
    finite = np.isfinite(want)
    assert np.array_equal(deltas[finite], want[finite]) and np.isnan(deltas[2, 12])
    none, empty = changed_rows(matrix, rows[:2], old[:2], half)
    assert len(none) == 0 and empty.shape == (0, 13)
    with pytest.raises(ValueError, match="old holds 5 rows"):
        changed_rows(matrix, rows, old[:5], half)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_add_rows_gives_numpys_in_place_add(dtype):
    rng = np.random.default_rng(9)
    matrix = rng.normal(size=(40, 11)).astype(np.float32)
    rows = np.array([39, 2, 17, 0], np.int32)
    deltas = rng.normal(scale=1e-2, size=(4, 11)).astype(dtype)
    want = matrix.copy()
    want[rows] += deltas
    add_rows(matrix, rows, deltas)
    assert np.array_equal(matrix.view(np.uint32), want.view(np.uint32))
    with pytest.raises(IndexError, match="row 40 is outside a matrix of 40 rows"):
        add_rows(matrix, np.array([3, 40], np.int32), deltas[:2])
    assert np.array_equal(matrix.view(np.uint32), want.view(np.uint32))  # row 3 untouched
    with pytest.raises(ValueError, match=r"deltas of shape \(4, 11\) for 3 rows"):
        add_rows(matrix, rows[:3], deltas)
