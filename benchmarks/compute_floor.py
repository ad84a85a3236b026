"""The compute floor: how fast could HS word2vec go on this machine, on this corpus?

Two halves:

1. **Machine**: a small C program, compiled at run time with ``cc -O3 -march=native`` (plus the
   reassociation flags hsw2v's own build uses, so reductions vectorise) in a temporary directory,
   times single-core multiply-adds on float32 vectors of length d that sit in L1:
   ``dot`` (s += x[i]*y[i]), ``axpy`` (y[i] += a*x[i]) and ``hs``, an emulation of the
   hierarchical-softmax inner loop (per node: f = dot(l1, w); g = (label - sigmoid(f)) * alpha
   via a 1000-entry table; e += g*w; w += g*l1; per context: l1 += e). Each is reported as
   multiply-adds per second (FMA/s), best of several timed repeats.

2. **Corpus**: counts with ``min_count``, a Huffman tree (the mean code length of an optimal code
   is the same for every tie-breaking, so it matches gensim's), gensim's subsampling
   probabilities, then one walk over the corpus (lines split into chunks of 10000 tokens, like
   LineSentence) that draws which tokens survive subsampling (seeded) and, for every kept token at
   position i of a reduced sentence of length n, adds the exact expected context count under
   shrink_windows: E = f(min(i, W)) + f(min(n-1-i, W)) with f(k) = mean over w in 1..W of
   min(k, w).

   Multiply-adds per kept word:
     sg:   sum over its contexts of (3d x code length of the centre word + d)
           (dot, e += g*w and w += g*l1 per node, then the context's input row += e)
     cbow: 3d x code length + 2d x contexts + d
           (sum of the context rows, mean scaling, the node loop, then each context row += e)
   Multiply-adds per corpus word = (kept tokens / corpus words) x the mean per kept word.

The words/s ceiling on one core is FMA/s of the ``hs`` kernel / multiply-adds per corpus word;
with k workers on k physical cores it is k times that. "Floor" below means this bound (the least
time a word can take); a system's fraction of it is its words/s / the ceiling.

Widths. ``--widths 50,100,200,300`` repeats both halves per vector size and prints one table:
the FMA/s of the ``hs`` loops at that d, the words/s ceilings, the arithmetic intensity and,
with ``--hsw2v``, hsw2v's own one-worker words per CPU-second (median of ``--repeats`` fresh
runs) and its fraction of the ceiling. ``--machine-only`` skips the corpus (FMA rates and intensity only).

Arithmetic intensity here is multiply-adds per byte that the inner pass of a node moves
between registers and L1 (every row is in L1 or L2 during a walk; the path rows are shared by
the window's contexts). The fused reference pass (update node j, dot node j+1) does 3d
multiply-adds and moves 6 rows of d floats (loads: node, next node, h, work; stores: node,
work): 3 / 24 = 0.125 FMA/byte at every d. The window block of B contexts does 3dB per node
and moves (3 + B) rows: the node and the B context rows in for the dot products, then the
node in and out for its updates (the contexts' pieces and their steps stay in registers while
the path goes by): 3B / (12 + 4B), 0.43 FMA/byte at B = 4. Both are independent of d, so what
changes with the width is the fixed cost per node (sigmoid, the horizontal sums of the dot
products, loop tails: d mod 8 or 16 floats) against the 3d multiply-adds.

Usage:  python3 benchmarks/compute_floor.py --corpus PATH [--max-words N] [--vector-size 100]
        python3 benchmarks/compute_floor.py --corpus PATH --widths 50,100,200,300 [--hsw2v]
        python3 benchmarks/compute_floor.py --machine-only --widths 50,100,200,300
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import count_words, ensure_corpus, make_slice  # noqa: E402

C_FLAGS = [
    "-O3",
    "-march=native",
    "-funroll-loops",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-fassociative-math",
    "-fno-signed-zeros",
    "-freciprocal-math",
]

# The timing harness both compute-floor probes compile (this one and compute_floor_ns.py): the
# clock, rows of small pseudo-random values from word2vec's generator (in memory order, from
# one running state), and the sigmoid table over [-MAX_EXP, MAX_EXP]. It needs D and MAX_EXP.
C_HARNESS = r"""
static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void fill_rows(float *rows, long n, unsigned long long *r) {
    for (long k = 0; k < n; k++) {
        *r = *r * 25214903917ULL + 11; rows[k] = ((*r & 0xFFFF) / 65536.0f - 0.5f) / D;
    }
}

