"""The path walk is chosen, not a parameter: ``kernel=`` is deprecated and ignored, a saved
model that carries it still loads, and tests and benchmarks select a walk through the
``HSW2V_KERNEL`` switch (``hsw2v.running.trainer.KERNEL``)."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import bench_walks, word2vec_trainer

from hsw2v import Word2Vec
from hsw2v.running import trainer as running_trainer

ROOT = Path(__file__).resolve().parent.parent
rng = np.random.default_rng(4)
SENTENCES = [[f"w{j}" for j in rng.integers(0, 50, size=15)] for _ in range(300)]
SETTINGS = dict(vector_size=16, min_count=1, workers=1, seed=2, epochs=1, sg=1)


def train(**extra):
    return Word2Vec(SENTENCES, **SETTINGS, **extra)


def test_kernel_argument_warns_and_is_ignored():
    plain = train()
    with pytest.warns(DeprecationWarning, match="kernel=.*deprecated and ignored"):
        given = train(kernel="loop")
    assert given.kernel == "auto"
    np.testing.assert_array_equal(given.wv.vectors, plain.wv.vectors)
    np.testing.assert_array_equal(given.syn1, plain.syn1)


def test_the_switch_selects_another_walk(training_kernel):
    """Control for the test above: "loop" really trains differently (to rounding), so equal
    bits there mean the argument was ignored."""
    plain = train()
    training_kernel("loop")
    loop = train()
    assert not np.array_equal(loop.wv.vectors, plain.wv.vectors)
    np.testing.assert_allclose(loop.wv.vectors, plain.wv.vectors, atol=1e-4)


def test_no_warning_without_the_argument():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        train()


def test_an_unknown_kernel_is_still_refused():
    with pytest.raises(ValueError, match="kernel must be"):
        train(kernel="fast")


def test_a_saved_model_that_carries_a_kernel_loads_and_trains(tmp_path):
    model = train()
    model.kernel = "blas"  # as a file written when kernel= was a parameter
    model.save(tmp_path / "m.hsw2v")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        loaded = Word2Vec.load(tmp_path / "m.hsw2v")
    assert loaded.kernel == "blas"
    assert running_trainer.walk_variant(loaded) == "window"  # the saved choice is ignored
    loaded.train(SENTENCES, total_examples=len(SENTENCES), epochs=1)
    assert np.isfinite(loaded.wv.vectors).all()


def run_python(code, kernel):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT),
               os.environ.get("PYTHONPATH")))), HSW2V_KERNEL=kernel)  # fmt: skip
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def test_the_environment_switch_is_read_at_import():
    bench_walks()  # "blas" below is a benchmark-only walk: skipped where this build lacks it
    code = (
        "from hsw2v import Word2Vec\n"
        "from hsw2v.running import trainer as running_trainer\n"
        "m = Word2Vec([['a', 'b', 'c']] * 20, vector_size=8, min_count=1, workers=1)\n"
        "print(running_trainer.WALK, running_trainer.walk_variant(m))"
    )
    done = run_python(code, "blas")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["blas", "blas"]
    bad = run_python(code, "fast")
    assert bad.returncode == 1 and "HSW2V_KERNEL must be one of" in bad.stderr


def test_cli_kernel_flag_is_accepted_with_a_note(tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(" ".join(s) for s in SENTENCES) + "\n")
    args = ["train", "c.txt", "-o", "m.hsw2v", "--size", "8", "--epochs", "1", "--min-count",
            "1", "--no-progress", "--kernel", "loop"]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT),
               os.environ.get("PYTHONPATH")))))  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "hsw2v", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--kernel is deprecated and ignored" in done.stderr
    assert "--kernel" not in subprocess.run(
        [sys.executable, "-m", "hsw2v", "train", "--help"], env=env, capture_output=True,
        text=True, timeout=60).stdout  # fmt: skip


def test_a_benchmark_only_walk_missing_from_the_build_is_a_clear_error(monkeypatch):
    """Every wheel, and a source build without HSW2V_BENCH_WALKS=1, lacks the "loop" and
    "blas" walks: selecting one says how to build them (the module's absence is simulated)."""
    monkeypatch.setitem(sys.modules, "hsw2v._kernels._bench_walks", None)
    monkeypatch.setattr(running_trainer, "WALK", "loop")
    with pytest.raises(ValueError, match=r"HSW2V_BENCH_WALKS=1 python3 setup.py build_ext"):
        train()


def test_the_shipped_trainer_refuses_a_benchmark_only_walk():
    from hsw2v._kernels import _inner

    args = (np.zeros((2, 4), np.float32), np.zeros((1, 4), np.float32),
            np.zeros((2, 1), np.uint8), np.zeros((2, 1), np.int32), np.ones(2, np.int32),
            np.zeros(2, np.uint32))  # fmt: skip
    with pytest.raises(ValueError, match=r"'blas' walk is benchmark-only.*HSW2V_BENCH_WALKS=1"):
        word2vec_trainer(_inner.Trainer, *args, window=2, sg=True, walk="blas")
    word2vec_trainer(_inner.Trainer, *args, window=2, sg=True, walk="reference")  # control: the arrays are fine
