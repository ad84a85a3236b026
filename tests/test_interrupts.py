"""Ctrl-C and worker errors in every mode that runs threads: iterable and ``corpus_file``
training, scoring, the layer's fit and the vocabulary scan of a ``corpus_file``.

Every interrupt is fired at a chosen point, never after a sleep: from a callback the mode
calls (a progress hook, the corpus iterator, a thread's start), either raised right there,
as a real SIGINT sent from another thread while the caller waits, or with
``_thread.interrupt_main()``; or injected at the Nth call of the pool's wait or start, or of
``Thread.join`` left as CPython 3.11 leaves it after an interrupt (the thread marked stopped
while it still runs). After the raise, no hsw2v thread may be listed and no weight may
change (snapshot at once, compare a moment later); timings count from the interrupt.

Everything is real: real threads, kernels, files and signals.
"""

import _thread
import os
import signal
import threading
import time

import numpy as np
import pytest
from conftest import word2vec_trainer

from hsw2v import Word2Vec
from hsw2v._kernels._corpus_file import scan_range_vocab
from hsw2v.layer import HierarchicalSoftmax
from hsw2v.running.threads import Workers

SETTLE = 0.1  # how long the weights must stay unchanged after the raise (a thread still
# training after it would change them within a job, milliseconds)
PROMPT = 5.0  # the raise must come this soon after the interrupt (one job is milliseconds)


def hsw2v_threads():
    return [t.name for t in threading.enumerate() if t.name.startswith("hsw2v")]


def sentences(n=400, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(60)]
    return [[words[j] for j in rng.integers(0, 60, size=12)] for _ in range(n)]


@pytest.fixture(scope="module")
def corpus_path(tmp_path_factory):
    """A file of 120,000 lines (1.4M words): far more than any test lets train."""
    path = tmp_path_factory.mktemp("interrupts") / "corpus.txt"
    lines = "\n".join(" ".join(s) for s in sentences()) + "\n"
    with open(path, "w") as f:
        f.write(lines * 300)
    return str(path)


class Interrupt:
    """Fires one interrupt when called for the ``at``-th time, in one of three ways:
    ``"raise"`` (KeyboardInterrupt raised by the call itself), ``"sigint"`` (a real SIGINT
    sent from another thread a moment later, while the caller waits on its threads) or
    ``"interrupt_main"`` (``_thread.interrupt_main()`` from another thread a moment later).
    ``fired`` holds the time it was fired."""

    def __init__(self, at, how, delay=0.01):
        self.at, self.how, self.delay, self.calls, self.fired = at, how, delay, 0, None

    def __call__(self, *args):
        self.calls += 1
        if self.calls != self.at:
            return
        if self.how == "raise":
            self.fired = time.perf_counter()
            raise KeyboardInterrupt

        def fire():
            time.sleep(self.delay)  # lets the caller return to its wait; timed from below
            self.fired = time.perf_counter()
            if self.how == "sigint":
                os.kill(os.getpid(), signal.SIGINT)
            else:
                _thread.interrupt_main()

        threading.Thread(target=fire, name="test-interrupter", daemon=True).start()


def assert_stops_everything(run, arrays, interrupt=None):
    """``run()`` raises KeyboardInterrupt; then no hsw2v thread is listed and ``arrays()``
    stay unchanged."""
    try:
        run()
    except KeyboardInterrupt:
        raised = time.perf_counter()
    else:
        try:  # a late interrupt must not reach the test runner
            time.sleep(1.0)
        except KeyboardInterrupt:
            pass
        pytest.fail("the run ended before the interrupt landed")
    listed = hsw2v_threads()
    before = [a.copy() for a in arrays()]
    time.sleep(SETTLE)
    changed = sum(int((bits(a) != bits(b)).sum()) for a, b in zip(before, arrays(), strict=True))
    assert listed == [], f"threads still listed after the raise: {listed}"
    assert changed == 0, f"{changed} weights changed after the raise"
    assert hsw2v_threads() == []
    if interrupt is not None:
        assert interrupt.fired is not None, "the interrupt was never fired"
        assert raised - interrupt.fired < PROMPT


