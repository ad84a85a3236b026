"""C-level entry points of the training kernels, for other nogil code (hsw2v._corpus_file)."""

from libc.stdint cimport int32_t, int64_t, uint64_t


cdef uint64_t job_seed_nogil(uint64_t seed, uint64_t epoch, uint64_t job) noexcept nogil

cdef int train_job_nogil(const void *model, const int32_t *ids, const int64_t *ends,
                         int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                         uint64_t seed, int64_t *kept, double *loss) noexcept nogil
