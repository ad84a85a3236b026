"""Word Mover's Distance per call: hsw2v's ``wmdistance`` against gensim 4.4's (which needs
POT), on the same vectors, at several document sizes; and gensim's ``WmdSimilarity`` over
either library's vectors. The values are compared too (they must agree).

The vectors are random (the cost depends on the documents' sizes, not on what the vectors
mean): a vocabulary of ``--vocab`` words, documents drawn from it with replacement. Every
(size, system) pair times ``--calls`` calls in CPU time of this process, alternated over
``--repeats`` rounds; the table holds the medians, in CPU milliseconds per call. hsw2v is
timed with each of its solvers (``auto``: the built-in network simplex (before, POT when
importable); ``pot``; ``simplex``: the built-in network simplex; ``highs``: scipy's HiGHS).

``--large 1000,3000,10000`` instead runs one ``wmdistance`` per size in a child process, on
documents of that many tokens drawn from a vocabulary ten times as large (so nearly every
token is a distinct word), and reports each child's wall time, peak memory (max RSS) and
how it ended (a signal is a crash), per solver (``--solvers auto,pot,highs``).

    python benchmarks/wmd_cost.py [--sizes 5,20,50,100] [--calls 20] [--repeats 5]
    python benchmarks/wmd_cost.py --large 1000,3000,10000 [--solvers auto]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,20,50,100")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--vocab", type=int, default=2000)
    parser.add_argument("--large", default="", help="sizes for the one-call child runs")
    parser.add_argument("--solvers", default="auto", help="solvers of the --large runs")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(json.loads(args.child))
    if args.large:
        return large(args)

    from gensim.similarities import WmdSimilarity

    from hsw2v import KeyedVectors
    from hsw2v.keyedvectors import _wmd

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(args.vocab)]
    ours = KeyedVectors(100)
    ours.add_vectors(words, rng.normal(size=(args.vocab, 100)).astype(np.float32))
    theirs = ours.to_gensim()

    def timed(fn, pairs):
        started = time.process_time()
        out = [fn(d1, d2) for d1, d2 in pairs]
        return (time.process_time() - started) / len(pairs) * 1e3, out

    def ours_with(solver):
        def call(d1, d2):
            _wmd.SOLVER = solver
            try:
                return ours.wmdistance(d1, d2)
            finally:
                _wmd.SOLVER = "auto"

        return call

    have_pot = _wmd.pot_emd2() is not None
    systems = {
        "hsw2v (auto)": ours_with("auto"),
        **({"hsw2v (POT)": ours_with("pot")} if have_pot else {}),
        "hsw2v (built-in simplex)": ours_with("simplex"),
        "hsw2v (HiGHS)": ours_with("highs"),
        "gensim + POT": theirs.wmdistance,
    }
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for size in sizes:
        pairs = [
            (list(rng.choice(words, size)), list(rng.choice(words, size)))
            for _ in range(args.calls)
        ]
        for fn in systems.values():  # warm-up: imports, caches
            fn(*pairs[0])
        times = {name: [] for name in systems}
        values = {}
        for _ in range(args.repeats):
            for name, fn in systems.items():
                ms, values[name] = timed(fn, pairs)
                times[name].append(ms)
        ref = np.array(values["gensim + POT"])
        diffs = {name: float(np.max(np.abs(np.array(v) - ref))) for name, v in values.items()}
        rows.append((size, {name: statistics.median(t) for name, t in times.items()}, diffs))
        print(size, rows[-1][1], diffs, flush=True)

    # WmdSimilarity: a 50-document index of 20-word documents, 5 queries of 20 words
    corpus = [list(rng.choice(words, 20)) for _ in range(50)]
    queries = [list(rng.choice(words, 20)) for _ in range(5)]
    sim_times = {}
    sim_systems = (
        ("hsw2v vectors (auto)", ours, "auto"),
        ("hsw2v vectors (built-in simplex)", ours, "simplex"),
        ("gensim vectors", theirs, "auto"),
    )
    for name, kv, solver in sim_systems:
        _wmd.SOLVER = solver
        try:
            index = WmdSimilarity(corpus, kv, num_best=5)
            index[queries[0]]
            runs = []
            for _ in range(args.repeats):
                started = time.process_time()
                tops = [index[q] for q in queries]
                runs.append((time.process_time() - started) / len(queries) * 1e3)
        finally:
            _wmd.SOLVER = "auto"
        sim_times[name] = (statistics.median(runs), tops)
    reference = [[i for i, _ in t] for t in sim_times["gensim vectors"][1]]
    same = all([[i for i, _ in t] for t in tops] == reference for _, tops in sim_times.values())

    names = list(systems)
    print()
    print("| words per document | " + " | ".join(names) + " | largest difference from gensim |")
    print("|---:|" + "---:|" * len(names) + "---:|")
    for size, med, diffs in rows:
        cells = " | ".join(f"{med[n]:.2f}" for n in names)
        print(f"| {size} | {cells} | {max(diffs.values()):.1e} |")
    print()
    print("| WmdSimilarity, 50 documents x 20 words, per query | CPU ms |")
    print("|---|---:|")
    for name, (ms, _) in sim_times.items():
        print(f"| {name} | {ms:.1f} |")
    print(f"\nsame top-5 documents for every query: {same}")


def child(spec: dict) -> None:
    """One wmdistance of two documents of ``size`` tokens, in this (child) process."""
    from hsw2v import KeyedVectors
    from hsw2v.keyedvectors import _wmd

    size, vocab = spec["size"], spec["size"] * 10
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(vocab)]
    kv = KeyedVectors(100)
    kv.add_vectors(words, rng.normal(size=(vocab, 100)).astype(np.float32))
    d1, d2 = list(rng.choice(words, size)), list(rng.choice(words, size))
    if spec["solver"] in _wmd.SOLVERS:
        _wmd.SOLVER = spec["solver"]
    started = time.perf_counter()
    try:
        value, error = kv.wmdistance(d1, d2), None
    except Exception as exc:  # noqa: BLE001 - reported
        value, error = None, f"{type(exc).__name__}: {exc}"
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - started,
                "value": value,
                "distinct": [len(set(d1)), len(set(d2))],
                "error": error,
                "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def large(args) -> None:
    rows = []
    for size in [int(s) for s in args.large.split(",")]:
        for solver in args.solvers.split(","):
            spec = json.dumps({"size": size, "solver": solver})
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            started = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", spec],
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - started
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            ended = (
                f"signal {signal.Signals(-proc.returncode).name}"
                if proc.returncode < 0
                else f"status {proc.returncode}"
            )
            out = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {}
            if "maxrss_mb" in out:
                rss = f"{out['maxrss_mb']:.0f} MB"
            else:  # the child died: the largest child's so far, if it was this one
                rss = f"{peak / 1024:.0f} MB" if peak > before else "-"
            rows.append(
                (
                    size,
                    solver,
                    out.get("distinct"),
                    wall,
                    rss,
                    ended,
                    out.get("error") or (proc.stderr.strip().splitlines() or [""])[-1],
                )
            )
            print(rows[-1], flush=True)
    print("\n| tokens per document | distinct words | solver | wall s | peak RSS | ended | error |")
    print("|---:|---|---|---:|---:|---|---|")
    for size, solver, distinct, wall, rss, ended, error in rows:
        print(f"| {size} | {distinct} | {solver} | {wall:.1f} | {rss} | {ended} | {error or '-'} |")


if __name__ == "__main__":
    main()
