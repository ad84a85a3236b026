"""The document input kinds of the training step (Doc2Vec) against a NumPy reference.

A job names each document's rows by tag tokens (negative ids ``-(row + 1)``) before its
words (``Trainer(docs=(rows, lockf, doc_words))``). PV-DBOW (sg): each document row is an
h that predicts every word, after skip-gram's step over the word's window when
``doc_words``; PV-DM (CBOW): h is the mean (or sum) of the window's rows and the document's
rows. Inference (``frozen=True``, ``infer_job``) writes only the document rows. The
reference replays the kernel's random stream, so both train the same job.
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
N_DOCS = 4
WINDOW = 3


def sigmoid(f):
    """The kernels' table sigmoid, so that the two differ by float rounding only."""
    return float(_inner.py_sigmoid(np.float32(f)))


def numpy_doc_job(ids, ends, syn0, docs, syn1, syn1neg, tree, cum_table, *, sg, cbow_mean,
                  doc_words, alpha0, alpha1, sample_int, seed, hs, negative, frozen=False,
                  doc_lockf=None):  # fmt: skip
    """One job in float64 with the kernel's stream: a draw per word to subsample (tag tokens
    draw nothing), per centre a draw for its reduced window (PV-DM, and PV-DBOW with
    ``doc_words``), then with negative sampling ``negative`` draws per (h, centre) pair
    (PV-DBOW: each window context, then each document row; PV-DM: one). ``frozen``: only
    the document rows change."""
    X = np.vstack([syn0, docs]).astype(np.float64)  # word rows, then document rows
    lock = np.ones(len(X)) if doc_lockf is None else np.r_[np.ones(V), doc_lockf]
    syn1 = syn1.astype(np.float64)
    syn1neg = None if syn1neg is None else syn1neg.astype(np.float64)
    rng = XorShift64Star(seed)
    documents, start = [], 0
    for end in ends:
        words, tags = [], []
        for w in ids[start:end]:
            if w < 0:
                tags.append(V - int(w) - 1)
            elif sample_int[w] >= rng.next():
                words.append(int(w))
        documents.append((words, tags))
        start = end
    total = sum(len(w) for w, _ in documents)
    loss = 0.0

    def step(inputs, target, alpha, mean, negs, kinds=("hs", "ns")):
        nonlocal loss
        for kind in kinds:
            if (kind == "hs" and not hs) or (kind == "ns" and not negative):
                continue
            h = X[inputs].sum(axis=0) / (len(inputs) if mean else 1)
            work, terms = numpy_output_walk(kind, h, target, negs, alpha, syn1, syn1neg, tree,
                                            sigmoid, learn=not frozen)  # fmt: skip
            loss += terms
            if not mean:
                work /= len(inputs)
            for x in inputs:
                if not frozen or x >= V:
                    X[x] += lock[x] * work

    def draw(target):
        negs, rng.state = _inner.py_draw_negatives(cum_table, target, negative, rng.state)
        return negs

    k = 0  # kept words before this document
    for words, tags in documents:
        n = len(words)
        for i in range(n):
            alpha = alpha0 + (alpha1 - alpha0) * ((k + i) / total)
            lo, hi = i, i + 1
            if not sg or doc_words:
                b = rng.next() % WINDOW
                lo, hi = max(0, i - WINDOW + b), min(n, i + WINDOW + 1 - b)
            ctx = [words[j] for j in range(lo, hi) if j != i]
            if sg:
                pairs = [[c] for c in ctx] + [[t] for t in tags]
                sets = [draw(words[i]) if negative else None for _ in pairs]
                for rows, negs in zip(pairs, sets, strict=True):
                    step(rows, words[i], alpha, True, negs)
            elif ctx or tags:
                negs = draw(words[i]) if negative else None
                step(ctx + tags, words[i], alpha, cbow_mean, negs)
        k += n
    return X[:V], X[V:], syn1, syn1neg, total, loss


