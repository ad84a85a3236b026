"""Hostile input, lost-file class: a save that reports success always loads, a refused call
leaves the model (and its file) as it was, every route into the vocabulary accepts the same
keys, ``mmap='r+'`` is refused, and saves keep symbolic links, permissions, long names and
leave no temporary file behind after Ctrl-C."""

from __future__ import annotations

import os
import stat
import threading

import numpy as np
import pytest

from hsw2v import HierarchicalSoftmax, KeyedVectors, Word2Vec, persist
from hsw2v.persist import load_bundle

rng = np.random.default_rng(0)
WORDS = [f"w{i}" for i in range(80)]
S = [[WORDS[j] for j in rng.integers(0, 80, 30)] for _ in range(400)]


def small_model(**kw):
    params = dict(vector_size=16, min_count=1, workers=2, epochs=1, seed=3)
    params.update(kw)
    return Word2Vec(S, **params)


def leftovers(folder) -> list:
    return sorted(name for name in os.listdir(folder) if ".tmp" in name)


# ---------------------------------------------------------------- 5. save during train()
@pytest.mark.parametrize("sg", [0, 1])
def test_saves_from_another_thread_during_train_always_load(sg, tmp_path):
    model = small_model(sg=sg, negative=5)
    done = threading.Event()
    saved, failed = [], []

    def saver():
        i = 0
        while not done.is_set():
            path = tmp_path / f"c{i}.hsw2v"
            try:
                model.save(path)
                saved.append(path)
            except Exception as exc:  # noqa: BLE001 - reported below
                failed.append(repr(exc))
            i += 1

    thread = threading.Thread(target=saver)
    thread.start()
    try:
        while len(saved) + len(failed) < 6:  # train while the checkpoints are written
            model.train(S * 2, total_examples=len(S) * 2, epochs=1)
    finally:
        done.set()
        thread.join()
    assert not failed, failed[:3]
    assert len(saved) >= 6
    for path in saved:  # every checkpoint that reported success loads, checksums verified
        loaded = Word2Vec.load(path)
        assert loaded.wv.vectors.shape == model.wv.vectors.shape
    kv_path = tmp_path / "kv.hsw2v"
    model.wv.save(kv_path)
    KeyedVectors.load(kv_path)


def test_the_digest_is_that_of_the_bytes_written_while_the_array_changes(tmp_path):
    # a writer thread changes the array while the bundle writer copies it chunk by chunk
    arr = np.zeros((2048, 512), dtype=np.float32)  # 4 MiB
    stop = threading.Event()

    def scribble():
        k = 0
        while not stop.is_set():
            arr[k % 2048] += 1.0
            k += 1

    thread = threading.Thread(target=scribble)
    thread.start()
    old_chunk = persist._CHUNK
    persist._CHUNK = 4096  # many chunks: many chances for a change between them
    try:
        for i in range(5):
            persist.save_bundle(tmp_path / f"b{i}.hsw2v", "Demo", {}, {"a": arr})
    finally:
        persist._CHUNK = old_chunk
        stop.set()
        thread.join()
    for i in range(5):
        load_bundle(tmp_path / f"b{i}.hsw2v")  # checksums verified


# ---------------------------------------------------------------- 6. refused calls
@pytest.mark.parametrize(
    "call",
    [
        dict(start_alpha=float("nan")),
        dict(start_alpha=float("inf")),
        dict(start_alpha=-1.0),
        dict(end_alpha=float("nan")),
        dict(start_alpha=0.01, end_alpha=0.5),
    ],
)
def test_a_refused_train_call_leaves_the_model_and_its_file_unchanged(call, tmp_path):
    model = small_model()
    path = tmp_path / "good.hsw2v"
    model.save(path)
    settings = (model.alpha, model.min_alpha, model.epochs, model.compute_loss)
    with pytest.raises(ValueError, match="alpha"):
        model.train(S, total_examples=len(S), epochs=7, compute_loss=True, **call)
    assert (model.alpha, model.min_alpha, model.epochs, model.compute_loss) == settings
    model.save(path)
    Word2Vec.load(path)


