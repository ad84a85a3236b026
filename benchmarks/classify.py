"""Many-class classification: hsw2v's hierarchical-softmax layer against napkinXC's
probabilistic label trees and a flat softmax, on next-word prediction from a text corpus.

The task (built once per corpus and cached as .npz): the label is the next word, among the
``--classes`` most frequent words; the features are the binary bag of the previous 3 words
(within the line) over the ``--features`` most frequent words, each row L2-normalised (CSR).
Rows without a feature are dropped; the rest are shuffled (seed 0) and the first ``--train``
rows train, the next ``--test`` rows test.

Systems (each run in a fresh process, their runs alternated over ``--repeats`` rounds):

* ``hsw2v-TREE`` / ``hsw2v-TREE-b``: :class:`hsw2v.HierarchicalSoftmax` on a tree of
  :func:`hsw2v.label_trees.label_tree` (huffman, balanced, kmeans), without / with the per-node
  intercept, ``fit`` with ``--dim``, ``--epochs``, ``--workers``; ``hsw2v-TREE-b-adagrad``
  the same with ``fit(optimizer="adagrad")`` at ``--adagrad-lr`` (``-rowwise``:
  ``optimizer="rowwise-adagrad"``); ``hsw2v-TREE-b-wK`` (any ``K``) the same with a wide root
  of ``K`` children (``HierarchicalSoftmax(..., root_width=K)``);
* ``napkinxc`` / ``napkinxc-adagrad``: napkinXC's PLT with its defaults, and with
  ``optimizer="adagrad", epochs=3`` (needs ``pip install napkinxc``);
* ``softmax``: a flat softmax ``P(c | x) = softmax(x W_in W_out^T + b)`` (dim 64 + class
  bias), minibatch AdaGrad in NumPy (single-threaded BLAS), ``--softmax-epochs`` epochs.

Each child reports fit seconds (tree building included), top-5 prediction seconds on the
test rows, p@1 and p@5 (the true label among the top 1 / 5) and its peak RSS (``VmHWM``,
data included). The parent prints the medians as a Markdown table.

    python3 benchmarks/classify.py --corpus ../data/gcide.txt --classes 10000 --repeats 1
    python3 benchmarks/classify.py --corpus ../data/gcide.txt --classes 1000 \\
        --systems hsw2v-huffman,hsw2v-kmeans-b,softmax
    python3 benchmarks/classify.py --corpus ../data/gcide.txt --quick   # about a minute
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # the softmax's BLAS single-threaded: the others'
    # threads are their own (--workers)

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

SYSTEMS = [
    "hsw2v-huffman",
    "hsw2v-huffman-b",
    "hsw2v-balanced",
    "hsw2v-balanced-b",
    "hsw2v-kmeans",
    "hsw2v-kmeans-b",
    "hsw2v-huffman-b-adagrad",
    "hsw2v-kmeans-b-adagrad",
    "hsw2v-kmeans-b-rowwise",
    "hsw2v-kmeans-b-w32",
    "hsw2v-kmeans-b-w128",
    "napkinxc",
    "napkinxc-adagrad",
    "softmax",
]


# ------------------------------------------------------------------------------- the task
def build_task(corpus: Path, n_classes: int, n_features: int, n_train: int, n_test: int,
               cache: Path, context: int = 3):
    """``(X_train, y_train, X_test, y_test)`` of the next-word task (module docstring)."""
    import scipy.sparse as sp

    key = f"{corpus.stem}-{corpus.stat().st_size}-c{n_classes}-f{n_features}-" \
          f"n{n_train}-t{n_test}-w{context}.npz"
    path = cache / key
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        with open(corpus, encoding="utf-8") as fh:
            lines = [line.split() for line in fh]
        counts = Counter(w for line in lines for w in line)
        rank = {w: i for i, (w, _) in enumerate(counts.most_common())}
        ids = np.array([rank[w] for line in lines for w in line], dtype=np.int64)
        line_of = np.repeat(np.arange(len(lines)), [len(line) for line in lines])
        keep = ids < n_classes
        pos = np.nonzero(keep)[0]
        rows, cols = [], []
        for j in range(1, context + 1):
            prev = pos - j
            ok = (prev >= 0)
            ok[ok] &= line_of[prev[ok]] == line_of[pos[ok]]
            ok[ok] &= ids[prev[ok]] < n_features
            rows.append(np.nonzero(ok)[0])
            cols.append(ids[prev[ok]])
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        X = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)),
                          shape=(len(pos), n_features))
        X.sum_duplicates()
        X.data[:] = 1.0
        nnz = np.diff(X.indptr)
        X = X[nnz > 0]
        y = ids[pos][nnz > 0]
        X.data /= np.sqrt(np.repeat(np.diff(X.indptr), np.diff(X.indptr))).astype(np.float32)
        order = np.random.default_rng(0).permutation(len(y))
        if len(order) < n_train + n_test:
            raise SystemExit(f"the corpus gives {len(order)} rows, fewer than "
                             f"--train {n_train} + --test {n_test}")
        tr, te = order[:n_train], order[n_train:n_train + n_test]
        X_tr, X_te = X[tr], X[te]
        np.savez(path, tr_indptr=X_tr.indptr, tr_indices=X_tr.indices, tr_data=X_tr.data,
                 te_indptr=X_te.indptr, te_indices=X_te.indices, te_data=X_te.data,
                 y_tr=y[tr], y_te=y[te], shape=np.array([n_features]))
    z = np.load(path)
    m = int(z["shape"][0])
    X_tr = sp.csr_matrix((z["tr_data"], z["tr_indices"], z["tr_indptr"]),
                         shape=(len(z["y_tr"]), m))
    X_te = sp.csr_matrix((z["te_data"], z["te_indices"], z["te_indptr"]),
                         shape=(len(z["y_te"]), m))
    return X_tr, z["y_tr"], X_te, z["y_te"]


# ------------------------------------------------------------------------------- systems
def run_hsw2v(system, X, y, Xt, n_classes, args):
    from hsw2v import HierarchicalSoftmax
    from hsw2v.label_trees import label_tree

    parts = system.split("-")
    optimizer = {"adagrad": "adagrad", "rowwise": "rowwise-adagrad"}.get(parts[-1], "sgd")
    kind, intercept = parts[1], "b" in parts[2:]
    width = next((int(p[1:]) for p in parts[2:] if p[:1] == "w" and p[1:].isdigit()), None)
    lr = args.lr if optimizer == "sgd" else args.adagrad_lr
    min_lr = 0.0 if optimizer == "sgd" else args.adagrad_min_lr
    t0 = time.perf_counter()
    tree = label_tree(kind, y, n_classes, X, seed=args.seed)
    tree_s = time.perf_counter() - t0
    layer = HierarchicalSoftmax(tree, args.dim, seed=args.seed, intercept=intercept,
                                root_width=width)
    layer.fit(X, y, epochs=args.epochs, lr=lr, min_lr=min_lr, workers=args.workers,
              optimizer=optimizer)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    top, _ = layer.topk(layer.transform(Xt), 5)
    return fit_s, time.perf_counter() - t0, top, {"tree_s": round(tree_s, 2)}


def run_napkinxc(system, X, y, Xt, n_classes, args):
    from napkinxc.models import PLT

    kw = {"optimizer": "adagrad", "epochs": 3} if system == "napkinxc-adagrad" else {}
    with tempfile.TemporaryDirectory() as out:
        model = PLT(out, threads=args.workers, seed=args.seed, **kw)
        t0 = time.perf_counter()
        model.fit(X, [[int(c)] for c in y])
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        pred = model.predict(Xt, top_k=5)
        pred_s = time.perf_counter() - t0
    top = np.full((len(pred), 5), -1, dtype=np.int64)
    for i, row in enumerate(pred):
        top[i, : len(row)] = row[:5]
    return fit_s, pred_s, top, {}


def run_softmax(system, X, y, Xt, n_classes, args, dim=64, batch=256, lr=0.1, eps=1e-8):
    """Flat softmax with class bias, minibatch AdaGrad (Duchi et al. 2011); the input matrix
    is updated only on the rows a batch touches."""
    rng = np.random.default_rng(args.seed)
    m = X.shape[1]
    W_in = ((rng.random((m, dim), dtype=np.float32) * 2 - 1) / dim)
    W_out = np.zeros((n_classes, dim), np.float32)
    bias = np.zeros(n_classes, np.float32)
    G_in = np.zeros_like(W_in)
    G_out = np.zeros_like(W_out)
    G_b = np.zeros_like(bias)
    t0 = time.perf_counter()
    for _epoch in range(args.softmax_epochs):
        perm = rng.permutation(len(y))
        for s in range(0, len(y), batch):
            rows = perm[s : s + batch]
            Xb, yb = X[rows], y[rows]
            cols, inv = np.unique(Xb.indices, return_inverse=True)
            Xb = Xb.__class__((Xb.data, inv.ravel(), Xb.indptr), shape=(len(rows), len(cols)))
            Wb = W_in[cols]
            H = Xb @ Wb
            Z = H @ W_out.T + bias
            Z -= Z.max(axis=1, keepdims=True)
            np.exp(Z, out=Z)
            Z /= Z.sum(axis=1, keepdims=True)
            Z[np.arange(len(rows)), yb] -= 1.0
            Z /= len(rows)
            g_out, g_b, g_h = Z.T @ H, Z.sum(axis=0), Z @ W_out
            g_in = Xb.T @ g_h
            for W, G, g, idx in ((W_out, G_out, g_out, None), (bias, G_b, g_b, None),
                                 (W_in, G_in, g_in, cols)):
                if idx is None:
                    G += g * g
                    W -= lr * g / (np.sqrt(G) + eps)
                else:
                    G[idx] += g * g
                    W[idx] -= lr * g / (np.sqrt(G[idx]) + eps)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    top = np.empty((Xt.shape[0], 5), dtype=np.int64)
    for s in range(0, Xt.shape[0], 4096):
        Z = (Xt[s : s + 4096] @ W_in) @ W_out.T + bias
        part = np.argpartition(-Z, 5, axis=1)[:, :5]
        order = np.argsort(-np.take_along_axis(Z, part, axis=1), axis=1)
        top[s : s + 4096] = np.take_along_axis(part, order, axis=1)
    return fit_s, time.perf_counter() - t0, top, {"epochs": args.softmax_epochs}


def peak_rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(args) -> None:
    X, y, Xt, yt = build_task(Path(args.corpus), args.classes, args.features, args.train,
                              args.test, Path(args.cache))
    system = args.run
    if system.startswith("hsw2v"):
        runner = run_hsw2v
    elif system.startswith("napkinxc"):
        runner = run_napkinxc
    else:
        runner = run_softmax
    fit_s, pred_s, top, extra = runner(system, X, y, Xt, args.classes, args)
    hit = top == yt[:, None]
    print(json.dumps({
        "system": system, "fit_s": fit_s, "predict_s": pred_s,
        "p1": float(hit[:, 0].mean()), "p5": float(hit.any(axis=1).mean()),
        "rss_mb": peak_rss_mb(), **extra,
    }))


# ------------------------------------------------------------------------------- parent
def _wide_root_system(name: str) -> bool:
    """``hsw2v-TREE-b-wK`` for any K (the listed ones are examples)."""
    head, _, width = name.rpartition("-w")
    return head in SYSTEMS and head.startswith("hsw2v") and width.isdigit()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="../data/gcide.txt")
    ap.add_argument("--classes", type=int, default=10_000)
    ap.add_argument("--features", type=int, default=50_000)
    ap.add_argument("--train", type=int, default=1_500_000)
    ap.add_argument("--test", type=int, default=100_000)
    ap.add_argument("--systems", default=",".join(SYSTEMS),
                    help=f"comma-separated, from {SYSTEMS}")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--adagrad-lr", type=float, default=0.1,
                    help="lr of the hsw2v-*-adagrad systems (row-wise AdaGrad)")
    ap.add_argument("--adagrad-min-lr", type=float, default=0.0,
                    help="final lr of the hsw2v-*-adagrad systems (their lr: constant)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--softmax-epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "hsw2v-classify"))
    ap.add_argument("--quick", action="store_true",
                    help="200k training rows, 20k test rows, no napkinXC defaults")
    ap.add_argument("--out-json", help="also write every run's numbers here")
    ap.add_argument("--run", help=argparse.SUPPRESS)  # child mode: one system, JSON out
    args = ap.parse_args(argv)
    if args.quick:
        args.train, args.test = 200_000, 20_000
        if args.systems == ",".join(SYSTEMS):
            args.systems = ",".join(s for s in SYSTEMS if s != "napkinxc")
    if args.run:
        child(args)
        return
    systems = [s for s in args.systems.split(",") if s]
    unknown = [s for s in systems if s not in SYSTEMS and not _wide_root_system(s)]
    if unknown:
        raise SystemExit(f"unknown systems {unknown}; choose from {SYSTEMS}")
    build_task(Path(args.corpus), args.classes, args.features, args.train, args.test,
               Path(args.cache))
    passed = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--quick"]
    results = {s: [] for s in systems}
    for r in range(args.repeats):
        for s in systems if r % 2 == 0 else systems[::-1]:  # alternated rounds
            cmd = [sys.executable, __file__, *passed, "--run", s, "--train", str(args.train),
                   "--test", str(args.test)]
            out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
            if out.returncode != 0:
                print(f"{s}: failed ({out.returncode})\n{out.stderr[-2000:]}", file=sys.stderr)
                continue
            res = json.loads(out.stdout.strip().splitlines()[-1])
            results[s].append(res)
            print(json.dumps(res), file=sys.stderr, flush=True)
    print(f"\n{args.classes} classes, {args.train} training rows, {args.test} test rows, "
          f"{args.repeats} run(s) per system (medians)\n")
    print("| system | fit s | top-5 predict s | p@1 | p@5 | peak RSS |")
    print("|---|---|---|---|---|---|")
    for s in systems:
        runs = results[s]
        if not runs:
            continue
        med = {k: float(np.median([r[k] for r in runs]))
               for k in ("fit_s", "predict_s", "p1", "p5", "rss_mb")}
        print(f"| {s} | {med['fit_s']:.1f} | {med['predict_s']:.2f} | {100 * med['p1']:.2f} % "
              f"| {100 * med['p5']:.2f} % | {med['rss_mb']:.0f} MB |")
    if args.out_json:
        Path(args.out_json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
