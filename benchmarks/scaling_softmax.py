"""How the cost of an output layer grows with the number of classes: hierarchical softmax
against a full softmax, from 1,000 to 1,000,000 classes.

For each V (log-spaced) it times, per example:

(a) the log-probability of one target class: ``HierarchicalSoftmax.log_prob`` (one dot
    product per node on the target's path) against a full softmax (one BLAS matrix product
    of the batch with the V x dim output matrix, then ``logsumexp`` of each row);
(b) the full distribution over all V classes: ``HierarchicalSoftmax.log_proba`` (one matrix
    product over the V - 1 inner nodes, then one top-down pass per row) against the full
    softmax's ``log_softmax``; both write a float64 batch x V output.

Hierarchical softmax runs on two trees: balanced (uniform targets) and Huffman over Zipf
class counts (targets drawn from the same Zipf law, as words are). The softmax works on the
rows in chunks, as ``log_proba`` does, so neither needs more than 16 MB of scores at a time.
Memory: the model's arrays (weights and tree) and the peak of Python/NumPy allocations during
one call of (b) (``tracemalloc``), output included. Every time is the CPU time of the calling thread
(single-threaded BLAS runs in it), the fastest of ``--repeats`` runs, so that a shared,
loaded machine measures the work rather than the wait.

    python3 benchmarks/scaling_softmax.py --out-json benchmarks/results_scaling.json \\
        --plot docs/img/scaling-softmax.png
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import logsumexp  # noqa: E402

from hsw2v import HierarchicalSoftmax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import source_commit  # noqa: E402

_CHUNK = 1 << 22  # float32 scores per matrix product, as HierarchicalSoftmax.log_proba


def softmax_target(W, H, y):
    """log P(y_i | h_i) under a full softmax, in row chunks."""
    V = W.shape[0]
    rows = max(1, _CHUNK // V)
    out = np.empty(len(H))
    for s in range(0, len(H), rows):
        S = H[s : s + rows] @ W.T
        out[s : s + rows] = S[np.arange(len(S)), y[s : s + rows]] - logsumexp(S, axis=1)
    return out


def softmax_full(W, H):
    """log P(. | h_i) under a full softmax (float64 B x V), in row chunks."""
    V = W.shape[0]
    rows = max(1, _CHUNK // V)
    out = np.empty((len(H), V))
    for s in range(0, len(H), rows):
        S = H[s : s + rows] @ W.T
        out[s : s + rows] = S - logsumexp(S, axis=1, keepdims=True)
    return out


def timed(fn, repeats):
    """CPU seconds of this thread for one call (BLAS runs single-threaded in this thread),
    the fastest of ``repeats`` runs: on a shared machine wall-clock time mostly measures
    waiting for a core, CPU time does not."""
    times = []
    for _ in range(repeats):
        t = time.thread_time()
        fn()
        times.append(time.thread_time() - t)
    return float(np.min(times))


def peak_bytes(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return int(peak)


def measure(V, dim, batch_target, batch_full, repeats, rng):
    H = rng.normal(0, 1, (max(batch_target, batch_full), dim)).astype(np.float32)
    Ht, Hf = H[:batch_target], H[:batch_full]
    zipf = 1.0 / np.arange(1, V + 1)
    counts = np.maximum(1, (zipf * 1e9).astype(np.int64))
    row = {"V": V}
    t = time.perf_counter()
    layers = {
        "hs_balanced": (HierarchicalSoftmax.balanced(V, dim), rng.integers(0, V, batch_target)),
        "hs_huffman": (
            HierarchicalSoftmax.from_counts(counts, dim),
            rng.choice(V, batch_target, p=zipf / zipf.sum()),
        ),
    }
    row["build_s"] = time.perf_counter() - t
    for name, (lay, y) in layers.items():
        lay.weights[:] = rng.normal(0, 0.3, lay.weights.shape)
        row[f"{name}_target_us"] = (
            1e6 * timed(lambda lay=lay, y=y: lay.log_prob(Ht, y), repeats) / len(Ht)
        )
        row[f"{name}_mean_path"] = float(lay.tree.lengths[y].mean())
        row[f"{name}_full_us"] = 1e6 * timed(lambda lay=lay: lay.log_proba(Hf), repeats) / len(Hf)
        row[f"{name}_model_mb"] = (
            lay.weights.nbytes
            + lay.tree.codes.nbytes
            + lay.tree.points.nbytes
            + lay.tree.lengths.nbytes
            + lay.children.nbytes
            + lay.order.nbytes
        ) / 2**20
        row[f"{name}_full_peak_mb"] = peak_bytes(lambda lay=lay: lay.log_proba(Hf)) / 2**20
    lay = layers["hs_balanced"][0]
    check = np.exp(lay.log_proba(Hf[:2])).sum(axis=1)
    assert np.allclose(check, 1.0), check
    del layers
    W = rng.normal(0, 0.3, (V, dim)).astype(np.float32)
    y = rng.integers(0, V, batch_full)
    # the softmax's (a) and (b) cost the same matrix product: the smaller batch keeps it short
    row["softmax_target_us"] = 1e6 * timed(lambda: softmax_target(W, Hf, y), repeats) / len(Hf)
    row["softmax_full_us"] = 1e6 * timed(lambda: softmax_full(W, Hf), repeats) / len(Hf)
    row["softmax_model_mb"] = W.nbytes / 2**20
    row["softmax_full_peak_mb"] = peak_bytes(lambda: softmax_full(W, Hf)) / 2**20
    row["output_mb"] = len(Hf) * V * 8 / 2**20
    return row


def plot(rows, path, dim, stamp=""):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    V = [r["V"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    styles = {
        "hs_balanced": ("HS, balanced tree", "o-", "tab:blue"),
        "hs_huffman": ("HS, Huffman tree (Zipf targets)", "s-", "tab:green"),
        "softmax": ("full softmax (BLAS + logsumexp)", "^-", "tab:red"),
    }
    for ax, what, title in (
        (axes[0], "target_us", "(a) log P(one target class): CPU µs per example"),
        (axes[1], "full_us", "(b) the full distribution: CPU µs per example"),
        (axes[2], "full_peak_mb", "memory: peak MB during (b), batch output included"),
    ):
        for key, (label, marker, color) in styles.items():
            ax.plot(V, [r[f"{key}_{what}"] for r in rows], marker, label=label, color=color)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("number of classes V")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[2].plot(V, [r["output_mb"] for r in rows], ":", color="grey", label="the output itself")
    axes[0].legend(fontsize=8)
    axes[2].legend(fontsize=8)
    fig.suptitle(f"Hierarchical vs full softmax, dim={dim}, one thread{stamp}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def table(rows) -> str:
    lines = [
        "| V | (a) HS balanced µs | (a) HS Huffman µs | (a) softmax µs | (b) HS balanced µs "
        "| (b) softmax µs | mean path bal. / Huff. | model MB HS / softmax "
        "| peak MB in (b) HS / softmax (output) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['V']:,} | {r['hs_balanced_target_us']:.2f} | {r['hs_huffman_target_us']:.2f} "
            f"| {r['softmax_target_us']:.1f} | {r['hs_balanced_full_us']:.0f} "
            f"| {r['softmax_full_us']:.0f} "
            f"| {r['hs_balanced_mean_path']:.1f} / {r['hs_huffman_mean_path']:.1f} "
            f"| {r['hs_balanced_model_mb']:.1f} / {r['softmax_model_mb']:.1f} "
            f"| {r['hs_balanced_full_peak_mb']:.1f} / {r['softmax_full_peak_mb']:.1f} "
            f"({r['output_mb']:.1f}) |"
        )
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-v", type=int, default=1000)
    ap.add_argument("--max-v", type=int, default=1_000_000)
    ap.add_argument("--points", type=int, default=7)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--batch-target", type=int, default=2048)
    ap.add_argument("--batch-full", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out-json")
    ap.add_argument("--plot")
    ap.add_argument(
        "--replot",
        metavar="JSON",
        help="only draw --plot again from a JSON this script wrote (nothing is measured)",
    )
    ap.add_argument("--date", help="with --replot: the measurement's date, for a JSON without one")
    ap.add_argument("--commit", help="with --replot: the commit measured, for a JSON without one")
    args = ap.parse_args(argv)
    if args.replot:
        with open(args.replot, encoding="utf-8") as fh:
            info = json.load(fh)
        date, commit = args.date or info.get("date"), args.commit or info.get("commit")
        plot(info["rows"], args.plot, info["dim"], f"; measured {date}, commit {commit}")
        return
    rng = np.random.default_rng(args.seed)
    sizes = np.unique(np.round(np.geomspace(args.min_v, args.max_v, args.points)).astype(int))
    rows = []
    started = time.perf_counter()
    for V in sizes:
        rows.append(
            measure(int(V), args.dim, args.batch_target, args.batch_full, args.repeats, rng)
        )
        print(json.dumps(rows[-1]), flush=True)
    info = {
        "command": "python3 benchmarks/scaling_softmax.py " + " ".join(argv or []),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": source_commit(),
        "dim": args.dim,
        "batch_target": args.batch_target,
        "batch_full": args.batch_full,
        "repeats": args.repeats,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "load_average": list(os.getloadavg()),
        "seconds": time.perf_counter() - started,
        "rows": rows,
    }
    print(table(rows))
    print(f"total {info['seconds']:.0f} s; load average at end {info['load_average']}")
    if args.out_json:
        with open(args.out_json, "w", encoding="utf-8") as fh:
            json.dump(info, fh, indent=1)
    if args.plot:
        plot(rows, args.plot, args.dim, f"; measured {info['date']}, commit {info['commit']}")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
