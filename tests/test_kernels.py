"""The nogil kernels' twins against NumPy references, and gradients against finite differences."""

import numpy as np
import pytest
from conftest import bench_walks, trainer_type, word2vec_trainer

from hsw2v._kernels import _inner
from hsw2v.huffman import build_huffman_tree
from hsw2v.negative import make_cum_table

D = 37  # not a multiple of the SIMD width, to exercise loop tails


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.mark.parametrize("loops", ["vec", "loop", "blas"])
def test_dot_and_axpy_twins(rng, loops):
    """The walks' vector loops (``math/_vec.h``'s, shipped) and the benchmark-only plain loops and
    BLAS (``_bench_walks``) against NumPy."""
    if loops == "vec":
        dot, axpy = _inner.py_dot, _inner.py_axpy
    else:
        walks, use_blas = bench_walks(), loops == "blas"

        def dot(x, y):
            return walks.py_dot(x, y, use_blas)

        def axpy(a, x, y):
            walks.py_axpy(a, x, y, use_blas)

    for n in (1, 7, 8, 100, 301):
        x = rng.normal(size=n).astype(np.float32)
        y = rng.normal(size=n).astype(np.float32)
        assert dot(x, y) == pytest.approx(float(x.astype(float) @ y), abs=1e-4)
        expected = y + np.float32(0.3) * x
        axpy(0.3, x, y)
        assert np.allclose(y, expected, atol=1e-6)


def test_sigmoid_table_is_close_and_saturates():
    xs = np.linspace(-7.9, 7.9, 2001)
    table = np.array([_inner.py_sigmoid(x) for x in xs])
    assert np.max(np.abs(table - 1 / (1 + np.exp(-xs)))) < 2e-3
    assert _inner.py_sigmoid(50.0) == 1.0
    assert _inner.py_sigmoid(-50.0) == 0.0


def old_sigmoid_index(f):
    """The table index as the kernels computed it before: (int)((f + 8) * 128 + 0.5), float32."""
    f = np.asarray(f, dtype=np.float32)
    return ((f + np.float32(8.0)) * np.float32(128.0) + np.float32(0.5)).astype(np.int32)


def test_sigmoid_index_in_one_multiply_add_is_the_old_index_for_every_float():
    """``HSW2V_SIGMOID_INDEX`` takes (int)(f * 128 + 1024.5) for (int)((f + 8) * 128 + 0.5): the
    same integer for all 2,181,038,080 floats f in (-8, 8), both signs, zeros and subnormals
    included (128 f is exact, so a fused or a separate multiply-add rounds alike)."""
    top = int(np.float32(8.0).view(np.uint32))  # the bits of 8.0: every float below it
    step = 1 << 22
    offsets = np.arange(step, dtype=np.uint32)
    bits = np.empty(step, np.uint32)
    new, old = np.empty(step, np.float32), np.empty(step, np.float32)
    checked = differ = 0
    for sign in (0, 0x80000000):
        for lo in range(0, top, step):
            n = min(step, top - lo)
            np.add(offsets[:n], np.uint32(lo | sign), out=bits[:n])
            f = bits[:n].view(np.float32)
            np.multiply(f, np.float32(128.0), out=new[:n])  # in place: float32 all along
            np.add(new[:n], np.float32(1024.5), out=new[:n])
            np.add(f, np.float32(8.0), out=old[:n])
            np.multiply(old[:n], np.float32(128.0), out=old[:n])
            np.add(old[:n], np.float32(0.5), out=old[:n])
            differ += int(np.count_nonzero(np.trunc(new[:n]) != np.trunc(old[:n])))
            checked += n
    assert checked == 2 * top
    assert differ == 0
    # the comparison can fail: without the 0.5 (truncation, not the nearest entry) about
    # half the indices differ
    f = np.linspace(-7.99, 7.99, 100_001, dtype=np.float32)
    truncated = (f * np.float32(128.0) + np.float32(1024.0)).astype(np.int32)
    assert np.count_nonzero(truncated != old_sigmoid_index(f)) > 40_000


def boundary_floats():
    """Floats at and around every boundary between two table entries (old formula), and
    around +-8."""
    edges = (np.arange(1, 2049, dtype=np.float64) - 0.5) / 128.0 - 8.0
    f = edges.astype(np.float32).view(np.int32)
    around = (f[:, None] + np.arange(-3, 4, dtype=np.int32)[None, :]).ravel().view(np.float32)
    ends = np.array([-8.0, 8.0], dtype=np.float32).view(np.int32)
    near_ends = (ends[:, None] + np.arange(-3, 4, dtype=np.int32)[None, :]).ravel()
    return np.concatenate([around, near_ends.view(np.float32)])


def test_table_sigmoid_steps_exactly_where_the_old_index_steps():
    """The compiled twin against the old index: one value per old index, a different value for
    each index (adjacent entries differ even near +-8), 0 and 1 outside (-8, 8)."""
    f = boundary_floats()
    values = np.array([_inner.py_sigmoid(float(x)) for x in f], dtype=np.float32)
    inside = (f > -8) & (f < 8)
    index = old_sigmoid_index(f[inside])
    by_index = {}
    for i, v in zip(index.tolist(), values[inside].tolist(), strict=True):
        assert by_index.setdefault(i, v) == v, i
    assert len(set(by_index.values())) == len(by_index) > 2000
    assert np.all(values[f >= 8] == 1.0) and np.all(values[f <= -8] == 0.0)


