# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Training kernels of word2vec: hierarchical softmax, and negative sampling beside it.

Design note
-----------
A. What runs without the GIL. ``Trainer.train_job`` takes one job (a batch of whole sentences,
   already mapped to word ids, with their end offsets), releases the GIL and runs: subsampling,
   window reduction, the path walks and the weight updates. Python prepares jobs, the schedule
   and the threads (``hsw2v._train``); the nogil block sees only pointers and integers.
   ``train_job_nogil`` (declared in ``_inner.pxd``) is that block, for C callers that make
   their jobs without the GIL (``hsw2v._corpus_file``).

B. What is shared. Only the weight matrices ``syn0``, ``syn1`` and ``syn1neg`` are written by
   several threads at once, without locks (Hogwild, Recht et al. 2011), as word2vec.c and
   gensim do, except the top of the tree: with ``hot_nodes > 0`` each job trains a private
   copy of the hottest inner nodes (Vuurens et al. 2016), so threads do not pass those cache
   lines back and forth. A private row is pulled from the shared row at its first visit, and
   its change is added back after ``hot_visits`` visits (then pulled again), at the latest
   every ``hot_sync`` centre words and at the job's end; see ``private_row``. With negative
   sampling the same holds for the rows of syn1neg of the most frequent words
   (``hot_words``), which every thread draws as negatives. The shared copy
   of a private row is never prefetched (``is_private``): the prefetch asks for the lines in
   order to write them, which would take them from the other cores. Everything else a job
   touches is its own: the ``JobState`` struct (hidden vector, error accumulator, subsampled
   ids, path row pointers, private hot rows, drawn negatives, random stream, loss tally) lives
   on that call's stack and heap. ``cum_table`` and its bucket index are shared read-only.

C. Notation (word2vec.c heritage; ``d`` = vector size, ``V`` = vocabulary size).

   =========  ==============================================================================
   syn0       input vectors, V x d (``model.wv.vectors``); IN/OUT
   syn1       inner-node vectors of the Huffman tree, V x d (rows 0..V-2 used); IN/OUT
   codes      uint8 V x L: bit taken at each step of a word's path, root first; IN
   points     int32 V x L: inner node (row of syn1) at each step, root first; IN
   h          the hidden vector predicting a path: a context word's syn0 row (skip-gram) or
              the sum / mean of the window's syn0 rows (CBOW)
   work       accumulated error for h over one path walk, d floats (scratch)
   f          h . syn1[node]; sigmoid(f) = P(bit 0)
   g          dL/df = sigmoid(f) - (1 - code), L = -log P(word | h) (``_path.pxd``, note A);
              the step is ``syn1[node] -= alpha g h``, ``work = -alpha sum g syn1[node]``
   syn1neg    output vectors of negative sampling, V x d, one per word; IN/OUT
   cum_table  uint32 V: cumulative count**ns_exponent scaled to [0, 2**31 - 1]; IN
   negs       the words of one negative-sampling step: the target (label 1) then the drawn
              negatives (label 0), ``negative`` draws with the target's own draws left out
   =========  ==============================================================================

D. The path walks. The hierarchical-softmax gradient has one home, the reference step
   ``hs_step`` of ``_path.pxd`` (Mikolov et al. 2013, eq. for hierarchical softmax; Morin &
   Bengio 2005), with its sign convention (``g = dL/df``); ``hs_path`` here is Word2Vec's
   call of it (table sigmoid, ``work = -alpha dL/dh``), used by the "loop" and "blas"
   variants. The two fast variants are optimisations of that step, each tested as its twin
   (``tests/test_kernel_twins.py``): ``hs_path_fused`` ("fused", CBOW's default) gives the
   reference's bits with ``_vec.h`` loops (the "reference" variant; in skip-gram without
   lock factors, where the context row's ``+= work`` is folded into the last node's pass,
   to the rounding of that one add), and ``_window.h``'s block ("window", skip-gram's
   default) the reference's updates to float rounding. Both keep word2vec.c's arithmetic
   (``g_w2v = (1 - code - sigmoid(f)) * alpha``), which equals the reference's ``-alpha *
   dL/df`` bit for bit (``_path.pxd``, note A). Skip-gram and CBOW differ only in how ``h``
   is formed and where ``work`` goes afterwards.