static void fill_sigmoid(float *table, int size) {
    for (int i = 0; i < size; i++) {
        float e = expf((i / (float)size * 2 - 1) * MAX_EXP);
        table[i] = e / (e + 1);
    }
}

/* a timed kernel: runs `reps` repetitions, returns the multiply-adds it did */
typedef double (*kern)(long);

/* multiply-adds per second of k: calibrated to about min_seconds a run, best of repeats */
static double rate(kern k, double min_seconds, int repeats) {
    long reps = 1000;
    for (;;) {                       /* calibrate */
        double t0 = now(); k(reps); double t = now() - t0;
        if (t > min_seconds / 4) { reps = (long)(reps * (min_seconds / t)) + 1; break; }
        reps *= 4;
    }
    double best = 0;
    for (int r = 0; r < repeats; r++) {
        double t0 = now(); double n = k(reps); double t = now() - t0;
        if (n / t > best) best = n / t;
    }
    return best;
}
"""

C_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#ifndef D
#define D 100
#endif
/* inner-node rows and input rows: 32 and 8 rows up to d=128, 16 and 4 above (24 KB at d=300),
   so that the rows fit a 32 KB L1 at every width (32 and 8 rows of d=300 floats are 48 KB).
   Above d=224 the hs loops still run erratically slower than at d=200 on a Zen 4 host
   (benchmarks/RESULTS.md, "three phases"), not from the rows' size */
#define NROWS (D <= 128 ? 32 : 16)
#define NIN (D <= 128 ? 8 : 4)
#define CODELEN 12   /* nodes per context in the hs kernel */
#define EXP_TABLE_SIZE 1000
#define MAX_EXP 6
#define BARRIER() __asm__ volatile("" ::: "memory")

static float syn1[NROWS][D] __attribute__((aligned(64)));
static float syn0[NIN][D] __attribute__((aligned(64)));
static float work[D] __attribute__((aligned(64)));
static float expt[EXP_TABLE_SIZE];
static volatile float va = 1e-4f;
static volatile double sink;
static long clamps;

C_HARNESS

static void init(void) {
    unsigned long long r = 1;
    fill_rows(&syn1[0][0], NROWS * D, &r);
    fill_rows(&syn0[0][0], NIN * D, &r);
    fill_sigmoid(expt, EXP_TABLE_SIZE);
}

/* returns multiply-adds done */
static double k_dot(long reps) {
    double acc = 0;
    for (long r = 0; r < reps; r++) {
        for (int j = 0; j < NROWS; j++) {
            const float *x = syn0[j & (NIN - 1)], *y = syn1[j];
            float s = 0;
            for (int i = 0; i < D; i++) s += x[i] * y[i];
            acc += s;
        }
        BARRIER();
    }
    sink = acc;
    return (double)reps * NROWS * D;
}

static double k_axpy(long reps) {
    for (long r = 0; r < reps; r++) {
        float a = (r & 1) ? va : -va;
        for (int j = 0; j < NROWS; j++) {
            const float *x = syn0[j & (NIN - 1)]; float *y = syn1[j];
            for (int i = 0; i < D; i++) y[i] += a * x[i];
        }
        BARRIER();
    }
    sink = syn1[0][0];
    return (double)reps * NROWS * D;
}

static double k_hs(long reps) {
    /* a small learning rate keeps the values bounded over ~1e9 updates (the speed of the
       arithmetic does not depend on it: nothing gets near the denormal range) */
    const float alpha = 1e-6f;
    unsigned long long node = 0;
    for (long r = 0; r < reps; r++) {
        float *l1 = syn0[r & (NIN - 1)];
        memset(work, 0, sizeof(work));
        for (int k = 0; k < CODELEN; k++) {
            node = (node * 5 + 3) & (NROWS - 1);
            float *w = syn1[node];
            float f = 0;
            for (int i = 0; i < D; i++) f += l1[i] * w[i];
            /* clamp instead of skipping, so that every node does its full work; labels vary
               per (context, node), so the targets average out and f stays near 0 */
            int idx = (int)((f + MAX_EXP) * (EXP_TABLE_SIZE / MAX_EXP / 2));
            idx = idx < 0 ? 0 : (idx >= EXP_TABLE_SIZE ? EXP_TABLE_SIZE - 1 : idx);
            if (f <= -MAX_EXP || f >= MAX_EXP) clamps++;
            f = expt[idx];
            float g = (1 - (float)((k + r) & 1) - f) * alpha;
            for (int i = 0; i < D; i++) work[i] += g * w[i];
            for (int i = 0; i < D; i++) w[i] += g * l1[i];
        }
        for (int i = 0; i < D; i++) l1[i] += work[i];
        BARRIER();
    }
    sink = syn0[0][0];
    return (double)reps * (3.0 * D * CODELEN + D);
}

/* the same, with e += g*w and w += g*l1 in one loop (w is loaded once) */
static double k_hs_fused(long reps) {
    const float alpha = 1e-6f;
    unsigned long long node = 0;
    for (long r = 0; r < reps; r++) {
        float *l1 = syn0[r & (NIN - 1)];
        memset(work, 0, sizeof(work));
        for (int k = 0; k < CODELEN; k++) {
            node = (node * 5 + 3) & (NROWS - 1);
            float *w = syn1[node];
            float f = 0;
            for (int i = 0; i < D; i++) f += l1[i] * w[i];
            int idx = (int)((f + MAX_EXP) * (EXP_TABLE_SIZE / MAX_EXP / 2));
            idx = idx < 0 ? 0 : (idx >= EXP_TABLE_SIZE ? EXP_TABLE_SIZE - 1 : idx);
            if (f <= -MAX_EXP || f >= MAX_EXP) clamps++;
            f = expt[idx];
            float g = (1 - (float)((k + r) & 1) - f) * alpha;
            for (int i = 0; i < D; i++) { float wi = w[i]; work[i] += g * wi; w[i] = wi + g * l1[i]; }
        }
        for (int i = 0; i < D; i++) l1[i] += work[i];
        BARRIER();
    }
    sink = syn0[0][0];
    return (double)reps * (3.0 * D * CODELEN + D);
}


int main(int argc, char **argv) {
    double min_seconds = argc > 1 ? atof(argv[1]) : 0.2;
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    init();
    double d = rate(k_dot, min_seconds, repeats);
    double a = rate(k_axpy, min_seconds, repeats);
    init();
    double h = rate(k_hs, min_seconds, repeats);
    init();
    double hf = rate(k_hs_fused, min_seconds, repeats);
    int finite = isfinite(syn0[0][0]) && isfinite(syn1[0][0]);
    printf("{\"d\": %d, \"dot_fma_per_s\": %.6g, \"axpy_fma_per_s\": %.6g, "
           "\"hs_fma_per_s\": %.6g, \"hs_fused_fma_per_s\": %.6g, \"hs_codelen\": %d, "
           "\"hs_clamped\": %ld, \"finite\": %d}\n",
           D, d, a, h, hf, CODELEN, clamps, finite);
    return 0;
}
""".replace("C_HARNESS", C_HARNESS)


