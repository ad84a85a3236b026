"""Word2Vec's vocabulary: counting the corpus, building the vocabulary, the tree and fresh
weights (``build_vocab`` and the gensim steps it is made of).

:class:`VocabularyMixin` holds these methods of :class:`hsw2v.Word2Vec` (gensim's names and
meaning); the counting itself is :mod:`hsw2v.vocab`'s, or, for a local ``corpus_file``, the
workers' own byte ranges (:func:`hsw2v.running.file_scan.count_file`), and the tree
:mod:`hsw2v.trees`'s.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from hsw2v._guard import refuse_while_training
from hsw2v.corpora import corpus_identity
from hsw2v.exceptions import EmptyCorpusError
from hsw2v.running.file_scan import count_file, file_mode_path
from hsw2v.running.objectives import rebuild_lookups, reset_matrices
from hsw2v.running.objectives.negative import make_cum_table
from hsw2v.trees import word2vec_tree
from hsw2v.vocab import (
    Pruning,
    Vocabulary,
    build_vocabulary,
    check_corpus,
    check_keys,
    scan_counts,
)

logger = logging.getLogger("hsw2v.word2vec")  # the model's log, as users know it


class VocabularyMixin:
    """The vocabulary methods of :class:`hsw2v.Word2Vec` (it holds the state they use)."""

    _CORPUS_NAME = "a corpus iterable"  # what the corpus is called in errors

    @classmethod
    def _corpus(cls, corpus_iterable, corpus_file):
        """The corpus to read: a local ``corpus_file`` through :meth:`_file_corpus`, or the
        iterable, checked by :meth:`_check_corpus` (a model whose corpus is another kind,
        as Doc2Vec's documents, overrides those two and :attr:`_CORPUS_NAME`)."""
        if corpus_iterable is not None and corpus_file is not None:
            raise TypeError(f"pass either {cls._CORPUS_NAME} or corpus_file, not both")
        if corpus_file is not None:
            file_mode_path(corpus_file)  # checks that a local file exists
            return cls._file_corpus(corpus_file)
        cls._check_corpus(corpus_iterable)
        return corpus_iterable

    @staticmethod
    def _file_corpus(corpus_file):
        """The sentences of a ``corpus_file``."""
        from hsw2v.corpora import LineSentence

        return LineSentence(corpus_file)

    @staticmethod
    def _check_corpus(corpus_iterable) -> None:
        """A TypeError unless ``corpus_iterable`` is an iterable of sentences."""
        check_corpus(corpus_iterable)

    def build_vocab(
        self,
        corpus_iterable=None,
        corpus_file=None,
        update=False,
        progress_per=10000,
        keep_raw_vocab=False,
        trim_rule=None,
        **kwargs,
    ):
        """Scan the corpus once, build the vocabulary, the Huffman tree and fresh weights.

        Parameters
        ----------
        corpus_iterable : iterable of list of str, optional
            The sentences (a re-iterable such as a list or :class:`hsw2v.LineSentence`).
        corpus_file : str or os.PathLike, optional
            A local text file in :class:`hsw2v.LineSentence` format, instead of
            `corpus_iterable` (give exactly one of the two).
        update : bool, optional
            Add the new words of the corpus to an existing vocabulary (and grow the tree and
            the weights) instead of replacing it.
        progress_per : int, optional
            Log the scan's progress every this many sentences.
        keep_raw_vocab : bool, optional
            Keep the raw counts (``raw_vocab``) after the vocabulary is built.
        trim_rule : callable, optional
            ``trim_rule(word, count, min_count)`` returning ``hsw2v.vocab.RULE_KEEP``,
            ``RULE_DISCARD`` or ``RULE_DEFAULT``, as in gensim.
        **kwargs
            Passed to :meth:`prepare_vocab` (``min_count``, ``sample``, ``dry_run``).

        Raises
        ------
        TypeError
            If both or neither of `corpus_iterable` and `corpus_file` are given, or the corpus
            is not a sequence of token lists.
        hsw2v.exceptions.EmptyCorpusError
            A ValueError: the corpus is empty, or leaves no word with ``min_count`` or more
            occurrences.
        FileNotFoundError
            If `corpus_file` does not exist.

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> model = Word2Vec(vector_size=8, min_count=1)
        >>> model.build_vocab([["a", "b", "a"]])
        >>> model.wv.index_to_key
        ['a', 'b']
        """
        refuse_while_training(self, "build_vocab()")
        self.scan_vocab(
            corpus_iterable, corpus_file, progress_per=progress_per, trim_rule=trim_rule
        )
        self.prepare_vocab(
            update=update, keep_raw_vocab=keep_raw_vocab, trim_rule=trim_rule, **kwargs
        )
        self.prepare_weights(update=update)

    def build_vocab_from_freq(
        self, word_freq, keep_raw_vocab=False, corpus_count=None, trim_rule=None, update=False
    ):
        """Build the vocabulary from a ``{word: count}`` mapping instead of a corpus.

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> model = Word2Vec(vector_size=8, min_count=1, workers=1)
        >>> model.build_vocab_from_freq({"a": 3, "b": 5, "c": 1})
        >>> model.wv.index_to_key, model.corpus_total_words, model.wv.vectors.shape
        (['b', 'a', 'c'], 9, (3, 8))
        """
        refuse_while_training(self, "build_vocab_from_freq()")
        self.raw_vocab = check_keys(dict(word_freq), "word_freq holds")
        self._pruning = Pruning()
        self._recording = None  # counts from elsewhere: no recording of their corpus
        self.corpus_count = corpus_count or 0
        self.corpus_total_words = int(sum(self.raw_vocab.values()))
        self.prepare_vocab(update=update, keep_raw_vocab=keep_raw_vocab, trim_rule=trim_rule)
        self.prepare_weights(update=update)

    def _count_file(self, path, workers):
        """``(counts, raw words, sentences)`` of a local ``corpus_file`` (``path``, from
        ``file_mode_path``), counted by the workers in their own byte ranges without the GIL
        (:func:`hsw2v.running.file_scan.count_file`); None where the scan reads the corpus in
        Python instead: no local path, or ``max_vocab_size``, whose pruning that count does
        not do."""
        if path is None or self.max_vocab_size:
            return None
        return count_file(path, self.workers if workers is None else int(workers))

    def scan_vocab(
        self, corpus_iterable=None, corpus_file=None, progress_per=10000, workers=None,
        trim_rule=None,
    ):
        """Count the corpus's words (one streaming pass); returns ``(total_words,
        corpus_count)``, the raw words and sentences read, as gensim's.

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> model = Word2Vec(vector_size=8, min_count=1, workers=1)
        >>> model.scan_vocab([["a", "b", "a"]] * 20)
        (60, 20)
        >>> model.raw_vocab, model.corpus_count
        ({'a': 40, 'b': 20}, 20)
        """
        refuse_while_training(self, "scan_vocab()")
        corpus = self._corpus(corpus_iterable, corpus_file)
        started = time.perf_counter()
        path = file_mode_path(corpus_file)
        # a corpus proven unchanged between passes may be recorded (see cache_words)
        identity = corpus_identity(corpus) if self.cache_words > 0 and path is None else None
        self._pruning = Pruning()
        counted = self._count_file(path, workers)
        if counted is not None:
            self.raw_vocab, total_words, corpus_count = counted
            recording = None
        else:
            self.raw_vocab, total_words, corpus_count, recording = scan_counts(
                corpus,
                self.max_vocab_size,
                trim_rule,
                progress_per,
                record_tokens=0 if identity is None else self.cache_words,
                pruning=self._pruning,
            )
        # the scanned token stream, reused by train() on the same, unchanged corpus (see
        # cache_words); the corpus is kept alive so that its identity stays its own
        self._recording = None
        if recording is not None and identity is not None and corpus_identity(corpus) == identity:
            self._recording = (corpus, identity, recording)
        if corpus_count == 0:
            raise EmptyCorpusError("the corpus is empty: it yielded no sentences")
        self.corpus_count = corpus_count
        self.corpus_total_words = total_words
        logger.info("scanned the vocabulary in %.2fs", time.perf_counter() - started)
        return total_words, corpus_count

    def prepare_vocab(
        self,
        update=False,
        keep_raw_vocab=False,
        trim_rule=None,
        min_count=None,
        sample=None,
        dry_run=False,
    ):
        """Apply min_count, max_final_vocab, trim_rule, ordering and subsampling; returns a
        report (a dict), and with ``dry_run=True`` only the report, changing nothing.

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> model = Word2Vec(vector_size=8, min_count=3, workers=1)
        >>> _ = model.scan_vocab([["a", "b", "a", "c", "a"]] * 2)
        >>> report = model.prepare_vocab()
        >>> report["drop_unique"], report["num_retained_words"], model.wv.index_to_key
        (2, 1, ['a'])
        """
        refuse_while_training(self, "prepare_vocab()")
        if update:  # graft the new words onto the trained tree (hsw2v.vocab_update)
            from hsw2v.vocab_update import update_vocabulary

            report = update_vocabulary(self, trim_rule, min_count, sample, dry_run)
            if not dry_run:
                self._finalize_recording()
                if not keep_raw_vocab:
                    self.raw_vocab = None
            return report
        if self.raw_vocab is None:
            raise RuntimeError("call scan_vocab() (or build_vocab()) before prepare_vocab()")
        min_count = self.min_count if min_count is None else min_count
        sample = self.sample if sample is None else sample
        vocab = build_vocabulary(
            self.raw_vocab,
            min_count=min_count,
            sample=sample,
            max_final_vocab=self.max_final_vocab,
            trim_rule=trim_rule,
            sorted_vocab=bool(self.sorted_vocab),
            null_word=bool(self.null_word),
        )
        report = {
            "drop_unique": len(self.raw_vocab) - len(vocab.index_to_key),
            "retain_total": vocab.retained_total,
            "downsample_unique": int((vocab.sample_int < 2**32 - 1).sum()),
            "downsample_total": int(vocab.downsampled_total),
            "num_retained_words": len(vocab.index_to_key),
        }
        if dry_run:
            return report
        if not vocab.index_to_key:
            pruning = self._pruning or Pruning()
            raise EmptyCorpusError(
                f"the vocabulary is empty: {pruning.emptied(min_count, len(self.raw_vocab))}"
            )
        self.min_count = min_count
        self.sample = sample
        self.effective_min_count = vocab.effective_min_count
        self._install_vocabulary(vocab)
        rebuild_lookups(self)  # negative sampling's cum_table (hsw2v.running.objectives)
        logger.info(
            "kept %i unique words (min_count=%i), %i of %i raw words; subsampling leaves about %i",
            len(vocab.index_to_key),
            vocab.effective_min_count,
            vocab.retained_total,
            vocab.retained_total + vocab.dropped_total,
            vocab.downsampled_total,
        )
        self.estimate_memory()  # logs gensim's "estimated required memory" line
        self._finalize_recording()
        if not keep_raw_vocab:
            self.raw_vocab = None
        return report

    def _finalize_recording(self) -> None:
        """Map the scan's token recording (see ``cache_words``) to the vocabulary just built,
        in place; a recording that no longer fits the scanned counts is dropped (training then
        reads the corpus)."""
        if self._recording is None:
            return
        recording = self._recording[2]
        if recording.final or self.raw_vocab is None or len(self.raw_vocab) != recording.n_keys:
            self._recording = None
            return
        key_to_index = self.wv.key_to_index
        to_final = np.fromiter(
            (key_to_index.get(word, -1) for word in self.raw_vocab),
            dtype=np.int32,
            count=recording.n_keys,
        )
        recording.finalize(to_final, self.wv.index_to_key)

    def _install_vocabulary(self, vocab: Vocabulary) -> None:
        wv = self.wv
        wv.index_to_key = list(vocab.index_to_key)
        wv.key_to_index = {key: i for i, key in enumerate(wv.index_to_key)}
        wv.expandos = {
            "count": vocab.counts.astype(np.int64),
            "sample_int": vocab.sample_int.astype(np.uint32),
        }
        if self.tree_type == "callable" and self._tree_builder is None:
            raise ValueError(
                "this model was saved with a callable tree, which is not stored: set "
                "model._tree_builder to the callable before building a new vocabulary"
            )
        tree = word2vec_tree(self._tree_builder or self.tree_type, vocab.counts)
        self._install_tree(tree, semantic_pending=self.tree_type == "semantic")

    # The one writer of ``tree``, ``semantic_pending``, ``_recording`` and ``wv.norms`` among
    # Word2Vec's files: the others (training, loading, conversion, the vocabulary update)
    # call these methods.
    def _install_tree(self, tree, semantic_pending=0) -> None:
        """Make ``tree`` the model's tree (``semantic_pending``: 1 while a semantic tree waits
        for its first training) and expose its codes and paths on ``wv``."""
        self.tree = tree
        self.semantic_pending = int(semantic_pending)
        self._expose_tree()

    def _take_recording(self):
        """The scan's token recording, handed over once (None if there is none): training
        uses it for one pass and reads the corpus after."""
        recorded, self._recording = self._recording, None
        return recorded

    def _weights_changed(self) -> None:
        """Forget ``wv``'s cached vector norms: the vectors were trained or replaced."""
        self.wv.norms = None

    def _expose_tree(self) -> None:
        """Make each word's code and path readable as ``wv.get_vecattr(word, "code"|"point")``
        (as gensim), as views into the tree's flat arrays."""
        n = len(self.wv.index_to_key)
        codes = np.empty(n, dtype=object)
        points = np.empty(n, dtype=object)
        all_codes, all_points = self.tree.codes, self.tree.points  # Tree.code(i), Tree.point(i)
        for i, length in enumerate(self.tree.lengths[:n].tolist()):
            codes[i] = all_codes[i, :length]
            points[i] = all_points[i, :length]
        self.wv.expandos["code"] = codes
        self.wv.expandos["point"] = points

    def make_cum_table(self, domain=2**31 - 1):
        """Build ``cum_table``, the table negative sampling draws its words from (gensim's
        method; see :func:`hsw2v.negative.make_cum_table`).

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> model = Word2Vec(vector_size=8, min_count=1, hs=0, negative=5, ns_exponent=1.0)
        >>> model.build_vocab([["a", "b", "a", "a"]])
        >>> model.cum_table.tolist()
        [1610612735, 2147483647]
        """
        self.cum_table = make_cum_table(self.wv.expandos["count"], self.ns_exponent, domain)

    def prepare_weights(self, update=False):
        """Initialise ``wv.vectors`` uniformly in [-1/d, 1/d) from ``seed`` (as gensim 4) and
        every objective's output matrix at zero (:mod:`hsw2v.running.objectives`): the inner-node
        vectors ``syn1`` (with ``hs=1``; else empty) and the negative-sampling output vectors
        ``syn1neg`` (with ``negative > 0``; else empty).

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> model = Word2Vec(vector_size=8, min_count=1, workers=1)
        >>> model.build_vocab([["a", "b", "a"]] * 20)
        >>> before = model.wv.vectors.copy()
        >>> model.prepare_weights()  # the same seed gives the same vectors
        >>> bool((model.wv.vectors == before).all()), float(abs(model.syn1).sum())
        (True, 0.0)
        """
        refuse_while_training(self, "prepare_weights()")
        if update:  # keep the trained rows; seeded vectors for the new words only
            from hsw2v.vocab_update import grow_weights

            return grow_weights(self)
        n, d = len(self.wv.index_to_key), self.vector_size
        rng = np.random.default_rng(seed=self.seed)
        vectors = rng.random((n, d), dtype=np.float32)
        vectors *= 2.0
        vectors -= 1.0
        vectors /= d
        self.wv.vectors = vectors
        self._weights_changed()
        reset_matrices(self, n)
