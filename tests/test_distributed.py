"""Distributed training on a real local Dask cluster (worker processes), against one machine."""

from __future__ import annotations

import gzip
import os
import signal
import time

import numpy as np
import pytest
from conftest import NOISE, WEAKENED, cluster_recovery, planted_corpus

from hsw2v import LineSentence, PathLineSentences, Word2Vec, _dist_tasks, distributed
from hsw2v._dist_merge import MERGES, adasum_pair, merge_rows
from hsw2v._kernels._corpus_file import scan_range_marks, scan_range_vocab
from hsw2v._shards import (
    ByteRange,
    CorpusChangedError,
    count_and_mark_range,
    cut_shard,
    expand_paths,
    file_stamp,
    plan_ranges,
    range_sentences,
    splittable_size,
)
from hsw2v.distributed import DistributedTrainingError, run_spec
from hsw2v.running.epochs import iter_jobs
from hsw2v.running.file_scan import Vocab, count_local_range, encode_local_ranges

PARAMS = dict(vector_size=24, window=4, min_count=1, sg=1, epochs=3, seed=3, sample=0)


def write_corpus(path, sentences):
    path.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
    return path


def neighbour_overlap(a, b, words, topn=5):
    """Mean share of a word's top-n neighbours that two sets of vectors agree on."""
    shared = 0
    for word in words:
        na = {w for w, _ in a.most_similar(word, topn=topn)}
        nb = {w for w, _ in b.most_similar(word, topn=topn)}
        shared += len(na & nb)
    return shared / (topn * len(words))


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


# ------------------------------------------------------------------ byte ranges (no cluster)
def test_byte_ranges_yield_every_line_once_whatever_the_cuts(tmp_path):
    text = "a b c\n\nd e f g h\r\nxyz\n  \nlast line without newline"
    path = tmp_path / "c.txt"
    path.write_bytes(text.encode())
    expected = list(LineSentence(str(path), max_sentence_length=3))
    size = len(text.encode())
    rng = np.random.default_rng(0)
    for _ in range(200):
        cuts = sorted({0, size, *rng.integers(0, size + 1, size=rng.integers(1, 6)).tolist()})
        ranges = [ByteRange(str(path), lo, hi) for lo, hi in zip(cuts, cuts[1:], strict=False)]
        got = [s for r in ranges for s in range_sentences(r, 3)]
        assert got == expected, cuts
        counts = [count_and_mark_range(r, 3, mark_every=2) for r in ranges]
        assert sum(c.words for c in counts) == sum(map(len, expected))
        assert sum(c.sentences for c in counts) == len(expected)
        # pieces cut at the marks hold the same sentences, and their stated sizes are exact
        for n_pieces in (1, 2, 5):
            pieces = cut_shard(ranges, counts, n_pieces)
            assert len(pieces) == n_pieces
            again = []
            for piece in pieces:
                sentences = [s for r in piece.ranges for s in range_sentences(r, 3)]
                assert piece.words == sum(map(len, sentences))
                assert piece.sentences == len(sentences)
                again += sentences
            assert again == expected, (cuts, n_pieces)


def _job_tuples(jobs):
    return [(j.ids.tolist(), j.ends.tolist(), j.raw_words, j.n_sentences) for j in jobs]


def test_local_ranges_read_in_c_give_the_python_counts_marks_and_jobs(tmp_path):
    """The tasks read local ranges in C (running.file_scan): the same counts in the same
    order, the same marks, and the jobs iter_jobs makes, also across files and ranges."""
    texts = [
        "a b c\n\nd e f g h\r\nxyz q\n  \nb a\u00a0zz\u3000c",  # no final newline
        "",  # an empty file
        "\n \n\t\n",  # no token at all
        "e e e e e e e e\nq r s a\nb\n" * 3,
    ]
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"c{i}.txt"
        path.write_bytes(text.encode())
        paths.append(str(path))
    sizes = [splittable_size(p) for p in paths]
    key_to_index = {w: i for i, w in enumerate(["e", "a", "b", "c", "q", "zz", "s"])}
    vocab = Vocab(key_to_index)
    rng = np.random.default_rng(1)
    for n_shards in (1, 2, 3, 7):
        shards = plan_ranges(paths, n_shards, sizes)
        for shard in shards:
            for mark_every in (1, 2, 5):
                for r in shard:
                    in_c = count_local_range(r, 3, mark_every)
                    in_python = count_and_mark_range(r, 3, mark_every)
                    assert list(in_c.counts.items()) == list(in_python.counts.items())
                    assert (in_c.words, in_c.sentences) == (in_python.words, in_python.sentences)
                    assert in_c.marks == in_python.marks, (r, mark_every)
            counts = [count_and_mark_range(r, 3, 2) for r in shard]
            for n_pieces in (1, 2, 4):
                for piece in cut_shard(shard, counts, n_pieces):
                    for batch_words in (1, 3, 7, int(rng.integers(2, 30)), 10_000):
                        expected = iter_jobs(piece.read(3), key_to_index, batch_words)
                        got = encode_local_ranges(piece.ranges, vocab, batch_words, 3)
                        assert _job_tuples(got) == _job_tuples(expected), (piece, batch_words)
                        assert all(j.ids.dtype == np.int32 for j in got)


