"""The models do not import the faces above them (docs: the layers of the architecture).

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
