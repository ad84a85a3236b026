"""corpus_file mode: the nogil reader against LineSentence, byte ranges, training and errors."""

import gzip
import os
import time

import numpy as np
import pytest
from conftest import (
    NOISE,
    WEAKENED,
    EpochRecorder,
    cluster_recovery,
    planted_corpus,
    settle,
    weakened_settings,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from hsw2v import LineSentence, Word2Vec
from hsw2v._kernels._corpus_file import (
    Vocab,
    byte_ranges,
    encode_range,
    read_range,
    scan_range_vocab,
    split_line,
)
from hsw2v._kernels._rates import linear_alpha
from hsw2v.running.epochs import iter_jobs
from hsw2v.vocab import scan_counts

# Every character str.split() splits at, and a few that look like spaces but are not.
UNICODE_SPACES = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
NOT_SPACES = "\u200b\u2060\ufeff\x00\x7f"

TRICKY = (
    b"the cat  sat\r\n"  # CRLF, two spaces
    b"\n"  # empty line
    b"\t\tindented\tby tabs \x0b\x0c\n"
    b"   \r\n"  # blank but not empty
    + "caf\u00e9 na\u00efve \u65e5\u672c\u8a9e \U0001f600 x\u00a0y z\u3000w\x1cq\u2028r\n".encode()
    + b"a " * 40  # a line longer than the small batch_words used below
    + b"\n"
    + "\ufeffbom \u200bzero-width\n".encode()
    + b"the end with no final newline"
)


@pytest.fixture
def tricky_file(tmp_path):
    path = tmp_path / "tricky.txt"
    path.write_bytes(TRICKY)
    return str(path)


def _vocab_of(path, min_count=1):
    model = Word2Vec(vector_size=4, min_count=min_count, workers=1)
    model.build_vocab(LineSentence(path))
    return model.wv.key_to_index


# ------------------------------------------------------------------ tokens


@pytest.mark.parametrize(
    "line",
    [
        "a b  c",
        "\tx\r",
        "caf\u00e9\u00a0na\u00efve",
        "one" + UNICODE_SPACES + "two",
        "no" + NOT_SPACES + "split",
        "\U0001f600 \u65e5\u672c",
        "",
        "   ",
    ],
)
def test_split_line_is_str_split(line):
    assert split_line(line.encode()) == [t.encode() for t in line.split()]


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("ab\u00e9\u65e5\U0001f600" + UNICODE_SPACES + NOT_SPACES))
    )
)
def test_split_line_is_str_split_on_random_text(line):
    line = line.replace("\n", "")
    assert split_line(line.encode()) == [t.encode() for t in line.split()]


@pytest.mark.parametrize(
    "raw", [b"\xff", b"ab\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"a\x80b"]
)
def test_split_line_rejects_invalid_utf8_like_the_decoder(raw):
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    with pytest.raises(UnicodeDecodeError):
        split_line(raw)


def test_vocab_table_maps_every_key_and_nothing_else():
    keys = {f"w{i}\u00e9": i for i in range(5000)} | {"": 5000, "\x00": 5001}
    vocab = Vocab({**keys, 7: 99})  # a non-str key cannot come from a file: left out
    assert len(vocab) == len(keys)
    for key, index in keys.items():
        assert vocab.lookup(key.encode()) == index
    assert vocab.lookup(b"w5000\xc3\xa9") == -1
    assert vocab.lookup(b"7") == -1


def test_vocab_table_keeps_long_keys_and_first_ids():
    """Keys of every length around a slot's 16 inline bytes (the longer ones stored apart),
    keys that differ only past their 16th byte, and a key given twice (its first id stays)."""
    keys = {("k" * n) + str(i): 1000 * n + i for n in (1, 7, 8, 15, 16, 17, 40) for i in range(3)}
    keys |= {"x" * 16 + "a": 1, "x" * 16 + "b": 2, "x" * 16: 3}
    vocab = Vocab(keys)
    assert len(vocab) == len(keys)
    for key, index in keys.items():
        assert vocab.lookup(key.encode()) == index
    for missing in ["x" * 16 + "c", "x" * 15, "x" * 17, "k" * 40, "k" * 41 + "0"]:
        assert vocab.lookup(missing.encode()) == -1
    with pytest.raises(ValueError, match="outside 0 to 2\\*\\*31"):
        Vocab({"a": 2**31})


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet="ab\u00e9\u4e2d \t\u3000x", max_size=12), max_size=60),
    st.integers(1, 40),
)
def test_vocab_lookup_of_a_line_is_each_tokens_lookup(pieces, n_known):
    """The grouped lookup of a line's tokens (hashed and prefetched 16 at a time, then
    resolved) gives exactly the known tokens' ids, in order, as one lookup each does."""
    line = " ".join(pieces)
    tokens = line.split()
    known = sorted(set(tokens))[:n_known]
    ids = {key: 7 * k + 1 for k, key in enumerate(known)}
    vocab = Vocab(ids)
    assert [vocab.lookup(t.encode()) for t in tokens] == [ids.get(t, -1) for t in tokens]
    assert vocab.lookup_line(line.encode()) == [ids[t] for t in tokens if t in ids]


