/* Skip-gram over one window as three small matrix products (register-blocked).
 *
 * In skip-gram every context word of a window is trained against the same path, the centre
 * word's. With X the C context rows (syn0) and Y the L path rows (syn1), one window is
 *
 *     S = X Y^T          (C x L scores)
 *     G = (1 - code - sigmoid(S)) * alpha        (computed by the caller)
 *     W = G Y            (C x d: each context's error, from the rows before this window)
 *     Y += G^T X         (L x d: each node's step, from the contexts before this window)
 *     X += W
 *
 * that is, every update of the window sees one snapshot of X and Y (the "HogBatch" scheme of
 * Ji et al., "Parallelizing Word2Vec in Shared and Distributed Memory", 2016, applied to
 * hierarchical softmax as in Simonton & Alaghband, HPEC 2017). word2vec.c instead lets
 * context c+1 see the path rows already moved by context c; the difference is of second
 * order in alpha.
 *
 * Why faster than pair by pair: each loaded chunk of a row feeds several multiply-adds held
 * in independent register accumulators (2 nodes x 4 contexts for S, 4 contexts x 2 chunks for
 * W, 2 nodes x 2 chunks for Y), the products have no serial dependency through the sigmoid,
 * and each row of X and Y is written once per window instead of once per pair.
 *
 * Rows are given as pointers (x[c], y[j]) into the weight matrices; rows of X may repeat
 * (a word twice in a window: both errors are added), rows of Y never do (a path visits
 * distinct nodes). Matrices S, G are row-major C x L with row stride `ls`; W is C x d.
 */
#ifndef HSW2V_WINDOW_H
#define HSW2V_WINDOW_H

#include "_vec.h"

#ifdef HSW2V_VECTOR

/* S[c*ls + j] = x[c] . y[j] for c < nc, j < nj (nc <= 4, nj <= 2); d multiple of 8 part
 * only, the tail is added by the caller's scalar loop. */
static inline __attribute__((always_inline)) void hsw2v_score_block(int d8, int nc, int nj, float *const *x,
                                     float *const *y, float *S, int ls) {
    hsw2v_v8 acc[2][4];
    for (int j = 0; j < 2; j++)
        for (int c = 0; c < 4; c++)
            acc[j][c] = (hsw2v_v8){0};
    for (int k = 0; k < d8; k += 8) {
        hsw2v_v8 yv[2], xv[4];
        for (int j = 0; j < nj; j++)
            yv[j] = HSW2V_LOAD(y[j] + k);
        for (int c = 0; c < nc; c++)
            xv[c] = HSW2V_LOAD(x[c] + k);
        for (int j = 0; j < nj; j++)
            for (int c = 0; c < nc; c++)
                acc[j][c] += xv[c] * yv[j];
    }
    for (int j = 0; j < nj; j++)
        for (int c = 0; c < nc; c++)
            S[c * ls + j] = hsw2v_hsum(acc[j][c]);
}

#define HSW2V_SCORE_CASE(NC, NJ) hsw2v_score_block(d8, NC, NJ, x + c, y + j, S + c * ls + j, ls)

#endif

/* S = X Y^T (C x L, row stride ls). */
static inline void hsw2v_scores(int d, int C, float *const *x, int L, float *const *y,
                                float *S, int ls) {
    int d8 = 0;
#ifdef HSW2V_VECTOR
    d8 = d & ~7;
    for (int j = 0; j < L; j += 2) {
        int nj = L - j < 2 ? L - j : 2;
        for (int c = 0; c < C; c += 4) {
            int nc = C - c < 4 ? C - c : 4;
            /* literal sizes let the compiler unroll the block and keep it in registers */
            if (nj == 2) {
                if (nc == 4) HSW2V_SCORE_CASE(4, 2);
                else if (nc == 3) HSW2V_SCORE_CASE(3, 2);
                else if (nc == 2) HSW2V_SCORE_CASE(2, 2);
                else HSW2V_SCORE_CASE(1, 2);
            } else {
                if (nc == 4) HSW2V_SCORE_CASE(4, 1);
                else if (nc == 3) HSW2V_SCORE_CASE(3, 1);
                else if (nc == 2) HSW2V_SCORE_CASE(2, 1);
                else HSW2V_SCORE_CASE(1, 1);
            }
        }
    }
#else
    for (int c = 0; c < C; c++)
        for (int j = 0; j < L; j++)
            S[c * ls + j] = 0.0f;
#endif
    if (d8 < d)
        for (int c = 0; c < C; c++)
            for (int j = 0; j < L; j++) {
                float s = 0.0f;
                for (int k = d8; k < d; k++)
                    s += x[c][k] * y[j][k];
                S[c * ls + j] += s;
            }
}

