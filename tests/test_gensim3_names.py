"""gensim 3's attribute names raise an AttributeError naming the gensim 4 replacement, as
gensim 4 does; other missing names keep the plain message, and hasattr() stays False."""

import copy
import pickle

import pytest

from hsw2v import KeyedVectors, Word2Vec
from hsw2v._gensim.names import RENAMED


@pytest.fixture(scope="module")
def model():
    return Word2Vec([["a", "b", "c"]] * 10, vector_size=4, min_count=1, epochs=1, workers=1)


@pytest.mark.parametrize(
    "kind,name,replacement",
    [
        ("kv", "vocab", "key_to_index"),
        ("kv", "index2word", "index_to_key"),
        ("kv", "index2entity", "index_to_key"),
        ("kv", "vectors_norm", "get_normed_vectors()"),
        ("kv", "syn0", "vectors"),
        ("kv", "syn0norm", "get_normed_vectors()"),
        ("model", "syn0", "model.wv.vectors"),
        ("model", "vocab", "key_to_index"),
        ("model", "index2word", "model.wv.index_to_key"),
        ("model", "syn0_lockf", "model.wv.vectors_lockf"),
        ("model", "iter", "model.epochs"),
        ("model", "size", "model.vector_size"),
        ("model", "most_similar", "model.wv.most_similar()"),
        ("model", "similarity", "model.wv.similarity()"),
        ("model", "wmdistance", "model.wv.wmdistance()"),
    ],
)
def test_gensim3_name_names_its_replacement(model, kind, name, replacement):
    obj = model.wv if kind == "kv" else model
    with pytest.raises(AttributeError, match="Migrating-from-Gensim-3.x-to-4") as info:
        getattr(obj, name)
    assert replacement in str(info.value) and repr(name) in str(info.value)
    assert not hasattr(obj, name)


def test_every_hint_is_reachable_and_other_names_stay_plain(model):
    for kind, obj in (("kv", model.wv), ("model", model)):
        for name in RENAMED[kind]:
            assert not hasattr(obj, name), name
        with pytest.raises(AttributeError) as info:
            obj.no_such_thing  # noqa: B018
        assert str(info.value) == f"{type(obj).__name__!r} object has no attribute 'no_such_thing'"


def test_copy_and_pickle_are_unaffected(model):
    kv = KeyedVectors(3)
    kv.add_vectors(["x"], [[1.0, 2.0, 3.0]])
    for obj in (kv, copy.deepcopy(kv), pickle.loads(pickle.dumps(kv))):
        assert obj["x"].tolist() == [1.0, 2.0, 3.0]
    assert copy.deepcopy(model).wv.index_to_key == model.wv.index_to_key
