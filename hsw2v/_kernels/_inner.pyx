# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Training kernels of word2vec: hierarchical softmax, and negative sampling beside it.

Design note
-----------
A. What runs without the GIL. ``Trainer.train_job`` takes one job (a batch of whole sentences,
   already mapped to word ids, with their end offsets), releases the GIL and runs: subsampling,
   window reduction, the path walks and the weight updates. Python prepares jobs, the schedule
   and the threads (``hsw2v.running.epochs``); the nogil block sees only pointers and integers.
   ``train_job_nogil`` (declared in ``_inner.pxd``) is that block, for C callers that make
   their jobs without the GIL (``hsw2v._kernels._corpus_file``), which take it and the model's view
   from a cimported ``Trainer`` (``trainer.job``, ``trainer.m``: typed, no ``void*``).

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
   g          dL/df = sigmoid(f) - (1 - code), L = -log P(word | h) (``math/_path.pxd``, note A);
              the step is ``syn1[node] -= alpha g h``, ``work = -alpha sum g syn1[node]``
   syn1neg    output vectors of negative sampling, V x d, one per word; IN/OUT
   cum_table  uint32 V: cumulative count**ns_exponent scaled to [0, 2**31 - 1]; IN
   negs       the words of one negative-sampling step: the target (label 1) then the drawn
              negatives (label 0), ``negative`` draws with the target's own draws left out
   =========  ==============================================================================

D. The path walks. The hierarchical-softmax gradient has one home, the reference step
   ``hs_step`` of ``math/_path.pxd`` (Mikolov et al. 2013, eq. for hierarchical softmax; Morin &
   Bengio 2005), with its sign convention (``g = dL/df``); ``hs_path`` here is Word2Vec's
   call of it (table sigmoid, ``work = -alpha dL/dh``), the "reference" variant (and, with
   plain loops or BLAS, the benchmark-only "loop" and "blas" of ``_bench_walks.pyx``). The two fast variants are optimisations of that step, each tested as its twin
   (``tests/test_kernel_twins.py``): ``hs_path_fused`` ("fused") gives the
   reference's bits with ``math/_vec.h`` loops (the "reference" variant; in skip-gram without
   lock factors, where the context row's ``+= work`` is folded into the last node's pass,
   to the rounding of that one add), and ``train/_window.h``'s phased walks ("window", the
   default: a block of skip-gram contexts, or CBOW's one h) the reference's updates to
   float rounding. Both keep word2vec.c's arithmetic
   (``g_w2v = (1 - code - sigmoid(f)) * alpha``), which equals the reference's ``-alpha *
   dL/df`` bit for bit (``math/_path.pxd``, note A). Skip-gram and CBOW differ only in how ``h``
   is formed and where ``work`` goes afterwards.