D'. Negative sampling (Mikolov et al. 2013, "Distributed Representations of Words and
   Phrases", negative sampling objective). Its step is the reference ``ns_step`` of
   ``_path.pxd``, a loop of the same ``node_step`` as ``hs_step``: for one ``h`` it walks the
   target (label 1) and its drawn negatives (label 0), ``g = dL/df = sigmoid(f) - label``,
   ``work -= alpha g syn1neg[w]``, ``syn1neg[w] -= alpha g h`` (``ns_path`` here, the
   "reference", "loop" and "blas" variants). The default ("fused") is ``ns_path_fused``, each
   word's update fused with the next word's dot product: the reference's bits (its twin
   test). The draw is gensim's: a uniform integer below ``cum_table[-1]``, the first table
   entry ``>=`` it (a draw equal to the target is skipped, not redrawn), found through a
   bucket index over the integer's top bits (``neg_index``: a few entries bisected instead
   of V, the same word). ``draw_centre`` draws a centre's reduced window and all its
   negatives at once, one centre ahead of training (the draws do not depend on the weights,
   and the stream's order is kept, so the results are those of drawing each pair's words
   just before its step), and each pair prefetches the next pair's rows. With several
   workers each job trains private copies of the most frequent words' rows (``hot_words``,
   design note B). With ``negative > 0`` the sg and CBOW callers run, per (h, target), first
   the hierarchical-softmax walk (if ``hs``) and its update of the input rows, then the
   negative-sampling walk with its own ``work`` and the same update, exactly gensim's order
   (gensim's ``train_batch_sg`` / ``_cbow`` call ``fast_sentence_*_hs`` then
   ``fast_sentence_*_neg``; CBOW forms ``h`` again from the updated rows for the second). The
   "window" kernel is hs-only (its blocks move a window's contexts together, which would
   reorder the ns steps), so with ``negative > 0`` skip-gram takes the "fused" walks.

E. Departures from word2vec.c/gensim, on purpose: a node with |f| beyond the sigmoid table's
   range is not skipped; sigmoid saturates to 0 or 1 there, so a confidently wrong node still
   gets its full gradient (as fastText does); the same holds for negative sampling, where
   gensim skips a target or negative with |f| >= 6. The loss is -log sigmoid of every term to
   float32 precision, summed in float64 per job (the fused walks push their terms onto the
   job's tally, the window block onto its own, ``_loss.h``; the reference walks take libm's),
   never in a shared float32. Sentences are never truncated.

F. Reproducibility. Every job seeds its random stream from (seed, epoch, job index), so a run
   with one worker is bit-identical from run to run, whatever ``PYTHONHASHSEED`` is. The
   negatives are drawn from the same stream (gensim uses its own 48-bit LCG per thread; the
   distribution of the draws is the same, the sequence is not).

G. NaN safety and the divergence check. The table sigmoid is ``_vec.h``'s (via
   ``_vecops.pxd``, the one definition): a NaN never becomes a table index, it gives a NaN
   gradient. Every walk adds each ``f`` it computes to the job's ``check`` (one float64 add
   per node, off the critical path); ``f`` is a dot product with the hidden vector, so the sum
   is non-finite iff some row the job read (syn0 via ``h``, syn1 / syn1neg) or wrote was. The
   window block, whose per-node loop is the tightest, adds instead the first entry of each
   context row it updated, once per block: a NaN ``f`` at any node makes that row all NaN
   (an infinity is seen once it has produced a NaN, as inf - inf or 0 * inf do). A job
   whose check is non-finite reports its loss as NaN (with or without ``compute_loss``), and
   the epoch drivers (``hsw2v._train``) stop training on it with
   ``hsw2v.divergence.TrainingDivergedError``.

