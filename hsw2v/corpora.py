"""Streaming corpora: iterate sentences (lists of str tokens) straight from files.

The classes here behave like their namesakes in ``gensim.models.word2vec`` and
can be used with either library. Every file is opened through :func:`open_source`:
plain local files directly, and compressed files (``.gz``, ``.bz2``, ...) and any URL
that smart_open understands (``s3://``, ``https://``, ...) through
:func:`smart_open.open`, with compression inferred from the file name. smart_open is
imported only when it is needed (it costs about 0.3 s and 15 MB).

All corpora are re-iterable: each call to ``iter()`` starts again from the
beginning of the data, which is what a word2vec model needs to build its
vocabulary and then train over several epochs.

Examples
--------
>>> from hsw2v.corpora import LineSentence
>>> import io
>>> list(LineSentence(io.StringIO("the cat sat\\non the mat\\n")))
[['the', 'cat', 'sat'], ['on', 'the', 'mat']]
"""

from __future__ import annotations

import errno
import itertools
import os
from collections.abc import Iterable, Iterator
from typing import IO, Any

__all__ = [
    "MAX_WORDS_IN_BATCH",
    "CorpusNotFoundError",
    "LineSentence",
    "PathLineSentences",
    "Text8Corpus",
]

#: Default longest sentence, in tokens; longer sentences are split into chunks of this size.
MAX_WORDS_IN_BATCH = 10000


class CorpusNotFoundError(FileNotFoundError, ValueError):
    """A corpus path that does not exist.

    It is a :class:`FileNotFoundError`, and also a :class:`ValueError` so that
    code written for gensim's ``PathLineSentences`` (which raises ``ValueError``
    for a missing path) keeps working.

    Examples
    --------
    >>> try:
    ...     PathLineSentences("no/such/dir")
    ... except FileNotFoundError as err:
    ...     print(err.filename)
    no/such/dir
    """


def _check_max_sentence_length(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_sentence_length must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"max_sentence_length must be at least 1, got {value}")
    return value


