"""Corpora are read once for the vocabulary and once per epoch, as gensim reads them, unless
hsw2v can prove them unchanged (its file readers over unchanged files) or the user marks them
fixed (FixedCorpus); gensim's warning when the totals disagree with what an epoch read."""

import logging
import os
import time

import numpy as np
import pytest
from conftest import CountingCorpus, EpochRecorder, settle
from gensim.models import Word2Vec as GensimWord2Vec

import hsw2v.corpora
from hsw2v import FixedCorpus, LineSentence, PathLineSentences, Text8Corpus, Word2Vec

WORDS = [f"w{i}" for i in range(30)]


def _sentences(seed=0, n=300):
    rng = np.random.default_rng(seed)
    return [[WORDS[i] for i in rng.zipf(1.4, size=8) % 30] for _ in range(n)]


class Reshuffling:
    """A corpus that yields its sentences in a new order on every pass, and notes each order."""

    def __init__(self, sentences):
        self.sentences = sentences
        self.orders = []

    def __iter__(self):
        order = np.random.default_rng(len(self.orders)).permutation(len(self.sentences))
        self.orders.append(order.tolist())
        for i in order:
            yield self.sentences[i]


KW = dict(vector_size=8, min_count=1, workers=1, seed=3, sample=0)


def test_a_reshuffling_iterable_is_read_in_a_new_order_every_epoch():
    hs_corpus, gensim_corpus = Reshuffling(_sentences()), Reshuffling(_sentences())
    Word2Vec(hs_corpus, epochs=3, **KW)
    GensimWord2Vec(gensim_corpus, epochs=3, hs=1, negative=0, **KW)
    # gensim: one pass for the vocabulary, one per epoch, each in its own order; hsw2v alike
    assert len(gensim_corpus.orders) == 4
    assert hs_corpus.orders == gensim_corpus.orders
    assert len({tuple(order) for order in hs_corpus.orders}) == 4
    # and each pass is what trains: the result is that of a corpus re-read every epoch
    reread = Word2Vec(Reshuffling(_sentences()), epochs=3, cache_words=0, **KW)
    model = Word2Vec(Reshuffling(_sentences()), epochs=3, **KW)
    np.testing.assert_array_equal(model.wv.vectors, reread.wv.vectors)
    np.testing.assert_array_equal(model.syn1, reread.syn1)
    once = Word2Vec(FixedCorpus(Reshuffling(_sentences())), epochs=3, **KW)  # first order only
    assert not np.array_equal(model.wv.vectors, once.wv.vectors)


def test_a_list_extended_after_build_vocab_trains_its_new_content_and_warns(caplog):
    results = {}
    for name, cls, extra in (
        ("hsw2v", Word2Vec, {}),
        ("gensim", GensimWord2Vec, {"hs": 1, "negative": 0}),
    ):
        sentences = _sentences(1, 200)
        model = cls(**KW, **extra)
        model.build_vocab(sentences)
        sentences.extend(_sentences(2, 150))  # after build_vocab, in place
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            _, raw = model.train(sentences, total_examples=model.corpus_count, epochs=2)
        warned = [r.getMessage() for r in caplog.records if "did not equal" in r.getMessage()]
        results[name] = raw, len(warned), warned[0].split(":", 1)[1] if warned else None
    assert results["hsw2v"] == results["gensim"]
    assert results["hsw2v"] == (
        2 * 350 * 8,
        2,
        " supplied example count (350) did not equal expected count (200)",
    )


def test_a_wrong_total_words_warns_with_gensims_words_line(caplog):
    sentences = _sentences()
    model = Word2Vec(**KW)
    model.build_vocab(sentences)
    with caplog.at_level(logging.WARNING):
        model.train(sentences, total_words=model.corpus_total_words + 5, epochs=1)
    assert any(
        "supplied raw word count (2400) did not equal expected count (2405)" in r.getMessage()
        for r in caplog.records
    )
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        model.train(sentences, total_examples=model.corpus_count, epochs=1)
    assert not [r for r in caplog.records if "did not equal" in r.getMessage()]


