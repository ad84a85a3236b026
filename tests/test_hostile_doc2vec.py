"""Hostile input to Doc2Vec: tags, its own settings and infer_vector's arguments are refused
before any training, with errors that say what was wrong and what to do."""

from __future__ import annotations

import numpy as np
import pytest

from hsw2v import Doc2Vec, TaggedDocument, persist
from hsw2v.keyedvectors._wmd import available_memory
from hsw2v.vocab import UnencodableTokenError

S = [[f"w{j % 7}" for j in range(i % 5 + 3)] for i in range(200)]
SMALL = {"vector_size": 8, "min_count": 1, "workers": 1, "epochs": 1}


def tagged(bad_tag, at=3):
    """S's documents tagged by their number, document ``at`` by ``bad_tag``."""
    return [TaggedDocument(s, [bad_tag if i == at else i]) for i, s in enumerate(S)]


@pytest.fixture
def good_file(tmp_path):
    """A saved model's path and its bytes: a refused build must leave it as it was."""
    path = tmp_path / "model.hsw2v"
    Doc2Vec(tagged(3), **SMALL).save(str(path))
    return path, path.read_bytes()


@pytest.mark.parametrize(
    "tag, type_name",
    [
        (1.5, "float"),
        (None, "NoneType"),
        ((1, 2), "tuple"),
        (np.float64(2.0), "float64"),
        (b"x", "bytes"),
        (frozenset({1}), "frozenset"),
    ],
)
def test_a_tag_neither_int_nor_str_is_refused_when_the_vocabulary_is_built(tag, type_name):
    model = Doc2Vec(**SMALL)
    with pytest.raises(TypeError) as caught:
        model.build_vocab(tagged(tag))
    message = str(caught.value)
    assert f"document #3 has the tag {tag!r}" in message
    assert f"of type {type_name}" in message and "use int or str tags" in message
    assert len(model.dv) == 0 and model.train_count == 0


@pytest.mark.parametrize("tag", [True, False, np.bool_(True)])
def test_a_bool_tag_is_refused_and_the_error_says_it_is_not_an_int_tag(tag):
    with pytest.raises(TypeError, match=r"a bool is not an int tag here: use 0 or 1, or a str"):
        Doc2Vec(tagged(tag), **SMALL)


def test_a_refused_tag_leaves_a_saved_file_as_it_was(good_file):
    path, before = good_file
    for tag in (None, b"x", "bad\udcff"):
        with pytest.raises((TypeError, ValueError)):
            Doc2Vec(tagged(tag), **SMALL).save(str(path))
    assert path.read_bytes() == before
    assert Doc2Vec.load(str(path)).dv.index_to_key == list(range(200))


def test_a_str_tag_with_a_lone_surrogate_is_refused_as_words_are():
    with pytest.raises(UnencodableTokenError) as caught:
        Doc2Vec(tagged("bad\udcff"), **SMALL)
    message = str(caught.value)
    assert "document #3 has the tag 'bad\\udcff'" in message
    assert "lone surrogate" in message and "errors='replace'" in message
    assert caught.value.token == "bad\udcff"


def test_int_and_str_tags_still_train_save_and_load(tmp_path):
    docs = tagged(np.int64(250)) + [TaggedDocument(["w1", "w2"], [np.str_("news"), "é"])]
    model = Doc2Vec(docs, **SMALL)
    assert model.dv.index_to_key[-2:] == ["news", "é"] and len(model.dv) == 253
    assert all(type(key) in (int, str) for key in model.dv.index_to_key)
    model.save(str(tmp_path / "m.hsw2v"))
    loaded = Doc2Vec.load(str(tmp_path / "m.hsw2v"))
    assert loaded.dv.index_to_key == model.dv.index_to_key


