"""Doc2Vec: Word2Vec with one more input row, the document's.

Model: Le & Mikolov, "Distributed Representations of Sentences and Documents" (ICML 2014),
as gensim 4.4's ``Doc2Vec`` trains it. Every document has a row of its own (one per tag, in
``model.dv``); PV-DBOW (``dm=0``) trains each document row to predict each of its words
(with ``dbow_words=1`` skip-gram's word training in the same pass, word by word, as gensim),
PV-DM (``dm=1``) trains the mean (``dm_mean=1``, the default) or the sum of the document's
rows and the window's word rows to predict the centre word.

Everything else is Word2Vec's: the vocabulary, the trees, the objectives (hierarchical
softmax, negative sampling), the schedule, the threads. The kernel trains the document's
rows as one more input kind of the one training step
(``hsw2v._kernels._inner.Trainer(docs=...)``); this class only says which rows those are
(:meth:`Doc2Vec._input_docs`), makes the jobs that name them (each document's tag tokens,
:func:`hsw2v.doc2vec._documents.iter_doc_jobs`) and keeps the document vectors (``dv``).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable

import numpy as np

from hsw2v._guard import refuse_while_training
from hsw2v.corpora import TaggedLineDocument
from hsw2v.doc2vec._documents import (
    TagScan,
    check_doc_rows,
    check_tag,
    is_int_tag,
    iter_doc_jobs,
    words_of,
)
from hsw2v.doc2vec._inference import infer_vector
from hsw2v.exceptions import EmptyCorpusError
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.keyedvectors._similarity import key_list
from hsw2v.running.file_scan import file_mode_path, lines_before
from hsw2v.running.params import INT32_MAX, _p, check_rows
from hsw2v.running.passes import epoch_passes
from hsw2v.vocab import Pruning, scan_counts
from hsw2v.word2vec import MAX_WORDS_IN_BATCH, Word2Vec

logger = logging.getLogger("hsw2v.doc2vec")

# Doc2Vec's parameters beyond Word2Vec's (the same rows as hsw2v.running.params.PARAMS):
# gensim's flags (dm_mean may also be None: cbow_mean's value), and dm_tag_count, which only
# sizes gensim's dm_concat layer (its default 1; any count a file may hold)
DOC2VEC_PARAMS = (
    _p("dm", "flag", 0, 1, 1),
    _p("dm_mean", "flag", 0, 1, None),
    _p("dbow_words", "flag", 0, 1, 0),
    _p("dm_concat", "flag", 0, 1, 0),
    _p("dm_tag_count", "int", 0, INT32_MAX, 1),
)
# what a Doc2Vec file holds beyond a Word2Vec file's settings
DOC2VEC_SAVED = ("dbow_words", "dm_tag_count")


def check_doc2vec_params(values: dict, where: str | None = None) -> None:
    """Check Doc2Vec's own parameters in ``values``; a ValueError names the one that is out
    of its range (prefixed by ``where``, e.g. a file, when given)."""
    if values.get("dm_mean", 0) is None:  # None: cbow_mean's value
        values = {name: value for name, value in values.items() if name != "dm_mean"}
    check_rows(DOC2VEC_PARAMS, values, where)


def _refuse_concat(dm_concat, dv, dv_mapfile) -> None:
    if dm_concat:
        raise NotImplementedError(
            "dm_concat=1 is not supported: its input layer is (2 x window + dm_tag_count) x "
            "vector_size wide, a model many times larger and slower that gensim's own "
            "documentation says has not beaten the mean in its tests. Use dm=1 with "
            "dm_mean=1 (the mean of the document's and the window's rows, the default) or "
            "dm_mean=0 (their sum), or dm=0 (PV-DBOW)"
        )
    if dv is not None or dv_mapfile is not None:
        raise NotImplementedError(
            "dv= and dv_mapfile= are not supported: Doc2Vec builds model.dv from the "
            "documents' tags (save() and load(mmap='r') keep and map it)"
        )


def _check_dv_keys(keys: list) -> None:
    """The error of the first key of ``dv`` that is neither an int nor a str UTF-8 can
    encode (:func:`hsw2v.doc2vec._documents.check_tag`), if any."""
    strs = [key for key in keys if type(key) is str]
    if len(strs) != len(keys):
        for key in keys:
            if not is_int_tag(key):
                check_tag(key, "dv holds")
    try:
        "".join(strs).encode("utf-8")
    except UnicodeEncodeError:
        for key in strs:
            check_tag(key, "dv holds")


def _doc_rows(n: int, d: int, seed: int) -> np.ndarray:
    """Fresh document rows, uniform in [-1/d, 1/d) as the word rows, from their own stream of
    ``seed``."""
    rng = np.random.default_rng(seed=(seed, 0xD0C))
    rows = rng.random((n, d), dtype=np.float32)
    rows *= 2.0
    rows -= 1.0
    rows /= d
    return rows


class Doc2Vec(Word2Vec):
    """Train document vectors (paragraph vectors) with hierarchical softmax, negative
    sampling or both: gensim 4.4's ``Doc2Vec``.

    The parameters and methods are gensim's ``Doc2Vec``, with the objective chosen as
    :class:`hsw2v.Word2Vec` chooses it: hierarchical softmax alone (``hs=1, negative=0``) when
    neither ``hs`` nor ``negative`` is given (gensim: ``hs=0, negative=5``), gensim's default
    for the other when one is named. ``model.dv`` holds a vector per tag, ``model.wv`` the
    word vectors (trained by PV-DM, and by PV-DBOW with ``dbow_words=1``);
    :meth:`infer_vector` trains a vector for a new document.

    What differs from gensim on purpose (``docs/doc2vec.md``): ``dm_concat=1`` is refused
    (see the error); a document longer than 10,000 words is trained whole (gensim trains
    its first 10,000); the learning rate falls word by word (gensim: job by job, and in
    :meth:`infer_vector` epoch by epoch); :meth:`infer_vector` starts from a vector seeded by
    the model's ``seed`` and the words (gensim hashes them with Python's ``hash``, which
    changes from process to process), so it is deterministic;
    ``build_vocab(update=True)`` is refused; a tag is an int or a str (gensim takes any
    hashable key), checked by ``build_vocab`` before any training, as are int tags past the
    rows a model can hold and a corpus without tags; ``dm``, ``dbow_words``, ``dm_mean`` and
    ``dm_concat`` must be 0 or 1 (gensim reads ``dm=2`` as PV-DBOW).

    Parameters
    ----------
    documents : iterable of TaggedDocument, optional
        The corpus: ``TaggedDocument(words, tags)`` items, re-iterable.
    corpus_file : str or os.PathLike, optional
        A text file with one document per line, its line number (from 0) its tag
        (:class:`TaggedLineDocument`).
    dm : {1, 0}, optional
        1 (the default): PV-DM; 0: PV-DBOW.
    dm_mean : {None, 1, 0}, optional
        PV-DM's hidden vector: the mean (1; None takes ``cbow_mean``, 1 by default) or the
        sum (0) of the document's and the window's rows.
    dbow_words : {0, 1}, optional
        PV-DBOW: also train the word vectors, skip-gram over each word's window (slower).
    dm_concat : {0}, optional
        Only 0: the concatenating PV-DM is refused (see above).
    dm_tag_count : int, optional
        Kept for gensim's signature (it sizes ``dm_concat``'s layer): an integer in
        [0, 2**31 - 1], 1 by default.
    dv, dv_mapfile : None
        Kept for gensim's signature; anything else is refused.
    epochs : int, optional
        10, as gensim's Doc2Vec.
    vector_size, window, trim_rule, callbacks, shrink_windows, comment :
        As :class:`hsw2v.Word2Vec`.
    **kwargs
        :class:`hsw2v.Word2Vec`'s other parameters, with its meaning (``alpha``,
        ``min_alpha``, ``min_count``, ``max_vocab_size``, ``sample``, ``seed``, ``workers``,
        ``hs``, ``negative``, ``ns_exponent``, ``cbow_mean``, ``hashfxn``, ``null_word``,
        ``sorted_vocab``, ``batch_words``, ``max_final_vocab``, ``compute_loss``,
        ``cache_words``, ``tree``), as gensim's Doc2Vec passes them on.

    Examples
    --------
    >>> from hsw2v import Doc2Vec, TaggedDocument
    >>> docs = [TaggedDocument(["the", "cat", "sat"], [0]),
    ...         TaggedDocument(["the", "dog", "ran"], ["dog"])] * 20
    >>> model = Doc2Vec(docs, vector_size=8, min_count=1, workers=1, epochs=2)
    >>> model.dv.index_to_key, model.dv["dog"].shape
    ([0, 'dog'], (8,))
    >>> model.infer_vector(["the", "cat"]).shape
    (8,)
    """

    FILE_KIND = "Doc2Vec"

    def __init__(
        self, documents=None, corpus_file=None, vector_size=100, dm_mean=None, dm=1, dbow_words=0,
        dm_concat=0, dm_tag_count=1, dv=None, dv_mapfile=None, comment=None, trim_rule=None,
        callbacks=(), window=5, epochs=10, shrink_windows=True, **kwargs,
    ):
        check_doc2vec_params(
            {
                "dm": dm,
                "dm_mean": dm_mean,
                "dbow_words": dbow_words,
                "dm_concat": dm_concat,
                "dm_tag_count": dm_tag_count,
            }
        )
        _refuse_concat(dm_concat, dv, dv_mapfile)
        for name in ("sentences", "sg"):
            if name in kwargs:
                raise TypeError(
                    f"Doc2Vec() got the Word2Vec argument {name!r}: give documents= (an "
                    "iterable of TaggedDocument) and dm= (1: PV-DM, 0: PV-DBOW)"
                )
        self.dbow_words = int(dbow_words)
        self.dm_concat = 0
        self.dm_tag_count = int(dm_tag_count)
        self._tag_scan: TagScan | None = None
        self._inference = None
        super().__init__(
            sentences=None,
            corpus_file=None,
            vector_size=vector_size,
            sg=0 if dm else 1,
            window=window,
            epochs=epochs,
            shrink_windows=shrink_windows,
            callbacks=callbacks,
            comment=comment,
            **kwargs,
        )
        if dm_mean is not None:
            self.cbow_mean = int(dm_mean)
        self.dv = KeyedVectors(self.vector_size)
        self.dv.vectors_lockf = np.ones(1, dtype=np.float32)
        self._build_and_train(documents, corpus_file, trim_rule)

    @property
    def dm(self) -> bool:
        """PV-DM (True) or PV-DBOW (False), as gensim's property."""
        return not self.sg

    @property
    def dbow(self) -> bool:
        """PV-DBOW (True) or PV-DM (False), as gensim's property."""
        return bool(self.sg)

    def _skip_gram_walks(self) -> bool:
        """PV-DBOW alone walks each word's outputs once (from its document's row), as CBOW
        does; with ``dbow_words`` skip-gram's walks of each word come beside it, and PV-DM
        walks once, as CBOW (:meth:`hsw2v.Word2Vec._skip_gram_walks`)."""
        return bool(self.sg and self.dbow_words)

    # ---------------------------------------------------------------- the input side
    def _input_docs(self):
        """The document rows (``dv.vectors``), their lock factors (``dv.vectors_lockf``,
        None when all 1) and ``dbow_words``: the kernel's ``docs``.

        The kernel takes one factor per row (``checked_docs`` refuses other lengths); gensim's
        ``vectors_lockf`` may be shorter, read as ``factors[row % len(factors)]``, so it is
        spread to the rows here. Its "all 1 is None" rule the kernel applies too; here it
        comes first so that the default single factor is never spread to every row."""
        lockf = np.asarray(getattr(self.dv, "vectors_lockf", np.ones(1)), dtype=np.float32)
        n = len(self.dv.vectors)
        if (lockf == 1.0).all():
            lockf = None
        elif len(lockf) != n:
            lockf = lockf.reshape(-1)[np.arange(n) % max(len(lockf.reshape(-1)), 1)]
        return self.dv.vectors, lockf, bool(self.dbow_words)

    def _corpus_jobs(self, corpus, n_words: int):
        """Each document's word ids, led by its tags' rows (:func:`iter_doc_jobs`)."""
        return iter_doc_jobs(
            corpus,
            self.wv.key_to_index,
            self.dv.key_to_index,
            len(self.dv.vectors),
            self.batch_words,
            n_words,
        )

    def _epoch_passes(self, corpus, corpus_file, trainer, schedule):
        """Every epoch reads the documents: a local ``corpus_file`` by the workers' byte
        ranges, each line a document tagged with its number (as :class:`TaggedLineDocument`
        gives them: with one worker the same training), anything else through the corpus
        iterable, the tags travelling with the words."""
        self._take_recording()
        path = file_mode_path(corpus_file)
        return epoch_passes(self, corpus, path, trainer, schedule, None, documents=True)

    def _nonfinite_rows(self) -> dict:
        rows = super()._nonfinite_rows()
        from hsw2v.divergence import count_nonfinite_rows

        rows.update(count_nonfinite_rows({"dv.vectors": self.dv.vectors}))
        return rows

    # ---------------------------------------------------------------- the corpus
    _CORPUS_NAME = "documents"  # Word2Vec's _corpus reads them through the two hooks below

    @staticmethod
    def _file_corpus(corpus_file):
        """The documents of a ``corpus_file``, one a line."""
        return TaggedLineDocument(corpus_file)

    @staticmethod
    def _check_corpus(corpus_iterable) -> None:
        """A TypeError unless ``corpus_iterable`` is an iterable of documents."""
        if (
            corpus_iterable is None
            or isinstance(corpus_iterable, (str, bytes))
            or not isinstance(corpus_iterable, Iterable)
        ):
            raise TypeError(
                "the documents must be an iterable of TaggedDocument(words, tags), e.g. "
                "[TaggedDocument(['a', 'b'], [0]), ...], or corpus_file= a file with one "
                f"document per line; got {type(corpus_iterable).__name__}"
            )

    def _check_train_call(self, corpus_iterable, corpus_file, total_examples, total_words, epochs):
        self._corpus(corpus_iterable, corpus_file)  # what the documents are, first (gensim's)
        check_doc2vec_params({name: getattr(self, name) for name in DOC2VEC_SAVED})
        return super()._check_train_call(
            corpus_iterable, corpus_file, total_examples, total_words, epochs
        )

    def scan_vocab(
        self, corpus_iterable=None, corpus_file=None, progress_per=10000, workers=None,
        trim_rule=None,
    ):
        """Count the documents' words and collect their tags (one streaming pass); returns
        ``(total_words, corpus_count)``, the raw words and documents read, as gensim's."""
        refuse_while_training(self, "scan_vocab()")
        corpus = self._corpus(corpus_iterable, corpus_file)
        started = time.perf_counter()
        tags = TagScan(self.vector_size)
        self._pruning = Pruning()
        path = file_mode_path(corpus_file)
        counted = self._count_file(path, workers)
        if counted is not None:  # the documents are the file's lines, tagged with their numbers
            self.raw_vocab, total_words, _ = counted
            corpus_count = lines_before(path, [os.path.getsize(path)])[0]
            tags.add_line_numbers(corpus_count)
        else:
            self.raw_vocab, total_words, corpus_count, _ = scan_counts(
                words_of(corpus, tags),
                self.max_vocab_size,
                trim_rule,
                progress_per,
                pruning=self._pruning,
            )
        self._recording = None
        if corpus_count == 0:
            raise EmptyCorpusError("the corpus is empty: it yielded no documents")
        check_doc_rows(tags)  # before any row is allocated, and before any training
        self.corpus_count = corpus_count
        self.corpus_total_words = total_words
        self._tag_scan = tags
        logger.info(
            "collected %i document tags and %i word types from %i documents in %.2fs",
            len(tags.index_to_key()),
            len(self.raw_vocab),
            corpus_count,
            time.perf_counter() - started,
        )
        return total_words, corpus_count

    def build_vocab(self, corpus_iterable=None, corpus_file=None, update=False, **kwargs):
        """Scan the documents once: the words' vocabulary, tree and weights, as
        :meth:`hsw2v.Word2Vec.build_vocab`, and a fresh row per tag in ``dv``."""
        if update:
            raise NotImplementedError(
                "build_vocab(update=True) is not supported by Doc2Vec: build a new model on "
                "the whole corpus, or use infer_vector() for new documents"
            )
        return super().build_vocab(corpus_iterable, corpus_file, **kwargs)

    def build_vocab_from_freq(self, *args, **kwargs):
        raise NotImplementedError(
            "Doc2Vec needs the documents' tags: use build_vocab(documents) instead of "
            "build_vocab_from_freq()"
        )

    def prepare_weights(self, update=False):
        """Initialise the word rows and output matrices as :meth:`hsw2v.Word2Vec.prepare_weights`
        and one row per tag in ``dv``, uniform in [-1/d, 1/d) from ``seed``."""
        super().prepare_weights(update=update)
        scan = self._tag_scan
        if scan is None:
            return
        keys = scan.index_to_key()
        dv = KeyedVectors(self.vector_size)
        dv.index_to_key = keys
        dv.key_to_index = {key: i for i, key in enumerate(keys)}
        dv.next_index = len(keys)
        dv.vectors = _doc_rows(len(keys), self.vector_size, self.seed)
        dv.expandos = {"doc_count": scan.doc_counts()}
        dv.vectors_lockf = np.ones(1, dtype=np.float32)
        self.dv = dv
        self._inference = None

    def estimate_memory(self, vocab_size=None, report=None):
        """gensim's estimate, in bytes: Word2Vec's (:meth:`hsw2v.Word2Vec.estimate_memory`)
        and the document vectors, ``doctag_lookup`` (gensim's 200 bytes a tag) and
        ``doctag_syn0`` (``4 * vector_size`` a tag), for the tags scanned so far."""
        scan = self._tag_scan
        n_tags = len(scan.index_to_key()) if scan is not None else len(self.dv)
        report = dict(report or {})
        report["doctag_lookup"] = 200 * n_tags
        report["doctag_syn0"] = n_tags * self.vector_size * np.dtype(np.float32).itemsize
        return super().estimate_memory(vocab_size, report)

    def reset_from(self, other_model):
        raise NotImplementedError("Doc2Vec.reset_from is not supported: build a new model")

    # ---------------------------------------------------------------- queries
    def infer_vector(self, doc_words, alpha=None, min_alpha=None, epochs=None):
        """A vector for a new document (its words, a list of str): its own row trained on it
        with every other weight frozen, ``epochs`` passes (default ``model.epochs``) with
        the rate falling from ``alpha`` to ``min_alpha`` (default the model's), as gensim's.

        Deterministic for a given model, words and ``seed``; the kernel runs without the
        GIL and writes only the new row, so several threads may infer at once.

        Examples
        --------
        >>> from hsw2v import Doc2Vec, TaggedDocument
        >>> docs = [TaggedDocument(["a", "b", "c"], [0])] * 30
        >>> model = Doc2Vec(docs, vector_size=4, min_count=1, workers=1, epochs=1)
        >>> v = model.infer_vector(["a", "b"])
        >>> bool((v == model.infer_vector(["a", "b"])).all())
        True
        """
        return infer_vector(self, doc_words, alpha, min_alpha, epochs)

    def __getitem__(self, tag):
        """gensim's lookup: a word's vector when ``tag`` is a word of ``wv``, else the
        document vector of ``tag``; a list of them gives their rows stacked."""
        if isinstance(tag, (str, int, np.integer)):
            return self.wv[tag] if tag in self.wv else self.dv[tag]
        return np.vstack([self[t] for t in key_list(tag)])

    def save_word2vec_format(
        self, fname, doctag_vec=False, word_vec=True, prefix="*dt_", fvocab=None, binary=False
    ):
        """Write the word vectors and/or the document vectors (their keys prefixed by
        ``prefix``) to one file in word2vec's format, as gensim's: words first."""
        keys, rows = [], []
        if word_vec:
            keys += list(self.wv.index_to_key)
            rows.append(self.wv.vectors)
        if doctag_vec:
            keys += [f"{prefix}{key}" for key in self.dv.index_to_key]
            rows.append(self.dv.vectors)
        if not keys:
            raise ValueError("nothing to write: give word_vec=True and/or doctag_vec=True")
        both = KeyedVectors(self.vector_size)
        both.add_vectors(keys, np.vstack(rows))
        both.save_word2vec_format(fname, fvocab=fvocab, binary=binary)

    def similarity_unseen_docs(
        self, doc_words1, doc_words2, alpha=None, min_alpha=None, epochs=None
    ):
        """The cosine similarity of the inferred vectors of two word lists, as gensim's."""
        a = self.infer_vector(doc_words1, alpha, min_alpha, epochs)
        b = self.infer_vector(doc_words2, alpha, min_alpha, epochs)
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        return float(np.dot(a, b) / norm) if norm else 0.0

    # ---------------------------------------------------------------- gensim
    def to_gensim(self):
        """A ``gensim.models.Doc2Vec`` equal to this model (words, document vectors, output
        layers, tree, settings), which gensim can query, infer with or train on."""
        from hsw2v._gensim.convert_doc2vec import doc2vec_to_gensim

        return doc2vec_to_gensim(self)

    @classmethod
    def from_gensim(cls, gensim_model):
        """A Doc2Vec equal to a ``gensim.models.Doc2Vec`` (copies of its arrays)."""
        from hsw2v._gensim.convert_doc2vec import doc2vec_from_gensim

        return doc2vec_from_gensim(cls, gensim_model)

    # ---------------------------------------------------------------- files
    def _file_state(self) -> tuple[dict, dict]:
        meta = {name: getattr(self, name) for name in DOC2VEC_SAVED}
        meta["dv_keys"] = list(self.dv.index_to_key)
        arrays = {
            "dv_vectors": self.dv.vectors,
            "dv_doc_count": np.asarray(
                self.dv.expandos.get("doc_count", np.zeros(len(self.dv), np.int64)), np.int64
            ),
            "dv_lockf": np.asarray(self.dv.vectors_lockf, dtype=np.float32).reshape(-1),
        }
        return meta, arrays

    def _check_file_state(self, meta: dict, arrays: dict, fname) -> None:
        """A ValueError naming ``fname`` unless what :meth:`_file_state` wrote (or a file
        holds) is a Doc2Vec's state: its settings, ``dv``'s keys (ints and strs UTF-8 can
        encode, each once) and arrays; run by ``load()`` and by ``save()`` before it writes."""
        check_doc2vec_params(meta, where=f"{fname!r}")
        for name in DOC2VEC_SAVED:
            if name not in meta:
                raise ValueError(f"{fname!r}: a Doc2Vec file without {name!r}")
        keys = meta.get("dv_keys")
        if not isinstance(keys, list):
            raise ValueError(f"{fname!r}: a Doc2Vec file whose dv_keys are not a list")
        try:
            _check_dv_keys(keys)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{fname!r}: a Doc2Vec file whose dv_keys are not ints and strs ({exc})"
            ) from None
        if len(set(keys)) != len(keys):
            raise ValueError(f"{fname!r}: a Doc2Vec file with repeated dv_keys")
        vectors = arrays.get("dv_vectors")
        if (
            vectors is None
            or vectors.dtype != np.float32
            or vectors.shape != (len(keys), self.vector_size)
        ):
            raise ValueError(
                f"{fname!r}: its dv_vectors should be float32 of shape ({len(keys)}, "
                f"{self.vector_size})"
            )
        lockf = np.array(arrays.get("dv_lockf", np.ones(1, np.float32)), dtype=np.float32)
        if lockf.ndim != 1 or not len(lockf) or not np.isfinite(lockf).all():
            raise ValueError(f"{fname!r}: dv_lockf must hold finite factors")
        counts = arrays.get("dv_doc_count")
        if counts is None or counts.shape != (len(keys),) or counts.dtype.kind not in "iu":
            raise ValueError(f"{fname!r}: dv_doc_count must hold one count per dv key")

    def _restore_file_state(self, meta: dict, arrays: dict, fname) -> None:
        self._check_file_state(meta, arrays, fname)
        for name in DOC2VEC_SAVED:
            setattr(self, name, int(meta[name]))
        keys = meta["dv_keys"]
        vectors = arrays["dv_vectors"]
        lockf = np.array(arrays.get("dv_lockf", np.ones(1, np.float32)), dtype=np.float32)
        counts = arrays["dv_doc_count"]
        dv = KeyedVectors(self.vector_size)
        dv.index_to_key = keys
        dv.key_to_index = {key: i for i, key in enumerate(keys)}
        dv.next_index = len(keys)
        dv.vectors = vectors
        dv.expandos = {"doc_count": counts}
        dv.vectors_lockf = lockf
        self.dv = dv
        self._tag_scan = None
        self._inference = None

    def __str__(self):
        mode = (
            "dbow" + ("+w" if self.dbow_words else "")
            if self.sg
            else ("dm/m" if self.cbow_mean else "dm/s")
        )
        parts = [mode, f"d{self.vector_size}"]
        if self.negative:
            parts.append(f"n{self.negative}")
        if self.hs:
            parts.append("hs")
        if not self.sg or self.dbow_words:
            parts.append(f"w{self.window}")
        parts += [f"mc{self.min_count}", f"s{self.sample}", f"t{self.workers}"]
        return f"{type(self).__name__}<{','.join(parts)}>"


__all__ = ["Doc2Vec", "MAX_WORDS_IN_BATCH"]
