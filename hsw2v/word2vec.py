"""Word2Vec with hierarchical softmax: the trainer users create, with gensim 4's API.

It coordinates: vocabulary (:mod:`hsw2v.vocab`), tree (:mod:`hsw2v.huffman`), epochs and
threads (:mod:`hsw2v._train`), kernels (:mod:`hsw2v._inner`), results
(:class:`hsw2v.keyedvectors.KeyedVectors`) and files (:mod:`hsw2v.persist`). It does no
per-token math itself.

Model: Mikolov et al., "Efficient Estimation of Word Representations in Vector Space" (2013)
and "Distributed Representations of Words and Phrases and their Compositionality" (2013),
with hierarchical softmax over a Huffman tree (Morin & Bengio 2005), and negative sampling
(``negative > 0``, alone or beside it, as gensim trains it; :mod:`hsw2v.negative`).
"""

from __future__ import annotations

import errno
import logging
import os
import time
import warnings
from collections.abc import Iterator

import numpy as np

from hsw2v import persist
from hsw2v import progress as _progress
from hsw2v._corpus_file import FileTrainer, Vocab, byte_ranges, count_range
from hsw2v._make_trainer import hot_rows, kernel_variant, make_trainer
from hsw2v._threads import Workers
from hsw2v._train import (
    Job,
    Schedule,
    iter_jobs,
    jobs_from_recording,
    run_epoch,
    run_file_epoch,
    warn_count_mismatch,
)
from hsw2v.corpora import COMPRESSED_SUFFIXES, corpus_identity, file_identity
from hsw2v.corpora import MAX_WORDS_IN_BATCH as LINE_SENTENCE_MAX
from hsw2v.divergence import TrainingDivergedError, count_nonfinite_rows, describe_rows
from hsw2v.exceptions import EmptyCorpusError, WrongFileKindError, class_only_method
from hsw2v.huffman import HuffmanTree
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.negative import make_cum_table
from hsw2v.params import check_word2vec_params
from hsw2v.trees import TREE_KINDS, semantic_tree, word2vec_tree
from hsw2v.vocab import Vocabulary, build_vocabulary, check_corpus, scan_counts

logger = logging.getLogger(__name__)

MAX_WORDS_IN_BATCH = 10000
# With several workers, each job trains a private copy of the HOT_NODES hottest inner nodes
# (the top six levels of the tree, on nearly every path) and adds its change back every
# HOT_SYNC centre words (hsw2v._inner.Trainer; Vuurens et al. 2016), so that threads do not
# fight over those rows' cache lines. Measured on the benchmark corpus with 2 workers
# (benchmarks/RESULTS.md, "Private top nodes"): for skip-gram, 63 nodes synced every 100
# words gives most of the speed of 1,024 synced every 1,000 without their cost in analogy
# accuracy. CBOW walks one path per centre word (skip-gram about six), so the same staleness
# allows a sync every 1,000 centre words, and 255 nodes (eight levels) then measured fastest,
# at the same quality as no private rows ("Private top nodes for CBOW").
HOT_NODES = 63  # skip-gram
HOT_SYNC = 100  # trained centre words between two syncs of the private rows (skip-gram)
HOT_NODES_CBOW = 255
HOT_SYNC_CBOW = 1000
HOT_VISITS = 2**30  # a private row is synced alone after this many visits (centre words)
HOT_VISITS_CBOW = 2**30
HOT_MERGE = "sum"  # "sum": add each job's change back; "mean": add change / workers
GENSIM_NEGATIVE = 5  # gensim's default `negative`


def default_negative(hs, negative):
    """``negative`` as given, or its default when it is None: 0 beside hierarchical softmax
    (hsw2v's default, ``hs=1``), gensim's 5 when ``hs`` is off, so that gensim code writing
    ``Word2Vec(..., hs=0)`` trains negative sampling as it does under gensim.

    >>> default_negative(1, None), default_negative(0, None), default_negative(0, 10)
    (0, 5, 10)
    """
    if negative is not None:
        return negative
    if hs is not None and not hs:
        logger.info(
            "hs=0 and no negative given: training negative sampling with gensim's default "
            "negative=%i",
            GENSIM_NEGATIVE,
        )
        return GENSIM_NEGATIVE
    return 0


_SAVED_PARAMS = (
    "vector_size",
    "alpha",
    "window",
    "min_count",
    "max_vocab_size",
    "sample",
    "seed",
    "workers",
    "min_alpha",
    "sg",
    "hs",
    "negative",
    "ns_exponent",
    "cbow_mean",
    "epochs",
    "null_word",
    "sorted_vocab",
    "batch_words",
    "compute_loss",
    "max_final_vocab",
    "shrink_windows",
    "corpus_count",
    "corpus_total_words",
    "cache_words",
    "comment",
    "train_count",
    "effective_min_count",
    "kernel",
    "tree_type",
    "semantic_pending",
)


