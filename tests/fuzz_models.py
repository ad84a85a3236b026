"""Crash-hunting fuzzer: mutated model files, extreme parameters and odd corpora, each loaded
(or built) and then trained and queried in a subprocess, where a crash cannot take the
caller down.

A *case* is a small JSON object; the mutant it stands for is derived from it
deterministically, so a failing case can be replayed (``--replay CASE_JSON``):

* ``{"file": SEED, "mutation": M, "rng": R}``: a valid file of kind ``SEED`` (Word2Vec with
  hierarchical softmax, negative sampling or both; KeyedVectors; HierarchicalSoftmax; word2vec
  text or binary), changed by mutation ``M`` drawn with ``random.Random(R)``. Byte mutations
  flip, insert, delete, truncate and splice bytes; semantic ones rewrite one array (a value
  set to -1, V - 1, 2**31 - 1, NaN, inf, ...; a row or column added or dropped; another dtype;
  the array removed) or one parameter (0, -1, 2**31, 2**64, 1e300, NaN, "x", None, ...) and
  save the bundle again with valid checksums, so the change reaches the checks behind them.
* ``{"params": {...}, "corpus": [[...], ...]}``: ``Word2Vec(corpus, **params)``.

The worker (``python3 tests/fuzz_models.py --worker MANIFEST``) runs many cases in one process
and prints ``begin I`` before and ``end I OUTCOME`` after each, so when it dies by a signal
the case that killed it is the last one begun. Outcomes: ``ok`` (loaded, queried, trained,
saved and reloaded), ``refused ValueError`` and the like (a documented refusal), or
``UNDOCUMENTED type: message`` (a failure, like a death by signal or a hang).

Non-finite or huge weights, and learning rates above ``KERNEL_SAFE_ALPHA``, can diverge to NaN during training; the
kernels are made NaN-safe separately. Until then (``NAN_SAFE_KERNELS = False``) such models
are loaded and queried with NumPy but not handed to the kernels; the test
``test_nonfinite_weights_do_not_crash_the_kernels`` in ``tests/test_fuzz_models.py`` is an
expected failure that covers exactly them. Flip the flag when the NaN-safe kernels land.

Long run (the command and its figures are recorded in ``docs/robustness.md``)::

    nice -n 19 python3 tests/fuzz_models.py --seconds 1200 --batch 300
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import warnings
import zipfile

import child_batch
import numpy as np
from child_batch import serve

NAN_SAFE_KERNELS = True  # the training kernels survive NaN weights (issue 17, item 1)
SEED_KINDS = ("w2v-hs", "w2v-ns", "w2v-both", "kv", "layer", "text", "binary")
MUTATIONS = ("bytes", "value", "shape", "dtype", "drop", "param", "keys", "nonfinite")
WORDS = [f"w{i}" for i in range(24)] + ["é", "日本"]
INTERESTING_INTS = [0, 1, -1, 2, 7, 23, 24, 25, 26, 2**31 - 1, -(2**31), 2**32, 2**63 - 1]
INTERESTING_FLOATS = [0.0, -0.0, 1e-45, 1e4, 1e30, 3.5e38, float("nan"), float("inf"), -1.0]
INTERESTING_JSON = [
    0, 1, -1, 2, 2**31, 2**31 - 1, 2**40, 2**63, 2**64, -(2**63), 1e300, 1e-300, 0.5,
    float("nan"), float("inf"), "x", "", None, True, False, [], {}, [1, 2],
]  # fmt: skip
DOCUMENTED = (ValueError,)  # UnicodeDecodeError is a ValueError
DOCUMENTED_BUILD = (ValueError, TypeError)  # bad parameters or tokens given to the constructor


# ------------------------------------------------------------------ seeds and mutants
def make_seeds(workdir: str) -> dict[str, str]:
    """One valid file per seed kind, in `workdir`; returns their paths."""
    from hsw2v import Word2Vec
    from hsw2v.keyedvectors import KeyedVectors
    from hsw2v.layer import HierarchicalSoftmax

    rng = np.random.default_rng(0)
    corpus = [[WORDS[i] for i in rng.integers(0, len(WORDS), 8)] for _ in range(60)]
    paths = {kind: os.path.join(workdir, f"seed-{kind}") for kind in SEED_KINDS}
    common = dict(vector_size=8, min_count=1, workers=1, epochs=1, seed=3)
    Word2Vec(corpus, sg=1, **common).save(paths["w2v-hs"])
    Word2Vec(corpus, hs=0, negative=3, **common).save(paths["w2v-ns"])
    Word2Vec(corpus, hs=1, negative=2, **common).save(paths["w2v-both"])
    kv = KeyedVectors(4)
    kv.add_vectors(WORDS[:6], rng.standard_normal((6, 4)).astype(np.float32))
    kv.expandos["count"] = np.arange(6, 0, -1, dtype=np.int64)
    kv.save(paths["kv"])
    kv.save_word2vec_format(paths["text"])
    kv.save_word2vec_format(paths["binary"], binary=True)
    layer = HierarchicalSoftmax.from_counts([9, 5, 3, 2, 1], dim=4)
    layer.fit(rng.standard_normal((20, 3)).astype(np.float32), rng.integers(0, 5, 20), epochs=1)
    layer.save(paths["layer"])
    return paths


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4, 16))):
        pos = rng.randrange(max(len(out), 1))
        op = rng.randrange(5)
        if op == 0 and out:
            out[pos] ^= 1 << rng.randrange(8)
        elif op == 1:
            out[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5)))
        elif op == 2:
            del out[pos : pos + rng.randrange(1, 64)]
        elif op == 3:
            del out[pos:]
        else:
            out[pos : pos + 4] = rng.choice([b"\xff\xff\xff\x7f", b"\0\0\0\0", b"nan ", b"-1  "])
    return bytes(out)


def _mutate_semantic(mutation: str, meta, arrays: dict, rng: random.Random) -> str:
    """Change one thing in a bundle's (meta, arrays) in place; return what was done."""
    name = rng.choice(sorted(arrays))
    arr = arrays[name]
    if mutation == "value" and arr.size:
        index = tuple(rng.randrange(n) for n in arr.shape)
        pool = INTERESTING_FLOATS if arr.dtype.kind == "f" else INTERESTING_INTS
        value = rng.choice(pool)
        if arr.dtype.kind != "f":
            info = np.iinfo(arr.dtype)
            value = min(max(value, int(info.min)), int(info.max))
        arr[index] = value
        return f"{name}{list(index)} = {value!r}"
    if mutation == "nonfinite":  # a whole row of a weight matrix: NaN, inf or huge
        floats = sorted(k for k, a in arrays.items() if a.dtype.kind == "f" and a.size)
        if floats:
            name = rng.choice(floats)
            arr = arrays[name]
            row = rng.randrange(arr.shape[0])
            arr[row] = rng.choice([float("nan"), float("inf"), -float("inf"), 1e30])
            return f"{name}[{row}] = {arr[row].ravel()[0]!r}"
        return "no float array"
    if mutation == "shape":
        axis = rng.randrange(max(arr.ndim, 1)) if arr.ndim else 0
        if arr.ndim == 0:
            arrays[name] = arr.reshape(1)
        elif rng.random() < 0.5 and arr.shape[axis]:
            arrays[name] = np.delete(arr, -1, axis=axis)
        elif rng.random() < 0.5:
            extra = np.take(arr, [0], axis=axis) if arr.shape[axis] else arr  # one more row
            arrays[name] = np.concatenate([arr, extra], axis=axis)
        else:
            arrays[name] = arr.T.copy() if arr.ndim == 2 else arr.reshape(-1, 1)
        return f"{name} shape {arr.shape} -> {arrays[name].shape}"
    if mutation == "dtype":
        dtype = rng.choice(["<f2", "<f4", "<f8", "<i4", "<i8", "|u1", "<u4", "|b1", "<c8", ">f4"])
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arrays[name] = arr.astype(dtype)
        return f"{name} dtype {arr.dtype} -> {dtype}"
    if mutation == "drop":
        del arrays[name]
        return f"{name} removed"
    if not isinstance(meta, dict):
        return "meta is not an object"
    if mutation == "keys" and isinstance(meta.get("index_to_key"), list) and meta["index_to_key"]:
        keys = meta["index_to_key"]
        choice = rng.randrange(4)
        if choice == 0:
            keys[rng.randrange(len(keys))] = keys[0]
        elif choice == 1:
            keys.pop()
        elif choice == 2:
            keys[rng.randrange(len(keys))] = rng.choice(INTERESTING_JSON)
        else:
            keys.append("extra")
        return f"index_to_key edit {choice}"
    field = rng.choice(sorted(meta) or ["x"])
    meta[field] = rng.choice(INTERESTING_JSON)
    return f"meta[{field!r}] = {meta[field]!r}"


