"""Run one of gensim 4.4's own test files against hsw2v: the probes' shared runner.

``run_gensim_tests(name, swaps, extra_files)`` copies ``gensim/test/NAME`` to a temporary
folder with each ``old -> new`` of ``swaps`` applied (every ``old`` must be found: a changed
gensim file stops the probe), writes ``extra_files`` (name -> text) beside it, runs pytest
there with this checkout first on ``PYTHONPATH`` and prints the failures and the summary.
``run_with_module(name, module, names)`` does so for a test file that imports
``from gensim.models import MODULE, keyedvectors``: its ``MODULE`` becomes one whose
``names`` are hsw2v's and every other name gensim's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_gensim_tests(name: str, swaps: dict, extra_files: dict | None = None) -> int:
    import gensim.test

    text = (Path(gensim.test.__file__).parent / name).read_text(encoding="utf-8")
    for old, new in swaps.items():
        if old not in text:
            raise SystemExit(f"gensim's test file changed: {old!r} not found")
        text = text.replace(old, new)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / name.replace(".py", "_on_hsw2v.py")
        target.write_text(text, encoding="utf-8")
        for extra, content in (extra_files or {}).items():
            (Path(folder) / extra).write_text(content, encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            filter(None, (str(REPO), folder, os.environ.get("PYTHONPATH")))))  # fmt: skip
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
             target.name], cwd=folder, env=env, capture_output=True, text=True,
        )  # fmt: skip
    lines = run.stdout.splitlines()
    print("\n".join(line for line in lines if line.startswith(("FAILED", "ERROR"))))
    print(lines[-1] if lines else run.stderr[-2000:])
    return 0


def run_with_module(name: str, module: str, names: str) -> int:
    """gensim's ``name`` with its ``gensim.models.MODULE`` swapped for a module whose
    ``names`` (``"Doc2Vec, TaggedDocument"``) come from hsw2v and every other name from
    gensim's module."""
    swap = (
        f"from gensim.models import {module}, keyedvectors",
        f"from gensim.models import keyedvectors\nimport hsw2v_{module} as {module}",
    )
    shim = (
        f"import gensim.models.{module} as _gensim_{module}\n"
        f"from hsw2v import {names}  # noqa: F401\n\n\n"
        "def __getattr__(name):\n"
        f"    return getattr(_gensim_{module}, name)\n"
    )
    return run_gensim_tests(name, dict([swap]), {f"hsw2v_{module}.py": shim})
