"""Where the machine's first two CPUs sit now: a cache line's round trip between them.

On a shared virtual machine two vCPUs may run on cores that share a cache or on cores that
do not, and the hypervisor moves them between the two. On the 2-core AMD EPYC benchmark host
a line's round trip (``core_round_trip.c``: two pinned threads hand one counter back and
forth) measured 52-65 ns in one placement and 320-350 ns in the other, switching within
minutes, sometimes within seconds. Every cache line two training threads share pays that:
in the far placement two workers took 1.7-2x the CPU seconds for the same work (hsw2v's
CBOW hierarchical softmax, 0.72-0.83 against 0.41-0.43 CPU s per million words), the extra
in the walks and the window's rows, not in the reader's private work; gensim's threads have
the same slow mode. So two-worker runs are comparable only where they saw the same
placement: the benchmarks record the round trip before and after each run
(:func:`run_placed`). That is a hint, not a proof: the placement
can flip and flip back within a run (gensim's two-worker CBOW once took 1.7x its CPU seconds
between two near readings), so a run's own CPU seconds per word remain the measure of the
mode it ran in.

    python3 benchmarks/placement.py [--repeat 5]    # the round trip now, in ns

The probe is compiled once with the C compiler (``cc``, or ``$CC``) into a cache folder of
the temporary directory; without a compiler, or with fewer than two CPUs, the round trip is
None and the placement "unknown".
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar

SOURCE = Path(__file__).resolve().parent / "core_round_trip.c"
#: Round trips under this many ns are the near placement (cores sharing a cache).
NEAR_NS = 150.0
T = TypeVar("T")


@cache
def _probe() -> Path | None:
    """The compiled probe (built on first use, looked up once a process), or None without a
    compiler."""
    text = SOURCE.read_bytes()
    folder = Path(tempfile.gettempdir()) / f"hsw2v-bench-{hashlib.sha1(text).hexdigest()[:12]}"
    exe = folder / "core_round_trip"
    if exe.exists():
        return exe
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / f"core_round_trip.{os.getpid()}"
    built = subprocess.run([cc, "-O2", "-pthread", str(SOURCE), "-o", str(scratch)],
                           capture_output=True, text=True)  # fmt: skip
    if built.returncode != 0:
        return None
    os.replace(scratch, exe)
    return exe


def round_trip_ns(round_trips: int = 200_000) -> float | None:
    """One measurement of a cache line's round trip between the first two CPUs (ns), or None
    where it cannot be measured. 200,000 round trips take 10-70 ms."""
    exe = _probe()
    if exe is None:
        return None
    done = subprocess.run([str(exe), str(round_trips)], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return float(done.stdout.strip())


def placement_of(*round_trips: float | None) -> str:
    """The placement a run saw: "near" when every round trip given (before and after the run)
    is under NEAR_NS, "far" when every one is over it, "mixed" when the placement changed,
    "unknown" where one could not be measured."""
    known = [rt for rt in round_trips if rt is not None]
    if not known or len(known) < len(round_trips):
        return "unknown"
    if all(rt < NEAR_NS for rt in known):
        return "near"
    if all(rt >= NEAR_NS for rt in known):
        return "far"
    return "mixed"


def run_placed(run: Callable[[], T], several: bool = True) -> tuple[T, str]:
    """``run()``'s result and the placement it saw (:func:`placement_of` of the round trips
    read just before and just after it); the placement is "" without ``several`` workers
    (one thread shares no rows, and the readings are skipped)."""
    if not several:
        return run(), ""
    before = round_trip_ns()
    result = run()
    return result, placement_of(before, round_trip_ns())


def placements_line(where: dict[str, list[str]]) -> str:
    """How many runs of each series saw each placement, as one line: ``where`` maps a
    series' label to its runs' placements (:func:`placement_of`)."""
    cells = []
    for label, runs in where.items():
        counts = [f"{kind} {runs.count(kind)}" for kind in ("near", "far", "mixed", "unknown")
                  if runs.count(kind)]  # fmt: skip
        cells.append(f"{label}: " + ", ".join(counts))
    return "  placements (before / after each run): " + "; ".join(cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="measurements, a second apart")
    args = parser.parse_args()
    for k in range(args.repeat):
        if k:
            time.sleep(1.0)
        rt = round_trip_ns()
        if rt is None:
            print("round trip: not measurable here (no C compiler, or fewer than two CPUs)")
            return 1
        print(f"round trip {rt:.1f} ns: {placement_of(rt)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
