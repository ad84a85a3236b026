"""Tests for hsw2v.corpora: real files on disk, compared with gensim's own corpus classes."""

from __future__ import annotations

import bz2
import gzip
import io
import os
import tempfile
from pathlib import Path

import pytest
from conftest import gensim_models
from hypothesis import given, settings
from hypothesis import strategies as st

from hsw2v.corpora import (
    MAX_WORDS_IN_BATCH,
    CorpusNotFoundError,
    LineSentence,
    PathLineSentences,
    Text8Corpus,
)
from hsw2v.datasets import demo_corpus_path

TEXT = (
    "the quick brown fox\n"
    "\n"
    "jumps  over\tthe lazy dog   \n"
    "caf\u00e9 na\u00efve \u65e5\u672c\u8a9e\r\n"
    "   \n"
    "last line without newline"
)
EXPECTED = [
    ["the", "quick", "brown", "fox"],
    ["jumps", "over", "the", "lazy", "dog"],
    ["caf\u00e9", "na\u00efve", "\u65e5\u672c\u8a9e"],
    ["last", "line", "without", "newline"],
]


def write(path: Path, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path``, compressed according to its suffix."""
    data = text.encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data)
    elif path.suffix == ".bz2":
        data = bz2.compress(data)
    path.write_bytes(data)
    return path


# --------------------------------------------------------------------------- LineSentence


@pytest.mark.parametrize("name", ["corpus.txt", "corpus.txt.gz", "corpus.txt.bz2", "corpus"])
def test_line_sentence_reads_plain_and_compressed_files(tmp_path, name):
    path = write(tmp_path / name, TEXT)
    assert list(LineSentence(str(path))) == EXPECTED
    assert list(LineSentence(path)) == EXPECTED  # pathlib.Path works too


def test_line_sentence_is_really_compressed_on_disk(tmp_path):
    path = write(tmp_path / "corpus.txt.gz", TEXT)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert list(LineSentence(path)) == EXPECTED


def test_line_sentence_accepts_smart_open_url(tmp_path):
    path = write(tmp_path / "corpus.txt.gz", TEXT)
    assert list(LineSentence(path.resolve().as_uri())) == EXPECTED


def test_line_sentence_is_reiterable(tmp_path):
    corpus = LineSentence(write(tmp_path / "c.txt", TEXT))
    first = list(corpus)
    assert list(corpus) == first == EXPECTED
    # two independent iterators over a path do not interfere
    a, b = iter(corpus), iter(corpus)
    assert next(a) == next(b) == EXPECTED[0]
    assert next(a) == EXPECTED[1]
    assert next(b) == EXPECTED[1]


@pytest.mark.parametrize(
    "make",
    [
        lambda: io.BytesIO(TEXT.encode("utf-8")),
        lambda: io.StringIO(TEXT, newline=""),
    ],
    ids=["bytes", "text"],
)
def test_line_sentence_file_like_is_rewound_each_iteration(make):
    stream = make()
    stream.read(7)  # position is not at the start
    corpus = LineSentence(stream)
    assert list(corpus) == EXPECTED
    assert list(corpus) == EXPECTED


def test_line_sentence_open_file_objects(tmp_path):
    path = write(tmp_path / "c.txt", TEXT)
    with open(path, "rb") as fin:
        assert list(LineSentence(fin)) == EXPECTED
        assert list(LineSentence(fin, limit=1)) == EXPECTED[:1]
    with gzip.open(write(tmp_path / "c.txt.gz", TEXT), "rb") as fin:
        corpus = LineSentence(fin)
        assert list(corpus) == list(corpus) == EXPECTED


def test_line_sentence_limit_counts_lines_including_blank_ones(tmp_path):
    path = write(tmp_path / "c.txt", TEXT)
    assert list(LineSentence(path, limit=0)) == []
    assert list(LineSentence(path, limit=1)) == EXPECTED[:1]
    assert list(LineSentence(path, limit=2)) == EXPECTED[:1]  # line 2 is blank
    assert list(LineSentence(path, limit=3)) == EXPECTED[:2]
    assert list(LineSentence(path, limit=1000)) == EXPECTED


def test_line_sentence_splits_long_lines_without_losing_tokens(tmp_path):
    line = [f"w{i}" for i in range(25)]
    path = write(tmp_path / "long.txt", "a b\n" + " ".join(line) + "\nc\n")
    got = list(LineSentence(path, max_sentence_length=10))
    assert got == [["a", "b"], line[:10], line[10:20], line[20:], ["c"]]
    # exactly max_sentence_length tokens: one sentence, no empty trailing chunk
    assert list(LineSentence(path, max_sentence_length=25)) == [["a", "b"], line, ["c"]]
    assert list(LineSentence(path, max_sentence_length=1))[:3] == [["a"], ["b"], ["w0"]]


def test_line_sentence_default_max_length_splits_at_10000(tmp_path):
    line = [str(i) for i in range(MAX_WORDS_IN_BATCH * 2 + 3)]
    path = write(tmp_path / "huge.txt.gz", " ".join(line) + "\n")
    got = list(LineSentence(path))
    assert [len(s) for s in got] == [10000, 10000, 3]
    assert [t for s in got for t in s] == line


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.lists(st.text("abcxyz\u00e9\u4e2d", min_size=1, max_size=4), max_size=30), max_size=8
    ),
    max_len=st.integers(1, 12),
)
def test_line_sentence_chunking_property(lines, max_len):
    data = "\n".join(" ".join(tokens) for tokens in lines).encode("utf-8")
    got = list(LineSentence(io.BytesIO(data), max_sentence_length=max_len))
    assert all(0 < len(s) <= max_len for s in got)
    assert [t for s in got for t in s] == [t for tokens in lines for t in tokens]
    assert len(got) == sum(-(-len(tokens) // max_len) for tokens in lines)


def test_line_sentence_missing_file_names_it(tmp_path):
    missing = tmp_path / "nope.txt.gz"
    corpus = LineSentence(str(missing))
    with pytest.raises(FileNotFoundError, match="nope.txt.gz"):
        list(corpus)


def test_line_sentence_rejects_invalid_utf8(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\u00e9\n".encode("latin-1"))
    with pytest.raises(UnicodeDecodeError, match="latin1.txt.*line 1 is not UTF-8"):
        list(LineSentence(path))


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"max_sentence_length": 0}, ValueError),
        ({"max_sentence_length": -3}, ValueError),
        ({"max_sentence_length": 2.5}, TypeError),
        ({"limit": -1}, ValueError),
        ({"limit": "3"}, TypeError),
    ],
)
def test_line_sentence_rejects_bad_arguments(tmp_path, kwargs, error):
    with pytest.raises(error):
        LineSentence(tmp_path / "x.txt", **kwargs)


def test_line_sentence_rejects_non_file_source():
    with pytest.raises(TypeError, match="seek"):
        LineSentence(["not", "a", "file"])


# ---------------------------------------------------------------------- PathLineSentences


def make_directory(root: Path) -> Path:
    folder = root / "corpus"
    folder.mkdir()
    write(folder / "b.txt.bz2", "bravo one\nbravo two\n")
    write(folder / "a.txt.gz", "alpha one\n\nalpha two three four\n")
    write(folder / "c", "charlie\n")
    (folder / "a_subdir").mkdir()
    write(folder / "a_subdir" / "ignored.txt", "ignored\n")
    return folder


def test_path_line_sentences_reads_files_in_sorted_order(tmp_path):
    folder = make_directory(tmp_path)
    corpus = PathLineSentences(folder)
    assert [Path(p).name for p in corpus.input_files] == ["a.txt.gz", "b.txt.bz2", "c"]
    expected = [
        ["alpha", "one"],
        ["alpha", "two", "three", "four"],
        ["bravo", "one"],
        ["bravo", "two"],
        ["charlie"],
    ]
    assert list(corpus) == expected
    assert list(corpus) == expected  # re-iterable
    assert list(PathLineSentences(str(folder) + os.sep)) == expected


def test_path_line_sentences_limit_and_chunking_per_file(tmp_path):
    folder = make_directory(tmp_path)
    assert list(PathLineSentences(folder, limit=1)) == [
        ["alpha", "one"],
        ["bravo", "one"],
        ["charlie"],
    ]
    assert list(PathLineSentences(folder, max_sentence_length=3, limit=3))[:3] == [
        ["alpha", "one"],
        ["alpha", "two", "three"],
        ["four"],
    ]


def test_path_line_sentences_single_file(tmp_path):
    path = write(tmp_path / "one.txt.gz", TEXT)
    corpus = PathLineSentences(path)
    assert corpus.input_files == [str(path)]
    assert list(corpus) == EXPECTED


def test_path_line_sentences_missing_path(tmp_path):
    missing = tmp_path / "no_such_dir"
    with pytest.raises(FileNotFoundError, match="no_such_dir") as info:
        PathLineSentences(missing)
    assert info.value.filename == str(missing)
    # gensim raises ValueError here; code catching that keeps working
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, CorpusNotFoundError)


def test_path_line_sentences_directory_without_files(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no files"):
        PathLineSentences(tmp_path / "empty")
    (tmp_path / "only_dirs" / "sub").mkdir(parents=True)
    with pytest.raises(ValueError, match="no files"):
        PathLineSentences(tmp_path / "only_dirs")


# ---------------------------------------------------------------------------- Text8Corpus


def chunks(tokens: list[str], size: int) -> list[list[str]]:
    return [tokens[i : i + size] for i in range(0, len(tokens), size)]


def test_text8_chunks_one_huge_line(tmp_path):
    tokens = [f"t{i}" for i in range(2503)]
    path = write(tmp_path / "text8", " " + " ".join(tokens))
    assert list(Text8Corpus(path, max_sentence_length=1000)) == chunks(tokens, 1000)
    assert list(Text8Corpus(str(path))) == [tokens]
    corpus = Text8Corpus(path, max_sentence_length=7)
    assert list(corpus) == list(corpus) == chunks(tokens, 7)


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2"])
def test_text8_tokens_across_and_longer_than_read_blocks(tmp_path, suffix):
    block = Text8Corpus.block_size
    # tokens that straddle block edges, are longer than a whole block (several
    # blocks, even), and multi-byte characters sitting on a block edge
    tokens = [
        "x" * (block - 3),
        "straddle",
        "y" * (3 * block + 17),
        "\u00e9" * block,
        "z",
        "\u4e2d\u6587" * 1000,
    ]
    tokens += [f"w{i}" for i in range(5000)]
    tokens += ["q" * (block * 2)]
    path = write(tmp_path / f"text8{suffix}", " ".join(tokens) + " ")
    assert list(Text8Corpus(path, max_sentence_length=100)) == chunks(tokens, 100)
    assert list(Text8Corpus(path, max_sentence_length=3)) == chunks(tokens, 3)


@settings(max_examples=40, deadline=None)
@given(
    tokens=st.lists(st.text("ab\u00e9\u4e2d", min_size=1, max_size=12), max_size=40),
    seps=st.lists(st.sampled_from([" ", "  ", "\n", "\t", " \r\n"]), min_size=1),
    block_size=st.integers(1, 20),
    max_len=st.integers(1, 9),
)
def test_text8_block_boundary_property(tokens, seps, block_size, max_len):
    text = "".join(tok + seps[i % len(seps)] for i, tok in enumerate(tokens))
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder) / "t8", text)
        corpus = Text8Corpus(path, max_sentence_length=max_len)
        corpus.block_size = block_size
        assert list(corpus) == chunks(tokens, max_len)


def test_text8_missing_file_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing_text8"):
        list(Text8Corpus(tmp_path / "missing_text8"))


def test_text8_empty_file(tmp_path):
    assert list(Text8Corpus(write(tmp_path / "empty", ""))) == []
    assert list(Text8Corpus(write(tmp_path / "blank", "   \n  "))) == []


# ------------------------------------------------------------------- equality with gensim


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2"])
@pytest.mark.parametrize("max_len, limit", [(10000, None), (4, None), (3, 5), (1, 2)])
def test_line_sentence_matches_gensim(tmp_path, suffix, max_len, limit):
    text = TEXT + "\n" + " ".join(f"tok{i}" for i in range(23)) + "\nend\n"
    path = str(write(tmp_path / f"c.txt{suffix}", text))
    ours = list(LineSentence(path, max_sentence_length=max_len, limit=limit))
    theirs = list(
        gensim_models.word2vec.LineSentence(path, max_sentence_length=max_len, limit=limit)
    )
    assert ours == theirs
    stream = io.BytesIO(text.encode("utf-8"))
    assert list(LineSentence(stream, max_len, limit)) == theirs
    assert list(gensim_models.word2vec.LineSentence(stream, max_len, limit)) == theirs


def test_line_sentence_matches_gensim_on_demo_corpus():
    path = demo_corpus_path()
    ours = list(LineSentence(path, max_sentence_length=20, limit=3000))
    theirs = list(gensim_models.word2vec.LineSentence(path, max_sentence_length=20, limit=3000))
    assert ours == theirs
    assert len(ours) > 3000  # some verses are longer than 20 tokens and were split


@pytest.mark.parametrize("max_len, limit", [(10000, None), (2, None), (3, 2)])
def test_path_line_sentences_matches_gensim(tmp_path, max_len, limit):
    folder = tmp_path / "corpus"
    folder.mkdir()
    write(folder / "b.txt.bz2", "bravo one\nbravo two three four five\n")
    write(folder / "a.txt.gz", TEXT)
    write(folder / "c", "charlie\n\n delta echo \n")
    ours = list(PathLineSentences(folder, max_sentence_length=max_len, limit=limit))
    theirs = list(gensim_models.word2vec.PathLineSentences(str(folder), max_len, limit))
    assert ours == theirs
    single = str(folder / "a.txt.gz")
    assert list(PathLineSentences(single, max_len, limit)) == list(
        gensim_models.word2vec.PathLineSentences(single, max_len, limit)
    )


@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("max_len", [10000, 1000, 7])
def test_text8_matches_gensim(tmp_path, suffix, max_len):
    words = [w for verse in LineSentence(demo_corpus_path(), limit=2000) for w in verse]
    words += ["long" * 5000, "\u00e9t\u00e9"]
    path = str(write(tmp_path / f"text8{suffix}", " ".join(words)))
    ours = list(Text8Corpus(path, max_sentence_length=max_len))
    theirs = list(gensim_models.word2vec.Text8Corpus(path, max_sentence_length=max_len))
    assert ours == theirs
    assert [w for s in ours for w in s] == words
