"""Facebook's fastText ``.bin`` files (:mod:`hsw2v.fasttext._facebook`), checked against the
fastText tool itself (pip ``fasttext-wheel``) and gensim's ``load_facebook_model``.

* models trained by fastText (skip-gram + hs, cbow + ns, supervised + hs) read back exactly
  what ``fasttext.load_model`` reports, and write back byte for byte;
* a file written here, with weights changed, loads in fastText and gensim, which agree on
  the vectors of known and unknown words;
* the tree of ``-loss hs`` reproduces the probabilities fastText's own predictor computes,
  and shows the sign of its output rows against hsw2v's ``syn1``;
* damaged files (crafted sizes, truncation, byte flips in a subprocess) raise only
  ValueErrors (FacebookFormatError), never crash, hang or allocate what the file cannot hold.
"""

from __future__ import annotations

import gzip
import io
import os
import random
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import demo_lines, facebook_models, fasttext_tool

from hsw2v.exceptions import FacebookFormatError, FacebookTruncatedError, TruncatedFileError
from hsw2v.fasttext import _facebook
from hsw2v.fasttext._facebook import (
    FacebookModel,
    facebook_hs_tree,
    read_facebook_bin,
    write_facebook_bin,
)
from hsw2v.huffman import build_huffman_tree
from hsw2v.layer import HierarchicalSoftmax

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Byte offsets of the fixed-size fields (see the format table of hsw2v.fasttext._facebook).
ARGS_AT = 8  # after magic and version
ARG_AT = {name: ARGS_AT + 4 * i for i, name in enumerate(_facebook._ARG_NAMES[:-1])}
DICT_AT = ARGS_AT + 12 * 4 + 8  # size, nwords, nlabels (int32), ntokens, pruneidx_size (int64)
SIZE_AT, NWORDS_AT, NLABELS_AT, NTOKENS_AT, PRUNE_AT = (
    DICT_AT,
    DICT_AT + 4,
    DICT_AT + 8,
    DICT_AT + 12,
    DICT_AT + 20,
)
ENTRIES_AT = DICT_AT + 28


def supervised_lines():
    """Lines with exact label counts, ties included, so the label tree has ties to break."""
    rng = random.Random(0)
    label_counts = {"l0": 60, "l1": 40, "l2": 40, "l3": 20, "l4": 10, "l5": 10, "l6": 10}
    labels = [name for name, count in label_counts.items() for _ in range(count)]
    rng.shuffle(labels)
    offsets = {name: 3 * i for i, name in enumerate(label_counts)}
    return [
        f"__label__{name} " + " ".join(f"w{rng.randint(0, 12) + offsets[name]}" for _ in range(6))
        for name in labels
    ]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """fastText models trained on a little text: {kind: (path of the .bin, loaded model)}."""
    folder = tmp_path_factory.mktemp("fbbin")
    labelled = folder / "labelled.txt"
    labelled.write_text("\n".join(supervised_lines()) + "\n", encoding="utf-8")
    return facebook_models(folder, **{
        "supervised-hs": lambda ft: ft.train_supervised(
            str(labelled), loss="hs", minCount=1, dim=10, epoch=2, thread=1, verbose=0
        ),
    })  # fmt: skip


@pytest.fixture(scope="module")
def tiny_bin(tmp_path_factory):
    """The bytes of a very small skip-gram + hs model, for the crafted and fuzzed files."""
    fasttext = fasttext_tool()
    folder = tmp_path_factory.mktemp("fbtiny")
    text = folder / "tiny.txt"
    text.write_text("\n".join(demo_lines(0, 40)) + "\n", encoding="utf-8")
    model = fasttext.train_unsupervised(
        str(text), model="skipgram", loss="hs", dim=3, epoch=1, minCount=8, minn=2, maxn=3,
        bucket=20, thread=1, verbose=0,
    )  # fmt: skip
    path = folder / "tiny.bin"
    model.save_model(str(path))
    return path.read_bytes()


KINDS = ["skipgram-hs", "cbow-ns", "supervised-hs"]


