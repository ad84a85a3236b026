"""The documentation: the site builds without warnings, and its examples run."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
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
        if re.search(rf">>> (import {name}\b|from {name}\b)", text) and not _installed(name)
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


def _volatile_aside(line: str) -> str:
    """A line of the command line's output with what changes from run to run made one token:
    times, speeds, the thread count (the number of CPUs) and the progress bar's drawing."""
    line = re.sub(r"\|[ █▏▎▍▌▋▊▉]*\|", "|BAR|", line)
    line = re.sub(r"\[\d+:\d+<\d+:\d+", "[TIME", line)
    line = re.sub(r"[\d,]+ words/s", "N words/s", line)
    line = re.sub(r"\b[\d.]+ s\b", "N s", line)
    return re.sub(r"on \d+ threads", "on N threads", line)


def _in_a_terminal(command: list[str], cwd: Path) -> str:
    """What ``command`` shows in an 100-column terminal (stdout and stderr), with each
    carriage-returned progress line as it was left."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    process = subprocess.Popen(
        command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert process.wait(timeout=600) == 0, b"".join(chunks).decode(errors="replace")
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_cli_page_shows_what_hsw2v_train_prints(tmp_path):
    """docs/cli.md's `hsw2v train` example, run as written on the bundled corpus in a
    terminal, prints the page's lines (counts and vocabulary exactly; times, speeds, the
    thread count and the bar's drawing aside)."""
    pytest.importorskip("tqdm")  # the progress bar the page shows
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n\$ (hsw2v train .*?)\n(.*?)```", page, re.S)
    command, shown = block.group(1).split(), block.group(2).splitlines()
    import gzip

    from hsw2v.datasets import demo_corpus_path

    with gzip.open(demo_corpus_path(), "rb") as src:
        (tmp_path / "corpus.txt").write_bytes(src.read())
    printed = _in_a_terminal([sys.executable, "-m", "hsw2v", *command[1:]], tmp_path)
    assert [_volatile_aside(line) for line in printed.split("\n") if line.strip()] == [
        _volatile_aside(line) for line in shown
    ], printed


# What the site is built with: pyproject.toml's docs extra
DOCS_EXTRA = ("mkdocs", "mkdocstrings", "material", "pymdownx", "latex2mathml", "matplotlib")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The documentation site, built once for this module's tests."""
    missing = [name for name in DOCS_EXTRA if not _installed(name)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (pip install -e '.[docs]')")
    site = tmp_path_factory.mktemp("docs") / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr
    yield site, result.stderr
    shutil.rmtree(site)


@pytest.mark.xdist_group("docs_site")
def test_docs_site_builds_strictly(site):
    site, stderr = site
    assert "WARNING" not in stderr, stderr
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


# Where a page makes the browser fetch something: these tags' attributes, CSS url() and @import
FETCHING = {
    "script": "src", "img": "src", "iframe": "src", "source": "src", "video": "src",
    "audio": "src", "embed": "src", "object": "data", "link": "href",
}  # fmt: skip
LINK_NOT_FETCHED = {"canonical", "alternate", "next", "prev"}  # links, not fetched to show a page
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""")


def _remote(url: str) -> bool:
    """Whether a browser would fetch ``url`` from another host (a CDN, a font service)."""
    url = url.strip()
    if url.startswith("//"):  # protocol-relative: another host
        return True
    local = ("data:", "blob:", "about:", "mailto:", "javascript:")
    return bool(re.match(r"[a-z][a-z0-9+.-]*:", url, re.I)) and not url.lower().startswith(local)


class _Fetches(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []  # "what: url" of every remote fetch
        self.local_css: list[str] = []  # the site's own stylesheets, to scan as well
        self.theme_fetches: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag == "style":
            self._in_style = True
        for url in CSS_URL.findall(attrs.get("style", "")):
            self._check(f"<{tag} style>", "".join(url))
        if tag == "img" and attrs.get("srcset"):
            for part in attrs["srcset"].split(","):
                self._check("<img srcset>", part.split()[0] if part.split() else "")
        name = FETCHING.get(tag)
        if not name or not attrs.get(name):
            pass
        elif tag == "link" and set(attrs.get("rel", "").lower().split()) & LINK_NOT_FETCHED:
            pass
        else:
            self._check(f"<{tag} {name}>", attrs[name])
            if tag == "link" and "stylesheet" in attrs.get("rel", "") and not _remote(attrs[name]):
                self.local_css.append(attrs[name])
        # what makes the theme's script load something from elsewhere: a Mermaid diagram
        # (its library comes from a CDN) and a repository link (its facts from an API)
        if "mermaid" in attrs.get("class", "").split():
            self.theme_fetches.append(f"<{tag} class=mermaid> (the Mermaid library)")
        if attrs.get("data-md-component") == "source":
            self.theme_fetches.append("the repository link (facts fetched from its host)")

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            for url in CSS_URL.findall(data):
                self._check("<style>", "".join(url))

    def _check(self, what, url):
        if _remote(url):
            self.found.append(f"{what}: {url}")


def remote_fetches(site: Path) -> dict[str, list[str]]:
    """``{page: [what it fetches from elsewhere]}`` for every HTML page of a built site, with
    the stylesheets it loads from the site (their url() and @import) counted as its own."""
    found = {}
    for page in sorted(site.rglob("*.html")):
        parser = _Fetches()
        parser.feed(page.read_text(encoding="utf-8"))
        fetches = parser.found + parser.theme_fetches
        for href in parser.local_css:
            path = href.split("?")[0].split("#")[0]
            css = (
                site / path.lstrip("/") if path.startswith("/") else page.parent / path
            ).resolve()
            if css.is_file():
                text = css.read_text(encoding="utf-8")
                fetches += [
                    f"{href}: {''.join(u)}" for u in CSS_URL.findall(text) if _remote("".join(u))
                ]
            else:
                fetches.append(f"{href}: not in the site")
        if fetches:
            found[str(page.relative_to(site))] = fetches
    return found


def test_the_offline_check_finds_what_a_page_fetches(tmp_path):
    """The check below, on pages that each fetch one thing from elsewhere (the MathJax and
    highlight.js CDN scripts the site used to load, a font service's stylesheet, a font
    imported by a stylesheet, an image), and on a page that fetches nothing."""
    (tmp_path / "css").mkdir()
    (tmp_path / "css" / "own.css").write_text(
        "@font-face{src:url(fonts/a.woff2)} body{background:url('data:image/svg+xml,<svg/>')}"
    )
    (tmp_path / "css" / "fonts.css").write_text(
        "@import url('https://fonts.googleapis.com/css?family=Roboto');"
    )
    pages = {
        "mathjax.html": '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js">'
        "</script>",
        "hljs.html": '<script src="//cdnjs.cloudflare.com/ajax/libs/highlight.js/11/highlight.min.js">'
        "</script>",
        "font.html": '<link rel="preconnect" href="https://fonts.gstatic.com">',
        "import.html": '<link rel="stylesheet" href="css/fonts.css">',
        "inline.html": "<style>@import 'https://example.org/x.css';</style>",
        "badge.html": '<p><img src="https://img.shields.io/badge/x-y-green" alt="x"></p>',
        "mermaid.html": '<pre class="mermaid">graph TD; a-->b</pre>',
        "clean.html": '<link rel="stylesheet" href="css/own.css"><script src="js/a.js"></script>'
        '<a href="https://example.org/paper.pdf">a link is no fetch</a>'
        '<link rel="canonical" href="https://example.org/">',
    }
    for name, body in pages.items():
        (tmp_path / name).write_text(f"<html><head></head><body>{body}</body></html>")
    found = remote_fetches(tmp_path)
    assert sorted(found) == sorted(set(pages) - {"clean.html"}), found
    assert all(len(v) == 1 for v in found.values()), found


@pytest.mark.xdist_group("docs_site")
def test_docs_site_works_offline(site):
    """Every page of the built site shows with no network: no script, stylesheet, font or
    picture from elsewhere; the formulas are MathML and the code is highlighted at build
    time; the home page shows the speed chart with its date and machine."""
    site, _ = site
    assert len(list(site.rglob("*.html"))) > 15
    assert remote_fetches(site) == {}
    hs = (site / "hierarchical-softmax" / "index.html").read_text(encoding="utf-8")
    ns = (site / "negative-sampling" / "index.html").read_text(encoding="utf-8")
    assert hs.count('<math xmlns="http://www.w3.org/1998/Math/MathML"') >= 20
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in ns
    for page in (hs, ns):  # no formula left as TeX for a script to find
        assert "arithmatex" not in page and "\\(" not in page and "$$" not in page
    quickstart = (site / "quickstart" / "index.html").read_text(encoding="utf-8")
    # Pygments' token classes (a keyword, a name) inside a highlighted block
    highlighted = re.compile(
        r'<div class="highlight"><pre><span></span><code><span class="kn">from</span>'
        r'<span class="w"> </span><span class="nn">hsw2v</span>'
    )
    assert highlighted.search(quickstart)
    home = (site / "index.html").read_text(encoding="utf-8")
    assert 'src="benchmarks/speed.png"' in home
    assert (site / "benchmarks" / "speed.png").read_bytes()[:4] == b"\x89PNG"
    assert "2026-11-22" in home and "Intel Xeon" in home


# a Markdown list item left inside a paragraph: "- " or "* " or "1. " opening one of its lines
RUN_ON_ITEM = re.compile(r"\n\s*(?:[-*+]|\d+\.) +\S")


def run_on_lists(site: Path) -> dict[str, list[str]]:
    """``{page: [the start of each paragraph holding a list's items as text]}``: Markdown left a
    list unparsed (e.g. after a block inside a list item not indented by four spaces)."""
    found = {}
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        # code may hold such lines
        text = re.sub(r"<(pre|code)\b.*?</\1>", "CODE", text, flags=re.S)
        bad = [p[:80] for p in re.findall(r"<p>(.*?)</p>", text, re.S) if RUN_ON_ITEM.search(p)]
        if bad:
            found[str(page.relative_to(site))] = bad
    return found


@pytest.mark.xdist_group("docs_site")
def test_no_list_renders_as_run_on_text(site):
    site, _ = site
    assert run_on_lists(site) == {}
    gensim = (site / "gensim" / "index.html").read_text(encoding="utf-8")
    section = gensim.split('id="what-matches-gensims-contract"', 1)[1].split("<h2", 1)[0]
    # the contract's items, tables and all, are one list
    assert section.count("<ul>") == 1 and section.count("<table>") == 2


BENCH = ROOT / "benchmarks"
# a quoted section name right after a reference to the results: `benchmarks/RESULTS.md`, "16 cores"
RESULTS_QUOTE = re.compile(r'RESULTS\.md`{0,2}\)?,\s*(?:(?:#|\*|//)\s*)?"([^"]{3,200})"')


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\s*(?:#|\*|//)\s*", " ", text)).strip()


def test_results_page_is_the_record_not_the_diary():
    """benchmarks/RESULTS.md holds the standing figures, each linked to its full section in
    benchmarks/history/, and an index of every past section; every section a source file, a
    page or README quotes by name is found in the history."""
    page = (BENCH / "RESULTS.md").read_text(encoding="utf-8")
    assert len(page.splitlines()) < 200
    history = {p.name: p.read_text(encoding="utf-8") for p in (BENCH / "history").glob("*.md")}
    assert history, "the past sections are kept in benchmarks/history/"
    headings = [
        _one_line(line.lstrip("#"))
        for text in history.values()
        for line in text.splitlines()
        if line.startswith("## ") or line.startswith("### ")
    ]
    # every link to the history names a file that is there
    links = re.findall(r"\]\(history/([^)#]+)", page)
    assert links and set(links) <= set(history), set(links) - set(history)
    # every past section is in the index: its title in its file's row, in order, counted
    index = page.split("## Past sections", 1)[1]
    for name, text in history.items():
        titles = [t.strip().replace("|", "\\|") for t in re.findall(r"^## (.+)$", text, re.M)]
        start = f"| [{name[:-3]}](history/{name}) | {len(titles)} | "
        rows = [line for line in index.splitlines() if line.startswith(start)]
        assert len(rows) == 1, (name, len(titles))
        assert rows[0] == start + " · ".join(titles) + " |", name
    # each standing figure: a command, a date, a commit (or says it has none), its section
    current = page.split("## Current results", 1)[1].split("## Past sections", 1)[0]
    entries = re.split(r"^### ", current, flags=re.M)[1:]
    assert len(entries) >= 10
    for entry in entries:
        title = entry.splitlines()[0]
        assert "python3 benchmarks/" in entry or "bash benchmarks/" in entry or "pip " in entry, (
            title
        )
        assert re.search(r"2026-\d\d-\d\d", entry), title
        assert re.search(r"commit [0-9a-f]{7}|commit: not recorded", entry), title
        assert "](history/" in entry, title
        for quoted in re.findall(r'"([^"]+)"', entry):
            assert any(_one_line(quoted).lower() in h.lower() for h in headings), (title, quoted)
    # what the code and the pages cite by name is still found
    cited = 0
    for path in [
        ROOT / "README.md",
        *DOCS.glob("*.md"),
        *BENCH.glob("*.py"),
        *(ROOT / "hsw2v").rglob("*"),
    ]:
        if path.suffix not in {".md", ".py", ".pyx", ".pxd", ".h"}:
            continue
        for quoted in RESULTS_QUOTE.findall(path.read_text(encoding="utf-8", errors="replace")):
            cited += 1
            assert any(_one_line(quoted).lower() in h.lower() for h in headings), (
                path.name,
                quoted,
            )
    assert cited >= 10
