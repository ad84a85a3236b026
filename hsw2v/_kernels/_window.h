/* Skip-gram: several contexts of one window walk the centre's path together.
 *
 * An optimisation of the reference hierarchical-softmax step (``hs_step`` in _path.pxd, the
 * one home of the gradient): the same updates as B reference steps in a row, to float
 * rounding (the Gram terms below reorder the sums); tests/test_kernel_twins.py checks it as
 * the reference's twin. It is the default skip-gram walk (Word2Vec's "window" variant).
 *
 * In skip-gram every context word of a window is trained against the same path, the centre
 * word's. word2vec.c walks the path once per context; node j of the path is read and written
 * by every context in turn. Here a block of B <= HSW2V_MAX_BLOCK contexts walks the path node
 * by node: each
 * node row is loaded once per block, and one pass over it applies the B updates of that node
 * and computes the B dot products of the node after next (two ahead, so that the next node's
 * coefficients never wait for the pass), with B independent accumulators.
 *
 * The result is word2vec.c's, not an approximation: walking node-major instead of
 * context-major changes nothing, because a context's own row does not move during its walk.
 * The only coupling is that context b sees node j already moved by the contexts before it in
 * the block, y_j + sum_{b'<b} g_b'j x_b'. It is added back exactly (Gram trick, as in the
 * batched formulations of Ji et al., "Parallelizing Word2Vec in Shared and Distributed
 * Memory", 2016, and Simonton & Alaghband, HPEC 2017, which drop it instead; dropping it cost
 * 1.5 points of analogy accuracy when measured here):
 *
 *     f_bj    = x_b . y_j + sum_{b'<b} g_b'j (x_b . x_b')
 *     work_b  = sum_j g_bj y_j + sum_{b'<b} (sum_j g_bj g_b'j) x_b'
 *
 * A block must not hold the same word twice (the caller starts a new block instead), since
 * word2vec.c would let the second occurrence see the first one's update of that row.
 *
 * Notation: x[b] context rows of syn0 (IN/OUT), y[j] path rows of syn1 (IN/OUT), work[b]
 * scratch rows of d floats, code[j] the path's bits, g = (1 - code - sigmoid(f)) * alpha
 * (sigmoid: the NaN-safe table lookup of _vec.h). This g keeps word2vec.c's sign and float32
 * arithmetic: it is -alpha * dL/df of the reference's convention (dL/df = sigmoid(f) -
 * (1 - code)), the same number bit for bit, since IEEE subtraction and multiplication are
 * exact under negation; the results are today's, unchanged.
 */
#ifndef HSW2V_WINDOW_H
#define HSW2V_WINDOW_H

#include <math.h>
#include <stdint.h>

#include "_loss.h"
#include "_vec.h"

/* Without vector extensions (MSVC; see _vec.h) the vector steps are empty (d4 = 0) and the
 * scalar tail loops, which compute the same sums one float at a time, cover all d. */
#if defined(_MSC_VER)
#define HSW2V_ALWAYS_INLINE static __forceinline
#elif defined(__GNUC__) || defined(__clang__)
#define HSW2V_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define HSW2V_ALWAYS_INLINE static inline
#endif

/* Largest block. Blocks of up to 8 fit AVX2's 16 vector registers too, but measured slower
 * (benchmarks/RESULTS.md, "Window block size"): the Gram terms grow as B^2. */
#define HSW2V_MAX_BLOCK 4

/* A loop over the block's contexts, unrolled whole (B is a constant in each specialisation):
 * its scalars (the coefficients g_b) then stay in registers */
#if defined(__GNUC__) && !defined(__clang__)
#define HSW2V_UNROLL_BLOCK _Pragma("GCC unroll 4")
#elif defined(__clang__)
#define HSW2V_UNROLL_BLOCK _Pragma("unroll 4")
#else
#define HSW2V_UNROLL_BLOCK
#endif

/* Widths: rows are cut into vector steps as in _vec.h (16 floats at the avx512 level, then 8;
 * element-wise updates then one 4-float step; scalar tails). Each dot-product step width W has
 * its own B accumulators (AW) and its own range [K0, K1) of the row; the passes below are
 * written once per step as macros over the vector type. Each dot product ends as _vec.h's do
 * ("Widths"): a 4-float step into its 8-float accumulator over [d8, d4), the vector sum, then
 * [d4, d) in straight-line code; the element-wise updates of [d8, d4) take a 4-float step.
 * Without vector extensions every vector range is empty and the scalar loops cover all d. */
