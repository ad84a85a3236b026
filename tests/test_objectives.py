"""The objective table (hsw2v.running.objectives): what each row gives, that the code reads it instead
of listing the output matrices itself, and that model files keep their format across it."""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import hsw2v
from hsw2v import Word2Vec
from hsw2v.running import objectives
from hsw2v.running.objectives import (
    MATRICES,
    OBJECTIVES,
    OUTPUTS,
    kernel_outputs,
    matrix_shapes,
    touched_rows,
    with_matrices,
)

PACKAGE = Path(hsw2v.__file__).resolve().parent
DATA = Path(__file__).resolve().parent / "data"
SENTENCES = [[f"w{(i * 7 + j * 3) % 12}" for j in range(6)] for i in range(60)]
COMMON = dict(vector_size=4, window=2, min_count=1, workers=1, epochs=1, seed=5, sample=0)
SETTINGS = {"hs": dict(hs=1, negative=0), "ns": dict(hs=0, negative=3),
            "hs_ns": dict(hs=1, negative=2)}


def test_the_table_names_every_trained_matrix():
    assert OUTPUTS == ("syn1", "syn1neg")
    assert MATRICES == ("syn0", "syn1", "syn1neg")
    assert [o.switch for o in OBJECTIVES] == ["hs", "negative"]


@pytest.mark.parametrize("name", SETTINGS)
def test_a_model_has_each_matrix_its_switches_ask_for(name):
    model = Word2Vec(SENTENCES, **SETTINGS[name], **COMMON)
    n, d = len(model.wv), COMMON["vector_size"]
    shapes = matrix_shapes(objectives.switches_of(model), n, d)
    assert shapes == {"syn1": (n if model.hs else 0, d), "syn1neg": (n if model.negative else 0, d)}
    for matrix, shape in shapes.items():
        assert getattr(model, matrix).shape == shape
    assert (model.cum_table is not None) == bool(model.negative)
    model.build_vocab([["new", "words", "here"]] * 5, update=True)  # grown with zero rows
    for o in OBJECTIVES:
        if getattr(model, o.switch):
            grown = getattr(model, o.matrix)
            assert grown.shape == (n + 3, d) and not grown[n:].any()
    assert model.estimate_memory().keys() == {"vocab", "vectors", "total"} | {
        o.matrix for o in objectives.active(model)
    }


def test_kernel_outputs_give_each_objective_that_is_on_its_matrix():
    """Each objective that is on is one output of the kernel's step, in table order (hs
    first), with its own matrix and lookup; an objective that is off is no output."""
    model = Word2Vec(SENTENCES, hs=0, negative=3, **COMMON)
    (ns,) = with_matrices(kernel_outputs(model, 1), (model.syn1, model.syn1neg))
    assert ns["kind"] == "ns" and ns["negative"] == 3 and ns["matrix"] is model.syn1neg
    assert ns["cum_table"] is model.cum_table and ns["shared"] is True
    model = Word2Vec(SENTENCES, hs=1, negative=2, shared_negatives=False, **COMMON)
    hs, ns = with_matrices(kernel_outputs(model, 1), (model.syn1, model.syn1neg))
    assert (hs["kind"], ns["kind"]) == ("hs", "ns") and ns["shared"] is False
    assert hs["matrix"] is model.syn1 and ns["matrix"] is model.syn1neg
    assert hs["codes"] is model.tree.codes and hs["lengths"] is model.tree.lengths
    model = Word2Vec(SENTENCES, hs=1, negative=0, **COMMON)
    assert [o["kind"] for o in kernel_outputs(model, 1)] == ["hs"]


def test_each_objective_owns_its_private_hot_rows():
    """With several threads the tree's output names its most visited inner nodes and the
    draws' output its most frequent words; with one thread neither has any."""
    model = Word2Vec(SENTENCES, hs=1, negative=2, **COMMON)
    hs, ns = kernel_outputs(model, 2)
    assert len(hs["hot_rows"]) > 0 and len(ns["hot_rows"]) > 0
    assert set(hs["hot_rows"]) <= set(range(len(model.wv) - 1))
    counts = np.asarray(model.wv.expandos["count"])
    assert counts[ns["hot_rows"]].min() >= np.sort(counts)[::-1][len(ns["hot_rows"]) - 1]
    hs, ns = kernel_outputs(model, 1)
    assert len(hs["hot_rows"]) == 0 and ns["hot_rows"] is None


