"""C-level face of the training kernels, for other nogil code (``hsw2v._kernels._corpus_file``).

A C caller cimports ``Trainer`` and reads, from a Trainer object, the model's view ``m``
and the job entry ``job`` that trains over it (``train_job_nogil`` here, or a benchmark
walk's: ``_bench_walks.pyx``); both are typed (``train/_model.pxd``). ``hsw2v._kernels._inner`` is
bound at run time to one CPU level's module (``hsw2v._cpu``): a cimport of this type from a
module built once resolves to that level's type object at import.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t

from hsw2v._kernels.train._model cimport ModelView, Output, job_fn


cdef class Trainer:
    cdef ModelView m           # the model's view every job reads (filled by __init__)
    cdef job_fn job            # the nogil entry that trains one job over ``m``
    cdef object _keep_alive
    cdef object _hot_arrays
    cdef object _neg_index
    cdef readonly object lockf  # the lock factors in use (float32), None when all are 1
    cdef Py_ssize_t n_hot
    cdef _subwords(self, subwords, Py_ssize_t n_rows)
    cdef _docs(self, docs)
    cdef _check_inference(self, float[:, ::1] rows)
    cdef _infer(self, const int32_t *ids, const int64_t *ends, int64_t n_ids,
                int64_t n_sentences, float[:, ::1] rows, float alpha0, float alpha1,
                uint64_t seed)
    cdef _tree_output(self, Output *o, dict spec, float[:, ::1] syn0)
    cdef _draw_output(self, Output *o, dict spec, float[:, ::1] syn0)


cdef int train_job_nogil(const ModelView *m, const int32_t *ids, const int64_t *ends,
                         int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                         uint64_t seed, int64_t *kept, double *loss) noexcept nogil
