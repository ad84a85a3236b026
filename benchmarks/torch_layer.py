"""Three output layers under one next-word model in PyTorch: full softmax, adaptive softmax,
hierarchical softmax (``hsw2v.torch.HierarchicalSoftmaxLoss``).

The model reads the ``--context`` previous words of a corpus (the bundled demo corpus by
default), concatenates their embeddings, maps them to a ``--dim`` hidden vector (Linear +
ReLU) and predicts the next word with one of:

* ``full``: ``nn.Linear(dim, V)`` + ``F.cross_entropy`` (the full softmax);
* ``adaptive``: ``nn.AdaptiveLogSoftmaxWithLoss`` (Grave et al. 2017) with frequency
  cutoffs 2,000 / 20,000 / 200,000 (those below V), ``div_value=4``;
* ``hs``: ``HierarchicalSoftmaxLoss`` over the Huffman tree of the training counts, sparse
  node gradients (``SparseAdam``);
* ``hs-wide``: the same with a per-node bias and a wide root of ``--root-width`` children.

Classes: the corpus's most frequent words, an ``<unk>`` class when the vocabulary is larger
than V, and synthetic classes that never occur up to V (10k, 100k, 1M by default). At each
class count every layer trains ``--steps`` Adam steps (lr ``--lr``) on the same batches, one
step of each layer in turn (the first of each round rotating), so that a busy machine slows
them alike (on the CPU, one fresh process per class count). Reported: the median time of a
training step (forward, backward, optimiser; after 3 warm-up steps, or after 1 for a layer
that made fewer than 4), validation perplexity
after the budget, and peak memory, from a separate run of 3 steps per layer (CPU: the growth
of a fresh process's peak resident memory after a warm-up step; GPU:
``torch.cuda.max_memory_allocated`` above what was allocated before). A full softmax that
would exceed ``--max-memory-gb`` on the CPU is not started (its estimate is reported: the
machine may be shared); on a GPU a layer that runs out of memory is reported as such, and
``--oom-batch`` (16384 by default there) tries the full softmax and ``hs`` at the largest
class count with that batch. ``--budget`` caps the seconds of training: each
class count gets an equal share of what is left, each layer an equal part of that, and a
layer that spends its part stops early (its row says after how many steps).

    python3 benchmarks/torch_layer.py --out DIR                                 # CPU
    python3 benchmarks/torch_layer.py --device cuda --out DIR                   # GPU
    python3 benchmarks/torch_layer.py --quick                                   # smoke test
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import gzip
import json
import math
import os
import platform
import re
import resource
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

try:
    import hsw2v  # noqa: F401
except ImportError:  # run from a source checkout built in place
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LAYERS = ("full", "adaptive", "hs", "hs-wide")


@functools.cache
def read_corpus(path: str) -> list[str]:
    """Lower-cased word tokens of a text file (gzip if the name ends in .gz)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return re.findall(r"[a-z']+", f.read().lower())


@functools.cache
def prepare_file(path: str, n_classes: int, context: int, n_valid: int):
    """:func:`prepare` of a corpus file, once per process."""
    return prepare(read_corpus(path), n_classes, context, n_valid)


def prepare(tokens: list[str], n_classes: int, context: int, n_valid: int):
    """``(X_train, y_train, X_valid, y_valid, counts, n_inputs)``: context windows of word
    ids (inputs use the real classes only) and next-word classes; ``counts``: training
    counts per class plus one."""
    freq = collections.Counter(tokens).most_common()
    n_real = min(len(freq), n_classes - 1)
    ids = {w: i for i, (w, _) in enumerate(freq[:n_real])}
    unk = n_real  # class n_real is <unk> (or the first synthetic class when nothing maps there)
    seq = np.fromiter((ids.get(w, unk) for w in tokens), dtype=np.int64, count=len(tokens))
    windows = np.lib.stride_tricks.sliding_window_view(seq, context + 1)
    X, y = windows[:, :context].copy(), windows[:, context].copy()
    X_train, y_train = X[:-n_valid], y[:-n_valid]
    counts = np.bincount(y_train, minlength=n_classes) + 1
    return X_train, y_train, X[-n_valid:], y[-n_valid:], counts, n_real + 1


