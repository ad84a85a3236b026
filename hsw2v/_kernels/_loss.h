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
 * 64 factors in (1, 2] stay below 2^64, with a relative rounding below 1e-14) and one libm
 * log per reduction of up to 64 terms; where t < 2^-12, the series t - t^2/2 + t^3/3 (error
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
 *        skip-gram trained without compute_loss measured about 10 % slower.
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
    double sum;              /* the terms reduced so far */
} hsw2v_loss_acc;

#ifdef HSW2V_VECTOR
typedef int32_t hsw2v_v8i __attribute__((vector_size(32)));
typedef uint32_t hsw2v_v8u __attribute__((vector_size(32)));
typedef float hsw2v_v8a __attribute__((vector_size(32)));   /* aligned: local values only */
typedef double hsw2v_v8d __attribute__((vector_size(64)));

/* Eight terms -log sigmoid(y[k]) = max(z, 0) + log1p(exp(-|z|)), z = -y: acc += max(z, 0)
 * and the small log1p terms (t < 2^-12), prod *= 1 + t for the others, in float64; lanes at
 * or past ``valid`` add 0 and multiply by 1. Where |z| > 87, exp(-|z|) is below float32's
 * smallest normal number and the log part (< 1.7e-38) is taken as 0. */
HSW2V_LOSS_INLINE void hsw2v_loss_terms8(const float *yp, int valid, hsw2v_v8d *acc,
                                         hsw2v_v8d *prod) {
    const hsw2v_v8i lane = {0, 1, 2, 3, 4, 5, 6, 7};
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
    hsw2v_v8i keep = lane < valid;
    hsw2v_v8i small = t < 0.000244140625f;                        /* t < 2^-12 (NaN: no) */
    hsw2v_v8a series = t * (1.0f - t * (0.5f - t * (1.0f / 3.0f)));
    lin = lin + (hsw2v_v8a)((hsw2v_v8i)series & small & ~low);
    lin = (hsw2v_v8a)((hsw2v_v8i)lin & keep);
    hsw2v_v8a big = (hsw2v_v8a)((hsw2v_v8i)t & ~small & keep);   /* 0: a factor of 1 */
    *acc += __builtin_convertvector(lin, hsw2v_v8d);
    *prod *= __builtin_convertvector(big, hsw2v_v8d) + 1.0;
}

/* sum_i -log sigmoid(y[i]) for i < count, in float64; ``y`` is readable up to count rounded
 * up to a multiple of 8 (lanes past count are masked). */
HSW2V_LOSS_INLINE double hsw2v_loss_reduce(const float *y, int count) {
    hsw2v_v8d acc = {0}, prod;
    double s = 0.0, product;
    int i = 0;
    while (i < count) {
        /* at most 8 rows of 8 factors in (1, 2] per lane: 64 factors below 2^64 in all */
        int stop = i + 64 < count ? i + 64 : count;
        prod = (hsw2v_v8d){1, 1, 1, 1, 1, 1, 1, 1};
        for (; i < stop; i += 8)
            hsw2v_loss_terms8(y + i, stop - i, &acc, &prod);
        product = 1.0;
        for (int k = 0; k < 8; k++)
            product *= prod[k];
        s += log(product);
    }
    for (int k = 0; k < 8; k++)
        s += acc[k];
    return s;
}

/* sum_i -log sigmoid(y[i]) for i < count, in float64 (any array: its tail is copied). */
HSW2V_LOSS_INLINE double hsw2v_neg_log_sigmoid_sum(const float *y, int count) {
    float pad[8];
    int whole = count & ~7;
    double s = whole ? hsw2v_loss_reduce(y, whole) : 0.0;
    if (whole < count) {
        memset(pad, 0, sizeof(pad));
        memcpy(pad, y + whole, (size_t)(count - whole) * sizeof(float));
        s += hsw2v_loss_reduce(pad, count - whole);
    }
    return s;
}

/* The buffer's pending terms: its tail up to the next multiple of 8 zeroed, then reduced. */
HSW2V_LOSS_INLINE double hsw2v_loss_flush(float *y, int count) {
    for (int k = count; k & 7; k++)
        y[k] = 0.0f;
    return hsw2v_loss_reduce(y, count);
}
#else
HSW2V_LOSS_INLINE double hsw2v_neg_log_sigmoid_sum(const float *y, int count) {
    double s = 0.0;
    for (int i = 0; i < count; i++)
        s += hsw2v_neg_log_sigmoid((double)y[i]);
    return s;
}
#define hsw2v_loss_flush hsw2v_neg_log_sigmoid_sum
#endif

HSW2V_LOSS_INLINE void hsw2v_loss_init(hsw2v_loss_acc *a) {
    a->n = 0;
    a->sum = 0.0;
}

/* Queue the term -log sigmoid(y). */
HSW2V_LOSS_INLINE void hsw2v_loss_push(hsw2v_loss_acc *a, float y) {
    a->y[a->n++] = y;
    if (a->n == HSW2V_LOSS_BUF) {
        a->sum += hsw2v_loss_flush(a->y, a->n);
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
        a->sum += hsw2v_loss_flush(a->y, a->n);
        a->n = 0;
    }
    return a->sum;
}

#endif /* HSW2V_LOSS_H */
