"""Small corpus shipped with hsw2v, for demos, examples and tests.

The demo corpus is the King James Bible (public domain): 31,102 verses, one
verse per line, lowercase tokens without punctuation, gzip-compressed
(about 790,000 words).

Examples
--------
>>> from hsw2v.datasets import demo_corpus
>>> next(iter(demo_corpus()))[:4]
['in', 'the', 'beginning', 'god']
"""

from __future__ import annotations

import atexit
import contextlib
import os
from importlib import resources

from hsw2v.corpora import LineSentence

__all__ = ["demo_corpus", "demo_corpus_path"]

_DEMO_RESOURCE = ("data", "kjv.txt.gz")
_extracted: dict[str, str] = {}
_cleanup = contextlib.ExitStack()


def demo_corpus_path() -> str:
    """Return the file-system path of the demo corpus (gzip text, one verse per line).

    The file lives inside the installed package. Should the package be
    installed in a form that has no real files (e.g. a zip archive), the corpus
    is copied to a temporary file that is removed when the interpreter exits.

    Examples
    --------
    >>> path = demo_corpus_path()
    >>> path.endswith("kjv.txt.gz")
    True
    """
    resource = resources.files("hsw2v") / _DEMO_RESOURCE[0] / _DEMO_RESOURCE[1]
    if isinstance(resource, os.PathLike):
        return os.fspath(resource)
    key = "/".join(_DEMO_RESOURCE)
    if key not in _extracted:
        if not _extracted:
            atexit.register(_cleanup.close)
        _extracted[key] = os.fspath(_cleanup.enter_context(resources.as_file(resource)))
    return _extracted[key]


def demo_corpus(max_sentence_length: int = 10000, limit: int | None = None) -> LineSentence:
    """Return the demo corpus as a re-iterable :class:`~hsw2v.corpora.LineSentence`.

    Parameters
    ----------
    max_sentence_length
        Passed on to :class:`~hsw2v.corpora.LineSentence`.
    limit
        Read only the first ``limit`` verses (``None`` reads all 31,102).

    Examples
    --------
    >>> verses = list(demo_corpus(limit=3))
    >>> len(verses), verses[2]
    (3, ['and', 'god', 'said', 'let', 'there', 'be', 'light', 'and', 'there', 'was', 'light'])
    """
    return LineSentence(demo_corpus_path(), max_sentence_length=max_sentence_length, limit=limit)