class NextWord(nn.Module):
    """Context embeddings -> Linear + ReLU -> hidden vector -> one output layer."""

    def __init__(self, kind: str, n_inputs: int, n_classes: int, counts, args):
        super().__init__()
        self.kind = kind
        self.embed = nn.Embedding(n_inputs, args.embed)
        self.hidden = nn.Linear(args.embed * args.context, args.dim)
        if kind == "full":
            self.out = nn.Linear(args.dim, n_classes)
        elif kind == "adaptive":
            cutoffs = [c for c in (2000, 20000, 200000) if c < n_classes] or [n_classes // 4]
            self.out = nn.AdaptiveLogSoftmaxWithLoss(args.dim, n_classes, cutoffs, div_value=4.0)
        else:
            from hsw2v.torch import HierarchicalSoftmaxLoss

            wide = kind == "hs-wide"
            self.out = HierarchicalSoftmaxLoss(
                args.dim, n_classes, counts=counts, bias=wide,
                root_width=args.root_width if wide else None, sparse=True)

    def loss(self, x, y):
        """Mean negative log-likelihood of the batch."""
        h = F.relu(self.hidden(self.embed(x).flatten(1)))
        if self.kind == "full":
            return F.cross_entropy(self.out(h), y)
        return self.out(h, y).loss

    def optimizers(self, lr: float):
        if self.kind.startswith("hs"):
            sparse = self.out.sparse_parameters()
            ids = {id(p) for p in sparse}
            dense = [p for p in self.parameters() if id(p) not in ids]
            return [torch.optim.Adam(dense, lr=lr), torch.optim.SparseAdam(sparse, lr=lr)]
        return [torch.optim.Adam(self.parameters(), lr=lr)]


def full_softmax_bytes(n_classes: int, args) -> float:
    """Rough memory of the full softmax's training step: the output matrix with its gradient
    and two Adam moments, and three batch x V float32 arrays (logits, softmax, gradient)."""
    return 4.0 * (4 * n_classes * (args.dim + 1) + 3 * args.batch * n_classes)


def _data(n_classes: int, args, device):
    X, y, Xv, yv, counts, n_inputs = prepare_file(args.corpus, n_classes, args.context,
                                                  args.valid)
    t = [torch.from_numpy(a).to(device) for a in (X, y, Xv, yv)]
    return t, counts, n_inputs


def _step(model, optimizers, x, y):
    loss = model.loss(x, y)
    for opt in optimizers:
        opt.zero_grad(set_to_none=True)
    loss.backward()
    for opt in optimizers:
        opt.step()


def train_size(kinds, n_classes: int, args, time_cap: float) -> list[dict]:
    """Train every layer at one class count on the same batches, one step of each in turn
    (the first layer of each round rotates), so that a busy machine slows them alike. A
    layer stops at ``--steps`` or when it has spent its share of ``time_cap``."""
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    (Xt, yt, Xvt, yvt), counts, n_inputs = _data(n_classes, args, device)
    rows, live = {}, {}
    for kind in kinds:
        rows[kind] = {"layer": kind, "classes": n_classes, "batch": args.batch,
                      "device": args.device}
        if kind == "full" and device.type == "cpu":
            need = full_softmax_bytes(n_classes, args) / 2**30
            if need > args.max_memory_gb:
                rows[kind]["status"] = (f"not run: needs about {need:.1f} GB > "
                                        f"--max-memory-gb {args.max_memory_gb}")
                continue
        try:
            model = NextWord(kind, n_inputs, n_classes, counts, args).to(device)
            live[kind] = (model, model.optimizers(args.lr))
        except torch.OutOfMemoryError:
            rows[kind]["status"] = "out of memory (building the model)"
    share = time_cap / max(1, len(live))
    spent = dict.fromkeys(live, 0.0)
    times = {k: [] for k in live}
    steps = dict.fromkeys(live, 0)
    for step in range(args.steps):
        if not live:
            break
        idx = torch.from_numpy(rng.integers(0, len(Xt), args.batch)).to(device)
        x, y = Xt[idx], yt[idx]
        order = list(live)
        order = order[step % len(order):] + order[: step % len(order)]
        for kind in order:
            model, optimizers = live[kind]
            _sync(device)
            t0 = time.perf_counter()
            try:
                _step(model, optimizers, x, y)
                _sync(device)
            except torch.OutOfMemoryError:
                rows[kind]["status"] = f"out of memory at step {step}"
                del live[kind]
                continue
            dt = time.perf_counter() - t0
            spent[kind] += dt
            steps[kind] += 1
            times[kind].append(dt)
            if spent[kind] > share and steps[kind] < args.steps:
                rows[kind]["status"] = f"stopped at its time share after {steps[kind]} steps"
                rows[kind].update(_finish(kind, live.pop(kind)[0], steps, spent, times,
                                          Xvt, yvt))
    for kind in list(live):
        rows[kind]["status"] = "ok"
        rows[kind].update(_finish(kind, live.pop(kind)[0], steps, spent, times, Xvt, yvt))
    return [rows[k] for k in kinds]


def _finish(kind, model, steps, spent, times, Xvt, yvt) -> dict:
    """The row's numbers once a layer stops: step time and validation perplexity."""
    with torch.no_grad():
        nll = sum(model.loss(Xvt[i : i + 1024], yvt[i : i + 1024]).item()
                  * len(yvt[i : i + 1024]) for i in range(0, len(yvt), 1024)) / len(yvt)
    timed = times[kind][3:] or times[kind][1:] or times[kind]  # after the warm-up steps
    return {"steps": steps[kind], "train_s": round(spent[kind], 2), "timed_steps": len(timed),
            "step_ms": 1000 * float(np.median(timed)) if timed else float("nan"),
            "valid_ppl": math.exp(nll), "parameters": sum(p.numel() for p in model.parameters())}


def memory_probe(kind: str, n_classes: int, args, steps: int = 3) -> dict:
    """Peak memory of building one layer's model and training it ``steps`` steps: on a GPU
    ``torch.cuda.max_memory_allocated``; on the CPU the growth of this process's peak
    resident memory over a baseline taken after one warm-up step of a throw-away copy."""
    device = torch.device(args.device)
    rng = np.random.default_rng(args.seed)
    (Xt, yt, _, _), counts, n_inputs = _data(n_classes, args, device)
    out = {"layer": kind, "classes": n_classes, "batch": args.batch}
    if kind == "full" and device.type == "cpu":
        need = full_softmax_bytes(n_classes, args) / 2**30
        if need > args.max_memory_gb:
            return {**out, "memory_status": f"not run: needs about {need:.1f} GB"}
    if kind.startswith("hs"):
        import hsw2v.torch  # noqa: F401 (before the memory baseline)
    if device.type == "cpu":  # the runtime's first-use memory (code pages, pools) out of it
        warm = NextWord(kind, n_inputs, n_classes, counts, args)
        _step(warm, warm.optimizers(args.lr), Xt[:8], yt[:8])
        del warm
        gc.collect()
    base = _reset_peak_rss()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device) / 2**20
    try:
        model = NextWord(kind, n_inputs, n_classes, counts, args).to(device)
        optimizers = model.optimizers(args.lr)
        for _ in range(steps):
            idx = torch.from_numpy(rng.integers(0, len(Xt), args.batch)).to(device)
            _step(model, optimizers, Xt[idx], yt[idx])
        _sync(device)
    except torch.OutOfMemoryError as exc:
        return {**out, "memory_status": "out of memory",
                "error": str(exc).splitlines()[0][:160]}
    if device.type == "cuda":
        peak = torch.cuda.max_memory_allocated(device) / 2**20 - base
        del model, optimizers
        torch.cuda.empty_cache()
    else:
        peak = _peak_rss_mb() - base
    return {**out, "memory_status": "ok", "peak_mb": peak}


