"""Build the Cython kernels: the vector kernels once per CPU level, the rest once, portably.

Design note
-----------
A. Levels. The three extensions that do vector math (``_inner``: training, ``_query``:
   scoring and search, ``_layer``: the layer's batched passes) are compiled once per
   instruction-set level into ``hsw2v/_cpu/<level>/``; :mod:`hsw2v._cpu` picks one level at
   import from the CPU's features and binds ``hsw2v._kernels._inner`` etc. to it.
   ``_corpus_file`` (reader, strict IEEE arithmetic), ``_rates`` (the learning-rate schedule,
   strict), ``_merge`` (the merge of distributed rounds' deltas, strict), ``_recording``
   (integer passes), ``_array_passes`` (a tree's paths and the weights' finiteness, each
   checked in one pass) and ``_transport`` (the network simplex of ``wmdistance``: scalar
   pivots) do no vector math and are built once at the baseline,
   in ``hsw2v/_kernels/``; ``_corpus_file``'s cimport of ``hsw2v._kernels._inner`` (its
   ``Trainer`` type) resolves at run time to the chosen level. Levels per target:

   ===========  =========================  ================================================
   level        GCC / Clang (x86-64)        MSVC (x64)
   ===========  =========================  ================================================
   baseline     (x86-64 default: SSE2)      (x64 default: SSE2)
   avx2         -mavx2 -mfma                /arch:AVX2
   avx512       + -mavx512f/cd/vl/bw/dq     /arch:AVX512
   ===========  =========================  ================================================

   Other targets (aarch64: NEON is its baseline; macOS universal2) build the baseline only.
   ``HSW2V_NATIVE=1`` builds one level, ``native`` (``-march=native``), for a source build
   that will only run on the machine (or CPU model) that built it.

B. One Cython translation per source: each ``.pyx`` of ``hsw2v/_kernels/`` (the kernels'
   sources, ``SOURCES``) is cythonized once into ``hsw2v/_kernels/<name>.c`` and each level
   compiles a one-line wrapper (``build/cpu_levels/<level>/<name>.c`` holding ``#include
   "hsw2v/_kernels/<name>.c"``; the headers, named by their path under ``hsw2v/_kernels/``
   (``math/_vec.h``), are found from the generated C file's folder), so every level has its
   own object files and the module's
   init function (``PyInit_<name>``) matches the level's ``hsw2v/_cpu/<level>/<name>`` path.

C. Flags. ``-O3`` plus the subset of fast-math that lets GCC vectorise the dot-product
   reductions (reassociation) without changing the process's floating-point mode (full
   ``-ffast-math`` at link time would set flush-to-zero for every program that imports us)
   and without assuming finite math (NaN checks stay). MSVC has no such subset: ``/O2`` with
   its default ``/fp:precise`` keeps the same NaN semantics (reductions are not reassociated
   there). The flags used are written to ``hsw2v/_cpu/build.json`` for
   :func:`hsw2v.show_config`.

D. Parallel. Extensions compile in parallel, one per core (``build_ext --parallel`` /
   ``-j`` overrides).

E. Benchmark-only walks. ``_bench_walks`` (the "loop" and "blas" walks the fast ones are
   measured against) is compiled at every level by the builds of a source checkout for itself:
   ``pip install -e .`` and ``setup.py build_ext --inplace``. A wheel (``pip install .``,
   ``pip wheel``, ``python -m build``) never holds it, and a wheel build drops a copy an
   in-place build left in ``build/lib.*``. ``HSW2V_BENCH_WALKS=1`` builds it in any build,
   ``HSW2V_BENCH_WALKS=0`` in none; the tests that need it skip when the module is absent
   (and fail instead where ``HSW2V_REQUIRE`` names ``bench_walks``, as in CI).

F. One compile per checkout. ``pip install .`` compiles into ``build/lib.<platform>`` (pip
   builds in the source tree), while an editable install (``pip install -e .``) builds in a
   temporary folder. So an editable build takes each extension that ``build/lib.<platform>``
   already holds, compiled from the same sources (not older than they are) with the same
   flags (its ``build.json``), instead of compiling it again, and leaves what it compiled
   there for the next build (the benchmark-only walks excepted: no wheel may take them). Two
   things keep the dates meaningful: the generated C of a source whose Cython translation did
   not change keeps its date (an isolated build installs Cython afresh, and its newer headers
   make ``cythonize`` write the same code again, differing only in the metadata comment that
   names the build's temporary include folders); and NumPy's headers, fresh in every isolated
   build, are no dependency by date: the NumPy version is part of ``build.json`` instead.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
SOURCES = "hsw2v/_kernels"  # the kernels' .pyx / .pxd / .h, cythonized in place to <name>.c
LEVEL_KERNELS = ("_inner", "_query", "_layer")
# Benchmark-only walks (design note E): compiled per level by in-place and editable builds (or
# as HSW2V_BENCH_WALKS=1/0 says), never in a wheel.
BENCH_KERNELS = ("_bench_walks",)
BENCH_SETTING = os.environ.get("HSW2V_BENCH_WALKS", "")
if BENCH_SETTING not in ("", "0", "1"):
    sys.exit(f"HSW2V_BENCH_WALKS must be 0 or 1 (or unset), got {BENCH_SETTING!r}")
# Built once with the strict flags: the reader, the learning-rate schedule and the merge of
# distributed rounds' deltas.
STRICT = ("_corpus_file", "_rates", "_merge")
# Built once at the baseline, with the usual flags: no vector math.
BASELINE_ONLY = ("_recording", "_transport", "_array_passes")
GCC_OPT = [
    "-g0",  # no debug info: a third of the size of each kernel otherwise
    "-O3",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-fassociative-math",
    "-fno-signed-zeros",
    "-freciprocal-math",
    "-funroll-loops",
]
# The corpus_file reader, the learning-rate schedule (``_rates``, cimported by every kernel)
# and the rounds' merge: no vector math, and strict IEEE arithmetic (no reassociation, no
# fused multiply-add) so that they give the same bits in every build.
GCC_STRICT = ["-g0", "-O2", "-ffp-contract=off"]
MSVC_OPT = ["/O2"]
GCC_LEVELS = {
    "baseline": [],
    "avx2": ["-mavx2", "-mfma"],
    "avx512": ["-mavx2", "-mfma", "-mavx512f", "-mavx512cd", "-mavx512vl", "-mavx512bw",
               "-mavx512dq"],
    "native": ["-march=native"],
}  # fmt: skip
MSVC_LEVELS = {"baseline": [], "avx2": ["/arch:AVX2"], "avx512": ["/arch:AVX512"]}


def levels_for_target() -> list[str]:
    """The levels this build compiles: x86-64 gets three, other targets the baseline."""
    if os.environ.get("HSW2V_NATIVE", "0") == "1":
        return ["native"]
    platform = sysconfig.get_platform().lower()  # honours cross-compiling hosts
    if platform.endswith(("x86_64", "amd64")) and "universal" not in platform:
        return ["baseline", "avx2", "avx512"]
    return ["baseline"]


def level_wrapper(level: str, name: str) -> str:
    """A one-line C file that compiles ``hsw2v/_kernels/<name>.c`` as this level's object."""
    wrapper = Path("build", "cpu_levels", level, f"{name}.c")
    text = f'/* generated by setup.py: {name} at the {level} level */\n'
    text += f'#include "{SOURCES}/{name}.c"\n'
    (ROOT / wrapper).parent.mkdir(parents=True, exist_ok=True)
    if not (ROOT / wrapper).exists() or (ROOT / wrapper).read_text() != text:
        (ROOT / wrapper).write_text(text)
    return wrapper.as_posix()