def _check_limit(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"limit must be None or an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"limit must be None or >= 0, got {value}")
    return value


def _is_path(source: Any) -> bool:
    return isinstance(source, (str, os.PathLike))


# The suffixes smart_open decompresses with its built-in codecs (smart_open 7).
COMPRESSED_SUFFIXES = (".bz2", ".gz", ".lz4", ".xz", ".zst")


def is_plain_local_file(source: Any) -> bool:
    """Whether ``source`` names a local file that needs no decompression.

    Examples
    --------
    >>> is_plain_local_file("corpus.txt"), is_plain_local_file("corpus.txt.gz")
    (True, False)
    >>> is_plain_local_file("s3://bucket/corpus.txt")
    False
    """
    if not _is_path(source):
        return False
    name = os.fspath(source)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    return "://" not in name and not name.lower().endswith(COMPRESSED_SUFFIXES)


def open_source(source, mode: str = "r", **kwargs) -> IO:
    """Open a path or URL (arguments as :func:`open`): a plain local file with :func:`open`,
    anything else (compressed, remote) with :func:`smart_open.open`, imported on first use.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "c.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("a b")
    >>> with open_source(path, "rb") as fin:
    ...     fin.read()
    b'a b'
    """
    if is_plain_local_file(source):
        return open(source, mode, **kwargs)
    import smart_open

    return smart_open.open(source, mode, **kwargs)


def _to_str(line: str | bytes) -> str:
    if isinstance(line, bytes):
        return line.decode("utf-8")
    return line


def _chunked_lines(
    lines: Iterable[str | bytes], limit: int | None, max_len: int
) -> Iterator[list[str]]:
    """Split each of the first ``limit`` lines into tokens, in chunks of at most ``max_len``.

    Blank lines give no sentence at all (as in gensim), but they do count
    towards ``limit``.
    """
    for line in itertools.islice(lines, limit):
        tokens = _to_str(line).split()
        if len(tokens) <= max_len:
            if tokens:
                yield tokens
            continue
        for start in range(0, len(tokens), max_len):
            yield tokens[start : start + max_len]


class LineSentence:
    """Sentences from a text file: one line is one sentence, tokens separated by whitespace.

    The file must be UTF-8 and already tokenized (e.g. lowercased, punctuation
    removed). Lines longer than ``max_sentence_length`` tokens are split into
    consecutive chunks, so no token is ever dropped. Blank lines are skipped.

    Parameters
    ----------
    source
        Path or URL of the file (``.gz``/``.bz2`` are decompressed on
        the fly), or an already open file object in text or binary mode. A
        file object must support ``seek(0)``: it is rewound at the start of
        every iteration, so two iterations over the same file object must
        not be interleaved.
    max_sentence_length
        Longest sentence yielded, in tokens.
    limit
        Read only the first ``limit`` lines (``None`` reads them all).

    Raises
    ------
    FileNotFoundError
        When iterating, if ``source`` is a path that does not exist.

    Examples
    --------
    >>> import io
    >>> corpus = LineSentence(io.BytesIO(b"a b c d e\\n\\nf g\\n"), max_sentence_length=2)
    >>> list(corpus)
    [['a', 'b'], ['c', 'd'], ['e'], ['f', 'g']]
    >>> list(LineSentence(io.BytesIO(b"a b\\nc\\n"), limit=1))
    [['a', 'b']]
    """

    def __init__(
        self,
        source: str | os.PathLike[str] | IO[Any],
        max_sentence_length: int = MAX_WORDS_IN_BATCH,
        limit: int | None = None,
    ) -> None:
        if not _is_path(source) and not callable(getattr(source, "seek", None)):
            raise TypeError(
                "source must be a path, a URL or a file object supporting seek(0), "
                f"got {type(source).__name__}"
            )
        self.source = source
        self.max_sentence_length = _check_max_sentence_length(max_sentence_length)
        self.limit = _check_limit(limit)

    def __iter__(self) -> Iterator[list[str]]:
        if _is_path(self.source):
            with open_source(self.source, "rb") as fin:
                yield from _chunked_lines(fin, self.limit, self.max_sentence_length)
        else:
            self.source.seek(0)
            yield from _chunked_lines(self.source, self.limit, self.max_sentence_length)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.source!r}, "
            f"max_sentence_length={self.max_sentence_length}, limit={self.limit})"
        )


class PathLineSentences:
    """Like :class:`LineSentence`, but over every file of a directory, in sorted file-name order.

    Each file is read as by :class:`LineSentence` (plain text, ``.gz`` or
    ``.bz2``). Subdirectories are ignored: the directory is not searched
    recursively. ``source`` may also be a single file (or a URL), which is then
    the only file read. The list of files is fixed when the object is created
    and is available as ``input_files``.

    Parameters
    ----------
    source
        A directory, a file, or a URL of a single file.
    max_sentence_length
        Longest sentence yielded, in tokens.
    limit
        Read only the first ``limit`` lines *of each file*.

    Raises
    ------
    FileNotFoundError
        If ``source`` does not exist (the error is also a
        ``ValueError``, see :class:`CorpusNotFoundError`).
    ValueError
        If ``source`` is a directory containing no files.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "b.txt").write_text("third line\\n")
    >>> _ = (folder / "a.txt").write_text("first line\\nsecond line\\n")
    >>> list(PathLineSentences(folder))
    [['first', 'line'], ['second', 'line'], ['third', 'line']]
    """

    def __init__(
        self,
        source: str | os.PathLike[str],
        max_sentence_length: int = MAX_WORDS_IN_BATCH,
        limit: int | None = None,
    ) -> None:
        if not _is_path(source):
            raise TypeError(f"source must be a path, got {type(source).__name__}")
        self.source = source
        self.max_sentence_length = _check_max_sentence_length(max_sentence_length)
        self.limit = _check_limit(limit)
        path = os.fspath(source)
        if os.path.isdir(path):
            files = [
                os.path.join(path, name)
                for name in sorted(os.listdir(path))
                if os.path.isfile(os.path.join(path, name))
            ]
            if not files:
                raise ValueError(f"directory contains no files: {path!r}")
            self.input_files: list[str] = files
        elif os.path.isfile(path) or "://" in path:
            self.input_files = [path]
        else:
            raise CorpusNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)

    def __iter__(self) -> Iterator[list[str]]:
        for name in self.input_files:
            with open_source(name, "rb") as fin:
                yield from _chunked_lines(fin, self.limit, self.max_sentence_length)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.source!r}, "
            f"max_sentence_length={self.max_sentence_length}, limit={self.limit})"
        )


