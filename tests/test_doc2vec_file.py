"""Doc2Vec's ``corpus_file`` read by the workers' byte ranges: each line a document tagged with
its line number, as :class:`TaggedLineDocument` gives it (``_corpus_file`` design note H)."""

import os
import subprocess
import sys

import numpy as np
import pytest

from hsw2v import Doc2Vec, TaggedLineDocument
from hsw2v._kernels._corpus_file import FileTrainer, Vocab, byte_ranges, encode_range
from hsw2v.doc2vec._documents import iter_doc_jobs
from hsw2v.running.file_scan import lines_before

TOPICS = ("cat dog kitten puppy fur paw", "star planet orbit rocket moon comet",
          "bread cheese apple soup salad butter")  # fmt: skip


def write_documents(path, n=300, seed=0, blank_every=17, long_line=None):
    """Lines of words of one topic each; every ``blank_every``-th line is empty (a document
    without words keeps its number); ``long_line`` words make one line longer than a
    sentence (10,000 tokens)."""
    r = np.random.default_rng(seed)
    lines = []
    for k in range(n):
        if blank_every and k % blank_every == 5:
            lines.append("")
            continue
        words = TOPICS[k % 3].split()
        lines.append(" ".join(words[i] for i in r.integers(0, 6, r.integers(1, 15))))
    if long_line:
        lines.insert(n // 2, " ".join(TOPICS[0].split()[i % 6] for i in range(long_line)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_lines_before_counts_the_lines_a_range_skips(tmp_path):
    """At any offset, the number of the first line a range starting there reads: the lines
    that start before it (a file without a final newline, empty lines, CRLF)."""
    path = tmp_path / "t.txt"
    data = b"a b\n\n\r\nc d e\n\n\nf" + b" g" * 50
    path.write_bytes(data)
    starts = [0] + [k + 1 for k, byte in enumerate(data) if byte == ord("\n") and k + 1 < len(data)]
    offsets = list(range(len(data) + 1))
    expected = [sum(1 for s in starts if s < offset) for offset in offsets]
    assert lines_before(str(path), offsets) == expected
    assert len(starts) == len(list(TaggedLineDocument(str(path))))


@pytest.mark.parametrize("parts", [1, 3, 7])
@pytest.mark.parametrize("batch_words", [1, 40, 10_000])
def test_range_jobs_are_the_iterable_paths_jobs(tmp_path, parts, batch_words):
    """Over ranges that tile the file, the reader's document jobs are the iterable path's
    (``iter_doc_jobs`` over ``TaggedLineDocument``) range by range: tag tokens (the line
    numbers), word ids, document ends (an empty document too), a line of 12,000 words
    whole."""
    path = write_documents(tmp_path / "docs.txt", long_line=12_000)
    docs = list(TaggedLineDocument(str(path)))
    words = sorted({w for d in docs for w in d.words} - {"moon"})  # one unknown word
    key_to_index = {w: k for k, w in enumerate(words)}
    vocab = Vocab(key_to_index)
    ranges = byte_ranges(os.path.getsize(path), parts)
    firsts = lines_before(str(path), [start for start, _ in ranges])
    bounds = firsts + [len(docs)]
    every = []  # every range's jobs
    for k, (start, end) in enumerate(ranges):
        got = encode_range(str(path), start, end, vocab, batch_words, n_docs=len(docs),
                           first_doc=firsts[k])  # fmt: skip
        every += got
        expected = list(iter_doc_jobs(docs[bounds[k] : bounds[k + 1]], key_to_index, {},
                                      len(docs), batch_words))  # fmt: skip
        assert len(got) == len(expected)
        for (ids, ends, raw), job in zip(got, expected, strict=True):
            np.testing.assert_array_equal(ids, job.ids)
            np.testing.assert_array_equal(ends, job.ends)
            assert raw == job.raw_words
    tags = np.concatenate([ids[ids < 0] for ids, _, _ in every])
    assert sorted(-tags - 1) == list(range(len(docs)))  # every line once


def test_lines_past_the_document_rows_train_without_a_tag(tmp_path):
    """A line numbered past the rows (the file grew after the vocabulary was built) is read
    without its tag token: no row outside the document vectors is ever named."""
    path = write_documents(tmp_path / "docs.txt", n=30, blank_every=0)
    vocab = Vocab({w: k for k, w in enumerate(sorted(set(" ".join(TOPICS).split())))})
    jobs = encode_range(str(path), 0, os.path.getsize(path), vocab, 10**6, n_docs=20)
    ids = jobs[0][0]
    assert sorted(-ids[ids < 0] - 1) == list(range(20))
    assert len(jobs[0][1]) == 30  # the ten lines past the rows are still documents


@pytest.mark.parametrize("dm", [0, 1])
def test_one_worker_trains_exactly_like_the_iterable_path(tmp_path, dm):
    """With one worker, ``corpus_file`` and the same documents as an iterable train the same
    bits (the same jobs, rates and random streams)."""
    path = write_documents(tmp_path / "docs.txt")
    settings = dict(dm=dm, vector_size=12, min_count=1, epochs=3, workers=1, seed=5,
                    dbow_words=1, sample=0.01)  # fmt: skip
    from_file = Doc2Vec(corpus_file=str(path), **settings)
    other = Doc2Vec(TaggedLineDocument(str(path)), **settings)
    listed = Doc2Vec(list(TaggedLineDocument(str(path))), **settings)
    for model in (other, listed):
        np.testing.assert_array_equal(from_file.dv.vectors, model.dv.vectors)
        np.testing.assert_array_equal(from_file.wv.vectors, model.wv.vectors)
        np.testing.assert_array_equal(from_file.syn1, model.syn1)


def test_two_workers_train_every_document_by_its_line_number(tmp_path):
    """Two ranges, each numbering its lines from where it starts: exactly the rows of the
    lines with words move (an empty line every 17 keeps its row: a line numbered one off
    would move another), and documents of one topic (every third line) end nearest each
    other (chance: 1/3; the iterable path of the same documents: 0.71)."""
    path = write_documents(tmp_path / "docs.txt", n=600)
    model = Doc2Vec(corpus_file=str(path), vector_size=16, min_count=1, epochs=30, workers=2,
                    seed=1, sample=0)  # fmt: skip
    fresh = Doc2Vec(vector_size=16, min_count=1, seed=1)
    fresh.build_vocab(corpus_file=str(path))
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    moved = np.abs(model.dv.vectors - fresh.dv.vectors).max(axis=1) > 0
    assert moved.tolist() == [bool(line.split()) for line in lines]
    hits = total = 0
    for k in range(0, 600, 7):
        if not lines[k].split():
            continue
        near = [t for t, _ in model.dv.most_similar(k, topn=5)]
        hits += sum(t % 3 == k % 3 for t in near)
        total += 5
    assert hits / total > 0.6


def test_file_trainer_documents_needs_a_document_trainer(tmp_path):
    """A document job names rows the word kinds do not have, and the other way round: the
    reader's mode and the Trainer's kind must agree."""
    from hsw2v import Word2Vec
    from hsw2v.running.objectives import outputs_of
    from hsw2v.running.schedule import Schedule
    from hsw2v.running.trainer import trainer_settings

    path = write_documents(tmp_path / "docs.txt", n=30)
    schedule = Schedule(0.025, 0.0001, 1, 100, True, 1)
    for model, documents in (
        (Doc2Vec(corpus_file=str(path), vector_size=8, min_count=1), False),
        (Word2Vec(corpus_file=str(path), vector_size=8, min_count=1), True),
    ):
        trainer = trainer_settings(model).build(model._input_matrix(), *outputs_of(model).values())
        with pytest.raises(ValueError, match="document kind"):
            FileTrainer(str(path), trainer, Vocab(model.wv.key_to_index), 1, 100, 10_000,
                        schedule, documents=documents)  # fmt: skip


def test_a_file_that_grows_during_training_does_not_crash(tmp_path):
    """Lines appended after the vocabulary was built are numbered past the rows: trained
    without a tag, never read as rows (in a subprocess: a crash fails the test)."""
    path = write_documents(tmp_path / "docs.txt", n=100)
    code = f"""
import numpy as np
from hsw2v import Doc2Vec
model = Doc2Vec(vector_size=8, min_count=1, workers=2, seed=1)
model.build_vocab(corpus_file={str(path)!r})
rows = len(model.dv.vectors)
with open({str(path)!r}, "a", encoding="utf-8") as f:
    f.write("cat dog\\n" * 500)
model.train(corpus_file={str(path)!r}, total_examples=model.corpus_count,
            total_words=model.corpus_total_words, epochs=2)
assert len(model.dv.vectors) == rows and np.isfinite(model.dv.vectors).all()
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")


def test_a_refused_file_trainer_closes_no_file_of_the_process(tmp_path):
    """A FileTrainer whose arguments are refused owns no file: its end must not close the
    process's descriptor 0 (it once took 0, the default of its unset field, for its own)."""
    path = write_documents(tmp_path / "docs.txt", n=30)
    script = f"""
import gc, os
from hsw2v import Doc2Vec
from hsw2v._kernels._corpus_file import FileTrainer, Vocab
from hsw2v.running.objectives import outputs_of
from hsw2v.running.schedule import Schedule
from hsw2v.running.trainer import trainer_settings
model = Doc2Vec(corpus_file={str(path)!r}, vector_size=8, min_count=1)
trainer = trainer_settings(model).build(model._input_matrix(), *outputs_of(model).values())
try:
    FileTrainer({str(path)!r}, trainer, Vocab(model.wv.key_to_index), 1, 100, 10_000,
                Schedule(0.025, 0.0001, 1, 100, True, 1), documents=False)
except ValueError:
    pass
gc.collect()
os.fstat(0)
print("descriptor 0 open")
"""
    done = subprocess.run([sys.executable, "-c", script], stdin=subprocess.PIPE,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "descriptor 0 open" in done.stdout


def test_the_files_scan_is_the_documents_scan(tmp_path):
    """Doc2Vec's ``build_vocab(corpus_file=...)`` counts the file in the workers' byte ranges
    without the GIL: the same words in the same order, counts, documents (blank lines and a
    last line without a newline included) and tags as the documents read one by one."""
    path = write_documents(tmp_path / "docs.txt", n=200, blank_every=7)
    with open(path, "ab") as f:
        f.write(b"last line without a newline")
    for workers in (1, 2, 3):
        settings = dict(vector_size=8, min_count=1, workers=workers, seed=3)
        from_file = Doc2Vec(**settings)
        from_file.build_vocab(corpus_file=str(path))
        documents = Doc2Vec(**settings)
        documents.build_vocab(TaggedLineDocument(str(path)))
        assert from_file.wv.index_to_key == documents.wv.index_to_key
        assert from_file.wv.expandos["count"].tolist() == documents.wv.expandos["count"].tolist()
        assert (from_file.corpus_count, from_file.corpus_total_words) == (
            documents.corpus_count, documents.corpus_total_words)  # fmt: skip
        assert from_file.corpus_count == 201
        assert from_file.dv.index_to_key == documents.dv.index_to_key == list(range(201))
        np.testing.assert_array_equal(from_file.dv.vectors, documents.dv.vectors)
