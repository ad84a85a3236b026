"""The log lines gensim users paste into bug reports and grep for, in gensim's wording: the
"training model with N workers ..." line, the total "training on X raw words (Y effective
words) took Zs" line, the estimated memory, the save and load lines; the vocabulary-update
line when nothing new was added; the progress bar's text."""

import io
import logging
import re

import pytest

from hsw2v import KeyedVectors, Word2Vec
from hsw2v.progress import ProgressBar

SENTENCES = [["alpha", "beta", "gamma", "delta", "beta"], ["gamma", "alpha", "beta"]] * 40


def test_training_logs_gensims_lines(caplog, tmp_path):
    with caplog.at_level(logging.INFO):
        model = Word2Vec(SENTENCES, vector_size=8, min_count=1, workers=2, epochs=2, seed=1)
        path = tmp_path / "m.hsw2v"
        model.save(path)
        Word2Vec.load(path)
        model.wv.save(tmp_path / "wv.hsw2v")
        KeyedVectors.load(tmp_path / "wv.hsw2v")
    text = caplog.text
    assert (
        "training model with 2 workers on 4 vocabulary and 8 features, using sg=0 hs=1 "
        "sample=0.001 negative=0 window=5 shrink_windows=True" in text
    )
    total = re.search(
        r"\d+ training on (\d+) raw words \((\d+) effective words\) took [\d.]+s, [\d]+ "
        r"effective words/s",
        text,
    )
    assert total and int(total.group(1)) == 2 * 320
    memory = model.estimate_memory()["total"]
    line = f"estimated required memory for 4 words and 8 dimensions: {memory} bytes"
    assert text.count(line) == 1
    assert f"saved {path}" in text and f"loading Word2Vec object from {path}" in text
    assert f"loading KeyedVectors object from {tmp_path / 'wv.hsw2v'}" in text


def test_update_that_adds_nothing_says_so(caplog):
    model = Word2Vec(SENTENCES, vector_size=8, min_count=1, workers=1, epochs=1)
    with caplog.at_level(logging.INFO):
        model.build_vocab(SENTENCES[:2], update=True)
    assert "#None" not in caplog.text
    assert "added 0 new unique words" in caplog.text and "the tree is unchanged" in caplog.text


def test_progress_bar_reads_percent_once_and_prints_its_last_line_once():
    pytest.importorskip("tqdm")
    model = Word2Vec(SENTENCES, vector_size=8, min_count=1, workers=1, epochs=1)
    out = io.StringIO()
    model.train(SENTENCES, total_examples=len(SENTENCES), epochs=3, progress=ProgressBar(file=out))
    lines = [line for line in re.split(r"[\r\n]", out.getvalue()) if line.strip()]
    assert "/100%" not in out.getvalue()
    assert lines[-1].startswith("epoch 3/3: 100%|")
    assert sum(line.startswith("epoch 3/3: 100%|") for line in lines) == 1
