"""The doors in and out of :class:`hsw2v.KeyedVectors`: its native file, the word2vec C tool's
text and binary formats, and gensim's ``KeyedVectors``.

A mixin, so that :mod:`hsw2v.keyedvectors` holds only keys, vectors and per-key attributes;
the work is done by :mod:`hsw2v.keyedvectors._schema` (the bundle), :mod:`hsw2v.keyedvectors._word2vec_format` (the C
formats), :mod:`hsw2v.keyedvectors._intersect` and :mod:`hsw2v._gensim.convert`.
"""

from __future__ import annotations

import logging

from hsw2v._gensim.convert import kv_from_gensim, kv_to_gensim
from hsw2v.keyedvectors import _schema, _word2vec_format
from hsw2v.keyedvectors._similarity import REAL

logger = logging.getLogger("hsw2v.keyedvectors")  # the KeyedVectors' log, as users know it

__all__ = ["KeyedVectorsFiles"]


class KeyedVectorsFiles:
    """Saving, loading and converting; mixed into :class:`hsw2v.KeyedVectors`."""

    # the meta section that marks this class's files (a subclass's; see _schema.bundle_class)
    _bundle_section = None

    def intersect_word2vec_format(
        self, fname, lockf=0.0, binary=False, encoding="utf8", unicode_errors="strict"
    ):
        """Overwrite the vectors of known keys with those a word2vec C format file holds for
        them; see :func:`hsw2v.keyedvectors._intersect.intersect_word2vec`. ``lockf`` becomes the lock
        factor of the merged vectors in ``vectors_lockf`` (0.0 freezes them in training, 1.0
        trains them normally), as in gensim.

        Examples
        --------
        >>> import os, tempfile; from hsw2v import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a", "b"], [[0.0, 0.0], [0.0, 0.0]])
        >>> path = os.path.join(tempfile.mkdtemp(), "v.txt")
        >>> _ = open(path, "w").write("1 2\\nb 1 2\\n")
        >>> kv.intersect_word2vec_format(path, lockf=1.0); kv["b"].tolist()
        [1.0, 2.0]
        """
        from hsw2v.keyedvectors._intersect import intersect_word2vec

        intersect_word2vec(self, fname, lockf, binary, encoding, unicode_errors)

    def save_word2vec_format(
        self,
        fname,
        fvocab=None,
        binary=False,
        total_vec=None,
        write_header=True,
        prefix="",
        append=False,
        sort_attr="count",
    ):
        """Write the vectors in the word2vec C tool's text or binary format (gensim-identical).

        Parameters
        ----------
        fname : str or os.PathLike
            Output file (``.gz``/``.bz2`` are compressed). Written atomically unless `append`.
        fvocab : str, optional
            Also write ``word count`` lines (the C tool's ``-save-vocab`` format) here.
        binary : bool, optional
            Binary records instead of text lines.
        total_vec : int, optional
            Vector count for the header (default: the number of keys).
        write_header : bool, optional
            Write the ``"count dimensions"`` header line (False gives GloVe-style files).
        prefix : str, optional
            Prepended to every key.
        append : bool, optional
            Append to `fname` (and `fvocab`) instead of replacing them.
        sort_attr : str, optional
            Write keys in descending order of this attribute, if present.

        Examples
        --------
        >>> import os, tempfile; from hsw2v import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a"], [[0.5, 1.0]])
        >>> path = os.path.join(tempfile.mkdtemp(), "v.txt"); kv.save_word2vec_format(path)
        >>> open(path).read()
        '1 2\\na 0.5 1.0\\n'
        """
        _word2vec_format.write_word2vec(
            self, fname, fvocab, binary, total_vec, write_header, prefix, append, sort_attr
        )

    @classmethod
    def load_word2vec_format(
        cls,
        fname,
        fvocab=None,
        binary=False,
        encoding="utf8",
        unicode_errors="strict",
        limit=None,
        datatype=REAL,
        no_header=False,
        allow_nonfinite=False,
    ):
        """Read vectors in the word2vec C tool's text or binary format.

        Parameters
        ----------
        fname : str or os.PathLike
            Input file (``.gz``/``.bz2`` are decompressed).
        fvocab : str, optional
            ``word count`` file to take the ``count`` attribute from; without it, counts
            descend in file order.
        binary : bool, optional
            The file holds binary records.
        encoding, unicode_errors : str, optional
            How words are decoded.
        limit : int, optional
            Read at most this many vectors.
        datatype : numpy float type, optional
            Type of the loaded vectors.
        no_header : bool, optional
            The (text) file has no ``"count dimensions"`` header line.
        allow_nonfinite : bool, optional
            Accept vectors holding NaN or infinite values (refused by default, since one such
            vector turns every similarity query into NaN). Not in gensim.

        Returns
        -------
        KeyedVectors
            The vectors, in file order. Duplicate words keep their first vector, with a
            warning, as in gensim.

        Raises
        ------
        ValueError
            Naming the file and the line (text) or byte offset (binary) of malformed input: a
            bad header, a wrong number of values, a truncated file, a non-numeric or
            non-finite value, an undecodable word.

        Examples
        --------
        >>> import os, tempfile; from hsw2v import KeyedVectors
        >>> path = os.path.join(tempfile.mkdtemp(), "v.txt")
        >>> _ = open(path, "w").write("2 2\\na 1 0\\nb 0 1\\n")
        >>> KeyedVectors.load_word2vec_format(path)["b"].tolist()
        [0.0, 1.0]
        """
        return _word2vec_format.read_word2vec(
            cls, fname, fvocab, binary, encoding, unicode_errors, limit, datatype, no_header,
            allow_nonfinite,
        )

    def _bundle_parts(self):
        """``(meta, arrays)`` describing this object; see :func:`hsw2v.keyedvectors._schema.kv_bundle_parts`."""
        return _schema.kv_bundle_parts(self)

    @classmethod
    def _from_bundle_parts(cls, meta, arrays, source="bundle"):
        """Rebuild an instance from :meth:`_bundle_parts` output read from `source`."""
        return _schema.kv_from_bundle_parts(cls, meta, arrays, source)

    def to_gensim(self):
        """An equal ``gensim.models.KeyedVectors``; see :func:`hsw2v.gensim_compat.kv_to_gensim`.

        Examples
        --------
        >>> from hsw2v import KeyedVectors
        >>> kv = KeyedVectors(2)
        >>> kv.add_vectors(["a", "b"], [[1.0, 2.0], [3.0, 4.0]])
        >>> g = kv.to_gensim()
        >>> type(g).__module__, g.index_to_key, g["b"].tolist()
        ('gensim.models.keyedvectors', ['a', 'b'], [3.0, 4.0])
        """
        return kv_to_gensim(self)

    @classmethod
    def from_gensim(cls, gensim_kv):
        """Vectors equal to a gensim ``KeyedVectors``; see :func:`hsw2v.gensim_compat.kv_from_gensim`.

        Examples
        --------
        >>> from gensim.models import KeyedVectors as GensimKeyedVectors
        >>> from hsw2v import KeyedVectors
        >>> g = GensimKeyedVectors(2)
        >>> g.add_vectors(["x", "y"], [[1.0, 0.0], [0.0, 1.0]])
        >>> kv = KeyedVectors.from_gensim(g)
        >>> type(kv).__module__, kv.index_to_key, kv["y"].tolist()
        ('hsw2v.keyedvectors', ['x', 'y'], [0.0, 1.0])
        """
        return kv_from_gensim(gensim_kv, cls=cls)

    def save(
        self, fname, separately=None, sep_limit=10 * 1024**2, ignore=frozenset(), pickle_protocol=4,
    ):
        """Save to one pickle-free file (see :mod:`hsw2v.persist`), atomically.

        Vectors, keys and per-key attributes (numbers, and per-key numeric arrays such as
        ``code`` and ``point``) are stored; other Python objects are skipped with a warning.
        gensim's ``save()`` options are accepted and what is done with each is logged
        (:func:`hsw2v.gensim_compat.explain_save_options`).

        Parameters
        ----------
        fname : str or os.PathLike
            The file to write (replaced atomically).
        separately, sep_limit, ignore, pickle_protocol : optional
            gensim's options, accepted and explained in the log.

        Raises
        ------
        TypeError
            If a key is neither a str nor an int (nothing is written).

        Examples
        --------
        >>> import os, tempfile; from hsw2v import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a"], [[1.0, 2.0]])
        >>> path = os.path.join(tempfile.mkdtemp(), "wv.hsw2v"); kv.save(path)
        >>> KeyedVectors.load(path)["a"].tolist()
        [1.0, 2.0]
        """
        _schema.save_kv(self, fname, separately, sep_limit, ignore, pickle_protocol)
        logger.info("saved %s", fname)  # gensim's line

    @classmethod
    def load(cls, fname, mmap=None):
        """Load what :meth:`save` wrote; ``mmap='r'`` maps the arrays instead of reading them.

        Parameters
        ----------
        fname : str or os.PathLike
            A file written by :meth:`save`.
        mmap : {None, 'r'}, optional
            ``'r'`` memory-maps the arrays read-only.

        Returns
        -------
        KeyedVectors
            The vectors, keys and per-key attributes saved; of the class saved where it is a
            subclass (a file of FastTextKeyedVectors gives FastTextKeyedVectors).

        Raises
        ------
        hsw2v.exceptions.WrongFileKindError
            If the file holds a whole model (load it with :meth:`hsw2v.Word2Vec.load`), or
            not the subclass asked for (``FastTextKeyedVectors.load`` of plain vectors).
        ValueError
            If the file is not an hsw2v bundle (a gensim pickle: the error names the ways to
            convert it) or holds inconsistent data.

        Examples
        --------
        >>> import os, tempfile; from hsw2v import KeyedVectors
        >>> kv = KeyedVectors(2); kv.add_vectors(["a"], [[1.0, 2.0]])
        >>> path = os.path.join(tempfile.mkdtemp(), "wv.hsw2v"); kv.save(path)
        >>> type(KeyedVectors.load(path, mmap="r").vectors).__name__
        'memmap'
        """
        logger.info("loading %s object from %s", cls.__name__, fname)  # gensim's line
        return _schema.load_kv(cls, fname, mmap)
