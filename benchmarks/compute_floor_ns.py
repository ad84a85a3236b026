"""The compute floor of negative sampling: how fast could per-pair sg-ns and cbow-ns go here?

The negative-sampling sibling of ``compute_floor.py`` (whose corpus walk it reuses), in the
same two halves:

1. **Machine**: a small C program, compiled at run time with ``cc -O3 -march=native`` and the
   reassociation flags of hsw2v's build, times single-core multiply-adds of the negative-
   sampling step on rows of d floats that sit in L1: per (h, target + ``negative``
   negatives) set, f = h . row, g = label - sigmoid(f) via a table, work += g row,
   row += g h, then h += work (skip-gram's context row). Two shapes of the same arithmetic:
   ``ns`` word by word (gensim's and word2vec.c's order, each update fused in one loop) and
   ``ns_block`` (every dot product of the set first, then one update pass with work held
   per element: the shape of hsw2v's ``train/_ns_pair.h``). The faster is the ceiling's rate.

2. **Corpus** (``compute_floor.corpus_stats``: subsampling drawn with a seed, the exact
   expected contexts per kept word under shrink_windows). Multiply-adds per kept word, with
   ``n = negative + 1`` words per set:

     sg-ns:   contexts x (3 d n + d)          (per pair: n dots, 2 n updates, ctx += work)
     cbow-ns: 3 d n + 2 d x contexts + d      (sum of the context rows, mean scaling, one
                                               set, then each context row += work)

   Multiply-adds per corpus word = (kept tokens / corpus words) x the mean per kept word.

3. **The real access pattern** (``--stream``, skip-gram): the same step, prefetching each
   set's rows one pair ahead as hsw2v does, over the corpus's own pairs in training order
   (subsampling, reduced windows and count**0.75 negatives drawn with NumPy: the pattern, not
   gensim's stream) and matrices of the model's size (V x d each, V from ``min_count``), so
   that the rows come from where they live: L2, L3 or memory. Its pairs/s over skip-gram's
   pairs per corpus word (kept fraction x contexts per kept word) is a ceiling that counts
   the cache misses of the negatives' rows but none of a trainer's other work (draws,
   subsampling, windows).

The one-core words/s ceiling is the step's FMA/s over the multiply-adds per corpus word. With
``--systems hsw2v,gensim-iter,gensim-file`` each system trains one worker, ``hs=0,
negative=N``, ``--repeats`` fresh runs (``systems.py``); its words per CPU-second (CPU time of
``train()``, all threads: gensim's includes its reader thread) over the ceiling is its
fraction. A system at 2.5x another's words per CPU-second needs that other at <= 40 % of the
ceiling; the table shows whether that is possible.

    python3 benchmarks/compute_floor_ns.py --corpus ../data/gcide.txt --max-words 1000000 \\
        --widths 100,300 --stream --systems hsw2v,gensim-iter,gensim-file --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import count_words, ensure_corpus, make_slice  # noqa: E402
from compute_floor import C_FLAGS, C_HARNESS, corpus_stats, keep_probabilities  # noqa: E402

C_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#ifndef D
#define D 100
#endif
#ifndef NEG
#define NEG 5
#endif
#define N (NEG + 1)  /* words per set */
#define NROWS 64     /* syn1neg rows drawn from: 64 x D floats, with the inputs, in L1/L2 */
#define NIN 8        /* input rows (contexts) */
#define TABLE 1000
#define MAX_EXP 6
#define BARRIER() __asm__ volatile("" ::: "memory")

static float out[NROWS][D] __attribute__((aligned(64)));
static float in[NIN][D] __attribute__((aligned(64)));
static float work[D] __attribute__((aligned(64)));
static float expt[TABLE];
static volatile double sink;
static long clamps;

C_HARNESS

static void init(void) {
    unsigned long long r = 1;
    fill_rows(&out[0][0], NROWS * D, &r);
    fill_rows(&in[0][0], NIN * D, &r);
    fill_sigmoid(expt, TABLE);
}

static inline float table_sigmoid(float f) {
    int idx = (int)((f + MAX_EXP) * (TABLE / MAX_EXP / 2));
    idx = idx < 0 ? 0 : (idx >= TABLE ? TABLE - 1 : idx);
    if (f <= -MAX_EXP || f >= MAX_EXP) clamps++;
    return expt[idx];
}

/* the N distinct rows of set r (a fixed stride through the pool) */
static inline void pick(long r, float **rows) {
    unsigned base = (unsigned)(r * 7) & (NROWS - 1);
    for (int k = 0; k < N; k++) rows[k] = out[(base + 5 * k) & (NROWS - 1)];
}

/* word by word: dot, then one fused update loop per word; then h += work */
static double k_ns(long reps) {
    const float alpha = 1e-6f;
    float *rows[N];
    for (long r = 0; r < reps; r++) {
        float *h = in[r & (NIN - 1)];
        pick(r, rows);
        memset(work, 0, sizeof(work));
        for (int k = 0; k < N; k++) {
            float *w = rows[k], f = 0;
            for (int i = 0; i < D; i++) f += h[i] * w[i];
            float g = ((k == 0) - table_sigmoid(f)) * alpha;
            for (int i = 0; i < D; i++) { float wi = w[i]; work[i] += g * wi; w[i] = wi + g * h[i]; }
        }
        for (int i = 0; i < D; i++) h[i] += work[i];
        BARRIER();
    }
    sink = in[0][0];
    return (double)reps * (3.0 * D * N + D);
}

/* every dot product of the set first, then one pass: work per element in a register */
static double k_ns_block(long reps) {
    const float alpha = 1e-6f;
    float *rows[N];
    float g[N];
    for (long r = 0; r < reps; r++) {
        float *h = in[r & (NIN - 1)];
        pick(r, rows);
        float f[N] = {0};
        for (int i = 0; i < D; i++) {
            float hi = h[i];
            for (int k = 0; k < N; k++) f[k] += hi * rows[k][i];
        }
        for (int k = 0; k < N; k++) g[k] = ((k == 0) - table_sigmoid(f[k])) * alpha;
        for (int i = 0; i < D; i++) {
            float hi = h[i], e = 0;
            for (int k = 0; k < N; k++) { float wi = rows[k][i]; e += g[k] * wi; rows[k][i] = wi + g[k] * hi; }
            h[i] = hi + e;
        }
        BARRIER();
    }
    sink = in[0][0];
    return (double)reps * (3.0 * D * N + D);
}

/* The real access pattern (skip-gram): the pairs of the corpus in training order, read from
 * argv[3] (int32 rows of N + 1: context, target, negatives), over V x D matrices as large as
 * the model's, each set's rows prefetched one pair ahead (as hsw2v does); word-by-word shape
 * (block = 0) or the block shape. Returns the best pairs/s of ``repeats`` passes. */
static double stream(const char *path, int V, int repeats, int block, double *fma_per_s) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long P = ftell(f) / (long)(sizeof(int) * (N + 1));
    fseek(f, 0, SEEK_SET);
    int *pairs = malloc(sizeof(int) * (N + 1) * (size_t)P);
    if (fread(pairs, sizeof(int) * (N + 1), (size_t)P, f) != (size_t)P) { fclose(f); return 0; }
    fclose(f);
    float *s0 = aligned_alloc(64, sizeof(float) * (size_t)V * D);
    float *s1 = aligned_alloc(64, sizeof(float) * (size_t)V * D);
    unsigned long long r = 7;
    for (size_t i = 0; i < (size_t)V * D; i++) {
        r = r * 25214903917ULL + 11; s0[i] = ((r & 0xFFFF) / 65536.0f - 0.5f) / D; s1[i] = 0;
    }
    const float alpha = 1e-6f;
    double best = 0;
    float *rows[N], g[N], e[D] __attribute__((aligned(64)));
    for (int rep = 0; rep < repeats; rep++) {
        double t0 = now();
        for (long p = 0; p < P; p++) {
            const int *q = pairs + p * (N + 1);
            if (p + 1 < P)
                for (int k = 1; k <= N; k++) {
                    const char *row = (const char *)(s1 + (size_t)q[N + 1 + k] * D);
                    for (int b = 0; b < D * 4; b += 64) __builtin_prefetch(row + b, 1);
                }
            float *h = s0 + (size_t)q[0] * D;
            for (int k = 0; k < N; k++) rows[k] = s1 + (size_t)q[1 + k] * D;
            if (!block) {
                memset(e, 0, sizeof(e));
                for (int k = 0; k < N; k++) {
                    float *w = rows[k], fk = 0;
                    for (int i = 0; i < D; i++) fk += h[i] * w[i];
                    float gk = ((k == 0) - table_sigmoid(fk)) * alpha;
                    for (int i = 0; i < D; i++) { float wi = w[i]; e[i] += gk * wi; w[i] = wi + gk * h[i]; }
                }
                for (int i = 0; i < D; i++) h[i] += e[i];
            } else {
                float fk[N] = {0};
                for (int i = 0; i < D; i++) {
                    float hi = h[i];
                    for (int k = 0; k < N; k++) fk[k] += hi * rows[k][i];
                }
                for (int k = 0; k < N; k++) g[k] = ((k == 0) - table_sigmoid(fk[k])) * alpha;
                for (int i = 0; i < D; i++) {
                    float hi = h[i], ei = 0;
                    for (int k = 0; k < N; k++) { float wi = rows[k][i]; ei += g[k] * wi; rows[k][i] = wi + g[k] * hi; }
                    h[i] = hi + ei;
                }
            }
        }
        double t = now() - t0;
        if (P / t > best) best = P / t;
    }
    sink = s0[0] + s1[0];
    free(s0); free(s1); free(pairs);
    *fma_per_s = best * (3.0 * D * N + D);
    return best;
}

int main(int argc, char **argv) {
    double min_seconds = argc > 1 ? atof(argv[1]) : 0.2;
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    if (argc > 4) { /* the pair stream: argv[3] the file, argv[4] the vocabulary size */
        double fa, fb;
        double pa = stream(argv[3], atoi(argv[4]), repeats, 0, &fa);
        double pb = stream(argv[3], atoi(argv[4]), repeats, 1, &fb);
        printf("{\"d\": %d, \"stream_pairs_per_s\": %.6g, \"stream_block_pairs_per_s\": %.6g, "
               "\"stream_fma_per_s\": %.6g, \"stream_block_fma_per_s\": %.6g}\n",
               D, pa, pb, fa, fb);
        return 0;
    }
    init();
    double a = rate(k_ns, min_seconds, repeats);
    init();
    double b = rate(k_ns_block, min_seconds, repeats);
    int finite = isfinite(in[0][0]) && isfinite(out[0][0]);
    printf("{\"d\": %d, \"negative\": %d, \"ns_fma_per_s\": %.6g, \"ns_block_fma_per_s\": %.6g, "
           "\"clamped\": %ld, \"finite\": %d}\n", D, NEG, a, b, clamps, finite);
    return 0;
}
""".replace("C_HARNESS", C_HARNESS)

