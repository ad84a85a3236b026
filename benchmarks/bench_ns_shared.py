"""Negative sampling against gensim 4.4: hsw2v's default (shared negatives) and its gensim draws
beside gensim's iterable and corpus_file modes, alternated, medians, per wall and CPU second.

The cells of issue 30's speed target (``hs=0, negative=5``, vector_size 100 and 300, skip-gram
and CBOW, 1 and 2 workers). Every run is a fresh subprocess (``systems.py``, the same adapters
as ``bench_speed.py``); for each repeat and each cell every system runs once, in an order
rotated by the repeat, so that drift on a shared machine affects all systems alike. Words per
second: corpus words x epochs / seconds of ``train()``; per CPU-second: the same words over
the CPU time of all the process's threads during ``train()`` (gensim's includes its reader
thread). The ratio is each hsw2v system against gensim's faster mode in that cell.

    python3 benchmarks/bench_ns_shared.py --corpus ../data/gcide.txt --words 1000000 \\
        --sizes 100,300 --modes sg,cbow --workers 1,2 --repeats 3

``hsw2v`` trains with the defaults (``shared_negatives=True``); ``hsw2v-pairs``
(``shared_negatives=False``) trains gensim's draws: a set per (context, centre) pair in
skip-gram, a set per centre word in CBOW. ``hsw2v-shared`` names the option.
``--negative 0`` times the same cells with hierarchical softmax alone (``hs=1, negative=0``).
``--pool A.json B.json ...`` prints one table of the runs of several ``--json`` files.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import make_slice  # noqa: E402
from systems import get_system  # noqa: E402

SYSTEMS = ("hsw2v", "hsw2v-pairs", "gensim-iter", "gensim-file")
GENSIM = ("gensim-iter", "gensim-file")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", help="the corpus (required unless --pool)")
    ap.add_argument("--words", type=int, default=1_000_000, help="first N words of the corpus")
    ap.add_argument("--sizes", default="100,300")
    ap.add_argument("--modes", default="sg,cbow")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--negative", type=int, default=5)
    ap.add_argument("--json", help="write every run's timings here")
    ap.add_argument(
        "--pool", nargs="+", metavar="JSON",
        help="train nothing: the table of every run in these --json files together",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if args.pool:
        pool(args.pool)
        return
    if not args.corpus:
        ap.error("--corpus is required (unless --pool)")
    systems = args.systems.split(",")
    cells = [
        (int(d), mode, int(w))
        for d in args.sizes.split(",")
        for mode in args.modes.split(",")
        for w in args.workers.split(",")
    ]
    runs: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        corpus = str(Path(tmp) / "slice.txt")
        words = make_slice(args.corpus, corpus, args.words)
        objective = f"hs=0 negative={args.negative}" if args.negative else "hs=1 negative=0"
        print(f"{words:,} words, {args.epochs} epoch(s), {objective}", flush=True)
        for repeat in range(args.repeats):
            for d, mode, workers in cells:
                order = systems[repeat % len(systems):] + systems[: repeat % len(systems)]
                for name in order:
                    r = get_system(name).train(
                        corpus, mode, workers, args.epochs, vector_size=d, out_dir=tmp,
                        corpus_words=words, negative=args.negative,
                    )  # fmt: skip
                    cpu = r.extra.get("train_cpu_seconds")
                    runs.setdefault((d, mode, workers, name), []).append(
                        (r.train_seconds, cpu, r.words)
                    )
                    print(f"[{repeat + 1}/{args.repeats}] d={d} {mode} w={workers} {name}: "
                          f"{r.words / r.train_seconds:,.0f} words/s, "
                          f"{r.words / cpu:,.0f} words/CPU-s", flush=True)  # fmt: skip
    table = print_table(runs, cells, systems)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"medians": table, "runs": {"/".join(map(str, k)): v for k, v in runs.items()}},
            indent=1))  # fmt: skip


def pool(paths: list[str]) -> None:
    """``--pool``: the runs of several ``--json`` files as one table (medians over all)."""
    runs: dict = {}
    for path in paths:
        for key, got in json.loads(Path(path).read_text())["runs"].items():
            d, mode, workers, name = key.split("/")
            runs.setdefault((int(d), mode, int(workers), name), []).extend(got)
    cells = sorted({key[:3] for key in runs}, key=lambda c: (c[0], c[1] != "sg", c[2]))
    systems = [name for name in SYSTEMS if any(key[3] == name for key in runs)]
    counts = [len(got) for got in runs.values()]
    print(f"{len(paths)} files, {min(counts)} to {max(counts)} runs per cell and system")
    print_table(runs, cells, systems)


def print_table(runs: dict, cells: list, systems: list) -> dict:
    """The medians per cell and system over every run in ``runs`` ((d, mode, workers,
    system): [(train seconds, CPU seconds, words)]), each hsw2v system against gensim's
    faster mode in that cell; returns them."""
    print("\n| d | mode | workers | system | words/s (wall) | words/CPU-s | vs faster gensim "
          "(wall) | vs faster gensim (CPU) |\n|---:|---|---:|---|---:|---:|---:|---:|")  # fmt: skip
    table = {}
    for d, mode, workers in cells:
        rates = {}
        for name in systems:
            got = runs.get((d, mode, workers, name))
            if got:
                rates[name] = (
                    statistics.median(w / s for s, _, w in got),
                    statistics.median(w / c for _, c, w in got),
                )
        best_wall = max((rates[g][0] for g in GENSIM if g in rates), default=None)
        best_cpu = max((rates[g][1] for g in GENSIM if g in rates), default=None)
        for name, (wall, cpu) in rates.items():
            ratio = (f"{wall / best_wall:.2f}x | {cpu / best_cpu:.2f}x"
                     if best_wall and name not in GENSIM else "|")  # fmt: skip
            print(f"| {d} | {mode} | {workers} | {name} | {wall:,.0f} | {cpu:,.0f} | {ratio} |")
            table[f"{d}/{mode}/{workers}/{name}"] = {"wall": wall, "cpu": cpu}
    return table


if __name__ == "__main__":
    main()
