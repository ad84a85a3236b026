"""Word2Vec with hierarchical softmax: the trainer users create, with gensim 4's API.

It coordinates, in files of one job each: the parameters (:mod:`hsw2v.running.params`, the
one table), vocabulary building (:mod:`hsw2v.word2vec._vocab` over :mod:`hsw2v.vocab` and
:mod:`hsw2v.trees`), the training driver and its record (:mod:`hsw2v.word2vec._train` over
:mod:`hsw2v.running.passes`, :mod:`hsw2v.running.epochs` and the kernels), the probability
queries (:mod:`hsw2v.word2vec._query`), results (:class:`hsw2v.keyedvectors.KeyedVectors`)
and its file schema (:mod:`hsw2v.word2vec._schema` over :mod:`hsw2v.persist`). It does no
per-token math itself.

Model: Mikolov et al., "Efficient Estimation of Word Representations in Vector Space" (2013)
and "Distributed Representations of Words and Phrases and their Compositionality" (2013),
with hierarchical softmax over a Huffman tree (Morin & Bengio 2005), and negative sampling
(``negative > 0``, alone or beside it, as gensim trains it; :mod:`hsw2v.negative`).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator

import numpy as np

from hsw2v._gensim.convert import from_gensim, to_gensim
from hsw2v._guard import refuse_while_training
from hsw2v.exceptions import class_only_method
from hsw2v.huffman import Tree
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.running.objectives import active, reset_matrices, resolve_hs_negative
from hsw2v.running.params import ARGUMENTS, KEPT, SAVED, check_word2vec_params
from hsw2v.trees import TREE_KINDS
from hsw2v.word2vec._query import QueryMixin
from hsw2v.word2vec._schema import load_model, no_lock_factors, save_model
from hsw2v.word2vec._train import TrainingMixin
from hsw2v.word2vec._vocab import VocabularyMixin

logger = logging.getLogger(__name__)

MAX_WORDS_IN_BATCH = 10000


_SAVED_PARAMS = SAVED  # what a model file holds: the table's (hsw2v.running.params)


class Word2Vec(VocabularyMixin, TrainingMixin, QueryMixin):
    """Train word vectors with hierarchical softmax (skip-gram or CBOW).

    The parameters, defaults and methods are gensim 4.4's ``Word2Vec`` except the objective
    when neither ``hs`` nor ``negative`` is given: hierarchical softmax alone (``hs=1,
    negative=0``; it is what this library is built for), where gensim trains negative
    sampling (``hs=0, negative=5``). Naming one of the two gives the other gensim's default,
    so gensim code trains what it trains under gensim: ``hs=1`` alone trains hierarchical
    softmax and negative sampling with ``negative=5``, ``negative=10`` (or ``hs=0``) alone
    negative sampling without hierarchical softmax. Negative sampling (``negative > 0``,
    ``ns_exponent``; weights ``syn1neg``, draw table ``cum_table``) trains as gensim does,
    alone (``hs=0``) or after each hs step (``hs=1``).
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
    word2vec.c's updates (``"window"``: a path's dot products, then its coefficients, then
    its updates, with up to 4 contexts of a skip-gram window walking the centre's path
    together; ``"fused"``: each row's update fused with the next row's dot product, for the
    negative-sampling steps). ``kernel`` is deprecated and ignored.

    ``corpus_file``: a plain UTF-8 file with one sentence per line, which the ``workers``
    threads read, tokenise and train by byte ranges without the GIL (``build_vocab`` counts
    it the same way), giving the sentences ``LineSentence`` gives; compressed files and URLs
    are streamed through ``LineSentence`` instead (``docs/corpus-file.md``).

    ``tree`` picks the hierarchical-softmax tree (:mod:`hsw2v.trees`): ``"huffman"``
    (default, word2vec's), ``"balanced"``, ``"semantic"`` (Mnih & Hinton 2008: the first
    ``train()`` runs on the Huffman tree, then the tree is rebuilt by recursive 2-means of the
    learned vectors, the vectors and ``syn1`` are re-initialised as for a new model, and the
    same ``train()`` call trains again over the new tree, so it costs two trainings), or a
    callable ``tree(counts)`` returning a :class:`hsw2v.huffman.Tree` or
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
    hs : {0, 1}, optional
        1: hierarchical softmax; 0: none (then ``negative`` must be > 0). None (default):
        gensim's default 0 when ``negative`` is given, else 1.
    negative : int, optional
        Negative sampling with that many noise words per step (5-20 are usual) when above 0;
        0: none. Must be >= 0, with ``hs`` or ``negative`` on. None (default): gensim's
        default 5 when ``hs`` is given, else 0 (hierarchical softmax alone).
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
        Tally the training loss, read with :meth:`get_latest_training_loss`: here the
        negative log-likelihood of every trained pair, each term to float32 precision (no
        term skipped), summed in float64; it costs a few percent of training time.
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
    kernel : str or None, default None
        Deprecated and ignored (a DeprecationWarning says so); see above.
    tree : {"huffman", "balanced", "semantic"} or callable, default "huffman"
        Beyond gensim: the hierarchical-softmax tree; see above.
    shared_negatives : bool, default True
        Beyond gensim: skip-gram with negative sampling draws one set of ``negative`` words
        per centre word, shared by all its contexts (Ji et al. 2016), instead of gensim's
        set per (context, centre) pair; each context is then stepped against the set as in
        gensim's pair walk. CBOW draws a set for one centre word in four and lends its
        draws to three more, each ``2 * window + 1`` centres after the last (no context
        word shared), instead of a set per centre. The default because it is faster
        (skip-gram 1.3-1.9x, CBOW 1.2-1.4x gensim's draws) at gensim's quality on two
        corpora (docs/negative-sampling.md); ``False`` gives gensim's draws.

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

    def __getattr__(self, name):
        """Only for names normal lookup missed: gensim 3's names (``model.syn0``,
        ``model.most_similar``, ``model.iter``, ...) get gensim 4's migration hint."""
        from hsw2v._gensim.names import missing_attribute

        raise missing_attribute(self, "model", name)

    def __init__(
        self, sentences=None, corpus_file=None, vector_size=100, alpha=0.025, window=5, min_count=5,
        max_vocab_size=None, sample=1e-3, seed=1, workers=3, min_alpha=0.0001, sg=0, hs=None,
        negative=None, ns_exponent=0.75, cbow_mean=1, hashfxn=hash, epochs=5, null_word=0,
        trim_rule=None, sorted_vocab=1, batch_words=MAX_WORDS_IN_BATCH, compute_loss=False,
        callbacks=(), comment=None, max_final_vocab=None, shrink_windows=True,
        cache_words=100_000_000, kernel=None, tree="huffman", shared_negatives=True,
    ):
        # every argument the table checks, checked once (hsw2v.running.params); keep this line first
        given = {name: value for name, value in locals().items() if name in ARGUMENTS}
        given["hs"], given["negative"] = resolve_hs_negative(hs, negative)
        check_word2vec_params(given)
        for param in KEPT:  # self.window = int(window), ...: each as the table keeps it
            setattr(self, param.name, param.kept_as(given[param.name]))
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
        self._reset_training_record()  # train_count, total_train_time, ... (word2vec._train)
        self.effective_min_count = self.min_count
        self.raw_vocab: dict | None = None
        self._recording = None
        self._pruning = None  # what max_vocab_size pruned in the last scan (vocab.Pruning)
        self.tree: Tree | None = None
        self.wv = KeyedVectors(self.vector_size)
        self.wv.vectors_lockf = no_lock_factors()
        reset_matrices(self, 0)  # syn1, syn1neg: each objective's output matrix, empty
        self.cum_table = None  # negative sampling's draw table (make_cum_table)

        self._build_and_train(sentences, corpus_file, trim_rule)

    def _build_and_train(self, sentences, corpus_file, trim_rule) -> None:
        """The constructor's last step, as gensim's: with a corpus, build the vocabulary and
        train ``epochs`` passes over it."""
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
        refuse_while_training(self, "reset_from()")
        self.wv = KeyedVectors(self.vector_size)
        self.wv.vectors_lockf = no_lock_factors()
        self.wv.index_to_key = other_model.wv.index_to_key
        self.wv.key_to_index = other_model.wv.key_to_index
        self.wv.expandos = other_model.wv.expandos
        self._install_tree(other_model.tree, getattr(other_model, "semantic_pending", 0))
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
        for objective in active(self):  # syn1, syn1neg
            report[objective.matrix] = vocab_size * self.vector_size * 4  # float32
        report["total"] = sum(v for k, v in report.items() if k != "total")
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

    # ---------------------------------------------------------------- gensim
    @classmethod
    def from_gensim(cls, gensim_model):
        """An hsw2v model equal to a gensim hs model; see :func:`hsw2v.gensim_compat.from_gensim`.

        Examples
        --------
        >>> from gensim.models import Word2Vec as GensimWord2Vec
        >>> g = GensimWord2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1, epochs=1, hs=1, negative=0)
        >>> model = Word2Vec.from_gensim(g); bool((model.syn1 == g.syn1).all())
        True
        >>> type(model).__name__, model.wv.index_to_key
        ('Word2Vec', ['a', 'b'])
        """
        return from_gensim(gensim_model, cls)

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
        return to_gensim(self)

    # ---------------------------------------------------------------- persistence
    FILE_KIND = "Word2Vec"  # the bundle kind of this class's files (hsw2v.persist)

    def _file_state(self) -> tuple[dict, dict]:
        """What a file of this class holds beyond Word2Vec's state: (meta, arrays)."""
        return {}, {}

    def _check_file_state(self, meta: dict, arrays: dict, fname) -> None:
        """A ValueError unless what :meth:`_file_state` wrote is what ``load()`` takes back
        (``save()`` runs it before writing)."""

    def _restore_file_state(self, meta: dict, arrays: dict, fname) -> None:
        """Take back what :meth:`_file_state` wrote, from a checked file being loaded."""

    def save(
        self, fname, separately=None, sep_limit=10 * 1024**2, ignore=frozenset(), pickle_protocol=4,
    ):
        """Save the whole model (continues training after :meth:`load`) in the native,
        pickle-free format; the write is atomic.

        gensim's ``save()`` options are accepted, and what is done with each is logged
        (:func:`hsw2v.gensim_compat.explain_save_options`): every array is always stored
        memory-mappable (``separately``, ``sep_limit``), the attributes a model needs are
        stored whatever ``ignore`` says (with a warning), and no pickle is written
        (``pickle_protocol``).

        Parameters
        ----------
        fname : str or os.PathLike
            The file to write (replaced atomically).
        separately, sep_limit, ignore, pickle_protocol : optional
            gensim's options, accepted and explained in the log (see above).

        Examples
        --------
        >>> import tempfile, os
        >>> model = Word2Vec([["a", "b"]] * 10, vector_size=4, min_count=1, epochs=1)
        >>> path = os.path.join(tempfile.mkdtemp(), "m.hsw2v")
        >>> model.save(path)
        >>> Word2Vec.load(path).wv.index_to_key
        ['a', 'b']
        """
        save_model(self, fname, separately, sep_limit, ignore, pickle_protocol)
        logger.info("saved %s", fname)  # gensim's line

    @class_only_method
    def load(cls, fname, mmap=None):
        """Load a model written by :meth:`save`; ``mmap='r'`` maps its arrays read-only.

        As gensim's, it is called on the class (``model = Word2Vec.load(path)``); called on an
        instance it raises :class:`hsw2v.exceptions.LoadOnInstanceError` (an AttributeError,
        as gensim's). A file of another kind (e.g. ``wv.save()``'s KeyedVectors) raises
        :class:`hsw2v.exceptions.WrongFileKindError` (a ValueError and an AttributeError); a
        gensim pickle raises a ValueError naming the ways to convert it
        (:func:`hsw2v.gensim_compat.load_gensim_pickle`).

        Parameters
        ----------
        fname : str or os.PathLike
            A file written by :meth:`save`.
        mmap : {None, 'r'}, optional
            ``'r'`` memory-maps the arrays read-only instead of reading them.

        Returns
        -------
        Word2Vec
            The model, ready to train further or to query.

        Raises
        ------
        ValueError
            If the file is not an hsw2v model bundle or holds inconsistent data.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "m.hsw2v")
        >>> Word2Vec([["a", "b"]] * 10, vector_size=4, min_count=1, workers=1, epochs=1).save(path)
        >>> model = Word2Vec.load(path, mmap="r")
        >>> model.wv.index_to_key, model.wv.vectors.shape, model.wv.vectors.flags.writeable
        (['a', 'b'], (2, 4), False)
        """
        logger.info("loading %s object from %s", cls.__name__, fname)  # gensim's line
        return load_model(cls, fname, mmap)

    def __str__(self):
        return (
            f"{type(self).__name__}<vocab={len(self.wv.index_to_key)}, "
            f"vector_size={self.vector_size}, alpha={self.alpha}>"
        )
