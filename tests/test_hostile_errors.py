"""Hostile input, unhelpful-error class: each failure is one clear line that names the file
(and line, and limit) at fault, raised before any long work, and gensim's own errors where
gensim has one."""

from __future__ import annotations

import bz2
import gzip
import os
import subprocess
import sys

import numpy as np
import pytest

from hsw2v import KeyedVectors, LineSentence, PathLineSentences, Word2Vec, corpora
from hsw2v.cli import main
from hsw2v.corpora import CorpusReadError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = "the cat sat on the mat\nthe dog sat on the log\n" * 300


def cli(*argv, timeout=120):
    """The command line in a child process: (status, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "hsw2v", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout, proc.stderr


def one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("hsw2v: error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr[-2000:]
    return errors[0]


def truncated_gz(path):
    data = gzip.compress(TEXT.encode())
    path.write_bytes(data[: len(data) // 2])
    return path


def damaged_bz2(path):
    data = bytearray(bz2.compress(TEXT.encode()))
    data[len(data) // 2 : len(data) // 2 + 8] = b"\x00" * 8
    path.write_bytes(bytes(data))
    return path


# ---------------------------------------------------------------- compressed corpora
@pytest.mark.parametrize("make", [truncated_gz, damaged_bz2], ids=["gz", "bz2"])
@pytest.mark.parametrize("reader", [LineSentence, PathLineSentences])
def test_a_damaged_compressed_corpus_names_the_file_and_line(make, reader, tmp_path):
    path = make(tmp_path / ("c.txt.gz" if make is truncated_gz else "c.txt.bz2"))
    with pytest.raises(CorpusReadError, match=rf"{path.name}.*line \d+"):
        list(reader(str(path)))
    with pytest.raises(CorpusReadError, match=path.name):
        Word2Vec(reader(str(path)), vector_size=8, min_count=1, workers=1)


@pytest.mark.parametrize("make", [truncated_gz, damaged_bz2], ids=["gz", "bz2"])
def test_the_cli_on_a_damaged_corpus_says_one_line(make, tmp_path):
    path = make(tmp_path / ("c.txt.gz" if make is truncated_gz else "c.txt.bz2"))
    status, _, err = cli("train", str(path), "-o", str(tmp_path / "m.hsw2v"), "--min-count", "1")
    assert status == 1
    assert path.name in one_error_line(err)
    assert not (tmp_path / "m.hsw2v").exists()


def test_a_line_over_the_limit_names_file_line_and_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(corpora, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "long.txt"
    path.write_text("short line\n" + "word " * 400 + "\nafter\n")
    with pytest.raises(CorpusReadError, match=r"long.txt.*line 2 is longer than 1000 bytes"):
        list(LineSentence(str(path)))


def test_an_inflating_stream_without_newlines_stops_at_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(corpora, "MAX_LINE_BYTES", 1 << 20)
    path = tmp_path / "bomb.txt.gz"
    path.write_bytes(gzip.compress(b"a" * (8 << 20)))  # 8 MiB of one line, 8 KiB on disk
    with pytest.raises(CorpusReadError, match=r"bomb.txt.gz.*line 1 is longer than 1048576"):
        list(LineSentence(str(path)))


def test_bytes_that_are_not_utf8_name_the_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("ok line\ncaf\xe9 au lait\n".encode("latin-1"))
    with pytest.raises(CorpusReadError, match=r"latin1.txt.*line 2 is not UTF-8"):
        list(LineSentence(str(path)))


# ---------------------------------------------------------------- files that are not models
@pytest.mark.parametrize("command", [["info"], ["similar", "--topn", "2"]])
def test_the_cli_on_dev_zero_as_a_model_says_one_line(command):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    argv = [command[0], "/dev/zero", *command[1:]]
    if command[0] == "similar":
        argv = ["similar", "/dev/zero", "cat"]
    status, _, err = cli(*argv, timeout=60)
    assert status == 1
    assert "/dev/zero" in one_error_line(err) and "not a regular file" in err


# ---------------------------------------------------------------- output checked first
@pytest.mark.parametrize("where", ["missing folder", "name too long", "dangling link"])
def test_an_output_that_cannot_be_written_fails_before_training(where, tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT)
    if where == "missing folder":
        output = tmp_path / "nowhere" / "m.hsw2v"
    elif where == "name too long":
        output = tmp_path / ("m" * 300 + ".hsw2v")
    else:
        output = tmp_path / "latest.hsw2v"
        os.symlink(tmp_path / "gone" / "v1.hsw2v", output)
    for flag in ("-o", "--word2vec"):
        status = main(["train", str(corpus), flag, str(output), "--min-count", "1"])
        err = capsys.readouterr().err
        assert status == 1, err
        line = one_error_line(err)
        assert "cannot write there" in line or "does not exist" in line, line
        assert "EPOCH" not in err and "training" not in err.lower(), err


# ---------------------------------------------------------------- 17. gensim's contract
def test_train_on_assigned_keyed_vectors_raises_gensims_value_errors():
    kv = KeyedVectors(4)
    kv.add_vectors(["a", "b"], np.ones((2, 4), dtype=np.float32))
    model = Word2Vec(vector_size=4)
    model.wv = kv
    with pytest.raises(ValueError, match="total_examples or total_words"):
        model.train([["a", "b"]], epochs=1)
    with pytest.raises(ValueError, match="epochs"):
        model.train([["a", "b"]], total_examples=1)
    with pytest.raises(ValueError, match="no training vocabulary"):
        model.train([["a", "b"]], total_examples=1, epochs=1)
    with pytest.raises(RuntimeError, match="build the vocabulary first"):
        Word2Vec(vector_size=4).train([["a", "b"]], total_examples=1, epochs=1)