#ifdef HSW2V_VECTOR
/* AW[b] += x[b] . y over [K0, K1) in steps of W */
#define HSW2V_DOTS_STEP(VT, LD, W, AW, K0, K1, y_row)                           \
    for (int k = (K0); k < (K1); k += (W)) {                                    \
        VT yv = LD((y_row) + k);                                                \
        for (int b = 0; b < B; b++) AW[b] += LD(x[b] + k) * yv;                 \
    }
/* node j's B updates and node j+1's B dot products over [K0, K1) in steps of W */
#define HSW2V_UPDATE_DOT_STEP(VT, LD, ST, W, AW, K0, K1)                        \
    for (int k = (K0); k < (K1); k += (W)) {                                    \
        VT r = LD(yj + k), nv = LD(yn + k), step = r;                           \
        for (int b = 0; b < B; b++) {                                           \
            VT xv = LD(x[b] + k);                                               \
            ST(work[b] + k, LD(work[b] + k) + g[b] * r);                        \
            step += g[b] * xv;                                                  \
            AW[b] += xv * nv;                                                   \
        }                                                                       \
        ST(yj + k, step);                                                       \
    }
/* node j's B updates (no dot products) over [K0, K1) in steps of W */
#define HSW2V_UPDATE_STEP(VT, LD, ST, W, K0, K1)                                \
    for (int k = (K0); k < (K1); k += (W)) {                                    \
        VT r = LD(yj + k), step = r;                                            \
        for (int b = 0; b < B; b++) {                                           \
            ST(work[b] + k, LD(work[b] + k) + g[b] * r);                        \
            step += g[b] * LD(x[b] + k);                                        \
        }                                                                       \
        ST(yj + k, step);                                                       \
    }
#ifdef HSW2V_V16
#define HSW2V_ZERO16() for (int b = 0; b < B; b++) acc16[b] = (hsw2v_v16){0}
#define HSW2V_DOTS16(y_row) HSW2V_DOTS_STEP(hsw2v_v16, HSW2V_LOAD16, 16, acc16, 0, d16, y_row)
#define HSW2V_UPDATE_DOT16() \
    HSW2V_UPDATE_DOT_STEP(hsw2v_v16, HSW2V_LOAD16, HSW2V_STORE16, 16, acc16, 0, d16)
#define HSW2V_UPDATE16() HSW2V_UPDATE_STEP(hsw2v_v16, HSW2V_LOAD16, HSW2V_STORE16, 16, 0, d16)
#define HSW2V_FOLD16(b) hsw2v_fold16(acc16[b])
#else
#define HSW2V_ZERO16() ((void)0)
#define HSW2V_DOTS16(y_row) ((void)0)
#define HSW2V_UPDATE_DOT16() ((void)0)
#define HSW2V_UPDATE16() ((void)0)
#define HSW2V_FOLD16(b) ((hsw2v_v8){0})
#endif
/* all accumulators to zero, then the vector steps of y_row's dots with the B rows */
#define HSW2V_BLOCK_DOTS(y_row)                                                 \
    do {                                                                        \
        HSW2V_ZERO16();                                                         \
        for (int b = 0; b < B; b++) acc8[b] = (hsw2v_v8){0};                    \
        HSW2V_DOTS16(y_row);                                                    \
        HSW2V_DOTS_STEP(hsw2v_v8, HSW2V_LOAD, 8, acc8, d16, d8, y_row)          \
    } while (0)
#define HSW2V_ACC_SUM(b) hsw2v_hsum(HSW2V_FOLD16(b) + acc8[b])
/* out = x_b . y_row from its accumulators: the 4-float tail step when d mod 8 >= 4 (as
 * hsw2v_dot ends), the vector sum, then the last d mod 4 floats in order */
#define HSW2V_DOT_END(out, b, y_row)                                            \
    do {                                                                        \
        if (d4 > d8)                                                            \
            acc8[b] += HSW2V_LOAD4_WIDE(x[b] + d8) * HSW2V_LOAD4_WIDE((y_row) + d8); \
        (out) = hsw2v_dot_rest(d4, d, x[b], (y_row), HSW2V_ACC_SUM(b));         \
    } while (0)
#else
#define HSW2V_BLOCK_DOTS(y_row) ((void)0)
#define HSW2V_DOT_END(out, b, y_row) ((out) = hsw2v_dot(d, x[b], (y_row)))
#endif
/* node j's B updates over the scalar tail [d4, d), each step followed by NEXT_DOT (node
 * j+1's dot products, or nothing: (void)0) */
