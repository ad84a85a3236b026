"""Where a Dask round's time goes: each round's training tasks, its merge and the gaps
between them, from Dask's task stream.

For every round: the slowest training task (compute), the gap from its end to the merge's
start (the deltas' transfer and scheduling), the merge's compute, and the gap from the
merge's end to the next round's first training start (the update's transfer, scheduling,
and bringing the copy up to date). Prints medians over the rounds and the run's words/s.

Run from the repository root:
``PYTHONPATH=. python3 benchmarks/probes/dask_round_timeline.py --corpus ../data/gcide.txt``
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections import defaultdict


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sync", type=int, default=500_000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--merge", default="adasum")
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster, get_task_stream

    from hsw2v import distributed

    params = dict(vector_size=100, window=5, min_count=5, sample=1e-3, sg=1, seed=1)
    with (
        LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True) as cluster,
        Client(cluster) as client,
    ):
        with get_task_stream(client) as stream:
            model = distributed.train(
                client, args.corpus, sync_every=args.sync, merge=args.merge,
                epochs=args.epochs, **params,
            )  # fmt: skip
        report = model.distributed_report
    spans = defaultdict(list)  # (kind, round) -> [(start, stop, action)]
    for record in stream.data:
        match = re.match(r"hsw2v-(train|merge-round|stats|snap)-(\d+)", str(record["key"]))
        if not match:
            continue
        kind, g = match.group(1), int(match.group(2))
        for s in record["startstops"]:
            spans[kind, g].append((s["start"], s["stop"], s["action"]))
    rows = []
    for g in range(report.rounds):
        train = [s for s in spans.get(("train", g), []) if s[2] == "compute"]
        merge = [s for s in spans.get(("merge-round", g), []) if s[2] == "compute"]
        nxt = [s for s in spans.get(("train", g + 1), []) if s[2] == "compute"]
        moved = [s for s in spans.get(("merge-round", g), []) if s[2] == "transfer"]
        if not train or not merge:
            continue
        row = {
            "train": max(s[1] - s[0] for s in train),
            "to_merge": merge[0][0] - max(s[1] for s in train),
            "merge": merge[0][1] - merge[0][0],
            "transfer_in": sum(s[1] - s[0] for s in moved),
        }
        if nxt:
            row["to_next"] = min(s[0] for s in nxt) - merge[0][1]
            row["round"] = min(s[0] for s in nxt) - min(s[0] for s in train)
        rows.append(row)
    print(f"{report.rounds} rounds, {report.words_per_second:,.0f} words/s, "
          f"{report.seconds:.2f} s, slowest tasks' seconds {report.task_seconds:.2f}")  # fmt: skip
    for key in ("round", "train", "to_merge", "transfer_in", "merge", "to_next"):
        values = [r[key] for r in rows if key in r]
        if values:
            print(f"{key:12s} median {statistics.median(values):.3f} s  "
                  f"min {min(values):.3f}  max {max(values):.3f}  (n={len(values)})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