def test_local_range_reads_refuse_what_python_refuses(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine words\nbad \xff byte\n")
    whole = ByteRange(str(path), 0, path.stat().st_size, file_stamp(str(path)))
    with pytest.raises(UnicodeDecodeError):
        count_and_mark_range(whole, 10, 1)
    with pytest.raises(UnicodeDecodeError, match="at byte 15"):
        count_local_range(whole, 10, 1)
    with pytest.raises(UnicodeDecodeError, match="at byte 15"):
        encode_local_ranges([whole], Vocab({"fine": 0}), 100, 10)
    path.write_bytes(b"other words now\n")  # the stamp no longer holds
    with pytest.raises(CorpusChangedError, match="changed since the vocabulary pass"):
        count_local_range(whole, 10, 1)
    with pytest.raises(CorpusChangedError, match="changed since the vocabulary pass"):
        encode_local_ranges([whole], Vocab({"fine": 0}), 100, 10)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="max_sentence_length must be >= 1"):
            scan_range_vocab(str(path), 0, 10, bad)
    with pytest.raises(ValueError, match="mark_every must be >= 1"):
        scan_range_marks(str(path), 0, 10, 10, 0)


def test_urls_are_cut_by_bytes_too(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("a b\nc d e\nf\n", encoding="utf-8")
    url = path.as_uri()  # file:///..., read through smart_open like s3:// or https://
    assert expand_paths(url) == [url]
    assert splittable_size(url) == 12
    halves = [ByteRange(url, 0, 5), ByteRange(url, 5, 12)]
    assert [list(range_sentences(r, 100)) for r in halves] == [
        [["a", "b"], ["c", "d", "e"]],
        [["f"]],
    ]


def test_plan_ranges_splits_plain_files_and_keeps_compressed_whole():
    shards = plan_ranges(["a.txt", "b.gz", "c.txt"], 3, [60, None, 30])
    flat = [r for shard in shards for r in shard]
    assert ByteRange("b.gz", 0, None) in flat
    assert sum(r.end - r.start for r in flat if r.path == "a.txt") == 60
    assert sum(r.end - r.start for r in flat if r.path == "c.txt") == 30
    assert all(shards), shards


def test_missing_corpus_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such.txt"):
        expand_paths([tmp_path / "no-such.txt"])


def random_parts(rng, n_parts=3, n_rows=20, per_part=8, d=5):
    """Row deltas of a few shards: unique sorted rows each, float32 deltas, positive weights."""
    parts = []
    for _ in range(n_parts):
        rows = np.sort(rng.choice(n_rows, size=per_part, replace=False)).astype(np.int32)
        deltas = rng.normal(size=(per_part, d)).astype(np.float32)
        parts.append((rows, deltas, rng.uniform(1, 5, per_part)))
    return parts


@pytest.mark.parametrize("merge", ["sum", "average"])
def test_merge_rows_matches_a_numpy_reference(merge):
    rng = np.random.default_rng(1)
    parts = random_parts(rng)
    n_rows, d = 20, 5
    # dense reference: every part's deltas and weights scattered into full matrices
    dense = np.zeros((len(parts), n_rows, d))
    weight = np.zeros((len(parts), n_rows))
    for k, (rows, deltas, weights) in enumerate(parts):
        dense[k, rows] = deltas
        weight[k, rows] = weights
    touched = weight.sum(axis=0) > 0
    if merge == "sum":
        expected = dense.sum(axis=0)
    else:
        expected = (
            np.einsum("kr,krd->rd", weight, dense) / np.maximum(weight.sum(axis=0), 1)[:, None]
        )
    rows, merged = merge_rows(parts, merge)
    assert rows.tolist() == np.flatnonzero(touched).tolist()
    assert merged.dtype == np.float32 and merged.shape == (touched.sum(), d)
    np.testing.assert_allclose(merged, expected[touched], rtol=1e-6, atol=1e-6)


def test_merge_rules_differ_only_on_rows_several_shards_changed():
    rng = np.random.default_rng(2)
    parts = random_parts(rng, n_parts=2)
    rows, summed = merge_rows(parts, "sum")
    _, averaged = merge_rows(parts, "average")
    held = [np.isin(rows, p[0]) for p in parts]
    only_one = held[0] ^ held[1]
    assert only_one.any() and (~only_one).any()
    # a row one shard changed gets exactly that shard's delta under both rules
    for k, (part_rows, deltas, _) in enumerate(parts):
        mine = only_one & held[k]
        at = np.searchsorted(part_rows, rows[mine])
        assert np.array_equal(summed[mine], deltas[at])
        assert np.array_equal(averaged[mine], deltas[at])
    # a shared row: the sum of both deltas against their weighted mean
    both = np.flatnonzero(~only_one)
    for i in both:
        d = [p[1][np.searchsorted(p[0], rows[i])] for p in parts]
        w = [p[2][np.searchsorted(p[0], rows[i])] for p in parts]
        np.testing.assert_allclose(summed[i], d[0] + d[1], rtol=1e-6)
        np.testing.assert_allclose(
            averaged[i], (w[0] * d[0] + w[1] * d[1]) / (w[0] + w[1]), rtol=1e-5
        )
    # one shard alone: both rules give its deltas bit for bit
    for merge in ("sum", "average"):
        rows1, merged1 = merge_rows(parts[:1], merge)
        assert np.array_equal(rows1, parts[0][0]) and np.array_equal(merged1, parts[0][1])
    # shards that changed nothing
    empty = (np.zeros(0, np.int32), np.zeros((0, 5), np.float32), np.zeros(0))
    rows0, merged0 = merge_rows([empty, empty], "sum")
    assert len(rows0) == 0 and len(merged0) == 0


def adasum_reference(parts, n_rows):
    """Adasum written out row by row: for each row, the parts' deltas in order (None where a
    part lacks the row) reduced pairwise, neighbours first, an odd last one carried up."""

    def pair(a, b):
        if a is None or b is None:
            return b if a is None else a
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        dot = float(a @ b)
        fa = 1.0 - dot / (2.0 * float(a @ a)) if a.any() else 1.0
        fb = 1.0 - dot / (2.0 * float(b @ b)) if b.any() else 1.0
        return fa * a + fb * b

    expected = {}
    for row in range(n_rows):
        level = []
        for rows, deltas, _ in parts:
            hit = np.flatnonzero(rows == row)
            level.append(deltas[hit[0]] if len(hit) else None)
        while len(level) > 1:
            nxt = [pair(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            level = nxt + ([level[-1]] if len(level) % 2 else [])
        if level[0] is not None:
            expected[row] = level[0]
    return expected


@pytest.mark.parametrize("n_parts", [1, 2, 3, 4, 5])
def test_adasum_matches_a_row_by_row_reference(n_parts):
    rng = np.random.default_rng(10 + n_parts)
    parts = random_parts(rng, n_parts=n_parts, n_rows=12, per_part=7)
    for rows, deltas, _ in parts:  # rows in any order; some rows a shard left unchanged
        rng.shuffle(rows)
        deltas[rng.random(len(rows)) < 0.15] = 0.0
    expected = adasum_reference(parts, 12)
    rows, merged = merge_rows(parts, "adasum")
    assert rows.dtype == np.int32 and merged.dtype == np.float32
    assert rows.tolist() == sorted(expected)
    np.testing.assert_allclose(
        merged, [expected[r] for r in sorted(expected)], rtol=1e-6, atol=1e-7
    )
    assert np.isfinite(merged).all()


def test_adasum_limits_equal_orthogonal_absent_and_one_shard():
    rng = np.random.default_rng(20)
    delta = rng.normal(size=(3, 6)).astype(np.float32)
    rows = np.array([4, 1, 7], np.int32)
    for k in (2, 3, 4):
        # every shard moved the rows the same way: the rows move once (as "average" does)
        same = [(rows, delta.copy(), np.ones(3)) for _ in range(k)]
        got_rows, got = merge_rows(same, "adasum")
        assert got_rows.tolist() == [1, 4, 7]
        np.testing.assert_allclose(got, delta[[1, 0, 2]], rtol=1e-6, atol=1e-7)
        # "sum" moves them k times as far: the overshoot adasum avoids
        np.testing.assert_allclose(merge_rows(same, "sum")[1], k * delta[[1, 0, 2]], rtol=1e-6)
        # mutually orthogonal deltas (disjoint coordinates): their sum
        ortho = np.zeros((k, 1, 8), np.float32)
        for i in range(k):
            ortho[i, 0, 2 * i : 2 * i + 2] = rng.normal(size=2)
        parts = [(np.array([3]), ortho[i], np.ones(1)) for i in range(k)]
        np.testing.assert_allclose(merge_rows(parts, "adasum")[1], ortho.sum(axis=0), rtol=1e-6)
    # opposite deltas of equal length: a.b = -|a|^2, each factor 3/2, they cancel
    a = delta[:1]
    np.testing.assert_allclose(
        merge_rows([(rows[:1], a, np.ones(1)), (rows[:1], -a, np.ones(1))], "adasum")[1],
        np.zeros((1, 6)),
        atol=1e-7,
    )
    # a shard that did not change a row, or changed it by exactly zero, is the identity
    other = (np.array([9], np.int32), np.ones((1, 6), np.float32), np.ones(1))
    zero = (rows, np.zeros_like(delta), np.ones(3))
    for parts in ([(rows, delta, np.ones(3)), other], [other, (rows, delta, np.ones(3))]):
        got_rows, got = merge_rows(parts, "adasum")
        assert got_rows.tolist() == [1, 4, 7, 9]
        assert np.array_equal(got[:3], delta[[1, 0, 2]]) and np.array_equal(got[3], other[1][0])
    got_rows, got = merge_rows([zero, (rows, delta, np.ones(3)), zero], "adasum")
    assert np.array_equal(got, delta[[1, 0, 2]])
    assert np.array_equal(merge_rows([zero, zero], "adasum")[1], np.zeros((3, 6)))
    # one shard: its deltas bit for bit (rows sorted, as the other rules return them)
    got_rows, got = merge_rows([(rows, delta, np.ones(3))], "adasum")
    assert got_rows.tolist() == [1, 4, 7] and np.array_equal(got, delta[[1, 0, 2]])
    # shards that changed nothing
    empty = (np.zeros(0, np.int32), np.zeros((0, 6), np.float32), np.zeros(0))
    assert len(merge_rows([empty, empty, empty], "adasum")[0]) == 0


def test_adasum_combines_shards_in_a_fixed_tree_in_their_order():
    """Adasum is not associative: the tree is part of the rule. Neighbours pair first:
    ((0, 1), 2) for three shards, ((0, 1), (2, 3)) for four; an empty shard keeps its place."""
    rng = np.random.default_rng(21)
    d = rng.normal(size=(4, 1, 5))
    row = np.array([0], np.int32)
    parts = [(row, d[i].astype(np.float32), np.ones(1)) for i in range(4)]
    x = [p[1].astype(np.float64) for p in parts]
    trees = {
        3: adasum_pair(adasum_pair(x[0], x[1]), x[2]),
        4: adasum_pair(adasum_pair(x[0], x[1]), adasum_pair(x[2], x[3])),
    }
    other_orders = {
        3: [adasum_pair(x[0], adasum_pair(x[1], x[2])), adasum_pair(adasum_pair(x[0], x[2]), x[1])],
        4: [adasum_pair(adasum_pair(adasum_pair(x[0], x[1]), x[2]), x[3])],
    }
    for k, expected in trees.items():
        got = merge_rows(parts[:k], "adasum")[1].astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=1e-6)
        for other in other_orders[k]:  # the order is visible: another tree gives another row
            assert np.abs(other - expected).max() > 1e-3
    # an empty (or row-less) second shard: ((0, -), (2, 3)) = (0, (2, 3)), not ((0, 2), 3)
    empty = (np.zeros(0, np.int32), np.zeros((0, 5), np.float32), np.zeros(0))
    got = merge_rows([parts[0], empty, parts[2], parts[3]], "adasum")[1]
    np.testing.assert_allclose(got, adasum_pair(x[0], adasum_pair(x[2], x[3])), rtol=1e-6)


def test_a_setting_without_a_distributed_form_is_refused(tmp_path):
    """tree="semantic" trains twice on one machine (the second time over a tree rebuilt from
    the vectors); distributed training would silently train only the first: refused."""
    path = write_corpus(tmp_path / "c.txt", [["a", "b"]] * 10)
    with pytest.raises(ValueError, match="tree='semantic' is not trained distributed"):
        distributed.train(None, path, tree="semantic", vector_size=8, min_count=1)


def test_unknown_merge_rule_is_a_clear_error(tmp_path):
    path = write_corpus(tmp_path / "c.txt", [["a", "b"]] * 10)
    with pytest.raises(ValueError, match="merge must be one of 'sum', 'average', 'adasum'"):
        distributed.train(None, path, merge="median", vector_size=8, min_count=1)
    with pytest.raises(ValueError, match="merge must be one of"):
        merge_rows([], "mean")


def train_rounds(model, path, n_shards, n_rounds, merge, rebuild):
    """The training tasks of one epoch called in this process, round by round, as the
    cluster runs them; ``rebuild`` drops every cached replica before each task, so each
    shard rebuilds its copy from the snapshot and the updates instead of updating it in
    place. Returns the final model's ``(syn0, syn1, syn1neg)``."""
    spec = run_spec(model, f"test-{n_shards}-{merge}-{rebuild}", 1000)
    shards = plan_ranges([path], n_shards, [splittable_size(path)])
    pieces = [
        cut_shard(shard, [count_and_mark_range(r, 1000, mark_every=50) for r in shard], n_rounds)
        for shard in shards
    ]
    snapshot, updates = (model.wv.vectors, model.syn1, model.syn1neg), []
    try:
        for r in range(n_rounds):
            results = []
            for k, piece in enumerate(pieces):
                if rebuild:
                    _dist_tasks.forget_run(spec.run_id)
                results.append(
                    _dist_tasks.train_task(
                        spec,
                        snapshot,
                        updates,
                        piece[r],
                        shard=k,
                        piece_index=k * n_rounds + r,
                        epoch=0,
                        first_round=0,
                        this_round=r,
                        alpha0=0.025 * (1 - r / n_rounds),
                        alpha1=0.025 * (1 - (r + 1) / n_rounds),
                    )
                )
            updates.append(_dist_tasks.merge_round_task(*results, merge=merge))
    finally:
        _dist_tasks.forget_run(spec.run_id)
    return _dist_tasks.snapshot_task(snapshot, updates)


@pytest.mark.parametrize("objective", [{}, {"hs": 0}, {"hs": 1, "negative": 3}])
def test_replicas_updated_in_place_or_rebuilt_give_the_same_model(tmp_path, objective):
    """A shard's replica is brought up to date in place (its own changes undone, the merged
    deltas added) or rebuilt from the snapshot: either way the model is the same bit for bit,
    what makes a rerun task after a lost worker give the undisturbed result. For every
    objective: hierarchical softmax, negative sampling (``hs=0``: gensim's negative=5), both."""
    sentences, _ = planted_corpus(n_sentences=400, seed=7)
    path = str(write_corpus(tmp_path / "c.txt", sentences))
    model = Word2Vec(**PARAMS, **objective, workers=1)
    model.build_vocab(corpus_file=path)
    start = model.wv.vectors.copy(), model.syn1.copy(), model.syn1neg.copy()
    final = {}
    for merge in ("sum", "average", "adasum", "hybrid"):
        final[merge] = train_rounds(model, path, 2, 4, merge, rebuild=False)
        rebuilt = train_rounds(model, path, 2, 4, merge, rebuild=True)
        for k in range(3):
            assert np.array_equal(final[merge][k], rebuilt[k]), (merge, k)
        # every output layer the objective has was trained, the others stay empty
        assert final[merge][1].shape == model.syn1.shape
        assert final[merge][2].shape == model.syn1neg.shape
        for k, layer in ((1, model.syn1), (2, model.syn1neg)):
            assert len(layer) == 0 or not np.array_equal(final[merge][k], start[k]), (merge, k)
    for now, then in zip((model.wv.vectors, model.syn1, model.syn1neg), start, strict=True):
        assert np.array_equal(now, then)
    # two shards: the sum keeps both shards' steps, so the rows move further than the average
    moved = {m: np.linalg.norm(final[m][0] - start[0]) for m in final}
    assert moved["sum"] > 1.2 * moved["average"] > 0, moved
    # one shard: nothing to merge, every rule gives the same model bit for bit
    alone = [train_rounds(model, path, 1, 4, m, rebuild=False) for m in MERGES]
    for other in alone[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(alone[0], other, strict=True))


def test_rows_a_piece_touches_in_the_tree_are_the_numpy_sums():
    """The ``syn1`` rows a piece may change (``touched_rows``, one pass over the paths) and
    their weights: the rows on its words' paths, each the occurrences of the words through
    it, the bits of ``np.bincount`` over the used path entries (words that do not occur
    included as zeros, every node's sum exact)."""
    from hsw2v.running.objectives import touched_rows

    sentences, _ = planted_corpus(n_sentences=300, seed=3)
    model = Word2Vec(**PARAMS, hs=1, negative=2, workers=1)
    model.build_vocab(sentences)
    settings = run_spec(model, "touched", 1000).trainer
    rng = np.random.default_rng(0)
    V = len(model.wv)
    for share in (0.0, 0.1, 1.0):
        occurrences = np.where(rng.random(V) < share, rng.integers(1, 50, V), 0)
        (rows, weights), (ns_rows, ns_weights) = touched_rows(
            settings, occurrences, (model.syn1, model.syn1neg)
        )
        points, lengths = settings.output("hs")["points"], settings.output("hs")["lengths"]
        words = np.flatnonzero(occurrences)
        on_path = np.arange(points.shape[1])[None, :] < lengths[words][:, None]
        want = np.bincount(points[words][on_path], minlength=len(model.syn1),
                           weights=np.repeat(occurrences[words], lengths[words]))  # fmt: skip
        assert weights.tobytes() == want.tobytes()
        assert rows.dtype == np.int32 and rows.tolist() == np.flatnonzero(want).tolist()
        assert len(rows) == 0 if share == 0.0 else len(rows) > 0
        assert ns_rows.tolist() == list(range(len(model.syn1neg)))  # any word may be drawn
        assert (ns_weights >= occurrences).all()


@pytest.mark.parametrize(
    "objective",
    [{}, {"hs": 0}, {"hs": 0, "negative": 7, "ns_exponent": 0.5}, {"hs": 1, "negative": 2}],
)
@pytest.mark.parametrize("sg", [0, 1])
def test_tasks_build_the_trainer_one_machine_builds(objective, sg):
    """The trainer settings distributed tasks get are the ones Word2Vec.train() uses on one
    machine (hsw2v.running.trainer), for one thread: same objective, draw table and kernel."""
    from hsw2v.running.trainer import trainer_settings

    sentences, _ = planted_corpus(n_sentences=100, seed=1)
    model = Word2Vec(**{**PARAMS, "sg": sg}, **objective, workers=1)
    model.build_vocab(sentences)
    spec = run_spec(model, "same-trainer", 1000)
    here = trainer_settings(model)
    def same(a, b):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return a is not None and b is not None and np.array_equal(a, b)
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, tuple):
            return len(a) == len(b) and all(map(same, a, b))
        return a == b

    for name, value in vars(here).items():
        assert same(value, getattr(spec.trainer, name)), name
    kinds = [o["kind"] for o in spec.trainer.outputs]
    assert kinds == ["hs"] * bool(model.hs) + ["ns"] * bool(model.negative)
    if model.negative:
        assert spec.trainer.output("ns")["negative"] == model.negative


# ------------------------------------------------------------------ on a local cluster
def test_vocabulary_equals_one_machine_exactly(client, tmp_path):
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(40)]
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("a.txt", "b.txt"):
        lines = [" ".join(rng.choice(words, size=rng.integers(0, 12))) for _ in range(300)]
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = [" ".join(rng.choice(words, size=7)) for _ in range(100)]
    with gzip.open(folder / "c.txt.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    params = dict(vector_size=8, min_count=3, sample=1e-2, epochs=1, seed=1)
    single = Word2Vec(**params, workers=1)
    single.build_vocab(PathLineSentences(folder, max_sentence_length=5))
    model = distributed.train(
        client, folder, sync_every=500, n_shards=5, max_sentence_length=5, **params
    )
    assert model.wv.index_to_key == single.wv.index_to_key
    for name in ("count", "sample_int"):
        assert (model.wv.expandos[name] == single.wv.expandos[name]).all(), name
    assert (model.tree.codes == single.tree.codes).all()
    assert (model.tree.points == single.tree.points).all()
    assert model.corpus_count == single.corpus_count
    assert model.corpus_total_words == single.corpus_total_words
    assert model.distributed_report.raw_words == single.corpus_total_words


@pytest.mark.parametrize("merge", [None, "adasum", "sum", "average"])  # None: the default
def test_quality_matches_one_machine_on_planted_clusters(client, tmp_path, merge):
    sentences, clusters = planted_corpus(n_sentences=2000, seed=4)
    path = write_corpus(tmp_path / "planted.txt", sentences)
    single = Word2Vec(corpus_file=str(path), workers=1, **PARAMS)
    untrained = Word2Vec(**PARAMS, workers=1)
    untrained.build_vocab(corpus_file=str(path))
    seen = []
    options = {} if merge is None else {"merge": merge}
    model = distributed.train(
        client, path, sync_every=2000, progress=seen.append, **options, **PARAMS
    )
    assert isinstance(model, Word2Vec)
    assert model.distributed_report.rounds == 3 * 10 and len(seen) == 30
    assert seen[-1].raw_words == 3 * 20000 and seen[-1].alpha == pytest.approx(model.min_alpha)
    cluster_words = [w for c in clusters for w in c]
    assert cluster_recovery(single.wv, clusters) >= 0.9
    assert cluster_recovery(model.wv, clusters) >= 0.9
    assert cluster_recovery(untrained.wv, clusters) < 0.4  # the control fails
    # one machine against itself with another seed agrees on 0.68-0.71 here
    assert neighbour_overlap(model.wv, single.wv, cluster_words) >= 0.55
    assert neighbour_overlap(untrained.wv, single.wv, cluster_words) < 0.35
    # the rows exchanged per round are the touched ones, far fewer than the model's
    assert model.distributed_report.bytes_out_per_round > 0
    # the merges' own time, timed on the workers that ran them: a share of the run's
    report = model.distributed_report
    assert 0 < report.merge_seconds < report.seconds


def test_weakened_distributed_training_fails_the_quality_bar(client, tmp_path):
    """On the noiseless planted corpus one epoch or a tenth of the learning rate still recover
    every cluster; on the noisy one the default merge passes the bar above only when trained
    in full (1.000), and the two weakened controls beside it must fail (0.75 and 0.18 here)."""
    sentences, clusters = planted_corpus(n_sentences=3000, seed=4, noise=NOISE)
    path = write_corpus(tmp_path / "planted_noisy.txt", sentences)
    model = distributed.train(client, path, sync_every=2000, **PARAMS)
    assert cluster_recovery(model.wv, clusters) >= 0.9
    for weakened in WEAKENED.values():
        control = distributed.train(client, path, sync_every=2000, **{**PARAMS, **weakened})
        assert cluster_recovery(control.wv, clusters) < 0.9


def test_default_merge_keeps_quality_with_four_shards(client, tmp_path):
    """Four shards on two workers, the default merge (adasum): the rows all shards push the
    same way are not overshot as a sum overshoots them (the sum recovers 0.86 here)."""
    sentences, clusters = planted_corpus(n_sentences=2000, seed=4)
    path = write_corpus(tmp_path / "planted.txt", sentences)
    model = distributed.train(client, path, sync_every=2000, n_shards=4, **PARAMS)
    assert model.distributed_report.shards == 4
    assert cluster_recovery(model.wv, clusters) >= 0.95
    assert np.isfinite(model.wv.vectors).all() and np.isfinite(model.syn1).all()


def test_task_failure_stops_training_with_a_clear_error(client, tmp_path):
    path = write_corpus(tmp_path / "c.txt", [["a", "b", "c"]] * 50)

    def broken_rule(word, count, min_count):
        raise ValueError(f"no rule for {word}")

    with pytest.raises(DistributedTrainingError, match="no rule for"):
        distributed.train(client, path, trim_rule=broken_rule, vector_size=8, min_count=1)


def test_no_workers_times_out_instead_of_hanging(tmp_path):
    from distributed import Client, LocalCluster

    path = write_corpus(tmp_path / "c.txt", [["a", "b"]] * 10)
    with (
        LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster,
        Client(cluster) as c,
    ):
        started = time.perf_counter()
        with pytest.raises(TimeoutError, match="no Dask worker joined"):
            distributed.train(c, path, timeout=1, vector_size=8, min_count=1)
        assert time.perf_counter() - started < 30


@pytest.mark.parametrize("objective", [{"hs": 0, "negative": 5}, {"hs": 1, "negative": 5}])
def test_negative_sampling_trains_distributed_as_on_one_machine(client, tmp_path, objective):
    """hs=0 with negative sampling (and hs + ns together) trains on the cluster: syn1neg is
    trained and merged, and the vectors find the planted clusters as one machine's do."""
    sentences, clusters = planted_corpus(n_sentences=2000, seed=4)
    path = write_corpus(tmp_path / "planted.txt", sentences)
    single = Word2Vec(corpus_file=str(path), workers=1, **objective, **PARAMS)
    model = distributed.train(client, path, sync_every=4000, **objective, **PARAMS)
    assert (model.hs, model.negative) == (objective["hs"], 5)
    assert model.syn1neg.shape == model.wv.vectors.shape
    assert model.syn1.shape == (len(model.wv) if model.hs else 0, PARAMS["vector_size"])
    assert np.isfinite(model.syn1neg).all() and np.abs(model.syn1neg).sum() > 0
    assert cluster_recovery(single.wv, clusters) >= 0.9
    assert cluster_recovery(model.wv, clusters) >= 0.9
    cluster_words = [w for c in clusters for w in c]
    assert neighbour_overlap(model.wv, single.wv, cluster_words) >= 0.5


@pytest.mark.parametrize("named, objective", [({}, (1, 0)), ({"hs": 1}, (1, 5)),
                                               ({"negative": 3}, (0, 3))], ids=str)
def test_distributed_reads_hs_and_negative_as_gensim_does(client, tmp_path, named, objective):
    """The distributed trainer names its objective as the constructor does: one of ``hs`` and
    ``negative`` alone gives the other gensim's default."""
    sentences, _ = planted_corpus(n_sentences=300, seed=4)
    path = write_corpus(tmp_path / "planted.txt", sentences)
    model = distributed.train(client, path, sync_every=4000, **named, **dict(PARAMS, epochs=1))
    assert (model.hs, model.negative) == objective
    assert model.syn1neg.shape == ((len(model.wv) if objective[1] else 0), PARAMS["vector_size"])


def test_killing_a_worker_mid_run_still_completes(client, tmp_path):
    """A worker process is killed (SIGKILL) in the second of three epochs; its nanny starts a
    new one, Dask reruns the lost tasks, and training completes with the very model an
    undisturbed run gives. (Last in this file: it leaves the shared cluster with a new
    worker.)"""
    sentences, clusters = planted_corpus(n_sentences=2000, seed=6)
    path = write_corpus(tmp_path / "planted.txt", sentences)
    undisturbed = distributed.train(client, path, sync_every=2000, **PARAMS)
    killed = []
    before = client.run(os.getpid)

    def kill_one(info):
        if not killed and info.epoch == 1:
            pid = before[sorted(before)[0]]
            os.kill(pid, signal.SIGKILL)
            killed.append((pid, info.raw_words))

    # the timeout bounds every round: a stall fails the test with TimeoutError, never hangs it
    # (generous, as a loaded machine can take minutes to start the replacement worker)
    model = distributed.train(
        client, path, sync_every=2000, progress=kill_one, timeout=300, **PARAMS
    )
    client.wait_for_workers(2, timeout=300)
    # the scheduler may still list the dead worker for a moment: ask only the living ones
    after = client.run(os.getpid, on_error="ignore")
    assert killed and killed[0][1] < 3 * 20000, "the worker was killed mid-run"
    assert killed[0][0] not in after.values(), "the killed worker process is gone"
    assert model.distributed_report.raw_words == 3 * 20000
    assert cluster_recovery(model.wv, clusters) >= 0.9
    # every task is pure and deterministic: the rerun tasks give the undisturbed model exactly
    assert np.array_equal(model.wv.vectors, undisturbed.wv.vectors)
    assert np.array_equal(model.syn1, undisturbed.syn1)
