"""KeyedVectors: compared with gensim's on the same vectors, file formats, errors, save/load."""

import gzip
import os
import struct
import warnings

import numpy as np
import pytest
from conftest import gensim_models

from hsw2v.keyedvectors import KeyedVectors

DIM = 16


def datapath(name):
    """gensim's bundled test file ``name``; skips the test where gensim is not installed."""
    return pytest.importorskip("gensim.test.utils").datapath(name)


def gensim_datapath_or_none(name):
    """The same at import time: None where gensim is not installed (the tests that use the
    files then skip, through :func:`datapath` or :func:`make_pair`)."""
    try:
        from gensim.test.utils import datapath as gensim_datapath
    except ImportError:
        return None
    return gensim_datapath(name)


QUESTIONS = gensim_datapath_or_none("questions-words.txt")
WORDSIM = gensim_datapath_or_none("wordsim353.tsv")


def build_vectors(seed=3):
    """Words of the analogy and word-pair test sets, with vectors that solve many analogies.

    Within a section of questions-words.txt, the second word of a pair is the first plus a
    section offset plus noise; word-pair partners are mixed by their human score. A few
    case variants ("athens" after "Athens") exercise case-insensitive lookups.
    """
    rng = np.random.default_rng(seed)
    vecs = {}

    def put(word, vec):
        vecs.setdefault(word, vec)

    offset = None
    with open(QUESTIONS, encoding="utf8") as fin:
        for line in fin:
            if line.startswith(":"):
                offset = rng.standard_normal(DIM)
                continue
            a, b, c, d = line.split()
            for x, y in ((a, b), (c, d)):
                if x not in vecs and y not in vecs:
                    put(x, rng.standard_normal(DIM))
                if x in vecs:
                    put(y, vecs[x] + offset + 0.6 * rng.standard_normal(DIM))
                else:
                    put(x, vecs[y] - offset + 0.6 * rng.standard_normal(DIM))
    with open(WORDSIM, encoding="utf8") as fin:
        for line in fin:
            parts = line.split("\t")
            if line.startswith("#") or len(parts) != 3:
                continue
            a, b, score = parts[0], parts[1], float(parts[2]) / 10
            put(a, rng.standard_normal(DIM))
            put(b, vecs[a] * score + rng.standard_normal(DIM) * (1 - score))
    for word in ("athens", "GREECE", "king"):
        put(word, rng.standard_normal(DIM))
    keys = list(vecs)
    return keys, np.array([vecs[k] for k in keys], dtype=np.float32)


if QUESTIONS:
    KEYS, VECTORS = build_vectors()
else:  # placeholders for the parameter lists only: every test that uses them needs gensim
    KEYS, VECTORS = [f"w{i}" for i in range(500)], np.ones((500, DIM), np.float32)
COUNTS = np.random.default_rng(5).integers(1, 50, len(KEYS))


def make_pair(keys=KEYS, vectors=VECTORS, counts=None):
    """The same vectors in an hsw2v and a gensim KeyedVectors."""
    gensim_kv = gensim_models.KeyedVectors  # skips the test without gensim
    ours, theirs = KeyedVectors(vectors.shape[1]), gensim_kv(vectors.shape[1])
    ours.add_vectors(keys, vectors)
    theirs.add_vectors(keys, vectors)
    if counts is not None:
        for key, count in zip(keys, counts, strict=True):
            ours.set_vecattr(key, "count", int(count))
            theirs.set_vecattr(key, "count", int(count))
    return ours, theirs


@pytest.fixture(scope="module")
def pair():
    return make_pair()


def assert_same_ranking(got, want):
    if isinstance(want, np.ndarray):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
        return
    assert [k for k, _ in got] == [k for k, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=1e-6, atol=1e-7)
    assert all(type(s) is float for _, s in got)


# ---------------------------------------------------------------- queries against gensim
MOST_SIMILAR_CASES = [
    dict(positive="king"),
    dict(positive=["king", "woman"], negative=["man"], topn=5),
    dict(positive=[("king", 2.0), ("woman", 0.5)], negative=[("man", -1.5)]),
    dict(positive=["Athens"], topn=None),
    dict(positive=["Athens"], restrict_vocab=200, topn=20),
    dict(positive=["Paris"], clip_start=100, clip_end=600, topn=7),
    dict(positive=[VECTORS[10]], topn=4),
    dict(positive=[VECTORS[10], "Paris"], negative=[VECTORS[20]], topn=6),
    dict(positive=[3], topn=5),
    dict(negative=["king"], topn=3),
    dict(positive="king", topn=0),
]


