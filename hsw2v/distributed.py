"""Distributed training on a Dask cluster: data-parallel training over file shards, merged by rows.

For corpora too large for one machine. ``train(client, corpus_paths, sync_every=...,
**word2vec_params)`` returns an ordinary :class:`hsw2v.Word2Vec`, trained like this:

1. **Shards.** The files are cut into byte ranges, one shard per worker thread by default
   (:mod:`hsw2v._shards`: a line belongs to the range where it starts; compressed files are
   not split). Workers read them themselves, through smart_open: local paths on shared
   storage or any seekable URL (``s3://``, ``gs://``, ``https://``, ...).
2. **Vocabulary.** Every range is counted on a worker; the counts are merged on the workers
   by a tree reduction (neighbours first, so first-seen order, and with it the tie order of
   the sorted vocabulary, is the whole corpus's); the vocabulary is built on the worker
   holding the merged counts and only the kept words travel to the client. It equals the
   vocabulary that :class:`hsw2v.Word2Vec` builds from the same files (without
   ``max_vocab_size``, whose pruning depends on reading order). The client builds the Huffman
   tree and the initial weights once (the same as on one machine for the same ``seed``) and
   scatters them to every worker.
3. **Rounds.** An epoch is cut into rounds of about ``sync_every`` words in all: in every
   round each shard trains its next piece (``sync_every / shards`` words) on its own copy of
   the model with the single-machine nogil kernel (:class:`hsw2v._kernels._inner.Trainer`), and
   returns only the rows it changed, as deltas (new minus old), with how much it trained each. The
   deltas are merged (``merge="adasum"``, the default: the Adaptive Summation of Maleki et
   al. (MLSys 2021) row by row, a sum where the shards' deltas are orthogonal and an average
   where they agree; ``merge="sum"``: added up, every shard's learning kept, as threads
   sharing one model do; ``merge="average"``: averaged, weighted by that, the model
   averaging of Spark MLlib's Word2Vec after SPARK-24666; see :mod:`hsw2v._dist_tasks`), and
   every shard adds the merged update before its next piece. The learning rate decays
   linearly over the words of all shards and epochs, as on one machine: a round's pieces all
   run from the rate at the round's start to the rate at its end.
4. **Result.** Every ``snapshot_every`` rounds a worker folds the updates into a full
   snapshot (what a shard rebuilds from if its worker was lost); the last one is the model.

Faults: every task is pure (:mod:`hsw2v._dist_tasks`), so when a worker dies Dask runs its
tasks again elsewhere and training completes with the same result it would have had. A task
that keeps killing workers (``distributed.scheduler.allowed-failures``, 3 by default) or fails
with an exception, stops training with :class:`DistributedTrainingError`; if no round
finishes within ``timeout`` seconds (e.g. every worker is gone), training stops with
:class:`TimeoutError`. It never waits forever.

``dask[distributed]`` is an optional dependency: ``pip install "dask[distributed]"``, or from a
source checkout ``pip install ".[distributed]"``.
"""

from __future__ import annotations

import logging
import math
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hsw2v import _dist_tasks as tasks
from hsw2v import progress as _progress
from hsw2v._shards import (
    CorpusChangedError,
    cut_shard,
    expand_paths,
    file_stamp,
    plan_ranges,
    splittable_size,
)
from hsw2v.corpora import MAX_WORDS_IN_BATCH
from hsw2v.divergence import TrainingDivergedError, count_nonfinite_rows
from hsw2v.exceptions import EmptyCorpusError
from hsw2v.running.epochs import Progress
from hsw2v.running.objectives import MATRICES, describe, outputs_of
from hsw2v.running.params import TASK
from hsw2v.running.schedule import Schedule
from hsw2v.running.trainer import trainer_settings
from hsw2v.word2vec import Word2Vec

logger = logging.getLogger(__name__)

__all__ = ["DistributedReport", "DistributedTrainingError", "train"]


class DistributedTrainingError(RuntimeError):
    """Distributed training stopped: a task failed, or kept killing the workers it ran on."""


@dataclass
class DistributedReport:
    """What one distributed run did: ``model.distributed_report`` after :func:`train`.

    ``bytes_in_per_round`` is the mean size of the rows the shards sent to be merged,
    ``bytes_out_per_round`` the mean size of the merged update (each worker receives it
    once), ``model_bytes`` the size of ``syn0``, ``syn1`` and ``syn1neg`` together, for
    comparison; every worker also fetches each of the ``snapshots`` full models once
    (``model_bytes`` each).
    """

    shards: int
    rounds: int
    epochs: int
    raw_words: int
    trained_words: int
    seconds: float
    vocab_seconds: float
    rows_per_round: float
    bytes_in_per_round: float
    bytes_out_per_round: float
    model_bytes: int
    snapshots: int

    @property
    def words_per_second(self) -> float:
        """Raw corpus words trained per second of training (vocabulary pass excluded)."""
        return self.raw_words / max(self.seconds, 1e-9)


