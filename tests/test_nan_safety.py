"""NaN and divergence: no float value may become an index, and divergence is never silent.

Training that diverges (a learning rate far too high, or a NaN already in the weights) used to
read the sigmoid table at ``(int)NaN`` and kill the process. The scenarios run in a child
interpreter (``tests/child_batch.py``, many to one start) and fail on death by a signal; a scenario passes when training either ends with
finite weights or stops with :class:`hsw2v.divergence.TrainingDivergedError`.
"""

import os
import re
import subprocess
import sys

import child_batch
import numpy as np
import pytest
from conftest import bench_walks

from hsw2v import Word2Vec
from hsw2v.divergence import TrainingDivergedError
from hsw2v.layer import HierarchicalSoftmax

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PRELUDE = """
import numpy as np
from hsw2v import Word2Vec

rng = np.random.default_rng(0)
S = [[f"w{j}" for j in rng.integers(0, 300, size=20)] for _ in range(2000)]


def outcome(model):
    arrays = [model.wv.vectors]
    arrays += [a for a in (getattr(model, "syn1", None), getattr(model, "syn1neg", None))
               if a is not None and a.size]
    return "finite" if all(np.isfinite(a).all() for a in arrays) else "nonfinite"
"""

SCENARIOS = {
    "cbow_hs": "outcome(Word2Vec(S, alpha=1.0, vector_size=50, epochs=3, workers=1, sg=0))",
    "sg_hs": "outcome(Word2Vec(S, alpha=1.0, vector_size=50, epochs=3, workers=1, sg=1))",
    "cbow_ns": (
        "outcome(Word2Vec(S, alpha=1.0, vector_size=50, epochs=3, workers=1, sg=0, hs=0,"
        " negative=5))"
    ),
    "sg_ns": (
        "outcome(Word2Vec(S, alpha=1.0, vector_size=50, epochs=3, workers=1, sg=1, hs=0,"
        " negative=5))"
    ),
    "sg_hs_2_workers": "outcome(Word2Vec(S, alpha=0.5, vector_size=50, epochs=3, workers=2, sg=1))",
    "sg_fused_kernel": (
        "outcome(Word2Vec(S, alpha=1.0, vector_size=50, epochs=3, workers=1, sg=1,"
        " kernel='fused'))"
    ),
    "sg_loop_kernel": (
        "outcome(Word2Vec(S, alpha=1.0, vector_size=50, epochs=3, workers=1, sg=1,"
        " kernel='loop'))"
    ),
    "cbow_blas_kernel": (
        "outcome(Word2Vec(S, alpha=1.0, vector_size=50, epochs=3, workers=1, sg=0,"
        " kernel='blas'))"
    ),
    "corpus_file": (
        "path = scratch + '/c.txt'\n"
        "open(path, 'w').write('\\n'.join(' '.join(s) for s in S))\n"
        "outcome(Word2Vec(corpus_file=path, alpha=1.0, vector_size=50, epochs=3,"
        " workers=2, sg=1))"
    ),
    # a NaN in a saved model: refused before training (the kernels' own safety is tested
    # below, with the check bypassed)
    "nan_in_saved_model": (
        "m = Word2Vec(S[:200], vector_size=20, epochs=1, workers=1)\n"
        "m.wv.vectors[0, 0] = np.nan\n"
        "path = scratch + '/m.hsw2v'\n"
        "m.save(path)\n"
        "m = Word2Vec.load(path)\n"
        "m.train(S[:200], total_examples=200, epochs=1)\n"
        "outcome(m)"
    ),
}

# A NaN planted in the weights reaches every kernel (train() refuses non-finite weights up
# front, so that check is bypassed here): each must stop with the divergence error, not crash.
PLANTED = {
    "sg_window": "sg=1, kernel='window', workers=1",
    "sg_fused": "sg=1, kernel='fused', workers=1",
    "sg_loop": "sg=1, kernel='loop', workers=1",
    "sg_blas": "sg=1, kernel='blas', workers=1",
    "cbow_fused": "sg=0, kernel='fused', workers=1",
    "cbow_loop": "sg=0, kernel='loop', workers=1",
    "sg_reference": "sg=1, kernel='reference', workers=1",
    "sg_ns": "sg=1, hs=0, negative=5, workers=1",
    "cbow_ns": "sg=0, hs=0, negative=5, workers=1",
    "sg_hs_ns": "sg=1, hs=1, negative=3, workers=1",
    "sg_2_workers": "sg=1, workers=2",
    "cbow_2_workers": "sg=0, workers=2",
}
WHERE = ("wv.vectors", "syn1", "inf")


