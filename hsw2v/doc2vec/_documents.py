"""Documents for Doc2Vec: their tags and jobs (``TaggedDocument`` and ``TaggedLineDocument``
are the corpus readers', :mod:`hsw2v.corpora`).

A document is its words and its tags, gensim's ``TaggedDocument(words, tags)``; a tag is an
int (its own row of ``model.dv``: gensim's "plain int" tags) or any other hashable key
(str, usually), which gets the next row after the ints. :class:`TagScan` collects the tags
of one corpus pass as gensim's ``Doc2Vec.scan_vocab`` does. :func:`iter_doc_jobs` turns
documents into the kernel's jobs: each document's word ids, led by its tag tokens (negative
ids ``-(row + 1)``, see ``hsw2v._kernels._inner.Trainer``'s ``docs``); a tag the vocabulary
scan did not see is skipped, as gensim's training skips it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from hsw2v._kernels._inner import encode_documents
from hsw2v.running.epochs import Job


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


class TagScan:
    """The tags of one corpus pass, gensim's way: int tags ``0..max`` are rows ``0..max``,
    every other tag a row after them in first-seen order; ``doc_count`` counts the
    documents that carry each row's tag."""

    def __init__(self) -> None:
        self.max_int = -1
        self.keys: dict = {}  # other tags, first-seen order
        self.int_docs: dict = {}
        self.documents = 0

    def add(self, tags, index: int) -> None:
        for tag in tags:
            if is_int_tag(tag):
                if tag < 0:
                    raise ValueError(
                        f"document #{index} has the tag {tag}: an int tag is a row of "
                        "model.dv and must be >= 0 (use a str tag for other keys)"
                    )
                tag = int(tag)
                self.max_int = max(self.max_int, tag)
                self.int_docs[tag] = self.int_docs.get(tag, 0) + 1
            else:
                try:
                    self.keys[tag] = self.keys.get(tag, 0) + 1
                except TypeError:
                    raise TypeError(
                        f"document #{index} has the unhashable tag {tag!r}: tags are ints or strs"
                    ) from None
        self.documents += 1

    def index_to_key(self) -> list:
        """The keys of ``model.dv`` in row order."""
        return list(range(self.max_int + 1)) + list(self.keys)

    def doc_counts(self) -> np.ndarray:
        counts = np.zeros(self.max_int + 1 + len(self.keys), dtype=np.int64)
        for tag, n in self.int_docs.items():
            counts[tag] = n
        counts[self.max_int + 1 :] = list(self.keys.values())
        return counts


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
