"""The command line and gensim's files: ``hsw2v convert --to gensim`` writes what gensim's
``load()`` reads (a whole model stays trainable), and ``info`` / ``similar`` on a gensim
pickle say how to convert it instead of "neither an hsw2v file nor a word2vec file"."""

from __future__ import annotations

import numpy as np
import pytest

from hsw2v import Word2Vec, cli
from tests.conftest import gensim_models

SENTENCES = [["king", "queen", "man", "woman", "crown"], ["man", "woman", "child"]] * 30


@pytest.fixture
def native_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = Word2Vec(SENTENCES, vector_size=8, min_count=1, workers=1, epochs=2, seed=1)
    model.save("model.hsw2v")
    model.wv.save("wv.hsw2v")
    return model


def test_convert_to_gensim_writes_a_model_gensim_loads_and_trains(native_model, capsys):
    assert cli.main(["convert", "model.hsw2v", "model.gensim", "--to", "gensim"]) == 0
    assert "load it with gensim's Word2Vec.load()" in capsys.readouterr().out
    loaded = gensim_models.Word2Vec.load("model.gensim")
    assert loaded.wv.index_to_key == native_model.wv.index_to_key
    np.testing.assert_array_equal(loaded.wv.vectors, native_model.wv.vectors)
    loaded.train(SENTENCES, total_examples=len(SENTENCES), epochs=1)  # gensim trains on


def test_convert_keyed_vectors_to_gensim(native_model):
    assert cli.main(["convert", "wv.hsw2v", "wv.gensim", "--to", "gensim"]) == 0
    loaded = gensim_models.KeyedVectors.load("wv.gensim")
    np.testing.assert_array_equal(loaded["king"], native_model.wv["king"])


@pytest.mark.parametrize("command", [["info"], ["similar", "--", "king"]])
def test_gensim_pickle_on_the_command_line_names_the_way_out(native_model, capsys, command):
    native_model.to_gensim().save("gensim.model")
    args = [command[0], "gensim.model", *command[2:]]
    assert cli.main(args) != 0
    err = capsys.readouterr().err
    assert "a pickle, as gensim's save() writes" in err
    assert "load_gensim_pickle(path, trusted=True)" in err
    assert "neither an hsw2v file" not in err


def test_train_help_prints_each_default_once_and_names_the_objective(capsys):
    assert cli.main(["train", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "(default: None)" not in out
    assert "CPUs) (default" not in out and "(default 0) (default" not in out  # not twice
    assert "except the objective: hierarchical softmax (--hs 1 --negative 0)" in out
    assert "(default: 0.025)" in out and "training threads (default: number of CPUs)" in out
