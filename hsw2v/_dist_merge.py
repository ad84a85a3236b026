"""The merge of a distributed round's row deltas (:func:`merge_rows`), for the tasks of
:mod:`hsw2v._dist_tasks`.

Every shard starts a round from the same model, trains its piece and returns, for each row
it changed, its *delta* (new value minus old) and a weight: how much it trained the row (for ``syn0[w]`` the occurrences of ``w`` in the piece; for an output
matrix its objective's ``rows_touched`` in :mod:`hsw2v.running.objectives`: for ``syn1[n]`` the
occurrences of words whose Huffman path passes through ``n``, for ``syn1neg[w]`` the occurrences
of ``w`` plus its expected draws as a negative: ``negative`` times the piece's words times
``w``'s share of ``cum_table``). Rows no shard changed are not sent.

A round's update adds to each row either

* ``"sum"``: the sum of the shards' deltas. Every shard's learning is kept, as when threads
  share one model (Hogwild, Recht et al. 2011) or workers push their gradients to a parameter
  server (Downpour SGD, Dean et al. 2012); the difference is that each shard sees the others'
  changes one round late (a staleness of one round). With ``k`` shards a frequent row moves
  ``k`` times as far per round as under ``"average"``, as it does on one machine, but a row
  every shard drives to about the same point within a round (the inner nodes near the root)
  is pushed ``k`` times past it: in the simplest model the error changes by a factor
  ``1 - k`` per round, which does not shrink for ``k >= 2`` and grows for ``k >= 3``
  (training collapsed with three and four shards on the benchmark corpus);
* ``"average"``: their average weighted by the training weights. This is the model averaging
  of Spark MLlib's Word2Vec after SPARK-24666 (apache/spark pull request 26722), where every
  partition trains its own copy for a whole iteration and summing made vectors grow without
  bound; as all shards start from the same model, averaging the deltas is averaging the
  shards' new values. A row trained by ``k`` shards moves about ``1/k`` of what those shards
  learnt together;
* ``"adasum"``: their Adaptive Summation (Maleki et al., "Scaling Distributed Training with
  Adaptive Summation", MLSys 2021), row by row. Two deltas ``a`` and ``b`` of one row combine
  as ``(1 - a.b / (2 |a|^2)) a + (1 - a.b / (2 |b|^2)) b``: orthogonal deltas (the shards
  learnt different things) are added up as under ``"sum"``, equal ones (the shards pushed the
  row to the same point) give that delta once, as under ``"average"``, and everything between
  is interpolated, so a row every shard drives the same way is not pushed ``k`` times past
  its target. A shard that did not change a row contributes nothing to it (a zero delta is
  the identity). ``k`` shards combine pairwise in a fixed binary tree over the shards in
  their order (neighbours first: ``((0, 1), (2, 3))``, ``((0, 1), 2)``), as the paper's
  reduction does, so the result does not depend on which worker ran what. The weights are
  not used: the rule looks at the deltas alone (their lengths and the angles between them).

* ``"hybrid"``: ``"adasum"`` on the input rows (``syn0``) and on the output rows that at
  least :data:`HOT_SHARE` (1/256) of the round's words trained, summed over the shards (the
  inner nodes near the root of the tree, every path's first steps; the most frequent words'
  negative-sampling rows), and ``"sum"`` on the other output rows. The rows near the root
  are the ones every shard drives to the same point within a round, which the sum
  overshoots; a deeper node takes few steps a round from each shard, each barely changed by
  the others', so adding them up is what one machine's threads do; adasum on those deep
  nodes would drop part of what the shards learnt wherever their deltas happen to agree.
  On the benchmark corpus (2, 4 and 8 shards, 3 epochs) it raised WordSim-353 by
  0.010-0.015 over ``"adasum"`` (to one machine's level) with analogy accuracy never more
  than 0.25 points under it, and with negative sampling raised both (1.6 points, 0.05); summing every
  output row instead lost 2 analogy points (docs/distributed.md, "hybrid against adasum").

A row changed by one shard only gets that shard's delta under every rule.
"""

from __future__ import annotations

import numpy as np

from hsw2v._kernels._merge import adasum_two, halves, singles, sum_rows
from hsw2v.running.objectives import MATRICES

