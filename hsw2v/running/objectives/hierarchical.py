"""Hierarchical softmax's queries of a trained model: sentence scores and output-word
prediction (also importable as ``hsw2v.scoring``, their public name).

The objective's row, its lookup (the tree) and its kernel output are in the table
(:mod:`hsw2v.running.objectives`); this module holds what a trained model asks of its
``syn1``.

:func:`score_sentences` is gensim 4.4's ``Word2Vec.score`` (the log-probability of each
sentence under the model, after Taddy 2015, "Document Classification by Inversion of
Distributed Language Representations", arXiv:1504.07295), computed exactly: every term is the
exact ``log sigmoid`` in float64, where gensim reads a table and drops every node with
``|h . v'| >= 6`` (so a confidently wrong node costs gensim nothing). Sentences are scored in
chunks on ``workers`` threads by the nogil kernel :class:`hsw2v._kernels._query.Scorer`.

:func:`predict_output_word` is gensim's ``predict_output_word`` for hierarchical-softmax models
(gensim implements it for negative sampling only): ``P(w | h)`` over the whole vocabulary is
the product of the branch probabilities along ``w``'s path in the Huffman tree (Morin & Bengio
2005; Mikolov et al. 2013), which sums to 1 over the leaves by construction. The most probable
words are found by a best-first search of the tree (:func:`hsw2v._kernels._query.top_leaves`), which
expands only the inner nodes more probable than the n-th answer instead of scoring every word.
"""

from __future__ import annotations

import itertools
import logging
import time

import numpy as np

from hsw2v._kernels._inner import encode_sentences
from hsw2v._kernels._query import Scorer, leaf_log_probs, top_leaves
from hsw2v.huffman import child_table
from hsw2v.running.threads import StopFlag, run_jobs

logger = logging.getLogger("hsw2v.scoring")  # its public name, as users know it

__all__ = ["child_table", "output_word_probabilities", "predict_output_word", "score_sentences"]


def _require_vocabulary(model) -> None:
    if model.tree is None or not len(model.wv.index_to_key):
        raise RuntimeError("you must first build vocabulary before scoring new data")
    if not getattr(model, "hs", 1) or len(model.syn1) < len(model.wv.index_to_key) - 1:
        raise RuntimeError(
            "this needs the hierarchical-softmax output layer (syn1), which a model trained "
            "with hs=0 does not have; train with hs=1"
        )


def _f32(array) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=np.float32)


