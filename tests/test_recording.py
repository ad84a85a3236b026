"""The token recording build_vocab keeps so training never reads the corpus again: the
in-place kernels against NumPy, and when the recording is (and is not) used."""

import numpy as np
import pytest
from conftest import CountingCorpus
from hypothesis import given, settings
from hypothesis import strategies as st

from hsw2v import FixedCorpus, Word2Vec
from hsw2v._kernels._recording import JoinedRecorder, count_ids, finalize_ids
from hsw2v.running.epochs import iter_jobs, jobs_from_recording
from hsw2v.vocab import UnencodableTokenError, scan_counts


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 9), max_size=12), max_size=30),
    st.lists(st.integers(-1, 5), min_size=10, max_size=10),
)
def test_finalize_ids_equals_numpy(sentences, to_final):
    ids = np.array([t for s in sentences for t in s], np.int32)
    lengths = np.array([len(s) for s in sentences], np.int64)
    to_final = np.array(to_final, np.int32)
    mapped = to_final[ids] if len(ids) else np.zeros(0, np.int32)
    expected = mapped[mapped >= 0]
    expected_lengths = [int((to_final[np.array(s, np.int64)] >= 0).sum()) for s in sentences]
    assert count_ids(ids, 10).tolist() == np.bincount(ids, minlength=10).tolist()
    kept_lengths = np.full(len(lengths), -7, np.int64)
    n_kept = finalize_ids(ids, to_final, lengths, kept_lengths)
    assert n_kept == len(expected)
    assert ids[:n_kept].tolist() == expected.tolist()
    assert kept_lengths.tolist() == expected_lengths


def test_recording_kernels_reject_bad_input():
    with pytest.raises(ValueError, match="outside 0..2"):
        count_ids(np.array([0, 3], np.int32), 3)
    with pytest.raises(ValueError, match="add up to 3"):
        finalize_ids(
            np.zeros(2, np.int32),
            np.zeros(1, np.int32),
            np.array([3], np.int64),
            np.zeros(1, np.int64),
        )
    with pytest.raises(ValueError, match="id 5 at position 1"):
        finalize_ids(
            np.array([0, 5], np.int32),
            np.zeros(2, np.int32),
            np.array([2], np.int64),
            np.zeros(1, np.int64),
        )


@pytest.mark.parametrize("batch_words", [1, 5, 10000])
def test_jobs_from_recording_equal_jobs_from_reading(batch_words):
    corpus = [["a", "b", "x"], [], ["x"], ["b", "a", "a", "c"], ["y", "c"]] * 3
    key_to_index = {"a": 0, "b": 1, "c": 2}
    _, _, _, recording = scan_counts(corpus, record_tokens=100)
    to_final = [key_to_index.get(word, -1) for word in ["a", "b", "x", "c", "y"]]
    recording.finalize(np.array(to_final, np.int32), ["a", "b", "c"])
    recorded = jobs_from_recording(recording, batch_words)
    read = list(iter_jobs(corpus, key_to_index, batch_words))
    assert len(recorded) == len(read) > 0
    for mine, theirs in zip(recorded, read, strict=True):
        assert mine.ids.tolist() == theirs.ids.tolist()
        assert mine.ends.tolist() == theirs.ends.tolist()
        assert (mine.raw_words, mine.n_sentences) == (theirs.raw_words, theirs.n_sentences)
        assert mine.ids.base is not None  # a view into the recording, not a copy


def _corpus(seed=0, n=200):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(30)]
    return [[words[i] for i in rng.zipf(1.4, size=8) % 30] for _ in range(n)]


def test_training_uses_the_recording_instead_of_reading_again():
    counted = CountingCorpus(_corpus())
    corpus = FixedCorpus(counted)  # the user's promise that every pass is the same
    model = Word2Vec(vector_size=8, min_count=2, workers=1, epochs=3, seed=1)
    model.build_vocab(corpus)
    assert counted.reads == 1
    model.train(corpus, total_examples=model.corpus_count, epochs=3)
    assert counted.reads == 1  # three epochs, no further read
    streamed = Word2Vec(
        _corpus(), vector_size=8, min_count=2, workers=1, epochs=3, seed=1, cache_words=0
    )
    assert np.array_equal(model.wv.vectors, streamed.wv.vectors)


def test_recording_after_a_vocabulary_update_trains_like_reading():
    first, second = _corpus(1), _corpus(2) + [["new", "words", "here"]] * 5
    models = []
    for cache_words in (10**8, 0):
        second_corpus = CountingCorpus(second)
        model = Word2Vec(
            first, vector_size=8, min_count=2, workers=1, epochs=2, seed=3, cache_words=cache_words
        )
        model.build_vocab(FixedCorpus(second_corpus), update=True)
        model.train(FixedCorpus(second_corpus), total_examples=model.corpus_count, epochs=2)
        models.append((model, second_corpus.reads))
    (recorded, reads_recorded), (streamed, reads_streamed) = models
    assert "new" in recorded.wv
    assert (reads_recorded, reads_streamed) == (1, 3)
    assert np.array_equal(recorded.wv.vectors, streamed.wv.vectors)


