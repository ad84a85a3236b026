"""Property-based tests of the loaders: the native bundle format and both word2vec formats.

Each loader, fed any bytes, returns a usable object or raises ValueError (its documented
exception), never anything else; valid files round-trip exactly; damaged ones never load as
different data. ``tests/fuzz_models.py`` loads, trains and queries mutants in subprocesses.
"""

import io
import json
import math
import os
import struct
import tempfile
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hsw2v import Word2Vec
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.persist import load_bundle

FAST = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)

# Words the word2vec formats can hold: no whitespace (the separator) and no empty word.
W2V_WORD = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")),
    min_size=1,
    max_size=8,
)
FINITE32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@st.composite
def keyed_vectors(draw, words=W2V_WORD, values=FINITE32, max_words=8):
    keys = draw(st.lists(words, max_size=max_words, unique=True))
    dim = draw(st.integers(1, 5))
    flat = draw(st.lists(values, min_size=len(keys) * dim, max_size=len(keys) * dim))
    kv = KeyedVectors(dim)
    kv.add_vectors(keys, np.array(flat, dtype=np.float32).reshape(len(keys), dim))
    kv.expandos["count"] = np.arange(len(keys), 0, -1, dtype=np.int64)
    return kv


def scratch(name):
    return os.path.join(tempfile.mkdtemp(prefix="hsw2v-prop-"), name)