@pytest.mark.parametrize("kwargs", MOST_SIMILAR_CASES)
def test_most_similar_matches_gensim(pair, kwargs):
    ours, theirs = pair
    assert_same_ranking(ours.most_similar(**kwargs), theirs.most_similar(**kwargs))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(positive=["king", "woman"], negative=["man"]),
        dict(positive="Paris", topn=3),
        dict(positive=["Paris"], topn=None),
        dict(positive=["Paris", "Berlin"], negative=["France"], topn=25),
        dict(positive=[VECTORS[5] / np.linalg.norm(VECTORS[5])], topn=4),
    ],
)
def test_most_similar_cosmul_matches_gensim(pair, kwargs):
    ours, theirs = pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # gensim calls its init_sims()
        want = theirs.most_similar_cosmul(**kwargs)
    assert_same_ranking(ours.most_similar_cosmul(**kwargs), want)


def test_similar_by_aliases_match_gensim(pair):
    ours, theirs = pair
    assert_same_ranking(ours.similar_by_word("Tokyo", 4), theirs.similar_by_word("Tokyo", 4))
    assert_same_ranking(
        ours.similar_by_key("Tokyo", topn=None), theirs.similar_by_key("Tokyo", topn=None)
    )
    vec = VECTORS[42] * 3
    assert_same_ranking(
        ours.similar_by_vector(vec, restrict_vocab=300),
        theirs.similar_by_vector(vec, restrict_vocab=300),
    )


def test_pairwise_scores_match_gensim(pair):
    ours, theirs = pair
    for a, b in [("king", "queen"), ("Paris", "France"), ("king", "king"), ("athens", "Athens")]:
        got, want = ours.similarity(a, b), theirs.similarity(a, b)
        assert type(got) is type(want) and got == pytest.approx(want, rel=1e-6)
        assert ours.distance(a, b) == pytest.approx(theirs.distance(a, b), abs=1e-6)
    groups = (["king", "man", "boy"], ["queen", "woman"])
    assert ours.n_similarity(*groups) == pytest.approx(theirs.n_similarity(*groups), rel=1e-6)
    with pytest.raises(ZeroDivisionError):
        ours.n_similarity([], ["king"])


def test_distances_and_cosine_similarities_match_gensim(pair):
    ours, theirs = pair
    np.testing.assert_allclose(ours.distances("king"), theirs.distances("king"), atol=1e-6)
    others = ["queen", "Paris", "man"]
    np.testing.assert_allclose(
        ours.distances("king", others), theirs.distances("king", others), atol=1e-6
    )
    np.testing.assert_allclose(
        ours.distances(VECTORS[7], others), theirs.distances(VECTORS[7], others), atol=1e-6
    )
    np.testing.assert_allclose(
        KeyedVectors.cosine_similarities(VECTORS[0], VECTORS[:50]),
        gensim_models.KeyedVectors.cosine_similarities(VECTORS[0], VECTORS[:50]),
    )


def test_centrality_queries_match_gensim(pair):
    ours, theirs = pair
    words = ["king", "queen", "man", "woman", "Paris"]
    assert ours.doesnt_match(words) == theirs.doesnt_match(words)
    got, want = ours.rank_by_centrality(words), theirs.rank_by_centrality(words)
    assert [w for _, w in got] == [w for _, w in want]
    np.testing.assert_allclose([s for s, _ in got], [s for s, _ in want], rtol=1e-6)
    # unknown words are skipped, as in gensim
    assert ours.doesnt_match(words + ["not-a-word"]) == theirs.doesnt_match(words)
    assert ours.closer_than("king", "queen") == theirs.closer_than("king", "queen")
    assert ours.rank("king", "Paris") == theirs.rank("king", "Paris")
    candidates = ["queen", "Paris", "dog"]
    assert ours.most_similar_to_given("king", candidates) == theirs.most_similar_to_given(
        "king", candidates
    )
    assert ours.relative_cosine_similarity("king", "queen") == pytest.approx(
        theirs.relative_cosine_similarity("king", "queen"), rel=1e-6
    )