def doc_case(sg, kernel, *, hs=True, negative=0, cbow_mean=True, doc_words=False, seed=5,
             doc_lockf=None):  # fmt: skip
    """One job of documents (0, 1 or 2 tags each, one without words) by the kernel and by
    the reference."""
    r = np.random.default_rng(seed + 10 * sg)
    tree = build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
    syn0 = r.uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
    docs = r.uniform(-0.5, 0.5, size=(N_DOCS, D)).astype(np.float32)
    syn1 = r.normal(0, 0.2, size=(V, D)).astype(np.float32)
    syn1neg = r.normal(0, 0.2, size=(V, D)).astype(np.float32) if negative else None
    cum_table = make_cum_table(np.sort(r.integers(1, 500, size=V))[::-1]) if negative else None
    sample_int = (np.linspace(0.2, 1.0, V) * (2**32 - 1)).astype(np.uint32)
    pieces = [[-1], [-2, -4], [], [-3], [-1, -2]]
    lengths = [40, 25, 30, 0, 60]
    ids, ends = [], []
    for tags, n in zip(pieces, lengths, strict=True):
        ids += tags + r.integers(0, V, size=n).tolist()
        ends.append(len(ids))
    ids, ends = np.array(ids, np.int32), np.array(ends, np.int64)
    before = syn0.copy(), docs.copy()
    expected = numpy_doc_job(
        ids, ends, syn0, docs, syn1, syn1neg, tree, cum_table, sg=sg, cbow_mean=cbow_mean,
        doc_words=doc_words, alpha0=0.05, alpha1=0.002, sample_int=sample_int, seed=77, hs=hs,
        negative=negative, doc_lockf=doc_lockf,
    )  # fmt: skip
    trainer = word2vec_trainer(
        trainer_type(kernel), syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int,
        window=WINDOW, sg=sg, cbow_mean=cbow_mean, compute_loss=True, walk=kernel, hs=hs,
        negative=negative, syn1neg=syn1neg, cum_table=cum_table,
        docs=(docs, doc_lockf, doc_words),
    )  # fmt: skip
    kept, loss = trainer.train_job(ids, ends, 0.05, 0.002, 77)
    return expected, (syn0, docs, syn1, syn1neg, kept, loss), before


def check_same(expected, got, hs, negative):
    e0, edocs, e1, eneg, e_kept, e_loss = expected
    syn0, docs, syn1, syn1neg, kept, loss = got
    assert kept == e_kept
    assert loss == pytest.approx(e_loss, rel=1e-5)
    pairs = [(syn0, e0), (docs, edocs)]
    pairs += [(syn1, e1)] if hs else []
    pairs += [(syn1neg, eneg)] if negative else []
    for ours, ref in pairs:
        assert np.allclose(ours, ref, atol=1e-5), np.abs(ours - ref).max()


@pytest.mark.parametrize("kernel", ["window", "fused", "reference", "loop", "blas"])
@pytest.mark.parametrize(
    "sg,cbow_mean,doc_words",
    [(1, True, False), (1, True, True), (0, True, False), (0, False, False)],
)
def test_doc_hs_job_matches_numpy_reference(sg, cbow_mean, doc_words, kernel):
    expected, got, (syn0_before, docs_before) = doc_case(
        sg, kernel, cbow_mean=cbow_mean, doc_words=doc_words
    )
    assert 80 < got[4] < 155  # subsampling dropped some words
    check_same(expected, got, True, 0)
    # the document rows moved but row 2 (its document has no words); the word rows only
    # with PV-DM or dbow_words
    moved = [not np.allclose(got[1][t], docs_before[t], atol=1e-4) for t in range(N_DOCS)]
    assert moved == [True, True, False, True]
    assert np.array_equal(got[0], syn0_before) == (sg and not doc_words)


@pytest.mark.parametrize("kernel", ["fused", "reference"])
@pytest.mark.parametrize(
    "sg,hs,doc_words", [(1, False, False), (1, True, False), (1, True, True), (0, False, False),
                        (0, True, False)]
)  # fmt: skip
def test_doc_ns_job_matches_numpy_reference(sg, hs, doc_words, kernel):
    expected, got, _ = doc_case(sg, kernel, hs=hs, negative=3, doc_words=doc_words, seed=7)
    check_same(expected, got, hs, 3)


