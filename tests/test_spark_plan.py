"""hsw2v.spark's plan of the rounds' pieces (pure Python, no Spark needed): shards of equal
words cut across partitions of unequal words, and the stretches the partitions lend."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hsw2v.running.epochs import jobs_from_recording
from hsw2v.spark._engine import (
    BALANCE_ABOVE,
    attach_lent,
    cut_piece,
    lend_requests,
    lend_task,
    plan_partition,
    plan_shards,
    scan_partition,
)

PARTITIONS = st.lists(st.lists(st.integers(1, 30), max_size=40), min_size=1, max_size=5)


def shapes_of(partitions: list, mark_every: int) -> list:
    """Each partition's ``(words, sentences, marks, recorded)``, marked as
    :func:`scan_partition` marks (a mark once ``mark_every`` words have passed)."""
    shapes = []
    for lengths in partitions:
        marks, done, since = [], 0, 0
        for s, length in enumerate(lengths):
            if since >= mark_every:
                marks.append((s, done, s))
                since = 0
            done += length
            since += length
        shapes.append((done, len(lengths), marks, True))
    return shapes


@settings(max_examples=200, deadline=None)
@given(PARTITIONS, st.integers(1, 60), st.integers(1, 6), st.integers(0, 2000))
def test_shards_keep_the_corpus_order_and_balance_where_they_can(partitions, every, rounds, cap):
    shapes = shapes_of(partitions, every)
    pieces = plan_shards(shapes, rounds, cap)
    n = len(partitions)
    assert len(pieces) == n and all(len(shard) == rounds for shard in pieces)
    # every sentence once, in the corpus's order, and each piece's totals are its sentences'
    order = [(p, s) for shard in pieces for piece in shard for p, a, b in piece.spans()
             for s in range(a, b)]  # fmt: skip
    assert order == [(p, s) for p, lengths in enumerate(partitions) for s in range(len(lengths))]
    for shard in pieces:
        for piece in shard:
            spans = piece.spans()
            assert piece.words == sum(sum(partitions[p][a:b]) for p, a, b in spans)
            assert piece.sentences == sum(b - a for _, a, b in spans)
            assert piece.borrowed() == [span for span in spans if span[0] != piece.partition]
    words = [shape[0] for shape in shapes]
    lent = sum(
        sum(partitions[p][a:b]) for shard in pieces for piece in shard for p, a, b in piece.borrowed()
    )
    if lent == 0:  # as the partitions are: each its own pieces, cut as before
        assert pieces == [plan_partition(k, *shapes[k][:3], rounds) for k in range(n)]
        return
    assert max(words) > BALANCE_ABOVE * sum(words) / n  # only where they differ
    assert lent <= cap
    # each shard ends at the first place to cut (a partition's start or end, or a mark) at
    # or past its share of the corpus's words
    starts = np.cumsum([0, *words])
    cuts = {int(starts[p] + w) for p, shape in enumerate(shapes)
            for w in (0, shape[0], *(mark[1] for mark in shape[2]))}  # fmt: skip
    ends = np.cumsum([sum(piece.words for piece in shard) for shard in pieces])
    for k in range(n - 1):
        target = sum(words) * (k + 1) / n
        assert ends[k] == min(c for c in cuts if c >= target), (k, ends, target)


@settings(max_examples=60, deadline=None)
@given(PARTITIONS, st.integers(1, 40), st.integers(1, 4))
def test_lent_stretches_give_the_corpus_jobs(partitions, every, rounds):
    """The pieces of a balanced plan, each cut in its own partition's task from its own
    recording and the stretches lent to it, hold exactly the corpus's tokens with their
    final ids, in order: the whole corpus's recording cut at the same places."""
    rng = np.random.default_rng(len(partitions) * 100 + every)
    vocab = [f"w{i}" for i in range(12)]
    rows = [[[str(w) for w in rng.choice(vocab, size=n)] for n in lengths] for lengths in partitions]
    scans = [scan_partition(k, iter(part), 1000, every, 10**6) for k, part in enumerate(rows)]
    shapes = [scan.shape() for scan in scans]
    pieces = plan_shards(shapes, rounds, 10**6)

    class Spec:  # what the cutting reads of a run's settings
        index_to_key = vocab[:9]  # w9..w11 are not kept
        batch_words = 7

    requests = lend_requests(pieces)
    for request in requests:  # in each partition's task
        cut_piece(scans[request.partition], Spec, request)
    attach_lent(pieces, requests, [lend_task(Spec, None, [], request) for request in requests])
    got = []
    for k, shard in enumerate(pieces):
        for piece in shard:
            cut_piece(scans[k], Spec, piece)
            assert sum(job.raw_words for job in piece.encoded) == piece.words
            got.extend(job.ids.tolist() for job in piece.encoded)
    index = {w: i for i, w in enumerate(Spec.index_to_key)}
    want = [index[w] for part in rows for row in part for w in row if w in index]
    assert [i for ids in got for i in ids] == want
    whole = scan_partition(0, iter([row for part in rows for row in part]), 1000, every, 10**6)
    if whole.recording is not None and whole.words:
        to_final = np.array([index.get(w, -1) for w in whole.counts], np.int32)
        whole.recording.finalize(to_final, Spec.index_to_key)
        assert sum(len(job.ids) for job in jobs_from_recording(whole.recording, 7)) == len(want)
