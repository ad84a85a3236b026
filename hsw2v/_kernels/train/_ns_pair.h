/* Negative sampling, one (h, target + negatives) set in two passes over the rows: every dot
 * product first, then every update. Cython reaches it through ``train/_ns_pair.pxd``.
 *
 * Design note
 * -----------
 * A. Why it is exact. The step of a set (Mikolov et al. 2013, negative sampling objective;
 *    ``math/_path.pxd`` note B) walks its words in order: f_k = h . row_k, a_k = -alpha g_k,
 *    work += a_k row_k (old row), row_k += a_k h. h does not move during the walk, and when
 *    the set's rows are distinct no word's update touches another word's row, so every f_k
 *    is the dot product of h with the row as it was before the set: the dots can all be
 *    taken first. The updates then run in one pass, word after word for each element, which
 *    gives every element of every row and of work the same operations in the same order as
 *    the word-by-word walk, hence the same bits. A set with a repeated row is not exact this
 *    way (its second dot product must see the first update); the caller checks and walks it
 *    word by word (``ns_path_fused``).
 *
 * B. Why it is faster. The word-by-word walk makes, per word, one pass that loads the row,
 *    h, work and the next row and stores the row and work, and its dot products form one
 *    chain: each waits for the previous word's update pass and sigmoid. Here the dot
 *    products of a group of up to HSW2V_NS_GROUP words run side by side in one pass over h
 *    (their latencies overlap, h is loaded once), and the update pass keeps work in a
 *    register for each 8-float step and adds it straight into the input rows, the step the
 *    caller would take next (skip-gram: ``ctx += lock * work``; CBOW: every window row). Per
 *    skip-gram set of 6 words that is 15 vector loads and 7 stores per 8 floats instead of 30
 *    and 14, for the same 19 multiply-adds. CBOW also forms its hidden vector in one pass
 *    (``hsw2v_rows_sum``: the window's rows summed in registers, stored once). Measured
 *    (benchmarks/RESULTS.md, "Negative sampling in two passes"), that pays for CBOW at
 *    d=100; skip-gram, whose time goes to bringing the negatives' rows in from L3 or memory,
 *    gained nothing, and training keeps its word-by-word walk.
 *
 * C. Bits. Each dot product is summed exactly as ``hsw2v_dot`` sums (``math/_vec.h``: the same
 *    accumulators, the same order, the same tail), so f_k has the same bits; the element-wise
 *    updates are the same multiply-adds whatever the vector width. The accumulators of a
 *    group are arrays indexed by constants after inlining (one specialised copy per group
 *    size), which the compiler keeps in registers: 2 per word, 12 of the 16 AVX2 registers for
 *    the usual 6 words (negative=5).
 */
#ifndef HSW2V_NS_PAIR_H
#define HSW2V_NS_PAIR_H

#include "../math/_vec.h"

#define HSW2V_NS_GROUP 6 /* dot products taken side by side (2 accumulators each) */

/* inlined at every call, so that each group size is its own copy with constant bounds */
#if defined(__GNUC__) || defined(__clang__)
#define HSW2V_NS_INLINE static inline __attribute__((always_inline))
#else
#define HSW2V_NS_INLINE static inline
#endif

/* out[j] = x . rows[j] for j < n (n <= HSW2V_NS_GROUP, a constant after inlining), each
 * summed as hsw2v_dot sums. */
HSW2V_NS_INLINE void hsw2v_ns_dots_n(
        const int n, int d, const float *x, float *const *rows, float *out) {
    int k = 0, j;
#ifdef HSW2V_VECTOR
    hsw2v_v8 a0[HSW2V_NS_GROUP], a1[HSW2V_NS_GROUP];
    for (j = 0; j < n; j++) {
        a0[j] = (hsw2v_v8){0};
        a1[j] = (hsw2v_v8){0};
    }
#ifdef HSW2V_V16
    hsw2v_v16 w0[HSW2V_NS_GROUP], w1[HSW2V_NS_GROUP];
    for (j = 0; j < n; j++) {
        w0[j] = (hsw2v_v16){0};
        w1[j] = (hsw2v_v16){0};
    }
    for (; k + 32 <= d; k += 32) {
        hsw2v_v16 x0 = HSW2V_LOAD16(x + k), x1 = HSW2V_LOAD16(x + k + 16);
        for (j = 0; j < n; j++) {
            w0[j] += x0 * HSW2V_LOAD16(rows[j] + k);
            w1[j] += x1 * HSW2V_LOAD16(rows[j] + k + 16);
        }
    }
    for (; k + 16 <= d; k += 16) {
        hsw2v_v16 x0 = HSW2V_LOAD16(x + k);
        for (j = 0; j < n; j++)
            w0[j] += x0 * HSW2V_LOAD16(rows[j] + k);
    }
    for (j = 0; j < n; j++)
        a0[j] = hsw2v_fold16(w0[j] + w1[j]);
#else
    for (; k + 16 <= d; k += 16) {
        hsw2v_v8 x0 = HSW2V_LOAD(x + k), x1 = HSW2V_LOAD(x + k + 8);
        for (j = 0; j < n; j++) {
            a0[j] += x0 * HSW2V_LOAD(rows[j] + k);
            a1[j] += x1 * HSW2V_LOAD(rows[j] + k + 8);
        }
    }
#endif
    for (; k + 8 <= d; k += 8) {
        hsw2v_v8 x0 = HSW2V_LOAD(x + k);
        for (j = 0; j < n; j++)
            a0[j] += x0 * HSW2V_LOAD(rows[j] + k);
    }
    if (k + 4 <= d) { /* hsw2v_dot's 4-float tail step */
        hsw2v_v8 x0 = HSW2V_LOAD4_WIDE(x + k);
        for (j = 0; j < n; j++)
            a0[j] += x0 * HSW2V_LOAD4_WIDE(rows[j] + k);
        k += 4;
    }
    for (j = 0; j < n; j++)
        out[j] = hsw2v_dot_rest(k, d, x, rows[j], hsw2v_hsum(a0[j] + a1[j]));
#else
    for (j = 0; j < n; j++) {
        float t = 0.0f;
        for (k = 0; k < d; k++)
            t += x[k] * rows[j][k];
        out[j] = t;
    }
#endif
}

