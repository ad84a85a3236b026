"""Distributed training on a Dask cluster: data-parallel training over file shards, merged by rows.

For corpora too large for one machine. ``train(client, corpus_paths, sync_every=...,
**word2vec_params)`` returns an ordinary :class:`hsw2v.Word2Vec`, trained like this:

1. **Shards.** The files are cut into byte ranges, one shard per worker thread by default
   (:mod:`hsw2v._shards`: a line belongs to the range where it starts; compressed files are
   not split). Workers read them themselves: a local path (shared storage) in C without the
   GIL, as ``corpus_file`` mode reads (:mod:`hsw2v.running.file_scan`), and any seekable URL
   (``s3://``, ``gs://``, ``https://``, ...) or compressed file through smart_open.
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
   deltas are merged (``merge="hybrid"``, the default: the Adaptive Summation of Maleki et
   al. (MLSys 2021) row by row, a sum where the shards' deltas are orthogonal and an average
   where they agree, on the input rows and on the output rows much of the round trained,
   and the plain sum on the other output rows; ``merge="adasum"``: the Adaptive Summation
   on every row; ``merge="sum"``: added up, every shard's learning kept, as threads
   sharing one model do; ``merge="average"``: averaged, weighted by that, the model
   averaging of Spark MLlib's Word2Vec after SPARK-24666; see :mod:`hsw2v._dist_merge`), and
   every shard adds the merged update before its next piece. The learning rate decays
   linearly over the words of all shards and epochs, as on one machine: a round's pieces all
   run from the rate at the round's start to the rate at its end.
4. **Result.** Every ``snapshot_every`` rounds a worker folds the updates into a full
   snapshot (what a shard rebuilds from if its worker was lost); the last one is the model.

The engine-free part (the checks, the vocabulary's installation, the round loop, the merge
rules and the divergence checks) is :mod:`hsw2v._dist_core`, shared with the Spark adapter
(:mod:`hsw2v.spark`); this module is Dask's engine for it (:class:`DaskEngine`) and the file
shards' vocabulary pass.

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
from hsw2v._dist_core import (
    DistributedReport,
    DistributedTrainingError,
    check_request,
    install_vocabulary,
    run_spec,
    train_rounds,
    vocabulary_options,
)
from hsw2v._shards import (
    CorpusChangedError,
    cut_shard,
    expand_paths,
    file_stamp,
    plan_ranges,
    splittable_size,
)
from hsw2v.corpora import MAX_WORDS_IN_BATCH
from hsw2v.exceptions import EmptyCorpusError
from hsw2v.word2vec import Word2Vec

logger = logging.getLogger(__name__)

__all__ = ["DaskEngine", "DistributedReport", "DistributedTrainingError", "run_spec", "train"]


def train(
    client: Any,
    corpus_paths: str | os.PathLike | list,
    *,
    sync_every: int = 1_000_000,
    merge: str = "hybrid",
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
            and their references are in :mod:`hsw2v._dist_merge`). ``"hybrid"`` (the
            default) combines the shards' deltas by Adaptive Summation (Maleki et al.,
            MLSys 2021), row by row and pairwise in a fixed tree over the shards: deltas
            that point different ways add up, deltas that agree count once, so a row every
            shard pushes to the same point is not pushed past it; it does so on the input
            vectors and on the output rows that at least 1/256 of the round's words trained
            (the tree's top nodes, the frequent words' negative-sampling rows), and adds up
            the deltas of the other output rows, as threads sharing one model would.
            ``"adasum"`` applies Adaptive Summation to every row (0.010-0.015 lower
            WordSim-353 than ``"hybrid"`` on the benchmark corpus, 1.6 analogy points lower
            with negative sampling). ``"average"``
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
    model = check_request(word2vec_params, sync_every, merge, snapshot_every)
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
    engine = DaskEngine(client, timeout)
    on_progress = _progress.resolve(progress)
    try:
        shards, marks, vocab_seconds = _vocabulary(
            engine, model, paths, n_shards, sync_every, max_sentence_length, trim_rule
        )
        n_rounds = max(1, math.ceil(model.corpus_total_words / sync_every))
        pieces, counts_iter = [], iter(marks)
        for shard in shards:
            shard_counts = [_Counted(*next(counts_iter)) for _ in shard]  # in shard order
            pieces.append(cut_shard(shard, shard_counts, n_rounds))
        # float16 deltas, as on Spark: half the bytes per round, the same scores
        spec = run_spec(model, engine.run_id, max_sentence_length, delta_dtype="float16")
        train_rounds(
            engine,
            model,
            pieces,
            spec,
            merge=merge,
            snapshot_every=snapshot_every,
            on_progress=on_progress,
            vocab_seconds=vocab_seconds,
        )
    finally:
        engine.close()
        if hasattr(on_progress, "close"):
            on_progress.close()
    return model


class DaskEngine:
    """The round loop's engine (:class:`hsw2v._dist_core.Engine`) on a Dask cluster: handles
    are futures, the whole run is submitted ahead (the scheduler keeps what later tasks
    still need), shard ``k``'s tasks prefer the ``k``-th worker, and a task lost with its
    worker runs again elsewhere (``retries=1``, then the scheduler's ``allowed-failures``)."""

    lookahead = None  # the whole run is submitted, then watched

    def __init__(self, client, timeout: float):
        self.client, self.timeout = client, timeout
        self.run_id = uuid.uuid4().hex[:12]
        self.addresses: list | None = None

    def put(self, value, name: str):
        # a list of one item: scatter would otherwise scatter a tuple's items one by one
        [future] = self.client.scatter([value], broadcast=True, hash=False)
        return future

    def submit(self, fn, *args, name: str, **kwargs):
        return self.client.submit(fn, *args, key=f"hsw2v-{name}-{self.run_id}", retries=1, **kwargs)

    def submit_shards(self, fn, calls: list, name: str) -> list:
        if not self.addresses:
            self.addresses = sorted(self.client.scheduler_info()["workers"])
        if not self.addresses:  # between a lost worker and its replacement: none is listed
            self.client.wait_for_workers(1, timeout=self.timeout)
            self.addresses = sorted(self.client.scheduler_info()["workers"])
        addresses = self.addresses

        def where(k: int) -> dict:  # shard k prefers the k-th worker, where one is listed
            if not addresses:
                return {}
            return {"workers": [addresses[k % len(addresses)]], "allow_other_workers": True}

        return [
            self.submit(fn, *args, name=f"{name}-{k}", **where(k), **kwargs)
            for k, (args, kwargs) in enumerate(calls)
        ]

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
            raise DistributedTrainingError(
                f"{what} failed: {type(exc).__name__}: {_message(exc)}"
            ) from exc

    def cancel(self, futures: list) -> None:
        # released, not Client.cancel: the scheduler forgets a released task no client
        # wants and tells the workers to drop it if it has not started. Client.cancel of a
        # task whose dependents another cancel just released trips an assertion in the
        # scheduler (distributed 2026.8: stimulus_cancel asserts ts.who_wants), which drops
        # the client's connection and cancels every other future it holds.
        for future in futures:
            if future is not None:
                future.release()

    def close(self) -> None:
        """Clear the run's caches on the workers (best effort)."""
        try:
            self.client.run(tasks.forget_run, self.run_id, on_error="ignore")
        except Exception:  # noqa: BLE001 - best effort: a dead worker has nothing to forget
            logger.debug("could not clear the workers' caches", exc_info=True)


def _message(exc: BaseException) -> str:
    """What ``exc`` says. A task's error comes back from Dask with its arguments but, for some
    exceptions, not what their constructor set from them (a ``UnicodeDecodeError``'s reason
    and position: its message is then empty); such an error is read from its arguments.

    >>> bare = UnicodeDecodeError.__new__(UnicodeDecodeError, "utf-8", b"a\\xff", 1, 2, "bad")
    >>> str(bare), _message(bare)
    ('', "'utf-8' codec can't decode byte 0xff in position 1: bad")
    """
    text = str(exc)
    if text or not exc.args:
        return text
    try:
        return str(type(exc)(*exc.args)) or repr(exc.args)
    except Exception:  # noqa: BLE001 - arguments its constructor refuses: show them as they are
        return repr(exc.args)


def _vocabulary(engine, model, paths, n_shards, sync_every, max_sentence_length, trim_rule):
    """Count the files' ranges on the workers, merge the counts in a tree there and build the
    vocabulary on the worker holding them; install it (:func:`install_vocabulary`). Returns
    the shards, each range's ``(words, sentences, marks)`` and the seconds it took."""
    started = time.perf_counter()
    sizes = [splittable_size(p) for p in paths]
    # each local file's (size, mtime, inode) now: every later read (counting, training)
    # refuses a file that no longer has it (CorpusChangedError)
    stamps = [file_stamp(p) for p in paths]
    shards = [s for s in plan_ranges(paths, n_shards, sizes, stamps) if s]
    if not shards:  # every file empty: nothing to count (as Word2Vec's own error)
        raise EmptyCorpusError(
            f"the corpus is empty: no bytes in {', '.join(map(repr, paths))}; give "
            "files with one sentence per line"
        )
    mark_every = max(1, min(10_000, sync_every // (4 * len(shards) or 1)))
    counts, marks = [], []
    for k, shard in enumerate(shards):
        for i, byte_range in enumerate(shard):
            count = engine.submit(
                tasks.count_task,
                byte_range,
                max_sentence_length,
                mark_every,
                model.max_vocab_size,
                trim_rule,
                name=f"count-{k}-{i}",
            )
            counts.append(count)
            marks.append(engine.submit(tasks.marks_of, count, name=f"marks-{k}-{i}"))
    merged, futures = _tree_merge(engine, counts, model.max_vocab_size, trim_rule)
    options = vocabulary_options(model, trim_rule)
    built = engine.submit(tasks.vocabulary_task, merged, options, name="vocabulary")
    try:
        vocab, n_raw = engine.result(built, "building the vocabulary")
        marks = [engine.result(f, "counting the corpus") for f in marks]
    finally:
        engine.cancel(counts + futures + [built])
    words = sum(w for w, _, _ in marks)
    sentences = sum(s for _, s, _ in marks)
    install_vocabulary(model, vocab, n_raw, words, sentences)
    seconds = time.perf_counter() - started
    logger.info(
        "distributed vocabulary: %i words kept of %i, %i raw words in %i shards, %.1fs",
        len(vocab.index_to_key),
        n_raw,
        words,
        len(shards),
        seconds,
    )
    return shards, marks, seconds


def _tree_merge(engine, counts, max_vocab_size, trim_rule, fan_in=4):
    """The counts merged in a tree of tasks, neighbours first (corpus order kept)."""
    level, futures = 0, []
    while len(counts) > 1 or level == 0:  # at least once: a RangeCount becomes a dict
        counts = [
            engine.submit(
                tasks.merge_task,
                *counts[i : i + fan_in],
                max_vocab_size=max_vocab_size,
                trim_rule=trim_rule,
                name=f"merge-{level}-{i}",
            )
            for i in range(0, len(counts), fan_in)
        ]
        futures += counts
        level += 1
    return counts[0], futures


@dataclass
class _Counted:
    words: int
    sentences: int
    marks: list
