/* Skip-gram: several contexts of one window walk the centre's path together.
 *
 * An optimisation of the reference hierarchical-softmax step (``hs_step`` in math/_path.pxd, the
 * one home of the gradient): the same updates as B reference steps in a row, to float
 * rounding (the Gram terms below reorder the sums); tests/test_kernel_twins.py checks it as
 * the reference's twin. It is the default walk of hierarchical softmax (Word2Vec's "window"
 * variant): of skip-gram's blocks and, with B = 1 and h's step returned (hsw2v_cbow_walk),
 * of CBOW's hidden vector.
 *
 * In skip-gram every context word of a window is trained against the same path, the centre
 * word's. word2vec.c walks the path once per context; node j of the path is read and written
 * by every context in turn. Here a block of B <= HSW2V_MAX_BLOCK contexts walks the path in
 * three phases (per segment of up to HSW2V_WINDOW_SEGMENT nodes):
 *
 *   1. the dot products x_b . y_j of every node of the segment, with B accumulators;
 *   2. the coefficients g_bj, node by node: within a node each context's waits for the ones
 *      before it (Gram terms, below), but the nodes' chains of table lookups are independent,
 *      so the CPU overlaps them instead of waiting on each in turn;
 *   3. the updates, element range by element range (a 16-, 8- or 4-float piece, or one
 *      float; CBOW's h, a group of up to 8 pieces): the B context pieces and their
 *      B work pieces stay in registers while the nodes go by, each node piece loaded and
 *      stored once. After the path's last segment the context rows take their step from the
 *      same registers, so the work rows are touched only where a path is longer than a
 *      segment.
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
 * scratch rows of d floats (the steps carried from one segment to the next), code[j] the
 * path's bits, g = (1 - code - sigmoid(f)) * alpha (sigmoid: the NaN-safe table lookup of
 * math/_vec.h). This g keeps word2vec.c's sign and float32 arithmetic: it is -alpha * dL/df of
 * the reference's convention (dL/df = sigmoid(f) - (1 - code)), the same number bit for bit,
 * since IEEE subtraction and multiplication are exact under negation.
 */
#ifndef HSW2V_WINDOW_H
#define HSW2V_WINDOW_H

#include <math.h>
#include <stdint.h>

#include "../math/_loss.h"
#include "../math/_vec.h"

/* Without vector extensions (MSVC; see math/_vec.h) the vector steps are empty (d4 = 0) and the
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

/* Widths: rows are cut into vector steps as in math/_vec.h (16 floats at the avx512 level, then 8;
 * element-wise updates then one 4-float step; scalar tails). Each dot-product step width W has
 * its own B accumulators (AW) and its own range [K0, K1) of the row; the passes below are
 * written once per step as macros over the vector type. Each dot product ends as math/_vec.h's do
 * ("Widths"): a 4-float step into its 8-float accumulator over [d8, d4), the vector sum, then
 * [d4, d) in straight-line code; the element-wise updates of [d8, d4) take a 4-float step.
 * Without vector extensions every vector range is empty and the scalar loops cover all d. */
/* Nodes per segment: the walk takes the path in segments of up to this many nodes, so that
 * the per-node scalars (f, g) fit fixed arrays whatever the path's length; paths of the
 * vocabularies people train (depth 40 at most for word2vec.c) take one or two. */
#define HSW2V_WINDOW_SEGMENT 32

#ifdef HSW2V_VECTOR
/* AW[b] += x[b] . y over [K0, K1) in steps of W */
#define HSW2V_DOTS_STEP(VT, LD, W, AW, K0, K1, y_row)                           \
    for (int k = (K0); k < (K1); k += (W)) {                                    \
        VT yv = LD((y_row) + k);                                                \
        for (int b = 0; b < B; b++) AW[b] += LD(x[b] + k) * yv;                 \
    }
#ifdef HSW2V_V16
#define HSW2V_ZERO16() for (int b = 0; b < B; b++) acc16[b] = (hsw2v_v16){0}
#define HSW2V_DOTS16(y_row) HSW2V_DOTS_STEP(hsw2v_v16, HSW2V_LOAD16, 16, acc16, 0, d16, y_row)
#define HSW2V_FOLD16(b) hsw2v_fold16(acc16[b])
#define HSW2V_SEGMENT_STEP16() \
    HSW2V_SEGMENT_STEPS(hsw2v_v16, HSW2V_LOAD16, HSW2V_STORE16, 16, 0, d16)
