"""Hostile input, round three: a corpus file that changes between the vocabulary pass and
training makes ``hsw2v.distributed.train`` refuse with a clear error (class 4), instead of
training on what it finds."""

from __future__ import annotations

import os

import pytest

from hsw2v import _shards

pytest.importorskip("distributed")

pytestmark = pytest.mark.xdist_group("hostile3_cluster")

CORPUS = [f"w{i % 17} w{(i * 3) % 17} w{(i * 5) % 17} w{(i * 7) % 17}" for i in range(3000)]


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


def _write(path, lines):
    with open(path, "w", encoding="utf-8") as fout:
        fout.write("\n".join(lines) + "\n")


def _truncate(path):
    _write(path, CORPUS[: len(CORPUS) * 2 // 5])


def _grow(path):
    with open(path, "a", encoding="utf-8") as fout:
        fout.write("\n".join(CORPUS[:500]) + "\n")


def _rewrite_same_size(path):
    data = open(path, "rb").read()
    with open(path, "wb") as fout:
        fout.write(data.replace(b"w1 ", b"w9 "))
    assert os.path.getsize(path) == len(data)


def _replace_same_content(path):
    st = os.stat(path)
    tmp = str(path) + ".new"
    with open(path, "rb") as fin, open(tmp, "wb") as fout:
        fout.write(fin.read())
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)  # same bytes and mtime, another inode


def _words_behind_the_stamp(path):
    # same size, inode and mtime (restored): only the count of words read shows it
    st = os.stat(path)
    data = open(path, "rb").read()
    with open(path, "r+b") as fout:
        fout.write(data.replace(b"w1 w", b"w1ww", 50))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


CHANGES = {
    "truncated": (_truncate, "size went from"),
    "grown": (_grow, "size went from"),
    "rewritten": (_rewrite_same_size, "modification time changed"),
    "replaced": (_replace_same_content, "replaced"),
    "edited_behind_the_stamp": (_words_behind_the_stamp, "words"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_file_changed_after_the_vocabulary_pass_is_refused(change, client, tmp_path, monkeypatch):
    from hsw2v import distributed

    paths = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for path in paths:
        _write(path, CORPUS)
        os.utime(path, ns=(10**18, 10**18))  # an old, settled file
    edit, says = CHANGES[change]
    real_train = distributed.train_rounds  # the rounds, after the vocabulary pass

    def change_then_train(*args, **kwargs):
        edit(paths[1])
        return real_train(*args, **kwargs)

    monkeypatch.setattr(distributed, "train_rounds", change_then_train)
    with pytest.raises(ValueError) as caught:  # on a build without the check: trains, no error
        distributed.train(
            client,
            [str(p) for p in paths],
            sync_every=2000,
            vector_size=8,
            min_count=1,
            epochs=1,
            workers=1,
            seed=1,
        )
    assert type(caught.value).__name__ == "CorpusChangedError"
    message = str(caught.value)
    assert "b.txt" in message and says in message, message
    assert "unchanged until training ends" in message


def test_unchanged_files_train(client, tmp_path):
    from hsw2v import distributed

    path = tmp_path / "a.txt"
    _write(path, CORPUS)
    model = distributed.train(
        client, str(path), sync_every=2000, vector_size=8, min_count=1, epochs=2, workers=1
    )
    assert len(model.wv) == 17


def test_reading_a_range_checks_the_stamp_before_and_after(tmp_path):
    path = tmp_path / "c.txt"
    _write(path, CORPUS[:10])
    stamp = _shards.file_stamp(str(path)) if hasattr(_shards, "file_stamp") else None
    byte_range = _shards.ByteRange(str(path), 0, os.path.getsize(path), stamp)
    assert len(list(_shards.read_lines(byte_range))) == 10
    lines = _shards.read_lines(byte_range)
    next(lines)
    _write(path, CORPUS[:3])  # changed while it is read
    with pytest.raises(ValueError, match="while it was read"):
        list(lines)


@pytest.mark.parametrize("as_url", [False, True], ids=["local file (read in C)", "URL"])
def test_a_corpus_that_is_not_utf8_is_refused_saying_where(as_url, client, tmp_path):
    """The task's UnicodeDecodeError reaches the caller with its message: Dask gives it back
    with its arguments only, whose message alone would be empty."""
    from hsw2v import distributed
    from hsw2v.distributed import DistributedTrainingError

    path = tmp_path / "bad.txt"
    path.write_bytes(b"the cat sat\nbad \xff here\n")
    corpus = path.as_uri() if as_url else str(path)
    expected = "can't decode byte 0xff" if as_url else r"invalid UTF-8 in .*bad\.txt at byte 16"
    with pytest.raises(DistributedTrainingError, match=expected):
        distributed.train(client, corpus, sync_every=100, vector_size=8, min_count=1, epochs=1)
