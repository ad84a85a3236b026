"""The tasks that Dask runs on the workers during distributed training (:mod:`hsw2v.distributed`).

Every task is pure: its result depends only on its arguments, so Dask may run it again on
another worker when the first one is lost. What a worker process keeps between tasks is a
cache, never a source of truth:

* the *replica* of shard ``k``: that shard's working copy of the weights (``syn0`` and each
  objective's output matrix, :data:`hsw2v.running.objectives.MATRICES`; 0 rows when unused), stamped
  with the round it holds. A training task that finds a replica it can bring up to date with
  the updates it was given uses it; otherwise it rebuilds one from the snapshot it was given.
  After training round ``r`` the replica holds the round-``r`` model plus this shard's own
  changes, and it keeps the old values of the rows it changed; putting those back and adding
  the round's merged update makes it exactly the round-``r + 1`` model again (the same
  float32 sums as a rebuild from a snapshot does, so the result is bit for bit the same
  whichever way a replica was made);
* the id-encoded jobs of each piece (while they fit ``cache_words``), so later epochs do not
  read and tokenise the files again, as :class:`hsw2v.Word2Vec` does on one machine.

A task trains its replica on one thread with the trainer :func:`hsw2v.running.trainer.trainer_settings`
makes from the model (``threads=1``: the same objective, kernel and settings as ``Word2Vec.train``
on one machine; private hot rows are for threads sharing one copy, which a replica never is).

The merge of a round's deltas, its rules and their references: :mod:`hsw2v._dist_merge`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, make_dataclass

import numpy as np

from hsw2v._dist_merge import matrix_rule, merge_rows
from hsw2v._kernels._merge import add_rows, changed_rows
from hsw2v._shards import (
    ByteRange,
    CorpusChangedError,
    Piece,
    count_and_mark_range,
    merge_counts,
)
from hsw2v.running.epochs import iter_jobs
from hsw2v.running.file_scan import Vocab, count_local_range, encode_local_ranges, local_range
from hsw2v.running.objectives import MATRICES, touched_rows
from hsw2v.running.params import TASK
from hsw2v.running.schedule import Schedule, within
from hsw2v.running.trainer import TrainerSettings
from hsw2v.vocab import build_vocabulary

RunSpec = make_dataclass(
    "RunSpec",
    [
        ("run_id", str),
        ("index_to_key", list),
        ("trainer", TrainerSettings),  # the model's trainer, as on one machine (one thread)
        ("schedule", Schedule),  # the run's learning rates and job seeds
        ("max_sentence_length", int),
        ("threads", int),  # threads training each task's piece (Hogwild when more than one)
        ("delta_dtype", str),  # of the deltas a task sends and the merged update ("float16")
        # the model's parameters a task reads itself: the table's ``task`` column, last
        *((name, object) for name in TASK),
    ],
)
RunSpec.__module__ = __name__  # pickled by name, as a class defined here
RunSpec.__doc__ = """Everything a training task needs besides the weights, scattered once to every
worker: the run's id, the vocabulary, the trainer settings, the schedule (rates and seeds),
the corpus reader's longest sentence, the parameters :data:`hsw2v.running.params.TASK` names
(``batch_words``, ``cache_words``), the threads that train each task's piece and the dtype of
the deltas it sends back."""


# The weights, in the order of every tuple of them: syn0, then each objective's output matrix
# (hsw2v.running.objectives.MATRICES: syn0, syn1, syn1neg).


@dataclass
class PieceResult:
    """One shard's share of a round: per matrix (a name in :data:`MATRICES`), the rows it
    changed (int32), their deltas (``[n, d]``: new value - old value, in the run's
    ``delta_dtype``: float32, or float16 to halve the bytes) and weights (float64 ``[n]``)."""

    parts: dict  # name -> (rows, deltas, weights)
    kept: int
    raw: int
    loss: float
    seconds: float

    def part(self, name: str) -> tuple:
        """``(rows, deltas, weights)`` of one matrix (a name in :data:`MATRICES`)."""
        return self.parts[name]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for name in MATRICES for a in self.part(name))


@dataclass
class RowUpdate:
    """A round's merged deltas (the same for every worker, added to the rows) and totals."""

    parts: dict  # matrix name (MATRICES) -> (rows, deltas)
    kept: int
    raw: int
    loss: float
    seconds: float  # the slowest shard's training time
    bytes_in: int  # bytes of the shards' results that were merged
    merge_seconds: float = 0.0  # the merge's own time, where it ran

    def part(self, name: str) -> tuple:
        """``(rows, deltas)`` of one matrix (a name in :data:`MATRICES`)."""
        return self.parts[name]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for name in MATRICES for a in self.part(name))


