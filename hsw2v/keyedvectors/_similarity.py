"""Similarity queries over KeyedVectors (the query half of the class; the benchmarks are in
:mod:`hsw2v.keyedvectors._evaluate`).

:class:`SimilarityQueries` is mixed into :class:`hsw2v.keyedvectors.KeyedVectors`; it reads
``vectors``, ``norms``, ``index_to_key`` and ``key_to_index`` and never changes them (except
for filling ``norms``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from numbers import Integral

import numpy as np

from hsw2v.keyedvectors._vecmath import top_indices, unitvec

logger = logging.getLogger(__name__)

REAL = np.float32
KEY_TYPES = (str, int, np.integer)


def ensure_list(value):
    """Wrap a single key or vector into a list; rows of a 2-D array become list items.

    Examples
    --------
    >>> ensure_list("king"), ensure_list(None), len(ensure_list(np.zeros((3, 2))))
    (['king'], [], 3)
    """
    if value is None:
        return []
    if isinstance(value, KEY_TYPES) or (isinstance(value, np.ndarray) and value.ndim == 1):
        return [value]
    return list(value)


def key_list(key_or_keys) -> Iterable:
    """``key_or_keys`` (not a key itself) as the iterable of keys it must be, or a TypeError
    that says what a key is (bytes are not taken as a list of ints).

    >>> key_list(None)
    Traceback (most recent call last):
        ...
    TypeError: a key is a str or an int (or give a list of keys), got NoneType (None)
    """
    if isinstance(key_or_keys, bytes) or not isinstance(key_or_keys, Iterable):
        raise TypeError(
            f"a key is a str or an int (or give a list of keys), got "
            f"{type(key_or_keys).__name__} ({key_or_keys!r:.80})"
        )
    return key_or_keys


def unknown_key(key):
    """The error for a key that has no vector.

    Examples
    --------
    >>> unknown_key("xyzzy")
    KeyError("word 'xyzzy' not in vocabulary")
    """
    return KeyError(f"word '{key}' not in vocabulary")


class SimilarityQueries:
    """Cosine-similarity queries, analogy and word-pair benchmarks (gensim's names and results).

    Examples
    --------
    >>> from hsw2v.keyedvectors import KeyedVectors
    >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 0.2], [0, 1]])
    >>> kv.most_similar("a", topn=1)[0][0], kv.doesnt_match(["a", "b", "c"])
    ('b', 'c')
    """

    def _check_vector(self, vec):
        if vec.shape != (self.vector_size,):
            raise ValueError(
                f"a query vector must have shape ({self.vector_size},), got {vec.shape}"
            )

    def get_mean_vector(
        self, keys, weights=None, pre_normalize=True, post_normalize=False, ignore_missing=True
    ):
        """Weighted mean of the vectors of `keys` (keys or raw vectors).

        Parameters
        ----------
        keys : list of (str or int or numpy.ndarray)
        weights : list or 1-D array, optional
            One weight per key (default 1); the mean divides by the sum of absolute weights.
        pre_normalize : bool, optional
            Use unit-length key vectors (raw vectors are used as given).
        post_normalize : bool, optional
            Scale the mean to unit length.
        ignore_missing : bool, optional
            Skip unknown keys; if False they raise KeyError.

        Returns
        -------
        numpy.ndarray
            The mean, ``vector_size`` floats.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b"], [[2.0, 0.0], [0.0, 4.0]])
        >>> kv.get_mean_vector(["a", "b"]).tolist()
        [0.5, 0.5]
        """
        if len(keys) == 0:
            raise ValueError("cannot compute mean with no input")
        if isinstance(weights, list):
            weights = np.array(weights, dtype=self.vectors.dtype)
        if weights is None:
            weights = np.ones(len(keys), dtype=self.vectors.dtype)
        if len(keys) != weights.shape[0]:
            raise ValueError("keys and weights array must have same number of elements")
        mean = np.zeros(self.vector_size, self.vectors.dtype)
        total_weight = 0
        for idx, key in enumerate(keys):
            if isinstance(key, np.ndarray):
                self._check_vector(key)
                mean += weights[idx] * key
                total_weight += abs(weights[idx])
            elif key in self:
                mean += weights[idx] * self.get_vector(key, norm=pre_normalize)
                total_weight += abs(weights[idx])
            elif not ignore_missing:
                raise unknown_key(key)
        if total_weight > 0:
            mean = mean / total_weight
        if post_normalize:
            mean = unitvec(mean).astype(REAL)
        return mean

    def _query(self, positive, negative):
        """Split most_similar's arguments into (keys or vectors, weights)."""
        positive, negative = ensure_list(positive), ensure_list(negative)
        items = positive + negative
        if not items:
            raise ValueError(
                "cannot compute similarity with no input: give at least one positive or "
                "negative key or vector"
            )
        weights = np.concatenate((np.ones(len(positive)), -1.0 * np.ones(len(negative))))
        keys = []
        for idx, item in enumerate(items):
            if isinstance(item, (*KEY_TYPES, np.ndarray)):
                keys.append(item)
            else:
                keys.append(item[0])
                weights[idx] = item[1]
        for key in keys:
            if isinstance(key, np.ndarray):
                self._check_vector(key)
            elif key not in self:
                raise unknown_key(key)
        return keys, weights

    def most_similar(
        self,
        positive=None,
        negative=None,
        topn=10,
        clip_start=0,
        clip_end=None,
        restrict_vocab=None,
        indexer=None,
    ):
        """Keys nearest (by cosine) to the mean of the `positive` minus the `negative` inputs.

        Parameters
        ----------
        positive, negative : key, vector, or list of keys / vectors / (key, weight) tuples
            Inputs counted with weight +1 and -1 (or their tuple's weight). Input keys are left
            out of the result.
        topn : int or None, optional
            How many results; None returns the similarity of every key in the searched range.
        clip_start, clip_end : int, optional
            Search only rows ``clip_start:clip_end``.
        restrict_vocab : int, optional
            Search only the first `restrict_vocab` rows (overrides the clip arguments).
        indexer : object, optional
            An approximate-nearest-neighbour index with ``most_similar(vector, topn)``.

        Returns
        -------
        list of (key, float), or a 1-D numpy array if `topn` is None

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 0.1], [0, 1]])
        >>> [key for key, _ in kv.most_similar("a")]
        ['b', 'c']
        """
        if isinstance(topn, Integral) and topn < 1:
            return []
        keys, weights = self._query(positive, negative)
        norms = self._current_norms()
        clip_end = clip_end or len(self.vectors)
        if restrict_vocab:
            clip_start, clip_end = 0, restrict_vocab
        mean = self.get_mean_vector(
            keys, weights, pre_normalize=True, post_normalize=True, ignore_missing=False
        )
        exclude = [  # keys with a row (FastText answers `in` for words without one)
            self.get_index(k) for k in keys if isinstance(k, KEY_TYPES) and self.has_index_for(k)
        ]
        if indexer is not None and isinstance(topn, int):
            return indexer.most_similar(mean, topn)
        dists = np.dot(self.vectors[clip_start:clip_end], mean) / norms[clip_start:clip_end]
        if not topn:
            return dists
        return self._best(dists, topn, exclude, clip_start)

    def _best(self, dists, topn, exclude, offset=0):
        """The `topn` best ``(key, score)`` of `dists` (row ``offset + i``), leaving out the rows
        in `exclude`."""
        best = top_indices(dists, topn + len(exclude))
        result = [
            (self.index_to_key[i + offset], float(dists[i]))
            for i in best
            if i + offset not in exclude
        ]
        return result[:topn]

    def similar_by_word(self, word, topn=10, restrict_vocab=None):
        """Alias of :meth:`similar_by_key`.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b"], [[1, 0], [1, 1]])
        >>> kv.similar_by_word("a")[0][0]
        'b'
        """
        return self.similar_by_key(word, topn, restrict_vocab)

    def similar_by_key(self, key, topn=10, restrict_vocab=None):
        """Keys most similar to `key`; see :meth:`most_similar`.

        Parameters
        ----------
        key : str or int
            A known key (left out of the result).
        topn, restrict_vocab : optional
            As in :meth:`most_similar`, whose result (``[(key, similarity), ...]``) this is.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b"], [[1, 0], [1, 1]])
        >>> [round(float(x), 3) for x in kv.similar_by_key("b", topn=None)]
        [0.707, 1.0]
        """
        return self.most_similar(positive=[key], topn=topn, restrict_vocab=restrict_vocab)

    def similar_by_vector(self, vector, topn=10, restrict_vocab=None):
        """Keys most similar to a raw `vector` (no key is left out of the result).

        Parameters
        ----------
        vector : numpy.ndarray
            A vector of ``vector_size`` values.
        topn, restrict_vocab : optional
            As in :meth:`most_similar`, whose result (``[(key, similarity), ...]``) this is.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b"], [[1, 0], [0, 1]])
        >>> kv.similar_by_vector(np.array([0.1, 1.0]), topn=1)[0][0]
        'b'
        """
        return self.most_similar(positive=[vector], topn=topn, restrict_vocab=restrict_vocab)

    def most_similar_cosmul(self, positive=None, negative=None, topn=10, restrict_vocab=None):
        """Like :meth:`most_similar`, with Levy & Goldberg's multiplicative objective 3CosMul.

        Scores are ``prod((1 + cos(x, p)) / 2) / (prod((1 + cos(x, n)) / 2) + 1e-6)`` over
        positive inputs p and negative inputs n (Levy and Goldberg, "Linguistic Regularities
        in Sparse and Explicit Word Representations", 2014). Raw vectors are used as given.

        Parameters
        ----------
        positive, negative : key, vector, or list of keys / vectors
            The inputs of the two products (input keys are left out of the result).
        topn, restrict_vocab : optional
            As in :meth:`most_similar`, whose result (``[(key, similarity), ...]``) this is.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 0.1], [0, 1]])
        >>> kv.most_similar_cosmul(positive=["a"], topn=1)[0][0]
        'b'
        """
        if isinstance(topn, Integral) and topn < 1:
            return []
        positive, negative = ensure_list(positive), ensure_list(negative)
        if not positive:
            raise ValueError("cannot compute similarity with no input (no positive keys)")
        end = restrict_vocab or len(self.vectors)
        vectors, norms = self.vectors[:end], self._current_norms()[:end]

        def as_vector(item):
            if isinstance(item, np.ndarray):
                self._check_vector(item)
                return item
            return self.get_vector(item, norm=True)

        exclude = {
            self.get_index(w)
            for w in positive + negative
            if not isinstance(w, np.ndarray) and self.has_index_for(w)
        }
        pos = [(1 + np.dot(vectors, as_vector(t)) / norms) / 2 for t in positive]
        neg = [(1 + np.dot(vectors, as_vector(t)) / norms) / 2 for t in negative]
        dists = np.prod(pos, axis=0) / (np.prod(neg, axis=0) + 0.000001)
        if not topn:
            return dists
        return self._best(dists, topn, exclude)

    def rank_by_centrality(self, words, use_norm=True):
        """``(similarity, word)`` pairs sorted by closeness to the words' mean, closest first.

        Unknown words are skipped with a warning.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 0.1], [0, 1]])
        >>> [w for _, w in kv.rank_by_centrality(["a", "b", "c"])]
        ['b', 'a', 'c']
        """
        self.fill_norms()
        used = [word for word in words if word in self]
        if len(used) != len(words):
            logger.warning(
                "vectors for words %s are not present in the model, ignoring these words",
                set(words) - set(used),
            )
        if not used:
            raise ValueError("cannot select a word from an empty list")
        vectors = np.vstack([self.get_vector(w, norm=use_norm) for w in used]).astype(REAL)
        mean = self.get_mean_vector(vectors, post_normalize=True)
        dists = np.dot(vectors, mean)
        return sorted(zip(dists, used, strict=True), reverse=True)

    def doesnt_match(self, words):
        """The word of `words` furthest from their mean (unknown words are skipped).

        Parameters
        ----------
        words : list of str
            The candidates.

        Returns
        -------
        str
            The known word whose unit vector is least similar to the mean of theirs.

        Raises
        ------
        ValueError
            If none of `words` is known.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 0.1], [0, 1]])
        >>> kv.doesnt_match(["a", "b", "c"])
        'c'
        """
        return self.rank_by_centrality(words)[-1][1]

    @staticmethod
    def cosine_similarities(vector_1, vectors_all):
        """Cosine similarity of `vector_1` with each row of `vectors_all`.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> KeyedVectors.cosine_similarities(np.array([1.0, 0]), np.array([[2.0, 0], [0, 1]]))
        array([1., 0.])
        """
        norm = np.linalg.norm(vector_1)
        all_norms = np.linalg.norm(vectors_all, axis=1)
        return np.dot(vectors_all, vector_1) / (norm * all_norms)

    def distances(self, word_or_vector, other_words=()):
        """Cosine distances from a key or vector to `other_words` (default: every key).

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b"], [[1, 0], [0, 1]])
        >>> kv.distances("a").tolist()
        [0.0, 1.0]
        """
        if isinstance(word_or_vector, KEY_TYPES):
            vector = self.get_vector(word_or_vector)
        else:
            vector = np.asarray(word_or_vector)
            self._check_vector(vector)
        if not other_words:
            others = self.vectors
        else:
            others = self.vectors[[self.get_index(word) for word in other_words]]
        return 1 - self.cosine_similarities(vector, others)

    def distance(self, w1, w2):
        """Cosine distance ``1 - similarity(w1, w2)``.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b"], [[1, 0], [0, 1]])
        >>> float(kv.distance("a", "b"))
        1.0
        """
        return 1 - self.similarity(w1, w2)

    def similarity(self, w1, w2):
        """Cosine similarity of two keys.

        Parameters
        ----------
        w1, w2 : str or int
            Two known keys.

        Returns
        -------
        numpy.floating
            The cosine of the angle between their vectors, in [-1, 1].

        Raises
        ------
        KeyError
            If a key is unknown.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b"], [[1, 0], [1, 1]])
        >>> round(float(kv.similarity("a", "b")), 4)
        0.7071
        """
        return np.dot(unitvec(self[w1]), unitvec(self[w2]))

    def n_similarity(self, ws1, ws2):
        """Cosine similarity of the means of two lists of keys (unknown keys are skipped).

        Parameters
        ----------
        ws1, ws2 : list of str
            The two lists of keys.

        Returns
        -------
        numpy.floating

        Raises
        ------
        ZeroDivisionError
            If a list is empty, as in gensim.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [0, 1], [1, 1]])
        >>> round(float(kv.n_similarity(["a", "b"], ["c"])), 4)
        1.0
        """
        if not (len(ws1) and len(ws2)):
            raise ZeroDivisionError("At least one of the passed list is empty.")
        mean1 = self.get_mean_vector(ws1, pre_normalize=False)
        mean2 = self.get_mean_vector(ws2, pre_normalize=False)
        return np.dot(unitvec(mean1), unitvec(mean2))

    def most_similar_to_given(self, key1, keys_list):
        """The key of `keys_list` most similar to `key1`.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 1], [0, 1]])
        >>> kv.most_similar_to_given("a", ["b", "c"])
        'b'
        """
        return keys_list[int(np.argmax([self.similarity(key1, key) for key in keys_list]))]

    def closer_than(self, key1, key2):
        """Keys closer to `key1` than `key2` is.

        Parameters
        ----------
        key1, key2 : str or int
            Two known keys.

        Returns
        -------
        list
            The keys, nearest first.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 1], [0, 1]])
        >>> kv.closer_than("a", "c")
        ['b']
        """
        dists = self.distances(key1)
        i1, i2 = self.get_index(key1), self.get_index(key2)
        return [self.index_to_key[i] for i in np.where(dists < dists[i2])[0] if i != i1]

    def rank(self, key1, key2):
        """Rank of `key2` among all keys by distance from `key1` (1 = nearest).

        Parameters
        ----------
        key1 : str or int
            The known key distances are measured from.
        key2 : str or int
            The known key whose rank is returned.

        Returns
        -------
        int

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 1], [0, 1]])
        >>> kv.rank("a", "c")
        2
        """
        return len(self.closer_than(key1, key2)) + 1

    def relative_cosine_similarity(self, wa, wb, topn=10):
        """similarity(wa, wb) divided by the summed similarities of wa's `topn` neighbours.

        Examples
        --------
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 1], [0, 1]])
        >>> round(kv.relative_cosine_similarity("a", "b", topn=1), 4)
        1.0
        """
        sims = self.similar_by_word(wa, topn)
        if not sims:
            raise ValueError(
                "Cannot calculate relative cosine similarity without any similar words."
            )
        return float(self.similarity(wa, wb)) / sum(sim for _, sim in sims)
