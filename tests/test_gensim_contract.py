"""gensim 4.4's contract where gensim code runs unchanged on hsw2v: each test runs the same
code on both libraries (only the import differs) and compares what they do."""

import logging

import numpy as np
import pytest
from conftest import cluster_recovery, planted_corpus

import hsw2v

gensim_models = pytest.importorskip("gensim.models")

LIBRARIES = {"hsw2v": hsw2v, "gensim": gensim_models}
SMALL = dict(vector_size=16, window=3, min_count=1, workers=1, seed=2, epochs=3, sample=0)


@pytest.fixture(scope="module")
def planted():
    return planted_corpus(n_clusters=4, words_per_cluster=8, n_sentences=600, seed=5)


# ------------------------------------------ the objective an explicit hs or negative names
@pytest.mark.parametrize("library", ["hsw2v", "gensim"])
@pytest.mark.parametrize("sg", [0, 1])
def test_hs0_alone_trains_negative_sampling_with_gensims_default(library, sg, planted):
    sentences, clusters = planted
    Word2Vec = LIBRARIES[library].Word2Vec
    model = Word2Vec(sentences, hs=0, sg=sg, compute_loss=True, **SMALL)
    assert (model.hs, model.negative) == (0, 5)
    assert model.syn1neg.shape == model.wv.vectors.shape
    assert np.abs(model.syn1neg).sum() > 0
    assert model.get_latest_training_loss() > 0
    assert cluster_recovery(model.wv, clusters) >= 0.9


# Each way of naming the objective, as gensim 4.4 reads it (its defaults: hs=0, negative=5);
# hsw2v's own default, hierarchical softmax alone, applies only when neither is named.
NAMED_OBJECTIVES = [{"hs": 1}, {"hs": 0}, {"negative": 10}, {"hs": 1, "negative": 3},
                    {"hs": 0, "negative": 7}, {"hs": 1, "negative": 0}]
REFUSED_OBJECTIVES = [{"hs": 0, "negative": 0}, {"negative": 0}]


@pytest.mark.parametrize("named", NAMED_OBJECTIVES, ids=str)
def test_a_named_hs_or_negative_gives_the_other_gensims_default(named):
    ours = hsw2v.Word2Vec(**named, **SMALL)
    theirs = gensim_models.Word2Vec(**named, **SMALL)
    assert (ours.hs, ours.negative) == (theirs.hs, theirs.negative), named


def test_neither_named_is_hierarchical_softmax_alone():
    assert (hsw2v.Word2Vec(**SMALL).hs, hsw2v.Word2Vec(**SMALL).negative) == (1, 0)
    theirs = gensim_models.Word2Vec(**SMALL)
    assert (theirs.hs, theirs.negative) == (0, 5)  # the one documented difference


@pytest.mark.parametrize("named", REFUSED_OBJECTIVES, ids=str)
def test_no_objective_is_refused_as_gensim_refuses_it(named):
    sentences = [["a", "b", "c", "d"]] * 20
    for library in ("hsw2v", "gensim"):
        with pytest.raises(ValueError, match="You must set either 'hs' or 'negative'"):
            LIBRARIES[library].Word2Vec(sentences, **named, **SMALL)
    with pytest.raises(ValueError, match="negative=0 alone leaves hs at gensim's default 0"):
        hsw2v.Word2Vec(**named, **SMALL)


@pytest.mark.parametrize("library", ["hsw2v", "gensim"])
def test_hs1_alone_trains_both_layers_and_gensims_line_is_logged(library, caplog):
    """DeepWalk's ``Word2Vec(walks, hs=1, ...)``: both output layers train, as under gensim,
    with gensim's warning that both are active."""
    sentences = [["a", "b", "c", "d"]] * 20
    with caplog.at_level(logging.INFO):
        model = LIBRARIES[library].Word2Vec(sentences, hs=1, sg=1, **SMALL)
    assert (model.hs, model.negative) == (1, 5)
    assert np.abs(model.syn1).sum() > 0 and np.abs(model.syn1neg).sum() > 0
    assert "Both hierarchical softmax and negative sampling are activated" in caplog.text
    if library == "hsw2v":
        assert "negative takes gensim's default negative=5" in caplog.text
        assert "hierarchical softmax and negative sampling (negative=5)" in caplog.text


