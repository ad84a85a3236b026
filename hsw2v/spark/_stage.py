"""One Spark stage for a whole fit: its tasks stay up and the driver talks to them directly.

The job engine (:class:`hsw2v.spark._engine.SparkEngine`) runs a Spark job per round: every
round pays for the job's scheduling, its tasks' start, the broadcast of what they need and
the collection of their results (0.6-0.7 s on two executors before any training or merging,
benchmarks/RESULTS.md), and the vocabulary pass is a job of its own whose scans are persisted
and read back. Here the whole fit is one job of one stage, a task per partition, whose tasks
run from the first read of their partition to the last round:

* **Counting.** Each task reads its partition once (:func:`hsw2v.spark._engine.scan_partition`),
  keeps the scan in its own memory and sends its counts to the driver, which merges them in
  the partitions' order (:func:`hsw2v.spark._engine.counts_in_order`) and builds the
  vocabulary, the tree and the weights once, as the job engine does. Where a balanced plan
  lends stretches between partitions (:func:`hsw2v.spark._engine.lend`), that is one more
  call of the same kind before the rounds.
* **Rounds.** The core's round loop (:func:`hsw2v._dist_core.train_rounds`) runs on the driver
  unchanged, over :class:`StageEngine`: a round's training call goes to each shard's task as a
  message, and its result comes back on the same connection. A value the tasks need (the run's
  settings, a snapshot, a round's merged update) travels to each task once and stays there
  until the driver drops it. The merge runs on the driver, as with the job engine, so the two
  give the same weights bit for bit (one thread per task).

The connections: the driver listens on an ephemeral port of its own host (``spark.driver.host``)
and each task connects to it, first sending a random token the driver put in the task's
closure (Spark ships closures; nothing is read from a connection before its token matches).
Messages are pickles with their arrays apart (protocol 5's out-of-band buffers, PEP 574:
:class:`Packed`), every part's length first: the arrays' memory is sent as it is and read
into the arrays the other side unpickles, so a round's deltas and its update are not copied
into a pickle and out of it again. The driver's are written with cloudpickle (what Spark
ships functions with; a held value goes in already packed, once for all the tasks it goes
to, as a value of its own after the call), the tasks' with pickle.

Every task must run at once, so the stage runs a task per task slot at most
(:func:`stage_tasks`): the estimator trains no more partitions than the cluster has slots
(:func:`hsw2v.spark._estimator.training_partitions`), and where slots were lost before the
stage started, a task serves several partitions in turn. It is an ordinary stage,
not one in Spark's barrier mode (SPARK-24374), which refuses a stage whose input was
coalesced, as fewer partitions than the DataFrame's are (:func:`hsw2v.spark._estimator.Word2Vec`
joins them in order); the slot check stands in for barrier mode's gang scheduling.

Failure: a task that raises reports the error on its connection; a task that dies closes it;
a task Spark starts again (a retry, or a speculative copy) is refused. Each of these stops the
fit with :class:`hsw2v._dist_core.DistributedTrainingError` naming the step and the task's
error, the stage's job is cancelled, and no model is returned.
"""

from __future__ import annotations

import hmac
import itertools
import operator
import pickle
import secrets
import socket
import struct
import threading
import time
import weakref
from typing import NamedTuple

from hsw2v import _dist_tasks as tasks
from hsw2v._dist_core import DistributedTrainingError
from hsw2v.spark._engine import (
    _Held,
    call_on_driver,
    counts_in_order,
    cut_piece,
    scan_partition,
    step_name,
    task_error,
)

_LENGTH = struct.Struct("!Q")
_HELLO = struct.Struct("!ii")  # partition, attempt
TOKEN_BYTES = 32
CONNECT_SECONDS = 300  # how long the driver waits for every task to connect


# ------------------------------------------------------------------------------ the wire
class Packed(NamedTuple):
    """A value pickled with its large arrays apart (pickle protocol 5's out-of-band buffers,
    PEP 574): ``head`` is the pickle, ``buffers`` the arrays' own memory, sent as it is and
    read back into the arrays the receiver unpickles, so no copy of a round's deltas or
    update is made on the way (only the socket's)."""

    head: bytes
    buffers: list


def pack(value, dumps=pickle.dumps) -> Packed:
    """``value`` as a :class:`Packed`, pickled by ``dumps`` (pickle's, or cloudpickle's for
    what holds functions)."""
    buffers: list = []
    head = dumps(value, protocol=5, buffer_callback=buffers.append)
    return Packed(head, [buffer.raw() for buffer in buffers])


def _cloudpickled(value) -> Packed:
    from pyspark import cloudpickle

    return pack(value, cloudpickle.dumps)


