"""Hostile input, hang class: Ctrl-C returns from ``train()`` while the user's corpus
iterator is stuck, and paths that are not regular files (FIFOs, devices, directories) are
refused before they are opened. Every case runs in a child process with a timeout, so a
hang fails the test instead of blocking the runner."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_child(code: str, *args: str, timeout: float = 120) -> str:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"hung for {timeout} s: {exc.stdout!r} {exc.stderr!r}")
    assert proc.returncode == 0, (
        f"child failed (status {proc.returncode})\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    )
    return proc.stdout


# ---------------------------------------------------------------- 10. a stuck producer
STUCK = """
import os, signal, sys, threading, time, queue
from hsw2v import Word2Vec

WORDS = [f"w{i}" for i in range(50)]
S = [[WORDS[(i * 7 + j) % 50] for j in range(20)] for i in range(300)]
HOW = sys.argv[1]

class Stuck:
    # yields some sentences, then blocks in user code that never returns by itself
    def __init__(self, after):
        self.after = after
    def __iter__(self):
        for i, s in enumerate(S):
            if i == self.after:
                if HOW == "queue":
                    queue.Queue().get()          # a queue whose producer died
                elif HOW == "event":
                    threading.Event().wait()
                elif HOW == "sleep":
                    while True:
                        time.sleep(0.05)          # polling a stream that never answers
                elif HOW == "read":
                    r, w = os.pipe()
                    os.read(r, 1)                 # a network read that never completes
            yield s

for workers in (1, 2):
    for after in (0, 150):
        m = Word2Vec(vector_size=8, min_count=1, workers=workers, epochs=2)
        m.build_vocab(S)
        before = threading.active_count()
        timer = threading.Timer(0.35, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        started = time.monotonic()
        try:
            m.train(Stuck(after), total_examples=len(S), epochs=1)
            raise SystemExit("train() returned without the interrupt")
        except KeyboardInterrupt:
            took = time.monotonic() - started
        assert took < 5.0, f"train() took {took:.1f} s to return after Ctrl-C"
        names = [t.name for t in threading.enumerate()]
        assert not [n for n in names if n.startswith("hsw2v-worker")], names
        # the model is usable: it trains again on a corpus that works
        m.train(S, total_examples=len(S), epochs=1)
        print(HOW, workers, after, f"{took:.2f}", flush=True)
print("ALL DONE")
"""


@pytest.mark.parametrize("how", ["queue", "event", "sleep", "read"])
def test_ctrl_c_returns_while_the_corpus_iterator_is_stuck(how):
    assert "ALL DONE" in run_child(STUCK, how, timeout=120)


# ---------------------------------------------------------------- 11. not regular files
SPECIAL = """
import os, sys, threading
from hsw2v import Word2Vec, KeyedVectors, HierarchicalSoftmax, LineSentence, PathLineSentences
from hsw2v.corpora import Text8Corpus
from hsw2v.persist import load_bundle
from hsw2v.cli import main

path = sys.argv[1]
routes = {
    "Word2Vec.load": lambda: Word2Vec.load(path),
    "Word2Vec.load mmap": lambda: Word2Vec.load(path, mmap="r"),
    "KeyedVectors.load": lambda: KeyedVectors.load(path),
    "HierarchicalSoftmax.load": lambda: HierarchicalSoftmax.load(path),
    "load_bundle": lambda: load_bundle(path),
    "load_word2vec_format": lambda: KeyedVectors.load_word2vec_format(path),
    "load_word2vec_format binary": lambda: KeyedVectors.load_word2vec_format(path, binary=True),
    "LineSentence": lambda: list(LineSentence(path)),
    "Text8Corpus": lambda: list(Text8Corpus(path)),
    "build_vocab corpus_file": lambda: Word2Vec(corpus_file=path, min_count=1),
    "intersect": lambda: Word2Vec([["a", "b"]] * 5, min_count=1, vector_size=4).wv.intersect_word2vec_format(path),
}
for name, route in routes.items():
    print(name, flush=True)
    try:
        route()
        raise SystemExit(f"{name} accepted {path}")
    except (ValueError, OSError) as exc:
        text = str(exc)
        assert "not a regular file" in text or "directory" in text.lower() or "does not exist" in text, (name, text)
for argv in (["info", path], ["similar", path, "a"], ["train", path, "-o", os.devnull + ".x"]):
    print(argv, flush=True)
    status = main(argv)
    assert status in (1, 2), (argv, status)
print("ALL DONE")
"""


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "directory"])
def test_paths_that_are_not_regular_files_are_refused_before_opening(kind, tmp_path):
    if kind == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    elif kind == "dev_zero":
        path = "/dev/zero"
        if not os.path.exists(path):
            pytest.skip("no /dev/zero here")
    else:
        path = str(tmp_path / "folder")
        os.mkdir(path)
    out = run_child(SPECIAL, path, timeout=120)
    assert "ALL DONE" in out