def test_negative_alone_trains_negative_sampling_without_the_warning(caplog):
    sentences = [["a", "b", "c", "d"]] * 20
    with caplog.at_level(logging.INFO, logger="hsw2v"):
        model = hsw2v.Word2Vec(sentences, negative=10, sg=1, **SMALL)
    assert (model.hs, model.negative) == (0, 10)
    assert model.syn1.shape == (0, SMALL["vector_size"])
    assert "Both hierarchical softmax" not in caplog.text
    assert "training skip-gram with negative sampling (negative=10)" in caplog.text


@pytest.mark.parametrize("named", [{}, *NAMED_OBJECTIVES], ids=str)
def test_a_saved_model_and_its_gensim_twin_keep_what_it_trained(named, tmp_path):
    sentences = [["a", "b", "c", "d"]] * 20
    model = hsw2v.Word2Vec(sentences, **named, **SMALL)
    model.save(str(tmp_path / "m"))
    loaded = hsw2v.Word2Vec.load(str(tmp_path / "m"))
    g = model.to_gensim()
    back = hsw2v.Word2Vec.from_gensim(g)
    for other in (loaded, g, back):
        assert (other.hs, other.negative) == (model.hs, model.negative), type(other)
    if model.negative:
        np.testing.assert_array_equal(loaded.syn1neg, model.syn1neg)
        np.testing.assert_array_equal(back.syn1neg, model.syn1neg)


# ------------------------------------------------------------------ exception types
def gensim_and_ours_raise(code, namespace):
    """Run ``code`` once per library (``Word2Vec``/``KeyedVectors`` bound to its classes) and
    return the exception each raised."""
    raised = {}
    for library, module in LIBRARIES.items():
        scope = {
            "Word2Vec": module.Word2Vec,
            "KeyedVectors": module.KeyedVectors,
            **namespace(library),
        }
        try:
            exec(code, scope)
        except Exception as exc:  # noqa: BLE001 - the test compares what each raised
            raised[library] = exc
    return raised


@pytest.mark.parametrize(
    "code, gensim_type",
    [
        ("Word2Vec([], **SMALL)", RuntimeError),
        ("Word2Vec([['a', 'b']] * 3, **{**SMALL, 'min_count': 100})", RuntimeError),
        (
            "m = Word2Vec(**{**SMALL, 'min_count': 100}); m.build_vocab([['a', 'b']] * 3)\n"
            "m.train([['a', 'b']] * 3, total_examples=3, epochs=1)",
            RuntimeError,
        ),
        ("KeyedVectors.load_word2vec_format(cut_binary, binary=True)", EOFError),
        ("KeyedVectors.load_word2vec_format(cut_text, binary=False)", EOFError),
        ("Word2Vec.load(kv_file)", AttributeError),
        ("model.load(model_file)", AttributeError),
    ],
    ids=[
        "empty-corpus",
        "filtered-corpus",
        "train-filtered",
        "truncated-binary",
        "truncated-text",
        "load-kv-as-model",
        "load-on-instance",
    ],
)
def test_errors_are_also_gensims_exception_types(code, gensim_type, tmp_path):
    from hsw2v import exceptions

    def files(library):
        module = LIBRARIES[library]
        folder = tmp_path / library
        folder.mkdir(exist_ok=True)
        model = module.Word2Vec([["a", "b", "c", "a"]] * 10, **SMALL)
        model.save(str(folder / "model"))
        model.wv.save(str(folder / "kv"))
        out = {"model": model, "model_file": str(folder / "model"), "kv_file": str(folder / "kv")}
        model.wv.save_word2vec_format(str(folder / "v.bin"), binary=True)
        model.wv.save_word2vec_format(str(folder / "v.txt"), binary=False)
        for kind, cut in (("binary", -5), ("text", None)):
            data = (folder / f"v.{'bin' if kind == 'binary' else 'txt'}").read_bytes()
            if cut is None:  # the header and the first vector only: whole lines missing
                cut = data.index(b"\n", data.index(b"\n") + 1) + 1
            (folder / f"cut.{kind}").write_bytes(data[:cut])
            out[f"cut_{kind}"] = str(folder / f"cut.{kind}")
        return {"SMALL": SMALL, **out}

    raised = gensim_and_ours_raise(code, files)
    assert isinstance(raised.get("gensim"), gensim_type), raised  # what gensim 4.4 does
    ours = raised.get("hsw2v")
    assert isinstance(ours, gensim_type), raised
    # and hsw2v's own class, with hsw2v's message
    assert type(ours).__module__ == exceptions.__name__, type(ours)
    assert isinstance(ours, (ValueError, TypeError))
    try:  # an ``except`` clause written for gensim catches it
        raise ours
    except gensim_type:
        pass


