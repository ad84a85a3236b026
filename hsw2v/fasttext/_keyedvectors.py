"""FastTextKeyedVectors: word vectors that also answer for unseen words, from their n-grams.

gensim 4.4's ``gensim.models.fasttext.FastTextKeyedVectors``, with fastText's own storage:

``input_matrix``
    ONE C-contiguous array of ``V + bucket`` rows (``V`` words, then ``bucket`` n-gram rows),
    fastText's input matrix, which the trainer updates in place.
``vectors_vocab``, ``vectors_ngrams``
    Views of its first ``V`` and last ``bucket`` rows (gensim's two arrays).
``vectors``
    The word vectors users query: each word's row averaged with its n-gram rows
    (:meth:`FastTextKeyedVectors.adjust_vectors`, fastText's ``getWordVector``).

A word outside the vocabulary gets the mean of its n-gram rows (fastText's and gensim's
out-of-vocabulary vector); the n-grams and their buckets are :mod:`hsw2v.fasttext._ngrams`.

Example
-------
>>> kv = FastTextKeyedVectors(2, min_n=3, max_n=3, bucket=10)
>>> kv.add_vectors(["cat", "dog"], [[0.0, 0.0], [0.0, 0.0]])
>>> kv.resize_vectors()
>>> kv.input_matrix.shape, kv.vectors_ngrams.shape, "caat" in kv, kv.has_index_for("caat")
((12, 2), (10, 2), True, False)
"""

from __future__ import annotations

import logging

import numpy as np

from hsw2v._gensim.convert_fasttext import ftkv_from_gensim, ftkv_to_gensim
from hsw2v._guard import refuse_while_training
from hsw2v.fasttext import _schema
from hsw2v.fasttext._ngrams import ngram_hashes, subword_table
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.keyedvectors._similarity import KEY_TYPES, REAL, key_list, unknown_key

logger = logging.getLogger(__name__)

__all__ = ["FastTextKeyedVectors"]

_SUM_BLOCK = 1 << 16  # n-gram rows gathered at a time by adjust_vectors and get_vector


def _check_settings(min_n, max_n, bucket) -> tuple[int, int, int]:
    values = (int(min_n), int(max_n), int(bucket))
    if min(values) < 0:
        raise ValueError(f"min_n, max_n and bucket must be >= 0, got {values}")
    return values


def _fill_like_gensim(out: np.ndarray, prior, seed: int) -> None:
    """Fill `out` as gensim's ``prep_vectors`` builds an array of its shape: `prior` itself if
    it has that shape, else uniform values in ``[-1/d, 1/d)`` from ``default_rng(seed)``
    with `prior` copied over the top-left corner."""
    if prior is not None and prior.shape == out.shape:
        out[...] = prior
        return
    np.random.default_rng(seed=seed).random(dtype=out.dtype, out=out)
    out *= 2.0
    out -= 1.0
    out /= out.shape[1]
    if prior is not None and prior.ndim == 2:
        rows, cols = min(len(prior), len(out)), min(prior.shape[1], out.shape[1])
        out[:rows, :cols] = prior[:rows, :cols]


