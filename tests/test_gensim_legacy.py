"""Word2Vec model files of gensim 3 and older, as gensim 4.4's own test data ships them:
``Word2Vec.from_gensim`` and ``load_gensim_pickle(..., trusted=True)`` convert every one that
gensim 4.4 itself loads (such files lack the settings added later, such as ``comment`` and
``compute_loss``), and the converted model queries, trains on and saves."""

import glob
import logging
import os
import warnings

import numpy as np
import pytest

from hsw2v import Word2Vec
from hsw2v.gensim_compat import load_gensim_pickle

# gensim 4.4's test_word2vec.py names these; old_w2v_models/ holds one file per release.
NAMED = [
    "word2vec_old",
    "word2vec_old_sep",
    "w2v-lee-v0.12.0",
    "word2vec_3.3",
    "model-from-gensim-3.8.0.w2v",
    "word2vec_pre_kv_py2",
    "word2vec_pre_kv_py3",
    "word2vec_pre_kv_py3_4",
    "word2vec_pre_kv_sep_py2",
    "word2vec_pre_kv_sep_py3",
    "word2vec_pre_kv_sep_py3_4",
]


def legacy_files():
    try:
        from gensim.test.utils import datapath
    except ImportError:
        return []
    folder = os.path.dirname(datapath("word2vec_old"))
    found = sorted(glob.glob(os.path.join(folder, "old_w2v_models", "*.mdl")))
    return found + [os.path.join(folder, name) for name in NAMED]


def gensim_load(path):
    """The gensim Word2Vec in ``path``, or None where gensim 4.4 itself cannot load it (the
    0.12 / 0.13.0-0.13.3 and pre-KeyedVectors pickles: "'Word2Vec' object has no attribute
    'wv'")."""
    from gensim.models import Word2Vec as GensimWord2Vec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return GensimWord2Vec.load(path)
        except AttributeError:
            return None


FILES = legacy_files()


def test_gensim_ships_the_legacy_files_and_loads_most():
    pytest.importorskip("gensim")
    loadable = [path for path in FILES if gensim_load(path) is not None]
    assert len(FILES) >= 30 and len(loadable) >= 16, (len(FILES), len(loadable))


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_legacy_model_converts_queries_trains_and_saves(path, tmp_path, caplog):
    g = gensim_load(path)
    if g is None:
        pytest.skip("gensim 4.4 cannot load this file either")
    caplog.set_level(logging.WARNING)
    for model in (Word2Vec.from_gensim(g), load_gensim_pickle(path, trusted=True)):
        assert type(model) is Word2Vec
        assert model.wv.index_to_key == list(g.wv.index_to_key)
        np.testing.assert_array_equal(model.wv.vectors, g.wv.vectors)
        assert (model.hs, model.negative, model.sg) == (g.hs, g.negative, g.sg)
        if not hasattr(g, "comment"):  # a setting the file predates takes its default
            assert model.comment is None
        word = model.wv.index_to_key[0]
        assert len(model.wv.most_similar(word, topn=2)) == 2
        before = model.wv.vectors.copy()
        sentences = [list(model.wv.index_to_key) * 50] * 20  # subsampling keeps ~6 %
        model.train(sentences, total_examples=len(sentences), epochs=1)
        assert not np.array_equal(before, model.wv.vectors)
        model.save(str(tmp_path / "m.hsw2v"))
        again = Word2Vec.load(str(tmp_path / "m.hsw2v"))
        np.testing.assert_array_equal(again.wv.vectors, model.wv.vectors)
