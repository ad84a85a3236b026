"""The walk of one h alone (``walk_alone.c``): ns per node of ``train/_window.h``'s
``hsw2v_cbow_walk`` away from the job loop, with the output rows packed (d floats apart, as
hsw2v stores them) and spread to a cache-line multiple, and this core's multiply-add rate.

Why: FastText's skip-gram with hierarchical softmax spends about half its time in this walk
(h is the centre's rows' mean, one walk per context word, h moved after each). The walk does
3 x d multiply-adds a node (h . row, h's step, the row's step); the question is how far it
runs from the rate this core can do them at, and whether rows that start on a cache line
would walk faster. It compiles the probe with ``setup.py``'s flags for the CPU level
(``GCC_OPT`` and ``GCC_LEVELS``, read from the file, not imported) and the kernels' headers.

    PYTHONPATH=. python3 benchmarks/probes/walk_alone.py [--level avx512] [--d 100] \\
        [--rows 2000] [--lengths 6-16] [--walks 100000] [--pairs 30] [--stride 112]
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def setup_flags(level: str) -> list[str]:
    """``GCC_OPT + GCC_LEVELS[level]`` as ``setup.py`` assigns them (literals)."""
    values = {}
    for node in ast.parse((ROOT / "setup.py").read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", None)
            if name in ("GCC_OPT", "GCC_LEVELS"):
                values[name] = ast.literal_eval(node.value)
    return values["GCC_OPT"] + values["GCC_LEVELS"][level]


def build(level: str, folder: str) -> Path:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        sys.exit("walk_alone: no C compiler (cc or $CC)")
    exe = Path(folder) / "walk_alone"
    command = [cc, *setup_flags(level), "-Wno-psabi", f"-I{ROOT / 'hsw2v' / '_kernels'}",
               str(HERE / "walk_alone.c"), "-o", str(exe), "-lm"]  # fmt: skip
    built = subprocess.run(command, capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(f"walk_alone: the build failed:\n{built.stderr}")
    return exe


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="avx512", choices=["baseline", "avx2", "avx512"])
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--rows", default="2000", help="comma-separated row counts")
    parser.add_argument("--lengths", default="6-16", help="path lengths, LOW-HIGH")
    parser.add_argument("--walks", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--stride", type=int, default=0,
                        help="the spread layout's floats per row (default: d to 16 floats)")  # fmt: skip
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hsw2v-walk-") as folder:
        run(args, build(args.level, folder))
    return 0


def run(args, exe: Path) -> None:
    low, high = args.lengths.split("-")
    stride = args.stride or -(-args.d // 16) * 16
    rates = subprocess.run([exe, "fma"], capture_output=True, text=True).stdout.split("\n")
    print(f"level {args.level}; " + "; ".join(line for line in rates if line))
    for rows in args.rows.split(","):
        out = subprocess.run([exe, "walk", rows, low, high, str(args.walks), str(args.pairs),
                              str(args.d), str(stride)], capture_output=True, text=True)  # fmt: skip
        print(out.stdout.strip() or out.stderr.strip())


if __name__ == "__main__":
    raise SystemExit(main())
