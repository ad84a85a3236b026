"""Ctrl-C at every point where CPython could run the SIGINT handler during a short train() (or score()).

CPython runs a Python-level signal handler at the main thread's next check for signals: at
the start of a Python function and just after a C function returns. This probe counts those
points in the main thread (``sys.setprofile`` events ``call`` and ``c_return``) during a
3-epoch ``train()``, then, for each point N in turn, runs ``train()`` again and calls the SIGINT
handler in place (the default one, or hsw2v's while it trains) at point N, exactly as
CPython would on a Ctrl-C arriving there. Each point ends as one of:

* ``interrupted``: train() raised KeyboardInterrupt (the wanted outcome);
* ``LOST``: train() ran to its end (the KeyboardInterrupt was dropped, e.g. in a finalizer);
* ``other: ERROR``: train() raised another exception (the interrupt broke a stdlib lock);
* ``HANG``: train() did not return within ``--hang`` seconds.

After each run a one-epoch ``train()`` checks that the model still trains (``then: ...``
says how it failed, ``then: HANG`` that it hung). The runs live in a child process that is
replaced by a fresh one (a new model) after a hang, a failed check or a thread left over.

    PYTHONPATH=. python3 benchmarks/ctrl_c_sweep.py [--mode iterable|corpus_file] [--workers 1]
        [--call train|score]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile


def child(args) -> None:
    import faulthandler
    import logging
    import signal
    import threading

    import numpy as np

    from hsw2v import Word2Vec

    logging.getLogger("hsw2v").setLevel(logging.CRITICAL)
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(50)]
    corpus = [[words[j] for j in rng.integers(0, 50, size=10)] for _ in range(20)]
    path = os.path.join(args.tmp, "corpus.txt")
    with open(path, "w") as f:
        f.write("\n".join(" ".join(s) for s in corpus) + "\n")
    data = {"corpus_file": path} if args.mode == "corpus_file" else {"corpus_iterable": corpus}
    model = Word2Vec(vector_size=8, min_count=1, workers=args.workers, seed=1)
    model.build_vocab(**data)
    dropped: list[str] = []
    sys.unraisablehook = lambda u: dropped.append(repr(u.object).split(" at 0x")[0])
    kinds = ("call", "c_return")
    seen = [0]

    def count(frame, event, arg):
        if event in kinds:
            seen[0] += 1

    def train(epochs):
        if args.call == "score":  # score() over the corpus `epochs` times (chunks of 5)
            for _ in range(epochs):
                model.score(corpus, total_sentences=len(corpus), chunksize=5)
            return
        model.train(**data, total_examples=len(corpus), epochs=epochs)

    sys.setprofile(count)
    train(3)
    sys.setprofile(None)
    total = seen[0]
    print(json.dumps({"points": total}), flush=True)
    for n in range(args.start, total + 1):
        seen[0] = 0
        where = [None]

        def fire(frame, event, arg, n=n, where=where):
            if event not in kinds:
                return
            seen[0] += 1
            if seen[0] == n:
                sys.setprofile(None)
                code = frame.f_code
                name = getattr(arg, "__name__", "") if event == "c_return" else ""
                where[0] = (f"{event} {os.path.basename(code.co_filename)}:{code.co_name}"
                            f":{frame.f_lineno} {name}").strip()
                print(json.dumps({"at": where[0]}), flush=True)  # known even if it hangs
                signal.getsignal(signal.SIGINT)(signal.SIGINT, frame)  # the handler, here

        before = len(dropped)
        print(json.dumps({"trying": n}), flush=True)
        faulthandler.dump_traceback_later(args.hang, exit=True)
        try:
            sys.setprofile(fire)
            train(3)
            sys.setprofile(None)
            outcome = "LOST"
        except KeyboardInterrupt:
            sys.setprofile(None)
            outcome = "interrupted"
        except BaseException as exc:  # noqa: BLE001 - reported
            sys.setprofile(None)
            outcome = f"other: {type(exc).__name__}: {exc}"
        faulthandler.cancel_dump_traceback_later()
        print(json.dumps({"health": n}), flush=True)
        faulthandler.dump_traceback_later(args.hang, exit=True)
        then = ""
        try:
            train(1)
        except BaseException as exc:  # noqa: BLE001 - reported
            then = f"{type(exc).__name__}: {exc}"[:120]
        faulthandler.cancel_dump_traceback_later()
        listed = [t.name for t in threading.enumerate() if t.name.startswith("hsw2v")]
        print(json.dumps({"n": n, "where": where[0], "outcome": outcome, "then": then,
                          "dropped_in": dropped[before:], "threads": listed}), flush=True)
        if then or listed:
            sys.exit(3)  # a broken model or process: the next point starts afresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["iterable", "corpus_file"], default="iterable")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--call", choices=["train", "score"], default="train",
        help="sweep train() (3 epochs), or score() over the corpus 3 times",
    )
    parser.add_argument("--hang", type=float, default=15.0, help="seconds that count as a hang")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--tmp", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    import hsw2v

    print(f"hsw2v from {os.path.dirname(os.path.dirname(hsw2v.__file__))}", flush=True)
    results: dict[int, dict] = {}
    total = None
    start = 1
    with tempfile.TemporaryDirectory() as tmp:
        while total is None or start <= total:
            command = [sys.executable, __file__, "--child", "--mode", args.mode,
                       "--call", args.call,
                       "--workers", str(args.workers), "--hang", str(args.hang),
                       "--start", str(start), "--tmp", tmp]
            proc = subprocess.run(command, capture_output=True, text=True)
            last, stage, at = None, None, None
            for line in proc.stdout.splitlines():
                record = json.loads(line)
                if "points" in record:
                    total = record["points"]
                elif "trying" in record:
                    last, stage = record["trying"], "run"
                elif "at" in record:
                    at = record["at"]
                elif "health" in record:
                    stage = "health"
                else:
                    results[record["n"]] = record
                    last, stage = None, None
            if proc.returncode == 0:
                break
            if last is None and proc.returncode == 3 and results:
                start = max(results) + 1
                continue
            if last is None:  # failed outside any point: report and stop
                print(proc.stderr[-3000:])
                break
            if stage == "run":
                results[last] = {"n": last, "where": at, "outcome": "HANG", "then": ""}
            else:
                previous = results.get(last, {"n": last, "where": None, "outcome": "?"})
                results[last] = {**previous, "then": "HANG"}
            start = last + 1
    tally: collections.Counter = collections.Counter()
    for n in sorted(results):
        record = results[n]
        outcome = record["outcome"].split(":")[0] if record["outcome"] else "?"
        if record.get("where") is None and outcome != "HANG":
            outcome = "not reached (this run had fewer points)"
        then = record.get("then") or ""
        key = outcome + (f", then {then.split(':')[0]}" if then else "")
        if record.get("threads"):
            key += ", threads left"
        tally[key] += 1
        if key != "interrupted":
            print(f"  point {n}: {record['outcome'][:100]}; then {then or 'trains'}; at "
                  f"{record.get('where')}; dropped in {record.get('dropped_in')}"
                  + (f"; threads left: {record['threads']}" if record.get("threads") else ""))
    print(f"{args.call}, {args.mode}, workers {args.workers}: {total} points")
    for key, count in sorted(tally.items()):
        print(f"  {count:5d}  {key}")


if __name__ == "__main__":
    main()