def test_train_on_vectors_without_a_vocabulary_is_a_clear_value_error(tmp_path):
    """gensim 4.4 starts training such a model and its worker threads die (KeyError
    'sample_int'), so its train() never returns; hsw2v refuses before training."""
    sentences = [["a", "b", "c"]] * 20
    model = hsw2v.Word2Vec(sentences, **SMALL)
    model.wv.save_word2vec_format(str(tmp_path / "v.txt"))
    model.wv = hsw2v.KeyedVectors.load_word2vec_format(str(tmp_path / "v.txt"))
    with pytest.raises(ValueError, match="no training vocabulary.*build_vocab"):
        model.train(sentences, total_examples=20, epochs=1)
    other = hsw2v.Word2Vec(sentences, **SMALL)
    kv = hsw2v.KeyedVectors(SMALL["vector_size"])
    kv.add_vectors(["a", "b"], np.ones((2, SMALL["vector_size"])))
    other.wv = kv
    with pytest.raises(ValueError, match="no training vocabulary"):
        other.train(sentences, total_examples=20, epochs=1)
    other.build_vocab(sentences)  # the way out works
    assert other.train(sentences, total_examples=20, epochs=1)[1] == 60


# ------------------------------------------------------------------ files
def test_wv_save_round_trips_code_point_count_without_warnings(tmp_path, caplog):
    model = hsw2v.Word2Vec([["a", "b", "c", "a", "d"]] * 20, **SMALL)
    with caplog.at_level(logging.WARNING):
        model.wv.save(str(tmp_path / "kv"))
        loaded = hsw2v.KeyedVectors.load(str(tmp_path / "kv"))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    for word in model.wv.index_to_key:
        for attr in ("code", "point", "count", "sample_int"):
            ours, back = model.wv.get_vecattr(word, attr), loaded.get_vecattr(word, attr)
            assert np.array_equal(ours, back), (word, attr)
            assert np.asarray(ours).dtype == np.asarray(back).dtype, (word, attr)
    # and gensim reads the same codes and points after the round trip
    g = model.to_gensim()
    for word in model.wv.index_to_key:
        assert loaded.get_vecattr(word, "code").tolist() == g.wv.get_vecattr(word, "code").tolist()


def test_gensim_pickles_name_the_way_out_and_load_only_when_trusted(tmp_path):
    from hsw2v.gensim_compat import load_gensim_pickle

    sentences = [["a", "b", "c", "a"]] * 20
    g = gensim_models.Word2Vec(sentences, **SMALL)  # gensim's defaults: hs=0, negative=5
    g.save(str(tmp_path / "g.model"))
    g.wv.save(str(tmp_path / "g.kv"))
    with pytest.raises(ValueError, match=r"pickle.*Word2Vec\.from_gensim\(.*load_gensim_pickle"):
        hsw2v.Word2Vec.load(str(tmp_path / "g.model"))
    with pytest.raises(ValueError, match=r"pickle.*KeyedVectors\.from_gensim\("):
        hsw2v.KeyedVectors.load(str(tmp_path / "g.kv"))
    for trusted in (False, None, 1, "yes"):
        with pytest.raises(ValueError, match="trusted=True"):
            load_gensim_pickle(str(tmp_path / "g.model"), trusted=trusted)
    model = load_gensim_pickle(str(tmp_path / "g.model"), trusted=True)
    assert isinstance(model, hsw2v.Word2Vec) and (model.hs, model.negative) == (0, 5)
    np.testing.assert_array_equal(model.wv.vectors, g.wv.vectors)
    np.testing.assert_array_equal(model.syn1neg, g.syn1neg)
    model.train(sentences, total_examples=20, epochs=1)  # and it trains on
    kv = load_gensim_pickle(str(tmp_path / "g.kv"), trusted=True)
    assert isinstance(kv, hsw2v.KeyedVectors)
    np.testing.assert_array_equal(kv.vectors, g.wv.vectors)