# ------------------------------------------------------------------- against fastText
@pytest.mark.parametrize("kind", KINDS)
def test_read_equals_what_fasttext_loads(trained, kind):
    fasttext = fasttext_tool()
    path, _ = trained[kind]
    ours = read_facebook_bin(path)
    theirs = fasttext.load_model(str(path))
    words, counts = theirs.get_words(include_freq=True)
    labels, label_counts = theirs.get_labels(include_freq=True)
    supervised = kind.startswith("supervised")
    if supervised:
        assert ours.words == list(words) + list(labels)
        assert ours.counts.tolist() == list(counts) + list(label_counts)
        assert ours.nlabels == len(labels) > 0
    else:
        assert ours.words == list(words)
        assert ours.counts.tolist() == list(counts)
        assert ours.nlabels == 0
    assert ours.counts.dtype == np.int64
    assert ours.nwords == len(words)
    assert ours.entry_types.tolist() == [0] * len(words) + [1] * ours.nlabels
    assert ours.input_matrix.dtype == ours.output_matrix.dtype == np.float32
    np.testing.assert_array_equal(ours.input_matrix, theirs.get_input_matrix())
    np.testing.assert_array_equal(ours.output_matrix, theirs.get_output_matrix())
    assert ours.input_matrix.shape == (ours.nwords + ours.bucket, ours.dim)
    args = theirs.f.getArgs()
    for name in _facebook._ARG_NAMES:
        expected = getattr(args, name)
        assert getattr(ours, name) == getattr(expected, "name", expected), name
    assert ours.model == {"skipgram-hs": "skipgram", "cbow-ns": "cbow"}.get(kind, "supervised")
    assert (ours.version, ours.pruneidx_size, ours.pruneidx.shape) == (12, -1, (0, 2))
    assert ours.ntokens > 0
    ours.validate()


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_is_byte_identical(trained, kind, tmp_path):
    path, _ = trained[kind]
    out = tmp_path / "again.bin"
    write_facebook_bin(out, read_facebook_bin(path))
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("kind", KINDS)
def test_reads_paths_and_file_objects(trained, kind):
    path, _ = trained[kind]
    data = path.read_bytes()
    expected = read_facebook_bin(str(path))

    class Pipe(io.RawIOBase):  # a stream that cannot seek and hands out short reads
        def __init__(self, data):
            self.data, self.at = data, 0

        def readable(self):
            return True

        def readinto(self, buf):
            n = min(len(buf), 1000, len(self.data) - self.at)
            buf[:n] = self.data[self.at : self.at + n]
            self.at += n
            return n

    with open(path, "rb") as fh:
        sources = [path, os.fsencode(path), fh, io.BytesIO(data), Pipe(data)]
        for source in sources:
            got = read_facebook_bin(source)
            assert got.words == expected.words
            np.testing.assert_array_equal(got.input_matrix, expected.input_matrix)
            np.testing.assert_array_equal(got.output_matrix, expected.output_matrix)
    with pytest.raises(FacebookTruncatedError):
        read_facebook_bin(Pipe(data[:-5]))
    zipped = io.BytesIO()
    with gzip.GzipFile(fileobj=zipped, mode="wb") as fh:
        fh.write(data)
    zipped.seek(0)
    with gzip.GzipFile(fileobj=zipped, mode="rb") as fh:  # cannot seek from the end
        np.testing.assert_array_equal(read_facebook_bin(fh).input_matrix, expected.input_matrix)
    with open(path, encoding="latin-1") as text, pytest.raises(TypeError, match="binary"):
        read_facebook_bin(text)


def test_full_model_false_skips_the_output(trained):
    gensim_fasttext = pytest.importorskip("gensim.models.fasttext")
    path, _ = trained["skipgram-hs"]
    vectors_only = read_facebook_bin(path, full_model=False)
    assert vectors_only.output_matrix is None
    np.testing.assert_array_equal(vectors_only.input_matrix, read_facebook_bin(path).input_matrix)
    wv = gensim_fasttext.load_facebook_vectors(str(path))
    assert wv.index_to_key == vectors_only.words
    np.testing.assert_array_equal(wv.vectors_ngrams, vectors_only.ngram_vectors)
    with pytest.raises(ValueError, match="full_model=False"):
        write_facebook_bin(path.with_name("no-output.bin"), vectors_only)


