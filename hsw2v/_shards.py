"""Corpus files cut into byte ranges, read and counted range by range (for distributed training).

A corpus is one or more line-per-sentence files (what :class:`hsw2v.LineSentence` reads),
local paths or smart_open URLs. It is cut by bytes, never by lines, so nobody has to read a
file to split it:

* a *range* ``(path, start, end)`` holds every line that *starts* at a byte offset in
  ``[start, end)``: a reader seeks to ``start - 1``; if that byte is not ``\\n``, the line
  under ``start`` began in the previous range and is skipped; it then reads lines while they
  start before ``end`` (the last one may run past ``end``). Ranges that tile a file therefore
  yield each of its lines exactly once, in order, whatever the cut points;
* a compressed file (``.gz``, ``.bz2``, ...) or a stream that cannot seek is one range
  (``start=0, end=None``): its bytes cannot be entered in the middle;
* lines become sentences exactly as :class:`hsw2v.LineSentence` makes them (whitespace
  split, blank lines skipped, lines longer than ``max_sentence_length`` cut into chunks), so
  the counts of all ranges add up to the counts of the whole corpus.

Counting a range also records *marks*: the byte offset of a line start, with the words and
sentences before it, every ``mark_every`` words or so. The training plan cuts ranges at marks
into pieces of a chosen number of words without reading the files again.
"""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from hsw2v.corpora import CorpusNotFoundError, _chunked_lines
from hsw2v.vocab import prune_counts

_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".lz4", ".zip")


class CorpusChangedError(ValueError):
    """A corpus file changed between the vocabulary pass and a read of it: its size,
    modification time or inode differ from what the vocabulary pass recorded, or a piece
    holds another number of words than it counted. The message names the file and says what
    to do (keep the files unchanged until training ends, or train again from the start)."""


def file_stamp(path: str) -> tuple[int, int, int] | None:
    """``(size, mtime_ns, inode)`` of a local file, what the vocabulary pass records and every
    later read compares (the device is left out: a worker on another machine sees a shared
    file system under another device number); None for a URL."""
    if "://" in path:
        return None
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def check_stamp(path: str, stamp: tuple | None, when: str) -> None:
    """Raise :class:`CorpusChangedError` unless ``path`` still has the recorded ``stamp``."""
    if stamp is None:
        return
    try:
        now = file_stamp(path)
    except OSError as exc:
        now, why = None, f"it cannot be read any more ({exc.strerror})"
    if now == stamp:
        return
    if now is not None:
        size, mtime, inode = stamp
        changes = []
        if now[0] != size:
            changes.append(f"its size went from {size:,} to {now[0]:,} bytes")
        if now[1] != mtime:
            changes.append("its modification time changed")
        if now[2] != inode:
            changes.append("it was replaced (another inode)")
        why = ", ".join(changes)
    raise CorpusChangedError(
        f"corpus file {path!r} changed {when}: {why}. Training on it would train on other "
        "words than the vocabulary counted; keep the corpus files unchanged until training "
        "ends (copy them first if they are being written), then train again"
    )


@dataclass(frozen=True)
class ByteRange:
    """The lines of ``path`` that start at a byte offset in ``[start, end)`` (``end=None``:
    to the end of the file). ``stamp`` is the file's :func:`file_stamp` when the vocabulary
    pass planned the ranges (None: not checked): every read checks the file still has it."""

    path: str
    start: int = 0
    end: int | None = None
    stamp: tuple | None = field(default=None, repr=False, compare=False)


@dataclass
class RangeCount:
    """What counting one range found: word counts in first-seen order, totals, and marks
    ``(offset, words_before, sentences_before)`` at line starts inside the range."""

    counts: dict
    words: int
    sentences: int
    marks: list = field(default_factory=list)


def expand_paths(corpus_paths) -> list[str]:
    """The corpus files in training order: a path, URL or directory (its files, sorted by
    name, as :class:`hsw2v.PathLineSentences`), or a list of them.

    >>> expand_paths(["s3://bucket/a.txt", "s3://bucket/b.txt"])
    ['s3://bucket/a.txt', 's3://bucket/b.txt']
    """
    if isinstance(corpus_paths, (str, bytes, os.PathLike)):
        corpus_paths = [corpus_paths]
    paths: list[str] = []
    for item in corpus_paths:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(
                f"corpus_paths must be paths or URLs of text files, got {type(item).__name__}"
            )
        path = os.fspath(item)
        if "://" in path:
            paths.append(path)
        elif os.path.isdir(path):
            files = sorted(
                os.path.join(path, name)
                for name in os.listdir(path)
                if os.path.isfile(os.path.join(path, name))
            )
            if not files:
                raise ValueError(f"directory contains no files: {path!r}")
            paths.extend(files)
        elif os.path.isfile(path):
            paths.append(path)
        else:
            raise CorpusNotFoundError(2, "No such file or directory", path)
    if not paths:
        raise ValueError("corpus_paths is empty: give at least one file")
    return paths


