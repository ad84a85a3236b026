"""The one parameter table (hsw2v.params) and everything derived from it agree.

The Word2Vec signature stays written out for its readers; these tests hold it, the table and
the class docstring's Parameters section to one another, and check that every list derived
from the table (saved, gensim, distributed, command line) is what its user relies on.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import hsw2v
from hsw2v import cli, params
from hsw2v._dist_tasks import RunSpec
from hsw2v.word2vec import Word2Vec


def _docstring_parameters(cls) -> dict[str, str]:
    """``{name: the text after the colon}`` of each entry of a numpydoc Parameters section."""
    doc = inspect.getdoc(cls)
    section = re.split(r"\n[A-Z][a-z]+\n-+\n", doc.split("Parameters\n----------\n", 1)[1])[0]
    entries = re.findall(r"^(\w+) : (.+)$", section, flags=re.MULTILINE)
    return dict(entries)


def _documented_default(text: str):
    """The default a docstring type line states (``..., default X``), or None for
    ``optional``."""
    if text.endswith("optional"):
        return None
    literal = text.rsplit("default ", 1)[1]
    try:
        return ast.literal_eval(literal)
    except ValueError:
        return literal  # a name, such as ``hash``


def test_signature_table_and_docstring_agree():
    signature = inspect.signature(Word2Vec.__init__)
    names = [name for name in signature.parameters if name != "self"]
    assert names == list(params.ARGUMENTS)
    for name in names:
        assert signature.parameters[name].default == params.BY_NAME[name].default, name
    documented = _docstring_parameters(Word2Vec)
    assert list(documented) == names
    for name, text in documented.items():
        default = params.BY_NAME[name].default
        stated = _documented_default(text)
        if callable(default):
            assert stated == default.__name__, name
        else:
            assert stated == default and type(stated) is type(default), (name, text)
        kind = params.BY_NAME[name].kind
        if kind in ("int", "int?"):
            assert text.startswith("int"), (name, text)
        elif kind == "flag":
            assert text.startswith(("{0, 1}", "bool")), (name, text)
        elif kind == "real":
            assert text.startswith("float"), (name, text)


def test_docstring_check_fails_on_a_wrong_default():
    """The check above can fail: a docstring stating another default is caught."""

    class Other:
        """X.

        Parameters
        ----------
        window : int, default 6
            Wrong.
        """

    text = _docstring_parameters(Other)["window"]
    assert _documented_default(text) != params.BY_NAME["window"].default


def test_every_argument_the_table_checks_is_checked_by_the_constructor():
    """Each checked constructor argument refuses a value outside its kind, with the table's
    message, before anything is built."""
    for name in params.ARGUMENTS:
        kind = params.BY_NAME[name].kind
        if kind == params.UNCHECKED:
            continue
        with pytest.raises(ValueError, match=f"^{name} must be"):
            Word2Vec(**{name: object()})


def test_saved_parameters_round_trip(tmp_path):
    model = Word2Vec([["a", "b", "a"]] * 10, vector_size=4, min_count=1, workers=1, epochs=1)
    model.comment = "kept"
    model.total_train_time = 1.5
    model.save(tmp_path / "m.hsw2v")
    loaded = Word2Vec.load(tmp_path / "m.hsw2v")
    for name in params.SAVED:
        assert getattr(loaded, name) == getattr(model, name), name
    assert "tree" not in params.SAVED and "tree_type" in params.SAVED


def _numpy_scalar(value):
    """The NumPy scalar of a Python setting (bool as np.bool_, int as np.int64, float as
    np.float32, which is exact for every default here)."""
    if isinstance(value, bool):
        return np.bool_(value)
    return np.int64(value) if isinstance(value, int) else np.float32(value)


def test_numpy_scalar_settings_train_save_and_load_as_python_numbers(tmp_path):
    """Settings from a NumPy grid (np.int64, np.float32, np.bool_) are taken as the numbers
    they hold: the constructor keeps Python numbers, and a model file (JSON) saves them, for
    every model; a setting assigned after construction saves too."""
    sentences = [["a", "b", "c", "a"]] * 20
    given = {"max_vocab_size": 1000, "max_final_vocab": 10, "hs": True, "negative": 0}
    numeric = {"int", "int?", "real", "flag"}
    settings = {
        p.name: _numpy_scalar(given.get(p.name, p.default))
        for p in params.PARAMS
        if p.argument and p.kind in numeric and p.name not in ("workers", "epochs", "min_count")
    }
    docs = [hsw2v.TaggedDocument(words, [i]) for i, words in enumerate(sentences)]
    without_sg = {k: v for k, v in settings.items() if k != "sg"}  # Doc2Vec's is dm
    models = [
        (hsw2v.Word2Vec, sentences, settings),
        (hsw2v.FastText, sentences, {**settings, "min_n": np.int64(2), "bucket": np.int32(50)}),
        (hsw2v.Doc2Vec, docs, {**without_sg, "dm": np.int64(0), "dbow_words": np.bool_(True)}),
    ]
    for cls, corpus, kwargs in models:
        model = cls(corpus, min_count=1, workers=1, epochs=1, **kwargs)
        model.sample = np.float32(0.01)  # assigned after construction
        model.save(tmp_path / "m.hsw2v")
        loaded = cls.load(tmp_path / "m.hsw2v")
        for name, value in {**kwargs, "sample": model.sample}.items():
            kept = getattr(model, name)
            assert type(kept) in (int, float, bool) or name == "sample", (cls, name, kept)
            assert kept == value and getattr(loaded, name) == value, (cls, name)
            assert type(getattr(loaded, name)) in (int, float, bool), (cls, name)


def test_gensim_column_names_gensim_attributes():
    gensim = pytest.importorskip("gensim")
    g = gensim.models.Word2Vec([["a", "b"]] * 5, vector_size=4, min_count=1, workers=1)
    for name in params.GENSIM_SETTINGS + params.GENSIM_STATE:
        assert hasattr(g, name), name
    gensim_args = set(inspect.signature(gensim.models.Word2Vec.__init__).parameters)
    assert set(params.GENSIM_SETTINGS) <= gensim_args
    ours = {p.name for p in params.PARAMS if p.argument and p.gensim is None}
    assert {"cache_words", "kernel", "tree"} <= ours


def test_run_spec_fields_come_from_the_table():
    fields = [f.name for f in dataclasses.fields(RunSpec)]
    assert fields[-len(params.TASK) :] == list(params.TASK)
    assert set(params.TASK) == {"batch_words", "cache_words"}  # the seed is the schedule's


def _kernel_params_struct() -> list[str]:
    """The fields of ``ModelView.params`` (``cdef struct Params`` in ``train/_model.pxd``), in
    order."""
    source = (Path(hsw2v.__file__).parent / "_kernels" / "train" / "_model.pxd").read_text()
    body = source.split("cdef struct Params:", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^    (?:int|bint|float|double|int64_t) (\w+)", body, flags=re.MULTILINE)


def test_the_kernels_parameters_come_from_the_table():
    """Each row marked ``in_kernel`` is a field of the kernel's ``Params`` of the same name,
    and each field a row: a row without its field would reach the kernel nowhere (the
    Trainer's fill ignores names it does not know)."""
    assert "window" in params.KERNEL and "compute_loss" in params.KERNEL
    assert sorted(_kernel_params_struct()) == sorted(params.KERNEL)


def test_the_trainer_names_a_missing_kernel_parameter():
    from hsw2v._kernels._inner import Trainer

    model = Word2Vec([["a", "b", "a", "c"]] * 3, min_count=1, vector_size=4, workers=1,
                     epochs=1)  # fmt: skip
    settings = hsw2v.running.trainer.trainer_settings(model)
    args, kwargs = settings.arguments(model.wv.vectors, model.syn1, model.syn1neg)
    *head, given = args
    assert given == params.kernel_params(model)
    Trainer(*head, dict(given), **kwargs)
    for name in params.KERNEL:
        partial = {k: v for k, v in given.items() if k != name}
        with pytest.raises(ValueError, match=f"params must map each.*'{name}'"):
            Trainer(*head, partial, **kwargs)
    with pytest.raises(ValueError, match="params must map each"):
        Trainer(*head, None, **kwargs)
    with pytest.raises(ValueError, match="window must be >= 1, got 0"):
        Trainer(*head, {**given, "window": 0}, **kwargs)


def _train_parser() -> argparse.ArgumentParser:
    parser = cli._build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices["train"]


def test_cli_flags_come_from_the_table():
    parser = _train_parser()
    by_dest = {}
    for action in parser._actions:
        by_dest.setdefault(action.dest, set()).update(action.option_strings)
    for param in params.CLI:
        assert set(param.cli) <= by_dest[param.name], param.name
    defaults = parser.parse_args(["c.txt"])
    for param in params.CLI:
        expected = param.cli_options.get("default", param.default)
        if param.cli_options.get("action") == "store_true":
            expected = False
        assert getattr(defaults, param.name) == expected, param.name


@pytest.mark.parametrize(
    "flag, text",
    [
        ("--window", "0"),
        ("--window", "2147483648"),
        ("--seed", "18446744073709551616"),
        ("--alpha", "nan"),
        ("--sg", "2"),
        ("--workers", "1025"),
        ("--epochs", "0"),
        ("--max-vocab-size", "x"),
    ],
)
def test_cli_flags_are_checked_against_the_table(flag, text):
    parser = _train_parser()
    with pytest.raises(cli.UsageError, match=re.escape(flag)):
        parser.parse_args(["c.txt", flag, text])


def test_fasttext_and_doc2vec_signatures_keep_the_tables_defaults():
    """FastText's and Doc2Vec's gensim signatures repeat Word2Vec's arguments (gensim's order
    and layout, for a drop-in); each such argument's default is the table's, but for Doc2Vec's
    epochs (gensim's 10)."""
    for cls, own, at_least in [(hsw2v.FastText, {}, 28), (hsw2v.Doc2Vec, {"epochs": 10}, 8)]:
        signature = inspect.signature(cls.__init__).parameters
        shared = [n for n in signature if n in params.BY_NAME and params.BY_NAME[n].argument]
        assert len(shared) >= at_least, (cls.__name__, shared)
        for name in shared:
            expected = own.get(name, params.BY_NAME[name].default)
            assert signature[name].default == expected, (cls.__name__, name)