def write_case(case: dict, seeds: dict[str, str], out_path: str) -> str:
    """Write the mutant of a file case to `out_path`; return a description of the change."""
    from hsw2v.persist import load_bundle, save_bundle

    rng = random.Random(case["rng"])
    kind, mutation = case["file"], case["mutation"]
    with open(seeds[kind], "rb") as fh:
        data = fh.read()
    if mutation == "bytes" or kind in ("text", "binary"):
        with open(out_path, "wb") as fh:
            fh.write(_mutate_bytes(data, rng))
        return "bytes"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta, arrays = load_bundle(seeds[kind])
        with zipfile.ZipFile(seeds[kind]) as zf:
            bundle_kind = json.loads(zf.read("meta.json"))["kind"]
    arrays = {k: np.array(v) for k, v in arrays.items()}
    what = _mutate_semantic(mutation, meta, arrays, rng)
    save_bundle(out_path, bundle_kind, meta, arrays)
    return what


# ------------------------------------------------------------------ the worker
def _finite_and_moderate(*arrays) -> bool:
    """Whether weights are finite and small enough that training cannot overflow to NaN."""
    for arr in arrays:
        if arr is not None and np.asarray(arr).size:
            with np.errstate(all="ignore"):
                if not np.isfinite(arr).all() or np.abs(arr).max() > 1e4:
                    return False
    return True