#: extra flag sets tried on top of C_FLAGS; the fastest build of each kernel counts
FLAG_VARIANTS = (
    "",
    "-mprefer-vector-width=256",
    "-fvariable-expansion-in-unroller",
    "-mprefer-vector-width=256 -fvariable-expansion-in-unroller",
)
KERNELS = ("dot", "axpy", "hs", "hs_fused")


def _build_and_run(
    cc: str, flags: list[str], d: int, tmp: str, tag: str, min_seconds: float, repeats: int
) -> dict | None:
    src, exe = os.path.join(tmp, "fma.c"), os.path.join(tmp, f"fma{tag}")
    if not os.path.exists(src):
        with open(src, "w") as f:
            f.write(C_SOURCE)
    p = subprocess.run(
        [cc, *flags, f"-DD={d}", src, "-o", exe, "-lm"], capture_output=True, text=True
    )
    if p.returncode != 0:
        return None
    out = subprocess.run(
        [exe, str(min_seconds), str(repeats)], capture_output=True, text=True, check=True
    )
    r = json.loads(out.stdout)
    if not r.get("finite") or r.get("hs_clamped"):
        raise RuntimeError(f"FMA microbenchmark went out of range: {r}")
    return r


def measure_fma_rate(
    d: int = 100,
    min_seconds: float = 0.15,
    repeats: int = 3,
    compiler: str | None = None,
    variants=FLAG_VARIANTS,
) -> dict:
    """Single-core multiply-add rates (FMA/s) for d-float vectors in L1. Needs a C compiler.

    Each kernel's rate is the best over the flag variants (best of ``repeats`` timings each);
    ``hs_best_fma_per_s`` is the faster of the two HS kernels, the rate the ceiling uses.
    """
    cc = (
        compiler
        or os.environ.get("CC")
        or shutil.which("cc")
        or shutil.which("gcc")
        or shutil.which("clang")
    )
    if not cc:
        raise RuntimeError("no C compiler found (cc/gcc/clang) to build the FMA microbenchmark")
    best: dict = {}
    runs = []
    with tempfile.TemporaryDirectory(prefix="fmafloor-") as tmp:
        for i, extra in enumerate(variants):
            flags = C_FLAGS + extra.split()
            r = _build_and_run(cc, flags, d, tmp, str(i), min_seconds, repeats)
            if r is None and "-march=native" in flags:  # a compiler without -march=native
                flags = [f for f in flags if f != "-march=native"]
                r = _build_and_run(cc, flags, d, tmp, f"{i}p", min_seconds, repeats)
            if r is None:
                continue
            runs.append({"flags": " ".join(flags), **{k: r[f"{k}_fma_per_s"] for k in KERNELS}})
            for k in KERNELS:
                v = r[f"{k}_fma_per_s"]
                if v > best.get(k, (0, ""))[0]:
                    best[k] = (v, extra or "(base)")
    if not runs:
        raise RuntimeError("compiling the FMA microbenchmark failed with every flag set")
    out = {
        "d": d,
        "compiler": os.path.basename(cc),
        "cflags": " ".join(C_FLAGS),
        "hs_codelen": 12,
        "variants": runs,
    }
    for k in KERNELS:
        out[f"{k}_fma_per_s"], out[f"{k}_best_flags"] = best[k]
    hs_kernel = max(("hs", "hs_fused"), key=lambda k: out[f"{k}_fma_per_s"])
    out["hs_best_fma_per_s"] = out[f"{hs_kernel}_fma_per_s"]
    out["hs_best_kernel"] = f"{hs_kernel} ({out[f'{hs_kernel}_best_flags']})"
    return out