def test_doc_lock_factors_scale_the_document_rows():
    lockf = np.array([1.0, 0.0, 0.5, 2.0], np.float32)
    expected, got, (_, docs_before) = doc_case(1, "fused", doc_lockf=lockf)
    check_same(expected, got, True, 0)
    assert np.array_equal(got[1][1], docs_before[1])  # factor 0: locked
    assert not np.allclose(got[1][3], docs_before[3], atol=1e-4)


@pytest.mark.parametrize("sg,hs,negative", [(1, True, 0), (1, False, 3), (0, True, 0),
                                            (0, True, 3)])  # fmt: skip
def test_inference_writes_only_the_new_document_row(sg, hs, negative):
    """``frozen`` + ``infer_job``: the reference with every output row and word row frozen
    gives the new row; the model's own arrays are left bit for bit."""
    r = np.random.default_rng(3)
    tree = build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
    syn0 = r.uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
    syn1 = r.normal(0, 0.2, size=(V, D)).astype(np.float32)
    syn1neg = r.normal(0, 0.2, size=(V, D)).astype(np.float32) if negative else None
    cum_table = make_cum_table(np.sort(r.integers(1, 500, size=V))[::-1]) if negative else None
    sample_int = np.full(V, 2**32 - 1, np.uint32)
    words = r.integers(0, V, size=12).tolist()
    ids = np.array(([-1] + words) * 4, np.int32)  # four epochs
    ends = np.arange(1, 5, dtype=np.int64) * 13
    row = r.uniform(-0.1, 0.1, size=(1, D)).astype(np.float32)
    start = row.copy()
    placeholder = np.zeros((1, D), np.float32)
    expected = numpy_doc_job(
        ids, ends, syn0, row, syn1, syn1neg, tree, cum_table, sg=sg, cbow_mean=True,
        doc_words=False, alpha0=0.1, alpha1=0.01, sample_int=sample_int, seed=9, hs=hs,
        negative=negative, frozen=True,
    )  # fmt: skip
    arrays = [a.copy() for a in (syn0, syn1) + ((syn1neg,) if negative else ())]
    trainer = word2vec_trainer(
        _inner.Trainer, syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int,
        window=WINDOW, sg=sg, hs=hs, negative=negative, syn1neg=syn1neg, cum_table=cum_table,
        docs=(placeholder, None, False), frozen=True,
    )  # fmt: skip
    kept, _ = trainer.infer_job(ids, ends, row, 0.1, 0.01, 9)
    assert kept == 48
    assert np.allclose(row, expected[1], atol=1e-5)
    assert not np.allclose(row, start, atol=1e-4)  # it trained
    for before, after in zip(arrays, (syn0, syn1) + ((syn1neg,) if negative else ()), strict=True):
        assert np.array_equal(before, after)
    assert np.array_equal(placeholder, np.zeros((1, D), np.float32))


def test_tag_tokens_and_doc_arguments_are_checked():
    r = np.random.default_rng(0)
    tree = build_huffman_tree(np.arange(V, 0, -1))
    syn0 = np.zeros((V, D), np.float32)
    syn1 = np.zeros((V, D), np.float32)
    sample_int = np.full(V, 2**32 - 1, np.uint32)
    docs = r.normal(size=(2, D)).astype(np.float32)

    def make(**kw):
        return word2vec_trainer(
            _inner.Trainer, syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int,
            window=2, sg=1, **kw,
        )  # fmt: skip

    trainer = make(docs=(docs, None, False))
    with pytest.raises(ValueError, match="document row 2, past the 2 rows"):
        trainer.train_job(np.array([-3, 1, 2], np.int32), np.array([3], np.int64), 0.1, 0.1, 1)
    with pytest.raises(ValueError, match="columns"):
        make(docs=(np.zeros((2, D + 1), np.float32), None, False))
    with pytest.raises(ValueError, match="one finite factor per document row"):
        make(docs=(docs, np.ones(3, np.float32), False))
    with pytest.raises(ValueError, match="give docs"):
        make(frozen=True)
    with pytest.raises(ValueError, match="frozen=True"):
        trainer.infer_job(np.array([-1, 1], np.int32), np.array([2], np.int64), docs, 0.1,
                          0.1, 1)  # fmt: skip


