"""The package face a newcomer meets first: its version, its logger, and what it says about
gensim's models it does not have yet."""

from __future__ import annotations

import ast
import importlib.metadata
import logging
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import hsw2v

ROOT = Path(hsw2v.__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def run_python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT),
               os.environ.get("PYTHONPATH")))))  # fmt: skip
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


# ------------------------------------------------------------------ the gensim models
@pytest.mark.parametrize(
    "name,module",
    [("Word2Vec", "hsw2v.word2vec"), ("FastText", "hsw2v.fasttext"), ("Doc2Vec", "hsw2v.doc2vec"),
     ("TaggedDocument", "hsw2v.corpora")],
)  # fmt: skip
def test_each_gensim_model_imports_from_the_package_root(name, module):
    namespace: dict = {}
    exec(f"from hsw2v import {name}", namespace)
    assert namespace[name].__module__.startswith(module)
    assert name in hsw2v.__all__


def test_other_missing_names_keep_the_plain_errors():
    with pytest.raises(AttributeError, match="module 'hsw2v' has no attribute 'Word3Vec'"):
        hsw2v.Word3Vec  # noqa: B018
    with pytest.raises(ImportError, match="cannot import name 'Word3Vec'"):
        exec("from hsw2v import Word3Vec", {})


def test_the_gensim_page_lists_every_model():
    page = (ROOT / "docs" / "gensim.md").read_text(encoding="utf-8")
    assert "## Which gensim models hsw2v covers" in page
    for name in ("Word2Vec", "FastText", "Doc2Vec"):
        assert f"| `gensim.models.{name}`" in page, name
    assert "not yet" not in page


# ------------------------------------------------------------------ the version
def test_the_version_has_one_source():
    from hsw2v import _version

    assert hsw2v.__version__ == _version.__version__
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    dynamic = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "hsw2v._version.__version__"}
    # setuptools reads the attribute from the file's text: a plain string literal
    tree = ast.parse((ROOT / "hsw2v" / "_version.py").read_text(encoding="utf-8"))
    values = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
              and [t.id for t in node.targets] == ["__version__"]]  # fmt: skip
    assert values == [hsw2v.__version__]


def test_config_reads_the_version_without_the_package_root():
    """hsw2v/_config.py takes the version from hsw2v._version, and of the package root only
    submodules (``from hsw2v import _cpu``), never a name of its __init__."""
    source = (ROOT / "hsw2v" / "_config.py").read_text(encoding="utf-8")
    from_root = [alias.name for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.ImportFrom) and node.module == "hsw2v"
                 for alias in node.names]  # fmt: skip
    assert from_root and all((ROOT / "hsw2v" / name).exists() for name in from_root), from_root
    assert "from hsw2v._version import __version__" in source
    from hsw2v import _config

    assert _config.config()["version"] == hsw2v.__version__


def test_the_installed_metadata_carries_the_version():
    name = PYPROJECT["project"]["name"]
    try:
        installed = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"the distribution {name} is not installed here (a source tree on the path)")
    assert installed == hsw2v.__version__


def test_the_command_line_shows_the_version():
    done = run_python("from hsw2v.cli import main; main(['--version'])")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["hsw2v", hsw2v.__version__]


# ------------------------------------------------------------------ the logger
def test_the_package_logger_has_a_null_handler():
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("hsw2v").handlers)


def test_a_library_warning_prints_nothing_without_logging_configured():
    """gensim prints nothing for "Effective 'alpha' higher than previous training cycles"
    unless the application configures logging; without a handler on the package's logger,
    Python's last-resort handler wrote it to stderr."""
    code = (
        "from hsw2v import Word2Vec\n"
        "s = [['a', 'b', 'c', 'd']] * 50\n"
        "m = Word2Vec(s, vector_size=8, min_count=1, workers=1, epochs=1)\n"
        "m.train(s, total_examples=len(s), epochs=1, start_alpha=0.05)\n"
        "print('trained')\n"
    )
    quiet = run_python(code)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.strip() == "trained"
    assert quiet.stderr == ""
    # the control: the warning is there for an application that configures logging
    shown = run_python("import logging; logging.basicConfig()\n" + code)
    assert shown.returncode == 0, shown.stderr
    assert "Effective 'alpha' higher than previous training cycles" in shown.stderr