# --------------------------------------------------------------------------------------------
# corpus side


def huffman_code_lengths(counts) -> np.ndarray:
    """Code lengths of a Huffman code for ``counts`` (any optimal tie-breaking: same mean)."""
    counts = [int(c) for c in counts]
    n = len(counts)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if n == 1:
        return np.ones(1, dtype=np.int64)
    heap = [(c, i) for i, c in enumerate(counts)]
    heapq.heapify(heap)
    parent = [-1] * (2 * n - 1)
    nxt = n
    while len(heap) > 1:
        c1, a = heapq.heappop(heap)
        c2, b = heapq.heappop(heap)
        parent[a] = parent[b] = nxt
        heapq.heappush(heap, (c1 + c2, nxt))
        nxt += 1
    depth = [0] * (2 * n - 1)
    for node in range(2 * n - 3, -1, -1):  # parents have larger ids: walk top-down
        depth[node] = depth[parent[node]] + 1
    return np.asarray(depth[:n], dtype=np.int64)


def keep_probabilities(counts: np.ndarray, sample: float) -> np.ndarray:
    """gensim's (and the C tool's) subsampling keep probability per word."""
    counts = counts.astype(np.float64)
    total = counts.sum()
    if not sample:
        return np.ones_like(counts)
    threshold = sample * total if sample < 1.0 else float(sample)
    return np.minimum(1.0, (np.sqrt(counts / threshold) + 1.0) * (threshold / counts))