def test_mean_vector_matches_gensim(pair):
    ours, theirs = pair
    for kwargs in [
        dict(keys=["king", "queen", "nope"]),
        dict(keys=["king", VECTORS[3]], weights=[2.0, -1.0], pre_normalize=False),
        dict(keys=["king", "queen"], post_normalize=True),
    ]:
        np.testing.assert_allclose(
            ours.get_mean_vector(**kwargs), theirs.get_mean_vector(**kwargs), rtol=1e-6
        )
    with pytest.raises(KeyError, match="word 'nope' not in vocabulary"):
        ours.get_mean_vector(["king", "nope"], ignore_missing=False)
    with pytest.raises(ValueError, match="same number"):
        ours.get_mean_vector(["king"], weights=[1.0, 2.0])


def test_getitem_matches_gensim(pair):
    ours, theirs = pair
    np.testing.assert_array_equal(ours["king"], theirs["king"])
    np.testing.assert_array_equal(ours[["king", "Paris", 5]], theirs[["king", "Paris", 5]])
    np.testing.assert_array_equal(
        ours.get_vector("king", norm=True), theirs.get_vector("king", norm=True)
    )
    assert not ours["king"].flags.writeable
    assert ours[[]].shape == (0, DIM)


# ---------------------------------------------------------------- benchmarks against gensim
@pytest.fixture(scope="module")
def small_questions(tmp_path_factory):
    """Every 9th question of questions-words.txt (all section headers kept), plus a malformed
    line that both implementations skip."""
    path = tmp_path_factory.mktemp("eval") / "questions.txt"
    with open(QUESTIONS, encoding="utf8") as fin:
        lines = fin.readlines()
    kept = [ln for i, ln in enumerate(lines) if ln.startswith(":") or i % 9 == 0]
    kept.insert(3, "only three words\n")
    path.write_text("".join(kept), encoding="utf8")
    return str(path)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(restrict_vocab=400, case_insensitive=False),
        dict(restrict_vocab=800, dummy4unknown=True),
    ],
)
def test_evaluate_word_analogies_matches_gensim(pair, small_questions, kwargs):
    ours, theirs = pair
    score, sections = ours.evaluate_word_analogies(small_questions, **kwargs)
    want_score, want_sections = theirs.evaluate_word_analogies(small_questions, **kwargs)
    assert score == want_score
    assert sections == want_sections
    assert 0.05 < score < 0.95  # the vectors solve some analogies and fail others
    assert sections[-1]["section"] == "Total accuracy"


def test_evaluate_word_analogies_needs_a_section(tmp_path, pair):
    path = tmp_path / "bad.txt"
    path.write_text("a b c d\n", encoding="utf8")
    with pytest.raises(ValueError, match="Missing section header"):
        pair[0].evaluate_word_analogies(str(path))
    with pytest.raises(ValueError, match="similarity_function"):
        pair[0].evaluate_word_analogies(str(path), similarity_function="nearest")


def test_evaluate_word_analogies_with_cosmul(pair, small_questions):
    score, sections = pair[0].evaluate_word_analogies(
        small_questions, similarity_function="most_similar_cosmul"
    )
    assert 0.05 < score < 0.95
    assert len(sections[-1]["correct"]) + len(sections[-1]["incorrect"]) > 1000


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(restrict_vocab=700),
        dict(restrict_vocab=700, dummy4unknown=True),
        dict(case_insensitive=False),
    ],
)
def test_evaluate_word_pairs_matches_gensim(pair, kwargs):
    ours, theirs = pair
    pearson, spearman, oov = ours.evaluate_word_pairs(WORDSIM, **kwargs)
    want_pearson, want_spearman, want_oov = theirs.evaluate_word_pairs(WORDSIM, **kwargs)
    np.testing.assert_allclose(tuple(pearson), tuple(want_pearson), rtol=1e-9)
    np.testing.assert_allclose(tuple(spearman), tuple(want_spearman), rtol=1e-9)
    assert oov == want_oov
    if "restrict_vocab" in kwargs:
        assert oov > 0
    if not kwargs.get("dummy4unknown"):
        assert pearson[0] > 0.3