def bits(array):
    """The array's bits, so that an unchanged NaN compares equal."""
    return np.ascontiguousarray(array).view(np.uint8)


def w2v_arrays(model):
    return lambda: [model.wv.vectors, model.syn1] + ([model.syn1neg] if model.negative else [])


def trained_model(corpus=None, corpus_file=None, **kwargs):
    model = Word2Vec(vector_size=32, min_count=1, **kwargs)
    model.build_vocab(corpus, corpus_file=corpus_file)
    return model


class PatchedCalls:
    """Wraps a method so that its ``at``-th call (or each call numbered in a tuple ``at``)
    raises KeyboardInterrupt, ``before`` or after the real call."""

    def __init__(self, monkeypatch, owner, name, at, before):
        self.real, self.before = getattr(owner, name), before
        self.at = at if isinstance(at, tuple) else (at,)
        self.calls, self.fired = 0, None
        self.how = "raise"
        real = self.real

        def patched(obj, *args, **kwargs):
            self.calls += 1
            if self.calls in self.at and self.before:
                self.fired = self.fired or time.perf_counter()
                raise KeyboardInterrupt
            result = real(obj, *args, **kwargs)
            if self.calls in self.at:
                self.fired = self.fired or time.perf_counter()
                raise KeyboardInterrupt
            return result

        monkeypatch.setattr(owner, name, patched)


def fool_every_join(monkeypatch):
    """Patch ``Thread.join`` so that every call on a running hsw2v thread does what an
    interrupt inside ``join`` can do on CPython 3.11: the thread is marked stopped although
    it still runs (``is_alive()`` False, later joins return at once), and KeyboardInterrupt
    is raised."""
    real = threading.Thread.join

    def join(thread, timeout=None):
        if thread.name.startswith("hsw2v") and thread.is_alive():
            lock = thread._tstate_lock
            if lock is not None and lock.locked():
                lock.release()
                thread._stop()
            raise KeyboardInterrupt
        return real(thread, timeout)

    monkeypatch.setattr(threading.Thread, "join", join)


# ---------------------------------------------------------------- iterable training
@pytest.mark.parametrize("at", [1, 3])
@pytest.mark.parametrize("how", ["raise", "sigint", "interrupt_main"])
def test_ctrl_c_from_a_progress_hook_stops_iterable_training(how, at):
    corpus = sentences() * 50
    model = trained_model(corpus, workers=2, cache_words=0)
    interrupt = Interrupt(at, how)
    run = lambda: model.train(  # noqa: E731
        corpus, total_examples=len(corpus), epochs=20, progress=interrupt
    )
    assert_stops_everything(run, w2v_arrays(model), interrupt)
    assert np.isfinite(model.wv.vectors).all()
    model.train(corpus[:400], total_examples=400, epochs=1)


@pytest.mark.parametrize("at", [1, 5, 40])
def test_ctrl_c_from_the_corpus_iterator_stops_iterable_training(at):
    """The producer thread reads the corpus: a real SIGINT fired from inside the iterator
    lands in the main thread wherever it waits."""
    corpus = sentences() * 50
    model = trained_model(corpus, workers=2, cache_words=0)
    interrupt = Interrupt(at, "sigint")

    class Corpus:
        def __iter__(self):
            for index, sentence in enumerate(corpus):
                if index % 1000 == 0:
                    interrupt()
                yield sentence

    run = lambda: model.train(Corpus(), total_examples=len(corpus), epochs=20)  # noqa: E731
    assert_stops_everything(run, w2v_arrays(model), interrupt)


