"""FastText: Word2Vec with another input side, each word its own row plus its n-gram rows.

Model: Bojanowski et al., "Enriching Word Vectors with Subword Information" (TACL 2017): a
word's input is its own row and the rows of its character n-grams (``min_n`` to ``max_n``
characters of ``<word>``, hashed into ``bucket`` rows with fastText's FNV-1a,
:mod:`hsw2v.fasttext._ngrams`). The hidden vector of a training step is their mean
(skip-gram: the centre word's rows, predicting each context word; CBOW: every context word's
rows, predicting the centre), and the step goes back to each row.

Everything else is Word2Vec's: the vocabulary, the trees, the objectives (hierarchical
softmax, negative sampling), the schedule, the threads, the files. The kernel trains the
subword input as one more input kind of the one training step
(``hsw2v._kernels._inner.Trainer(subwords=...)``); this class only says which rows those are
(:meth:`FastText._input_matrix`, :meth:`FastText._input_subwords`) and keeps the n-gram rows
beside the vocabulary (``wv``, a :class:`~hsw2v.fasttext.FastTextKeyedVectors`).
"""

from __future__ import annotations

import numpy as np

from hsw2v._guard import refuse_while_training
from hsw2v.fasttext._keyedvectors import FastTextKeyedVectors
from hsw2v.running.objectives import active
from hsw2v.running.params import ARGUMENTS, INT32_MAX, _p, check_rows
from hsw2v.word2vec import MAX_WORDS_IN_BATCH, Word2Vec