def corpus_stats(
    corpus_path,
    vector_size: int = 100,
    window: int = 5,
    min_count: int = 5,
    sample: float = 1e-3,
    max_sentence_length: int = 10000,
    seed: int = 1,
) -> dict:
    """Multiply-adds per corpus word for sg and cbow on this corpus (see the module docstring)."""
    counter: Counter = Counter()
    with open(corpus_path, "rb") as f:
        for line in f:
            counter.update(line.split())
    corpus_words = sum(counter.values())
    vocab = sorted(((c, w) for w, c in counter.items() if c >= min_count), reverse=True)
    index = {w: i for i, (_, w) in enumerate(vocab)}
    counts = np.array([c for c, _ in vocab], dtype=np.int64)
    codelen = huffman_code_lengths(counts)
    keep_p = keep_probabilities(counts, sample)

    # walk: token ids of in-vocabulary words, and the sentence each belongs to
    ids_parts, sent_parts = [], []
    n_sent = 0
    get = index.get
    with open(corpus_path, "rb") as f:
        for line in f:
            toks = line.split()
            for s in range(0, len(toks), max_sentence_length):
                ids = [
                    i for i in (get(t) for t in toks[s : s + max_sentence_length]) if i is not None
                ]
                if ids:
                    ids_parts.append(np.asarray(ids, dtype=np.int32))
                    sent_parts.append(np.full(len(ids), n_sent, dtype=np.int32))
                n_sent += 1
    ids = np.concatenate(ids_parts) if ids_parts else np.zeros(0, np.int32)
    sent = np.concatenate(sent_parts) if sent_parts else np.zeros(0, np.int32)
    rng = np.random.default_rng(seed)
    kept = rng.random(len(ids)) < keep_p[ids]
    kid, ksent = ids[kept], sent[kept]
    per_sent = np.bincount(ksent, minlength=n_sent)
    starts = np.cumsum(per_sent) - per_sent
    pos = np.arange(len(kid)) - starts[ksent]
    length = per_sent[ksent]
    # f(k) = E over the reduced window w ~ U{1..W} of min(k, w)
    W = window
    f = np.array([np.mean([min(k, w) for w in range(1, W + 1)]) for k in range(W + 1)])
    ctx = f[np.minimum(pos, W)] + f[np.minimum(length - 1 - pos, W)]
    L = codelen[kid].astype(np.float64)
    d = vector_size
    sg_ma = float(np.mean(ctx * (3 * d * L + d))) if len(kid) else 0.0
    cbow_ma = float(np.mean(3 * d * L + 2 * d * ctx + d)) if len(kid) else 0.0
    keep_frac = len(kid) / corpus_words if corpus_words else 0.0
    return {
        "corpus_words": corpus_words,
        "vocab_size": len(vocab),
        "in_vocab_words": int(len(ids)),
        "kept_words": int(len(kid)),
        "keep_fraction": keep_frac,
        "mean_code_length_vocab_tokens": float(np.average(codelen, weights=counts))
        if len(counts)
        else 0.0,
        "mean_code_length_kept": float(L.mean()) if len(kid) else 0.0,
        "mean_contexts_per_kept_word": float(ctx.mean()) if len(kid) else 0.0,
        "vector_size": d,
        "window": window,
        "min_count": min_count,
        "sample": sample,
        "ma_per_kept_word": {"sg": sg_ma, "cbow": cbow_ma},
        "ma_per_corpus_word": {"sg": sg_ma * keep_frac, "cbow": cbow_ma * keep_frac},
    }


def compute_floor(
    corpus_path,
    vector_size: int = 100,
    window: int = 5,
    min_count: int = 5,
    sample: float = 1e-3,
    fma: dict | None = None,
) -> dict:
    """FMA rates + corpus stats -> single-core words/s ceilings for sg and cbow."""
    fma = fma or measure_fma_rate(vector_size)
    stats = corpus_stats(corpus_path, vector_size, window, min_count, sample)
    peak = max(fma["dot_fma_per_s"], fma["axpy_fma_per_s"])
    out = {"fma": fma, "corpus": stats, "words_per_s_1core": {}, "words_per_s_1core_peak": {}}
    for mode in ("sg", "cbow"):
        ma = stats["ma_per_corpus_word"][mode]
        out["words_per_s_1core"][mode] = fma["hs_best_fma_per_s"] / ma if ma else math.inf
        out["words_per_s_1core_peak"][mode] = peak / ma if ma else math.inf
    return out


def floor_for(floor: dict, mode: str, workers: int, physical_cores: int | None) -> float:
    """The words/s ceiling for ``workers`` threads (at most one per physical core)."""
    k = min(workers, physical_cores or workers)
    return floor["words_per_s_1core"][mode] * k


