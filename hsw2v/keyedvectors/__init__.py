"""KeyedVectors: the trained word vectors, their keys, per-key attributes and file formats.

This is the object users keep (``model.wv``). Names, signatures, defaults and results follow
gensim 4.4's ``gensim.models.KeyedVectors``, so code written for gensim works unchanged; the
differences are listed in the class docstring. The similarity queries live in
:mod:`hsw2v.keyedvectors._similarity`, the files and conversions (native bundle, word2vec C formats, gensim objects) in
:mod:`hsw2v.keyedvectors._files`.

Example
-------
>>> from hsw2v.keyedvectors import KeyedVectors
>>> kv = KeyedVectors(2)
>>> kv.add_vectors(["king", "queen", "apple"], [[1.0, 0.1], [0.9, 0.2], [0.0, 1.0]])
>>> kv.most_similar("king", topn=1)[0][0]
'queen'
"""

from __future__ import annotations

import warnings

import numpy as np

from hsw2v._guard import refuse_while_training
from hsw2v.keyedvectors._evaluate import Evaluations
from hsw2v.keyedvectors._files import KeyedVectorsFiles
from hsw2v.keyedvectors._similarity import (
    KEY_TYPES,
    REAL,
    SimilarityQueries,
    key_list,
    unknown_key,
)

__all__ = ["KeyedVectors"]


