"""What every training thread shares: the model's view (``ModelView``) and its lookups.

Design note: ``ModelView`` is the read-only description of the model that
``hsw2v._kernels._inner.Trainer`` fills and every job reads (the weights it points at are written,
Hogwild; ``_inner`` design note B): the input rows and the input kind (how a step forms h
from them), and the outputs, one ``Output`` per objective that is on (its kind, matrix,
private hot rows, the walk chosen for it, and its lookup: a ``TreeView``, ``math/_tree_view.pxd``,
or negative sampling's draw tables, ``NegTable``). ``HotSet`` names the rows each job trains
a private copy of (``train/_hot.pxd``). ``job_fn``
is the type of a job's nogil entry (``_inner.train_job_nogil``, or a benchmark walk's): C
callers (``_corpus_file``) take it, with the view, from a cimported ``Trainer``
(``_inner.pxd``). Declarations only: no code, no C header, so that a module can name the
model without compiling the walks.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from hsw2v._kernels.math._tree_view cimport TreeView


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


# The input kinds: how a step forms its hidden vector ``h`` from input rows (syn0), and where
# h's step goes back. FastText (a word's row plus its n-gram rows) and Doc2Vec (a document's
# row, alone or with the window) are further kinds of the same step.
# A document's rows (Doc2Vec) are rows of their own matrix (``docs``); a job names them by
# tag tokens, negative ids ``-(row + 1)`` leading each document's words.
cdef enum:
    INPUT_CONTEXT = 0  # skip-gram: each context row of the window is its own h (and its step)
    INPUT_WINDOW = 1   # CBOW: h is the mean (cbow_mean) or the sum of the window's rows, and its
                       # step goes to each of them (divided by their count without cbow_mean)
    INPUT_SUBWORD_CENTRE = 2  # FastText skip-gram: h is the mean of the centre word's rows (its
                              # word row and its n-gram rows, ``sub_rows``); it predicts each
                              # context word in turn, and each step goes to every one of them
    INPUT_SUBWORD_WINDOW = 3  # FastText CBOW: as INPUT_WINDOW over every context word's rows
    INPUT_DOC_CONTEXT = 4  # Doc2Vec PV-DBOW: each of the document's rows is its own h and
                           # predicts every word of it (with ``doc_words``, after the
                           # skip-gram step of the word's window, INPUT_CONTEXT's)
    INPUT_DOC_WINDOW = 5   # Doc2Vec PV-DM: INPUT_WINDOW's window rows and the document's rows

# The output kinds: what one (h, centre) pair is trained to predict, each over its own matrix.
cdef enum:
    OUTPUT_HS = 0  # hierarchical softmax: the centre's path of inner nodes (rows of syn1)
    OUTPUT_NS = 1  # negative sampling: the centre and drawn words (rows of syn1neg)
    MAX_OUTPUTS = 2


cdef struct Output:  # one output of the step: a row of the objectives' table, for the kernel
    int kind          # OUTPUT_HS / OUTPUT_NS
    float *matrix     # its weights (syn1 / syn1neg), V x d (hs: rows 0..V-2 used)
    HotSet hot        # the rows each job trains a private copy of (``train/_hot.pxd``)
    int walk          # the walk that trains it, chosen once by the Trainer (KERNEL_*)
    TreeView tree     # OUTPUT_HS: the tree whose paths it walks
    NegTable neg      # OUTPUT_NS: the draw tables
    int negative      # OUTPUT_NS: negatives per step
    bint shared       # OUTPUT_NS, skip-gram: one set of negatives per centre, shared by its
                      # contexts
    int cbow_run      # OUTPUT_NS, CBOW: centres that share one set (1: each its own set)
    int cbow_stride   # OUTPUT_NS, CBOW: the distance, in centres, between two that share a set


cdef struct Params:  # the model's parameters the kernel reads, each under its own name: the
                     # Trainer fills them by name from the rows of hsw2v.running.params.PARAMS
                     # marked ``in_kernel=True`` (a new one: a field here, its row, its reader)
    int window
    bint sg
    bint cbow_mean       # CBOW's h: the mean of the window's rows (else their sum)
    bint shrink_windows  # each centre's window a random 1..window (else always window)
    bint compute_loss


cdef struct ModelView:
    float *syn0       # the input rows: V x d (word rows), or more rows with subwords
    const uint32_t *sample_int
    int d
    Params params     # the model's parameters (window, cbow_mean, ...)
    int input         # INPUT_CONTEXT / INPUT_WINDOW / ...: the input kind, from params.sg
    bint prefetch
    Output outputs[MAX_OUTPUTS]  # in the order they step for each (h, centre): hs first
    int n_outputs
    int hs            # the index of the OUTPUT_HS output in ``outputs``, -1 for none
    int ns            # the index of the OUTPUT_NS output in ``outputs``, -1 for none
    int64_t n_words   # V
    # the subword input kinds: word w's input rows are the rows sub_rows[sub_ptr[w]:sub_ptr[w + 1]]
    # of syn0 (its own row, then its n-gram buckets' rows: fastText's input matrix); NULL else
    const int64_t *sub_ptr
    const int32_t *sub_rows
    int max_sub       # the most input rows of one word
    # per word w: sum over its distinct rows r of mult(r)**2 x lock(r), over its rows' count:
    # how h (their mean) moves when each of its rows takes a step e (h += sub_coef[w] x e)
    const float *sub_coef
    int block         # window walk: most contexts walking a path together (<= MAX_BLOCK)
    int64_t hot_sync  # trained centre words between two flushes of the private hot rows
    int hot_visits    # a private row is synced alone after this many visits
    float hot_scale   # a job adds hot_scale x its change of the hot rows back at a sync
    # the document kinds: the document rows (D x d) a job's tag tokens name, their lock
    # factors (gensim's dv.vectors_lockf, NULL when all 1), and PV-DBOW's dbow_words
    float *docs
    int64_t n_docs
    const float *doc_lockf
    bint doc_words
    bint frozen       # inference (infer_vector): only the document rows are written (the
                      # outputs' walks only read; PV-DM's word rows are scratch copies)
    const float *lockf  # gensim's vectors_lockf: word w's syn0 updates are scaled by
                        # lockf[w % lockf_len]; NULL when every factor is 1 (design note H)
    int64_t lockf_len


# One job's nogil entry: train ``ids`` (sentences ending at ``ends``) with rates falling from
# ``alpha0`` to ``alpha1`` and the random stream ``seed``; writes the kept tokens and the loss;
# returns 0, or -1 when its buffers could not be allocated.
ctypedef int (*job_fn)(const ModelView *m, const int32_t *ids, const int64_t *ends,
                       int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                       uint64_t seed, int64_t *kept, double *loss) noexcept nogil