@pytest.mark.parametrize(
    "attr, value",
    [
        ("alpha", float("nan")),
        ("min_alpha", -1.0),
        ("window", 0),
        ("vector_size", 3),
        ("negative", -2),
        ("workers", 10**6),
        ("sample", float("inf")),
    ],
)
def test_save_never_writes_what_load_would_refuse(attr, value, tmp_path):
    model = small_model()
    path = tmp_path / "good.hsw2v"
    model.save(path)
    before = path.read_bytes()
    setattr(model, attr, value)
    with pytest.raises(ValueError, match="Word2Vec.load\\(\\) would refuse this model"):
        model.save(path)
    assert path.read_bytes() == before  # the good file is intact
    assert leftovers(tmp_path) == []


def test_save_refuses_arrays_that_disagree_with_the_vocabulary(tmp_path):
    model = small_model()
    path = tmp_path / "m.hsw2v"
    model.syn1 = model.syn1[:-3]
    with pytest.raises(ValueError, match="would refuse"):
        model.save(path)
    assert not path.exists()


# ---------------------------------------------------------------- 7. vocabulary keys
@pytest.mark.parametrize(
    "freq, error",
    [
        ({1: 3, "a": 2}, TypeError),
        ({b"a": 3, "b": 2}, TypeError),
        ({None: 3, "b": 2}, TypeError),
        ({("a",): 3}, TypeError),
        ({"a\udcff": 3, "b": 2}, ValueError),
    ],
)
def test_every_route_into_the_vocabulary_takes_the_same_keys(freq, error, tmp_path):
    model = Word2Vec(vector_size=8, min_count=1, workers=1)
    with pytest.raises(error, match="token"):
        model.build_vocab_from_freq(freq)
    corpus = [[key for key in freq]] * 3
    with pytest.raises(error, match="token"):
        Word2Vec(vector_size=8, min_count=1, workers=1).build_vocab(corpus)


def test_str_subclass_keys_train_save_and_load(tmp_path):
    model = Word2Vec(vector_size=8, min_count=1, workers=1, epochs=1)
    model.build_vocab_from_freq({np.str_("a"): 5, np.str_("b"): 3})
    assert [type(k) for k in model.wv.index_to_key] == [str, str]
    model.train([["a", "b"]] * 10, total_examples=10, epochs=1)
    model.save(tmp_path / "m.hsw2v")
    assert Word2Vec.load(tmp_path / "m.hsw2v").wv.index_to_key == ["a", "b"]


def test_keys_set_by_hand_are_refused_at_save(tmp_path):
    model = small_model()
    path = tmp_path / "m.hsw2v"
    model.save(path)
    before = path.read_bytes()
    for bad in (7, "x\udc80"):
        model.wv.index_to_key[0] = bad
        with pytest.raises(ValueError, match="would refuse"):
            model.save(path)
        assert path.read_bytes() == before


def test_lone_surrogates_are_refused_at_build_vocab_naming_their_position():
    corpus = [["a", "b"], ["c", "d\udc80e", "a"]]
    with pytest.raises(ValueError, match=r"sentence #1, token #1"):
        Word2Vec(corpus, vector_size=8, min_count=1, workers=1)


# ---------------------------------------------------------------- 8. mmap='r+'
def test_mmap_read_write_is_refused_by_every_loader(tmp_path):
    model = small_model()
    path = tmp_path / "m.hsw2v"
    model.save(path)
    kv_path = tmp_path / "kv.hsw2v"
    model.wv.save(kv_path)
    for load, target in ((Word2Vec.load, path), (KeyedVectors.load, kv_path)):
        with pytest.raises(ValueError, match="mmap='r\\+' is not supported"):
            load(target, mmap="r+")
    copy = Word2Vec.load(path, mmap="c")  # copy on write trains in memory only
    copy.train(S, total_examples=len(S), epochs=1)
    Word2Vec.load(path)  # checksums still hold
    copy.save(tmp_path / "trained.hsw2v")
    Word2Vec.load(tmp_path / "trained.hsw2v")