class Word2Vec:
    """Train word vectors with hierarchical softmax (skip-gram or CBOW).

    The parameters, defaults and methods are gensim 4.4's ``Word2Vec`` except ``hs=1`` and
    ``negative=0`` by default (hierarchical softmax is what this library is built for). gensim
    code that turns hierarchical softmax off (``hs=0``) without giving ``negative`` trains
    negative sampling with gensim's default ``negative=5``, as it does under gensim.
    Negative sampling (``negative > 0``, ``ns_exponent``; weights ``syn1neg``, draw table
    ``cum_table``) trains as gensim does, alone (``hs=0``) or after each hs step (``hs=1``).
    Beyond gensim:

    Corpora are read as gensim reads them, once for the vocabulary and once per epoch, so an
    iterable that reshuffles in ``__iter__`` trains in a new order every epoch and a list
    changed after ``build_vocab()`` trains with its new content (with gensim's "supplied
    example count ... did not equal expected count" warning when the totals disagree). A
    corpus proven unchanged is read once instead (:func:`hsw2v.corpora.corpus_identity`):
    ``LineSentence``, ``PathLineSentences``, ``Text8Corpus`` and ``corpus_file`` over files
    whose device, inode, size, mtime and ctime have not changed (and were not modified in the
    last two seconds), and any corpus wrapped in :class:`hsw2v.FixedCorpus`, the user's
    promise that every pass yields the same sentences.

    ``cache_words`` (default 100,000,000): the most tokens of such a corpus kept in memory (4
    bytes each). ``build_vocab()`` records the token stream it scans (the only copy ever
    held: the vocabulary maps it to word ids in place and training's jobs are views into it)
    and ``train()`` on the unchanged corpus trains from it; otherwise the first epoch reads
    the corpus and later epochs reuse the ids it produced while the corpus is unchanged. 0
    reads every corpus every epoch. The path walk is chosen, not a parameter: the fastest
    measured (``benchmarks/RESULTS.md``), each an optimisation of one reference step with
    word2vec.c's updates (``"window"``: up to 4 contexts of a skip-gram window walk the
    centre's path together; ``"fused"``: each node's update fused with the next node's dot
    product, for CBOW and with ``negative > 0``). ``kernel`` is deprecated and ignored.

    ``corpus_file``: a plain UTF-8 file with one sentence per line, which the ``workers``
    threads read, tokenise and train by byte ranges without the GIL (``build_vocab`` counts
    it the same way), giving the sentences ``LineSentence`` gives; compressed files and URLs
    are streamed through ``LineSentence`` instead (``docs/corpus-file.md``).

    ``tree`` picks the hierarchical-softmax tree (:mod:`hsw2v.trees`): ``"huffman"``
    (default, word2vec's), ``"balanced"``, ``"semantic"`` (Mnih & Hinton 2008: the first
    ``train()`` runs on the Huffman tree, then the tree is rebuilt by recursive 2-means of the
    learned vectors, the vectors and ``syn1`` are re-initialised as for a new model, and the
    same ``train()`` call trains again over the new tree, so it costs two trainings), or a
    callable ``tree(counts)`` returning a :class:`hsw2v.huffman.HuffmanTree` or
    ``(codes, points, lengths)``.

    Parameters
    ----------
    sentences : iterable of list of str, optional
        The corpus: a re-iterable of sentences, each a list of str tokens (a list of lists,
        :class:`hsw2v.LineSentence`, ...), as in gensim. When given (or ``corpus_file``),
        the constructor builds the vocabulary and trains ``epochs`` epochs.
    corpus_file : str or os.PathLike, optional
        A corpus in ``LineSentence`` format (one sentence per line, tokens separated by
        whitespace), instead of ``sentences``; local plain files are read by the workers
        themselves (see above).
    vector_size : int, default 100
        Dimensionality of the word vectors; >= 1.
    alpha : float, default 0.025
        Initial learning rate; > 0.
    window : int, default 5
        Maximum distance between the current and the predicted word within a sentence; >= 1.
    min_count : int, default 5
        Ignore every word with a total count below this; >= 0.
    max_vocab_size : int, optional
        Limit the number of distinct words held while counting: past it the rarest are
        pruned, as in gensim. None (default): no limit.
    sample : float, default 1e-3
        Threshold above which frequent words are randomly down-sampled (word2vec's formula);
        must be >= 0, and 0 turns down-sampling off. Useful range (0, 1e-3].
    seed : int, default 1
        Seed of the initial vectors and of every job's random stream; with ``workers=1``
        training is bit-for-bit reproducible, whatever ``PYTHONHASHSEED`` is (gensim needs
        ``workers=1`` and a fixed ``PYTHONHASHSEED``).
    workers : int, default 3
        Worker threads training in parallel (without the GIL); >= 1.
    min_alpha : float, default 0.0001
        The learning rate falls linearly to this over all epochs; in [0, ``alpha``].
    sg : {0, 1}, default 0
        1: skip-gram; 0: CBOW.
    hs : {0, 1}, default 1
        1: hierarchical softmax; 0: negative sampling alone (then ``negative`` must be > 0).
        gensim's default is 0.
    negative : int, default 0
        Negative sampling with that many noise words per step (5-20 are usual) when above 0;
        0: none. Must be >= 0, with ``hs`` or ``negative`` on. gensim's default is 5.
    ns_exponent : float, default 0.75
        Exponent of the count in the negative-sampling distribution: 1.0 samples in
        proportion to the counts, 0.0 uniformly, a negative value favours rare words.
    cbow_mean : {0, 1}, default 1
        CBOW only: 1 averages the context vectors, 0 sums them.
    hashfxn : callable, default hash
        Accepted for gensim's signature; unused (the initial vectors come from ``seed``).
    epochs : int, default 5
        Passes over the corpus; >= 0.
    null_word : {0, 1}, default 0
        1 adds gensim's padding word ``"\\0"`` to the vocabulary.
    trim_rule : callable, optional
        ``trim_rule(word, count, min_count)`` returning ``RULE_DISCARD``, ``RULE_KEEP`` or
        ``RULE_DEFAULT`` (from :mod:`hsw2v.vocab`), applied while the vocabulary is built and
        not stored with the model, as in gensim.
    sorted_vocab : {0, 1}, default 1
        1 sorts the vocabulary by descending count before assigning indices; words of equal
        count keep the order in which they were first seen.
    batch_words : int, default 10000
        Target size in words of the jobs passed to the worker threads; >= 1. A longer
        sentence makes a job of its own and is trained whole (gensim cuts sentences at 10,000
        tokens).
    compute_loss : bool, default False
        Tally the training loss, read with :meth:`get_latest_training_loss`: here the exact
        negative log-likelihood of every trained pair, summed in float64.
    callbacks : sequence of CallbackAny2Vec, default ()
        Callbacks run at the start and end of training and of each epoch (gensim's and
        :mod:`hsw2v.callbacks`' both work).
    comment : str, optional
        A free comment kept with the model, as in gensim.
    max_final_vocab : int, optional
        Keep at most this many words, raising the effective ``min_count`` as gensim does.
        None (default): no limit.
    shrink_windows : bool, default True
        True: each centre word's window is drawn uniformly from 1..``window`` (word2vec's
        reduced windows); False: always ``window``.
    cache_words : int, default 100000000
        Beyond gensim; see above. >= 0.
    kernel : None
        Deprecated and ignored (a DeprecationWarning says so); see above.
    tree : {"huffman", "balanced", "semantic"} or callable, default "huffman"
        Beyond gensim: the hierarchical-softmax tree; see above.

    Raises
    ------
    ValueError
        A parameter outside its range (the message names it and the allowed range), or an
        unknown ``kernel`` (deprecated) or ``tree``.
    TypeError
        Both ``sentences`` and ``corpus_file``, or a one-shot iterator (a generator) as
        ``sentences`` when training needs several passes.

    See Also
    --------
    hsw2v.KeyedVectors : the trained vectors, ``model.wv``, and their queries.

    Examples
    --------
    >>> from hsw2v import Word2Vec
    >>> sentences = [["cat", "say", "meow"], ["dog", "say", "woof"]] * 50
    >>> model = Word2Vec(sentences, vector_size=16, min_count=1, workers=1, epochs=2)
    >>> model.wv["cat"].shape
    (16,)
    """

    def __init__(
        self,
        sentences=None,
        corpus_file=None,
        vector_size=100,
        alpha=0.025,
        window=5,
        min_count=5,
        max_vocab_size=None,
        sample=1e-3,
        seed=1,
        workers=3,
        min_alpha=0.0001,
        sg=0,
        hs=1,
        negative=None,
        ns_exponent=0.75,
        cbow_mean=1,
        hashfxn=hash,
        epochs=5,
        null_word=0,
        trim_rule=None,
        sorted_vocab=1,
        batch_words=MAX_WORDS_IN_BATCH,
        compute_loss=False,
        callbacks=(),
        comment=None,
        max_final_vocab=None,
        shrink_windows=True,
        cache_words=100_000_000,
        kernel=None,
        tree="huffman",
    ):
        negative = default_negative(hs, negative)
        _check_params(
            vector_size=vector_size,
            alpha=alpha,
            window=window,
            min_count=min_count,
            max_vocab_size=max_vocab_size,
            sample=sample,
            seed=seed,
            workers=workers,
            min_alpha=min_alpha,
            sg=sg,
            hs=hs,
            negative=negative,
            ns_exponent=ns_exponent,
            cbow_mean=cbow_mean,
            epochs=epochs,
            null_word=null_word,
            sorted_vocab=sorted_vocab,
            batch_words=batch_words,
            compute_loss=compute_loss,
            max_final_vocab=max_final_vocab,
            shrink_windows=shrink_windows,
            cache_words=cache_words,
        )
        self.vector_size = int(vector_size)
        self.alpha = float(alpha)
        self.min_alpha = float(min_alpha)
        self.window = int(window)
        self.min_count = int(min_count)
        self.max_vocab_size = max_vocab_size
        self.sample = float(sample)
        self.seed = int(seed)
        self.workers = int(workers)
        self.sg = int(sg)
        self.hs = int(hs)
        self.negative = int(negative)
        self.ns_exponent = ns_exponent
        self.cbow_mean = int(cbow_mean)
        self.hashfxn = hashfxn  # kept for signature compatibility; vectors come from `seed`
        self.epochs = int(epochs)
        self.null_word = int(null_word)
        self.sorted_vocab = int(sorted_vocab)
        self.batch_words = int(batch_words)
        self.compute_loss = bool(compute_loss)
        self.callbacks = callbacks
        self.comment = comment
        self.max_final_vocab = max_final_vocab
        self.shrink_windows = bool(shrink_windows)
        self.cache_words = int(cache_words)
        if kernel is not None:  # deprecated: the path walk is chosen, not a parameter
            if kernel not in ("auto", "window", "fused", "loop", "blas"):
                raise ValueError(
                    f"kernel must be 'auto', 'window', 'fused', 'loop' or 'blas', got {kernel!r}"
                )
            warnings.warn(
                "Word2Vec(kernel=...) is deprecated and ignored (gensim has no such parameter): "
                "hsw2v takes its fastest path walk, whose results are the reference's; the "
                "parameter will be removed in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
        self.kernel = "auto"  # saved with the model, as files of earlier versions carry it
        if not callable(tree) and tree not in TREE_KINDS:
            raise ValueError(f"tree must be one of {TREE_KINDS} or a callable, got {tree!r}")
        self.tree_type = "callable" if callable(tree) else str(tree)
        self._tree_builder = tree if callable(tree) else None
        self.semantic_pending = 0  # 1 while a semantic tree waits for its first training
        self.corpus_count = 0
        self.corpus_total_words = 0
        self.min_alpha_yet_reached = self.alpha  # as gensim: lowered by each epoch trained
        self.train_count = 0
        self.total_train_time = 0.0
        self.running_training_loss = 0.0
        self.effective_min_count = self.min_count
        self.raw_vocab: dict | None = None
        self._recording = None
        self.tree: HuffmanTree | None = None
        self.wv = KeyedVectors(self.vector_size)
        self.wv.vectors_lockf = _no_lock_factors()
        self.syn1 = np.zeros((0, self.vector_size), dtype=np.float32)
        self.syn1neg = np.zeros((0, self.vector_size), dtype=np.float32)
        self.cum_table = None  # negative sampling's draw table (make_cum_table)

        if sentences is not None or corpus_file is not None:
            corpus = self._corpus(sentences, corpus_file)
            if isinstance(corpus, Iterator) and self.epochs >= 1:
                raise TypeError(
                    "the corpus is a one-shot iterator (e.g. a generator), but training needs "
                    f"{self.epochs + 1} passes (vocabulary + {self.epochs} epochs): pass a "
                    "re-iterable object such as a list or LineSentence"
                )
            self.build_vocab(sentences, corpus_file=corpus_file, trim_rule=trim_rule)
            self.train(
                sentences,
                corpus_file=corpus_file,
                total_examples=self.corpus_count,
                total_words=self.corpus_total_words,
                epochs=self.epochs,
                compute_loss=self.compute_loss,
                callbacks=self.callbacks,
            )

    # ---------------------------------------------------------------- vocabulary
    @staticmethod
    def _corpus(corpus_iterable, corpus_file):
        if corpus_iterable is not None and corpus_file is not None:
            raise TypeError("pass either a corpus iterable or corpus_file, not both")
        if corpus_file is not None:
            from hsw2v.corpora import LineSentence

            _file_mode_path(corpus_file)  # checks that a local file exists
            return LineSentence(corpus_file)
        check_corpus(corpus_iterable)
        return corpus_iterable

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

        Examples
        --------
        >>> model = Word2Vec(vector_size=8, min_count=1)
        >>> model.build_vocab([["a", "b", "a"]])
        >>> model.wv.index_to_key
        ['a', 'b']
        """
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
        >>> model = Word2Vec(vector_size=8, min_count=1, workers=1)
        >>> model.build_vocab_from_freq({"a": 3, "b": 5, "c": 1})
        >>> model.wv.index_to_key, model.corpus_total_words, model.wv.vectors.shape
        (['b', 'a', 'c'], 9, (3, 8))
        """
        self.raw_vocab = dict(word_freq)
        self._recording = None  # counts from elsewhere: no recording of their corpus
        self.corpus_count = corpus_count or 0
        self.corpus_total_words = int(sum(self.raw_vocab.values()))
        self.prepare_vocab(update=update, keep_raw_vocab=keep_raw_vocab, trim_rule=trim_rule)
        self.prepare_weights(update=update)

    def scan_vocab(
        self,
        corpus_iterable=None,
        corpus_file=None,
        progress_per=10000,
        workers=None,
        trim_rule=None,
    ):
        """Count the corpus's words (one streaming pass); returns ``(total_words,
        corpus_count)``, the raw words and sentences read, as gensim's.

        Examples
        --------
        >>> model = Word2Vec(vector_size=8, min_count=1, workers=1)
        >>> model.scan_vocab([["a", "b", "a"]] * 20)
        (60, 20)
        >>> model.raw_vocab, model.corpus_count
        ({'a': 40, 'b': 20}, 20)
        """
        corpus = self._corpus(corpus_iterable, corpus_file)
        started = time.perf_counter()
        path = _file_mode_path(corpus_file)
        # a corpus proven unchanged between passes may be recorded (see cache_words)
        identity = corpus_identity(corpus) if self.cache_words > 0 and path is None else None
        if path is not None and not self.max_vocab_size:
            # the workers count their own byte ranges without the GIL (hsw2v._corpus_file)
            self.raw_vocab, total_words, corpus_count = _count_file(
                path, self.workers if workers is None else int(workers)
            )
            recording = None
        else:
            self.raw_vocab, total_words, corpus_count, recording = scan_counts(
                corpus,
                self.max_vocab_size,
                trim_rule,
                progress_per,
                record_tokens=0 if identity is None else self.cache_words,
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
        >>> model = Word2Vec(vector_size=8, min_count=3, workers=1)
        >>> _ = model.scan_vocab([["a", "b", "a", "c", "a"]] * 2)
        >>> report = model.prepare_vocab()
        >>> report["drop_unique"], report["num_retained_words"], model.wv.index_to_key
        (2, 1, ['a'])
        """
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
            raise EmptyCorpusError(
                f"the vocabulary is empty: no word occurs at least min_count={min_count} "
                f"times in the corpus ({len(self.raw_vocab)} distinct words seen); lower "
                "min_count or give a larger corpus"
            )
        self.min_count = min_count
        self.sample = sample
        self.effective_min_count = vocab.effective_min_count
        self._install_vocabulary(vocab)
        if self.negative:
            self.make_cum_table()
        logger.info(
            "kept %i unique words (min_count=%i), %i of %i raw words; subsampling leaves about %i",
            len(vocab.index_to_key),
            vocab.effective_min_count,
            vocab.retained_total,
            vocab.retained_total + vocab.dropped_total,
            vocab.downsampled_total,
        )
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
        self.tree = word2vec_tree(self._tree_builder or self.tree_type, vocab.counts)
        self.semantic_pending = int(self.tree_type == "semantic")
        self._expose_tree()

    def _expose_tree(self) -> None:
        """Make each word's code and path readable as ``wv.get_vecattr(word, "code"|"point")``
        (as gensim), as views into the tree's flat arrays."""
        n = len(self.wv.index_to_key)
        codes = np.empty(n, dtype=object)
        points = np.empty(n, dtype=object)
        for i in range(n):
            codes[i] = self.tree.code(i)
            points[i] = self.tree.point(i)
        self.wv.expandos["code"] = codes
        self.wv.expandos["point"] = points

    def make_cum_table(self, domain=2**31 - 1):
        """Build ``cum_table``, the table negative sampling draws its words from (gensim's
        method; see :func:`hsw2v.negative.make_cum_table`).

        Examples
        --------
        >>> model = Word2Vec(vector_size=8, min_count=1, hs=0, negative=5, ns_exponent=1.0)
        >>> model.build_vocab([["a", "b", "a", "a"]])
        >>> model.cum_table.tolist()
        [1610612735, 2147483647]
        """
        self.cum_table = make_cum_table(self.wv.expandos["count"], self.ns_exponent, domain)

    def prepare_weights(self, update=False):
        """Initialise ``wv.vectors`` uniformly in [-1/d, 1/d) from ``seed`` (as gensim 4), the
        inner-node vectors ``syn1`` (with ``hs=1``; else empty) and the negative-sampling
        output vectors ``syn1neg`` (with ``negative > 0``; else empty) at zero.

        Examples
        --------
        >>> model = Word2Vec(vector_size=8, min_count=1, workers=1)
        >>> model.build_vocab([["a", "b", "a"]] * 20)
        >>> before = model.wv.vectors.copy()
        >>> model.prepare_weights()  # the same seed gives the same vectors
        >>> bool((model.wv.vectors == before).all()), float(abs(model.syn1).sum())
        (True, 0.0)
        """
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
        self.wv.norms = None
        self.syn1 = np.zeros((n if self.hs else 0, d), dtype=np.float32)
        self.syn1neg = np.zeros((n if self.negative else 0, d), dtype=np.float32)

    # ---------------------------------------------------------------- training
    def train(
        self,
        corpus_iterable=None,
        corpus_file=None,
        total_examples=None,
        total_words=None,
        epochs=None,
        start_alpha=None,
        end_alpha=None,
        word_count=0,
        queue_factor=2,
        report_delay=1.0,
        compute_loss=False,
        callbacks=(),
        progress=False,
        **kwargs,
    ):
        """Train over the corpus; returns ``(trained_words, raw_words)`` where trained words
        are the tokens left after subsampling, summed over epochs (gensim's convention).

        As in gensim, ``epochs`` and one of ``total_examples`` / ``total_words`` are
        required, so that the learning rate can decay linearly over the whole run.

        Progress is logged (``logging`` at INFO) every ``report_delay`` seconds, as gensim
        does. ``progress=True`` also draws a tqdm bar (``pip install hsw2v[progress]``);
        any callable is instead called with a :class:`hsw2v._train.Progress` a few times a
        second, in the calling thread. After each epoch, ``min_alpha_yet_reached`` holds the
        learning rate reached and ``latest_epoch_report`` the epoch's
        :class:`hsw2v._train.EpochReport` (see :class:`hsw2v.callbacks.TrainingHistory`).

        Examples
        --------
        >>> sentences = [["a", "b", "a"]] * 20
        >>> model = Word2Vec(vector_size=8, min_count=1, workers=1, sample=0)
        >>> model.build_vocab(sentences)
        >>> model.train(sentences, total_examples=model.corpus_count, epochs=2)
        (120, 120)
        """
        corpus = self._corpus(corpus_iterable, corpus_file)
        if self.tree is None or not len(self.wv.index_to_key):
            raise RuntimeError("build the vocabulary first: call build_vocab(corpus)")
        if epochs is None:
            raise ValueError("you must specify an explicit epochs count, e.g. epochs=model.epochs")
        if not total_examples and not total_words:
            raise ValueError(
                "you must specify either total_examples or total_words, for proper learning "
                "rate decay; usually total_examples=model.corpus_count"
            )
        epochs = int(epochs)
        if epochs < 1:
            raise ValueError(f"epochs must be >= 1, got {epochs}")
        if isinstance(corpus, Iterator) and epochs > 1:
            raise TypeError(
                f"the corpus is a one-shot iterator (e.g. a generator) but {epochs} epochs "
                "need as many passes: pass a re-iterable object such as a list or LineSentence"
            )
        if self.hs and self.negative:
            logger.warning(  # gensim's wording, which users grep for
                "Both hierarchical softmax and negative sampling are activated. "
                "This is probably a mistake. You should set either 'hs=0' "
                "or 'negative=0' to disable one of them. "
            )
        self._check_finite_weights()
        # As gensim's train(): the call's settings become the model's, and only the callbacks
        # passed to this call are called (the constructor passes its own).
        self.alpha = float(start_alpha or self.alpha)
        self.min_alpha = float(end_alpha or self.min_alpha)
        if self.alpha > getattr(self, "min_alpha_yet_reached", self.alpha):
            logger.warning("Effective 'alpha' higher than previous training cycles")  # gensim's
        start_alpha, end_alpha = self.alpha, self.min_alpha
        self.epochs = epochs
        self.compute_loss = bool(compute_loss)
        callbacks = tuple(callbacks or ())
        schedule = Schedule(
            start_alpha,
            end_alpha,
            epochs,
            int(total_words) if total_words else int(total_examples),
            by_words=bool(total_words),
        )
        trainer = make_trainer(self)
        self.running_training_loss = 0.0
        self.wv.norms = None
        trained = raw = 0
        path = _file_mode_path(corpus_file)
        files = _FilePasses(self, path, trainer, schedule) if path is not None else None
        # Epochs read the corpus, as gensim's do, unless it is proven unchanged since the
        # ids kept in memory were read (hsw2v.corpora.corpus_identity; see cache_words).
        cache = _JobCache(self.cache_words)
        recorded, self._recording = self._recording, None  # used once: later calls read
        if (
            files is None
            and recorded is not None
            and recorded[1] == self._identity(corpus)
            and recorded[2].matches(self.wv.index_to_key)
        ):
            cache.jobs = jobs_from_recording(recorded[2], self.batch_words)
            cache.identity, cache.complete = recorded[1], True
        del recorded
        on_progress = _progress.resolve(progress)
        started = time.perf_counter()
        for callback in callbacks:
            callback.on_train_begin(self)
        try:
            for epoch in range(epochs):
                for callback in callbacks:
                    callback.on_epoch_begin(self)
                on_job = None
                if files is not None:
                    file_trainer, ranges, from_memory = files.for_epoch(epoch)
                    report = run_file_epoch(
                        file_trainer,
                        ranges,
                        epoch=epoch,
                        schedule=schedule,
                        report_delay=report_delay,
                        on_progress=on_progress,
                    )
                else:
                    from_memory = cache.complete and cache.identity == self._identity(corpus)
                    if from_memory:
                        jobs = cache.jobs
                    else:
                        cache.reset()
                        cache.identity = self._identity(corpus)  # taken before the read
                        jobs = iter_jobs(corpus, self.wv.key_to_index, self.batch_words)
                        on_job = cache.add if cache.identity is not None else None
                    report = run_epoch(
                        trainer,
                        jobs,
                        epoch=epoch,
                        workers=self.workers,
                        schedule=schedule,
                        seed=self.seed,
                        report_delay=report_delay,
                        on_job=on_job,
                        on_progress=on_progress,
                    )
                report.from_memory = from_memory
                self.min_alpha_yet_reached = schedule.alpha(epoch, schedule.total)
                self.latest_epoch_report = report
                if on_job is not None:
                    cache.finish()
                trained += report.trained_words
                raw += report.raw_words
                self.running_training_loss += report.loss
                _log_epoch_end(
                    epoch,
                    report,
                    None if files is not None else (total_examples, total_words),
                )
                if report.raw_words == 0:
                    raise EmptyCorpusError("the corpus yielded no sentences during training")
                for callback in callbacks:
                    callback.on_epoch_end(self)
        except TrainingDivergedError as exc:
            raise self._diverged(exc.epoch, epochs) from None
        finally:
            self.total_train_time += time.perf_counter() - started
            self.wv.norms = None
            if hasattr(on_progress, "close"):
                on_progress.close()
        self.train_count += 1  # train() calls, as gensim counts them
        for callback in callbacks:
            callback.on_train_end(self)
        if self.semantic_pending and len(self.wv.index_to_key) > 1:
            # Second pass of tree="semantic": a new tree from the learned vectors, fresh
            # weights over it, and the same training again (see the class docstring).
            self.tree = semantic_tree(self.wv.vectors, seed=self.seed)
            self.semantic_pending = 0
            self._expose_tree()
            self.prepare_weights()
            self.min_alpha_yet_reached = self.alpha  # fresh weights: a fresh schedule
            more = self.train(
                corpus_iterable,
                corpus_file,
                total_examples,
                total_words,
                epochs,
                start_alpha,
                end_alpha,
                word_count,
                queue_factor,
                report_delay,
                compute_loss,
                callbacks,
                progress,
                **kwargs,
            )
            return trained + more[0], raw + more[1]
        return trained, raw

    def _identity(self, corpus):
        """The corpus's identity when its ids may be kept between passes (see cache_words)."""
        return corpus_identity(corpus) if self.cache_words > 0 else None

    def _hot_rows(self):
        """The inner nodes each job trains a private copy of (see ``HOT_NODES``): the most
        visited ones, none with one worker (:func:`hsw2v._make_trainer.hot_rows`)."""
        return hot_rows(self, self.workers)

    def _nonfinite_rows(self) -> dict:
        return count_nonfinite_rows(
            {
                "wv.vectors": self.wv.vectors,
                "syn1": self.syn1 if self.hs else None,
                "syn1neg": self.syn1neg if self.negative else None,
            }
        )

    def _check_finite_weights(self) -> None:
        """Refuse to train weights that already hold NaN or inf (one pass over them)."""
        rows = self._nonfinite_rows()
        if any(rows.values()):
            raise ValueError(
                "the model's weights hold NaN or infinite values before training "
                f"(rows: {describe_rows(rows)}), e.g. from a model file or set by hand: "
                "fix those rows, or call model.prepare_weights() to start all weights afresh"
            )

    def _diverged(self, epoch: int, epochs: int) -> TrainingDivergedError:
        """The error for training that met non-finite weights (docs/robustness.md)."""
        rows = self._nonfinite_rows()
        return TrainingDivergedError(
            f"training diverged in epoch {epoch + 1} of {epochs}: the weights became NaN or "
            f"infinite at alpha={self.alpha:g}. Lower alpha: call model.prepare_weights() "
            f"and train again with e.g. start_alpha={self.alpha / 10:g} (or build a new "
            "model with that alpha). Every thread stopped after its current job; rows "
            f"holding NaN or inf: {describe_rows(rows)}",
            nonfinite_rows=rows,
            epoch=epoch,
        )

    def _kernel_variant(self) -> str:
        return kernel_variant(self)

    def get_latest_training_loss(self) -> float:
        """The summed -log-likelihood of all (context, path) pairs trained by the latest
        ``train()`` call with ``compute_loss=True``, accumulated in float64 per job (0.0
        without it).

        Examples
        --------
        >>> sentences = [["a", "b", "a"]] * 20
        >>> model = Word2Vec(sentences, vector_size=8, min_count=1, workers=1, epochs=1,
        ...                  sample=0, compute_loss=True)
        >>> bool(model.get_latest_training_loss() > 0)
        True
        """
        return self.running_training_loss

    # ---------------------------------------------------------------- gensim utilities
    def reset_from(self, other_model):
        """Share ``other_model``'s vocabulary (keys, per-key attributes, tree, corpus count)
        and start fresh weights from this model's ``seed``, as gensim's ``reset_from``. As in
        gensim, the two models then share those structures: neither should grow its
        vocabulary afterwards.

        Examples
        --------
        >>> sentences = [["a", "b", "a"]] * 20
        >>> first = Word2Vec(sentences, vector_size=8, min_count=1, workers=1, epochs=1)
        >>> second = Word2Vec(vector_size=4, min_count=1, workers=1)
        >>> second.reset_from(first)
        >>> second.wv.index_to_key, second.wv.vectors.shape, second.corpus_count
        (['a', 'b'], (2, 4), 20)
        """
        self.wv = KeyedVectors(self.vector_size)
        self.wv.vectors_lockf = _no_lock_factors()
        self.wv.index_to_key = other_model.wv.index_to_key
        self.wv.key_to_index = other_model.wv.key_to_index
        self.wv.expandos = other_model.wv.expandos
        self.tree = other_model.tree
        self.corpus_count = other_model.corpus_count
        self.prepare_weights()

    def estimate_memory(self, vocab_size=None, report=None):
        """gensim's estimate of the memory a model of ``vocab_size`` words (default: the
        current vocabulary) needs, in bytes: ``{'vocab', 'vectors', 'syn1', 'total'}`` (and
        ``'syn1neg'`` with negative sampling). The formula is gensim's, so the numbers match
        gensim's for the same settings: 700 bytes a word for the vocabulary under hs (500
        without), ``4 * vector_size`` a word for each weight matrix. The weight matrices are
        exactly hsw2v's sizes; hsw2v's vocabulary really takes ``16 + 5 * L`` bytes a word
        of flat arrays (count, sampling threshold, path length, and code bits and points
        padded to the longest path ``L``), plus a NumPy view per word for each of
        ``get_vecattr(w, "code" | "point")`` and Python's dict and list entries for the keys.

        Examples
        --------
        >>> model = Word2Vec(vector_size=100, workers=1)
        >>> model.estimate_memory(vocab_size=1000)
        {'vocab': 700000, 'vectors': 400000, 'syn1': 400000, 'total': 1500000}
        """
        vocab_size = vocab_size or len(self.wv)
        report = report or {}
        report["vocab"] = vocab_size * (700 if self.hs else 500)
        report["vectors"] = vocab_size * self.vector_size * np.dtype(np.float32).itemsize
        if self.hs:
            report["syn1"] = vocab_size * self.vector_size * np.dtype(np.float32).itemsize
        if self.negative:
            report["syn1neg"] = vocab_size * self.vector_size * np.dtype(np.float32).itemsize
        report["total"] = sum(report.values())
        logger.info(
            "estimated required memory for %i words and %i dimensions: %i bytes",
            vocab_size,
            self.vector_size,
            report["total"],
        )
        return report

    def init_sims(self, replace=False):
        """Deprecated, as in gensim 4: norms are computed when needed. Warns, then
        ``wv.init_sims(replace)`` (``replace=True`` unit-normalises the vectors in place).

        Examples
        --------
        >>> import warnings
        >>> model = Word2Vec([["a", "b"]] * 10, vector_size=4, min_count=1, workers=1, epochs=1)
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     model.init_sims()
        >>> caught[0].category.__name__, model.wv.norms.shape
        ('DeprecationWarning', (2,))
        """
        warnings.warn(
            "init_sims() is obsolete: norms are computed when needed. To refresh them after "
            "changing vectors by hand call wv.fill_norms(force=True); for unit vectors use "
            "wv.get_vector(key, norm=True) or wv.get_normed_vectors()",
            DeprecationWarning,
            stacklevel=2,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            self.wv.init_sims(replace=replace)

    # ---------------------------------------------------------------- queries and gensim
    def score(
        self, sentences, total_sentences=int(1e6), chunksize=100, queue_factor=2, report_delay=1
    ):
        """Log-probability of each sentence (float32 array), exact; see
        :func:`hsw2v.scoring.score_sentences`.

        Examples
        --------
        >>> model = Word2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1,
        ...                  epochs=1)
        >>> scores = model.score([["a", "b"], ["b", "a", "a"]])
        >>> scores.shape, scores.dtype.name, bool((scores < 0).all())
        ((2,), 'float32', True)
        """
        from hsw2v.scoring import score_sentences

        if len(self.wv.index_to_key) and not self.hs:
            raise RuntimeError(
                "score() needs the hierarchical-softmax output layer: this model was trained "
                "with hs=0 (negative sampling only), which defines no sentence probability; "
                "train with hs=1 to score sentences"
            )
        args = (total_sentences, chunksize, self.workers, report_delay, queue_factor)
        return score_sentences(self, sentences, *args)

    def predict_output_word(self, context_words_list, topn=10):
        """The ``topn`` most probable centre words, ``[(word, probability), ...]``: for a
        model with ``hs=1``, exact under the tree (:func:`hsw2v.scoring.predict_output_word`);
        for ``hs=0, negative > 0``, gensim's softmax over ``syn1neg``
        (:func:`hsw2v.negative.predict_output_word`).

        Examples
        --------
        >>> model = Word2Vec([["a", "b", "c"]] * 20, vector_size=8, min_count=1, workers=1,
        ...                  epochs=1)
        >>> pairs = model.predict_output_word(["a", "c"], topn=None)
        >>> sorted(word for word, _ in pairs), round(sum(p for _, p in pairs), 6)
        (['a', 'b', 'c'], 1.0)
        >>> len(model.predict_output_word(["a", "c"], topn=2))
        2
        """
        if not self.hs:  # negative sampling only: gensim's softmax over syn1neg
            from hsw2v.negative import predict_output_word as predict_ns

            return predict_ns(self, context_words_list, topn)
        from hsw2v.scoring import predict_output_word

        return predict_output_word(self, context_words_list, topn)

    def to_gensim(self):
        """An equal ``gensim.models.Word2Vec``; see :func:`hsw2v.gensim_compat.to_gensim`.

        Examples
        --------
        >>> model = Word2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1,
        ...                  epochs=1)
        >>> g = model.to_gensim()
        >>> type(g).__module__, g.wv.index_to_key, bool((g.syn1 == model.syn1).all())
        ('gensim.models.word2vec', ['a', 'b'], True)
        """
        from hsw2v.gensim_compat import to_gensim

        return to_gensim(self)

    @classmethod
    def from_gensim(cls, gensim_model):
        """An hsw2v model equal to a gensim hs model; see :func:`hsw2v.gensim_compat.from_gensim`.

        Examples
        --------
        >>> from gensim.models import Word2Vec as GensimWord2Vec
        >>> g = GensimWord2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1,
        ...                    epochs=1, hs=1, negative=0)
        >>> model = Word2Vec.from_gensim(g)
        >>> type(model).__name__, model.wv.index_to_key, bool((model.syn1 == g.syn1).all())
        ('Word2Vec', ['a', 'b'], True)
        """
        from hsw2v.gensim_compat import from_gensim

        return from_gensim(gensim_model, cls=cls)

    # ---------------------------------------------------------------- persistence
    def save(
        self,
        fname,
        separately=None,
        sep_limit=10 * 1024**2,
        ignore=frozenset(),
        pickle_protocol=4,
    ):
        """Save the whole model (continues training after :meth:`load`) in the native,
        pickle-free format; the write is atomic.

        gensim's ``save()`` options are accepted, and what is done with each is logged
        (:func:`hsw2v.gensim_compat.explain_save_options`): every array is always stored
        memory-mappable (``separately``, ``sep_limit``), the attributes a model needs are
        stored whatever ``ignore`` says (with a warning), and no pickle is written
        (``pickle_protocol``).

        Examples
        --------
        >>> import tempfile, os
        >>> model = Word2Vec([["a", "b"]] * 10, vector_size=4, min_count=1, epochs=1)
        >>> path = os.path.join(tempfile.mkdtemp(), "m.hsw2v")
        >>> model.save(path)
        >>> Word2Vec.load(path).wv.index_to_key
        ['a', 'b']
        """
        if self.tree is None:
            raise RuntimeError("nothing to save: build the vocabulary first")
        from hsw2v.gensim_compat import explain_save_options

        stored = ("wv", "syn1", "syn1neg", "tree", *_SAVED_PARAMS)
        explain_save_options(separately, sep_limit, ignore, pickle_protocol, stored)
        meta = {name: getattr(self, name) for name in _SAVED_PARAMS}
        meta["running_training_loss"] = self.running_training_loss
        meta["total_train_time"] = self.total_train_time
        meta["index_to_key"] = self.wv.index_to_key
        arrays = {
            "vectors": self.wv.vectors,
            "syn1": self.syn1,
            **({"syn1neg": self.syn1neg} if self.negative else {}),
            "count": np.asarray(self.wv.expandos["count"]),
            "sample_int": np.asarray(self.wv.expandos["sample_int"]),
            "codes": self.tree.codes,
            "points": self.tree.points,
            "lengths": self.tree.lengths,
            "vectors_lockf": _lock_factors(getattr(self.wv, "vectors_lockf", None), fname),
        }
        persist.save_bundle(fname, "Word2Vec", meta, arrays)

    @class_only_method
    def load(cls, fname, mmap=None):
        """Load a model written by :meth:`save`; ``mmap='r'`` maps its arrays read-only.

        As gensim's, it is called on the class (``model = Word2Vec.load(path)``); called on an
        instance it raises :class:`hsw2v.exceptions.LoadOnInstanceError` (an AttributeError,
        as gensim's). A file of another kind (e.g. ``wv.save()``'s KeyedVectors) raises
        :class:`hsw2v.exceptions.WrongFileKindError` (a ValueError and an AttributeError); a
        gensim pickle raises a ValueError naming the ways to convert it
        (:func:`hsw2v.gensim_compat.load_gensim_pickle`).

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "m.hsw2v")
        >>> Word2Vec([["a", "b"]] * 10, vector_size=4, min_count=1, workers=1, epochs=1).save(path)
        >>> model = Word2Vec.load(path, mmap="r")
        >>> model.wv.index_to_key, model.wv.vectors.shape, model.wv.vectors.flags.writeable
        (['a', 'b'], (2, 4), False)
        """
        try:
            meta, arrays = persist.load_bundle(fname, mmap=mmap, kind="Word2Vec")
        except WrongFileKindError:
            raise
        except ValueError as exc:
            from hsw2v.gensim_compat import not_a_bundle_error

            error = not_a_bundle_error(exc, fname, cls.__name__)
            if error is exc:
                raise
            raise error from None
        persist.check_word2vec_bundle(fname, meta, arrays)
        model = cls.__new__(cls)
        defaults = cls(workers=1)
        model.__dict__.update(defaults.__dict__)
        for name in _SAVED_PARAMS:
            if name in meta:
                setattr(model, name, meta[name])
        model.min_alpha_yet_reached = model.min_alpha if model.train_count else model.alpha
        model.running_training_loss = meta.get("running_training_loss", 0.0)
        model.total_train_time = meta.get("total_train_time", 0.0)
        keys = meta["index_to_key"]
        model.wv = KeyedVectors(model.vector_size)
        saved_lockf = arrays.get("vectors_lockf")  # files of earlier versions have none
        model.wv.vectors_lockf = (
            _no_lock_factors() if saved_lockf is None else _lock_factors(saved_lockf, fname)
        )
        model.wv.index_to_key = list(keys)
        model.wv.key_to_index = {key: i for i, key in enumerate(keys)}
        model.wv.vectors = arrays["vectors"]
        model.wv.expandos = {"count": arrays["count"], "sample_int": arrays["sample_int"]}
        model.syn1 = arrays.get("syn1", np.zeros((0, model.vector_size), np.float32))
        model.syn1neg = arrays.get("syn1neg", np.zeros((0, model.vector_size), np.float32))
        model.tree = HuffmanTree(
            codes=arrays["codes"], points=arrays["points"], lengths=arrays["lengths"]
        )
        n = len(keys)
        d = model.vector_size
        if not (
            model.wv.vectors.shape == (n, d)
            and model.syn1.shape == (n if model.hs else 0, d)
            and model.syn1neg.shape == (n if model.negative else 0, d)
            and len(model.tree.lengths) == n
        ):
            raise ValueError(f"{fname}: the model's arrays disagree with its vocabulary of {n}")
        model._expose_tree()
        model.cum_table = None
        if model.negative:
            try:
                model.make_cum_table()
            except ValueError as exc:
                raise ValueError(f"{fname}: the negative-sampling draw table: {exc}") from None
        return model

    def __str__(self):
        return (
            f"{type(self).__name__}<vocab={len(self.wv.index_to_key)}, "
            f"vector_size={self.vector_size}, alpha={self.alpha}>"
        )


def _check_params(**values) -> None:
    """Check constructor parameters against the one table (:mod:`hsw2v.params`): ValueError
    naming the parameter and its range, before anything is built."""
    check_word2vec_params(values)


def _log_epoch_end(epoch: int, report, supplied) -> None:
    """gensim's end-of-epoch log line, and its warnings when the corpus read differs from the
    ``(total_examples, total_words)`` supplied (None in corpus_file mode, which reads exact
    byte ranges, where gensim does not warn either). The wording is gensim 4.4's, which users
    grep for; epochs count from 1 as in hsw2v's progress lines."""
    logger.info(
        "EPOCH %i: training on %i raw words (%i effective words) took %.1fs, %.0f effective "
        "words/s",
        epoch + 1,
        report.raw_words,
        report.trained_words,
        report.seconds,
        report.trained_words / max(report.seconds, 1e-9),
    )
    if supplied is not None:
        warn_count_mismatch(epoch, report, *supplied)


def _no_lock_factors() -> np.ndarray:
    """gensim's default ``wv.vectors_lockf``: one factor, 1.0, for every word (train all rows
    fully). Set it to one float32 factor per word (or one for all) to scale each word's
    input-vector updates; 0 freezes a word (design note H of :mod:`hsw2v._inner`)."""
    return np.ones(1, dtype=np.float32)


def _lock_factors(lockf, fname) -> np.ndarray:
    """``wv.vectors_lockf`` as it is saved and loaded: a writable float32 copy of one or more
    finite factors (gensim's default, one factor of 1.0, when there is none); a ValueError
    naming the file otherwise."""
    if lockf is None:
        return _no_lock_factors()
    factors = np.array(lockf, dtype=np.float32).reshape(-1)
    if factors.size < 1 or not np.isfinite(factors).all():
        raise ValueError(
            f"{fname!r}: vectors_lockf must hold at least one factor, all finite "
            f"(got {factors.size} factors)"
        )
    return factors


def _file_mode_path(corpus_file) -> str | None:
    """The path of a ``corpus_file`` the workers can read by byte ranges themselves, or None
    when it must be streamed through :class:`hsw2v.corpora.LineSentence` instead (compressed
    files, which cannot be split by bytes, and URLs). A local path that does not exist or is
    a directory is an error."""
    if corpus_file is None:
        return None
    if not isinstance(corpus_file, (str, os.PathLike)):
        raise TypeError(
            f"corpus_file must be a path (str or os.PathLike), got {type(corpus_file).__name__}"
        )
    path = os.fspath(corpus_file)
    if "://" in path:
        return None
    if os.path.isdir(path):
        raise IsADirectoryError(
            errno.EISDIR,
            "corpus_file is a directory; it must be one LineSentence file (for a directory "
            "of files, pass corpus_iterable=PathLineSentences(directory))",
            path,
        )
    if not os.path.isfile(path):
        raise FileNotFoundError(
            errno.ENOENT, "corpus_file does not exist (or is not a regular file)", path
        )
    if path.lower().endswith(COMPRESSED_SUFFIXES):
        return None
    return path


def _count_file(path: str, workers: int) -> tuple[dict, int, int]:
    """Counts, raw words and sentences of a corpus file, as LineSentence would give them: one
    thread per byte range, merged in file order (so first-seen order is the file's)."""
    ranges = byte_ranges(os.path.getsize(path), max(1, workers))
    results: list = [None] * len(ranges)
    stop = np.zeros(1, dtype=np.int64)  # polled by every range between lines

    def count(k: int, start: int, end: int) -> None:
        results[k] = count_range(path, start, end, LINE_SENTENCE_MAX, stop)

    def halt() -> None:
        stop[0] = 1

    # On an error or Ctrl-C every range stops; leaving the block waits for them all.
    with Workers(halt) as pool:
        for k, (start, end) in enumerate(ranges):
            pool.start(count, k, start, end, name=f"hsw2v-scan-{k}")
    counts: dict = {}
    total_words = sentences = 0
    for part, raw, n in results:
        for word, c in part.items():
            counts[word] = counts.get(word, 0) + c
        total_words += raw
        sentences += n
    logger.info(
        "collected %i word types from a corpus of %i raw words and %i sentences",
        len(counts),
        total_words,
        sentences,
    )
    return counts, total_words, sentences


class _FilePasses:
    """The ``FileTrainer`` and byte ranges of each epoch of a ``corpus_file``. Its workers keep
    the ids they read for later epochs (within ``cache_words``) only while the file keeps the
    identity it had when they read it (:func:`hsw2v.corpora.file_identity`: device, inode,
    size, mtime and ctime); a changed file, or one too recently modified to tell, is read
    again, split into ranges of its current size."""

    def __init__(self, model, path: str, trainer, schedule: Schedule):
        self.model, self.path, self.trainer, self.schedule = model, path, trainer, schedule
        self.vocab = Vocab(model.wv.key_to_index)
        self.file_trainer = None
        self.identity = None

    def _new_file_trainer(self, cache_words: int):
        model, schedule = self.model, self.schedule
        return FileTrainer(
            self.path,
            self.trainer,
            self.vocab,
            model.workers,
            model.batch_words,
            LINE_SENTENCE_MAX,  # LineSentence's chunks of a long line
            schedule.start_alpha,
            schedule.end_alpha,
            schedule.epochs,
            schedule.total,
            schedule.by_words,
            model.seed,
            cache_words,
        )

    def for_epoch(self, epoch: int):
        """``(file_trainer, ranges, from_memory)`` for this epoch."""
        identity = file_identity(self.path) if self.model.cache_words > 0 else None
        if self.file_trainer is not None and identity is not None and identity == self.identity:
            return self.file_trainer, self.ranges, self.file_trainer.replaying()
        if self.file_trainer is None or self.identity is not None:
            # first epoch, or ids kept from a file that has changed since: start afresh
            self.file_trainer = self._new_file_trainer(
                self.model.cache_words if identity is not None else 0
            )
        self.identity = identity  # taken before the read
        self.ranges = byte_ranges(os.path.getsize(self.path), self.model.workers)
        return self.file_trainer, self.ranges, False


class _JobCache:
    """The id-encoded jobs of one corpus pass, kept while they fit in ``limit`` tokens, with
    the corpus identity taken before that pass (:func:`hsw2v.corpora.corpus_identity`)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.identity = None
        self.reset()

    def reset(self) -> None:
        self.jobs: list[Job] = []
        self.tokens = 0
        self.overflow = self.limit <= 0
        self.complete = False

    def add(self, job: Job) -> None:
        if self.overflow:
            return
        self.tokens += len(job.ids)
        if self.tokens > self.limit:
            self.overflow = True
            self.jobs = []
        else:
            self.jobs.append(job)

    def finish(self) -> None:
        self.complete = not self.overflow and bool(self.jobs)