def describe(floor: dict) -> str:
    f, c = floor["fma"], floor["corpus"]
    lines = [
        f"FMA/s on one core, d={f['d']} in L1 ({f['compiler']} {f['cflags']}): "
        f"dot {f['dot_fma_per_s'] / 1e9:.2f} G, axpy {f['axpy_fma_per_s'] / 1e9:.2f} G, "
        f"HS node loop {f['hs_fma_per_s'] / 1e9:.2f} G, fused HS node loop "
        f"{f['hs_fused_fma_per_s'] / 1e9:.2f} G (best of {len(f['variants'])} flag sets; the "
        f"ceiling uses {f['hs_best_fma_per_s'] / 1e9:.2f} G, {f['hs_best_kernel']})",
        f"corpus: {c['corpus_words']:,} words, vocabulary {c['vocab_size']:,} (min_count "
        f"{c['min_count']}), {100 * c['keep_fraction']:.1f}% of words kept after subsampling "
        f"(sample {c['sample']:g}); mean Huffman code length {c['mean_code_length_kept']:.2f} over "
        f"kept tokens ({c['mean_code_length_vocab_tokens']:.2f} over all in-vocabulary tokens); "
        f"mean contexts per kept word {c['mean_contexts_per_kept_word']:.2f} (window {c['window']}, "
        f"shrink_windows)",
    ]
    for mode in ("sg", "cbow"):
        lines.append(
            f"{mode}: {c['ma_per_kept_word'][mode]:,.0f} multiply-adds per kept word, "
            f"{c['ma_per_corpus_word'][mode]:,.0f} per corpus word -> ceiling "
            f"{floor['words_per_s_1core'][mode] / 1e6:.2f} M words/s per core "
            f"({floor['words_per_s_1core_peak'][mode] / 1e6:.2f} M at the best of dot/axpy rates)"
        )
    return "\n".join(lines)


def intensity(block: int | None) -> float:
    """Multiply-adds per L1 byte of one node's passes (module note): for the fused reference
    pass (``block`` None), 3 d over 6 rows of 4 d bytes; for the window block of ``block``
    contexts, 3 d B over (3 + B) rows."""
    if block is None:
        return 3 / (4 * 6)
    return 3 * block / (4 * (3 + block))


def words_per_s(corpus: str, mode: str, d: int, repeats: int, system: str = "hsw2v") -> list[float]:
    """One-worker training words per CPU-second of hsw2v (or another system of systems.py;
    fresh subprocesses), ``repeats`` runs. CPU time of the training call, not wall time: on a shared machine a
    one-thread run's wall time counts the time other processes held its core (the FMA rates
    above are the best of several timings, which other load can only lower)."""
    from systems import get_system

    words = count_words(corpus)
    out = []
    with tempfile.TemporaryDirectory(prefix="floor-hsw2v-") as tmp:
        for _ in range(repeats):
            r = get_system(system).train(
                corpus, mode, 1, 1, vector_size=d, out_dir=tmp, corpus_words=words
            )
            out.append(r.words / r.extra["train_cpu_seconds"])
            os.remove(r.vectors_path)
    return out


