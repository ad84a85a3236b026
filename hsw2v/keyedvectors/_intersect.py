"""Merge vectors from a word2vec C format file into existing keys (gensim's
``KeyedVectors.intersect_word2vec_format``).

The file is streamed with the readers of :mod:`hsw2v.keyedvectors._word2vec_format` (text or binary, same
checks and error messages); only the vectors of keys already present are copied, and the file
is never held in memory.

``lockf`` is gensim's lock factor of the merged vectors: it is written into
``kv.vectors_lockf`` for each merged key, and training multiplies each input-vector update
by its word's factor (0.0, the default, freezes the merged vectors; 1.0 trains them
normally). ``vectors_lockf`` is first widened to one factor per key, keeping the factor each
key had (gensim reads factor ``w % len(vectors_lockf)`` for word ``w``), and created with
factors of 1.0 if ``kv`` has none. (gensim 4.4 skips that step: with its default of a single
factor the assignment raises IndexError, and a plain ``KeyedVectors`` has no
``vectors_lockf`` at all, so the call fails unless the caller resized it first.)
"""

from __future__ import annotations

import logging

import numpy as np

from hsw2v.corpora import open_source
from hsw2v.keyedvectors._word2vec_format import _parse_header, _read_binary, _read_text

logger = logging.getLogger(__name__)


class _Merger:
    """The reader's sink: keeps the vectors of known keys (at most one per key of ``kv``),
    to be copied in only once the whole file has been read without error."""

    def __init__(self, kv, fname, vocab_size, binary):
        self.kv, self.fname, self.vocab_size, self.binary = kv, fname, vocab_size, binary
        self.found: dict[int, np.ndarray] = {}

    def add(self, word, values, where):
        index = self.kv.key_to_index.get(word)
        if index is None:
            return
        if not np.isfinite(values).all():
            place = f"byte offset {where}" if self.binary else f"line {where}"
            raise ValueError(
                f"{self.fname}: {place}: the vector of {word!r} holds NaN or infinite values"
            )
        self.found.setdefault(index, np.array(values, dtype=self.kv.vectors.dtype))


def intersect_word2vec(
    kv, fname, lockf=0.0, binary=False, encoding="utf8", unicode_errors="strict"
) -> int:
    """Copy into ``kv`` the vectors that ``fname`` holds for keys ``kv`` already has; other
    keys of the file are ignored, and ``kv``'s keys stay as they are (a key the file holds
    twice takes its first vector). Returns how many vectors were merged. Nothing is changed
    unless the whole file reads correctly. Raises ValueError for a file whose vector size differs from ``kv``'s, or that
    is malformed (see :meth:`hsw2v.KeyedVectors.load_word2vec_format`).

    >>> import os, tempfile
    >>> from hsw2v.keyedvectors import KeyedVectors
    >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b"], [[0.0, 0.0], [0.0, 0.0]])
    >>> path = os.path.join(tempfile.mkdtemp(), "v.txt")
    >>> _ = open(path, "w").write("2 2\\nb 1 2\\nzz 3 4\\n")
    >>> intersect_word2vec(kv, path, lockf=1.0), kv["b"].tolist(), kv.index_to_key
    (1, [1.0, 2.0], ['a', 'b'])
    """
    lockf = float(lockf)
    if not np.isfinite(lockf):
        raise ValueError(f"lockf must be a finite number, got {lockf}")
    with open_source(fname, "rb") as fin:
        header = fin.readline()
        vocab_size, vector_size = _parse_header(fname, header, encoding)
        if vector_size != kv.vector_size:
            raise ValueError(
                f"incompatible vector size {vector_size} in file {fname}: these vectors have "
                f"{kv.vector_size} dimensions"
            )
        merger = _Merger(kv, fname, vocab_size, binary)
        if binary:
            _read_binary(
                fname,
                fin,
                merger,
                len(header),
                vector_size,
                kv.vectors.dtype,
                encoding,
                unicode_errors,
            )
        else:
            _read_text(
                fname, fin, merger, 2, vector_size, kv.vectors.dtype, encoding, unicode_errors
            )
    if merger.found:
        rows = np.fromiter(merger.found, dtype=np.int64, count=len(merger.found))
        kv.vectors[rows] = np.stack(list(merger.found.values()))
        kv.vectors_lockf = _per_key_lock_factors(kv)
        kv.vectors_lockf[rows] = lockf
    kv.norms = None
    logger.info(
        "merged %d vectors into %s matrix from %s", len(merger.found), kv.vectors.shape, fname
    )
    return len(merger.found)


def _per_key_lock_factors(kv) -> np.ndarray:
    """``kv.vectors_lockf`` as one float32 factor per key, each key keeping the factor it had
    (``factors[w % len(factors)]``, as training reads them); all 1.0 if ``kv`` has none."""
    n = len(kv.index_to_key)
    factors = getattr(kv, "vectors_lockf", None)
    if factors is None or np.size(factors) == 0:
        return np.ones(n, dtype=np.float32)
    factors = np.asarray(factors, dtype=np.float32).ravel()
    return factors[np.arange(n) % len(factors)]
