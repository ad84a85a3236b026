"""Doc2Vec against gensim 4.4's Doc2Vec: speed, infer_vector speed and document quality.

Every run trains in a fresh subprocess (its own threads and memory), vector_size 100,
window 5, min_count 5, sample 1e-3, on a corpus with one document per line (gcide: one
dictionary entry per line), the line number the tag:

- ``speed``: ``train()`` seconds only (the vocabulary scan excluded), hsw2v against gensim
  in both of gensim's modes (an in-memory list of ``TaggedDocument``, and ``corpus_file``),
  alternated within each repetition; medians and paired ratios (gensim / hsw2v), against
  each gensim mode and against the faster of the two. With several workers, also the runs'
  placements of the CPUs (``placement.py``: near or far, by a cache line's round trip
  measured before and after each run).
- ``quality``: document classification without any download. gcide's entries whose second
  token is a part of speech (``n``, ``v``, ``a``, ``adv``) are documents labelled by it, their
  headword and part-of-speech tokens removed. A model trains on all but a held-out share;
  scikit-learn's ``LogisticRegression`` learns the labels from the trained vectors
  (``model.dv``) of 80 % of the training documents and is scored on the other 20 % (trained
  vectors) and on the held-out documents (``infer_vector``). Per seed and the mean.
- ``lee``: gensim's own Doc2Vec tutorial data in its wheel: a model trained on
  ``lee_background.cor`` (300 documents; the tutorial's settings: vector_size 50,
  min_count 2, epochs 40) infers the 50 documents of ``lee.cor``; the Spearman correlation of
  the 1,225 pairwise cosine similarities of hsw2v's inferred vectors with gensim's, against
  that of gensim with another seed (how far gensim is from itself), and the tutorial's
  self-rank check (how often a training document's inferred vector has its own trained
  vector as nearest).
- ``infer``: seconds per ``infer_vector`` call (model.epochs passes each) over the
  held-out documents, hsw2v against gensim, each on its own model trained as in
  ``quality``; alternated; medians and the paired ratio.

Usage:
    python3 benchmarks/doc2vec_bench.py speed --corpus /path/gcide.txt \\
        --modes dbow,dm --objectives hs,ns --workers 1,2 --epochs 1 --repeats 3
    python3 benchmarks/doc2vec_bench.py quality --corpus /path/gcide.txt \\
        --modes dbow,dm --objectives hs --workers 2 --seeds 1,2,3
    python3 benchmarks/doc2vec_bench.py lee --modes dbow,dm --seeds 1,2,3
    python3 benchmarks/doc2vec_bench.py infer --corpus /path/gcide.txt --modes dbow,dm \\
        --objectives hs --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO_ROOT, count_words, ensure_corpus, run_json_child  # noqa: E402
from placement import placements_line, run_placed  # noqa: E402

SETTINGS = {"vector_size": 100, "window": 5, "min_count": 5, "sample": 1e-3}
POS = ("n", "v", "a", "adv")


def objective(name: str) -> dict:
    return {"hs": {"hs": 1, "negative": 0}, "ns": {"hs": 0, "negative": 5}}[name]


def classes(corpus: str, limit: int) -> tuple[list, list]:
    """gcide entries labelled by part of speech: (words, label), the first ``limit``."""
    docs, labels = [], []
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            tokens = line.split()
            if len(tokens) < 5 or tokens[1] not in POS:
                continue
            rest = tokens[2:]
            while rest and rest[0] in ("t", "i"):  # "v t", "v i": the label again
                rest = rest[1:]
            if len(rest) < 3:
                continue
            docs.append(rest)
            labels.append(POS.index(tokens[1]))
            if len(docs) >= limit:
                break
    return docs, labels


def model_class(system: str):
    if system == "hsw2v":
        sys.path.insert(0, str(REPO_ROOT))
        from hsw2v import Doc2Vec, TaggedDocument
    else:
        from gensim.models.doc2vec import Doc2Vec, TaggedDocument
    return Doc2Vec, TaggedDocument


def child(spec: dict) -> dict:
    if spec["task"] == "lee":
        return lee_child(spec)
    system, path, epochs = spec["system"], spec["corpus"], spec["epochs"]
    Doc2Vec, TaggedDocument = model_class(system)
    kwargs = dict(SETTINGS, dm=1 if spec["mode"] == "dm" else 0, workers=spec["workers"],
                  seed=spec["seed"], **objective(spec["objective"]))  # fmt: skip
    if epochs is not None:
        kwargs["epochs"] = epochs
    out: dict = {}
    if spec["task"] == "speed":
        model = Doc2Vec(**kwargs)
        if spec["gensim_mode"] == "file":
            corpus = {"corpus_file": path}
        else:
            with open(path, encoding="utf-8") as f:
                corpus = {"corpus_iterable": [TaggedDocument(line.split(), [n])
                                              for n, line in enumerate(f)]}  # fmt: skip
        model.build_vocab(**corpus)
        start = time.perf_counter()
        model.train(**corpus, total_examples=model.corpus_count,
                    total_words=model.corpus_total_words, epochs=model.epochs)  # fmt: skip
        out["train_s"] = time.perf_counter() - start
        out["words"] = model.corpus_total_words
        return out
    docs, labels = classes(path, spec["limit"])
    held = spec["held"]
    train_docs = [TaggedDocument(words, [n]) for n, words in enumerate(docs[:-held])]
    model = Doc2Vec(train_docs, **kwargs)
    start = time.perf_counter()
    inferred = np.array([model.infer_vector(words) for words in docs[-held:]])
    out["infer_s_per_doc"] = (time.perf_counter() - start) / held
    if spec["task"] == "infer":
        return out
    from sklearn.linear_model import LogisticRegression

    y = np.array(labels)
    n = len(train_docs)
    X = np.array([model.dv[k] for k in range(n)])
    cut = int(0.8 * n)
    clf = LogisticRegression(max_iter=2000).fit(X[:cut], y[:cut])
    out["accuracy_trained"] = float(clf.score(X[cut:], y[cut:n]))
    out["accuracy_inferred"] = float(clf.score(inferred, y[-held:]))
    out["majority"] = float(np.bincount(y[cut:n]).max() / (n - cut))
    return out


def lee_child(spec: dict) -> dict:
    """Train on lee_background.cor, infer lee.cor; the similarities and the self-ranks."""
    from gensim.test.utils import datapath
    from gensim.utils import simple_preprocess

    Doc2Vec, TaggedDocument = model_class(spec["system"])

    def read(name):
        with open(datapath(name), encoding="latin-1") as f:
            return [simple_preprocess(line) for line in f]

    train = [TaggedDocument(words, [n]) for n, words in enumerate(read("lee_background.cor"))]
    model = Doc2Vec(train, vector_size=50, min_count=2, epochs=40, workers=1,
                    seed=spec["seed"], dm=1 if spec["mode"] == "dm" else 0,
                    **objective(spec["objective"]))  # fmt: skip
    test = np.array([model.infer_vector(words) for words in read("lee.cor")])
    test /= np.linalg.norm(test, axis=1, keepdims=True)
    upper = np.triu_indices(len(test), 1)
    ranks = []
    for doc in train:
        inferred = model.infer_vector(doc.words)
        top = [k for k, _ in model.dv.most_similar([inferred], topn=len(model.dv))]
        ranks.append(top.index(doc.tags[0]))
    return {"similarities": (test @ test.T)[upper].tolist(),
            "self_rank_0": float(np.mean(np.array(ranks) == 0))}  # fmt: skip


def lee(args) -> None:
    from scipy.stats import spearmanr

    for mode in args.modes:
        for obj in args.objectives:
            rows = {}
            for system in ("hsw2v", "gensim"):
                for seed in args.seeds:
                    spec = {"system": system, "mode": mode, "objective": obj, "seed": seed,
                            "task": "lee"}  # fmt: skip
                    rows[(system, seed)] = run_child(spec)
            cross = [spearmanr(rows[("hsw2v", s)]["similarities"],
                               rows[("gensim", s)]["similarities"])[0] for s in args.seeds]  # fmt: skip
            seeds = args.seeds[1:] + args.seeds[:1]
            itself = [spearmanr(rows[("gensim", a)]["similarities"],
                                rows[("gensim", b)]["similarities"])[0]
                      for a, b in zip(args.seeds, seeds, strict=True)]  # fmt: skip
            ours = [spearmanr(rows[("hsw2v", a)]["similarities"],
                              rows[("hsw2v", b)]["similarities"])[0]
                    for a, b in zip(args.seeds, seeds, strict=True)]  # fmt: skip
            ranks = {system: np.mean([rows[(system, s)]["self_rank_0"] for s in args.seeds])
                     for system in ("hsw2v", "gensim")}  # fmt: skip
            print(f"{mode:4s} {obj}: Spearman hsw2v~gensim {np.mean(cross):.3f} "
                  f"({' '.join(f'{c:.3f}' for c in cross)}); gensim~gensim (other seed) "
                  f"{np.mean(itself):.3f}; hsw2v~hsw2v {np.mean(ours):.3f}; self-rank 0: hsw2v {100 * ranks['hsw2v']:.1f} %, "
                  f"gensim {100 * ranks['gensim']:.1f} %", flush=True)  # fmt: skip


def run_child(spec: dict) -> dict:
    return run_json_child(__file__, spec)


def speed(args) -> None:
    words = count_words(args.corpus)
    runs = [("hsw2v", mode) for mode in args.hsw2v_modes]
    runs += [("gensim", mode) for mode in args.gensim_modes]
    print(f"corpus {Path(args.corpus).name}: {words} words; epochs {args.epochs}; "
          f"{args.repeats} alternated repetitions; train seconds only")  # fmt: skip
    for mode in args.modes:
        for obj in args.objectives:
            for workers in args.workers:
                times: dict = {run: [] for run in runs}
                where: dict = {run: [] for run in runs}
                for _ in range(args.repeats):
                    for system, gmode in runs:
                        spec = {"task": "speed", "system": system, "gensim_mode": gmode,
                                "corpus": str(args.corpus), "mode": mode, "objective": obj,
                                "workers": workers, "epochs": args.epochs, "seed": 1}  # fmt: skip
                        out, placed = run_placed(partial(run_child, spec), workers > 1)
                        times[(system, gmode)].append(out["train_s"])
                        where[(system, gmode)].append(placed)
                base = times[("hsw2v", args.hsw2v_modes[0])]
                gensim = [times[("gensim", mode)] for mode in args.gensim_modes]
                faster = [min(ts) for ts in zip(*gensim, strict=True)]
                names = {"iter": "list", "file": "corpus_file"}
                series_of = [(f"{system} {names[m]}", times[(system, m)]) for system, m in runs]
                cells = []
                for label, series in [*series_of, ("gensim faster", faster)]:
                    med = statistics.median(series)
                    ratio = statistics.median(t / h for t, h in zip(series, base, strict=True))
                    cells.append(f"{label} {med:.2f}s ({words * args.epochs / med / 1e3:.0f}k "
                                 f"w/s, /hsw2v {ratio:.2f})")  # fmt: skip
                print(f"{mode:4s} {obj} workers={workers}: " + "; ".join(cells), flush=True)
                if workers > 1:  # threads share cache lines: where the CPUs were
                    print(placements_line({f"{system} {names[m]}": where[(system, m)]
                                           for system, m in runs}), flush=True)  # fmt: skip


def quality(args) -> None:
    for mode in args.modes:
        for obj in args.objectives:
            for system in ("hsw2v", "gensim"):
                rows = []
                for seed in args.seeds:
                    spec = {"task": "quality", "system": system, "corpus": str(args.corpus),
                            "mode": mode, "objective": obj, "workers": args.workers[0],
                            "epochs": args.epochs, "seed": seed, "limit": args.limit,
                            "held": args.held}  # fmt: skip
                    rows.append(run_child(spec))
                trained = [r["accuracy_trained"] for r in rows]
                inferred = [r["accuracy_inferred"] for r in rows]
                print(f"{mode:4s} {obj} {system:6s}: trained "
                      + " ".join(f"{100 * a:.2f}" for a in trained)
                      + f" mean {100 * np.mean(trained):.2f}; inferred "
                      + " ".join(f"{100 * a:.2f}" for a in inferred)
                      + f" mean {100 * np.mean(inferred):.2f}; majority "
                      f"{100 * rows[0]['majority']:.1f}", flush=True)  # fmt: skip


def infer(args) -> None:
    for mode in args.modes:
        for obj in args.objectives:
            times: dict = {"hsw2v": [], "gensim": []}
            for _ in range(args.repeats):
                for system in times:
                    spec = {"task": "infer", "system": system, "corpus": str(args.corpus),
                            "mode": mode, "objective": obj, "workers": args.workers[0],
                            "epochs": args.epochs, "seed": 1, "limit": args.limit,
                            "held": args.held}  # fmt: skip
                    times[system].append(run_child(spec)["infer_s_per_doc"])
            ratio = statistics.median(
                g / h for g, h in zip(times["gensim"], times["hsw2v"], strict=True)
            )
            print(f"{mode:4s} {obj}: hsw2v {1e6 * statistics.median(times['hsw2v']):.0f} us/doc, "
                  f"gensim {1e6 * statistics.median(times['gensim']):.0f} us/doc, "
                  f"gensim/hsw2v {ratio:.2f}", flush=True)  # fmt: skip


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(child(json.loads(sys.argv[2]))))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("task", choices=("speed", "quality", "infer", "lee"))
    p.add_argument("--corpus", help="one document per line (all but lee)")
    p.add_argument("--modes", default="dbow,dm")
    p.add_argument("--objectives", default="hs,ns")
    p.add_argument("--workers", default="1,2")
    p.add_argument("--epochs", type=int, default=None, help="default: Doc2Vec's (10)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--hsw2v-modes", default="iter", type=lambda s: s.split(","),
                   help="hsw2v's modes, the first the base of the ratios: iter (a list of "
                   "documents), file (corpus_file, read by the workers)")
    p.add_argument("--gensim-modes", default="iter,file",
                   help="speed: gensim's modes run (iter: a list of TaggedDocument; file: "
                   "corpus_file)")  # fmt: skip
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--limit", type=int, default=60000, help="labelled documents read")
    p.add_argument("--held", type=int, default=2000, help="of them held out for inference")
    args = p.parse_args(argv)
    if args.task != "lee":
        if not args.corpus:
            p.error(f"{args.task} needs --corpus")
        args.corpus = ensure_corpus(args.corpus)
    args.modes = args.modes.split(",")
    args.objectives = args.objectives.split(",")
    args.workers = [int(w) for w in args.workers.split(",")]
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.gensim_modes = args.gensim_modes.split(",")
    if args.task == "speed" and args.epochs is None:
        args.epochs = 1
    {"speed": speed, "quality": quality, "infer": infer, "lee": lee}[args.task](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