def planted_body(name, where):
    settings = PLANTED[name]
    if where == "syn1" and "hs=0" in settings:
        where = "syn1neg"
    target = {
        "wv.vectors": "m.wv.vectors[m.wv.key_to_index['w7'], 3] = np.nan",
        "syn1": "m.syn1[len(m.wv) - 2, 5] = np.nan",  # the root: on every path
        "syn1neg": "m.syn1neg[:, 5] = np.nan",
        "inf": "m.wv.vectors[m.wv.key_to_index['w7'], :] = np.inf",
    }[where]
    return (
        f"m = Word2Vec(S[:300], vector_size=20, epochs=1, seed=3, {settings})\n"
        f"{target}\n"
        "m._check_finite_weights = lambda: None\n"
        "m.train(S[:300], total_examples=300, epochs=1)\n"
        "outcome(m)"
    )


CORPUS_FILE_PLANTED = (
    "path = scratch + '/c.txt'\n"
    "open(path, 'w').write('\\n'.join(' '.join(s) for s in S))\n"
    "m = Word2Vec(corpus_file=path, vector_size=20, epochs=1, workers=2, sg=1)\n"
    "m.syn1[len(m.wv) - 2, 5] = np.nan\n"
    "m._check_finite_weights = lambda: None\n"
    "m.train(corpus_file=path, total_words=m.corpus_total_words, epochs=1)\n"
    "outcome(m)"
)


def as_code(body):
    """A scenario as a code case of ``tests/child_batch.py``: its ``kernel='NAME'`` selects
    the path walk (the ``HSW2V_KERNEL`` switch, not a parameter; ``auto`` otherwise), its last
    line's outcome is the result, and ``scratch`` is the case's own folder."""
    kernel = re.search(r", kernel='(\w+)'", body)
    lines = re.sub(r", kernel='\w+'", "", body).splitlines()
    lines[-1] = "result = " + lines[-1]
    switch = f"running_trainer.WALK = {kernel.group(1) if kernel else 'auto'!r}"
    return "\n".join(["from hsw2v.running import trainer as running_trainer", switch, *lines])


def _all_cases():
    cases = {f"scenario-{n}": body for n, body in SCENARIOS.items()}
    cases |= {f"planted-{n}-{w}": planted_body(n, w) for n in PLANTED for w in WHERE}
    cases["planted-corpus-file"] = CORPUS_FILE_PLANTED
    return cases


def run_all(cases, scratch_dir):
    """``{name: outcome}`` of code cases (``{"name", "code"}``) run many to a fresh
    interpreter (``tests/child_batch.py``): after a death by a signal or a hang, recorded on
    its case (``killed by signal N``), the cases after it run in a new interpreter."""
    todo, found = list(cases), {}
    while todo:
        batch = child_batch.run_batch(child_batch.__file__, todo, timeout=600,
                                      job={"prelude": PRELUDE}, scratch_dir=scratch_dir)
        for index, outcome in batch["outcomes"].items():
            found[todo[index]["name"]] = outcome
        for case, why in batch["failures"]:
            if case is None:  # the worker failed outside any case: every case left has it
                for left in todo:
                    found.setdefault(left["name"], why)
            else:  # a death or a hang in this case
                found.setdefault(case["name"], why)
        todo = [case for case in todo if case["name"] not in found]
    return found


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Every scenario's outcome, all run in one interpreter start (each used to have its own:
    some 50 starts)."""
    cases = [{"name": name, "code": as_code(body)} for name, body in _all_cases().items()]
    return run_all(cases, str(tmp_path_factory.getbasetemp()))


def test_the_runner_pins_a_crash_on_its_case_and_runs_the_rest(tmp_path):
    crash = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"
    cases = [{"name": "before", "code": "result = 'fine'"}, {"name": "crash", "code": crash},
             {"name": "after", "code": "result = outcome(Word2Vec(S[:20], min_count=1))"}]
    assert run_all(cases, str(tmp_path)) == {
        "before": "fine", "crash": "killed by signal 11", "after": "finite"}


def _outcome(outcomes, name):
    assert name in outcomes, f"{name}: not run"
    return outcomes[name]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_diverging_or_nan_training_never_crashes(name, outcomes):
    last = _outcome(outcomes, f"scenario-{name}")
    # finite weights, or a loud stop; a load that refuses the NaN is also a clear outcome
    assert last == "finite" or last.startswith(
        ("raised TrainingDivergedError", "raised ValueError")
    ), last


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_nan_in_the_weights_stops_every_kernel(name, where, outcomes):
    if name.endswith(("_loop", "_blas")):
        bench_walks()  # skips where this build does not hold the benchmark-only walks
    assert _outcome(outcomes, f"planted-{name}-{where}").startswith(
        "raised TrainingDivergedError")


def test_a_nan_in_a_corpus_file_run_stops_every_range(outcomes):
    assert _outcome(outcomes, "planted-corpus-file").startswith("raised TrainingDivergedError")


TWINS = """
import numpy as np
from hsw2v._kernels import _inner, _layer, _query
try:  # the benchmark-only walks, where this build holds them
    from hsw2v._kernels import _bench_walks as walks
