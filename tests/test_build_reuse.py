"""setup.py, design note F: an editable build takes the extensions that ``pip install .``
compiled into ``build/lib.<platform>`` (same sources, same flags) instead of compiling them
again, and leaves what it compiles there; a wheel's build holds only its own modules.

setup.py's build command (``BuildExt``) runs here on a one-function C extension in a
temporary project, so each build takes a fraction of a second; the real kernels are built the
same way (README's two commands: the second compiles none of what the first compiled).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from conftest import c_compiler

ROOT = Path(__file__).resolve().parent.parent
SETUP = ROOT / "setup.py"

pytestmark = [
    pytest.mark.skipif(not SETUP.exists(), reason="not a source checkout (no setup.py)"),
    pytest.mark.skipif(c_compiler() is None, reason="no C compiler on PATH"),
]

TINY_C = """
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "NAME", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_NAME(void) { return PyModule_Create(&def); }
"""


@pytest.fixture(scope="module")
def setup_py():
    """setup.py's definitions (everything before its module-level cythonize and setup())."""
    pytest.importorskip("Cython")
    source = SETUP.read_text(encoding="utf-8").split("\ntranslated = cythonize(")[0]
    namespace = {"__file__": str(SETUP), "__name__": "setup_py_under_test"}
    exec(compile(source, str(SETUP), "exec"), namespace)
    return namespace


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder with two tiny extensions: a CPU level's module and a benchmark-only
    one, as setup.py declares them."""
    monkeypatch.chdir(tmp_path)
    Path("hsw2v", "_cpu", "baseline").mkdir(parents=True)  # an editable build copies in here
    for name in ("tiny", "_bench_walks"):
        Path(f"{name}.c").write_text(TINY_C.replace("NAME", name))
    return tmp_path


def build(setup_py, editable: bool, lib: str | None = None, bench: bool = False):
    """Run BuildExt once on the project (editable: as setuptools' editable_wheel sets it up,
    into ``lib``); returns the command."""
    from setuptools import Distribution

    tiny = setup_py["extension"]("hsw2v._cpu.baseline.tiny", ["tiny.c"], "baseline")
    tiny.hsw2v_bench = False
    walks = setup_py["extension"]("hsw2v._cpu.baseline._bench_walks", ["_bench_walks.c"],
                                  "baseline")  # fmt: skip
    walks.hsw2v_bench = True
    dist = Distribution({"name": "tiny", "ext_modules": [tiny, walks] if bench else [tiny],
                         "cmdclass": {"build_ext": setup_py["BuildExt"]}})  # fmt: skip
    dist.script_name = "setup.py"
    command = dist.get_command_obj("build_ext")
    if editable:
        command.editable_mode = True
        command.build_lib = lib
        command.build_temp = lib + ".temp"
    command.parallel = 1
    command.ensure_finalized()
    command.run()
    return command


def compiles(monkeypatch) -> list[str]:
    """The extensions compiled from here on, by the names of their C files (each call of the
    C compiler)."""
    import distutils.ccompiler

    from setuptools._distutils import ccompiler

    compiled = []
    for base in {ccompiler.CCompiler, distutils.ccompiler.CCompiler}:  # the same class, or not

        def record(self, sources, *args, _original=base.compile, **kwargs):
            compiled.extend(Path(source).stem for source in sources)
            return _original(self, sources, *args, **kwargs)

        monkeypatch.setattr(base, "compile", record)
    return compiled


def shared(command, name: str = "tiny") -> Path:
    """Where build/lib.<platform> holds the extension."""
    return command.shared_build_lib() / command.get_ext_filename(f"hsw2v._cpu.baseline.{name}")


def output(command, name: str = "tiny") -> Path:
    """Where the build put the extension (an editable build: its own folder, before the copy
    into the source tree)."""
    return Path(command.build_lib, command.get_ext_filename(f"hsw2v._cpu.baseline.{name}"))


def test_an_editable_build_takes_what_the_wheel_build_compiled(setup_py, project, monkeypatch):
    compiled = compiles(monkeypatch)
    wheel = build(setup_py, editable=False)  # what `pip install .` does in the source tree
    assert compiled == ["tiny"]
    built = shared(wheel)
    assert built.exists() and (built.parents[1] / "build.json").exists()
    editable = build(setup_py, editable=True, lib=str(project / "editable-lib"))
    assert compiled == ["tiny"], "the editable build compiled it again"
    taken = output(editable)
    assert taken.read_bytes() == built.read_bytes()
    assert taken.stat().st_mtime_ns == built.stat().st_mtime_ns


def test_a_changed_source_or_other_flags_compile_again(setup_py, project, monkeypatch):
    compiled = compiles(monkeypatch)
    build(setup_py, editable=False)
    time.sleep(0.01)
    Path("tiny.c").write_text(TINY_C.replace("NAME", "tiny") + "\n/* changed */\n")
    editable = build(setup_py, editable=True, lib=str(project / "e1"))
    assert compiled == ["tiny"] * 2
    # what it compiled is left for the next build: the next editable build takes it
    assert shared(editable).stat().st_mtime_ns == output(editable).stat().st_mtime_ns
    build(setup_py, editable=True, lib=str(project / "e2"))
    assert len(compiled) == 2
    # build/lib built with other flags (its build.json): compiled, and build/lib left as it is
    recorded = shared(editable).parents[1] / "build.json"
    other = json.loads(recorded.read_text())
    other["levels"] = {"baseline": ["-O0"]}
    recorded.write_text(json.dumps(other))
    before = shared(editable).stat().st_mtime_ns
    build(setup_py, editable=True, lib=str(project / "e3"))
    assert len(compiled) == 3
    assert shared(editable).stat().st_mtime_ns == before


def test_the_benchmark_only_walks_never_reach_a_wheel(setup_py, project, monkeypatch):
    monkeypatch.setitem(setup_py, "BENCH_SETTING", "")
    compiled = compiles(monkeypatch)
    wheel = build(setup_py, editable=False, bench=True)  # a wheel's build: not built
    assert compiled == ["tiny"]
    editable = build(setup_py, editable=True, lib=str(project / "e"), bench=True)
    assert compiled[1:] == ["_bench_walks"]  # built, the other taken
    walks = output(editable, "_bench_walks")
    assert walks.exists()
    in_wheel_lib = shared(wheel).with_name(walks.name)
    assert not in_wheel_lib.exists()  # not left in build/lib
    # a copy an in-place build left in build/lib is dropped by the next wheel build
    in_wheel_lib.write_bytes(walks.read_bytes())
    build(setup_py, editable=False, bench=True)
    assert not in_wheel_lib.exists() and shared(wheel).exists()


def test_the_same_translation_keeps_its_date(setup_py, tmp_path):
    c_file = tmp_path / "k.c"
    body = "/* Generated by Cython 3 */\n\nint f(void) { return 1; }\n"

    def generated(include: str, code: str = body) -> str:
        meta = f'/* BEGIN: Cython Metadata\n{{"include_dirs": ["{include}"]}}\nEND: Cython Metadata */\n'
        return code.replace("\n\n", "\n" + meta, 1)

    c_file.write_text(generated("/tmp/build-env-1"))
    old = time.time_ns() - 10**10
    os.utime(c_file, ns=(old, old))
    before = setup_py["dated_code"]([c_file, tmp_path / "absent.c"])
    c_file.write_text(generated("/tmp/build-env-2"))  # the same code, another build folder
    setup_py["keep_dates"](before)
    assert c_file.stat().st_mtime_ns == old
    before = setup_py["dated_code"]([c_file])
    c_file.write_text(generated("/tmp/build-env-3", body.replace("return 1", "return 2")))
    setup_py["keep_dates"](before)
    assert c_file.stat().st_mtime_ns > old  # new code: a new date


def test_numpy_headers_are_no_dependency_by_date_but_its_version_is_in_the_config(
    setup_py, project, monkeypatch
):
    compiled = compiles(monkeypatch)
    wheel = build(setup_py, editable=False)
    assert json.loads((shared(wheel).parents[1] / "build.json").read_text())["numpy"] == (
        __import__("numpy").__version__
    )
    header = project / "fresh-env" / "numpy" / "arrayobject.h"
    header.parent.mkdir(parents=True)
    header.write_text("/* installed just now by an isolated build */\n")
    from setuptools import Distribution

    tiny = setup_py["extension"]("hsw2v._cpu.baseline.tiny", ["tiny.c"], "baseline",
                                 depends=[str(header)])  # fmt: skip
    tiny.hsw2v_bench = False
    dist = Distribution({"name": "tiny", "ext_modules": [tiny],
                         "cmdclass": {"build_ext": setup_py["BuildExt"]}})  # fmt: skip
    command = dist.get_command_obj("build_ext")
    command.editable_mode = True
    command.build_lib = str(project / "e")
    command.build_temp = str(project / "e.temp")
    command.ensure_finalized()
    command.run()
    assert compiled == ["tiny"]  # taken, not compiled again


if sys.platform == "win32":  # pragma: no cover - the tiny module's build is POSIX-only here
    pytestmark.append(pytest.mark.skip(reason="built with a GCC-style command line"))


def test_an_editable_build_first_leaves_its_work_for_the_next(setup_py, project, monkeypatch):
    """README's test command alone on a fresh clone: the editable build compiles, and leaves
    the result and its flags in build/lib, where the next build (editable or a wheel's) finds
    them."""
    compiled = compiles(monkeypatch)
    editable = build(setup_py, editable=True, lib=str(project / "e1"))
    recorded = shared(editable).parents[1] / "build.json"
    assert compiled == ["tiny"]
    assert json.loads(recorded.read_text()) == editable.build_config()
    build(setup_py, editable=True, lib=str(project / "e2"))
    wheel = build(setup_py, editable=False)
    assert compiled == ["tiny"], "compiled again"
    assert output(wheel).read_bytes() == output(editable).read_bytes()