@pytest.mark.parametrize("kind", ["skipgram-hs", "cbow-ns"])
def test_written_file_loads_in_fasttext_and_gensim(trained, kind, tmp_path):
    fasttext = fasttext_tool()
    gensim_fasttext = pytest.importorskip("gensim.models.fasttext")
    path, _ = trained[kind]
    model = read_facebook_bin(path)
    rng = np.random.default_rng(1)  # new weights: the file is ours, not a copy of theirs
    model.input_matrix = rng.normal(size=model.input_matrix.shape).astype(np.float32)
    model.output_matrix = rng.normal(size=model.output_matrix.shape).astype(np.float32)
    out = tmp_path / "ours.bin"
    write_facebook_bin(out, model)

    ft = fasttext.load_model(str(out))
    np.testing.assert_array_equal(ft.get_input_matrix(), model.input_matrix)
    np.testing.assert_array_equal(ft.get_output_matrix(), model.output_matrix)
    assert ft.get_words() == model.words
    gs = gensim_fasttext.load_facebook_model(str(out))
    assert gs.wv.index_to_key == model.words
    assert (gs.sg, gs.hs) == (kind == "skipgram-hs", kind == "skipgram-hs")
    syn = gs.syn1 if gs.hs else gs.syn1neg
    np.testing.assert_array_equal(syn, model.output_matrix)

    # fastText gives "</s>" no n-grams (Dictionary::initNgrams): its vector is its own row.
    # gensim 4.4 adds n-grams to it like to any word, so the two differ there alone.
    eos = model.words.index("</s>")
    np.testing.assert_array_equal(ft.get_word_vector("</s>"), model.input_matrix[eos])
    known = [w for w in model.words[:6] + model.words[-3:] if w != "</s>"]
    unknown = ["zebrafish", "heavenly", "xq", "beginnings", "gods"]
    assert not set(unknown) & set(model.words)
    for word in known + unknown:
        expected = ft.get_word_vector(word)
        assert np.abs(expected).sum() > 0, word  # every one has n-grams in the buckets
        np.testing.assert_allclose(gs.wv[word], expected, rtol=1e-5, atol=1e-6)
    # A known word's vector: the mean of its own row and its n-grams' (rows past nwords).
    word = model.words[3]
    rows = ft.get_subwords(word)[1]
    assert rows[0] == 3 and (rows[1:] >= model.nwords).all()
    np.testing.assert_allclose(
        model.input_matrix[rows].mean(axis=0), ft.get_word_vector(word), rtol=1e-5, atol=1e-6
    )


def test_nan_weights_are_read_as_they_are(trained, tmp_path):
    path, _ = trained["cbow-ns"]
    model = read_facebook_bin(path)
    model.input_matrix[2, 1] = np.nan
    model.output_matrix[0, 0] = np.inf
    out = tmp_path / "nan.bin"
    write_facebook_bin(out, model)
    again = read_facebook_bin(out)
    assert np.isnan(again.input_matrix[2, 1]) and np.isinf(again.output_matrix[0, 0])


def test_words_that_are_not_utf8(trained, tmp_path):
    gensim_fasttext = pytest.importorskip("gensim.models.fasttext")
    path, _ = trained["skipgram-hs"]
    model = read_facebook_bin(path)
    model.words[4] = b"caf\xe9\xff".decode("utf-8", errors="surrogateescape")
    out = tmp_path / "latin1.bin"
    write_facebook_bin(out, model)
    assert b"caf\xe9\xff\0" in out.read_bytes()
    # By default the keys are gensim's (backslashreplace) ...
    default = read_facebook_bin(out)
    assert default.words[4] == "caf\\xe9\\xff"
    wv = gensim_fasttext.load_facebook_vectors(str(out))
    assert wv.index_to_key == default.words
    # ... and with surrogateescape the original bytes come back, byte for byte.
    exact = read_facebook_bin(out, unicode_errors="surrogateescape")
    again = tmp_path / "again.bin"
    write_facebook_bin(again, exact)
    assert again.read_bytes() == out.read_bytes()
    with pytest.raises(FacebookFormatError, match="not valid UTF-8"):
        read_facebook_bin(out, unicode_errors="strict")


