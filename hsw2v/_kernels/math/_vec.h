/* Small-vector primitives of every kernel, for word2vec's vector sizes (d ~ 50-300): the
 * NaN-safe sigmoid and log-sigmoid (the one definition), dot, axpy and the fused path steps.
 * Cython kernels reach them through ``math/_vecops.pxd``; the hierarchical-softmax and
 * negative-sampling steps built on them live in ``math/_path.pxd`` (the reference) and here /
 * ``train/_window.h`` (the fused passes of its optimised variants, hsw2v_update_then_dot and
 * hsw2v_update_last: word2vec.c's sign, g = -alpha * dL/df).
 *
 * Why not plain loops: a dot product written as one loop has one accumulator, and every
 * fused multiply-add waits for the previous one (4-5 cycles each), so a 100-float dot takes
 * ~25 dependent steps whatever the vector width. Here every reduction keeps two independent
 * vector accumulators (8 floats, 16 at the avx512 level), and each pass over the data does all
 * the work that reads it.
 *
 * GCC/Clang vector extensions compile to SSE/AVX/NEON as the target allows; the typedef with
 * 4-byte alignment permits unaligned loads (rows of a V x d matrix are 4-byte aligned).
 * Other compilers get the plain loops.
 */
#ifndef HSW2V_VEC_H
#define HSW2V_VEC_H

#include <math.h>

/* ---- The sigmoid, defined once for every kernel (training, layer, scoring, search). ----
 *
 * NaN safety: no float is ever turned into an index unless it passed an ordered comparison
 * that NaN fails, so a NaN (from diverged weights or a model file) gives a NaN result, never
 * a wild table read. Infinities saturate. These are the only sigmoid definitions of hsw2v;
 * the build must not use -ffinite-math-only (setup.py), which would let the compiler drop
 * the NaN cases.
 */

/* -log(sigmoid(x)), exact and stable for any x; NaN gives NaN. */
static inline double hsw2v_neg_log_sigmoid(double x) {
    return x > 0 ? log1p(exp(-x)) : -x + log1p(exp(x));
}

/* 1 / (1 + exp(-x)), exact and without overflow; NaN gives NaN. */
static inline double hsw2v_sigmoid_exact(double x) {
    double e;
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    e = exp(x); /* x < 0 or NaN */
    return e / (1.0 + e);
}

/* The table sigmoid of the training kernels (word2vec.c's speed-up): entries at evenly spaced
 * points of [-range, range], nearest entry used. */
#define HSW2V_SIGMOID_TABLE_SIZE 2048
#define HSW2V_SIGMOID_RANGE 8.0f

/* the floats a table holds: the sigmoid's entries, then 1 - entry, then -entry */
#define HSW2V_SIGMOID_VALUES (3 * (HSW2V_SIGMOID_TABLE_SIZE + 1))

typedef struct {
    const float *table;       /* HSW2V_SIGMOID_TABLE_SIZE + 1 entries s_i */
    const float *residual[2]; /* label - s_i for a code bit c (label = 1 - c): [0] 1 - s_i,
                               * [1] -s_i (0 - s_i), the same floats as subtracting each time */
    float range;
    float scale;              /* entries per unit: 128, a power of two */
    float offset;             /* range * scale + 0.5 (1024.5, exact) */
} hsw2v_sigmoid_table;

/* Fill ``values`` (HSW2V_SIGMOID_VALUES floats) and point ``t`` at it. */
static inline void hsw2v_sigmoid_table_init(hsw2v_sigmoid_table *t, float *values) {
    const int n = HSW2V_SIGMOID_TABLE_SIZE + 1;
    for (int i = 0; i < n; i++) {
        double x = ((double)i / HSW2V_SIGMOID_TABLE_SIZE * 2.0 - 1.0) * HSW2V_SIGMOID_RANGE;
        values[i] = (float)(1.0 / (1.0 + exp(-x)));
        values[n + i] = 1.0f - values[i];
        values[2 * n + i] = -values[i];
    }
    t->table = values;
    t->residual[0] = values + n;
    t->residual[1] = values + 2 * n;
    t->range = HSW2V_SIGMOID_RANGE;
    t->scale = HSW2V_SIGMOID_TABLE_SIZE / (2.0f * HSW2V_SIGMOID_RANGE);
    t->offset = t->range * t->scale + 0.5f;
}

