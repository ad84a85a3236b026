"""``hsw2v train --model fasttext`` (and fastText's ``skipgram`` / ``cbow``) with fastText's own
option spellings, and the query commands on FastText files: words outside the vocabulary
answered from their character n-grams."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import cli_env, run_cli

import hsw2v
import hsw2v.fasttext
from hsw2v import FastText, KeyedVectors, Word2Vec, cli

WORDS = "king queen man woman crown kingdom kings child prince princess royal throne".split()
FASTTEXT_LINE = (
    "train --model fasttext -input corpus.txt -output ft -minn 2 -maxn 4 -bucket 1000 -dim 16 "
    "-ws 3 -epoch 2 -loss ns -neg 3 -thread 1 -lr 0.05 -minCount 1 -t 0.01 -cbow 0"
).split()


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    """A 300-line corpus of twelve words, in a fresh working folder."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    lines = (" ".join(rng.choice(WORDS, size=8)) for _ in range(300))
    (tmp_path / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def _train(*args: str) -> int:
    return cli.main([*args, "--no-progress"])


def test_fasttext_spellings_set_the_model_and_output_writes_model_and_vec(corpus):
    result = run_cli(*FASTTEXT_LINE, cwd=corpus)
    assert result.returncode == 0, result.stderr
    model = FastText.load(corpus / "ft.hsw2v")
    settings = {
        "min_n": 2, "max_n": 4, "bucket": 1000, "vector_size": 16, "window": 3, "epochs": 2,
        "sg": 1, "hs": 0, "negative": 3, "workers": 1, "alpha": 0.05, "min_count": 1,
        "sample": 0.01,
    }  # fmt: skip
    assert {name: getattr(model, name) for name in settings} == settings
    assert "FastText skip-gram (character 2- to 4-grams in 1,000 buckets)" in result.stderr
    vec = KeyedVectors.load_word2vec_format(corpus / "ft.vec")  # fastText's .vec: text
    assert vec.index_to_key == model.wv.index_to_key
    np.testing.assert_allclose(vec.vectors, model.wv.vectors, rtol=1e-5, atol=1e-6)
    # fastText's own .bin: the same model, read back through Facebook's format
    from hsw2v.fasttext import load_facebook_model

    facebook = load_facebook_model(corpus / "ft.bin")
    assert facebook.wv.index_to_key == model.wv.index_to_key
    np.testing.assert_allclose(facebook.wv.input_matrix, model.wv.input_matrix)
    np.testing.assert_allclose(facebook.wv["unseen"], model.wv["unseen"], atol=1e-6)


@pytest.mark.parametrize(
    "loss, expected",
    [(["-loss", "hs"], (1, 0)), (["-loss", "ns"], (0, 5)), (["-loss", "ns", "-neg", "2"], (0, 2))],
)
def test_loss_chooses_the_objective(corpus, loss, expected):
    assert _train("train", "corpus.txt", "--model", "fasttext", "-o", "m.hsw2v", "-minCount",
                  "1", "-bucket", "100", "-epoch", "1", "-thread", "1", *loss) == 0  # fmt: skip
    model = FastText.load("m.hsw2v")
    assert (model.hs, model.negative) == expected


@pytest.mark.parametrize("command, sg", [("skipgram", 1), ("cbow", 0)])
def test_fasttext_commands_train_fasttext(corpus, command, sg):
    assert _train(command, "-input", "corpus.txt", "-output", "p", "-minCount", "1",
                  "-bucket", "100", "-epoch", "1", "-thread", "1") == 0  # fmt: skip
    model = FastText.load("p.hsw2v")
    assert (model.sg, model.bucket, model.min_n, model.max_n) == (sg, 100, 3, 6)
    assert (corpus / "p.vec").is_file()


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "corpus.txt", "-o", "m.hsw2v", "-minn", "2"], "--min-n/-minn: only FastText"),
        (["train", "corpus.txt", "-o", "m.hsw2v", "--model", "word2vec", "-bucket", "9"],
         "--bucket/-bucket: only FastText has character n-grams; add --model fasttext"),
        (["cbow", "-input", "corpus.txt", "-output", "p", "--sg", "1"], "'hsw2v cbow' trains CBOW"),
        (["skipgram", "-input", "corpus.txt", "-output", "p", "-o", "m.hsw2v"], "give -output"),
        (["skipgram", "-input", "corpus.txt", "-output", "p", "-binary", "1"], "in text"),
        (["skipgram", "-input", "corpus.txt", "-output", "p", "-loss", "hs", "-neg", "5"],
         "for both give --hs 1 --negative 5"),
        (["skipgram", "-input", "corpus.txt", "-output", "p", "-loss", "ns", "--hs", "1"],
         "give one"),
        (["skipgram", "-input", "corpus.txt", "-output", "p", "-loss", "softmax"],
         "invalid choice: 'softmax'"),
        (["skipgram", "-input", "corpus.txt", "-output", "p", "-minn", "-1"],
         "min_n must be an integer in [0, 1024], got -1"),
    ],
)  # fmt: skip
def test_usage_mistakes_are_one_line_and_status_2(corpus, capsys, args, message):
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1, err
    assert not list(corpus.glob("p.*")) and not (corpus / "m.hsw2v").exists()


