"""The built wheel installs and runs where no C compiler exists.

``.ci/run`` builds the sdist and the wheel once (``python3 -m build``) and points
``HSW2V_WHEEL`` at the wheel; this test installs it into a fresh virtual environment (NumPy,
SciPy and smart_open come from the running interpreter's site-packages, so nothing is
downloaded), runs ``hsw2v demo`` there with a PATH that holds no compiler, and checks the
wheel's contents: every level's kernels, no sources to compile.
"""

import os
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

WHEEL = os.environ.get("HSW2V_WHEEL")
if WHEEL:  # a relative path means one from where pytest started, not from the venv's folder
    WHEEL = os.path.abspath(WHEEL)
pytestmark = [
    pytest.mark.skipif(
        not WHEEL,
        reason="no wheel to test: build one with `python3 -m build` and set HSW2V_WHEEL to it "
        "(.ci/run does both)",
    ),
    pytest.mark.xdist_group("wheel"),  # one fresh install for the file, not one per worker
]
COMPILERS = ("cc", "gcc", "clang", "cl", "x86_64-linux-gnu-gcc")


def test_wheel_holds_every_level_and_no_sources():
    names = zipfile.ZipFile(WHEEL).namelist()
    levels = {n.split("/")[2] for n in names if n.startswith("hsw2v/_cpu/") and n.count("/") == 3}
    kernels = [n for n in names if n.startswith("hsw2v/_cpu/") and n.endswith((".so", ".pyd"))]
    assert "hsw2v/_cpu/build.json" in names
    if "x86_64" in Path(WHEEL).name or "amd64" in Path(WHEEL).name:
        assert {"baseline", "avx2", "avx512"} <= levels
        assert len(kernels) == 9  # _inner, _query, _layer at three levels
    # the benchmark-only walks are built on request (HSW2V_BENCH_WALKS=1), never shipped: not
    # compiled, not as source either
    assert not [n for n in names if "_bench_walks" in n]
    assert not [n for n in names if n.endswith((".c", ".o"))]


def test_wheel_carries_the_distribution_name_and_the_one_version():
    """The distribution's name is pyproject's (hsword2vec: "hsw2v" on PyPI is another
    project's), its version hsw2v/_version.py's."""
    from hsw2v._version import __version__

    root = Path(__file__).resolve().parent.parent
    name = tomllib.loads((root / "pyproject.toml").read_text())["project"]["name"]
    assert name != "hsw2v"
    assert Path(WHEEL).name.startswith(f"{name}-{__version__}-")
    metadata = zipfile.ZipFile(WHEEL).read(f"{name}-{__version__}.dist-info/METADATA").decode()
    assert f"\nName: {name}\n" in metadata and f"\nVersion: {__version__}\n" in metadata


@pytest.fixture(scope="module")
def fresh_install(tmp_path_factory):
    """The wheel installed into a fresh venv: ``(python, bindir, env, tmp_path)``, with a
    PATH that holds no compiler."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    bindir = env_dir / ("Scripts" if sys.platform == "win32" else "bin")
    python = bindir / ("python.exe" if sys.platform == "win32" else "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HSW2V_CPU")}
    env["PATH"] = str(bindir)
    assert not [c for c in COMPILERS if shutil.which(c, path=env["PATH"])]
    install = subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", WHEEL],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    where = subprocess.run(
        [python, "-c", "import hsw2v; print(hsw2v.__file__)"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr[-3000:]
    assert Path(where.stdout.strip()).is_relative_to(env_dir), where.stdout
    return python, bindir, env, tmp_path


@pytest.mark.parametrize("page", ["README.md", "docs/quickstart.md", "docs/progress.md"])
def test_newcomer_pages_run_as_written_on_a_fresh_install(fresh_install, page, tmp_path):
    """A newcomer's walkthrough: README's "Use" block, the quickstart and the progress page,
    every ```python block in order, on the installed wheel (tests/test_doc_blocks.py)."""
    from tests.test_doc_blocks import ROOT, run_page

    python, _, env, _ = fresh_install
    result = run_page(ROOT / page, tmp_path, python=str(python), env=env)
    assert result.returncode == 0, result.stderr[-4000:]


def test_wheel_runs_the_demo_without_a_compiler(fresh_install):
    python, bindir, env, tmp_path = fresh_install
    demo = subprocess.run(
        [bindir / "hsw2v", "demo"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert demo.stdout.strip(), "the demo printed nothing"
    info = subprocess.run(
        [bindir / "hsw2v", "info", "--build"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert info.returncode == 0, info.stderr[-3000:]
    assert "kernel level:" in info.stdout and "levels compiled:" in info.stdout