class BuildExt(build_ext):
    """Per-compiler flags, one job per core, and the flags recorded for show_config()."""

    shared_matches = None  # build/lib's flags against this build's (build_extensions)

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1
        # design note E: the benchmark-only walks in builds of the checkout for itself
        # (in place, editable: inplace is set for both), or as HSW2V_BENCH_WALKS says
        if not (BENCH_SETTING == "1" or (BENCH_SETTING == "" and self.inplace)):
            self.extensions = [e for e in self.extensions if not getattr(e, "hsw2v_bench", False)]

    def shared_build_lib(self) -> Path:
        """``build/lib.<platform>``: where ``pip install .`` and ``pip wheel .`` build (pip
        builds in the source tree), named as setuptools' ``build`` command names it."""
        build = self.get_finalized_command("build")
        tag = f"{self.plat_name}-{sys.implementation.cache_tag}"
        if hasattr(sys, "gettotalrefcount"):
            tag += "-pydebug"
        return Path(build.build_base, f"lib.{tag}")

    def shared_copy(self, ext) -> Path | None:
        """Where ``build/lib.<platform>`` holds ``ext`` for an editable build to take (design
        note F); None for other builds, and for the benchmark-only walks (never shared)."""
        if not getattr(self, "editable_mode", False) or getattr(ext, "hsw2v_bench", False):
            return None
        return self.shared_build_lib() / self.get_ext_filename(self.get_ext_fullname(ext.name))

    def shared_config_matches(self) -> bool | None:
        """Whether ``build/lib.<platform>`` was built with this build's flags; None where it
        records none (no build there yet)."""
        recorded = self.shared_build_lib() / "hsw2v" / "_cpu" / "build.json"
        if not recorded.exists():
            return None
        return json.loads(recorded.read_text()) == self.build_config()

    def build_extension(self, ext):
        # runs in parallel threads (note D): reads only what build_extensions settled before
        shared = self.shared_copy(ext)
        target = self.get_ext_fullpath(ext.name)
        sources = [*ext.sources, *ext.depends]
        matches = self.shared_matches
        if shared is not None and matches and shared.exists() and not newer_than(sources, shared):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(shared, target)  # keeps its date, to the nanosecond
            print(f"reusing {shared} (same sources and flags): not compiled again")
            return
        super().build_extension(ext)
        if shared is not None and matches is not False and os.path.exists(target):
            shared.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(target, shared)

    def build_extensions(self):
        msvc = self.compiler.compiler_type == "msvc"
        for ext in self.extensions:
            level = getattr(ext, "hsw2v_level", None)
            if msvc:
                ext.extra_compile_args = MSVC_OPT + MSVC_LEVELS.get(level or "baseline", [])
            elif level is None:
                strict = ext.name.rpartition(".")[2] in STRICT
                ext.extra_compile_args = GCC_STRICT if strict else GCC_OPT
            else:
                ext.extra_compile_args = GCC_OPT + GCC_LEVELS[level]
            # NumPy's headers, which cythonize lists, lie in the build's own (isolated, fresh)
            # environment: newer on every build, they would make every build compile again.
            # The NumPy version is part of the build's config instead (build_config).
            ext.depends = [d for d in ext.depends if Path(ROOT, d).resolve().is_relative_to(ROOT)]
        config = self.build_config()
        previous = Path(self.build_lib, "hsw2v", "_cpu", "build.json")
        if not previous.exists() or json.loads(previous.read_text()) != config:
            self.force = True  # other flags than the last build: setuptools only checks dates
        editable = getattr(self, "editable_mode", False)
        self.shared_matches = self.shared_config_matches() if editable else None
        super().build_extensions()
        recorded = self.shared_build_lib() / "hsw2v" / "_cpu" / "build.json"
        if editable and self.shared_matches is None and recorded.parent.exists():
            # what this editable build left in build/lib is recorded with its flags
            recorded.write_text(json.dumps(config, indent=1) + "\n")
        self.config_text = json.dumps(config, indent=1) + "\n"
        previous.parent.mkdir(parents=True, exist_ok=True)
        previous.write_text(self.config_text)

    def build_config(self) -> dict:
        levels = {
            ext.hsw2v_level: ext.extra_compile_args
            for ext in self.extensions
            if getattr(ext, "hsw2v_level", None)
        }
        config = {
            "compiler": compiler_version(self.compiler),
            "platform": sysconfig.get_platform(),
            "numpy": np.__version__,  # its headers: another NumPy compiles everything again
            "levels": levels,
            "other_extensions": {
                ext.name: ext.extra_compile_args
                for ext in self.extensions
                if not getattr(ext, "hsw2v_level", None)
            },
        }
        return config

    def run(self):
        super().run()
        if self.inplace and getattr(self, "config_text", None):  # in-place and editable builds
            package = self.get_finalized_command("build_py").get_package_dir("hsw2v._cpu")
            Path(package, "build.json").write_text(self.config_text)
        if not self.inplace:  # a wheel's build: only this build's modules go into the wheel
            built = {os.path.abspath(path) for path in self.get_outputs()}
            for path in Path(self.build_lib, "hsw2v").rglob("*"):
                if path.suffix in (".so", ".pyd") and os.path.abspath(path) not in built:
                    print(f"removing {path}: not a module of this build (left by another)")
                    path.unlink()


