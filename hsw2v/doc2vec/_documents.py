"""Documents for Doc2Vec: their tags and jobs (``TaggedDocument`` and ``TaggedLineDocument``
are the corpus readers', :mod:`hsw2v.corpora`).

A document is its words and its tags, gensim's ``TaggedDocument(words, tags)``; a tag is an
int (its own row of ``model.dv``: gensim's "plain int" tags) or a str, which gets the next
row after the ints (gensim takes any hashable key; a model file stores ints and strs, so
:func:`check_tag` refuses the others while the vocabulary is scanned, before any training).
:class:`TagScan` collects the tags of one corpus pass as gensim's ``Doc2Vec.scan_vocab``
does. :func:`iter_doc_jobs` turns documents into the kernel's jobs: each document's word
ids, led by its tag tokens (negative ids ``-(row + 1)``, see
``hsw2v._kernels._inner.Trainer``'s ``docs``); a tag the vocabulary scan did not see is
skipped, as gensim's training skips it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from hsw2v._kernels._inner import encode_documents
from hsw2v.keyedvectors._wmd import available_memory
from hsw2v.running.epochs import Job
from hsw2v.running.params import INT32_MAX
from hsw2v.vocab import UnencodableTokenError

# The kernel names a document row by an int32 tag token -(row + 1): at most 2**31 - 1 rows.
MAX_DOC_ROWS = INT32_MAX


def _document_parts(document, index: int):
    """``(words, tags)`` of one corpus item, or a TypeError that says what a document is."""
    try:
        words, tags = document.words, document.tags
    except AttributeError:
        raise TypeError(
            f"document #{index} is a {type(document).__name__}, not a TaggedDocument: a "
            "Doc2Vec corpus yields TaggedDocument(words, tags) items (or objects with "
            "`words` and `tags`), e.g. TaggedDocument(['a', 'b'], [0])"
        ) from None
    if isinstance(words, (str, bytes)):
        raise TypeError(
            f"document #{index}'s words are a string: they must be a list of str tokens "
            "(split the text first)"
        )
    if isinstance(tags, (str, bytes, int, np.integer)):
        raise TypeError(
            f"document #{index}'s tags are {tags!r}, not a list: give a list of tags, e.g. "
            f"[{tags!r}]"
        )
    return words, tags


def is_int_tag(tag) -> bool:
    """Whether ``tag`` is a plain-int tag (its own row), as gensim tells them apart."""
    return isinstance(tag, (int, np.integer)) and not isinstance(tag, bool)


def row_bytes(rows: int, vector_size: int) -> int:
    """Bytes of ``rows`` document rows of ``vector_size`` float32s."""
    return rows * vector_size * np.dtype(np.float32).itemsize


def check_int_tag(tag: int, where: str, vector_size: int) -> None:
    """A ValueError unless the int ``tag`` (a row of ``model.dv``) is >= 0 and within the
    :data:`MAX_DOC_ROWS` rows a tag token can name."""
    if tag < 0:
        raise ValueError(
            f"{where} the tag {tag}: an int tag is a row of model.dv and must be >= 0 (use a "
            "str tag for other keys)"
        )
    if tag >= MAX_DOC_ROWS:
        raise ValueError(
            f"{where} the int tag {tag}: an int tag is a row of model.dv, so tag {tag} needs "
            f"{tag + 1:,} document rows of vector_size={vector_size} floats "
            f"({row_bytes(tag + 1, vector_size):,} bytes), more than the {MAX_DOC_ROWS:,} rows "
            "a model can hold; give sparse or large ids as str tags, e.g. str(id)"
        )


def check_tag(tag, where: str) -> str:
    """A str ``tag`` as the plain ``str`` it equals, or the error for a tag that is neither
    an int nor a str (``where`` names it: "document #3 has"): a TypeError for another type
    (bool, float, None, bytes, tuple...), an :class:`hsw2v.vocab.UnencodableTokenError` for a
    str that UTF-8 cannot encode (no model file could store either)."""
    if not isinstance(tag, str):
        bool_note = (
            " (a bool is not an int tag here: use 0 or 1, or a str such as 'True')"
            if isinstance(tag, (bool, np.bool_))
            else ""
        )
        raise TypeError(
            f"{where} the tag {tag!r:.80} of type {type(tag).__name__}{bool_note}: Doc2Vec "
            "tags are ints (rows of model.dv) or strs; use int or str tags, e.g. str(tag)"
        )
    try:
        tag.encode("utf-8")
    except UnicodeEncodeError:
        raise UnencodableTokenError(
            f"{where} the tag {tag!r}, which holds a lone surrogate that UTF-8 cannot encode, "
            "so no model file could store it: decode the text with errors='replace' (or "
            "'ignore') rather than 'surrogateescape'",
            tag,
        ) from None
    return tag if type(tag) is str else str(tag)


class TagScan:
    """The tags of one corpus pass, gensim's way: int tags ``0..max`` are rows ``0..max``,
    every str tag a row after them in first-seen order; ``doc_count`` counts the documents
    that carry each row's tag. Each tag is checked when first seen (:func:`check_tag`,
    :func:`check_int_tag`: ``vector_size`` sizes the rows an int tag asks for)."""

    def __init__(self, vector_size: int = 100) -> None:
        self.vector_size = vector_size
        self.max_int = -1
        self.keys: dict = {}  # str tags, first-seen order
        self.int_docs: dict = {}
        self.documents = 0

    def add(self, tags, index: int) -> None:
        for tag in tags:
            if is_int_tag(tag):
                tag = int(tag)
                if not 0 <= tag <= self.max_int:  # a new largest row (or a negative one)
                    check_int_tag(tag, f"document #{index} has", self.vector_size)
                    self.max_int = tag
                self.int_docs[tag] = self.int_docs.get(tag, 0) + 1
                continue
            try:
                seen = self.keys.get(tag)
            except TypeError:
                raise TypeError(
                    f"document #{index} has the unhashable tag {tag!r:.80}: use int or str tags"
                ) from None
            if seen is None:
                self.keys[check_tag(tag, f"document #{index} has")] = 1
            else:
                self.keys[tag] = seen + 1
        self.documents += 1

    def add_line_numbers(self, lines: int) -> None:
        """The tags of ``lines`` documents each tagged with its line number from 0
        (:class:`hsw2v.corpora.TaggedLineDocument`'s), as :meth:`add` would take them."""
        if lines > 0 and lines - 1 > self.max_int:
            check_int_tag(lines - 1, f"document #{lines - 1} has", self.vector_size)
            self.max_int = lines - 1
        for tag in range(lines):
            self.int_docs[tag] = self.int_docs.get(tag, 0) + 1
        self.documents += lines

    @property
    def rows(self) -> int:
        """The rows of ``model.dv`` these tags need."""
        return self.max_int + 1 + len(self.keys)

    def index_to_key(self) -> list:
        """The keys of ``model.dv`` in row order."""
        return list(range(self.max_int + 1)) + list(self.keys)

    def doc_counts(self) -> np.ndarray:
        counts = np.zeros(self.max_int + 1 + len(self.keys), dtype=np.int64)
        for tag, n in self.int_docs.items():
            counts[tag] = n
        counts[self.max_int + 1 :] = list(self.keys.values())
        return counts


# Bytes a row of model.dv takes beyond its floats: its key in index_to_key and key_to_index
# and its doc_count (gensim's estimate_memory counts 200 a tag, doctag_lookup).
ROW_OVERHEAD = 200


def check_doc_rows(scan: TagScan) -> None:
    """Before any row is allocated: the scanned documents need at least one row of
    ``model.dv`` (a ValueError: no document has a tag), at most :data:`MAX_DOC_ROWS`, and no
    more memory than the system has available (a MemoryError: int tags are rows, so a large
    int tag asks for every row below it)."""
    rows = scan.rows
    if rows == 0:
        raise ValueError(
            f"none of the {scan.documents:,} documents has a tag: Doc2Vec trains one vector "
            "per tag (model.dv), so give each document one, e.g. TaggedDocument(words, [i]) "
            "for the i-th document (TaggedLineDocument tags each line with its number); for "
            "word vectors alone use Word2Vec"
        )
    what = (
        f"the tags need {rows:,} document rows of vector_size={scan.vector_size} floats "
        f"({row_bytes(rows, scan.vector_size):,} bytes)"
    )
    if scan.max_int >= 0:
        what += f": the largest int tag, {scan.max_int}, is a row, and every row below it too"
    if rows > MAX_DOC_ROWS:
        raise ValueError(
            f"{what}, more than the {MAX_DOC_ROWS:,} rows a model can hold; give sparse or "
            "large ids as str tags, e.g. str(id)"
        )
    need = rows * (row_bytes(1, scan.vector_size) + ROW_OVERHEAD)
    have = available_memory()
    if have is not None and need > have:
        raise MemoryError(
            f"{what}, about {need:,} bytes with their keys, and {have:,} bytes of memory are "
            "available; give sparse or large ids as str tags (e.g. str(id)), which take one "
            "row each"
        )


def words_of(corpus: Iterable, scan: TagScan) -> Iterator[list]:
    """The words of each document of ``corpus``, its tags going to ``scan`` on the way."""
    for index, document in enumerate(corpus):
        words, tags = _document_parts(document, index)
        scan.add(tags, index)
        yield words if type(words) is list else list(words)


def iter_doc_jobs(
    corpus: Iterable,
    key_to_index: dict,
    dv_index: dict,
    n_docs: int,
    batch_words: int,
    n_words: int = -1,
) -> Iterator[Job]:
    """Group documents into jobs of about ``batch_words`` raw words, whole documents only
    (a long one is trained whole: gensim reads only its first 10,000 words); each
    document's word ids are led by its tag tokens ``-(row + 1)`` (read and mapped in the
    kernel module: ``encode_documents``)."""
    documents = iter(corpus)
    first = 0
    while True:
        ids, ends, raw, n = encode_documents(
            documents, key_to_index, dv_index, n_docs, n_words, batch_words,
            _document_parts, first,
        )  # fmt: skip
        if n == 0:
            return
        first += n
        yield Job(ids=ids, ends=ends, raw_words=raw, n_sentences=n)