def test_save_refuses_a_dv_key_load_would_refuse_and_keeps_the_old_file(good_file):
    path, before = good_file
    model = Doc2Vec(tagged(3), **SMALL)
    model.dv.index_to_key[5] = (5, 5)
    with pytest.raises(ValueError, match=r"not saved to .*dv_keys are not ints and strs"):
        model.save(str(path))
    model.dv.index_to_key[5] = "bad\udcff"
    with pytest.raises(ValueError, match=r"not saved to .*lone surrogate"):
        model.save(str(path))
    assert path.read_bytes() == before


@pytest.mark.parametrize("lookup", [lambda m: m.dv[None], lambda m: m[None], lambda m: m.dv[1.5]])
def test_looking_up_a_key_that_is_no_key_says_what_a_key_is(lookup):
    model = Doc2Vec(tagged(3), **SMALL)
    with pytest.raises(TypeError, match=r"a key is a str or an int \(or give a list of keys\)"):
        lookup(model)


@pytest.mark.parametrize("value", [-1, "x", None, 1.5, 2**31, True])
def test_dm_tag_count_is_checked_by_the_constructor(value):
    with pytest.raises(ValueError, match=r"dm_tag_count must be an integer in \[0, 2147483647\]"):
        Doc2Vec(dm_tag_count=value)


@pytest.mark.parametrize("value", [0, 1, 5, np.int64(3)])
def test_every_dm_tag_count_the_constructor_takes_saves_and_loads(value, tmp_path):
    model = Doc2Vec(tagged(3), dm_tag_count=value, **SMALL)
    model.save(str(tmp_path / "m.hsw2v"))
    assert Doc2Vec.load(str(tmp_path / "m.hsw2v")).dm_tag_count == int(value)


