"""The documentation: the site builds without warnings, and its examples run."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import bench_walks

import hsw2v

ROOT = Path(hsw2v.__file__).resolve().parents[1]
DOCS = ROOT / "docs"


OPTIONAL = ("gensim", "sklearn", "torch")  # test or extra dependencies, never required


def _needs_missing(text: str) -> list[str]:
    """The optional packages a page's examples import that are not installed here."""
    return [
        name
        for name in OPTIONAL
        if re.search(rf">>> (import {name}\b|from {name}\b)", text)
        and not _installed(name)
    ]


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def test_docs_examples_run():
    pages = sorted(p for p in DOCS.glob("*.md") if ">>>" in p.read_text(encoding="utf-8"))
    assert pages, "the documentation has runnable examples"
    for page in pages:
        if _needs_missing(page.read_text(encoding="utf-8")):
            continue  # its examples need an optional package this environment lacks
        failures, _ = doctest.testfile(str(page), module_relative=False, verbose=False)
        assert failures == 0, page.name


def _pyx_sources(pyx: Path) -> str:
    """A .pyx file's text with the .pxi files it includes."""
    text = pyx.read_text(encoding="utf-8")
    for include in re.findall(r'^include "([^"]+)"', text, flags=re.M):
        text += (pyx.parent / include).read_text(encoding="utf-8")
    return text


@pytest.mark.parametrize("pyx", sorted(p.name for p in (ROOT / "hsw2v" / "_kernels").glob("*.pyx")))
def test_compiled_modules_docstring_examples_run(pyx):
    """pytest's --doctest-modules collects .py files only: the compiled modules' examples run
    here, from the docstrings the extension carries (every ``>>>`` line of the .pyx and the
    .pxi files it includes is found and run)."""
    if pyx == "_bench_walks.pyx":
        bench_walks()  # the benchmark-only walks: built on request, skipped where absent
    module = importlib.import_module(f"hsw2v._kernels.{pyx.removesuffix('.pyx')}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    # Cython also copies each function's docstring into __test__: run each example once
    tests = [t for t in finder.find(module) if ".__test__." not in t.name]
    source = _pyx_sources(ROOT / "hsw2v" / "_kernels" / pyx)
    expected = sum(1 for line in source.splitlines() if line.lstrip().startswith(">>>"))
    assert sum(len(t.examples) for t in tests) == expected
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, runner.summarize(verbose=False)


def test_gensim_page_lists_every_difference_in_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Where hsw2v differs from gensim on purpose", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    page = (DOCS / "gensim.md").read_text(encoding="utf-8")
    for row in rows[1:]:
        gensim_cell = row.split("|")[1].strip()
        assert gensim_cell in page, gensim_cell


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="mkdocs and mkdocstrings are not installed (pip install -e '.[docs]')",
)
def test_docs_site_builds_strictly(tmp_path):
    pytest.importorskip("matplotlib")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    site = tmp_path / "site"
    assert (site / "img" / "huffman-tree.png").read_bytes()[:4] == b"\x89PNG"
    for page in ("quickstart", "gensim", "hierarchical-softmax", "cli", "formats", "api"):
        assert (site / page / "index.html").is_file(), page
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "build_vocab" in api and "most_similar" in api and "plot_training" in api
    # the queries KeyedVectors inherits are documented with it
    for name in ("most_similar", "similarity", "doesnt_match", "evaluate_word_analogies",
                 "evaluate_word_pairs", "n_similarity", "get_mean_vector"):  # fmt: skip
        assert f'id="hsw2v.KeyedVectors.{name}"' in api, name
    # Word2Vec's numpydoc sections render as sections, every constructor parameter listed
    word2vec = api.split('id="hsw2v.Word2Vec"', 1)[1].split('id="hsw2v.Word2Vec.', 1)[0]
    assert "Parameters:" in word2vec and "Raises:" in word2vec and "Examples:" in word2vec
    for name in inspect.signature(hsw2v.Word2Vec).parameters:
        assert f"<code>{name}</code>" in word2vec, name
    # docstring examples render as code, never as Markdown quotes (a bare ">>>" block or a
    # line starting with ">" outside an Examples section); the Dask example of
    # hsw2v.distributed.train is the one left
    quoted = api.split('id="hsw2v.distributed.train"', 1)
    assert "<blockquote>" not in quoted[0] + quoted[1].split('id="hsw2v.HierarchicalSoftmax"')[1]
    shutil.rmtree(site)
