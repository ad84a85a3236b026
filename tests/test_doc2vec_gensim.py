"""Doc2Vec beside gensim's: conversion both ways, and the command line."""

import numpy as np
import pytest
from conftest import run_cli
from test_doc2vec import corpus

from hsw2v import Doc2Vec

gensim_doc2vec = pytest.importorskip("gensim.models.doc2vec")


@pytest.mark.parametrize("dm", [0, 1])
def test_to_gensim_and_back_keeps_every_array(dm):
    docs = corpus(10, tags=lambda n, topic: [n, topic])
    model = Doc2Vec(docs, dm=dm, vector_size=8, min_count=1, epochs=2, workers=1, hs=1,
                    negative=3)  # fmt: skip
    g = model.to_gensim()
    assert isinstance(g, gensim_doc2vec.Doc2Vec) and g.dm == bool(dm)
    assert g.dv.index_to_key == model.dv.index_to_key
    assert np.array_equal(g.dv.vectors, model.dv.vectors)
    assert np.array_equal(g.wv.vectors, model.wv.vectors)
    assert np.array_equal(g.syn1, model.syn1) and np.array_equal(g.syn1neg, model.syn1neg)
    assert g.dv.most_similar("pets", topn=1)  # gensim queries it
    assert g.infer_vector(["cat", "dog"]).shape == (8,)  # and infers with it
    gensim_docs = [gensim_doc2vec.TaggedDocument(d.words, d.tags) for d in docs]
    g.train(gensim_docs, total_examples=len(docs), epochs=1)  # and trains on
    back = Doc2Vec.from_gensim(g)
    assert type(back) is Doc2Vec and back.dm == bool(dm)
    assert back.dv.index_to_key == g.dv.index_to_key
    for ours, theirs in ((back.dv.vectors, g.dv.vectors), (back.wv.vectors, g.wv.vectors),
                         (back.syn1, g.syn1), (back.syn1neg, g.syn1neg)):  # fmt: skip
        assert np.array_equal(ours, theirs)
    back.train(docs, total_examples=len(docs), epochs=1)


def test_from_gensim_refuses_other_models():
    from gensim.models import Word2Vec as GensimWord2Vec

    g = GensimWord2Vec([["a", "b"]] * 10, vector_size=4, min_count=1, workers=1, epochs=1)
    with pytest.raises(TypeError, match="expected a gensim Doc2Vec"):
        Doc2Vec.from_gensim(g)


def test_the_same_code_trains_on_both():
    """The same lines give both libraries document vectors that group the topics
    (PV-DBOW, no subsampling on 24 words)."""
    docs = corpus(40)
    settings = dict(dm=0, vector_size=16, min_count=1, epochs=20, workers=1, seed=3, sample=0)
    ours = Doc2Vec(docs, **settings)
    theirs = gensim_doc2vec.Doc2Vec(
        [gensim_doc2vec.TaggedDocument(d.words, d.tags) for d in docs], **settings
    )
    for model in (ours, theirs):
        top = [k for k, _ in model.dv.most_similar(0, topn=10)]
        assert sum(k % 3 == 0 for k in top) >= 9, type(model).__module__


def test_command_line_trains_and_queries_documents(tmp_path):
    lines = [" ".join(d.words) for d in corpus(30)]
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "docs.hsw2v"
    done = run_cli("train", "--model", "doc2vec", str(path), "-o", str(out), "--sg", "1",
                   "--min-count", "1", "--epochs", "15", "--sample", "0", "--workers", "1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Doc2Vec PV-DBOW" in done.stderr and "documents" in done.stderr
    model = Doc2Vec.load(str(out))
    assert model.dv.index_to_key == list(range(len(lines)))
    shown = run_cli("similar", str(out), "0", "--docs", "-n", "3")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("document 0:")
    neighbours = [int(line.split()[0]) for line in shown.stdout.splitlines()[1:4]]
    assert all(n % 3 == 0 for n in neighbours)  # the same topic as line 0
    missing = run_cli("similar", str(out), "99999", "--docs")
    assert missing.returncode != 0 and "document tags not in" in missing.stderr
    words = run_cli("train", str(path), "-o", str(tmp_path / "w.hsw2v"), "--dbow-words")
    assert words.returncode != 0 and "--model doc2vec" in words.stderr
