"""MkDocs hooks: generate the Huffman-tree picture, pull in the benchmark results when present,
leave optional pages out of the navigation until they are written, and turn the formulas into
MathML at build time, so that pages show them with no script and no network."""

from __future__ import annotations

import html
import io
import logging
import os
import re

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


def _without_missing(nav: list, docs: str) -> list:
    """``nav`` without the optional pages that are not written yet, at any depth."""
    kept = []
    for entry in nav:
        if isinstance(entry, dict):
            entry = {
                title: _without_missing(value, docs) if isinstance(value, list) else value
                for title, value in entry.items()
                if not (
                    isinstance(value, str)
                    and value in OPTIONAL_PAGES
                    and not os.path.isfile(os.path.join(docs, value))
                )
            }
            if not entry:
                continue
        kept.append(entry)
    return kept


def on_config(config, **kwargs):
    config["nav"] = _without_missing(config.get("nav") or [], config["docs_dir"])
    return config


# pymdownx.arithmatex (generic mode) leaves \(...\) in a span and \[...\] in a div, escaped
MATH = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*\\(?P<open>[\(\[])(?P<tex>.*?)\\[\)\]]\s*</(?P=tag)>',
    re.S,
)


# latex2mathml's output, set right for the browsers' MathML: \mathrel{+=} is one operator (it
# writes an <mrow> of operators inside an <mo>), and a function name such as \log is followed
# by TeX's thin space unless a parenthesis follows (it writes none)
NESTED_OPERATOR = re.compile(r"<mo><mrow>((?:<mo>[^<]*</mo>)+)</mrow></mo>")
FUNCTION_NAME = re.compile(r'(<mi>(?:log|exp|min|max)</mi>)(?!<mo stretchy="false">&#x00028;)')


def tex_to_mathml(html_text: str) -> str:
    """Every formula of a rendered page as MathML (latex2mathml), inline or as a block."""
    from latex2mathml.converter import convert

    def one(match: re.Match) -> str:
        tex = html.unescape(match.group("tex")).strip()
        block = match.group("open") == "["
        mathml = convert(tex, display="block" if block else "inline")
        mathml = NESTED_OPERATOR.sub(
            lambda m: "<mo>" + "".join(re.findall(r"<mo>([^<]*)</mo>", m.group(1))) + "</mo>",
            mathml,
        )
        return FUNCTION_NAME.sub(r'\1<mspace width="0.1667em" />', mathml)

    return MATH.sub(one, html_text)


def on_page_content(html_text, page, config, files, **kwargs):
    return tex_to_mathml(html_text)


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
    if page.file.src_uri == "benchmarks/RESULTS.md":
        # the dated record stays in the repository (benchmarks/history/), not on the site:
        # its links become the files' paths
        return re.sub(r"\[[^\]]+\]\((history/[^)#]+)[^)]*\)", r"`benchmarks/\1`", markdown)
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
