"""A Ctrl-C is never lost during training, even where CPython drops its KeyboardInterrupt.

CPython runs the SIGINT handler at the main thread's next check for signals, whatever Python
code runs there; inside a finalizer (``__del__``, a weakref callback) the KeyboardInterrupt
it raises is printed ("Exception ignored in ...") and dropped. Training runs finalizers on
the main thread at every epoch's end (the finished threads' weakref callbacks), and a
Ctrl-C that landed there used to be lost: training ran to its last epoch
(``hsw2v.running.ctrl_c`` explains the fix).

Each test pins that moment: an object whose ``__del__`` sends SIGINT to the process is
freed on the main thread at a chosen point of the run, so CPython drops the interrupt there
every time. Each runs in a subprocess (a lost interrupt must not reach pytest), and checks
from stderr that CPython did drop it, so that the test cannot pass without the route.
"""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hsw2v
from hsw2v.datasets import demo_corpus

PROJECT_ROOT = Path(hsw2v.__file__).resolve().parents[1]

DROPPER = """
import signal

class Dropper:
    # freed at once: its finalizer sends SIGINT, and CPython runs the handler inside
    # __del__, where the KeyboardInterrupt it raises is printed and dropped
    def __del__(self):
        signal.raise_signal(signal.SIGINT)
"""

TRAIN = DROPPER + """
import sys, threading
import numpy as np
from hsw2v import Word2Vec
from hsw2v.callbacks import CallbackAny2Vec

where, mode, path = sys.argv[1], sys.argv[2], sys.argv[3]
rng = np.random.default_rng(0)
words = [f"w{i}" for i in range(60)]
corpus = [[words[j] for j in rng.integers(0, 60, size=12)] for _ in range(2000)]
with open(path, "w") as f:
    f.write("\\n".join(" ".join(s) for s in corpus) + "\\n")
data = {"corpus_file": path} if mode == "corpus_file" else {"corpus_iterable": corpus}
model = Word2Vec(vector_size=16, min_count=1, workers=2, seed=1)
model.build_vocab(**data)
seen = {"epochs": 0, "dropped_after": None}  # epochs ended, and when the Ctrl-C came

def drop():
    if seen["dropped_after"] is None:
        seen["dropped_after"] = seen["epochs"]
        Dropper()

class Epochs(CallbackAny2Vec):
    def on_epoch_end(self, model):
        seen["epochs"] += 1
        if where == "epoch_end" and seen["epochs"] == 2:
            drop()

def progress(report):
    if where == "progress" and report.epoch == 1:
        drop()

try:
    model.train(**data, total_words=model.corpus_total_words, epochs=40,
                callbacks=[Epochs()], progress=progress)
    print("finished", seen["epochs"])
except KeyboardInterrupt:
    print("interrupted", seen["dropped_after"], seen["epochs"])
print("threads", sorted(t.name for t in threading.enumerate() if t.name.startswith("hsw2v")))
print("handler", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
print("finite", bool(np.isfinite(model.wv.vectors).all()))
model.train(**data, total_words=model.corpus_total_words, epochs=1)
print("again", model.wv.most_similar("w1", topn=1)[0][0] in words)
try:
    signal.raise_signal(signal.SIGINT)
    print("a later Ctrl-C: lost")
except KeyboardInterrupt:
    print("a later Ctrl-C: raised")
"""


def run_script(code, *args, cwd=None, timeout=120):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )


def assert_dropped_by_cpython(stderr):
    """The interrupt really was dropped inside the finalizer (else the test proves nothing)."""
    assert "Exception ignored in" in stderr and "Dropper.__del__" in stderr, stderr
    assert "KeyboardInterrupt" in stderr, stderr


@pytest.mark.parametrize(
    "where, mode",
    [("epoch_end", "iterable"), ("progress", "iterable"), ("progress", "corpus_file"),
     ("epoch_end", "corpus_file")],
)
def test_a_ctrl_c_dropped_in_a_finalizer_still_stops_train(tmp_path, where, mode):
    """Dropped after epoch 2 (an epoch callback) or in epoch 2 (a progress hook, on the
    main thread): train() raises KeyboardInterrupt within that epoch or before the next
    one starts (it used to train all 40); no thread is left, the SIGINT handler is Python's again,
    the model trains again, and a later Ctrl-C is raised as usual."""
    result = run_script(TRAIN, where, mode, str(tmp_path / "corpus.txt"))
    assert result.returncode == 0, result.stderr
    assert_dropped_by_cpython(result.stderr)
    lines = result.stdout.splitlines()
    assert lines[0].split()[0] == "interrupted", result.stdout
    dropped_after, epochs = (int(n) for n in lines[0].split()[1:])
    assert dropped_after in (1, 2) and epochs <= dropped_after + 1, result.stdout
    assert lines[1:] == [
        "threads []",
        "handler True",
        "finite True",
        "again True",
        "a later Ctrl-C: raised",
    ], result.stdout