def send(sock: socket.socket, *values: Packed) -> None:
    """One message of packed values: how many values and parts, each value's number of
    buffers, each part's length, then the parts (each value's head and its buffers)."""
    parts = [part for value in values for part in (value.head, *value.buffers)]
    sizes = [memoryview(part).nbytes for part in parts]
    counts = [len(value.buffers) for value in values]
    sock.sendall(
        _LENGTH.pack(len(values))
        + _LENGTH.pack(len(parts))
        + struct.pack(f"!{len(counts)}Q{len(sizes)}Q", *counts, *sizes)
    )
    for part in parts:
        sock.sendall(part)


def _read_exactly(sock: socket.socket, n: int) -> bytearray:
    buffer = bytearray(n)
    view, got = memoryview(buffer), 0
    while got < n:
        read = sock.recv_into(view[got:], min(n - got, 1 << 24))
        if not read:
            raise ConnectionError("the connection closed")
        got += read
    return buffer


def receive_packed(sock: socket.socket) -> list:
    """The next message's values, each a :class:`Packed` over the bytes read."""
    n_values, n_parts = struct.unpack("!QQ", _read_exactly(sock, 2 * _LENGTH.size))
    layout = struct.unpack(f"!{n_values + n_parts}Q",
                           _read_exactly(sock, (n_values + n_parts) * _LENGTH.size))  # fmt: skip
    counts, sizes = layout[:n_values], layout[n_values:]
    parts = [_read_exactly(sock, size) for size in sizes]
    values, at = [], 0
    for count in counts:
        values.append(Packed(parts[at], parts[at + 1 : at + 1 + count]))
        at += 1 + count
    return values


def unpack(value: Packed):
    return pickle.loads(value.head, buffers=value.buffers)


def receive(sock: socket.socket):
    """The next message's first value, unpickled."""
    return unpack(receive_packed(sock)[0])


# ------------------------------------------------------------------------------ the task side
class _Ref:
    """A value the task was sent earlier, by its number."""

    __slots__ = ("number",)

    def __init__(self, number: int):
        self.number = number


def _resolve(value, held: dict):
    if isinstance(value, list):
        return [_resolve(v, held) for v in value]
    return held[value.number] if isinstance(value, _Ref) else value


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def tag_shard(k: int, rows):
    """Partition ``k``'s rows, each as ``(k, row)``, after a ``(k,)`` that stands for the
    partition even when it has no rows: what a task serving several shards reads."""
    yield (k,)
    for row in rows:
        yield k, row


def shards_of(items):
    """``(shard, rows)`` for each shard in a task's tagged rows (:func:`tag_shard`), in their
    order; each shard's rows must be read before the next shard's."""
    for k, group in itertools.groupby(items, key=operator.itemgetter(0)):
        yield k, (item[1] for item in group if len(item) == 2)


def serve_shards(task, shards, address, token, attempt, scan_args) -> int:
    """Inside the stage's task ``task``: count each of its shards (``shards``: ``(shard,
    rows)`` pairs), send their counts to the driver, then run the training calls the driver
    sends, in order, until it says stop. The shards' scans and replicas
    (:mod:`hsw2v._dist_tasks`) stay in this process between rounds."""
    sock = socket.create_connection(address, timeout=CONNECT_SECONDS)
    sock.settimeout(None)
    run_id = None
    try:
        sock.sendall(token + _HELLO.pack(task, attempt))
        scans = {}
        try:
            for k, rows in shards:
                scans[k] = scan_partition(k, rows, *scan_args)
            counted = [(k, scan.counts, scan.shape()) for k, scan in scans.items()]
            send(sock, pack(("ok", counted)))
        except Exception as exc:  # noqa: BLE001 - reported to the driver, which stops the fit
            send(sock, pack(("error", _error(exc))))
            return task
        held: dict = {}
        while True:
            first, *values = receive_packed(sock)
            message = unpack(first)
            if message[0] == "stop":
                return task
            _, fn, calls, new, dropped = message
            held.update((number, unpack(value)) for number, value in zip(new, values, strict=True))
            for number in dropped:
                held.pop(number, None)
            try:
                results = []
                for k, args, kwargs in calls:
                    args = tuple(_resolve(a, held) for a in args)
                    spec, piece = args[0], args[3]
                    if run_id is None:
                        run_id = spec.run_id
                        tasks.forget_other_runs(run_id)
                    cut_piece(scans[k], spec, piece)
                    results.append(fn(*args, **kwargs))
                reply = ("ok", results)
            except Exception as exc:  # noqa: BLE001 - reported to the driver
                reply = ("error", _error(exc))
            send(sock, pack(reply))
    finally:
        sock.close()
        if run_id is not None:
            tasks.forget_run(run_id)  # a Python worker outlives the fit: free the replicas


