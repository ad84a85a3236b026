"""Fit time of the layer with a wide root, 1 against 2 workers: one epoch of
``HierarchicalSoftmax(kmeans tree, 128, intercept=True, root_width=K).fit`` on the next-word
task of benchmarks/classify.py, wall and CPU seconds, each setting in a fresh process,
alternated over ``--repeats`` rounds.

    python3 benchmarks/probes/wide_root_workers.py --corpus ../data/gcide.txt --classes 1000 \\
        --widths 0,64,256 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classify import build_task  # noqa: E402


def child(args) -> None:
    from hsw2v import HierarchicalSoftmax
    from hsw2v.label_trees import label_tree

    X, y, _, _ = build_task(Path(args.corpus), args.classes, 50_000, args.train, 1000,
                            Path(args.cache))
    tree = label_tree("kmeans", y, args.classes, X, seed=1)
    width = args.width or None
    layer = HierarchicalSoftmax(tree, 128, seed=1, intercept=True, root_width=width)
    t0, c0 = time.perf_counter(), time.process_time()
    layer.fit(X, y, epochs=1, lr=0.1, workers=args.workers)
    print(json.dumps({"width": args.width, "workers": args.workers,
                      "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="../data/gcide.txt")
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--train", type=int, default=1_500_000)
    ap.add_argument("--widths", default="0,64,256", help="0: the binary root")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "hsw2v-classify"))
    ap.add_argument("--width", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.width is not None:
        child(args)
        return
    build_task(Path(args.corpus), args.classes, 50_000, args.train, 1000, Path(args.cache))
    print("| K | workers | wall s | CPU s |\n|---|---|---|---|")
    for _ in range(args.repeats):
        for width in (int(w) for w in args.widths.split(",")):
            for workers in (1, 2):
                out = subprocess.run(
                    [sys.executable, __file__, "--corpus", args.corpus, "--classes",
                     str(args.classes), "--train", str(args.train), "--cache", args.cache,
                     "--width", str(width), "--workers", str(workers)],
                    capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"| {width or 'binary'} | {workers} | {r['wall']:.2f} | {r['cpu']:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()
