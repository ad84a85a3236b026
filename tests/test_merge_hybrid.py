"""merge="hybrid": Adaptive Summation on the input rows and on the output rows that a large
share of a round's words trained, the plain sum on the other output rows, checked against
a row-by-row reference."""

from __future__ import annotations

import numpy as np
import pytest

from hsw2v._dist_merge import HOT_SHARE, adasum_pair, matrix_rule, merge_rows
from hsw2v._dist_tasks import PieceResult, merge_round_task
from hsw2v._kernels._merge import adasum_two
from hsw2v.running.objectives import MATRICES


def hybrid_reference(parts, n_rows, hot_weight):
    """Each row on its own: its weights summed over the parts decide; a hot row's deltas
    reduce pairwise by Adasum (neighbours first, an odd last one carried up), a cold row's
    are added up, in float64."""
    expected = {}
    for row in range(n_rows):
        level, weight = [], 0.0
        for rows, deltas, weights in parts:
            hit = np.flatnonzero(rows == row)
            level.append(deltas[hit[0]].astype(np.float64) if len(hit) else None)
            weight += float(weights[hit[0]]) if len(hit) else 0.0
        held = [x for x in level if x is not None]
        if not held:
            continue
        if weight < hot_weight:
            expected[row] = np.sum(held, axis=0)
            continue
        while len(level) > 1:
            paired = []
            for a, b in zip(level[0::2], level[1::2], strict=False):
                paired.append(
                    b if a is None else a if b is None else adasum_pair(a[None], b[None])[0]
                )
            level = paired + ([level[-1]] if len(level) % 2 else [])
        expected[row] = level[0]
    return expected


def random_parts(rng, n_parts, n_rows=40, d=6):
    parts = []
    for _ in range(n_parts):
        rows = np.flatnonzero(rng.random(n_rows) < 0.6).astype(np.int32)
        deltas = rng.normal(size=(len(rows), d)).astype(np.float32)
        # some rows pushed the same way by several shards, as the tree's top nodes are
        deltas[rows < 6] = np.linspace(1.0, 2.0, d, dtype=np.float32)
        parts.append((rows, deltas, rng.uniform(1.0, 9.0, len(rows))))
    return parts


@pytest.mark.parametrize("n_parts", [1, 2, 3, 4, 5])
def test_hot_rows_get_adasum_and_cold_rows_the_sum(n_parts):
    rng = np.random.default_rng(40 + n_parts)
    parts = random_parts(rng, n_parts)
    hot_weight = 9.0  # between one shard's weights and several shards' summed
    expected = hybrid_reference(parts, 40, hot_weight)
    rows, merged = merge_rows(parts, "adasum", hot_weight=hot_weight)
    assert rows.tolist() == sorted(expected) and merged.dtype == np.float32
    np.testing.assert_allclose(
        merged, [expected[r] for r in sorted(expected)], rtol=1e-6, atol=1e-6
    )
    if n_parts > 1:  # both kinds occur, and they differ where shards agree
        totals = {r: sum(float(w[rows_k == r].sum()) for rows_k, _, w in parts) for r in expected}
        assert min(totals.values()) < hot_weight <= max(totals.values())


def test_hot_weight_limits_are_adasum_and_sum_bit_for_bit():
    rng = np.random.default_rng(50)
    for n_parts in (2, 3, 4):
        parts = random_parts(rng, n_parts)
        for dtype in (np.float32, np.float16):
            ada = merge_rows(parts, "adasum", dtype)
            every_row_hot = merge_rows(parts, "adasum", dtype, hot_weight=0.0)
            assert all(np.array_equal(a, b) for a, b in zip(ada, every_row_hot, strict=True))
    # no row hot, two shards: the sum rule's float64 a + b, the same bits
    parts = random_parts(rng, 2)
    cold = merge_rows(parts, "adasum", hot_weight=np.inf)
    summed = merge_rows(parts, "sum")
    assert all(np.array_equal(a, b) for a, b in zip(cold, summed, strict=True))
    # rows both shards pushed the same way: adasum moves them once, the sum twice
    both = np.isin(cold[0], np.intersect1d(parts[0][0], parts[1][0])) & (cold[0] < 6)
    assert both.any()
    np.testing.assert_allclose(cold[1][both], 2 * merge_rows(parts, "adasum")[1][both], rtol=1e-6)


def test_hybrid_is_adasum_on_input_rows_and_on_hot_output_rows():
    assert matrix_rule("hybrid", "syn0", 10**6) == ("adasum", None)
    for name in MATRICES[1:]:  # every output matrix: syn1, syn1neg
        assert matrix_rule("hybrid", name, 10**6) == ("adasum", HOT_SHARE * 10**6)
    for rule in ("sum", "average", "adasum"):
        assert all(matrix_rule(rule, name, 10**6) == (rule, None) for name in MATRICES)
    with pytest.raises(ValueError, match="rule per matrix"):
        merge_rows([], "hybrid")
    with pytest.raises(ValueError, match="adasum only"):
        merge_rows([], "sum", hot_weight=1.0)


def test_a_round_merged_by_hybrid_sums_only_cold_output_rows():
    """Two shards move rows 0 and 1 of every matrix the same way: row 0 with a large weight
    (a top node: more than 1/256 of the round's words), row 1 with a small one. The input
    rows and the hot output row move once (adasum), the cold output row twice (the sum)."""
    delta = np.full((2, 4), 0.5, np.float16)
    rows = np.array([0, 1], np.int32)
    words = 25_600  # the round's words: 1/256 of them is 100
    weights = np.array([80.0, 5.0])  # per shard; summed, row 0 reaches 160, row 1 10

    def result(raw):
        parts = {name: (rows, delta, weights) for name in MATRICES}
        return PieceResult(parts, kept=raw, raw=raw, loss=0.0, seconds=0.0)

    update = merge_round_task(result(words // 2), result(words // 2), merge="hybrid")
    for name in MATRICES:
        got_rows, got = update.part(name)
        assert got_rows.tolist() == [0, 1]
        want_row_1 = 0.5 if name == "syn0" else 1.0
        np.testing.assert_array_equal(np.asarray(got, np.float32), [[0.5] * 4, [want_row_1] * 4])
    assert update.kept == words


def test_adasum_two_refuses_flags_that_do_not_cover_the_rows():
    rows = np.array([0, 7], np.int32)
    deltas = np.ones((2, 3))
    with pytest.raises(ValueError, match="flags"):
        adasum_two(rows, deltas, rows, deltas, hot=np.ones(5, bool))
    rows_out, out = adasum_two(rows, deltas, rows, deltas, hot=np.array([1, 0, 0, 0, 0, 0, 0, 0]))
    assert rows_out.tolist() == [0, 7]
    assert out[0].tolist() == [1.0] * 3 and out[1].tolist() == [2.0] * 3
