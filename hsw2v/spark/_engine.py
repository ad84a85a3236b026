"""Spark's engine for the distributed core (:mod:`hsw2v._dist_core`), and the vocabulary pass
over a DataFrame's partitions.

The data stays in the partitions of an RDD of sentences (one per row of the input column):

* **Vocabulary.** Each partition counts its own words and records them as provisional ids
  (:func:`scan_partition`: its rows arrive joined and are counted without the GIL, with
  marks every few thousand words where it can later be cut into pieces); the scans are
  persisted, their counts merged on the executors by ``treeReduce`` (each word at its first
  position, :class:`hsw2v._dist_core.PositionedCounts`) and only the merged counts reach the
  driver, which builds the vocabulary, the Huffman tree and the initial weights once, as on
  one machine.
* **Shards.** Partitions of unequal words train shards of equal words (:func:`plan_shards`):
  the corpus cut in order at marks, shard ``k`` trained by partition ``k``'s task, which
  gets the stretches of other partitions its shard takes once, before the first round
  (:func:`lend`: one call to each partition's task, through the driver).
* **Rounds.** Each round is one Spark job over the persisted scans: the task of partition
  ``k`` makes the final ids of its scan's recording (one pass in place,
  :meth:`hsw2v.vocab.TokenRecording.finalize`), cuts the round's piece into jobs (views,
  :func:`encode_scan`), trains it (:func:`hsw2v._dist_tasks.train_task`) and returns only the
  rows it changed. The driver merges them (the core's merge rules) and the merged update
  travels to the next round's tasks as a broadcast variable, as does every snapshot of the
  model and the run's settings. A Python worker keeps, keyed by the run, its replica of a
  shard's weights (:mod:`hsw2v._dist_tasks`): a task that lands where its partition trained
  before goes on from it, one that lands elsewhere rebuilds it from the snapshot, with the
  same result bit for bit. A partition too large to record (``cache_words``) is encoded from
  its rows once, into every round's pieces (:func:`encode_partition`), and the rounds read
  those.

A task that fails stops the fit with :class:`hsw2v._dist_core.DistributedTrainingError`
naming the round and the task's own error (after Spark's own retries,
``spark.task.maxFailures``); no partial model is returned.
"""

from __future__ import annotations

import itertools
import json
import re
import weakref
from dataclasses import dataclass, field

import numpy as np

from hsw2v import _dist_tasks as tasks
from hsw2v._dist_core import DistributedTrainingError, PositionedCounts
from hsw2v._kernels._recording import JoinedRecorder
from hsw2v._shards import ByteRange, RangeCount, cut_shard
from hsw2v.running.epochs import iter_jobs, jobs_from_recording
from hsw2v.vocab import TokenRecording, check_keys

SEPARATOR = "\x1f"  # ASCII's unit separator: joins a row's words on their way to Python
AS_JSON = "\x1e"  # ASCII's record separator: a row that cannot be joined travels in JSON
_AS_JSON_BYTES = AS_JSON.encode()
BLOCK_CHARS = 1 << 20  # bytes of joined rows counted in one call (note D of ``_recording``)


def words_of(row) -> list:
    """A row's words: a row travels as its words joined by :data:`SEPARATOR` (UTF-8 bytes, or
    a str), or as its list of words when one of them is null or empty or holds the separator,
    a newline or :data:`AS_JSON` (:func:`hsw2v.spark._estimator.rows_to_python`,
    :func:`row_of`)."""
    if type(row) is bytes:
        return row.decode("utf-8").split(SEPARATOR) if row else []
    if type(row) is str:
        return row.split(SEPARATOR) if row else []
    return list(row)


def row_of(line):
    """A row as it reaches Python (:func:`hsw2v.spark._estimator.rows_to_python`, UTF-8
    bytes): its joined words as they came, or, where they cannot be joined,
    :data:`AS_JSON` and its words in JSON, read back into their list."""
    if line[:1] == _AS_JSON_BYTES or line[:1] == AS_JSON:
        return json.loads(line[1:])
    return line