def train(
    client: Any,
    corpus_paths: str | os.PathLike | list,
    *,
    sync_every: int = 1_000_000,
    merge: str = "adasum",
    n_shards: int | None = None,
    snapshot_every: int = 16,
    timeout: float = 600.0,
    max_sentence_length: int = MAX_WORDS_IN_BATCH,
    trim_rule: Callable | None = None,
    progress: bool | Callable = False,
    **word2vec_params: Any,
) -> Word2Vec:
    """Train a :class:`hsw2v.Word2Vec` on a Dask cluster (see the module docstring).

    Args:
        client: A ``dask.distributed.Client``: ``Client("tcp://scheduler:8786")`` for an
            existing cluster, ``Client(LocalCluster())`` for this machine.
        corpus_paths: A file, a directory or a list of them, one sentence per line (what
            :class:`hsw2v.LineSentence` reads); every worker must be able to open them (shared
            storage or URLs).
        sync_every: Corpus words (all shards together) trained between two merges.
            Smaller syncs more often: closer to one-machine quality, more traffic and waiting.
        merge: How the rows that several shards changed in a round are merged (the rules
            and their references are in :mod:`hsw2v._dist_tasks`). ``"adasum"`` (the
            default) combines the shards' deltas by Adaptive Summation (Maleki et al.,
            MLSys 2021), row by row and pairwise in a fixed tree over the shards: deltas
            that point different ways add up, deltas that agree count once, so a row every
            shard pushes to the same point is not pushed past it; the best rule with two to
            four shards on the benchmark corpus. ``"average"``
            averages them, weighted by how much each shard trained the row (Spark MLlib's
            Word2Vec, SPARK-24666): stable, but a row k shards train moves about 1/k as far
            as on one machine, so quality drops as shards are added. ``"sum"`` adds them up
            (asynchronous SGD with a staleness of one round, as Downpour SGD, Dean et al.
            2012): it overshoots the rows every shard trains (the top tree nodes) and
            collapsed with three or four shards. See docs/distributed.md for the
            measurements.
        n_shards: How many shards train in parallel (default: the cluster's worker threads).
        snapshot_every: Rounds between two full snapshots of the model on the workers.
        timeout: Seconds to wait for any one stage (the vocabulary, or one round) before
            giving up with :class:`TimeoutError`.
        max_sentence_length: Lines longer than this many tokens are cut (as LineSentence).
        trim_rule: As in :meth:`hsw2v.Word2Vec.build_vocab` (it must be picklable).
        progress: ``True`` for a tqdm bar, or a callable given a
            :class:`hsw2v.running.epochs.Progress` after each round.
        **word2vec_params: :class:`hsw2v.Word2Vec` parameters (``vector_size``, ``window``,
            ``sg``, ``min_count``, ``sample``, ``epochs``, ``alpha``, ``seed``, ...).

    Returns:
        The trained model, with ``distributed_report`` (a :class:`DistributedReport`).

    Raises:
        DistributedTrainingError: A task failed (the cause is chained), or was lost with its
            worker too often.
        TimeoutError: No worker joined, or a stage did not finish within ``timeout``.

    Example:

    >>> import os, tempfile
    >>> from dask.distributed import Client, LocalCluster
    >>> from hsw2v import distributed
    >>> path = os.path.join(tempfile.mkdtemp(), "corpus.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("the cat sat on the mat\\nthe dog sat on the log\\n" * 200)
    >>> with LocalCluster(n_workers=1, threads_per_worker=2, processes=False) as cluster, \\
    ...         Client(cluster) as client:
    ...     model = distributed.train(client, path, sync_every=500, vector_size=16,
    ...                               min_count=1, epochs=2)
    >>> model.wv.index_to_key[:3], model.distributed_report.shards
    (['the', 'sat', 'on'], 2)
    """
    for name in ("sentences", "corpus_file", "corpus_iterable"):
        if name in word2vec_params:
            raise TypeError(f"give the corpus as corpus_paths, not {name}=")
    if word2vec_params.get("callbacks"):
        raise ValueError(
            "callbacks are not run by distributed training; use progress= to follow it"
        )
    if not isinstance(sync_every, int) or sync_every < 1:
        raise ValueError(f"sync_every must be a positive number of words, got {sync_every!r}")
    if merge not in tasks.MERGES:
        raise ValueError(
            f"merge must be one of {', '.join(map(repr, tasks.MERGES))}, got {merge!r}"
        )
    if not isinstance(snapshot_every, int) or snapshot_every < 1:
        raise ValueError(f"snapshot_every must be a positive integer, got {snapshot_every!r}")
    model = Word2Vec(**word2vec_params)  # checks the parameters
    if model.epochs < 1:
        raise ValueError(f"epochs must be >= 1 for training, got {model.epochs}")
    if model.tree_type == "semantic":
        # its second training over the rebuilt tree (Word2Vec.train) has no distributed form
        raise ValueError(
            "tree='semantic' is not trained distributed (it retrains over a tree rebuilt from "
            "the first training's vectors): use tree='huffman' or 'balanced' here, or train "
            "the semantic tree with Word2Vec on one machine"
        )
    paths = expand_paths(corpus_paths)
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError as exc:
        raise TimeoutError(
            f"no Dask worker joined the cluster within timeout={timeout} s; start workers "
            "(dask worker tcp://scheduler:8786) or pass a larger timeout"
        ) from exc
    if n_shards is None:
        n_shards = max(1, sum(client.nthreads().values()))
    if not isinstance(n_shards, int) or n_shards < 1:
        raise ValueError(f"n_shards must be a positive integer, got {n_shards!r}")
    run = _Run(client, model, timeout, progress)
    try:
        run.vocabulary(paths, n_shards, sync_every, max_sentence_length, trim_rule)
        run.train(sync_every, merge, snapshot_every, max_sentence_length)
    finally:
        run.close()
    return model


