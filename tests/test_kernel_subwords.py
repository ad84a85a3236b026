"""The subword input kinds of the training step (FastText) against a NumPy reference.

A word's input rows are its own row and its n-gram rows (``Trainer(subwords=(ptr, rows))``);
skip-gram forms h as the mean of the centre's rows and predicts each context word, CBOW as
the mean (or sum) of every context word's rows. The reference replays the kernel's random
stream (subsampling, reduced windows, negatives), so both train the same job.

CBOW reads a position's rows once, when it comes into the span [i - window, i + window] of
the centre i, and writes them once, when it leaves, keeping the sums and the owed steps in
between (``train/_inputs.pxd``). The reference does the same (``spans=True``); the
definition (``spans=False``: every centre reads and steps every row) gives the same
training when no two different words share a row, and a close one when they do.
"""

import numpy as np
import pytest
from conftest import numpy_output_walk, trainer_type, word2vec_trainer
from test_kernels import XorShift64Star

from hsw2v._kernels import _inner
from hsw2v.huffman import build_huffman_tree
from hsw2v.negative import make_cum_table

D = 37  # not a multiple of the SIMD width
V = 30
BUCKETS = 11  # few buckets: words share n-gram rows, and a word may repeat one


def subword_rows(r, n_words=V, buckets=BUCKETS, private=False):
    """A CSR of input rows: word w's own row, then 0..6 bucket rows (repeats allowed);
    ``private``: each word's buckets are rows of its own (``buckets`` for each word), so
    that no two words share a row."""
    ptr, rows = [0], []
    for w in range(n_words):
        drawn = r.integers(0, buckets, size=r.integers(0, 7))
        rows += [w] + [n_words + (w * buckets if private else 0) + int(b) for b in drawn]
        ptr.append(len(rows))
    return np.array(ptr, dtype=np.int64), np.array(rows, dtype=np.int32)


def sigmoid(f):
    """The kernels' table sigmoid (``_inner.py_sigmoid``), so that the reference differs from
    the kernel by float rounding only, not by the table's error summed over many updates of
    the shared n-gram rows."""
    return float(_inner.py_sigmoid(np.float32(f)))


def numpy_subword_job(ids, ends, syn0, syn1, syn1neg, tree, cum_table, ptr, rows, *, sg,
                      cbow_mean, window, alpha0, alpha1, sample_int, seed, hs, negative,
                      shared=False, spans=True):  # fmt: skip
    """One job, in float64, with the kernel's stream: a draw per token to subsample, per
    centre a draw for its reduced window, then per (h, target) pair ``negative`` draws.
    Skip-gram: per context c of centre i, h = mean(syn0[rows(i)]) predicts c; CBOW: h =
    mean / sum of syn0[rows(c)] over the contexts predicts i. Each output forms h anew, and
    its ``work`` goes to every input row (divided by their count for a CBOW sum). With
    ``shared`` (skip-gram) a centre draws one set and lends it to each context, less any
    draw equal to that context. ``spans`` (CBOW): h is formed from each context position's
    sum of rows, kept from when the position came into the span, and the steps reach the
    rows when it leaves (see the module's docstring)."""
    syn0, syn1 = syn0.astype(np.float64), syn1.astype(np.float64)
    syn1neg = None if syn1neg is None else syn1neg.astype(np.float64)
    rng = XorShift64Star(seed)
    kept, kept_ends, start = [], [], 0
    for end in ends:
        for w in ids[start:end]:
            if sample_int[w] >= rng.next():
                kept.append(int(w))
        kept_ends.append(len(kept))
        start = end
    total, loss = len(kept), 0.0

    def input_rows(words):
        return [int(x) for w in words for x in rows[ptr[w] : ptr[w + 1]]]

    def walk(kind, h, target, alpha, negs):
        """One output's walk for h: its rows step, h's step is returned."""
        nonlocal loss
        work, terms = numpy_output_walk(kind, h, target, negs, alpha, syn1, syn1neg, tree,
                                        sigmoid)  # fmt: skip
        loss += terms
        return work

    def outputs():
        return [kind for kind, on in (("hs", hs), ("ns", negative)) if on]

    def step(inputs, target, alpha, mean, negs):
        for kind in outputs():
            h = syn0[inputs].sum(axis=0) / (len(inputs) if mean else 1)
            work = walk(kind, h, target, alpha, negs)
            if not mean:
                work /= len(inputs)
            for x in inputs:  # in order: a repeated row gets each add
                syn0[x] += work

    def owed(w):  # how the sum of w's rows moves when each listing of a row takes g
        _, times = np.unique(rows[ptr[w] : ptr[w + 1]], return_counts=True)
        return float((times**2).sum())

    sums, owes = {}, {}  # the span's positions: their sums of rows, their owed steps

    def enter(j):
        w = kept[j]
        sums[j] = syn0[input_rows([w])].sum(axis=0)
        sums[j] += owed(w) * sum((owes[p] for p in owes if kept[p] == w), np.zeros(D))
        owes[j] = np.zeros(D)

    def leave(j):
        for x in input_rows([kept[j]]):
            syn0[x] += owes[j]
        del sums[j], owes[j]

    def span_step(ctx_pos, target, alpha, negs):
        n_rows = len(input_rows([kept[c] for c in ctx_pos]))
        for kind in outputs():
            h = sum((sums[c] for c in ctx_pos), np.zeros(D)) / (n_rows if cbow_mean else 1)
            work = walk(kind, h, target, alpha, negs)
            if not cbow_mean:
                work /= n_rows
            for c in ctx_pos:
                owes[c] += work
            for p in sums:
                times = sum(kept[c] == kept[p] for c in ctx_pos)
                sums[p] += times * owed(kept[p]) * work

    def draw(target):
        if not negative:
            return None
        negs, rng.state = _inner.py_draw_negatives(cum_table, target, negative, rng.state)
        return negs

    start = 0
    for end in kept_ends:
        if end - start < 2:
            start = end
            continue
        for i in range(start, end):
            alpha = alpha0 + (alpha1 - alpha0) * (i / total)
            if spans and not sg:
                for j in sorted(p for p in sums if p < i - window):
                    leave(j)
                for j in range(max([start - 1, *sums]) + 1, min(end, i + window + 1)):
                    enter(j)
            b = rng.next() % window
            lo, hi = max(start, i - window + b), min(end, i + window + 1 - b)
            ctx = [kept[j] for j in range(lo, hi) if j != i]
            if sg and shared and negative:
                one = draw(kept[i]) if ctx else []
                sets = [[c] + [w for w in one[1:] if w != c] for c in ctx]
            elif sg:
                sets = [draw(c) for c in ctx]  # drawn with the window, before training
            if sg:
                for c, negs in zip(ctx, sets, strict=True):
                    step(input_rows([kept[i]]), c, alpha, True, negs)
            elif ctx and spans:
                span_step([j for j in range(lo, hi) if j != i], kept[i], alpha, draw(kept[i]))
            elif ctx:
                step(input_rows(ctx), kept[i], alpha, cbow_mean, draw(kept[i]))
        for j in sorted(sums):
            leave(j)
        start = end
    return syn0, syn1, syn1neg, total, loss