class FastTextKeyedVectors(KeyedVectors):
    """Word vectors with character n-gram vectors; gensim 4.4's ``FastTextKeyedVectors``.

    Storage: ``input_matrix`` holds the ``V`` word rows and then the ``bucket`` n-gram rows
    in one C-contiguous array (fastText's layout); ``vectors_vocab`` and ``vectors_ngrams``
    are views of it. Assigning an array of the view's shape copies it into those rows (the
    array object stays, so a trainer holding it sees the values); assigning one with another
    number of rows (gensim code resizing) builds a new ``input_matrix``; a width other than
    ``vector_size`` is a ValueError. Before the n-gram rows are allocated
    (:meth:`resize_vectors`, or assigning ``vectors_ngrams``) ``vectors_ngrams`` is None, as
    in gensim, and ``input_matrix`` holds the word rows only.

    Differences from gensim: :meth:`adjust_vectors` sums without a Python loop over words;
    assigning ``bucket``, ``min_n`` or ``max_n`` drops the cached :meth:`subword_table`, and
    a new ``bucket`` resizes allocated n-gram rows as :meth:`resize_vectors` would;
    :meth:`sort_by_descending_frequency` reorders the word rows too (gensim reorders only
    ``vectors``); ``save`` writes hsw2v's pickle-free bundle, ``input_matrix`` included.
    As in gensim, the inherited :meth:`add_vectors` adds keys and their ``vectors`` rows
    only: :meth:`resize_vectors` then gives the new keys word rows.

    Parameters
    ----------
    vector_size : int
        Dimensionality of the vectors.
    min_n, max_n : int
        Shortest and longest character n-gram.
    bucket : int
        Number of n-gram rows (hash buckets); 0 turns n-grams off.
    count : int, optional
        Number of word slots to preallocate.
    dtype : numpy dtype, optional
        float32 by default (the trainer's type).

    Attributes
    ----------
    input_matrix : numpy.ndarray
        ``(V + bucket, vector_size)``: word rows, then n-gram rows.
    vectors_vocab, vectors_ngrams : numpy.ndarray
        Views of ``input_matrix`` (``vectors_ngrams`` is None until allocated).
    vectors : numpy.ndarray
        The composed word vectors (``V`` rows), from :meth:`adjust_vectors`.
    buckets_word : list of numpy.ndarray
        Per word, the buckets (uint32) of its n-grams.
    vectors_vocab_lockf, vectors_ngrams_lockf : numpy.ndarray
        gensim's lock factors (one 1.0 each: train every row).

    Examples
    --------
    >>> kv = FastTextKeyedVectors(4, min_n=3, max_n=6, bucket=100)
    >>> kv.add_vectors(["night", "knight"], np.zeros((2, 4))); kv.resize_vectors()
    >>> kv["nights"].shape, len(kv.buckets_word[0])  # "<ni", ..., "ght>", "night>"
    ((4,), 14)
    """

    _bundle_section = "fasttext"  # the meta section of its files (hsw2v.fasttext._schema)

    def __init__(self, vector_size, min_n, max_n, bucket, count=0, dtype=REAL):
        super().__init__(vector_size, count=count, dtype=dtype)
        self._min_n, self._max_n, self._bucket = _check_settings(min_n, max_n, bucket)
        self.input_matrix = np.zeros((count, vector_size), dtype=dtype)
        self._vocab_rows = count  # the first rows of input_matrix are the words'
        self._ngrams_allocated = False  # the rows after them are the buckets'
        self._table = None  # (settings, keys, ptr, rows): subword_table()'s cache
        self._buckets = None  # buckets_word, made from the table
        self.vectors_vocab_lockf = np.ones(1, dtype=REAL)
        self.vectors_ngrams_lockf = np.ones(1, dtype=REAL)
        self.compatible_hash = True  # gensim's flag: fastText's hash, not gensim 3's

    def __str__(self):
        return (
            f"{self.__class__.__name__}<vector_size={self.vector_size}, {len(self)} keys, "
            f"min_n={self.min_n}, max_n={self.max_n}, bucket={self.bucket}>"
        )

    __repr__ = __str__

    # ------------------------------------------------------------------ settings
    @property
    def min_n(self) -> int:
        """Shortest character n-gram."""
        return self._min_n

    @min_n.setter
    def min_n(self, value):
        self._min_n = _check_settings(value, 0, 0)[0]
        self._table = None

    @property
    def max_n(self) -> int:
        """Longest character n-gram."""
        return self._max_n

    @max_n.setter
    def max_n(self, value):
        self._max_n = _check_settings(0, value, 0)[1]
        self._table = None

    @property
    def bucket(self) -> int:
        """Number of n-gram rows; assigning another value resizes allocated n-gram rows
        (kept rows first, new ones random as in :meth:`resize_vectors`)."""
        return self._bucket

    @bucket.setter
    def bucket(self, value):
        value = _check_settings(0, 0, value)[2]
        self._table = None
        if self._ngrams_allocated and value != self._bucket:
            ngrams = np.empty((value, self.vector_size), dtype=self.input_matrix.dtype)
            _fill_like_gensim(ngrams, self.vectors_ngrams, seed=1)
            self._rebuild(self.vectors_vocab, ngrams)
        self._bucket = value

    # ------------------------------------------------------------------ storage
    def _rows_of(self, value, name: str) -> np.ndarray:
        value = np.asarray(value)
        if value.ndim != 2 or value.shape[1] != self.vector_size:
            raise ValueError(
                f"{name} must be a 2-D array of {self.vector_size} columns (vector_size), "
                f"got shape {value.shape}"
            )
        return value

    def _rebuild(self, vocab: np.ndarray, ngrams) -> None:
        """A new ``input_matrix`` holding `vocab` rows, then `ngrams` rows (None: none yet)."""
        refuse_while_training(self, "replacing wv.input_matrix")
        extra = 0 if ngrams is None else len(ngrams)
        dtype = self.input_matrix.dtype
        matrix = np.empty((len(vocab) + extra, self.vector_size), dtype=dtype)
        matrix[: len(vocab)] = vocab
        if ngrams is not None:
            matrix[len(vocab) :] = ngrams
        self.input_matrix = matrix
        self._vocab_rows = len(vocab)
        self._ngrams_allocated = ngrams is not None

    @property
    def vectors_vocab(self) -> np.ndarray:
        """The word rows of ``input_matrix`` (a view); assigning copies into them, or builds a
        new ``input_matrix`` if the number of rows differs."""
        return self.input_matrix[: self._vocab_rows]

    @vectors_vocab.setter
    def vectors_vocab(self, value):
        value = self._rows_of(value, "vectors_vocab")
        if len(value) == self._vocab_rows:
            self.input_matrix[: self._vocab_rows] = value
        else:
            self._rebuild(value, self.vectors_ngrams)

    @property
    def vectors_ngrams(self):
        """The ``bucket`` n-gram rows of ``input_matrix`` (a view), None until allocated;
        assigning copies into them (or allocates them); it must have ``bucket`` rows."""
        if not self._ngrams_allocated:
            return None
        return self.input_matrix[self._vocab_rows :]

    @vectors_ngrams.setter
    def vectors_ngrams(self, value):
        if value is None:
            self._rebuild(self.vectors_vocab, None)
            return
        value = self._rows_of(value, "vectors_ngrams")
        if len(value) != self.bucket:
            raise ValueError(
                f"vectors_ngrams must have bucket={self.bucket} rows, got {len(value)}: "
                "set bucket first"
            )
        if self._ngrams_allocated:
            self.input_matrix[self._vocab_rows :] = value
        else:
            self._rebuild(self.vectors_vocab, value)

    def resize_vectors(self, seed=0):
        """Fit the word rows to the vocabulary and allocate the ``bucket`` n-gram rows, as
        gensim does: rows that exist keep their values, new ones are uniform in ±1/d (words
        from ``default_rng(seed)``, n-grams from ``default_rng(seed + 1)``, gensim's
        values); then recompute the buckets and :meth:`adjust_vectors`.

        Examples
        --------
        >>> kv = FastTextKeyedVectors(3, 3, 4, bucket=5)
        >>> kv.index_to_key = ["a", "b"]; kv.key_to_index = {"a": 0, "b": 1}
        >>> kv.resize_vectors(); kv.input_matrix.shape, kv.vectors.shape
        ((7, 3), (2, 3))
        """
        refuse_while_training(self, "wv.resize_vectors()")
        words, d = len(self.index_to_key), self.vector_size
        old_ngrams = self.vectors_ngrams
        if (
            self._vocab_rows != words
            or not self._ngrams_allocated
            or len(old_ngrams) != self.bucket
        ):
            matrix = np.empty((words + self.bucket, d), dtype=self.input_matrix.dtype)
            _fill_like_gensim(matrix[:words], self.vectors_vocab, seed)
            _fill_like_gensim(matrix[words:], old_ngrams, seed + 1)
            self.input_matrix, self._vocab_rows, self._ngrams_allocated = matrix, words, True
        self.allocate_vecattrs()
        self.norms = None
        self.recalc_char_ngram_buckets()
        self.adjust_vectors()

    def resize_vocab_rows(self, count, new_rows=None):
        """Give ``input_matrix`` `count` word rows (for a grown vocabulary), keeping the first
        ``min(count, V)`` word rows and all n-gram rows; the added rows get `new_rows`.

        Parameters
        ----------
        count : int
            The new number of word rows.
        new_rows : array-like or float, optional
            Values of the ``count - V`` added rows (broadcast to their shape); zeros if
            omitted.

        Examples
        --------
        >>> kv = FastTextKeyedVectors(2, 3, 3, bucket=4); kv.vectors_vocab = np.ones((1, 2))
        >>> kv.resize_vocab_rows(3, new_rows=[[5, 5], [6, 6]]); kv.vectors_vocab.tolist()
        [[1.0, 1.0], [5.0, 5.0], [6.0, 6.0]]
        """
        refuse_while_training(self, "wv.resize_vocab_rows()")
        count = int(count)
        if count < 0:
            raise ValueError(f"count must be >= 0, got {count}")
        keep = min(count, self._vocab_rows)
        vocab = np.zeros((count, self.vector_size), dtype=self.input_matrix.dtype)
        vocab[:keep] = self.vectors_vocab[:keep]
        if new_rows is not None and count > keep:
            vocab[keep:] = new_rows
        self._rebuild(vocab, self.vectors_ngrams)
        self.norms = None

    def sort_by_descending_frequency(self):
        """gensim's reorder by descending ``count``; here the word rows of ``input_matrix``
        follow their words (gensim leaves ``vectors_vocab`` as it was)."""
        before = dict(self.key_to_index)
        super().sort_by_descending_frequency()
        if self._vocab_rows == len(self.index_to_key) and self._vocab_rows:
            order = [before[key] for key in self.index_to_key]
            self.input_matrix[: self._vocab_rows] = self.input_matrix[order]

    # ------------------------------------------------------------------ n-gram rows
    def subword_table(self):
        """The rows of ``input_matrix`` each word trains, as read-only CSR arrays
        ``(ptr, rows)``: word ``i``'s are ``rows[ptr[i]:ptr[i + 1]]``, its own row then one
        per n-gram (see :func:`hsw2v.fasttext._ngrams.subword_table`).

        Cached, and rebuilt when the keys or ``min_n``, ``max_n``, ``bucket`` change.

        Examples
        --------
        >>> kv = FastTextKeyedVectors(2, 3, 3, bucket=10); kv.index_to_key = ["ab", "b"]
        >>> [a.tolist() for a in kv.subword_table()]
        [[0, 3, 5], [0, 10, 8, 1, 5]]
        """
        settings = (self._min_n, self._max_n, self._bucket)
        cached = self._table
        if cached is None or cached[0] != settings or cached[1] != self.index_to_key:
            ptr, rows = subword_table(self.index_to_key, *settings)
            ptr.setflags(write=False)
            rows.setflags(write=False)
            self._table = cached = (settings, list(self.index_to_key), ptr, rows)
            self._buckets = None
        return cached[2], cached[3]

    @property
    def buckets_word(self) -> list[np.ndarray]:
        """Per word (by index), the buckets (uint32) of its n-grams, in fastText's order."""
        ptr, rows = self.subword_table()
        if self._buckets is None:
            words = len(ptr) - 1
            flat = (rows.astype(np.int64) - words).astype(np.uint32)
            self._buckets = [flat[ptr[i] + 1 : ptr[i + 1]] for i in range(words)]
        return self._buckets

    def recalc_char_ngram_buckets(self):
        """Recompute every word's n-gram buckets (gensim's name; the table is rebuilt)."""
        self._table = None
        self.subword_table()

    def adjust_vectors(self):
        """Compose ``vectors``: each word's row and its n-gram rows, averaged.

        ``vectors[i] = (vectors_vocab[i] + sum of vectors_ngrams[h] over its buckets h) /
        (number of buckets + 1)``, fastText's ``getWordVector`` and gensim's
        ``adjust_vectors``; with ``bucket == 0`` ``vectors`` is ``vectors_vocab`` itself, as in
        gensim. The rows are added in their order in float32 and the sum divided by their
        count, as gensim's loop does (the nogil ``_inner.mean_rows``; a matrix of another
        dtype is averaged in float32 too).

        Examples
        --------
        >>> kv = FastTextKeyedVectors(1, 3, 3, bucket=10); kv.index_to_key = ["ab"]
        >>> kv.vectors_vocab = [[3.0]]; kv.vectors_ngrams = np.ones((10, 1))
        >>> kv.adjust_vectors(); kv.vectors.tolist()  # (3 + 1 + 1) / 3
        [[1.6666666269302368]]
        """
        words = len(self.index_to_key)
        if self._vocab_rows != words:
            raise ValueError(
                f"{words} keys but {self._vocab_rows} word rows: call resize_vectors() first"
            )
        self.norms = None
        if self.bucket == 0:
            self.vectors = self.vectors_vocab
            return
        if not self._ngrams_allocated:
            raise ValueError("the n-gram rows are not allocated yet: call resize_vectors()")
        ptr, rows = self.subword_table()
        from hsw2v._kernels._inner import mean_rows

        vectors = np.empty((words, self.vector_size), dtype=np.float32)
        mean_rows(np.ascontiguousarray(self.input_matrix, dtype=np.float32), ptr, rows, vectors)
        self.vectors = vectors.astype(self.input_matrix.dtype, copy=False)

    # ------------------------------------------------------------------ lookups
    def __contains__(self, key):
        """True for any word when there are n-grams (it has a vector), as in gensim; with
        ``bucket == 0`` only for vocabulary words. :meth:`has_index_for` tells which words
        have a row of their own."""
        if self.bucket == 0:
            return key in self.key_to_index
        return True

    def get_vector(self, key, norm=False):
        """The vector of `key`: a vocabulary word's row of ``vectors``, or for any other word
        the mean of its n-gram rows (unit length if `norm`).

        As in gensim, a key that is not in the vocabulary is a word (an int too: the word of
        its digits), and a word without n-grams (shorter than ``min_n`` with its ``<`` and
        ``>``) gets the zero vector, with a warning.

        Raises
        ------
        KeyError
            If `key` is not in the vocabulary and ``bucket == 0``.

        Examples
        --------
        >>> kv = FastTextKeyedVectors(1, 3, 3, bucket=10); kv.index_to_key = ["ab"]
        >>> kv.key_to_index = {"ab": 0}; kv.resize_vectors()
        >>> kv.vectors_ngrams = np.arange(10.0).reshape(10, 1)
        >>> kv.get_vector("b").tolist()  # its one n-gram, "<b>", falls in bucket 3
        [3.0]
        """
        if key in self.key_to_index:
            return super().get_vector(key, norm=norm)
        if self.bucket == 0:
            raise KeyError("cannot calculate vector for OOV word without ngrams")
        ngrams = self.vectors_ngrams
        if ngrams is None:
            raise unknown_key(key)
        hashes = ngram_hashes(key, self.min_n, self.max_n, self.bucket)
        if not len(hashes):
            logger.warning("could not extract any ngrams from %r, returning origin vector", key)
            return np.zeros(self.vector_size, dtype=ngrams.dtype)
        total = np.zeros(self.vector_size, dtype=ngrams.dtype)
        for start in range(0, len(hashes), _SUM_BLOCK):  # bounded memory for any word
            total += ngrams[hashes[start : start + _SUM_BLOCK]].sum(axis=0)
        if norm:
            return total / np.linalg.norm(total)
        return total / len(hashes)

    def __getitem__(self, key_or_keys):
        """The vector of one word, or a 2-D array of the vectors of a list of words (any
        words, as in gensim).

        Examples
        --------
        >>> kv = FastTextKeyedVectors(2, 3, 3, bucket=4); kv.add_vectors(["ab"], [[1, 2]])
        >>> kv.resize_vectors(); kv[["ab", "zz"]].shape
        (2, 2)
        """
        if isinstance(key_or_keys, KEY_TYPES):
            return self.get_vector(key_or_keys)
        vectors = [self.get_vector(key) for key in key_list(key_or_keys)]
        if not vectors:
            return np.zeros((0, self.vector_size), dtype=self.vectors.dtype)
        return np.vstack(vectors)

    def get_sentence_vector(self, sentence):
        """The mean of the unit vectors of `sentence`'s words (gensim's workalike of
        fastText's ``get_sentence_vector``).

        Examples
        --------
        >>> kv = FastTextKeyedVectors(2, 3, 3, bucket=0, count=2)
        >>> kv.index_to_key = ["a", "b"]; kv.key_to_index = {"a": 0, "b": 1}
        >>> kv.vectors_vocab = [[2.0, 0.0], [0.0, 3.0]]; kv.adjust_vectors()
        >>> kv.get_sentence_vector(["a", "b"]).tolist()
        [0.5, 0.5]
        """
        return self.get_mean_vector(sentence)

    # ------------------------------------------------------------------ files
    def to_gensim(self):
        """An equal ``gensim.models.fasttext.FastTextKeyedVectors`` (copies); see
        :func:`hsw2v._gensim.convert_fasttext.ftkv_to_gensim`.

        Examples
        --------
        >>> kv = FastTextKeyedVectors(2, 3, 4, bucket=8); kv.add_vectors(["ab"], [[0, 0]])
        >>> kv.resize_vectors(); g = kv.to_gensim()
        >>> type(g).__module__, bool((g["zzz"] == kv["zzz"]).all())
        ('gensim.models.fasttext', True)
        """
        return ftkv_to_gensim(self)

    @classmethod
    def from_gensim(cls, gensim_kv):
        """Vectors equal to a gensim ``FastTextKeyedVectors`` (copies); see
        :func:`hsw2v._gensim.convert_fasttext.ftkv_from_gensim`.

        Examples
        --------
        >>> from gensim.models.fasttext import FastTextKeyedVectors as GensimFTKV
        >>> g = GensimFTKV(2, 3, 4, 8); g.add_vectors(["ab"], [[0, 0]]); g.resize_vectors()
        >>> kv = FastTextKeyedVectors.from_gensim(g); bool((kv["zzz"] == g["zzz"]).all())
        True
        """
        return ftkv_from_gensim(gensim_kv, cls=cls)

    def _bundle_parts(self):
        """``(meta, arrays)``: KeyedVectors' and the n-gram part (see
        :mod:`hsw2v.fasttext._schema`)."""
        return _schema.ft_bundle_parts(self)

    @classmethod
    def _from_bundle_parts(cls, meta, arrays, source="bundle"):
        """Rebuild an instance from :meth:`_bundle_parts` output read from `source`."""
        return _schema.ft_from_bundle_parts(cls, meta, arrays, source)