def chunked(rows, max_sentence_length: int):
    """The sentences of a partition's rows: each row's words cut into chunks of at most
    ``max_sentence_length`` (as MLlib's ``maxSentenceLength`` and hsw2v's LineSentence); empty
    and null rows give none."""
    for row in rows:
        if not row:
            continue
        words = words_of(row)
        for i in range(0, len(words), max_sentence_length):
            yield words[i : i + max_sentence_length]


@dataclass
class PartitionScan:
    """One partition read once (:func:`scan_partition`): its counts in first-seen order, its
    sentences as a :class:`hsw2v.vocab.TokenRecording` (provisional ids; None when the
    partition holds more than ``record_tokens`` words), totals, and marks ``(sentence index,
    words before, sentences before)`` where it can be cut into pieces."""

    index: int
    counts: dict
    recording: TokenRecording | None
    words: int
    sentences: int
    marks: list

    def shape(self) -> tuple:
        """``(words, sentences, marks, recorded)``: what the driver plans the pieces from."""
        return (self.words, self.sentences, self.marks, self.recording is not None)


def scan_partition(
    index: int, rows, max_sentence_length: int, mark_every: int, record_tokens,
    block_chars: int = BLOCK_CHARS,
):  # fmt: skip
    """Count and record a partition's rows in one pass, as :func:`hsw2v.vocab.scan_counts`
    (what ``Word2Vec.build_vocab`` runs on one machine) does for their sentences, the joined
    rows (UTF-8 bytes as they arrive; a str is encoded) without the GIL in blocks of about
    ``block_chars`` bytes (:class:`hsw2v._kernels._recording.JoinedRecorder`); the marks come
    every ``mark_every`` words or so."""
    recorder = JoinedRecorder(max_sentence_length, record_tokens or 0, mark_every)
    block: list = []
    size = 0

    def flush():
        nonlocal size
        if block:
            recorder.add_lines(b"\n".join(block) + b"\n", len(block))
            block.clear()
        size = 0

    for at, row in enumerate(rows):
        kind = type(row)
        if kind is bytes or kind is str or row is None:
            if kind is str:
                row = row.encode("utf-8", "surrogatepass")
            block.append(row or b"")
            size += len(block[-1])
            if size >= block_chars:
                flush()
        else:
            words = list(row)
            if None in words:
                raise TypeError(
                    f"row {at} of partition {index} holds a null word (position "
                    f"{words.index(None)}): drop null words first, e.g. with "
                    "pyspark.sql.functions.filter(col, lambda w: w.isNotNull())"
                )
            flush()
            recorder.add_words(words)
    flush()
    counts, ids, lengths, words, sentences, marks = recorder.result()
    counts = check_keys(counts, "the corpus contains")
    recording = None
    if ids is not None:
        recording = TokenRecording(ids=ids, lengths=lengths, n_keys=len(counts))
    return PartitionScan(index, counts, recording, words, sentences, marks)


@dataclass
class PartitionCount:
    """Partitions' counts with each word's first position (their merge is free of order,
    :class:`hsw2v._dist_core.PositionedCounts`), and each partition's ``(words, sentences,
    marks, recorded)``; combined by :func:`merge_partition_counts`."""

    counts: PositionedCounts
    shapes: dict = field(default_factory=dict)

    @classmethod
    def of(cls, scan: PartitionScan) -> PartitionCount:
        """A scan's counts; a word's position is ``(partition, its rank in the partition's
        first-seen order)``, enough to order the merged counts as the corpus's first-seen
        order."""
        counts = PositionedCounts()
        counts.counts = scan.counts
        counts.first = {word: (scan.index, rank) for rank, word in enumerate(scan.counts)}
        return cls(counts, {scan.index: scan.shape()})


def merge_partition_counts(a: PartitionCount, b: PartitionCount) -> PartitionCount:
    """Two partitions' (or merged) counts together, in any order."""
    a.counts = a.counts.merge(b.counts)
    a.shapes.update(b.shapes)
    return a


def counts_in_order(parts: list) -> dict:
    """The partitions' counts (each a scan's, in its first-seen order), given in the
    partitions' order, merged into the corpus's first-seen order: what
    :meth:`PartitionCount.of` and :func:`merge_partition_counts` give through
    ``counts.ordered()``, without the positions, since in the partitions' order a word is
    first inserted where it is first seen."""
    merged = dict(parts[0]) if parts else {}
    for counts in parts[1:]:
        for word, count in counts.items():
            merged[word] = merged.get(word, 0) + count
    return merged


