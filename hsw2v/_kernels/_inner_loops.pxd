"""The training walks' sigmoid table, prefetch hint and skip-gram window block (inline).

Design note: the table sigmoid is ``_vec.h``'s NaN-safe one (``_vecops.pxd``); its storage
(``SIGMOID``) is ``_walk.h``'s, one per module that trains, filled by that module at import
(``sigmoid_table_init``) and only read afterwards. The 4-context window block is
``_window.h``'s. The vector loops of the reference step are ``_vec.h``'s (``_vecops.pxd``);
the benchmark-only plain loops and BLAS live in ``_bench_walks.pyx``.
"""

from libc.stdint cimport int32_t, uint8_t

from hsw2v._kernels._vecops cimport hsw2v_loss_acc, hsw2v_sigmoid_table, sigmoid_lookup


cdef extern from "_window.h" nogil:
    enum: MAX_BLOCK "HSW2V_MAX_BLOCK"
    # a block's loss terms go to ``tally`` (the job's), none where it is NULL
    void hsw2v_sg_block_tally(int B, int d, float **x, float **work, int L, float **y,
                              const uint8_t *code, float alpha,
                              const hsw2v_sigmoid_table *sig, hsw2v_loss_acc *tally,
                              double *check, const float *lock)
    # CBOW's path walk: h's step left in work, h not moved
    void hsw2v_cbow_walk(int d, float *h, float *work, int L, float **y, const uint8_t *code,
                         float alpha, const hsw2v_sigmoid_table *sig, hsw2v_loss_acc *tally,
                         double *check)


cdef extern from "_walk.h" nogil:
    hsw2v_sigmoid_table SIGMOID "hsw2v_walk_sigmoid"   # this module's table (read-only)
    void sigmoid_table_init "hsw2v_walk_sigmoid_init" ()  # fill it: once, at import
    void HSW2V_PREFETCH(const void *p)


cdef inline void prefetch_row(const float *row, int d) noexcept nogil:
    """Ask for a row's cache lines ahead of use (a hint; no effect on results)."""
    cdef int k
    for k in range(0, d, 16):
        HSW2V_PREFETCH(row + k)


cdef inline float sigmoid(float f) noexcept nogil:
    """sigmoid(f) from the table (nearest entry); 0 or 1 beyond +-8; NaN for NaN (the one
    NaN-safe definition, ``_vec.h``)."""
    return sigmoid_lookup(&SIGMOID, f)
