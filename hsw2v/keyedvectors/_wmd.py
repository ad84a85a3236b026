"""Word Mover's Distance between two documents, solved exactly as a linear program.

Kusner, Sun, Kolkin & Weinberger, "From Word Embeddings To Document Distances" (ICML 2015):
each document is its normalised bag of words (``d_i`` = count of word ``i`` / document length,
over the in-vocabulary tokens), and

    WMD(d, d') = min_T  sum_ij T_ij c(i, j)   subject to   sum_j T_ij = d_i,
                                                           sum_i T_ij = d'_j,   T >= 0,

with ``c(i, j)`` the Euclidean distance between the two words' vectors (unit vectors with
``norm=True``). The problem has ``n x n'`` variables for documents of ``n`` and ``n'``
distinct words (gensim poses it over the union of both vocabularies, ``(n + n')^2``).

Three exact solvers, the same optimum:

* the POT package's network simplex (``ot.emd2``, Flamary et al., "POT: Python Optimal
  Transport", JMLR 2021; the solver gensim uses), taken when POT is importable;
* the built-in network simplex (:mod:`hsw2v._kernels._transport`: Ahuja, Magnanti & Orlin, "Network
  Flows", ch. 11, with strongly feasible trees), taken otherwise: no further dependency, and
  as fast as POT or faster at 5-200 words per document (``benchmarks/RESULTS.md``);
* scipy's HiGHS (``scipy.optimize.linprog``), when either simplex reports that it stopped
  before the optimum, or on request: 10-50x slower (HiGHS's set-up dominates).

:data:`SOLVER` (``"auto"``, ``"pot"``, ``"simplex"`` or ``"highs"``) forces one, for tests and
benchmarks.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from scipy.spatial.distance import cdist

from hsw2v._kernels._transport import network_simplex

logger = logging.getLogger(__name__)

#: The transport solver: "auto" (POT when importable, else the built-in network simplex),
#: "pot", "simplex" or "highs".
SOLVER = "auto"
SOLVERS = ("auto", "pot", "simplex", "highs")
_POT_EMD2 = []  # ot.emd2 once imported (POT's import takes a while), or None without POT


def pot_emd2():
    """POT's ``ot.emd2``, or None when POT is not installed (imported once)."""
    if not _POT_EMD2:
        try:
            from ot import emd2
        except ImportError:
            emd2 = None
        _POT_EMD2.append(emd2)
    return _POT_EMD2[0]


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


def transport_cost(weights1, weights2, cost, solver=None) -> float:
    """The minimum of ``sum(T * cost)`` over transport plans ``T >= 0`` with row sums
    ``weights1`` and column sums ``weights2`` (both summing to 1): the earth mover's distance.
    ``solver``: ``"pot"``, ``"simplex"``, ``"highs"`` or ``"auto"`` (default :data:`SOLVER`;
    see the module docstring).

    >>> transport_cost([0.5, 0.5], [1.0], np.array([[1.0], [3.0]]))
    2.0
    >>> transport_cost([0.5, 0.5], [0.5, 0.5], np.array([[0.0, 1.0], [1.0, 0.0]]), "simplex")
    0.0
    """
    w1, w2 = np.asarray(weights1, np.float64), np.asarray(weights2, np.float64)
    cost = np.ascontiguousarray(cost, np.float64)
    check_problem(w1, w2, cost)
    n1, n2 = len(w1), len(w2)
    solver = SOLVER if solver is None else solver
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(map(repr, SOLVERS))}, got {solver!r}")
    if n1 == 1 or n2 == 1:  # only one plan is possible
        return float((cost * (w1[:, None] * w2[None, :])).sum())
    if solver in ("auto", "pot"):
        emd2 = pot_emd2()
        if emd2 is None and solver == "pot":
            raise ImportError("solver='pot' needs the POT package: pip install pot")
        if emd2 is not None:
            with warnings.catch_warnings():  # a stop short of the optimum is logged below
                warnings.simplefilter("ignore", UserWarning)
                value, log = emd2(w1, w2, cost, log=True)
            if log.get("result_code") == 1:  # POT's OPTIMAL
                return float(value)
            logger.info(
                "POT stopped before the optimum (%s); solving with HiGHS", log.get("warning")
            )
            return highs_transport_cost(w1, w2, cost)
    if solver != "highs":
        value, _, pivots, optimal = network_simplex(
            np.ascontiguousarray(w1), np.ascontiguousarray(w2), cost
        )
        if optimal:
            return float(value)
        logger.info("the network simplex stopped after %d pivots; solving with HiGHS", pivots)
    return highs_transport_cost(w1, w2, cost)


def check_problem(w1, w2, cost) -> None:
    """Refuse a transport problem no solver can answer, saying what is wrong: a cost matrix
    of another shape or with NaN / infinite entries, weights that are empty, negative or not
    finite, or weights whose sums differ (both must sum to the same total, 1 for WMD)."""
    n1, n2 = len(w1), len(w2)
    if w1.ndim != 1 or w2.ndim != 1 or n1 == 0 or n2 == 0:
        raise ValueError("the weights must be two non-empty 1-d sequences")
    if cost.shape != (n1, n2):
        raise ValueError(f"cost must be {n1} x {n2}, got {cost.shape}")
    if not np.isfinite(cost).all():
        i, j = np.argwhere(~np.isfinite(cost))[0]
        raise ValueError(
            f"the cost matrix holds a non-finite value ({cost[i, j]} at row {i}, column {j}): "
            "check the word vectors for NaN or infinite values (e.g. a diverged training)"
        )
    for name, w in (("weights1", w1), ("weights2", w2)):
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError(f"{name} must be finite and non-negative, got {w}")
    s1, s2 = w1.sum(), w2.sum()
    if abs(s1 - s2) > 1e-9 * max(s1, s2) or s1 == 0:
        raise ValueError(
            f"the two weight vectors must have the same positive sum, got {float(s1)!r} and {float(s2)!r}: "
            "normalise each to sum to 1"
        )


def highs_transport_cost(w1, w2, cost) -> float:
    """:func:`transport_cost` by scipy's HiGHS (float64 arrays, ``n1, n2 >= 1``)."""
    n1, n2 = len(w1), len(w2)
    # T is flattened row-major: T_ij is variable i * n2 + j; its two constraints are row i
    # (sum_j T_ij = w1_i) and row n1 + j (sum_i T_ij = w2_j).
    col = np.arange(n1 * n2)
    a_eq = sparse.csc_matrix(
        (
            np.ones(2 * n1 * n2),
            np.stack([col // n2, n1 + col % n2], axis=1).ravel(),
            np.arange(0, 2 * n1 * n2 + 1, 2),
        ),
        shape=(n1 + n2, n1 * n2),
    )
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
