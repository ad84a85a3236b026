"""Negative sampling beside hierarchical softmax: the noise distribution and the output
layer's prediction (also importable as ``hsw2v.negative``, their public name; the objective's
row is in the table, :mod:`hsw2v.running.objectives`).

Negative sampling (Mikolov et al., "Distributed Representations of Words and Phrases and their
Compositionality", 2013) trains one output vector per word (``syn1neg``, V x d, starting at
zero) to tell the word actually seen from ``negative`` words drawn from the unigram
distribution raised to ``ns_exponent`` (0.75 in the paper). The draw uses word2vec.c's and
gensim's table: ``cum_table[i]`` is the cumulative share of ``count**ns_exponent`` up to word
``i``, scaled to ``domain = 2**31 - 1`` and rounded; a uniform integer below ``cum_table[-1]``
is bisected into it (``hsw2v._kernels._inner``, design note D').

Examples
--------
>>> import numpy as np
>>> make_cum_table(np.array([8, 4, 2, 1]), ns_exponent=1.0, domain=15).tolist()
[8, 12, 14, 15]
"""

from __future__ import annotations

import logging

import numpy as np

from hsw2v.running.objectives.hierarchical import _hidden

__all__ = ["make_cum_table", "predict_output_word"]

logger = logging.getLogger("hsw2v.negative")  # its public name, as users know it


def make_cum_table(counts, ns_exponent=0.75, domain=2**31 - 1) -> np.ndarray:
    """The cumulative table of the negative draw, uint32, equal entry for entry to gensim
    4.4's ``Word2Vec.make_cum_table`` for the same counts and exponent: ``round(cumulative /
    total * domain)`` with the powers summed in order, in float64, rounded half to even.

    Raises ValueError for an empty vocabulary, or counts that give no positive total.

    Examples
    --------
    >>> make_cum_table([3, 1], ns_exponent=0.0, domain=100).tolist()
    [50, 100]
    """
    counts = np.asarray(counts)
    if counts.ndim != 1 or not len(counts):
        raise ValueError("make_cum_table needs a non-empty 1-d array of word counts")
    powers = np.power(counts.astype(np.float64), float(ns_exponent))
    cumulative = np.cumsum(powers)  # sequential sums, as gensim's Python loop
    total = cumulative[-1]
    if not np.isfinite(total) or total <= 0:
        raise ValueError(
            f"the counts raised to ns_exponent={ns_exponent} sum to {total}: every count must "
            "be positive (or use a finite ns_exponent)"
        )
    return np.round(cumulative / total * domain).astype(np.uint32)


def predict_output_word(model, context_words_list, topn=10):
    """gensim's ``predict_output_word`` for a negative-sampling model: ``h`` is the mean (sum
    if ``cbow_mean=0``) of the known context words' vectors, ``P(w) = softmax(syn1neg . h)``
    over the whole vocabulary; returns the ``topn`` most probable ``[(word, probability)]``
    (``topn=None``: all), or None with a warning if no context word is known.

    Examples
    --------
    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec([["a", "b", "c"]] * 20, vector_size=8, min_count=1, workers=1,
    ...                  epochs=1, hs=0, negative=2)
    >>> probs = [p for _, p in predict_output_word(model, ["a", "c"], topn=2)]
    >>> len(probs), probs == sorted(probs, reverse=True)
    (2, True)
    """
    wv = model.wv
    if not len(wv.index_to_key) or model.syn1neg.shape[0] != len(wv.index_to_key):
        raise RuntimeError("Parameters required for predicting the output words not found.")
    h = _hidden(model, context_words_list)  # gensim's mean (or sum) of the context vectors
    if h is None:
        return None
    logits = np.asarray(model.syn1neg, dtype=np.float64) @ h
    probs = np.exp(logits - logits.max())  # the softmax, without overflow
    probs /= probs.sum()
    keys = wv.index_to_key
    n = len(keys) if topn is None else min(int(topn), len(keys))
    if n <= 0:
        return []
    top = np.argsort(-probs, kind="stable")[:n]
    return [(keys[i], float(probs[i])) for i in top.tolist()]
