"""Tests for the bundled demo corpus, the demo report and the ``hsw2v`` command line."""

from __future__ import annotations

import gzip
import importlib
import io
from pathlib import Path

import pytest
from conftest import run_cli

import hsw2v
from hsw2v import cli, demo
from hsw2v.corpora import LineSentence
from hsw2v.datasets import demo_corpus, demo_corpus_path


def _extension_importable() -> bool:
    try:
        importlib.import_module("hsw2v._kernels._inner")
    except ImportError:
        return False
    return True


HAVE_EXTENSION = _extension_importable()


# ------------------------------------------------------------------------------- datasets


def test_demo_corpus_path_is_the_installed_gzip_file():
    path = Path(demo_corpus_path())
    assert path.is_file()
    assert path.name == "kjv.txt.gz"
    assert path.parent.parent == Path(hsw2v.__file__).resolve().parent
    with gzip.open(path, "rt", encoding="utf-8") as fin:
        assert fin.readline().split()[:3] == ["in", "the", "beginning"]


def test_demo_corpus_is_a_line_sentence_over_the_verses():
    corpus = demo_corpus()
    assert isinstance(corpus, LineSentence)
    verses = list(corpus)
    assert len(verses) == 31102
    assert sum(len(v) for v in verses) == 791450
    assert verses[0][:4] == ["in", "the", "beginning", "god"]
    assert all(w == w.lower() for v in verses[:500] for w in v)
    assert list(demo_corpus(limit=2)) == verses[:2]


# ----------------------------------------------------------------------------------- demo


def test_demo_report_with_gensim_model():
    gensim = pytest.importorskip("gensim")
    report = io.StringIO()
    model = demo.run(workers=2, epochs=1, out=report, _model_class=gensim.models.Word2Vec)
    text = report.getvalue()
    assert isinstance(model, gensim.models.Word2Vec)
    assert model.sg == 1 and model.hs == 1 and model.epochs == 1
    assert model.wv.vector_size == 100 and model.window == 5
    assert "31,102 verses, 791,450 words" in text
    assert f"{len(model.wv):,} words" in text
    assert "words/s" in text
    assert "nearest neighbours" in text
    lines = text.splitlines()
    for word in demo.NEIGHBOUR_WORDS:
        line = next(line for line in lines if line.split()[:1] == [word])
        neighbours = [w for w, _ in model.wv.most_similar(word, topn=5)]
        # the neighbours printed are the model's five nearest words, best first
        assert [part.split()[0] for part in line.split(None, 1)[1].split(", ")] == neighbours
    for positive, negative in demo.ANALOGIES:
        assert demo._describe_analogy(positive, negative) in text


# what the demo's analogies should answer (hsw2v/demo.py: measured over 8 trainings)
ANSWERS = {"he - his + her": "she", "sons - son + daughter": "daughters",
           "men - man + woman": "women"}  # fmt: skip


@pytest.mark.skipif(
    not HAVE_EXTENSION, reason="compiled extension hsw2v._kernels._inner is not built"
)
def test_the_demo_model_answers_its_analogies():
    """The analogies the report shows are ones the demo's own model answers: each expected
    word among the first three (first in 23 of 24 measured answers), and the report prints the
    model's answers. (``king - man + woman`` and ``son - man + woman``, shown before, failed
    this: ``queen`` first in 2 of 8 trainings, ``daughter`` in the first three in none of 3.)"""
    report = io.StringIO()
    model = demo.run(workers=2, out=report)  # the demo's own settings: 5 epochs
    labels = {demo._describe_analogy(p, n): (p, n) for p, n in demo.ANALOGIES}
    assert set(labels) == set(ANSWERS)
    lines = report.getvalue().splitlines()
    for label, (positive, negative) in labels.items():
        top = model.wv.most_similar(positive=list(positive), negative=list(negative), topn=3)
        assert ANSWERS[label] in [word for word, _ in top], (label, top)
        line = next(line for line in lines if line.strip().startswith(label))
        assert line.split("~ ", 1)[1].split()[0] == top[0][0]


def test_demo_rejects_bad_arguments():
    with pytest.raises(ValueError, match="epochs"):
        demo.run(epochs=0, out=io.StringIO())
    with pytest.raises(ValueError, match="workers"):
        demo.run(workers=-1, out=io.StringIO())


@pytest.mark.skipif(
    not HAVE_EXTENSION, reason="compiled extension hsw2v._kernels._inner is not built"
)
def test_cli_demo_trains_with_hsw2v():
    result = run_cli("demo", "--epochs", "1", "--workers", "2", timeout=600)
    assert result.returncode == 0, result.stderr
    assert "nearest neighbours" in result.stdout
    assert "words/s" in result.stdout
    for word in demo.NEIGHBOUR_WORDS:
        assert any(line.split()[:1] == [word] for line in result.stdout.splitlines())


# ------------------------------------------------------------------------------------ cli


def test_cli_help():
    result = run_cli("--help")
    assert result.returncode == 0
    assert "usage: hsw2v" in result.stdout
    assert "demo" in result.stdout
    assert result.stderr == ""


def test_cli_demo_help():
    result = run_cli("demo", "--help")
    assert result.returncode == 0
    assert "--workers" in result.stdout and "--epochs" in result.stdout


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "required"),
        (["demo", "--workers", "0"], "--workers"),
        (["demo", "--epochs", "many"], "--epochs"),
        (["demo", "--no-such-option"], "--no-such-option"),
    ],
)
def test_cli_usage_errors_are_one_line(args, fragment):
    result = run_cli(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("hsw2v: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in result.stderr


def test_main_returns_exit_status(capsys):
    assert cli.main(["demo", "--epochs", "-2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--epochs" in err
    assert cli.main(["--version"]) == 0
    assert hsw2v.__version__ in capsys.readouterr().out
