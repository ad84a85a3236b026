"""Pool the per-repeat on/off ratios of several ``benchmarks/loss_cost.py`` logs.

One fresh-process run of ``loss_cost.py`` gives 5-9 pairs per cell, and on a machine whose
processes fall into speed groups a cell's median then moves by 10-20 % from run to run (each
run's high cells are other cells). Pooling the pairs of several runs of the same build gives
one median and geometric mean per cell over all of them.

    python benchmarks/probes/loss_cost_pool.py LOG [LOG ...]

Each LOG is the printed output of one ``loss_cost.py`` run (its ``[k] SYSTEM MODE workers=W
compute_loss=BOOL: X s wall, Y s CPU`` lines); a pair is the on and off runs of one repeat.
"""

from __future__ import annotations

import collections
import re
import statistics
import sys

LINE = re.compile(
    r"\[(\d+)\] (\w+) (\S+) workers=(\d+) compute_loss=(True|False): "
    r"([\d.]+) s wall, ([\d.]+) s CPU"
)


def pooled(paths: list[str]) -> dict:
    """{(system, mode, workers): [CPU on / CPU off of every pair]} over the logs."""
    cells = collections.defaultdict(list)
    for path in paths:
        runs = collections.defaultdict(dict)
        with open(path) as f:
            for line in f:
                m = LINE.search(line)
                if m:
                    k, system, mode, workers, on, _wall, cpu = m.groups()
                    runs[(k, system, mode, int(workers))][on == "True"] = float(cpu)
        for (_k, system, mode, workers), pair in runs.items():
            if len(pair) == 2:
                cells[(system, mode, workers)].append(pair[True] / pair[False])
    return cells


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    print("| system | mode | workers | pairs | CPU on/off, median | geometric mean | min-max |")
    print("|---|---|---:|---:|---:|---:|---|")
    for (system, mode, workers), r in sorted(pooled(argv).items()):
        print(
            f"| {system} | {mode} | {workers} | {len(r)} | {statistics.median(r):.3f} | "
            f"{statistics.geometric_mean(r):.3f} | {min(r):.2f}-{max(r):.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