# ------------------------------------------------------------------------------ vocabulary
def count_task(byte_range: ByteRange, max_sentence_length, mark_every, max_vocab_size, trim_rule):
    """Count one range (see :func:`hsw2v._shards.count_and_mark_range`); a local file's range
    in C, unless the counts are pruned as they grow (``max_vocab_size``)."""
    if not max_vocab_size and local_range(byte_range):
        return count_local_range(byte_range, max_sentence_length, mark_every)
    return count_and_mark_range(
        byte_range, max_sentence_length, mark_every, max_vocab_size, trim_rule
    )


def marks_of(count) -> tuple:
    """The small part of a range count that the client needs to plan the pieces."""
    return count.words, count.sentences, count.marks


def merge_task(*parts, max_vocab_size=None, trim_rule=None) -> dict:
    """Merge range counts (or merged counts), in corpus order."""
    return merge_counts(
        (p.counts if hasattr(p, "counts") else p for p in parts), max_vocab_size, trim_rule
    )


def vocabulary_task(counts: dict, options: dict):
    """The final vocabulary from the merged counts, built on the worker that holds them; only
    the kept words travel to the client."""
    return build_vocabulary(counts, **options), len(counts)


# ------------------------------------------------------------------------------ merging
def merge_round_task(*results: PieceResult, merge: str, dtype: str = "float32") -> RowUpdate:
    """Merge one round's results into the update every shard applies; its deltas in ``dtype``
    (``"float16"``: half the bytes to send, the update every copy and snapshot adds is the
    rounded one, so they all still agree bit for bit)."""

    from concurrent.futures import ThreadPoolExecutor

    started = time.perf_counter()

    words = sum(r.raw for r in results)

    def merged(name):  # float16: narrowed in C, NumPy's bits
        narrow = np.float16 if np.dtype(dtype) == np.float16 else np.float32
        rule, hot_weight = matrix_rule(merge, name, words)
        rows, deltas = merge_rows([r.part(name) for r in results], rule, narrow, hot_weight)
        return rows, deltas.astype(dtype, copy=False)

    # the matrices merge at once (NumPy's large operations release the GIL): 2-3x faster
    # on the driver, the same arithmetic for each
    with ThreadPoolExecutor(max_workers=len(MATRICES)) as pool:
        parts = dict(zip(MATRICES, pool.map(merged, MATRICES), strict=True))
    return RowUpdate(
        parts,
        kept=sum(r.kept for r in results),
        raw=sum(r.raw for r in results),
        loss=sum(r.loss for r in results),
        seconds=max((r.seconds for r in results), default=0.0),
        bytes_in=sum(r.nbytes for r in results),
        merge_seconds=time.perf_counter() - started,
    )


def stats_of(update: RowUpdate) -> dict:
    """The round's totals without its rows (what the client watches)."""
    return {
        "kept": update.kept,
        "raw": update.raw,
        "loss": update.loss,
        "seconds": update.seconds,
        "bytes_in": update.bytes_in,
        "bytes_out": update.nbytes,
        "merge_seconds": update.merge_seconds,
        "rows": sum(len(update.part(name)[0]) for name in MATRICES),
    }


def _apply(weights: list, update: RowUpdate) -> None:
    """Add a round's merged deltas to their rows of ``weights`` (in :data:`MATRICES` order), in
    float32: the same sums wherever it runs."""
    for matrix, name in zip(weights, MATRICES, strict=True):
        rows, deltas = update.part(name)
        if len(rows):
            add_rows(matrix, np.ascontiguousarray(rows, np.int32), deltas)