@dataclass
class PartitionPiece:
    """Round ``round``'s piece of shard ``partition`` (trained by that partition's task): its
    sentences ``[start, stop)`` of the partition, or, in a balanced plan
    (:func:`plan_shards`), ``segments``: ``(partition, start, stop)`` stretches in the corpus's
    order, those of other partitions lent to it (``lent``: their final ids, which the driver
    fetched, :func:`lend_task`). Inside its task it holds the piece's id-encoded jobs
    (``encoded``), which the training task trains."""

    partition: int
    round: int
    start: int
    stop: int
    words: int
    sentences: int
    encoded: list | None = field(default=None, repr=False, compare=False)
    segments: list | None = None
    lent: dict = field(default_factory=dict, repr=False, compare=False)

    def spans(self) -> list:
        """The piece's ``(partition, start, stop)`` stretches, in the corpus's order."""
        return self.segments if self.segments is not None else [(self.partition, self.start, self.stop)]

    def borrowed(self) -> list:
        """Its stretches of other partitions than its own."""
        return [span for span in self.spans() if span[0] != self.partition]

    def read(self, max_sentence_length: int):
        raise RuntimeError("a partition piece is trained from its encoded jobs only")

    def source(self) -> str:
        return f"partition {self.partition}"


def plan_partition(partition: int, words: int, sentences: int, marks: list, n_rounds: int):
    """Partition ``partition`` cut into ``n_rounds`` pieces of about equal words, at its marks
    (the cutting of :func:`hsw2v._shards.cut_shard`, over sentence indices)."""
    whole = ByteRange(f"partition {partition}", 0, sentences)
    cut = cut_shard([whole], [RangeCount({}, words, sentences, marks)], n_rounds)
    pieces, at = [], 0
    for r, piece in enumerate(cut):
        pieces.append(
            PartitionPiece(partition, r, at, at + piece.sentences, piece.words, piece.sentences)
        )
        at += piece.sentences
    return pieces


def _range_count(shape: tuple, start: int, stop: int) -> RangeCount:
    """The words, sentences and marks of sentences ``[start, stop)`` of a partition of
    ``shape`` (``start`` and ``stop`` are 0, its end or one of its marks)."""
    words, sentences, marks = shape[:3]
    before = {0: 0, sentences: words, **{at: w for at, w, _ in marks}}
    inside = [(at, w - before[start], at - start) for at, w, _ in marks if start < at < stop]
    return RangeCount({}, before[stop] - before[start], stop - start, inside)


def _cut(spans: list, shapes: list, n: int) -> list:
    """``spans`` (``(partition, start, stop)``, in order) cut at marks into ``n`` stretches of
    about equal words (:func:`hsw2v._shards.cut_shard`): ``(spans, words, sentences)`` each."""
    if not spans:
        return [([], 0, 0)] * n
    ranges = [ByteRange(str(p), a, b) for p, a, b in spans]
    counts = [_range_count(shapes[p], a, b) for p, a, b in spans]
    return [
        ([(int(r.path), r.start, r.end) for r in piece.ranges], piece.words, piece.sentences)
        for piece in cut_shard(ranges, counts, n)
    ]


BALANCE_ABOVE = 1.02  # a plan is balanced when its largest shard holds more than this x the mean


