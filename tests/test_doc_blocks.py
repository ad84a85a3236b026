"""Every ```python block of README.md and docs/*.md runs as written.

Blocks written as ``>>>`` sessions run as doctests (tests/test_docs.py); the other ```python
blocks of a page run here, in order, in one fresh interpreter per page (a page's later blocks
continue its earlier ones), in an empty working folder. A block that cannot run here says so
on the line above it, with its reason: ``<!-- not run: needs a Dask cluster -->``; a block
that imports an optional package this environment lacks is skipped (as test_docs does).
``corpus.txt``, the name the pages give the reader's own corpus, is provided: a slice of the
bundled demo corpus. README.md, quickstart.md and progress.md run on a fresh install of the
wheel (tests/test_wheel.py), as a newcomer runs them.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hsw2v
from hsw2v.datasets import demo_corpus_path

ROOT = Path(hsw2v.__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"(?:<!-- not run: (?P<reason>[^>]*?) -->\n)?```python\n(?P<code>.*?)```", re.S)
OPTIONAL = ("gensim", "sklearn", "torch", "matplotlib", "tqdm", "dask", "ot")


def blocks(page: Path) -> list[tuple[int, str | None, str]]:
    """``(line, reason not run or None, code)`` of each non-doctest ```python block."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        if ">>>" in match.group("code"):
            continue  # a doctest session: tests/test_docs.py runs it
        line = text[: match.start("code")].count("\n") + 1
        found.append((line, match.group("reason"), match.group("code")))
    return found


def missing_optional(code: str) -> list[str]:
    return [
        name
        for name in OPTIONAL
        if re.search(rf"^\s*(import {name}\b|from {name}\b)", code, re.M)
        and importlib.util.find_spec(name) is None
    ]


# The pages a newcomer starts from train on the whole demo corpus (about a minute together on
# two cores): they run on a fresh install of the wheel, in tests/test_wheel.py (CI).
NEWCOMER = ("README.md", "quickstart.md", "progress.md")
RUNNABLE = [
    page
    for page in PAGES
    if page.name not in NEWCOMER and any(reason is None for _, reason, _ in blocks(page))
]


def test_every_python_block_runs_or_says_why_not():
    counted = {page.name: blocks(page) for page in PAGES}
    assert sum(len(b) for b in counted.values()) >= 10
    for name, found in counted.items():
        for line, reason, _ in found:
            assert reason is None or reason.strip(), f"{name}:{line}: give the reason"
    for name in NEWCOMER:  # the pages a newcomer starts from run in full
        assert counted[name] and all(reason is None for _, reason, _ in counted[name]), name


def run_page(page: Path, folder: Path, python: str = sys.executable, env: dict | None = None):
    """Run ``page``'s blocks in order in one ``python`` process in ``folder`` (where a
    ``corpus.txt`` is written first); returns the finished process. Skips the test when a
    block imports an optional package that is not installed."""
    code_blocks = [(line, code) for line, reason, code in blocks(page) if reason is None]
    missing = sorted({m for _, code in code_blocks for m in missing_optional(code)})
    if missing:
        pytest.skip(f"{page.name}'s examples need {', '.join(missing)}, not installed here")
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as src:
        lines = [next(src) for _ in range(3000)]
    (folder / "corpus.txt").write_text("".join(lines), encoding="utf-8")
    script = "\n".join(
        f"# {page.name}:{line}\nexec(compile({textwrap.dedent(code)!r}, "
        f"'{page.name}:{line}', 'exec'))"
        for line, code in code_blocks
    )
    env = dict(os.environ if env is None else env, MPLBACKEND="Agg")
    return subprocess.run(
        [python, "-c", script], cwd=folder, env=env, capture_output=True, text=True, timeout=900
    )


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: p.name)
def test_page_blocks_run(page, tmp_path):
    result = run_page(page, tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0, result.stderr[-4000:]
