"""What every training thread shares: the model's view (``ModelView``) and its lookups.

Design note: ``ModelView`` is the read-only description of the model that
``hsw2v._kernels._inner.Trainer`` fills and every job reads (the weights it points at are written,
Hogwild; ``_inner`` design note B). ``NegTable`` is negative sampling's draw tables and
``HotSet`` names the rows each job trains a private copy of (``_inner_hot.pxd``). ``job_fn``
is the type of a job's nogil entry (``_inner.train_job_nogil``, or a benchmark walk's): C
callers (``_corpus_file``) take it, with the view, from a cimported ``Trainer``
(``_inner.pxd``). Declarations only: no code, no C header, so that a module can name the
model without compiling the walks.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t


cdef struct NegTable:  # negative sampling's draw tables (shared, read-only)
    const uint32_t *cum    # V entries: cumulative count**ns_exponent, cum[V-1] > 0
    int64_t n              # V
    const int32_t *index   # (cum[V-1] - 1 >> shift) + 2 entries, see _inner.neg_index
    int shift


cdef struct HotSet:  # which rows (of syn1 or syn1neg) each job trains a private copy of
    int n             # private rows (0: none)
    int lo            # when slot is NULL: the private rows are rows lo .. lo + n - 1
    const int32_t *ids   # n: the shared row of each private row
    const int32_t *slot  # per shared row: its private row, -1 for none; or NULL (see lo)


cdef struct ModelView:
    float *syn0
    float *syn1
    const uint8_t *codes
    const int32_t *points
    const int32_t *lengths
    const uint32_t *sample_int
    int d
    int max_length
    int window
    bint sg
    bint cbow_mean
    bint shrink_windows
    bint compute_loss
    int kernel
    bint prefetch
    bint hs           # train hierarchical softmax (syn1, the tree)
    int negative      # negatives per step; 0: no negative sampling
    bint shared_negs  # skip-gram: one set of negatives per centre, shared by its contexts
    int cbow_run      # CBOW: centres that share one set of negatives (1: each its own set)
    int cbow_stride   # CBOW: the distance, in centres, between two that share a set
    float *syn1neg    # V x d when negative > 0
    NegTable neg      # the negative draw's tables when negative > 0
    int64_t n_words   # V
    int block         # window kernel: most contexts walking a path together (<= MAX_BLOCK)
    int64_t hot_sync  # trained centre words between two flushes of the private hot rows
    int hot_visits    # a private row is synced alone after this many visits
    float hot_scale   # a job adds hot_scale x its change of the hot rows back at a sync
    HotSet hot_nodes  # the hottest inner nodes (rows of syn1), private per job
    HotSet hot_words  # the most frequent words (rows of syn1neg), private per job
    const float *lockf  # gensim's vectors_lockf: word w's syn0 updates are scaled by
                        # lockf[w % lockf_len]; NULL when every factor is 1 (design note H)
    int64_t lockf_len


# One job's nogil entry: train ``ids`` (sentences ending at ``ends``) with rates falling from
# ``alpha0`` to ``alpha1`` and the random stream ``seed``; writes the kept tokens and the loss;
# returns 0, or -1 when its buffers could not be allocated.
ctypedef int (*job_fn)(const ModelView *m, const int32_t *ids, const int64_t *ends,
                       int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                       uint64_t seed, int64_t *kept, double *loss) noexcept nogil