def _reset_peak_rss() -> float:
    """Reset this process's peak resident memory where Linux allows it (``clear_refs``), and
    return the resident memory now, in MB (the peak so far where it cannot be reset)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_mb("VmRSS")
    except OSError:
        return _peak_rss_mb()


def _peak_rss_mb() -> float:
    try:
        return _status_mb("VmHWM")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KB


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise OSError(f"no {field} in /proc/self/status")


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _isolated(args, *extra) -> list:
    """This script with ``extra`` in a fresh process: its JSON lines."""
    cmd = [sys.executable, __file__, *extra, *args.passed]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"{' '.join(extra)} failed (exit {proc.returncode}): {tail[0]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores)"
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _title(meta: dict) -> str:
    return (f"next-word model on {meta['device_name']}, batch {meta['batch']}, dim "
            f"{meta['dim']}, {meta['steps']} Adam steps")


def markdown(rows: list[dict], meta: dict) -> str:
    lines = [
        f"device: {meta['device_name']}; torch {meta['torch']}; batch {meta['batch']}, dim "
        f"{meta['dim']}, context {meta['context']}, budget {meta['steps']} steps, lr {meta['lr']}",
        "",
        "| classes | layer | batch | step (ms) | peak memory (MB) | valid perplexity | steps | status |",
        "|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        def f(key, fmt, r=r):
            return format(r[key], fmt) if key in r else "-"

        lines.append(f"| {r['classes']:,} | {r['layer']} | {r['batch']} | {f('step_ms', '.1f')} | "
                     f"{f('peak_mb', '.0f') if 'peak_mb' in r else r.get('memory_status', '-')} | {f('valid_ppl', '.1f')} | {r.get('steps', '-')} "
                     f"| {r['status']} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: str, title: str) -> None:
    """Step time, peak memory and perplexity against the number of classes, per layer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    panels = (("step_ms", "time per training step (ms)"), ("peak_mb", "peak memory (MB)"),
              ("valid_ppl", "validation perplexity"))
    for ax, (key, label) in zip(axes, panels, strict=True):
        for kind in LAYERS:
            pts = [(r["classes"], r[key]) for r in rows
                   if r["layer"] == kind and key in r and "probe" not in r]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=kind)
        ax.set_xscale("log")
        if key != "valid_ppl":
            ax.set_yscale("log")
        ax.set_xlabel("classes")
        ax.set_title(label, fontsize=10)
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", default=None, help="text file (.gz ok); default: the demo corpus")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--classes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    p.add_argument("--layers", nargs="+", default=list(LAYERS), choices=LAYERS)
    p.add_argument("--steps", type=int, default=None, help="training steps per run "
                   "(default 300 on the CPU, 1000 on a GPU)")
    p.add_argument("--batch", type=int, default=None, help="default 256 (CPU), 1024 (GPU)")
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--embed", type=int, default=64)
    p.add_argument("--context", type=int, default=4)
    p.add_argument("--root-width", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--valid", type=int, default=20_000, help="validation windows (the end)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget", type=float, default=None,
                   help="seconds of training for the whole run (default 1800 CPU, 160 GPU)")
    p.add_argument("--max-memory-gb", type=float, default=6.0,
                   help="CPU: do not start a full softmax run estimated above this")
    p.add_argument("--oom-batch", type=int, default=None,
                   help="GPU: also train the largest class count at this batch, full vs hs, "
                   "for 10 s each (default 16384 on a GPU; 0: not)")
    p.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (0: 1 on the CPU, torch's default with a GPU)")
    p.add_argument("--quick", action="store_true", help="tiny smoke run (1k and 5k classes)")
    p.add_argument("--out", default=None, help="folder for torch_layer.md and .json")
    p.add_argument("--plot", default=None, help="also draw the results into this PNG")
    p.add_argument("--plot-from", default=None,
                   help="draw --plot from a torch_layer.json written before (no training)")
    p.add_argument("--one-size", nargs=2, help=argparse.SUPPRESS)
    p.add_argument("--one-memory", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    cuda = args.device.startswith("cuda")
    args.passed = [a for a in (argv if argv is not None else sys.argv[1:])]
    if args.corpus is None:
        from hsw2v.datasets import demo_corpus_path

        args.corpus = demo_corpus_path()
        args.passed += ["--corpus", args.corpus]
    if args.quick:
        args.classes, args.steps, args.valid = [1000, 5000], args.steps or 20, 2000
        args.budget = args.budget or 300
    args.steps = args.steps or (1000 if cuda else 300)
    args.batch = args.batch or (1024 if cuda else 256)
    args.budget = args.budget or (160 if cuda else 1800)
    if args.oom_batch is None:
        args.oom_batch = 16384 if cuda else 0
    if args.threads or not cuda:
        torch.set_num_threads(args.threads or 1)
    if args.plot_from:
        with open(args.plot_from) as f:
            saved = json.load(f)
        plot(saved["rows"], args.plot or "torch_layer.png", _title(saved["meta"]))
        return
    if args.one_size:
        n, cap = args.one_size
        print(json.dumps(train_size(args.layers, int(n), args, float(cap))))
        return
    if args.one_memory:
        kind, n = args.one_memory
        print(json.dumps(memory_probe(kind, int(n), args)))
        return
    rows, deadline = [], time.perf_counter() + args.budget
    for i, n in enumerate(args.classes):
        cap = max(1.0, (deadline - time.perf_counter()) / (len(args.classes) - i) * 0.85)
        if cuda:
            found = train_size(args.layers, n, args, cap)
        else:
            try:
                found = _isolated(args, "--one-size", str(n), str(cap))
            except RuntimeError as exc:
                found = [{"layer": k, "classes": n, "batch": args.batch, "device": args.device,
                          "status": str(exc)} for k in args.layers]
        for row in found:
            try:
                mem = (memory_probe(row["layer"], n, args) if cuda else
                       _isolated(args, "--one-memory", row["layer"], str(n)))
            except RuntimeError as exc:
                mem = {"memory_status": str(exc)}
            row.update({k: v for k, v in mem.items() if k in ("peak_mb", "memory_status")})
            rows.append(row)
            print(json.dumps(row), flush=True)
    if cuda and args.oom_batch:
        saved, args.batch = args.batch, args.oom_batch
        for kind in ("full", "hs"):
            row = memory_probe(kind, max(args.classes), args)
            row.update(probe="oom-batch", device=args.device,
                       status=f"3 training steps at batch {args.oom_batch}")
            rows.append(row)
            print(json.dumps(row), flush=True)
        args.batch = saved
    meta = {"device_name": torch.cuda.get_device_name() if cuda else _cpu_name(), "torch": torch.__version__, "batch": args.batch,
            "dim": args.dim, "context": args.context, "steps": args.steps, "lr": args.lr,
            "threads": torch.get_num_threads(), "python": platform.python_version()}
    table = markdown(rows, meta)
    if args.plot:
        plot(rows, args.plot, _title(meta))
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "torch_layer.md"), "w") as f:
            f.write(table)
        with open(os.path.join(args.out, "torch_layer.json"), "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
