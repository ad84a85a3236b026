"""Crash hunting with hypothesis: mutated model files (bytes and semantics: shapes, dtypes,
tree ids, NaN/inf, parameters), extreme parameters and odd corpora, each loaded or built,
then trained and queried in a subprocess (``tests/fuzz_models.py``), many per subprocess.
A death by signal, a hang or an undocumented exception fails the test and names the case.

About 3,000 file cases and 1,000 parameter cases, in 10 subprocesses (each start costs
about a second, so the cases come 600 file or 200 parameter cases to a subprocess, through
the runner of ``tests/child_batch.py``). ``pytest --fuzz-long``
(or ``HSW2V_FUZZ_LONG=1``) runs 25 times as many, with fresh random examples;
``python3 tests/fuzz_models.py --seconds N`` runs the same cases for as long as wanted.
"""

import json
import os
import random
import shutil
import tempfile

import pytest
from fuzz_models import (
    MUTATIONS,
    NAN_SAFE_KERNELS,
    SEED_KINDS,
    make_seeds,
    random_params_case,
    run_batch,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

LONG = os.environ.get("HSW2V_FUZZ_LONG") == "1"
BATCH = 600  # file cases per subprocess: start-up (~1 s) shared by many cases
FUZZ = settings(
    max_examples=125 if LONG else 5,
    deadline=None,
    derandomize=not LONG,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)


@pytest.fixture(scope="module")
def seeds():
    workdir = tempfile.mkdtemp(prefix="hsw2v-fuzz-seeds-")
    yield make_seeds(workdir)
    shutil.rmtree(workdir, ignore_errors=True)


def check(result):
    described = [
        f"{why}: {json.dumps(case, allow_nan=True)[:1500] if case else 'no case'}"
        for case, why in result["failures"]
    ]
    assert not described, "\n".join(described)


FILE_CASE = st.fixed_dictionaries(
    {
        "file": st.sampled_from(SEED_KINDS),
        "mutation": st.sampled_from(MUTATIONS),
        "rng": st.integers(0, 2**32 - 1),
    }
)


@FUZZ
@given(cases=st.lists(FILE_CASE, min_size=BATCH, max_size=BATCH))
def test_mutated_model_files_load_or_refuse_and_never_crash(seeds, cases):
    result = run_batch(cases, seeds)
    check(result)
    assert len(result["outcomes"]) == BATCH


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_extreme_parameters_and_corpora_train_or_refuse_and_never_crash(seeds, seed):
    rng = random.Random(seed)
    cases = [random_params_case(rng) for _ in range(BATCH // 3)]
    result = run_batch(cases, seeds)
    check(result)
    assert len(result["outcomes"]) == len(cases)
    # The generator is not all refusals: some cases train.
    assert any(o == "ok" for o in result["outcomes"].values()), result["outcomes"]


def test_the_harness_reports_a_crash_and_names_the_case(seeds, tmp_path):
    """A case that kills its worker is reported with the case, not lost in the batch."""
    cases = [{"file": "kv", "mutation": "value", "rng": i} for i in range(3)]
    cases.insert(1, {"params": {"vector_size": 4}, "corpus": "CRASH"})
    import fuzz_models

    real = fuzz_models.__file__
    shim = tmp_path / "fuzz_models.py"
    source = open(real).read().replace(
        '    if "params" in case:\n',
        '    if case.get("corpus") == "CRASH":\n'
        "        os.kill(os.getpid(), 11)\n"
        '    if "params" in case:\n',
    )
    shim.write_text(source)
    original = fuzz_models.__file__
    try:
        fuzz_models.__file__ = str(shim)
        result = run_batch(cases, seeds)
    finally:
        fuzz_models.__file__ = original
    assert result["failures"] == [(cases[1], "killed by signal 11")]


def test_nonfinite_weights_do_not_crash_the_kernels(seeds):
    """NaN, inf and huge values written into the weights, and high learning rates: loaded,
    then trained and queried, in subprocesses that must not die by a signal."""
    cases = []
    for rng in range(400):
        case = {"file": random.Random(rng).choice(SEED_KINDS[:3] + ("layer",)), "rng": rng}
        cases.append(dict(case, mutation="nonfinite"))
    rng = random.Random(7)
    params = [random_params_case(rng) for _ in range(40)]
    for case in params:
        case["params"]["alpha"] = rng.choice([2.0, 50.0, 1e6])
        case["params"]["min_alpha"] = 0.0
    assert NAN_SAFE_KERNELS  # the workers train these cases (tests/fuzz_models.py)
    check(run_batch(cases + params, seeds, timeout=300))
