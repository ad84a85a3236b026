"""fastText's character n-grams and their buckets, compared with gensim 4.4's."""

import numpy as np
import pytest

from hsw2v.fasttext import _ngrams
from hsw2v.fasttext._ngrams import (
    compute_ngrams_bytes,
    ft_hash_bytes,
    ngram_hashes,
    subword_table,
)

WORDS = [
    "hello",  # ASCII
    "café", "naïve", "Ångström", "Größe",  # Latin-1 accents
    "日本語", "中文字符串",  # CJK
    "🙂", "👍🏽x", "👨‍👩‍👧",  # emoji: 4-byte characters, a modifier, a ZWJ sequence
    "e\u0301t\u0308",  # combining marks: characters of their own, as in fastText
    "",  # only "<" and ">"
    "a", "ab", "a<b>",  # shorter than min_n; the markers inside a word
    "x" * 300, "über" * 40 + "日",  # long words
]  # fmt: skip
SETTINGS = [(3, 6), (1, 1), (0, 2), (1, 6), (5, 5), (2, 2), (7, 3), (10, 12), (0, 0)]


def gensim_ngrams():
    """gensim's compiled n-gram functions; skips the test where gensim is not installed."""
    inner = pytest.importorskip("gensim.models.fasttext_inner")
    fasttext = pytest.importorskip("gensim.models.fasttext")
    return inner.compute_ngrams_bytes, inner.ft_hash_bytes, fasttext.ft_ngram_hashes


# ------------------------------------------------------------------ hashing and n-grams
@pytest.mark.parametrize("min_n, max_n", SETTINGS)
@pytest.mark.parametrize("word", WORDS)
def test_ngrams_and_hashes_equal_gensims(word, min_n, max_n):
    g_ngrams, g_hash, g_hashes = gensim_ngrams()
    ngrams = compute_ngrams_bytes(word, min_n, max_n)
    assert ngrams == g_ngrams(word, min_n, max_n)
    assert [ft_hash_bytes(n) for n in ngrams] == [g_hash(n) for n in ngrams]
    for bucket in (2_000_000, 7, 1):
        hashes = ngram_hashes(word, min_n, max_n, bucket)
        assert hashes.dtype == np.uint32
        assert hashes.tolist() == g_hashes(word, min_n, max_n, bucket)


@pytest.mark.parametrize("min_n, max_n", [(3, 6), (1, 1), (1, 6), (2, 2)])
def test_long_words_hashed_in_slices_equal_gensims(min_n, max_n, monkeypatch):
    monkeypatch.setattr(_ngrams, "_CHUNK_CHARS", 5)  # slices of 5 characters
    _, _, g_hashes = gensim_ngrams()
    for word in ["x" * 300, "über" * 40 + "日", "🙂a" * 70, "é" * 64]:
        assert ngram_hashes(word, min_n, max_n, 1009).tolist() == g_hashes(word, min_n, max_n, 1009)


def test_hash_of_every_byte_and_random_bytes_equals_gensims():
    _, g_hash, _ = gensim_ngrams()
    rng = np.random.default_rng(0)
    samples = [bytes([b]) for b in range(256)] + [b""]
    samples += [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in range(1, 40)]
    assert [ft_hash_bytes(s) for s in samples] == [g_hash(s) for s in samples]


def test_ngram_order_and_the_utf8_rule():
    # by start, then by length; characters, not bytes; the lone markers are no n-grams
    assert compute_ngrams_bytes("ab", 1, 2) == [b"<a", b"a", b"ab", b"b", b"b>"]
    assert compute_ngrams_bytes("é", 2, 2) == ["<é".encode(), "é>".encode()]
    assert compute_ngrams_bytes("aaa", 2, 2) == [b"<a", b"aa", b"aa", b"a>"]  # duplicates
    assert compute_ngrams_bytes("abc", 4, 3) == []
    assert ngram_hashes("abc", 3, 3, 0).tolist() == []  # bucket 0: no n-gram rows
    with pytest.raises(ValueError, match="min_n and max_n"):
        compute_ngrams_bytes("abc", -1, 3)
    with pytest.raises(UnicodeEncodeError):
        compute_ngrams_bytes("a\ud800b", 3, 6)  # a lone surrogate has no UTF-8 form


# ------------------------------------------------------------------ subword_table
@pytest.mark.parametrize("min_n, max_n", [(3, 6), (1, 3), (2, 2), (5, 4)])
@pytest.mark.parametrize("chunk", [None, 7])
def test_subword_table_agrees_with_ngram_hashes(min_n, max_n, chunk, monkeypatch):
    if chunk:  # slices of a few characters: words alone and cut slices
        monkeypatch.setattr(_ngrams, "_CHUNK_CHARS", chunk)
    words = WORDS[:-3] + ["x" * 30, "über" * 10, "cat"]
    bucket = 1000
    ptr, rows = subword_table(words, min_n, max_n, bucket)
    assert ptr.dtype == np.int64 and rows.dtype == np.int32 and len(ptr) == len(words) + 1
    assert ptr[0] == 0 and ptr[-1] == len(rows)
    for i, word in enumerate(words):
        expected = [i] + [len(words) + h for h in ngram_hashes(word, min_n, max_n, bucket)]
        assert rows[ptr[i] : ptr[i + 1]].tolist() == expected, word


def test_subword_table_without_buckets_and_empty():
    ptr, rows = subword_table(["a", "bb", "ccc"], 3, 6, 0)
    assert ptr.tolist() == [0, 1, 2, 3] and rows.tolist() == [0, 1, 2]
    ptr, rows = subword_table([], 3, 6, 100)
    assert ptr.tolist() == [0] and rows.tolist() == []


def test_subword_table_refuses_absurd_sizes_before_building():
    hostile = ["a", "x" * 1_000_000]  # some 4 million n-grams with min_n=3, max_n=6
    with pytest.raises(ValueError, match=r"more than max_rows=1000000: the longest word, #1"):
        subword_table(hostile, 3, 6, 2_000_000, max_rows=1_000_000)
    with pytest.raises(ValueError, match="int32"):
        subword_table(["a"], 3, 6, 2**31)


def test_subword_table_of_a_long_token_is_exact():
    ptr, rows = subword_table(["ab", "y" * 20_000], 3, 6, 97)
    assert ptr[2] - ptr[1] == 1 + sum(20_002 - n + 1 for n in range(3, 7))  # L - n + 1 each
    assert (rows[ptr[1] + 1 :] - 2).tolist() == ngram_hashes("y" * 20_000, 3, 6, 97).tolist()
