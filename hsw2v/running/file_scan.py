"""A ``corpus_file`` read by the workers themselves, one byte range each.

:func:`file_mode_path` says whether a ``corpus_file`` can be read that way (a local,
uncompressed file) or must be streamed through :class:`hsw2v.corpora.LineSentence`;
:func:`count_file` is the vocabulary scan over the ranges, one thread each, through the
``corpus_file`` kernel (:mod:`hsw2v._kernels._corpus_file`). The epochs over the same ranges
are :class:`hsw2v.running.passes.FilePasses`; with documents (Doc2Vec), each range's first line
number is :func:`lines_before` its start.

The distributed tasks read their shards' local ranges through the same kernel:
:func:`count_local_range` counts and marks one (as :func:`hsw2v._shards.count_and_mark_range`)
and :func:`encode_local_ranges` makes a piece's jobs (as
:func:`hsw2v.running.epochs.iter_jobs` over :meth:`hsw2v._shards.Piece.read`).
"""

from __future__ import annotations

import errno
import logging
import os

import numpy as np

from hsw2v._kernels._corpus_file import (
    Vocab,
    byte_ranges,
    encode_range,
    scan_range_marks,
    scan_range_vocab,
)
from hsw2v._shards import ByteRange, RangeCount, unchanged_while_read
from hsw2v.corpora import COMPRESSED_SUFFIXES
from hsw2v.corpora import MAX_WORDS_IN_BATCH as LINE_SENTENCE_MAX
from hsw2v.running.epochs import Job
from hsw2v.running.threads import Workers

logger = logging.getLogger(__name__)


def file_mode_path(corpus_file) -> str | None:
    """The path of a ``corpus_file`` the workers can read by byte ranges themselves, or None
    when it must be streamed through :class:`hsw2v.corpora.LineSentence` instead (compressed
    files, which cannot be split by bytes, and URLs). A local path that does not exist or is
    a directory is an error."""
    if corpus_file is None:
        return None
    if not isinstance(corpus_file, (str, os.PathLike)):
        raise TypeError(
            f"corpus_file must be a path (str or os.PathLike), got {type(corpus_file).__name__}"
        )
    path = os.fspath(corpus_file)
    if "://" in path:
        return None
    if os.path.isdir(path):
        raise IsADirectoryError(
            errno.EISDIR,
            "corpus_file is a directory; it must be one LineSentence file (for a directory "
            "of files, pass corpus_iterable=PathLineSentences(directory))",
            path,
        )
    if not os.path.isfile(path):
        raise FileNotFoundError(
            errno.ENOENT, "corpus_file does not exist (or is not a regular file)", path
        )
    if path.lower().endswith(COMPRESSED_SUFFIXES):
        return None
    return path


def count_file(path: str, workers: int) -> tuple[dict, int, int]:
    """Counts, raw words and sentences of a corpus file, as LineSentence would give them: one
    thread per byte range, merged in file order (so first-seen order is the file's)."""
    ranges = byte_ranges(os.path.getsize(path), max(1, workers))
    results: list = [None] * len(ranges)
    stop = np.zeros(1, dtype=np.int64)  # polled by every range between lines

    def count(k: int, start: int, end: int) -> None:
        results[k] = scan_range_vocab(path, start, end, LINE_SENTENCE_MAX, stop)

    def halt() -> None:
        stop[0] = 1

    # On an error or Ctrl-C every range stops; leaving the block waits for them all.
    with Workers(halt) as pool:
        for k, (start, end) in enumerate(ranges):
            pool.start(count, k, start, end, name=f"hsw2v-scan-{k}")
    counts: dict = results[0][0]  # the first range's own dict: its words first, in order
    for part, _, _ in results[1:]:
        get = counts.get
        for word, c in part.items():
            counts[word] = get(word, 0) + c
    total_words = sum(raw for _, raw, _ in results)
    sentences = sum(n for _, _, n in results)
    logger.info(
        "collected %i word types from a corpus of %i raw words and %i sentences",
        len(counts),
        total_words,
        sentences,
    )
    return counts, total_words, sentences


def local_range(byte_range: ByteRange) -> bool:
    """Whether the kernel can read ``byte_range`` itself: a byte range of a local file (not
    a URL, not a whole compressed file)."""
    return byte_range.end is not None and "://" not in byte_range.path


def count_local_range(
    byte_range: ByteRange, max_sentence_length: int, mark_every: int
) -> RangeCount:
    """:func:`hsw2v._shards.count_and_mark_range` (without pruning) for a :func:`local_range`,
    read and counted without the GIL; the same counts, in the same order, and the same marks.
    The file is checked against the range's stamp before and after."""
    with unchanged_while_read(byte_range):
        counts, words, sentences, marks = scan_range_marks(
            byte_range.path, byte_range.start, byte_range.end, max_sentence_length, mark_every
        )
    return RangeCount(counts, words, sentences, marks)


def encode_local_ranges(
    ranges: list[ByteRange], vocab: Vocab, batch_words: int, max_sentence_length: int
) -> list[Job]:
    """The jobs :func:`hsw2v.running.epochs.iter_jobs` makes from the sentences of
    consecutive :func:`local_range` ranges, read and encoded without the GIL. A job still
    short of ``batch_words`` raw words at a range's end is completed by the next range's
    first sentences, as one stream of sentences would complete it."""
    jobs: list = []
    open_job = None  # (ids, ends, raw): the last job, while it is short
    for r in ranges:
        carried = open_job[2] if open_job is not None else 0
        with unchanged_while_read(r):
            got = encode_range(
                r.path, r.start, r.end, vocab, batch_words, max_sentence_length, carried_raw=carried
            )
        if open_job is not None and got:  # the first job completes the open one
            ids, ends, raw = got[0]
            got[0] = (
                np.concatenate([open_job[0], ids]),
                np.concatenate([open_job[1], ends + len(open_job[0])]),
                raw,
            )
            open_job = None
        if got and got[-1][2] < batch_words:
            open_job = got.pop()
        jobs.extend(got)
    if open_job is not None:
        jobs.append(open_job)
    return [Job(ids=i, ends=e, raw_words=int(w), n_sentences=len(e)) for i, e, w in jobs]


_COUNT_BLOCK = 1 << 24  # bytes read at a time by lines_before


def lines_before(path: str, offsets) -> list[int]:
    r"""For each byte offset (ascending), how many lines of the file start before it: the
    line number of the first line a range starting there reads (a line starts at byte 0
    and after each newline but the file's last byte; ``_corpus_file`` design note C).

    >>> import os, tempfile
    >>> with tempfile.NamedTemporaryFile("wb", delete=False) as f:
    ...     _ = f.write(b"a b\n\nc\n")
    >>> lines_before(f.name, [0, 1, 4, 5, 7]); os.remove(f.name)
    [0, 1, 1, 2, 3]
    """
    out, newlines, read = [], 0, 0
    with open(path, "rb") as fin:
        for offset in offsets:
            if offset <= 0:
                out.append(0)
                continue
            while read < offset - 1:  # the newlines in bytes [0, offset - 1)
                block = fin.read(min(_COUNT_BLOCK, offset - 1 - read))
                if not block:
                    break
                newlines += block.count(b"\n")
                read += len(block)
            out.append(1 + newlines)
    return out
