/* The walk of one h (train/_window.h's hsw2v_cbow_walk: CBOW's h, FastText skip-gram's h, PV-DM's)
 * timed alone, away from the job loop, on made-up rows; and this CPU's rate of 16- and 8-float
 * multiply-adds, the walk's own arithmetic. Built and run by walk_alone.py, which compiles it
 * with the shipped kernels' flags.
 *
 *   walk_alone walk R LMIN LMAX WALKS PAIRS D STRIDE
 *       R output rows of D floats (row 0 on every path, as a tree's root), paths of LMIN..LMAX
 *       rows, h moved by 0.05 x its step after each walk (as FastText's skip-gram moves h from
 *       one context to the next, so each walk waits for the one before); the same rows laid
 *       out D floats apart and STRIDE floats apart, timed in turn (PAIRS pairs of WALKS walks,
 *       thread CPU time), with the ns per node of each layout and the paired ratios.
 *   walk_alone fma
 *       independent chains of multiply-adds: how many 16-float (avx512 builds) and 8-float ones
 *       this core completes per ns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "train/_sigmoid.h"
#include "train/_window.h"

#define PATHS 4096
#define MAX_L 64

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    int d, lengths[PATHS], nodes[PATHS][MAX_L];
} Paths;

/* ns per node of `walks` walks over rows `stride` floats apart; the checks' sum into *check */
static double time_walks(const Paths *p, float *rows, int stride, long walks, const float *h0,
                         double *check) {
    static float h[4096] __attribute__((aligned(64))), work[4096] __attribute__((aligned(64)));
    float *y[MAX_L];
    uint8_t code[MAX_L];
    long nodes = 0;
    memcpy(h, h0, sizeof(float) * p->d);
    double start = cpu_seconds();
    for (long w = 0; w < walks; w++) {
        int q = (int)(w % PATHS), L = p->lengths[q];
        for (int j = 0; j < L; j++) {
            y[j] = rows + (long)p->nodes[q][j] * stride;
            code[j] = (uint8_t)((p->nodes[q][j] ^ w) & 1);
        }
        hsw2v_cbow_walk(p->d, h, work, L, y, code, 0.025f, &hsw2v_walk_sigmoid, NULL, check);
        for (int k = 0; k < p->d; k++)
            h[k] += 0.05f * work[k];
        nodes += L;
    }
    return (cpu_seconds() - start) / nodes * 1e9;
}

