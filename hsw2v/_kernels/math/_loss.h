/* The training loss tally of the kernels: -log sigmoid(y) summed over every node a walk
 * visits, computed eight terms at a time instead of one libm call pair per node.
 *
 * Why: the loss of one node, -log sigmoid(y) = max(-y, 0) + log1p(exp(-|y|)), costs an exp
 * and a log1p in float64 (about 40 ns with libm), while the node's update costs a few
 * nanoseconds; computed per node it made compute_loss=True cost 1.5-2x the training time.
 * Here a walk pushes each y into a small buffer (a store) and the buffer is reduced eight
 * values at a time with branch-free polynomials the compiler vectorises.
 *
 * Precision: y is a float32 score, so the term is computed in float32 arithmetic to about
 * 2e-7 relative error (a few ulp: float32's own rounding of y), and summed in float64.
 * exp: Cody-Waite range reduction exp(x) = 2^n exp(r), |r| <= ln2/2, and a degree-7 Taylor
 * polynomial (truncation error below 6e-9 relative). log1p(t), t = exp(-|y|) in (0, 1]:
 * where t >= 2^-12, not term by term but as the logarithm of a product, sum log1p(t_i) =
 * log prod (1 + t_i), the factors multiplied in float64 (1 + t is exact there for such t;
 * 64 factors in (1, 2] stay below 2^64, with a relative rounding below 1e-14); after each 64
 * the running product is split exactly into its binary exponent (an integer sum) and its
 * mantissa in [1, 2), so one libm log per tally total (per job) takes the logarithm of
 * them all, log m + e ln 2 (the product of n factors rounds by at most n 2^-53 relative:
 * an absolute error below 1e-9 in the loss for 10^7 terms); where t < 2^-12, the series
 * t - t^2/2 + t^3/3 (error
 * below t^3/4 relative, 2^-38) in float32. See e.g. J.-M. Muller, "Elementary Functions",
 * ch. 11 (range reduction). The product costs one multiply per term where the earlier form
 * (2 atanh(t / (2 + t)) by its odd series) cost a division and seven multiply-adds.
 * NaN: a NaN y gives a NaN sum (the kernels' divergence check reports such a job anyway).
 * Without vector extensions (MSVC, HSW2V_NO_VECTOR_EXT) the exact libm form is used.
 *
 * Usage: hsw2v_loss_acc a; hsw2v_loss_init(&a); hsw2v_loss_push(&a, y) per node;
 *        hsw2v_loss_total(&a) at the end of the walk.
 *        A job's tally, shared by its walks (so that every reduction but the job's last
 *        has 64 terms, where a walk's own tally reduces a short tail per walk):
 *        hsw2v_tally_push(&a, y) per node, hsw2v_loss_total(&a) at the end of the job. The
 *        reduction stays inline: a call in a walk's loop, even one never taken without
 *        compute_loss, may spill the loop's vector registers around it (all are
 *        caller-saved); with an out-of-line one (the window block on the job's tally too),
 *        skip-gram trained without compute_loss measured about 10 % slower. (The window
 *        block now has no-loss specialisations without any tally code, train/_window.h.)
 *        An acc must be initialised by hsw2v_loss_init (not by zeroing: prod starts at 1).
 * Cost (avx2 level, a C loop of pushes): about 1.9 ns a term, 1.2 ns of it the reduction.
 */
#ifndef HSW2V_LOSS_H
#define HSW2V_LOSS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_vec.h"

#define HSW2V_LOSS_BUF 64 /* a multiple of 8 */

/* Forced inline: a walk's buffer is a local array, and once its address reaches a function
 * the compiler did not inline, the walk's float stores and loads may alias it; measured, that
 * cost the skip-gram window walk as much as the libm calls it replaces. */
#if defined(_MSC_VER)
#define HSW2V_LOSS_INLINE static __forceinline
#elif defined(__GNUC__) || defined(__clang__)
#define HSW2V_LOSS_INLINE static inline __attribute__((always_inline))
#else
#define HSW2V_LOSS_INLINE static inline
#endif

typedef struct {
    float y[HSW2V_LOSS_BUF]; /* pending arguments of -log sigmoid */
    int n;                   /* pending count */
    double sum;              /* the terms reduced so far, but for the log of the product: */
    double prod;             /* the factors 1 + t reduced so far are prod * 2^exps, */
    int64_t exps;            /* prod in [1, 2) (vector path; 1 and 0 otherwise) */
} hsw2v_loss_acc;