def test_evaluate_word_pairs_with_nothing_known(tmp_path):
    kv = KeyedVectors(2)
    kv.add_vectors(["x"], [[1.0, 0.0]])
    with pytest.raises(ValueError, match="No valid similarity judgements"):
        kv.evaluate_word_pairs(datapath("wordsim353.tsv"))


# ---------------------------------------------------------------- errors
def test_unknown_keys_raise_key_error(pair):
    ours, _ = pair
    message = "word 'nope' not in vocabulary"
    calls = [
        lambda: ours["nope"],
        lambda: ours[["king", "nope"]],
        lambda: ours.get_vector("nope"),
        lambda: ours.get_index("nope"),
        lambda: ours.get_vecattr("nope", "count"),
        lambda: ours.similarity("king", "nope"),
        lambda: ours.distance("nope", "king"),
        lambda: ours.most_similar("nope"),
        lambda: ours.most_similar(positive=["king"], negative=["nope"]),
        lambda: ours.most_similar_cosmul(["king", "nope"]),
        lambda: ours.distances("king", ["queen", "nope"]),
        lambda: ours.similar_by_word("nope"),
    ]
    for call in calls:
        with pytest.raises(KeyError) as info:
            call()
        assert info.value.args == (message,)
    assert "nope" not in ours and not ours.has_index_for("nope")
    assert ours.get_index("nope", default=-1) == -1


