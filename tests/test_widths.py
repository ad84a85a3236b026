"""The vector primitives and the window kernel at every width their loops special-case.

``math/_vec.h`` and ``train/_window.h`` split a row of d floats into 16-float and 8-float vector steps
and a scalar tail (and the window kernel holds rows in registers at some widths), so each
twin is checked at the widths people train (50, 100, 200, 300) and at the edges of every
split: below, at and above multiples of 8 and 16. These tests run at whichever CPU level the
process is bound to; ``HSW2V_CPU=baseline|avx2|avx512`` runs them at another
(tests/test_dispatch.py compares every level with the baseline).
"""

import platform
import sys

import numpy as np
import pytest
from conftest import word2vec_trainer

from hsw2v._kernels import _inner
from hsw2v.huffman import build_huffman_tree

WIDTHS = (1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 50, 64, 100, 128, 200, 300, 301)


@pytest.mark.parametrize("d", WIDTHS)
def test_dot_and_axpy_at_every_width(d):
    rng = np.random.default_rng(d)
    x = rng.normal(size=d).astype(np.float32)
    y = rng.normal(size=d).astype(np.float32)
    exact = float(x.astype(np.float64) @ y.astype(np.float64))
    assert _inner.py_dot(x, y) == pytest.approx(exact, rel=1e-5, abs=1e-5 * np.sqrt(d))
    expected = (y.astype(np.float64) + np.float32(0.3) * x.astype(np.float64)).astype(np.float32)
    _inner.py_axpy(0.3, x, y)
    assert np.allclose(y, expected, rtol=1e-6, atol=1e-6)


def numpy_path(h, syn1, code, point, alpha):
    """f = y_j . h, g = (1 - code_j - sigmoid(f)) * alpha, work += g y_j, y_j += g h; float64."""
    syn1 = syn1.astype(np.float64)
    h = h.astype(np.float64)
    work = np.zeros_like(h)
    for c, p in zip(code, point, strict=True):
        g = (1 - c - 1 / (1 + np.exp(-(syn1[p] @ h)))) * alpha
        work += g * syn1[p]
        syn1[p] += g * h
    return syn1, work


@pytest.mark.parametrize("d", WIDTHS)
def test_fused_walk_at_every_width(d):
    """update_then_dot / update_last (the fused walk) against the float64 equations, and bit
    for bit against the reference walk built from the same primitives."""
    rng = np.random.default_rng(100 + d)
    tree = build_huffman_tree(np.sort(rng.integers(1, 1000, size=40))[::-1])
    syn1 = rng.normal(0, 0.3, size=(40, d)).astype(np.float32)
    h = rng.normal(0, 0.3, size=d).astype(np.float32)
    for word in (0, 39):
        code, point = tree.code(word).copy(), tree.point(word).copy()
        exp1, exp_work = numpy_path(h, syn1, code, point, 0.05)
        fused, ref = syn1.copy(), syn1.copy()
        work_f, loss_f = _inner.py_hs_path_fused(h.copy(), fused, code, point, 0.05, False)
        work_r, loss_r = _inner.py_hs_path(h, ref, code, point, 0.05)
        # the kernels' sigmoid is a 2048-entry table: ~1e-3 relative on g
        assert np.allclose(fused, exp1, atol=2e-4) and np.allclose(work_f, exp_work, atol=2e-4)
        assert np.array_equal(fused, ref) and np.array_equal(work_f, work_r)
        assert loss_f == pytest.approx(loss_r, rel=1e-6)  # f to rounding at tails
        h_applied = h.copy()
        _inner.py_hs_path_fused(h_applied, syn1.copy(), code, point, 0.05, True)
        assert np.allclose(h_applied, h + work_r, atol=1e-6)


