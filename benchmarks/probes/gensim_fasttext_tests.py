"""gensim 4.4's own ``test_fasttext.py``, run against hsw2v's FastText.

The test file inside the gensim wheel is copied to a temporary folder with two imports
changed: ``FastText`` (imported there as ``FT_gensim``) and ``FastTextKeyedVectors`` come
from hsw2v, and so do ``compute_ngrams_bytes`` and ``ft_hash_bytes``. Everything else
(gensim's loaders of Facebook's files, its test data, the Word2Vec tests the file imports)
stays gensim's. The pytest summary and every failure's last line are printed.

Usage:  python3 benchmarks/probes/gensim_fasttext_tests.py   (needs gensim 4.4.0, pytest and
        testfixtures, which gensim's tests import)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SWAPS = {
    "from gensim.models.fasttext import FastText as FT_gensim, FastTextKeyedVectors, _unpack": (
        "from gensim.models.fasttext import _unpack\n"
        "from hsw2v import FastText as FT_gensim, FastTextKeyedVectors"
    ),
    "from gensim.models.fasttext_inner import compute_ngrams, compute_ngrams_bytes, ft_hash_bytes": (
        "from gensim.models.fasttext_inner import compute_ngrams\n"
        "from hsw2v.fasttext._ngrams import compute_ngrams_bytes, ft_hash_bytes"
    ),
}


def main() -> int:
    import gensim.test

    source = Path(gensim.test.__file__).parent / "test_fasttext.py"
    text = source.read_text(encoding="utf-8")
    for old, new in SWAPS.items():
        if old not in text:
            raise SystemExit(f"gensim's test file changed: {old!r} not found")
        text = text.replace(old, new)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "test_fasttext_on_hsw2v.py"
        target.write_text(text, encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            filter(None, (str(REPO), os.environ.get("PYTHONPATH")))))  # fmt: skip
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
             str(target)], cwd=folder, env=env, capture_output=True, text=True,
        )  # fmt: skip
    lines = run.stdout.splitlines()
    print("\n".join(line for line in lines if line.startswith(("FAILED", "ERROR"))))
    print(lines[-1] if lines else run.stderr[-2000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