@pytest.mark.parametrize("before", [True, False])
@pytest.mark.parametrize("at", [1, 2, 3, 5])
def test_ctrl_c_while_an_epoch_starts_its_threads(monkeypatch, at, before):
    """Start calls 1-3 are epoch 1's producer and two workers, 5 epoch 2's first worker; the
    interrupt lands before the thread is started or once it runs."""
    corpus = sentences(300)
    model = trained_model(corpus, workers=2, hs=1, negative=3)
    patch = PatchedCalls(monkeypatch, Workers, "start", at, before)
    run = lambda: model.train(corpus, total_examples=len(corpus), epochs=3)  # noqa: E731
    assert_stops_everything(run, w2v_arrays(model), patch)
    monkeypatch.undo()
    model.train(corpus, total_examples=len(corpus), epochs=1)


@pytest.mark.parametrize("before", [True, False])
@pytest.mark.parametrize("at", [1, 2, 4, (1, 2)])
def test_ctrl_c_while_waiting_for_an_epochs_threads(monkeypatch, at, before):
    corpus = sentences() * 20
    model = trained_model(corpus, workers=2, cache_words=0)
    patch = PatchedCalls(monkeypatch, Workers, "wait", at, before)
    run = lambda: model.train(corpus, total_examples=len(corpus), epochs=5)  # noqa: E731
    assert_stops_everything(run, w2v_arrays(model), patch)


# ---------------------------------------------------------------- corpus_file training
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("at", [1, 3])
@pytest.mark.parametrize("how", ["raise", "sigint", "interrupt_main"])
def test_ctrl_c_from_a_progress_hook_stops_corpus_file_training(corpus_path, how, at, workers):
    """Issue 17 item 3: a SIGINT that lands while train() waits on its ranges' threads used
    to leave a thread marked stopped but still training (Thread.join fooled by the
    interrupt); it wrote the model after train() had raised."""
    model = trained_model(corpus_file=corpus_path, workers=workers, batch_words=100_000)
    interrupt = Interrupt(at, how)
    run = lambda: model.train(  # noqa: E731
        corpus_file=corpus_path,
        total_words=model.corpus_total_words,
        epochs=20,
        progress=interrupt,
    )
    assert_stops_everything(run, w2v_arrays(model), interrupt)
    assert np.isfinite(model.wv.vectors).all()
    model.train(corpus_file=corpus_path, total_words=model.corpus_total_words, epochs=1)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("at", [1, 3])
def test_a_join_fooled_by_ctrl_c_cannot_hide_a_running_corpus_file_thread(
    monkeypatch, corpus_path, at, workers
):
    """Every Thread.join of a running thread is fooled as an interrupt can fool it; the
    interrupt comes from there or from the progress hook, whichever comes first."""
    model = trained_model(corpus_file=corpus_path, workers=workers, batch_words=100_000)
    fool_every_join(monkeypatch)
    run = lambda: model.train(  # noqa: E731
        corpus_file=corpus_path,
        total_words=model.corpus_total_words,
        epochs=20,
        progress=Interrupt(at, "raise"),
    )
    assert_stops_everything(run, w2v_arrays(model))


@pytest.mark.parametrize("before", [True, False])
@pytest.mark.parametrize(
    "method, at",
    [("wait", at) for at in (1, 2, 4, 9, (2, 3), (3, 4, 5))]  # waiting for the threads
    + [("start", at) for at in (1, 2, 3)],  # while they start
)
def test_ctrl_c_around_corpus_file_threads(monkeypatch, corpus_path, method, at, before):
    model = trained_model(corpus_file=corpus_path, workers=2, batch_words=100_000)
    patch = PatchedCalls(monkeypatch, Workers, method, at, before)
    run = lambda: model.train(  # noqa: E731
        corpus_file=corpus_path, total_words=model.corpus_total_words, epochs=20
    )
    assert_stops_everything(run, w2v_arrays(model), patch)


