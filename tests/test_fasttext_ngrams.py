"""fastText's character n-grams and FastTextKeyedVectors, compared with gensim 4.4's."""

import os
import subprocess
import sys

import numpy as np
import pytest

from hsw2v.exceptions import WrongFileKindError
from hsw2v.fasttext import _ngrams
from hsw2v.fasttext._keyedvectors import FastTextKeyedVectors
from hsw2v.fasttext._ngrams import (
    compute_ngrams_bytes,
    ft_hash_bytes,
    ngram_hashes,
    subword_table,
)
from hsw2v.keyedvectors import KeyedVectors

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


# ------------------------------------------------------------------ against gensim's vectors
SENTENCES = [
    ["the", "cat", "sat", "on", "the", "mat"],
    ["a", "dog", "ate", "the", "café", "日本語"],
    ["cats", "and", "dogs", "sat", "on", "mats"],
] * 30
OOV = ["caats", "unseenword", "日本", "🙂", "x", "dogz", "the", 5]  # 5: the word "5"


@pytest.fixture(scope="module")
def gensim_wv():
    fasttext = pytest.importorskip("gensim.models.fasttext")
    model = fasttext.FastText(
        SENTENCES, vector_size=8, min_count=1, min_n=2, max_n=4, bucket=500, epochs=2,
        workers=1, seed=1,
    )  # fmt: skip
    return model.wv


def copied(g):
    """An hsw2v FastTextKeyedVectors with gensim's arrays, copied in by hand."""
    kv = FastTextKeyedVectors(g.vector_size, g.min_n, g.max_n, g.bucket)
    kv.index_to_key = list(g.index_to_key)
    kv.key_to_index = dict(g.key_to_index)
    kv.resize_vectors()
    kv.vectors_vocab = g.vectors_vocab
    kv.vectors_ngrams = g.vectors_ngrams
    kv.adjust_vectors()
    return kv


def test_adjusted_and_oov_vectors_equal_gensims(gensim_wv):
    g = gensim_wv
    for kv in (copied(g), FastTextKeyedVectors.from_gensim(g)):
        kv.adjust_vectors()
        np.testing.assert_allclose(kv.vectors, g.vectors, rtol=0, atol=1e-6)
        assert [b.tolist() for b in kv.buckets_word] == [b.tolist() for b in g.buckets_word]
        for word in OOV:
            np.testing.assert_allclose(kv[word], g[word], rtol=0, atol=1e-6)
            np.testing.assert_allclose(
                kv.get_vector(word, norm=True), g.get_vector(word, norm=True), atol=1e-6
            )
        np.testing.assert_allclose(kv[OOV], np.vstack([g[w] for w in OOV]), atol=1e-6)


@pytest.mark.filterwarnings("ignore:Call to deprecated `init_sims`:DeprecationWarning")
def test_queries_with_oov_words_equal_gensims(gensim_wv):
    g, kv = gensim_wv, copied(gensim_wv)

    def same(ours, theirs):
        assert [k for k, _ in ours] == [k for k, _ in theirs]
        np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-6)

    same(kv.most_similar("unseenword", topn=5), g.most_similar("unseenword", topn=5))
    same(kv.most_similar(["caats", "dog"], ["mat"]), g.most_similar(["caats", "dog"], ["mat"]))
    same(kv.most_similar_cosmul(["caats"], ["dog"]), g.most_similar_cosmul(["caats"], ["dog"]))
    same(kv.similar_by_word("dogz"), g.similar_by_word("dogz"))
    assert kv.similarity("cat", "caats") == pytest.approx(g.similarity("cat", "caats"), abs=1e-6)
    assert kv.distance("cat", "caats") == pytest.approx(g.distance("cat", "caats"), abs=1e-6)
    np.testing.assert_allclose(
        kv.distances("caats", ["cat", "dog"]), g.distances("caats", ["cat", "dog"]), atol=1e-6
    )
    assert kv.n_similarity(["cat", "zzz"], ["dog"]) == pytest.approx(
        g.n_similarity(["cat", "zzz"], ["dog"]), abs=1e-6
    )
    assert kv.doesnt_match(["cat", "dog", "zzzqq"]) == g.doesnt_match(["cat", "dog", "zzzqq"])
    assert "caats" in kv and "caats" in g
    assert not kv.has_index_for("caats") and kv.has_index_for("cat")
    assert kv.get_index("cat") == g.get_index("cat")
    pytest.importorskip("ot", reason="gensim's wmdistance needs POT (pip install pot)")
    docs = (["cat", "caats", "mat"], ["dogz", "sat"])
    assert kv.wmdistance(*docs) == pytest.approx(g.wmdistance(*docs), abs=1e-5)


