"""The models do not import the faces above them, and no module of hsw2v imports itself back
through others (docs: the layers of the architecture).

Read from the source with ``ast`` (every import, also those inside functions), so that a
lazy import cannot hide a circle: the models (``word2vec``, ``keyedvectors``) and everything
they import must never reach ``gensim_compat``, the conversion face that imports them.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import hsw2v

PACKAGE = Path(hsw2v.__file__).resolve().parent


def _path(module: str) -> Path:
    """The source of ``module`` (dotted, below ``hsw2v``): a file, or a package's
    ``__init__.py``."""
    base = PACKAGE.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _imports_in(source: str, module: str) -> set[str]:
    """The hsw2v modules (dotted, below ``hsw2v``) that ``source``, the code of ``module``,
    imports anywhere. Importing ``hsw2v.a.b`` runs package ``a``'s ``__init__`` first, so
    ``a`` counts too, unless ``module`` lies inside ``a`` (a package's own modules import
    their siblings without going back through it)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{module}: a relative import; hsw2v imports absolutely"
            if node.module == "hsw2v":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("hsw2v."):
                target = node.module.removeprefix("hsw2v.")
                names = {f"{target}.{alias.name}" for alias in node.names}
                submodules = {n for n in names if _path(n).exists()}
                found |= submodules
                inside = module.startswith(target + ".")
                if names - submodules or not inside:  # a name of the package's own code
                    found.add(target)
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("hsw2v.") for a in node.names
                      if a.name.startswith("hsw2v.")}  # fmt: skip
    for target in list(found):
        parts = target.split(".")
        for i in range(1, len(parts)):
            package = ".".join(parts[:i])
            if module != package and not module.startswith(package + "."):
                found.add(package)
    return found - {module}


def _imports(module: str) -> set[str]:
    """The hsw2v modules ``module`` imports anywhere in its source (lazy imports too)."""
    path = _path(module)
    if not path.exists():
        return set()  # a compiled extension: the kernels import no Python module
    return _imports_in(path.read_text(encoding="utf-8"), module)


def _modules() -> list[str]:
    """Every Python module of the package, dotted below ``hsw2v`` (a subpackage by its own
    name; the compiled kernels import none; the CPU levels' packages hold no Python code)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and parts[0] != "_cpu":
            found.append(".".join(parts))
    return sorted(found)


def _package_graph() -> dict[str, list[str]]:
    """Each module of the package and the package modules it imports (lazy imports too)."""
    graph = {m: sorted(_imports(m)) for m in _modules()}
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
    assert "word2vec" not in graph["running.trainer"]
    graph["running.trainer"] = [*graph["running.trainer"], "word2vec"]
    circles = _circles(graph)
    assert len(circles) == 1 and {"word2vec", "running.trainer"} <= set(circles[0]), circles


def test_importing_a_packages_module_imports_the_package():
    # hsw2v.layer.torch reads the layer's private parts; from outside the layer's package
    # that import runs the package (hsw2v.layer, whose to_torch() imports the PyTorch layer
    # back): a circle, found through the package; from inside the package it is none
    source = "from hsw2v.layer._root import WideRoot\nimport hsw2v.running.threads\n"
    assert _imports_in(source, "torch") == {"layer._root", "layer", "running.threads", "running"}
    assert _imports_in(source, "layer.torch") == {"layer._root", "running.threads", "running"}
    assert _imports_in("from hsw2v.layer import _root\n", "x") == {"layer", "layer._root"}
    # a sibling taken from the package is no import of the package; a name of its code is
    assert _imports_in("from hsw2v.layer import _root\n", "layer._fit") == {"layer._root"}
    assert _imports_in("from hsw2v.layer import Gradient\n", "layer._fit") == {"layer"}
    graph = {"layer": ["torch"], "layer._root": [], "torch": ["layer", "layer._root"]}
    assert _circles(graph) == [["layer", "torch"]]


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
    # no way back to word2vec: the trainer reads its tuning constants from hsw2v.running._tuning
    back = {name for name in _reach("word2vec") if "word2vec" in _imports(name)}
    assert back == set()


def test_the_face_imports_the_models():
    assert {"word2vec", "keyedvectors"} <= _imports("gensim_compat")


def test_the_model_file_schema_lives_beside_the_model():
    assert "persist" in _imports("word2vec._schema")
    persist_source = (PACKAGE / "persist.py").read_text(encoding="utf-8")
    assert "Word2Vec" not in persist_source.split('"""', 2)[2]  # the generic format only


# ------------------------------------------------------------------ the running layer
# The running layer (docs/architecture.md) imports the kernels, the ground and its own
# modules, never a model or a face; and nothing it imports from below imports it back, so
# the layer sits wholly above the ground (its checks, validation, live inside it).
ABOVE_RUNNING = ("word2vec", "keyedvectors", "layer", "fasttext", "doc2vec", "classifier",
                 "distributed", "_dist_core", "spark",
                 "_dist_tasks", "_dist_merge", "cli", "demo", "gensim_compat")  # fmt: skip


