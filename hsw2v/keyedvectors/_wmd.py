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

* the built-in network simplex (:mod:`hsw2v._kernels._transport`: Ahuja, Magnanti & Orlin,
  "Network Flows", ch. 11, with strongly feasible trees), the default (``"auto"``): no
  further dependency, as fast as POT or faster at 5-200 words per document, and it needs
  O(n + n') memory beside the cost matrix, so it solves 10,000-word documents where POT
  runs out of memory (``benchmarks/history/2026-11-29.md, "hostile input, round three"``);
* the POT package's network simplex (``ot.emd2``, Flamary et al., "POT: Python Optimal
  Transport", JMLR 2021; the solver gensim uses), on request;
* scipy's HiGHS (``scipy.optimize.linprog``), when the simplex reports that it stopped
  before the optimum, or on request: 10-50x slower (HiGHS's set-up dominates), and about
  :data:`BYTES_PER_ARC` ``["highs"]`` bytes per pair of words.

Before a cost matrix is built or a solver starts, :func:`check_memory` estimates what it
needs (:data:`BYTES_PER_ARC` per pair of words, from measurements) and raises a MemoryError
that says what to do when that exceeds the memory available, rather than let the process
die (POT's ``std::bad_alloc`` aborted it) or a solver end in an untranslated status. A solver
that fails anyway raises :class:`TransportError` naming the solver and the problem's size.

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

#: The transport solver: "auto" (the built-in network simplex, HiGHS if it stops short),
#: "pot", "simplex" or "highs".
SOLVER = "auto"
SOLVERS = ("auto", "pot", "simplex", "highs")
#: Bytes each solver needs per pair of words (``n x n'`` pairs), beyond the float64 cost matrix
#: (8 bytes a pair, counted as "cost"): the built-in simplex needs O(n + n') only; POT copies
#: the costs and keeps a flow and a state per arc; HiGHS builds the constraint matrix (two
#: entries per pair) and its own copies of the problem (estimates, on the safe side).
BYTES_PER_ARC = {"cost": 8, "simplex": 0, "pot": 40, "highs": 200}


class TransportError(RuntimeError):
    """A transport solver failed without an answer (not a refusal of bad input): the message
    names the solver, the problem's size and what to try."""


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux's ``MemAvailable``), or None
    where the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def needed_memory(n1: int, n2: int, solver: str, with_cost: bool = True) -> int:
    """Estimated bytes to solve an ``n1 x n2`` transport problem with ``solver``."""
    arcs = n1 * n2
    per = BYTES_PER_ARC[solver] + (BYTES_PER_ARC["cost"] if with_cost else 0)
    return arcs * per + 64 * (n1 + n2 + 1)


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def check_memory(n1: int, n2: int, solver: str, with_cost: bool = True) -> None:
    """Raise MemoryError, saying how much is needed and what to do, when the estimate of
    :func:`needed_memory` exceeds the memory available."""
    need = needed_memory(n1, n2, solver, with_cost)
    have = available_memory()
    if have is None or need <= have:
        return
    raise MemoryError(
        f"a Word Mover's Distance between documents of {n1:,} and {n2:,} distinct words "
        f"needs about {_size(need)} with the {solver!r} solver, and "
        f"{_size(have)} are available: use shorter documents (e.g. drop rare or "
        "stop words), or the built-in simplex (solver='simplex'), which needs the least"
    )


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
    if solver == "pot":
        emd2 = pot_emd2()
        if emd2 is None:
            raise ImportError("solver='pot' needs the POT package: pip install pot")
        check_memory(n1, n2, "pot", with_cost=False)
        try:
            with warnings.catch_warnings():  # a stop short of the optimum is logged below
                warnings.simplefilter("ignore", UserWarning)
                value, log = emd2(w1, w2, cost, log=True)
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - translated: which solver, which size
            raise TransportError(
                f"POT failed on a {n1} x {n2} transport problem ({type(exc).__name__}: "
                f"{exc}); use the built-in solver (solver='simplex')"
            ) from exc
        if log.get("result_code") == 1:  # POT's OPTIMAL
            return float(value)
        logger.info("POT stopped before the optimum (%s); solving with HiGHS", log.get("warning"))
        return highs_transport_cost(w1, w2, cost)
    if solver != "highs":
        check_memory(n1, n2, "simplex", with_cost=False)
        try:
            value, _, pivots, optimal = network_simplex(
                np.ascontiguousarray(w1), np.ascontiguousarray(w2), cost
            )
        except MemoryError as exc:
            raise MemoryError(
                f"the built-in transport solver ran out of memory on a {n1} x {n2} problem: "
                "use shorter documents"
            ) from exc
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
    """:func:`transport_cost` by scipy's HiGHS (float64 arrays, ``n1, n2 >= 1``); a
    problem too large for the memory available is refused first (:func:`check_memory`),
    and a failure is a :class:`TransportError` that names it."""
    n1, n2 = len(w1), len(w2)
    check_memory(n1, n2, "highs", with_cost=False)
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
    try:
        result = linprog(cost.ravel(), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    except MemoryError as exc:
        raise MemoryError(
            f"HiGHS ran out of memory on a {n1} x {n2} transport problem: use shorter "
            "documents, or the built-in solver (solver='simplex')"
        ) from exc
    if result.status != 0:
        raise TransportError(
            f"HiGHS did not solve the {n1} x {n2} transport problem (status {result.status}: "
            f"{result.message}); it may have run out of memory: use shorter documents, or "
            "the built-in solver (solver='simplex')"
        )
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
    check_memory(len(words1), len(words2), "simplex" if SOLVER == "auto" else SOLVER)
    vectors1 = _document_vectors(kv, words1, norm)
    vectors2 = _document_vectors(kv, words2, norm)
    return transport_cost(weights1, weights2, cdist(vectors1, vectors2))


def _document_vectors(kv, words: list, norm: bool) -> np.ndarray:
    """The words' vectors (float64; with ``norm`` scaled to unit length in float32, as
    ``get_vector(norm=True)`` and gensim do), or a ValueError naming the words whose vector
    holds NaN or infinity, or (with ``norm``) is all zeros. A word without a row of its own
    (FastText's out-of-vocabulary words) takes its vector from ``get_vector``, as in gensim."""
    rows = np.array([kv.get_index(w, -1) for w in words], dtype=np.int64)
    if (rows < 0).any():
        raw = np.vstack([kv.get_vector(w) for w in words])
    else:
        raw = kv.vectors[rows]
    _refuse_words(
        words,
        ~np.isfinite(raw).all(axis=1),
        "hold NaN or infinite values: these KeyedVectors are damaged (a diverged training, "
        "or a file written from one); train again, or leave those words out of the documents",
    )
    if not norm:
        return raw.astype(np.float64)
    lengths = kv._current_norms()[rows] if (rows >= 0).all() else np.linalg.norm(raw, axis=1)
    _refuse_words(
        words,
        lengths == 0,
        "are all zeros: a zero vector has no direction, so norm=True (the default) cannot "
        "scale it to unit length; leave those words out of the documents, give them "
        "vectors, or call wmdistance(..., norm=False)",
    )
    return (raw / lengths[:, None]).astype(np.float64)


def _refuse_words(words: list, bad: np.ndarray, problem: str) -> None:
    """A ValueError naming the first five ``words`` marked ``bad``, whose vectors
    ``problem`` (nothing when none is marked)."""
    if bad.any():
        named = ", ".join(repr(w) for w in np.asarray(words, dtype=object)[bad][:5])
        raise ValueError(f"the vectors of {named} {problem}")