except ImportError:  # "cannot import name": not built
    walks = None

nan, inf = float("nan"), float("inf")
rng = np.random.default_rng(0)
for kernel_sigmoid in (_inner.py_sigmoid, _layer.py_sigmoid_exact):
    assert np.isnan(kernel_sigmoid(nan))
    assert kernel_sigmoid(inf) == 1.0 and kernel_sigmoid(-inf) == 0.0
    assert kernel_sigmoid(1e38) == 1.0 and kernel_sigmoid(-1e38) == 0.0
assert np.isnan(_query.py_neg_log_sigmoid(nan))
assert _query.py_neg_log_sigmoid(inf) == 0.0 and _query.py_neg_log_sigmoid(-inf) == inf
syn1 = rng.standard_normal((4, 8)).astype(np.float32)
code = np.array([0, 1, 1], dtype=np.uint8)
point = np.array([3, 1, 0], dtype=np.int32)
for bad in (nan, inf, -inf):
    h = np.full(8, bad, dtype=np.float32)
    work, loss = _inner.py_hs_path(h, syn1.copy(), code, point, 0.5)
    assert not np.isfinite(loss) or bad == inf
    for use_blas in (False, True) if walks else ():
        work, loss = walks.py_hs_path(h, syn1.copy(), code, point, 0.5, use_blas)
        assert not np.isfinite(loss) or bad == inf
    work, loss = _inner.py_hs_path_fused(h.copy(), syn1.copy(), code, point, 0.5, True)
    for kernel in ("fused", "reference"):
        _inner.py_ns_path(h, syn1.copy(), np.array([0, 2, 3], dtype=np.int32), 0.5, kernel)
    for kernel in ("loop", "blas") if walks else ():
        walks.py_ns_path(h, syn1.copy(), np.array([0, 2, 3], dtype=np.int32), 0.5, kernel)
    _layer.py_path_step(h, syn1.copy(), code, point, 0.5)
print("ok")
"""


def test_twins_take_nan_and_inf_without_crashing():
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-c", TWINS], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}"
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_nan_weights_are_refused_before_training():
    rng = np.random.default_rng(0)
    S = [[f"w{j}" for j in rng.integers(0, 50, size=10)] for _ in range(100)]
    m = Word2Vec(S, vector_size=8, epochs=1, workers=1)
    m.wv.vectors[2, 1] = np.inf
    before = m.wv.vectors.copy()
    with pytest.raises(ValueError, match="NaN or infinite.*prepare_weights"):
        m.train(S, total_examples=len(S), epochs=1)
    np.testing.assert_array_equal(m.wv.vectors, before)  # nothing trained
    m.prepare_weights()
    m.train(S, total_examples=len(S), epochs=1)
    assert np.isfinite(m.wv.vectors).all()


def test_divergence_error_says_what_to_change():
    rng = np.random.default_rng(0)
    S = [[f"w{j}" for j in rng.integers(0, 300, size=20)] for _ in range(2000)]
    with pytest.raises(TrainingDivergedError, match="alpha") as info:
        Word2Vec(S, alpha=5.0, vector_size=50, epochs=3, workers=2, sg=1, seed=1)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, FloatingPointError)
    assert sum(err.nonfinite_rows.values()) > 0


@pytest.mark.parametrize("workers", [1, 2])
def test_layer_fit_divergence_stops_and_restores_the_weights(workers):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 20)).astype(np.float32)
    y = rng.integers(0, 10, size=2000)
    layer = HierarchicalSoftmax.balanced(10, dim=8)
    layer.fit(X, y, epochs=1, lr=0.1, workers=workers)  # scaled: trains
    before = (layer.input_weights.copy(), layer.weights.copy(), list(layer.history))
    with pytest.raises(TrainingDivergedError, match="Scale the features.*lower lr") as info:
        layer.fit(X * 100, y, epochs=3, lr=0.5, workers=workers)  # unscaled: diverges
    assert info.value.epoch == 0 and info.value.nonfinite_rows["weights"] > 0
    np.testing.assert_array_equal(layer.input_weights, before[0])
    np.testing.assert_array_equal(layer.weights, before[1])
    assert layer.history == before[2]
    layer.fit(X, y, epochs=1, lr=0.1, workers=workers)  # and it can go on
    assert np.isfinite(layer.history[-1])