/* The entry nearest f: (int)((f + range) * scale + 0.5), computed as (int)(f * scale +
 * offset), one multiply-add: the same index for every float f in (-range, range), because
 * scale is a power of two (f * scale is exact) and both roundings land on the same grid
 * (checked for all 2.18e9 such floats: tests/test_kernels.py); one add fewer on the chain
 * from a dot product to its coefficient. Only for f inside (-range, range), where
 * 0.5 <= f * scale + offset <= 2 * range * scale + 0.5: an index within the table. */
#define HSW2V_SIGMOID_INDEX(t, f) ((int)((f) * (t)->scale + (t)->offset))

/* sigmoid(f) from the table: 0 at or below -range, 1 at or above, NaN for NaN.
 * The index is computed only inside (-range, range), a test that NaN fails. */
static inline float hsw2v_sigmoid(const hsw2v_sigmoid_table *t, float f) {
    if (f > -t->range && f < t->range)
        return t->table[HSW2V_SIGMOID_INDEX(t, f)];
    if (f >= t->range)
        return 1.0f;
    if (f <= -t->range)
        return 0.0f;
    return f; /* NaN */
}

/* label - sigmoid(f) for label = 1 - bit, with residual = t->residual[bit] (chosen by the
 * caller ahead of f): inside (-range, range) one lookup of the stored difference, the same
 * float as label - hsw2v_sigmoid(t, f), without the subtraction on the chain from f to its
 * coefficient; outside, and for NaN, that subtraction. */
static inline float hsw2v_sigmoid_residual(const hsw2v_sigmoid_table *t, const float *residual,
                                           float label, float f) {
    if (f > -t->range && f < t->range)
        return residual[HSW2V_SIGMOID_INDEX(t, f)];
    return label - hsw2v_sigmoid(t, f);
}

/* The node's coefficient, the one arithmetic of every walk's step (fastText's binaryLogistic,
 * word2vec.c's g): a = alpha * (label - sigmoid(f)) = -alpha * dL/df (math/_path.pxd, design note
 * A), the factor of both updates (row += a h, h's step += a row), in float32, from the
 * sigmoid's value s. Two roundings, each kept for its bits:
 *  - hsw2v_node_coef(label, s, alpha, 0): label - s and its product with alpha in float64,
 *    rounded once (word2vec.c's hierarchical softmax);
 *  - hsw2v_node_coef(label, s, alpha, 1), and hsw2v_residual_coef(r, alpha) for a residual
 *    r = label - s already in float32 (the window walk's stored differences,
 *    hsw2v_sigmoid_residual): the residual rounded to float32 first, then the product
 *    (gensim's negative sampling). -alpha * (float)(s - label) is the same float: IEEE
 *    subtraction and multiplication are exact under negation. */
static inline float hsw2v_residual_coef(float residual, float alpha) {
    return residual * alpha;
}

static inline float hsw2v_node_coef(double label, double s, float alpha, int round_residual) {
    if (round_residual)
        return hsw2v_residual_coef((float)(label - s), alpha);
    return (float)((label - s) * alpha);
}