# ------------------------------------------------------------------------------------- score
def score_sentences(
    model,
    sentences,
    total_sentences=int(1e6),
    chunksize=100,
    workers=None,
    report_delay=1.0,
    queue_factor=2,
):
    """Log-probability of each sentence under ``model``, as gensim's ``Word2Vec.score``.

    Per sentence, over its in-vocabulary tokens (unknown tokens are dropped first, so the
    window spans known words only, as in gensim), with the full ``model.window`` (no random
    shrinking) and no subsampling:

    * skip-gram (``sg=1``): the sum over positions ``i`` and context positions ``j``
      (``0 < |i - j| <= window``) of ``log P(w_i | syn0[w_j])``: each context word's input
      vector predicts the centre word's path;
    * CBOW: the sum over positions ``i`` of ``log P(w_i | h_i)``, ``h_i`` the mean
      (``cbow_mean=1``) or sum of the context words' input vectors; a word with no context
      (a one-word sentence) is scored with ``h = 0``, i.e. ``log 1/2`` per node, as gensim does.

    Differences from gensim, on purpose: every term is the exact log-sigmoid in float64 (gensim
    reads a 1000-entry float32 table, at an index whose scale is rounded down, so each term is
    off by up to about 0.06, and it skips nodes with ``|f| >= 6``, so it misses large,
    confidently wrong terms entirely); sentences are scored whole (gensim stops at 10,000
    known words).

    Parameters
    ----------
    sentences : iterable of list of str
    total_sentences : int
        Score at most this many sentences (the rest of the corpus is not read; a warning is
        logged if it was not exhausted).
    chunksize : int
        Sentences per job.
    workers : int, optional
        Scoring threads (default ``model.workers``).
    report_delay : float
        Seconds between progress log lines.
    queue_factor : int
        Jobs buffered per worker.

    Returns
    -------
    numpy.ndarray of float32
        One score per sentence read. gensim allocates ``total_sentences`` slots and returns
        the filled prefix, ``scores[:sentence_count]``, so the length is
        ``min(len(sentences), total_sentences)``, never padded; this does the same.

    Example
    -------
    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1, epochs=1)
    >>> scores = score_sentences(model, [["a", "b"], ["b", "zzz", "a"], ["a"]], workers=1)
    >>> scores.shape, scores.dtype.name, bool((scores[:2] < 0).all())
    ((3,), 'float32', True)
    >>> round(float(scores[2]), 4)  # CBOW, one word: h = 0, log(1/2) per node
    -0.6931
    """
    _require_vocabulary(model)
    total_sentences = int(total_sentences)
    chunksize = int(chunksize)
    workers = int(model.workers if workers is None else workers)
    if total_sentences < 0:
        raise ValueError(f"total_sentences must be >= 0, got {total_sentences}")
    if chunksize < 1 or workers < 1 or int(queue_factor) < 1:
        raise ValueError("chunksize, workers and queue_factor must be positive integers")
    from hsw2v.running.validation import check_model_tree

    check_model_tree(model)  # the scorer follows the tree's ids without bounds checks
    scorer = Scorer(
        _f32(model.wv.vectors),
        _f32(model.syn1),
        model.tree.codes,
        model.tree.points,
        _query_lengths(model.tree.lengths),
        int(model.window),
        bool(model.sg),
        bool(model.cbow_mean),
    )
    logger.info(
        "scoring sentences with %i workers on %i vocabulary and %i features, using sg=%s",
        workers,
        len(model.wv.index_to_key),
        model.vector_size,
        model.sg,
    )
    scores = np.zeros(total_sentences, dtype=np.float32)
    stop = StopFlag()
    key_to_index = model.wv.key_to_index
    n_words = min(len(model.wv.vectors), len(model.tree.lengths))  # the rows scored ids index
    produced_count = [0]  # sentences handed to the workers

    def produced():  # the jobs, read from the user's sentences
        count = 0
        iterator = iter(sentences)
        while count < total_sentences and not stop.is_set():
            chunk = list(itertools.islice(iterator, min(chunksize, total_sentences - count)))
            if not chunk:
                return
            ids, ends, _ = encode_sentences(chunk, key_to_index, n_words)
            yield count, ids, ends
            count += len(chunk)
            produced_count[0] = count
        if count == total_sentences and not stop.is_set():
            if next(iterator, None) is not None:
                logger.warning(
                    "terminating after %i sentences (set higher total_sentences if you want more).",
                    total_sentences,
                )

    def score_job(item) -> int:  # on a worker thread
        first, ids, ends = item
        result = scorer.score_job(ids, ends)
        scores[first : first + len(result)] = result
        return len(result)

    started = time.perf_counter()
    next_report = started + report_delay
    scored = 0

    def on_result(n) -> None:  # in this thread: a job's sentences, or None (a poll)
        nonlocal next_report, scored
        if n is None:
            return
        scored += n
        now = time.perf_counter()
        if now >= next_report:
            logger.info(
                "PROGRESS: scored %i sentences, %.0f sentences/s",
                scored,
                scored / max(now - started, 1e-9),
            )
            next_report = now + report_delay

    # one producer reads the sentences into jobs, `workers` threads score them; any error or
    # interrupt stops them all, waited for (hsw2v.running.threads, whose rule 7 is why the
    # caller's thread waits on no Python-level lock)
    run_jobs(
        produced(),
        score_job,
        workers,
        on_result,
        stop,
        queue_size=int(queue_factor) * workers,
        names=("hsw2v-score-producer", "hsw2v-score"),
    )
    count = produced_count[0]
    elapsed = time.perf_counter() - started
    logger.info(
        "scoring %i sentences took %.1fs, %.0f sentences/s",
        count,
        elapsed,
        count / max(elapsed, 1e-9),
    )
    return scores[:count]


