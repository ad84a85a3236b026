"""CPU dispatch (hsw2v._cpu): which level is chosen, what the kernel names bind to, and every
compiled level against the baseline (each in its own process, HSW2V_CPU forcing it)."""

import contextlib
import importlib
import io
import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import hsw2v
from hsw2v import _cpu
from hsw2v.cli import main as cli_main

ALL = ["baseline", "avx2", "avx512"]
HASWELL = {"AVX2": True, "FMA3": True, "AVX512F": False}
SKYLAKE_X = dict.fromkeys(_cpu.REQUIRES["avx512"], True)


def run_python(code: str, level: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop(_cpu.ENV, None)
    if level is not None:
        env[_cpu.ENV] = level
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )


def test_automatic_choice_is_the_best_level_the_cpu_runs():
    assert _cpu.choose(None, ALL, {}) == ("baseline", "best level this CPU supports")
    assert _cpu.choose(None, ALL, HASWELL)[0] == "avx2"
    assert _cpu.choose(None, ALL, SKYLAKE_X)[0] == "avx512"
    assert _cpu.choose(None, ["baseline"], SKYLAKE_X)[0] == "baseline"  # e.g. an arm64 build
    assert _cpu.choose(None, ["native"], {}) == ("native", "the one level of this build")


def test_forced_level_is_used_when_the_cpu_runs_it():
    assert _cpu.choose("avx2", ALL, SKYLAKE_X) == ("avx2", "forced by HSW2V_CPU")
    assert _cpu.choose("baseline", ALL, SKYLAKE_X)[0] == "baseline"


def test_forced_level_the_cpu_lacks_is_refused_naming_the_features():
    with pytest.raises(ImportError, match=r"avx512 needs CPU features .*AVX512F.*can run: "):
        _cpu.choose("avx512", ALL, HASWELL)


def test_unknown_or_absent_levels_are_refused():
    with pytest.raises(ImportError, match="'sse4' is not a level; use one of baseline, avx2"):
        _cpu.choose("sse4", ALL, SKYLAKE_X)
    with pytest.raises(ImportError, match="does not hold .*it has: baseline"):
        _cpu.choose("avx2", ["baseline"], SKYLAKE_X)
    with pytest.raises(ImportError, match="kernels are missing"):
        _cpu.choose(None, [], SKYLAKE_X)


def test_kernel_names_are_the_chosen_levels_modules():
    assert _cpu.level in _cpu.compiled_levels()
    for name in _cpu.KERNELS:
        module = importlib.import_module(f"hsw2v._kernels.{name}")
        assert module.__name__ == f"hsw2v._cpu.{_cpu.level}.{name}"
        assert sys.modules[f"hsw2v._kernels.{name}"] is module
        assert getattr(hsw2v._kernels, name) is module
    # the automatic choice is the best compiled level that this CPU runs
    features = _cpu.cpu_features()
    if os.environ.get(_cpu.ENV) is None:
        best = [n for n in _cpu.compiled_levels() if not _cpu.missing_features(n, features)]
        assert _cpu.level == best[-1]


def test_build_holds_the_levels_of_its_target():
    levels = _cpu.compiled_levels()
    if levels == ["native"]:
        pytest.skip("an HSW2V_NATIVE=1 build holds one level")
    expected = ALL if platform.machine().lower() in ("x86_64", "amd64") else ["baseline"]
    assert levels == expected
    assert set(_cpu.build_config()["levels"]) == set(expected)


def test_import_hsw2v_loads_no_kernel_and_no_scipy():
    done = run_python(
        "import sys, hsw2v; print(sorted(m for m in sys.modules if m.startswith("
        "('scipy', 'hsw2v._kernels._', 'hsw2v._cpu.'))))"
    )
    assert done.returncode == 0, done.stderr
    assert "scipy" not in done.stdout and "._inner" not in done.stdout, done.stdout


def test_environment_variable_forces_a_level_or_is_refused_clearly():
    first = _cpu.compiled_levels()[0]  # baseline, or native in an HSW2V_NATIVE=1 build
    done = run_python("import hsw2v._kernels._inner as m; print(m.__name__)", level=first)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"hsw2v._cpu.{first}._inner"
    done = run_python("import hsw2v", level="sse4")
    assert done.returncode == 1, done.stderr  # an exception, not a crash
    assert "HSW2V_CPU='sse4' is not a level" in done.stderr