def subword_case(
    sg, kernel, *, hs=True, negative=0, cbow_mean=True, seed=6, shared=False,
    own_rows_only=False, private=False, spans=True,
):  # fmt: skip
    """One job trained by the kernel and by the reference; ``own_rows_only``: the reference
    gives each word its own row alone (the control: Word2Vec's input, a word without its
    n-grams); ``private`` and ``spans``: ``subword_rows``' and the reference's."""
    r = np.random.default_rng(seed + 10 * sg)
    tree = build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
    ptr, rows = subword_rows(r, private=private)
    n_rows = V + BUCKETS * (V if private else 1)
    syn0 = r.uniform(-0.5, 0.5, size=(n_rows, D)).astype(np.float32)
    syn1 = r.normal(0, 0.2, size=(V, D)).astype(np.float32)
    syn1neg = r.normal(0, 0.2, size=(V, D)).astype(np.float32) if negative else None
    cum_table = make_cum_table(np.sort(r.integers(1, 500, size=V))[::-1]) if negative else None
    sample_int = (np.linspace(0.2, 1.0, V) * (2**32 - 1)).astype(np.uint32)
    ids = r.integers(0, V, size=200).astype(np.int32)
    ends = np.array([1, 30, 31, 90, 200], dtype=np.int64)
    ref_ptr, ref_rows = (np.arange(V + 1), np.arange(V)) if own_rows_only else (ptr, rows)
    expected = numpy_subword_job(
        ids, ends, syn0, syn1, syn1neg, tree, cum_table, ref_ptr, ref_rows, sg=sg,
        cbow_mean=cbow_mean,
        window=3, alpha0=0.05, alpha1=0.002, sample_int=sample_int, seed=77, hs=hs,
        negative=negative, shared=shared, spans=spans,
    )  # fmt: skip
    trainer = word2vec_trainer(
        trainer_type(kernel), syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int,
        window=3, sg=sg, cbow_mean=cbow_mean, compute_loss=True, walk=kernel, hs=hs,
        negative=negative, syn1neg=syn1neg, cum_table=cum_table, subwords=(ptr, rows),
        shared_negatives=shared,
    )  # fmt: skip
    kept, loss = trainer.train_job(ids, ends, 0.05, 0.002, 77)
    return expected, (syn0, syn1, syn1neg, kept, loss)