def test_a_recording_that_no_longer_fits_the_vocabulary_is_not_used():
    counted = CountingCorpus(_corpus())
    corpus = FixedCorpus(counted)
    model = Word2Vec(vector_size=8, min_count=1, workers=1, epochs=1, seed=1)
    model.build_vocab(corpus, keep_raw_vocab=True)
    model.prepare_vocab(min_count=3, keep_raw_vocab=True)  # a new vocabulary
    model.prepare_weights()
    model.train(corpus, total_examples=model.corpus_count, epochs=1)
    assert counted.reads == 2  # read again, not trained from ids of the old vocabulary
    fresh = Word2Vec(_corpus(), vector_size=8, min_count=3, workers=1, epochs=1, seed=1)
    assert np.array_equal(model.wv.vectors, fresh.wv.vectors)

    counted = CountingCorpus(_corpus())
    corpus = FixedCorpus(counted)
    model = Word2Vec(vector_size=8, min_count=1, workers=1, epochs=1, seed=1)
    model.build_vocab(corpus)
    model.build_vocab_from_freq({"w1": 5, "w2": 3})  # counts from elsewhere
    model.train(corpus, total_examples=200, epochs=1)
    assert counted.reads == 2


WORD = st.sampled_from(["a", "b", "", " ", "x y", "\x1f", "\n", "é", "a\x1fb", "\ud800"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(WORD, max_size=9), max_size=25),
    st.integers(1, 4),  # max_sentence_length
    st.integers(1, 6),  # mark_every
    st.integers(1, 12),  # characters per block
    st.integers(0, 60),  # record_tokens
)
def test_joined_recorder_equals_scan_counts(rows, max_len, mark_every, block_chars, record):
    """A Spark partition's counting (:func:`hsw2v.spark._engine.scan_partition`: the rows
    that arrive joined by \\x1f counted in blocks by JoinedRecorder, the others as lists)
    gives scan_counts' counts, recording and totals for the rows' sentences, and the marks
    of the Python loop it replaced."""
    from hsw2v.spark._engine import scan_partition

    # as rows_to_python sends them: joined, unless a word is empty or holds \x1f or \n
    arrived = [
        list(row) if any(w == "" or "\x1f" in w or "\n" in w for w in row) else "\x1f".join(row)
        for row in rows
    ]
    sentences = [row[i : i + max_len] for row in rows for i in range(0, len(row), max_len)]
    if any("\ud800" in w for row in rows for w in row):  # the keys come back as they went in
        with pytest.raises(UnencodableTokenError, match="lone surrogate"):
            scan_counts(iter(sentences), progress_per=0, record_tokens=record)
        with pytest.raises(UnencodableTokenError, match="lone surrogate"):
            scan_partition(0, iter(arrived), max_len, mark_every, record, block_chars)
        return
    scan = scan_partition(0, iter(arrived), max_len, mark_every, record, block_chars)
    want = scan_counts(iter(sentences), progress_per=0, record_tokens=record)
    assert list(scan.counts.items()) == list(want[0].items())
    assert (scan.words, scan.sentences) == want[1:3]
    if want[3] is None:
        assert scan.recording is None
    else:
        assert scan.recording.ids.tolist() == want[3].ids.tolist()
        assert scan.recording.lengths.tolist() == want[3].lengths.tolist()
    expected_marks, done, since = [], 0, 0
    for s, sentence in enumerate(sentences):
        if since >= mark_every:
            expected_marks.append((s, done, s))
            since = 0
        done += len(sentence)
        since += len(sentence)
    assert scan.marks == expected_marks


def test_joined_recorder_rejects_bad_input():
    with pytest.raises(ValueError, match=">= 1"):
        JoinedRecorder(0, 10, 1)
    recorder = JoinedRecorder(5, 10, 1)
    with pytest.raises(ValueError, match="expected 1 lines, the text holds 2"):
        recorder.add_lines(b"a\nb\n", 1)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.lists(st.sampled_from("abcdefg"), max_size=6), max_size=8), min_size=1, max_size=5))
def test_counts_merged_in_order_equal_the_positioned_merge(partitions):
    """The stage's merge of the partitions' counts in their order
    (:func:`hsw2v.spark._engine.counts_in_order`) gives the counts of the order-free merge
    (``PartitionCount``, what the job engine's tree reduce combines) and of the whole corpus
    counted on one machine, words in the same first-seen order."""
    import functools

    from hsw2v.spark._engine import (
        PartitionCount,
        counts_in_order,
        merge_partition_counts,
        scan_partition,
    )

    scans = [scan_partition(k, iter(rows), 10, 3, 100) for k, rows in enumerate(partitions)]
    in_order = counts_in_order([scan.counts for scan in scans])
    shuffled = [PartitionCount.of(scan) for scan in reversed(scans)]  # any order, any grouping
    positioned = functools.reduce(merge_partition_counts, shuffled).counts.ordered()
    sentences = [row for rows in partitions for row in rows]
    one_machine = scan_counts(iter(sentences), progress_per=0, record_tokens=0)[0]
    assert list(in_order.items()) == list(positioned.items()) == list(one_machine.items())
