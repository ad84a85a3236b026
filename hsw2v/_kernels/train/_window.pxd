"""Skip-gram's window block and CBOW's path walk, declared (defined in ``train/_window.h``).

Design note: several contexts of one window walk the centre's path together (``_window.h``'s
design note); a block's loss terms go to the job's tally. The walks that call them are
``train/_steps.pxd``'s.
"""

from libc.stdint cimport uint8_t

from hsw2v._kernels.math._vecops cimport hsw2v_loss_acc, hsw2v_sigmoid_table


cdef extern from "train/_window.h" nogil:
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