def widths_table(corpus, widths, args) -> tuple[list[dict], str]:
    """Per width: FMA rates, intensity, ceilings and (with --hsw2v) hsw2v's fraction."""
    rows = []
    for d in widths:
        fma = measure_fma_rate(d)
        row = {
            "d": d,
            "hs_fma_per_s": fma["hs_best_fma_per_s"],
            "dot_fma_per_s": fma["dot_fma_per_s"],
            "axpy_fma_per_s": fma["axpy_fma_per_s"],
            "intensity_ref": intensity(None),
            "intensity_block4": intensity(4),
        }
        if corpus:
            floor = compute_floor(corpus, d, args.window, args.min_count, args.sample, fma=fma)
            row["ceiling"] = dict(floor["words_per_s_1core"])
            if args.hsw2v:
                for mode in ("sg", "cbow"):
                    runs = words_per_s(corpus, mode, d, args.repeats)
                    med = float(np.median(runs))
                    row[f"hsw2v_{mode}"] = med
                    row[f"hsw2v_{mode}_runs"] = runs
                    row[f"fraction_{mode}"] = med / row["ceiling"][mode]
                    if args.gensim:  # gensim's faster mode, alternated with nothing
                        best = 0.0
                        for system in ("gensim-file", "gensim-iter"):
                            g = words_per_s(corpus, mode, d, args.repeats, system)
                            row[f"{system}_{mode}_runs"] = g
                            best = max(best, float(np.median(g)))
                        row[f"gensim_{mode}"] = best
                        row[f"gensim_fraction_{mode}"] = best / row["ceiling"][mode]
        rows.append(row)
        print(f"[floor] d={d} done", file=sys.stderr, flush=True)
    lines = [
        "| d | HS loop G FMA/s | dot | axpy | FMA/byte (ref, block 4) "
        + ("| ceiling sg M w/s | ceiling cbow | " if corpus else "|")
        + (
            "hsw2v sg | fraction sg | hsw2v cbow | fraction cbow |" if corpus and args.hsw2v else ""
        ),
        "|---:|---:|---:|---:|---:|"
        + ("---:|---:|" if corpus else "")
        + ("---:|---:|---:|---:|" if corpus and args.hsw2v else ""),
    ]
    for r in rows:
        cells = [
            str(r["d"]),
            f"{r['hs_fma_per_s'] / 1e9:.2f}",
            f"{r['dot_fma_per_s'] / 1e9:.2f}",
            f"{r['axpy_fma_per_s'] / 1e9:.2f}",
            f"{r['intensity_ref']:.3f}, {r['intensity_block4']:.3f}",
        ]
        if corpus:
            cells += [f"{r['ceiling']['sg'] / 1e6:.3f}", f"{r['ceiling']['cbow'] / 1e6:.3f}"]
            if args.hsw2v:
                cells += [
                    f"{r['hsw2v_sg'] / 1e6:.3f}",
                    f"{100 * r['fraction_sg']:.0f}%",
                    f"{r['hsw2v_cbow'] / 1e6:.3f}",
                    f"{100 * r['fraction_cbow']:.0f}%",
                ]
        lines.append("| " + " | ".join(cells) + " |")
    if corpus and args.hsw2v and args.gensim:
        lines += [
            "",
            "| d | mode | gensim (faster mode) M w/CPU-s | its fraction | hsw2v / gensim | "
            "2.6x gensim as a fraction of the ceiling |",
            "|---:|---|---:|---:|---:|---:|",
        ]
        for r in rows:
            for mode in ("sg", "cbow"):
                g = r[f"gensim_{mode}"]
                lines.append(
                    f"| {r['d']} | {mode} | {g / 1e6:.3f} | "
                    f"{100 * r[f'gensim_fraction_{mode}']:.0f}% | {r[f'hsw2v_{mode}'] / g:.2f}x | "
                    f"{260 * r[f'gensim_fraction_{mode}']:.0f}% |"
                )
    return rows, "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Single-core HS word2vec words/s ceiling.")
    ap.add_argument("--corpus")
    ap.add_argument("--max-words", type=int, default=0, help="use only the first N words")
    ap.add_argument("--vector-size", type=int, default=100)
    ap.add_argument("--widths", help="comma-separated vector sizes: one table row each")
    ap.add_argument("--machine-only", action="store_true", help="FMA rates only, no corpus")
    ap.add_argument("--hsw2v", action="store_true", help="with --widths: train hsw2v too")
    ap.add_argument("--repeats", type=int, default=3, help="hsw2v runs per cell (--hsw2v)")
    ap.add_argument(
        "--gensim",
        action="store_true",
        help="with --hsw2v: gensim's faster mode's fraction of the ceiling too, and the fraction "
        "2.6x gensim would take",
    )
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--sample", type=float, default=1e-3)
    ap.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = ap.parse_args(argv)
    if not args.corpus and not args.machine_only:
        ap.error("--corpus is required (or --machine-only)")
    with tempfile.TemporaryDirectory(prefix="floor-") as tmp:
        corpus = None if args.machine_only else ensure_corpus(args.corpus)
        if corpus and args.max_words:
            sliced = os.path.join(tmp, "slice.txt")
            make_slice(corpus, sliced, args.max_words)
            corpus = sliced
        if args.widths:
            widths = [int(w) for w in args.widths.split(",")]
            rows, table = widths_table(corpus and str(corpus), widths, args)
            print(json.dumps(rows, indent=1) if args.json else table)
            return 0
        if corpus is None:
            print(json.dumps(measure_fma_rate(args.vector_size), indent=1))
            return 0
        floor = compute_floor(corpus, args.vector_size, args.window, args.min_count, args.sample)
    print(json.dumps(floor, indent=1) if args.json else describe(floor))
    return 0


if __name__ == "__main__":
    sys.exit(main())
