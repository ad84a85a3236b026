"""MkDocs hooks: generate the Huffman-tree picture, pull in the benchmark results when present,
and leave optional pages out of the navigation until they are written."""

from __future__ import annotations

import io
import logging
import os

from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.hsw2v")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTIONAL_PAGES = ("robustness.md",)
BENCHMARK_FILES = ("RESULTS.md", "speed.png")  # the page pulls these in when present
TREE_WORDS = ("god", "lord", "king", "water", "earth", "the", "and")


def _present_benchmarks() -> list[str]:
    """The benchmark files to publish: RESULTS.md and every picture it may link to."""
    folder = os.path.join(ROOT, "benchmarks")
    pictures = sorted(n for n in os.listdir(folder) if n.endswith(".png"))
    names = [n for n in BENCHMARK_FILES if n not in pictures] + pictures
    return [n for n in names if os.path.isfile(os.path.join(folder, n))]


def on_config(config, **kwargs):
    docs = config["docs_dir"]
    nav = config.get("nav") or []
    config["nav"] = [
        entry
        for entry in nav
        if not (
            isinstance(entry, dict)
            and any(
                page in OPTIONAL_PAGES and not os.path.isfile(os.path.join(docs, page))
                for page in entry.values()
            )
        )
    ]
    return config


def _tree_png() -> bytes:
    from hsw2v import Word2Vec
    from hsw2v.datasets import demo_corpus
    from hsw2v.plot import tree

    model = Word2Vec(min_count=5, vector_size=8)
    model.build_vocab(demo_corpus())
    buffer = io.BytesIO()
    fig = tree(
        model,
        TREE_WORDS,
        title="Huffman paths of seven words of the King James Bible (vocabulary "
        f"{len(model.wv):,}); filled nodes are shared",
    )
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def on_files(files, config, **kwargs):
    files.append(File.generated(config, "img/huffman-tree.png", content=_tree_png()))
    for name in _present_benchmarks():
        with open(os.path.join(ROOT, "benchmarks", name), "rb") as fin:
            files.append(File.generated(config, f"benchmarks/{name}", content=fin.read()))
    return files


def on_page_markdown(markdown, page, config, files, **kwargs):
    if "<!-- benchmarks -->" not in markdown:
        return markdown
    present = _present_benchmarks()
    lines = []
    if "RESULTS.md" in present:
        lines.append(
            "The latest numbers, with the machine and the exact commands, are in "
            "[benchmarks/RESULTS.md](benchmarks/RESULTS.md)."
        )
    if "speed.png" in present:
        lines.append("\n![Training speed](benchmarks/speed.png)")
    if not lines:
        lines.append(
            "No results are checked in yet: run the benchmark (below) to produce "
            "`benchmarks/RESULTS.md` and its chart `benchmarks/speed.png`."
        )
    return markdown.replace("<!-- benchmarks -->", "\n".join(lines))