def _running_breaches(graph: dict[str, list[str]]) -> list[tuple[str, str]]:
    """``(importer, imported)`` for each import that crosses the running layer's boundary the
    wrong way: a module the layer reaches below it that imports the layer back, or a model or
    a face the layer reaches."""
    running = {m for m in graph if m == "running" or m.startswith("running.")}
    below, todo = set(), [n for m in running for n in graph[m] if n not in running]
    while todo:
        n = todo.pop()
        if n not in below:
            below.add(n)
            todo.extend(k for k in graph[n] if k not in running)
    back = [(n, k) for n in below for k in graph[n] if k in running]
    up = [(n, n) for n in below if n.split(".")[0] in ABOVE_RUNNING]
    return sorted(back + up)


def test_the_running_layer_sits_above_the_ground_only():
    graph = _package_graph()
    assert _running_breaches(graph) == []
    assert "running.validation" in graph  # the model-wide checks are the layer's own


def test_the_layer_check_sees_an_import_back_up():
    # the control: the checks back in the ground (a ground module that reads the objective
    # table, imported by the trainer), and the trainer reading a model, are both caught
    graph = _package_graph()
    graph["running.trainer"] = [*graph["running.trainer"], "trees"]
    graph["trees"] = [*graph["trees"], "running.objectives"]
    assert _running_breaches(graph) == [("trees", "running.objectives")]
    graph = _package_graph()
    graph["running.epochs"] = [*graph["running.epochs"], "word2vec"]
    assert ("word2vec", "word2vec") in _running_breaches(graph)


# ------------------------------------------------------------------ one owner per attribute
# Word2Vec's state that its files used to share: each attribute is assigned in one module
# (besides the constructor, which declares it), and the others call that module's methods.
OWNED = {"tree": "word2vec._vocab", "semantic_pending": "word2vec._vocab",
         "_recording": "word2vec._vocab", "norms": "word2vec._vocab"}
# The training record (gensim's names: train() calls, seconds, the latest call's loss, the
# learning rate reached) is written by word2vec._train's record methods only; no other class
# of the package has attributes of these names, so every module is checked for them.
TRAINING_RECORD = ("train_count", "total_train_time", "running_training_loss",
                   "min_alpha_yet_reached")  # fmt: skip
OWNED |= {name: "word2vec._train" for name in TRAINING_RECORD}
# (keyedvectors._intersect is KeyedVectors.intersect_word2vec_format, which resets its own
# norms.)
MODEL_FILES = ("word2vec", "word2vec._train", "word2vec._vocab", "word2vec._query",
               "word2vec._schema", "vocab_update", "distributed", "_gensim.convert",
               "running.trainer", "_dist_tasks", "_dist_core")


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
        writers = _writers(_path(module).read_text(encoding="utf-8"))
        for attribute, functions in writers.items():
            if module == "word2vec":
                assert functions == {"__init__"}, (module, attribute, functions)
            else:
                assert module == OWNED[attribute], (module, attribute, functions)


def _record_writers(source: str) -> dict[str, set[str]]:
    """``{attribute: {function names}}`` of the training record's attributes ``source``
    assigns."""
    return {a: f for a, f in _writers(source).items() if a in TRAINING_RECORD}


def test_the_training_record_has_one_owner():
    for module in _modules():
        writers = _record_writers(_path(module).read_text(encoding="utf-8"))
        if module != "word2vec._train":
            assert writers == {}, (module, writers)
    owner = _record_writers(_path("word2vec._train").read_text(encoding="utf-8"))
    assert set(owner) == set(TRAINING_RECORD)


def test_the_record_check_sees_a_second_writer():
    # the control: a driver that counts its own calls and sets the rate reached is caught
    source = "def run(model, s):\n    model.train_count += 1\n    model.min_alpha_yet_reached = s\n"
    assert _record_writers(source) == {"train_count": {"run"}, "min_alpha_yet_reached": {"run"}}


def test_the_owner_check_sees_a_second_writer():
    # the control: a training module that resets the norms itself is caught
    source = "def train(self):\n    self.wv.norms = None\n    (a.tree, b) = 1, 2\n    kv.norms = 0\n"
    assert _writers(source) == {"norms": {"train"}, "tree": {"train"}}


