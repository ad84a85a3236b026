"""pytest settings for the whole checkout (tests/ and the doctests of hsw2v/).

gensim is a test dependency only: a docstring example that converts to or from gensim is
skipped where gensim is not installed, and every other example still runs."""

from __future__ import annotations

import re

import pytest

USES_GENSIM = re.compile(
    r"\b(to_gensim|from_gensim|kv_to_gensim|kv_from_gensim)\(|\bimport gensim|\bfrom gensim\b"
)


def _gensim_installed() -> bool:
    try:
        import gensim  # noqa: F401
    except ImportError:
        return False
    return True


def pytest_collection_modifyitems(config, items):
    if _gensim_installed():
        return
    skip = pytest.mark.skip(reason="the example uses gensim, which is not installed")
    for item in items:
        test = getattr(item, "dtest", None)
        if test is not None and any(USES_GENSIM.search(ex.source) for ex in test.examples):
            item.add_marker(skip)