# ------------------------------------------------------------------------------ the driver side
def stage_tasks(sc, n: int) -> int:
    """How many tasks the stage runs for ``n`` partitions: one each where the cluster runs
    that many tasks at once, else one per task slot, each serving several partitions in turn.
    It waits a little (3 s at most) for more slots only where more may come: no executor has
    registered yet, or dynamic allocation adds them on demand."""
    slots = task_slots(sc)
    growing = sc.getConf().get("spark.dynamicAllocation.enabled", "false").lower() == "true"
    if slots < n and (slots == 0 or growing):
        deadline = time.monotonic() + 3.0
        while (slots := task_slots(sc)) < n and time.monotonic() < deadline:
            time.sleep(0.1)
    return max(1, min(n, slots))


def task_slots(sc) -> int:
    """How many tasks the cluster runs at once (what Spark checks its barrier stages against)."""
    jsc = sc._jsc.sc()
    try:
        profile = jsc.resourceProfileManager().defaultResourceProfile()
        return int(jsc.maxNumConcurrentTasks(profile))
    except Exception:  # noqa: BLE001 - an internal call; the parallelism is the public figure
        return int(sc.defaultParallelism)


class Stage:
    """The driver's side of the stage: starts it (in a thread, as ``collect`` blocks), takes
    the tasks' connections and their counts, and serves as the round loop's engine
    (:class:`StageEngine`). Use as a context manager: leaving it stops the tasks, and on an
    error cancels the stage's job."""

    def __init__(self, sc, rdd, n: int, scan_args: tuple):
        self.sc, self.n = sc, n
        n_tasks = self.n_tasks = stage_tasks(sc, n)
        conf = sc.getConf()
        host = conf.get("spark.driver.host")
        bind = conf.get("spark.driver.bindAddress", host)
        self.server = socket.create_server((bind, 0), backlog=max(n_tasks, 8))
        address = self.address = (host, self.server.getsockname()[1])
        token = self.token = secrets.token_bytes(TOKEN_BYTES)
        self.group = f"hsw2v-stage-{secrets.token_hex(6)}"
        self.connections: list = [None] * n_tasks
        self.owner: list = [None] * n  # partition -> the task that serves it
        self.failure: BaseException | None = None
        grouped = n_tasks < n
        if grouped:  # each task reads its partitions one after another, tagged
            rdd = rdd.mapPartitionsWithIndex(tag_shard).coalesce(n_tasks)

        def run(index, rows):
            from pyspark import TaskContext

            attempt = TaskContext.get().attemptNumber()
            shards = shards_of(rows) if grouped else [(index, rows)]
            yield serve_shards(index, shards, address, token, attempt, scan_args)

        def stage():
            sc.setJobGroup(self.group, "hsw2v training stage", interruptOnCancel=True)
            sc.setJobDescription("hsw2v fit (one stage, its tasks up until the end)")
            try:
                rdd.mapPartitionsWithIndex(run).collect()
            except BaseException as exc:  # noqa: BLE001 - read by the driver's thread
                self.failure = exc

        self.thread = threading.Thread(target=stage, name="hsw2v-spark-stage", daemon=True)

    def __enter__(self) -> Stage:
        self.thread.start()
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self.close(failed=kind is not None)

    def _stage_error(self, what: str) -> DistributedTrainingError:
        error = task_error(self.failure)
        if any(word in error for word in ("Connection", "timed out", "unreachable")):
            error += (
                f" (could the task not reach the driver at {self.address}? A firewall between "
                "the executors and the driver blocks the stage's connections: fit with "
                "execution='jobs' to train without them)"
            )
        return DistributedTrainingError(f"{what} failed in a Spark task: {error}")

    def connect(self) -> None:
        """Wait until every task has connected (or the stage failed)."""
        self.server.settimeout(0.2)
        deadline = time.monotonic() + CONNECT_SECONDS
        while any(c is None for c in self.connections):
            if self.failure is not None:
                raise self._stage_error("counting the vocabulary")
            if time.monotonic() > deadline:
                raise DistributedTrainingError(
                    f"the Spark tasks did not connect to the driver at {self.address} "
                    f"within {CONNECT_SECONDS} s (can the executors reach spark.driver.host?); "
                    "fit with execution='jobs' to train without these connections"
                )
            try:
                sock, _ = self.server.accept()
            except TimeoutError:
                continue
            sock.settimeout(30)
            try:
                hello = _read_exactly(sock, TOKEN_BYTES + _HELLO.size)
            except OSError:
                sock.close()
                continue
            if not hmac.compare_digest(bytes(hello[:TOKEN_BYTES]), self.token):
                sock.close()  # not one of this stage's tasks
                continue
            task, attempt = _HELLO.unpack(hello[TOKEN_BYTES:])
            if attempt > 0 or self.connections[task] is not None:
                sock.close()
                raise DistributedTrainingError(
                    "counting the vocabulary failed in a Spark task: Spark started a task of "
                    "the training stage again (a retry after a lost task, or a speculative "
                    "copy), which this fit cannot take in"
                )
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.connections[task] = sock

    def partitions_of(self, task: int) -> str:
        held = [k for k, t in enumerate(self.owner) if t == task]
        if not held:
            return f"task {task}"
        return f"partition{'s' if len(held) > 1 else ''} {', '.join(map(str, held))}"

    def reply(self, task: int, what: str):
        """Task ``task``'s answer to the last message, or the error it reported."""
        try:
            kind, value = receive(self.connections[task])
        except (OSError, EOFError) as exc:
            raise DistributedTrainingError(
                f"{what} failed in a Spark task: the task of {self.partitions_of(task)} was "
                f"lost ({type(exc).__name__}: {exc})"
            ) from exc
        if kind == "error":
            raise DistributedTrainingError(f"{what} failed in a Spark task: {value}")
        return value

    def counts(self) -> tuple[dict, dict]:
        """The partitions' counts merged in their order (the corpus's first-seen order), and
        each partition's shape (:meth:`hsw2v.spark._engine.PartitionScan.shape`)."""
        self.connect()
        counted, shapes = {}, {}
        for task in range(self.n_tasks):
            for k, counts, shape in self.reply(task, "counting the vocabulary"):
                self.owner[k] = task
                counted[k], shapes[k] = counts, shape
        return counts_in_order([counted[k] for k in range(self.n)]), shapes

    def engine(self) -> StageEngine:
        return StageEngine(self)

    def close(self, failed: bool) -> None:
        stop = pack(("stop",))
        for sock in self.connections:
            if sock is None:
                continue
            try:
                send(sock, stop)
            except OSError:
                pass
        if failed:
            self.sc.cancelJobGroup(self.group)
        self.thread.join(timeout=None if not failed else 60)
        for sock in self.connections:
            if sock is not None:
                sock.close()
        self.server.close()