def test_evaluations_keep_to_the_vocabulary_as_gensims(gensim_wv, tmp_path):
    g, kv = gensim_wv, copied(gensim_wv)
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("cat\tdog\t8\ncat\tmat\t3\ncaats\tdog\t7\ndog\tdogs\t9\nsat\ton\t1\n")
    ours, theirs = kv.evaluate_word_pairs(pairs), g.evaluate_word_pairs(pairs)
    assert ours[1][0] == pytest.approx(theirs[1][0]) and ours[2] == theirs[2] == 20.0
    questions = tmp_path / "questions.txt"
    questions.write_text(": s\ncat cats dog dogs\ncat caats dog dogz\nmat mats cat cats\n")
    ours, theirs = kv.evaluate_word_analogies(questions), g.evaluate_word_analogies(questions)
    assert ours[0] == theirs[0]
    assert [s["correct"] + s["incorrect"] for s in ours[1]] == [
        s["correct"] + s["incorrect"] for s in theirs[1]
    ]  # the question with out-of-vocabulary words is skipped by both


def test_words_without_ngrams_and_without_buckets_as_gensim():
    fasttext = pytest.importorskip("gensim.models.fasttext")
    g = fasttext.FastTextKeyedVectors(4, 5, 6, 50)
    g.add_vectors(["hello"], np.zeros((1, 4)))
    g.resize_vectors()
    kv = FastTextKeyedVectors.from_gensim(g)
    assert (kv["ab"] == 0).all() and (g["ab"] == 0).all()  # "<ab>" is too short
    g0 = fasttext.FastTextKeyedVectors(4, 3, 6, 0)
    g0.add_vectors(["hello"], np.zeros((1, 4)))
    g0.resize_vectors()
    kv0 = FastTextKeyedVectors.from_gensim(g0)
    assert ("hellp" in kv0) is ("hellp" in g0) is False
    for wv in (kv0, g0):
        with pytest.raises(KeyError, match="cannot calculate vector for OOV word"):
            wv["hellp"]
    kv0.adjust_vectors()
    assert np.shares_memory(kv0.vectors, kv0.input_matrix)  # gensim's alias of vectors_vocab


def test_resize_vectors_gives_gensims_values():
    fasttext = pytest.importorskip("gensim.models.fasttext")
    keys = ["the", "cat", "sat"]
    g = fasttext.FastTextKeyedVectors(5, 3, 6, 40)
    g.add_vectors(keys, np.zeros((3, 5)))
    g.resize_vectors(seed=7)
    kv = FastTextKeyedVectors(5, 3, 6, 40)
    kv.add_vectors(keys, np.zeros((3, 5)))
    kv.resize_vectors(seed=7)
    np.testing.assert_array_equal(kv.vectors_vocab, g.vectors_vocab)
    np.testing.assert_array_equal(kv.vectors_ngrams, g.vectors_ngrams)
    np.testing.assert_allclose(kv.vectors, g.vectors, atol=1e-6)


def test_to_gensim_and_back(gensim_wv):
    kv = copied(gensim_wv)
    g = kv.to_gensim()
    assert type(g) is type(gensim_wv)
    np.testing.assert_array_equal(g.vectors_ngrams, kv.vectors_ngrams)
    for word in OOV:
        np.testing.assert_allclose(g[word], kv[word], atol=1e-6)
    back = FastTextKeyedVectors.from_gensim(g)
    np.testing.assert_array_equal(back.input_matrix, kv.input_matrix)