/* W[c] = sum_j G[c, j] y[j] (C x d, contiguous rows of length d). */
static inline void hsw2v_errors(int d, int C, int L, float *const *y, const float *G, int ls,
                                float *W) {
    int d8 = 0;
#ifdef HSW2V_VECTOR
    d8 = d & ~7;
    int c = 0;
    for (; c + 4 <= C; c += 4) {
        const float *g0 = G + c * ls, *g1 = g0 + ls, *g2 = g1 + ls, *g3 = g2 + ls;
        for (int k = 0; k < d8; k += 8) {
            hsw2v_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
            for (int j = 0; j < L; j++) {
                hsw2v_v8 yv = HSW2V_LOAD(y[j] + k);
                a0 += g0[j] * yv;
                a1 += g1[j] * yv;
                a2 += g2[j] * yv;
                a3 += g3[j] * yv;
            }
            HSW2V_STORE(W + c * d + k, a0);
            HSW2V_STORE(W + (c + 1) * d + k, a1);
            HSW2V_STORE(W + (c + 2) * d + k, a2);
            HSW2V_STORE(W + (c + 3) * d + k, a3);
        }
    }
    for (; c < C; c++) {
        const float *g0 = G + c * ls;
        int k = 0;
        for (; k + 16 <= d8; k += 16) {
            hsw2v_v8 a0 = {0}, a1 = {0};
            for (int j = 0; j < L; j++) {
                a0 += g0[j] * HSW2V_LOAD(y[j] + k);
                a1 += g0[j] * HSW2V_LOAD(y[j] + k + 8);
            }
            HSW2V_STORE(W + c * d + k, a0);
            HSW2V_STORE(W + c * d + k + 8, a1);
        }
        for (; k < d8; k += 8) {
            hsw2v_v8 a0 = {0};
            for (int j = 0; j < L; j++)
                a0 += g0[j] * HSW2V_LOAD(y[j] + k);
            HSW2V_STORE(W + c * d + k, a0);
        }
    }
#endif
    for (int c = 0; c < C; c++)
        for (int k = d8; k < d; k++) {
            float s = 0.0f;
            for (int j = 0; j < L; j++)
                s += G[c * ls + j] * y[j][k];
            W[c * d + k] = s;
        }
}

/* y[j] += sum_c G[c, j] x[c] for every node j. */
static inline void hsw2v_node_steps(int d, int C, float *const *x, int L, float *const *y,
                                    const float *G, int ls) {
    int d8 = 0;
#ifdef HSW2V_VECTOR
    d8 = d & ~7;
    int j = 0;
    for (; j + 2 <= L; j += 2) {
        float *y0 = y[j], *y1 = y[j + 1];
        for (int k = 0; k < d8; k += 8) {
            hsw2v_v8 a0 = HSW2V_LOAD(y0 + k), a1 = HSW2V_LOAD(y1 + k);
            for (int c = 0; c < C; c++) {
                hsw2v_v8 xv = HSW2V_LOAD(x[c] + k);
                a0 += G[c * ls + j] * xv;
                a1 += G[c * ls + j + 1] * xv;
            }
            HSW2V_STORE(y0 + k, a0);
            HSW2V_STORE(y1 + k, a1);
        }
    }
    for (; j < L; j++) {
        float *y0 = y[j];
        for (int k = 0; k < d8; k += 8) {
            hsw2v_v8 a0 = HSW2V_LOAD(y0 + k);
            for (int c = 0; c < C; c++)
                a0 += G[c * ls + j] * HSW2V_LOAD(x[c] + k);
            HSW2V_STORE(y0 + k, a0);
        }
    }
#endif
    for (int j = 0; j < L; j++)
        for (int k = d8; k < d; k++) {
            float s = y[j][k];
            for (int c = 0; c < C; c++)
                s += G[c * ls + j] * x[c][k];
            y[j][k] = s;
        }
}

#endif /* HSW2V_WINDOW_H */