# Bytes that are whitespace in ASCII. In UTF-8 they never occur inside a
# multi-byte character, so cutting a block just before one is always safe.
_ASCII_WHITESPACE = b" \t\n\r\x0b\x0c"


def _last_ascii_space(block: bytes) -> int:
    """Index of the last ASCII whitespace byte in ``block``, or -1."""
    return max(block.rfind(_ASCII_WHITESPACE[i : i + 1]) for i in range(len(_ASCII_WHITESPACE)))


class Text8Corpus:
    """Sentences from a file that is a single huge line of tokens, such as text8.

    The file (UTF-8, optionally ``.gz``/``.bz2``, or a URL) has no sentence
    marks, so the token stream is cut into sentences of exactly
    ``max_sentence_length`` tokens (the last one may be shorter). The file is
    read in blocks, never loaded whole; a token that straddles the end of a
    block, or is longer than a block, is kept intact.

    Parameters
    ----------
    fname
        Path or URL of the file.
    max_sentence_length
        Length of each sentence, in tokens.

    Raises
    ------
    FileNotFoundError
        When iterating, if ``fname`` is a path that does not exist.

    Examples
    --------
    >>> import os, tempfile
    >>> fd, name = tempfile.mkstemp()
    >>> with os.fdopen(fd, "w") as f:
    ...     _ = f.write("anarchism originated as a term of abuse")
    >>> list(Text8Corpus(name, max_sentence_length=3))
    [['anarchism', 'originated', 'as'], ['a', 'term', 'of'], ['abuse']]
    >>> os.remove(name)
    """

    #: Bytes read from the file at a time.
    block_size = 8192

    def __init__(
        self, fname: str | os.PathLike[str], max_sentence_length: int = MAX_WORDS_IN_BATCH
    ) -> None:
        if not _is_path(fname):
            raise TypeError(f"fname must be a path or a URL, got {type(fname).__name__}")
        self.fname = fname
        self.max_sentence_length = _check_max_sentence_length(max_sentence_length)

    def __iter__(self) -> Iterator[list[str]]:
        max_len = self.max_sentence_length
        sentence: list[str] = []
        rest = b""
        with open_source(self.fname, "rb") as fin:
            while True:
                block = fin.read(self.block_size)
                if not block:
                    sentence.extend(rest.decode("utf-8").split())
                    break
                # ``rest`` is the unfinished token carried over from the previous block;
                # only the new block needs searching for the last token boundary.
                cut = _last_ascii_space(block)
                if cut < 0:
                    rest += block  # still inside one (long) token
                    continue
                cut += len(rest)
                text = rest + block
                rest = text[cut:]
                sentence.extend(text[:cut].decode("utf-8").split())
                if len(sentence) >= max_len:
                    start = 0
                    while len(sentence) - start >= max_len:
                        yield sentence[start : start + max_len]
                        start += max_len
                    sentence = sentence[start:]
        for start in range(0, len(sentence), max_len):
            yield sentence[start : start + max_len]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.fname!r}, max_sentence_length={self.max_sentence_length})"
        )
