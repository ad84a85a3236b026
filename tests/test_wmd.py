"""The exact transport solvers of ``wmdistance`` (POT's network simplex when importable,
scipy's HiGHS on request; the built-in one: tests/test_transport.py) give the same optimum,
at the document sizes users meet; POT stopping before the optimum falls back to HiGHS; gensim's ``WmdSimilarity`` runs on hsw2v vectors."""

import functools
import itertools

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from hsw2v import KeyedVectors
from hsw2v.keyedvectors import _wmd
from hsw2v.keyedvectors._wmd import transport_cost


def random_problem(n1, n2, seed):
    rng = np.random.default_rng(seed)
    w1, w2 = rng.random(n1), rng.random(n2)
    cost = cdist(rng.normal(size=(n1, 16)), rng.normal(size=(n2, 16)))
    return w1 / w1.sum(), w2 / w2.sum(), cost


@pytest.mark.parametrize("n1,n2", [(2, 2), (5, 5), (20, 7), (50, 50), (100, 100)])
def test_pot_and_highs_reach_the_same_optimum(n1, n2):
    pytest.importorskip("ot")
    w1, w2, cost = random_problem(n1, n2, seed=n1 * 1000 + n2)
    pot = transport_cost(w1, w2, cost, solver="pot")
    highs = transport_cost(w1, w2, cost, solver="highs")
    assert pot == pytest.approx(highs, rel=1e-9, abs=1e-12)


def test_both_solvers_agree_with_brute_force_on_an_assignment():
    cost = np.random.default_rng(3).random((5, 5))
    best = min(sum(cost[i, p[i]] for i in range(5)) for p in itertools.permutations(range(5)))
    for solver in ("highs", "pot") if _wmd.pot_emd2() else ("highs",):
        assert transport_cost([0.2] * 5, [0.2] * 5, cost, solver=solver) == pytest.approx(best / 5)


def test_auto_uses_the_built_in_simplex_and_pot_on_request():
    # the built-in simplex is the default with or without POT: as fast at 5-200 words, and
    # O(n) memory beside the costs where POT's bad_alloc aborted the process at 10,000
    from hsw2v._kernels._transport import network_simplex

    w1, w2, cost = random_problem(30, 40, seed=7)
    assert _wmd.SOLVER == "auto"
    assert transport_cost(w1, w2, cost) == network_simplex(w1, w2, cost)[0]  # bit for bit
    ot = pytest.importorskip("ot")
    assert transport_cost(w1, w2, cost, solver="pot") == float(ot.emd2(w1, w2, cost))
    assert transport_cost(w1, w2, cost) == pytest.approx(float(ot.emd2(w1, w2, cost)), abs=1e-12)


def test_pot_stopping_early_falls_back_to_highs(monkeypatch, caplog):
    ot = pytest.importorskip("ot")
    w1, w2, cost = random_problem(40, 40, seed=11)
    exact = transport_cost(w1, w2, cost, solver="highs")
    # the real POT, limited to one simplex iteration: it stops before the optimum
    monkeypatch.setattr(_wmd, "_POT_EMD2", [functools.partial(ot.emd2, numItermax=1)])
    with caplog.at_level("INFO", logger="hsw2v.keyedvectors._wmd"):
        assert transport_cost(w1, w2, cost, solver="pot") == pytest.approx(exact, rel=1e-9)
    assert "POT stopped before the optimum" in caplog.text


def test_bad_solver_name_is_refused():
    with pytest.raises(ValueError, match="solver must be one of 'auto', 'pot', 'simplex', 'highs'"):
        transport_cost([1.0], [1.0], np.zeros((1, 1)), solver="emd")


def test_gensim_wmd_similarity_runs_on_hsw2v_vectors():
    pytest.importorskip("ot")
    similarities = pytest.importorskip("gensim.similarities")
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    kv = KeyedVectors(8)
    kv.add_vectors(words, rng.normal(size=(40, 8)).astype(np.float32))
    corpus = [list(rng.choice(words, size=6)) for _ in range(5)]
    index = similarities.WmdSimilarity(corpus, kv, num_best=3)
    best = index[corpus[2]]
    assert best[0][0] == 2 and best[0][1] == pytest.approx(1.0)  # 1 / (1 + WMD), WMD = 0
    query = list(rng.choice(words, size=4))
    dists = [kv.wmdistance(query, doc) for doc in corpus]
    top = index[query]
    assert [i for i, _ in top] == list(np.argsort(dists)[:3])
