"""Word Mover's Distance between two documents, solved exactly as a linear program.

Kusner, Sun, Kolkin & Weinberger, "From Word Embeddings To Document Distances" (ICML 2015):
each document is its normalised bag of words (``d_i`` = count of word ``i`` / document length,
over the in-vocabulary tokens), and

    WMD(d, d') = min_T  sum_ij T_ij c(i, j)   subject to   sum_j T_ij = d_i,
                                                           sum_i T_ij = d'_j,   T >= 0,

with ``c(i, j)`` the Euclidean distance between the two words' vectors (unit vectors with
``norm=True``). gensim computes the same transport problem with the POT package's network
simplex (``ot.emd2``); here scipy's HiGHS solver (``scipy.optimize.linprog``) solves it, so no
further dependency is needed. The problem has ``n x n'`` variables for documents of ``n`` and
``n'`` distinct words, fine for sentences and paragraphs.
"""

from __future__ import annotations

import logging

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from scipy.spatial.distance import cdist

logger = logging.getLogger(__name__)


def nbow(document) -> tuple[list, np.ndarray]:
    """The distinct words of ``document`` (first-seen order) and their normalised counts.

    >>> nbow(["a", "b", "a", "c"])
    (['a', 'b', 'c'], array([0.5 , 0.25, 0.25]))
    """
    words: dict = {}
    for token in document:
        words[token] = words.get(token, 0) + 1
    weights = np.array(list(words.values()), dtype=np.float64) / len(document)
    return list(words), weights


def transport_cost(weights1, weights2, cost) -> float:
    """The minimum of ``sum(T * cost)`` over transport plans ``T >= 0`` with row sums
    ``weights1`` and column sums ``weights2`` (both summing to 1): the earth mover's distance.

    >>> transport_cost([0.5, 0.5], [1.0], np.array([[1.0], [3.0]]))
    2.0
    """
    w1, w2 = np.asarray(weights1, np.float64), np.asarray(weights2, np.float64)
    cost = np.asarray(cost, np.float64)
    n1, n2 = len(w1), len(w2)
    if cost.shape != (n1, n2):
        raise ValueError(f"cost must be {n1} x {n2}, got {cost.shape}")
    if n1 == 1 or n2 == 1:  # only one plan is possible
        return float((cost * (w1[:, None] * w2[None, :])).sum())
    # T is flattened row-major: T_ij is variable i * n2 + j.
    rows = sparse.kron(sparse.eye(n1), np.ones((1, n2)))  # sum_j T_ij
    cols = sparse.kron(np.ones((1, n1)), sparse.eye(n2))  # sum_i T_ij
    a_eq = sparse.vstack([rows, cols]).tocsr()
    b_eq = np.concatenate([w1, w2])
    result = linprog(cost.ravel(), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if result.status != 0:
        raise RuntimeError(f"the transport problem was not solved: {result.message}")
    return float(result.fun)


def wmdistance(kv, document1, document2, norm=True) -> float:
    """Word Mover's Distance between two token lists (see the module docstring); gensim's
    ``KeyedVectors.wmdistance``: out-of-vocabulary tokens are dropped (logged), and a
    document left empty gives ``inf`` (with a warning).

    >>> from hsw2v.keyedvectors import KeyedVectors
    >>> kv = KeyedVectors(2)
    >>> kv.add_vectors(["a", "b", "c"], [[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])
    >>> wmdistance(kv, ["a"], ["b", "c"], norm=False)  # half to b (5), half to c (1)
    3.0
    """
    doc1 = [token for token in document1 if token in kv]
    doc2 = [token for token in document2 if token in kv]
    dropped1, dropped2 = len(document1) - len(doc1), len(document2) - len(doc2)
    if dropped1 or dropped2:
        logger.info(
            "Removed %d and %d OOV words from document 1 and 2 (respectively).",
            dropped1,
            dropped2,
        )
    if not doc1 or not doc2:
        logger.warning("At least one of the documents had no words that were in the vocabulary.")
        return float("inf")
    words1, weights1 = nbow(doc1)
    words2, weights2 = nbow(doc2)
    vectors1 = np.array([kv.get_vector(w, norm=norm) for w in words1], dtype=np.float64)
    vectors2 = np.array([kv.get_vector(w, norm=norm) for w in words2], dtype=np.float64)
    return transport_cost(weights1, weights2, cdist(vectors1, vectors2))