# ---------------------------------------------------------------- vocabulary scan
@pytest.mark.parametrize("how,before", [("raise", True), ("raise", False), ("sigint", False)])
def test_ctrl_c_during_the_vocabulary_scan_of_a_corpus_file(
    monkeypatch, tmp_path, corpus_path, how, before
):
    """The scan threads stop between lines (they used to run to the end of their range)."""
    if how == "sigint":  # the signal comes from another thread: give it a longer scan
        with open(corpus_path, "rb") as f:
            text = f.read()
        corpus_path = str(tmp_path / "long.txt")
        with open(corpus_path, "wb") as f:
            for _ in range(8):  # 140 MB: a scan of some 200 ms
                f.write(text)
    model = Word2Vec(vector_size=16, min_count=1, workers=2)
    interrupt = Interrupt(2, how, delay=0.0)
    if how == "raise":
        interrupt = PatchedCalls(monkeypatch, Workers, "start", 2, before)
    else:
        real_start = Workers.start

        def start(pool, *args, **kwargs):
            real_start(pool, *args, **kwargs)
            interrupt()

        monkeypatch.setattr(Workers, "start", start)
    run = lambda: model.build_vocab(corpus_file=corpus_path)  # noqa: E731
    assert_stops_everything(run, lambda: [], interrupt)
    monkeypatch.undo()
    model.build_vocab(corpus_file=corpus_path)
    assert len(model.wv) == 60


def test_a_set_stop_flag_ends_the_count_of_a_range(corpus_path):
    size = os.path.getsize(corpus_path)
    counts, raw, sentences_ = scan_range_vocab(corpus_path, 0, size, 10000, np.zeros(1, np.int64))
    assert raw == 120_000 * 12 and sentences_ == 120_000 and len(counts) == 60
    counts, raw, sentences_ = scan_range_vocab(corpus_path, 0, size, 10000, np.ones(1, np.int64))
    assert (counts, raw, sentences_) == ({}, 0, 0)


# ---------------------------------------------------------------- scoring
@pytest.mark.parametrize("at", [1, 3, 20])
@pytest.mark.parametrize("how", ["raise", "sigint", "interrupt_main"])
def test_ctrl_c_from_the_sentences_stops_scoring(how, at):
    corpus = sentences(300)
    model = trained_model(corpus, workers=2)
    model.train(corpus, total_examples=len(corpus), epochs=1)
    interrupt = Interrupt(at, how)
    scored = []

    def many():
        for index in range(10**7):
            if index % 500 == 0:
                interrupt()
            yield corpus[index % len(corpus)]

    def run():
        scored.append(model.score(many(), total_sentences=10**7, chunksize=50))

    assert_stops_everything(run, w2v_arrays(model), interrupt)
    assert scored == []


@pytest.mark.parametrize("before", [True, False])
@pytest.mark.parametrize("method,at", [("start", 1), ("start", 2), ("wait", 1)])
def test_ctrl_c_while_scoring_threads_start_or_end(monkeypatch, method, at, before):
    corpus = sentences(300)
    model = trained_model(corpus, workers=2)
    model.train(corpus, total_examples=len(corpus), epochs=1)
    patch = PatchedCalls(monkeypatch, Workers, method, at, before)
    run = lambda: model.score(corpus * 20, total_sentences=6000)  # noqa: E731
    assert_stops_everything(run, w2v_arrays(model), patch)


# ---------------------------------------------------------------- the layer's fit
def layer_problem(n=20_000, m=30, classes=50, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(n, m)) / np.sqrt(m)).astype(np.float32)
    y = rng.integers(0, classes, size=n)
    layer = HierarchicalSoftmax.from_counts(np.bincount(y, minlength=classes) + 1, dim=16)
    return layer, X, y


