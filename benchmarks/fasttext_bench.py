"""FastText against gensim 4.4's FastText and Facebook's fastText tool: speed and quality.

Every run trains in a fresh subprocess (its own threads and memory) on one corpus file
(``corpus_file`` mode for hsw2v and gensim, their faster mode; the tool reads the file
itself), with vector_size 100, window 5, min_count 5, min_n 3, max_n 6, the default bucket
(2,000,000), sample 1e-3:

- ``speed``: train seconds only (the vocabulary scan and the weights' initialisation
  excluded). hsw2v and gensim time ``train()`` alone; the tool cannot be split, so its train
  time is its total at ``epoch=E`` less its total at ``epoch=0`` (reading the vocabulary and
  initialising the matrices), both measured in the same repetition. Systems alternate
  within each repetition; the medians and the paired ratios are printed; with several
  workers, also the runs' placements of the CPUs (``placement.py``).
- ``quality``: analogy accuracy (gensim's ``questions-words.txt``, restrict_vocab 30000) and
  WordSim-353 Spearman of the in-vocabulary word vectors, per seed, and their means.
- ``oov``: words never seen. Every other WordSim-353 word (sorted, even positions) is held
  out: each line of the corpus holding one is dropped; after training, the WordSim-353
  pairs with a held-out word are scored from the n-gram vectors (``wv[word]``), Spearman
  against the human scores, per seed and the mean.

Usage:
    python3 benchmarks/fasttext_bench.py speed --corpus /path/gcide.txt \\
        --modes sg,cbow --objectives hs,ns --workers 1,2 --epochs 1 --repeats 3
    python3 benchmarks/fasttext_bench.py quality --corpus /path/gcide.txt \\
        --modes sg,cbow --objectives hs,ns --workers 2 --epochs 5 --seeds 1,2,3
    python3 benchmarks/fasttext_bench.py oov --corpus /path/gcide.txt \\
        --modes sg,cbow --objectives hs --workers 2 --epochs 5 --seeds 1,2,3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO_ROOT, count_words, ensure_corpus, run_json_child  # noqa: E402
from placement import placements_line, run_placed  # noqa: E402

SETTINGS = {"vector_size": 100, "window": 5, "min_count": 5, "min_n": 3, "max_n": 6,
            "sample": 1e-3}  # fmt: skip
SYSTEMS = ("hsw2v", "gensim", "fasttext")


def objective(name: str) -> dict:
    return {"hs": {"hs": 1, "negative": 0}, "ns": {"hs": 0, "negative": 5}}[name]


def child(spec: dict) -> dict:
    """Train one system in this process; returns timings (and quality when asked)."""
    system, path, epochs = spec["system"], spec["corpus"], spec["epochs"]
    sg = 1 if spec["mode"] == "sg" else 0
    obj = objective(spec["objective"])
    out: dict = {}
    if system == "fasttext":
        import fasttext

        def run(e):
            start = time.perf_counter()
            model = fasttext.train_unsupervised(
                path, model="skipgram" if sg else "cbow", loss=spec["objective"],
                dim=SETTINGS["vector_size"], ws=SETTINGS["window"],
                minCount=SETTINGS["min_count"], minn=SETTINGS["min_n"],
                maxn=SETTINGS["max_n"], t=SETTINGS["sample"], neg=5, epoch=e,
                thread=spec["workers"], verbose=0,
            )  # fmt: skip
            return time.perf_counter() - start, model

        setup, _ = run(0)
        total, _ = run(epochs)
        out.update(setup_s=setup, train_s=total - setup)
        return out
    if system == "hsw2v":
        sys.path.insert(0, str(REPO_ROOT))
        from hsw2v import FastText
    else:
        from gensim.models import FastText
    kwargs = dict(SETTINGS, sg=sg, workers=spec["workers"], epochs=epochs, seed=spec["seed"],
                  **obj)  # fmt: skip
    if system == "hsw2v" and spec.get("shared") is not None:
        kwargs["shared_negatives"] = bool(spec["shared"])
    model = FastText(**kwargs)
    if system == "gensim" and spec.get("gensim_mode") == "iter":  # gensim's LineSentence
        from gensim.models.word2vec import LineSentence

        corpus = {"corpus_iterable": LineSentence(path)}
    else:
        corpus = {"corpus_file": path}
    start = time.perf_counter()
    model.build_vocab(**corpus)
    out["setup_s"] = time.perf_counter() - start
    start = time.perf_counter()
    model.train(**corpus, total_words=model.corpus_total_words, epochs=epochs,
                total_examples=model.corpus_count)  # fmt: skip
    out["train_s"] = time.perf_counter() - start
    if spec.get("oov"):
        from scipy.stats import spearmanr

        held = set(spec["held"])
        pairs = [p for p in wordsim_pairs() if p[0] in held or p[1] in held]
        cos = []
        for a, b, _ in pairs:
            x, y = model.wv[a], model.wv[b]
            cos.append(float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y) + 1e-30)))
        out["oov_pairs"] = len(pairs)
        out["oov_spearman"] = float(spearmanr(cos, [p[2] for p in pairs])[0])
    if spec.get("quality"):
        from evaluate import evaluate_keyed_vectors
        from gensim.models import KeyedVectors

        kv = KeyedVectors(model.wv.vector_size)
        kv.add_vectors(list(model.wv.index_to_key), model.wv.vectors)
        out.update(evaluate_keyed_vectors(kv))
    return out


def wordsim_pairs() -> list[tuple[str, str, float]]:
    """WordSim-353 as gensim bundles it: (word, word, human score), lower-cased."""
    from gensim.test.utils import datapath

    pairs = []
    with open(datapath("wordsim353.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            a, b, score = line.rstrip("\n").split("\t")[:3]
            pairs.append((a.lower(), b.lower(), float(score)))
    return pairs


def held_out_corpus(src, dst) -> tuple[list[str], int, int]:
    """Write ``src`` without the lines that hold a held-out word (every other WordSim-353
    word); returns the held-out words and the lines kept and dropped."""
    words = sorted({w for a, b, _ in wordsim_pairs() for w in (a, b)})
    held = set(words[::2])
    kept = dropped = 0
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as out:
        for line in f:
            if held.intersection(line.split()):
                dropped += 1
            else:
                kept += 1
                out.write(line)
    return sorted(held), kept, dropped


def run_child(spec: dict) -> dict:
    return run_json_child(__file__, spec)


def speed(args) -> None:
    words = count_words(args.corpus)
    print(f"corpus {Path(args.corpus).name}: {words} words; epochs {args.epochs}; "
          f"{args.repeats} alternated repetitions; train seconds only")  # fmt: skip
    for mode in args.modes:
        for obj in args.objectives:
            for workers in args.workers:
                times: dict = {s: [] for s in args.systems}
                where: dict = {s: [] for s in args.systems}
                for _ in range(args.repeats):
                    for system in args.systems:
                        spec = {"system": system, "corpus": str(args.corpus), "mode": mode,
                                "objective": obj, "workers": workers, "epochs": args.epochs,
                                "seed": 1, "shared": args.shared_negatives}  # fmt: skip
                        out, placed = run_placed(partial(run_child, spec), workers > 1)
                        times[system].append(out["train_s"])
                        where[system].append(placed)
                base = times["hsw2v"]
                cells = []
                for system in args.systems:
                    med = statistics.median(times[system])
                    ratio = statistics.median(
                        t / h for t, h in zip(times[system], base, strict=True)
                    )
                    cells.append(f"{system} {med:.2f}s ({words * args.epochs / med / 1e3:.0f}k "
                                 f"w/s, hsw2v x{ratio:.2f})")  # fmt: skip
                print(f"{mode:4s} {obj} workers={workers}: " + "; ".join(cells), flush=True)
                if workers > 1:  # threads share cache lines: where the CPUs were
                    print(placements_line(where), flush=True)


def quality(args) -> None:
    for mode in args.modes:
        for obj in args.objectives:
            for system in args.systems:
                rows = []
                for seed in args.seeds:
                    spec = {"system": system, "corpus": str(args.corpus), "mode": mode,
                            "objective": obj, "workers": args.workers[0],
                            "epochs": args.epochs, "seed": seed, "quality": True,
                            "shared": args.shared_negatives,
                            "gensim_mode": args.gensim_mode}  # fmt: skip
                    rows.append(run_child(spec))
                    print(f"  {mode} {obj} {system} seed {seed}: "
                          f"analogy {rows[-1]['analogy_pct']:.2f} % "
                          f"wordsim {rows[-1]['wordsim_spearman']:.3f} "
                          f"train {rows[-1]['train_s']:.1f} s", flush=True)  # fmt: skip
                print(f"{mode:4s} {obj} {system}: mean analogy "
                      f"{statistics.mean(r['analogy_pct'] for r in rows):.2f} %, wordsim "
                      f"{statistics.mean(r['wordsim_spearman'] for r in rows):.3f} "
                      f"({len(rows)} seeds)", flush=True)  # fmt: skip


def oov(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "heldout.txt")
        held, kept, dropped = held_out_corpus(args.corpus, path)
        print(f"{len(held)} WordSim-353 words held out: {dropped} lines dropped, {kept} kept",
              flush=True)  # fmt: skip
        for mode in args.modes:
            for obj in args.objectives:
                for system in args.systems:
                    scores = []
                    for seed in args.seeds:
                        spec = {"system": system, "corpus": path, "mode": mode,
                                "objective": obj, "workers": args.workers[0],
                                "epochs": args.epochs, "seed": seed, "oov": True,
                                "held": held}  # fmt: skip
                        res = run_child(spec)
                        scores.append(res["oov_spearman"])
                        print(f"  {mode} {obj} {system} seed {seed}: {res['oov_pairs']} pairs, "
                              f"Spearman {res['oov_spearman']:.3f}", flush=True)  # fmt: skip
                    print(
                        f"{mode:4s} {obj} {system}: mean OOV Spearman "
                        f"{statistics.mean(scores):.3f} ({len(scores)} seeds)",
                        flush=True,
                    )


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        print(json.dumps(child(json.loads(argv[1]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("speed", "quality", "oov"))
    parser.add_argument("--corpus", default=os.path.join(tempfile.gettempdir(), "gcide.txt"))
    parser.add_argument("--modes", default="sg,cbow")
    parser.add_argument("--objectives", default="hs,ns")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument(
        "--gensim-mode",
        choices=("file", "iter"),
        default="file",
        help="gensim's corpus_file (default) or its iterable mode over its LineSentence",
    )
    parser.add_argument(
        "--shared-negatives",
        type=int,
        choices=(0, 1),
        default=None,
        help="hsw2v's shared_negatives (default: the library's, 1)",
    )
    args = parser.parse_args(argv)
    args.corpus = ensure_corpus(args.corpus)
    args.modes = args.modes.split(",")
    args.objectives = args.objectives.split(",")
    args.workers = [int(w) for w in args.workers.split(",")]
    args.systems = args.systems.split(",")
    args.seeds = [int(s) for s in args.seeds.split(",")]
    {"speed": speed, "quality": quality, "oov": oov}[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