def test_bad_queries_raise_value_error(pair):
    ours, _ = pair
    with pytest.raises(ValueError, match="no input"):
        ours.most_similar()
    with pytest.raises(ValueError, match="no input"):
        ours.most_similar(positive=[], negative=[])
    with pytest.raises(ValueError, match=r"shape \(16,\)"):
        ours.most_similar(positive=[np.ones(DIM + 1)])
    with pytest.raises(ValueError, match=r"shape \(16,\)"):
        ours.similar_by_vector(np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(16,\)"):
        ours.most_similar_cosmul(positive=[np.ones(4)])
    with pytest.raises(ValueError, match=r"shape \(16,\)"):
        ours.distances(np.ones(2))
    with pytest.raises(ValueError, match="no input"):
        ours.most_similar_cosmul(negative=["king"])
    with pytest.raises(ValueError, match="empty list"):
        ours.doesnt_match(["nope", "nada"])


# ---------------------------------------------------------------- building and attributes
def test_construction_and_preallocated_slots():
    kv = KeyedVectors(3, count=2, dtype=np.float64)
    assert kv.vector_size == 3 and kv.vectors.shape == (2, 3) and kv.vectors.dtype == np.float64
    assert kv.index_to_key == [None, None] and kv.key_to_index == {} and kv.expandos == {}
    assert kv.norms is None
    assert kv.add_vector("a", [1, 2, 3]) == 0
    assert kv.add_vector("b", [4, 5, 6]) == 1
    with pytest.warns(UserWarning, match="costly"):
        assert kv.add_vector("c", [7, 8, 9]) == 2
    assert kv.index_to_key == ["a", "b", "c"] and kv.key_to_index == {"a": 0, "b": 1, "c": 2}
    np.testing.assert_array_equal(kv.vectors, np.arange(1, 10).reshape(3, 3))
    assert str(kv) == "KeyedVectors<vector_size=3, 3 keys>"


def test_add_vectors_replace_extras_and_setitem():
    kv = KeyedVectors(2)
    kv.add_vectors(["a", "b"], np.array([[1, 0], [0, 1]]), extras={"count": np.array([5, 6])})
    kv.fill_norms()
    kv.add_vectors(["b", "c"], [[9, 9], [2, 2]], extras={"count": np.array([60, 7])})
    assert kv.norms is None  # recomputed after any change
    np.testing.assert_array_equal(kv["b"], [0, 1])  # kept: replace=False
    assert kv.expandos["count"].tolist() == [5, 6, 7]
    kv.add_vectors(["b", "d"], [[9, 9], [3, 3]], extras={"count": np.array([60, 8])}, replace=True)
    np.testing.assert_array_equal(kv["b"], [9, 9])
    assert kv.expandos["count"].tolist() == [5, 60, 7, 8]
    kv["e"] = np.array([1.0, 1.0])
    kv[["a", "f"]] = np.array([[4.0, 4.0], [5.0, 5.0]])
    assert kv.index_to_key == ["a", "b", "c", "d", "e", "f"]
    np.testing.assert_array_equal(kv["a"], [4, 4])
    assert len(kv.expandos["count"]) == len(kv)  # attributes stay aligned with the keys
    with pytest.raises(ValueError, match="shape"):
        kv.add_vectors(["g"], [[1.0, 2.0, 3.0]])


def test_get_index_and_vecattrs():
    kv = KeyedVectors(1)
    kv.add_vectors(["a", "b", "c"], [[1.0], [2.0], [3.0]])
    assert kv.get_index("c") == 2 and kv.get_index(1) == 1 and kv.get_index(np.int32(0)) == 0
    with pytest.raises(KeyError):
        kv.get_index(3)
    kv.set_vecattr("b", "count", 10)
    assert kv.expandos["count"].dtype == np.int64
    assert kv.expandos["count"].tolist() == [0, 10, 0]
    assert kv.get_vecattr("b", "count") == 10
    kv.set_vecattr("a", "label", "first")
    assert kv.get_vecattr("a", "label") == "first"
    kv.set_vecattr("a", "weight", 0.5)
    with pytest.raises(TypeError, match="conflicts"):
        kv.set_vecattr("a", "count", 1.5)
    kv.allocate_vecattrs(["flag"], [np.uint8])
    assert kv.expandos["flag"].dtype == np.uint8 and len(kv.expandos["flag"]) == 3


def test_norms_and_normalisation():
    kv = KeyedVectors(2)
    kv.add_vectors(["a", "b"], [[3.0, 4.0], [0.0, 2.0]])
    kv.fill_norms()
    np.testing.assert_allclose(kv.norms, [5.0, 2.0])
    np.testing.assert_allclose(kv.get_normed_vectors(), [[0.6, 0.8], [0.0, 1.0]])
    np.testing.assert_allclose(kv.get_vector("a", norm=True), [0.6, 0.8])
    kv.vectors[1] = [0.0, 4.0]
    kv.fill_norms()
    assert kv.norms[1] == 2.0  # cached until forced
    kv.fill_norms(force=True)
    assert kv.norms[1] == 4.0
    kv.unit_normalize_all()
    np.testing.assert_allclose(kv.vectors, [[0.6, 0.8], [0.0, 1.0]], rtol=1e-6)
    np.testing.assert_array_equal(kv.norms, [1.0, 1.0])


def test_resize_and_sort_like_gensim():
    ours, theirs = make_pair(KEYS[:30], VECTORS[:30], COUNTS[:30])
    ours.sort_by_descending_frequency()
    theirs.sort_by_descending_frequency()
    assert ours.index_to_key == theirs.index_to_key
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)
    np.testing.assert_array_equal(ours.expandos["count"], theirs.expandos["count"])
    for kv in (ours, theirs):
        kv.index_to_key += ["new1", "new2"]
        kv.resize_vectors(seed=4)
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)
    assert ours.vectors.shape == (32, DIM)


# ---------------------------------------------------------------- word2vec formats
def read_plain(path):
    path = str(path)
    return gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(prefix="w_"),
        dict(write_header=False),
        dict(total_vec=5000),
        dict(sort_attr="nothing"),
    ],
)
@pytest.mark.parametrize("counts", [None, COUNTS[:300]])
def test_save_word2vec_format_is_byte_identical_to_gensim(tmp_path, binary, kwargs, counts):
    keys = KEYS[:300] + ["日本語", "café"]
    vectors = np.vstack([VECTORS[:300], [np.full(DIM, 1e-8), np.full(DIM, -3.5e7)]]).astype(
        np.float32
    )
    ours, theirs = make_pair(keys, vectors)
    if counts is not None:
        for kv in (ours, theirs):
            for key, count in zip(keys, list(counts) + [3, 3], strict=True):
                kv.set_vecattr(key, "count", int(count))
    ours.save_word2vec_format(tmp_path / "ours.txt", binary=binary, **kwargs)
    theirs.save_word2vec_format(str(tmp_path / "gensim.txt"), binary=binary, **kwargs)
    assert read_plain(tmp_path / "ours.txt") == read_plain(tmp_path / "gensim.txt")
    assert sorted(os.listdir(tmp_path)) == ["gensim.txt", "ours.txt"]  # no temp file left


