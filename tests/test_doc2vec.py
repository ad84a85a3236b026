"""Doc2Vec: gensim's API and meaning, documents and tags, inference, files, refusals."""

import threading

import numpy as np
import pytest

from hsw2v import Doc2Vec, TaggedDocument, TaggedLineDocument, Word2Vec

TOPICS = {
    "pets": "cat dog kitten puppy fur paw pet leash",
    "space": "star planet orbit rocket moon comet galaxy telescope",
    "food": "bread cheese apple soup salad butter pasta spice",
}


def corpus(n_per_topic=60, seed=0, tags=lambda n, topic: [n]):
    """Documents of three topics, 12 words drawn from their topic's eight."""
    r = np.random.default_rng(seed)
    docs = []
    for _ in range(n_per_topic):
        for topic, words in TOPICS.items():
            words = words.split()
            docs.append(TaggedDocument([words[i] for i in r.integers(0, 8, 12)],
                                       tags(len(docs), topic)))  # fmt: skip
    return docs


def topic_of(n):
    return list(TOPICS)[n % 3]


@pytest.mark.parametrize("dm", [0, 1])
@pytest.mark.parametrize("objective", [{}, {"hs": 0, "negative": 5}])
def test_document_vectors_group_documents_by_topic(dm, objective):
    """Each document's nearest documents are of its topic, for PV-DBOW nearly always, for
    PV-DM well above chance (1/3; gensim's PV-DM scores 0.55-0.69 on this corpus, its
    PV-DBOW 1.0). Without subsampling: 24 words of about 4 % each would be mostly dropped."""
    docs = corpus()
    model = Doc2Vec(docs, dm=dm, vector_size=16, min_count=1, epochs=20, workers=1, seed=3,
                    sample=0, **objective)  # fmt: skip
    assert model.dv.vectors.shape == (len(docs), 16)
    hits = 0
    for n in range(0, len(docs), 7):
        neighbours = [k for k, _ in model.dv.most_similar(n, topn=5)]
        hits += sum(topic_of(k) == topic_of(n) for k in neighbours)
    assert hits / (5 * len(range(0, len(docs), 7))) > (0.45 if dm else 0.9)
    if not dm:  # an unseen document lands among its topic's documents
        inferred = model.infer_vector("cat puppy leash fur paw dog".split())
        top = [k for k, _ in model.dv.most_similar([inferred], topn=10)]
        assert sum(topic_of(k) == "pets" for k in top) >= 8


def test_pv_dbow_without_dbow_words_leaves_the_word_vectors_alone():
    docs = corpus(20)
    model = Doc2Vec(dm=0, vector_size=8, min_count=1, epochs=3, workers=1)
    model.build_vocab(docs)
    before = model.wv.vectors.copy()
    model.train(docs, total_examples=model.corpus_count, epochs=model.epochs)
    assert np.array_equal(model.wv.vectors, before)
    with_words = Doc2Vec(docs, dm=0, dbow_words=1, vector_size=8, min_count=1, epochs=3,
                         workers=1)  # fmt: skip
    assert not np.allclose(with_words.wv.vectors, before)


def test_tags_ints_strs_several_and_unseen():
    """gensim's tag rows: ints are their own rows (0..max), strs follow in first-seen order;
    a document may carry several tags, and a tag unseen by build_vocab is skipped."""
    docs = [TaggedDocument(["a", "b", "c"], [2, "x"]), TaggedDocument(["b", "c"], ["y"]),
            TaggedDocument(["c", "a"], [0, "x"])] * 10  # fmt: skip
    model = Doc2Vec(docs, vector_size=4, min_count=1, epochs=2, workers=1)
    assert model.dv.index_to_key == [0, 1, 2, "x", "y"]
    assert model.dv.expandos["doc_count"].tolist() == [10, 0, 10, 20, 10]
    assert model.dv["x"].shape == (4,) and np.array_equal(model.dv[3], model.dv["x"])
    row1 = model.dv[1].copy()  # no document carries tag 1: its row never trains
    model.train([TaggedDocument(["a", "b"], ["unseen", 2])], total_examples=1, epochs=1)
    assert np.array_equal(model.dv[1], row1)
    assert "unseen" not in model.dv


def test_corpus_file_is_tagged_by_line_number(tmp_path):
    path = tmp_path / "docs.txt"
    lines = [" ".join(d.words) for d in corpus(10)]
    lines[3] = ""  # a blank line is an empty document and still counts
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = Doc2Vec(corpus_file=str(path), vector_size=8, min_count=1, epochs=2, workers=2)
    assert model.dv.index_to_key == list(range(len(lines)))
    assert model.corpus_count == len(lines)
    listed = list(TaggedLineDocument(str(path)))
    assert listed[3] == TaggedDocument([], [3]) and listed[4].tags == [4]