#ifdef HSW2V_VECTOR
#if defined(__AVX__)
#include <immintrin.h>
#endif
typedef int32_t hsw2v_v8i __attribute__((vector_size(32)));
typedef uint32_t hsw2v_v8u __attribute__((vector_size(32)));
typedef float hsw2v_v8a __attribute__((vector_size(32)));   /* aligned: local values only */
typedef float hsw2v_v4a __attribute__((vector_size(16)));
/* Four doubles, not eight: an 8-double vector is wider than AVX2's registers, and GCC 12
 * moved its halves through the stack and general registers on every update (it made the
 * reduction cost 2.4 ns a term on the avx2 level). */
typedef double hsw2v_v4d __attribute__((vector_size(32)));

/* The low and high halves of eight floats, converted to double (out[0]: lanes 0-3, out[1]:
 * 4-7; through a pointer: a 32-byte vector return value changes the ABI without AVX). With
 * AVX the instructions themselves (vcvtps2pd ymm, vextractf128): GCC 12 compiles
 * __builtin_convertvector of four floats to four doubles as two 2-lane conversions and a lane
 * insert. */
HSW2V_LOSS_INLINE void hsw2v_halves4d(hsw2v_v8a v, hsw2v_v4d out[2]) {
#if defined(__AVX__)
    out[0] = (hsw2v_v4d)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)v));
    out[1] = (hsw2v_v4d)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)v, 1));
#else
    hsw2v_v4a h[2];
    memcpy(h, &v, sizeof(h));
    out[0] = __builtin_convertvector(h[0], hsw2v_v4d);
    out[1] = __builtin_convertvector(h[1], hsw2v_v4d);
#endif
}

/* Eight terms -log sigmoid(y[k]) = max(z, 0) + log1p(exp(-|z|)), z = -y: acc += max(z, 0)
 * and the small log1p terms (t < 2^-12), prod *= 1 + t for the others, in float64. Where
 * |z| > 87, exp(-|z|) is below float32's smallest normal number and the log part (< 1.7e-38)
 * is taken as 0: so a lane holding y = +inf adds 0 and multiplies by 1 (the padding). */
HSW2V_LOSS_INLINE void hsw2v_loss_terms8(const float *yp, hsw2v_v4d acc[2], hsw2v_v4d prod[2]) {
    hsw2v_v8a y, zero = {0};
    memcpy(&y, yp, sizeof(y));
    hsw2v_v8a z = -y;
    hsw2v_v8a lin = (hsw2v_v8a)((hsw2v_v8i)z & (z > 0.0f));      /* max(z, 0); NaN: 0 */
    hsw2v_v8a x = (hsw2v_v8a)((hsw2v_v8u)z | 0x80000000u);       /* -|z|; NaN stays NaN */
    hsw2v_v8i low = x < -87.0f;                                  /* exp(-87) ~ FLT_MIN */
    x = (hsw2v_v8a)(((hsw2v_v8i)x & ~low) | ((hsw2v_v8i)(zero - 87.0f) & low));
    /* n = round(x / ln2) (x <= 0: truncating x / ln2 - 0.5 rounds it), r = x - n ln2 with
     * ln2 split in two (Cody-Waite), |r| <= ln2 / 2 */
    hsw2v_v8i n = __builtin_convertvector(x * 1.44269504088896341f - 0.5f, hsw2v_v8i);
    hsw2v_v8a nf = __builtin_convertvector(n, hsw2v_v8a);
    hsw2v_v8a r = (x - nf * 0.693359375f) + nf * 2.12194440e-4f;
    hsw2v_v8a p = zero + 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    hsw2v_v8a t = p * (hsw2v_v8a)(((hsw2v_v8u)(n + 127)) << 23);  /* exp(x), in (0, 1] */
    hsw2v_v8i small = t < 0.000244140625f;                        /* t < 2^-12 (NaN: no) */
    hsw2v_v8a series = t * (1.0f - t * (0.5f - t * (1.0f / 3.0f)));
    lin = lin + (hsw2v_v8a)((hsw2v_v8i)series & small & ~low);
    hsw2v_v8a big = (hsw2v_v8a)((hsw2v_v8i)t & ~small);          /* 0: a factor of 1 */
    hsw2v_v4d half[2];
    hsw2v_halves4d(lin, half); /* lanes 0-3 and 4-7, as one 8-lane sum */
    acc[0] += half[0];
    acc[1] += half[1];
    hsw2v_halves4d(big, half);
    prod[0] *= half[0] + 1.0;
    prod[1] *= half[1] + 1.0;
}