@pytest.mark.parametrize("binary", [False, True])
def test_vocab_file_gzip_and_append_are_identical_to_gensim(tmp_path, binary):
    ours, theirs = make_pair(KEYS[:100], VECTORS[:100], COUNTS[:100])
    for name, kv in (("ours", ours), ("gensim", theirs)):
        path = str(tmp_path / f"{name}.bin.gz")
        kv.save_word2vec_format(path, fvocab=str(tmp_path / f"{name}.vocab"), binary=binary)
        kv.save_word2vec_format(path, binary=binary, append=True, write_header=False, prefix="x")
    assert read_plain(tmp_path / "ours.bin.gz") == read_plain(tmp_path / "gensim.bin.gz")
    assert read_plain(tmp_path / "ours.vocab") == read_plain(tmp_path / "gensim.vocab")
    assert read_plain(tmp_path / "ours.bin.gz").startswith(b"100 16\n")


def test_vocab_file_needs_the_sort_attribute(tmp_path):
    ours, _ = make_pair(KEYS[:5], VECTORS[:5])
    with pytest.raises(ValueError, match="'count'"):
        ours.save_word2vec_format(tmp_path / "v.txt", fvocab=tmp_path / "v.vocab")


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_each_loads_the_others_files(tmp_path, binary, suffix):
    keys = KEYS[:200] + ["Ünïcödé"]
    vectors = np.vstack([VECTORS[:200], VECTORS[:1] * 7]).astype(np.float32)
    ours, theirs = make_pair(keys, vectors, list(COUNTS[:200]) + [1])
    ours_path, gensim_path = tmp_path / f"ours.w2v{suffix}", tmp_path / f"gensim.w2v{suffix}"
    ours.save_word2vec_format(ours_path, fvocab=tmp_path / "ours.vocab", binary=binary)
    theirs.save_word2vec_format(str(gensim_path), fvocab=str(tmp_path / "g.vocab"), binary=binary)

    loaded_by_gensim = gensim_models.KeyedVectors.load_word2vec_format(
        str(ours_path), fvocab=str(tmp_path / "ours.vocab"), binary=binary
    )
    loaded_by_us = KeyedVectors.load_word2vec_format(
        gensim_path, fvocab=tmp_path / "g.vocab", binary=binary
    )
    reference = gensim_models.KeyedVectors.load_word2vec_format(
        str(gensim_path), fvocab=str(tmp_path / "g.vocab"), binary=binary
    )
    for kv in (loaded_by_gensim, loaded_by_us):
        assert kv.index_to_key == reference.index_to_key
        assert kv.key_to_index == reference.key_to_index
        np.testing.assert_array_equal(kv.vectors, reference.vectors)
        assert kv.vectors.dtype == np.float32
        np.testing.assert_array_equal(kv.expandos["count"], reference.expandos["count"])
    # the text format keeps the float32 values exactly
    order = [keys.index(k) for k in loaded_by_us.index_to_key]
    np.testing.assert_array_equal(loaded_by_us.vectors, vectors[order])


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("euclidean_vectors.bin", dict(binary=True)),
        ("poincare_vectors.bin", dict(binary=True)),
        ("word2vec_pre_kv_c", dict()),
        ("lee_fasttext.vec", dict()),
        (
            "w2v_keyedvectors_load_test.modeldata",
            dict(fvocab="w2v_keyedvectors_load_test.vocab", unicode_errors="ignore"),
        ),
    ],
)
def test_loads_gensims_bundled_vector_files_like_gensim(name, kwargs):
    if "fvocab" in kwargs:
        kwargs = {**kwargs, "fvocab": datapath(kwargs["fvocab"])}
    got = KeyedVectors.load_word2vec_format(datapath(name), **kwargs)
    want = gensim_models.KeyedVectors.load_word2vec_format(datapath(name), **kwargs)
    assert got.index_to_key == want.index_to_key and len(got) > 1
    assert got.key_to_index == want.key_to_index
    np.testing.assert_array_equal(got.vectors, want.vectors)
    np.testing.assert_array_equal(got.expandos["count"], want.expandos["count"])