def test_sigmoid_residual_is_label_minus_sigmoid_bit_for_bit():
    """``hsw2v_sigmoid_residual`` (stored 1 - s and -s) is the float label - sigmoid(f) the
    kernels subtracted before: at every entry boundary, outside the range, and for NaN."""
    rng = np.random.default_rng(7)
    f = np.concatenate([boundary_floats(), rng.uniform(-9, 9, 4000).astype(np.float32),
                        np.array([0.0, -0.0, 50.0, -50.0, np.inf, -np.inf], np.float32)])  # fmt: skip
    for bit in (0, 1):
        label = np.float32(1 - bit)
        got = np.array([_inner.py_sigmoid_residual(bit, float(x)) for x in f], np.float32)
        sig = np.array([_inner.py_sigmoid(float(x)) for x in f], np.float32)
        assert np.array_equal(got, label - sig)
        assert np.isnan(_inner.py_sigmoid_residual(bit, float("nan")))
    with pytest.raises(ValueError, match="0 or 1"):
        _inner.py_sigmoid_residual(2, 0.0)


def test_node_coefficient_has_its_two_roundings():
    """Every walk's coefficient a = alpha (label - s): hierarchical softmax's in float64,
    rounded once; negative sampling's with the residual rounded to float32 first, which is
    gensim's -alpha * (float)(s - label) bit for bit (exact under negation)."""
    r = np.random.default_rng(3)
    s = np.concatenate([r.random(2000), [0.0, 1.0, 1e-9, 1 - 1e-9]])
    alpha = r.uniform(1e-4, 0.1, s.size).astype(np.float32)
    for label in (0.0, 1.0):
        once = [_inner.py_node_coef(label, x, a, False) for x, a in zip(s, alpha, strict=True)]
        want = ((label - s) * alpha.astype(np.float64)).astype(np.float32)
        assert np.array_equal(np.array(once, np.float32), want)
        rounded = [_inner.py_node_coef(label, x, a, True) for x, a in zip(s, alpha, strict=True)]
        residual = (label - s).astype(np.float32)
        assert np.array_equal(np.array(rounded, np.float32), residual * alpha)
        gensim = -alpha * (s - label).astype(np.float32)
        assert np.array_equal(np.array(rounded, np.float32), gensim)
        assert not np.array_equal(np.array(once, np.float32), np.array(rounded, np.float32))


def numpy_hs_path(h, syn1, code, point, alpha):
    """The update equations, written out: for each node j on the path, in order,
    f = v'_j . h,  g = (1 - code_j - sigmoid(f)) * alpha,  work += g v'_j,  v'_j += g h."""
    syn1 = syn1.astype(np.float64).copy()
    h = h.astype(np.float64)
    work = np.zeros_like(h)
    loss = 0.0
    for c, p in zip(code, point, strict=True):
        f = syn1[p] @ h
        sigma = 1 / (1 + np.exp(-f))
        loss += -np.log(1 / (1 + np.exp(-(1 - 2.0 * c) * f)))
        g = (1 - c - sigma) * alpha
        work += g * syn1[p]
        syn1[p] += g * h
    return syn1, work, loss


@pytest.mark.parametrize("loops", ["vec", "loop", "blas"])
def test_path_update_matches_numpy(rng, loops):
    """The reference walk (shipped) and the benchmark-only walks against NumPy."""
    if loops == "vec":
        walk = _inner.py_hs_path
    else:
        walks, use_blas = bench_walks(), loops == "blas"

        def walk(*args):
            return walks.py_hs_path(*args, use_blas)

    counts = np.sort(rng.integers(1, 1000, size=60))[::-1]
    tree = build_huffman_tree(counts)
    syn1 = rng.normal(0, 0.3, size=(60, D)).astype(np.float32)
    for word in (0, 17, 59):
        h = rng.normal(0, 0.3, size=D).astype(np.float32)
        code, point = tree.code(word).copy(), tree.point(word).copy()
        expected_syn1, expected_work, expected_loss = numpy_hs_path(h, syn1, code, point, 0.05)
        work, loss = walk(h, syn1, code, point, 0.05)
        # the kernel's sigmoid is a 2048-entry table: gradients agree to ~1e-3 relative
        assert np.allclose(syn1, expected_syn1, atol=2e-4)
        assert np.allclose(work, expected_work, atol=2e-4)
        assert loss == pytest.approx(expected_loss, rel=1e-5)