H. Lock factors (gensim's ``wv.vectors_lockf``, "lockf"). Every update of a syn0 row (the
   context row in skip-gram, each window row in CBOW, for hs and ns, in every kernel) is
   scaled by ``lockf[w % len(lockf)]`` of its word ``w``, as gensim's ``our_saxpy(...,
   &words_lockf[w % lockf_len], work, ...)``: 0 freezes a word, a scalar (one entry) scales
   all. syn1 and syn1neg are trained as usual. When every factor is 1 the Trainer keeps no
   factors (``lockf == NULL``) and the kernels take their usual path (the fused skip-gram walk
   still adds ``work`` to the context row inside its last node's pass).

Every nogil routine has a Python-callable twin (``py_*``, ``_inner_twins.pxi``), which the
tests compare with NumPy references and with the reference steps of ``_path.pxd``.

I. Files. This module is one translation unit (the compiler sees every call and inlines the
   walks into the job loop), written in files with one job each, included below: the vector
   loops and sigmoid table (``_inner_loops.pxi``), the random streams and negative draw with
   its bucket index (``_inner_rng.pxi``), the walks (``_inner_walks.pxi``), the private hot rows
   (``_inner_hot.pxi``), one job (``_inner_job.pxi``) and the twins (``_inner_twins.pxi``).
   This file keeps the ``Trainer`` (the model's arrays checked and borrowed), the nogil job
   entry ``train_job_nogil`` and ``encode_sentences``.
"""

from libc.math cimport NAN, isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset
from cpython.pycapsule cimport PyCapsule_New

import numpy as np

from scipy.linalg.cython_blas cimport saxpy, sdot

from hsw2v._path cimport hs_path_nll, hs_step, ns_step
from hsw2v._vecops cimport (
    SIGMOID_TABLE_SIZE, hsw2v_axpy, hsw2v_dot, hsw2v_sigmoid_table, hsw2v_sigmoid_table_init,
    hsw2v_update_last, hsw2v_update_then_dot, neg_log_sigmoid, sigmoid_lookup,
)
from hsw2v._vecops cimport (
    hsw2v_loss_acc, loss_init, loss_total, neg_log_sigmoid_sum, tally_push,
)

# One job each, included in this order (structs before their users):
include "_inner_loops.pxi"    # vector loops (reference, plain, BLAS), sigmoid table, prefetch
include "_inner_rng.pxi"      # random streams, the negative draw
include "_inner_walks.pxi"    # the path walks: calls of the reference steps, the fused walk
include "_inner_hot.pxi"      # the private hot rows
include "_inner_job.pxi"      # one job: state, subsampling, skip-gram and CBOW callers
include "_inner_twins.pxi"    # exact log-probabilities and the Python-callable twins


cdef class Trainer:
    """Holds the model's arrays for the nogil kernels; one instance serves all worker threads.

    The arrays are borrowed, not copied: training writes into ``syn0``, ``syn1`` and
    ``syn1neg`` in place. ``hs=False`` trains no tree (``syn1`` and the tree arrays are then
    not read; ``syn1`` may be empty); ``negative > 0`` needs ``syn1neg`` (V x d) and
    ``cum_table`` (V entries, last > 0). With ``negative > 0`` the "window" kernel trains as
    "fused" (see the design note, D').
    """

    cdef ModelView m
    cdef object _keep_alive
    cdef object _hot_arrays
    cdef object _neg_index
    cdef object _hot_word_arrays
    cdef readonly object lockf  # the lock factors in use (float32), None when all are 1
    cdef Py_ssize_t n_hot

    def __init__(self, float[:, ::1] syn0, float[:, ::1] syn1, const uint8_t[:, ::1] codes,
                 const int32_t[:, ::1] points, const int32_t[::1] lengths,
                 const uint32_t[::1] sample_int, int window, bint sg, bint cbow_mean=True,
                 bint shrink_windows=True, bint compute_loss=False, str kernel="fused",
                 bint prefetch=True, int hot_nodes=0, int hot_sync=1000,
                 int hot_visits=2**30, float hot_scale=1.0, hot_rows=None, int block=4,
                 bint hs=True,
                 float[:, ::1] syn1neg=None, const uint32_t[::1] cum_table=None,
                 int negative=0, lockf=None, hot_words=None):
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        if negative < 0:
            raise ValueError(f"negative must be >= 0, got {negative}")
        if not hs and not negative:
            raise ValueError("nothing to train: hs is off and negative is 0")
        cdef Py_ssize_t V = syn0.shape[0]
        if V < 1:
            raise ValueError("the vocabulary is empty")
        if (codes.shape[0] != V or points.shape[0] != V or lengths.shape[0] != V
                or sample_int.shape[0] != V or codes.shape[1] != points.shape[1]
                or (hs and (syn1.shape[0] < V - 1 or syn1.shape[1] != syn0.shape[1]))):
            raise ValueError("inconsistent model arrays (vocabulary, tree and weights differ)")
        if negative and (syn1neg is None or cum_table is None
                         or syn1neg.shape[0] != V or syn1neg.shape[1] != syn0.shape[1]
                         or cum_table.shape[0] != V or cum_table[V - 1] == 0):
            raise ValueError("negative > 0 needs syn1neg (V x d) and cum_table (V entries, "
                             "the last > 0) for the same vocabulary")
        # gensim's vectors_lockf (design note H): None or all ones trains every row fully
        self.lockf = None
        cdef const float[::1] lockf_view
        if lockf is not None:
            lockf = np.ascontiguousarray(np.atleast_1d(lockf), dtype=np.float32).ravel()
            if len(lockf) < 1 or not np.isfinite(lockf).all():
                raise ValueError("vectors_lockf must hold at least one factor, all finite")
            if not (lockf == 1.0).all():
                self.lockf = lockf
        self.m.lockf = NULL
        self.m.lockf_len = 1
        if self.lockf is not None:
            lockf_view = self.lockf
            self.m.lockf = &lockf_view[0]
            self.m.lockf_len = lockf_view.shape[0]
        self._keep_alive = (syn0, syn1, codes, points, lengths, sample_int, syn1neg, cum_table)
        self.m.syn0 = &syn0[0, 0]
        self.m.syn1 = &syn1[0, 0] if hs else NULL
        self.m.hs = hs
        self.m.negative = negative
        self.m.syn1neg = &syn1neg[0, 0] if negative else NULL
        # the negative draw: the table and its bucket index (``neg_index``)
        cdef const int32_t[::1] index_view
        self._neg_index = None
        memset(&self.m.neg, 0, sizeof(NegTable))
        if negative:
            self._neg_index, self.m.neg.shift = neg_index(cum_table)
            index_view = self._neg_index
            self.m.neg.cum = &cum_table[0]
            self.m.neg.n = V
            self.m.neg.index = &index_view[0]
        self.m.n_words = V
        self.m.codes = &codes[0, 0]
        self.m.points = &points[0, 0]
        self.m.lengths = &lengths[0]
        self.m.sample_int = &sample_int[0]
        self.m.d = syn0.shape[1]
        self.m.max_length = codes.shape[1]
        self.m.window = window
        self.m.sg = sg
        self.m.cbow_mean = cbow_mean
        self.m.shrink_windows = shrink_windows
        self.m.compute_loss = compute_loss
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
        self.m.kernel = KERNELS[kernel]
        if negative and self.m.kernel == KERNEL_WINDOW:
            self.m.kernel = KERNEL_FUSED  # the window kernel is hs-only (design note, D')
        self.m.prefetch = prefetch
        # The top of the tree is on almost every path: threads writing the same rows would
        # pass those cache lines back and forth between cores all the time. Each job trains
        # a private copy of the hottest inner nodes (the last created, highest ids) and adds
        # its change back (Vuurens et al., "Efficient Parallel Learning of Word2Vec", 2016),
        # times ``hot_scale`` (1: every update counts, as in Hogwild; 1/workers: the changes
        # are averaged): a row alone after ``hot_visits`` visits (centre words whose path
        # holds it), and every row every ``hot_sync`` trained centre words and at the job's
        # end. A row is copied from the shared one at its first visit after a sync, so a row
        # the job never visits costs nothing.
        # Word2Vec asks for it only with several workers (``hot_nodes=0`` trains every row in
        # place).
        # ``hot_rows`` (inner-node ids) names the private rows instead: after a vocabulary
        # update the most visited nodes are no longer the highest ids (hsw2v.vocab_update).
        cdef Py_ssize_t inner = max(V - 1, 1)
        if hot_rows is not None and hs:
            ids = np.asarray(hot_rows, dtype=np.int64).ravel()
            if len(np.unique(ids)) != len(ids) or (
                    len(ids) and (ids.min() < 0 or ids.max() >= inner)):
                raise ValueError(f"hot_rows must be distinct inner nodes in 0..{inner - 1}")
            hot_rows = ids.astype(np.int32)
        else:
            n = min(inner, max(hot_nodes, 0)) if hs else 0
            hot_rows = np.arange(inner - n, inner, dtype=np.int32)
        self._hot_arrays = _fill_hot_set(&self.m.hot_nodes, hot_rows, inner)
        self.n_hot = len(hot_rows)
        # The same for negative sampling: every thread draws the most frequent words as
        # negatives, so ``hot_words`` (word ids, rows of syn1neg; Word2Vec gives the most
        # frequent ones with several workers) are trained as private copies, synced as above.
        if hot_words is not None and negative:
            ids = np.asarray(hot_words, dtype=np.int64).ravel()
            if len(np.unique(ids)) != len(ids) or (
                    len(ids) and (ids.min() < 0 or ids.max() >= V)):
                raise ValueError(f"hot_words must be distinct words in 0..{V - 1}")
            hot_words = ids.astype(np.int32)
        else:
            hot_words = np.zeros(0, dtype=np.int32)
        self._hot_word_arrays = _fill_hot_set(&self.m.hot_words, hot_words, V)
        self.m.hot_sync = max(hot_sync, 1)
        self.m.hot_visits = max(hot_visits, 1)
        self.m.hot_scale = hot_scale
        if not 1 <= block <= MAX_BLOCK:
            raise ValueError(f"block must be in 1..{MAX_BLOCK}, got {block}")
        self.m.block = block

    def train_job(self, const int32_t[::1] ids, const int64_t[::1] ends, float alpha0,
                  float alpha1, uint64_t seed):
        """Train one job of whole sentences without the GIL.

        ``ids``: word ids of the job's sentences, concatenated; ``ends[s]``: end offset of
        sentence ``s`` in ``ids``. Returns ``(kept_tokens, loss)``: the tokens left after
        subsampling (the "effective words") and the summed -log-likelihood of every path
        trained (0.0 unless the Trainer was made with ``compute_loss``); the loss is NaN when
        the job met a non-finite weight (design note G)."""
        cdef int64_t n_ids = ids.shape[0]
        cdef int64_t n_sentences = ends.shape[0]
        cdef int64_t kept = 0
        cdef double loss = 0.0
        cdef int rc
        if n_sentences and ends[n_sentences - 1] != n_ids:
            raise ValueError("the last sentence end must equal the number of ids")
        if n_ids == 0:
            return 0, 0.0
        with nogil:
            rc = train_job_nogil(&self.m, &ids[0], &ends[0], n_ids, n_sentences, alpha0,
                                 alpha1, seed, &kept, &loss)
        if rc != 0:
            raise MemoryError("could not allocate a training job's buffers")
        return kept, loss

    def private_row_mask(self):
        """Twin of the private-row test (``is_private``) over every inner node: True where
        jobs train a private copy (those shared rows are never prefetched)."""
        cdef Py_ssize_t n = max(self.m.n_words - 1, 1) if self.m.hs else 0
        out = np.zeros(n, dtype=bool)
        cdef Py_ssize_t r
        for r in range(n):
            out[r] = is_private(&self.m.hot_nodes, <int32_t>r)
        return out

    def job_routine_model(self):
        """This Trainer's model as a capsule for ``train_job_nogil`` (declared in
        ``_inner.pxd``), so that other nogil code can train jobs; keep the Trainer alive while
        it is used."""
        return PyCapsule_New(&self.m, "hsw2v._inner.ModelView", NULL)


cdef int train_job_nogil(const void *model, const int32_t *ids, const int64_t *ends,
                         int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                         uint64_t seed, int64_t *kept, double *loss) noexcept nogil:
    """``Trainer.train_job`` without the GIL: ``model`` is a ``ModelView`` (from
    ``Trainer.job_routine_model``), ``ends[n_sentences - 1] == n_ids``. Writes the kept
    (effective) tokens and the loss; returns 0, or -1 if its buffers could not be allocated."""
    cdef const ModelView *m = <const ModelView *>model
    cdef int64_t s, start, total
    cdef int b
    cdef int rc_nodes
    cdef JobState st
    kept[0] = 0
    loss[0] = 0.0
    if n_ids == 0:
        return 0
    memset(&st, 0, sizeof(JobState))
    st.rng = seed if seed else 1
    st.work = <float *>malloc(m.d * sizeof(float))
    st.neu1 = <float *>malloc(m.d * sizeof(float))
    st.kept = <int32_t *>malloc(n_ids * sizeof(int32_t))
    st.ends = <int64_t *>malloc(n_sentences * sizeof(int64_t))
    st.xrows = <float **>malloc(MAX_BLOCK * sizeof(float *))
    st.xwords = <int32_t *>malloc(MAX_BLOCK * sizeof(int32_t))
    st.wrows = <float **>malloc(MAX_BLOCK * sizeof(float *))
    st.yrows = <float **>malloc(m.max_length * sizeof(float *))
    st.W = <float *>malloc(MAX_BLOCK * m.d * sizeof(float))
    st.xlock = <float *>malloc(MAX_BLOCK * sizeof(float))
    st.pairs = pairs_max(m, n_ids)
    st.negs = <int32_t *>malloc(2 * <size_t>st.pairs * (m.negative + 1) * sizeof(int32_t))
    st.neg_counts = <int *>malloc(2 * <size_t>st.pairs * sizeof(int))
    st.nrows = <float **>malloc((m.negative + 1) * sizeof(float *))
    rc_nodes = alloc_hot_copy(&st.nodes, m.hot_nodes.n, m.d)
    rc_nodes |= alloc_hot_copy(&st.words, m.hot_words.n, m.d)
    if (st.work == NULL or st.neu1 == NULL or st.kept == NULL or st.ends == NULL
            or st.xrows == NULL or st.xwords == NULL or st.wrows == NULL
            or st.yrows == NULL or st.W == NULL or rc_nodes or st.negs == NULL
            or st.neg_counts == NULL or st.nrows == NULL or st.xlock == NULL):
        free_job_state(&st)
        return -1
    for b in range(MAX_BLOCK):
        st.wrows[b] = st.W + b * m.d
    total = subsample(m, &st, ids, ends, n_sentences)
    start = 0
    for s in range(n_sentences):
        if st.ends[s] - start > 1:
            train_sentence(m, &st, start, st.ends[s], total, alpha0, alpha1)
        start = st.ends[s]
    if m.hot_nodes.n or m.hot_words.n:
        flush_hot(m, &st)
    kept[0] = total
    if m.compute_loss:  # the fused walks' terms (the job's tally)
        st.loss += loss_total(&st.tally)
    # design note G: a job that met a non-finite weight reports a NaN loss
    loss[0] = st.loss if isfinite(st.check) else NAN
    free_job_state(&st)
    return 0


# --------------------------------------------------------------------------------------------
# Corpus to ids (holds the GIL: dictionary lookups), and exact log-probabilities.
# --------------------------------------------------------------------------------------------

def encode_sentences(list sentences, dict key_to_index, Py_ssize_t n_words=-1):
    """Map a list of token lists to ``(ids int32, ends int64, raw_words)``; unknown tokens are
    dropped (as gensim does), sentences are kept whole however long.

    Nothing about the user's objects is trusted: a sentence that is not exactly a ``list``
    (a list subclass, a tuple, a lazy sequence) is read once into a list, whatever its
    ``len()`` says, and the write into the id buffer is bounded by its size even so (a
    token's ``__hash__`` may run code that changes a sentence). With ``n_words >= 0`` every
    id must lie in ``[0, n_words)`` (the rows the kernels will index)."""
    cdef Py_ssize_t total = 0, k = 0, s = 0, id_
    cdef object sentence, token, index
    cdef list read = []
    for sentence in sentences:
        if isinstance(sentence, (str, bytes)):
            raise TypeError(
                "a sentence is a string; each sentence must be a list of str tokens "
                "(split your text first, or use LineSentence)")
        if type(sentence) is not list:
            sentence = list(sentence)
        read.append(sentence)
        total += len(<list>sentence)
    ids = np.empty(total, dtype=np.int32)
    ends = np.empty(len(read), dtype=np.int64)
    cdef int32_t[::1] ids_view = ids
    cdef int64_t[::1] ends_view = ends
    for sentence in read:
        for token in <list>sentence:
            index = key_to_index.get(token)
            if index is not None:
                id_ = index
                if k >= total:
                    raise RuntimeError(
                        f"sentence #{s} changed while its tokens were read (it now holds more "
                        "tokens than it did): do not change the corpus while training reads it")
                if n_words >= 0 and not 0 <= id_ < n_words:
                    raise RuntimeError(
                        f"the vocabulary maps token {token!r} to id {id_}, outside the "
                        f"{n_words} rows of the weights: do not change wv.key_to_index while "
                        "training runs")
                ids_view[k] = <int32_t>id_
                k += 1
        ends_view[s] = k
        s += 1
    return ids[:k], ends, total