/* GCC and Clang vector extensions: 8-float vectors the compiler maps to the level's registers
 * (SSE2 pairs, AVX2), 4-float vectors for the tails (d = 100 and 300 end in 4 floats), and at
 * the avx512 level (__AVX512F__) 16-float vectors for the main loops. Elsewhere (MSVC), or
 * with HSW2V_NO_VECTOR_EXT defined (which tests/test_portable_c.py uses to check that path
 * with GCC), every loop below runs its plain scalar form.
 *
 * Widths. A row of d floats is cut into steps of 16 (avx512 only) and 8 floats; element-wise
 * updates then take one 4-float step and a scalar tail of at most 3: 300 = 18 x 16 + 8 + 4 at
 * avx512, 37 x 8 + 4 otherwise; 100 = 6 x 16 + 4 or 12 x 8 + 4; 50 = 3 x 16 + 2 or 6 x 8 + 2.
 * Dot products end the same way everywhere (hsw2v_dot, the fused passes and the
 * negative-sampling dots give the same bits): when 4 floats remain after the 8-float steps,
 * their products go into the 8-float accumulator as one more step (``a0 += x * y`` on
 * 8-float vectors whose upper halves are zero, HSW2V_LOAD4_WIDE), then the vector sum, then
 * at most 3 floats one by one in straight-line code (hsw2v_dot_rest). Neither tail is a loop:
 * with reassociation on (setup.py), GCC 12 turned a scalar tail loop into a vector reduction
 * at some inlined call sites of the avx512 level and not at others, so one dot product
 * rounded two ways in two kernels; an accumulator step has one form at every site. The
 * element-wise 4-float step of the updates changes no bits: each element gets the same
 * (fused where the level has FMA) multiply-add as the scalar loop. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(HSW2V_NO_VECTOR_EXT)
#define HSW2V_VECTOR 1
typedef float hsw2v_v8 __attribute__((vector_size(32), aligned(4)));
typedef float hsw2v_v4 __attribute__((vector_size(16), aligned(4)));
#define HSW2V_LOAD(p) (*(const hsw2v_v8 *)(p))
#define HSW2V_STORE(p, v) (*(hsw2v_v8 *)(p) = (v))
#define HSW2V_LOAD4(p) (*(const hsw2v_v4 *)(p))
#define HSW2V_STORE4(p, v) (*(hsw2v_v4 *)(p) = (v))

static inline float hsw2v_hsum(hsw2v_v8 v) {
    return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

#if defined(__AVX512F__) || defined(HSW2V_FORCE_V16) /* the latter: tests only */
#define HSW2V_V16 1
typedef float hsw2v_v16 __attribute__((vector_size(64), aligned(4)));
#define HSW2V_LOAD16(p) (*(const hsw2v_v16 *)(p))
#define HSW2V_STORE16(p, v) (*(hsw2v_v16 *)(p) = (v))

/* the two 8-float halves of a 16-float vector, added */
static inline hsw2v_v8 hsw2v_fold16(hsw2v_v16 v) {
    union { hsw2v_v16 w; hsw2v_v8 h[2]; } u;
    u.w = v;
    return u.h[0] + u.h[1];
}
#endif

/* the 4 floats at p in the lower half of an 8-float vector, the upper half zero: a dot
 * product's 4-float tail as one more step of its 8-float accumulator (a0 += x * y adds
 * x*y + 0 to each upper lane: no change there) */
#if defined(__has_builtin) && !defined(HSW2V_NO_SHUFFLEVECTOR) /* the latter: tests only */
#if __has_builtin(__builtin_shufflevector) /* GCC 12, Clang */
#define HSW2V_HAS_SHUFFLEVECTOR 1
#endif
#endif
#ifdef HSW2V_HAS_SHUFFLEVECTOR
#define HSW2V_LOAD4_WIDE(p) \
    __builtin_shufflevector(HSW2V_LOAD4(p), (hsw2v_v4){0}, 0, 1, 2, 3, 4, 5, 6, 7)
#else /* the same vector, built lane by lane (GCC compiles it to more instructions) */
#define HSW2V_LOAD4_WIDE(p) \
    __extension__({ \
        hsw2v_v4 v4_ = HSW2V_LOAD4(p); \
        (hsw2v_v8){v4_[0], v4_[1], v4_[2], v4_[3], 0.0f, 0.0f, 0.0f, 0.0f}; \
    })
#endif

/* s + x[k] y[k] + x[k+1] y[k+1] + ... up to d, in that order, for the at most 3 floats that
 * remain after a dot product's vector steps: straight-line code, no loop for the compiler to
 * vectorise at one call site and not at another */
