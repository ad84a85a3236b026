"""The built-in network simplex of ``wmdistance`` (``hsw2v._kernels._transport``): the same
optimum as HiGHS (and POT where installed) to 1e-9 relative on random and adversarial problems
(ties, duplicate words, one-word documents, zero distances, degenerate and zero weights), a
feasible plan, the default without POT, and clear errors for problems no solver can answer."""

import functools
import itertools

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from hsw2v import KeyedVectors
from hsw2v._kernels._transport import network_simplex
from hsw2v.keyedvectors import _wmd
from hsw2v.keyedvectors._wmd import highs_transport_cost, transport_cost


def solve(w1, w2, cost):
    """The simplex's value, after checking its plan: non-negative, the right margins, and
    the value its own cost."""
    w1, w2 = np.asarray(w1, np.float64), np.asarray(w2, np.float64)
    cost = np.ascontiguousarray(cost, np.float64)
    value, plan, _, optimal = network_simplex(w1, w2, cost, return_plan=True)
    assert optimal
    assert plan.shape == cost.shape and (plan >= 0).all()
    np.testing.assert_allclose(plan.sum(axis=1), w1, rtol=0, atol=1e-14)
    np.testing.assert_allclose(plan.sum(axis=0), w2, rtol=0, atol=1e-14)
    assert value == pytest.approx(float((plan * cost).sum()), rel=1e-12, abs=1e-15)
    return value


def assert_optimum(w1, w2, cost):
    w1 = np.asarray(w1, np.float64) / np.sum(w1)
    w2 = np.asarray(w2, np.float64) / np.sum(w2)
    got = solve(w1, w2, cost)
    want = highs_transport_cost(w1, w2, np.asarray(cost, np.float64))
    scale = max(float(np.abs(cost).max()), 1e-300)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12 * scale)
    pot = _wmd.pot_emd2()
    if pot is not None:
        assert got == pytest.approx(float(pot(w1, w2, np.asarray(cost, np.float64))), rel=1e-9,
                                    abs=1e-12 * scale)
    return got


@pytest.mark.parametrize("seed", range(12))
def test_random_problems_reach_highs_optimum(seed):
    rng = np.random.default_rng(seed)
    n1, n2 = rng.integers(1, 40, size=2)
    cost = cdist(rng.normal(size=(n1, 16)), rng.normal(size=(n2, 16)))
    assert_optimum(rng.random(n1), rng.random(n2), cost)


@pytest.mark.parametrize("n", [5, 20, 50, 100, 200])
def test_document_sizes(n):
    rng = np.random.default_rng(n)
    cost = cdist(rng.normal(size=(n, 32)), rng.normal(size=(n + 3, 32)))
    assert_optimum(rng.integers(1, 4, n), rng.integers(1, 4, n + 3), cost)


@pytest.mark.parametrize("seed", range(8))
def test_ties_everywhere(seed):
    """Integer costs from {0, 1, 2} and integer counts: many optimal plans and many
    degenerate pivots (a basic flow of 0)."""
    rng = np.random.default_rng(100 + seed)
    n1, n2 = rng.integers(2, 30, size=2)
    cost = rng.integers(0, 3, size=(n1, n2)).astype(np.float64)
    assert_optimum(rng.integers(1, 3, n1), rng.integers(1, 3, n2), cost)


def test_degenerate_supplies():
    """Equal weights on both sides (an assignment: every basis has n - 1 zero flows) and
    supplies that are sums of demands (partial sums meet exactly)."""
    rng = np.random.default_rng(5)
    for n in (2, 3, 7, 30):
        cost = rng.random((n, n))
        got = assert_optimum(np.ones(n), np.ones(n), cost)
        if n <= 7:
            best = min(sum(cost[i, p[i]] for i in range(n)) for p in itertools.permutations(range(n)))
            assert got == pytest.approx(best / n, rel=1e-12)
    assert_optimum([2, 2, 4], [1, 1, 1, 1, 2, 2], rng.random((3, 6)))
    assert_optimum([0.25] * 4, [0.5, 0.5], np.ones((4, 2)))  # every plan optimal


def test_zero_weights_are_exact():
    rng = np.random.default_rng(6)
    cost = rng.random((6, 5))
    w1, w2 = np.array([0.0, 1, 0, 2, 0, 1]), np.array([1.0, 0, 0, 3, 0])
    got = assert_optimum(w1, w2, cost)
    keep1, keep2 = w1 > 0, w2 > 0
    assert got == pytest.approx(
        highs_transport_cost(w1[keep1] / 4, w2[keep2] / 4, cost[np.ix_(keep1, keep2)]), rel=1e-12
    )