# FastText's parameters beyond Word2Vec's (the same rows as hsw2v.running.params.PARAMS).
FASTTEXT_PARAMS = (
    _p("min_n", "int", 0, 1024, 3),
    _p("max_n", "int", 0, 1024, 6),
    # the input matrix's rows (V + bucket) are int32 row ids in the kernel
    _p("bucket", "int", 0, INT32_MAX // 2, 2_000_000),
    _p("word_ngrams", "int", 1, 1, 1),
)
FASTTEXT_SAVED = tuple(p.name for p in FASTTEXT_PARAMS)


def check_fasttext_params(values: dict, where: str | None = None) -> None:
    """Check FastText's own parameters in ``values``; a ValueError names the one that is
    out of its range (prefixed by ``where`` when given). ``word_ngrams`` other than 1 is
    gensim's NotImplementedError."""
    if where is None and values.get("word_ngrams", 1) != 1:
        raise NotImplementedError(
            f"word_ngrams must be 1, got {values['word_ngrams']!r}: FastText trains words and "
            "their character n-grams, not word n-grams (as gensim's FastText)"
        )
    check_rows(FASTTEXT_PARAMS, values, where)


class FastText(Word2Vec):
    """Train word vectors from words and their character n-grams (fastText), with
    hierarchical softmax, negative sampling or both: gensim 4.4's ``FastText``.

    The parameters and methods are gensim's ``FastText``, with the objective chosen as
    :class:`hsw2v.Word2Vec` chooses it: hierarchical softmax alone (``hs=1, negative=0``) when
    neither ``hs`` nor ``negative`` is given (gensim: ``hs=0, negative=5``), gensim's default
    for the other when one is named. ``model.wv`` is a
    :class:`~hsw2v.fasttext.FastTextKeyedVectors`: ``wv[word]`` answers for any string (the
    mean of its n-gram rows for a word outside the vocabulary).

    What differs from gensim on purpose (``docs/fasttext.md``): skip-gram's hidden vector is
    the mean of the centre word's rows (its own row and its n-gram rows, divided by their
    count, as fastText and as gensim's own ``adjust_vectors``; gensim's training divides by
    the number of n-grams alone); after ``build_vocab(update=True)`` hierarchical softmax
    keeps every old word's path under its trained rows and grafts the new words on (gensim
    builds a new tree, so old paths change under the trained ``syn1`` rows; gensim issue
    #2884 is the older form of that defect). ``word_ngrams`` must be 1, as in gensim.

    Parameters
    ----------
    sentences, corpus_file, sg, hs, vector_size, alpha, window, min_count, max_vocab_size,
    sample, seed, workers, min_alpha, negative, ns_exponent, cbow_mean, hashfxn, epochs,
    null_word, sorted_vocab, trim_rule, batch_words, callbacks, max_final_vocab,
    shrink_windows, compute_loss, comment, cache_words, tree, shared_negatives :
        As :class:`hsw2v.Word2Vec`.
    word_ngrams : int, optional
        1 (gensim's only meaning): words are not joined into word n-grams.
    min_n, max_n : int, optional
        The shortest and longest character n-grams (3 and 6).
    bucket : int, optional
        The number of hash buckets for the n-grams (2,000,000); 0 trains without n-grams
        (then FastText is Word2Vec).

    Examples
    --------
    >>> from hsw2v import FastText
    >>> sentences = [["the", "cat", "sat"], ["the", "cats", "sat"]] * 50
    >>> model = FastText(sentences, vector_size=8, min_count=1, bucket=1000, workers=1)
    >>> model.wv["catz"].shape  # a word never seen: the mean of its n-gram rows
    (8,)
    """

    FILE_KIND = "FastText"

    def __init__(
        self, sentences=None, corpus_file=None, sg=0, hs=None, vector_size=100, alpha=0.025,
        window=5, min_count=5, max_vocab_size=None, word_ngrams=1, sample=1e-3, seed=1, workers=3,
        min_alpha=0.0001, negative=None, ns_exponent=0.75, cbow_mean=1, hashfxn=hash, epochs=5,
        null_word=0, min_n=3, max_n=6, sorted_vocab=1, bucket=2_000_000, trim_rule=None,
        batch_words=MAX_WORDS_IN_BATCH, callbacks=(), max_final_vocab=None, shrink_windows=True,
        compute_loss=False, comment=None, cache_words=100_000_000, tree="huffman",
        shared_negatives=True,
    ):
        check_fasttext_params(
            {"min_n": min_n, "max_n": max_n, "bucket": bucket, "word_ngrams": word_ngrams}
        )
        self.min_n, self.max_n = int(min_n), int(max_n)
        # no n-gram length between min_n and max_n: no buckets either (gensim's rule)
        self.bucket = 0 if max_n < min_n else int(bucket)
        self.word_ngrams = int(word_ngrams)
        # Word2Vec's arguments, passed on by name; the corpus comes after wv is FastText's
        given = {k: v for k, v in locals().items() if k in ARGUMENTS}
        super().__init__(**{**given, "sentences": None, "corpus_file": None})
        self.wv = self._new_keyed_vectors()
        self._build_and_train(sentences, corpus_file, trim_rule)

    def _new_keyed_vectors(self) -> FastTextKeyedVectors:
        """An empty ``wv`` for this model's settings."""
        lockf = getattr(getattr(self, "wv", None), "vectors_lockf", None)
        wv = FastTextKeyedVectors(self.vector_size, self.min_n, self.max_n, self.bucket)
        if lockf is not None:
            wv.vectors_lockf = lockf
        return wv

    # ---------------------------------------------------------------- the input side
    def _input_matrix(self) -> np.ndarray:
        """fastText's input matrix: the V word rows, then the ``bucket`` n-gram rows."""
        return self.wv.input_matrix

    def _input_subwords(self):
        """Each word's input rows: its own row, then its n-grams' (``subword_table``)."""
        return self.wv.subword_table()

    def _input_lockf(self):
        """gensim's ``vectors_vocab_lockf`` and ``vectors_ngrams_lockf`` as one factor per
        input row (None when every factor is 1: nothing to scale)."""
        wv = self.wv
        vocab = np.asarray(wv.vectors_vocab_lockf, dtype=np.float32).reshape(-1)
        ngrams = np.asarray(wv.vectors_ngrams_lockf, dtype=np.float32).reshape(-1)
        if (vocab == 1.0).all() and (ngrams == 1.0).all():
            return None
        if not len(vocab) or not len(ngrams):
            raise ValueError("vectors_vocab_lockf and vectors_ngrams_lockf need a factor each")
        words, rows = len(wv.index_to_key), len(wv.input_matrix)
        return np.concatenate(
            [vocab[np.arange(words) % len(vocab)], ngrams[np.arange(rows - words) % len(ngrams)]]
        )

    def _nonfinite_rows(self) -> dict:
        rows = super()._nonfinite_rows()
        from hsw2v.divergence import count_nonfinite_rows

        rows.update(count_nonfinite_rows({"wv.input_matrix": self.wv.input_matrix}))
        return rows

    # ---------------------------------------------------------------- vocabulary, weights
    def prepare_weights(self, update=False):
        """Initialise the input matrix (word rows and n-gram rows) uniformly in [-1/d, 1/d)
        from ``seed`` and every objective's output matrix at zero; with ``update`` keep every
        trained row and give new words seeded rows (their n-grams keep theirs)."""
        refuse_while_training(self, "prepare_weights()")
        wv = self.wv
        if update:
            from hsw2v.vocab_update import grow_weights

            n_old = len(wv.vectors_vocab)
            grow_weights(self)  # wv.vectors (seeded rows for new words) and the outputs
            n = len(wv.index_to_key)
            if n != n_old:
                wv.resize_vocab_rows(n, new_rows=np.asarray(wv.vectors[n_old:]))
            wv.recalc_char_ngram_buckets()
            wv.adjust_vectors()
            self._weights_changed()
            return None
        super().prepare_weights()  # wv.vectors seeded as Word2Vec's, the outputs reset
        wv.vectors_ngrams = None  # start the n-gram rows afresh
        wv.vectors_vocab = wv.vectors  # the word rows are Word2Vec's seeded rows
        wv.resize_vectors(seed=self.seed)  # n-gram rows as gensim's; composes wv.vectors
        self._weights_changed()
        return None

    def train(self, *args, **kwargs):
        """Train as :meth:`hsw2v.Word2Vec.train`, then compose the word vectors from the
        trained rows (``wv.adjust_vectors``), as gensim's FastText does after training."""
        try:
            return super().train(*args, **kwargs)
        finally:
            if self.wv.vectors_ngrams is not None or self.bucket == 0:
                self.wv.adjust_vectors()
                self._weights_changed()

    def estimate_memory(self, vocab_size=None, report=None):
        """gensim's estimate, in bytes, under gensim's keys: ``vocab``, ``syn0_vocab`` (the
        word rows), ``syn1`` / ``syn1neg``, ``syn0_ngrams`` (the n-gram rows) and
        ``buckets_word`` (each word's n-gram list: hsw2v's table of 4-byte row ids, 8 bytes
        a word plus 4 an n-gram), and ``total``. Like gensim's, it counts the current
        vocabulary whatever ``vocab_size`` says."""
        words, row = len(self.wv), self.vector_size * np.dtype(np.float32).itemsize
        report = report or {}
        report["vocab"] = words * (700 if self.hs else 500)
        report["syn0_vocab"] = words * row
        for objective in active(self):  # each output matrix, as the table names it
            report[objective.matrix] = words * row
        if self.bucket:
            report["syn0_ngrams"] = self.bucket * row
            ptr, rows = self.wv.subword_table() if words else (np.zeros(1), np.zeros(0))
            report["buckets_word"] = 8 * (words + 1) + 4 * len(rows)
        report["total"] = sum(v for k, v in report.items() if k != "total")
        return report

    # ---------------------------------------------------------------- gensim
    def to_gensim(self):
        """A ``gensim.models.FastText`` equal to this model (vocabulary, counts, word and
        n-gram rows, output layers, tree, settings), which gensim can query or train on
        (after a vocabulary update with ``hs=1`` gensim builds a new tree, unlike hsw2v)."""
        from gensim.models import FastText as GensimFastText

        from hsw2v._gensim.convert import to_gensim
        from hsw2v._gensim.convert_fasttext import ftkv_to_gensim

        out = to_gensim(self, GensimFastText, ("min_n", "max_n", "bucket"), ftkv_to_gensim)
        out.wv.adjust_vectors()
        return out

    @classmethod
    def from_gensim(cls, gensim_model):
        """A FastText equal to a ``gensim.models.FastText`` (copies of its arrays)."""
        from hsw2v._gensim.convert import from_gensim
        from hsw2v._gensim.convert_fasttext import ftkv_from_gensim

        if not hasattr(gensim_model.wv, "vectors_ngrams"):
            raise TypeError(
                f"expected a gensim FastText, got {type(gensim_model).__name__}: use "
                "hsw2v.Word2Vec.from_gensim for a Word2Vec"
            )
        model = from_gensim(gensim_model, cls, (), ftkv_from_gensim)
        # gensim keeps the n-gram settings on its wv only
        model.min_n, model.max_n, model.bucket = model.wv.min_n, model.wv.max_n, model.wv.bucket
        model.wv.adjust_vectors()
        return model

    # ---------------------------------------------------------------- files
    def _file_state(self) -> tuple[dict, dict]:
        meta = {name: getattr(self, name) for name in FASTTEXT_SAVED}
        arrays = {
            "input_matrix": self.wv.input_matrix,
            "vectors_vocab_lockf": np.asarray(self.wv.vectors_vocab_lockf, dtype=np.float32),
            "vectors_ngrams_lockf": np.asarray(self.wv.vectors_ngrams_lockf, dtype=np.float32),
        }
        return meta, arrays

    def _restore_file_state(self, meta: dict, arrays: dict, fname) -> None:
        check_fasttext_params(meta, where=f"{fname!r}")
        for name in FASTTEXT_SAVED:
            if name not in meta:
                raise ValueError(f"{fname!r}: a FastText file without {name!r}")
            setattr(self, name, int(meta[name]))
        plain = self.wv
        matrix = arrays.get("input_matrix")
        n, d = len(plain.index_to_key), self.vector_size
        if matrix is None or matrix.shape != (n + self.bucket, d) or matrix.dtype != np.float32:
            raise ValueError(
                f"{fname!r}: its input_matrix should be float32 of shape ({n} + bucket "
                f"{self.bucket}, {d})"
            )
        wv = self._new_keyed_vectors()
        wv.index_to_key, wv.key_to_index = plain.index_to_key, plain.key_to_index
        wv.expandos = plain.expandos
        wv.vectors_lockf = plain.vectors_lockf
        wv.input_matrix = matrix
        wv._vocab_rows, wv._ngrams_allocated = n, True
        for name in ("vectors_vocab_lockf", "vectors_ngrams_lockf"):
            factors = np.array(arrays.get(name, np.ones(1, np.float32)), dtype=np.float32)
            if factors.ndim != 1 or not len(factors) or not np.isfinite(factors).all():
                raise ValueError(f"{fname!r}: {name} must hold finite factors")
            setattr(wv, name, factors)
        wv.vectors = plain.vectors
        self.wv = wv
