"""Do two builds of hsw2v train the same bits? Weights compared byte for byte, workers=1.

Each ``--build DIR`` (a checkout with its extensions built in place) trains the same settings
in a fresh subprocess (``PYTHONPATH=DIR``, single-threaded BLAS, PYTHONHASHSEED=0) over the
first ``--words`` words of the corpus, with ``workers=1`` and a fixed seed, and reports the
SHA-256 of ``wv.vectors``, ``syn1`` and ``syn1neg`` (their bytes) and the training loss. The
builds agree on a setting when every digest and the loss are equal.

    python3 benchmarks/same_weights.py --corpus ../data/gcide.txt --build OLD_CHECKOUT \\
        --build . [--settings sg-ns,cbow-ns,sg,cbow,sg-hs-ns,cbow-hs-ns] [--words 300000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import child_env  # noqa: E402

SETTINGS = {  # name: (sg, hs, negative)
    "sg": (1, 1, 0),
    "cbow": (0, 1, 0),
    "sg-ns": (1, 0, 5),
    "cbow-ns": (0, 0, 5),
    "sg-hs-ns": (1, 1, 5),
    "cbow-hs-ns": (0, 1, 5),
}


def child(corpus: str, words: int, setting: str, epochs: int, size: int) -> dict:
    """One training run (in the subprocess): the digests of its weights and its loss."""
    import hashlib

    from hsw2v import LineSentence, Word2Vec

    sentences, n = [], 0
    for sentence in LineSentence(corpus):
        sentences.append(sentence)
        n += len(sentence)
        if n >= words:
            break
    sg, hs, negative = SETTINGS[setting]
    model = Word2Vec(sentences, sg=sg, hs=hs, negative=negative, workers=1, epochs=epochs,
                     seed=3, vector_size=size, compute_loss=True)  # fmt: skip
    digest = {
        name: hashlib.sha256(getattr_path(model, name).tobytes()).hexdigest()[:16]
        for name in ("wv.vectors", "syn1", "syn1neg")
    }
    return {"digest": digest, "loss": model.get_latest_training_loss()}


def getattr_path(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus")
    ap.add_argument("--build", action="append", default=[])
    ap.add_argument("--settings", default="sg-ns,cbow-ns,sg,cbow,sg-hs-ns,cbow-hs-ns")
    ap.add_argument("--words", type=int, default=300_000)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*json.loads(args.child))))
        return
    if len(args.build) < 2 or not args.corpus:
        ap.error("give --corpus and at least two --build directories")
    same_everywhere = True
    for setting in args.settings.split(","):
        results = []
        for build in args.build:
            env = child_env()
            env["PYTHONPATH"] = str(Path(build).resolve())
            env["PYTHONHASHSEED"] = "0"
            spec = json.dumps([args.corpus, args.words, setting, args.epochs, args.size])
            out = subprocess.run([sys.executable, __file__, "--child", spec], env=env,
                                 capture_output=True, text=True, check=True)  # fmt: skip
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        same = all(r == results[0] for r in results)
        same_everywhere &= same
        print(f"{setting:11s} {'identical' if same else 'DIFFERENT'}: "
              + "; ".join(f"{b}: {r['digest']} loss {r['loss']!r}"
                          for b, r in zip(args.build, results, strict=True)), flush=True)  # fmt: skip
    sys.exit(0 if same_everywhere else 1)


if __name__ == "__main__":
    main()