@dataclass(frozen=True)
class Zeros:
    """A matrix of +0.0 in a snapshot, sent as its shape: a new model's output matrices start
    at zero (``syn1``, ``syn1neg``, as in word2vec.c and gensim), and every task would
    otherwise receive all their bytes. :func:`compact_snapshot` makes them."""

    shape: tuple


def compact_snapshot(weights: tuple) -> tuple:
    """``weights`` for sending, each all-zero matrix as :class:`Zeros` (its bits checked, so
    a matrix holding -0.0 travels whole and every copy has the same bits)."""
    return tuple(
        Zeros(m.shape)
        if m.dtype == np.float32 and m.flags.c_contiguous and not m.view(np.uint32).any()
        else m
        for m in weights
    )


def _copy_weights(snapshot: tuple) -> list:
    """Copies of a snapshot's matrices (:data:`MATRICES` order; a snapshot that leaves out
    trailing output matrices, as hs-only callers may give ``syn0, syn1``, gets them empty;
    a :class:`Zeros` becomes its matrix)."""
    weights = [
        np.zeros(m.shape, np.float32)
        if isinstance(m, Zeros)
        else np.array(m, dtype=np.float32, copy=True, order="C")
        for m in snapshot
    ]
    while len(weights) < len(MATRICES):
        weights.append(np.zeros((0, weights[0].shape[1]), np.float32))
    return weights


def snapshot_task(snapshot: tuple, updates: list) -> tuple:
    """A new full model: ``snapshot`` with ``updates`` applied in order (inputs untouched); its
    matrices in :data:`MATRICES` order."""
    weights = _copy_weights(snapshot)
    for update in updates:
        _apply(weights, update)
    return tuple(weights)


# ------------------------------------------------------------------------------ worker caches
class _Replica:
    def __init__(self):
        self.lock = threading.Lock()
        self.version = -1  # the round whose model this holds (plus own changes if dirty)
        self.dirty = False
        self.weights = None  # in MATRICES order: [syn0, syn1, syn1neg]
        self.undo = None  # when dirty: (rows, old values) of own changes, per matrix
        self.scratch: list = []  # per matrix, the rows' old values' space, kept between rounds

    def before(self, matrices, candidates) -> list:
        """The candidate rows' values in each matrix now (what ``undo`` puts back), in space
        kept from round to round: a fresh copy each round would be fresh pages each round,
        which a Spark task's first rounds paid for again and again."""
        while len(self.scratch) < len(matrices):
            self.scratch.append(np.empty((0, 0), np.float32))
        out = []
        for k, (matrix, (rows, _)) in enumerate(zip(matrices, candidates, strict=True)):
            shape = (len(rows), matrix.shape[1])
            space = self.scratch[k]
            if space.shape[0] < shape[0] or space.shape[1] != shape[1]:
                space = self.scratch[k] = np.empty((max(shape[0], space.shape[0]), shape[1]),
                                                   np.float32)  # fmt: skip
            view = space[: shape[0]]
            if len(rows) and (rows.min() < 0 or rows.max() >= len(matrix)):
                raise IndexError(f"row {rows.max()} is outside a matrix of {len(matrix)} rows")
            np.take(matrix, rows, axis=0, out=view, mode="clip")  # in range: no copy between
            out.append(view)
        return out


_LOCK = threading.Lock()
_REPLICAS: dict = {}  # (run_id, shard) -> _Replica
_JOBS: dict = {}  # (run_id, shard, piece) -> list of jobs
_JOB_TOKENS: dict = {}  # run_id -> tokens cached
_KEY_TO_INDEX: dict = {}  # run_id -> dict
_VOCAB_TABLES: dict = {}  # run_id -> the kernel's token table (running.file_scan.Vocab)


def forget_run(run_id: str) -> int:
    """Drop a run's caches from this worker process; returns how many entries went."""
    with _LOCK:
        keys = [k for k in list(_REPLICAS) + list(_JOBS) if k[0] == run_id]
        for key in keys:
            _REPLICAS.pop(key, None)
            _JOBS.pop(key, None)
        _JOB_TOKENS.pop(run_id, None)
        _KEY_TO_INDEX.pop(run_id, None)
        _VOCAB_TABLES.pop(run_id, None)
    return len(keys)