def test_load_options_match_gensim(tmp_path):
    ours, _ = make_pair(KEYS[:50], VECTORS[:50])
    text, bare = tmp_path / "v.txt", tmp_path / "bare.txt"
    ours.save_word2vec_format(text)
    ours.save_word2vec_format(bare, write_header=False)
    cases = [
        (text, dict(limit=10)),
        (text, dict(datatype=np.float64)),
        (bare, dict(no_header=True)),
        (bare, dict(no_header=True, limit=7)),
    ]
    for path, kwargs in cases:
        got = KeyedVectors.load_word2vec_format(path, **kwargs)
        want = gensim_models.KeyedVectors.load_word2vec_format(str(path), **kwargs)
        assert got.index_to_key == want.index_to_key, kwargs
        assert got.vectors.dtype == want.vectors.dtype
        np.testing.assert_array_equal(got.vectors, want.vectors)
        np.testing.assert_array_equal(got.expandos["count"], want.expandos["count"])
    with pytest.raises(NotImplementedError):
        KeyedVectors.load_word2vec_format(bare, binary=True, no_header=True)


def test_duplicate_words_keep_the_first(tmp_path):
    path = tmp_path / "dup.txt"
    path.write_text("3 2\na 1 2\nb 3 4\na 5 6\n", encoding="utf8")
    kv = KeyedVectors.load_word2vec_format(path)
    assert kv.index_to_key == ["a", "b"] and kv.vectors.tolist() == [[1, 2], [3, 4]]
    assert kv.expandos["count"].tolist() == [3, 2]


def binary_record(word, values):
    return word.encode() + b" " + struct.pack(f"<{len(values)}f", *values)


def test_binary_records_with_newlines_as_the_c_tool_writes_them(tmp_path):
    path = tmp_path / "c.bin"
    body = binary_record("ab", [1, 2, 3]) + b"\n" + binary_record("cd", [4, 5, 6]) + b"\n"
    path.write_bytes(b"2 3\n" + body)
    for loader in (KeyedVectors, gensim_models.KeyedVectors):
        kv = loader.load_word2vec_format(str(path), binary=True)
        assert kv.index_to_key == ["ab", "cd"]
        assert kv.vectors.tolist() == [[1, 2, 3], [4, 5, 6]]


@pytest.mark.parametrize(
    "content, pattern",
    [
        ("abc\nx 1 2\n", "line 1: invalid header"),
        ("2\nx 1 2\n", "line 1: invalid header"),
        ("2 x\nx 1 2\n", "line 1: invalid header"),
        ("1 0\nx\n", "line 1: invalid header"),
        ("", "line 1: invalid header"),
        ("2 2\nx 1 2\ny 1 2 3\n", "line 3: expected a word and 2 values, found 3"),
        ("2 2\nx 1 2\ny 1\n", "line 3: expected a word and 2 values, found 1"),
        ("2 2\nx 1 2\ny 1 two\n", "line 3: non-numeric"),
        ("3 2\nx 1 2\ny 3 4\n", "line 4: unexpected end of file after 2 of 3"),
        ("1 2\nx 1  2\n", "line 2: expected a word and 2 values"),
    ],
)
def test_malformed_text_files(tmp_path, content, pattern):
    path = tmp_path / "bad.txt"
    path.write_text(content, encoding="utf8")
    with pytest.raises(ValueError, match=pattern) as info:
        KeyedVectors.load_word2vec_format(path)
    assert "bad.txt" in str(info.value)


def test_undecodable_words(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"1 2\ncaf\xe9 1 2\n")
    with pytest.raises(ValueError, match="line 2: cannot decode"):
        KeyedVectors.load_word2vec_format(path)
    assert KeyedVectors.load_word2vec_format(path, encoding="latin1").index_to_key == ["café"]
    replaced = KeyedVectors.load_word2vec_format(path, unicode_errors="replace")
    assert replaced.index_to_key == ["caf\ufffd"]
    binary = tmp_path / "latin1.bin"
    binary.write_bytes(b"1 2\n" + b"caf\xe9 " + struct.pack("<2f", 1, 2))
    with pytest.raises(ValueError, match="byte offset 4"):
        KeyedVectors.load_word2vec_format(binary, binary=True)