class _Run:
    """One call of :func:`train`: its futures, waiting and the pieces' plan."""

    def __init__(self, client, model: Word2Vec, timeout: float, progress):
        self.client, self.model, self.timeout = client, model, timeout
        self.on_progress = _progress.resolve(progress)
        self.run_id = uuid.uuid4().hex[:12]
        self.futures: list = []

    # -------------------------------------------------------------------- plumbing
    def submit(self, fn, *args, name: str, **kwargs):
        future = self.client.submit(
            fn, *args, key=f"hsw2v-{name}-{self.run_id}", retries=1, **kwargs
        )
        return future

    def result(self, future, what: str):
        """The future's value, or a clear error; never waits longer than the timeout."""
        from distributed import KilledWorker

        try:
            return future.result(timeout=self.timeout)
        except KilledWorker as exc:
            raise DistributedTrainingError(
                f"{what}: the task was lost with the worker running it too many times "
                "(distributed.scheduler.allowed-failures); the workers may be running out "
                f"of memory: {exc}"
            ) from exc
        except CorpusChangedError:
            raise  # it says which file changed and what to do
        except TimeoutError as exc:
            workers = len(self.client.scheduler_info().get("workers", {}))
            raise TimeoutError(
                f"{what} did not finish within timeout={self.timeout} s ({workers} worker(s) "
                "connected); pass a larger timeout if a round legitimately takes longer"
            ) from exc
        except Exception as exc:
            raise DistributedTrainingError(f"{what} failed: {type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        for future in self.futures:
            future.cancel()
        self.futures = []
        try:
            self.client.run(tasks.forget_run, self.run_id, on_error="ignore")
        except Exception:  # noqa: BLE001 - best effort: a dead worker has nothing to forget
            logger.debug("could not clear the workers' caches", exc_info=True)
        if hasattr(self.on_progress, "close"):
            self.on_progress.close()

    # -------------------------------------------------------------------- vocabulary
    def vocabulary(self, paths, n_shards, sync_every, max_sentence_length, trim_rule):
        model, started = self.model, time.perf_counter()
        sizes = [splittable_size(p) for p in paths]
        # each local file's (size, mtime, inode) now: every later read (counting, training)
        # refuses a file that no longer has it (CorpusChangedError)
        stamps = [file_stamp(p) for p in paths]
        self.shards = [s for s in plan_ranges(paths, n_shards, sizes, stamps) if s]
        if not self.shards:  # every file empty: nothing to count (as Word2Vec's own error)
            raise EmptyCorpusError(
                f"the corpus is empty: no bytes in {', '.join(map(repr, paths))}; give "
                "files with one sentence per line"
            )
        mark_every = max(1, min(10_000, sync_every // (4 * len(self.shards) or 1)))
        counts, self.marks = [], []
        for k, shard in enumerate(self.shards):
            for i, byte_range in enumerate(shard):
                count = self.submit(
                    tasks.count_task,
                    byte_range,
                    max_sentence_length,
                    mark_every,
                    model.max_vocab_size,
                    trim_rule,
                    name=f"count-{k}-{i}",
                )
                counts.append(count)
                self.marks.append(self.submit(tasks.marks_of, count, name=f"marks-{k}-{i}"))
        merged = self._tree_merge(counts, model.max_vocab_size, trim_rule)
        options = {
            "min_count": model.min_count,
            "sample": model.sample,
            "max_final_vocab": model.max_final_vocab,
            "trim_rule": trim_rule,
            "sorted_vocab": bool(model.sorted_vocab),
            "null_word": bool(model.null_word),
        }
        built = self.submit(tasks.vocabulary_task, merged, options, name="vocabulary")
        self.futures += counts + self.marks + [built]
        vocab, n_raw = self.result(built, "building the vocabulary")
        self.marks = [self.result(f, "counting the corpus") for f in self.marks]
        self.futures = []
        if not vocab.index_to_key:
            raise EmptyCorpusError(
                f"the vocabulary is empty: no word occurs at least min_count={model.min_count} "
                f"times in the corpus ({n_raw} distinct words seen); lower min_count or give a "
                "larger corpus"
            )
        model.corpus_total_words = sum(w for w, _, _ in self.marks)
        model.corpus_count = sum(s for _, s, _ in self.marks)
        model.effective_min_count = vocab.effective_min_count
        model._install_vocabulary(vocab)
        model.prepare_weights()
        self.vocab_seconds = time.perf_counter() - started
        logger.info(
            "distributed vocabulary: %i words kept of %i, %i raw words in %i shards, %.1fs",
            len(vocab.index_to_key),
            n_raw,
            model.corpus_total_words,
            len(self.shards),
            self.vocab_seconds,
        )

    def _tree_merge(self, counts, max_vocab_size, trim_rule, fan_in=4):
        level = 0
        while len(counts) > 1 or level == 0:  # at least once: a RangeCount becomes a dict
            counts = [
                self.submit(
                    tasks.merge_task,
                    *counts[i : i + fan_in],
                    max_vocab_size=max_vocab_size,
                    trim_rule=trim_rule,
                    name=f"merge-{level}-{i}",
                )
                for i in range(0, len(counts), fan_in)
            ]
            self.futures += counts
            level += 1
        return counts[0]

    # -------------------------------------------------------------------- training
    def train(self, sync_every, merge, snapshot_every, max_sentence_length):
        model, client = self.model, self.client
        n_rounds = max(1, math.ceil(model.corpus_total_words / sync_every))
        pieces, counts_iter = [], iter(self.marks)
        for shard in self.shards:
            shard_counts = [_Counted(*next(counts_iter)) for _ in shard]  # in shard order
            pieces.append(cut_shard(shard, shard_counts, n_rounds))
        round_words = [sum(p[r].words for p in pieces) for r in range(n_rounds)]
        spec = run_spec(model, self.run_id, max_sentence_length)
        spec_f = client.scatter(spec, broadcast=True, hash=False)
        # a list of one item: scatter would otherwise scatter the tuple's items one by one
        weights = (model.wv.vectors, *outputs_of(model).values())  # in MATRICES order
        [snapshot] = client.scatter([weights], broadcast=True, hash=False)
        addresses = sorted(client.scheduler_info()["workers"])
        schedule = spec.schedule
        stats, first, updates, g = [], 0, [], 0
        self.n_snapshots = 0
        for epoch in range(model.epochs):
            done = 0
            for r in range(n_rounds):
                if g - first == snapshot_every:
                    snapshot = self.submit(tasks.snapshot_task, snapshot, updates, name=f"snap-{g}")
                    self.n_snapshots += 1
                    first, updates = g, []
                alpha0, alpha1 = schedule.job_alphas(epoch, done, round_words[r])
                done += round_words[r]
                results = [
                    self.submit(
                        tasks.train_task,
                        spec_f,
                        snapshot,
                        list(updates),
                        piece[r],
                        shard=k,
                        piece_index=k * n_rounds + r,
                        epoch=epoch,
                        first_round=first,
                        this_round=g,
                        alpha0=alpha0,
                        alpha1=alpha1,
                        name=f"train-{g}-{k}",
                        workers=[addresses[k % len(addresses)]],
                        allow_other_workers=True,
                    )
                    for k, piece in enumerate(pieces)
                ]
                update = self.submit(
                    tasks.merge_round_task, *results, merge=merge, name=f"merge-round-{g}"
                )
                stats.append((epoch, done, self.submit(tasks.stats_of, update, name=f"stats-{g}")))
                updates.append(update)
                g += 1
        final = self.submit(tasks.snapshot_task, snapshot, updates, name="final")
        self.futures = [s for _, _, s in stats] + [final]
        del snapshot, updates  # the scheduler keeps what later tasks still need
        self._watch(stats, schedule, len(self.shards))
        trained = self.result(final, "collecting the trained model")
        labels = ("wv.vectors", *MATRICES[1:])
        rows = count_nonfinite_rows(dict(zip(labels, trained, strict=True)))
        if any(rows.values()):  # a merge of finite deltas can still overflow
            raise _diverged(model, model.epochs - 1, "when the rounds were merged", rows)
        model.wv.vectors = trained[0]
        for name, matrix in zip(MATRICES[1:], trained[1:], strict=True):  # syn1, syn1neg
            setattr(model, name, matrix)
        model._weights_changed()
        client.cancel(spec_f)

    def _watch(self, stats, schedule, n_shards):
        model = self.model
        started = time.perf_counter()
        trained = raw = rows = bytes_in = bytes_out = 0
        loss = 0.0
        for g, (epoch, done, future) in enumerate(stats):
            s = self.result(future, f"round {g + 1} of {len(stats)} (epoch {epoch + 1})")
            if not math.isfinite(s["loss"]):  # a job met non-finite weights (the kernels' check)
                raise _diverged(model, epoch, f"in round {g + 1} of {len(stats)}")
            trained += s["kept"]
            raw += s["raw"]
            loss += s["loss"]
            rows += s["rows"]
            bytes_in += s["bytes_in"]
            bytes_out += s["bytes_out"]
            if self.on_progress is not None:
                self.on_progress(
                    Progress(
                        epoch=epoch,
                        epochs=model.epochs,
                        fraction=min(done / model.corpus_total_words, 1.0),
                        trained_words=trained,
                        raw_words=raw,
                        seconds=time.perf_counter() - started,
                        alpha=schedule.alpha(epoch, done),
                    )
                )
        seconds = time.perf_counter() - started
        n = max(len(stats), 1)
        alpha_reached = schedule.alpha(model.epochs - 1, schedule.total)
        model._record_run(model.epochs, seconds, loss, alpha_reached)
        model.distributed_report = DistributedReport(
            shards=n_shards,
            rounds=len(stats),
            epochs=model.epochs,
            raw_words=raw,
            trained_words=trained,
            seconds=seconds,
            vocab_seconds=self.vocab_seconds,
            rows_per_round=rows / n,
            bytes_in_per_round=bytes_in / n,
            bytes_out_per_round=bytes_out / n,
            model_bytes=sum(m.nbytes for m in (model.wv.vectors, *outputs_of(model).values())),
            snapshots=self.n_snapshots,
        )
        logger.info(
            "distributed training: %i raw words in %.1fs (%.0f words/s), %i rounds",
            raw,
            seconds,
            raw / max(seconds, 1e-9),
            len(stats),
        )


def _diverged(model, epoch: int, where: str, rows: dict | None = None):
    """The error of distributed training whose weights became NaN or infinite: the same
    :class:`~hsw2v.divergence.TrainingDivergedError` one machine raises (no model is
    returned)."""
    return TrainingDivergedError(
        f"distributed training diverged in epoch {epoch + 1} of {model.epochs} ({where}): the "
        f"weights became NaN or infinite at alpha={model.alpha:g}. Train again with a lower "
        f"alpha, e.g. alpha={model.alpha / 10:g}",
        nonfinite_rows=rows,
        epoch=epoch,
    )


def run_spec(model: Word2Vec, run_id: str, max_sentence_length: int) -> tasks.RunSpec:
    """What every training task needs besides the weights, from a model with a vocabulary:
    the model's trainer settings (:func:`hsw2v.running.trainer.trainer_settings`, one thread per
    task), so every setting trains as ``Word2Vec.train`` trains it on one machine, and the
    run's learning-rate schedule and seed (:class:`hsw2v.running.schedule.Schedule`)."""
    settings = trainer_settings(model, threads=1)
    logger.info("distributed training: %s", describe(model))
    return tasks.RunSpec(
        run_id=run_id,
        index_to_key=list(model.wv.index_to_key),
        trainer=settings,
        schedule=Schedule(
            model.alpha,
            model.min_alpha,
            model.epochs,
            model.corpus_total_words,
            by_words=True,
            seed=model.seed,
        ),
        max_sentence_length=max_sentence_length,
        **{name: getattr(model, name) for name in TASK},
    )


@dataclass
class _Counted:
    words: int
    sentences: int
    marks: list