# ------------------------------------------------------------------ scan_vocab, save, log lines
def test_scan_vocab_returns_total_words_and_corpus_count_as_gensim():
    sentences = [["a", "b", "a"], ["c"], []] * 7
    results = {}
    for library, module in LIBRARIES.items():
        results[library] = module.Word2Vec(**SMALL).scan_vocab(sentences)
    assert results["hsw2v"] == results["gensim"] == (28, 21)


@pytest.mark.parametrize(
    "options",
    [
        {"separately": ["syn1neg"], "sep_limit": 0},
        {"ignore": ["cum_table"]},
        {"ignore": frozenset(["syn1neg"])},
        {"pickle_protocol": 2},
    ],
)
def test_save_accepts_gensims_options_and_says_what_it_does(options, tmp_path, caplog):
    sentences = [["a", "b", "c", "a"]] * 20
    for library, module in LIBRARIES.items():  # the same call works in both
        model = module.Word2Vec(sentences, hs=0, negative=3, **SMALL)
        with caplog.at_level(logging.INFO):
            caplog.clear()
            model.save(str(tmp_path / f"{library}.model"), **options)
            model.wv.save(str(tmp_path / f"{library}.kv"), **options)
        loaded = module.Word2Vec.load(str(tmp_path / f"{library}.model"))
        assert loaded.wv.index_to_key == model.wv.index_to_key
        if library == "hsw2v":
            said = [r for r in caplog.records if r.name == "hsw2v.gensim_compat"]
            assert len(said) == 2, caplog.text  # one line from each save() call
            assert all(str(r.getMessage()).startswith("save(") for r in said)
            if options.get("ignore") == frozenset(["syn1neg"]):  # not honoured: a warning
                assert said[0].levelno == logging.WARNING
                assert "syn1neg stored anyway" in said[0].getMessage()
                np.testing.assert_array_equal(loaded.syn1neg, model.syn1neg)
            else:
                assert all(r.levelno == logging.INFO for r in said)


def warnings_of(caplog, library):
    prefix = "hsw2v" if library == "hsw2v" else "gensim"
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name.startswith(prefix)
    ]


GENSIM_LINES = {
    "both": "Both hierarchical softmax and negative sampling are activated. "
    "This is probably a mistake. You should set either 'hs=0' or 'negative=0' to disable one "
    "of them. ",
    "alpha": "Effective 'alpha' higher than previous training cycles",
    "examples": "EPOCH {}: supplied example count (60) did not equal expected count (50)",
    "words": "EPOCH {}: supplied raw word count (180) did not equal expected count (100)",
}


@pytest.mark.parametrize("library", ["hsw2v", "gensim"])
def test_gensims_warnings_are_logged_in_gensims_words(library, caplog):
    Word2Vec = LIBRARIES[library].Word2Vec
    sentences = [["a", "b", "c"]] * 60
    first_epoch = 1 if library == "hsw2v" else 0  # hsw2v counts epochs from 1 in its logs
    with caplog.at_level(logging.WARNING):
        model = Word2Vec(sentences, hs=1, negative=2, **SMALL)
    assert GENSIM_LINES["both"] in warnings_of(caplog, library)
    assert GENSIM_LINES["alpha"] not in warnings_of(caplog, library)
    caplog.clear()
    model = Word2Vec(sentences, hs=0, **SMALL)
    assert warnings_of(caplog, library) == []  # consistent counts, first training
    with caplog.at_level(logging.WARNING):
        model.train(sentences, total_examples=50, epochs=1)  # a second cycle, wrong count
        model.train(sentences, total_words=100, epochs=1)
    said = warnings_of(caplog, library)
    assert GENSIM_LINES["alpha"] in said
    assert GENSIM_LINES["examples"].format(first_epoch) in said
    assert GENSIM_LINES["words"].format(first_epoch) in said


