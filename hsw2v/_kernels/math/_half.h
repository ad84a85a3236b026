/* IEEE 754 binary16 ("half", NumPy's float16) to and from binary32, many values at once.
 *
 * Design note
 * A. What it gives. The distributed rounds send their row deltas as float16
 *    (hsw2v._dist_tasks, RunSpec.delta_dtype): each task narrows its deltas, the driver
 *    widens them to merge and narrows the merged update, every copy widens it again to add
 *    it. NumPy's casts convert one value at a time (about 3 ns each here); these convert a
 *    whole array, with the same results bit for bit: widening is exact; narrowing rounds to
 *    the nearest half, ties to even, overflows to infinity and keeps the sign of zero, as
 *    NumPy's cast does (IEEE 754's roundTiesToEven). A NaN stays a NaN (its payload bits
 *    may differ from NumPy's).
 * B. Two paths, one result. Where the CPU has F16C (x86 since 2012; checked at run time,
 *    so a baseline build uses it too), eight values convert per instruction
 *    (VCVTPS2PH with round-to-nearest-even, VCVTPH2PS). Elsewhere a portable scalar
 *    conversion: normal halves by adding the exponent bias and rounding the 13 dropped
 *    mantissa bits to even in integer arithmetic; subnormal halves by one float addition
 *    of a magic constant whose exponent puts the half's last mantissa bit at the float's
 *    last, so the FPU's own round-to-nearest-even rounds them (the method of F. Giesen,
 *    "Half to float done quick", 2013, and of NumPy's npy_floatbits_to_halfbits).
 *    Both need strict IEEE arithmetic: the module that includes this is built without
 *    fast-math (setup.py's STRICT).
 * C. Nothing here holds the GIL or any shared state.
 */
#ifndef HSW2V_HALF_H
#define HSW2V_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t hsw2v_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float hsw2v_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* one float32 to the nearest float16, ties to even (note B's scalar path) */
static inline uint16_t hsw2v_half_of(float value) {
    const uint32_t infinity = 255u << 23;
    const uint32_t too_big = (127u + 16u) << 23;  /* 2^16: rounds to infinity or is one */
    const uint32_t smallest_normal = 113u << 23;  /* 2^-14, the least normal half */
    /* 2^-1 as a float: adding it leaves a value below 2^-14 with its half's mantissa as
     * the float's last 10 bits, rounded to even by the addition itself */
    const uint32_t magic = 126u << 23;
    uint32_t u = hsw2v_f32_bits(value);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    uint16_t h;
    if (a >= too_big) {
        h = a > infinity ? 0x7e00u : 0x7c00u;  /* NaN stays a (quiet) NaN, else infinity */
    } else if (a < smallest_normal) {
        h = (uint16_t)(hsw2v_f32_bits(hsw2v_bits_f32(a) + hsw2v_bits_f32(magic)) - magic);
    } else {
        uint32_t odd = (a >> 13) & 1u;
        a += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;  /* rebias, round half to even */
        h = (uint16_t)(a >> 13);
    }
    return (uint16_t)(h | sign);
}

/* one float16 to float32, exactly */
static inline float hsw2v_single_of(uint16_t h) {
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1fu)  /* infinity or NaN */
        return hsw2v_bits_f32(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) {  /* zero or subnormal: mantissa x 2^-24, exact in float32 */
        float f = (float)mantissa * hsw2v_bits_f32(103u << 23);
        return hsw2v_bits_f32(hsw2v_f32_bits(f) | sign);
    }
    return hsw2v_bits_f32(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define HSW2V_HALF_F16C 1

__attribute__((target("avx,f16c"))) static void hsw2v_halves_f16c(const float *src,
                                                                   uint16_t *dst,
                                                                   int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    for (; i < n; i++)
        dst[i] = hsw2v_half_of(src[i]);
}

__attribute__((target("avx,f16c"))) static void hsw2v_singles_f16c(const uint16_t *src,
                                                                     float *dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++)
        dst[i] = hsw2v_single_of(src[i]);
}

static int hsw2v_has_f16c(void) {
    static int known = -1;
    if (known < 0)
        known = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
    return known;
}
#endif

/* the F16C path where the CPU has it and the caller did not ask for the portable one */
#ifdef HSW2V_HALF_F16C
#define HSW2V_HALF_FAST(fast, src, dst, n) \
    if (!portable && hsw2v_has_f16c()) {   \
        fast(src, dst, n);                 \
        return;                            \
    }
#else
#define HSW2V_HALF_FAST(fast, src, dst, n)
#endif

/* dst[i] = the float16 nearest src[i] (ties to even), i < n; ``portable``: the scalar
 * path even where F16C is there (its twin test) */
static inline void hsw2v_to_halves(const float *src, uint16_t *dst, int64_t n, int portable) {
    int64_t i;
    HSW2V_HALF_FAST(hsw2v_halves_f16c, src, dst, n)
    for (i = 0; i < n; i++)
        dst[i] = hsw2v_half_of(src[i]);
}

/* dst[i] = src[i] (float16) as float32, i < n (``portable``: as above) */
static inline void hsw2v_to_singles(const uint16_t *src, float *dst, int64_t n, int portable) {
    int64_t i;
    HSW2V_HALF_FAST(hsw2v_singles_f16c, src, dst, n)
    for (i = 0; i < n; i++)
        dst[i] = hsw2v_single_of(src[i]);
}

#undef HSW2V_HALF_FAST

#endif /* HSW2V_HALF_H */