static inline float hsw2v_dot_rest(int k, int d, const float *x, const float *y, float s) {
    if (k < d) {
        s += x[k] * y[k];
        if (k + 1 < d) {
            s += x[k + 1] * y[k + 1];
            if (k + 2 < d)
                s += x[k + 2] * y[k + 2];
        }
    }
    return s;
}

/* The width ladder of the element-wise passes, written once: STEP(vector type, load, store,
 * width) over 16-float blocks (the avx512 level only), then 8-float blocks, then at most one
 * 4-float block (when d mod 8 >= 4). Each STEP loops ``for (; k + W <= d; k += W)`` itself
 * over the caller's index k; the scalar tail after the ladder is the caller's. */
#ifdef HSW2V_V16
#define HSW2V_STEP_16(STEP) STEP(hsw2v_v16, HSW2V_LOAD16, HSW2V_STORE16, 16)
#else
#define HSW2V_STEP_16(STEP)
#endif
#define HSW2V_FOR_WIDTHS(STEP)                                                           \
    HSW2V_STEP_16(STEP)                                                                  \
    STEP(hsw2v_v8, HSW2V_LOAD, HSW2V_STORE, 8)                                           \
    if (k + 4 <= d) { /* at most one 4-float block remains after the 8-float ones */     \
        STEP(hsw2v_v4, HSW2V_LOAD4, HSW2V_STORE4, 4)                                     \
    }
#endif

/* One element k of a set's step, the scalar tail of the negative-sampling updates
 * (train/_ns_pair.h, train/_ns_shared.h): for j = 0 .. n-1 in order, w += a[j] * rows[j][k]
 * (the row before its step) and rows[j][k] += a[j] * hv; returns w, the error at k. */
static inline float hsw2v_set_step_at(int k, float hv, float *const *rows, const float *a,
                                      int n) {
    float w = 0.0f;
    for (int j = 0; j < n; j++) {
        float r = rows[j][k];
        w += a[j] * r;
        rows[j][k] = r + a[j] * hv;
    }
    return w;
}

/* x . y */
static inline float hsw2v_dot(int d, const float *x, const float *y) {
    int k = 0;
#ifdef HSW2V_VECTOR
    hsw2v_v8 a0 = {0}, a1 = {0};
#ifdef HSW2V_V16
    hsw2v_v16 w0 = {0}, w1 = {0};
    for (; k + 32 <= d; k += 32) {
        w0 += HSW2V_LOAD16(x + k) * HSW2V_LOAD16(y + k);
        w1 += HSW2V_LOAD16(x + k + 16) * HSW2V_LOAD16(y + k + 16);
    }
    for (; k + 16 <= d; k += 16)
        w0 += HSW2V_LOAD16(x + k) * HSW2V_LOAD16(y + k);
    a0 = hsw2v_fold16(w0 + w1);
#else
    for (; k + 16 <= d; k += 16) {
        a0 += HSW2V_LOAD(x + k) * HSW2V_LOAD(y + k);
        a1 += HSW2V_LOAD(x + k + 8) * HSW2V_LOAD(y + k + 8);
    }
#endif
    for (; k + 8 <= d; k += 8)
        a0 += HSW2V_LOAD(x + k) * HSW2V_LOAD(y + k);
    if (k + 4 <= d) {
        a0 += HSW2V_LOAD4_WIDE(x + k) * HSW2V_LOAD4_WIDE(y + k);
        k += 4;
    }
    return hsw2v_dot_rest(k, d, x, y, hsw2v_hsum(a0 + a1));
#else
    float s = 0.0f;
    for (; k < d; k++)
        s += x[k] * y[k];
    return s;
#endif
}