def plan_shards(shapes: list, n_rounds: int, max_lent_words: int) -> list:
    """Each shard's pieces, one per round of an epoch (``pieces[k][r]``). Shard ``k`` is
    partition ``k`` cut into ``n_rounds`` pieces of about equal words (:func:`plan_partition`)
    unless the partitions' words differ by more than :data:`BALANCE_ABOVE`: then the corpus
    (the partitions in order) is cut at marks into shards of about equal words, so that no
    round waits for a larger partition, and each shard's stretches of other partitions are
    lent to it (at most ``max_lent_words`` words in all, which pass through the driver and
    then travel with their pieces, once an epoch; more, and the partitions train as they
    are). Shard ``k`` is still trained by partition ``k``'s task, and the shards keep the
    corpus's order."""
    n = len(shapes)
    words = [shape[0] for shape in shapes]

    def unbalanced() -> list:  # each partition its own pieces (made only when returned)
        return [plan_partition(k, *shapes[k][:3], n_rounds) for k in range(n)]

    if n < 2 or max(words) <= BALANCE_ABOVE * sum(words) / n:
        return unbalanced()
    spans = [(p, 0, shape[1]) for p, shape in enumerate(shapes)]
    shards = _cut(spans, shapes, n)
    lent = sum(
        _range_count(shapes[p], a, b).words
        for k, (shard_spans, _, _) in enumerate(shards)
        for p, a, b in shard_spans
        if p != k
    )
    if lent == 0 or lent > max_lent_words:  # no mark to cut at, or too much to move
        return unbalanced()
    pieces = []
    for k, (shard_spans, _, _) in enumerate(shards):
        pieces.append(
            [
                PartitionPiece(k, r, 0, 0, piece_words, piece_sentences, segments=piece_spans)
                for r, (piece_spans, piece_words, piece_sentences) in enumerate(
                    _cut(shard_spans, shapes, n_rounds)
                )
            ]
        )
    return pieces


@dataclass
class LendRequest:
    """What partition ``partition``'s task lends to other shards: its sentences in each of
    ``spans`` (``(start, stop)``), as recordings of final ids (``parts``, filled in its task
    by :func:`cut_piece`)."""

    partition: int
    spans: list
    parts: list | None = field(default=None, repr=False, compare=False)


def lend_requests(pieces: list) -> list:
    """One :class:`LendRequest` per partition: every stretch of it another shard's pieces
    borrow (none, for a plan that is not balanced)."""
    wanted: list = [[] for _ in pieces]
    for shard in pieces:
        for piece in shard:
            for p, a, b in piece.borrowed():
                wanted[p].append((a, b))
    return [LendRequest(p, spans) for p, spans in enumerate(wanted)]


def lend_task(spec, snapshot, updates, request: LendRequest, **_) -> list:
    """A training call's shape (``spec`` first, the request where a piece goes), run by the
    engines as a round is: the lent stretches' recordings, which :func:`cut_piece` made."""
    return request.parts


def attach_lent(pieces: list, requests: list, parts: list) -> None:
    """Give every piece the recordings of the stretches it borrows (``parts[p]``: what
    ``requests[p]`` returned)."""
    lent = {
        (request.partition, a, b): part
        for request, got in zip(requests, parts, strict=True)
        for (a, b), part in zip(request.spans, got, strict=True)
    }
    for shard in pieces:
        for piece in shard:
            piece.lent = {span: lent[span] for span in piece.borrowed()}


def lend(engine, pieces: list, spec_handle) -> None:
    """Fetch the stretches the pieces of a balanced plan borrow (:func:`plan_shards`) from
    their partitions' tasks, one call to each as in a round, and attach them to the pieces
    (nothing to do for a plan that is not balanced)."""
    requests = lend_requests(pieces)
    if not any(request.spans for request in requests):
        return
    calls = [((spec_handle, None, [], request), {}) for request in requests]
    what = "lending sentences between the partitions"
    handles = engine.submit_shards(lend_task, calls, name=what)
    attach_lent(pieces, requests, [engine.result(handle, what) for handle in handles])


def encode_partition(rows, spec, pieces: list):
    """A partition's sentences as id-encoded jobs (:func:`hsw2v.running.epochs.iter_jobs`, as
    every task encodes), one ``(round, jobs)`` item per piece: what the rounds' tasks read
    (numeric arrays, cheap to keep and to read again)."""
    key_to_index = {key: i for i, key in enumerate(spec.index_to_key)}
    stream = chunked(rows, spec.max_sentence_length)
    for piece in pieces:
        sentences = itertools.islice(stream, piece.sentences)
        yield piece.round, list(iter_jobs(sentences, key_to_index, spec.batch_words))
    for _ in stream:  # none are left (the counts said so); read to the end all the same
        pass


