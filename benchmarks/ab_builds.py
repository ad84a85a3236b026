"""Two or more builds of hsw2v (or settings of one) side by side: alternated training runs.

Each ``--build DIR`` is a checkout with its extensions built in place (``python3 setup.py
build_ext --inplace``); ``DIR@JSON`` also sets constants of ``hsw2v.running._tuning`` (``hsw2v._tuning`` in a flat build, ``hsw2v.word2vec`` in builds before it) in that run, as
``'.@{"HOT_SYNC": 1000}'``, and leading ``NAME=VALUE`` words set environment variables of that
run, as ``'HSW2V_CPU=avx2 .'`` (one kernel level of a dispatched build). For every repeat,
mode (``sg`` and ``cbow``: hierarchical softmax alone; ``sg-ns`` and ``cbow-ns``: ``hs=0,
negative=5``) and worker count, each build trains once in a fresh subprocess (``PYTHONPATH=DIR``,
single-threaded BLAS) in the order given, so the builds share the machine's slow and fast
moments (A B A B ...). A run builds the vocabulary from ``LineSentence`` (or with ``--input
corpus_file`` from the file itself; untimed) and trains ``--epochs`` epochs; it reports
training words/s (corpus words x epochs / ``train()`` seconds) and CPU seconds of all threads
per million words. The medians close the output, with each build's workers=2 / workers=1
ratio. Runs with several workers record the CPUs' placement (``placement.py``: near or far,
a cache line's round trip before and after the run; a shared line costs several times more
in the far one), each run on its line and counted at the end.

    python benchmarks/ab_builds.py --corpus CORPUS --build OLD_CHECKOUT --build . \\
        [--modes sg,cbow,sg-ns,cbow-ns] [--workers 1,2] [--repeats 5] [--epochs 3] [--size 100] \\
        [--input corpus_file]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import child_env, ensure_corpus  # noqa: E402
from placement import placements_line, run_placed  # noqa: E402

# mode: (sg, hs, negative); "sg" and "cbow" are hierarchical softmax alone
MODES = {"sg": (1, 1, 0), "cbow": (0, 1, 0), "sg-ns": (1, 0, 5), "cbow-ns": (0, 0, 5)}


def child(
    corpus: str,
    sg: int,
    workers: int,
    epochs: int,
    constants: dict,
    size: int,
    source: str = "linesentence",
    hs: int = 1,
    negative: int = 0,
) -> dict:
    """One run (in the subprocess): train and report words/s, CPU s/Mword, the module used."""
    import importlib

    import hsw2v.word2vec
    from hsw2v import LineSentence, Word2Vec

    tuning = hsw2v.word2vec  # builds before the constants had a module kept them here
    for home in ("hsw2v.running._tuning", "hsw2v._tuning"):  # the layout's home, the flat one
        try:
            tuning = importlib.import_module(home)
            break
        except ImportError:
            continue
    for name, value in constants.items():
        if not hasattr(tuning, name):
            raise SystemExit(f"{tuning.__name__} has no constant {name!r}")
        setattr(tuning, name, value)
    model = Word2Vec(
        vector_size=size, window=5, min_count=5, sample=1e-3, sg=sg, workers=workers, seed=1,
        epochs=epochs, hs=hs, negative=negative,
    )  # fmt: skip
    given = {"corpus_file": corpus} if source == "corpus_file" else {}
    sentences = None if given else LineSentence(corpus)
    model.build_vocab(sentences, **given)
    started, cpu_started = time.perf_counter(), time.process_time()
    model.train(sentences, total_examples=model.corpus_count, epochs=epochs, **given)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    words = model.corpus_total_words * epochs
    return {
        "words_per_s": words / seconds,
        "cpu_s_per_mword": cpu / words * 1e6,
        "module": str(Path(hsw2v.__file__).resolve().parent),
        "level": getattr(getattr(hsw2v, "_cpu", None), "level", None) or "native (undispatched)",
    }


def run_child(
    build: str,
    corpus: str,
    sg: int,
    workers: int,
    epochs: int,
    size: int,
    source: str = "linesentence",
    hs: int = 1,
    negative: int = 0,
) -> dict:
    env = child_env()  # single-threaded BLAS, as every benchmark subprocess
    env.pop("HSW2V_CPU", None)
    spec = build
    while assignment := re.match(r"([A-Za-z_]\w*)=(\S*)\s+", spec):
        env[assignment[1]] = assignment[2]
        spec = spec[assignment.end() :]
    directory, _, constants = spec.partition("@")
    env["PYTHONPATH"] = str(Path(directory).resolve())
    spec = json.dumps(
        [corpus, sg, workers, epochs, json.loads(constants or "{}"), size, source, hs, negative]
    )
    done = subprocess.run(
        [sys.executable, __file__, "--child", spec], env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"run of {build} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    expected = Path(directory).resolve() / "hsw2v"
    if Path(result["module"]) != expected:
        raise SystemExit(f"{build} imported {result['module']}, not {expected}")
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--corpus")
    parser.add_argument("--build", action="append", default=[], help="DIR or DIR@JSON")
    parser.add_argument("--modes", default="sg,cbow")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--size", type=int, default=100, help="vector_size")
    parser.add_argument(
        "--input",
        choices=("linesentence", "corpus_file"),
        default="linesentence",
        help="what the runs train from: LineSentence(CORPUS) or corpus_file=CORPUS",
    )
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*json.loads(args.child))))
        return
    if not args.corpus or len(args.build) < 1:
        parser.error("--corpus and at least one --build are required")
    corpus = str(ensure_corpus(args.corpus).resolve())
    modes = [m.strip() for m in args.modes.split(",")]
    if unknown := set(modes) - set(MODES):
        parser.error(f"unknown modes {sorted(unknown)}: choose from {', '.join(MODES)}")
    workers = [int(w) for w in args.workers.split(",")]
    runs: dict[tuple, list[dict]] = {}
    for repeat in range(args.repeats):
        for mode in modes:
            for w in workers:
                for build in args.build:
                    sg, hs, negative = MODES[mode]
                    r, placed = run_placed(
                        partial(run_child, build, corpus, sg, w, args.epochs, args.size,
                                args.input, hs, negative),
                        several=w > 1,
                    )  # fmt: skip
                    r["placement"] = placed
                    runs.setdefault((mode, w, build), []).append(r)
                    print(
                        f"[{repeat + 1}/{args.repeats}] {mode} workers={w} {build} ({r['level']}): "
                        f"{r['words_per_s'] / 1e3:,.0f}k words/s, "
                        f"{r['cpu_s_per_mword']:.3f} CPU s/Mword"
                        + (f", {r['placement']}" if r["placement"] else ""),
                        flush=True,
                    )
    print(
        f"medians of {args.repeats} alternated runs, {args.epochs} epochs each, "
        f"vector_size={args.size}:"
    )
    for mode in modes:
        for build in args.build:
            speed = {
                w: statistics.median(r["words_per_s"] for r in runs[(mode, w, build)])
                for w in workers
            }
            cpu = {
                w: statistics.median(r["cpu_s_per_mword"] for r in runs[(mode, w, build)])
                for w in workers
            }
            cells = "  ".join(
                f"workers={w}: {speed[w] / 1e3:,.0f}k ({cpu[w]:.3f} CPU s/Mword)" for w in workers
            )
            ratio = f"  2/1: {speed[2] / speed[1]:.2f}x" if {1, 2} <= set(workers) else ""
            print(f"{mode} {build}: {cells}{ratio}")
    for mode in modes:  # several workers: where the CPUs were (placement.py)
        for w in (w for w in workers if w > 1):
            where = {build: [r["placement"] for r in runs[(mode, w, build)]]
                     for build in args.build}  # fmt: skip
            print(f"{mode} workers={w}" + placements_line(where))


if __name__ == "__main__":
    main()
