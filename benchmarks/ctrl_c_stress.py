"""How often is a Ctrl-C lost during training? Many SIGINTs, each at a random moment.

A lost Ctrl-C is one that reached the process while training ran, yet training went on to
its end: CPython ran the SIGINT handler while the main thread was inside a finalizer (a
``__del__``, a weakref callback, a garbage-collected generator), where an exception can only
be printed ("Exception ignored in ...") and dropped.

Two modes, each counting the trials that stopped, lost the signal, or finished before it:

``inproc``: one process trains the same small model again and again with many short epochs
(so that the main thread often runs the epoch's end, where the finished threads are
freed); a helper thread sends SIGINT to the process after a random delay. Every
KeyboardInterrupt that CPython drops is recorded by ``sys.unraisablehook`` with the object
it was dropped in.

``cli``: what ``tests/test_cli.py``'s Ctrl-C test does, many times: ``python -m hsw2v train``
on the demo corpus's first 4,000 verses for 1,000 epochs, SIGINT ``--delay`` seconds after
its first stderr line (or at a random moment up to ``--delay`` with ``--random-delay``).

``--load N`` runs N busy-looping processes beside it (the noisy-CI case). The hsw2v under
test is the one ``PYTHONPATH`` names (its folder is printed), in both modes.

    PYTHONPATH=. python3 benchmarks/ctrl_c_stress.py inproc --trials 300 [--load 2]
    PYTHONPATH=. python3 benchmarks/ctrl_c_stress.py cli --trials 100 [--load 2]
"""

from __future__ import annotations

import argparse
import collections
import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BUSY = "while True: pass"


def start_load(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(n)]


def stop_load(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.kill()
        proc.wait()


def run_inproc(args) -> collections.Counter:
    import numpy as np

    from hsw2v import Word2Vec

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(50)]
    corpus = [[words[j] for j in rng.integers(0, 50, size=10)] for _ in range(args.sentences)]
    model = Word2Vec(vector_size=16, min_count=1, workers=args.workers, seed=1)
    model.build_vocab(corpus)
    logging.getLogger("hsw2v").setLevel(logging.ERROR)  # not a warning per trial
    started = time.perf_counter()
    model.train(corpus, total_examples=len(corpus), epochs=200)
    print(f"one epoch takes {(time.perf_counter() - started) / 200 * 1e3:.2f} ms")
    dropped: list[str] = []

    def hook(unraisable) -> None:
        dropped.append(f"{unraisable.exc_type.__name__} in {unraisable.object!r}")

    sys.unraisablehook = hook
    draw = random.Random(args.seed)
    tally: collections.Counter = collections.Counter()
    where: collections.Counter = collections.Counter()
    for _ in range(args.trials):
        delay = draw.uniform(0.0, args.delay)
        sent: list[float] = []

        def fire(delay=delay, sent=sent) -> None:
            time.sleep(delay)
            sent.append(time.perf_counter())
            os.kill(os.getpid(), signal.SIGINT)

        before = len(dropped)
        returned = None
        stage = "train"
        helper = threading.Thread(target=fire, daemon=True)
        try:
            helper.start()
            model.train(corpus, total_examples=len(corpus), epochs=args.epochs)
            returned = time.perf_counter()
            stage = "after"
            while helper.is_alive():  # the signal is surely sent once the helper ends
                time.sleep(0.01)
            time.sleep(0.2)  # a signal sent late lands here
            stage = "done"
        except KeyboardInterrupt:
            pass
        while helper.is_alive():
            time.sleep(0.01)
        if stage == "train":
            outcome = "stopped"
        elif stage == "after":
            outcome = "sent after train() returned"
        elif sent and returned is not None and sent[0] < returned:
            outcome = "LOST (train() ran to its end)"
        else:
            outcome = "LOST after train() returned"
        tally[outcome] += 1
        for line in dropped[before:]:
            where[line.split(" at 0x")[0]] += 1
    for line, count in where.most_common():
        print(f"  dropped {count} x: {line}")
    return tally


def run_cli(args) -> collections.Counter:
    from hsw2v.datasets import demo_corpus

    tally: collections.Counter = collections.Counter()
    draw = random.Random(args.seed)
    env = dict(os.environ)  # the child imports hsw2v from the same PYTHONPATH as this run
    with tempfile.TemporaryDirectory() as tmp:
        with open(Path(tmp) / "corpus.txt", "w", encoding="utf-8") as fout:
            for verse in demo_corpus(limit=4000):
                fout.write(" ".join(verse) + "\n")
        command = [sys.executable, "-m", "hsw2v", "train", "corpus.txt", "-o", "model.hsw2v",
                   "--epochs", str(args.epochs), "--workers", str(args.workers), "--no-progress"]
        for trial in range(args.trials):
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=env, cwd=tmp)
            try:
                first = proc.stderr.readline()
                time.sleep(draw.uniform(0, args.delay) if args.random_delay else args.delay)
                proc.send_signal(signal.SIGINT)
                _out, err = proc.communicate(timeout=300)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            if proc.returncode == 130:
                outcome = "stopped (exit 130)"
            else:
                outcome = f"LOST (exit {proc.returncode})"
                print(f"trial {trial}: exit {proc.returncode}; first line {first.strip()!r}")
                print("  " + "\n  ".join(err.strip().splitlines()[-12:]))
            if "Exception ignored" in err:
                outcome += ", 'Exception ignored' printed"
            tally[outcome] += 1
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["inproc", "cli"])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--load", type=int, default=0, help="busy processes beside the runs")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=None,
                        help="inproc: 5000 (a few seconds), cli: 1000")
    parser.add_argument("--sentences", type=int, default=20, help="inproc: the corpus size")
    parser.add_argument("--delay", type=float, default=None,
                        help="inproc: the largest random delay (0.3 s); cli: the delay (0.5 s)")
    parser.add_argument("--random-delay", action="store_true",
                        help="cli: a random delay up to --delay")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.epochs is None:
        args.epochs = 5000 if args.mode == "inproc" else 1000
    if args.delay is None:
        args.delay = 0.3 if args.mode == "inproc" else 0.5
    import hsw2v

    print(f"hsw2v from {Path(hsw2v.__file__).parent.parent}")
    load = start_load(args.load)
    started = time.perf_counter()
    try:
        tally = run_inproc(args) if args.mode == "inproc" else run_cli(args)
    finally:
        stop_load(load)
    print(f"{args.mode}: {args.trials} trials, load {args.load}, workers {args.workers}, "
          f"{time.perf_counter() - started:.0f} s")
    for outcome, count in sorted(tally.items()):
        print(f"  {count:5d}  {outcome}")


if __name__ == "__main__":
    main()