#else
#define HSW2V_ZERO16() ((void)0)
#define HSW2V_DOTS16(y_row) ((void)0)
#define HSW2V_FOLD16(b) ((hsw2v_v8){0})
#define HSW2V_SEGMENT_STEP16() ((void)0)
#endif
/* all accumulators to zero, then the vector steps of y_row's dots with the B rows */
#define HSW2V_BLOCK_DOTS(y_row)                                                 \
    do {                                                                        \
        HSW2V_ZERO16();                                                         \
        for (int b = 0; b < B; b++) acc8[b] = (hsw2v_v8){0};                    \
        HSW2V_DOTS16(y_row);                                                    \
        HSW2V_DOTS_STEP(hsw2v_v8, HSW2V_LOAD, 8, acc8, d16, d8, y_row)          \
    } while (0)
/* out = xr . yr from its 8-float accumulator A8 and its folded 16-float one (FOLD16): the
 * 4-float tail step when d mod 8 >= 4 (as hsw2v_dot ends), the vector sum, then the last
 * d mod 4 floats in order */
#define HSW2V_FINISH_DOT(out, A8, FOLD16, xr, yr)                               \
    do {                                                                        \
        if (d4 > d8)                                                            \
            A8 += HSW2V_LOAD4_WIDE((xr) + d8) * HSW2V_LOAD4_WIDE((yr) + d8);    \
        (out) = hsw2v_dot_rest(d4, d, (xr), (yr), hsw2v_hsum((FOLD16) + A8));   \
    } while (0)
/* out = x_b . y_row from the block's accumulators of row b */
#define HSW2V_DOT_END(out, b, y_row) \
    HSW2V_FINISH_DOT(out, acc8[b], HSW2V_FOLD16(b), x[b], y_row)
/* the Gram terms G[b][b'] = x_b . x_b' (b' < b) in one pass over the B rows: each piece of
 * a row loaded once for all its pairs, an accumulator per pair (per step width), each dot
 * ended by HSW2V_FINISH_DOT */
#define HSW2V_GRAM_STEP(VT, LD, W, AW, K0, K1)                                  \
    for (int k = (K0); k < (K1); k += (W)) {                                    \
        VT xv[HSW2V_MAX_BLOCK];                                                 \
        HSW2V_UNROLL_BLOCK                                                      \
        for (int b = 0; b < B; b++) {                                           \
            xv[b] = LD(x[b] + k);                                               \
            HSW2V_UNROLL_BLOCK                                                  \
            for (int b2 = 0; b2 < b; b2++) AW[b][b2] += xv[b] * xv[b2];         \
        }                                                                       \
    }
#ifdef HSW2V_V16
#define HSW2V_GRAM16()                                                          \
    hsw2v_v16 g16[HSW2V_MAX_BLOCK][HSW2V_MAX_BLOCK];                            \
    for (int b = 0; b < B; b++)                                                 \
        for (int b2 = 0; b2 < b; b2++) g16[b][b2] = (hsw2v_v16){0};             \
    HSW2V_GRAM_STEP(hsw2v_v16, HSW2V_LOAD16, 16, g16, 0, d16)
#define HSW2V_GRAM_FOLD16(b, b2) hsw2v_fold16(g16[b][b2])
#else
#define HSW2V_GRAM16() ((void)0)
#define HSW2V_GRAM_FOLD16(b, b2) ((hsw2v_v8){0})
#endif
#define HSW2V_GRAM(G)                                                           \
    do {                                                                        \
        hsw2v_v8 g8[HSW2V_MAX_BLOCK][HSW2V_MAX_BLOCK];                          \
        HSW2V_GRAM16();                                                         \
        for (int b = 0; b < B; b++)                                             \
            for (int b2 = 0; b2 < b; b2++) g8[b][b2] = (hsw2v_v8){0};           \
        HSW2V_GRAM_STEP(hsw2v_v8, HSW2V_LOAD, 8, g8, d16, d8)                   \
        for (int b = 0; b < B; b++)                                             \
            for (int b2 = 0; b2 < b; b2++)                                      \
                HSW2V_FINISH_DOT(G[b][b2], g8[b][b2], HSW2V_GRAM_FOLD16(b, b2), x[b], x[b2]); \
    } while (0)