HOT_COMMON = dict(vector_size=4, window=2, min_count=1, workers=2, epochs=1, seed=5, hs=1,
                  negative=0)


@pytest.mark.parametrize(
    "make, like_skip_gram",
    [
        (lambda docs, words: Word2Vec(words, sg=1, **HOT_COMMON), True),
        (lambda docs, words: Word2Vec(words, sg=0, **HOT_COMMON), False),
        (lambda docs, words: hsw2v.FastText(words, sg=1, bucket=64, **HOT_COMMON), True),
        (lambda docs, words: hsw2v.Doc2Vec(docs, dm=0, **HOT_COMMON), False),
        (lambda docs, words: hsw2v.Doc2Vec(docs, dm=0, dbow_words=1, **HOT_COMMON), True),
        (lambda docs, words: hsw2v.Doc2Vec(docs, dm=1, **HOT_COMMON), False),
    ],
    ids=["sg", "cbow", "fasttext-sg", "pv-dbow", "pv-dbow-words", "pv-dm"],
)
def test_the_private_rows_are_tuned_by_walks_per_word(make, like_skip_gram):
    """Several threads: a model whose words walk their outputs once per context word
    (skip-gram, PV-DBOW with ``dbow_words``) gets skip-gram's private rows and sync interval,
    one whose words walk once (CBOW, PV-DM, PV-DBOW alone, from the document's row) CBOW's."""
    from hsw2v.running import _tuning
    from hsw2v.running.trainer import trainer_settings

    words = [[f"w{(i * 13 + j * 7) % 400}" for j in range(12)] for i in range(400)]
    docs = [hsw2v.TaggedDocument(w, [i]) for i, w in enumerate(words)]
    model = make(docs, words)
    settings = trainer_settings(model, threads=2)
    (tree,) = settings.outputs
    nodes, sync = (
        (_tuning.HOT_NODES, _tuning.HOT_SYNC)
        if like_skip_gram
        else (_tuning.HOT_NODES_CBOW, _tuning.HOT_SYNC_CBOW)
    )
    assert len(model.wv) - 1 > max(_tuning.HOT_NODES, _tuning.HOT_NODES_CBOW)
    assert (len(tree["hot_rows"]), settings.hot_sync) == (nodes, sync)


def test_a_stale_draw_table_is_rebuilt_for_the_kernel():
    model = Word2Vec(SENTENCES, hs=0, negative=3, **COMMON)
    model.cum_table = model.cum_table[:-1]
    (ns,) = kernel_outputs(model, 1)
    assert len(ns["cum_table"]) == len(model.wv)


def test_touched_rows_match_a_reference():
    """The rows a distributed piece may change: the inner nodes on its words' paths (weighted
    by occurrences), and every negative-sampling row (occurrences plus expected draws)."""
    from hsw2v.running.trainer import trainer_settings

    model = Word2Vec(SENTENCES, hs=1, negative=2, **COMMON)
    settings = trainer_settings(model, threads=1)
    occurrences = np.zeros(len(model.wv), dtype=np.int64)
    occurrences[[0, 5]] = [3, 1]
    (tree_rows, tree_w), (ns_rows, ns_w) = touched_rows(
        settings, occurrences, (model.syn1, model.syn1neg)
    )
    expected = np.zeros(len(model.syn1))
    for word, times in ((0, 3), (5, 1)):
        for node in model.tree.points[word, : model.tree.lengths[word]]:
            expected[node] += times
    np.testing.assert_array_equal(tree_w, expected)
    np.testing.assert_array_equal(tree_rows, np.flatnonzero(expected))
    share = np.diff(model.cum_table.astype(np.float64), prepend=0.0) / model.cum_table[-1]
    np.testing.assert_allclose(ns_w, occurrences + 2 * 4 * share)
    np.testing.assert_array_equal(ns_rows, np.arange(len(model.wv)))