# ------------------------------------------------------------------ storage
def small(bucket=20, words=("night", "knight", "nights")):
    kv = FastTextKeyedVectors(3, 3, 5, bucket)
    kv.add_vectors(list(words), np.zeros((len(words), 3)))
    kv.resize_vectors()
    return kv


def test_one_input_matrix_with_views():
    kv = small()
    matrix = kv.input_matrix
    assert matrix.shape == (3 + 20, 3) and matrix.flags.c_contiguous
    assert matrix.dtype == np.float32
    assert np.shares_memory(kv.vectors_vocab, matrix) and np.shares_memory(
        kv.vectors_ngrams, matrix
    )
    kv.vectors_vocab = np.full((3, 3), 2.0)  # same shape: copied into the rows
    kv.vectors_ngrams = np.full((20, 3), 4.0)
    assert kv.input_matrix is matrix
    assert (matrix[:3] == 2).all() and (matrix[3:] == 4).all()
    kv.vectors_vocab[1] = 9.0  # a view: writes reach the matrix
    assert (matrix[1] == 9).all()
    with pytest.raises(ValueError, match="3 columns"):
        kv.vectors_vocab = np.zeros((3, 4))
    with pytest.raises(ValueError, match="bucket=20 rows"):
        kv.vectors_ngrams = np.zeros((5, 3))
    kv.vectors_vocab = np.ones((4, 3))  # another number of rows: a new matrix
    assert kv.input_matrix is not matrix and kv.input_matrix.shape == (24, 3)
    assert (kv.vectors_ngrams == 4).all()


def test_ngram_rows_are_none_until_allocated():
    kv = FastTextKeyedVectors(3, 3, 5, 10, count=2)
    assert kv.vectors_ngrams is None and kv.input_matrix.shape == (2, 3)
    kv.vectors_ngrams = np.ones((10, 3))
    assert kv.input_matrix.shape == (12, 3)


def test_resize_vocab_rows_keeps_rows():
    kv = small()
    kv.vectors_vocab = np.arange(9.0).reshape(3, 3)
    ngrams = np.array(kv.vectors_ngrams)
    kv.resize_vocab_rows(5, new_rows=-1.0)
    assert kv.vectors_vocab[:3].tolist() == np.arange(9.0).reshape(3, 3).tolist()
    assert (kv.vectors_vocab[3:] == -1).all()
    np.testing.assert_array_equal(kv.vectors_ngrams, ngrams)
    assert kv.input_matrix.flags.c_contiguous and kv.input_matrix.shape == (25, 3)


def test_the_vector_of_a_long_oov_word_is_summed_in_blocks(monkeypatch):
    monkeypatch.setattr("hsw2v.fasttext._keyedvectors._SUM_BLOCK", 7)
    kv = small(bucket=50)
    kv.vectors_ngrams = np.random.default_rng(0).random((50, 3))
    word = "abcdefghij" * 5
    hashes = ngram_hashes(word, 3, 5, 50)
    np.testing.assert_allclose(kv[word], kv.vectors_ngrams[hashes].mean(0), rtol=1e-6)


def test_adjust_vectors_is_the_mean_of_word_and_ngram_rows(monkeypatch):
    monkeypatch.setattr("hsw2v.fasttext._keyedvectors._SUM_BLOCK", 5)  # words across blocks
    kv = small(bucket=30, words=("night", "knight", "a", "nights", "überlong"))
    rng = np.random.default_rng(1)
    kv.input_matrix[:] = rng.random(kv.input_matrix.shape, dtype=np.float32)
    kv.adjust_vectors()
    for i, word in enumerate(kv.index_to_key):
        hashes = ngram_hashes(word, 3, 5, 30)
        expected = (kv.vectors_vocab[i] + kv.vectors_ngrams[hashes].sum(0)) / (len(hashes) + 1)
        np.testing.assert_allclose(kv.vectors[i], expected, rtol=1e-6)


def test_subword_table_is_cached_per_vocabulary_and_settings():
    kv = small()
    first = kv.subword_table()
    assert kv.subword_table()[1] is first[1]
    assert not first[1].flags.writeable
    kv.min_n = 2
    second = kv.subword_table()
    assert second[1] is not first[1] and len(second[1]) > len(first[1])
    kv.index_to_key.append("new")
    assert len(kv.subword_table()[0]) == 5
    kv.bucket = 25  # resizes the allocated n-gram rows
    assert kv.vectors_ngrams.shape == (25, 3)
    assert kv.subword_table()[1].max() < 4 + 25


