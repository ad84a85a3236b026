"""The positioned read under the corpus_file reader (``hsw2v/_kernels/reader/_pread.h``), on both its
paths.

``hsw2v_pread`` is POSIX ``pread`` on Linux and macOS and ``ReadFile`` at an offset on
Windows. ``tests/c/pread_check.c`` reads a file of known bytes at many offsets and lengths in
an order the file position cannot predict. It is compiled here for this machine, and, where a
MinGW-w64 cross compiler and Wine are installed (``.ci/run`` installs both), as a Windows
program run under Wine, so the Windows twin is checked without a Windows machine.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import c_compiler

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "c" / "pread_check.c"
HEADER_DIR = ROOT / "hsw2v" / "_kernels"


def compile_and_run(compiler, exe: Path, run_prefix, tmp_path, data_arg):
    built = subprocess.run(
        [compiler, "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HEADER_DIR}", str(SOURCE),
         "-o", str(exe)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    env = dict(os.environ, WINEDEBUG="-all", WINEPREFIX=str(tmp_path / "wineprefix"))
    ran = subprocess.run(
        [*run_prefix, str(exe), data_arg], capture_output=True, text=True, env=env, timeout=300
    )
    return ran


@pytest.mark.skipif(sys.platform == "win32", reason="the native check runs a POSIX build")
def test_positioned_reads_natively(tmp_path):
    compiler = c_compiler()
    if compiler is None:
        pytest.skip("no C compiler on PATH")
    ran = compile_and_run(compiler, tmp_path / "pread_check", [], tmp_path,
                          str(tmp_path / "data.bin"))  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.split()[0] == "ok" and int(ran.stdout.split()[1]) > 500


def test_positioned_reads_as_a_windows_program(tmp_path):
    mingw, wine = shutil.which("x86_64-w64-mingw32-gcc"), shutil.which("wine")
    if mingw is None or wine is None:
        pytest.skip(
            "the Windows twin needs x86_64-w64-mingw32-gcc and wine (Debian: apt-get install "
            "gcc-mingw-w64-x86-64 wine wine64; .ci/run installs them)"
        )
    # Wine maps the Unix root to drive Z:
    data = "Z:" + str(tmp_path / "data.bin").replace("/", "\\")
    ran = compile_and_run(mingw, tmp_path / "pread_check.exe", [wine], tmp_path, data)
    if ran.returncode != 0 and "ok" not in ran.stdout and not (tmp_path / "data.bin").exists():
        pytest.skip(f"wine could not start a program here: {ran.stderr[-500:]}")
    assert ran.returncode == 0, ran.stdout + ran.stderr[-2000:]
    assert ran.stdout.split()[0] == "ok" and int(ran.stdout.split()[1]) > 500
