"""The models do not import the faces above them, and no module of hsw2v imports itself back
through others (docs: the layers of the architecture).

Read from the source with ``ast`` (every import, also those inside functions), so that a
lazy import cannot hide a circle: the models (``word2vec``, ``keyedvectors``) and everything
they import must never reach ``gensim_compat``, the conversion face that imports them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import hsw2v

PACKAGE = Path(hsw2v.__file__).resolve().parent


def _imports(module: str) -> set[str]:
    """The hsw2v modules ``module`` imports anywhere in its source."""
    path = PACKAGE / f"{module}.py"
    if not path.exists():
        return set()  # a compiled extension: the kernels import no Python module
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "hsw2v":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("hsw2v."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("hsw2v.")}
    return found - {module}


def _modules() -> list[str]:
    """Every Python module of the package (the compiled kernels import none)."""
    return sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


# The one import back up, from a function: the trainer reads the private-row tuning constants
# on ``hsw2v.word2vec``, where the benchmarks set them (benchmarks/ab_builds.py, DIR@JSON).
ALLOWED_BACK_EDGES = {("_make_trainer", "word2vec")}


def _circles(edges_left_out=frozenset()) -> list[list[str]]:
    """The import circles among the package's modules: each strongly connected group of more
    than one module (Tarjan 1972), sorted."""
    graph = {m: sorted(_imports(m) - {"__init__"}) for m in _modules()}
    graph = {
        m: [n for n in out if n in graph and (m, n) not in edges_left_out]
        for m, out in graph.items()
    }
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(m):
        index[m] = low[m] = len(index)
        stack.append(m)
        on_stack.add(m)
        for n in graph[m]:
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in on_stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            group = []
            while True:
                n = stack.pop()
                on_stack.discard(n)
                group.append(n)
                if n == m:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for m in graph:
        if m not in index:
            visit(m)
    return sorted(groups)


def test_no_import_circle():
    assert _circles(ALLOWED_BACK_EDGES) == []


def test_the_circle_check_sees_circles():
    # the control: with the allowed back edge counted, its circle is found
    circles = _circles()
    assert len(circles) == 1 and {"word2vec", "_make_trainer"} <= set(circles[0]), circles


def _reach(module: str) -> set[str]:
    seen, todo = set(), [module]
    while todo:
        for name in _imports(todo.pop()):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def test_models_never_reach_the_gensim_face():
    for model in ("word2vec", "keyedvectors"):
        assert "gensim_compat" not in _reach(model), model
    assert "keyedvectors" not in _reach("keyedvectors")
    # the one way back to word2vec: the trainer reads the private-row tuning constants
    # there, where the benchmarks set them (benchmarks/ab_builds.py, DIR@JSON)
    back = {name for name in _reach("word2vec") if "word2vec" in _imports(name)}
    assert back == {"_make_trainer"}


def test_the_face_imports_the_models():
    assert {"word2vec", "keyedvectors"} <= _imports("gensim_compat")


def test_the_model_file_schema_lives_beside_the_model():
    assert "persist" in _imports("_w2v_schema")
    persist_source = (PACKAGE / "persist.py").read_text(encoding="utf-8")
    assert "Word2Vec" not in persist_source.split('"""', 2)[2]  # the generic format only