#else
#define HSW2V_GRAM(G)                                                           \
    for (int b = 0; b < B; b++)                                                 \
        for (int b2 = 0; b2 < b; b2++) G[b][b2] = hsw2v_dot(d, x[b], x[b2])
#define HSW2V_BLOCK_DOTS(y_row) ((void)0)
#define HSW2V_DOT_END(out, b, y_row) ((out) = hsw2v_dot(d, x[b], (y_row)))
#endif
/* A segment's updates over [K0, K1) in steps of W floats (VT, loaded by LD, stored by ST),
 * element range by element range: the B context pieces and their B work pieces stay in
 * registers while the segment's n nodes go by, each node piece read and written once:
 *
 *     work_b += g_bj y_j;   y_j += sum_b g_bj x_b          (j in order, b in order)
 *
 * After the path's last segment the context pieces get their step (the old x_b' are still
 * in registers): x_b += lock_b (work_b + sum_{b'<b} mix_bb' x_b'), where ``apply``; before
 * it (or without ``apply``) the work pieces go to the work rows, where the next segment, or
 * the caller, takes them up. */
#define HSW2V_SEGMENT_STEP(VT, LD, ST, W, K0, K1)                               \
    for (int k = (K0); k < (K1); k += (W)) {                                    \
        VT xv[HSW2V_MAX_BLOCK], wv[HSW2V_MAX_BLOCK];                            \
        for (int b = 0; b < B; b++) {                                           \
            xv[b] = LD(x[b] + k);                                               \
            wv[b] = j0 == 0 ? (VT){0} : LD(work[b] + k);                        \
        }                                                                       \
        for (int j = 0; j < n; j++) {                                           \
            float *yk = y[j0 + j] + k;                                          \
            VT r = LD(yk), step = r;                                            \
            HSW2V_UNROLL_BLOCK                                                  \
            for (int b = 0; b < B; b++) {                                       \
                wv[b] += g[j][b] * r;                                           \
                step += g[j][b] * xv[b];                                        \
            }                                                                   \
            ST(yk, step);                                                       \
        }                                                                       \
        if (last && apply) {                                                    \
            for (int b = 0; b < B; b++) {                                       \
                VT t = wv[b];                                                   \
                for (int b2 = 0; b2 < b; b2++) t += mix[b][b2] * xv[b2];        \
                ST(x[b] + k, xv[b] + (lock ? lock[b] : 1.0f) * t);              \
            }                                                                   \
        } else {                                                                \
            for (int b = 0; b < B; b++) ST(work[b] + k, wv[b]);                 \
        }                                                                       \
    }

/* One h that is not moved (B = 1 without ``apply``: CBOW's h, FastText's skip-gram h;
 * ``hsw2v_cbow_walk``): the same updates as HSW2V_SEGMENT_STEP, element by element in the
 * same order, but up to HSW2V_SEGMENT_PIECES vector pieces of the row at once. Their work
 * pieces stay in registers while the nodes go by, so the pieces' chains of work += g y
 * overlap, and the loop over the nodes, whose count changes with every path (a mispredicted
 * exit each time), runs once per group of pieces instead of once per piece. Skip-gram's
 * blocks keep HSW2V_SEGMENT_STEP: with several contexts the compiler may regroup a node's
 * sum over them (-fassociative-math) differently in another loop shape, which changes the
 * bits, and a block of one measured no faster in whole training. */
#if defined(__AVX512F__)
#define HSW2V_SEGMENT_PIECES 8 /* 8 h and 8 work pieces: half of the 32 registers */
#elif defined(__AVX__)
#define HSW2V_SEGMENT_PIECES 6 /* 12 of the 16 registers */
#else
#define HSW2V_SEGMENT_PIECES 3 /* an 8-float piece takes two SSE registers */
#endif
#define HSW2V_SEGMENT_GROUP(VT, LD, ST, W, NP)                                  \
    do {                                                                        \
        VT xv[NP], wv[NP];                                                      \
        for (int c = 0; c < (NP); c++) {                                        \
            xv[c] = LD(x[0] + k + c * (W));                                     \
            wv[c] = j0 == 0 ? (VT){0} : LD(work[0] + k + c * (W));              \
        }                                                                       \
        for (int j = 0; j < n; j++) {                                           \
            float *yk = y[j0 + j] + k;                                          \
            const float gj = g[j][0];                                           \
            for (int c = 0; c < (NP); c++) {                                    \
                VT r = LD(yk + c * (W)), step = r;                              \
                wv[c] += gj * r;                                                \
                step += gj * xv[c];                                             \
                ST(yk + c * (W), step);                                         \
            }                                                                   \
        }                                                                       \
        for (int c = 0; c < (NP); c++) ST(work[0] + k + c * (W), wv[c]);       \
    } while (0)