def _train_safe(model) -> bool:
    """Whether the kernels may run on `model` in this build (see NAN_SAFE_KERNELS)."""
    if NAN_SAFE_KERNELS:
        return True
    return model.alpha <= KERNEL_SAFE_ALPHA and _finite_and_moderate(model.wv.vectors, model.syn1, model.syn1neg)


def _query(kv) -> None:
    keys = [key for key in kv.index_to_key if key is not None]  # a KeyedVectors may hold gaps
    if len(keys) >= 2:
        with np.errstate(all="ignore"):
            kv.most_similar(keys[0], topn=3)
            kv.similarity(keys[0], keys[-1])


def _run_w2v(path: str, options: int, scratch: str) -> str:
    from hsw2v import Word2Vec

    mmap = (None, "r", "c")[options % 3]
    model = Word2Vec.load(path, mmap=mmap)
    _query(model.wv)
    if not _train_safe(model) or model.negative > 64:
        return "ok (queried; weights need NaN-safe kernels or negative > 64: not trained)"
    keys = model.wv.index_to_key
    if model.hs:
        model.score([keys[:6]], total_sentences=1)
        model.predict_output_word(keys[:3], topn=2)
    if mmap == "r":
        return "ok (read-only map: queried)"
    model.workers = 1 + options // 3 % 2
    corpus = [keys[i : i + 7] for i in range(0, len(keys), 3)] * 3
    model.train(corpus, total_examples=len(corpus), epochs=1)
    _query(model.wv)
    again = os.path.join(scratch, "again")
    model.save(again)
    Word2Vec.load(again)
    return "ok"


def _run_layer(path: str, options: int) -> str:
    from hsw2v.layer import HierarchicalSoftmax

    layer = HierarchicalSoftmax.load(path)
    safe = NAN_SAFE_KERNELS or _finite_and_moderate(layer.weights, layer.input_weights)
    if not safe:
        return "ok (loaded; weights need NaN-safe kernels: not used)"
    H = np.random.default_rng(options).standard_normal((4, layer.dim)).astype(np.float32)
    layer.proba(H)
    layer.log_prob(H, np.arange(4) % layer.n_classes)
    layer.topk(H, k=min(2, layer.n_classes))
    layer.update(H, np.arange(4) % layer.n_classes, lr=0.05)
    if layer.input_weights is not None:
        X = np.random.default_rng(1).standard_normal((10, layer.input_weights.shape[0]))
        layer.topk(layer.transform(X), 1)
        layer.fit(X.astype(np.float32), np.arange(10) % layer.n_classes, epochs=1, lr=0.05)
    return "ok"