LEVEL_RUN = """
import json, numpy as np
from hsw2v import Word2Vec, _cpu
from hsw2v._kernels import _inner, _query, _layer
rng = np.random.default_rng(0)
V, d = 40, 50
syn1 = rng.standard_normal((V - 1, d)).astype(np.float32)
h = rng.standard_normal(d).astype(np.float32)
codes = rng.integers(0, 2, (V, 6)).astype(np.uint8)
points = rng.integers(0, V - 1, (V, 6)).astype(np.int32)
lengths = rng.integers(1, 7, V).astype(np.int32)
logp = _inner.log_prob_all(h, syn1, codes, points, lengths)
dot = _query.py_dot(h.astype(np.float64), syn1[0])
sentences = [[f"w{(i * 7 + j) % 30}" for j in range(8)] for i in range(300)]
norms = {}
for sg in (0, 1):
    m = Word2Vec(sentences, vector_size=24, min_count=1, sg=sg, workers=1, seed=3, epochs=2)
    norms[sg] = float(np.linalg.norm(m.wv.vectors))
# corpus_file: the reader, built once, trains through its cimport of this level's Trainer
import os, tempfile
from hsw2v._kernels import _corpus_file
path = os.path.join(tempfile.mkdtemp(), "c.txt")
with open(path, "w") as f:
    f.write("\\n".join(" ".join(s) for s in sentences) + "\\n")
m = Word2Vec(corpus_file=path, vector_size=24, min_count=1, sg=1, workers=1, seed=3, epochs=2)
norms["corpus_file"] = float(np.linalg.norm(m.wv.vectors))
same = bool(np.array_equal(m.wv.vectors, Word2Vec(
    sentences, vector_size=24, min_count=1, sg=1, workers=1, seed=3, epochs=2).wv.vectors))
try:  # the benchmark-only walks, where built: a subclass of this level's Trainer
    from hsw2v._kernels import _bench_walks
    bench = [_bench_walks.__name__, _bench_walks.Trainer.__mro__[1] is _inner.Trainer]
except ImportError:  # "cannot import name": not built
    bench = None
print(json.dumps({"level": _cpu.level, "module": _layer.__name__, "logp": logp.tolist(),
                  "dot": dot, "norms": norms, "corpus_file_is_iterable": same,
                  "bench": bench}))
"""


def test_every_runnable_level_computes_what_the_baseline_computes():
    features = _cpu.cpu_features()
    levels = [n for n in _cpu.compiled_levels() if not _cpu.missing_features(n, features)]
    if len(levels) < 2:
        pytest.skip(f"this build or CPU runs one level only ({levels})")
    results = {}
    for name in levels:
        done = run_python(LEVEL_RUN, level=name)
        assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
        results[name] = json.loads(done.stdout.strip().splitlines()[-1])
        assert results[name]["level"] == name
        assert results[name]["module"] == f"hsw2v._cpu.{name}._layer"
        # _corpus_file's typed cimport of the Trainer resolves to this level's type
        assert results[name]["corpus_file_is_iterable"], name
        if results[name]["bench"] is not None:
            assert results[name]["bench"] == [f"hsw2v._cpu.{name}._bench_walks", True]
    base = results[levels[0]]
    for name in levels[1:]:
        r = results[name]
        # the same float32 arithmetic in another order (wider vectors, fused multiply-add)
        np.testing.assert_allclose(r["logp"], base["logp"], rtol=1e-5, atol=1e-5)
        assert r["dot"] == pytest.approx(base["dot"], rel=1e-5)
        for sg in ("0", "1", "corpus_file"):
            assert np.isfinite(r["norms"][sg])
            assert r["norms"][sg] == pytest.approx(base["norms"][sg], rel=0.02)


def test_show_config_and_info_build_describe_this_installation():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        hsw2v.show_config()
    text = out.getvalue()
    assert text.startswith(f"hsw2v {hsw2v.__version__} ")
    assert f"kernel level:    {_cpu.level} (" in text
    assert f"levels compiled: {', '.join(_cpu.compiled_levels())}" in text
    assert "BLAS:" in text and "unknown" not in text.split("BLAS:")[1].splitlines()[0]
    for name, flags in _cpu.build_config()["levels"].items():
        assert f"  {name:<13} {' '.join(flags)}" in text
    if "avx512" in _cpu.compiled_levels() and _cpu.build_config()["compiler"] != "msvc":
        assert "-mavx512f" in text and "-march=native" not in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["info", "--build"]) == 0
    assert out.getvalue() == text


@pytest.mark.parametrize("level", ["baseline", "avx2", "avx512"])
def test_importing_a_level_module_directly_never_kills_the_process(level):
    """Documentation builders and test collectors import every submodule: a level this CPU
    cannot run must be refused with an ImportError, not load and die with SIGILL."""
    if level not in _cpu.compiled_levels():
        pytest.skip(f"the {level} level is not compiled in this build")
    code = (
        "import importlib, sys\n"
        f"try:\n    importlib.import_module('hsw2v._cpu.{level}._inner')\n"
        "except ImportError as e:\n    print('refused:', e); sys.exit(3)\n"
        "print('loaded')\n"
    )
    result = run_python(code)
    assert result.returncode in (0, 3), (result.returncode, result.stderr)  # -4 is SIGILL
    runnable = not _cpu.missing_features(level, _cpu.cpu_features())
    if runnable:
        assert result.returncode == 0 and "loaded" in result.stdout, result.stderr
    else:
        assert result.returncode == 3, result.stdout
        assert "lacks" in result.stdout and "import hsw2v instead" in result.stdout
