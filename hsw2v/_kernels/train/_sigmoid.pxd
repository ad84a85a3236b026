"""The training module's sigmoid table: its storage, its fill and its lookup (inline).

Design note: the table sigmoid is ``math/_vec.h``'s NaN-safe one (``math/_vecops.pxd``); its
storage (``SIGMOID``) is ``train/_sigmoid.h``'s, one per module that trains, filled by that
module at import (``sigmoid_table_init``) and only read afterwards, by every thread.
"""

from hsw2v._kernels.math._vecops cimport hsw2v_sigmoid_table, sigmoid_lookup


cdef extern from "train/_sigmoid.h" nogil:
    hsw2v_sigmoid_table SIGMOID "hsw2v_walk_sigmoid"   # this module's table (read-only)
    void sigmoid_table_init "hsw2v_walk_sigmoid_init" ()  # fill it: once, at import


cdef inline float sigmoid(float f) noexcept nogil:
    """sigmoid(f) from the table (nearest entry); 0 or 1 beyond +-8; NaN for NaN (the one
    NaN-safe definition, ``math/_vec.h``)."""
    return sigmoid_lookup(&SIGMOID, f)
