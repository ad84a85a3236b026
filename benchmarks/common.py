"""Helpers shared by the benchmark scripts: the corpus, slices of it, and a machine description.

Nothing here imports gensim, fastText or hsw2v, so it is cheap to import from the training
subprocesses too.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
# The shared folder sits beside the project's checkout.
CORPUS_SCRIPT = Path(__file__).resolve().parents[2] / "shared" / "bench" / "make_gcide_corpus.py"

#: Environment for every training subprocess: single-threaded BLAS, fixed string hashing
#: (gensim seeds each word's initial vector from hash(word + str(seed))).
CHILD_ENV_OVERRIDES = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
}


def child_env() -> dict:
    env = dict(os.environ)
    env.update(CHILD_ENV_OVERRIDES)
    return env


def run_json_child(script: str, spec: dict) -> dict:
    """Run ``python3 SCRIPT --child JSON`` in a fresh process (``child_env``) and return the
    JSON object its last line prints; a failed child raises with the end of its stderr."""
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, script, "--child", json.dumps(spec)],
        capture_output=True, text=True, env=child_env(), check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"{spec['system']} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ensure_corpus(path: str | os.PathLike) -> Path:
    """Return ``path``; build the GCIDE corpus there first if it does not exist."""
    path = Path(path)
    if path.exists():
        return path
    if not CORPUS_SCRIPT.exists():
        raise FileNotFoundError(
            f"corpus {path} is missing and the script that builds it was not found "
            f"(expected shared/bench/make_gcide_corpus.py beside the checkout)"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"[corpus] {path} not found: building it with {CORPUS_SCRIPT.name} ...", flush=True)
    subprocess.run([sys.executable, str(CORPUS_SCRIPT), str(path)], check=True)
    return path


def count_words(path: str | os.PathLike) -> int:
    """Whitespace-separated tokens in the file: the word count every system is credited with."""
    n = 0
    with open(path, "rb") as f:
        for line in f:
            n += len(line.split())
    return n


def make_slice(src: str | os.PathLike, dst: str | os.PathLike, max_words: int) -> int:
    """Copy whole lines of ``src`` to ``dst`` until at least ``max_words`` words; return the count."""
    n = 0
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        for line in fin:
            if n >= max_words:
                break
            fout.write(line if line.endswith(b"\n") else line + b"\n")
            n += len(line.split())
    return n


def display_path(path: str | os.PathLike) -> str:
    """A path as it may appear in committed output: relative to the repository root."""
    p = str(path)
    if not os.path.isabs(p):
        return p
    try:
        return os.path.relpath(p, REPO_ROOT)
    except ValueError:  # another drive (Windows)
        return os.path.basename(p)


def display_command(argv: list[str]) -> str:
    """The command line, with absolute paths made relative to the repository root."""
    parts = ["python3", display_path(argv[0])]
    for a in argv[1:]:
        if "=" in a and a.startswith("--"):
            k, v = a.split("=", 1)
            parts.append(f"{k}={display_path(v) if os.path.isabs(v) else v}")
        else:
            parts.append(display_path(a) if os.path.isabs(a) else a)
    return " ".join(shlex.quote(p) for p in parts)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_flags() -> list[str]:
    wanted = ("avx", "avx2", "fma", "avx512f", "avx512vl", "neon", "asimd")
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    have = set(line.split(":", 1)[1].split())
                    return [w for w in wanted if w in have]
    except OSError:
        pass
    return []


def _version(mod: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(mod)
    except Exception:
        return None


def _cc_version() -> str | None:
    try:
        out = subprocess.run(["cc", "--version"], capture_output=True, text=True, timeout=10)
        return out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else None
    except (OSError, subprocess.SubprocessError):
        return None


def machine_info() -> dict:
    """CPU, cores, RAM, load, library and BLAS versions (no file-system paths)."""
    info: dict = {
        "cpu_model": _cpu_model(),
        "cpu_flags": _cpu_flags(),
        "logical_cpus": os.cpu_count(),
        "physical_cores": None,
        "ram_bytes": None,
        "loadavg": None,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "cc": _cc_version(),
        "versions": {
            m: _version(m)
            for m in ("numpy", "scipy", "gensim", "fasttext-wheel", "word2vec", "hsw2v", "cython")
        },
        "blas": [],
    }
    try:
        import psutil

        info["physical_cores"] = psutil.cpu_count(logical=False)
        info["ram_bytes"] = psutil.virtual_memory().total
    except ImportError:
        try:
            info["ram_bytes"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            pass
    try:
        info["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    try:
        import numpy  # noqa: F401  (load its BLAS so threadpoolctl sees it)
        import scipy.linalg  # noqa: F401
        from threadpoolctl import threadpool_info

        for lib in threadpool_info():
            info["blas"].append(
                {
                    k: lib.get(k)
                    for k in (
                        "user_api",
                        "internal_api",
                        "version",
                        "num_threads",
                        "threading_layer",
                        "architecture",
                        "prefix",
                    )
                }
            )
    except ImportError:
        pass
    return info


def machine_markdown(info: dict) -> str:
    ram = f"{info['ram_bytes'] / 2**30:.1f} GiB" if info.get("ram_bytes") else "?"
    v = info.get("versions", {})
    blas = (
        "; ".join(
            f"{b.get('internal_api')} {b.get('version')} ({b.get('prefix')}, {b.get('architecture')}, "
            f"{b.get('num_threads')} threads in the parent)"
            for b in info.get("blas", [])
        )
        or "not detected"
    )
    lines = [
        f"- CPU: {info['cpu_model']} ({', '.join(info.get('cpu_flags') or []) or 'no SIMD flags read'}); "
        f"{info.get('physical_cores')} physical cores, {info.get('logical_cpus')} logical CPUs; RAM {ram}",
        f"- Load average at start: {info.get('loadavg')}; OS {info.get('os')}; Python {info.get('python')}; "
        f"{info.get('cc') or 'no C compiler found'}",
        "- Versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val),
        f"- BLAS (threadpoolctl): {blas}; training subprocesses run with "
        "OPENBLAS/OMP/MKL_NUM_THREADS=1",
    ]
    return "\n".join(lines)


def source_commit() -> str | None:
    """The checkout's commit (short hash; "+changes" when hsw2v/ differs from it), or None
    outside a git checkout."""
    root = REPO_ROOT

    def git(*cmd):
        return subprocess.run(
            ["git", *cmd], cwd=root, capture_output=True, text=True, timeout=30
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain", "--", "hsw2v")
    except (OSError, subprocess.SubprocessError):
        return None
    return (commit + ("+changes" if changed else "")) or None