def _smart_open(path: str, mode: str, **kwargs):
    """``smart_open.open``, imported at the first need: a task that reads no file (Spark's)
    never imports it, nor the cloud clients it brings (a quarter of a second)."""
    import smart_open

    return smart_open.open(path, mode, **kwargs)


def splittable_size(path: str) -> int | None:
    """The size in bytes of a file that can be read from any offset, or None (compressed, or
    a stream that cannot seek)."""
    if path.lower().endswith(_COMPRESSED):
        return None
    if "://" not in path:
        return os.path.getsize(path)
    try:
        with _smart_open(path, "rb", compression="disable") as fin:
            return int(fin.seek(0, io.SEEK_END))
    except (OSError, ValueError, NotImplementedError, io.UnsupportedOperation):
        return None


def plan_ranges(
    paths: list[str], n_shards: int, sizes: list[int | None], stamps: list | None = None
) -> list[list[ByteRange]]:
    """Cut the files (in order) into ``n_shards`` shards of about equal bytes; each shard is a
    list of ranges. A file that cannot be split goes whole to the shard where it starts.

    >>> plan_ranges(["a", "b"], 2, [10, 30])
    [[ByteRange(path='a', start=0, end=10), ByteRange(path='b', start=0, end=10)], \
[ByteRange(path='b', start=10, end=30)]]
    """
    known = [s if s is not None else 1 for s in sizes]
    total = max(sum(known), 1)
    bounds = [total * k // n_shards for k in range(n_shards + 1)]
    shards: list[list[ByteRange]] = [[] for _ in range(n_shards)]
    offset = 0
    stamps = stamps if stamps is not None else [None] * len(paths)
    for path, size, weight, stamp in zip(paths, sizes, known, stamps, strict=True):
        if size is None:
            shard = max(k for k in range(n_shards) if bounds[k] <= offset)
            shards[shard].append(ByteRange(path, 0, None, stamp))
        else:
            for k in range(n_shards):
                lo = max(bounds[k], offset) - offset
                hi = min(bounds[k + 1], offset + size) - offset
                if hi > lo:
                    shards[k].append(ByteRange(path, lo, hi, stamp))
        offset += weight
    return shards


@contextmanager
def unchanged_while_read(byte_range: ByteRange) -> Iterator[None]:
    """Around a whole read of ``byte_range``: a range with a ``stamp`` checks the file against
    it before and after (:class:`CorpusChangedError`), whoever reads it (here, or the
    kernel's reader in :mod:`hsw2v.running.file_scan`)."""
    check_stamp(byte_range.path, byte_range.stamp, "since the vocabulary pass")
    yield
    check_stamp(byte_range.path, byte_range.stamp, "while it was read")


def read_lines(byte_range: ByteRange) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for every line that starts inside the range (see module docstring),
    checked against its stamp (:func:`unchanged_while_read`)."""
    with unchanged_while_read(byte_range):
        yield from _read_lines(byte_range.path, byte_range.start, byte_range.end)


def _read_lines(path: str, start: int, end: int | None) -> Iterator[tuple[int, bytes]]:
    if end is None:
        with _smart_open(path, "rb") as fin:
            offset = 0
            for line in fin:
                yield offset, line
                offset += len(line)
        return
    with _smart_open(path, "rb", compression="disable") as fin:
        offset = start
        if start > 0:
            fin.seek(start - 1)
            if fin.read(1) != b"\n":
                offset += len(fin.readline())  # the rest of a line that began earlier
        while offset < end:
            line = fin.readline()
            if not line:
                return
            yield offset, line
            offset += len(line)


def range_sentences(byte_range: ByteRange, max_sentence_length: int) -> Iterator[list[str]]:
    """The sentences of a range, as :class:`hsw2v.LineSentence` makes them."""
    return _chunked_lines((line for _, line in read_lines(byte_range)), None, max_sentence_length)


def count_and_mark_range(
    byte_range: ByteRange,
    max_sentence_length: int,
    mark_every: int,
    max_vocab_size: int | None = None,
    trim_rule=None,
) -> RangeCount:
    """Count the words of one range (one streaming pass over any source, local or remote)
    and record marks about every ``mark_every`` words, where the range can later be cut
    into pieces. With ``max_vocab_size`` the counts are pruned as
    :func:`hsw2v.vocab.scan_counts` prunes them. (The kernel's
    ``hsw2v._kernels._corpus_file.scan_range_vocab`` counts a byte range of a local file for
    ``corpus_file`` mode, without marks.)"""
    counts: Counter = Counter()
    words = sentences = since_mark = 0
    marks = []
    min_reduce = 1
    splittable = byte_range.end is not None
    for offset, line in read_lines(byte_range):
        if splittable and since_mark >= mark_every:
            marks.append((offset, words, sentences))
            since_mark = 0
        for sentence in _chunked_lines((line,), None, max_sentence_length):
            counts.update(sentence)
            words += len(sentence)
            since_mark += len(sentence)
            sentences += 1
        if max_vocab_size and len(counts) > max_vocab_size:
            prune_counts(counts, min_reduce, trim_rule)
            min_reduce += 1
    return RangeCount(dict(counts), words, sentences, marks)


def merge_counts(parts: Iterable[dict], max_vocab_size: int | None = None, trim_rule=None) -> dict:
    """Add word counts; keys stay in first-seen order when ``parts`` come in corpus order.

    >>> merge_counts([{"b": 1, "a": 2}, {"c": 1, "a": 1}])
    {'b': 1, 'a': 3, 'c': 1}
    """
    merged: dict = {}
    for part in parts:
        if not merged:
            merged = dict(part)
            continue
        for word, count in part.items():
            merged[word] = merged.get(word, 0) + count
    min_reduce = 1
    while max_vocab_size and len(merged) > max_vocab_size:
        prune_counts(merged, min_reduce, trim_rule)
        min_reduce += 1
    return merged


@dataclass
class Piece:
    """Consecutive lines of a shard: ranges to read, and their exact words and sentences."""

    ranges: list
    words: int
    sentences: int

    def read(self, max_sentence_length: int) -> Iterator[list[str]]:
        """The piece's sentences, read from its ranges (what a training task trains)."""
        for byte_range in self.ranges:
            yield from range_sentences(byte_range, max_sentence_length)

    def source(self) -> str:
        """Where the piece's sentences come from, for messages."""
        return ", ".join(sorted({r.path for r in self.ranges}))


def cut_shard(ranges: list[ByteRange], counts: list[RangeCount], n_pieces: int) -> list[Piece]:
    """Cut a shard into ``n_pieces`` pieces of about equal words, at marks (line starts).
    Pieces may be empty when the shard has fewer marks than pieces."""
    # every place the shard can be cut: (range index, offset, words before, sentences before)
    cuts, words_before, sentences_before = [], 0, 0
    for index, (byte_range, count) in enumerate(zip(ranges, counts, strict=True)):
        cuts.append((index, byte_range.start, words_before, sentences_before))
        for offset, w, s in count.marks:
            cuts.append((index, offset, words_before + w, sentences_before + s))
        words_before += count.words
        sentences_before += count.sentences
    end = (len(ranges), None, words_before, sentences_before)
    chosen, j = [cuts[0] if cuts else end], 0
    for p in range(1, n_pieces):
        target = words_before * p / n_pieces
        while j + 1 < len(cuts) and cuts[j][2] < target:
            j += 1
        pick = cuts[j] if cuts[j][2] >= target else end
        chosen.append(pick if pick[2] >= chosen[-1][2] else chosen[-1])
    chosen.append(end)
    pieces = []
    for (i0, o0, w0, s0), (i1, o1, w1, s1) in zip(chosen, chosen[1:], strict=False):
        parts = []
        for i in range(i0, min(i1 + 1, len(ranges))):
            r = ranges[i]
            lo = o0 if i == i0 else r.start
            hi = o1 if i == i1 else r.end
            if r.end is None:  # unsplittable: whole or nothing
                if i != i1 or o1 is None:
                    parts.append(r)
            elif hi is None or hi > lo:
                parts.append(ByteRange(r.path, lo, hi, r.stamp))
        pieces.append(Piece(parts if w1 > w0 or s1 > s0 else [], w1 - w0, s1 - s0))
    return pieces