def frozen_trainer(r):
    """An inference trainer (PV-DM, ``frozen=True``) over a random V-word model: one Huffman
    tree, input and output rows, and words kept with probability 0.2 to 1."""
    tree = build_huffman_tree(np.sort(r.integers(1, 500, size=V))[::-1])
    syn0 = r.uniform(-0.5, 0.5, size=(V, D)).astype(np.float32)
    syn1 = r.normal(0, 0.2, size=(V, D)).astype(np.float32)
    sample_int = (np.linspace(0.2, 1.0, V) * (2**32 - 1)).astype(np.uint32)
    return word2vec_trainer(
        _inner.Trainer, syn0, syn1, tree.codes, tree.points, tree.lengths, sample_int,
        window=WINDOW, sg=0, docs=(np.zeros((1, D), np.float32), None, False), frozen=True,
    )  # fmt: skip


def test_infer_doc_is_infer_job_over_the_repeated_document():
    """``infer_doc`` (``infer_vector``'s one call): its start row (0 epochs) is uniform in
    [-1/d, 1/d) from the seed, and its training equals ``infer_job`` over the document
    repeated once per epoch, each pass led by the row's tag token."""
    r = np.random.default_rng(4)
    trainer = frozen_trainer(r)
    words = r.integers(0, V, size=15).astype(np.int32)
    start = np.empty(D, np.float32)
    assert trainer.infer_doc(words, 0, start, 0.1, 0.01, 21) == (0, 0.0)
    assert np.abs(start).max() < 1.0 / D and len(np.unique(start)) == D
    other = np.empty(D, np.float32)
    trainer.infer_doc(words, 0, other, 0.1, 0.01, 22)
    assert not np.array_equal(start, other)  # another seed, another start
    row = np.empty(D, np.float32)
    kept, _ = trainer.infer_doc(words, 4, row, 0.1, 0.01, 21)
    ids = np.tile(np.r_[-1, words], 4).astype(np.int32)
    ends = np.arange(1, 5, dtype=np.int64) * 16
    rows = start.reshape(1, D).copy()
    assert trainer.infer_job(ids, ends, rows, 0.1, 0.01, 21)[0] == kept
    assert np.array_equal(row, rows[0])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        trainer.infer_doc(np.array([V], np.int32), 1, row, 0.1, 0.01, 1)


def test_infer_words_is_infer_doc_over_the_encoded_words():
    """``infer_words`` (``infer_vector``'s one call from the words) maps the words as
    ``encode_sentences`` does, unknown ones dropped, and trains the same row bit for bit as
    ``infer_doc`` over those ids; it says whether the row is finite."""
    r = np.random.default_rng(5)
    trainer = frozen_trainer(r)
    key_to_index = {f"w{k}": k for k in range(V)}
    for words in (
        [f"w{k}" for k in r.integers(0, V, size=15)] + ["unknown", 7],
        ["unknown"],
        [],
    ):
        for epochs in (0, 1, 5):
            ids = _inner.encode_sentences([words], key_to_index, V)[0]
            want = np.empty(D, np.float32)
            trainer.infer_doc(ids, epochs, want, 0.1, 0.01, 33)
            row, finite = _inner.infer_words(trainer, words, key_to_index, epochs, 0.1, 0.01, 33)
            assert finite and row.dtype == np.float32 and row.shape == (D,)
            assert np.array_equal(row, want), (words, epochs)
    _, finite = _inner.infer_words(
        trainer, ["w1", "w2", "w3", "w4"] * 4, key_to_index, 3, 3e38, 3e38, 1
    )
    assert not finite  # a rate that diverges the row
    with pytest.raises(RuntimeError, match="outside the"):
        _inner.infer_words(trainer, ["w1"], {"w1": V}, 1, 0.1, 0.01, 1)


def test_infer_words_refuses_a_document_that_grows_while_read():
    """A token whose hash appends to the document: the id buffer was sized by its length, so
    the read stops with a clear error instead of writing past it."""
    trainer = frozen_trainer(np.random.default_rng(6))
    words = []

    class Growing(str):
        def __hash__(self):
            words.append(Growing("w0"))
            return str.__hash__(self)

    words.extend([Growing("w0"), Growing("w1")])
    with pytest.raises(RuntimeError, match="changed while its words were read"):
        _inner.infer_words(trainer, words, {"w0": 0, "w1": 1}, 1, 0.1, 0.01, 1)