def forget_other_runs(run_id: str) -> None:
    """Drop the caches of every run but ``run_id`` from this worker process (a Spark Python
    worker outlives the fits it serves)."""
    with _LOCK:
        others = {k[0] for k in list(_REPLICAS) + list(_JOBS)}
        others |= set(_KEY_TO_INDEX) | set(_VOCAB_TABLES)
    for other in others - {run_id}:
        forget_run(other)


def _key_to_index(spec: RunSpec) -> dict:
    with _LOCK:
        return _key_to_index_locked(spec)


def _key_to_index_locked(spec: RunSpec) -> dict:
    table = _KEY_TO_INDEX.get(spec.run_id)
    if table is None:
        table = _KEY_TO_INDEX[spec.run_id] = {k: i for i, k in enumerate(spec.index_to_key)}
    return table


def _vocab_table(spec: RunSpec) -> Vocab:
    with _LOCK:
        table = _VOCAB_TABLES.get(spec.run_id)
        if table is None:
            table = _VOCAB_TABLES[spec.run_id] = Vocab(_key_to_index_locked(spec))
        return table


def _jobs(spec: RunSpec, piece: Piece, cache_key: tuple) -> list:
    encoded = getattr(piece, "encoded", None)
    if encoded is not None:  # a piece that comes encoded (hsw2v.spark: from its partition)
        return encoded
    with _LOCK:
        jobs = _JOBS.get(cache_key)
    if jobs is not None:
        return jobs
    if all(local_range(r) for r in piece.ranges):  # read and encoded in C, without the GIL
        jobs = encode_local_ranges(
            piece.ranges, _vocab_table(spec), spec.batch_words, spec.max_sentence_length
        )
    else:
        sentences = piece.read(spec.max_sentence_length)
        jobs = list(iter_jobs(sentences, _key_to_index(spec), spec.batch_words))
    tokens = sum(len(job.ids) for job in jobs)
    with _LOCK:
        if _JOB_TOKENS.get(spec.run_id, 0) + tokens <= spec.cache_words:
            _JOBS[cache_key] = jobs
            _JOB_TOKENS[spec.run_id] = _JOB_TOKENS.get(spec.run_id, 0) + tokens
    return jobs


def _bring_up_to_date(replica: _Replica, snapshot, updates, first: int, target: int) -> None:
    """Make ``replica`` the model after ``target`` rounds; ``snapshot`` is the model after
    ``first`` rounds and ``updates`` are those of rounds ``first .. target - 1``."""
    a = replica.version
    usable = (
        replica.weights is not None
        and first <= a
        and (a < target if replica.dirty else a <= target)
    )
    if not usable:
        replica.weights = _copy_weights(snapshot)
        a = first
    elif replica.dirty:  # back to the round-``a`` model: the update holds these rows' merge
        for matrix, (rows, old) in zip(replica.weights, replica.undo, strict=True):
            matrix[rows] = old
    for update in updates[a - first :]:
        _apply(replica.weights, update)
    replica.version, replica.dirty, replica.undo = target, False, None


# ------------------------------------------------------------------------------ training
def train_task(
    spec: RunSpec,
    snapshot: tuple,
    updates: list,
    piece: Piece,
    *,
    shard: int,
    piece_index: int,
    epoch: int,
    first_round: int,
    this_round: int,
    alpha0: float,
    alpha1: float,
) -> PieceResult:
    """Train one shard's piece of a round, starting from the model after ``this_round``
    rounds (``snapshot`` after ``first_round`` plus ``updates``), with the learning rate
    going from ``alpha0`` to ``alpha1`` across the piece. Returns the rows it changed and
    their deltas."""
    with _LOCK:
        replica = _REPLICAS.setdefault((spec.run_id, shard), _Replica())
    with replica.lock:
        _bring_up_to_date(replica, snapshot, updates, first_round, this_round)
        replica.dirty = True
        try:
            result, replica.undo = _train_piece(
                spec, replica, piece, shard, piece_index, epoch, alpha0, alpha1
            )
            return result
        except BaseException:
            replica.weights = None  # half-trained: rebuild next time
            raise