#define HSW2V_UPDATE_TAIL(NEXT_DOT)                                             \
    for (int k = d4; k < d; k++) {                                              \
        float r = yj[k], step = r;                                              \
        for (int b = 0; b < B; b++) {                                           \
            work[b][k] += g[b] * r;                                             \
            step += g[b] * x[b][k];                                             \
            NEXT_DOT;                                                           \
        }                                                                       \
        yj[k] = step;                                                           \
    }

/* ``tally``: the loss tally the block's terms go to, or NULL for none; the callers below
 * pass it as a constant NULL or as a pointer tested non-NULL just before, so that the no-loss
 * specialisations hold no loss code at all. */
HSW2V_ALWAYS_INLINE void hsw2v_sg_block_n(
    const int B, int d, float *const *x, float *const *work, int L, float *const *y,
    const uint8_t *code, float alpha, const hsw2v_sigmoid_table *sig, hsw2v_loss_acc *tally,
    double *check, const float *lock) {
#ifdef HSW2V_VECTOR
#ifdef HSW2V_V16
    const int d16 = d & ~15;
    hsw2v_v16 acc16[HSW2V_MAX_BLOCK];
#else
    const int d16 = 0;
#endif
    const int d8 = d & ~7, d4 = d & ~3;
    hsw2v_v8 acc8[HSW2V_MAX_BLOCK];
#else
    const int d4 = 0;
#endif
    float K[HSW2V_MAX_BLOCK][HSW2V_MAX_BLOCK], f[HSW2V_MAX_BLOCK], g[HSW2V_MAX_BLOCK];
    float fn[HSW2V_MAX_BLOCK]; /* x_b . y_{j+1}: the next node's dot products */
    float mix[HSW2V_MAX_BLOCK][HSW2V_MAX_BLOCK];
    double fsum = 0.0;

    for (int b = 0; b < B; b++) {
        for (int b2 = 0; b2 < b; b2++) {
            K[b][b2] = hsw2v_dot(d, x[b], x[b2]);
            mix[b][b2] = 0.0f;
        }
        for (int k = 0; k < d; k++)
            work[b][k] = 0.0f;
    }
    /* nodes 0 and 1: their dot products before any update (a path's rows are distinct, so
     * no update of this walk touches a node row before that row's own step) */
    HSW2V_BLOCK_DOTS(y[0]);
    for (int b = 0; b < B; b++)
        HSW2V_DOT_END(f[b], b, y[0]);
    if (L > 1) {
        HSW2V_BLOCK_DOTS(y[1]);
        for (int b = 0; b < B; b++)
            HSW2V_DOT_END(fn[b], b, y[1]);
    }
    for (int j = 0; j < L; j++) {
        const float label = (float)(1 - code[j]);
        const float *residual = sig->residual[code[j] != 0]; /* label - s per entry */
        float *yj = y[j];
        HSW2V_UNROLL_BLOCK
        for (int b = 0; b < B; b++) {
            float fb = f[b];
            HSW2V_UNROLL_BLOCK
            for (int b2 = 0; b2 < b; b2++)
                fb += g[b2] * K[b][b2];
            if (tally)
                hsw2v_tally_push(tally, (2.0f * label - 1.0f) * fb);
            g[b] = hsw2v_sigmoid_residual(sig, residual, label, fb) * alpha;
            HSW2V_UNROLL_BLOCK
            for (int b2 = 0; b2 < b; b2++)
                mix[b][b2] += g[b] * g[b2];
        }
        if (j + 1 < L) /* node j+1's dot products, from the pass before this one */
            for (int b = 0; b < B; b++)
                f[b] = fn[b];
        if (j + 2 < L) {
            /* one pass: node j's B updates and node j+2's B dot products. Node j+2, not j+1:
             * the next node's g chain (a sigmoid per context, each waiting for the one before,
             * above) then depends on no part of this pass, and the CPU runs it while this
             * pass's loads and multiply-adds are still in flight */
            const float *yn = y[j + 2];
#ifdef HSW2V_VECTOR
            HSW2V_ZERO16();
            for (int b = 0; b < B; b++) acc8[b] = (hsw2v_v8){0};
            HSW2V_UPDATE_DOT16();
            HSW2V_UPDATE_DOT_STEP(hsw2v_v8, HSW2V_LOAD, HSW2V_STORE, 8, acc8, d16, d8)
            HSW2V_UPDATE_STEP(hsw2v_v4, HSW2V_LOAD4, HSW2V_STORE4, 4, d8, d4)
            for (int b = 0; b < B; b++) /* the dots' tails (yn is not updated in this pass) */
                HSW2V_DOT_END(fn[b], b, yn);
            HSW2V_UPDATE_TAIL((void)0)
#else
            for (int b = 0; b < B; b++)
                fn[b] = 0.0f;
            HSW2V_UPDATE_TAIL(fn[b] += x[b][k] * yn[k])
#endif
        } else {
#ifdef HSW2V_VECTOR
            HSW2V_UPDATE16();
            HSW2V_UPDATE_STEP(hsw2v_v8, HSW2V_LOAD, HSW2V_STORE, 8, d16, d8)
            HSW2V_UPDATE_STEP(hsw2v_v4, HSW2V_LOAD4, HSW2V_STORE4, 4, d8, d4)
#endif
            HSW2V_UPDATE_TAIL((void)0)
        }
    }
    /* x_b += lock_b (work_b + sum_{b'<b} mix_bb' x_b') with the old x_b': update the last row
     * first. lock_b: the lock factor of x_b's word (gensim's vectors_lockf), 1 without lock */
    for (int b = B - 1; b >= 0; b--) {
        for (int b2 = 0; b2 < b; b2++)
            hsw2v_axpy(d, mix[b][b2], x[b2], work[b]);
        hsw2v_axpy(d, lock ? lock[b] : 1.0f, work[b], x[b]);
        /* the divergence check, once per row and block: a NaN f at any node makes g_b NaN,
         * hence every entry of work_b and of the updated x_b (a NaN in x_b or in a node row
         * makes f NaN first) */
        fsum += x[b][0];
    }
    *check += fsum;
}

