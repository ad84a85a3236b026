# The outputs a Trainer takes (``tree_output``, ``draw_output``), the job entries of the
# training kernels and what their job loop calls out of line: the reference walks (and
# inference's, at learning rate 0), the routines (FastText's CBOW step among them), the
# checked tag tokens of a Doc2Vec job, and inference's entries (``infer_ids``, and
# ``infer_words``, which maps the words itself). Part of ``_inner.pyx`` (included; one module).

from libc.math cimport isfinite

from hsw2v._kernels.train._steps cimport subword_window


def tree_output(syn1, codes, points, lengths, hot_rows=None, int hot_nodes=0):
    """Hierarchical softmax as an output of a :class:`Trainer`: the inner-node rows ``syn1``
    (at least V - 1 rows of d, trained in place), the tree's paths as flat arrays (``codes``
    uint8 and ``points`` int32, V x max_length; ``lengths`` int32, V) and the rows each job
    trains a private copy of (``hot_rows``, inner-node ids; or the ``hot_nodes`` highest ids,
    the last created; none by default)."""
    return {"kind": "hs", "matrix": syn1, "codes": codes, "points": points,
            "lengths": lengths, "hot_rows": hot_rows, "hot_nodes": hot_nodes}


def draw_output(syn1neg, cum_table, int negative, hot_rows=None, bint shared=False,
                int cbow_run=4, int cbow_stride=0):
    """Negative sampling as an output of a :class:`Trainer`: the rows ``syn1neg`` (V x d,
    trained in place), the cumulative draw table ``cum_table`` (uint32, V entries, the last
    > 0), ``negative`` draws per step, the words whose rows each job trains a private copy of
    (``hot_rows``; none by default), and the shared draws (design note D'): ``shared``
    skip-gram draws one set per centre word, CBOW one set per ``cbow_run`` centre words, each
    ``cbow_stride`` centres after the last (0: ``2 * window + 1``, windows that do not
    overlap)."""
    return {"kind": "ns", "matrix": syn1neg, "cum_table": cum_table, "negative": negative,
            "hot_rows": hot_rows, "shared": shared, "cbow_run": cbow_run,
            "cbow_stride": cbow_stride}


OUTPUT_KINDS = {"hs": OUTPUT_HS, "ns": OUTPUT_NS}


cdef double hs_path_reference(const float *h, float *work, float **rows, const uint8_t *code,
                              int length, float alpha, int d, bint compute_loss,
                              double *check) noexcept nogil:
    """``hs_path`` out of line, so that the job loop stays small enough to inline the fast
    walks (the "reference" variant calls it through ``ROUTINES``)."""
    return hs_path(h, work, rows, code, length, alpha, d, compute_loss, check)


cdef double ns_path_reference(int d, const float *h, float *work, float *const *rows,
                              int count, float alpha, bint compute_loss,
                              double *check) noexcept nogil:
    """``ns_path`` out of line (see ``hs_path_reference``)."""
    return ns_path(d, h, work, rows, count, alpha, compute_loss, check)


cdef double hs_path_frozen(const float *h, float *work, float **rows, const uint8_t *code,
                           int length, float alpha, int d, bint compute_loss,
                           double *check) noexcept nogil:
    """Inference's hierarchical-softmax walk (``FROZEN_ROUTINES``): the reference step with
    ``lr = 0``, so the path's rows are only read; h's step is ``hs_path``'s (gensim's
    ``learn_hidden=False``)."""
    memset(work, 0, d * sizeof(float))
    return hs_step(d, h, work, -alpha, rows, NULL, code, NULL, length, NULL, 0.0, &SIGMOID,
                   NULL, NULL, compute_loss, NULL, check)


cdef double ns_path_frozen(int d, const float *h, float *work, float *const *rows, int count,
                           float alpha, bint compute_loss, double *check) noexcept nogil:
    """Inference's negative-sampling walk: the one node step over the target (label 1) and
    the negatives (label 0) with ``lr = 0`` and negative sampling's float32 ``g`` (``ns_path``'s
    h step, the rows only read)."""
    cdef int k
    cdef double loss = 0.0, fsum = 0.0
    memset(work, 0, d * sizeof(float))
    for k in range(count):
        node_step(d, h, work, -alpha, rows[k], NULL, 1.0 if k == 0 else 0.0, 0.0, &SIGMOID,
                  NULL, NULL, compute_loss, True, NULL, &loss, &fsum)
    check[0] += fsum
    return loss