def test_duplicates_and_zero_distances():
    """Duplicate words (equal cost rows and columns) and pairs at distance 0: the same
    document against itself, reordered, costs exactly 0."""
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(6, 8))
    doc = vectors[[0, 1, 1, 2, 3, 3, 3, 4, 5]]
    weights = rng.integers(1, 4, len(doc)).astype(np.float64)
    order = rng.permutation(len(doc))
    cost = cdist(doc, doc[order])
    w = weights / weights.sum()
    assert solve(w, w[order], cost) <= 1e-15
    assert_optimum(weights, weights[order], cost)
    assert_optimum(weights, rng.random(len(doc)), cost)


def test_one_word_documents():
    rng = np.random.default_rng(8)
    cost = rng.random((1, 9))
    w2 = rng.random(9)
    expected = float((cost[0] * w2 / w2.sum()).sum())
    assert solve([1.0], w2 / w2.sum(), cost) == pytest.approx(expected, rel=1e-12)
    assert solve(w2 / w2.sum(), [1.0], cost.T) == pytest.approx(expected, rel=1e-12)
    assert solve([1.0], [1.0], [[2.5]]) == 2.5


def test_all_costs_zero_gives_a_feasible_plan():
    assert solve([0.5, 0.5], [0.2, 0.3, 0.5], np.zeros((2, 3))) == 0.0


def test_auto_without_pot_uses_the_network_simplex(monkeypatch):
    rng = np.random.default_rng(9)
    w1, w2 = rng.random(30), rng.random(25)
    w1, w2 = w1 / w1.sum(), w2 / w2.sum()
    cost = rng.random((30, 25))
    monkeypatch.setattr(_wmd, "_POT_EMD2", [None])  # as where POT is not installed
    assert transport_cost(w1, w2, cost) == network_simplex(w1, w2, cost)[0]  # bit for bit
    assert transport_cost(w1, w2, cost, solver="simplex") == network_simplex(w1, w2, cost)[0]
    with pytest.raises(ImportError, match="pip install pot"):
        transport_cost(w1, w2, cost, solver="pot")


def test_giving_up_falls_back_to_highs(monkeypatch, caplog):
    rng = np.random.default_rng(10)
    w1, w2 = np.full(20, 0.05), np.full(20, 0.05)
    cost = rng.random((20, 20))
    limited = functools.partial(network_simplex, max_pivots=1)
    assert not limited(w1, w2, cost)[3]
    monkeypatch.setattr(_wmd, "network_simplex", limited)
    with caplog.at_level("INFO", logger="hsw2v.keyedvectors._wmd"):
        got = transport_cost(w1, w2, cost, solver="simplex")
    assert got == pytest.approx(highs_transport_cost(w1, w2, cost), rel=1e-9)
    assert "the network simplex stopped after 1 pivots; solving with HiGHS" in caplog.text


@pytest.mark.parametrize(
    "w1,w2,cost,message",
    [
        ([0.5, 0.5], [1.0], [[1.0], [np.nan]], r"non-finite value \(nan at row 1, column 0\)"),
        ([0.5, 0.5], [1.0], [[np.inf], [1.0]], r"non-finite value \(inf at row 0, column 0\)"),
        ([1.5, -0.5], [1.0], [[1.0], [1.0]], "weights1 must be finite and non-negative"),
        ([1.0], [np.nan], [[1.0]], "weights2 must be finite and non-negative"),
        ([0.5, 0.5], [0.9], [[1.0], [1.0]], "same positive sum, got 1.0 and 0.9"),
        ([0.0, 0.0], [0.0], [[1.0], [1.0]], "same positive sum"),
        ([], [1.0], np.zeros((0, 1)), "non-empty"),
        ([0.5, 0.5], [1.0], [[1.0, 2.0]], r"cost must be 2 x 1, got \(1, 2\)"),
    ],
)
def test_bad_problems_are_refused_clearly(w1, w2, cost, message):
    for solver in ("simplex", "highs", "auto"):
        with pytest.raises(ValueError, match=message):
            transport_cost(w1, w2, np.asarray(cost, np.float64), solver=solver)


def test_wmdistance_with_each_solver():
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(60)]
    kv = KeyedVectors(10)
    kv.add_vectors(words, rng.normal(size=(60, 10)).astype(np.float32))
    doc1, doc2 = list(rng.choice(words, 25)), list(rng.choice(words, 18))
    values = {}
    for solver in ("simplex", "highs"):
        _wmd.SOLVER = solver
        try:
            values[solver] = kv.wmdistance(doc1, doc2)
        finally:
            _wmd.SOLVER = "auto"
    assert values["simplex"] > 0
    assert values["simplex"] == pytest.approx(values["highs"], rel=1e-9)
    assert kv.wmdistance(doc1, list(reversed(doc1))) == pytest.approx(0.0, abs=1e-12)