def test_linear_alpha_is_the_linear_schedule():
    for epoch, done in [(0, 0), (0, 37), (1, 50), (2, 99), (2, 1000)]:
        progress = (epoch + min(done / 100, 1.0)) / 3
        assert linear_alpha(0.025, 0.0001, epoch, 3, done, 100) == max(
            0.0001, 0.025 - (0.025 - 0.0001) * progress
        )


# ------------------------------------------------------------------ byte ranges


def _lines_with_offsets(data):
    out, offset = [], 0
    for line in data.split(b"\n"):
        out.append((offset, line))
        offset += len(line) + 1
    if data.endswith(b"\n"):
        out.pop()  # nothing after the final newline
    return out


@pytest.mark.parametrize("parts", [1, 2, 3, 7, len(TRICKY)])
def test_ranges_tile_the_file_every_line_exactly_once(tricky_file, parts):
    got = []
    for start, end in byte_ranges(len(TRICKY), parts):
        got += read_range(tricky_file, start, end)
    assert got == _lines_with_offsets(TRICKY)


def test_a_range_starts_at_the_first_line_starting_in_it(tricky_file):
    lines = _lines_with_offsets(TRICKY)
    for start in range(len(TRICKY) + 1):
        expected = [(o, line) for o, line in lines if o >= start]
        assert read_range(tricky_file, start, len(TRICKY)) == expected


def test_a_line_longer_than_the_read_buffer(tmp_path):
    line = b"x" * 3_000_000 + b" y"
    path = tmp_path / "long.txt"
    path.write_bytes(b"a\n" + line + b"\nb")
    assert read_range(str(path), 0, 10**9) == [(0, b"a"), (2, line), (len(line) + 3, b"b")]
    assert read_range(str(path), 1, 10**9)[0] == (2, line)


# ------------------------------------------------------------------ ids and jobs


@pytest.mark.parametrize("batch_words", [5, 17, 10000])
@pytest.mark.parametrize("min_count", [1, 2])
def test_jobs_equal_linesentence_jobs(tricky_file, batch_words, min_count):
    """One range over the whole file gives exactly the iterable path's jobs (ids, sentence
    ends, raw words), unknown words dropped."""
    key_to_index = _vocab_of(tricky_file, min_count)
    got = encode_range(tricky_file, 0, len(TRICKY), Vocab(key_to_index), batch_words)
    expected = list(iter_jobs(LineSentence(tricky_file), key_to_index, batch_words))
    assert len(got) == len(expected)
    for (ids, ends, raw), job in zip(got, expected, strict=True):
        np.testing.assert_array_equal(ids, job.ids)
        np.testing.assert_array_equal(ends, job.ends)
        assert raw == job.raw_words


def _sentences(jobs):
    out = []
    for ids, ends, _ in jobs:
        start = 0
        for end in ends:
            out.append(ids[start:end].tolist())
            start = end
    return out