@pytest.mark.parametrize("apply_to_h", [False, True])
def test_fused_path_update_matches_numpy(rng, apply_to_h):
    counts = np.sort(rng.integers(1, 1000, size=60))[::-1]
    tree = build_huffman_tree(counts)
    syn1 = rng.normal(0, 0.3, size=(60, D)).astype(np.float32)
    for word in (0, 17, 59):
        h = rng.normal(0, 0.3, size=D).astype(np.float32)
        code, point = tree.code(word).copy(), tree.point(word).copy()
        expected_syn1, expected_work, expected_loss = numpy_hs_path(h, syn1, code, point, 0.05)
        h_before = h.copy()
        work, loss = _inner.py_hs_path_fused(h, syn1, code, point, 0.05, apply_to_h)
        assert np.allclose(syn1, expected_syn1, atol=2e-4)
        assert loss == pytest.approx(expected_loss, rel=1e-5)
        if apply_to_h:  # the error goes straight into h; the scratch is not completed
            assert np.allclose(h, h_before + expected_work, atol=2e-4)
        else:
            assert np.allclose(work, expected_work, atol=2e-4)
            assert np.array_equal(h, h_before)


def test_path_update_is_a_gradient_step_on_the_log_likelihood(rng):
    """-work/alpha and the syn1 change/alpha equal d(-log P)/dh and d(-log P)/dsyn1, checked by
    central finite differences of the exact log-probability."""
    counts = np.sort(rng.integers(1, 1000, size=40))[::-1]
    tree = build_huffman_tree(counts)
    word = 31
    code, point = tree.code(word).copy(), tree.point(word).copy()
    h = rng.normal(0, 0.3, size=D).astype(np.float32)
    syn1 = rng.normal(0, 0.3, size=(40, D)).astype(np.float32)
    alpha = 1e-3

    def neg_log_p(h_, syn1_):
        return -_inner.log_prob_all(h_, syn1_, tree.codes, tree.points, tree.lengths)[word]

    updated = syn1.copy()
    work, _ = _inner.py_hs_path(h, updated, code, point, alpha)
    grad_h = -work / alpha
    grad_node = -(updated[point[1]] - syn1[point[1]]) / alpha
    eps = 1e-2
    for k in range(0, D, 5):
        e = np.zeros(D, dtype=np.float32)
        e[k] = eps
        fd_h = (neg_log_p(h + e, syn1) - neg_log_p(h - e, syn1)) / (2 * eps)
        assert grad_h[k] == pytest.approx(fd_h, abs=3e-3)
        plus, minus = syn1.copy(), syn1.copy()
        plus[point[1], k] += eps
        minus[point[1], k] -= eps
        fd_node = (neg_log_p(h, plus) - neg_log_p(h, minus)) / (2 * eps)
        assert grad_node[k] == pytest.approx(fd_node, abs=3e-3)


def test_saturated_wrong_node_still_gets_its_gradient():
    """Unlike word2vec.c, a node with f beyond the table's range is not skipped when wrong."""
    h = np.full(D, 1.0, dtype=np.float32)
    syn1 = np.full((2, D), 1.0, dtype=np.float32)  # f = 37: P(bit 0) ~ 1
    code = np.array([1], dtype=np.uint8)  # but the true bit is 1
    point = np.array([0], dtype=np.int32)
    work, loss = _inner.py_hs_path(h, syn1, code, point, 0.1)
    assert np.allclose(work, -0.1)  # g = (1 - 1 - 1) * 0.1 times syn1 row of ones
    assert np.allclose(syn1[0], 1.0 - 0.1)
    assert loss == pytest.approx(37.0, rel=1e-6)


def make_trainer(rng, sg, kernel="fused", cbow_mean=True, window=2, block=4):
    V = 50
    counts = np.sort(rng.integers(1, 500, size=V))[::-1]
    tree = build_huffman_tree(counts)
    syn0 = rng.uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
    syn1 = rng.normal(0, 0.2, size=(V, D)).astype(np.float32)
    sample_int = np.full(V, 2**32 - 1, dtype=np.uint32)
    trainer = word2vec_trainer(
        trainer_type(kernel),
        syn0,
        syn1,
        tree.codes,
        tree.points,
        tree.lengths,
        sample_int,
        window=window,
        sg=sg,
        cbow_mean=cbow_mean,
        shrink_windows=False,
        compute_loss=True,
        walk=kernel,
        block=block,
    )
    return trainer, syn0, syn1, tree


def numpy_train_sentence(sentence, syn0, syn1, tree, window, alpha, sg, cbow_mean):
    """Reference of one sentence's training without window shrinking, in float64."""
    ends = np.array([len(sentence)], dtype=np.int64)
    syn0, syn1, _, _ = numpy_train_job(sentence, ends, syn0, syn1, tree, window, alpha, alpha,
                                       sg, cbow_mean)  # fmt: skip
    return syn0, syn1


MASK64 = (1 << 64) - 1


class XorShift64Star:
    """The kernels' random stream (xorshift64*, Vigna 2016), in Python integers: a job's
    stream starts at its seed and each draw gives the top 32 bits of state * M."""

    def __init__(self, seed):
        self.state = seed or 1

    def next(self):
        x = self.state
        x ^= x >> 12
        x ^= (x << 25) & MASK64
        x ^= x >> 27
        self.state = x
        return ((x * 0x2545F4914F6CDD1D) & MASK64) >> 32