def test_sort_by_frequency_moves_the_word_rows():
    kv = small()
    kv.vectors_vocab = np.arange(9.0).reshape(3, 3)
    for word, count in zip(kv.index_to_key, (1, 5, 3), strict=True):
        kv.set_vecattr(word, "count", count)
    kv.sort_by_descending_frequency()
    assert kv.index_to_key == ["knight", "nights", "night"]
    assert kv.vectors_vocab[:, 0].tolist() == [3.0, 6.0, 0.0]


# ------------------------------------------------------------------ files
def test_save_load_round_trip(tmp_path):
    kv = small()
    kv.input_matrix[:] = np.random.default_rng(2).random(kv.input_matrix.shape)
    kv.adjust_vectors()
    kv.vectors_ngrams_lockf = np.array([0.5], dtype=np.float32)
    path = tmp_path / "ft.wv"
    kv.save(path)
    for loaded in (
        FastTextKeyedVectors.load(path),
        KeyedVectors.load(path),
        KeyedVectors.load(path, mmap="r"),
    ):
        assert type(loaded) is FastTextKeyedVectors
        assert (loaded.min_n, loaded.max_n, loaded.bucket) == (3, 5, 20)
        np.testing.assert_array_equal(loaded.input_matrix, kv.input_matrix)
        np.testing.assert_array_equal(loaded.vectors, kv.vectors)
        assert loaded.vectors_ngrams_lockf.tolist() == [0.5]
        for word in ["nightly", "knights", "zz", "night"]:
            np.testing.assert_array_equal(loaded[word], kv[word])
        assert loaded.most_similar("nightly", topn=2) == kv.most_similar("nightly", topn=2)


def test_files_of_other_kinds(tmp_path):
    plain = KeyedVectors(2)
    plain.add_vectors(["a"], [[1.0, 2.0]])
    plain.save(tmp_path / "plain.wv")
    assert type(KeyedVectors.load(tmp_path / "plain.wv")) is KeyedVectors
    with pytest.raises(WrongFileKindError, match="plain KeyedVectors"):
        FastTextKeyedVectors.load(tmp_path / "plain.wv")
    unallocated = FastTextKeyedVectors(2, 3, 6, 10, count=1)
    unallocated.index_to_key, unallocated.key_to_index = ["a"], {"a": 0}
    unallocated.save(tmp_path / "early.wv")
    loaded = KeyedVectors.load(tmp_path / "early.wv")
    assert loaded.vectors_ngrams is None and loaded.input_matrix.shape == (1, 2)


def test_a_crafted_file_is_refused_before_use(tmp_path):
    from hsw2v.persist import load_bundle, save_bundle

    kv = small()
    kv.save(tmp_path / "ft.wv")
    meta, arrays = load_bundle(tmp_path / "ft.wv", kind="KeyedVectors")
    meta["fasttext"]["bucket"] = 21  # input_matrix no longer fits
    save_bundle(tmp_path / "bad.wv", "KeyedVectors", meta, arrays)
    with pytest.raises(ValueError, match="input_matrix of dtype float32 and shape"):
        KeyedVectors.load(tmp_path / "bad.wv")


def test_using_fasttext_vectors_does_not_import_gensim(tmp_path):
    code = (
        "import sys, numpy as np\n"
        "from hsw2v.fasttext._keyedvectors import FastTextKeyedVectors\n"
        "from hsw2v import KeyedVectors\n"
        "kv = FastTextKeyedVectors(2, 3, 6, 10); kv.add_vectors(['ab'], np.zeros((1, 2)))\n"
        "kv.resize_vectors(); kv['abc']; kv.most_similar('abc')\n"
        f"kv.save({str(tmp_path / 'f.wv')!r}); KeyedVectors.load({str(tmp_path / 'f.wv')!r})\n"
        "assert 'gensim' not in sys.modules, 'gensim imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