class KeyedVectors(SimilarityQueries, Evaluations, KeyedVectorsFiles):
    """Vectors addressed by keys (words), with similarity queries; gensim's ``KeyedVectors``.

    Differences from gensim: an unknown key raises ``KeyError("word 'x' not in vocabulary")``;
    :meth:`save`/:meth:`load` use hsw2v's pickle-free bundle format (gensim's pickles are not
    read); :meth:`add_vectors` keeps ``expandos`` aligned and resets ``norms``;
    ``restrict_vocab`` is honoured by :meth:`most_similar_cosmul`, and ``similarity_function``
    by :meth:`evaluate_word_analogies`.

    Parameters
    ----------
    vector_size : int
        Dimensionality of the vectors.
    count : int, optional
        Number of slots to preallocate (filled by :meth:`add_vector`).
    dtype : numpy dtype, optional
        Type of the vectors, float32 by default.

    Attributes
    ----------
    vectors : numpy.ndarray
        One row per key (2-D).
    index_to_key : list
        The keys, in row order.
    key_to_index : dict
        Key to row.
    expandos : dict
        Per-key 1-D arrays (e.g. ``"count"``).
    norms : numpy.ndarray or None
        Row lengths, None until :meth:`fill_norms`.

    Examples
    --------
    >>> kv = KeyedVectors(3)
    >>> kv.add_vectors(["a", "b"], [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    >>> len(kv), kv["b"].tolist(), "c" in kv
    (2, [0.0, 2.0, 0.0], False)
    """

    def __getattr__(self, name):
        """Only for names normal lookup missed: gensim 3's names (``vocab``,
        ``index2word``, ``vectors_norm``, ``syn0``, ...) get gensim 4's migration hint."""
        from hsw2v._gensim.names import missing_attribute

        raise missing_attribute(self, "kv", name)

    def __init__(self, vector_size, count=0, dtype=np.float32):
        self.vector_size = vector_size
        self.index_to_key = [None] * count
        self.next_index = 0
        self.key_to_index = {}
        self.vectors = np.zeros((count, vector_size), dtype=dtype)
        self.norms = None
        self.expandos = {}

    def __str__(self):
        return f"{self.__class__.__name__}<vector_size={self.vector_size}, {len(self)} keys>"

    __repr__ = __str__

    def __len__(self):
        return len(self.index_to_key)

    # ------------------------------------------------------------------ keys and attributes
    def get_index(self, key, default=None):
        """Row of `key` in ``vectors``; an int in range is taken as a row itself.

        Returns `default` for an unknown key if given, else raises KeyError.

        Examples
        --------
        >>> kv = KeyedVectors(1); kv.add_vectors(["a", "b"], [[1.0], [2.0]])
        >>> kv.get_index("b"), kv.get_index("zz", -1)
        (1, -1)
        """
        val = self.key_to_index.get(key, -1)
        if val >= 0:
            return val
        if isinstance(key, (int, np.integer)) and 0 <= key < len(self.index_to_key):
            return key
        if default is not None:
            return default
        raise unknown_key(key)

    def has_index_for(self, key):
        """True if `key` has a row of its own (a stored vector).

        Examples
        --------
        >>> kv = KeyedVectors(1); kv.add_vectors(["a"], [[1.0]])
        >>> kv.has_index_for("a"), kv.has_index_for("b")
        (True, False)
        """
        return self.get_index(key, -1) >= 0

    def __contains__(self, key):
        return self.has_index_for(key)

    def allocate_vecattrs(self, attrs=None, types=None):
        """Make sure per-key attribute arrays exist for `attrs` (of `types`) and fit the keys.

        With no arguments, resize every existing attribute array to ``len(index_to_key)``.
        ``int`` means int64 and ``str`` means object. Raises TypeError if a type conflicts
        with an existing array's.

        Examples
        --------
        >>> kv = KeyedVectors(1, count=3)
        >>> kv.allocate_vecattrs(["count"], [int]); kv.expandos["count"].dtype.name
        'int64'
        """
        if attrs is None:
            attrs = list(self.expandos)
            types = [self.expandos[attr].dtype for attr in attrs]
        size = len(self.index_to_key)
        for attr, kind in zip(attrs, types, strict=True):
            if kind is int:
                kind = np.int64
            elif kind is str:
                kind = object
            prev = self.expandos.get(attr)
            if prev is None:
                self.expandos[attr] = np.zeros(size, dtype=kind)
                continue
            if not np.can_cast(np.dtype(kind), prev.dtype, casting="same_kind"):
                raise TypeError(
                    f"Can't allocate type {kind} for attribute {attr}, "
                    f"conflicts with its existing type {prev.dtype}"
                )
            if len(prev) != size:
                grown = np.zeros(size, dtype=prev.dtype)
                keep = min(len(prev), size)
                grown[:keep] = prev[:keep]
                self.expandos[attr] = grown

    def set_vecattr(self, key, attr, val):
        """Set the per-key attribute `attr` of `key` to `val`.

        Examples
        --------
        >>> kv = KeyedVectors(1); kv.add_vectors(["a"], [[1.0]])
        >>> kv.set_vecattr("a", "count", 7); int(kv.get_vecattr("a", "count"))
        7
        """
        self.allocate_vecattrs(attrs=[attr], types=[type(val)])
        self.expandos[attr][self.get_index(key)] = val

    def get_vecattr(self, key, attr):
        """The per-key attribute `attr` of `key`.

        Examples
        --------
        >>> kv = KeyedVectors(1); kv.add_vectors(["a"], [[1.0]], extras={"count": np.array([3])})
        >>> int(kv.get_vecattr("a", "count"))
        3
        """
        index = self.get_index(key)
        return self.expandos[attr][index]

    def resize_vectors(self, seed=0):
        """Grow or shrink ``vectors`` to the number of keys; new rows are random in ±1/d.

        Examples
        --------
        >>> kv = KeyedVectors(4, count=2); kv.index_to_key.append("extra"); kv.resize_vectors()
        >>> kv.vectors.shape
        (3, 4)
        """
        refuse_while_training(self, "wv.resize_vectors()")
        shape = (len(self.index_to_key), self.vector_size)
        if self.vectors.shape != shape:
            dtype = self.vectors.dtype if self.vectors.dtype in (np.float32, np.float64) else REAL
            new = np.random.default_rng(seed=seed).random(shape, dtype=dtype)
            new *= 2.0
            new -= 1.0
            new /= self.vector_size
            rows, cols = min(shape[0], len(self.vectors)), min(shape[1], self.vectors.shape[1])
            new[:rows, :cols] = self.vectors[:rows, :cols]
            self.vectors = new
        self.allocate_vecattrs()
        self.norms = None

    def sort_by_descending_frequency(self):
        """Reorder keys (and vectors, attributes) by descending ``count``; ties: later first.

        Examples
        --------
        >>> kv = KeyedVectors(1); kv.add_vectors(["a", "b"], [[1.0], [2.0]])
        >>> kv.set_vecattr("a", "count", 1); kv.set_vecattr("b", "count", 5)
        >>> kv.sort_by_descending_frequency(); kv.index_to_key
        ['b', 'a']
        """
        refuse_while_training(self, "wv.sort_by_descending_frequency()")
        if not len(self):
            return
        counts = np.asarray(self.expandos["count"], dtype=np.int64)
        order = np.lexsort((-np.arange(len(counts)), -counts))
        self.index_to_key = [self.index_to_key[i] for i in order]
        self.allocate_vecattrs()
        for attr in self.expandos:
            self.expandos[attr] = self.expandos[attr][order]
        if len(self.vectors):
            self.vectors = self.vectors[order]
        self.key_to_index = {key: i for i, key in enumerate(self.index_to_key)}
        self.norms = None

    # ------------------------------------------------------------------ vectors
    def get_vector(self, key, norm=False):
        """The vector of `key` (read-only view); unit length if `norm`.

        Parameters
        ----------
        key : str or int
            A known key (an int that is no key is taken as a row index, as in gensim).
        norm : bool, optional
            Return the vector scaled to unit length.

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        KeyError
            If `key` is unknown.

        Examples
        --------
        >>> kv = KeyedVectors(2); kv.add_vectors(["a"], [[3.0, 4.0]])
        >>> kv.get_vector("a").tolist(), kv.get_vector("a", norm=True).tolist()
        ([3.0, 4.0], [0.6000000238418579, 0.800000011920929])
        """
        index = self.get_index(key)
        if norm:
            result = self.vectors[index] / self._current_norms()[index]
        else:
            result = self.vectors[index]
        result.setflags(write=False)
        return result

    def word_vec(self, *args, **kwargs):
        """Deprecated alias of :meth:`get_vector`.

        Examples
        --------
        >>> kv = KeyedVectors(1); kv.add_vectors(["a"], [[2.0]])
        >>> import warnings; warnings.simplefilter("ignore"); kv.word_vec("a").tolist()
        [2.0]
        """
        warnings.warn("Use get_vector instead", DeprecationWarning, stacklevel=2)
        return self.get_vector(*args, **kwargs)

    def __getitem__(self, key_or_keys):
        """Vector of one key, or a 2-D array of vectors for a list of keys.

        Examples
        --------
        >>> kv = KeyedVectors(1); kv.add_vectors(["a", "b"], [[1.0], [2.0]])
        >>> kv["a"].tolist(), kv[["b", "a"]].tolist()
        ([1.0], [[2.0], [1.0]])
        """
        if isinstance(key_or_keys, KEY_TYPES):
            return self.get_vector(key_or_keys)
        return self.vectors[[self.get_index(key) for key in key_list(key_or_keys)]].reshape(
            -1, self.vector_size
        )

    def add_vector(self, key, vector):
        """Add one key and vector, into the next preallocated slot if any; return its index.

        Examples
        --------
        >>> kv = KeyedVectors(2, count=1)
        >>> kv.add_vector("a", [1.0, 2.0]), kv.index_to_key
        (0, ['a'])
        """
        refuse_while_training(self, "wv.add_vector()")
        target = self.next_index
        if target >= len(self) or self.index_to_key[target] is not None:
            target = len(self)
            warnings.warn(
                "Adding single vectors to a KeyedVectors which grows by one each time can be "
                "costly. Consider adding in batches or preallocating to the required size.",
                UserWarning,
                stacklevel=2,
            )
            self.add_vectors([key], [vector])
            self.next_index = target + 1
        else:
            self.index_to_key[target] = key
            self.key_to_index[key] = target
            self.vectors[target] = vector
            self.next_index += 1
            self.norms = None
        return target

    def add_vectors(self, keys, weights, extras=None, replace=False):
        """Append keys with their vectors; existing keys keep their vector unless `replace`.

        Parameters
        ----------
        keys : list of (str or int), or one key
        weights : list of vectors or 2-D array, one row per key
        extras : dict of str to 1-D array, optional
            Per-key attribute values, aligned with `keys`.
        replace : bool, optional
            Overwrite the vectors (and extras) of keys already present.

        Examples
        --------
        >>> kv = KeyedVectors(1); kv.add_vectors(["a", "b"], [[1.0], [2.0]])
        >>> kv.add_vectors(["b", "c"], [[9.0], [3.0]]); kv.vectors.ravel().tolist()
        [1.0, 2.0, 3.0]
        """
        refuse_while_training(self, "wv.add_vectors()")
        if isinstance(keys, KEY_TYPES):
            keys = [keys]
            weights = np.asarray(weights).reshape(1, -1)
        keys = list(keys)
        weights = np.asarray(weights)
        if weights.size == 0 and not keys:
            weights = weights.reshape(0, self.vector_size)
        if weights.shape != (len(keys), self.vector_size):
            raise ValueError(
                f"expected weights of shape ({len(keys)}, {self.vector_size}) for {len(keys)} "
                f"keys, got {weights.shape}"
            )
        extras = {attr: np.asarray(val) for attr, val in (extras or {}).items()}
        self.allocate_vecattrs(list(extras), [val.dtype for val in extras.values()])
        start = len(self.index_to_key)
        new_pos, placed = [], {}  # batch positions of new keys; where each key's row is
        updates = []  # (batch position, row) of keys to overwrite
        for pos, key in enumerate(keys):
            row = self.key_to_index.get(key)
            if row is None:
                row = placed.get(key)
                if row is None:
                    placed[key] = start + len(new_pos)
                    new_pos.append(pos)
                    continue
            if replace:
                updates.append((pos, row))
        for pos in new_pos:
            self.key_to_index[keys[pos]] = len(self.index_to_key)
            self.index_to_key.append(keys[pos])
        self.vectors = np.vstack((self.vectors, weights[new_pos].astype(self.vectors.dtype)))
        self.allocate_vecattrs()
        for attr, val in extras.items():
            self.expandos[attr][start:] = val[new_pos]
        if updates:
            positions, rows = zip(*updates, strict=True)
            self.vectors[list(rows)] = weights[list(positions)]
            for attr, val in extras.items():
                self.expandos[attr][list(rows)] = val[list(positions)]
        self.norms = None

    def __setitem__(self, keys, weights):
        """Add or replace vectors: ``kv[key] = vector`` or ``kv[list_of_keys] = 2-D array``.

        Examples
        --------
        >>> kv = KeyedVectors(2); kv["a"] = np.array([1.0, 2.0]); kv["a"] = np.array([3.0, 4.0])
        >>> kv["a"].tolist(), len(kv)
        ([3.0, 4.0], 1)
        """
        if not isinstance(keys, list):
            keys = [keys]
            weights = np.asarray(weights).reshape(1, -1)
        self.add_vectors(keys, weights, replace=True)

    def fill_norms(self, force=False):
        """Compute ``norms`` (the L2 length of every vector) if missing, or always if `force`.

        Examples
        --------
        >>> kv = KeyedVectors(2); kv.add_vectors(["a"], [[3.0, 4.0]]); kv.fill_norms()
        >>> kv.norms.tolist()
        [5.0]
        """
        if self.norms is None or force:
            self.norms = np.linalg.norm(self.vectors, axis=1)

    def _current_norms(self):
        """``norms``, computed if missing, as one array that a concurrent reset (``train()``
        sets ``norms`` to None) cannot take away halfway through a query."""
        norms = self.norms
        if norms is None:
            norms = np.linalg.norm(self.vectors, axis=1)
            self.norms = norms
        return norms

    def get_normed_vectors(self):
        """All vectors scaled to unit length, as a new 2-D array.

        Examples
        --------
        >>> kv = KeyedVectors(2); kv.add_vectors(["a"], [[3.0, 4.0]])
        >>> kv.get_normed_vectors().tolist()
        [[0.6000000238418579, 0.800000011920929]]
        """
        return self.vectors / self._current_norms()[..., np.newaxis]

    def unit_normalize_all(self):
        """Scale every vector to unit length, in place (training cannot sensibly continue).

        Examples
        --------
        >>> kv = KeyedVectors(2); kv.add_vectors(["a"], [[0.0, 2.0]]); kv.unit_normalize_all()
        >>> kv["a"].tolist()
        [0.0, 1.0]
        """
        self.fill_norms()
        self.vectors /= self.norms[..., np.newaxis]
        self.norms = np.ones((len(self.vectors),))

    def init_sims(self, replace=False):
        """Deprecated: :meth:`fill_norms`, then :meth:`unit_normalize_all` if `replace`.

        Examples
        --------
        >>> kv = KeyedVectors(1); kv.add_vectors(["a"], [[2.0]])
        >>> import warnings; warnings.simplefilter("ignore"); kv.init_sims(); kv.norms.tolist()
        [2.0]
        """
        warnings.warn("Use fill_norms() instead", DeprecationWarning, stacklevel=2)
        self.fill_norms()
        if replace:
            self.unit_normalize_all()

    def words_closer_than(self, word1, word2):
        """Deprecated alias of :meth:`closer_than`, warning as gensim's does.

        Examples
        --------
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 1], [0, 1]])
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     kv.words_closer_than("a", "c")
        ['b']
        """
        warnings.warn(
            "Call to deprecated `words_closer_than` (Use closer_than instead).",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.closer_than(word1, word2)

    def vectors_for_all(self, keys, allow_inference=True, copy_vecattrs=False):
        """A new KeyedVectors holding the vectors of those `keys` that are known, each once,
        in the order given. Word2Vec vectors cannot be inferred for unknown keys (gensim's
        FastText can), so `allow_inference` changes nothing here. `copy_vecattrs` also copies
        every per-key attribute (``count``, ``sample_int``, ...).

        Examples
        --------
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b", "c"], [[1, 0], [1, 1], [0, 1]])
        >>> sub = kv.vectors_for_all(["c", "zz", "a", "c"])
        >>> sub.index_to_key, sub["c"].tolist()
        (['c', 'a'], [0.0, 1.0])
        """
        found, seen = [], set()
        for key in keys:
            if key not in seen:
                seen.add(key)
                if key in self.key_to_index:
                    found.append(key)
        rows = [self.key_to_index[key] for key in found]
        kv = KeyedVectors(self.vector_size, 0, dtype=self.vectors.dtype)
        kv.vectors = np.array(self.vectors[rows], dtype=self.vectors.dtype).reshape(
            len(rows), self.vector_size
        )
        kv.index_to_key = found
        kv.key_to_index = {key: i for i, key in enumerate(found)}
        kv.next_index = len(found)
        if copy_vecattrs:
            kv.expandos = {attr: np.asarray(values)[rows] for attr, values in self.expandos.items()}
        return kv

    def wmdistance(self, document1, document2, norm=True):
        """Word Mover's Distance (Kusner et al. 2015) between two token lists, exact, as
        gensim's (which needs the POT package); see :func:`hsw2v.keyedvectors._wmd.wmdistance`.

        Examples
        --------
        >>> kv = KeyedVectors(2)
        >>> kv.add_vectors(["a", "b", "c"], [[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])
        >>> kv.wmdistance(["a"], ["b", "c"], norm=False), kv.wmdistance(["b", "c"], ["c", "b"])
        (3.0, 0.0)
        """
        from hsw2v.keyedvectors._wmd import wmdistance

        return wmdistance(self, document1, document2, norm)