MERGES = ("sum", "average", "adasum", "hybrid")

#: ``merge="hybrid"``: an output row that at least this share of a round's words trained
#: (the shards' training weights summed, over the raw words the round read) is merged by
#: adasum, any other by the sum. 1/256: the top eight levels of a balanced tree.
HOT_SHARE = 1.0 / 256


def matrix_rule(merge: str, name: str, words: int) -> tuple[str, float | None]:
    """The rule one matrix of a round is merged by and its ``hot_weight`` (see
    :func:`merge_rows`): ``"hybrid"`` is adasum on the input rows (``"syn0"``) and, on an
    output matrix, adasum on the rows that at least :data:`HOT_SHARE` of the round's
    ``words`` trained and the sum on the others; any other rule is itself on every matrix.

    >>> matrix_rule("hybrid", "syn0", 512_000), matrix_rule("hybrid", "syn1", 512_000)
    (('adasum', None), ('adasum', 2000.0))
    """
    if merge != "hybrid":
        return merge, None
    if name == MATRICES[0]:  # the input vectors
        return "adasum", None
    return "adasum", HOT_SHARE * max(int(words), 0)


def merge_rows(
    parts, merge: str, dtype=np.float32, hot_weight: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Merge the shards' row deltas (see the module docstring): ``parts`` holds ``(rows,
    deltas, weights)`` triples, one per shard in shard order, rows unique within a triple.
    Returns the sorted union of the rows and, for each, ``sum_k delta_k`` (``merge="sum"``),
    ``sum_k w_k * delta_k / sum_k w_k`` (``merge="average"``) or the pairwise adaptive sum of
    the deltas (``merge="adasum"``, :func:`adasum_pair`) over the parts that hold it, as
    float32 (computed in float64), or float16 (``dtype``: those float32 values rounded, as
    :func:`~hsw2v._kernels._merge.halves` rounds them). ``hot_weight`` (adasum only; what
    ``"hybrid"`` gives an output matrix, :func:`matrix_rule`): a row whose weights, summed
    over the parts, are under it is summed instead, at every pair of the tree.

    >>> parts = [
    ...     (np.array([0, 2]), np.array([[1.0, 0.0], [2.0, 0.0]]), np.array([1.0, 3.0])),
    ...     (np.array([2]), np.array([[2.0, 2.0]]), np.array([1.0])),
    ... ]
    >>> rows, deltas = merge_rows(parts, "sum")
    >>> rows.tolist(), deltas.tolist()
    ([0, 2], [[1.0, 0.0], [4.0, 2.0]])
    >>> merge_rows(parts, "average")[1].tolist()
    [[1.0, 0.0], [2.0, 0.5]]
    >>> merge_rows(parts, "adasum")[1].tolist()  # row 2: (1 - 4/8) a + (1 - 4/16) b
    [[1.0, 0.0], [2.5, 1.5]]
    """
    if merge not in MERGES:
        raise ValueError(f"merge must be one of {', '.join(map(repr, MERGES))}, got {merge!r}")
    if merge == "hybrid":
        raise ValueError('merge="hybrid" is a rule per matrix: pass matrix_rule()\'s rule')
    if hot_weight is not None and merge != "adasum":
        raise ValueError(f"hot_weight applies to adasum only, not to merge={merge!r}")
    if merge == "adasum":
        return _adasum_rows(parts, np.dtype(dtype), _hot_rows(parts, hot_weight))
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return np.zeros(0, np.int32), np.zeros((0, 0), dtype)
    d = parts[0][1].shape[1]
    rows, merged = sum_rows(
        [np.ascontiguousarray(rows, np.int32) for rows, _, _ in parts],
        [_real_rows(deltas, d) for _, deltas, _ in parts],
        [np.ascontiguousarray(weights, np.float64) for _, _, weights in parts],
        d,
        merge == "average",
    )  # the NumPy form's float64 sums in its order (hsw2v._kernels._merge, design note A)
    return rows, _narrowed(merged, np.dtype(dtype))


def _narrowed(deltas: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Merged deltas in ``dtype``: float32, or float16 rounded from float32 as ``halves``
    rounds (deltas already in ``dtype`` as they are)."""
    if deltas.dtype == dtype:
        return deltas
    single = deltas.astype(np.float32)
    return halves(single) if dtype == np.float16 else single