/* Walk the path of one centre for B (1..HSW2V_MAX_BLOCK) distinct context rows; pushes the
 * -log-likelihood terms of the B (context, centre) pairs onto ``tally`` (a job's tally,
 * _loss.h), or none where ``tally`` is NULL. Adds the first entry of each updated context
 * row to *check (NaN if any f of the walk was NaN: the job's divergence check; an infinity
 * shows there once it has made a NaN, as inf - inf or 0 * inf). ``lock``: B lock factors of
 * the context rows' words (their updates are scaled by them), or NULL for 1.
 * Eight specialisations: B, and loss or not (chosen per block, a predictable branch), so
 * that training without compute_loss runs a block with no loss code in it. */
static inline void hsw2v_sg_block_tally(int B, int d, float *const *x, float *const *work,
                                        int L, float *const *y, const uint8_t *code,
                                        float alpha, const hsw2v_sigmoid_table *sig,
                                        hsw2v_loss_acc *tally, double *check,
                                        const float *lock) {
#define HSW2V_SG_BLOCK_CASES(T)                                                          \
    switch (B) {                                                                        \
    case 4: hsw2v_sg_block_n(4, d, x, work, L, y, code, alpha, sig, T, check, lock); break; \
    case 3: hsw2v_sg_block_n(3, d, x, work, L, y, code, alpha, sig, T, check, lock); break; \
    case 2: hsw2v_sg_block_n(2, d, x, work, L, y, code, alpha, sig, T, check, lock); break; \
    default: hsw2v_sg_block_n(1, d, x, work, L, y, code, alpha, sig, T, check, lock);      \
    }
    if (tally == NULL) {
        HSW2V_SG_BLOCK_CASES(NULL)
    } else {
        HSW2V_SG_BLOCK_CASES(tally)
    }
#undef HSW2V_SG_BLOCK_CASES
}

/* One block on its own tally: returns the block's -log-likelihood when compute_loss, else 0
 * (otherwise as hsw2v_sg_block_tally; for callers without a job, e.g. the C checks). */
static inline double hsw2v_sg_block(int B, int d, float *const *x, float *const *work, int L,
                                    float *const *y, const uint8_t *code, float alpha,
                                    const hsw2v_sigmoid_table *sig, int compute_loss,
                                    double *check, const float *lock) {
    hsw2v_loss_acc loss;
    hsw2v_loss_init(&loss);
    hsw2v_sg_block_tally(B, d, x, work, L, y, code, alpha, sig, compute_loss ? &loss : NULL,
                         check, lock);
    return compute_loss ? hsw2v_loss_total(&loss) : 0.0;
}

#endif /* HSW2V_WINDOW_H */