def test_one_worker_is_deterministic_and_seeds_differ():
    docs = corpus(15)

    def train(seed):
        return Doc2Vec(docs, vector_size=8, min_count=1, epochs=3, workers=1, seed=seed)

    a, b, c = train(1), train(1), train(2)
    assert np.array_equal(a.dv.vectors, b.dv.vectors)
    assert np.array_equal(a.wv.vectors, b.wv.vectors)
    assert not np.allclose(a.dv.vectors, c.dv.vectors)
    words = "cat dog fur".split()
    assert np.array_equal(a.infer_vector(words), b.infer_vector(words))


def test_infer_vector_leaves_the_model_and_runs_in_threads():
    docs = corpus(15)
    for dm in (0, 1):
        model = Doc2Vec(docs, dm=dm, vector_size=8, min_count=1, epochs=3, workers=1,
                        hs=1, negative=3)  # fmt: skip
        arrays = [a.copy() for a in (model.wv.vectors, model.dv.vectors, model.syn1,
                                     model.syn1neg)]  # fmt: skip
        queries = [d.words for d in docs[:40]]
        alone = [model.infer_vector(q) for q in queries]
        results = [None] * len(queries)

        def work(k0, results=results, model=model, queries=queries):
            for k in range(k0, len(queries), 4):
                results[k] = model.infer_vector(queries[k])

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for x, y in zip(alone, results, strict=True):
            assert np.array_equal(x, y)
        now = (model.wv.vectors, model.dv.vectors, model.syn1, model.syn1neg)
        for before, after in zip(arrays, now, strict=True):
            assert np.array_equal(before, after)
    assert model.infer_vector(["never", "seen"]).shape == (8,)  # the seeded start
    assert model.infer_vector(["cat"], epochs=0).shape == (8,)


def test_save_load_round_trip_and_mmap(tmp_path):
    docs = corpus(10, tags=lambda n, topic: [n, topic])
    model = Doc2Vec(docs, dm=0, dbow_words=1, vector_size=8, min_count=1, epochs=2, workers=1)
    path = tmp_path / "d.hsw2v"
    model.save(str(path))
    loaded = Doc2Vec.load(str(path))
    assert type(loaded) is Doc2Vec and loaded.dm is False and loaded.dbow_words == 1
    assert loaded.dv.index_to_key == model.dv.index_to_key
    assert np.array_equal(loaded.dv.vectors, model.dv.vectors)
    assert np.array_equal(loaded.wv.vectors, model.wv.vectors)
    assert np.array_equal(loaded.infer_vector(["cat", "dog"]), model.infer_vector(["cat", "dog"]))
    mapped = Doc2Vec.load(str(path), mmap="r")
    assert not mapped.dv.vectors.flags.writeable
    assert mapped.dv.most_similar("pets", topn=1)[0][0] in model.dv.index_to_key
    loaded.train(docs, total_examples=len(docs), epochs=1)  # it trains on
    with pytest.raises(ValueError):  # a Doc2Vec file is not a Word2Vec one
        Word2Vec.load(str(path))


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"dm_concat": 1}, NotImplementedError, "dm_concat=1 is not supported"),
        ({"dv": object()}, NotImplementedError, "dv= and dv_mapfile="),
        ({"sentences": []}, TypeError, "documents="),
        ({"documents": "a b c"}, TypeError, "iterable of TaggedDocument"),
        ({"documents": [["a", "b"]]}, TypeError, "not a TaggedDocument"),
        ({"documents": [TaggedDocument("a b", [0])]}, TypeError, "words are a string"),
        ({"documents": [TaggedDocument(["a"], 0)]}, TypeError, "tags are 0, not a list"),
        ({"documents": [TaggedDocument(["a"], [-1])]}, ValueError, "must be >= 0"),
        ({"documents": [TaggedDocument(["a"], [[1]])]}, TypeError, "unhashable tag"),
    ],
)
def test_bad_input_gets_a_clear_error(kwargs, error, match):
    with pytest.raises(error, match=match):
        Doc2Vec(**kwargs, min_count=1, workers=1)


def test_refusals_and_gensim_names():
    model = Doc2Vec(corpus(5), vector_size=4, min_count=1, epochs=1, workers=1, dm_mean=0)
    assert model.dm and not model.dbow and model.cbow_mean == 0
    assert str(model).startswith("Doc2Vec<dm/s,d4,hs,w5,mc1")
    with pytest.raises(NotImplementedError, match="update=True"):
        model.build_vocab(corpus(5), update=True)
    with pytest.raises(TypeError, match="list of str tokens"):
        model.infer_vector("cat dog")
    sim = model.similarity_unseen_docs(["cat", "dog"], ["cat", "dog"])
    assert sim == pytest.approx(1.0)
    report = model.estimate_memory()  # gensim's keys for the document vectors
    assert report["doctag_syn0"] == len(model.dv) * 4 * 4
    assert report["total"] == sum(v for k, v in report.items() if k != "total")
    # gensim's lookup: a word's vector, else a tag's (an int in range is a word row first,
    # as gensim's `in` takes it)
    assert np.array_equal(model["cat"], model.wv["cat"])
    assert np.array_equal(model[["cat", "dog"]][1], model.wv["dog"])
