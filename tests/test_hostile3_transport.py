"""Hostile input, round three: big transport problems (class 3). ``wmdistance`` chooses its
solver by size and memory, estimates memory before a solver starts, and never lets a
solver's failure become a signal or an untranslated message."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from hsw2v.keyedvectors import _wmd

_LIMITED = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    from hsw2v import KeyedVectors

    size = int(sys.argv[1])
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(10 * size)]
    kv = KeyedVectors(16)
    kv.add_vectors(words, rng.normal(size=(len(words), 16)).astype(np.float32))
    d1, d2 = list(rng.choice(words, size)), list(rng.choice(words, size))
    limit = int(sys.argv[2]) << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # what a small machine has
    print(kv.wmdistance(d1, d2))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS on Linux")
def test_a_3000_word_document_pair_is_solved_within_a_small_memory_limit():
    """With POT installed, the solver used to be POT, which gave up at this size, and the
    HiGHS fallback then ran out of memory ("HiGHS status code was not recognized"), or at
    10,000 words POT's std::bad_alloc aborted the process."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    result = subprocess.run(
        [sys.executable, "-c", _LIMITED, "3000", "1536"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-3000:])
    value = float(result.stdout.strip().splitlines()[-1])
    assert np.isfinite(value) and value > 0


def _problem(n, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.random(n), rng.random(n)
    cost = np.abs(rng.normal(size=(n, n)))
    return a / a.sum(), b / b.sum(), cost


@pytest.mark.parametrize("solver", ["pot", "highs"])
def test_a_problem_beyond_the_memory_available_is_refused_before_the_solver_starts(
    solver, monkeypatch
):
    if solver == "pot" and _wmd.pot_emd2() is None:
        pytest.skip("POT is not installed")
    monkeypatch.setattr(_wmd, "available_memory", lambda: 1 << 20)  # 1 MiB left
    started = []
    monkeypatch.setattr(_wmd, "linprog", lambda *a, **k: started.append(1))
    with pytest.raises(MemoryError, match=rf"needs about .* with the '{solver}' solver.*"):
        _wmd.transport_cost(*_problem(200), solver=solver)
    assert not started


def test_the_default_solver_needs_little_beyond_the_cost_matrix(monkeypatch):
    a, b, cost = _problem(300)
    exact = _wmd.transport_cost(a, b, cost, solver="highs")
    # room for the cost matrix and little else: the built-in simplex still runs
    monkeypatch.setattr(_wmd, "available_memory", lambda: 300 * 300 * 8 + (1 << 20))
    assert _wmd.transport_cost(a, b, cost) == pytest.approx(exact, abs=1e-9)


def test_wmdistance_refuses_documents_whose_cost_matrix_cannot_fit(monkeypatch):
    from hsw2v import KeyedVectors

    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(400)]
    kv = KeyedVectors(4)
    kv.add_vectors(words, rng.normal(size=(400, 4)).astype(np.float32))
    monkeypatch.setattr(_wmd, "available_memory", lambda: 1000)
    with pytest.raises(MemoryError, match="use shorter documents"):
        kv.wmdistance(words[:200], words[200:])


def test_a_highs_failure_is_translated(monkeypatch):
    class Failed:
        status, message, fun = 4, "HiGHS status code was not recognized", None

    monkeypatch.setattr(_wmd, "linprog", lambda *a, **k: Failed())
    with pytest.raises(_wmd.TransportError, match=r"HiGHS did not solve the 5 x 5 .*simplex"):
        _wmd.transport_cost(*_problem(5), solver="highs")


def test_a_pot_failure_is_translated(monkeypatch):
    if _wmd.pot_emd2() is None:
        pytest.skip("POT is not installed")

    def broken(*args, **kwargs):
        raise RuntimeError("std::bad_alloc")

    monkeypatch.setattr(_wmd, "_POT_EMD2", [broken])
    with pytest.raises(_wmd.TransportError, match=r"POT failed on a 6 x 6 .*solver='simplex'"):
        _wmd.transport_cost(*_problem(6), solver="pot")


@pytest.mark.parametrize("n", [2, 7, 40, 150])
def test_the_built_in_simplex_agrees_with_highs(n):
    a, b, cost = _problem(n, seed=n)
    b[1 :: max(2, n // 5)] = 0.0  # zero weights: degenerate pivots
    b /= b.sum()
    simplex = _wmd.transport_cost(a, b, cost, solver="simplex")
    assert simplex == pytest.approx(_wmd.transport_cost(a, b, cost, solver="highs"), abs=1e-9)
