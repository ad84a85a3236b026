"""Distributed training on a real local Dask cluster (worker processes), against one machine."""

from __future__ import annotations

import gzip
import os
import signal
import time

import numpy as np
import pytest
from conftest import cluster_recovery, planted_corpus

from hsw2v import LineSentence, PathLineSentences, Word2Vec, distributed
from hsw2v._dist_tasks import average_rows
from hsw2v._shards import (
    ByteRange,
    count_range,
    cut_shard,
    expand_paths,
    plan_ranges,
    range_sentences,
    splittable_size,
)
from hsw2v.distributed import DistributedTrainingError

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
        counts = [count_range(r, 3, mark_every=2) for r in ranges]
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


def test_average_rows_matches_a_numpy_reference():
    rng = np.random.default_rng(1)
    d, parts = 5, []
    for _ in range(3):
        rows = np.sort(rng.choice(20, size=8, replace=False))
        parts.append((rows, rng.normal(size=(8, d)).astype(np.float32), rng.uniform(1, 5, 8)))
    rows, values = average_rows(parts)
    for row, value in zip(rows, values, strict=True):
        num = np.zeros(d)
        den = 0.0
        for part_rows, part_values, weights in parts:
            hit = np.flatnonzero(part_rows == row)
            if len(hit):
                num += weights[hit[0]] * part_values[hit[0]]
                den += weights[hit[0]]
        np.testing.assert_allclose(value, num / den, rtol=1e-6)
    assert sorted(set(np.concatenate([p[0] for p in parts]))) == rows.tolist()


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


def test_quality_matches_one_machine_on_planted_clusters(client, tmp_path):
    sentences, clusters = planted_corpus(n_sentences=2000, seed=4)
    path = write_corpus(tmp_path / "planted.txt", sentences)
    single = Word2Vec(corpus_file=str(path), workers=1, **PARAMS)
    untrained = Word2Vec(**PARAMS, workers=1)
    untrained.build_vocab(corpus_file=str(path))
    seen = []
    model = distributed.train(client, path, sync_every=2000, progress=seen.append, **PARAMS)
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