CLI = DROPPER + """
import logging, sys
from hsw2v.cli import main

class AtEpochEnd(logging.Handler):
    # the end-of-epoch log line is written on the main thread: drop a Ctrl-C after epoch 2
    def __init__(self):
        super().__init__()
        self.epochs = 0
    def emit(self, record):
        if record.getMessage().startswith("EPOCH") and "PROGRESS" not in record.getMessage():
            self.epochs += 1
            if self.epochs == 2:
                Dropper()

log = logging.getLogger("hsw2v.word2vec")
log.setLevel(logging.INFO)
log.propagate = False
log.addHandler(AtEpochEnd())
sys.exit(main(sys.argv[1:]))
"""


def test_cli_train_stops_on_a_ctrl_c_dropped_in_a_finalizer(tmp_path):
    """What made tests/test_cli.py's Ctrl-C test fail now and then, pinned: the interrupt
    lands while a finalizer runs on the main thread between two epochs. It used to train
    all epochs and write the model (exit 0)."""
    with open(tmp_path / "corpus.txt", "w", encoding="utf-8") as fout:
        for verse in demo_corpus(limit=500):
            fout.write(" ".join(verse) + "\n")
    target = tmp_path / "model.hsw2v"
    target.write_bytes(b"an earlier model")
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    args = ["train", "corpus.txt", "-o", "model.hsw2v", "--size", "16", "--epochs", "200",
            "--workers", "1", "--no-progress"]
    result = run_script(CLI, *args, cwd=tmp_path)
    assert_dropped_by_cpython(result.stderr)
    assert result.returncode == 130, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "hsw2v: interrupted: training stopped, nothing written (model.hsw2v left as it was)"
    )
    assert result.stdout == ""
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before


LATCH = textwrap.dedent(
    """
    import signal, threading
    from hsw2v.running.ctrl_c import ctrl_c_latch, delivered, raise_if_dropped
    """
) + DROPPER + textwrap.dedent(
    """
    default = signal.default_int_handler

    def ctrl_c_in_finalizer_then_check():
        Dropper()
        try:
            raise_if_dropped()
        except KeyboardInterrupt:
            return "raised"
        return "lost"

    # held: a dropped Ctrl-C is raised at the next check, once
    with ctrl_c_latch():
        assert ctrl_c_in_finalizer_then_check() == "raised"
        raise_if_dropped()  # already raised: nothing more
    assert signal.getsignal(signal.SIGINT) is default

    # nested: the inner latch leaves the handler to the outer one; a drop inside the inner
    # block is raised when the block ends
    with ctrl_c_latch():
        try:
            with ctrl_c_latch():
                Dropper()
            raise AssertionError("the dropped Ctrl-C was not raised at the block's end")
        except KeyboardInterrupt:
            pass
        assert signal.getsignal(signal.SIGINT) is not default
    assert signal.getsignal(signal.SIGINT) is default

    # a KeyboardInterrupt that reached the library is not raised a second time...
    with ctrl_c_latch():
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt as exc:
            delivered(exc)
        raise_if_dropped()

    # ...but one that other code caught and swallowed is (Ctrl-C in train() stops train())
    with ctrl_c_latch():
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            pass
        try:
            raise_if_dropped()
            raise AssertionError("a swallowed Ctrl-C was not raised again")
        except KeyboardInterrupt:
            pass

    # leaving with another exception while a Ctrl-C is recorded: the Ctrl-C wins, chained
    # (an interrupt that stdlib code turned into "release unlocked lock" on its way)
    try:
        with ctrl_c_latch():
            with ctrl_c_latch():
                Dropper()
                raise RuntimeError("release unlocked lock")
    except KeyboardInterrupt as exc:
        assert isinstance(exc.__cause__, RuntimeError)
    raise_if_dropped()

    # another exception and no Ctrl-C: left as it is
    try:
        with ctrl_c_latch():
            raise ValueError("boom")
    except ValueError:
        pass

    # not held: the default handler, and nothing is recorded
    assert ctrl_c_in_finalizer_then_check() == "lost"

    # a handler of the user's own, or SIGINT ignored, is left alone
    mine = lambda signum, frame: None  # noqa: E731
    for handler in (mine, signal.SIG_IGN):
        signal.signal(signal.SIGINT, handler)
        with ctrl_c_latch():
            assert signal.getsignal(signal.SIGINT) is handler
        assert signal.getsignal(signal.SIGINT) is handler
    signal.signal(signal.SIGINT, default)

    # a handler the user installs inside the block is kept after it
    with ctrl_c_latch():
        signal.signal(signal.SIGINT, mine)
    assert signal.getsignal(signal.SIGINT) is mine
    signal.signal(signal.SIGINT, default)

    # another thread: no handler change (it would raise there), no check
    out = []
    def other():
        with ctrl_c_latch():
            out.append(signal.getsignal(signal.SIGINT) is default)
    thread = threading.Thread(target=other)
    thread.start(); thread.join()
    assert out == [True]
    print("ok")
    """
)


def test_the_latch_records_only_what_was_dropped_and_restores_the_handler():
    result = run_script(LATCH)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok", result.stdout