@pytest.mark.parametrize(
    "method,at,before",
    [
        ("start", 1, True),
        ("start", 2, False),
        ("start", 7, True),
        ("wait", 1, True),
        ("wait", 2, False),
        ("wait", 4, True),
    ],
)
def test_ctrl_c_stops_the_layers_fit(monkeypatch, method, at, before):
    layer, X, y = layer_problem()
    layer.fit(X, y, epochs=1, workers=2)  # the input weights exist before the interrupt
    patch = PatchedCalls(monkeypatch, Workers, method, at, before)
    run = lambda: layer.fit(X, y, epochs=100, workers=2, job_size=200, lr=0.05)  # noqa: E731
    assert_stops_everything(run, lambda: [layer.input_weights, layer.weights], patch)
    monkeypatch.undo()
    layer.fit(X, y, epochs=1, workers=2)


@pytest.mark.parametrize("how", ["sigint", "interrupt_main"])
def test_a_real_ctrl_c_stops_the_layers_fit(monkeypatch, how):
    """Fired from another thread once the second epoch's workers run (the hook is the pool's
    start), landing while fit() waits for them."""
    layer, X, y = layer_problem()
    layer.fit(X, y, epochs=1, workers=2)
    interrupt = Interrupt(6, how)
    real_start = Workers.start

    def start(pool, *args, **kwargs):
        real_start(pool, *args, **kwargs)
        interrupt()

    monkeypatch.setattr(Workers, "start", start)
    run = lambda: layer.fit(X, y, epochs=100, workers=2, job_size=200, lr=0.05)  # noqa: E731
    assert_stops_everything(run, lambda: [layer.input_weights, layer.weights], interrupt)


# ---------------------------------------------------------------- errors inside workers
def test_an_error_in_a_kernel_job_reaches_the_caller_with_no_thread_left():
    """A malformed job makes the kernel raise in one worker thread: the other worker and the
    producer stop, and the error is raised in the caller's thread."""
    from hsw2v._kernels._inner import Trainer
    from hsw2v.running.epochs import Job, Schedule, iter_jobs, run_epoch

    corpus = sentences(300)
    model = trained_model(corpus, workers=2)

    jobs = list(iter_jobs(corpus * 50, model.wv.key_to_index, 500))
    bad = Job(ids=jobs[0].ids, ends=jobs[0].ends + 1, raw_words=1, n_sentences=1)
    jobs.insert(10, bad)
    trainer = word2vec_trainer(
        Trainer,
        model.wv.vectors,
        model.syn1,
        model.tree.codes,
        model.tree.points,
        model.tree.lengths,
        model.wv.expandos["sample_int"],
        model.window,
        bool(model.sg),
    )
    schedule = Schedule(0.025, 0.0001, 1, sum(j.raw_words for j in jobs), by_words=True)
    with pytest.raises(ValueError, match="the last sentence end must equal"):
        run_epoch(trainer, jobs, epoch=0, workers=2, schedule=schedule, seed=1)
    assert hsw2v_threads() == []


def test_an_error_in_a_corpus_file_range_reaches_the_caller_with_no_thread_left(tmp_path):
    """The file gains a line of invalid UTF-8 after build_vocab: the range thread that reads
    it raises, the other stops, and train() raises the reader's error."""
    path = tmp_path / "c.txt"
    path.write_text("\n".join(" ".join(s) for s in sentences()) * 1 + "\n")
    model = trained_model(corpus_file=str(path), workers=2)
    with open(path, "ab") as f:
        f.write(b"w1 \xff\xfe w2\n")
    with pytest.raises(ValueError, match="UTF-8"):
        model.train(corpus_file=str(path), total_words=model.corpus_total_words, epochs=2)
    assert hsw2v_threads() == []


def test_a_worker_error_stops_the_others_and_is_raised_after_they_end():
    stop = threading.Event()
    ended = []

    def loop(k):
        while not stop.wait(0.001):
            pass
        time.sleep(0.05)  # ends well after the failing worker
        ended.append(k)

    def fail():
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        with Workers(stop.set) as pool:
            pool.start(loop, 0, name="hsw2v-test-0")
            pool.start(loop, 1, name="hsw2v-test-1")
            pool.start(fail, name="hsw2v-test-2")
    assert sorted(ended) == [0, 1] and hsw2v_threads() == []