#if HSW2V_SEGMENT_PIECES >= 6
#define HSW2V_SEGMENT_GROUP_CASES(VT, LD, ST, W)                                \
    case 8: HSW2V_SEGMENT_GROUP(VT, LD, ST, W, 8); break;                       \
    case 7: HSW2V_SEGMENT_GROUP(VT, LD, ST, W, 7); break;                       \
    case 6: HSW2V_SEGMENT_GROUP(VT, LD, ST, W, 6); break;                       \
    case 5: HSW2V_SEGMENT_GROUP(VT, LD, ST, W, 5); break;                       \
    case 4: HSW2V_SEGMENT_GROUP(VT, LD, ST, W, 4); break;
#else
#define HSW2V_SEGMENT_GROUP_CASES(VT, LD, ST, W)
#endif
/* [K0, K1) in steps of W: CBOW's h in groups of pieces, else HSW2V_SEGMENT_STEP */
#define HSW2V_SEGMENT_STEPS(VT, LD, ST, W, K0, K1)                              \
    if (B == 1 && !apply) {                                                     \
        for (int k = (K0); k < (K1);) {                                         \
            int np = ((K1) - k) / (W);                                          \
            if (np > HSW2V_SEGMENT_PIECES)                                      \
                np = HSW2V_SEGMENT_PIECES;                                      \
            switch (np) {                                                       \
                HSW2V_SEGMENT_GROUP_CASES(VT, LD, ST, W)                        \
                case 3: HSW2V_SEGMENT_GROUP(VT, LD, ST, W, 3); break;           \
                case 2: HSW2V_SEGMENT_GROUP(VT, LD, ST, W, 2); break;           \
                default: HSW2V_SEGMENT_GROUP(VT, LD, ST, W, 1); break;          \
            }                                                                   \
            k += np * (W);                                                      \
        }                                                                       \
    } else {                                                                    \
        HSW2V_SEGMENT_STEP(VT, LD, ST, W, K0, K1)                               \
    }

/* ``tally``: the loss tally the block's terms go to, or NULL for none; the callers below
 * pass it as a constant NULL or as a pointer tested non-NULL just before, so that the no-loss
 * specialisations hold no loss code at all. ``apply`` (a constant at every call): 1, the
 * context rows take their steps (skip-gram); 0, they are not moved and their steps are left
 * in the work rows (CBOW's h, B = 1). */
