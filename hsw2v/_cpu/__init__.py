"""Runtime kernel dispatch: bind ``hsw2v._kernels._inner``, ``_query`` and ``_layer`` to one
CPU level.

Design note
-----------
The vector kernels are compiled once per instruction-set level into ``hsw2v/_cpu/<level>/``
(see ``setup.py``); everything else is compiled for the portable baseline. On ``import
hsw2v`` this module is imported first: it picks the best compiled level that the CPU (and its
OS) supports and puts a finder first on ``sys.meta_path`` that answers for exactly
``hsw2v._kernels._inner``, ``hsw2v._kernels._query`` and ``hsw2v._kernels._layer`` (and
``hsw2v._kernels._bench_walks``, the benchmark-only walks, when the build holds them), the
names under which the kernels' sources (``hsw2v/_kernels/``) know them: importing one of
them imports the chosen level's module and leaves it in ``sys.modules`` under the usual name
(the import system returns what ``sys.modules`` holds once a module has run, the documented
replacement case). So ``from hsw2v._kernels import _inner``, ``import
hsw2v._kernels._inner`` and ``_corpus_file``'s ``cimport`` of ``hsw2v._kernels._inner`` all
reach the chosen level's module, one module object everywhere, loaded on first use
(``import hsw2v`` does not import SciPy); nothing else in the package knows that levels
exist, and kernel files left in ``hsw2v/`` or ``hsw2v/_kernels/`` by a build of an older
undispatched layout are never loaded. A level is chosen once per process; switching needs a
fresh process.

The CPU's features come from NumPy (``numpy._core._multiarray_umath.__cpu_features__``, which
checks CPUID and that the OS saves the wider registers), the same test NumPy uses for its own
dispatched loops. ``HSW2V_CPU=baseline|avx2|avx512`` (or ``native`` for a ``HSW2V_NATIVE=1``
build) forces a level, for testing and benchmarking; a level that this build lacks or this CPU
cannot run is refused with an ImportError that names what is missing.

Levels (the compiler flags per level are in ``setup.py`` and printed by
:func:`hsw2v.show_config`):

========  ==================================  =============================================
level     needs (NumPy feature names)         compiled with (GCC / Clang; MSVC)
========  ==================================  =============================================
baseline  nothing (x86-64: SSE2; arm64: NEON)  no ISA flag
avx2      AVX2, FMA3                           -mavx2 -mfma; /arch:AVX2
avx512    + AVX512F, CD, VL, BW, DQ            + -mavx512f -mavx512cd -mavx512vl -mavx512bw
                                               -mavx512dq; /arch:AVX512
native    the CPU that built it                -march=native (``HSW2V_NATIVE=1`` builds only)
========  ==================================  =============================================
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

PACKAGE = __name__.rpartition(".")[0] + "._kernels"  # "hsw2v._kernels": where the names live
KERNELS = ("_inner", "_query", "_layer")
# Bound the same way when a level holds them, but not needed for a level to count as built:
# the benchmark-only walks (``HSW2V_BENCH_WALKS=1`` builds, never a wheel).
OPTIONAL_KERNELS = ("_bench_walks",)
# Best last: the automatic choice is the last compiled level the CPU supports.
LEVELS = ("baseline", "avx2", "avx512", "native")
REQUIRES = {
    "baseline": (),
    "avx2": ("AVX2", "FMA3"),
    "avx512": ("AVX2", "FMA3", "AVX512F", "AVX512CD", "AVX512VL", "AVX512BW", "AVX512DQ"),
    "native": (),
}
ENV = "HSW2V_CPU"

# Filled by bind(): the level in use and how it was chosen.
level: str | None = None
reason: str = ""


def cpu_features() -> dict[str, bool]:
    """NumPy's runtime CPU feature table (empty when this NumPy does not expose one)."""
    for name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            return dict(importlib.import_module(name).__cpu_features__)
        except (ImportError, AttributeError):
            continue
    return {}


def build_config() -> dict:
    """What ``setup.py`` recorded about this build: compiler, levels and their flags."""
    path = Path(__file__).with_name("build.json")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def compiled_levels() -> list[str]:
    """The levels of the last build whose kernels are present, in :data:`LEVELS` order (an
    in-place build can leave another build's level behind; ``build.json`` names the current)."""
    built = build_config().get("levels") or LEVELS
    return [name for name in LEVELS if name in built and all(_has_module(name, k) for k in KERNELS)]