/* y := a*x + y */
static inline void hsw2v_axpy(int d, float a, const float *x, float *y) {
    int k = 0;
#ifdef HSW2V_VECTOR
#ifdef HSW2V_V16
    for (; k + 16 <= d; k += 16)
        HSW2V_STORE16(y + k, HSW2V_LOAD16(y + k) + a * HSW2V_LOAD16(x + k));
#endif
    for (; k + 8 <= d; k += 8)
        HSW2V_STORE(y + k, HSW2V_LOAD(y + k) + a * HSW2V_LOAD(x + k));
    if (k + 4 <= d) {
        HSW2V_STORE4(y + k, HSW2V_LOAD4(y + k) + a * HSW2V_LOAD4(x + k));
        k += 4;
    }
#endif
    for (; k < d; k++)
        y[k] += a * x[k];
}

#ifdef HSW2V_VECTOR
/* hsw2v_update_then_dot's steps over two vectors of VT (W floats each, loaded by LD, stored
 * by ST) at a time, or one: work += g*row; row += g*h; A0 (A1) += h * next_row */
#define HSW2V_UPDATE_DOT_2(VT, LD, ST, W, A0, A1)                               \
    for (; k + 2 * (W) <= d; k += 2 * (W)) {                                    \
        VT r0 = LD(row + k), r1 = LD(row + k + (W));                            \
        VT h0 = LD(h + k), h1 = LD(h + k + (W));                                \
        ST(work + k, LD(work + k) + g * r0);                                    \
        ST(work + k + (W), LD(work + k + (W)) + g * r1);                        \
        ST(row + k, r0 + g * h0);                                               \
        ST(row + k + (W), r1 + g * h1);                                         \
        A0 += h0 * LD(next_row + k);                                            \
        A1 += h1 * LD(next_row + k + (W));                                      \
    }
#define HSW2V_UPDATE_DOT_1(VT, LD, ST, W, A0)                                   \
    for (; k + (W) <= d; k += (W)) {                                            \
        VT r0 = LD(row + k), h0 = LD(h + k);                                    \
        ST(work + k, LD(work + k) + g * r0);                                    \
        ST(row + k, r0 + g * h0);                                               \
        A0 += h0 * LD(next_row + k);                                            \
    }
#endif

/* One pass: work += g*row; row += g*h; returns h . next_row (summed as hsw2v_dot sums, the
 * same bits).
 * (row, work, h and next_row are distinct, non-overlapping vectors.) */
static inline float hsw2v_update_then_dot(int d, float g, const float *h, float *row,
                                          float *work, const float *next_row) {
    int k = 0;
    float s = 0.0f;
#ifdef HSW2V_VECTOR
    hsw2v_v8 a0 = {0}, a1 = {0};
#ifdef HSW2V_V16
    hsw2v_v16 w0 = {0}, w1 = {0};
    HSW2V_UPDATE_DOT_2(hsw2v_v16, HSW2V_LOAD16, HSW2V_STORE16, 16, w0, w1)
    HSW2V_UPDATE_DOT_1(hsw2v_v16, HSW2V_LOAD16, HSW2V_STORE16, 16, w0)
    a0 = hsw2v_fold16(w0 + w1);
#else
    HSW2V_UPDATE_DOT_2(hsw2v_v8, HSW2V_LOAD, HSW2V_STORE, 8, a0, a1)
#endif
    HSW2V_UPDATE_DOT_1(hsw2v_v8, HSW2V_LOAD, HSW2V_STORE, 8, a0)
    if (k + 4 <= d) { /* 4 updates at once, and the dot's 4-float tail step (hsw2v_dot's) */
        hsw2v_v4 r0 = HSW2V_LOAD4(row + k), h0 = HSW2V_LOAD4(h + k);
        HSW2V_STORE4(work + k, HSW2V_LOAD4(work + k) + g * r0);
        HSW2V_STORE4(row + k, r0 + g * h0);
        a0 += HSW2V_LOAD4_WIDE(h + k) * HSW2V_LOAD4_WIDE(next_row + k);
        k += 4;
    }
    s = hsw2v_dot_rest(k, d, h, next_row, hsw2v_hsum(a0 + a1));
    for (; k < d; k++) {
        float r = row[k];
        work[k] += g * r;
        row[k] = r + g * h[k];
    }
    return s;
#else
    for (; k < d; k++) {
        float r = row[k];
        work[k] += g * r;
        row[k] = r + g * h[k];
        s += h[k] * next_row[k];
    }
    return s;
#endif
}

