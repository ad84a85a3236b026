# The vector loops, the sigmoid table and the prefetch hint of the training kernels.
# Included by _inner.pyx (one module: the compiler sees every call and inlines it).
#
# Design note: the reference steps (_path.pxd) run on _vec.h's loops; the plain loops and
# BLAS (scipy.linalg.cython_blas, sdot / saxpy, gensim's shape) exist only for the
# benchmark-only "loop" and "blas" walks that the reference is measured against. The
# sigmoid table is _vec.h's NaN-safe one, filled once at import and read by every job.

cdef extern from "_window.h" nogil:
    enum: MAX_BLOCK "HSW2V_MAX_BLOCK"
    double hsw2v_sg_block(int B, int d, float **x, float **work, int L, float **y,
                          const uint8_t *code, float alpha, const hsw2v_sigmoid_table *sig,
                          int compute_loss, double *check, const float *lock)


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define HSW2V_PREFETCH(p) __builtin_prefetch((const void *)(p), 1, 3)
    #else
    #define HSW2V_PREFETCH(p) ((void)0)
    #endif
    """
    void HSW2V_PREFETCH(const void *p) noexcept nogil


cdef inline void prefetch_row(const float *row, int d) noexcept nogil:
    """Ask for a row's cache lines ahead of use (a hint; no effect on results)."""
    cdef int k
    for k in range(0, d, 16):
        HSW2V_PREFETCH(row + k)


# --------------------------------------------------------------------------------------------
# The vector loops of the steps: _vec.h's (the reference), and plain loops and BLAS
# (scipy.linalg.cython_blas), the benchmark-only variants they are measured against.
# --------------------------------------------------------------------------------------------

cdef enum:
    PRIMS_VEC = 0    # _vec.h loops (several accumulators)
    PRIMS_LOOP = 1   # plain loops, vectorised by the compiler (word2vec.c's shape)
    PRIMS_BLAS = 2   # BLAS sdot / saxpy (gensim's shape)

cdef int ONE = 1


cdef inline float blas_dot(int n, const float *x, const float *y) noexcept nogil:
    """x . y (BLAS sdot)"""
    return sdot(&n, <float *>x, &ONE, <float *>y, &ONE)


cdef inline void blas_axpy(int n, float a, const float *x, float *y) noexcept nogil:
    """y := a*x + y (BLAS saxpy)"""
    saxpy(&n, &a, <float *>x, &ONE, y, &ONE)


cdef inline float loop_dot(int n, const float *x, const float *y) noexcept nogil:
    """x . y (plain loop, vectorised by the compiler)"""
    cdef float s = 0.0
    cdef int k
    for k in range(n):
        s += x[k] * y[k]
    return s


cdef inline void loop_axpy(int n, float a, const float *x, float *y) noexcept nogil:
    """y := a*x + y (plain loop, vectorised by the compiler)"""
    cdef int k
    for k in range(n):
        y[k] += a * x[k]


cdef inline float pdot(int prims, int n, const float *x, const float *y) noexcept nogil:
    """x . y with the ``prims`` loops."""
    if prims == PRIMS_BLAS:
        return blas_dot(n, x, y)
    if prims == PRIMS_LOOP:
        return loop_dot(n, x, y)
    return hsw2v_dot(n, x, y)


cdef inline void paxpy(int prims, int n, float a, const float *x, float *y) noexcept nogil:
    """y := a*x + y with the ``prims`` loops."""
    if prims == PRIMS_BLAS:
        blas_axpy(n, a, x, y)
    elif prims == PRIMS_LOOP:
        loop_axpy(n, a, x, y)
    else:
        hsw2v_axpy(n, a, x, y)


# --------------------------------------------------------------------------------------------
# The sigmoid table (_vec.h's NaN-safe lookup; the exact log-sigmoid is _vec.h's too)
# --------------------------------------------------------------------------------------------

cdef float SIGMOID_VALUES[SIGMOID_TABLE_SIZE + 1]
cdef hsw2v_sigmoid_table SIGMOID
hsw2v_sigmoid_table_init(&SIGMOID, SIGMOID_VALUES)


cdef inline float sigmoid(float f) noexcept nogil:
    """sigmoid(f) from the table (nearest entry); 0 or 1 beyond +-8; NaN for NaN (the one
    NaN-safe definition, ``_vec.h``)."""
    return sigmoid_lookup(&SIGMOID, f)