FLAG_VARIANTS = ("", "-mprefer-vector-width=256", "-funroll-loops")
KERNELS = ("ns", "ns_block")


def measure_ns_rate(d: int, negative: int = 5, min_seconds: float = 0.15, repeats: int = 3) -> dict:
    """Single-core FMA/s of the two shapes of the negative-sampling step at width ``d``, the
    best over the flag variants (best of ``repeats`` timings each). Needs a C compiler."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise RuntimeError("no C compiler found (cc/gcc) to build the FMA microbenchmark")
    best: dict = {}
    with tempfile.TemporaryDirectory(prefix="nsfloor-") as tmp:
        src = os.path.join(tmp, "ns.c")
        with open(src, "w") as f:
            f.write(C_SOURCE)
        for i, extra in enumerate(FLAG_VARIANTS):
            exe = os.path.join(tmp, f"ns{i}")
            built = subprocess.run([cc, *C_FLAGS, *extra.split(), f"-DD={d}",
                                    f"-DNEG={negative}", src, "-o", exe, "-lm"],
                                   capture_output=True, text=True)  # fmt: skip
            if built.returncode != 0:
                continue
            ran = subprocess.run([exe, str(min_seconds), str(repeats)], capture_output=True,
                                 text=True, check=True)  # fmt: skip
            r = json.loads(ran.stdout)
            if not r["finite"] or r["clamped"]:
                raise RuntimeError(f"FMA microbenchmark went out of range: {r}")
            for k in KERNELS:
                v = r[f"{k}_fma_per_s"]
                if v > best.get(k, (0.0, ""))[0]:
                    best[k] = (v, extra or "(base)")
    if not best:
        raise RuntimeError("compiling the FMA microbenchmark failed with every flag set")
    top = max(KERNELS, key=lambda k: best[k][0])
    return {
        "d": d,
        "negative": negative,
        **{f"{k}_fma_per_s": best[k][0] for k in KERNELS},
        **{f"{k}_flags": best[k][1] for k in KERNELS},
        "best_kernel": top,
        "best_fma_per_s": best[top][0],
    }


def pair_stream(
    corpus: str,
    path: str,
    negative: int,
    window: int = 5,
    min_count: int = 5,
    sample: float = 1e-3,
    max_pairs: int = 1_500_000,
    seed: int = 1,
) -> int:
    """Write skip-gram's (context, target, negatives) sets of ``corpus`` in training order
    (each line a sentence; subsampling and reduced windows drawn as gensim draws them, with
    NumPy's generator; negatives from count**0.75) to ``path`` as int32 rows, at most
    ``max_pairs``; returns the vocabulary size."""
    from collections import Counter

    counter: Counter = Counter()
    lines = []
    with open(corpus, "rb") as f:
        for line in f:
            toks = line.split()
            counter.update(toks)
            lines.append(toks)
    vocab = sorted(((c, w) for w, c in counter.items() if c >= min_count), reverse=True)
    index = {w: i for i, (_, w) in enumerate(vocab)}
    counts = np.array([c for c, _ in vocab], dtype=np.int64)
    rng = np.random.default_rng(seed)
    keep_p = keep_probabilities(counts, sample)
    ids, sent = [], []
    for n, toks in enumerate(lines):
        row = np.array([index[t] for t in toks if t in index], dtype=np.int32)
        row = row[rng.random(len(row)) < keep_p[row]]
        ids.append(row)
        sent.append(np.full(len(row), n, dtype=np.int32))
    ids, sent = np.concatenate(ids), np.concatenate(sent)
    reach = window - rng.integers(0, window, size=len(ids))  # reduced window, 1..window
    centre, context = [], []
    for o in range(1, window + 1):
        first = np.arange(len(ids) - o)  # the earlier position of each pair o apart
        for i, j in ((first, first + o), (first + o, first)):  # (centre, context)
            ok = (sent[i] == sent[j]) & (reach[i] >= o)
            centre.append(i[ok])
            context.append(j[ok])
    centre, context = np.concatenate(centre), np.concatenate(context)
    order = np.lexsort((context, centre))[:max_pairs]
    cum = np.cumsum(counts.astype(np.float64) ** 0.75)
    negs = np.searchsorted(cum, rng.random((len(order), negative)) * cum[-1]).astype(np.int32)
    table = np.column_stack([ids[context[order]], ids[centre[order]], negs]).astype(np.int32)
    table.tofile(path)
    return len(vocab)


def measure_stream(d: int, corpus: str, negative: int, repeats: int = 3) -> dict:
    """Pairs/s of the per-pair step (both shapes) over the corpus's own skip-gram pairs in
    training order and matrices of the model's size (``pair_stream``)."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    with tempfile.TemporaryDirectory(prefix="nsstream-") as tmp:
        src, exe, pairs = (os.path.join(tmp, n) for n in ("ns.c", "ns", "pairs.bin"))
        with open(src, "w") as f:
            f.write(C_SOURCE)
        V = pair_stream(corpus, pairs, negative)
        subprocess.run([cc, *C_FLAGS, f"-DD={d}", f"-DNEG={negative}", src, "-o", exe, "-lm"],
                       check=True, capture_output=True)  # fmt: skip
        ran = subprocess.run([exe, "0", str(repeats), pairs, str(V)], capture_output=True,
                             text=True, check=True)  # fmt: skip
        return {"vocab": V, **json.loads(ran.stdout)}


def ma_per_corpus_word(stats: dict, d: int, negative: int) -> dict:
    """Multiply-adds per corpus word of sg-ns and cbow-ns (module docstring)."""
    n = negative + 1
    ctx = stats["mean_contexts_per_kept_word"]
    per_kept = {"sg": ctx * (3 * d * n + d), "cbow": 3 * d * n + 2 * d * ctx + d}
    return {mode: v * stats["keep_fraction"] for mode, v in per_kept.items()}


def words_per_cpu_s(
    system: str, corpus: str, mode: str, d: int, negative: int, repeats: int
) -> list[float]:
    """One-worker training words per CPU-second of ``system``, ``repeats`` fresh runs."""
    from systems import get_system

    words = count_words(corpus)
    out = []
    with tempfile.TemporaryDirectory(prefix="nsfloor-run-") as tmp:
        for _ in range(repeats):
            r = get_system(system).train(corpus, mode, 1, 1, vector_size=d, out_dir=tmp,
                                         corpus_words=words, negative=negative)  # fmt: skip
            out.append(r.words / r.extra["train_cpu_seconds"])
            os.remove(r.vectors_path)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--max-words", type=int, default=0, help="use only the first N words")
    ap.add_argument("--widths", default="100,300")
    ap.add_argument("--negative", type=int, default=5)
    ap.add_argument("--systems", default="", help="e.g. hsw2v,gensim-iter,gensim-file")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--stream",
        action="store_true",
        help="also time skip-gram over the corpus's own pairs, full-size matrices",
    )
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    systems = [s for s in args.systems.split(",") if s]
    rows = []
    with tempfile.TemporaryDirectory(prefix="nsfloor-") as tmp:
        corpus = str(ensure_corpus(args.corpus))
        if args.max_words:
            sliced = os.path.join(tmp, "slice.txt")
            make_slice(corpus, sliced, args.max_words)
            corpus = sliced
        stats = corpus_stats(corpus)
        pairs_per_word = stats["keep_fraction"] * stats["mean_contexts_per_kept_word"]
        for d in (int(w) for w in args.widths.split(",")):
            fma = measure_ns_rate(d, args.negative)
            ma = ma_per_corpus_word(stats, d, args.negative)
            stream = measure_stream(d, corpus, args.negative) if args.stream else {}
            for mode in ("sg", "cbow"):
                row = {"d": d, "mode": mode, **fma, "ma_per_corpus_word": ma[mode],
                       "ceiling": fma["best_fma_per_s"] / ma[mode]}  # fmt: skip
                if stream and mode == "sg":
                    best = max(stream["stream_pairs_per_s"], stream["stream_block_pairs_per_s"])
                    row["stream"] = stream
                    row["stream_ceiling"] = best / pairs_per_word
                for s in systems:
                    runs = words_per_cpu_s(s, corpus, mode, d, args.negative, args.repeats)
                    row[s] = statistics.median(runs)
                    row[f"{s}_runs"] = runs
                rows.append(row)
                print(f"[ns floor] d={d} {mode} done", file=sys.stderr, flush=True)
    print(f"corpus: {stats['corpus_words']:,} words, {100 * stats['keep_fraction']:.1f}% kept, "
          f"{stats['mean_contexts_per_kept_word']:.2f} contexts per kept word; "
          f"negative={args.negative}")  # fmt: skip
    head = (
        "| d | mode | G FMA/s word by word | G FMA/s block | FMA per corpus word | ceiling k w/s |"
    )
    rule = "|---:|---|---:|---:|---:|---:|"
    if args.stream:
        head += " real pairs: G FMA/s (word by word, block) | pair-stream ceiling k w/s |"
        rule += "---:|---:|"
    for s in systems:
        head += f" {s} k w/CPU-s | fraction |"
        rule += "---:|---:|"
    lines = [head, rule]
    for r in rows:
        cells = [str(r["d"]), r["mode"], f"{r['ns_fma_per_s'] / 1e9:.2f}",
                 f"{r['ns_block_fma_per_s'] / 1e9:.2f}", f"{r['ma_per_corpus_word']:,.0f}",
                 f"{r['ceiling'] / 1e3:,.0f}"]  # fmt: skip
        if args.stream:
            st = r.get("stream")
            cells += [f"{st['stream_fma_per_s'] / 1e9:.2f}, {st['stream_block_fma_per_s'] / 1e9:.2f}"
                      if st else "", f"{r['stream_ceiling'] / 1e3:,.0f}" if st else ""]  # fmt: skip
        for s in systems:
            cells += [f"{r[s] / 1e3:,.0f}", f"{100 * r[s] / r['ceiling']:.0f}%"]
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