HSW2V_ALWAYS_INLINE void hsw2v_sg_block_n(
    const int B, int d, float *const *x, float *const *work, int L, float *const *y,
    const uint8_t *code, float alpha, const hsw2v_sigmoid_table *sig, hsw2v_loss_acc *tally,
    double *check, const float *lock, const int apply) {
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
    float K[HSW2V_MAX_BLOCK][HSW2V_MAX_BLOCK], mix[HSW2V_MAX_BLOCK][HSW2V_MAX_BLOCK];
    /* per node of the segment: x_b . y_j, then the coefficients g_bj */
    float f[HSW2V_WINDOW_SEGMENT][HSW2V_MAX_BLOCK], g[HSW2V_WINDOW_SEGMENT][HSW2V_MAX_BLOCK];
    double fsum = 0.0;

    HSW2V_GRAM(K);
    for (int b = 0; b < B; b++)
        for (int b2 = 0; b2 < b; b2++)
            mix[b][b2] = 0.0f;
    if (L < 1 && !apply) /* an empty path (no tree builds one): the steps are 0 */
        for (int b = 0; b < B; b++)
            for (int k = 0; k < d; k++)
                work[b][k] = 0.0f;
    for (int j0 = 0; j0 < L; j0 += HSW2V_WINDOW_SEGMENT) {
        const int n = L - j0 < HSW2V_WINDOW_SEGMENT ? L - j0 : HSW2V_WINDOW_SEGMENT;
        const int last = j0 + n == L;
        /* the segment's dot products, before any of its updates (a path's rows are
         * distinct, and no update of this walk moves a context row before its end) */
        for (int j = 0; j < n; j++) {
            HSW2V_BLOCK_DOTS(y[j0 + j]);
            for (int b = 0; b < B; b++)
                HSW2V_DOT_END(f[j][b], b, y[j0 + j]);
        }
        /* the coefficients: within a node, each context's waits for the ones before it
         * (the Gram terms); the nodes' chains are independent of each other, so the CPU
         * overlaps them */
        for (int j = 0; j < n; j++) {
            const float label = (float)(1 - code[j0 + j]);
            const float *residual = sig->residual[code[j0 + j] != 0]; /* label - s */
            HSW2V_UNROLL_BLOCK
            for (int b = 0; b < B; b++) {
                float fb = f[j][b];
                HSW2V_UNROLL_BLOCK
                for (int b2 = 0; b2 < b; b2++)
                    fb += g[j][b2] * K[b][b2];
                if (tally)
                    hsw2v_tally_push(tally, (2.0f * label - 1.0f) * fb);
                g[j][b] = hsw2v_residual_coef(hsw2v_sigmoid_residual(sig, residual, label, fb),
                                              alpha);
                HSW2V_UNROLL_BLOCK
                for (int b2 = 0; b2 < b; b2++)
                    mix[b][b2] += g[j][b] * g[j][b2];
            }
        }
        /* the updates, element range by element range */
#ifdef HSW2V_VECTOR
        HSW2V_SEGMENT_STEP16();
        HSW2V_SEGMENT_STEPS(hsw2v_v8, HSW2V_LOAD, HSW2V_STORE, 8, d16, d8)
        HSW2V_SEGMENT_STEP(hsw2v_v4, HSW2V_LOAD4, HSW2V_STORE4, 4, d8, d4)
#endif
        HSW2V_SEGMENT_STEP(float, HSW2V_LOAD1, HSW2V_STORE1, 1, d4, d)
    }
    /* the divergence check, once per row and block: a NaN f at any node makes g_b NaN, hence
     * every entry of the updated x_b, or of work_b without apply (a NaN in x_b or in a node
     * row makes f NaN first) */
    for (int b = B - 1; b >= 0; b--)
        fsum += apply ? x[b][0] : work[b][0];
    *check += fsum;
}

/* Walk the path of one centre for B (1..HSW2V_MAX_BLOCK) distinct context rows; pushes the
 * -log-likelihood terms of the B (context, centre) pairs onto ``tally`` (a job's tally,
 * math/_loss.h), or none where ``tally`` is NULL. Adds the first entry of each updated context
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
    case 4: hsw2v_sg_block_n(4, d, x, work, L, y, code, alpha, sig, T, check, lock, 1); break; \
    case 3: hsw2v_sg_block_n(3, d, x, work, L, y, code, alpha, sig, T, check, lock, 1); break; \
    case 2: hsw2v_sg_block_n(2, d, x, work, L, y, code, alpha, sig, T, check, lock, 1); break; \
    default: hsw2v_sg_block_n(1, d, x, work, L, y, code, alpha, sig, T, check, lock, 1);      \
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

/* CBOW's walk of hierarchical softmax: its one hidden vector h walks the centre's path in the
 * block's three phases (B = 1: no Gram terms), the updates of the path rows as the reference
 * step's to float rounding. h is not moved: its step, -alpha * dL/dh over the old rows, is
 * left in ``work`` (d floats) for the caller to spread to the context rows. Pushes the
 * path's -log-likelihood terms onto ``tally`` (NULL: none) and adds work[0] to *check. */
static inline void hsw2v_cbow_walk(int d, float *h, float *work, int L, float *const *y,
                                   const uint8_t *code, float alpha,
                                   const hsw2v_sigmoid_table *sig, hsw2v_loss_acc *tally,
                                   double *check) {
    float *const x[1] = {h}, *const w[1] = {work};
    if (tally == NULL)
        hsw2v_sg_block_n(1, d, x, w, L, y, code, alpha, sig, NULL, check, NULL, 0);
    else
        hsw2v_sg_block_n(1, d, x, w, L, y, code, alpha, sig, tally, check, NULL, 0);
}

#endif /* HSW2V_WINDOW_H */