def _query_lengths(lengths: np.ndarray) -> np.ndarray:
    """The path lengths a query walks. A one-word vocabulary's tree gives its word a one-node
    path so that training stays defined, but in a query that word has probability 1 (there
    is no decision to make), so its path is walked as empty: log-probability 0, as gensim's
    one-word tree (an empty code) gives.

    >>> _query_lengths(np.array([1], dtype=np.int32)).tolist()
    [0]
    """
    if len(lengths) == 1:
        return np.zeros(1, dtype=np.int32)
    return lengths


# ---------------------------------------------------------------------------- prediction
def _cached_children(model) -> np.ndarray:
    """The child table of ``model.tree``, derived once and kept on the model."""
    cached = getattr(model, "_hs_children", None)
    if cached is None or cached[0] is not model.tree:
        tree = model.tree
        cached = (tree, child_table(tree.codes, tree.points, tree.lengths), tree.root)
        model._hs_children = cached
    return cached[1]


def _cached_root(model) -> int:
    """The root inner node of ``model.tree`` (see :func:`_cached_children`)."""
    _cached_children(model)
    return model._hs_children[2]


def _hidden(model, context_words_list) -> np.ndarray | None:
    """gensim's CBOW-style hidden vector: the mean (``cbow_mean``) or sum of the known
    context words' vectors (words or row indices, repeats counted), float64; None if none."""
    wv = model.wv
    rows = [wv.get_index(w) for w in context_words_list if w in wv]
    if not rows:
        logger.warning("All the input context words are out-of-vocabulary for the current model.")
        return None
    h = np.asarray(wv.vectors[rows], dtype=np.float64).sum(axis=0)
    if model.cbow_mean:
        h /= len(rows)
    return np.ascontiguousarray(h)


def output_word_probabilities(model, context_words_list) -> np.ndarray | None:
    """``P(w | context)`` for every word ``w`` (float64, in ``wv.index_to_key`` order, summing
    to 1), from one top-down pass over the tree; None if no context word is known.

    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec([["a", "b", "c"]] * 20, vector_size=8, min_count=1, workers=1, epochs=1)
    >>> probs = output_word_probabilities(model, ["a", "c"])
    >>> probs.shape, round(float(probs.sum()), 6), output_word_probabilities(model, ["zzz"])
    ((3,), 1.0, None)
    """
    _require_vocabulary(model)
    h = _hidden(model, context_words_list)
    if h is None:
        return None
    if len(model.wv.index_to_key) == 1:
        return np.ones(1)
    children = _cached_children(model)
    return np.exp(leaf_log_probs(h, _f32(model.syn1), children, _cached_root(model)))


def predict_output_word(model, context_words_list, topn=10):
    """The ``topn`` most probable centre words given the context words, as gensim's
    ``predict_output_word`` (which only supports negative sampling) but for hierarchical
    softmax: ``[(word, probability), ...]``, most probable first.

    ``h`` is the mean of the known context words' vectors (their sum if ``cbow_mean=0``),
    words given as keys or row indices, as gensim does, even for skip-gram models. ``P(w | h)``
    is exact over the whole vocabulary; the top ``topn`` come from a best-first search of the
    tree (exact: path probabilities only fall going down). ``topn=None`` returns every word.
    Returns None (and logs a warning) when no context word is in the vocabulary, as gensim.

    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec([["a", "b", "c"]] * 20, vector_size=8, min_count=1, workers=1, epochs=1)
    >>> top = predict_output_word(model, ["a", "c"], topn=2)
    >>> len(top), all(0 < p < 1 for _, p in top), top[0][1] >= top[1][1]
    (2, True, True)
    """
    _require_vocabulary(model)
    h = _hidden(model, context_words_list)
    if h is None:
        return None
    keys = model.wv.index_to_key
    n = len(keys) if topn is None else min(int(topn), len(keys))
    if n <= 0:
        return []
    if len(keys) == 1:
        return [(keys[0], 1.0)]
    children = _cached_children(model)
    words, log_probs = top_leaves(h, _f32(model.syn1), children, n, _cached_root(model))
    return [(keys[w], float(p)) for w, p in zip(words.tolist(), np.exp(log_probs), strict=True)]
