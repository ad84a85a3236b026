"""``corpus_file`` read ahead (``_corpus_file`` design note I): where a core is spare for each
range, a thread of its own reads the range into jobs one job ahead of the range's training.
The jobs, their order, rates and random streams are the one-thread read's, so the weights
are the same bits; errors met by the reading thread reach the caller, and a stop ends both
threads."""

import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import planted_corpus, settle

from hsw2v import Doc2Vec, FastText, Word2Vec
from hsw2v._kernels._corpus_file import FileTrainer, Vocab
from hsw2v.running import passes
from hsw2v.running.objectives import outputs_of
from hsw2v.running.schedule import Schedule
from hsw2v.running.threads import Workers
from hsw2v.running.trainer import trainer_settings


def read_ahead(monkeypatch, on: bool) -> None:
    """Make ``train()`` read ahead (as on a host with cores to spare) or not (one core)."""
    monkeypatch.setattr(passes, "usable_cpus", lambda: 64 if on else 1)


def corpus(tmp_path, n_sentences=700):
    sentences, _ = planted_corpus(n_sentences=n_sentences, length=12)
    path = tmp_path / "c.txt"
    lines = [" ".join(s) for s in sentences]
    lines[100] = ""  # a line without words: no sentence, but a document (Doc2Vec)
    path.write_text("\n".join(lines) + "\nunknownword the\n", encoding="utf-8")
    settle(path)  # unchanged since written: later epochs may replay the kept ids
    return str(path)


def weights(model) -> dict:
    out = {"vectors": model.wv.vectors}
    for name in ("syn1", "syn1neg"):
        if getattr(model, name, None) is not None and getattr(model, name).size:
            out[name] = getattr(model, name)
    if isinstance(model, Doc2Vec):
        out["docs"] = model.dv.vectors
    if isinstance(model, FastText):
        out["ngrams"] = model.wv.vectors_ngrams
    return out


MODELS = {
    "sg-hs": (Word2Vec, dict(sg=1, hs=1, negative=0)),
    "cbow-ns": (Word2Vec, dict(sg=0, hs=0, negative=5)),
    "sg-hs+ns": (Word2Vec, dict(sg=1, hs=1, negative=3)),
    "pv-dm-hs": (Doc2Vec, dict(dm=1, hs=1, negative=0)),
    "pv-dbow-ns-words": (Doc2Vec, dict(dm=0, hs=0, negative=5, dbow_words=1)),
    "fasttext-sg-hs": (FastText, dict(sg=1, hs=1, negative=0, bucket=5000)),
    "fasttext-cbow-ns": (FastText, dict(sg=0, hs=0, negative=5, bucket=5000)),
}


@pytest.mark.parametrize("cache_words", [0, 10**8])  # every epoch read, or the first only
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_reading_ahead_trains_the_same_bits(tmp_path, monkeypatch, name, workers, cache_words):
    path = corpus(tmp_path)
    cls, settings = MODELS[name]
    kw = dict(vector_size=12, min_count=2, window=3, workers=workers, epochs=2, seed=3,
              batch_words=200, cache_words=cache_words, **settings)  # fmt: skip
    models = []
    for on in (False, True):
        read_ahead(monkeypatch, on)
        models.append(cls(corpus_file=path, **kw))
    plain, ahead = (weights(m) for m in models)
    assert plain.keys() == ahead.keys()
    if workers == 1:  # one range: exactly the one-thread read's jobs, in its order
        for key in plain:
            np.testing.assert_array_equal(ahead[key], plain[key], err_msg=key)
    else:  # two ranges race (Hogwild): the same shapes, finite and trained
        for key in plain:
            assert ahead[key].shape == plain[key].shape
            assert np.isfinite(ahead[key]).all()
    assert models[1].corpus_total_words == models[0].corpus_total_words


def test_reading_ahead_counts_every_word_and_sentence(tmp_path, monkeypatch):
    path = corpus(tmp_path)
    read_ahead(monkeypatch, True)
    model = Word2Vec(vector_size=8, min_count=1, workers=1, batch_words=150, seed=1)
    model.build_vocab(corpus_file=path)
    trained, raw = model.train(corpus_file=path, total_words=model.corpus_total_words,
                               epochs=1)  # fmt: skip
    assert raw == model.corpus_total_words
    assert 0 < trained <= raw