@pytest.fixture
def opens(monkeypatch):
    """Count the files hsw2v's corpus readers open (the real files are opened)."""
    opened = []
    real = hsw2v.corpora.open_source

    def counting(source, *args, **kwargs):
        opened.append(os.fspath(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(hsw2v.corpora, "open_source", counting)
    return opened


def _reader(kind, tmp_path):
    text = "\n".join(" ".join(s) for s in _sentences()) + "\n"
    if kind == "PathLineSentences":
        folder = tmp_path / "parts"
        folder.mkdir()
        lines = text.splitlines(keepends=True)
        for k in range(3):
            (folder / f"{k}.txt").write_text("".join(lines[k::3]))
            settle(folder / f"{k}.txt")
        return PathLineSentences(folder), folder / "1.txt", 3
    path = tmp_path / "c.txt"
    path.write_text(text.replace("\n", " ") if kind == "Text8Corpus" else text)
    settle(path)
    corpus = (
        Text8Corpus(path, max_sentence_length=8) if kind == "Text8Corpus" else LineSentence(path)
    )
    return corpus, path, 1


READERS = ["LineSentence", "PathLineSentences", "Text8Corpus"]


@pytest.mark.parametrize("kind", READERS)
def test_an_unchanged_file_corpus_is_read_once(tmp_path, opens, kind):
    corpus, _, files = _reader(kind, tmp_path)
    epochs = EpochRecorder()
    model = Word2Vec(**KW)
    model.build_vocab(corpus)
    model.train(corpus, total_examples=model.corpus_count, epochs=3, callbacks=[epochs])
    assert len(opens) == files  # the vocabulary's pass only
    reread = Word2Vec(corpus, epochs=3, cache_words=0, **KW)  # the same training
    np.testing.assert_array_equal(model.wv.vectors, reread.wv.vectors)
    # a new reader of the same kind over the same unchanged files is the same corpus
    model.build_vocab(corpus)
    del opens[:]
    model.train(_again(corpus), total_examples=model.corpus_count, epochs=2)
    assert opens == []
    assert epochs.from_memory == [True, True, True]


def _again(corpus):
    """A new reader equal to ``corpus``."""
    if isinstance(corpus, Text8Corpus):
        return Text8Corpus(corpus.fname, corpus.max_sentence_length)
    return type(corpus)(corpus.source, corpus.max_sentence_length, corpus.limit)


@pytest.mark.parametrize("kind", READERS)
@pytest.mark.parametrize("change", ["append", "same size, same mtime"])
def test_a_modified_file_is_read_again(tmp_path, opens, kind, change):
    corpus, path, files = _reader(kind, tmp_path)
    model = Word2Vec(**KW)
    model.build_vocab(corpus)
    stamp = os.stat(path).st_mtime_ns
    text = path.read_text()
    if change == "append":
        path.write_text(text + ("w1 " * 8).strip() + ("\n" if kind != "Text8Corpus" else ""))
        settle(path, age_seconds=60)  # a new size and mtime, but not a recent one
    else:
        time.sleep(0.05)  # past the file system's timestamp tick since settle() set the ctime
        path.write_text(text.replace("w1", "w9"))
        os.utime(path, ns=(stamp, stamp))  # only the ctime tells
    epochs = EpochRecorder()
    _, raw = model.train(corpus, total_examples=model.corpus_count, epochs=3, callbacks=[epochs])
    assert len(opens) == 2 * files  # read again, then unchanged
    assert raw == 3 * sum(len(s) for s in corpus)
    assert epochs.from_memory == [False, True, True]


def test_a_file_modified_between_epochs_is_read_again(tmp_path, opens):
    path = tmp_path / "c.txt"
    path.write_text("a b c d\n" * 100)
    settle(path)

    model = Word2Vec(**KW)
    corpus = LineSentence(path)
    model.build_vocab(corpus)
    epochs = EpochRecorder(lambda epoch: path.write_text("a\n"))
    _, raw = model.train(corpus, total_examples=100, epochs=3, callbacks=[epochs])
    assert raw == 400 + 1 + 1
    assert epochs.from_memory == [True, False, False]


def test_a_recently_modified_file_is_read_every_epoch(tmp_path, opens):
    """Modified in the last two seconds: a same-size rewrite within one timestamp tick could
    not be told apart, so the file is not trusted."""
    path = tmp_path / "c.txt"
    path.write_text("a b c d\n" * 100)
    model = Word2Vec(LineSentence(path), epochs=2, **KW)
    assert len(opens) == 3
    assert model.latest_epoch_report.from_memory is False


def test_readers_with_their_own_iter_or_a_file_object_are_read_every_epoch(tmp_path, opens):
    path = tmp_path / "c.txt"
    path.write_text("a b c d\n" * 100)
    settle(path)

    class Lowered(LineSentence):
        def __iter__(self):
            for sentence in super().__iter__():
                yield [word.lower() for word in sentence]

    Word2Vec(Lowered(path), epochs=2, **KW)
    assert len(opens) == 3
    with open(path, "rb") as handle:
        reads = CountingCorpus(LineSentence(handle))
        Word2Vec(reads, epochs=2, **KW)
    assert reads.reads == 3


def test_a_fixed_corpus_is_read_once():
    counted = CountingCorpus(_sentences())
    epochs = EpochRecorder()
    model = Word2Vec(FixedCorpus(counted), epochs=3, callbacks=[epochs], **KW)
    assert counted.reads == 1
    plain = CountingCorpus(_sentences())
    reread = Word2Vec(plain, epochs=3, **KW)
    assert plain.reads == 4  # without the mark: gensim's passes
    np.testing.assert_array_equal(model.wv.vectors, reread.wv.vectors)
    # a corpus too large for cache_words is read every epoch, mark or not
    counted = CountingCorpus(_sentences())
    Word2Vec(FixedCorpus(counted), epochs=3, cache_words=100, **KW)
    assert counted.reads == 4
    assert epochs.from_memory == [True, True, True]


def test_fixed_corpus_rejects_what_cannot_be_read_twice():
    with pytest.raises(TypeError, match="one-shot iterator"):
        FixedCorpus(iter([["a"]]))
    with pytest.raises(TypeError, match="iterable of sentences"):
        FixedCorpus("a b c")
