"""The ``hsw2v`` command line, run as a user would: ``python -m hsw2v ...`` in a subprocess."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import cli_env, run_cli

import hsw2v
from hsw2v import cli
from hsw2v.datasets import demo_corpus

HAVE_TQDM = importlib.util.find_spec("tqdm") is not None
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None



def one_error_line(result, status: int = 1) -> str:
    assert result.returncode == status, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("hsw2v: error: ")
    return lines[0]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A small corpus (the first 4,000 verses) and a model trained on it by the CLI."""
    root = tmp_path_factory.mktemp("cli")
    with open(root / "corpus.txt", "w", encoding="utf-8") as fout:
        for verse in demo_corpus(limit=4000):
            fout.write(" ".join(verse) + "\n")
    result = run_cli(
        "train",
        "corpus.txt",
        "-o",
        "model.hsw2v",
        "--sg",
        "1",
        "--size",
        "32",
        "--epochs",
        "2",
        "--workers",
        "2",
        "--word2vec",
        "vectors.bin",
        "--binary",
        "--compute-loss",
        "--no-progress",
        cwd=root,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "wrote model model.hsw2v" in result.stdout
    assert "words/s" in result.stdout
    return root


def test_train_writes_native_model_and_word2vec(workdir):
    model = hsw2v.Word2Vec.load(workdir / "model.hsw2v")
    assert model.sg == 1 and model.vector_size == 32 and model.train_count == 1
    kv = hsw2v.KeyedVectors.load_word2vec_format(workdir / "vectors.bin", binary=True)
    assert kv.index_to_key == model.wv.index_to_key
    assert (kv.vectors == model.wv.vectors).all()


def test_train_word2vec_c_aliases(workdir):
    result = run_cli(
        "train",
        "-train",
        "corpus.txt",
        "--model-out",
        "c.hsw2v",
        "-cbow",
        "1",
        "-size",
        "8",
        "-window",
        "3",
        "-hs",
        "1",
        "-iter",
        "1",
        "-threads",
        "1",
        "-min-count",
        "10",
        "-sample",
        "0",
        "-alpha",
        "0.05",
        "-output",
        "c.txt",
        "-binary",
        "0",
        *(["--progress"] if HAVE_TQDM else []),
        cwd=workdir,
    )
    assert result.returncode == 0, result.stderr
    if HAVE_TQDM:  # the live bar: epochs, words/s, alpha, ETA
        assert "epoch 1/1" in result.stderr and "words/s" in result.stderr
        assert "alpha" in result.stderr and "100%|" in result.stderr and "/100%" not in result.stderr
    model = hsw2v.Word2Vec.load(workdir / "c.hsw2v")
    assert (model.sg, model.vector_size, model.window, model.epochs) == (0, 8, 3, 1)
    assert (model.min_count, model.sample, model.alpha, model.workers) == (10, 0.0, 0.05, 1)
    assert (workdir / "c.txt").read_text().split("\n", 1)[0] == f"{len(model.wv)} 8"


def test_train_verbose_logs_and_plots(workdir):
    args = ["train", "corpus.txt", "-o", "v.hsw2v", "--epochs", "2", "--size", "8", "-v"]
    if HAVE_MATPLOTLIB:
        args += ["--plot-training", "curves.png"]
    result = run_cli(*args, cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert "EPOCH 1: training on" in result.stderr and "EPOCH 2: training on" in result.stderr
    assert " : INFO : " in result.stderr
    if HAVE_MATPLOTLIB:
        assert (workdir / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_similar(workdir):
    result = run_cli("similar", "model.hsw2v", "god", "king", "-n", "3", cwd=workdir)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "god:" and "king:" in lines
    assert len([line for line in lines if line.startswith("  ")]) == 6


def test_similar_reads_word2vec_files_too(workdir, in_workdir):
    assert cli.main(["similar", "model.hsw2v", "god", "-n", "3"]) == 0
    native = in_workdir.readouterr().out
    assert cli.main(["similar", "vectors.bin", "god", "-n", "3"]) == 0
    assert in_workdir.readouterr().out == native


def test_analogy(workdir):
    result = run_cli("analogy", "model.hsw2v", "man", "king", "woman", cwd=workdir)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "man is to king as woman is to:"
    assert len(lines) == 6


def test_predict(workdir):
    if not hasattr(hsw2v.Word2Vec, "predict_output_word"):
        pytest.skip("Word2Vec.predict_output_word is not available yet")
    result = run_cli("predict", "model.hsw2v", "the", "king", "of", "-n", "4", cwd=workdir)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "most probable centre words for: the king of"
    assert len(lines) == 5
    probabilities = [float(line.split()[-1]) for line in lines[1:]]
    assert probabilities == sorted(probabilities, reverse=True)


def test_predict_needs_the_full_model(in_workdir):
    assert cli.main(["predict", "vectors.bin", "king"]) == 1
    assert "full model" in in_workdir.readouterr().err


def test_eval(workdir):
    (workdir / "questions.txt").write_text(
        ": family\nman king woman queen\nfather son mother daughter\n: unknown\nxx yy zz ww\n"
    )
    (workdir / "pairs.tsv").write_text(
        "# word1\tword2\tscore\nking\tprince\t8\ngod\tlord\t9\nwater\tking\t1\nfoo\tbar\t3\n"
    )
    result = run_cli(
        "eval", "model.hsw2v", "--analogies", "questions.txt", "--pairs", "pairs.tsv", cwd=workdir
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "analogies (questions.txt):" in out and "family" in out and "Total accuracy" in out
    assert "spearman" in out and "pearson" in out and "25.0%" in out


def test_convert_round_trip(workdir):
    result = run_cli("convert", "vectors.bin", "vectors.txt", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert "binary -> text" in result.stdout


def test_convert_between_all_formats(workdir, in_workdir):
    assert cli.main(["convert", "vectors.bin", "vectors2.txt"]) == 0
    assert cli.main(["convert", "vectors2.txt", "vectors.hsw2v"]) == 0
    assert cli.main(["convert", "vectors.hsw2v", "out.vec", "--to", "binary"]) == 0
    assert (workdir / "out.vec").read_bytes() == (workdir / "vectors.bin").read_bytes()
    assert cli.main(["convert", "model.hsw2v", "from-model.txt"]) == 0
    assert "native -> text" in in_workdir.readouterr().out
    assert cli.main(["info", "vectors.hsw2v"]) == 0
    assert "word vectors" in in_workdir.readouterr().out


def test_info(workdir):
    result = run_cli("info", "model.hsw2v", cwd=workdir)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    model = hsw2v.Word2Vec.load(workdir / "model.hsw2v")
    assert f"vocabulary     {len(model.wv):,} words" in out
    assert "dimensions     32" in out
    lengths = model.tree.lengths
    assert f"min {lengths.min()}, mean {lengths.mean():.2f}, max {lengths.max()}" in out
    assert "skip-gram, hierarchical softmax, window 5" in out
    assert "2 per train() call; 1 train() calls" in out and "training loss" in out


def test_word2vec_c_line_writes_the_vectors_file_gensim_reads(workdir):
    """word2vec.c's own command line: with its spellings, -output is the vectors file in
    word2vec's format (binary with -binary 1), not hsw2v's model."""
    gensim_models = pytest.importorskip("gensim.models")
    result = run_cli(
        "train", "corpus.txt", "-output", "w2v.bin", "-binary", "1", "-cbow", "0", "-size",
        "100", "-iter", "1", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "wrote binary word2vec vectors w2v.bin" in result.stdout
    assert "wrote model" not in result.stdout
    kv = gensim_models.KeyedVectors.load_word2vec_format(str(workdir / "w2v.bin"), binary=True)
    assert kv.vector_size == 100 and len(kv) > 1000
    ours = hsw2v.KeyedVectors.load_word2vec_format(workdir / "w2v.bin", binary=True)
    assert ours.index_to_key == kv.index_to_key
    assert (ours.vectors == kv.vectors).all()
    # the model too, under hsw2v's own option; the text format without -binary
    result = run_cli(
        "train", "corpus.txt", "-output", "w2v.txt", "-cbow", "0", "-size", "16", "-iter",
        "1", "--model-out", "w2v.hsw2v", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    model = hsw2v.Word2Vec.load(workdir / "w2v.hsw2v")
    text = gensim_models.KeyedVectors.load_word2vec_format(str(workdir / "w2v.txt"))
    assert model.sg == 1 and text.index_to_key == model.wv.index_to_key


def test_help_says_which_spelling_does_what():
    result = run_cli("train", "--help")
    assert result.returncode == 0
    help_text = " ".join(result.stdout.split())
    assert "Which spelling does what: -o, --output and --model-out MODEL write hsw2v's native" in (
        help_text
    )
    assert "word2vec.c's -output FILE, write the word vectors in word2vec's format" in help_text
    assert "-output vectors.bin -binary 1 -cbow 0" in help_text  # an example as word2vec.c's


def test_help_as_a_user_sees_it():
    result = run_cli("train", "--help")
    assert result.returncode == 0 and result.stderr == ""
    assert "usage: hsw2v train" in result.stdout and "examples:" in result.stdout
    for option in ("--sg", "-cbow", "-size", "-iter", "-threads", "-output", "-binary"):
        assert option in result.stdout


@pytest.mark.parametrize(
    "command", ["train", "similar", "analogy", "predict", "eval", "convert", "info", "demo"]
)
def test_every_command_has_help_with_examples(command, capsys):
    assert cli.main([command, "--help"]) == 0
    out, err = capsys.readouterr()
    assert f"usage: hsw2v {command}" in out
    assert "examples:" in out and f"hsw2v {command}" in out.split("examples:")[1]
    assert err == ""


@pytest.fixture
def in_workdir(workdir, monkeypatch, capsys):
    monkeypatch.chdir(workdir)
    return capsys


@pytest.mark.parametrize(
    "args, status, fragment",
    [
        (["train", "corpus.txt"], 2, "nothing to write"),
        (["train", "-o", "x.hsw2v"], 2, "CORPUS"),
        (["train", "corpus.txt", "-o", "x.hsw2v", "--size", "0"], 2, "--size"),
        (["train", "corpus.txt", "-o", "x.hsw2v", "--sg", "2"], 2, "--sg"),
        (["train", "corpus.txt", "-o", "x.hsw2v", "-hs", "0", "-negative", "0"], 2, "--negative"),
        (["train", "corpus.txt", "-o", "x.hsw2v", "--sg", "1", "-cbow", "1"], 2, "contradict"),
        (["train", "corpus.txt", "-o", "x.hsw2v", "--binary"], 2, "--word2vec"),
        (["train", "corpus.txt", "-output", "x.hsw2v"], 2, "-output is the vectors file"),
        (["train", "corpus.txt", "-output", "v.bin", "--word2vec", "w.bin"], 2, "give one"),
        (["train", "corpus.txt", "-o", "no/such/dir/x.hsw2v"], 1, "does not exist"),
        (["train", "missing.txt", "-o", "x.hsw2v"], 1, "missing.txt: no such file"),
        (["similar", "missing.hsw2v", "king"], 1, "missing.hsw2v: no such file"),
        (["similar", "model.hsw2v", "notaword"], 1, "'notaword'"),
        (["similar", "corpus.txt", "king"], 1, "not a model"),
        (["similar", "model.hsw2v"], 2, "WORD"),
        (["similar", "model.hsw2v", "king", "--topn", "-1"], 2, "--topn"),
        (["analogy", "model.hsw2v", "man", "king"], 2, "C"),
        (["analogy", "model.hsw2v", "man", "king", "qqq"], 1, "'qqq'"),
        (["eval", "model.hsw2v"], 2, "--analogies"),
        (["eval", "model.hsw2v", "--pairs", "missing.tsv"], 1, "missing.tsv: no such file"),
        (["convert", "model.hsw2v", "out.unknown"], 2, "--to"),
        (["convert", "missing.bin", "out.txt"], 1, "missing.bin: no such file"),
        (["info", "missing.hsw2v"], 1, "no such file"),
    ],
)
def test_user_mistakes_are_one_line(workdir, in_workdir, args, status, fragment):
    assert cli.main(args) == status
    out, err = in_workdir.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("hsw2v: error: ")
    assert fragment in err
    assert not (workdir / "x.hsw2v").exists()


@pytest.mark.parametrize(
    "args, status, fragment",
    [
        (["train", "corpus.txt", "-o", "x.hsw2v", "--window", "zero"], 2, "--window"),
        (["train", "missing.txt", "-o", "x.hsw2v"], 1, "missing.txt: no such file"),
        (["similar", "model.hsw2v", "notaword"], 1, "'notaword'"),
    ],
)
def test_user_mistakes_in_a_subprocess(workdir, args, status, fragment):
    assert fragment in one_error_line(run_cli(*args, cwd=workdir), status)


def test_corrupt_model_is_one_line(workdir, in_workdir):
    data = (workdir / "model.hsw2v").read_bytes()
    (workdir / "broken.hsw2v").write_bytes(data[: len(data) // 2])
    assert cli.main(["info", "broken.hsw2v"]) == 1
    err = in_workdir.readouterr().err
    assert err.count("\n") == 1 and "broken.hsw2v" in err


def test_ctrl_c_during_train_keeps_existing_model(workdir):
    """Ctrl-C while training: exit 130, one clear line, the earlier model file untouched.
    The run cannot end before the signal, however slow the machine (10^6 epochs): a Ctrl-C
    that is lost fails by the timeout instead of by a finished run. (The one lost now and
    then, dropped by CPython in a finalizer between epochs, is pinned in
    tests/test_ctrl_c_dropped.py.)"""
    target = workdir / "model.hsw2v"
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hsw2v",
            "train",
            "corpus.txt",
            "-o",
            "model.hsw2v",
            "--epochs",
            "1000000",
            "--workers",
            "1",
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        cwd=workdir,
    )
    try:
        first = process.stderr.readline()  # printed once the vocabulary is built
        assert "training" in first, first
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines() == [
        "hsw2v: interrupted: training stopped, nothing written (model.hsw2v left as it was)"
    ]
    assert out == ""
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before
    assert [p.name for p in workdir.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    "flags, objective",
    [([], (1, 0)), (["--hs", "1"], (1, 5)), (["-negative", "3"], (0, 3)),
     (["--hs", "0"], (0, 5)), (["--hs", "1", "--negative", "2"], (1, 2))],
    ids=["neither", "hs", "negative", "hs0", "both"],
)
def test_train_reads_hs_and_negative_as_gensim_does(in_workdir, flags, objective):
    """A flag named alone gives the other gensim's (and word2vec.c's) default; neither:
    hierarchical softmax alone. The model keeps what it trained."""
    args = ["train", "corpus.txt", "-o", "obj.hsw2v", "--size", "8", "--epochs", "1"]
    assert cli.main([*args, "--workers", "1", "--no-progress", *flags]) == 0
    model = hsw2v.Word2Vec.load("obj.hsw2v")
    assert (model.hs, model.negative) == objective


@pytest.mark.parametrize(
    "flags, message",
    [(["--negative", "0"], "--negative 0 alone leaves --hs at gensim's default 0"),
     (["--hs", "0", "--negative", "0"], "--hs 0 with --negative 0")],
)
def test_train_refuses_no_objective(in_workdir, flags, message):
    assert cli.main(["train", "corpus.txt", "-o", "none.hsw2v", *flags]) == 2
    err = in_workdir.readouterr().err
    assert message in err and "give --hs 1 or --negative N" in err
    assert not os.path.exists("none.hsw2v")
