/* The two passes of the shared-negatives block (hsw2v/_kernels/train/_ns_shared.pxd): one context row h
 * against the few rows of one (target, negatives) set, each pass reading h once.
 *
 *   hsw2v_multi_dot:       f[k] = h . rows[k] for every row of the set
 *   hsw2v_shared_update:   rows[k] += a[k] h (h as it was), h += lock * sum_k a[k] rows[k]
 *                          (each row as it was before its own step)
 *
 * The pair-by-pair walk reads h, a row and the error vector once per row of the set; here a
 * context row is read twice per set, whatever its size, and the set's rows stay in the
 * first-level cache across the centre's contexts. Same vector types and
 * fallbacks as math/_vec.h (plain loops without GCC/Clang vector extensions). */
#ifndef HSW2V_NS_SHARED_H
#define HSW2V_NS_SHARED_H

#include "../math/_vec.h"

/* f[k] = h . rows[k], k < n; rows taken four at a time (four accumulators per pass). */
static inline void hsw2v_multi_dot(int d, const float *h, float *const *rows, int n, float *f) {
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        const float *r0 = rows[k], *r1 = rows[k + 1], *r2 = rows[k + 2], *r3 = rows[k + 3];
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        int q = 0;
#ifdef HSW2V_VECTOR
        hsw2v_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (; q + 8 <= d; q += 8) {
            hsw2v_v8 hv = HSW2V_LOAD(h + q);
            a0 += hv * HSW2V_LOAD(r0 + q);
            a1 += hv * HSW2V_LOAD(r1 + q);
            a2 += hv * HSW2V_LOAD(r2 + q);
            a3 += hv * HSW2V_LOAD(r3 + q);
        }
        if (q + 4 <= d) { /* hsw2v_dot's 4-float tail step, and its last floats below */
            hsw2v_v8 hv = HSW2V_LOAD4_WIDE(h + q);
            a0 += hv * HSW2V_LOAD4_WIDE(r0 + q);
            a1 += hv * HSW2V_LOAD4_WIDE(r1 + q);
            a2 += hv * HSW2V_LOAD4_WIDE(r2 + q);
            a3 += hv * HSW2V_LOAD4_WIDE(r3 + q);
            q += 4;
        }
        s0 = hsw2v_dot_rest(q, d, h, r0, hsw2v_hsum(a0));
        s1 = hsw2v_dot_rest(q, d, h, r1, hsw2v_hsum(a1));
        s2 = hsw2v_dot_rest(q, d, h, r2, hsw2v_hsum(a2));
        s3 = hsw2v_dot_rest(q, d, h, r3, hsw2v_hsum(a3));
#else
        for (; q < d; q++) {
            s0 += h[q] * r0[q];
            s1 += h[q] * r1[q];
            s2 += h[q] * r2[q];
            s3 += h[q] * r3[q];
        }
#endif
        f[k] = s0;
        f[k + 1] = s1;
        f[k + 2] = s2;
        f[k + 3] = s3;
    }
    for (; k < n; k++)
        f[k] = hsw2v_dot(d, h, rows[k]);
}

/* One pass over h, k = 0 .. n-1 in order: w += a[k] * rows[k][q] (the row before its step),
 * rows[k][q] += a[k] * h[q] (the old h); then h[q] += lock * w. A row listed twice (a word
 * drawn twice) is read by its second entry with the first entry's step, as a pair-by-pair
 * walk that steps each row in turn. (h does not overlap the rows.) */
static inline void hsw2v_shared_update(int d, float *h, float lock, float *const *rows,
                                       const float *a, int n) {
    int q = 0;
#ifdef HSW2V_VECTOR
    for (; q + 8 <= d; q += 8) {
        hsw2v_v8 hv = HSW2V_LOAD(h + q), w = {0};
        for (int k = 0; k < n; k++) {
            hsw2v_v8 r = HSW2V_LOAD(rows[k] + q);
            w += a[k] * r;
            HSW2V_STORE(rows[k] + q, r + a[k] * hv);
        }
        HSW2V_STORE(h + q, hv + lock * w);
    }
#endif
    for (; q < d; q++) {
        float hq = h[q];
        h[q] = hq + lock * hsw2v_set_step_at(q, hq, rows, a, n);
    }
}

#endif /* HSW2V_NS_SHARED_H */