def _ship(value, sent: set, new: dict, blobs: dict):
    """``value`` as a task receives it: a held value it has not been sent yet goes into
    ``new``, packed (once for all the tasks it goes to: ``blobs``), and every held value
    travels as a :class:`_Ref`."""
    if isinstance(value, list):
        return [_ship(v, sent, new, blobs) for v in value]
    if not isinstance(value, _Held):
        return value
    if value.number not in sent:
        if value.number not in blobs:
            blobs[value.number] = _cloudpickled(value.value)
        new[value.number] = blobs[value.number]
        sent.add(value.number)
    return _Ref(value.number)


class StageEngine:
    """The round loop's engine (:class:`hsw2v._dist_core.Engine`) over a running
    :class:`Stage`: ``submit`` runs on the driver, ``submit_shards`` sends call ``k`` to
    partition ``k``'s task and waits for every result."""

    lookahead = 0  # each round is awaited before the next is submitted

    def __init__(self, stage: Stage):
        self.stage = stage
        self.alive: set = set()
        self.sent = [set() for _ in stage.connections]  # numbers each task holds

    def _handle(self, value) -> _Held:
        handle = _Held(value)
        self.alive.add(handle.number)
        weakref.finalize(handle, self.alive.discard, handle.number)
        return handle

    def put(self, value, name: str):
        return self._handle(value)

    def submit(self, fn, *args, name: str, **kwargs):
        return self._handle(call_on_driver(fn, args, kwargs, name))

    def submit_shards(self, fn, calls: list, name: str) -> list:
        stage, what = self.stage, step_name(name)
        blobs: dict = {}  # the held values new to some task, each packed once
        for task, sock in enumerate(stage.connections):
            sent, new = self.sent[task], {}
            mine = [
                (k, tuple(_ship(a, sent, new, blobs) for a in args), kwargs)
                for k, (args, kwargs) in enumerate(calls)
                if stage.owner[k] == task
            ]
            dropped = sent - self.alive
            sent -= dropped
            try:
                call = _cloudpickled(("call", fn, mine, list(new), sorted(dropped)))
                send(sock, call, *new.values())
            except OSError as exc:
                raise DistributedTrainingError(
                    f"{what} failed in a Spark task: the task of {stage.partitions_of(task)} "
                    f"was lost ({type(exc).__name__}: {exc})"
                ) from exc
        results = [None] * len(calls)
        for task in range(len(stage.connections)):
            mine = [k for k in range(len(calls)) if stage.owner[k] == task]
            for k, result in zip(mine, stage.reply(task, what), strict=True):
                results[k] = self._handle(result)
        return results

    def result(self, handle, what: str):
        return handle.value

    def cancel(self, handles: list) -> None:
        pass  # values leave the tasks when the driver drops their handles