D'. Negative sampling (Mikolov et al. 2013, "Distributed Representations of Words and
   Phrases", negative sampling objective). Its step is the reference ``ns_step`` of
   ``math/_path.pxd``, a loop of the same ``node_step`` as ``hs_step``: for one ``h`` it walks the
   target (label 1) and its drawn negatives (label 0), ``g = dL/df = sigmoid(f) - label``,
   ``work -= alpha g syn1neg[w]``, ``syn1neg[w] -= alpha g h`` (``ns_path`` here, the
   "reference" variant, and "loop" / "blas" in ``_bench_walks.pyx``). The default ("fused") is ``ns_path_fused``, each
   word's update fused with the next word's dot product: the reference's bits (its twin
   test). CBOW takes a set whose rows are distinct in two passes (``train/_ns_pair.pxd``: every
   dot product first, then one update pass that sends the error straight into the window's
   rows; its hidden vector is summed in one pass too): the same bits again (its twin test).
   Above ``NS_BLOCK_MAX_D`` (where the block measured slower) CBOW keeps the fused walk and
   sends its error to the window's rows in the last word's update pass
   (``hsw2v_update_spread``), not in a pass per row after it: the same bits (its twin test).
   The draw is gensim's: a uniform integer below ``cum_table[-1]``, the first table
   entry ``>=`` it (a draw equal to the target is skipped, not redrawn), found through a
   bucket index over the integer's top bits (``neg_index``: a few entries bisected, without
   branches, instead of V; the same word). ``draw_centre`` draws a centre's reduced window
   and all its negatives at once, one centre ahead of training (the draws do not depend on
   the weights, and the stream's order is kept, so the results are those of drawing each
   pair's words just before its step), and each pair prefetches the next pair's rows: inside
   its fused walk, one row per word (``ns_path_fused``'s ``ahead``), or all at once before
   CBOW's two-pass block. With several
   workers each job trains private copies of the most frequent words' rows (``hot_words``,
   design note B). With ``negative > 0`` the sg and CBOW callers run, per (h, target), first
   the hierarchical-softmax walk (if ``hs``) and its update of the input rows, then the
   negative-sampling walk with its own ``work`` and the same update, exactly gensim's order
   (gensim's ``train_batch_sg`` / ``_cbow`` call ``fast_sentence_*_hs`` then
   ``fast_sentence_*_neg``; CBOW forms ``h`` again from the updated rows for the second). The
   "window" kernel is hs-only (its blocks move a window's contexts together, which would
   reorder the ns steps), so with ``negative > 0`` skip-gram takes the "fused" walks.
   With ``shared_negatives`` (the Word2Vec default) a skip-gram centre draws one set of
   negatives, shared by all its contexts, and trains them as one block (``train/_ns_shared.pxd``:
   Ji et al. 2016), after the contexts' hierarchical-softmax walks when ``hs``. CBOW counts
   its centres that have a context over the job (t = 0, 1, ...): centre t draws a set when
   ``(t // cbow_stride) % cbow_run == 0`` and keeps its draws in ring slot ``t % cbow_stride``;
   any other centre takes slot ``t % cbow_stride``'s draws (those of centre ``t - cbow_stride``),
   less any equal to its own target, and draws nothing. The stride, ``2 x window + 1`` by
   default, keeps the centres that share a set out of each other's windows: consecutive
   centres (whose hidden vectors share most of their rows) sharing one set lost a point of
   analogy accuracy (benchmarks/RESULTS.md, "Shared negatives for CBOW"). Everything else
   is the per-centre step.

E. Departures from word2vec.c/gensim, on purpose: a node with |f| beyond the sigmoid table's
   range is not skipped; sigmoid saturates to 0 or 1 there, so a confidently wrong node still
   gets its full gradient (as fastText does); the same holds for negative sampling, where
   gensim skips a target or negative with |f| >= 6. The loss is -log sigmoid of every term to
   float32 precision, summed in float64 per job (the fused walks and the window block push
   their terms onto the job's tally, ``math/_loss.h``; the reference walks take libm's),
   never in a shared float32. Sentences are never truncated.

F. Reproducibility. Every job seeds its random stream from (seed, epoch, job index), so a run
   with one worker is bit-identical from run to run, whatever ``PYTHONHASHSEED`` is. The
   negatives are drawn from the same stream (gensim uses its own 48-bit LCG per thread; the
   distribution of the draws is the same, the sequence is not).

G. NaN safety and the divergence check. The table sigmoid is ``math/_vec.h``'s (via
   ``math/_vecops.pxd``, the one definition): a NaN never becomes a table index, it gives a NaN
   gradient. Every walk adds each ``f`` it computes to the job's ``check`` (one float64 add
   per node, off the critical path); ``f`` is a dot product with the hidden vector, so the sum
   is non-finite iff some row the job read (syn0 via ``h``, syn1 / syn1neg) or wrote was. The
   window block, whose per-node loop is the tightest, adds instead the first entry of each
   context row it updated, once per block: a NaN ``f`` at any node makes that row all NaN
   (an infinity is seen once it has produced a NaN, as inf - inf or 0 * inf do). A job
   whose check is non-finite reports its loss as NaN (with or without ``compute_loss``), and
   the epoch drivers (``hsw2v.running.epochs``) stop training on it with
   ``hsw2v.divergence.TrainingDivergedError``.