@pytest.mark.parametrize("where", ["first job", "a later job", "the last line"])
def test_invalid_utf8_met_while_reading_ahead_says_where(tmp_path, monkeypatch, where):
    """The reading thread meets the error; the training thread raises it, naming the byte,
    and the previous weights stay usable."""
    read_ahead(monkeypatch, True)
    good = b"a b c d e\n" * {"first job": 3, "a later job": 400, "the last line": 800}[where]
    tail = b"a b c d e\n" * (0 if where == "the last line" else 400)
    path = tmp_path / "bad.txt"
    path.write_bytes(good + b"d \xff e\n" + tail)
    model = Word2Vec(vector_size=4, min_count=1, workers=1, batch_words=100, seed=1)
    model.build_vocab([["a", "b", "c", "d", "e"]])
    before = model.wv.vectors.copy()
    with pytest.raises(UnicodeDecodeError, match=f"at byte {len(good) + 2}"):
        model.train(corpus_file=str(path), total_words=10, epochs=1)
    assert np.isfinite(model.wv.vectors).all()
    assert model.wv.vectors.shape == before.shape
    model.train([["a", "b", "c"]] * 20, total_examples=20, epochs=1)  # still trains


def file_trainer(path, model, read_ahead, batch_words=100):
    trainer = trainer_settings(model).build(model._input_matrix(), *outputs_of(model).values())
    schedule = Schedule(0.025, 0.0001, 1, model.corpus_total_words, True, 1)
    return FileTrainer(path, trainer, Vocab(model.wv.key_to_index), 1, batch_words, 10_000,
                       schedule, read_ahead=read_ahead, reader_pool=Workers)  # fmt: skip


def test_a_stop_ends_the_reading_and_the_training_thread(tmp_path):
    """``stop()`` from another thread, as Ctrl-C or another range's error gives it: the range
    ends after its current job, having trained part of its jobs, and no thread is left."""
    sentences, _ = planted_corpus(n_sentences=60_000, length=12)
    path = tmp_path / "big.txt"
    path.write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf-8")
    model = Word2Vec(vector_size=50, min_count=1, workers=1, sg=1)
    model.build_vocab(corpus_file=str(path))
    ft = file_trainer(str(path), model, read_ahead=True)
    assert ft.read_ahead
    ft.begin_epoch(0)
    done = threading.Event()

    def work():
        ft.train_range(0, 0, path.stat().st_size)
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    while ft.progress()[3] < 3:  # some jobs trained
        assert worker.is_alive() or done.is_set()
        if done.is_set():
            break
        threading.Event().wait(0.001)
    ft.stop()
    worker.join(timeout=60)
    assert done.is_set() and not worker.is_alive()
    raw, kept, n_sentences, jobs = ft.progress()
    assert 3 <= jobs and n_sentences < 60_000  # stopped before the end
    assert not any(t.name.startswith("hsw2v-read") for t in threading.enumerate())
    ft.end_epoch()


def test_one_range_read_ahead_equals_one_range_read_inline(tmp_path):
    """FileTrainer's two forms over one range, on copies of one model: the same bits, the
    same counts and losses."""
    path = corpus(tmp_path)
    results = []
    for ahead in (False, True):
        model = Word2Vec(vector_size=10, min_count=1, workers=1, seed=2, hs=1, negative=0,
                         compute_loss=True)  # fmt: skip
        model.build_vocab(corpus_file=path)
        ft = file_trainer(path, model, read_ahead=ahead, batch_words=70)
        ft.begin_epoch(0)
        loss = ft.train_range(0, 0, len(open(path, "rb").read()))
        ft.end_epoch()
        results.append((model.wv.vectors.copy(), model.syn1.copy(), ft.progress(), loss))
    (v0, s0, p0, l0), (v1, s1, p1, l1) = results
    np.testing.assert_array_equal(v0, v1)
    np.testing.assert_array_equal(s0, s1)
    assert p0 == p1 and p0[3] > 10 and l0 == l1 > 0


def test_a_range_reader_is_not_a_public_entry():
    """Made from Python, a RangeReader holds no range: reading it is an error, not a crash."""
    code = """
from hsw2v._kernels._corpus_file import RangeReader
try:
    RangeReader().read()
except RuntimeError as e:
    print("refused:", e)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: a RangeReader reads once" in done.stdout


def test_read_ahead_without_a_pool_to_wait_for_its_reader_is_refused(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("a b c\n" * 50)
    model = Word2Vec(min_count=1, vector_size=8, seed=1)
    model.build_vocab(corpus_file=str(path))
    trainer = trainer_settings(model).build(model._input_matrix(), *outputs_of(model).values())
    schedule = Schedule(0.025, 0.0001, 1, model.corpus_total_words, True, 1)
    with pytest.raises(ValueError, match="read_ahead=True needs reader_pool"):
        FileTrainer(str(path), trainer, Vocab(model.wv.key_to_index), 1, 100, 10_000, schedule,
                    read_ahead=True)  # fmt: skip
