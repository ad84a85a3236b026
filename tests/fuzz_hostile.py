"""Crash-hunting fuzzer, second round: two families of hostile use, each case run in a
subprocess where a crash cannot take the caller down (the protocol of ``fuzz_models.py``:
the worker prints ``begin I`` and ``end I OUTCOME`` around each case).

``train``
    A model is changed while it trains: from a callback (at the start or end of an epoch)
    or from another thread that keeps calling, one to three actions drawn from every public
    method and attribute of ``Word2Vec`` and its ``wv`` (vocabulary building and updates,
    ``prepare_weights``, ``reset_from``, a second ``train``, ``save``, ``score``, queries,
    ``add_vectors``, ``resize_vectors``, sorting, normalising, assigning ``wv``,
    ``wv.vectors``, ``syn1``, ``syn1neg``, ``tree``, ``cum_table``, and in-place edits of the
    tree, ``cum_table`` and ``key_to_index``). Failures: a death by a signal, a hang, an
    exception out of ``train()`` that is not a documented refusal, and a save that reported
    success but does not load.
``layer``
    The layer and the classifier fed hostile inputs: dense arrays of every dtype, rank and
    shape, NaN and inf; CSR, CSC, COO, LIL and DOK matrices whose ids are negative, past the
    matrix, beyond int32 (as int64), with a broken ``indptr`` or mismatched ``data``; labels
    of the wrong length, range or type; every method (``fit``, ``partial_fit``,
    ``transform``, ``predict``, ``predict_proba``, ``log_prob``, ``proba``, ``topk``,
    ``backward``, ``update``). Failures: a death by a signal, a hang, and an exception that
    is not a ValueError or TypeError.

Usage (the long runs are recorded in ``docs/robustness.md``)::

    python3 tests/fuzz_hostile.py --family train --inputs 10000 --batch 200 --seed 1
    python3 tests/fuzz_hostile.py --family layer --inputs 10000 --batch 500 --seed 1
    python3 tests/fuzz_hostile.py --replay '{"family": "train", "rng": 123}'
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time

import child_batch
import numpy as np
from child_batch import serve

FAMILIES = ("train", "layer")


# ------------------------------------------------------------------ family "train"
def _train_actions(other):
    """name -> action(model, scratch) over every public method and attribute."""
    new = [["brand", "new", "x"], ["more", "words", "x"]] * 5

    def save(m, scratch, saves):
        path = os.path.join(scratch, f"save-{len(saves)}")
        m.save(path)
        saves.append(path)  # reported success: it must load

    def kv_save(m, scratch, saves):
        path = os.path.join(scratch, f"kv-{len(saves)}")
        m.wv.save(path)
        saves.append(path)

    return {
        "build_vocab": lambda m, s, v: m.build_vocab(new),
        "build_vocab_update": lambda m, s, v: m.build_vocab(new, update=True),
        "build_vocab_from_freq": lambda m, s, v: m.build_vocab_from_freq({"f1": 3, "f2": 2}),
        "build_vocab_from_freq_int": lambda m, s, v: m.build_vocab_from_freq({1: 3}),
        "scan_vocab": lambda m, s, v: m.scan_vocab(new),
        "prepare_vocab": lambda m, s, v: m.prepare_vocab(),
        "prepare_weights": lambda m, s, v: m.prepare_weights(),
        "prepare_weights_update": lambda m, s, v: m.prepare_weights(update=True),
        "make_cum_table": lambda m, s, v: m.make_cum_table(),
        "reset_from": lambda m, s, v: m.reset_from(other),
        "train": lambda m, s, v: m.train(new, total_examples=len(new), epochs=1),
        "save": save,
        "kv_save": kv_save,
        "score": lambda m, s, v: m.score(new, total_sentences=len(new)),
        "predict_output_word": lambda m, s, v: m.predict_output_word(m.wv.index_to_key[:2]),
        "most_similar": lambda m, s, v: m.wv.most_similar(m.wv.index_to_key[0], topn=3),
        "similarity": lambda m, s, v: m.wv.similarity(m.wv.index_to_key[0], m.wv.index_to_key[-1]),
        "estimate_memory": lambda m, s, v: m.estimate_memory(),
        "loss": lambda m, s, v: m.get_latest_training_loss(),
        "init_sims": lambda m, s, v: m.init_sims(replace=True),
        "fill_norms": lambda m, s, v: m.wv.fill_norms(force=True),
        "unit_normalize_all": lambda m, s, v: m.wv.unit_normalize_all(),
        "add_vector": lambda m, s, v: m.wv.add_vector("added", np.zeros(m.vector_size)),
        "add_vectors": lambda m, s, v: m.wv.add_vectors(
            [f"a{i}" for i in range(50)], np.zeros((50, m.vector_size))
        ),
        "resize_vectors": lambda m, s, v: m.wv.resize_vectors(),
        "sort": lambda m, s, v: m.wv.sort_by_descending_frequency(),
        "assign_vectors": lambda m, s, v: setattr(
            m.wv, "vectors", np.zeros((len(m.wv.vectors) + 40, m.vector_size), np.float32)
        ),
        "assign_vectors_small": lambda m, s, v: setattr(m.wv, "vectors", m.wv.vectors[:1].copy()),
        "assign_wv": lambda m, s, v: setattr(m, "wv", other.wv),
        "assign_syn1": lambda m, s, v: setattr(m, "syn1", np.zeros((1, m.vector_size), np.float32)),
        "assign_syn1neg": lambda m, s, v: setattr(m, "syn1neg", np.zeros((1, m.vector_size), np.float32)),
        "assign_tree": lambda m, s, v: setattr(m, "tree", other.tree),
        "assign_cum_table": lambda m, s, v: setattr(m, "cum_table", np.arange(3, dtype=np.uint32)),
        "edit_points": lambda m, s, v: m.tree.points.__setitem__((0, 0), 10**6),
        "edit_lengths": lambda m, s, v: m.tree.lengths.__setitem__(0, 10**6),
        "edit_codes": lambda m, s, v: m.tree.codes.__setitem__((0, 0), 9),
        "edit_cum_table": lambda m, s, v: m.cum_table.__setitem__(0, 2**31)
        if m.cum_table is not None
        else None,
        "edit_key_to_index": lambda m, s, v: m.wv.key_to_index.__setitem__(
            m.wv.index_to_key[0], 10**7
        ),
        "add_key_to_index": lambda m, s, v: m.wv.key_to_index.__setitem__("ghost", 10**6),
        "extend_index_to_key": lambda m, s, v: m.wv.index_to_key.append("ghost"),
        "nan_weights": lambda m, s, v: m.wv.vectors.__setitem__((0, 0), np.nan),
        "set_alpha_nan": lambda m, s, v: setattr(m, "alpha", float("nan")),
        "set_window_zero": lambda m, s, v: setattr(m, "window", 0),
        "set_workers": lambda m, s, v: setattr(m, "workers", 3),
    }


# Exceptions train() may raise here: a refusal of the change (TrainingRunningError), an
# in-place edit of a read-only array or a refused parameter (ValueError), the encoder's bound
# on ids (RuntimeError), divergence (a ValueError), or the action's own failure raised from
# a callback (KeyError for a word no longer known, IndexError/TypeError/AttributeError from
# a state the action made inconsistent by hand).
TRAIN_DOCUMENTED = (ValueError, RuntimeError, KeyError, IndexError, TypeError, AttributeError)


def run_train_case(case: dict, scratch: str) -> str:
    from hsw2v import KeyedVectors, Word2Vec
    from hsw2v.callbacks import CallbackAny2Vec

    rng = random.Random(case["rng"])
    words = [f"w{i}" for i in range(rng.choice([1, 2, 5, 40]))]
    corpus = [
        [rng.choice(words) for _ in range(rng.randrange(1, 25))]
        for _ in range(rng.choice([5, 40, 150]))
    ]
    hs = rng.choice([0, 1])
    params = dict(
        vector_size=rng.choice([1, 4, 16]),
        min_count=1,
        workers=rng.choice([1, 2]),
        sg=rng.choice([0, 1]),
        hs=hs,
        negative=rng.choice([0, 3]) if hs else rng.choice([1, 5]),
        epochs=rng.choice([1, 2, 3]),
        seed=rng.randrange(100),
        window=rng.choice([1, 3]),
    )
    model = Word2Vec(**params)
    model.build_vocab(corpus)
    other = Word2Vec([["o1", "o2", "o3"]] * 4, vector_size=params["vector_size"], min_count=1)
    actions = _train_actions(other)
    chosen = rng.sample(sorted(actions), rng.choice([1, 1, 2, 3]))
    mode = rng.choice(["epoch_begin", "epoch_end", "thread"])
    saves: list[str] = []
    action_errors: list[str] = []

    def act():
        for name in chosen:
            try:
                actions[name](model, scratch, saves)
            except Exception as exc:  # noqa: BLE001 - the action's own refusal, tallied
                action_errors.append(type(exc).__name__)

    done = threading.Event()
    thread = None
    callbacks = []
    if mode == "thread":

        def hammer():
            while not done.is_set():
                act()
                time.sleep(0.002)

        thread = threading.Thread(target=hammer, daemon=True)
    else:

        class Act(CallbackAny2Vec):
            pass

        setattr(Act, f"on_{mode}", lambda self, m: act())
        callbacks = [Act()]
    outcome = "trained"
    if thread is not None:
        thread.start()
    try:
        model.train(corpus, total_examples=len(corpus), epochs=params["epochs"], callbacks=callbacks)
    except TRAIN_DOCUMENTED as exc:
        outcome = f"refused {type(exc).__name__}"
    finally:
        done.set()
        if thread is not None:
            thread.join(30)
            if thread.is_alive():
                raise RuntimeError("the action thread did not end")
    # the model answers, and a save that reports success loads
    try:
        final = os.path.join(scratch, "final")
        model.save(final)
        saves.append(final)
    except (ValueError, RuntimeError, TypeError):
        pass
    for path in saves:
        if os.path.basename(path).startswith("kv-"):
            KeyedVectors.load(path)
        else:
            Word2Vec.load(path)
    for path in saves:
        os.unlink(path)
    return outcome


# ------------------------------------------------------------------ family "layer"
def _dense(rng: random.Random, n: int, m: int):
    kind = rng.choice(["ok", "ok", "f64", "int", "bool", "complex", "object", "str", "1d",
                       "3d", "cols", "rows", "nan", "inf", "empty", "huge", "f16"])  # fmt: skip
    X = np.random.default_rng(rng.randrange(2**32)).normal(size=(n, m)).astype(np.float32)
    if kind == "f64":
        return X.astype(np.float64)
    if kind == "int":
        return (X * 10).astype(np.int64)
    if kind == "bool":
        return X > 0
    if kind == "complex":
        return X.astype(np.complex64)
    if kind == "object":
        return X.astype(object)
    if kind == "str":
        return X.astype(str)
    if kind == "1d":
        return X[0]
    if kind == "3d":
        return X[None]
    if kind == "cols":
        return X[:, : max(0, m - rng.choice([1, 2]))] if rng.random() < 0.5 else np.hstack([X, X])
    if kind == "rows":
        return X[: rng.choice([0, 1])]
    if kind == "nan":
        X[rng.randrange(n), rng.randrange(m)] = np.nan
    if kind == "inf":
        X[rng.randrange(n), rng.randrange(m)] = np.inf
    if kind == "empty":
        return np.zeros((0, m), np.float32)
    if kind == "huge":
        return X * np.float32(1e30)
    if kind == "f16":
        return X.astype(np.float16)
    return X


def _sparse(rng: random.Random, n: int, m: int):
    import scipy.sparse as sp

    fmt = rng.choice(["csr", "csc", "coo", "lil", "dok"])
    A = sp.random(n, m, density=0.3, format="csr", random_state=rng.randrange(2**31),
                  dtype=np.float32).asformat(fmt)  # fmt: skip
    how = rng.choice(["ok", "negative", "past", "edge", "int64", "indptr", "data", "dtype",
                      "unsorted", "duplicate", "shape"])  # fmt: skip
    if how == "ok" or A.nnz == 0:
        return A
    if fmt in ("csr", "csc"):
        limit = m if fmt == "csr" else n
        if how == "negative":
            A.indices[rng.randrange(A.nnz)] = -rng.choice([1, 7, 2**31 - 1])
        elif how == "past":
            A.indices[rng.randrange(A.nnz)] = limit + rng.choice([0, 1, 1000, 2**31 - limit - 1])
        elif how == "edge":
            A.indices[-1] = limit
        elif how == "int64":
            A.indices = A.indices.astype(np.int64)
            A.indices[rng.randrange(A.nnz)] = rng.choice([2**31, 2**40, -(2**40)])
        elif how == "indptr":
            A.indptr[rng.randrange(1, len(A.indptr))] = rng.choice([-1, 10**6, A.nnz + 1])
        elif how == "data":
            A.data = A.data[:-1]
        elif how == "dtype":
            A.data = A.data.astype(rng.choice([np.float64, np.int32, np.complex64]))
        elif how == "unsorted":
            A.indices[: A.nnz] = A.indices[: A.nnz][::-1].copy()
        elif how == "duplicate":
            A.indices[:] = A.indices[0]
        elif how == "shape":
            A._shape = (n, m + rng.choice([-1, 1]))
    elif fmt == "coo":
        target = A.row if rng.random() < 0.5 else A.col
        if how in ("negative", "int64"):
            target[rng.randrange(A.nnz)] = -1
        elif how in ("past", "edge", "indptr"):
            target[rng.randrange(A.nnz)] = max(n, m) + rng.choice([0, 5])
        elif how == "dtype":
            A.data = A.data.astype(np.float64)
    elif fmt == "lil" and how in ("past", "negative", "edge"):
        row = rng.randrange(n)
        A.rows[row] = list(A.rows[row]) + [m + 3 if how != "negative" else -2]
        A.data[row] = list(A.data[row]) + [1.0]
    return A


def _labels(rng: random.Random, n: int, classes: int):
    kind = rng.choice(["ok", "ok", "ok", "short", "negative", "past", "float", "str", "2d",
                       "nan", "huge"])  # fmt: skip
    y = np.array([rng.randrange(classes) for _ in range(n)])
    if kind == "short":
        return y[:-1]
    if kind == "negative":
        y[0] = -1
    elif kind == "past":
        y[0] = classes
    elif kind == "float":
        return y.astype(np.float64) + 0.5
    elif kind == "str":
        return y.astype(str)
    elif kind == "2d":
        return y[:, None]
    elif kind == "nan":
        y = y.astype(np.float64)
        y[0] = np.nan
        return y
    elif kind == "huge":
        y[0] = 2**40
    return y


LAYER_DOCUMENTED = (ValueError, TypeError)


def run_layer_case(case: dict, scratch: str) -> str:
    from hsw2v import HierarchicalSoftmax
    from hsw2v.classifier import HierarchicalSoftmaxClassifier

    rng = random.Random(case["rng"])
    n, m, classes, dim = rng.choice([1, 3, 30]), rng.choice([1, 4, 9]), rng.choice([2, 3, 7]), 4
    X = _sparse(rng, n, m) if rng.random() < 0.5 else _dense(rng, n, m)
    y = _labels(rng, n, classes)
    base = np.random.default_rng(1).normal(size=(12, m)).astype(np.float32)
    base_y = np.arange(12) % classes
    route = rng.choice(["layer", "layer", "classifier"])
    try:
        if route == "layer":
            layer = HierarchicalSoftmax.from_counts(
                list(range(classes, 0, -1)), dim=dim, intercept=rng.random() < 0.5,
                root_width=rng.choice([None, None, 2, 3]),
            )  # fmt: skip
            method = rng.choice(["fit", "transform", "log_prob", "proba", "topk", "backward",
                                 "update"])  # fmt: skip
            if method == "fit":
                layer.fit(X, y, epochs=1, workers=rng.choice([1, 2]), job_size=rng.choice([1, 7]))
            elif method == "transform":
                layer.fit(base, base_y, epochs=1)
                layer.topk(layer.transform(X), 1)
            else:
                H = X if rng.random() < 0.5 else _dense(rng, n, dim)
                if method == "log_prob":
                    layer.log_prob(H, y)
                elif method == "proba":
                    layer.proba(H)
                elif method == "topk":
                    layer.topk(H, rng.choice([1, classes, classes + 1, 0]))
                elif method == "backward":
                    layer.backward(H, y, nodes=rng.random() < 0.5)
                else:
                    layer.update(H, y, lr=rng.choice([0.1, 1e30, -1.0, float("nan")]))
        else:
            clf = HierarchicalSoftmaxClassifier(
                dim=dim, epochs=1, tree=rng.choice(["kmeans", "huffman", "balanced"]),
                root_width=rng.choice([None, 2]), random_state=1,
            )  # fmt: skip
            method = rng.choice(["fit", "partial_fit", "predict", "predict_proba", "score"])
            if method == "fit":
                clf.fit(X, y)
            elif method == "partial_fit":
                clf.partial_fit(X, y, classes=np.arange(classes))
            else:
                clf.fit(base, base_y)
                if method == "predict":
                    clf.predict(X)
                elif method == "predict_proba":
                    clf.predict_proba(X)
                else:
                    clf.score(X, y)
    except LAYER_DOCUMENTED as exc:
        return f"refused {type(exc).__name__}"
    return "ok"


# ------------------------------------------------------------------ worker and driver
def _run_case(case: dict, job: dict) -> str:
    run = run_train_case if case["family"] == "train" else run_layer_case
    return run(case, job["scratch"])


def worker(manifest: str) -> int:
    return serve(manifest, _run_case)


def run_batch(cases: list[dict], timeout: float) -> dict:
    """Run ``cases`` in one subprocess (:func:`child_batch.run_batch`): ``{"outcomes":
    {index: line}, "failures": [(case, why)]}`` (an undocumented exception, a hang or a death
    by a signal)."""
    return child_batch.run_batch(__file__, cases, timeout)


def fuzz(
    family: str, inputs: int, batch: int, seed: int, seconds: float = 0.0, verbose: bool = False
) -> dict:
    """Run ``inputs`` cases of ``family`` (or for ``seconds``); returns the tally and the
    failures."""
    rng = random.Random(seed)
    started = time.perf_counter()
    tried, failures, tally = 0, [], {}
    while tried < inputs or (seconds and time.perf_counter() - started < seconds):
        size = min(batch, inputs - tried) if inputs else batch
        cases = [{"family": family, "rng": rng.randrange(2**32)} for _ in range(size)]
        result = run_batch(cases, timeout=max(300.0, size * 3.0))
        tried += len(cases)
        for outcome in result["outcomes"].values():
            key = outcome.split(":")[0]
            tally[key] = tally.get(key, 0) + 1
        lost = len(cases) - len(result["outcomes"])
        if lost:
            tally["not run (batch died)"] = tally.get("not run (batch died)", 0) + lost
        failures += result["failures"]
        for case, why in result["failures"]:
            print(f"FAILURE: {why}\n  case: {json.dumps(case)}", flush=True)
        if verbose:
            print(f"{time.perf_counter() - started:7.0f}s  cases: {tried}  failures: "
                  f"{len(failures)}  {json.dumps(dict(sorted(tally.items())))}", flush=True)  # fmt: skip
        if not seconds and inputs == 0:
            break
    return {"tried": tried, "seconds": time.perf_counter() - started, "tally": tally,
            "failures": failures}  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--family", choices=FAMILIES, default="train")
    parser.add_argument("--inputs", type=int, default=1000, help="cases to run")
    parser.add_argument("--batch", type=int, default=200, help="cases per subprocess")
    parser.add_argument("--seed", type=int, default=0, help="seed of the case generator")
    parser.add_argument("--replay", help="run one case (JSON) and print its outcome")
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if args.replay:
        result = run_batch([json.loads(args.replay)], timeout=300)
        print(result)
        return 1 if result["failures"] else 0
    result = fuzz(args.family, args.inputs, args.batch, args.seed, verbose=True)
    print(f"family {args.family}: {result['tried']} cases in {result['seconds']:.0f}s; "
          f"failures: {len(result['failures'])}")  # fmt: skip
    for key, n in sorted(result["tally"].items()):
        print(f"  {key:50s} {n}")
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