H. Lock factors (gensim's ``wv.vectors_lockf``, "lockf"). Every update of a syn0 row (the
   context row in skip-gram, each window row in CBOW, for hs and ns, in every kernel) is
   scaled by ``lockf[w % len(lockf)]`` of its word ``w``, as gensim's ``our_saxpy(...,
   &words_lockf[w % lockf_len], work, ...)``: 0 freezes a word, a scalar (one entry) scales
   all. syn1 and syn1neg are trained as usual. When every factor is 1 the Trainer keeps no
   factors (``lockf == NULL``) and the kernels take their usual path (the fused skip-gram walk
   still adds ``work`` to the context row inside its last node's pass).

Every nogil routine has a Python-callable twin (``py_*``, at the end of this file), which
the tests compare with NumPy references and with the reference steps of ``math/_path.pxd``.

I. Files. This module is one translation unit (the compiler sees every call and inlines the
   walks into the job loop), composed of cimported inline modules with one job each: those
   every kernel shares in ``math/`` (vector steps, node step, a tree's view), the training
   step's in ``train/`` (``_model``: the input kind and the outputs; ``_sigmoid``, ``_window``,
   ``_rng``, ``_walks``, ``_hot``, and one job: ``_job``), and the rate inside a job
   (``_rates.pxd``). This file keeps the output makers (``tree_output``, ``draw_output``), the
   ``Trainer`` (the model's arrays checked and borrowed; declared in ``_inner.pxd`` so that
   ``_corpus_file`` reaches its view through a typed cimport), the nogil job entry
   ``train_job_nogil``, ``encode_sentences``, the negative draw's bucket index and the
   Python-callable twins. The benchmark-only "loop" and "blas" walks are not in this module:
   ``_bench_walks.pyx`` composes them from the same inline modules, compiled only on request
   (``HSW2V_BENCH_WALKS=1``).
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

from hsw2v._kernels._rates cimport job_alpha
from hsw2v._kernels.math._path cimport hs_path_nll, hs_step, node_coef, node_step
from hsw2v._kernels.math._tree_view cimport fill_tree_view, tree_fits
from hsw2v._kernels.math._vecops cimport (
    hsw2v_axpy, hsw2v_dot, hsw2v_loss_acc, loss_init, loss_total, neg_log_sigmoid_sum,
    sigmoid_residual,
)
from hsw2v._kernels.train._hot cimport is_private
from hsw2v._kernels.train._job cimport run_job
from hsw2v._kernels.train._model cimport (
    INPUT_CONTEXT, INPUT_DOC_CONTEXT, INPUT_DOC_WINDOW, INPUT_SUBWORD_CENTRE,
    INPUT_SUBWORD_WINDOW, INPUT_WINDOW, MAX_OUTPUTS,
    OUTPUT_HS, OUTPUT_NS, HotSet, ModelView, NegTable, Output,
)
from hsw2v._kernels.train._ns_pair cimport hsw2v_rows_sum, ns_pair_block, rows_distinct
from hsw2v._kernels.train._ns_shared cimport ns_shared_block
from hsw2v._kernels.train._rng cimport (
    NEG_INDEX_BITS, draw_negatives, draw_word_bisect, job_seed_nogil, next_random,
)
from hsw2v._kernels.train._sigmoid cimport SIGMOID, sigmoid, sigmoid_table_init
from hsw2v._kernels.train._state cimport JobRoutines, JobState, flush_hot
from hsw2v._kernels.train._walks cimport (
    WALK_FUSED, WALK_REFERENCE, WALK_WINDOW, hs_path, hs_path_fused, ns_path,
    ns_path_fused, twin_hs, twin_ns, walk_rows,
)
from hsw2v._kernels.train._window cimport MAX_BLOCK

sigmoid_table_init()  # this module's table (train/_sigmoid.h), read by every job

# The walk variants this module trains (Trainer's ``walk``); "loop" and "blas" are the
# benchmark-only walks of ``_bench_walks.pyx`` (WALK_REFERENCE with other RefWalks).
WALKS = {"fused": WALK_FUSED, "window": WALK_WINDOW, "reference": WALK_REFERENCE}
BENCH_WALKS = ("loop", "blas")


cdef class Trainer:
    """Holds the model's arrays for the nogil kernels; one instance serves all worker threads.

    ``params`` maps each of the model's parameters the kernel reads to its value, by name:
    the fields of ``ModelView.params`` (``train/_model.pxd``: ``window``, ``sg``,
    ``cbow_mean``, ``shrink_windows``, ``compute_loss``), filled from a model by
    :func:`hsw2v.running.params.kernel_params`.

    One training step per (h, centre) pair, in fastText's shape: the input rows (``syn0``,
    V x d) form h by the input kind (``sg``: each context row is its own h; CBOW: the mean,
    or with ``cbow_mean`` false the sum, of the window's rows), each of ``outputs`` walks its
    targets for the centre, hierarchical softmax first whatever the list's order (gensim's
    order), and h's step goes back to the input rows. ``outputs`` holds at most one of each
    kind, made by :func:`tree_output` (hierarchical softmax) and :func:`draw_output`
    (negative sampling). The arrays are borrowed, not copied: training writes into ``syn0``
    and the outputs' matrices in place. ``walk`` picks the walks ("window", "fused",
    "reference"); each output's walk is chosen once, here: beside negative sampling the
    "window" walk trains as "fused" (see the design note, D').

    ``subwords=(ptr, rows)`` trains FastText's input (Bojanowski et al. 2017, "Enriching Word
    Vectors with Subword Information"): word w's input rows are ``rows[ptr[w]:ptr[w + 1]]``,
    rows of ``syn0`` (fastText's input matrix: the V word rows, then the n-gram buckets'),
    its own row first. Skip-gram then forms h as the mean of the centre word's rows and
    predicts each context word from it (fastText's and gensim's direction), CBOW as the mean
    (or sum) of every context word's rows; each step goes back to every row.

    ``docs=(rows, lockf, doc_words)`` trains Doc2Vec's input (Le & Mikolov 2014): the
    document rows (D x d), named in a job by tag tokens ``-(row + 1)`` before each document's
    words. Skip-gram is then PV-DBOW (each document row predicts every word; ``doc_words``:
    after skip-gram's own step), CBOW PV-DM (h: the window's rows and the document's).
    ``frozen`` (inference) writes only the document rows: the outputs take the walks of lr 0
    (``hs_path_frozen``, ``ns_path_frozen``), PV-DM's word rows are scratch copies; threads
    may infer at once (``infer_job``, ``infer_doc``: each call its own rows).
    """

    def __init__(self, float[:, ::1] syn0, const uint32_t[::1] sample_int, outputs, params, *,
                 str walk="fused", bint prefetch=True, int hot_sync=1000, int hot_visits=2**30,
                 float hot_scale=1.0, int block=4, lockf=None, subwords=None, docs=None,
                 bint frozen=False):
        try:  # by name, every field of ModelView.params (train/_model.pxd)
            self.m.params = params
        except (TypeError, ValueError, OverflowError) as err:
            raise ValueError("params must map each of the kernel's parameters (window, sg, "
                             f"cbow_mean, shrink_windows, compute_loss, ...) to its value: {err}"
                             ) from None
        if self.m.params.window < 1:
            raise ValueError(f"window must be >= 1, got {self.m.params.window}")
        cdef bint sg = self.m.params.sg
        cdef Py_ssize_t V = sample_int.shape[0]
        if V < 1:
            raise ValueError("the vocabulary is empty")
        if (syn0.shape[0] != V) if subwords is None else (syn0.shape[0] < V):
            raise ValueError("inconsistent model arrays (vocabulary, tree and weights differ)")
        if walk in BENCH_WALKS:
            raise ValueError(bench_walks_missing(walk))
        if walk not in WALKS:
            raise ValueError(f"walk must be one of {sorted(WALKS)}, got {walk!r}")
        outputs = list(outputs)
        kinds = [o.get("kind") if isinstance(o, dict) else None for o in outputs]
        if not outputs:
            raise ValueError("nothing to train: no output (hierarchical softmax or negative "
                             "sampling)")
        if any(k not in OUTPUT_KINDS for k in kinds) or len(set(kinds)) != len(kinds):
            raise ValueError("outputs must be at most one tree_output() and one "
                             f"draw_output(), got kinds {kinds}")
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
        self.m.syn0 = &syn0[0, 0]
        self.m.n_words = V
        self.m.sample_int = &sample_int[0]
        self.m.d = syn0.shape[1]
        self.m.input = INPUT_CONTEXT if sg else INPUT_WINDOW
        self._keep_alive = [syn0, sample_int]
        self.m.sub_ptr = NULL
        self.m.sub_rows = NULL
        self.m.sub_coef = NULL
        self.m.max_sub = 1
        self.m.docs = NULL
        self.m.n_docs = 0
        self.m.doc_lockf = NULL
        self.m.doc_words = False
        self.m.frozen = frozen
        if docs is not None and subwords is not None:
            raise ValueError("docs and subwords are two input kinds: give one")
        if docs is not None:
            self._docs(docs)
            self.m.input = INPUT_DOC_CONTEXT if sg else INPUT_DOC_WINDOW
        elif frozen:
            raise ValueError("frozen (inference) trains document rows: give docs")
        if subwords is not None:
            self._subwords(subwords, syn0.shape[0])
            self.m.input = INPUT_SUBWORD_CENTRE if sg else INPUT_SUBWORD_WINDOW
            if sg:  # h is the mean of the centre's rows, its step goes to each unscaled
                self.m.params.cbow_mean = True
        self.m.prefetch = prefetch
        self.job = train_doc_job_nogil if docs is not None else train_job_nogil
        if frozen:  # inference: the output rows are only read (the walks of lr 0)
            self.job = train_infer_job_nogil
        # The outputs (each kind steps at its place: hs, then ns). Each output's walk is
        # chosen here, once: the window walk is hs-only (its blocks move a window's contexts
        # together, which would reorder the ns steps), so beside negative sampling both take
        # the fused walks (design note D').
        cdef int walk_id = WALKS[walk]
        if "ns" in kinds and walk_id == WALK_WINDOW:
            walk_id = WALK_FUSED
        memset(&self.m.outputs[0], 0, MAX_OUTPUTS * sizeof(Output))
        self.m.n_outputs = len(outputs)
        self.m.hs = kinds.index("hs") if "hs" in kinds else -1
        self.m.ns = kinds.index("ns") if "ns" in kinds else -1
        self._hot_arrays = []
        self._neg_index = None
        cdef int k
        for k in range(self.m.n_outputs):
            self.m.outputs[k].kind = OUTPUT_KINDS[kinds[k]]
            self.m.outputs[k].walk = walk_id
            if kinds[k] == "hs":
                self._tree_output(&self.m.outputs[k], outputs[k], syn0)
            else:
                self._draw_output(&self.m.outputs[k], outputs[k], syn0)
        self.m.hot_sync = max(hot_sync, 1)
        self.m.hot_visits = max(hot_visits, 1)
        self.m.hot_scale = hot_scale
        if not 1 <= block <= MAX_BLOCK:
            raise ValueError(f"block must be in 1..{MAX_BLOCK}, got {block}")
        self.m.block = block
        if frozen:  # inference: the reference walks of FROZEN_ROUTINES, no private rows
            for k in range(self.m.n_outputs):
                self.m.outputs[k].walk = WALK_REFERENCE
                self.m.outputs[k].hot.n = 0
                self.m.outputs[k].hot.slot = NULL

    cdef _docs(self, docs):
        """Take the document rows ``(rows, lockf, doc_words)`` (``checked_docs``)."""
        rows, lockf, doc_words = checked_docs(docs, self.m.d)
        cdef float[:, ::1] rows_view = rows
        cdef const float[::1] lock_view
        self._keep_alive += [rows, lockf]
        self.m.docs = &rows_view[0, 0] if rows_view.shape[0] else NULL
        self.m.n_docs = rows_view.shape[0]
        self.m.doc_words = doc_words
        if lockf is not None:
            lock_view = lockf
            self.m.doc_lockf = &lock_view[0]

    cdef _subwords(self, subwords, Py_ssize_t n_rows):
        """Take the subword input rows ``(ptr, rows)``: word w's input rows are
        ``rows[ptr[w]:ptr[w + 1]]``, rows of syn0 (``n_rows``), at least one each; checked
        here, as the kernel follows them unchecked."""
        cdef Py_ssize_t V = self.m.n_words
        try:
            ptr, rows = subwords
        except (TypeError, ValueError):
            raise ValueError("subwords must be a pair (ptr, rows) of arrays") from None
        ptr = np.ascontiguousarray(ptr, dtype=np.int64)
        rows = np.ascontiguousarray(rows, dtype=np.int32)
        if ptr.ndim != 1 or rows.ndim != 1 or len(ptr) != V + 1:
            raise ValueError(f"subwords: ptr must hold V + 1 = {V + 1} offsets and rows be "
                             f"one-dimensional, got shapes {ptr.shape} and {rows.shape}")
        counts = np.diff(ptr)
        if ptr[0] != 0 or ptr[V] != len(rows) or (counts < 1).any():
            raise ValueError("subwords: ptr must rise from 0 to len(rows), each word having "
                             "at least one input row")
        if len(rows) and (rows.min() < 0 or rows.max() >= n_rows):
            raise ValueError(f"subwords: every row must be a row of syn0 (0..{n_rows - 1})")
        max_sub = int(counts.max())
        if 2 * max(self.m.params.window, 1) * max_sub >= 2**31:
            raise ValueError(f"subwords: a window of 2 x {self.m.params.window} words of up to "
                             f"{max_sub} input rows each exceeds 2**31 rows; use a smaller "
                             "window or fewer n-grams (max_n)")
        cdef const int64_t[::1] ptr_view = ptr
        cdef const int32_t[::1] rows_view = rows
        self._keep_alive += [ptr, rows]
        self.m.sub_ptr = &ptr_view[0]
        self.m.sub_rows = &rows_view[0] if len(rows) else NULL
        self.m.max_sub = max_sub
        coef = subword_coef(ptr_view, rows_view, self.lockf, max_sub)  # ModelView.sub_coef
        cdef const float[::1] coef_view = coef
        self._keep_alive.append(coef)
        self.m.sub_coef = &coef_view[0]

    cdef _tree_output(self, Output *o, dict spec, float[:, ::1] syn0):
        """Fill ``o`` from a :func:`tree_output` spec, after checking its arrays against the
        vocabulary (V) and the vector size."""
        cdef Py_ssize_t V = self.m.n_words
        cdef float[:, ::1] syn1 = spec["matrix"]
        cdef const uint8_t[:, ::1] codes = spec["codes"]
        cdef const int32_t[:, ::1] points = spec["points"]
        cdef const int32_t[::1] lengths = spec["lengths"]
        if (not tree_fits(codes, points, lengths, V) or syn1.shape[0] < V - 1
                or syn1.shape[1] != syn0.shape[1]):
            raise ValueError("inconsistent model arrays (vocabulary, tree and weights differ)")
        self._keep_alive += [syn1, codes, points, lengths]
        o.matrix = &syn1[0, 0]
        fill_tree_view(&o.tree, codes, points, lengths)
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
        hot_rows = spec.get("hot_rows")
        if hot_rows is not None:
            hot_rows = distinct_rows(hot_rows, inner, "hot_rows", "inner nodes")
        else:
            n = min(inner, max(spec.get("hot_nodes", 0), 0))
            hot_rows = np.arange(inner - n, inner, dtype=np.int32)
        self._hot_arrays.append(_fill_hot_set(&o.hot, hot_rows, inner))
        self.n_hot = len(hot_rows)

    cdef _draw_output(self, Output *o, dict spec, float[:, ::1] syn0):
        """Fill ``o`` from a :func:`draw_output` spec, after checking its arrays against the
        vocabulary (V) and the vector size."""
        cdef Py_ssize_t V = self.m.n_words
        cdef int negative = spec["negative"]
        cdef int cbow_run = spec.get("cbow_run", 4), cbow_stride = spec.get("cbow_stride", 0)
        cdef float[:, ::1] syn1neg
        cdef const uint32_t[::1] cum_table
        if negative < 1:
            raise ValueError(f"negative must be >= 1 in a draw_output(), got {negative}")
        if spec.get("matrix") is None or spec.get("cum_table") is None:
            raise ValueError("negative > 0 needs syn1neg (V x d) and cum_table (V entries, "
                             "the last > 0) for the same vocabulary")
        syn1neg = spec["matrix"]
        cum_table = spec["cum_table"]
        if (syn1neg.shape[0] != V or syn1neg.shape[1] != syn0.shape[1]
                or cum_table.shape[0] != V or cum_table[V - 1] == 0):
            raise ValueError("negative > 0 needs syn1neg (V x d) and cum_table (V entries, "
                             "the last > 0) for the same vocabulary")
        if cbow_run < 1 or cbow_stride < 0:
            raise ValueError("cbow_run must be >= 1 and cbow_stride >= 0, got "
                             f"{cbow_run} and {cbow_stride}")
        self._keep_alive += [syn1neg, cum_table]
        o.matrix = &syn1neg[0, 0]
        o.negative = negative
        # the negative draw: the table and its bucket index (``neg_index``)
        cdef const int32_t[::1] index_view
        self._neg_index, o.neg.shift = neg_index(cum_table)
        index_view = self._neg_index
        o.neg.cum = &cum_table[0]
        o.neg.n = V
        o.neg.index = &index_view[0]
        # shared negatives (design note D'): skip-gram, one set per centre (train/_ns_shared.pxd);
        # CBOW, one set per ``cbow_run`` centres ``cbow_stride`` apart (0: 2 x window + 1; a
        # window past 512 words spans nearly any sentence: a longer ring gains nothing)
        shared = bool(spec.get("shared", False))
        o.shared = shared and (self.m.input == INPUT_CONTEXT
                               or self.m.input == INPUT_SUBWORD_CENTRE)
        o.cbow_run = (cbow_run if shared and (self.m.input == INPUT_WINDOW
                                              or self.m.input == INPUT_SUBWORD_WINDOW) else 1)
        o.cbow_stride = cbow_stride if cbow_stride else 2 * min(self.m.params.window, 512) + 1
        # Every thread draws the most frequent words as negatives, so ``hot_rows`` (word ids,
        # rows of syn1neg; Word2Vec gives the most frequent ones with several workers) are
        # trained as private copies, synced as the tree's hot rows (``_tree_output``).
        hot_rows = spec.get("hot_rows")
        if hot_rows is not None:
            hot_rows = distinct_rows(hot_rows, V, "hot_words", "words")
        else:
            hot_rows = np.zeros(0, dtype=np.int32)
        self._hot_arrays.append(_fill_hot_set(&o.hot, hot_rows, V))

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
        if self.m.input == INPUT_DOC_CONTEXT or self.m.input == INPUT_DOC_WINDOW:
            if self.m.docs == NULL:
                raise ValueError("a Doc2Vec job needs document rows (docs holds none)")
            _check_tag_tokens(ids, self.m.n_docs)
        with nogil:
            rc = self.job(&self.m, &ids[0], &ends[0], n_ids, n_sentences, alpha0, alpha1,
                          seed, &kept, &loss)
        if rc != 0:
            raise MemoryError("could not allocate a training job's buffers")
        return kept, loss

    def infer_job(self, const int32_t[::1] ids, const int64_t[::1] ends, float[:, ::1] rows,
                  float alpha0, float alpha1, uint64_t seed):
        """``train_job`` over other document rows ``rows`` (inference: a Trainer made with
        ``frozen=True`` writes only them). Each call trains its own rows over a copy of the
        model's view, so calls from several threads run at once, without the GIL."""
        cdef int64_t n_ids = ids.shape[0]
        cdef int64_t n_sentences = ends.shape[0]
        self._check_inference(rows)
        if n_sentences and ends[n_sentences - 1] != n_ids:
            raise ValueError("the last sentence end must equal the number of ids")
        if n_ids == 0:
            return 0, 0.0
        _check_tag_tokens(ids, rows.shape[0])
        return self._infer(&ids[0], &ends[0], n_ids, n_sentences, rows, alpha0, alpha1, seed)

    def infer_doc(self, const int32_t[::1] words, int epochs, float[::1] row, float alpha0,
                  float alpha1, uint64_t seed):
        """Doc2Vec's ``infer_vector`` in one call: ``row`` (d floats, written) starts uniform
        in [-1/d, 1/d) from ``seed`` and trains on the word ids ``words`` for ``epochs``
        passes (one job: each pass a document led by the row's tag token), the rate falling
        from ``alpha0`` to ``alpha1``. Returns ``(kept, loss)`` as ``train_job``."""
        return infer_ids(self, &words[0] if words.shape[0] else NULL, words.shape[0], epochs,
                         np.asarray(row).reshape(1, -1), alpha0, alpha1, seed)

    cdef _check_inference(self, float[:, ::1] rows):
        if not self.m.frozen:
            raise ValueError("inference needs a Trainer made with frozen=True")
        if rows.shape[1] != self.m.d or rows.shape[0] < 1:
            raise ValueError(f"inference: rows must be at least one row of {self.m.d} floats")

    cdef _infer(self, const int32_t *ids, const int64_t *ends, int64_t n_ids,
                int64_t n_sentences, float[:, ::1] rows, float alpha0, float alpha1,
                uint64_t seed):
        """One inference job over ``rows`` and a copy of the model's view."""
        cdef ModelView view = self.m
        cdef int64_t kept = 0
        cdef double loss = 0.0
        cdef int rc
        view.docs = &rows[0, 0]
        view.n_docs = rows.shape[0]
        view.doc_lockf = NULL
        with nogil:
            rc = self.job(&view, ids, ends, n_ids, n_sentences, alpha0, alpha1, seed, &kept,
                          &loss)
        if rc != 0:
            raise MemoryError("could not allocate a training job's buffers")
        return kept, loss

    def private_row_mask(self):
        """Twin of the private-row test (``is_private``) over every inner node: True where
        jobs train a private copy (those shared rows are never prefetched)."""
        cdef Py_ssize_t n = max(self.m.n_words - 1, 1) if self.m.hs >= 0 else 0
        out = np.zeros(n, dtype=bool)
        cdef Py_ssize_t r
        for r in range(n):
            out[r] = is_private(&self.m.outputs[self.m.hs].hot, <int32_t>r)
        return out


include "_inner_entries.pxi"
include "_inner_arrays.pxi"
include "_inner_twins.pxi"
