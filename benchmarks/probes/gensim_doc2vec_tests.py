"""gensim 4.4's own ``test_doc2vec.py``, run against hsw2v's Doc2Vec.

The test file inside the gensim wheel is copied to a temporary folder with its ``doc2vec``
module swapped for one whose ``Doc2Vec``, ``TaggedDocument`` and ``TaggedLineDocument`` are
hsw2v's (every other name stays gensim's ``gensim.models.doc2vec``). Everything else (its
test data, ``keyedvectors``, the Word2Vec helpers it imports) stays gensim's. The pytest
summary and every failure's line are printed.

Usage:  python3 benchmarks/probes/gensim_doc2vec_tests.py   (needs gensim 4.4.0, pytest and
        testfixtures, which gensim's tests import)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SWAP = (
    "from gensim.models import doc2vec, keyedvectors",
    "from gensim.models import keyedvectors\nimport hsw2v_doc2vec as doc2vec",
)
SHIM = '''import gensim.models.doc2vec as _gensim_doc2vec
from hsw2v import Doc2Vec, TaggedDocument, TaggedLineDocument  # noqa: F401


def __getattr__(name):
    return getattr(_gensim_doc2vec, name)
'''


def main() -> int:
    import gensim.test

    source = Path(gensim.test.__file__).parent / "test_doc2vec.py"
    text = source.read_text(encoding="utf-8")
    if SWAP[0] not in text:
        raise SystemExit(f"gensim's test file changed: {SWAP[0]!r} not found")
    text = text.replace(*SWAP)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "test_doc2vec_on_hsw2v.py").write_text(text, encoding="utf-8")
        (Path(folder) / "hsw2v_doc2vec.py").write_text(SHIM, encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            filter(None, (str(REPO), folder, os.environ.get("PYTHONPATH")))))  # fmt: skip
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
             "test_doc2vec_on_hsw2v.py"], cwd=folder, env=env, capture_output=True, text=True,
        )  # fmt: skip
    lines = run.stdout.splitlines()
    print("\n".join(line for line in lines if line.startswith(("FAILED", "ERROR"))))
    print(lines[-1] if lines else run.stderr[-2000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