@pytest.mark.parametrize("kernel", ["window", "fused", "reference", "loop", "blas"])
@pytest.mark.parametrize("sg,cbow_mean", [(1, True), (0, True), (0, False)])
def test_subword_hs_job_matches_numpy_reference(sg, cbow_mean, kernel):
    (e0, e1, _, e_kept, e_loss), (syn0, syn1, _, kept, loss) = subword_case(
        sg, kernel, cbow_mean=cbow_mean
    )
    assert 100 < kept < 200  # subsampling dropped some
    assert kept == e_kept
    assert loss == pytest.approx(e_loss, rel=1e-5)
    assert np.allclose(syn0, e0, atol=1e-5)
    assert np.allclose(syn1, e1, atol=1e-5)
    # control: a reference without the n-gram rows is another training
    control = subword_case(sg, kernel, cbow_mean=cbow_mean, own_rows_only=True)[0]
    assert not np.allclose(syn0[:V], control[0][:V], atol=1e-3)


@pytest.mark.parametrize("kernel", ["window", "reference"])
@pytest.mark.parametrize("negative,cbow_mean", [(0, True), (0, False), (3, True)])
def test_cbow_spans_train_the_definition_when_words_share_no_row(kernel, negative, cbow_mean):
    """CBOW's span sums change when rows are read and written, not the training: with rows
    that no two words share (a word may still list a row twice, and repeat in the window),
    the kernel equals the definition, every centre reading and stepping every row."""
    expected, (syn0, syn1, syn1neg, kept, loss) = subword_case(
        0, kernel, negative=negative, cbow_mean=cbow_mean, private=True, spans=False
    )
    assert kept == expected[3]
    assert loss == pytest.approx(expected[4], rel=1e-5)
    assert np.allclose(syn0, expected[0], atol=1e-5)
    assert np.allclose(syn1, expected[1], atol=1e-5)
    if negative:
        assert np.allclose(syn1neg, expected[2], atol=1e-5)


def test_cbow_spans_against_the_definition_when_words_share_rows():
    """With n-gram rows that different words share, a word's sum sees another word's steps
    to a shared row when that word's position leaves the span, not at once: the two
    trainings differ (the reference of each is checked against the kernel above), by a small
    part of what training moved (11 buckets for 30 words: far more sharing than fastText's
    2,000,000)."""
    spans = subword_case(0, "reference", spans=True)[0][0]
    definition = subword_case(0, "reference", spans=False)[0][0]
    r = np.random.default_rng(6)  # subword_case's start: its draws up to syn0
    build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
    subword_rows(r)
    start = r.uniform(-0.5, 0.5, size=(V + BUCKETS, D)).astype(np.float32)
    moved = np.linalg.norm(definition - start)
    apart = np.linalg.norm(spans - definition)
    assert 1e-4 * moved < apart < 0.05 * moved


@pytest.mark.parametrize("kernel", ["fused", "reference"])
@pytest.mark.parametrize(
    "sg,hs,shared",
    [
        (1, True, False),
        (1, False, False),
        (1, True, True),
        (1, False, True),
        (0, True, False),
        (0, False, False),
    ],
)
def test_subword_ns_job_matches_numpy_reference(sg, hs, shared, kernel):
    """Negative sampling, a set per context or (``shared``, skip-gram) one draw per centre
    lent to its contexts; the control: the other way of drawing is another training."""
    # seed 7: with seed 5, one f of the shared case lands within rounding of a step of the
    # table sigmoid, and the two sides take neighbouring entries (an error of 7e-5 follows)
    (e0, e1, eneg, e_kept, e_loss), (syn0, syn1, syn1neg, kept, loss) = subword_case(
        sg, kernel, hs=hs, negative=3, shared=shared, seed=7
    )
    if sg:
        other = subword_case(sg, kernel, hs=hs, negative=3, shared=not shared, seed=7)[0]
        assert not np.allclose(syn1neg, other[2], atol=1e-3)
    assert kept == e_kept
    assert loss == pytest.approx(e_loss, rel=1e-5)
    for ours, ref in ((syn0, e0), (syn1neg, eneg)) + (((syn1, e1),) if hs else ()):
        assert np.allclose(ours, ref, atol=1e-5)


