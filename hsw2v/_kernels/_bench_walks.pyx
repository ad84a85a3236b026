# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Benchmark-only path walks: the reference step with plain loops or BLAS (not shipped).

Design note
-----------
A. What it is. The reference steps of ``math/_path.pxd`` run with ``math/_vec.h``'s loops in the
   shipped kernels ("reference"). The two variants here run the same steps with other vector
   loops, the shapes the fast walks are measured against: "loop", plain loops that the
   compiler vectorises (word2vec.c's shape), and "blas", BLAS ``sdot`` / ``saxpy`` through
   ``scipy.linalg.cython_blas`` (gensim's shape). They are built only on request
   (``HSW2V_BENCH_WALKS=1 python3 setup.py build_ext --inplace``, at every CPU level, bound
   by :mod:`hsw2v._cpu` like the shipped kernels) and never go into a wheel.
B. How it is composed. The job loop is the shipped one, cimported from the same inline
   modules (``train/_job.pxd``: ``run_job``), with this module's ``JobRoutines`` (its
   ``RefWalks`` in place of the reference walks); the model's view and its checks are the
   shipped ``Trainer``'s (``_inner.pxd``), which ``Trainer`` here extends, setting its job
   entry (``job``) to this module's. Everything a job shares or owns is as in ``_inner``
   (design notes A-H there); this module has its own sigmoid table (``train/_sigmoid.h``), filled at
   import.
C. Notation: ``_inner``'s. Every nogil walk has a Python-callable twin (``py_*``), which
   tests/test_kernel_twins.py compares with the reference.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memset

import numpy as np

from scipy.linalg.cython_blas cimport saxpy, sdot

from hsw2v._kernels._inner cimport Trainer as ShippedTrainer
from hsw2v._kernels.math._path cimport hs_step, ns_step, plain_dot
from hsw2v._kernels.train._job cimport run_job
from hsw2v._kernels.train._model cimport ModelView
from hsw2v._kernels.train._sigmoid cimport SIGMOID, sigmoid_table_init
from hsw2v._kernels.train._state cimport JobRoutines, JobState, flush_hot
from hsw2v._kernels.train._steps cimport subword_window
from hsw2v._kernels.train._walks cimport twin_hs, twin_ns

sigmoid_table_init()  # this module's table (train/_sigmoid.h)

WALKS = ("loop", "blas")

cdef int ONE = 1


cdef inline float blas_dot(int n, const float *x, const float *y) noexcept nogil:
    """x . y (BLAS sdot)"""
    return sdot(&n, <float *>x, &ONE, <float *>y, &ONE)


cdef inline void blas_axpy(int n, float a, const float *x, float *y) noexcept nogil:
    """y := a*x + y (BLAS saxpy)"""
    saxpy(&n, &a, <float *>x, &ONE, y, &ONE)


cdef inline float loop_dot(int n, const float *x, const float *y) noexcept nogil:
    """x . y (plain loop, vectorised by the compiler: ``_path.plain_dot``)"""
    return plain_dot(n, x, y)


cdef inline void loop_axpy(int n, float a, const float *x, float *y) noexcept nogil:
    """y := a*x + y (plain loop, vectorised by the compiler)"""
    cdef int k
    for k in range(n):
        y[k] += a * x[k]


# --------------------------------------------------------------------------------------------
# The walks: the reference steps (math/_path.pxd) with these loops, one copy per kind of loop.
# --------------------------------------------------------------------------------------------

cdef double hs_loop(const float *h, float *work, float **rows, const uint8_t *code, int length,
                    float alpha, int d, bint compute_loss, double *check) noexcept nogil:
    """``_walks.hs_path`` with plain loops."""
    memset(work, 0, d * sizeof(float))
    return hs_step(d, h, work, -alpha, rows, NULL, code, NULL, length, NULL, alpha, &SIGMOID,
                   loop_dot, loop_axpy, compute_loss, NULL, check)


cdef double hs_blas(const float *h, float *work, float **rows, const uint8_t *code, int length,
                    float alpha, int d, bint compute_loss, double *check) noexcept nogil:
    """``_walks.hs_path`` with BLAS."""
    memset(work, 0, d * sizeof(float))
    return hs_step(d, h, work, -alpha, rows, NULL, code, NULL, length, NULL, alpha, &SIGMOID,
                   blas_dot, blas_axpy, compute_loss, NULL, check)


cdef double ns_loop(int d, const float *h, float *work, float *const *rows, int count,
                    float alpha, bint compute_loss, double *check) noexcept nogil:
    """``_walks.ns_path`` with plain loops."""
    return ns_step(d, h, work, rows, NULL, NULL, count, alpha, &SIGMOID, loop_dot, loop_axpy,
                   compute_loss, check)


cdef double ns_blas(int d, const float *h, float *work, float *const *rows, int count,
                    float alpha, bint compute_loss, double *check) noexcept nogil:
    """``_walks.ns_path`` with BLAS."""
    return ns_step(d, h, work, rows, NULL, NULL, count, alpha, &SIGMOID, blas_dot, blas_axpy,
                   compute_loss, check)


cdef void flush_out_of_line(const ModelView *m, JobState *st) noexcept nogil:
    """``flush_hot`` out of line, as the shipped module calls it (``_job.JobRoutines``)."""
    flush_hot(m, st)


cdef void span_out_of_line(const ModelView *m, JobState *st, int64_t i, int64_t lo,
                           int64_t hi, int64_t end, const uint8_t *code, int length,
                           float alpha, const int32_t *negs, const int *counts,
                           const int32_t *next_negs, int next_count,
                           const JobRoutines *rt) noexcept nogil:
    """FastText's CBOW step out of line, as the shipped module calls it."""
    subword_window(m, st, i, lo, hi, end, code, length, alpha, negs, counts, next_negs,
                   next_count, rt)


cdef JobRoutines LOOP_ROUTINES
LOOP_ROUTINES.walks.hs = hs_loop
LOOP_ROUTINES.walks.ns = ns_loop
LOOP_ROUTINES.flush = flush_out_of_line
LOOP_ROUTINES.span = span_out_of_line
cdef JobRoutines BLAS_ROUTINES
BLAS_ROUTINES.walks.hs = hs_blas
BLAS_ROUTINES.walks.ns = ns_blas
BLAS_ROUTINES.flush = flush_out_of_line
BLAS_ROUTINES.span = span_out_of_line


cdef int train_job_loop(const ModelView *m, const int32_t *ids, const int64_t *ends,
                        int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                        uint64_t seed, int64_t *kept, double *loss) noexcept nogil:
    """The shipped job loop (``run_job``) with the plain-loop walks."""
    return run_job(m, ids, ends, n_ids, n_sentences, alpha0, alpha1, seed, kept, loss,
                   &LOOP_ROUTINES, m.docs != NULL)


cdef int train_job_blas(const ModelView *m, const int32_t *ids, const int64_t *ends,
                        int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                        uint64_t seed, int64_t *kept, double *loss) noexcept nogil:
    """The shipped job loop (``run_job``) with the BLAS walks."""
    return run_job(m, ids, ends, n_ids, n_sentences, alpha0, alpha1, seed, kept, loss,
                   &BLAS_ROUTINES, m.docs != NULL)


cdef class Trainer(ShippedTrainer):
    """:class:`hsw2v._kernels._inner.Trainer` training with a benchmark-only walk, ``walk="loop"``
    or ``"blas"`` (the same arguments otherwise); ``corpus_file`` training reaches it as any
    Trainer (its ``job``)."""

    def __init__(self, *args, walk="loop", **kwargs):
        kwargs["walk"] = "reference"
        if walk not in WALKS:
            raise ValueError(f"walk must be one of {WALKS} here, got {walk!r}")
        super().__init__(*args, **kwargs)  # the shipped checks; its reference walk's view
        self.job = train_job_loop if walk == "loop" else train_job_blas


# --------------------------------------------------------------------------------------------
# Python-callable twins, for tests.
# --------------------------------------------------------------------------------------------

def py_dot(const float[::1] x, const float[::1] y, bint use_blas=False):
    """Twin of the dot product (plain loop, or BLAS sdot)."""
    if use_blas:
        return blas_dot(x.shape[0], &x[0], &y[0])
    return loop_dot(x.shape[0], &x[0], &y[0])


def py_axpy(float a, const float[::1] x, float[::1] y, bint use_blas=False):
    """Twin of y := a*x + y (plain loop, or BLAS saxpy), in place on ``y``."""
    if use_blas:
        blas_axpy(x.shape[0], a, &x[0], &y[0])
    else:
        loop_axpy(x.shape[0], a, &x[0], &y[0])


def py_hs_path(const float[::1] h, float[:, ::1] syn1, const uint8_t[::1] code,
               const int32_t[::1] point, float alpha, bint use_blas=False):
    """Twin of the plain-loop (or BLAS) reference walk: updates ``syn1`` in place, returns
    (work, -log P)."""
    work = np.empty(h.shape[0], dtype=np.float32)
    return work, twin_hs(hs_blas if use_blas else hs_loop, h, syn1, code, point, alpha, work)


def py_ns_path(const float[::1] h, float[:, ::1] syn1neg, const int32_t[::1] negs,
               float alpha, str walk="loop"):
    """Twin of the "loop" or "blas" negative-sampling walk for given words (``negs[0]`` the
    target): updates ``syn1neg`` in place, returns (work, loss)."""
    if walk not in WALKS:
        raise ValueError(f"walk must be one of {WALKS} here, got {walk!r}")
    work = np.empty(h.shape[0], dtype=np.float32)
    return work, twin_ns(ns_blas if walk == "blas" else ns_loop, h, syn1neg, negs, alpha, work)