def final_recording(scan: PartitionScan, spec) -> tuple[TokenRecording, np.ndarray]:
    """The scan's recording with final ids for the run's vocabulary (made once, in place:
    a scan kept by its task between rounds), and its kept tokens before each sentence (what
    :func:`_stretch` cuts at)."""
    recording = scan.recording
    if not recording.final:
        index_of = {key: i for i, key in enumerate(spec.index_to_key)}
        to_final = np.fromiter(
            (index_of.get(w, -1) for w in scan.counts), np.int32, len(scan.counts)
        )
        recording.finalize(to_final, spec.index_to_key)
    return recording, np.concatenate([[0], np.cumsum(recording.kept_lengths)])


def _stretch(recording: TokenRecording, kept_at: np.ndarray, lo: int, hi: int,
             vocabulary=None) -> TokenRecording:  # fmt: skip
    """Sentences ``[lo, hi)`` of a final recording (``kept_at``: kept tokens before each
    sentence), as views."""
    return TokenRecording(
        ids=recording.ids[kept_at[lo] : kept_at[hi]],
        lengths=recording.lengths[lo:hi],
        n_keys=recording.n_keys,
        kept_lengths=recording.kept_lengths[lo:hi],
        n_kept=int(kept_at[hi] - kept_at[lo]),
        vocabulary=vocabulary,
        vocabulary_size=recording.vocabulary_size,
    )


def _joined(parts: list, vocabulary) -> TokenRecording:
    """Final recordings one after another, as one."""
    if len(parts) == 1:
        return parts[0]
    return TokenRecording(
        ids=np.concatenate([part.ids for part in parts]),
        lengths=np.concatenate([part.lengths for part in parts]),
        n_keys=parts[0].n_keys,
        kept_lengths=np.concatenate([part.kept_lengths for part in parts]),
        n_kept=sum(part.n_kept for part in parts),
        vocabulary=vocabulary,
        vocabulary_size=parts[0].vocabulary_size,
    )


def encode_scan(scan: PartitionScan, spec, pieces: list):
    """:func:`encode_partition` from a partition's recording, without reading its rows again:
    the recording's ids are made final for the run's vocabulary and each piece's jobs are
    views of them (:func:`hsw2v.running.epochs.jobs_from_recording`, the jobs
    :func:`~hsw2v.running.epochs.iter_jobs` makes from the same sentences); a piece's
    stretches of other partitions come from what they lent it."""
    recording, kept_at = final_recording(scan, spec)
    for piece in pieces:
        parts = [
            _stretch(recording, kept_at, lo, hi, recording.vocabulary)
            if p == scan.index
            else piece.lent[(p, lo, hi)]
            for p, lo, hi in piece.spans()
        ]
        if not parts:  # a round's piece of a shard with fewer marks than rounds
            yield piece.round, []
            continue
        joined = _joined(parts, recording.vocabulary)
        yield piece.round, jobs_from_recording(joined, spec.batch_words)


def run_shard(fn, args: tuple, kwargs: dict, rows):
    """Inside a Spark task: call the training function on this partition's piece, its jobs
    cut from the partition's recording (``rows`` holds its :class:`PartitionScan`) or taken
    from the encoded partition (``rows`` holds ``(round, jobs)`` items). The partition is
    read to its end (a Python worker that leaves input unread is not reused, and its replica
    would be lost)."""
    spec, piece = args[0], args[3]
    tasks.forget_other_runs(spec.run_id)
    for item in rows:
        if isinstance(item, PartitionScan):
            cut_piece(item, spec, piece)
        elif item[0] == piece.round:
            piece.encoded = item[1]
    return fn(*args, **kwargs)


def cut_piece(scan: PartitionScan, spec, piece) -> None:
    """Give ``piece`` its jobs, cut from its partition's recording (:func:`encode_scan`), or
    a :class:`LendRequest` the stretches it lends (final ids, without the vocabulary)."""
    if isinstance(piece, LendRequest):
        recording, kept_at = final_recording(scan, spec)
        piece.parts = [_stretch(recording, kept_at, lo, hi) for lo, hi in piece.spans]
        return
    for _, jobs in encode_scan(scan, spec, [piece]):
        piece.encoded = jobs


