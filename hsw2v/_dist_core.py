"""The engine-free core of distributed training, shared by the Dask and the Spark adapters.

Distributed training (docs/distributed.md) is one algorithm run by two engines. What does
not depend on the engine lives here, once:

* the checks of a request (:func:`check_request`) and the vocabulary's installation on the
  model (:func:`install_vocabulary`: the vocabulary built from the merged counts, the Huffman
  tree and the initial weights made once, on the driver, exactly as on one machine);
* counts that merge in any order (:class:`PositionedCounts`), for engines whose reductions
  do not keep the partitions' order (Spark's ``treeReduce``): the merged counts still list the
  words in the corpus's first-seen order, so the vocabulary's ties sort as on one machine;
* the round loop (:func:`train_rounds`): the learning-rate schedule across rounds, the
  training tasks, the merge of their rows (the rules of :mod:`hsw2v._dist_merge`), the
  snapshots, the progress, the divergence checks and the :class:`DistributedReport`.

An engine (:class:`Engine`) only runs functions: it makes a value available to every task
(``put``), runs a function somewhere (``submit``), runs one training call per shard
(``submit_shards``, shard ``k`` where its data is) and waits for a result (``result``). The
values it hands back are *handles*, which the core only passes on, to later calls of the same
engine: Dask's are futures (the whole run is submitted ahead, merged on the workers, and the
client watches the rounds' totals), Spark's are values held by the driver (each round is one
Spark job over the DataFrame's partitions; the merge runs on the driver, and what tasks need
travels as broadcast variables). :mod:`hsw2v.distributed` and :mod:`hsw2v.spark` are those
adapters.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hsw2v import _dist_tasks as tasks
from hsw2v._dist_merge import MERGES
from hsw2v.divergence import TrainingDivergedError, count_nonfinite_rows
from hsw2v.exceptions import EmptyCorpusError
from hsw2v.running.epochs import Progress
from hsw2v.running.objectives import MATRICES, describe, outputs_of
from hsw2v.running.params import TASK
from hsw2v.running.schedule import Schedule
from hsw2v.running.trainer import trainer_settings
from hsw2v.word2vec import Word2Vec

logger = logging.getLogger(__name__)


class DistributedTrainingError(RuntimeError):
    """Distributed training stopped: a task failed, or kept killing the workers it ran on."""


@dataclass
class DistributedReport:
    """What one distributed run did: ``model.distributed_report`` after training.

    ``bytes_in_per_round`` is the mean size of the rows the shards sent to be merged,
    ``bytes_out_per_round`` the mean size of the merged update (each worker receives it
    once), ``model_bytes`` the size of ``syn0``, ``syn1`` and ``syn1neg`` together, for
    comparison; every worker also fetches each of the ``snapshots`` full models once
    (``model_bytes`` each). ``merge_seconds`` is the time the rounds' merges took together,
    each timed where it ran (a Dask worker, Spark's driver): its share of ``seconds`` is the
    time spent merging.
    ``task_seconds`` adds up, over the rounds, the seconds the round's slowest task spent
    on its piece (reading it where it was not kept, training it, taking out the rows it
    changed): the rest of ``seconds`` is the engine's jobs, transfers and merges.
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
    merge_seconds: float = 0.0
    task_seconds: float = 0.0

    @property
    def words_per_second(self) -> float:
        """Raw corpus words trained per second of training (vocabulary pass excluded)."""
        return self.raw_words / max(self.seconds, 1e-9)


class Engine(Protocol):
    """What the round loop needs from a cluster (see the module docstring).

    ``lookahead``: how many rounds may be submitted before the first of them is awaited
    (None: the whole run; 0: each round is awaited before the next is submitted).
    """

    lookahead: int | None

    def put(self, value: Any, name: str) -> Any:
        """A handle to ``value``, available to every task."""

    def submit(self, fn: Callable, *args: Any, name: str, **kwargs: Any) -> Any:
        """A handle to ``fn(*args, **kwargs)`` run anywhere; handles among the arguments
        stand for their values."""

    def submit_shards(self, fn: Callable, calls: list, name: str) -> list:
        """Handles to ``fn(*args, **kwargs)`` for each ``(args, kwargs)`` of ``calls``, call
        ``k`` run where shard ``k``'s data is."""

    def result(self, handle: Any, what: str) -> Any:
        """The value of a handle, or :class:`DistributedTrainingError` (or TimeoutError)
        naming ``what`` failed."""

    def cancel(self, handles: list) -> None:
        """Stop what still runs for these handles and forget them (the run ended, or
        failed). A handle the core drops otherwise is simply no longer referenced."""


# ---------------------------------------------------------------------------- requests
def check_request(
    word2vec_params: dict, sync_every: int, merge: str, snapshot_every: int
) -> Word2Vec:
    """The untrained model a distributed run trains, after every check of its request."""
    for name in ("sentences", "corpus_file", "corpus_iterable"):
        if name in word2vec_params:
            raise TypeError(f"give the corpus as corpus_paths, not {name}=")
    if word2vec_params.get("callbacks"):
        raise ValueError(
            "callbacks are not run by distributed training; use progress= to follow it"
        )
    if not isinstance(sync_every, int) or isinstance(sync_every, bool) or sync_every < 1:
        raise ValueError(f"sync_every must be a positive number of words, got {sync_every!r}")
    if merge not in MERGES:
        raise ValueError(
            f"merge must be one of {', '.join(map(repr, MERGES))}, got {merge!r}"
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
    return model


def vocabulary_options(model: Word2Vec, trim_rule: Callable | None) -> dict:
    """The arguments of :func:`hsw2v.vocab.build_vocabulary` that ``model`` sets."""
    return {
        "min_count": model.min_count,
        "sample": model.sample,
        "max_final_vocab": model.max_final_vocab,
        "trim_rule": trim_rule,
        "sorted_vocab": bool(model.sorted_vocab),
        "null_word": bool(model.null_word),
    }


def install_vocabulary(model: Word2Vec, vocab, n_raw: int, words: int, sentences: int) -> None:
    """Give ``model`` the vocabulary built from the whole corpus's counts (``n_raw``
    distinct words, ``words`` raw words in ``sentences`` sentences), its tree and its initial
    weights: what :meth:`hsw2v.Word2Vec.build_vocab` makes on one machine."""
    if not vocab.index_to_key:
        raise EmptyCorpusError(
            f"the vocabulary is empty: no word occurs at least min_count={model.min_count} "
            f"times in the corpus ({n_raw} distinct words seen); lower min_count or give a "
            "larger corpus"
        )
    model.corpus_total_words = int(words)
    model.corpus_count = int(sentences)
    model.effective_min_count = vocab.effective_min_count
    model._install_vocabulary(vocab)
    model.prepare_weights()


class PositionedCounts:
    """Word counts with each word's first position, ``(part, offset)`` (any position that
    grows along a part does, e.g. the word's rank in the part's first-seen order): merged in
    any order and grouping (:meth:`merge` is commutative and associative), they still give the
    counts in the first-seen order of the parts in their order (:meth:`ordered`).

    >>> a = PositionedCounts.of(["b", "a", "a"], part=1)
    >>> b = PositionedCounts.of(["c", "a"], part=0)
    >>> a.merge(b).ordered()
    {'c': 1, 'a': 3, 'b': 1}
    """

    __slots__ = ("counts", "first")

    def __init__(self):
        self.counts: dict = {}
        self.first: dict = {}  # word -> (part, offset of its first occurrence there)

    @classmethod
    def of(cls, words, part: int) -> PositionedCounts:
        """The counts of one part's words, in their order."""
        out = cls()
        counts, first = out.counts, out.first
        for offset, word in enumerate(words):
            if word in counts:
                counts[word] += 1
            else:
                counts[word] = 1
                first[word] = (part, offset)
        return out

    def merge(self, other: PositionedCounts) -> PositionedCounts:
        """Both counts added (in place, into the larger one), each word at its first
        position."""
        big, small = (self, other) if len(self.counts) >= len(other.counts) else (other, self)
        counts, first = big.counts, big.first
        for word, count in small.counts.items():
            if word in counts:
                counts[word] += count
                if small.first[word] < first[word]:
                    first[word] = small.first[word]
            else:
                counts[word] = count
                first[word] = small.first[word]
        return big

    def ordered(self) -> dict:
        """The counts, words in first-seen order."""
        return {word: self.counts[word] for word in sorted(self.counts, key=self.first.get)}


# ---------------------------------------------------------------------------- the rounds
def run_spec(
    model: Word2Vec,
    run_id: str,
    max_sentence_length: int,
    threads: int = 1,
    delta_dtype: str = "float32",
) -> tasks.RunSpec:
    """What every training task needs besides the weights, from a model with a vocabulary:
    the model's trainer settings (:func:`hsw2v.running.trainer.trainer_settings` for one
    thread: no private hot rows), so every setting trains as ``Word2Vec.train`` trains it on
    one machine, the run's learning-rate schedule and seed
    (:class:`hsw2v.running.schedule.Schedule`), and how many threads train each task's piece
    (several share the task's copy, as gensim's workers share one model)."""
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
        threads=int(threads),
        delta_dtype=str(np.dtype(delta_dtype)),
    )


def train_rounds(
    engine: Engine,
    model: Word2Vec,
    pieces: list,
    spec: tasks.RunSpec,
    *,
    merge: str,
    snapshot_every: int,
    on_progress: Callable | None = None,
    vocab_seconds: float = 0.0,
    spec_handle: Any = None,
) -> None:
    """Train ``model`` (with its vocabulary and initial weights) in rounds: ``pieces[k][r]``
    is what shard ``k`` trains in round ``r`` of every epoch (anything with ``words``, the
    piece's raw words, that the engine's training call can read). Installs the trained
    weights and ``model.distributed_report``; raises
    :class:`~hsw2v.divergence.TrainingDivergedError` when the weights became non-finite.
    ``spec_handle``: ``spec`` already put to the engine (as calls before the rounds took it)."""
    n_rounds = len(pieces[0])
    round_words = [sum(p[r].words for p in pieces) for r in range(n_rounds)]
    schedule = spec.schedule
    spec_h = engine.put(spec, "spec") if spec_handle is None else spec_handle
    weights = (model.wv.vectors, *outputs_of(model).values())  # in MATRICES order
    snapshot = engine.put(tasks.compact_snapshot(weights), "weights")  # zero matrices by shape
    watch = _Watch(model, engine, schedule, len(pieces), on_progress)
    first, updates, g, n_snapshots = 0, [], 0, 0
    final = None
    try:
        for epoch in range(model.epochs):
            done = 0
            for r in range(n_rounds):
                if g - first == snapshot_every:
                    snapshot = engine.submit(
                        tasks.snapshot_task, snapshot, updates, name=f"snap-{g}"
                    )
                    n_snapshots += 1
                    first, updates = g, []
                alpha0, alpha1 = schedule.job_alphas(epoch, done, round_words[r])
                done += round_words[r]
                calls = [
                    (
                        (spec_h, snapshot, list(updates), piece[r]),
                        dict(
                            shard=k,
                            piece_index=k * n_rounds + r,
                            epoch=epoch,
                            first_round=first,
                            this_round=g,
                            alpha0=alpha0,
                            alpha1=alpha1,
                        ),
                    )
                    for k, piece in enumerate(pieces)
                ]
                results = engine.submit_shards(tasks.train_task, calls, name=f"train-{g}")
                update = engine.submit(
                    tasks.merge_round_task,
                    *results,
                    merge=merge,
                    dtype=spec.delta_dtype,
                    name=f"merge-round-{g}",
                )
                watch.rounds.append(
                    (epoch, done, engine.submit(tasks.stats_of, update, name=f"stats-{g}"))
                )
                updates.append(update)
                g += 1
                if engine.lookahead is not None:
                    watch.until(len(watch.rounds) - engine.lookahead)
        final = engine.submit(tasks.snapshot_task, snapshot, updates, name="final")
        del snapshot, updates  # the engine keeps what later tasks still need
        watch.until(len(watch.rounds))
        trained = engine.result(final, "collecting the trained model")
    finally:
        engine.cancel([s for _, _, s in watch.rounds] + ([final] if final is not None else []))
    watch.report(n_snapshots, vocab_seconds)
    labels = ("wv.vectors", *MATRICES[1:])
    rows = count_nonfinite_rows(dict(zip(labels, trained, strict=True)))
    if any(rows.values()):  # a merge of finite deltas can still overflow
        raise diverged(model, model.epochs - 1, "when the rounds were merged", rows)
    model.wv.vectors = trained[0]
    for name, matrix in zip(MATRICES[1:], trained[1:], strict=True):  # syn1, syn1neg
        setattr(model, name, matrix)
    model._weights_changed()
    engine.cancel([spec_h])


class _Watch:
    """The rounds' totals as they finish: progress, divergence, the report."""

    def __init__(self, model, engine, schedule, n_shards, on_progress):
        self.model, self.engine, self.schedule, self.n_shards = model, engine, schedule, n_shards
        self.on_progress = on_progress
        self.rounds: list = []  # (epoch, words done in the epoch, handle of the stats)
        self.seen = 0
        self.started = time.perf_counter()
        self.totals = dict.fromkeys(
            ("kept", "raw", "loss", "rows", "bytes_in", "bytes_out", "seconds", "merge_seconds"),
            0,
        )

    def until(self, n: int) -> None:
        """Wait for the totals of the first ``n`` rounds."""
        model, total = self.model, len(self.rounds)
        while self.seen < n:
            epoch, done, handle = self.rounds[self.seen]
            g = self.seen
            s = self.engine.result(handle, f"round {g + 1} (epoch {epoch + 1})")
            self.seen += 1
            if not math.isfinite(s["loss"]):  # a job met non-finite weights (the kernels' check)
                raise diverged(model, epoch, f"in round {g + 1} of {max(total, g + 1)}")
            for key in self.totals:
                self.totals[key] += s[key]
            if self.on_progress is not None:
                self.on_progress(
                    Progress(
                        epoch=epoch,
                        epochs=model.epochs,
                        fraction=min(done / model.corpus_total_words, 1.0),
                        trained_words=self.totals["kept"],
                        raw_words=self.totals["raw"],
                        seconds=time.perf_counter() - self.started,
                        alpha=self.schedule.alpha(epoch, done),
                    )
                )

    def report(self, n_snapshots: int, vocab_seconds: float) -> None:
        model, t = self.model, self.totals
        seconds = time.perf_counter() - self.started
        n = max(len(self.rounds), 1)
        alpha_reached = self.schedule.alpha(model.epochs - 1, self.schedule.total)
        model._record_run(model.epochs, seconds, t["loss"], alpha_reached)
        model.distributed_report = DistributedReport(
            shards=self.n_shards,
            rounds=len(self.rounds),
            epochs=model.epochs,
            raw_words=t["raw"],
            trained_words=t["kept"],
            seconds=seconds,
            vocab_seconds=vocab_seconds,
            rows_per_round=t["rows"] / n,
            bytes_in_per_round=t["bytes_in"] / n,
            bytes_out_per_round=t["bytes_out"] / n,
            model_bytes=sum(m.nbytes for m in (model.wv.vectors, *outputs_of(model).values())),
            snapshots=n_snapshots,
            merge_seconds=t["merge_seconds"],
            task_seconds=t["seconds"],
        )
        logger.info(
            "distributed training: %i raw words in %.1fs (%.0f words/s), %i rounds",
            t["raw"],
            seconds,
            t["raw"] / max(seconds, 1e-9),
            len(self.rounds),
        )


def diverged(model, epoch: int, where: str, rows: dict | None = None):
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