def test_documents_without_any_tag_are_refused_before_training(good_file):
    path, before = good_file
    model = Doc2Vec(**SMALL)
    with pytest.raises(ValueError) as caught:
        model.build_vocab([TaggedDocument(s, []) for s in S])
    message = str(caught.value)
    assert "none of the 200 documents has a tag" in message
    assert "TaggedDocument(words, [i])" in message and "use Word2Vec" in message
    assert model.train_count == 0 and path.read_bytes() == before
    some = [TaggedDocument(s, [] if i % 2 else [i // 2]) for i, s in enumerate(S)]
    assert len(Doc2Vec(some, **SMALL).dv) == 100  # a document without tags is fine


@pytest.mark.parametrize(
    "name, value",
    [
        ("dm", 2),
        ("dm", "yes"),
        ("dm", -1),
        ("dbow_words", -1),
        ("dbow_words", 2),
        ("dm_mean", "x"),
        ("dm_mean", 2),
        ("dm_concat", "no"),
        ("dm_concat", 0.5),
    ],
)
def test_doc2vec_flags_must_be_0_or_1(name, value):
    with pytest.raises(ValueError) as caught:
        Doc2Vec(**{name: value})
    assert str(caught.value) == f"{name} must be 0 or 1, got {value!r}"


@pytest.mark.parametrize(
    "flags, dm, dbow_words, cbow_mean",
    [
        ({"dm": True, "dm_mean": None}, True, 0, 1),
        ({"dm": np.bool_(False), "dbow_words": np.int64(1)}, False, 1, 1),
        ({"dm": 1, "dm_mean": np.False_}, True, 0, 0),
        ({"dm": 0, "dbow_words": True, "dm_concat": False}, False, 1, 1),
    ],
)
def test_doc2vec_flags_take_bools_and_numpy_values(flags, dm, dbow_words, cbow_mean):
    model = Doc2Vec(tagged(3), **flags, **SMALL)
    assert (model.dm, model.dbow_words, model.cbow_mean) == (dm, dbow_words, cbow_mean)
    assert type(model.dbow_words) is int and type(model.cbow_mean) is int


def test_dm_concat_1_is_still_refused_as_not_supported():
    with pytest.raises(NotImplementedError, match="dm_concat=1 is not supported"):
        Doc2Vec(dm_concat=True)


def test_load_refuses_a_file_whose_doc2vec_flags_are_out_of_range(tmp_path):
    path = tmp_path / "m.hsw2v"
    Doc2Vec(tagged(3), dm=0, dbow_words=1, **SMALL).save(str(path))
    meta, arrays = persist.load_bundle(str(path), kind="Doc2Vec")
    for name, value, match in [
        ("dbow_words", 2, "dbow_words must be 0 or 1, got 2"),
        ("dm_tag_count", -1, r"dm_tag_count must be an integer in \[0, 2147483647\], got -1"),
    ]:
        bad = tmp_path / f"{name}.hsw2v"
        persist.save_bundle(str(bad), "Doc2Vec", {**meta, name: value}, dict(arrays))
        with pytest.raises(ValueError, match=match):
            Doc2Vec.load(str(bad))


def test_flags_assigned_after_construction_are_checked_by_train_and_save(good_file):
    path, before = good_file
    model = Doc2Vec(tagged(3), **SMALL)
    model.dbow_words = 2
    with pytest.raises(ValueError, match="dbow_words must be 0 or 1, got 2"):
        model.train(tagged(3), total_examples=200, epochs=1)
    with pytest.raises(ValueError, match=r"not saved to .*dbow_words must be 0 or 1, got 2"):
        model.save(str(path))
    assert path.read_bytes() == before


@pytest.mark.parametrize("tag", [10**12, 2**63, np.uint64(2**64 - 1), 2**31 - 1])
def test_an_int_tag_past_the_rows_a_model_can_hold_is_refused(tag):
    with pytest.raises(ValueError) as caught:
        Doc2Vec(tagged(tag), **SMALL)
    message = str(caught.value)
    rows = int(tag) + 1
    assert f"document #3 has the int tag {int(tag)}" in message
    assert f"needs {rows:,} document rows of vector_size=8 floats ({rows * 32:,} bytes)" in message
    assert "2,147,483,647 rows" in message and "str tags" in message


@pytest.mark.skipif(available_memory() is None, reason="the system does not say its free memory")
def test_an_int_tag_whose_rows_exceed_the_memory_available_is_refused():
    model = Doc2Vec(vector_size=4096, min_count=1, workers=1)
    with pytest.raises(MemoryError) as caught:
        model.build_vocab(tagged(2**31 - 2))
    message = str(caught.value)
    assert "2,147,483,647 document rows of vector_size=4096 floats" in message
    assert "the largest int tag, 2147483646, is a row" in message
    assert "bytes of memory are available" in message and "str tags" in message
    assert len(model.dv) == 0


@pytest.fixture(scope="module")
def trained():
    return Doc2Vec(tagged(3), **SMALL)


@pytest.mark.parametrize(
    "words, type_name",
    [([b"w1", b"w2"], "bytes"), ([1, 2], "int"), (["w1", None], "NoneType")],
)
def test_infer_vector_refuses_tokens_that_are_not_str(trained, words, type_name):
    with pytest.raises(TypeError) as caught:
        trained.infer_vector(words)
    message = str(caught.value)
    assert f"doc_words holds a token of type {type_name}" in message
    assert "list of str tokens, as in training" in message


def test_infer_vector_of_a_tagged_document_says_to_pass_its_words(trained):
    doc = TaggedDocument(["w1", "w2"], [0])
    with pytest.raises(
        TypeError, match=r"doc_words is a TaggedDocument: .*infer_vector\(doc.words\)"
    ):
        trained.infer_vector(doc)
    with pytest.raises(TypeError, match=r"doc_words is a NoneType"):
        trained.infer_vector(None)


@pytest.mark.parametrize("epochs", [2.5, "3", True])
def test_infer_vector_epochs_must_be_an_integer(trained, epochs):
    with pytest.raises(TypeError, match=r"infer_vector's epochs must be an integer"):
        trained.infer_vector(["w1", "w2"], epochs=epochs)


def test_infer_vector_takes_numpy_words_and_epochs(trained):
    plain = trained.infer_vector(["w1", "w2"], epochs=3)
    assert np.array_equal(trained.infer_vector([np.str_("w1"), "w2"], epochs=np.int64(3)), plain)