class _Held:
    """A value the driver holds (an engine's handle): the job engine sends it to tasks as a
    broadcast variable, made at the first need and removed from the executors when the
    handle is dropped; the stage's engine (:mod:`hsw2v.spark._stage`) sends it to each task
    once, by its ``number``."""

    __slots__ = ("value", "broadcast", "number", "__weakref__")
    numbers = itertools.count(1)

    def __init__(self, value):
        self.value, self.broadcast, self.number = value, None, next(_Held.numbers)

    def shipped(self, sc):
        if self.broadcast is None:
            self.broadcast = sc.broadcast(self.value)
            weakref.finalize(self, _unpersist, self.broadcast)
        return self.broadcast


def _unpersist(broadcast) -> None:
    try:
        broadcast.unpersist(blocking=False)
    except Exception:  # noqa: BLE001 - the context may be gone; nothing is left to free
        pass


def _resolve(value):
    """A task's argument: a broadcast variable's value, a list's items resolved."""
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    return value.value if hasattr(value, "value") and hasattr(value, "unpersist") else value


def _local(value):
    if isinstance(value, list):
        return [_local(v) for v in value]
    return value.value if isinstance(value, _Held) else value


def call_on_driver(fn, args: tuple, kwargs: dict, name: str):
    """``fn`` run on the driver over the values its held arguments stand for (an engine's
    ``submit``); its error as :class:`~hsw2v._dist_core.DistributedTrainingError`."""
    args = tuple(_local(a) for a in args)
    kwargs = {key: _local(v) for key, v in kwargs.items()}
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        raise DistributedTrainingError(f"{name} failed: {type(exc).__name__}: {exc}") from exc


def step_name(name: str) -> str:
    """What a training call of the core's round loop is called in an error: its name
    ``train-<round from 0>`` as "training round <round from 1>", any other name as it is."""
    what, _, number = name.partition("-")
    if what == "train" and number.isdigit():
        return f"training round {int(number) + 1}"
    return what


_PY_ERROR = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)): (.*)$", re.M)


def task_error(exc: BaseException) -> str:
    """The Python error a failed Spark task raised, as ``"Name: message"`` (the last one in
    the JVM's report), else the exception's first line."""
    text = str(exc)
    found = [m for m in _PY_ERROR.finditer(text) if "py4j" not in m.group(1).lower()]
    if found:
        name, message = found[-1].groups()
        return f"{name.rsplit('.', 1)[-1]}: {message.strip()}"
    return f"{type(exc).__name__}: {text.strip().splitlines()[0] if text.strip() else ''}"


class SparkEngine:
    """The round loop's engine (:class:`hsw2v._dist_core.Engine`) over an RDD of sentences
    (see the module docstring): handles are values held by the driver, ``submit`` runs on
    the driver, ``submit_shards`` runs one Spark job with a task per partition."""

    lookahead = 0  # each round is awaited before the next is submitted

    def __init__(self, sc, rdd):
        self.sc, self.rdd = sc, rdd
        self.held: list = []

    def put(self, value, name: str):
        return _Held(value)

    def submit(self, fn, *args, name: str, **kwargs):
        return _Held(call_on_driver(fn, args, kwargs, name))

    def submit_shards(self, fn, calls: list, name: str) -> list:
        sc = self.sc

        def ship(value):
            if isinstance(value, list):
                return [ship(v) for v in value]
            return value.shipped(sc) if isinstance(value, _Held) else value

        payload = [(tuple(ship(a) for a in args), kwargs) for args, kwargs in calls]

        def run(index, rows):
            args, kwargs = payload[index]
            args = tuple(_resolve(a) for a in args)
            yield run_shard(fn, args, kwargs, rows)

        sc.setJobDescription(f"hsw2v {name}")
        try:
            results = self.rdd.mapPartitionsWithIndex(run).collect()
        except Exception as exc:
            raise DistributedTrainingError(
                f"{step_name(name)} failed in a Spark task: {task_error(exc)}"
            ) from exc
        finally:
            sc.setJobDescription(None)
        return [_Held(r) for r in results]

    def result(self, handle, what: str):
        return handle.value

    def cancel(self, handles: list) -> None:
        pass  # nothing runs in the background; broadcasts go with their handles