def test_quantized_model_is_refused(tmp_path):
    fasttext = fasttext_tool()
    text = tmp_path / "labelled.txt"
    text.write_text("\n".join(supervised_lines()) + "\n", encoding="utf-8")
    model = fasttext.train_supervised(
        str(text), dim=4, epoch=1, wordNgrams=2, bucket=300, thread=1, verbose=0
    )
    model.quantize(input=str(text), retrain=False)
    ftz = tmp_path / "model.ftz"
    model.save_model(str(ftz))
    with pytest.raises(FacebookFormatError, match="quantized"):
        read_facebook_bin(ftz)


# ------------------------------------------------------------------------ writing safely
def test_failed_write_leaves_the_previous_file(trained, tmp_path, monkeypatch):
    path, _ = trained["cbow-ns"]
    model = read_facebook_bin(path)
    out = tmp_path / "model.bin"
    out.write_bytes(b"previous")

    def half_then_fail(fh, model, encoded):
        fh.write(b"\xba\x16O/partial")
        raise OSError("disk full")

    monkeypatch.setattr(_facebook, "_write", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        write_facebook_bin(out, model)
    assert out.read_bytes() == b"previous"
    assert os.listdir(tmp_path) == ["model.bin"]


def small_model(**changes) -> FacebookModel:
    fields = dict(
        dim=3, ws=5, epoch=5, minCount=1, neg=5, wordNgrams=1, loss="ns", model="cbow",
        bucket=4, minn=3, maxn=6, lrUpdateRate=100, t=1e-4, words=["</s>", "a"],
        counts=np.array([2, 1]), entry_types=np.zeros(2, np.int8), ntokens=3, nwords=2,
        nlabels=0, input_matrix=np.arange(18, dtype=np.float32).reshape(6, 3),
        output_matrix=np.ones((2, 3), np.float32),
    )  # fmt: skip
    fields.update(changes)
    return FacebookModel(**fields)


def test_edge_models_round_trip(tmp_path):
    empty = small_model(
        words=[], counts=np.zeros(0, np.int64), entry_types=np.zeros(0, np.int8), nwords=0,
        bucket=0, input_matrix=np.zeros((0, 3), np.float32),
        output_matrix=np.zeros((0, 3), np.float32),
    )  # fmt: skip
    strided = small_model(
        input_matrix=np.asfortranarray(np.arange(18, dtype=np.float32).reshape(6, 3)),
        output_matrix=np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2],
    )
    for i, model in enumerate([empty, strided, small_model(version=11, t=float("nan"))]):
        path = tmp_path / f"{i}.bin"
        write_facebook_bin(path, model)
        for source in (path, io.BytesIO(path.read_bytes())):
            again = read_facebook_bin(source)
            assert again.words == model.words and again.version == model.version
            np.testing.assert_array_equal(again.input_matrix, model.input_matrix)
            np.testing.assert_array_equal(again.output_matrix, model.output_matrix)
    assert np.isnan(read_facebook_bin(tmp_path / "2.bin").t)


def test_invalid_model_is_refused_before_writing(trained, tmp_path):
    path, _ = trained["cbow-ns"]
    out = tmp_path / "model.bin"
    out.write_bytes(b"previous")
    cases = [
        ("loss", "negative", "loss must be one of"),
        ("model", "sg", "model must be one of"),
        ("dim", 0, "dim must be >= 1"),
        ("bucket", 2**31, "bucket must be an int32"),
        ("nwords", 1, "words, but nwords"),
        ("input_matrix", np.zeros((2, 2), np.float32), "input_matrix has shape"),
        ("output_matrix", np.zeros((1, 1), np.float32), "output_matrix has shape"),
        ("version", 13, "version must be one of"),
    ]
    for name, value, message in cases:
        model = read_facebook_bin(path)
        setattr(model, name, value)
        with pytest.raises(ValueError, match=message):
            write_facebook_bin(out, model)
    model = read_facebook_bin(path)
    model.words[2] = "nul\0inside"
    with pytest.raises(ValueError, match="without NUL"):
        write_facebook_bin(out, model)
    model = read_facebook_bin(path)
    model.input_matrix = model.input_matrix.astype(np.float64)
    with pytest.raises(ValueError, match="float32"):
        write_facebook_bin(out, model)
    assert out.read_bytes() == b"previous"