/* Reduce y[0:count) (count a multiple of 8) into a: a->sum += the linear and small terms,
 * the factors 1 + t into a->prod * 2^a->exps. The product of each chunk of 64 terms (8 lanes
 * of 8 factors in (1, 2]: below 2^64) is multiplied into a->prod in [1, 2), and the result
 * split exactly into its binary exponent (added to a->exps) and its mantissa (the new
 * a->prod), so that the one libm log of the whole product waits for hsw2v_loss_total. A NaN
 * product stays NaN (not split). */
HSW2V_LOSS_INLINE void hsw2v_loss_reduce(hsw2v_loss_acc *a, const float *y, int count) {
    hsw2v_v4d acc[2] = {{0}, {0}}, prod[2];
    double product;
    uint64_t bits;
    int i = 0;
    while (i < count) {
        int stop = i + 64 < count ? i + 64 : count;
        prod[0] = prod[1] = (hsw2v_v4d){1, 1, 1, 1};
        for (; i < stop; i += 8)
            hsw2v_loss_terms8(y + i, acc, prod);
        product = a->prod;
        for (int k = 0; k < 8; k++)
            product *= prod[k >> 2][k & 3];
        memcpy(&bits, &product, sizeof(bits));
        if (((bits >> 52) & 0x7ff) != 0x7ff) {  /* a normal number >= 1 (else NaN) */
            a->exps += (int64_t)(bits >> 52) - 1023;
            bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
            memcpy(&product, &bits, sizeof(bits));
        }
        a->prod = product;
    }
    for (int k = 0; k < 8; k++)
        a->sum += acc[k >> 2][k & 3];
}

/* The buffer's pending terms: its tail up to the next multiple of 8 padded with +inf (terms
 * of 0), then reduced into a. */
HSW2V_LOSS_INLINE void hsw2v_loss_flush(hsw2v_loss_acc *a, float *y, int count) {
    for (; count & 7; count++)
        y[count] = INFINITY;
    hsw2v_loss_reduce(a, y, count);
}
#else
HSW2V_LOSS_INLINE void hsw2v_loss_flush(hsw2v_loss_acc *a, float *y, int count) {
    for (int i = 0; i < count; i++)
        a->sum += hsw2v_neg_log_sigmoid((double)y[i]);
}
#endif

HSW2V_LOSS_INLINE void hsw2v_loss_init(hsw2v_loss_acc *a) {
    a->n = 0;
    a->sum = 0.0;
    a->prod = 1.0;
    a->exps = 0;
}

/* Queue the term -log sigmoid(y). */
HSW2V_LOSS_INLINE void hsw2v_loss_push(hsw2v_loss_acc *a, float y) {
    a->y[a->n++] = y;
    if (a->n == HSW2V_LOSS_BUF) {
        hsw2v_loss_flush(a, a->y, a->n);
        a->n = 0;
    }
}

/* Queue the term -log sigmoid(y) on a job's tally (the same steps as hsw2v_loss_push, on a
 * buffer that outlives the walk). */
HSW2V_LOSS_INLINE void hsw2v_tally_push(hsw2v_loss_acc *a, float y) {
    hsw2v_loss_push(a, y);
}

/* Every term pushed so far, summed. */
HSW2V_LOSS_INLINE double hsw2v_loss_total(hsw2v_loss_acc *a) {
    if (a->n) {
        hsw2v_loss_flush(a, a->y, a->n);
        a->n = 0;
    }
    return a->sum + (log(a->prod) + (double)a->exps * 0.69314718055994530942);
}

/* sum_i -log sigmoid(y[i]) for i < count, in float64 (any array). */
HSW2V_LOSS_INLINE double hsw2v_neg_log_sigmoid_sum(const float *y, int count) {
    hsw2v_loss_acc a;
    hsw2v_loss_init(&a);
#ifdef HSW2V_VECTOR
    int whole = count & ~7;
    hsw2v_loss_reduce(&a, y, whole);
    if (whole < count) {
        memcpy(a.y, y + whole, (size_t)(count - whole) * sizeof(float));
        a.n = count - whole;
    }
#else
    hsw2v_loss_flush(&a, (float *)y, count);
#endif
    return hsw2v_loss_total(&a);
}

#endif /* HSW2V_LOSS_H */