# --------------------------------------------------------------- public import paths
# Every public module (no leading underscore) of the package, by the name users import it
# with; the layout may move a module into a folder, never take one of these names away.
PUBLIC_MODULES = (
    "callbacks", "classifier", "cli", "corpora", "datasets", "demo", "distributed",
    "divergence", "doc2vec", "exceptions", "fasttext", "gensim_compat", "huffman", "keyedvectors",
    "label_trees",
    "layer", "negative", "params", "persist", "plot", "progress", "scoring", "spark", "torch",
    "trees",
    "validation", "vocab", "vocab_update", "word2vec",
    "running",  # the running layer's folder (params' home)
)  # fmt: skip
# Public modules that import an optional extra at import time: their test skips without it.
NEEDS = {"torch": "torch", "classifier": "sklearn", "spark": "pyspark"}
# Three public names are one module object with the module's home in a layer's folder.
ALIASES = {"params": "running.params", "torch": "layer.torch", "validation": "running.validation"}
# The public classes keep the module name a user (or a type check) sees.
CLASS_HOMES = {"Word2Vec": "word2vec", "KeyedVectors": "keyedvectors",
               "HierarchicalSoftmax": "layer", "HierarchicalSoftmaxClassifier": "classifier",
               "LineSentence": "corpora", "TrainingDivergedError": "divergence"}


def test_every_public_module_is_listed():
    top = {m for m in _modules() if "." not in m and not m.startswith("_")}
    assert top == set(PUBLIC_MODULES)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_each_public_import_path_works(name):
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    module = importlib.import_module(f"hsw2v.{name}")
    home = ALIASES.get(name, name)
    assert module is importlib.import_module(f"hsw2v.{home}")
    assert module.__name__ == f"hsw2v.{home}"
    assert getattr(hsw2v, name) is module  # hsw2v.<name> after the import, as before
    # a name taken with `from hsw2v.<name> import ...` is the home module's own
    exported = getattr(module, "__all__", None) or [
        n for n, v in vars(module).items()
        if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
    ]  # fmt: skip
    for attribute in exported:
        assert hasattr(module, attribute), (name, attribute)


@pytest.mark.parametrize("name", sorted(CLASS_HOMES))
def test_public_classes_keep_their_module(name):
    assert getattr(hsw2v, name).__module__ == f"hsw2v.{CLASS_HOMES[name]}"


def test_python_dash_m_and_the_console_script_reach_the_command_line():
    main = importlib.import_module("hsw2v.__main__").main
    assert main is importlib.import_module("hsw2v.cli").main
    scripts = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["project"]["scripts"]
    target, _, function = scripts["hsw2v"].partition(":")
    assert getattr(importlib.import_module(target), function) is main


def test_every_package_is_packaged():
    # a subpackage missing from pyproject's list would be left out of wheels
    packages = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"][
        "setuptools"]["packages"]  # fmt: skip
    folders = {".".join(("hsw2v", *p.parent.relative_to(PACKAGE).parts)).rstrip(".")
               for p in PACKAGE.rglob("__init__.py")}  # fmt: skip
    assert folders <= set(packages), sorted(folders - set(packages))


SOURCE_SUFFIXES = (".py", ".pyx", ".pxd", ".pxi", ".h")
MAX_SOURCE_LINES = 600  # docs/architecture.md: no file in hsw2v/ is over 600 lines


def long_sources(root: Path, limit: int) -> dict:
    """The hand-written sources under ``root`` over ``limit`` lines, with their counts
    (Cython's generated ``.c`` files are not sources)."""
    return {
        str(p.relative_to(root)): n
        for p in sorted(root.rglob("*"))
        if p.suffix in SOURCE_SUFFIXES
        and (n := len(p.read_text(encoding="utf-8").splitlines())) > limit
    }


def test_no_source_file_is_over_600_lines():
    assert long_sources(PACKAGE, MAX_SOURCE_LINES) == {}


def test_the_length_check_sees_a_long_file(tmp_path):
    (tmp_path / "long.pyx").write_text("x = 1\n" * 601)
    (tmp_path / "short.pxi").write_text("x = 1\n" * 600)
    (tmp_path / "long.c").write_text("int x;\n" * 900)  # generated, not counted
    assert long_sources(tmp_path, MAX_SOURCE_LINES) == {"long.pyx": 601}


def run_in_a_fresh_interpreter(code: str) -> None:
    """Run ``code`` in a new Python process with this checkout first on the path; a failed
    assertion there fails the test."""
    paths = [str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def test_importing_hsw2v_never_imports_pyspark():
    # hsw2v.spark is the one module that imports pyspark, and only when it is imported itself
    run_in_a_fresh_interpreter(
        "import sys, hsw2v, hsw2v.distributed, hsw2v._dist_core\n"
        "from hsw2v import Word2Vec, KeyedVectors\n"
        "assert 'pyspark' not in sys.modules, sorted(m for m in sys.modules if 'spark' in m)"
    )


def test_a_distributed_task_imports_only_what_it_runs():
    # a Spark or Dask task imports these modules in every fresh Python worker: no
    # pyspark.ml, no smart_open (and its cloud clients), no scipy.linalg
    run_in_a_fresh_interpreter(
        "import sys, hsw2v.spark._engine, hsw2v._dist_tasks\n"
        "heavy = [m for m in ('pyspark.ml', 'smart_open', 'scipy.linalg') if m in sys.modules]\n"
        "assert not heavy, heavy"
    )