def _has_module(level_name: str, kernel_name: str) -> bool:
    """Whether the level's folder holds the kernel's compiled module: looked up as a file, not
    through the import system, which would run the level's guard (:func:`require`)."""
    folder = Path(__file__).with_name(level_name)
    return any(
        (folder / f"{kernel_name}{suffix}").is_file()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
    )


def require(level_name: str) -> None:
    """The guard each level's package runs when it is imported: a level whose instructions
    this CPU lacks is refused with an ImportError before any of its compiled modules loads.
    Loading one would end the process with an illegal instruction (SIGILL), and tools that
    import every submodule of a package (documentation builders, test collectors) do load
    them."""
    lacking = missing_features(level_name, cpu_features())
    if lacking:
        raise ImportError(
            f"{__name__}.{level_name} is compiled for CPU features this machine lacks: "
            f"{', '.join(lacking)}; import hsw2v instead, which binds the best level this CPU "
            f"runs (the compiled modules are not meant to be imported directly)"
        )


def missing_features(name: str, features: dict[str, bool]) -> list[str]:
    """The features that level ``name`` needs and this CPU lacks."""
    return [f for f in REQUIRES[name] if not features.get(f, False)]


def choose(requested: str | None, compiled: list[str], features: dict[str, bool]):
    """``(level, reason)``: the forced level if it can run, else the best one that can."""
    if not compiled:
        raise ImportError(
            "hsw2v's compiled kernels are missing (no hsw2v/_cpu/<level>/ modules): build them "
            "with `pip install .` or `python3 setup.py build_ext --inplace`"
        )
    if requested:
        if requested not in REQUIRES:
            raise ImportError(
                f"{ENV}={requested!r} is not a level; use one of {', '.join(LEVELS[:3])} "
                f"(this build has: {', '.join(compiled)}), or unset {ENV} to choose automatically"
            )
        if requested not in compiled:
            raise ImportError(
                f"{ENV}={requested} asks for a level this build of hsw2v does not hold "
                f"(it has: {', '.join(compiled)}); unset {ENV} or choose one of those"
            )
        lacking = missing_features(requested, features)
        if lacking:
            runnable = [n for n in compiled if not missing_features(n, features)]
            raise ImportError(
                f"{ENV}={requested} needs CPU features this machine lacks: "
                f"{', '.join(lacking)}; its CPU can run: {', '.join(runnable) or 'none'}"
            )
        return requested, f"forced by {ENV}"
    if compiled == ["native"]:
        return "native", "the one level of this build"  # HSW2V_NATIVE=1: -march=native
    for name in reversed(compiled):
        if not missing_features(name, features):
            return name, "best level this CPU supports"
    raise ImportError(
        f"no compiled level of hsw2v runs on this CPU (compiled: {', '.join(compiled)}; "
        f"missing: {', '.join(missing_features(compiled[0], features))})"
    )


def bind() -> str:
    """Choose the level once (at ``import hsw2v``); errors name what is missing."""
    global level, reason
    if level is None:
        level, reason = choose(os.environ.get(ENV) or None, compiled_levels(), cpu_features())
    return level


def kernel(name: str):
    """The chosen level's module for ``hsw2v.<name>`` (imported on first use)."""
    if name not in KERNELS + OPTIONAL_KERNELS:
        raise ValueError(f"{name!r} is not a dispatched kernel module ({', '.join(KERNELS)})")
    if name in OPTIONAL_KERNELS and not _has_module(bind(), name):
        raise ModuleNotFoundError(
            f"{PACKAGE}.{name} (the benchmark-only walks) is not built at the "
            f"{bind()} level: build it from a source checkout with `HSW2V_BENCH_WALKS=1 "
            "python3 setup.py build_ext --inplace` (no wheel holds it)",
            name=f"{PACKAGE}.{name}",
        )
    return importlib.import_module(f"{__name__}.{bind()}.{name}")


class KernelFinder:
    """Import-system finder and loader for ``hsw2v._kernels._inner``, ``_query`` and ``_layer``: the
    module it runs replaces itself in ``sys.modules`` by the chosen level's module."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package != PACKAGE or name not in KERNELS + OPTIONAL_KERNELS:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        return None  # a placeholder module, replaced in exec_module

    def exec_module(self, module):
        sys.modules[module.__name__] = kernel(module.__name__.rpartition(".")[2])


bind()
if not any(isinstance(finder, KernelFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, KernelFinder())
