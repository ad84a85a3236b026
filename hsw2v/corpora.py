"""Streaming corpora: iterate sentences (lists of str tokens) straight from files.

The classes here behave like their namesakes in ``gensim.models.word2vec`` (and
``TaggedDocument`` / ``TaggedLineDocument``, Doc2Vec's documents, like
``gensim.models.doc2vec``'s) and can be used with either library. Every file is opened through :func:`open_source`
(:mod:`hsw2v._sources`, whose names this module re-exports): plain local files directly,
and compressed files (``.gz``, ``.bz2``, ...) and any URL that smart_open understands
(``s3://``, ``https://``, ...) through :func:`smart_open.open`, with compression inferred
from the file name. smart_open is imported only when it is needed (it costs about 0.3 s and
15 MB).

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
from collections import namedtuple
from collections.abc import Iterable, Iterator
from typing import IO, Any

from hsw2v._sources import (
    COMPRESSED_SUFFIXES,
    RECENT_NS,
    file_identity,
    is_path,
    is_plain_local_file,
    open_source,
)

__all__ = [  # with the names of hsw2v._sources (opening and identifying a file)
    "COMPRESSED_SUFFIXES",
    "MAX_LINE_BYTES",
    "MAX_WORDS_IN_BATCH",
    "RECENT_NS",
    "CorpusDecodeError",
    "CorpusNotFoundError",
    "CorpusReadError",
    "FixedCorpus",
    "LineSentence",
    "PathLineSentences",
    "TaggedDocument",
    "TaggedLineDocument",
    "Text8Corpus",
    "corpus_identity",
    "file_identity",
    "is_plain_local_file",
    "open_source",
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


def _to_str(line: str | bytes) -> str:
    if isinstance(line, bytes):
        return line.decode("utf-8")
    return line


#: The longest line :class:`LineSentence` and :class:`PathLineSentences` read (a whole line
#: is held in memory before it is split): longer ones, or a damaged stream that inflates
#: without a newline, stop with a CorpusReadError naming the file and line.
MAX_LINE_BYTES = 1 << 30


class CorpusReadError(ValueError):
    """A corpus file that cannot be read as lines of UTF-8 text: a truncated or damaged
    ``.gz``/``.bz2``/``.xz`` stream, a line longer than :data:`MAX_LINE_BYTES`, or bytes
    that are not UTF-8. The message names the file and the line."""


class CorpusDecodeError(CorpusReadError, UnicodeDecodeError):
    """A corpus line that is not UTF-8: a :class:`CorpusReadError` naming the file and line,
    and still the ``UnicodeDecodeError`` (with its position) that code written for gensim
    catches."""

    def __init__(self, message: str, cause: UnicodeDecodeError):
        UnicodeDecodeError.__init__(
            self, cause.encoding, cause.object, cause.start, cause.end, cause.reason
        )
        self.message = message

    def __str__(self) -> str:
        return self.message


def _file_lines(fin, name) -> Iterator[str]:
    """The lines of an open binary file, decoded, each at most :data:`MAX_LINE_BYTES`
    long; every read or decode failure becomes a :class:`CorpusReadError` naming ``name``
    and the line number (gzip and bz2 name neither)."""
    import zlib

    number = 0
    where = f"{os.fspath(name)!r}"
    while True:
        try:
            line = fin.readline(MAX_LINE_BYTES + 1)
        except (EOFError, OSError, zlib.error, MemoryError) as exc:
            hint = "" if isinstance(exc, MemoryError) else " (a truncated or damaged file?)"
            raise CorpusReadError(
                f"{where}: cannot read line {number + 1}: {type(exc).__name__}: "
                f"{exc or 'out of memory'}{hint}"
            ) from None
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise CorpusReadError(
                f"{where}: line {number} is longer than {MAX_LINE_BYTES} bytes, the longest "
                "line LineSentence reads (a damaged or decompressing stream, or a file "
                "without newlines): put one sentence per line, or read a file that is one "
                "huge line of tokens with Text8Corpus"
            )
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorpusDecodeError(
                f"{where}: line {number} is not UTF-8 ({exc.reason} at byte {exc.start}): "
                "convert the file to UTF-8 first",
                exc,
            ) from None


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
        if not is_path(source) and not callable(getattr(source, "seek", None)):
            raise TypeError(
                "source must be a path, a URL or a file object supporting seek(0), "
                f"got {type(source).__name__}"
            )
        self.source = source
        self.max_sentence_length = _check_max_sentence_length(max_sentence_length)
        self.limit = _check_limit(limit)

    def __iter__(self) -> Iterator[list[str]]:
        if is_path(self.source):
            with open_source(self.source, "rb") as fin:
                lines = _file_lines(fin, self.source)
                yield from _chunked_lines(lines, self.limit, self.max_sentence_length)
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
        if not is_path(source):
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
                lines = _file_lines(fin, name)
                yield from _chunked_lines(lines, self.limit, self.max_sentence_length)

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
        if not is_path(fname):
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


class FixedCorpus:
    """Mark a re-iterable corpus as yielding the same sentences, in the same order, on every
    pass, so that :class:`hsw2v.Word2Vec` may read it once and train later epochs from the
    word ids it kept in memory (up to ``cache_words`` tokens).

    Without this mark, a corpus is read once for the vocabulary and once per epoch, as in
    gensim, except hsw2v's own file readers over unchanged files (see
    :func:`corpus_identity`). The mark is a promise hsw2v cannot check: a corpus that
    reshuffles in ``__iter__``, or a list changed after ``build_vocab()``, would then train
    on what was read first.

    Parameters
    ----------
    corpus
        A re-iterable corpus (a list of token lists, or any object whose ``__iter__`` starts
        again from the beginning); not a one-shot iterator such as a generator.

    Raises
    ------
    TypeError
        If ``corpus`` is a one-shot iterator, a string or not iterable.

    Examples
    --------
    >>> from hsw2v import FixedCorpus, Word2Vec
    >>> corpus = FixedCorpus([["cat", "say", "meow"], ["dog", "say", "woof"]] * 50)
    >>> model = Word2Vec(corpus, vector_size=8, min_count=1, workers=1, epochs=3)
    >>> len(model.wv)
    5
    """

    def __init__(self, corpus: Iterable) -> None:
        if isinstance(corpus, Iterator):
            raise TypeError(
                "FixedCorpus needs a re-iterable corpus (e.g. a list or LineSentence), got a "
                f"one-shot iterator ({type(corpus).__name__}): training reads it more than once"
            )
        if not isinstance(corpus, Iterable) or isinstance(corpus, (str, bytes)):
            raise TypeError(
                "FixedCorpus needs an iterable of sentences (lists of str tokens), got "
                f"{type(corpus).__name__}"
            )
        self.corpus = corpus

    def __iter__(self) -> Iterator:
        return iter(self.corpus)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.corpus!r})"


class TaggedDocument(namedtuple("TaggedDocument", "words tags")):
    """One document: ``words`` (a list of str tokens) and ``tags`` (a list of int or str
    keys: the rows of ``model.dv`` it trains), as gensim's ``TaggedDocument``.

    Examples
    --------
    >>> TaggedDocument(["the", "cat"], [0])
    TaggedDocument<['the', 'cat'], [0]>
    """

    __slots__ = ()

    def __str__(self):
        return f"{self.__class__.__name__}<{self.words}, {self.tags}>"

    __repr__ = __str__


class TaggedLineDocument:
    """Documents of a text file, one per line, tokens separated by whitespace: the line's
    number (from 0) is its tag, as gensim's ``TaggedLineDocument`` (and Doc2Vec's
    ``corpus_file``)."""

    def __init__(self, source):
        self.source = source

    def __iter__(self) -> Iterator[TaggedDocument]:
        # a blank line is an empty document: the line numbers stay the tags
        if is_path(self.source):
            with open_source(self.source, "rb") as fin:
                for number, line in enumerate(_file_lines(fin, self.source)):
                    yield TaggedDocument(line.split(), [number])
        else:
            self.source.seek(0)
            for number, line in enumerate(self.source):
                yield TaggedDocument(_to_str(line).split(), [number])

    def __repr__(self) -> str:
        return f"TaggedLineDocument({self.source!r})"


def corpus_identity(corpus) -> tuple | None:
    """A value that is equal for two passes over ``corpus`` only if they yield the same
    sentences, or None when that cannot be proven (then the corpus must be read every pass).

    Proven: a :class:`FixedCorpus` (by the user's promise: its identity is the object it
    wraps, which the caller keeps alive while the identity is in use), and
    :class:`LineSentence` and :class:`TaggedLineDocument` (over a path),
    :class:`PathLineSentences` and :class:`Text8Corpus`, with their own ``__iter__``, over files whose :func:`file_identity` is known: their
    identity is their class, settings and files.

    Parameters
    ----------
    corpus
        Any corpus given to :class:`hsw2v.Word2Vec`.

    Returns
    -------
    tuple or None
        The identity, or None when the corpus must be read every pass.

    Examples
    --------
    >>> import os, tempfile
    >>> fd, name = tempfile.mkstemp()
    >>> os.close(fd)
    >>> os.utime(name, ns=(0, 0))
    >>> corpus_identity(LineSentence(name)) == corpus_identity(LineSentence(name))
    True
    >>> corpus_identity(LineSentence(name)) == corpus_identity(LineSentence(name, limit=5))
    False
    >>> corpus_identity([["a", "b"]]) is None
    True
    >>> os.remove(name)
    """
    if isinstance(corpus, FixedCorpus):  # the same wrapped object is the same corpus
        return ("FixedCorpus", id(corpus.corpus))
    kind = type(corpus)
    if isinstance(corpus, LineSentence) and kind.__iter__ is LineSentence.__iter__:
        if not is_path(corpus.source):
            return None  # a file object: its content is not ours to vouch for
        files = [corpus.source]
        settings = (corpus.max_sentence_length, corpus.limit)
    elif isinstance(corpus, PathLineSentences) and kind.__iter__ is PathLineSentences.__iter__:
        files = list(corpus.input_files)
        settings = (corpus.max_sentence_length, corpus.limit)
    elif isinstance(corpus, Text8Corpus) and kind.__iter__ is Text8Corpus.__iter__:
        files = [corpus.fname]
        settings = (corpus.max_sentence_length,)
    elif isinstance(corpus, TaggedLineDocument) and kind.__iter__ is TaggedLineDocument.__iter__:
        if not is_path(corpus.source):
            return None
        files = [corpus.source]
        settings = ()
    else:
        return None
    identities = []
    for path in files:
        identity = file_identity(path)
        if identity is None:
            return None
        identities.append((os.fspath(path), identity))
    return (kind.__module__, kind.__qualname__, settings, tuple(identities))