# ---------------------------------------------------------------- 9. links, modes, names
def savers():
    model = small_model()
    layer = HierarchicalSoftmax.balanced(4, dim=3)
    return {
        "model": (model.save, Word2Vec.load),
        "kv": (model.wv.save, KeyedVectors.load),
        "layer": (layer.save, HierarchicalSoftmax.load),
        "word2vec": (
            lambda p: model.wv.save_word2vec_format(p),
            lambda p: KeyedVectors.load_word2vec_format(p),
        ),
    }


@pytest.mark.parametrize("kind", ["model", "kv", "layer", "word2vec"])
def test_save_through_a_symlink_keeps_the_link_and_the_mode(kind, tmp_path):
    save, load = savers()[kind]
    real_dir = tmp_path / "versions"
    real_dir.mkdir()
    target = real_dir / "v3.model"
    save(target)
    os.chmod(target, 0o600)
    link = tmp_path / "latest.model"
    os.symlink(os.path.join("versions", "v3.model"), link)
    save(link)
    assert os.path.islink(link) and os.readlink(link) == os.path.join("versions", "v3.model")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    load(link)
    load(target)
    assert leftovers(tmp_path) == [] and leftovers(real_dir) == []
    chain = tmp_path / "chain.model"  # a link to a link
    os.symlink(link, chain)
    save(chain)
    assert os.path.islink(chain) and os.path.islink(link)


@pytest.mark.parametrize("kind", ["model", "word2vec"])
@pytest.mark.parametrize("length", [200, 250, 255])
def test_a_file_name_of_legal_length_saves(kind, length, tmp_path):
    save, load = savers()[kind]
    stem = "é" * ((length - 6) // 2)  # two bytes each in UTF-8
    name = stem + "x" * (length - 6 - len(stem.encode())) + ".model"
    assert len(name.encode()) == length
    save(tmp_path / name)
    load(tmp_path / name)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("when", [1, 2, 3])
def test_ctrl_c_during_save_leaves_no_temporary_file_and_the_old_file(when, tmp_path, monkeypatch):
    model = small_model()
    path = tmp_path / "m.hsw2v"
    model.save(path)
    before = path.read_bytes()
    calls = []
    real = persist._write_npy

    def interrupted(out, arr):
        calls.append(1)
        if len(calls) == when:
            raise KeyboardInterrupt
        return real(out, arr)

    monkeypatch.setattr(persist, "_write_npy", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.save(path)
    assert leftovers(tmp_path) == []
    assert path.read_bytes() == before


def test_ctrl_c_while_the_temporary_file_is_removed_still_removes_it(tmp_path, monkeypatch):
    real_unlink = os.unlink
    hits = []

    def unlink(name, *args, **kwargs):
        if not hits:
            hits.append(name)
            raise KeyboardInterrupt  # lands while the failed save cleans up
        return real_unlink(name, *args, **kwargs)

    monkeypatch.setattr(persist.os, "unlink", unlink)
    # the interrupt is raised once the file is gone (chained to the failure it cut short)
    with pytest.raises(KeyboardInterrupt):
        with persist.atomic_file(tmp_path / "x.bin") as (fd, _tmp):
            os.write(fd, b"data" * 1000)
            os.close(fd)
            raise RuntimeError("the write failed")
    assert leftovers(tmp_path) == [] and not (tmp_path / "x.bin").exists()


def test_keyed_vectors_save_never_writes_what_load_would_refuse(tmp_path):
    model = small_model()
    path = tmp_path / "kv.hsw2v"
    model.wv.save(path)
    before = path.read_bytes()
    model.wv.vectors = np.zeros((len(model.wv) + 40, model.vector_size), np.float32)
    with pytest.raises(ValueError, match="KeyedVectors.load\\(\\) would refuse"):
        model.wv.save(path)
    assert path.read_bytes() == before and leftovers(tmp_path) == []


def test_a_layer_with_misshapen_weights_is_not_saved(tmp_path):
    layer = HierarchicalSoftmax.balanced(4, dim=3)
    layer.weights = np.zeros((1, 3), np.float32)
    with pytest.raises(ValueError, match="layer.weights must be"):
        layer.save(tmp_path / "layer.hsw2v")
    assert not (tmp_path / "layer.hsw2v").exists()