def numpy_train_job(ids, ends, syn0, syn1, tree, window, alpha0, alpha1, sg, cbow_mean,
                    sample_int=None, shrink_windows=False, seed=None, negative=0,
                    syn1neg=None, cum_table=None, hs=True, cbow_run=1, cbow_stride=1):  # fmt: skip
    """Reference of one job, in float64: returns (syn0, syn1, kept, loss) (and syn1neg last
    when ``negative``). With ``sample_int`` / ``shrink_windows`` / ``negative`` it draws from
    the kernel's stream in the kernel's order: one draw per token to subsample (kept when
    ``sample_int[w] >= draw``), then per centre position one draw for the reduced window
    (``b = draw % window``) and, per (h, centre), ``negative`` draws for the negatives
    (``py_draw_negatives``, the kernel's own draw). alpha falls linearly over the kept tokens.
    Sentences with fewer than two kept tokens are skipped (and draw nothing). CBOW with
    ``cbow_run > 1`` (shared negatives): the centres that have a context are counted over the
    job (t = 0, 1, ...); centre t draws a fresh set when ``(t // cbow_stride) % cbow_run == 0``,
    else takes the draws of centre ``t - cbow_stride``'s set, less any equal to its own
    target."""
    syn0 = syn0.astype(np.float64)
    syn1 = syn1.astype(np.float64)
    syn1neg = None if syn1neg is None else syn1neg.astype(np.float64)
    rng = XorShift64Star(seed)
    kept, kept_ends, start = [], [], 0
    for end in ends:
        for w in ids[start:end]:
            draw = rng.next()  # always drawn, as the kernel does
            if sample_int is None or sample_int[w] >= draw:
                kept.append(int(w))
        kept_ends.append(len(kept))
        start = end
    total = len(kept)
    loss = 0.0

    ring = [[] for _ in range(cbow_stride)]  # CBOW shared: the fresh sets' draws
    t = 0  # CBOW centres with a context so far

    def ns(h, target):
        nonlocal loss, t
        if not sg and cbow_run > 1 and (t // cbow_stride) % cbow_run:
            negs = [target] + [w for w in ring[t % cbow_stride] if w != target]
        else:
            negs, rng.state = _inner.py_draw_negatives(cum_table, target, negative, rng.state)
            ring[t % cbow_stride] = list(negs[1:])
        t += 1
        work = np.zeros_like(h)
        for k, w in enumerate(negs):
            label = 1.0 if k == 0 else 0.0
            f = syn1neg[w] @ h
            loss += np.logaddexp(0.0, -(2 * label - 1) * f)
            g = (label - 1 / (1 + np.exp(-f))) * alpha
            work += g * syn1neg[w]
            syn1neg[w] += g * h
        return work

    start = 0
    for end in kept_ends:
        if end - start < 2:
            start = end
            continue
        for i in range(start, end):
            alpha = alpha0 + (alpha1 - alpha0) * (i / total)
            b = rng.next() % window if shrink_windows else 0
            lo, hi = max(start, i - window + b), min(end, i + window + 1 - b)
            ctx = [kept[j] for j in range(lo, hi) if j != i]
            code, point = tree.code(kept[i]), tree.point(kept[i])
            if sg:
                for c in ctx:
                    if hs:
                        s1, work, path_loss = numpy_hs_path(syn0[c], syn1, code, point, alpha)
                        syn1[:] = s1
                        syn0[c] += work
                        loss += path_loss
                    if negative:
                        syn0[c] += ns(syn0[c].copy(), kept[i])
                continue
            if not ctx:
                continue
            for step in ("hs", "ns"):
                if (step == "hs" and not hs) or (step == "ns" and not negative):
                    continue
                h = syn0[ctx].sum(axis=0)
                if cbow_mean:
                    h /= len(ctx)
                if step == "hs":
                    s1, work, path_loss = numpy_hs_path(h, syn1, code, point, alpha)
                    syn1[:] = s1
                    loss += path_loss
                else:
                    work = ns(h, kept[i])
                if not cbow_mean:
                    work /= len(ctx)
                for c in ctx:
                    syn0[c] += work
        start = end
    if negative:
        return syn0, syn1, total, loss, syn1neg
    return syn0, syn1, total, loss


@pytest.mark.parametrize("kernel", ["fused", "reference", "loop", "blas", "window"])
@pytest.mark.parametrize("sg,cbow_mean", [(1, 1), (0, 1), (0, 0)])
def test_job_matches_numpy_reference(rng, sg, cbow_mean, kernel):
    trainer, syn0, syn1, tree = make_trainer(rng, sg, kernel, cbow_mean=bool(cbow_mean))
    # distinct words: a word twice in one window is where the window kernel's order differs
    sentence = rng.permutation(50)[:12].astype(np.int32)
    ends = np.array([12], dtype=np.int64)
    exp0, exp1, _, exp_loss = numpy_train_job(
        sentence, ends, syn0, syn1, tree, 2, 0.025, 0.025, sg, cbow_mean
    )
    kept, loss = trainer.train_job(sentence, ends, 0.025, 0.025, 7)
    assert kept == 12
    assert loss == pytest.approx(exp_loss, rel=1e-5)
    assert np.allclose(syn0, exp0, atol=1e-4)
    assert np.allclose(syn1, exp1, atol=1e-4)


def test_python_stream_is_the_kernels_stream():
    """The reference's xorshift64* gives the kernel's states: after n draws of the kernel's
    negative draw (one stream draw each) the states agree."""
    cum_table = np.array([5, 9, 2**31 - 1], dtype=np.uint32)
    for seed in (1, 7, 2**63 + 12345):
        rng = XorShift64Star(seed)
        for n in (1, 2, 5, 40):
            _, state = _inner.py_draw_negatives(cum_table, 0, n, rng.state)
            for _ in range(n):
                rng.next()
            assert state == rng.state


def default_path_case(sg, kernel, cbow_mean=True, negative=0, hs=True, cbow_run=None,
                      cbow_stride=1):
    """A job on the default path (reduced windows, subsampling, alpha falling over the job,
    several sentences, repeated words), trained by the kernel and by the reference; with
    ``cbow_run``, shared negatives (CBOW: ``cbow_run`` centres ``cbow_stride`` apart share
    a set)."""
    r = np.random.default_rng(31 + sg)
    V = 40
    tree = build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
    syn0 = r.uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
    syn1 = r.normal(0, 0.2, size=(V, D)).astype(np.float32) if hs else np.zeros((0, D), np.float32)
    syn1neg = r.normal(0, 0.2, size=(V, D)).astype(np.float32) if negative else None
    cum_table = make_cum_table(np.sort(r.integers(1, 500, size=V))[::-1]) if negative else None
    # keep probabilities from 1/8 to 1: about a third of the tokens are dropped
    sample_int = (np.linspace(0.125, 1.0, V) * (2**32 - 1)).astype(np.uint32)
    ids = r.integers(0, V, size=300).astype(np.int32)
    ends = np.array([1, 40, 41, 43, 150, 300], dtype=np.int64)
    args = (ids, ends, syn0.copy(), syn1.copy(), tree, 4, 0.05, 0.001, sg, cbow_mean)
    expected = numpy_train_job(
        *args, sample_int=sample_int, shrink_windows=True, seed=99, negative=negative,
        syn1neg=syn1neg, cum_table=cum_table, hs=hs, cbow_run=cbow_run or 1,
        cbow_stride=cbow_stride,
    )  # fmt: skip
    shared = ({} if cbow_run is None
              else {"shared_negatives": True, "cbow_run": cbow_run, "cbow_stride": cbow_stride})
    trainer = word2vec_trainer(
        trainer_type(kernel),
        syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int, window=4, sg=sg,
        cbow_mean=cbow_mean, compute_loss=True, walk=kernel, hs=hs, negative=negative,
        syn1neg=syn1neg, cum_table=cum_table, **shared,
    )  # fmt: skip
    kept, loss = trainer.train_job(ids, ends, 0.05, 0.001, 99)
    return expected, (syn0, syn1, kept, loss, syn1neg), (args, sample_int)


@pytest.mark.parametrize("kernel", ["fused", "reference", "loop", "blas", "window"])
@pytest.mark.parametrize("sg,cbow_mean", [(1, 1), (0, 1), (0, 0)])
def test_default_path_matches_reference_with_the_kernels_draws(sg, cbow_mean, kernel):
    """shrink_windows=True and subsampling, as Word2Vec trains by default: the reference
    replays the kernel's random stream, so weights, kept tokens and loss agree exactly (to
    the sigmoid table's error); a reference without the reduced windows does not."""
    (exp0, exp1, exp_kept, exp_loss), (syn0, syn1, kept, loss, _), _ = default_path_case(
        sg, kernel, cbow_mean=bool(cbow_mean)
    )
    assert 150 < kept < 250  # subsampling did drop tokens
    assert kept == exp_kept
    assert loss == pytest.approx(exp_loss, rel=1e-5)
    assert np.allclose(syn0, exp0, atol=3e-4)
    assert np.allclose(syn1, exp1, atol=3e-4)


@pytest.mark.parametrize("sg,hs", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_default_path_with_negative_sampling_matches_reference(sg, hs):
    """The same with negative sampling (the negatives drawn between the window draws)."""
    expected, got, _ = default_path_case(sg, "fused", negative=3, hs=hs)
    assert got[2] == expected[2]
    assert got[3] == pytest.approx(expected[3], rel=1e-5)
    for ours, reference in zip(got[:2] + got[4:], expected[:2] + expected[4:], strict=True):
        assert np.allclose(ours, reference, atol=3e-4)


@pytest.mark.parametrize("cbow_run, cbow_stride", [(2, 1), (4, 1), (7, 1), (4, 9), (3, 5)])
@pytest.mark.parametrize("hs, cbow_mean", [(0, True), (1, True), (0, False)])
def test_cbow_shared_negatives_match_reference(cbow_run, cbow_stride, hs, cbow_mean):
    """CBOW with shared negatives: ``cbow_run`` centres ``cbow_stride`` apart take the first
    one's draws, less each centre's own target, across sentence ends; the reference replays
    it."""
    expected, got, _ = default_path_case(0, "fused", cbow_mean=cbow_mean, negative=3, hs=hs,
                                         cbow_run=cbow_run, cbow_stride=cbow_stride)  # fmt: skip
    assert got[2] == expected[2]
    # the loss table's error grows with |h|: a sum of rows without cbow_mean (1.5e-5 with a
    # set per centre too)
    assert got[3] == pytest.approx(expected[3], rel=1e-5 if cbow_mean else 5e-5)
    # the sigmoid table's error, summed over the job's steps (2e-4 to 3.4e-4 here with both
    # objectives, 2.2e-4 with a set per centre); other draws differ by 1e-2 (the control)
    for ours, reference in zip(got[:2] + got[4:], expected[:2] + expected[4:], strict=True):
        assert np.allclose(ours, reference, atol=5e-4)
    # control: the reference with a set per centre is another training
    per_centre = default_path_case(0, "fused", cbow_mean=cbow_mean, negative=3, hs=hs)[0]
    assert not np.allclose(per_centre[0], expected[0], atol=1e-2)


def test_cbow_shared_run_of_one_is_gensims_draws_bit_for_bit():
    """``cbow_run=1`` draws a set per centre: the same bits as shared negatives off."""
    off = default_path_case(0, "fused", negative=3, hs=0)[1]
    run1 = default_path_case(0, "fused", negative=3, hs=0, cbow_run=1)[1]
    for a, b in zip(off[:2] + off[4:], run1[:2] + run1[4:], strict=True):
        assert a.tobytes() == b.tobytes()
    assert off[2:4] == run1[2:4]


def test_default_path_reference_sees_the_reduced_windows():
    """Control: the same job against a reference with full windows differs, so the test above
    checks the reduced windows and not only the subsampling."""
    (exp0, _, _, _), (syn0, _, _, loss, _), (args, sample_int) = default_path_case(1, "fused")
    assert np.allclose(syn0, exp0, atol=3e-4)
    full0, _, _, full_loss = numpy_train_job(*args, sample_int=sample_int, seed=99)
    assert full_loss > 1.2 * loss
    assert not np.allclose(syn0, full0, atol=1e-2)


@pytest.mark.parametrize("block", [1, 2, 3, 4])
def test_window_kernel_blocks_match_numpy_reference(rng, block):
    """Windows of up to 10 contexts, cut into blocks of ``block``: every block size gives
    word2vec.c's sequential updates (the pair-by-pair loop kernel, same sigmoid table, to
    rounding; the float64 NumPy reference with its exact sigmoid, to the table's error)."""
    sentence = rng.permutation(50)[:20].astype(np.int32)
    ends = np.array([20], dtype=np.int64)
    trainer, syn0, syn1, tree = make_trainer(
        np.random.default_rng(5), 1, "window", window=5, block=block
    )
    seq, seq0, seq1, _ = make_trainer(np.random.default_rng(5), 1, "reference", window=5)
    exp0, exp1 = numpy_train_sentence(sentence, syn0, syn1, tree, 5, 0.025, 1, 1)
    trainer.train_job(sentence, ends, 0.025, 0.025, 7)
    seq.train_job(sentence, ends, 0.025, 0.025, 7)
    assert np.allclose(syn0, seq0, atol=2e-6) and np.allclose(syn1, seq1, atol=2e-6)
    assert np.allclose(syn0, exp0, atol=3e-4) and np.allclose(syn1, exp1, atol=3e-4)
    assert not np.allclose(syn1, make_trainer(np.random.default_rng(5), 1)[2], atol=1e-3)


def test_window_block_size_is_checked(rng):
    with pytest.raises(ValueError, match="block must be in 1..4"):
        make_trainer(rng, 1, "window", block=5)


@pytest.mark.parametrize("sg", [0, 1])
def test_all_kernel_variants_agree(sg):
    results = []
    bench_walks()  # the benchmark-only walks against the shipped one
    for kernel in ("fused", "loop", "blas"):
        trainer, syn0, syn1, _ = make_trainer(np.random.default_rng(3), sg, kernel)
        ids = np.random.default_rng(4).integers(0, 50, size=400).astype(np.int32)
        trainer.train_job(ids, np.array([150, 400], dtype=np.int64), 0.05, 0.01, 11)
        results.append((syn0, syn1))
    for other in results[1:]:
        assert np.allclose(results[0][0], other[0], atol=1e-4)
        assert np.allclose(results[0][1], other[1], atol=1e-4)


def test_job_is_deterministic_and_subsamples(rng):
    outs = []
    for _ in range(2):
        r = np.random.default_rng(9)
        V = 30
        tree = build_huffman_tree(np.arange(V, 0, -1) * 10)
        syn0 = r.uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
        syn1 = np.zeros((V, D), dtype=np.float32)
        sample_int = np.full(V, 2**31, dtype=np.uint32)  # keep about half
        trainer = word2vec_trainer(
            _inner.Trainer,
            syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int, window=3, sg=1
        )
        ids = r.integers(0, V, size=2000).astype(np.int32)
        kept, _ = trainer.train_job(ids, np.array([2000], dtype=np.int64), 0.025, 0.001, 5)
        outs.append((kept, syn0.copy(), syn1.copy()))
    assert 850 < outs[0][0] < 1150
    assert outs[0][0] == outs[1][0]
    assert np.array_equal(outs[0][1], outs[1][1]) and np.array_equal(outs[0][2], outs[1][2])


def test_long_sentence_is_trained_in_full(rng):
    """A 25,000-token sentence: every position is a centre (no 10,000-token cut)."""
    trainer, syn0, syn1, _ = make_trainer(rng, 1)
    ids = np.full(25_000, 3, dtype=np.int32)
    ids[-1] = 7  # the last word only ever appears past any 10,000 cut
    before = syn0[7].copy()
    kept, _ = trainer.train_job(ids, np.array([25_000], dtype=np.int64), 0.025, 0.025, 1)
    assert kept == 25_000
    assert not np.array_equal(before, syn0[7])


def test_encode_sentences_drops_unknown_and_keeps_boundaries():
    ids, ends, raw = _inner.encode_sentences([["a", "x", "b"], [], ["b"]], {"a": 0, "b": 1})
    assert ids.tolist() == [0, 1, 1]
    assert ends.tolist() == [2, 2, 3]
    assert raw == 4
    with pytest.raises(TypeError, match="list of str tokens"):
        _inner.encode_sentences(["not a token list"], {"a": 0})


def window_trainer(syn0, syn1, tree, window, **settings):
    """A skip-gram trainer on the ``"window"`` kernel, full windows, every word kept."""
    return word2vec_trainer(
        _inner.Trainer,
        syn0,
        syn1,
        tree.codes,
        tree.points,
        tree.lengths,
        np.full(len(syn0), 2**32 - 1, dtype=np.uint32),
        window=window,
        sg=True,
        shrink_windows=False,
        walk="window",
        **settings,
    )


def test_window_kernel_with_repeated_words_matches_sequential():
    """A word several times in one window: blocks never hold a word twice, so the second
    occurrence sees the first one's update, as in word2vec.c."""
    r = np.random.default_rng(21)
    V, d = 40, 100
    tree = build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
    syn0 = r.uniform(-0.5, 0.5, size=(V, d)).astype(np.float32)
    syn1 = r.normal(0, 0.2, size=(V, d)).astype(np.float32)
    sentence = r.integers(0, V, size=30).astype(np.int32)
    sentence[5] = sentence[6] = sentence[7]
    exp0, exp1 = numpy_train_sentence(sentence, syn0, syn1, tree, 3, 0.05, 1, 1)
    trainer = window_trainer(syn0, syn1, tree, window=3)
    trainer.train_job(sentence, np.array([30], dtype=np.int64), 0.05, 0.05, 3)
    assert np.allclose(syn0, exp0, atol=3e-4)
    assert np.allclose(syn1, exp1, atol=3e-4)


def test_window_kernel_loss_matches_exact_nll():
    """With alpha = 0 nothing moves; the loss must be the exact NLL of every (context, centre)
    pair computed from the weights."""
    r = np.random.default_rng(5)
    V, d = 20, 16
    tree = build_huffman_tree(np.arange(V, 0, -1))
    syn0 = r.normal(0, 1, size=(V, d)).astype(np.float32)
    syn1 = r.normal(0, 1, size=(V, d)).astype(np.float32)
    sentence = r.integers(0, V, size=9).astype(np.int32)
    trainer = window_trainer(syn0, syn1, tree, window=2, compute_loss=True)
    _, loss = trainer.train_job(sentence, np.array([9], dtype=np.int64), 0.0, 0.0, 3)
    expected = 0.0
    for i in range(9):
        for j in range(max(0, i - 2), min(9, i + 3)):
            if j != i:
                log_p = _inner.log_prob_all(
                    syn0[sentence[j]], syn1, tree.codes, tree.points, tree.lengths
                )
                expected -= log_p[sentence[i]]
    assert loss == pytest.approx(expected, rel=1e-5)


def hot_trainer(r, V, **hot):
    """A skip-gram Trainer on a random V-word tree (no subsampling, window 3) with the given
    private-top-node settings; returns (trainer, syn0, syn1)."""
    tree = build_huffman_tree(np.sort(r.integers(1, 900, size=V))[::-1])
    syn0 = r.uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
    syn1 = r.normal(0, 0.2, size=(V, D)).astype(np.float32)
    sample_int = np.full(V, 2**32 - 1, dtype=np.uint32)
    trainer = word2vec_trainer(
        _inner.Trainer,
        syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int, window=3, sg=True, **hot
    )
    return trainer, syn0, syn1


@pytest.mark.parametrize("kernel", ["window", "fused"])
def test_private_hot_nodes_change_only_rounding_with_one_thread(kernel):
    """Training the top of the tree in a per-job private copy and adding the change back (all
    rows every ``hot_sync`` centre words and at the end of the job, each row alone after
    ``hot_visits`` visits) gives, with one thread, the in-place result up to float rounding."""
    results = []
    settings = (
        (0, 1000, 2**30),
        (8, 1000, 2**30),
        (10_000, 1000, 2**30),
        (8, 1, 2**30),
        (31, 7, 2**30),
        (31, 1000, 1),
        (10_000, 10**9, 3),
        (15, 50, 8),
        ([0, 5, 17, 40, 58], 30, 2),  # any inner nodes, not the top ids: a slot table
        (list(range(40, 59)), 30, 4),  # the top ids given as rows
    )
    for hot, hot_sync, hot_visits in settings:
        r = np.random.default_rng(8)
        rows = {"hot_rows": hot} if isinstance(hot, list) else {"hot_nodes": hot}
        trainer, syn0, syn1 = hot_trainer(
            r, 60, walk=kernel, hot_sync=hot_sync, hot_visits=hot_visits, **rows
        )
        ids = r.integers(0, 60, size=3000).astype(np.int32)
        for job in range(3):
            trainer.train_job(ids, np.array([1000, 3000], dtype=np.int64), 0.05, 0.02, job + 1)
        results.append((syn0, syn1))
    for syn0, syn1 in results[1:]:
        assert np.allclose(syn0, results[0][0], atol=3e-4)
        assert np.allclose(syn1, results[0][1], atol=3e-4)
        assert not np.array_equal(syn1, np.zeros_like(syn1))


def test_hot_scale_scales_the_change_added_back():
    """With hot_scale=0.5, one job whose private rows cover the whole tree and never sync
    before its end adds back half its change of syn1 (syn0 is trained in place as usual)."""
    outs = []
    for hot_nodes, hot_scale in ((0, 1.0), (10_000, 0.5)):
        r = np.random.default_rng(12)
        trainer, syn0, syn1 = hot_trainer(
            r, 40, hot_nodes=hot_nodes, hot_sync=10**9, hot_scale=hot_scale
        )
        start = syn1.copy()
        ids = r.integers(0, 40, size=500).astype(np.int32)
        trainer.train_job(ids, np.array([500], dtype=np.int64), 0.05, 0.02, 3)
        outs.append((syn0, syn1, start))
    (full0, full1, start), (half0, half1, _) = outs
    assert np.allclose(half0, full0, atol=3e-4)
    assert np.allclose(half1, start + 0.5 * (full1 - start), atol=3e-4)
    assert not np.allclose(half1, full1, atol=1e-2)


@pytest.mark.parametrize("sg, hs, negative", [(1, 1, 0), (0, 1, 0), (1, 0, 5), (0, 0, 5)])
def test_many_threads_add_back_at_most_two_jobs_worth_of_private_changes(sg, hs, negative):
    """With T threads each job adds min(1, 2 / T) of its change of the private rows back: two
    workers add their whole changes (as they always did), and with more threads the hottest
    rows still move by at most two jobs' worth per sync. Added whole, T changes computed from
    the same stale row overshoot: 16-thread training diverged (benchmarks/RESULTS.md, "16
    cores again"). One thread trains every row in place: no private rows."""
    from hsw2v import Word2Vec
    from hsw2v.running import _tuning
    from hsw2v.running.trainer import trainer_settings

    sentences = [[f"w{(i * 7 + j) % 50}" for j in range(12)] for i in range(80)]
    model = Word2Vec(
        sentences,
        vector_size=8,
        min_count=1,
        sg=sg,
        hs=hs,
        negative=negative,
        epochs=1,
        workers=2,
        seed=1,
    )
    assert (_tuning.HOT_MERGE, _tuning.HOT_MERGE_THREADS) == ("capped", 2)
    for threads, scale in ((2, 1.0), (3, 2 / 3), (16, 0.125), (64, 1 / 32)):
        settings = trainer_settings(model, threads=threads)
        assert settings.hot_scale == pytest.approx(scale)
        assert settings.hot_scale * threads == pytest.approx(min(threads, 2))
        private = settings.output("hs" if hs else "ns")["hot_rows"]
        assert private is not None and len(private) > 0
    one = trainer_settings(model, threads=1).output("hs" if hs else "ns")
    assert one["hot_rows"] is None or len(one["hot_rows"]) == 0


@pytest.mark.parametrize(
    "hot, expected",
    [
        (0, []),
        (5, [54, 55, 56, 57, 58]),  # the top ids: a range
        (10_000, list(range(59))),  # more than the tree: every inner node
        ([0, 5, 17, 40, 58], [0, 5, 17, 40, 58]),  # any rows: a slot table
        ([58, 56, 57], [56, 57, 58]),  # the top ids in any order: a range again
    ],
)
def test_private_row_mask_is_the_rows_asked_for(hot, expected):
    """The test that keeps the kernel from prefetching private rows' shared copies holds
    exactly for the private rows, in both layouts (a range of top ids, a slot table)."""
    rows = {"hot_rows": hot} if isinstance(hot, list) else {"hot_nodes": hot}
    trainer, _, _ = hot_trainer(np.random.default_rng(2), 60, **rows)
    mask = trainer.private_row_mask()
    assert mask.shape == (59,)
    assert np.flatnonzero(mask).tolist() == expected


@pytest.mark.parametrize("rows", [[0, 0], [-1], [59], [3, 200]])
def test_hot_rows_must_be_distinct_inner_nodes(rows):
    with pytest.raises(ValueError, match="distinct inner nodes in 0..58"):
        hot_trainer(np.random.default_rng(1), 60, hot_rows=rows)