def trainer_at(d, kernel, block=4, seed=5):
    rng = np.random.default_rng(seed)
    V = 50
    tree = build_huffman_tree(np.sort(rng.integers(1, 500, size=V))[::-1])
    syn0 = rng.uniform(-0.5, 0.5, size=(V, d)).astype(np.float32)
    syn1 = rng.normal(0, 0.2, size=(V, d)).astype(np.float32)
    trainer = word2vec_trainer(
        _inner.Trainer,
        syn0, syn1, tree.codes, tree.points, tree.lengths, np.full(V, 2**32 - 1, np.uint32),
        window=5, sg=1, cbow_mean=True, shrink_windows=False, compute_loss=True,
        walk=kernel, block=block,
    )  # fmt: skip
    return trainer, syn0, syn1


@pytest.mark.parametrize("d", WIDTHS)
@pytest.mark.parametrize("block", [1, 2, 3, 4])
def test_window_kernel_at_every_width(d, block):
    """The window kernel (blocks of contexts walking one path) against word2vec.c's pair by
    pair loop, the reference: the same updates to float rounding, at every width."""
    sentence = np.random.default_rng(7).permutation(50)[:20].astype(np.int32)
    ends = np.array([20], dtype=np.int64)
    win, win0, win1 = trainer_at(d, "window", block)
    seq, seq0, seq1 = trainer_at(d, "reference")
    start1 = seq1.copy()
    kept_w, loss_w = win.train_job(sentence, ends, 0.025, 0.025, 7)
    kept_s, loss_s = seq.train_job(sentence, ends, 0.025, 0.025, 7)
    assert kept_w == kept_s == 20
    assert np.allclose(win0, seq0, atol=3e-6) and np.allclose(win1, seq1, atol=3e-6)
    assert not np.allclose(seq1, start1, atol=1e-4)  # control: the job did train
    assert loss_w == pytest.approx(loss_s, rel=1e-5)


V16 = ["-DHSW2V_FORCE_V16", "-Wno-psabi"]  # psabi: 64-byte vectors without AVX-512
AVX2 = ["-mavx2", "-mfma"]
AVX512 = [*AVX2, "-mavx512f", "-mavx512cd", "-mavx512vl", "-mavx512bw", "-mavx512dq"]


def _cpu_has(flag: str) -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and flag in line.split() for line in f)
    except OSError:
        return False


@pytest.mark.skipif(sys.platform == "win32", reason="compiled with a GCC-style command line")
@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 flags")
@pytest.mark.parametrize(
    "flags",
    [V16, [*AVX2, *V16], AVX2, AVX512],
    ids=["v16-generic", "v16-on-avx2", "avx2", "avx512"],
)
def test_c_primitives_and_window_block_at_every_step_width(tmp_path, flags):
    """``tests/c/kernels_check.c`` (primitives and the window block at widths 1-300) built with
    the 16-float steps of the avx512 level against the plain scalar path. ``HSW2V_FORCE_V16``
    selects the 16-float code without AVX-512 instructions (GCC lowers the 64-byte vectors to
    the instructions the target has), so that code is checked on every x86-64 CPU; the real
    ``-mavx512f`` build runs only where the CPU has AVX-512."""
    if flags is AVX512 and not _cpu_has("avx512f"):
        pytest.skip("this CPU has no AVX-512")
    if flags is AVX2 and not (_cpu_has("avx2") and _cpu_has("fma")):
        pytest.skip("this CPU has no AVX2/FMA")
    if "-mavx2" in flags and not (_cpu_has("avx2") and _cpu_has("fma")):
        pytest.skip("this CPU has no AVX2/FMA")
    from test_portable_c import _run

    vector = _run(tmp_path, "vector", flags)
    scalar = _run(tmp_path, "scalar", ["-DHSW2V_NO_VECTOR_EXT", "-Wpedantic"])
    assert len(vector) == len(scalar) > 10_000
    assert np.isfinite(vector).all()
    np.testing.assert_allclose(scalar, vector, rtol=2e-6, atol=2e-5)
