"""HSW2V_REQUIRE: a skip for lack of an optional part that the run must have fails instead
(tests/conftest.py, OPTIONAL_PARTS). .ci/run sets it, so that CI runs the full set; README's
test command leaves it unset, so that a fresh machine without a part skips those tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import OPTIONAL_PARTS, missing_part, required_parts

TESTS = Path(__file__).resolve().parent

# one test per way a part goes missing: skipped inside a test, at a module's import, and a
# skip of some other cause that no HSW2V_REQUIRE turns into a failure
INNER = """
import pytest

def test_torch_inside():
    pytest.skip("could not import 'torch': No module named 'torch'")

def test_bench_walks():
    pytest.skip("the benchmark-only walks are not built: cannot import name '_bench_walks'")

def test_other_cause():
    pytest.skip("this CPU has no AVX-512")
"""
INNER_MODULE = """
import pytest
pytest.skip("no wheel to test: build one with `python3 -m build`", allow_module_level=True)

def test_never_collected():
    pass
"""


def run_inner(tmp_path: Path, require: str | None) -> subprocess.CompletedProcess:
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_inner.py").write_text(INNER)
    (tmp_path / "test_inner_module.py").write_text(INNER_MODULE)
    env = {k: v for k, v in os.environ.items() if k != "HSW2V_REQUIRE"}
    if require is not None:
        env["HSW2V_REQUIRE"] = require
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "-p",
         "no:xdist", "-o", "addopts=", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_without_the_variable_missing_parts_skip(tmp_path):
    done = run_inner(tmp_path, None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 skipped" in done.stdout and "failed" not in done.stdout, done.stdout


def test_a_required_part_that_is_missing_fails_the_run(tmp_path):
    done = run_inner(tmp_path, "torch, bench_walks wheel")
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "FAILED test_inner.py::test_torch_inside" in out
    assert "FAILED test_inner.py::test_bench_walks" in out
    assert "skipped for lack of 'torch', which this run must have" in out
    # a module skipped at its import fails the run at its end, after every other test ran
    assert "FAILED (module) test_inner_module.py: skipped for lack of 'wheel'" in out
    assert "SKIPPED [1] test_inner.py:11: this CPU has no AVX-512" in out  # other causes skip
    assert "2 failed, 2 skipped" in out  # (pytest counts the module among the skipped)


def test_only_the_named_parts_are_required(tmp_path):
    done = run_inner(tmp_path, "bench_walks")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED test_inner.py::test_bench_walks" in done.stdout
    assert "1 failed" in done.stdout and "3 skipped" in done.stdout, done.stdout


def test_an_unknown_part_is_a_usage_error():
    with pytest.raises(pytest.UsageError, match="unknown parts \\['torhc'\\]"):
        required_parts({"HSW2V_REQUIRE": "torch,torhc"})
    assert required_parts({"HSW2V_REQUIRE": "torch,wheel"}) == {"torch", "wheel"}
    assert required_parts({}) == frozenset()


@pytest.mark.parametrize(
    "reason, part",
    [
        ("could not import 'torch': No module named 'torch'", "torch"),
        ("layer.md's examples need gensim, torch, not installed here", "torch"),
        (
            "the benchmark-only walks are not built: cannot import name '_bench_walks'",
            "bench_walks",
        ),
        ("no wheel to test: build one with `python3 -m build` and set HSW2V_WHEEL", "wheel"),
        ("could not import 'gensim.models': No module named 'gensim'", "test_extras"),
        ("could not import 'Cython': No module named 'Cython'", "test_extras"),
        ("material, latex2mathml not installed (pip install -e '.[docs]')", "docs"),
        ("qemu-x86_64 is not installed (Debian: apt-get install qemu-user)", "qemu"),
        ("the Windows twin needs x86_64-w64-mingw32-gcc and wine (Debian: ...)", "wine"),
        ("wine could not start a program here", None),
        ("this CPU has no AVX-512", None),
        ("needs a CUDA GPU", None),
    ],
)
def test_each_part_is_recognised_by_its_reasons(reason, part):
    assert missing_part(reason) == part
    assert part is None or part in OPTIONAL_PARTS


# ------------------------------------------------------------------ .ci/run
CI = TESTS.parent / ".ci" / "run"


@pytest.mark.skipif(not CI.exists(), reason="not a source checkout (no .ci/run)")
def test_ci_runs_readmes_test_command_and_installs_nothing_else():
    """.ci/run reads README's test command (the line after "# 2." in its first bash block)
    and runs it as written; before it, only the system packages, the wheel for
    tests/test_wheel.py and HSW2V_REQUIRE: nothing that changes what the command installs."""
    script = CI.read_text(encoding="utf-8")
    readme = (TESTS.parent / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line for line in first_block.splitlines() if line.startswith("pip install")]
    assert len(commands) == 2 and commands[1].startswith('pip install -e ".[test')
    awk = next(line for line in script.splitlines() if line.startswith('command_line="$(awk'))
    done = subprocess.run(["bash", "-c", awk + '\nprintf "%s" "$command_line"'],
                          cwd=TESTS.parent, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == commands[1]
    assert 'bash -euo pipefail -c "$command_line"' in script
    installs = [line.strip() for line in script.splitlines() if "pip install" in line
                and not line.lstrip().startswith(("#", '"pip install -e "*'))]  # fmt: skip
    assert installs == ["python3 -m pip install --quiet build"]
    assert "HSW2V_BENCH_WALKS" not in script
    parts = script.split("require=(", 1)[1].split(")", 1)[0].split()
    parts += [p.split("=(")[1].rstrip(")") for p in script.split() if p.startswith("require+=(")]
    assert set(parts) <= set(OPTIONAL_PARTS) and {"torch", "bench_walks", "wheel"} <= set(parts)