def test_word2vec_stays_the_default(corpus):
    assert _train("train", "corpus.txt", "-o", "m.hsw2v", "--min-count", "1", "--epochs", "1",
                  "--workers", "1") == 0  # fmt: skip
    assert type(Word2Vec.load("m.hsw2v")) is Word2Vec


@pytest.fixture
def models(corpus):
    """A FastText model (and its vectors alone) and a Word2Vec model, trained by the CLI."""
    common = ["-input", "corpus.txt", "-minCount", "1", "-epoch", "2", "-thread", "1"]
    assert _train("skipgram", *common, "-output", "ft", "-bucket", "1000", "-dim", "16") == 0
    assert _train("train", *common, "-o", "w2v.hsw2v", "-dim", "16") == 0
    FastText.load("ft.hsw2v").wv.save("ftkv.hsw2v")
    return corpus


@pytest.mark.parametrize("path", ["ft.hsw2v", "ftkv.hsw2v"])
def test_similar_answers_for_a_word_outside_a_fasttext_vocabulary(models, capsys, path):
    assert cli.main(["similar", path, "kingz", "-n", "3"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "kingz:" and len(lines) == 4, out
    assert all(line.split()[0] in WORDS for line in lines[1:])
    assert f"not in the vocabulary of {path}, vectors from character n-grams: 'kingz'" in err


def test_analogy_answers_for_words_outside_a_fasttext_vocabulary(models, capsys):
    assert cli.main(["analogy", "ft.hsw2v", "man", "king", "womanz", "-n", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "man is to king as womanz is to:" and len(lines) == 3


def test_a_word2vec_model_still_refuses_an_unknown_word(models, capsys):
    assert cli.main(["similar", "w2v.hsw2v", "kingz"]) == 1
    assert "word not in the vocabulary of w2v.hsw2v: 'kingz'" in capsys.readouterr().err


def test_info_names_a_fasttext_model_and_its_subwords(models, capsys):
    assert cli.main(["info", "ft.hsw2v"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"contents +FastText model", out)
    assert re.search(r"subwords +character 3- to 6-grams in 1,000 buckets", out)


# ------------------------------------------------------------------ docs/cli.md's example

DOCS = Path(hsw2v.__file__).resolve().parents[1] / "docs" / "cli.md"


def _volatile_aside(line: str) -> str:
    """A line with what changes from run to run, or machine to machine, made one token:
    times, speeds, the thread count, the words kept by subsampling, and the neighbours with
    their scores (a line of its own each: their number is compared)."""
    if line.startswith("  "):
        return "  WORD SCORE"
    line = re.sub(r"[\d,]+ words/s", "N words/s", line)
    line = re.sub(r"\b[\d.]+ s\b", "N s", line)
    line = re.sub(r"\([\d,]+ after subsampling\)", "(N after subsampling)", line)
    return re.sub(r"on \d+ threads", "on N threads", line)


def _sessions(page: str) -> list[tuple[list[str], list[str]]]:
    """``(command, shown lines)`` of each ``$ hsw2v`` line of the page's FastText example."""
    block = re.search(r"```text\n(\$ hsw2v skipgram .*?)```", page, re.S).group(1)
    found = []
    for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
        command, *shown = part.rstrip("\n").split("\n")
        found.append((command.split(), shown))
    return found


def test_cli_page_fasttext_example_prints_what_the_page_shows(tmp_path):
    """The page's FastText example, run as written on the bundled corpus: the same lines
    (counts exactly; times, speeds and scores aside; of the neighbours, the first)."""
    from hsw2v.datasets import demo_corpus_path

    with gzip.open(demo_corpus_path(), "rb") as src:
        (tmp_path / "corpus.txt").write_bytes(src.read())
    for command, shown in _sessions(DOCS.read_text(encoding="utf-8")):
        assert command[0] == "hsw2v"
        result = subprocess.run(
            [sys.executable, "-m", "hsw2v", *command[1:]],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # each line is flushed: the order of a terminal
            text=True,
            env=cli_env(),
            timeout=300,
        )
        assert result.returncode == 0, result.stdout
        printed = result.stdout.splitlines()
        # PREFIX.bin: written once hsw2v can write fastText's format, noted until then
        printed, shown = (
            [line for line in lines if ".bin" not in line] for lines in (printed, shown)
        )
        assert [_volatile_aside(line) for line in printed] == [
            _volatile_aside(line) for line in shown
        ], result.stdout
        for first, found in zip(_firsts(shown), _neighbours(printed), strict=True):
            assert first in found, result.stdout  # the page's nearest word is among them


def _neighbours(lines: list[str]) -> list[list[str]]:
    """The words listed under each heading (``kingz:``) of a query's output."""
    groups: list[list[str]] = []
    for line in lines:
        if line.startswith("  "):
            groups[-1].append(line.split()[0])
        elif line.endswith(":"):
            groups.append([])
    return groups


def _firsts(lines: list[str]) -> list[str]:
    return [group[0] for group in _neighbours(lines)]