/* out[j] = x . rows[j] for j < n (any n), each with hsw2v_dot's bits. */
static inline void hsw2v_ns_dots(int d, const float *x, float *const *rows, int n,
                                 float *out) {
    for (int j = 0; j < n; j += HSW2V_NS_GROUP) {
        switch (n - j) {
        case 1: hsw2v_ns_dots_n(1, d, x, rows + j, out + j); break;
        case 2: hsw2v_ns_dots_n(2, d, x, rows + j, out + j); break;
        case 3: hsw2v_ns_dots_n(3, d, x, rows + j, out + j); break;
        case 4: hsw2v_ns_dots_n(4, d, x, rows + j, out + j); break;
        case 5: hsw2v_ns_dots_n(5, d, x, rows + j, out + j); break;
        default: hsw2v_ns_dots_n(HSW2V_NS_GROUP, d, x, rows + j, out + j); break;
        }
    }
}

/* The update pass of a set (design note A): for each element, w = sum_j a[j] rows[j] (old
 * rows, in order j = 0..n-1) and rows[j] += a[j] h; then, with nctx == 0, ``work = w``;
 * otherwise w is sent back to the input rows as the caller's next step would: ``w *= scale``
 * when scale != 1 (CBOW's sum mode), then ``ctx[c] += lock[c] w`` for c = 0..nctx-1 in
 * order (skip-gram: its one context row, which may be h itself, whose element is read before
 * it is written; CBOW: the window's rows, repeats allowed). rows are distinct and are not h,
 * a ctx row or work. */
/* One element block of hsw2v_ns_update at vector type VT (LD / ST its load and store, W its
 * width): the same statements at every width, so each width's pass is the others' to the
 * lane. k is the block's first element. */
#define HSW2V_NS_UPDATE_BLOCK(VT, LD, ST, W)                                      \
    for (; k + (W) <= d; k += (W)) {                                              \
        VT hv = LD(h + k), w = {0};                                               \
        for (int j = 0; j < n; j++) {                                             \
            VT r = LD(rows[j] + k);                                               \
            w = w + a[j] * r;                                                     \
            ST(rows[j] + k, r + a[j] * hv);                                       \
        }                                                                         \
        if (nctx == 0)                                                            \
            ST(work + k, w);                                                      \
        HSW2V_SEND_ERROR(LD, ST, w);                                              \
    }

static inline void hsw2v_ns_update(int d, const float *h, float *const *rows, const float *a,
                                   int n, float *const *ctx, const float *lock, int nctx,
                                   float scale, float *work) {
    int k = 0, c;
#ifdef HSW2V_VECTOR
    HSW2V_FOR_WIDTHS(HSW2V_NS_UPDATE_BLOCK)
#endif
    for (; k < d; k++) {
        float w = hsw2v_set_step_at(k, h[k], rows, a, n);
        if (nctx == 0)
            work[k] = w;
        HSW2V_SEND_ERROR(HSW2V_LOAD1, HSW2V_STORE1, w);
    }
}

#undef HSW2V_NS_UPDATE_BLOCK

/* CBOW's hidden vector in one pass: out = rows[0] + rows[1] + ... (in order, from 0), then
 * ``out *= scale`` when scale != 1 (cbow_mean: 1 / count); the same element-wise operations
 * as a zeroed out, one ``out += rows[c]`` pass per row and a scaling pass. */
#define HSW2V_ROWS_SUM_STEP(VT, LD, ST, W)                                        \
    for (; k + (W) <= d; k += (W)) {                                              \
        VT s = {0};                                                               \
        for (c = 0; c < count; c++)                                               \
            s = s + LD(rows[c] + k);                                              \
        if (scale != 1.0f)                                                        \
            s = s * scale;                                                        \
        ST(out + k, s);                                                           \
    }

static inline void hsw2v_rows_sum(int d, float *const *rows, int count, float scale,
                                  float *out) {
    int k = 0, c;
#ifdef HSW2V_VECTOR
    HSW2V_FOR_WIDTHS(HSW2V_ROWS_SUM_STEP)
#endif
    for (; k < d; k++) {
        float s = 0.0f;
        for (c = 0; c < count; c++)
            s += rows[c][k];
        if (scale != 1.0f)
            s = s * scale;
        out[k] = s;
    }
}

#undef HSW2V_ROWS_SUM_STEP

#endif /* HSW2V_NS_PAIR_H */