def _code_names(source: str, names: set) -> set:
    """The names among ``names`` a module's code uses as an attribute or as a whole string
    (prose in docstrings and comments never is one)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in names:
            found.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            found.add(node.value)
    return found


# The table, and the modules that use one objective's matrix each (hierarchical softmax's
# scoring, beside the table, and its PyTorch output layer built from a model's syn1, negative
# sampling's softmax over syn1neg, beside the table too, and fastText's .bin files, whose one
# output matrix is -syn1 with -loss hs and syn1neg with -loss ns).
READS_MATRICES = {"running/objectives/__init__.py", "running/objectives/hierarchical.py",
                  "running/objectives/negative.py", "layer/torch.py",
                  "fasttext/_facebook_model.py"}  # fmt: skip


def test_only_the_table_names_the_output_matrices():
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        named = _code_names(path.read_text(encoding="utf-8"), set(OUTPUTS))
        assert not named or name in READS_MATRICES, (name, named)


def test_the_matrix_name_check_sees_a_listing():
    # the control: code that lists the matrices itself is caught, attribute or string
    assert _code_names("x = (model.syn1, d['syn1neg'])", set(OUTPUTS)) == {"syn1", "syn1neg"}


# ----------------------------------------------------------------------- file format
# saved parameters added after these files were written: a file without one loads with the
# value it was trained with (shared_negatives: gensim's per-pair draws, although the default
# is now on), and a model saved now writes it
ADDED_SINCE = {"shared_negatives": False}


def without_added(meta: dict) -> dict:
    return {k: v for k, v in meta.items() if k not in ADDED_SINCE}

@pytest.mark.parametrize("name", SETTINGS)
def test_files_saved_before_the_table_load_and_save_unchanged(name, tmp_path):
    """tests/data holds models saved by the code before the objective table (one per setting):
    they load with their objective, train on, and saved again they give the same file
    content: the same members, metadata, dtypes, shapes and array checksums."""
    path = DATA / f"before_objectives_{name}.hsw2v"
    model = Word2Vec.load(path)
    assert (model.hs, model.negative) == tuple(SETTINGS[name].values())
    model.save(tmp_path / "again.hsw2v")
    with zipfile.ZipFile(path) as old, zipfile.ZipFile(tmp_path / "again.hsw2v") as new:
        assert old.namelist() == new.namelist()
        old_meta, new_meta = (json.loads(z.read("meta.json")) for z in (old, new))
    assert old_meta["arrays"] == new_meta["arrays"]
    assert old_meta.keys() == new_meta.keys()
    assert old_meta["meta"] == without_added(new_meta["meta"])
    assert {k: new_meta["meta"][k] for k in ADDED_SINCE} == ADDED_SINCE
    model.train(SENTENCES, total_examples=len(SENTENCES), epochs=1)
    for o in objectives.active(model):
        assert np.isfinite(getattr(model, o.matrix)).all()


@pytest.mark.parametrize("name", SETTINGS)
def test_files_saved_now_have_the_format_of_before(name, tmp_path):
    """A model trained now (same corpus and settings) writes the same members and the same
    array names, dtypes and shapes as the file of before."""
    Word2Vec(SENTENCES, **SETTINGS[name], **COMMON).save(tmp_path / "now.hsw2v")
    path = DATA / f"before_objectives_{name}.hsw2v"
    with zipfile.ZipFile(path) as old, zipfile.ZipFile(tmp_path / "now.hsw2v") as new:
        assert old.namelist() == new.namelist()
        old_meta, new_meta = (json.loads(z.read("meta.json")) for z in (old, new))
    strip = lambda arrays: {k: (v["dtype"], v["shape"]) for k, v in arrays.items()}  # noqa: E731
    assert strip(old_meta["arrays"]) == strip(new_meta["arrays"])
    assert old_meta["meta"].keys() == without_added(new_meta["meta"]).keys()
    assert ADDED_SINCE.keys() <= new_meta["meta"].keys()
