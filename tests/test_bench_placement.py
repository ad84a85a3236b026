"""The benchmarks' placement probe (benchmarks/placement.py): a cache line's round trip between
the first two CPUs, and how runs are grouped by the placement they saw."""

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

# Loaded from its file: putting benchmarks/ on sys.path would shadow packages by its scripts'
# names (benchmarks/distributed.py and Dask's ``distributed``).
_SPEC = importlib.util.spec_from_file_location(
    "bench_placement", Path(__file__).resolve().parents[1] / "benchmarks" / "placement.py"
)
placement = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(placement)


def test_placement_of_each_case():
    assert placement.placement_of(60.0, 70.0) == "near"
    assert placement.placement_of(330.0, 340.0) == "far"
    assert placement.placement_of(60.0, 330.0) == "mixed"
    assert placement.placement_of(60.0, None) == "unknown"
    assert placement.placement_of() == "unknown"


def test_placements_line_counts_each_series():
    line = placement.placements_line({"a": ["near", "far", "near"], "b": ["mixed"]})
    assert line == "  placements (before / after each run): a: near 2, far 1; b: mixed 1"


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2
                    or shutil.which("cc") is None,
                    reason="needs Linux's CPU affinity, two CPUs and a C compiler")  # fmt: skip
def test_round_trip_is_measured():
    rt = placement.round_trip_ns(20_000)
    assert rt is not None and 1.0 < rt < 100_000.0


def test_run_placed_returns_the_result_and_skips_one_worker():
    assert placement.run_placed(lambda: 7, several=False) == (7, "")
    result, where = placement.run_placed(lambda: 42)
    assert result == 42 and where in ("near", "far", "mixed", "unknown")