static int walk(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: walk_alone walk R LMIN LMAX WALKS PAIRS D STRIDE\n");
        return 2;
    }
    int R = atoi(argv[2]), lmin = atoi(argv[3]), lmax = atoi(argv[4]);
    long walks = atol(argv[5]);
    int pairs = atoi(argv[6]), d = atoi(argv[7]), stride = atoi(argv[8]);
    if (R < 1 || lmin < 1 || lmax < lmin || lmax > MAX_L || pairs < 1 || pairs > 1000 || d < 1
        || d > 4096 || stride < d) {
        fprintf(stderr, "walk_alone: bad arguments\n");
        return 2;
    }
    static Paths p;
    float h0[4096];
    double ratio[1000], a_ns[1000], b_ns[1000];
    float *values = malloc(sizeof(float) * (size_t)R * d);
    float *packed = aligned_alloc(64, ((sizeof(float) * (size_t)R * d + 63) / 64) * 64);
    float *spaced = aligned_alloc(64, ((sizeof(float) * (size_t)R * stride + 63) / 64) * 64);
    if (!values || !packed || !spaced)
        return 1;
    hsw2v_walk_sigmoid_init();
    srand(7);
    for (long i = 0; i < (long)R * d; i++)
        values[i] = ((rand() % 2001) - 1000) * 1e-5f;
    for (int k = 0; k < d; k++)
        h0[k] = ((rand() % 2001) - 1000) * 1e-3f;
    p.d = d;
    for (int q = 0; q < PATHS; q++) {
        p.lengths[q] = lmin + rand() % (lmax - lmin + 1);
        p.nodes[q][0] = 0;
        for (int j = 1; j < p.lengths[q]; j++)
            p.nodes[q][j] = rand() % R;
    }
    for (int i = 0; i < pairs; i++) {
        double check_a = 0.0, check_b = 0.0;
        for (int r = 0; r < R; r++) {
            memcpy(packed + (long)r * d, values + (long)r * d, sizeof(float) * d);
            memcpy(spaced + (long)r * stride, values + (long)r * d, sizeof(float) * d);
        }
        if (i % 2) {
            a_ns[i] = time_walks(&p, packed, d, walks, h0, &check_a);
            b_ns[i] = time_walks(&p, spaced, stride, walks, h0, &check_b);
        } else {
            b_ns[i] = time_walks(&p, spaced, stride, walks, h0, &check_b);
            a_ns[i] = time_walks(&p, packed, d, walks, h0, &check_a);
        }
        if (check_a != check_b) {
            printf("the two layouts trained different numbers: %.17g against %.17g\n", check_a,
                   check_b);
            return 1;
        }
        ratio[i] = b_ns[i] / a_ns[i];
    }
    qsort(ratio, pairs, sizeof(double), by_value);
    qsort(a_ns, pairs, sizeof(double), by_value);
    qsort(b_ns, pairs, sizeof(double), by_value);
    printf("d=%d, %d rows, paths of %d-%d: rows %d floats apart %.2f ns per node, %d apart "
           "%.2f (medians of %d); paired ratio median %.3f, quartiles %.3f-%.3f\n",
           d, R, lmin, lmax, d, a_ns[pairs / 2], stride, b_ns[pairs / 2], pairs,
           ratio[pairs / 2], ratio[pairs / 4], ratio[3 * pairs / 4]);
    free(values);
    free(packed);
    free(spaced);
    return 0;
}

/* 12 independent chains of multiply-adds per loop turn, in registers */
#define FMA12(R, A, B)                                                                         \
    __asm__ volatile(                                                                          \
        "vfmadd231ps %%" A ",%%" B ",%%" R "0\n vfmadd231ps %%" A ",%%" B ",%%" R "1\n"        \
        "vfmadd231ps %%" A ",%%" B ",%%" R "2\n vfmadd231ps %%" A ",%%" B ",%%" R "3\n"        \
        "vfmadd231ps %%" A ",%%" B ",%%" R "4\n vfmadd231ps %%" A ",%%" B ",%%" R "5\n"        \
        "vfmadd231ps %%" A ",%%" B ",%%" R "6\n vfmadd231ps %%" A ",%%" B ",%%" R "7\n"        \
        "vfmadd231ps %%" A ",%%" B ",%%" R "8\n vfmadd231ps %%" A ",%%" B ",%%" R "9\n"        \
        "vfmadd231ps %%" A ",%%" B ",%%" R "10\n vfmadd231ps %%" A ",%%" B ",%%" R "11\n" ::    \
            : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",   \
              "xmm10", "xmm11")

static int fma_rate(void) {
#if defined(__x86_64__) && defined(__FMA__)
    const long turns = 50000000;
    for (int rep = 0; rep < 3; rep++) {
#if defined(__AVX512F__)
        double start = cpu_seconds();
        for (long i = 0; i < turns; i++)
            FMA12("zmm", "zmm30", "zmm31");
        printf("16-float multiply-adds per ns: %.2f\n", turns * 12.0 / (cpu_seconds() - start) / 1e9);
#endif
        double start8 = cpu_seconds();
        for (long i = 0; i < turns; i++)
            FMA12("ymm", "ymm14", "ymm15");
        printf("8-float multiply-adds per ns: %.2f\n", turns * 12.0 / (cpu_seconds() - start8) / 1e9);
    }
    return 0;
#else
    printf("no x86-64 multiply-add instructions in this build\n");
    return 0;
#endif
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "walk") == 0)
        return walk(argc, argv);
    if (argc == 2 && strcmp(argv[1], "fma") == 0)
        return fma_rate();
    fprintf(stderr, "usage: walk_alone walk R LMIN LMAX WALKS PAIRS D STRIDE | walk_alone fma\n");
    return 2;
}
