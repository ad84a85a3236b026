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


def _package_graph() -> dict[str, list[str]]:
    """Each module of the package and the package modules it imports (lazy imports too)."""
    graph = {m: sorted(_imports(m) - {"__init__"}) for m in _modules()}
    return {m: [n for n in out if n in graph] for m, out in graph.items()}


def _circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The import circles of ``graph``: each strongly connected group of more than one module
    (Tarjan 1972), sorted."""
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
    """None at all, lazy imports inside functions included."""
    assert _circles(_package_graph()) == []


def test_the_circle_check_sees_circles():
    # the control: the package's own graph with one edge back up (the trainer reading its
    # tuning constants from the model module, as it once did) has a circle, and it is found
    graph = _package_graph()
    assert "word2vec" not in graph["_make_trainer"]
    graph["_make_trainer"] = [*graph["_make_trainer"], "word2vec"]
    circles = _circles(graph)
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
    # no way back to word2vec: the trainer reads its tuning constants from hsw2v._tuning
    back = {name for name in _reach("word2vec") if "word2vec" in _imports(name)}
    assert back == set()


def test_the_face_imports_the_models():
    assert {"word2vec", "keyedvectors"} <= _imports("gensim_compat")


def test_the_model_file_schema_lives_beside_the_model():
    assert "persist" in _imports("_w2v_schema")
    persist_source = (PACKAGE / "persist.py").read_text(encoding="utf-8")
    assert "Word2Vec" not in persist_source.split('"""', 2)[2]  # the generic format only


# ------------------------------------------------------------------ one owner per attribute
# Word2Vec's state that its files used to share: each attribute is assigned in one module
# (besides the constructor, which declares it), and the others call that module's methods.
OWNED = {"tree": "_w2v_vocab", "semantic_pending": "_w2v_vocab", "_recording": "_w2v_vocab",
         "norms": "_w2v_vocab"}
# (_w2v_intersect is KeyedVectors.intersect_word2vec_format, which resets its own norms.)
MODEL_FILES = ("word2vec", "_w2v_train", "_w2v_vocab", "_w2v_query", "_w2v_schema",
               "vocab_update", "distributed", "_gensim_convert", "_make_trainer", "_dist_tasks")


def _writers(source: str) -> dict[str, set[str]]:
    """``{attribute: {function names}}`` of the attributes of :data:`OWNED` a module's source
    assigns (``x.attr = ...``, also in tuples and augmented assignments)."""
    found: dict[str, set[str]] = {}
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for func in [n for n in ast.walk(ast.parse(source)) if isinstance(n, functions)]:
        for node in ast.walk(func):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                for t in ast.walk(target):
                    if not isinstance(t, ast.Attribute) or t.attr not in OWNED:
                        continue
                    if t.attr == "norms" and getattr(t.value, "attr", None) != "wv":
                        continue  # a KeyedVectors' own norms (kv.norms), not a model's wv
                    found.setdefault(t.attr, set()).add(func.name)
    return found


def test_each_shared_attribute_has_one_owner():
    for module in MODEL_FILES:
        writers = _writers((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
        for attribute, functions in writers.items():
            if module == "word2vec":
                assert functions == {"__init__"}, (module, attribute, functions)
            else:
                assert module == OWNED[attribute], (module, attribute, functions)


def test_the_owner_check_sees_a_second_writer():
    # the control: a training module that resets the norms itself is caught
    source = "def train(self):\n    self.wv.norms = None\n    (a.tree, b) = 1, 2\n    kv.norms = 0\n"
    assert _writers(source) == {"norms": {"train"}, "tree": {"train"}}