def newer_than(sources: list[str], target: Path) -> bool:
    """Whether a source is newer than ``target`` (to the nanosecond: older setuptools compare
    whole seconds), or missing."""
    built = target.stat().st_mtime_ns
    try:
        return any(os.stat(source).st_mtime_ns > built for source in sources)
    except OSError:
        return True


def compiler_version(compiler) -> str:
    """The compiler's type and, for GCC / Clang, the first line of ``--version``."""
    command = getattr(compiler, "compiler_so", None)
    if not command:
        return compiler.compiler_type
    try:
        done = subprocess.run([command[0], "--version"], capture_output=True, text=True)
        return f"{compiler.compiler_type}: {done.stdout.splitlines()[0]}"
    except (OSError, IndexError):
        return f"{compiler.compiler_type}: {command[0]}"


def extension(
    name: str, sources: list[str], level: str | None = None, depends: list[str] = ()
) -> Extension:
    ext = Extension(
        name,
        sources,
        include_dirs=[np.get_include(), "."],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        depends=list(depends),
    )
    ext.hsw2v_level = level
    return ext


DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": False,
}


def generated_code(path: Path) -> bytes | None:
    """A generated C file without Cython's metadata comment (which names the build's include
    folders, temporary ones in an isolated build); None where there is no file."""
    try:
        text = path.read_bytes()
    except OSError:
        return None
    start, end = text.find(b"/* BEGIN: Cython Metadata"), text.find(b"END: Cython Metadata */")
    return text[:start] + text[end:] if 0 <= start < end else text


