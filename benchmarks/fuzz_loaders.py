"""Fuzz hsw2v's file loaders: the native bundle format and both word2vec C formats.

Every loader must either return a usable object or raise its documented exception
(ValueError, which UnicodeDecodeError subclasses); any other exception, a crash or a hang
(one input taking longer than ``--timeout`` seconds) is a failure. A model that loads is
also exercised: KeyedVectors answer a most_similar query, Word2Vec models train one epoch
(so that a crafted tree which passed the checks would show up as a crash in the kernel).

Targets, chosen by the first byte of each input:

0. ``load_bundle`` / ``KeyedVectors.load`` on the raw bytes of a (mutated) KeyedVectors file
1. ``Word2Vec.load`` on the raw bytes of a (mutated) Word2Vec file, then one epoch of training
2. a Word2Vec file whose ``meta.json`` text is the fuzzed input (the zip and the arrays stay
   valid, so mutations reach the checks behind the zip layer and the checksums)
3. a KeyedVectors file whose ``meta.json`` text is the fuzzed input
4. ``KeyedVectors.load_word2vec_format`` on text input (with or without a header)
5. ``KeyedVectors.load_word2vec_format(binary=True)``
6. a ``fvocab`` word-count file next to a valid vectors file

The second byte picks loader options (mmap mode, limit, datatype, unicode_errors,
allow_nonfinite). With atheris (``pip install atheris``) the run is coverage guided;
``--engine random`` runs a plain mutational fuzzer needing nothing beyond hsw2v.

Usage::

    python benchmarks/fuzz_loaders.py --seconds 600            # atheris when installed
    python benchmarks/fuzz_loaders.py --seconds 60 --engine random

At the end (or at the first failure) it prints the number of inputs tried and the exceptions
seen per target, and exits with status 1 if any input raised an undocumented exception.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TARGETS = ["kv-bundle", "w2v-bundle", "w2v-meta", "kv-meta", "text", "binary", "fvocab"]
DOCUMENTED = (ValueError,)

_state = {
    "tried": 0,
    "loaded": 0,
    "seen": collections.Counter(),
    "failures": [],
    "slowest": 0.0,
    "started": 0.0,
}


def _modules():
    from hsw2v import Word2Vec
    from hsw2v.keyedvectors import KeyedVectors
    from hsw2v.persist import load_bundle

    return Word2Vec, KeyedVectors, load_bundle


def make_seeds(workdir: str) -> dict[int, bytes]:
    """One valid input per target (without the two leading selector bytes)."""
    Word2Vec, KeyedVectors, _ = _modules()
    rng = np.random.default_rng(0)
    words = ["king", "queen", "man", "woman", "apple", "é"]
    kv = KeyedVectors(4)
    kv.add_vectors(words, rng.standard_normal((len(words), 4)).astype(np.float32))
    kv.expandos["count"] = np.arange(len(words), 0, -1, dtype=np.int64)
    kv_path = os.path.join(workdir, "seed.kv")
    kv.save(kv_path)
    sentences = [words[: 2 + i % 4] for i in range(30)]
    model = Word2Vec(sentences, vector_size=4, min_count=1, workers=1, epochs=1, seed=3)
    w2v_path = os.path.join(workdir, "seed.w2v")
    model.save(w2v_path)
    text_path, bin_path = os.path.join(workdir, "v.txt"), os.path.join(workdir, "v.bin")
    kv.save_word2vec_format(text_path)
    kv.save_word2vec_format(bin_path, binary=True)

    def read(path):
        with open(path, "rb") as fh:
            return fh.read()

    def meta_of(path):
        with zipfile.ZipFile(path) as zf:
            return zf.read("meta.json")

    vocab = "".join(f"{w} {i + 1}\n" for i, w in enumerate(words)).encode()
    return {
        0: read(kv_path),
        1: read(w2v_path),
        2: meta_of(w2v_path),
        3: meta_of(kv_path),
        4: read(text_path),
        5: read(bin_path),
        6: vocab,
    }


def _rezip(template: str, meta_json: bytes, out: str) -> None:
    """Copy the bundle `template` to `out` with its meta.json replaced by `meta_json`."""
    with zipfile.ZipFile(template) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = meta_json if info.filename == "meta.json" else src.read(info.filename)
            dst.writestr(info.filename, data)


class Runner:
    """Runs one input against its target; knows the scratch directory and the seed files."""

    def __init__(self, workdir: str):
        self.workdir = workdir
        self.path = os.path.join(workdir, "input")
        self.vectors_path = os.path.join(workdir, "v.txt")
        self.w2v_template = os.path.join(workdir, "seed.w2v")
        self.kv_template = os.path.join(workdir, "seed.kv")
        self.Word2Vec, self.KeyedVectors, self.load_bundle = _modules()

    def run(self, target: int, options: int, body: bytes):
        Word2Vec, KeyedVectors = self.Word2Vec, self.KeyedVectors
        mmap = (None, "r", "c")[options % 3]
        if target in (2, 3):
            _rezip(self.w2v_template if target == 2 else self.kv_template, body, self.path)
        elif target == 6:
            with open(self.path, "wb") as fh:
                fh.write(body)
        else:
            with open(self.path, "wb") as fh:
                fh.write(body)
        if target in (0, 3):
            if options & 8:
                self.load_bundle(self.path, mmap=mmap)
            kv = KeyedVectors.load(self.path, mmap=mmap)
            self.use_vectors(kv)
        elif target in (1, 2):
            model = Word2Vec.load(self.path, mmap=None if options & 4 else mmap)
            self.use_vectors(model.wv)
            if model.wv.index_to_key and not isinstance(model.wv.vectors, np.memmap):
                corpus = [model.wv.index_to_key[:8]] * 3
                model.workers = 1
                model.train(corpus, total_examples=3, epochs=1)
        elif target in (4, 5):
            kwargs = {
                "binary": target == 5,
                "limit": (None, 1, 3, 0)[(options >> 2) % 4],
                "datatype": (np.float32, np.float64, np.float16)[(options >> 4) % 3],
                "unicode_errors": ("strict", "replace", "ignore")[(options >> 6) % 3],
                "allow_nonfinite": bool(options & 1),
                "no_header": target == 4 and bool(options & 2),
            }
            kv = KeyedVectors.load_word2vec_format(self.path, **kwargs)
            self.use_vectors(kv)
        else:
            kv = KeyedVectors.load_word2vec_format(self.vectors_path, fvocab=self.path)
            self.use_vectors(kv)

    @staticmethod
    def use_vectors(kv):
        if len(kv) >= 2 and kv.vector_size:
            with np.errstate(all="ignore"):
                kv.most_similar(kv.index_to_key[0], topn=2)


def check_one(runner: Runner, data: bytes, timeout: float) -> None:
    """Run one fuzz input; record its outcome; raise on an undocumented exception."""
    if len(data) < 2:
        return
    target, options, body = data[0] % len(TARGETS), data[1], data[2:]
    _state["tried"] += 1
    started = time.perf_counter()
    try:
        runner.run(target, options, body)
        _state["loaded"] += 1
        outcome = "loaded"
    except DOCUMENTED as exc:
        outcome = type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - this is what the fuzzer hunts
        outcome = f"UNDOCUMENTED {type(exc).__name__}"
        _state["seen"][(TARGETS[target], outcome)] += 1
        _state["failures"].append((TARGETS[target], data, traceback.format_exc()))
        raise
    finally:
        elapsed = time.perf_counter() - started
        _state["slowest"] = max(_state["slowest"], elapsed)
    _state["seen"][(TARGETS[target], outcome)] += 1
    if elapsed > timeout:
        _state["failures"].append((TARGETS[target], data, f"took {elapsed:.1f}s"))
        raise TimeoutError(f"one input took {elapsed:.1f}s")


def summary() -> str:
    seconds = time.perf_counter() - _state["started"]
    lines = [
        f"inputs tried: {_state['tried']} in {seconds:.0f}s "
        f"({_state['tried'] / max(seconds, 1e-9):.0f}/s); loaded without error: "
        f"{_state['loaded']}; slowest input: {_state['slowest'] * 1000:.1f} ms",
        "outcomes by target:",
    ]
    for (target, outcome), n in sorted(_state["seen"].items()):
        lines.append(f"  {target:11s} {outcome:28s} {n}")
    lines.append(f"undocumented exceptions or hangs: {len(_state['failures'])}")
    for target, data, trace in _state["failures"][:3]:
        lines.append(f"--- {target}: input {data[:200]!r}\n{trace}")
    return "\n".join(lines)


def finish() -> None:
    print(summary(), flush=True)
    os._exit(1 if _state["failures"] else 0)


def run_random(runner, seeds, seconds, timeout, seed):
    """A plain mutational fuzzer: byte flips, inserts, deletes, splices and number swaps."""
    rng = random.Random(seed)
    interesting = [b"0", b"-1", b"nan", b"inf", b"1e39", b"99999999999", b"\x00", b"\xff", b" "]
    corpus = [bytes([t, rng.randrange(256)]) + seeds[t] for t in seeds]
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        data = bytearray(rng.choice(corpus))
        data[1] = rng.randrange(256)
        for _ in range(rng.choice((1, 1, 2, 4, 8))):
            op = rng.randrange(6)
            pos = rng.randrange(2, max(3, len(data)))
            if op == 0 and len(data) > 2:
                data[min(pos, len(data) - 1)] ^= 1 << rng.randrange(8)
            elif op == 1:
                data[pos:pos] = bytes([rng.randrange(256)])
            elif op == 2:
                del data[pos : pos + rng.randrange(1, 64)]
            elif op == 3:
                data[pos:pos] = rng.choice(interesting)
            elif op == 4:
                del data[pos:]
            else:
                other = rng.choice(corpus)
                cut = rng.randrange(2, max(3, len(other)))
                data[pos:] = other[cut:]
        check_one(runner, bytes(data), timeout)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="how long to fuzz")
    parser.add_argument("--engine", choices=("auto", "atheris", "random"), default="auto")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds one input may take")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random engine")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # duplicate-word and similar warnings are expected
    import logging

    logging.disable(logging.CRITICAL)
    engine = args.engine
    if engine == "auto":
        try:
            import atheris  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "random"
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") else None
    workdir = tempfile.mkdtemp(prefix="hsw2v-fuzz-", dir=scratch)
    try:
        if engine == "atheris":
            import atheris

            with atheris.instrument_imports(include=["hsw2v", "zipfile", "json"]):
                import hsw2v.keyedvectors  # noqa: F401
                import hsw2v.persist  # noqa: F401
                import hsw2v.word2vec  # noqa: F401
        seeds = make_seeds(workdir)
        runner = Runner(workdir)
        print(f"engine: {engine}; fuzzing for {args.seconds:.0f}s", flush=True)
        _state["started"] = time.perf_counter()
        signal.signal(signal.SIGINT, lambda *_: finish())
        if engine == "random":
            try:
                run_random(runner, seeds, args.seconds, args.timeout, args.seed)
            except Exception:  # noqa: BLE001 - recorded in _state, reported by finish()
                pass
            finish()
        corpus_dir = os.path.join(workdir, "corpus")
        os.mkdir(corpus_dir)
        for target, body in seeds.items():
            for options in (0, 1, 4, 8, 0x12, 0x46):
                with open(os.path.join(corpus_dir, f"seed-{target}-{options}"), "wb") as fh:
                    fh.write(bytes([target, options]) + body)
        deadline = _state["started"] + args.seconds

        def one_input(data: bytes) -> None:
            if time.perf_counter() > deadline:
                finish()
            try:
                check_one(runner, data, args.timeout)
            except Exception:  # noqa: BLE001 - recorded; stop at the first failure
                finish()

        atheris.Setup(
            [sys.argv[0], corpus_dir, f"-timeout={int(args.timeout) + 5}", "-rss_limit_mb=4096"],
            one_input,
        )
        atheris.Fuzz()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
