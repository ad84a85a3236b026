"""What this installation of hsw2v runs: version, kernel level, compiled levels, BLAS, flags.

:func:`show_config` prints it (``hsw2v info --build`` too); :func:`config` returns it as a
dict. The level comes from :mod:`hsw2v._cpu` (chosen at import), the flags from the
``build.json`` that ``setup.py`` writes next to the level packages, the BLAS from SciPy's own
build record (hsw2v calls BLAS through ``scipy.linalg.cython_blas``).
"""

from __future__ import annotations

import platform
import sys


def blas_info() -> str:
    """The BLAS that SciPy was built against (name, version and configuration)."""
    try:
        import scipy

        blas = scipy.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:  # older SciPy has no dict mode: say so rather than guess
        return "unknown (SciPy does not report its BLAS)"
    text = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    detail = blas.get("openblas configuration")
    return f"{text} ({detail})" if detail else text


def config() -> dict:
    """The build and run-time configuration as a dict (see :func:`show_config`)."""
    import numpy as np
    import scipy

    from hsw2v import _cpu
    from hsw2v._version import __version__

    _cpu.bind()
    build = _cpu.build_config()
    features = _cpu.cpu_features()
    return {
        "version": __version__,
        "level": _cpu.level,
        "level_reason": _cpu.reason,
        "levels_compiled": _cpu.compiled_levels(),
        "levels_runnable": [
            name for name in _cpu.compiled_levels() if not _cpu.missing_features(name, features)
        ],
        "level_flags": build.get("levels", {}),
        "other_flags": build.get("other_extensions", {}),
        "compiler": build.get("compiler", "unknown (no build.json)"),
        "build_platform": build.get("platform", "unknown"),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "blas": blas_info(),
    }


def show_config() -> None:
    """Print the version, the kernel level in use (and why), the levels compiled into this
    build with their compiler flags, and the BLAS that SciPy (and so hsw2v) uses."""
    c = config()
    lines = [
        f"hsw2v {c['version']} (Python {c['python']}, NumPy {c['numpy']}, SciPy {c['scipy']})",
        f"kernel level:    {c['level']} ({c['level_reason']})",
        f"levels compiled: {', '.join(c['levels_compiled'])}",
        f"runnable here:   {', '.join(c['levels_runnable'])} (machine {c['machine']})",
        f"BLAS:            {c['blas']}",
        f"compiler:        {c['compiler']} (target {c['build_platform']})",
        "flags per level:",
    ]
    for name, flags in c["level_flags"].items():
        lines.append(f"  {name:<13} {' '.join(flags)}")
    for name, flags in c["other_flags"].items():
        lines.append(f"  {name.rpartition('.')[2]:<13} {' '.join(flags)} (no vector math)")
    print("\n".join(lines))
