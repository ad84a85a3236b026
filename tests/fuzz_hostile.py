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

``construct`` (third round)
    The layer built from caller-owned tree arrays: views of a larger buffer (offset,
    strided, reshaped), other dtypes and orders, read-only and ``np.frombuffer`` buffers,
    by ``HierarchicalSoftmax(tree, ...)`` or ``from_paths``, with or without a wide root;
    then one to three hostile actions: the caller writes its own buffer, the layer's own
    tree arrays (``tree.codes/points/lengths``, ``children``, ``order``, the wide root's
    ``slot``, ``children`` and the tree below it) are made writeable and edited (and made
    read-only again, or not), or ``tree`` is replaced; then a query or a step. Failures: a
    death by a signal, a hang, an exception other than ValueError or TypeError, and an
    answer that changed when only the caller's buffer was written (the layer owns its tree).
``paths`` (third round)
    The command line's paths in a scratch folder of files, symbolic links (to files, to
    folders, dangling), hard links and folders: ``hsw2v train`` (``-o``, ``--word2vec``) and
    ``hsw2v convert``, each output drawn among the inputs under any spelling (``./x``,
    ``d/../x``, absolute, through a link or a hard link), another output, a folder, a file in
    a missing folder, an existing unrelated file or a new name. Failures: an exception out of
    ``main``, a lost file (an input changed or gone; any file changed by a command that
    failed; a file other than the command's outputs changed), an output reported written
    that does not load, and a temporary file left behind.

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

FAMILIES = ("train", "layer", "construct", "paths")


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


# ------------------------------------------------------------------ family "construct"
class OwnershipBroken(Exception):
    """An answer changed although only the caller's own buffer was written."""


def _caller_array(rng: random.Random, arr: np.ndarray, keep: list) -> np.ndarray:
    """``arr``'s values in a buffer the caller keeps (``keep``) and may write later."""
    how = rng.choice(["plain", "view", "strided", "fortran", "int64", "uint32", "float",
                      "readonly", "frombuffer", "list"])  # fmt: skip
    if how == "view":
        buf = np.zeros(arr.size + 16, dtype=arr.dtype)
        out = buf[8 : 8 + arr.size].reshape(arr.shape)
        out[...] = arr
        keep.append(buf)
        return out
    if how == "strided":
        buf = np.zeros((2,) + arr.shape, dtype=arr.dtype)
        buf[0] = arr
        keep.append(buf)
        return buf[0]  # contiguous view of a larger buffer
    if how == "fortran":
        out = np.asfortranarray(arr)
    elif how in ("int64", "uint32", "float"):
        out = arr.astype({"int64": np.int64, "uint32": np.uint32, "float": np.float64}[how])
    elif how == "readonly":
        out = arr.copy()
        out.flags.writeable = False
    elif how == "frombuffer":
        raw = bytearray(arr.astype(arr.dtype).tobytes())
        keep.append(raw)
        out = np.frombuffer(raw, dtype=arr.dtype).reshape(arr.shape)
    elif how == "list":
        return arr.tolist()
    else:
        out = arr.copy()
    keep.append(out)
    return out


def _hostile_value(rng: random.Random, arr: np.ndarray):
    return rng.choice([-1, -(2**31), 2**31 - 1, 10**6, int(arr.max(initial=0)) + 1, 0, 255])


def _edit_own(rng: random.Random, arr: np.ndarray, restore_flag: bool) -> None:
    arr.flags.writeable = True
    flat = arr.reshape(-1)
    if flat.size:
        value = _hostile_value(rng, arr)
        if rng.random() < 0.5:
            flat[rng.randrange(flat.size)] = np.asarray(value).astype(arr.dtype)
        else:
            flat[:] = np.asarray(value).astype(arr.dtype)
    if restore_flag:
        arr.flags.writeable = False


def run_construct_case(case: dict, scratch: str) -> str:
    from hsw2v import HierarchicalSoftmax
    from hsw2v.huffman import Tree, build_huffman_tree

    rng = random.Random(case["rng"])
    classes, dim = rng.choice([2, 3, 5, 9]), rng.choice([1, 3, 4])
    counts = np.array([rng.randrange(1, 50) for _ in range(classes)], dtype=np.int64)
    base = build_huffman_tree(counts)
    keep: list = []
    codes = _caller_array(rng, np.asarray(base.codes), keep)
    points = _caller_array(rng, np.asarray(base.points), keep)
    lengths = _caller_array(rng, np.asarray(base.lengths), keep)
    wide = rng.choice([None, None, 2, 3])
    np_rng = np.random.default_rng(case["rng"] % 2**32)
    H = np_rng.normal(size=(6, dim)).astype(np.float32)
    y = np.arange(6) % classes
    try:
        if rng.random() < 0.5:
            tree = Tree(codes=codes, points=points, lengths=lengths)
            layer = HierarchicalSoftmax(tree, dim, intercept=rng.random() < 0.5, root_width=wide)
        else:
            layer = HierarchicalSoftmax.from_paths(
                codes, points, dim, lengths=lengths, intercept=rng.random() < 0.5,
                root_width=wide,
            )  # fmt: skip
        layer.weights[:] = np_rng.normal(size=layer.weights.shape)
        before = layer.log_prob(H, y)
        owned = True
        for _ in range(rng.randint(1, 3)):
            action = rng.choice(["caller_buffer", "caller_buffer", "own_tree", "own_tree",
                                 "own_derived", "own_wide", "replace_tree"])  # fmt: skip
            if action == "caller_buffer":
                for arr in keep:
                    if isinstance(arr, bytearray):
                        arr[: len(arr)] = bytes([rng.randrange(256)]) * len(arr)
                    elif isinstance(arr, np.ndarray) and arr.size:
                        if not arr.flags.writeable:
                            arr.flags.writeable = True
                        value = np.array(_hostile_value(rng, arr)).astype(arr.dtype)
                        arr.reshape(-1)[rng.randrange(arr.size)] = value
            elif action == "own_tree":
                owned = False
                name = rng.choice(["codes", "points", "lengths"])
                _edit_own(rng, getattr(layer.tree, name), rng.random() < 0.7)
            elif action == "own_derived":
                owned = False
                _edit_own(rng, rng.choice([layer.children, layer.order]), rng.random() < 0.7)
            elif action == "own_wide" and layer._wide is not None:
                owned = False
                w = layer._wide
                arr = rng.choice([w.slot, w.children, w.below.codes, w.below.points,
                                  w.below.lengths, w.expanded])  # fmt: skip
                _edit_own(rng, arr, rng.random() < 0.7)
            elif action == "replace_tree":
                owned = False
                other = build_huffman_tree(np.arange(1, rng.choice([2, classes, classes + 2]) + 1))
                layer.tree = other
        if owned and not np.array_equal(layer.log_prob(H, y), before):
            raise OwnershipBroken("log_prob changed after only the caller's buffer was written")
        method = rng.choice(["log_prob", "proba", "log_proba", "topk", "backward", "update",
                             "fit"])  # fmt: skip
        if method == "log_prob":
            layer.log_prob(H, y)
        elif method == "proba":
            layer.proba(H)
        elif method == "log_proba":
            layer.log_proba(H)
        elif method == "topk":
            layer.topk(H, rng.choice([1, classes]))
        elif method == "backward":
            layer.backward(H, y, nodes=rng.random() < 0.5)
        elif method == "update":
            layer.update(H, y, lr=0.1)
        else:
            X = np_rng.normal(size=(12, 3)).astype(np.float32)
            layer.fit(X, np.arange(12) % classes, epochs=1, workers=rng.choice([1, 2]))
    except LAYER_DOCUMENTED as exc:
        return f"refused {type(exc).__name__}"
    return "ok"


# ------------------------------------------------------------------ family "paths"
_CORPUS_LINES = [" ".join(f"w{(i * 7 + k) % 23}" for k in range(8)) for i in range(60)]


def _digests(folder: str) -> dict:
    """``{relative path: sha256}`` of every regular file under ``folder`` (links followed
    only to say what they point at, not to hash twice)."""
    import hashlib

    out = {}
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as fh:
                out[os.path.relpath(path, folder)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _real(folder: str, path: str) -> str | None:
    full = os.path.join(folder, path)
    if not os.path.exists(full):
        return None
    return os.path.relpath(os.path.realpath(full), os.path.realpath(folder))


def run_paths_case(case: dict, scratch: str) -> str:
    import contextlib
    import io
    import shutil

    from hsw2v.cli import main

    rng = random.Random(case["rng"])
    folder = os.path.join(scratch, f"case-{case['index']}")
    os.makedirs(os.path.join(folder, "d", "e"))
    with open(os.path.join(folder, "corpus.txt"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(_CORPUS_LINES) + "\n")
    template = case.get("template")
    for name in ("m.hsw2v", "v.txt"):
        shutil.copy(os.path.join(template, name), os.path.join(folder, name))
    with open(os.path.join(folder, "other.txt"), "w") as fh:
        fh.write("unrelated\n")
    os.symlink("corpus.txt", os.path.join(folder, "lc"))
    os.symlink("m.hsw2v", os.path.join(folder, "lm"))
    os.symlink("v.txt", os.path.join(folder, "lv"))
    os.symlink("d", os.path.join(folder, "ld"))
    os.symlink("missing.txt", os.path.join(folder, "dangling"))
    os.link(os.path.join(folder, "corpus.txt"), os.path.join(folder, "hc"))
    os.link(os.path.join(folder, "v.txt"), os.path.join(folder, "hv"))

    def spell(name: str) -> str:
        return rng.choice([name, f"./{name}", f"d/../{name}", f"d/e/../../{name}",
                           os.path.join(folder, name)])  # fmt: skip

    def pick_output(inputs: list) -> str:
        kind = rng.choice(["input", "input", "link", "hard", "dir", "linkdir", "missingdir",
                           "other", "new", "new", "dangling", "trailing"])  # fmt: skip
        if kind == "input":
            return spell(rng.choice(inputs))
        if kind == "link":
            return spell(rng.choice(["lc", "lm", "lv"]))
        if kind == "hard":
            return spell(rng.choice(["hc", "hv"]))
        if kind == "dir":
            return spell(rng.choice(["d", "d/e"]))
        if kind == "linkdir":
            return "ld"
        if kind == "missingdir":
            return "nowhere/out.txt"
        if kind == "other":
            return spell("other.txt")
        if kind == "dangling":
            return "dangling"
        if kind == "trailing":
            return "d/"
        return spell(rng.choice(["out.hsw2v", "out.txt", "out.bin", "d/out.vec"]))

    command = rng.choice(["train", "train", "convert", "convert"])
    if command == "train":
        corpus = spell(rng.choice(["corpus.txt", "lc", "hc"]))
        argv = ["train", corpus, "--size", "4", "--epochs", "1", "--workers", "1",
                "--min-count", "1", "--no-progress"]  # fmt: skip
        outputs, kinds = [], []
        for flag in rng.sample(["-o", "--word2vec"], rng.randint(1, 2)):
            outputs.append(pick_output(["corpus.txt", "lc", "hc"]))
            kinds.append("model" if flag == "-o" else "text")
            argv += [flag, outputs[-1]]
        inputs = [corpus]
    else:
        from hsw2v.cli._io import _output_format

        source = spell(rng.choice(["m.hsw2v", "v.txt", "lm", "lv", "hv"]))
        outputs = [pick_output([source])]
        argv = ["convert", source, outputs[0]]
        target = _output_format(outputs[0])
        if rng.random() < 0.7:
            target = rng.choice(["native", "text", "binary"])
            argv += ["--to", target]
        kinds = [target]
        inputs = [source]
    before = _digests(folder)
    input_files = {_real(folder, p) for p in inputs} - {None}
    output_files = {_real(folder, p) for p in outputs}
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            status = main(argv)
    finally:
        os.chdir(cwd)
    after = _digests(folder)
    for name, digest in before.items():
        if after.get(name) == digest:
            continue
        gone = "gone" if name not in after else "changed"
        if name in input_files:
            raise LostFile(f"input {name} {gone} ({' '.join(argv)}: status {status})")
        if status != 0:
            raise LostFile(f"{name} {gone} by a command that failed ({' '.join(argv)})")
        if name not in output_files:
            raise LostFile(f"{name} {gone}, not an output of {' '.join(argv)}")
    litter = [n for n in after if ".tmp" in n and os.path.basename(n).startswith(".")]
    if litter:
        raise LostFile(f"temporary files left: {litter} ({' '.join(argv)})")
    if status == 0:
        from hsw2v import KeyedVectors, Word2Vec

        for out, kind in zip(outputs, kinds, strict=True):
            path = os.path.join(folder, out)
            if kind == "model":
                Word2Vec.load(path)
            elif kind == "native":
                KeyedVectors.load(path)
            else:  # reported written: it must load
                KeyedVectors.load_word2vec_format(path, binary=kind == "binary")
    shutil.rmtree(folder)
    return f"status {status}"


class LostFile(Exception):
    """A file the command line must not have changed was changed or removed."""


# ------------------------------------------------------------------ worker and driver
_RUNNERS = {
    "train": run_train_case,
    "layer": run_layer_case,
    "construct": run_construct_case,
    "paths": run_paths_case,
}


def _run_case(case: dict, job: dict) -> str:
    return _RUNNERS[case["family"]](case, job["scratch"])


def worker(manifest: str) -> int:
    return serve(manifest, _run_case)


def run_batch(cases: list[dict], timeout: float) -> dict:
    """Run ``cases`` in one subprocess (:func:`child_batch.run_batch`): ``{"outcomes":
    {index: line}, "failures": [(case, why)]}`` (an undocumented exception, a hang or a death
    by a signal)."""
    return child_batch.run_batch(__file__, cases, timeout)


_TEMPLATE: list = []


def _paths_template() -> str:
    """A folder with a model and a word2vec file trained once, copied into every case."""
    if not _TEMPLATE:
        import tempfile

        from hsw2v import Word2Vec

        folder = tempfile.mkdtemp(prefix="hsw2v-paths-")
        model = Word2Vec([line.split() for line in _CORPUS_LINES], vector_size=4,
                         min_count=1, epochs=1, workers=1)  # fmt: skip
        model.save(os.path.join(folder, "m.hsw2v"))
        model.wv.save_word2vec_format(os.path.join(folder, "v.txt"))
        _TEMPLATE.append(folder)
    return _TEMPLATE[0]


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
        if family == "paths":
            template = _paths_template()
            for case in cases:
                case["template"] = template
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