def _train_threads(settings, weights, plan, threads: int) -> list:
    """Train the jobs of ``plan`` on ``threads`` threads sharing the replica's weights (each
    its own trainer over them, as gensim's workers share one model: Hogwild, Recht et al.
    2011); the kernel runs without the GIL. Each job keeps its rates and seed; the result
    depends on the threads' interleaving (``threads=1`` is bit for bit reproducible)."""
    from concurrent.futures import ThreadPoolExecutor

    local = threading.local()

    def train(item):
        trainer = getattr(local, "trainer", None)
        if trainer is None:
            trainer = local.trainer = settings.build(*weights)
        job, a0, a1, seed = item
        return trainer.train_job(job.ids, job.ends, a0, a1, seed)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(train, plan))


def _train_piece(spec, replica, piece, shard, piece_index, epoch, alpha0, alpha1):
    started = time.perf_counter()
    settings = spec.trainer
    weights = replica.weights
    syn0, outputs = weights[0], weights[1:]
    d = syn0.shape[1]
    jobs = _jobs(spec, piece, (spec.run_id, shard, piece_index))
    read = sum(job.raw_words for job in jobs)
    if read != piece.words:  # a file changed in a way its stamp did not show (or a URL's)
        raise CorpusChangedError(
            f"corpus changed since the vocabulary pass: a piece of "
            f"{piece.source()} held {piece.words:,} words "
            f"then and {read:,} now. Keep the corpus files unchanged until training ends, "
            "then train again"
        )
    empty = np.zeros(0, np.int32), np.zeros((0, d), np.float32), np.zeros(0)
    if not jobs or not any(len(job.ids) for job in jobs):
        raw = sum(job.raw_words for job in jobs)
        undo = [(empty[0], empty[1])] * len(MATRICES)
        parts = dict.fromkeys(MATRICES, empty)
        return PieceResult(parts, kept=0, raw=raw, loss=0.0, seconds=0.0), undo
    ids = np.concatenate([job.ids for job in jobs])
    occurrences = np.bincount(ids, minlength=len(syn0))
    words = np.flatnonzero(occurrences).astype(np.int32)
    candidates = [(words, occurrences.astype(np.float64))]
    candidates += touched_rows(settings, occurrences, outputs)  # per objective (syn1, syn1neg)
    before = replica.before(weights, candidates)
    total = max(sum(job.raw_words for job in jobs), 1)
    plan, done = [], 0  # each job with its rates and seed, as one thread trains them in turn
    for j, job in enumerate(jobs):
        a0 = within(alpha0, alpha1, done, total)
        done += job.raw_words
        a1 = within(alpha0, alpha1, done, total)
        plan.append((job, a0, a1, spec.schedule.job_seed(epoch, (piece_index << 20) + j)))
    if spec.threads > 1 and len(plan) > 1:
        trained = _train_threads(settings, weights, plan, spec.threads)
    else:
        trainer = settings.build(*weights)
        trained = [trainer.train_job(job.ids, job.ends, a0, a1, seed) for job, a0, a1, seed in plan]
    kept = sum(job_kept for job_kept, _ in trained)
    loss = sum(job_loss for _, job_loss in trained)
    parts, undo = {}, []
    for name, matrix, (rows, row_weight), old in zip(
        MATRICES, weights, candidates, before, strict=True
    ):
        # one pass in C: the float32 differences, narrowed there to float16
        changed, delta = changed_rows(matrix, rows, old, spec.delta_dtype == "float16")
        delta = delta.astype(spec.delta_dtype, copy=False)  # any other dtype, from float32
        parts[name] = (changed, delta, row_weight[changed].astype(np.float64))
        undo.append((rows, old))  # putting back an unchanged row changes nothing
    result = PieceResult(
        parts,
        kept=int(kept),
        raw=int(done),
        loss=float(loss),
        seconds=time.perf_counter() - started,
    )
    return result, undo