cdef void flush_out_of_line(const ModelView *m, JobState *st) noexcept nogil:
    """``flush_hot`` out of line (``_job.JobRoutines``)."""
    flush_hot(m, st)


cdef void span_out_of_line(const ModelView *m, JobState *st, int64_t i, int64_t lo,
                           int64_t hi, int64_t end, const uint8_t *code, int length,
                           float alpha, const int32_t *negs, const int *counts,
                           const int32_t *next_negs, int next_count,
                           const JobRoutines *rt) noexcept nogil:
    """FastText's CBOW step out of line (``_job.JobRoutines``)."""
    subword_window(m, st, i, lo, hi, end, code, length, alpha, negs, counts, next_negs,
                   next_count, rt)


cdef JobRoutines ROUTINES  # what the job loop calls out of line
ROUTINES.walks.hs = hs_path_reference
ROUTINES.walks.ns = ns_path_reference
ROUTINES.flush = flush_out_of_line
ROUTINES.span = span_out_of_line
cdef JobRoutines FROZEN_ROUTINES  # inference: the walks that only read the output rows
FROZEN_ROUTINES.walks.hs = hs_path_frozen
FROZEN_ROUTINES.walks.ns = ns_path_frozen
FROZEN_ROUTINES.flush = flush_out_of_line
FROZEN_ROUTINES.span = span_out_of_line



def checked_docs(docs, int d):
    """A Trainer's ``docs=(rows, lockf, doc_words)``, checked: ``(rows, lockf or None when
    every factor is 1, doc_words)``, or a ValueError that says what is wrong."""
    try:
        rows, lockf, doc_words = docs
    except (TypeError, ValueError):
        raise ValueError("docs must be a triple (rows, lockf, doc_words)") from None
    cdef float[:, ::1] rows_view = rows
    if rows_view.shape[1] != d:
        raise ValueError(f"docs: the document rows must have {d} columns, got "
                         f"{rows_view.shape[1]}")
    if lockf is not None:
        lockf = np.ascontiguousarray(lockf, dtype=np.float32).ravel()
        if len(lockf) != rows_view.shape[0] or not np.isfinite(lockf).all():
            raise ValueError("docs: lockf must hold one finite factor per document row")
        if (lockf == 1.0).all():
            lockf = None
    return rows, lockf, bool(doc_words)


def _check_tag_tokens(ids, Py_ssize_t n_docs):
    """A ValueError unless every tag token of a Doc2Vec job (a negative id) names one of the
    ``n_docs`` document rows: the kernel follows them unchecked."""
    low = np.asarray(ids).min()
    if low < -n_docs:
        raise ValueError(f"a tag token names document row {-low - 1}, past the "
                         f"{n_docs} rows of docs")


cdef int train_job_nogil(const ModelView *m, const int32_t *ids, const int64_t *ends,
                         int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                         uint64_t seed, int64_t *kept, double *loss) noexcept nogil:
    """``Trainer.train_job`` without the GIL over a Trainer's view ``m`` (C callers take both
    from a cimported ``Trainer``: ``trainer.m``, ``trainer.job``), ``ends[n_sentences - 1] ==
    n_ids``. Writes the kept (effective) tokens and the loss; returns 0, or -1 if its buffers
    could not be allocated."""
    return run_job(m, ids, ends, n_ids, n_sentences, alpha0, alpha1, seed, kept, loss,
                   &ROUTINES, False)


cdef int train_infer_job_nogil(const ModelView *m, const int32_t *ids, const int64_t *ends,
                               int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                               uint64_t seed, int64_t *kept, double *loss) noexcept nogil:
    """The document kinds' job in inference (``Trainer(frozen=True)``): the walks of
    ``FROZEN_ROUTINES``, which write only the document rows."""
    return run_job(m, ids, ends, n_ids, n_sentences, alpha0, alpha1, seed, kept, loss,
                   &FROZEN_ROUTINES, True)