def _real_rows(deltas, d: int) -> np.ndarray:
    """Deltas as the merge kernel reads them: float32 or float64, C-contiguous ``[n, d]``
    (float16 widened to float32, exactly)."""
    deltas = np.asarray(deltas)
    if deltas.dtype == np.float16:
        return singles(deltas).reshape(len(deltas), d)
    dtype = np.float64 if deltas.dtype == np.float64 else np.float32
    return np.ascontiguousarray(deltas, dtype).reshape(len(deltas), d)


def adasum_pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Adaptive Summation (Maleki et al., MLSys 2021) of two deltas per row: row ``i`` of the
    result is ``(1 - a_i.b_i / (2 |a_i|^2)) a_i + (1 - a_i.b_i / (2 |b_i|^2)) b_i``, in
    float64; a zero row is the identity (``adasum(a, 0) = a``).

    >>> adasum_pair(np.array([[1.0, 0.0], [2.0, 2.0], [3.0, 0.0]]),
    ...             np.array([[0.0, 1.0], [2.0, 2.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [2.0, 2.0], [3.0, 0.0]]
    """
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    dot = np.einsum("ij,ij->i", a, b)
    aa = np.einsum("ij,ij->i", a, a)
    bb = np.einsum("ij,ij->i", b, b)
    # a zero row has a zero dot product with the other one: its own factor does not matter
    # (it multiplies zero), the other's is 1; ``where`` keeps 0/0 out
    ca = 1.0 - np.divide(dot, 2.0 * aa, out=np.zeros_like(dot), where=aa > 0)
    cb = 1.0 - np.divide(dot, 2.0 * bb, out=np.zeros_like(dot), where=bb > 0)
    return ca[:, None] * a + cb[:, None] * b


def _hot_rows(parts, hot_weight: float | None) -> np.ndarray | None:
    """A flag per row (``0 .. max row``): its weights summed over the parts reach
    ``hot_weight`` (None: no flags, every row is hot)."""
    if hot_weight is None:
        return None
    held = [(np.asarray(rows), weights) for rows, _, weights in parts if len(rows)]
    n = 1 + max((int(rows.max()) for rows, _ in held), default=-1)
    total = np.zeros(n)
    for rows, weights in held:
        total += np.bincount(rows, weights=np.asarray(weights, np.float64), minlength=n)
    return total >= hot_weight


def _adasum_rows(parts, dtype: np.dtype, hot=None) -> tuple[np.ndarray, np.ndarray]:
    """``merge="adasum"``: the parts combine pairwise, neighbours first, in the order given
    (the tree is fixed by the parts' positions, empty parts included, so a row's result
    depends only on which shards changed it and how). The parts' float16 deltas are read as
    they came (widened a row at a time in C), and the root is written in ``dtype``. ``hot``:
    :func:`_hot_rows`'s flags, the same at every pair."""
    if not any(len(p[0]) for p in parts):
        return np.zeros(0, np.int32), np.zeros((0, 0), dtype)
    d = next(p[1].shape[1] for p in parts if len(p[0]))
    level = []
    for rows, deltas, _ in parts:  # each part's rows sorted (they may come in any order)
        rows = np.ascontiguousarray(rows, np.int32)
        deltas = np.ascontiguousarray(deltas).reshape(len(rows), d)  # float16, 32 or 64
        if len(rows) > 1 and not (rows[1:] > rows[:-1]).all():
            order = np.argsort(rows, kind="stable")
            rows, deltas = rows[order], deltas[order]
        level.append((rows, deltas))
    if len(level) == 1:  # one shard's deltas are the update (float16 in, float16 out as is)
        rows, deltas = level[0]
        return rows, _narrowed(deltas, dtype)
    while len(level) > 1:  # each pair in one pass (hsw2v._kernels._merge.adasum_two), in
        # float64 up to the root, which is rounded to float32 (then to ``dtype``) once
        last = len(level) == 2
        paired = [
            adasum_two(
                *level[i], *level[i + 1], last=last, out_dtype=dtype if last else None, hot=hot
            )
            for i in range(0, len(level) - 1, 2)
        ]
        level = paired + level[len(level) - len(level) % 2 :]
    return level[0]