def test_truncated_binary_files_name_the_offset(tmp_path):
    ours, _ = make_pair(KEYS[:3], VECTORS[:3])
    full = tmp_path / "full.bin"
    ours.save_word2vec_format(full, binary=True)
    data = full.read_bytes()
    cut = tmp_path / "cut.bin"
    for length in [len("3 16\n") + 2, len(data) // 2, len(data) - 1]:
        cut.write_bytes(data[:length])
        with pytest.raises(
            ValueError, match=f"cut.bin: unexpected end of file at byte offset {length}"
        ):
            KeyedVectors.load_word2vec_format(cut, binary=True)
    cut.write_bytes(data[: len("3 16\n")])
    with pytest.raises(ValueError, match="byte offset 5 in vector 1 of 3"):
        KeyedVectors.load_word2vec_format(cut, binary=True)


def test_failed_save_word2vec_format_keeps_the_previous_file(tmp_path):
    ours, _ = make_pair(KEYS[:20], VECTORS[:20])
    path = tmp_path / "v.txt"
    ours.save_word2vec_format(path)
    before = path.read_bytes()
    broken = KeyedVectors(DIM)
    broken.add_vectors(["fine", "bad\ud800"], VECTORS[:2])  # a lone surrogate cannot be encoded
    with pytest.raises(UnicodeEncodeError):
        broken.save_word2vec_format(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["v.txt"]


# ---------------------------------------------------------------- native save / load
def test_save_load_round_trip(tmp_path):
    pytest.importorskip("gensim")  # KEYS and VECTORS come from gensim's test files
    kv = KeyedVectors(DIM)
    kv.add_vectors(KEYS[:40], VECTORS[:40], extras={"count": COUNTS[:40]})
    kv.set_vecattr(KEYS[0], "sample_int", np.uint32(7))
    kv.set_vecattr(KEYS[0], "label", "objects are skipped")
    path = tmp_path / "wv.hsw2v"
    kv.save(path)
    for mmap in (None, "r"):
        loaded = KeyedVectors.load(path, mmap=mmap)
        assert type(loaded) is KeyedVectors
        assert loaded.vector_size == DIM and loaded.index_to_key == kv.index_to_key
        assert loaded.key_to_index == kv.key_to_index and loaded.next_index == kv.next_index
        np.testing.assert_array_equal(loaded.vectors, kv.vectors)
        assert sorted(loaded.expandos) == ["count", "sample_int"]
        for attr in ("count", "sample_int"):
            assert loaded.expandos[attr].dtype == kv.expandos[attr].dtype
            np.testing.assert_array_equal(loaded.expandos[attr], kv.expandos[attr])
        assert loaded.most_similar(KEYS[1], topn=3) == kv.most_similar(KEYS[1], topn=3)
    assert isinstance(KeyedVectors.load(path, mmap="r").vectors, np.memmap)


def test_save_load_int_keys_and_empty(tmp_path):
    kv = KeyedVectors(3, dtype=np.float64)
    kv.add_vectors([10, 20], np.ones((2, 3)))
    kv.save(tmp_path / "ints")
    loaded = KeyedVectors.load(tmp_path / "ints")
    assert loaded.index_to_key == [10, 20] and loaded.vectors.dtype == np.float64
    assert loaded[20].tolist() == [1.0, 1.0, 1.0]
    KeyedVectors(5).save(tmp_path / "empty")
    empty = KeyedVectors.load(tmp_path / "empty")
    assert len(empty) == 0 and empty.vectors.shape == (0, 5)


def test_load_refuses_other_files(tmp_path):
    _, theirs = make_pair(KEYS[:5], VECTORS[:5])
    pickled = tmp_path / "gensim.kv"
    theirs.save(str(pickled))
    with pytest.raises(ValueError, match="gensim.kv.*not an hsw2v bundle.*pickles"):
        KeyedVectors.load(pickled)
    from hsw2v.persist import save_bundle

    save_bundle(tmp_path / "other", "Word2Vec", {}, {})
    with pytest.raises(ValueError, match="'Word2Vec', not a 'KeyedVectors'"):
        KeyedVectors.load(tmp_path / "other")
    save_bundle(tmp_path / "broken", "KeyedVectors", {"vector_size": 3}, {})
    with pytest.raises(ValueError, match="broken.*incomplete"):
        KeyedVectors.load(tmp_path / "broken")
