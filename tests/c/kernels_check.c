/* Runs the vector primitives of hsw2v/_kernels/math/_vec.h (the fused walk's passes included),
 * the skip-gram window block of hsw2v/_kernels/train/_window.h (one context too: CBOW's walk),
 * the rows' sum and the two negative-sampling passes of hsw2v/_kernels/train/_ns_pair.h on
 * fixed pseudo-random data and prints every result, one number a line ("%.9g").
 * tests/test_portable_c.py compiles it twice, with GCC's vector extensions and with
 * -DHSW2V_NO_VECTOR_EXT (the plain scalar path that compilers without them, MSVC, take), and
 * compares the two outputs: the scalar path must give the same numbers to float rounding. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "train/_ns_pair.h"
#include "train/_window.h"

static uint64_t state = 88172645463325252ULL;

static float next_float(void) { /* xorshift64, uniform in [-0.5, 0.5) */
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (float)((state >> 40) / (double)(1 << 24)) - 0.5f;
}

static void fill(float *v, int n, float scale) {
    for (int i = 0; i < n; i++) v[i] = next_float() * scale;
}

int main(void) {
    static float table_values[HSW2V_SIGMOID_VALUES];
    hsw2v_sigmoid_table sig;
    hsw2v_sigmoid_table_init(&sig, table_values);
    const int dims[] = {1, 7, 8, 13, 16, 20, 28, 31, 44, 50, 100, 200, 300};
    enum { MAXD = 300, L = 6 };
    static float x[4][MAXD], work[4][MAXD], y[L][MAXD], h[MAXD], row[MAXD], nxt[MAXD];
    for (unsigned t = 0; t < sizeof(dims) / sizeof(dims[0]); t++) {
        const int d = dims[t];
        fill(h, d, 1.0f);
        fill(row, d, 1.0f);
        fill(nxt, d, 1.0f);
        fill(work[0], d, 1.0f);
        printf("%.9g\n", hsw2v_dot(d, h, row));
        hsw2v_axpy(d, 0.37f, h, row);
        printf("%.9g\n", hsw2v_update_then_dot(d, -0.21f, h, row, work[0], nxt));
        hsw2v_update_last(d, 0.13f, h, row, work[0]);
        for (int k = 0; k < d; k++) printf("%.9g\n%.9g\n%.9g\n", row[k], h[k], work[0][k]);
        { /* the last word's pass with the error sent on: CBOW's window (a row twice, scaled),
           * then skip-gram's one row, h itself */
            float *spread[3] = {x[2], x[3], x[2]}, *self[1] = {h};
            const float lock[3] = {0.5f, 1.0f, 0.25f};
            fill(x[2], d, 2.0f);
            fill(x[3], d, 2.0f);
            hsw2v_update_spread(d, -0.17f, h, row, work[0], spread, lock, 3, 0.2f);
            hsw2v_update_spread(d, 0.11f, h, row, work[0], self, lock, 1, 1.0f);
            for (int k = 0; k < d; k++)
                printf("%.9g\n%.9g\n%.9g\n%.9g\n", row[k], h[k], x[2][k], x[3][k]);
        }
        for (int n = 1; n <= L; n++) { /* train/_ns_pair.h: n dots, then the update pass */
            float *yp[L], f[L], a[L];
            for (int j = 0; j < n; j++) { fill(y[j], d, 2.0f); yp[j] = y[j]; a[j] = 0.05f * (j - 2); }
            fill(x[0], d, 2.0f);
            hsw2v_ns_dots(d, x[0], yp, n, f);
            for (int j = 0; j < n; j++) printf("%.9g\n", f[j]);
            /* odd n: skip-gram's call (h is the input row); even n: the error stored, then
             * (n = 4, 6) also sent, scaled, to two input rows, one of them twice */
            float *ctx[3] = {x[0], x[1], x[1]};
            const float lock[3] = {0.5f, 1.0f, 0.25f};
            fill(x[1], d, 2.0f);
            if (n % 2)
                hsw2v_ns_update(d, x[0], yp, a, n, ctx, lock, 1, 1.0f, NULL);
            else
                hsw2v_ns_update(d, x[0], yp, a, n, ctx + 1, lock + 1, n > 2 ? 2 : 0, 0.2f,
                                work[1]);
            for (int k = 0; k < d; k++)
                printf("%.9g\n%.9g\n%.9g\n", x[0][k], x[1][k], work[1][k]);
            for (int j = 0; j < n; j++)
                for (int k = 0; k < d; k++) printf("%.9g\n", y[j][k]);
        }
        for (int count = 1; count <= 17; count += 8) { /* CBOW's h, FastText's rows' mean */
            float *rp[17];
            static float rows[17][MAXD];
            for (int c = 0; c < count; c++) { fill(rows[c], d, 2.0f); rp[c] = rows[c]; }
            hsw2v_rows_sum(d, rp, count, count > 1 ? 1.0f / count : 1.0f, h);
            for (int k = 0; k < d; k++) printf("%.9g\n", h[k]);
        }
        { /* one context: CBOW's walk (h's step left in work), then a locked row's block */
            float *yp[L], *xp[1] = {x[0]}, *wp[1] = {work[0]};
            uint8_t code[L];
            const float lock[1] = {0.5f};
            double check = 0.0;
            fill(x[0], d, 2.0f);
            for (int j = 0; j < L; j++) { fill(y[j], d, 2.0f); yp[j] = y[j]; code[j] = (uint8_t)(j % 2); }
            hsw2v_cbow_walk(d, x[0], work[0], L, yp, code, 0.05f, &sig, NULL, &check);
            double loss = hsw2v_sg_block(1, d, xp, wp, L, yp, code, 0.05f, &sig, 1, &check, lock);
            printf("%.9g\n%.9g\n", loss, check);
            for (int k = 0; k < d; k++) printf("%.9g\n%.9g\n", x[0][k], work[0][k]);
            for (int j = 0; j < L; j++)
                for (int k = 0; k < d; k++) printf("%.9g\n", y[j][k]);
        }
        for (int B = 1; B <= HSW2V_MAX_BLOCK; B++) {
            float *xp[4], *wp[4], *yp[L];
            uint8_t code[L];
            const float lock[4] = {1.0f, 0.5f, 1.0f, 0.0f};
            double check = 0.0;
            for (int b = 0; b < 4; b++) { fill(x[b], d, 2.0f); xp[b] = x[b]; wp[b] = work[b]; }
            for (int j = 0; j < L; j++) { fill(y[j], d, 2.0f); yp[j] = y[j]; code[j] = (uint8_t)(j % 3 == 1); }
            double loss = hsw2v_sg_block(B, d, xp, wp, L, yp, code, 0.05f, &sig, 1, &check,
                                         B == 4 ? lock : NULL);
            printf("%.9g\n%.9g\n", loss, check);
            for (int b = 0; b < B; b++)
                for (int k = 0; k < d; k++) printf("%.9g\n", x[b][k]);
            for (int j = 0; j < L; j++)
                for (int k = 0; k < d; k++) printf("%.9g\n", y[j][k]);
        }
    }
    return 0;
}