# ------------------------------------------------------------------ a tutorial, run unchanged
# In the shape of gensim's word2vec tutorial with negative sampling: build_vocab and train in
# steps, queries, save/load, training on, and the training loss with hs=0 and compute_loss.
# Only the import line differs between the two runs.
NS_TUTORIAL = """
import tempfile

sentences = [
    ["human", "interface", "computer"],
    ["survey", "user", "computer", "system", "response", "time"],
    ["eps", "user", "interface", "system"],
    ["system", "human", "system", "eps"],
    ["user", "response", "time"],
    ["trees"],
    ["graph", "trees"],
    ["graph", "minors", "trees"],
    ["graph", "minors", "survey"],
] * 30

model = Word2Vec(min_count=1, vector_size=24, window=3, workers=2, seed=42)
model.build_vocab(sentences)
model.train(sentences, total_examples=model.corpus_count, epochs=model.epochs)
sims = model.wv.most_similar(positive=["graph", "trees"], topn=5)
odd = model.wv.doesnt_match(["graph", "trees", "minors", "human"])

with tempfile.NamedTemporaryFile(prefix="model-", delete=False, dir=tmp) as handle:
    path = handle.name
model.save(path)
loaded = Word2Vec.load(path)
more = [["graph", "survey", "trees"], ["user", "interface", "time"]] * 10
loaded.build_vocab(more, update=True)
loaded.train(more, total_examples=loaded.corpus_count, epochs=loaded.epochs)

loss_model = Word2Vec(
    sentences=sentences, min_count=1, compute_loss=True, hs=0, sg=1, seed=42, vector_size=24,
)
training_loss = loss_model.get_latest_training_loss()

result = dict(
    objective=(model.hs, model.negative, loss_model.hs, loss_model.negative),
    sims=sims, odd=odd, loaded_equal=bool((loaded.wv["human"] != 0).all()),
    loss=training_loss, vocab=len(loaded.wv),
)
"""


@pytest.mark.parametrize("library", ["hsw2v", "gensim"])
def test_negative_sampling_tutorial_runs_unchanged(library, tmp_path):
    header = {
        "hsw2v": "from hsw2v import Word2Vec\n",
        "gensim": "from gensim.models import Word2Vec\n",
    }[library]
    namespace = {"tmp": str(tmp_path)}
    exec(compile(header + NS_TUTORIAL, f"ns-tutorial-{library}", "exec"), namespace)
    result = namespace["result"]
    expected_objective = {"hsw2v": (1, 0, 0, 5), "gensim": (0, 5, 0, 5)}[library]
    assert result["objective"] == expected_objective  # hs=0 alone: negative=5 in both
    assert len(result["sims"]) == 5 and all(isinstance(w, str) for w, _ in result["sims"])
    assert result["odd"] in {"graph", "trees", "minors", "human"}
    assert result["loaded_equal"] and result["vocab"] == 12
    assert result["loss"] > 0


def test_inconsistent_per_key_arrays_in_a_file_are_a_clear_error(tmp_path):
    from hsw2v.persist import save_bundle

    kv = hsw2v.KeyedVectors(2)
    kv.add_vectors(["a", "b"], np.ones((2, 2)))
    meta, arrays = kv._bundle_parts()
    meta["ragged_expandos"] = {"code": ["c_values", "c_lengths"]}
    for lengths in ([1, 5], [-1, 4], [2**62, 2**62 + 3], [1]):
        arrays["c_values"] = np.zeros(3, np.uint8)
        arrays["c_lengths"] = np.array(lengths, np.int64)
        save_bundle(tmp_path / "kv", "KeyedVectors", meta, arrays)
        with pytest.raises(ValueError, match="per-key arrays 'code' do not fit 2 keys"):
            hsw2v.KeyedVectors.load(tmp_path / "kv")


def test_converted_model_continues_gensims_schedule(caplog):
    sentences = [["a", "b", "c"]] * 30
    g = gensim_models.Word2Vec(sentences, **SMALL)
    ours = hsw2v.Word2Vec.from_gensim(g)
    assert ours.min_alpha_yet_reached == pytest.approx(g.min_alpha_yet_reached)
    for library, model in (("gensim", g), ("hsw2v", ours)):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            model.train(sentences, total_examples=30, epochs=1)
        assert GENSIM_LINES["alpha"] in warnings_of(caplog, library), library
