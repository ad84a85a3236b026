"""The Python side of a Spark task's reading, alone: a partition's rows as the JVM writes
them to the task's Python worker (``rows_to_python``: each row's words joined by
``SEPARATOR``, one big-endian length and the UTF-8 bytes each), read back with PySpark's
``UTF8Deserializer`` and counted by ``scan_partition``, the rows either decoded into str
(``UTF8Deserializer()``) or kept as the bytes that came (``UTF8Deserializer(False)``, what
``rows_to_python`` reads). Alternated in one process; medians of ``--repeats``.

    python3 benchmarks/probes/spark_rows_python.py --corpus ../data/gcide.txt --repeats 9

``--share 0.5``: half the corpus's lines, what each task of two partitions reads.
"""

from __future__ import annotations

import argparse
import io
import statistics
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def frames_of(corpus: str, share: float) -> tuple[bytes, int]:
    from hsw2v.spark._engine import SEPARATOR

    with open(corpus, encoding="utf-8") as f:
        rows = [line.split() for line in f]
    rows = [r for r in rows if r][: int(len(rows) * share)]
    out = io.BytesIO()
    for r in rows:
        data = SEPARATOR.join(r).encode("utf-8")
        out.write(struct.pack("!i", len(data)))
        out.write(data)
    out.write(struct.pack("!i", -1))  # the end of the data section
    return out.getvalue(), len(rows)


def count(frames: bytes, decode: bool):
    from pyspark.serializers import UTF8Deserializer

    from hsw2v.spark._engine import row_of, scan_partition

    stream = io.BufferedReader(io.BytesIO(frames), 65536)  # as the worker's socket file
    rows = map(row_of, UTF8Deserializer(decode).load_stream(stream))
    return scan_partition(0, rows, 10_000, 10_000, 10**9)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--share", type=float, default=0.5)
    args = ap.parse_args()
    frames, n = frames_of(args.corpus, args.share)
    seconds: dict = {True: [], False: []}
    for _ in range(args.repeats):
        for decode in (True, False):
            started = time.perf_counter()
            scan = count(frames, decode)
            seconds[decode].append(time.perf_counter() - started)
    print(f"{n:,} rows, {len(frames) / 1e6:.1f} MB of frames, {scan.words:,} words")
    for decode, label in ((True, "decoded into str"), (False, "kept as bytes")):
        print(f"{label}: median {statistics.median(seconds[decode]):.3f} s "
              f"(min {min(seconds[decode]):.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