AT_A_POINT = """
import os, signal, sys, threading
import numpy as np
from hsw2v import Word2Vec

event, filename, function, arg_name = sys.argv[1:5]
rng = np.random.default_rng(0)
words = [f"w{i}" for i in range(50)]
corpus = [[words[j] for j in rng.integers(0, 50, size=10)] for _ in range(20)]
model = Word2Vec(vector_size=8, min_count=1, workers=1, seed=1)
model.build_vocab(corpus)
fired = []

def fire(frame, ev, arg):
    if (ev == event and os.path.basename(frame.f_code.co_filename) == filename
            and frame.f_code.co_name == function
            and (ev != "c_return" or getattr(arg, "__name__", "") == arg_name)):
        sys.setprofile(None)
        fired.append(True)
        # what CPython does when a Ctrl-C arrives just before this point: run the handler
        signal.getsignal(signal.SIGINT)(signal.SIGINT, frame)

try:
    sys.setprofile(fire)
    model.train(corpus, total_examples=20, epochs=3)
    sys.setprofile(None)
    print("finished")
except KeyboardInterrupt:
    sys.setprofile(None)
    print("interrupted")
except Exception as exc:
    sys.setprofile(None)
    print("raised", type(exc).__name__, exc)
print("fired", bool(fired))
model.train(corpus, total_examples=20, epochs=1)
print("trains again")
"""


@pytest.mark.parametrize(
    "point",
    [
        # the flake: the finished threads' weakref callback, run on the main thread
        ("call", "_weakrefset.py", "_remove", ""),
        # after train() marked the model as training, before the block that unmarks it: the
        # mark stayed and every later train() was refused
        ("c_return", "_guard.py", "training", "__exit__"),
        # inside the Event.wait of Thread.start(): threading.Condition raised "release
        # unlocked lock" instead of KeyboardInterrupt
        ("c_return", "threading.py", "_release_save", "release"),
    ],
    ids=["weakref-callback", "training-mark", "condition-wait"],
)
def test_a_ctrl_c_at_a_fragile_point_of_train_stops_it_and_the_model_trains_again(point):
    """The SIGINT handler is run exactly where CPython would run it for a Ctrl-C arriving
    just before a chosen point (a profile hook at the start of a function or just after a C
    call returns): train() raises KeyboardInterrupt, and the model trains again. Found by
    benchmarks/ctrl_c_sweep.py; each of these failed on the code before the fix."""
    result = run_script(AT_A_POINT, *point)
    assert result.stdout.splitlines() == ["interrupted", "fired True", "trains again"], (
        result.stdout + result.stderr
    )


SCORE_AT_EVERY_LOCK = """
import collections, faulthandler, json, os, signal, sys
import numpy as np
from hsw2v import Word2Vec

rng = np.random.default_rng(0)
words = [f"w{i}" for i in range(40)]
corpus = [[words[j] for j in rng.integers(0, 40, size=8)] for _ in range(40)]
model = Word2Vec(corpus, vector_size=8, min_count=1, workers=2, seed=1, epochs=1)

def score():
    return model.score(corpus, total_sentences=len(corpus), chunksize=5)

def fragile(frame, event):
    # a lock's __enter__/__exit__ or any other C call returning inside threading or queue:
    # where an interrupt can leave a lock taken
    return event == "c_return" and os.path.basename(frame.f_code.co_filename) in (
        "threading.py", "queue.py")

seen = [0]
def count(frame, event, arg):
    if fragile(frame, event):
        seen[0] += 1
sys.setprofile(count)
score()
sys.setprofile(None)
total = seen[0]
outcomes = collections.Counter()
for n in range(1, total + 1):
    seen[0], fired = 0, []
    def fire(frame, event, arg, n=n, fired=fired):
        if fragile(frame, event):
            seen[0] += 1
            if seen[0] == n:
                sys.setprofile(None)
                fired.append(True)
                signal.getsignal(signal.SIGINT)(signal.SIGINT, frame)  # as CPython would
    faulthandler.dump_traceback_later(20, exit=True)  # a hang ends the child: the test fails
    try:
        sys.setprofile(fire)
        score()
        sys.setprofile(None)
        outcomes["finished" if fired else "not reached"] += 1
    except KeyboardInterrupt:
        sys.setprofile(None)
        outcomes["interrupted"] += 1
    assert len(score()) == len(corpus)  # and the model scores again
    faulthandler.cancel_dump_traceback_later()
print(json.dumps({"points": total, "outcomes": outcomes}))
"""


def test_a_ctrl_c_at_any_lock_of_score_stops_it_and_never_hangs():
    """score() with two workers, and a Ctrl-C run in place at each point where the main
    thread returns from a C call inside threading or queue (the lock operations): each ends
    in KeyboardInterrupt, none hangs, and the model scores again. The previous score() put
    jobs on a queue.Queue from the caller's thread and hung at 40 of 1,210 such points
    (benchmarks/ctrl_c_sweep.py --call score --workers 2)."""
    result = run_script(SCORE_AT_EVERY_LOCK, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    total, outcomes = report["points"], report["outcomes"]
    assert total >= 20, result.stdout
    assert outcomes.get("interrupted", 0) >= total // 2, result.stdout
    assert "finished" not in outcomes, result.stdout  # a point reached and its Ctrl-C lost