/* The last node of a skip-gram walk: row += g*h and h += work + g*row (old row), in one pass. */
#define HSW2V_UPDATE_LAST_STEP(VT, LD, ST, W)                                     \
    for (; k + (W) <= d; k += (W)) {                                              \
        VT r = LD(row + k), hv = LD(h + k);                                       \
        ST(row + k, r + g * hv);                                                  \
        ST(h + k, hv + (LD(work + k) + g * r));                                   \
    }

static inline void hsw2v_update_last(int d, float g, float *h, float *row, const float *work) {
    int k = 0;
#ifdef HSW2V_VECTOR
    HSW2V_FOR_WIDTHS(HSW2V_UPDATE_LAST_STEP)
#endif
    for (; k < d; k++) {
        float r = row[k];
        row[k] = r + g * h[k];
        h[k] += work[k] + g * r;
    }
}

#undef HSW2V_UPDATE_LAST_STEP

/* The error's step into the input rows at element k (w: its error there, any width; LD / ST
 * the load and store of that width): ``w *= scale`` when scale != 1, then ``ctx[c] +=
 * lock[c] * w`` for c = 0..nctx-1 in order. One statement for hsw2v_update_spread and
 * train/_ns_pair.h's update pass, so that both send the error with the same operations. */
#define HSW2V_SEND_ERROR(LD, ST, w)                                               \
    do {                                                                          \
        if (scale != 1.0f)                                                        \
            w = w * scale;                                                        \
        for (c = 0; c < nctx; c++)                                                \
            ST(ctx[c] + k, LD(ctx[c] + k) + lock[c] * w);                         \
    } while (0)
#define HSW2V_LOAD1(p) (*(p))
#define HSW2V_STORE1(p, v) (*(p) = (v))

#define HSW2V_UPDATE_SPREAD_STEP(VT, LD, ST, W)                                   \
    for (; k + (W) <= d; k += (W)) {                                              \
        VT r = LD(row + k), hv = LD(h + k), w = LD(work + k) + g * r;             \
        ST(row + k, r + g * hv);                                                  \
        HSW2V_SEND_ERROR(LD, ST, w);                                              \
    }

/* The last word of a negative-sampling walk with the caller's next step folded in: row += g*h
 * and w = work + g*row (old row), then ``w *= scale`` when scale != 1 and ``ctx[c] += lock[c]
 * * w`` for c = 0..nctx-1 in order, in one pass (work itself is not written). The same
 * element-wise operations as hsw2v_axpy(g, row, work); hsw2v_axpy(g, h, row); work *= scale;
 * hsw2v_axpy(lock[c], work, ctx[c]) per c, so the same bits. ctx rows may repeat (CBOW's
 * window) and may be h itself (skip-gram's context row: each element of h is read before it
 * is written); they are not row or work. */
static inline void hsw2v_update_spread(int d, float g, const float *h, float *row,
                                       const float *work, float *const *ctx,
                                       const float *lock, int nctx, float scale) {
    int k = 0, c;
#ifdef HSW2V_VECTOR
    HSW2V_FOR_WIDTHS(HSW2V_UPDATE_SPREAD_STEP)
#endif
    for (; k < d; k++) {
        float r = row[k], w = work[k] + g * r;
        row[k] = r + g * h[k];
        HSW2V_SEND_ERROR(HSW2V_LOAD1, HSW2V_STORE1, w);
    }
}

#undef HSW2V_UPDATE_SPREAD_STEP

/* A hint: ask for a row's cache line ahead of a write (no effect on results). */
#if defined(__GNUC__) || defined(__clang__)
#define HSW2V_PREFETCH(p) __builtin_prefetch((const void *)(p), 1, 3)
#else
#define HSW2V_PREFETCH(p) ((void)0)
#endif

#endif /* HSW2V_VEC_H */