cdef int train_doc_job_nogil(const ModelView *m, const int32_t *ids, const int64_t *ends,
                             int64_t n_ids, int64_t n_sentences, float alpha0, float alpha1,
                             uint64_t seed, int64_t *kept, double *loss) noexcept nogil:
    """``train_job_nogil`` for the document kinds (Doc2Vec): the job's tag tokens name rows
    of ``m.docs``."""
    return run_job(m, ids, ends, n_ids, n_sentences, alpha0, alpha1, seed, kept, loss,
                   &ROUTINES, True)


# --------------------------------------------------------------------------------------------
# Inference (Doc2Vec's infer_vector): one job over a copy of the view (Trainer._infer).
# --------------------------------------------------------------------------------------------

cdef object infer_ids(Trainer trainer, const int32_t *words, int64_t n, int epochs,
                      float[:, ::1] rows, float alpha0, float alpha1, uint64_t seed):
    """``Trainer.infer_doc`` over ``n`` word ids (checked here): the start row from ``seed``,
    then one job of ``epochs`` passes, each the document led by the row's tag token."""
    cdef int64_t k, e, at
    cdef int d = trainer.m.d
    cdef uint64_t state = job_seed_nogil(seed, 0, 0)
    trainer._check_inference(rows)
    for k in range(d):  # uniform in [-1/d, 1/d), as the trained rows start
        rows[0, k] = (next_random(&state) * (1.0 / 4294967296.0) * 2.0 - 1.0) / d
    if epochs < 1 or n == 0:
        return 0, 0.0
    if n > (2**62) // (epochs * 2):
        raise ValueError("infer_doc: too many words x epochs")
    for k in range(n):
        if words[k] < 0 or words[k] >= trainer.m.n_words:
            raise ValueError(f"infer_doc: word id {words[k]} outside the vocabulary")
    cdef int32_t *ids = <int32_t *>malloc((n + 1) * epochs * sizeof(int32_t))
    cdef int64_t *ends = <int64_t *>malloc(epochs * sizeof(int64_t))
    if ids == NULL or ends == NULL:
        free(ids)
        free(ends)
        raise MemoryError("could not allocate an inference job")
    at = 0
    for e in range(epochs):
        ids[at] = -1
        at += 1
        for k in range(n):
            ids[at] = words[k]
            at += 1
        ends[e] = at
    try:
        return trainer._infer(ids, ends, at, epochs, rows, alpha0, alpha1, seed)
    finally:
        free(ids)
        free(ends)


def infer_words(Trainer trainer, list words, dict key_to_index, int epochs, float alpha0,
                float alpha1, uint64_t seed):
    """``Trainer.infer_doc`` from the words themselves, in one call: the known ones (by
    ``key_to_index``, as :func:`encode_sentences` maps them) are the document. Returns
    ``(row, finite)``: the new row (float32, d) and whether every entry of it is finite."""
    cdef Py_ssize_t n_words = len(words), n = 0, k, id_
    cdef object token, index
    cdef int d = trainer.m.d
    row = np.empty(d, dtype=np.float32)
    cdef float[:, ::1] rows = row.reshape(1, d)
    cdef int32_t *ids = <int32_t *>malloc(max(n_words, 1) * sizeof(int32_t))
    if ids == NULL:
        raise MemoryError("could not allocate an inference job")
    try:
        for token in words:
            index = key_to_index.get(token)
            if index is None:
                continue
            id_ = index
            if n >= n_words:
                raise RuntimeError("the document changed while its words were read")
            if not 0 <= id_ < trainer.m.n_words:
                raise RuntimeError(
                    f"the vocabulary maps token {token!r} to id {id_}, outside the "
                    f"{trainer.m.n_words} rows of the weights")
            ids[n] = <int32_t>id_
            n += 1
        infer_ids(trainer, ids, n, epochs, rows, alpha0, alpha1, seed)
    finally:
        free(ids)
    for k in range(d):
        if not isfinite(rows[0, k]):
            return row, False
    return row, True
