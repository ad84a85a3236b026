"""Two builds of hsw2v train the same models bit for bit: a check for kernel refactors.

Each ``--build DIR`` is a checkout with its extensions built in place. For each model of
``--models`` (default ``word2vec,fasttext,doc2vec``; Doc2Vec's ``sg`` column is ``dm=0``,
PV-DBOW, against ``dm=1``, PV-DM) and every setting
(hierarchical softmax ``hs=1, negative=0``, negative sampling ``hs=0, negative=5`` and
both ``hs=1, negative=5`` with gensim's draws (per pair in skip-gram, per centre in CBOW), and
``hs=0, negative=5`` with shared negatives; skip-gram and CBOW; a ``LineSentence`` iterable and
``corpus_file``; the default walk and
``HSW2V_KERNEL=reference``; the iterable through ``build_vocab`` and ``train(total_words=...)``,
scheduled in words by every build) each build trains one model with ``workers=1`` and a fixed seed in
a fresh subprocess (``PYTHONPATH=DIR``), and the weight matrices (``wv.vectors``, ``syn1``,
``syn1neg``) are compared byte for byte. The corpus is the first ``--lines`` lines of
``--corpus`` (default: the bundled demo corpus). Exit status 1 when any setting differs.
``--loss on`` trains both builds with ``compute_loss=True`` (and prints the two losses'
relative difference), ``--loss second`` only the second build (its weights must still be
the first one's: the loss tally does not touch them); default ``off``.

    python benchmarks/bitwise_builds.py --build OLD_CHECKOUT --build . [--corpus FILE] \\
        [--loss off|on|second] [--size 50] [--models word2vec,fasttext,doc2vec]

``--size`` is the vector size (default 50; the kernels split a row into 16-, 8- and 4-float
steps and a scalar tail, so 100 and 300 take other paths).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

OBJECTIVES = {  # negative sampling named with its draws (the default shares them)
    "hs": dict(hs=1, negative=0),
    "ns": dict(hs=0, negative=5, shared_negatives=False),
    "hs+ns": dict(hs=1, negative=5, shared_negatives=False),
    "ns-shared": dict(hs=0, negative=5, shared_negatives=True),
}
WALKS = ("auto", "reference")
MODELS = ("word2vec", "fasttext", "doc2vec")


def child(
    corpus: str, objective: str, sg: int, source: str, loss: bool, out: str, size: int = 50,
    kind: str = "word2vec",
) -> dict:  # fmt: skip
    """One model (in the subprocess): train, save the weights, report their digests."""
    import numpy as np

    from hsw2v import LineSentence, Word2Vec, _cpu

    if kind != "word2vec":  # builds before FastText and Doc2Vec compare Word2Vec alone
        from hsw2v import Doc2Vec, FastText
        from hsw2v.corpora import TaggedLineDocument

    settings = dict(
        vector_size=size, window=5, min_count=2, sample=1e-3, workers=1, seed=7,
        epochs=2, compute_loss=loss, **OBJECTIVES[objective],
    )  # fmt: skip
    if kind == "doc2vec":
        settings.pop("shared_negatives", None)  # Doc2Vec draws per pair, as gensim
        model_class, settings["dm"], sentences = Doc2Vec, 1 - sg, TaggedLineDocument
    else:
        model_class, settings["sg"] = (FastText if kind == "fasttext" else Word2Vec), sg
        sentences = LineSentence
    if source == "corpus_file":
        model = model_class(corpus_file=corpus, **settings)
    else:  # counted in words, which every build schedules alike (the constructor's
        model = model_class(**settings)  # counts changed to sentences at ee0c3d4)
        model.build_vocab(sentences(corpus))
        model.train(sentences(corpus), total_words=model.corpus_total_words,
                    epochs=model.epochs)
    arrays = {"vectors": model.wv.vectors}
    if kind == "fasttext":
        arrays["vectors_vocab"] = model.wv.vectors_vocab
        arrays["vectors_ngrams"] = model.wv.vectors_ngrams
    if kind == "doc2vec":
        arrays["dv"] = model.dv.vectors
    if model.hs:
        arrays["syn1"] = model.syn1
    if model.negative:
        arrays["syn1neg"] = model.syn1neg
    np.savez(out, **arrays)
    return {
        "level": _cpu.level,
        "loss": float(model.get_latest_training_loss()),
        "digests": {
            k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:16]
            for k, v in arrays.items()
        },  # fmt: skip
    }


def run(build: str, walk: str, args: list, out: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(build).resolve()), HSW2V_KERNEL=walk,
               OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")  # fmt: skip
    code = (
        f"import sys, json; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
        "from bitwise_builds import child; "
        f"print(json.dumps(child(*{[*args[:5], out, *args[5:]]!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=tempfile.gettempdir())  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{build} {walk} {args}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="append", required=True)
    parser.add_argument("--corpus", help="a text corpus (default: the bundled demo corpus)")
    parser.add_argument("--lines", type=int, default=6000)
    parser.add_argument("--loss", choices=("off", "on", "second"), default="off",
                        help="which builds train with compute_loss=True")  # fmt: skip
    parser.add_argument("--size", type=int, default=50, help="vector_size")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated: " + ", ".join(MODELS))  # fmt: skip
    args = parser.parse_args()
    kinds = args.models.split(",")
    if not set(kinds) <= set(MODELS):
        parser.error(f"--models: choose among {', '.join(MODELS)}")
    if len(args.build) != 2:
        parser.error("give two --build directories")
    if args.corpus is None:
        sys.path.insert(0, str(Path(args.build[0]).resolve()))
        from hsw2v.datasets import demo_corpus_path

        args.corpus = str(demo_corpus_path())
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp, "corpus.txt")
        opener = gzip.open if args.corpus.endswith(".gz") else open  # the demo corpus is .gz
        with opener(args.corpus, "rt", encoding="utf-8") as f:
            corpus.write_text("".join(itertools.islice(f, args.lines)), encoding="utf-8")
        settings = [
            (kind, objective, sg, source, walk)
            for kind in kinds
            for objective, sg, source, walk in itertools.product(
                OBJECTIVES, (1, 0), ("iterable", "corpus_file"), WALKS
            )
            if not (kind == "doc2vec" and objective == "ns-shared")  # Doc2Vec draws per pair
        ]
        for kind, objective, sg, source, walk in settings:
            outs = [str(Path(tmp, f"{k}.npz")) for k in range(2)]
            losses = (args.loss == "on", args.loss != "off")
            results = [run(b, walk, [str(corpus), objective, sg, source, loss, args.size, kind], o)
                       for b, o, loss in zip(args.build, outs, losses, strict=True)]  # fmt: skip
            a, b = (np.load(o) for o in outs)
            same = set(a.files) == set(b.files) and all(
                a[k].tobytes() == b[k].tobytes() for k in a.files
            )
            failures += not same
            levels = "/".join(r["level"] for r in results)
            l0, l1 = (r["loss"] for r in results)
            loss = f" loss {l1:.6g} (rel. diff. {abs(l1 - l0) / l0:.1e})" if all(losses) else ""
            print(f"{kind:8} {objective} {'sg' if sg else 'cbow':4} {source:11} {walk:9} [{levels}] "
                  f"{'identical' if same else 'DIFFERENT'} {results[0]['digests']}"
                  + ("" if same else f" vs {results[1]['digests']}") + loss,
                  flush=True)  # fmt: skip
    print(f"{len(settings) - failures} of {len(settings)} settings bit-identical")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
