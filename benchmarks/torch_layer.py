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
than V, and synthetic classes that never occur up to V (10k, 100k, 1M by default). Every
layer trains ``--steps`` Adam steps (lr ``--lr``) on the same batches; reported: the median
time of a training step (forward, backward, optimiser; after 3 warm-up steps), peak memory
(CPU: peak resident memory of a fresh process per run minus its memory before the model was
built; GPU: ``torch.cuda.max_memory_allocated``), and validation perplexity after the
budget. A run that would exceed ``--max-memory-gb`` on the CPU is not started (its estimate
is reported: the machine is shared); on a GPU a run that runs out of memory is reported as
such. ``--budget`` caps the whole run's seconds: each run gets an equal share of what is
left and stops training early when its share is spent (its row says how many steps it
made).

    python3 benchmarks/torch_layer.py --out benchmarks/torch_layer_cpu          # CPU
    python3 benchmarks/torch_layer.py --device cuda --out DIR                   # GPU
    python3 benchmarks/torch_layer.py --quick                                   # smoke test
"""

from __future__ import annotations

import argparse
import collections
import functools
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


def run_one(kind: str, n_classes: int, args, time_cap: float) -> dict:
    """Train one layer at one size; the result row."""
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    X, y, Xv, yv, counts, n_inputs = prepare_file(args.corpus, n_classes, args.context,
                                                  args.valid)
    row = {"layer": kind, "classes": n_classes, "batch": args.batch, "device": args.device}
    if kind == "full" and device.type == "cpu":
        need = full_softmax_bytes(n_classes, args) / 2**30
        if need > args.max_memory_gb:
            row.update(status=f"not run: needs about {need:.1f} GB > --max-memory-gb "
                              f"{args.max_memory_gb}")
            return row
    if kind.startswith("hs"):
        import hsw2v.torch  # noqa: F401 (imported before the clock and the memory baseline)
    rss_before = _rss_mb()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    Xt, yt = torch.from_numpy(X).to(device), torch.from_numpy(y).to(device)
    Xvt, yvt = torch.from_numpy(Xv).to(device), torch.from_numpy(yv).to(device)
    try:
        model = NextWord(kind, n_inputs, n_classes, counts, args).to(device)
        optimizers = model.optimizers(args.lr)
        start = time.perf_counter()
        times, steps = [], 0
        for step in range(args.steps):
            idx = torch.from_numpy(rng.integers(0, len(X), args.batch)).to(device)
            _sync(device)
            t0 = time.perf_counter()
            loss = model.loss(Xt[idx], yt[idx])
            for opt in optimizers:
                opt.zero_grad(set_to_none=True)
            loss.backward()
            for opt in optimizers:
                opt.step()
            _sync(device)
            if step >= 3:
                times.append(time.perf_counter() - t0)
            steps += 1
            if time.perf_counter() - start > time_cap:
                break
        train_s = time.perf_counter() - start
        with torch.no_grad():
            nll = sum(model.loss(Xvt[i : i + 1024], yvt[i : i + 1024]).item()
                      * len(yvt[i : i + 1024]) for i in range(0, len(yvt), 1024)) / len(yvt)
    except torch.OutOfMemoryError as exc:
        row.update(status="out of memory", error=str(exc).splitlines()[0][:200])
        return row
    row.update(
        status="ok" if steps == args.steps else f"stopped at the time cap after {steps} steps",
        steps=steps, step_ms=1000 * float(np.median(times)) if times else float("nan"),
        train_s=round(train_s, 2), valid_ppl=math.exp(nll),
        parameters=sum(p.numel() for p in model.parameters()))
    if device.type == "cuda":
        row["peak_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
    else:
        row["peak_mb"] = _rss_mb() - rss_before
    return row


def _rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def run_isolated(kind: str, n_classes: int, args, time_cap: float) -> dict:
    """``run_one`` in a fresh process, so that its peak memory is its own."""
    cmd = [sys.executable, __file__, "--one", kind, str(n_classes), str(time_cap)] + args.passed
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"layer": kind, "classes": n_classes, "batch": args.batch,
                "device": args.device, "status": f"failed (exit {proc.returncode}): {tail[0]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


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
                     f"{f('peak_mb', '.0f')} | {f('valid_ppl', '.1f')} | {r.get('steps', '-')} "
                     f"| {r['status']} |")
    return "\n".join(lines) + "\n"


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
    p.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    cuda = args.device.startswith("cuda")
    args.passed = [a for a in (argv if argv is not None else sys.argv[1:])]
    if args.one is None and "--one" in args.passed:
        raise SystemExit("--one is internal")
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
    if args.one:
        kind, n, cap = args.one
        print(json.dumps(run_one(kind, int(n), args, float(cap))))
        return
    runs = [(n, kind) for n in args.classes for kind in args.layers]
    rows, deadline = [], time.perf_counter() + args.budget
    for i, (n, kind) in enumerate(runs):
        cap = max(1.0, (deadline - time.perf_counter()) / (len(runs) - i) * 0.8)
        row = run_one(kind, n, args, cap) if cuda else run_isolated(kind, n, args, cap)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if cuda and args.oom_batch:
        saved, args.batch = args.batch, args.oom_batch
        for kind in ("full", "hs"):
            row = run_one(kind, max(args.classes), args, 10.0)
            row["probe"] = "oom-batch"
            rows.append(row)
            print(json.dumps(row), flush=True)
        args.batch = saved
    meta = {"device_name": torch.cuda.get_device_name() if cuda else platform.processor()
            or platform.machine(), "torch": torch.__version__, "batch": args.batch,
            "dim": args.dim, "context": args.context, "steps": args.steps, "lr": args.lr,
            "threads": torch.get_num_threads(), "python": platform.python_version()}
    table = markdown(rows, meta)
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "torch_layer.md"), "w") as f:
            f.write(table)
        with open(os.path.join(args.out, "torch_layer.json"), "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