# ------------------------------------------------------------------------------ the tree
def hs_probabilities(model: FacebookModel, hidden: np.ndarray, syn1: np.ndarray, convention):
    """P(target | hidden) for every target of the tree fastText builds from the counts of
    ``model``'s output side (labels for a supervised model, words otherwise)."""
    if model.model == "supervised":
        counts = model.counts[model.nwords :]
    else:
        counts = model.counts[: model.nwords]
    codes, points, lengths = facebook_hs_tree(counts)
    scores = syn1.astype(np.float64) @ hidden.astype(np.float64)  # one per inner node
    out = np.empty(len(counts))
    for w in range(len(counts)):
        bits = codes[w, : lengths[w]].astype(np.float64)
        x = scores[points[w, : lengths[w]]]
        if convention == "fasttext":  # sigmoid(output . h) = P(bit 1)
            p = 1 / (1 + np.exp(-x))
            steps = np.where(bits == 1, p, 1 - p)
        else:  # word2vec.c / hsw2v: sigmoid(syn1 . h) = P(bit 0)
            steps = 1 / (1 + np.exp(-(1 - 2 * bits) * x))
        out[w] = np.exp(np.log(steps + 1e-5).sum())  # fastText's std_log adds 1e-5
    return out


def test_tree_reproduces_fasttext_hs_probabilities_and_sign(trained):
    """fastText's predictor walks its own hs tree (``HierarchicalSoftmaxLoss::dfs``); its
    label probabilities are reproduced from the file's matrices by the tree built here, with
    the output rows as they are under fastText's convention, and with the rows negated under
    hsw2v's (word2vec.c's): ``syn1 = -output``, in a NumPy formula and in hsw2v's own
    :class:`~hsw2v.layer.HierarchicalSoftmax`. The rows as they are under hsw2v's
    convention give other numbers."""
    path, ft = trained["supervised-hs"]
    model = read_facebook_bin(path)
    labels = model.words[model.nwords :]
    eos = model.words.index("</s>")
    for line in ["w1 w3 w5", "w20 w4 w9 w9", "w14 w15 nosuchword"]:
        ids = [model.words.index(w) for w in line.split() if w in model.words] + [eos]
        hidden = model.input_matrix[ids].mean(axis=0)
        predicted = dict((label, p) for p, label in ft.f.predict(line + "\n", -1, 0.0, "strict"))
        theirs = np.array([predicted[label] for label in labels])
        output = model.output_matrix
        as_fasttext = hs_probabilities(model, hidden, output, "fasttext")
        as_hsw2v = hs_probabilities(model, hidden, -output, "hsw2v")
        unnegated = hs_probabilities(model, hidden, output, "hsw2v")
        np.testing.assert_allclose(as_fasttext, theirs, rtol=1e-4)
        np.testing.assert_allclose(as_hsw2v, theirs, rtol=1e-4)
        assert np.abs(unnegated - theirs).max() > 1e-3
        assert abs(theirs.sum() - 1) < 1e-3
        # hsw2v's own layer, on the same tree with syn1 = -output, gives fastText's numbers
        # (up to the 1e-5 fastText adds inside each log).
        codes, points, lengths = facebook_hs_tree(model.counts[model.nwords :])
        layer = HierarchicalSoftmax.from_paths(codes, points, model.dim, lengths=lengths)
        layer.weights[:] = -output[:-1]  # V rows in fastText, V - 1 inner nodes
        np.testing.assert_allclose(layer.proba(hidden[None])[0], theirs, rtol=1e-3, atol=1e-4)
        layer.weights[:] = output[:-1]
        assert np.abs(layer.proba(hidden[None])[0] - theirs).max() > 1e-3


@pytest.mark.parametrize("kind", ["skipgram-hs", "supervised-hs"])
def test_hs_output_matrix_has_one_unused_row(trained, kind):
    """fastText sizes the output matrix V x dim for hs too, but a tree over V leaves has
    V - 1 inner nodes: the last row is never trained and stays zero."""
    model = read_facebook_bin(trained[kind][0])
    supervised = kind.startswith("supervised")
    counts = model.counts[model.nwords :] if supervised else model.counts[: model.nwords]
    assert model.output_matrix.shape == (len(counts), model.dim)
    assert facebook_hs_tree(counts)[1].max() == len(counts) - 2  # the highest row used
    assert model.output_matrix[:-1].any(axis=1).all()
    assert not model.output_matrix[-1].any()