def dated_code(c_files) -> dict:
    """``{path: (date, code)}`` of the generated C files that exist."""
    return {p: (p.stat().st_mtime_ns, generated_code(p)) for p in c_files if p.exists()}


def keep_dates(before: dict) -> None:
    """Give each C file that was written again with the same code (:func:`generated_code`) its
    earlier date back (design note F)."""
    for c_file, (date, code) in before.items():
        now = c_file.stat()
        if now.st_mtime_ns != date and generated_code(c_file) == code:
            os.utime(c_file, ns=(now.st_atime_ns, date))


# Cythonize every source once (hsw2v/_kernels/<name>.c), then compile the vector kernels per level.
ALL_SOURCES = (*LEVEL_KERNELS, *BENCH_KERNELS, *STRICT, *BASELINE_ONLY)
before = dated_code([ROOT / SOURCES / f"{name}.c" for name in ALL_SOURCES])
translated = cythonize(
    [extension(f"hsw2v._kernels.{name}", [f"{SOURCES}/{name}.pyx"]) for name in ALL_SOURCES],
    compiler_directives=DIRECTIVES,
    nthreads=(os.cpu_count() or 1) if sys.platform == "linux" else 0,  # a process pool: fork only
)
keep_dates(before)
once = {f"hsw2v._kernels.{name}" for name in (*STRICT, *BASELINE_ONLY)}
extensions = [ext for ext in translated if ext.name in once]
for level in levels_for_target():
    for name in (*LEVEL_KERNELS, *BENCH_KERNELS):
        # the wrapper never changes: rebuild when the generated C or a header does
        ext = extension(
            f"hsw2v._cpu.{level}.{name}",
            [level_wrapper(level, name)],
            level,
            depends=[f"{SOURCES}/{name}.c",
                     *sorted(p.as_posix() for p in Path(SOURCES).rglob("*.h"))],
        )  # fmt: skip
        ext.hsw2v_bench = name in BENCH_KERNELS
        extensions.append(ext)

setup(ext_modules=extensions, cmdclass={"build_ext": BuildExt})