def test_subword_rows_are_checked():
    r = np.random.default_rng(0)
    tree = build_huffman_tree(np.arange(V, 0, -1))
    syn0 = np.zeros((V + BUCKETS, D), np.float32)
    syn1 = np.zeros((V, D), np.float32)
    sample_int = np.full(V, 2**32 - 1, np.uint32)
    ptr, rows = subword_rows(r)

    def make(subwords, syn0=syn0):
        return word2vec_trainer(_inner.Trainer, syn0, syn1, tree.codes, tree.points,
                                tree.lengths, sample_int, window=2, sg=True, subwords=subwords)  # fmt: skip

    make((ptr, rows))
    bad_row = rows.copy()
    bad_row[3] = V + BUCKETS
    with pytest.raises(ValueError, match="row of syn0"):
        make((ptr, bad_row))
    with pytest.raises(ValueError, match="V \\+ 1"):
        make((ptr[:-1], rows))
    empty = ptr.copy()
    empty[1] = 0  # word 0 without a row
    with pytest.raises(ValueError, match="at least one input row"):
        make((empty, rows))
    with pytest.raises(ValueError, match="inconsistent"):
        make((ptr, rows), syn0=np.zeros((V - 1, D), np.float32))
    with pytest.raises(ValueError, match="pair"):
        make(ptr)


def test_mean_rows_is_gensims_adjust_vectors_bit_for_bit():
    """``mean_rows`` (FastText's word vectors after training) against gensim's loop: start
    from the word's row, add its n-gram rows in order in float32, divide by the count."""
    r = np.random.default_rng(3)
    ptr, rows = subword_rows(r)
    matrix = r.standard_normal((V + BUCKETS, D)).astype(np.float32)
    out = np.full((V, D), np.nan, np.float32)
    _inner.mean_rows(matrix, ptr, rows, out)
    expected = np.empty_like(out)
    for w in range(V):
        expected[w] = matrix[rows[ptr[w]]]
        for x in rows[ptr[w] + 1 : ptr[w + 1]]:
            expected[w] += matrix[x]
        expected[w] /= ptr[w + 1] - ptr[w]
    assert np.array_equal(out, expected)
    assert not np.array_equal(out, matrix[rows[ptr[:-1]]])  # the n-grams counted


def test_mean_rows_checks_its_indices():
    r = np.random.default_rng(3)
    ptr, rows = subword_rows(r)
    matrix = np.zeros((V + BUCKETS, D), np.float32)
    out = np.zeros((V, D), np.float32)
    bad = rows.copy()
    bad[5] = V + BUCKETS
    with pytest.raises(ValueError, match="row of matrix"):
        _inner.mean_rows(matrix, ptr, bad, out)
    with pytest.raises(ValueError, match="offsets"):
        _inner.mean_rows(matrix, ptr[:-1], rows, out)
    empty = ptr.copy()
    empty[1] = 0
    with pytest.raises(ValueError, match="a row or more"):
        _inner.mean_rows(matrix, empty, rows, out)
    with pytest.raises(ValueError, match="columns"):
        _inner.mean_rows(matrix[:, :5].copy(), ptr, rows, out)


def numpy_subword_coef(ptr, rows, lockf):
    """The reference: each (word, row) pair's multiplicity by ``np.unique``, then the float64
    sum of multiplicity squared times the row's lock factor, per word, over its row count."""
    V, n_rows = len(ptr) - 1, int(rows.max()) + 1
    counts = np.diff(ptr)
    words = np.repeat(np.arange(V, dtype=np.int64), counts)
    pairs, mult = np.unique(words * n_rows + rows, return_counts=True)
    lock = (np.ones(len(pairs)) if lockf is None
            else lockf[(pairs % n_rows) % len(lockf)].astype(np.float64))  # fmt: skip
    coef = np.bincount(pairs // n_rows, weights=mult.astype(np.float64) ** 2 * lock,
                       minlength=V) / counts  # fmt: skip
    return coef.astype(np.float32)


@pytest.mark.parametrize("seed", range(10))
def test_subword_coef_is_the_numpy_reference_bit_for_bit(seed):
    """``_inner.subword_coef`` (one nogil pass, each word's rows sorted in a scratch) gives
    the reference's float32 bits, with rows repeated within a word and with lock factors of
    every kind (1, 0, fractions, more rows than factors)."""
    r = np.random.default_rng(seed)
    V = int(r.integers(1, 400))
    counts = r.integers(1, 30, size=V)
    ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    rows = r.integers(0, int(r.integers(2, 60)), size=int(ptr[-1])).astype(np.int32)
    lockfs = [None, r.random(int(rows.max()) + 1).astype(np.float32),
              r.choice([0.0, 0.5, 1.0], size=7).astype(np.float32)]  # fmt: skip
    for lockf in lockfs:
        got = _inner.subword_coef(ptr, rows, lockf, int(counts.max()))
        assert got.dtype == np.float32
        assert got.tobytes() == numpy_subword_coef(ptr, rows, lockf).tobytes()