def write(name, data):
    path = scratch(name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def only_value_error(call):
    """Run `call`; return its result, or None if it raised ValueError (anything else fails)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call()
        except ValueError:
            return None


def use(kv):
    """Exercise a loaded KeyedVectors the way a user would."""
    if len(kv) >= 2:
        with np.errstate(all="ignore"):
            kv.most_similar(kv.index_to_key[0], topn=1)


@pytest.fixture(scope="module")
def seeds():
    """Valid files of every kind, to mutate."""
    rng = np.random.default_rng(1)
    words = ["king", "queen", "man", "woman", "é"]
    kv = KeyedVectors(3)
    kv.add_vectors(words, rng.standard_normal((5, 3)).astype(np.float32))
    kv.expandos["count"] = np.arange(5, 0, -1, dtype=np.int64)
    files = {}
    for name, save in {
        "kv": lambda p: kv.save(p),
        "txt": lambda p: kv.save_word2vec_format(p),
        "bin": lambda p: kv.save_word2vec_format(p, binary=True),
        "w2v": lambda p: Word2Vec(
            [words[: 2 + i % 3] for i in range(20)], vector_size=3, min_count=1, workers=1
        ).save(p),
    }.items():
        path = scratch(name)
        save(path)
        with open(path, "rb") as fh:
            files[name] = fh.read()
    return kv, files


# ---------------------------------------------------------------- round trips
@FAST
@given(kv=keyed_vectors(words=st.text(max_size=8)))
def test_native_round_trip(kv):
    path = scratch("kv.hsw2v")
    kv.save(path)
    for mmap in (None, "r"):
        got = KeyedVectors.load(path, mmap=mmap)
        assert got.index_to_key == kv.index_to_key
        np.testing.assert_array_equal(got.vectors, kv.vectors)
        np.testing.assert_array_equal(got.expandos["count"], kv.expandos["count"])


@FAST
@given(kv=keyed_vectors(), binary=st.booleans(), limit=st.one_of(st.none(), st.integers(0, 9)))
def test_word2vec_format_round_trip_and_limit(kv, binary, limit):
    path = scratch("v.bin" if binary else "v.txt")
    kv.save_word2vec_format(path, binary=binary)
    got = KeyedVectors.load_word2vec_format(path, binary=binary, limit=limit)
    n = len(kv) if not limit else min(limit, len(kv))
    assert got.index_to_key == kv.index_to_key[:n]
    np.testing.assert_array_equal(got.vectors, kv.vectors[:n])


@FAST
@given(
    kv=keyed_vectors(max_words=5).filter(len),
    spots=st.lists(
        st.tuples(st.integers(0, 99), st.integers(0, 99), st.sampled_from([math.nan, math.inf])),
        min_size=1,
        max_size=3,
    ),
    negate=st.booleans(),
    binary=st.booleans(),
)
def test_nonfinite_values_are_refused_unless_allowed(kv, spots, negate, binary):
    for row, col, value in spots:
        kv.vectors[row % len(kv), col % kv.vector_size] = -value if negate else value
    path = scratch("v.bin" if binary else "v.txt")
    kv.save_word2vec_format(path, binary=binary)
    first_bad = int(np.flatnonzero(~np.isfinite(kv.vectors).all(axis=1))[0])
    place = "byte offset" if binary else f"line {first_bad + 2}:"
    with pytest.raises(ValueError, match=f"{place}.*{'NaN or infinite'}.*allow_nonfinite=True"):
        KeyedVectors.load_word2vec_format(path, binary=binary)
    got = KeyedVectors.load_word2vec_format(path, binary=binary, allow_nonfinite=True)
    np.testing.assert_array_equal(got.vectors, kv.vectors)  # NaN compares equal here


# ---------------------------------------------------------------- arbitrary and damaged input
@FAST
@given(data=st.binary(max_size=300), binary=st.booleans(), no_header=st.booleans())
def test_word2vec_loader_on_arbitrary_bytes(data, binary, no_header):
    path = write("any.bin", data)
    kv = only_value_error(
        lambda: KeyedVectors.load_word2vec_format(
            path, binary=binary, no_header=no_header and not binary
        )
    )
    if kv is not None:
        assert kv.vectors.shape == (len(kv), kv.vector_size)
        assert np.isfinite(kv.vectors).all()
        use(kv)


@FAST
@given(
    kind=st.sampled_from(["txt", "bin"]),
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.binary(min_size=0, max_size=6)), max_size=4),
    cut=st.one_of(st.none(), st.integers(0, 10**6)),
)
def test_word2vec_loader_on_damaged_files(seeds, kind, edits, cut):
    data = bytearray(seeds[1][kind])
    for pos, new in edits:
        pos %= len(data)
        data[pos : pos + len(new)] = new
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    path = write("damaged", bytes(data))
    for unicode_errors in ("strict", "replace"):
        kv = only_value_error(
            lambda ue=unicode_errors: KeyedVectors.load_word2vec_format(
                path, binary=kind == "bin", unicode_errors=ue
            )
        )
        if kv is not None:
            use(kv)


@FAST
@given(data=st.binary(max_size=400), mmap=st.sampled_from([None, "r"]))
def test_native_loaders_on_arbitrary_bytes(data, mmap):
    path = write("any.hsw2v", b"PK\x03\x04" + data)
    only_value_error(lambda: load_bundle(path, mmap=mmap))
    only_value_error(lambda: KeyedVectors.load(path, mmap=mmap))
    only_value_error(lambda: Word2Vec.load(path, mmap=mmap))


@FAST
@given(
    kind=st.sampled_from(["kv", "w2v"]),
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=3),
    cut=st.one_of(st.none(), st.integers(0, 10**6)),
)
def test_damaged_bundles_never_load_as_other_data(seeds, kind, edits, cut):
    original = seeds[1][kind]
    data = bytearray(original)
    for pos, flip in edits:
        data[pos % len(data)] ^= flip
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    path = write("damaged.hsw2v", bytes(data))
    if kind == "kv":
        kv = only_value_error(lambda: KeyedVectors.load(path))
        if kv is not None:  # only a change the format does not cover (e.g. zip comments)
            want = seeds[0]
            assert kv.index_to_key == want.index_to_key
            np.testing.assert_array_equal(kv.vectors, want.vectors)
        only_value_error(lambda: KeyedVectors.load(path, mmap="r"))
    else:
        model = only_value_error(lambda: Word2Vec.load(path))
        if model is not None:
            model.train([model.wv.index_to_key] * 2, total_examples=2, epochs=1)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@FAST
@given(kind=st.sampled_from(["kv", "w2v"]), data=st.data())
def test_crafted_metadata_gives_value_error_or_a_working_model(seeds, kind, data):
    """The zip and the arrays stay valid while meta.json is rewritten: one field of the
    metadata (or of an array's description) is replaced by arbitrary JSON."""
    with zipfile.ZipFile(io.BytesIO(seeds[1][kind])) as zf:
        members = {info.filename: zf.read(info.filename) for info in zf.infolist()}
    doc = json.loads(members["meta.json"])
    where = data.draw(st.sampled_from(["meta", "arrays", "top"]))
    target = doc if where == "top" else doc[where]
    field = data.draw(st.sampled_from(sorted(target)))
    if where == "arrays" and data.draw(st.booleans()):
        target = target[field]
        field = data.draw(st.sampled_from(["dtype", "shape", "sha256"]))
    target[field] = data.draw(JSON)
    members["meta.json"] = json.dumps(doc, allow_nan=True).encode()
    path = scratch("crafted.hsw2v")
    with zipfile.ZipFile(path, "w") as zf:
        for name, payload in members.items():
            zf.writestr(name, payload)
    for mmap in (None, "r"):
        if kind == "kv":
            kv = only_value_error(lambda m=mmap: KeyedVectors.load(path, mmap=m))
            if kv is not None:
                use(kv)
        else:
            model = only_value_error(lambda m=mmap: Word2Vec.load(path, mmap=m))
            if model is not None and mmap is None:
                model.workers = 1
                model.train([model.wv.index_to_key] * 2, total_examples=2, epochs=1)


@FAST
@given(
    lines=st.lists(
        st.tuples(st.text(max_size=5), st.one_of(st.integers(-5, 2**70), st.text(max_size=4))),
        max_size=6,
    )
)
def test_vocab_file_loader(seeds, lines):
    vectors = write("v.txt", seeds[1]["txt"])
    vocab = write("vocab.txt", "".join(f"{w} {c}\n" for w, c in lines).encode("utf8", "replace"))
    kv = only_value_error(lambda: KeyedVectors.load_word2vec_format(vectors, fvocab=vocab))
    if kv is not None:
        assert kv.expandos["count"].dtype == np.int64 and len(kv) == 5


def test_binary_offsets_in_errors_are_exact():
    """A NaN in the third record is reported at that record's first value byte."""
    rows = [[1.0, 2.0], [3.0, 4.0], [5.0, math.nan]]
    body = b"3 2\n" + b"".join(
        w.encode() + b" " + struct.pack("<2f", *r) for w, r in zip("abc", rows, strict=True)
    )
    path = write("nan.bin", body)
    offset = body.index(b"c ") + 2
    with pytest.raises(ValueError, match=f"nan.bin: byte offset {offset}: .*'c'"):
        KeyedVectors.load_word2vec_format(path, binary=True)
