"""The kernels' plain-C path, the one compilers without GCC's vector extensions take (MSVC).

``math/_vec.h`` and ``train/_window.h`` write their loops with GCC/Clang 8-float vectors and fall back to
scalar loops elsewhere. No MSVC runs here, so ``tests/c/kernels_check.c`` is compiled twice
with this machine's C compiler, as is and with ``-DHSW2V_NO_VECTOR_EXT`` (which selects the
scalar path, as MSVC would get it, and adds ``-Wpedantic``), and both print every result of
the primitives and of the skip-gram window block (1 to 4 contexts, 8 sizes from 1 to 300, lock
factors): the scalar path must give the same numbers to float rounding.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import c_compiler

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "c" / "kernels_check.c"

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="compiled with a GCC-style command line"
)


_NUMBERS: dict[tuple[str, ...], np.ndarray] = {}  # flags -> the check's output, once a session


def _run(tmp_path: Path, name: str, flags: list[str]) -> np.ndarray:
    """Build ``tests/c/kernels_check.c`` with ``flags`` and return the numbers it prints; a
    build with the same flags runs once per session (the sources do not change meanwhile:
    the scalar reference serves every width test, the default build two tests)."""
    compiler = c_compiler()
    if compiler is None:
        pytest.skip("no C compiler on PATH")
    if tuple(flags) in _NUMBERS:
        return _NUMBERS[tuple(flags)].copy()
    exe = tmp_path / name
    built = subprocess.run(
        [compiler, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror",
         "-Wno-maybe-uninitialized", *flags, f"-I{ROOT / 'hsw2v' / '_kernels'}", str(SOURCE), "-o",
         str(exe), "-lm"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    _NUMBERS[tuple(flags)] = np.array(ran.stdout.split(), dtype=np.float64)
    return _NUMBERS[tuple(flags)].copy()


def test_scalar_path_gives_the_vector_paths_numbers(tmp_path):
    vector = _run(tmp_path, "vector", [])
    scalar = _run(tmp_path, "scalar", ["-DHSW2V_NO_VECTOR_EXT", "-Wpedantic"])
    assert len(vector) == len(scalar) > 10_000
    assert np.isfinite(vector).all()
    np.testing.assert_allclose(scalar, vector, rtol=2e-6, atol=2e-5)


def test_tail_vector_built_lane_by_lane_gives_the_same_bits(tmp_path):
    """Compilers without ``__builtin_shufflevector`` (GCC before 12) build a dot product's
    4-float tail vector lane by lane (``math/_vec.h``): the same numbers, bit for bit."""
    vector = _run(tmp_path, "vector", [])
    lanes = _run(tmp_path, "lanes", ["-DHSW2V_NO_SHUFFLEVECTOR"])
    assert len(vector) == len(lanes) > 10_000
    assert np.array_equal(vector, lanes)


def test_the_check_can_fail(tmp_path):
    """A scalar path that drops a term of the window block (the Gram correction between the
    contexts) is caught by the comparison above."""
    broken = tmp_path / "hsw2v"
    shutil.copytree(ROOT / "hsw2v" / "_kernels", broken,
                    ignore=shutil.ignore_patterns("*.so", "*.c"))
    text = (broken / "train/_window.h").read_text()
    assert "fb += g[j][b2] * K[b][b2];" in text
    (broken / "train/_window.h").write_text(text.replace("fb += g[j][b2] * K[b][b2];", ";"))
    vector = _run(tmp_path, "vector", [])
    compiler = c_compiler()
    exe = tmp_path / "broken"
    subprocess.run(
        [compiler, "-O2", "-std=c11", "-DHSW2V_NO_VECTOR_EXT", f"-I{broken}", str(SOURCE),
         "-o", str(exe), "-lm"],
        check=True, capture_output=True,
    )  # fmt: skip
    out = np.array(subprocess.run([str(exe)], capture_output=True, text=True).stdout.split(),
                   dtype=np.float64)  # fmt: skip
    assert not np.allclose(out, vector, rtol=2e-6, atol=2e-5)