def test_tree_of_the_dictionary_is_hsw2v_huffman_tree(trained):
    """For counts in descending order (fastText's dictionary order), hsw2v's Huffman tree
    is fastText's: same codes, same points, same lengths."""
    path, _ = trained["skipgram-hs"]
    model = read_facebook_bin(path)
    counts = model.counts[: model.nwords]
    assert (np.diff(counts) <= 0).all() and len(set(counts.tolist())) < len(counts)  # ties
    codes, points, lengths = facebook_hs_tree(counts)
    tree = build_huffman_tree(counts)
    np.testing.assert_array_equal(lengths, tree.lengths)
    np.testing.assert_array_equal(codes, tree.codes)
    np.testing.assert_array_equal(points, tree.points)
    assert (points[:, 0] == len(counts) - 2).all()


@pytest.mark.parametrize("seed", range(20))
def test_tree_equals_hsw2v_for_sorted_counts(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    counts = np.sort(rng.integers(1, 8 if seed % 2 else 10_000, size=n))[::-1]  # ties or not
    codes, points, lengths = facebook_hs_tree(counts)
    tree = build_huffman_tree(counts)
    assert codes.dtype == np.uint8 and points.dtype == lengths.dtype == np.int32
    np.testing.assert_array_equal(lengths, tree.lengths)
    np.testing.assert_array_equal(codes, tree.codes)
    np.testing.assert_array_equal(points, tree.points)


def test_tree_for_unsorted_counts_follows_fasttext_not_hsw2v():
    """fastText merges the counts in the order given, without sorting them; hsw2v sorts
    first. Unsorted counts give different trees: fastText's is then not a Huffman tree."""
    counts = [1, 5, 3, 1]
    codes, points, lengths = facebook_hs_tree(counts)
    # fastText: leaf 3 (1) + leaf 2 (3) -> node 0 (4); leaf 1 (5) vs node 0 (4): node 0 +
    # leaf 1 -> node 1 (9); then leaf 0 (1) + node 1 -> root 2.
    assert lengths.tolist() == [1, 2, 3, 3]
    assert [codes[w, : lengths[w]].tolist() for w in range(4)] == [
        [0],
        [1, 1],
        [1, 0, 1],
        [1, 0, 0],
    ]
    tree = build_huffman_tree(counts)
    assert sorted(tree.lengths.tolist()) == [1, 2, 3, 3]
    assert tree.lengths.tolist() == [3, 1, 2, 3]  # the frequent word 1 nearest the root
    weighted = lambda lens: int(np.dot(lens, counts))  # noqa: E731
    assert weighted(lengths) > weighted(tree.lengths)


def test_tree_small_and_invalid():
    codes, points, lengths = facebook_hs_tree([7])
    assert codes.shape == points.shape == (1, 0) and lengths.tolist() == [0]
    codes, points, lengths = facebook_hs_tree(np.array([2, 2], dtype=np.int64))
    assert lengths.tolist() == [1, 1] and codes[:, 0].tolist() == [1, 0]
    for bad in ([], [1, -1], [[1, 2]], [1.5, 2.0], 2**62 * np.ones(3, dtype=np.int64)):
        with pytest.raises(ValueError):
            facebook_hs_tree(bad)


# -------------------------------------------------------------------- damaged files
def patched(data: bytes, at: int, fmt: str, value) -> bytes:
    size = struct.calcsize(fmt)
    return data[:at] + struct.pack(fmt, value) + data[at + size :]


def entries_end(data: bytes) -> int:
    """The offset just after the dictionary entries (pruneidx_size is -1)."""
    size = struct.unpack_from("<i", data, SIZE_AT)[0]
    at = ENTRIES_AT
    for _ in range(size):
        at = data.index(b"\0", at) + 1 + 9
    return at


def crafted_cases(data: bytes):
    """(name, bytes, exception class, message fragment) for each way a file can be wrong."""
    end = entries_end(data)
    input_rows = struct.unpack_from("<q", data, end + 1)[0]
    dim = struct.unpack_from("<i", data, ARG_AT["dim"])[0]
    output_at = end + 1 + 16 + input_rows * dim * 4
    big = 2**31 - 1
    nul = data.index(b"\0", ENTRIES_AT)  # after the first word
    one_entry = patched(patched(data, SIZE_AT, "<i", 1), NWORDS_AT, "<i", 1)  # room for words
    return [
        ("empty", b"", FacebookTruncatedError, "inside the signature"),
        ("magic", patched(data, 0, "<i", 1234), FacebookFormatError, "not a fastText"),
        ("version 13", patched(data, 4, "<i", 13), FacebookFormatError, "version 13"),
        ("version -1", patched(data, 4, "<i", -1), FacebookFormatError, "version -1"),
        ("loss 9", patched(data, ARG_AT["loss"], "<i", 9), FacebookFormatError, "unknown loss"),
        ("model 0", patched(data, ARG_AT["model"], "<i", 0), FacebookFormatError, "unknown model"),
        ("dim 0", patched(data, ARG_AT["dim"], "<i", 0), FacebookFormatError, "dim must be >= 1"),
        ("dim <0", patched(data, ARG_AT["dim"], "<i", -3), FacebookFormatError, "dim must be"),
        ("bucket <0", patched(data, ARG_AT["bucket"], "<i", -1), FacebookFormatError, "bucket"),
        ("minn <0", patched(data, ARG_AT["minn"], "<i", -2), FacebookFormatError, "minn"),
        ("nwords <0", patched(data, NWORDS_AT, "<i", -1), FacebookFormatError, "nwords must"),
        ("size != nwords", patched(data, SIZE_AT, "<i", 3), FacebookFormatError, "entries, but"),
        (
            "size huge",
            patched(patched(data, SIZE_AT, "<i", big), NWORDS_AT, "<i", big),
            FacebookTruncatedError,
            "announces 2147483647 entries",
        ),
        ("ntokens <0", patched(data, NTOKENS_AT, "<q", -5), FacebookFormatError, "ntokens"),
        ("no NUL", one_entry[:ENTRIES_AT] + b"abc" * 9, FacebookTruncatedError, "no NUL ends"),
        ("entry cut", one_entry[: nul + 8], FacebookTruncatedError, "entry 0"),
        ("count <0", patched(data, nul + 1, "<q", -1), FacebookFormatError, "negative count"),
        ("type 2", patched(data, nul + 9, "<b", 2), FacebookFormatError, "entry types"),
        ("label first", patched(data, nul + 9, "<b", 1), FacebookFormatError, "entry types"),
        ("duplicate", data.replace(b"</s>\0", b"the\0", 1), FacebookFormatError, "twice"),
        ("pruned", patched(data, PRUNE_AT, "<q", 0), FacebookFormatError, "pruned dictionary"),
        (
            "pruned huge",
            patched(data, PRUNE_AT, "<q", 2**62),
            FacebookTruncatedError,
            "pruned index announces",
        ),
        ("quantized", patched(data, end, "<B", 1), FacebookFormatError, "quantized"),
        ("quant 7", patched(data, end, "<B", 7), FacebookFormatError, "quantization flag 7"),
        ("rows", patched(data, end + 1, "<q", input_rows + 1), FacebookFormatError, "header"),
        ("cols", patched(data, end + 9, "<q", -dim), FacebookFormatError, "input matrix is"),
        (
            "bucket and rows huge",
            patched(
                patched(data, ARG_AT["bucket"], "<i", big),
                end + 1,
                "<q",
                big + input_rows - struct.unpack_from("<i", data, ARG_AT["bucket"])[0],
            ),
            FacebookTruncatedError,
            "only",
        ),
        ("input cut", data[: end + 40], FacebookTruncatedError, "the input matrix"),
        ("qout", patched(data, output_at, "<B", 1), FacebookFormatError, "output quantization"),
        ("output rows", patched(data, output_at + 1, "<q", 1), FacebookFormatError, "output"),
        ("output cut", data[:-1], FacebookTruncatedError, "the output matrix"),
        ("trailing", data + b"\0", FacebookFormatError, "after the output matrix"),
    ]


def test_crafted_files_raise_clear_errors(tiny_bin, tmp_path):
    assert read_facebook_bin(io.BytesIO(tiny_bin)).words  # the seed itself is fine
    for name, data, error, message in crafted_cases(tiny_bin):
        for source in (io.BytesIO(data), tmp_path / "crafted.bin"):
            if not isinstance(source, io.BytesIO):
                source.write_bytes(data)
            with pytest.raises(error, match=message) as info:
                read_facebook_bin(source)
            assert isinstance(info.value, ValueError), name
    assert issubclass(FacebookTruncatedError, TruncatedFileError)
    # full_model=False reads no further than the input matrix.
    output_cut = dict((c[0], c[1]) for c in crafted_cases(tiny_bin))["output cut"]
    assert read_facebook_bin(io.BytesIO(output_cut), full_model=False).output_matrix is None


FUZZ_CHILD = r"""
import io, random, resource, struct, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a huge allocation fails loudly
from hsw2v.fasttext._facebook import read_facebook_bin, write_facebook_bin

data = open(sys.argv[1], "rb").read()
out = sys.argv[2]
rng = random.Random(int(sys.argv[3]))
head = int(sys.argv[4])  # bytes of signature, arguments and dictionary
cases = [("cut", data[:n]) for n in range(0, head + 40)]
cases += [("cut", data[:rng.randrange(len(data))]) for _ in range(100)]
extremes = [0, 1, -1, 2**31 - 1, -2**31, 2**15, 255]
for at in range(0, head + 40, 4):
    for v in extremes:
        cases.append((f"int32 {v} at {at}", data[:at] + struct.pack("<i", v) + data[at + 4:]))
for at in range(0, head + 40):
    cases.append((f"byte at {at}", data[:at] + bytes([rng.randrange(256)]) + data[at + 1:]))
for _ in range(300):
    mutant = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        mutant[min(int(rng.expovariate(1 / head)), len(data) - 1)] = rng.randrange(256)
    cases.append(("flips", bytes(mutant)))
class Pipe(io.RawIOBase):  # cannot seek: sizes are not known ahead, reads come short
    def __init__(self, data):
        self.data, self.at = data, 0
    def readable(self):
        return True
    def readinto(self, buf):
        n = min(len(buf), 97, len(self.data) - self.at)
        buf[:n] = self.data[self.at:self.at + n]
        self.at += n
        return n

outcomes = {"clean": 0, "refused": 0}
for i, (name, mutant) in enumerate(cases):
    for full in (True, False):
        started = time.monotonic()
        try:
            source = Pipe(mutant) if i % 3 == 0 else io.BytesIO(mutant)
            model = read_facebook_bin(source, full_model=full, unicode_errors="surrogateescape")
        except ValueError:
            outcomes["refused"] += 1
            continue
        except BaseException as exc:
            print(f"FAIL {name}: {type(exc).__name__}: {exc}")
            sys.exit(1)
        finally:
            if time.monotonic() - started > 5:
                print(f"FAIL {name}: slow"); sys.exit(1)
        outcomes["clean"] += 1
        if full:  # what reads cleanly writes back byte for byte
            write_facebook_bin(out, model)
            if open(out, "rb").read() != mutant:
                print(f"FAIL {name}: read cleanly but writes back differently"); sys.exit(1)
print("OK", len(cases), outcomes)
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_fuzzed_files_raise_only_value_errors(tiny_bin, tmp_path, seed):
    """Truncations, extreme int32 values and random byte flips of a real .bin, read in a
    fresh interpreter (a segmentation fault fails this test, not the runner) whose address
    space is capped: every mutant reads cleanly or raises a ValueError."""
    original = tmp_path / "original.bin"
    original.write_bytes(tiny_bin)
    head = entries_end(tiny_bin)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["OPENBLAS_NUM_THREADS"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(FUZZ_CHILD), str(original), str(tmp_path / "w.bin"),
         str(seed), str(head)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, (
        f"child failed (status {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    assert proc.stdout.startswith("OK"), proc.stdout