@pytest.mark.parametrize("parts", [2, 3, 5, 11])
def test_several_ranges_give_every_sentence_once(tricky_file, parts):
    key_to_index = _vocab_of(tricky_file)
    vocab = Vocab(key_to_index)
    got = []
    for start, end in byte_ranges(len(TRICKY), parts):
        got += _sentences(encode_range(tricky_file, start, end, vocab, 7))
    expected = [[key_to_index[t] for t in s] for s in LineSentence(tricky_file)]
    assert got == expected


def test_long_lines_are_chunked_like_linesentence(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text(" ".join(f"w{i % 50}" for i in range(25_003)) + "\nshort line\n")
    key_to_index = _vocab_of(str(path))
    for length in (3, 10000):
        jobs = encode_range(str(path), 0, 10**9, Vocab(key_to_index), 10000, length)
        expected = [
            [key_to_index[t] for t in s]
            for s in LineSentence(str(path), max_sentence_length=length)
        ]
        assert _sentences(jobs) == expected


# ------------------------------------------------------------------ vocabulary scan


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_parallel_scan_equals_the_linesentence_scan(tricky_file, workers):
    counts, total_words, n_sentences, _ = scan_counts(LineSentence(tricky_file))
    model = Word2Vec(vector_size=4, min_count=1, workers=workers)
    assert model.scan_vocab(corpus_file=tricky_file) == (total_words, n_sentences)
    assert model.corpus_count == n_sentences
    assert list(model.raw_vocab.items()) == list(counts.items())  # same first-seen order


def test_scan_range_vocab_of_part_of_a_file(tricky_file):
    start = TRICKY.index(b"caf")
    counts, raw, sentences = scan_range_vocab(tricky_file, start - 3, len(TRICKY))
    lines = TRICKY[start:].decode().split("\n")
    tokens = [t for line in lines for t in line.split()]
    assert raw == len(tokens)
    assert sentences == sum(1 for line in lines if line.split())
    assert sum(counts.values()) == raw and set(counts) == set(tokens)


# ------------------------------------------------------------------ training


@pytest.fixture(scope="module")
def planted_file(tmp_path_factory):
    sentences, clusters = planted_corpus()
    path = tmp_path_factory.mktemp("planted") / "planted.txt"
    path.write_text("\n".join(" ".join(s) for s in sentences) + "\n")
    return str(path), clusters


@pytest.fixture(scope="module")
def planted_noisy_file(tmp_path_factory):
    sentences, clusters = planted_corpus(noise=NOISE)
    path = tmp_path_factory.mktemp("planted") / "planted_noisy.txt"
    path.write_text("\n".join(" ".join(s) for s in sentences) + "\n")
    return str(path), clusters


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("sg", [0, 1])
def test_planted_clusters_are_recovered_from_a_corpus_file(planted_noisy_file, workers, sg):
    """Full training recovers the noisy planted clusters; the weakened controls (one worker:
    ``weakened_settings``) must not."""
    path, clusters = planted_noisy_file
    settings = dict(corpus_file=path, vector_size=32, window=3, min_count=1, sg=sg,
                    workers=workers, epochs=5, sample=0, seed=3)  # fmt: skip
    assert cluster_recovery(Word2Vec(**settings).wv, clusters) > 0.9
    # the controls train with one worker (weakened_settings): the workers=2 case would
    # run the same deterministic trainings again
    for weakened in WEAKENED.values() if workers == 1 else ():
        control = Word2Vec(**weakened_settings(settings, weakened))
        assert cluster_recovery(control.wv, clusters) < 0.9


def test_untrained_vectors_from_a_corpus_file_do_not_recover_clusters(planted_file):
    """The control: the same measure scores near chance (1/6) without training."""
    path, clusters = planted_file
    model = Word2Vec(vector_size=32, min_count=1, workers=2)
    model.build_vocab(corpus_file=path)
    assert cluster_recovery(model.wv, clusters) < 0.4


@pytest.mark.parametrize("sg", [0, 1])
def test_one_worker_trains_exactly_like_the_iterable_path(tmp_path, sg):
    sentences, _ = planted_corpus(n_sentences=600)
    path = tmp_path / "c.txt"
    path.write_text("\n".join(" ".join(s) for s in sentences) + "\nunknownword the\n")
    kw = dict(vector_size=16, min_count=2, sg=sg, workers=1, epochs=2, seed=5, batch_words=500)
    from_file = Word2Vec(corpus_file=str(path), **kw)
    again = Word2Vec(corpus_file=str(path), **kw)
    # the iterable counted as a file is, in words (given sentences too, it counts sentences,
    # as gensim's iterable mode does)
    iterable = Word2Vec(**kw)
    iterable.build_vocab(LineSentence(str(path)))
    iterable.train(LineSentence(str(path)), total_words=iterable.corpus_total_words, epochs=2)
    for other in (again, iterable):
        assert from_file.wv.index_to_key == other.wv.index_to_key
        np.testing.assert_array_equal(from_file.wv.vectors, other.wv.vectors)
        np.testing.assert_array_equal(from_file.syn1, other.syn1)


def test_later_epochs_from_kept_ids_train_like_reading_again(tmp_path):
    """Epochs after the first train the ids each range kept (within cache_words) with the
    same jobs and random streams as reading the file again; a limit too small re-reads."""
    sentences, _ = planted_corpus(n_sentences=400)
    path = tmp_path / "c.txt"
    path.write_text("\n".join(" ".join(s) for s in sentences) + "\n")
    settle(path)  # unchanged since: its ids may be kept
    models = [
        Word2Vec(
            corpus_file=str(path),
            vector_size=8,
            min_count=1,
            workers=1,
            epochs=3,
            seed=4,
            batch_words=300,
            cache_words=cache_words,
        )
        for cache_words in (0, 100, 10**8)
    ]
    for other in models[1:]:
        np.testing.assert_array_equal(models[0].wv.vectors, other.wv.vectors)
        np.testing.assert_array_equal(models[0].syn1, other.syn1)


@pytest.mark.parametrize("cache_words", [0, 10**8])
def test_an_unchanged_file_is_read_once_and_a_changed_one_again(tmp_path, cache_words):
    path = tmp_path / "c.txt"
    path.write_text("a b c d\n" * 100)
    settle(path)
    model = Word2Vec(vector_size=4, min_count=1, workers=2, sample=0, cache_words=cache_words)
    model.build_vocab(corpus_file=str(path))
    unchanged = EpochRecorder()
    _, raw = model.train(corpus_file=str(path), total_words=400, epochs=3, callbacks=[unchanged])
    assert raw == 1200

    # after the first epoch the file holds one word: later epochs read it (gensim's meaning)
    shrink = EpochRecorder(lambda epoch: path.write_text("a\n"))
    _, raw = model.train(corpus_file=str(path), total_words=400, epochs=3, callbacks=[shrink])
    assert raw == 402
    assert shrink.from_memory == [False] * 3
    assert unchanged.from_memory == ([False, True, True] if cache_words else [False] * 3)


def test_a_rewrite_that_keeps_size_and_mtime_is_read_again(tmp_path):
    """Same size, mtime set back by hand (as ``cp -p`` or ``rsync -t`` do): the ctime tells."""
    path = tmp_path / "c.txt"
    path.write_text("a b c d\n" * 100)
    settle(path)
    stamp = os.stat(path).st_mtime_ns

    def rewrite(epoch):
        time.sleep(0.05)  # past the file system's timestamp tick since the last ctime change
        path.write_text("e f g h\n" * 100)  # no word of the vocabulary
        os.utime(path, ns=(stamp, stamp))

    model = Word2Vec(vector_size=4, min_count=1, workers=2, sample=0)
    model.build_vocab(corpus_file=str(path))
    each = EpochRecorder(rewrite)
    model.train(corpus_file=str(path), total_words=400, epochs=3, callbacks=[each])
    assert each.trained == [400, 0, 0]
    assert each.from_memory == [False, False, False]


def test_compressed_files_fall_back_to_linesentence(tmp_path):
    sentences, _ = planted_corpus(n_sentences=300)
    text = "\n".join(" ".join(s) for s in sentences) + "\n"
    plain, packed = tmp_path / "c.txt", tmp_path / "c.txt.gz"
    plain.write_text(text)
    with gzip.open(packed, "wt") as f:
        f.write(text)
    kw = dict(vector_size=8, min_count=1, workers=1, epochs=1, seed=2)
    a, b = Word2Vec(corpus_file=str(plain), **kw), Word2Vec(corpus_file=str(packed), **kw)
    np.testing.assert_array_equal(a.wv.vectors, b.wv.vectors)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_train_counts_every_word_and_sentence_once(planted_file, workers):
    path, _ = planted_file
    model = Word2Vec(vector_size=8, min_count=1, workers=workers, sample=0)
    model.build_vocab(corpus_file=path)
    seen = []

    class Recorder:
        def on_train_begin(self, m):
            seen.append("begin")

        def on_epoch_begin(self, m):
            pass

        def on_epoch_end(self, m):
            seen.append(m.latest_epoch_report.sentences)

        def on_train_end(self, m):
            seen.append("end")

    progress = []
    trained, raw = model.train(
        corpus_file=path,
        total_words=model.corpus_total_words,
        epochs=2,
        callbacks=[Recorder()],
        progress=progress.append,
    )
    assert raw == 2 * model.corpus_total_words
    assert trained == raw  # sample=0 and every word known
    assert seen == ["begin", model.corpus_count, model.corpus_count, "end"]
    assert progress[-1].fraction == 1.0 and progress[-1].epoch == 1
    assert progress[-1].alpha == pytest.approx(model.min_alpha)


def test_schedule_by_sentences_when_only_total_examples(planted_file):
    path, _ = planted_file
    model = Word2Vec(vector_size=8, min_count=1, workers=2)
    model.build_vocab(corpus_file=path)
    trained, raw = model.train(corpus_file=path, total_examples=model.corpus_count, epochs=1)
    assert raw == model.corpus_total_words
    assert model.min_alpha_yet_reached == pytest.approx(model.min_alpha)


# ------------------------------------------------------------------ errors


def test_missing_file_is_a_clear_error(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(FileNotFoundError, match="corpus_file does not exist"):
        Word2Vec(corpus_file=str(missing), min_count=1)
    model = Word2Vec(vector_size=4, min_count=1, workers=1)
    model.build_vocab([["a", "b"]])
    with pytest.raises(FileNotFoundError):
        model.train(corpus_file=missing, total_words=2, epochs=1)


def test_directory_is_a_clear_error(tmp_path):
    with pytest.raises(IsADirectoryError, match="PathLineSentences"):
        Word2Vec(corpus_file=str(tmp_path), min_count=1)


def test_corpus_and_corpus_file_together_is_an_error(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("a b\n")
    with pytest.raises(TypeError, match="not both"):
        Word2Vec([["a"]], corpus_file=str(path), min_count=1)


@pytest.mark.parametrize("workers", [1, 2])
def test_invalid_utf8_says_where(tmp_path, workers):
    path = tmp_path / "bad.txt"
    good = b"a b c\n" * 200
    path.write_bytes(good + b"d \xff e\n" + good)
    with pytest.raises(UnicodeDecodeError, match=f"at byte {len(good) + 2}"):
        Word2Vec(corpus_file=str(path), min_count=1, workers=workers)
    model = Word2Vec(vector_size=4, min_count=1, workers=workers)
    model.build_vocab([["a", "b", "c"]])
    with pytest.raises(UnicodeDecodeError, match="line starting at byte"):
        model.train(corpus_file=str(path), total_words=10, epochs=1)


def test_empty_file_is_an_error(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"\n\n")
    with pytest.raises(ValueError, match="empty"):
        Word2Vec(corpus_file=str(path), min_count=1)
    assert os.path.getsize(path) == 2