def run_case(case: dict, seeds: dict[str, str], scratch: str) -> str:
    """Run one case; return its outcome line (raises only for undocumented exceptions)."""
    from hsw2v import Word2Vec
    from hsw2v.keyedvectors import KeyedVectors

    if "params" in case:
        params = dict(case["params"])
        try:
            model = Word2Vec(**{**params, "epochs": 0})  # parameters alone
            model.build_vocab(case["corpus"])
        except DOCUMENTED_BUILD as exc:
            return f"refused {type(exc).__name__}"
        if params.get("alpha", 0.025) > KERNEL_SAFE_ALPHA and not NAN_SAFE_KERNELS:
            return "ok (vocabulary built; a high alpha needs NaN-safe kernels: not trained)"
        try:
            model.train(case["corpus"], total_examples=model.corpus_count, epochs=params["epochs"])
        except DOCUMENTED as exc:  # e.g. a corpus of empty sentences
            return f"refused in train {type(exc).__name__}"
        _query(model.wv)
        return "ok"
    path = os.path.join(scratch, f"case-{case['index']}")
    write_case(case, seeds, path)
    options = random.Random(case["rng"] + 1).randrange(256)
    kind = case["file"]
    try:
        if kind.startswith("w2v"):
            return _run_w2v(path, options, scratch)
        if kind == "layer":
            return _run_layer(path, options)
        if kind == "kv":
            _query(KeyedVectors.load(path, mmap=(None, "r")[options % 2]))
            return "ok"
        kv = KeyedVectors.load_word2vec_format(
            path,
            binary=kind == "binary",
            limit=(None, 2, 0)[options % 3],
            unicode_errors=("strict", "replace", "ignore")[options // 3 % 3],
            datatype=(np.float32, np.float64, np.float16)[options // 9 % 3],
        )
        _query(kv)
        return "ok"
    except DOCUMENTED as exc:
        return f"refused {type(exc).__name__}"


def worker(manifest: str) -> int:
    """Run every case of a manifest file, printing begin/end lines (see the module doc)."""
    return serve(manifest, lambda case, job: run_case(case, job["seeds"], job["scratch"]))


# ------------------------------------------------------------------ the driver
def run_batch(cases: list[dict], seeds: dict[str, str], timeout: float = 120.0) -> dict:
    """Run `cases` in one subprocess (:func:`child_batch.run_batch`). Returns ``{"outcomes":
    {index: line}, "failures": [(case, why)]}``: a failure is an undocumented exception, a
    hang (the batch is then killed after `timeout` seconds) or a death by signal, each with
    the case that caused it."""
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    return child_batch.run_batch(__file__, cases, timeout, {"seeds": seeds}, scratch_dir=shm)


def random_file_case(rng: random.Random) -> dict:
    return {
        "file": rng.choice(SEED_KINDS),
        "mutation": rng.choice(MUTATIONS),
        "rng": rng.randrange(2**32),
    }


# Per parameter: values inside the range, then values at or beyond its edges (see
# hsw2v.params). Learning rates above KERNEL_SAFE_ALPHA are in range but diverge to NaN.
PARAM_VALUES = {
    "vector_size": ([1, 2, 3, 8, 17], [0, -1, 2**24 + 1, 2**40, 2.5, True]),
    "window": ([1, 2, 5, 50, 2**31 - 1], [0, 2**31, -3, 2.0]),
    "min_count": ([0, 1, 2, 5], [-1, 2**63, 0.5]),
    "sample": ([0, 1e-5, 1e-3, 1.0, 1e30], [-1e-3, float("nan"), float("inf")]),
    "seed": ([0, 1, 2**32, 2**64 - 1], [-1, 2**64, 2**70]),
    "workers": ([1, 2, 3], [0, 1025, -2]),
    "sg": ([0, 1], [2, -1]),
    "hs": ([0, 1, 1], [2]),
    "negative": ([0, 1, 5, 20], [-1, 2**31]),
    "cbow_mean": ([0, 1], [3]),
    "epochs": ([1, 2, 3], [-1]),
    "batch_words": ([1, 2, 7, 10000], [0, 2**31]),
    "alpha": ([0.025, 0.05, 1e-30], [0, -1.0, 1e39, float("inf"), float("nan"), 0.5, 5.0]),
    "shrink_windows": ([True, False], [2]),
    "kernel": (["auto", "window", "fused", "loop", "blas"], ["fast"]),
    "tree": (["huffman", "balanced", "semantic"], ["random"]),
    "ns_exponent": ([0.75, 0.0, -1.0, 1e10], [float("nan"), float("inf")]),
    "max_final_vocab": ([None, None, 1, 3], [0, -1]),
    "sorted_vocab": ([0, 1], [5]),
    "null_word": ([0, 1], [7]),
}
KERNEL_SAFE_ALPHA = 0.05


def random_params_case(rng: random.Random) -> dict:
    """Parameters and an odd corpus, drawn with `rng`: every parameter inside its range,
    then none, one or two pushed to or past an edge."""
    params = {name: rng.choice(good) for name, (good, _) in PARAM_VALUES.items()}
    for name in rng.sample(sorted(PARAM_VALUES), rng.choice([0, 0, 1, 2])):
        params[name] = rng.choice(PARAM_VALUES[name][1])
    alpha = params["alpha"]
    floor = [0.0, 1e-4] if isinstance(alpha, float) and alpha > 1e-4 else [0.0]
    params["min_alpha"] = rng.choice(floor + ([alpha, 2 * alpha] if rng.random() < 0.1 else []))
    words = rng.choice([WORDS[:2], WORDS, ["a"], ["", " ", "\x00", "\u2028", "é" * 300]])
    length = rng.choice([0, 1, 2, 9, 1000])
    # Skip-gram over a whole 1000-token sentence (window 2**31 - 1) is a million pairs per
    # sentence and epoch: legitimately slow, so long sentences come one or two at a time.
    n = rng.choice([1, 2] if length > 100 else [1, 2, 10, 60])
    corpus = [[rng.choice(words) for _ in range(rng.randrange(length + 1))] for _ in range(n)]
    if rng.random() < 0.1:
        corpus.append([])
    return {"params": params, "corpus": corpus}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=600.0, help="how long to fuzz")
    parser.add_argument("--inputs", type=int, default=0, help="stop after this many (0: time)")
    parser.add_argument("--batch", type=int, default=300, help="cases per subprocess")
    parser.add_argument("--seed", type=int, default=0, help="seed of the case generator")
    parser.add_argument("--replay", help="run one case (JSON) and print its outcome")
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    workdir = tempfile.mkdtemp(prefix="hsw2v-fuzz-seeds-")
    seeds = make_seeds(workdir)
    if args.replay:
        result = run_batch([json.loads(args.replay)], seeds)
        print(result)
        return 1 if result["failures"] else 0
    rng = random.Random(args.seed)
    started = time.perf_counter()
    tried, failures, tally = 0, [], {}
    while time.perf_counter() - started < args.seconds and (not args.inputs or tried < args.inputs):
        cases = [
            random_params_case(rng) if rng.random() < 0.2 else random_file_case(rng)
            for _ in range(args.batch)
        ]
        result = run_batch(cases, seeds, timeout=max(120.0, args.batch * 0.5))
        tried += len(result["outcomes"])
        for outcome in result["outcomes"].values():
            key = outcome.split(":")[0].split(" (")[0]
            tally[key] = tally.get(key, 0) + 1
        for case, why in result["failures"]:
            failures.append((case, why))
            print(f"FAILURE: {why}\n  case: {json.dumps(case, allow_nan=True)[:2000]}", flush=True)
        elapsed = time.perf_counter() - started
        print(f"{elapsed:7.0f}s  inputs tried: {tried}  failures: {len(failures)}", flush=True)
    print(f"inputs tried: {tried} in {time.perf_counter() - started:.0f}s; failures: {len(failures)}")
    for key, n in sorted(tally.items()):
        print(f"  {key:40s} {n}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
