"""Reader and writer of the word2vec C tool's vector files, behind KeyedVectors.

The format, as written by the original ``word2vec.c`` (``-output FILE [-binary 1]``):

* a header line ``"V d\\n"`` (V vectors of d dimensions), which GloVe-style files omit;
* text: one line per vector, ``"word v1 v2 ... vd\\n"``, values separated by single spaces;
* binary: per vector ``"word "`` followed by d little-endian float32 values. The C tool ends
  each record with ``"\\n"``; gensim 4 writes none. Both are read (a newline before a word is
  skipped), and records are written the way gensim 4.4 writes them, byte for byte.

Files are opened with ``smart_open``, so a ``.gz`` or ``.bz2`` name (or a remote URI) works.
Local files are written to a temporary file in the same directory and renamed into place.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager

import numpy as np

from hsw2v._atomic_files import atomic_file
from hsw2v.corpora import COMPRESSED_SUFFIXES, open_source
from hsw2v.exceptions import TruncatedFileError

logger = logging.getLogger(__name__)

_CHUNK = 1 << 20
_LE_FLOAT32 = np.dtype("<f4")


def _is_local_path(fname) -> bool:
    if isinstance(fname, os.PathLike):
        return True
    return isinstance(fname, str) and "://" not in fname


@contextmanager
def _output(fname, append: bool):
    """Open `fname` for binary writing: atomically (temp file + rename) unless appending."""
    if append or not _is_local_path(fname):
        with open_source(fname, "ab" if append else "wb") as fout:
            yield fout
        return
    with atomic_file(fname) as (fd, tmp):
        os.close(fd)
        with open_source(tmp, "wb") as fout:
            yield fout
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _store_order(kv, sort_attr: str, fvocab) -> list:
    """Keys in the order they are written: descending `sort_attr`, ties in insertion order."""
    if sort_attr not in kv.expandos:
        if fvocab is not None:
            raise ValueError(
                f"Cannot store vocabulary with '{sort_attr}' because that attribute does not exist"
            )
        logger.warning(
            "attribute %s not present in %s; will store in internal index_to_key order",
            sort_attr,
            kv,
        )
        return list(kv.index_to_key)
    keys = list(kv.key_to_index)
    slots = np.fromiter(kv.key_to_index.values(), dtype=np.int64, count=len(keys))
    values = kv.expandos[sort_attr][slots]
    if values.dtype.kind in "iub" and (values.size == 0 or values.max() < 2**63):
        order = np.argsort(-values.astype(np.int64), kind="stable")
    elif values.dtype.kind == "f":
        order = np.argsort(-values, kind="stable")
    else:
        order = sorted(range(len(keys)), key=lambda i: -values[i])
    return [keys[i] for i in order]


def write_word2vec(kv, fname, fvocab, binary, total_vec, write_header, prefix, append, sort_attr):
    """Write `kv` in word2vec C format: the body of :meth:`KeyedVectors.save_word2vec_format`,
    which holds the defaults and the documentation of every argument.

    >>> import os, tempfile
    >>> from hsw2v.keyedvectors import KeyedVectors
    >>> kv = KeyedVectors(1); kv.add_vectors(["a"], [[2.0]])
    >>> path = os.path.join(tempfile.mkdtemp(), "v.bin")
    >>> kv.save_word2vec_format(path, binary=True)
    >>> open(path, "rb").read()
    b'1 1\\na \\x00\\x00\\x00@'
    """
    if total_vec is None:
        total_vec = len(kv.index_to_key)
    if kv.vectors.shape != (len(kv.index_to_key), kv.vector_size):
        raise ValueError(
            f"vectors of shape {kv.vectors.shape} do not match {len(kv.index_to_key)} keys "
            f"of {kv.vector_size} dimensions"
        )
    keys = _store_order(kv, sort_attr, fvocab)
    if fvocab is not None:
        logger.info("storing vocabulary in %s", fvocab)
        counts = kv.expandos[sort_attr]
        with _output(fvocab, append) as vout:
            for start in range(0, len(keys), 10000):
                lines = [
                    f"{prefix}{key} {counts[kv.key_to_index[key]]}\n"
                    for key in keys[start : start + 10000]
                ]
                vout.write("".join(lines).encode("utf8"))
    logger.info("storing %sx%s projection weights into %s", total_vec, kv.vector_size, fname)
    with _output(fname, append) as fout:
        if write_header:
            fout.write(f"{total_vec} {kv.vector_size}\n".encode())
        for start in range(0, len(keys), 10000):
            batch = keys[start : start + 10000]
            rows = kv.vectors[[kv.get_index(key) for key in batch]] if batch else kv.vectors[:0]
            if binary:
                data = rows.astype(_LE_FLOAT32)
                parts = [
                    f"{prefix}{key} ".encode() + data[i].tobytes() for i, key in enumerate(batch)
                ]
            else:
                parts = [
                    f"{prefix}{key} {' '.join(map(str, rows[i]))}\n".encode()
                    for i, key in enumerate(batch)
                ]
            fout.write(b"".join(parts))


def _read_counts(fvocab, encoding, unicode_errors) -> dict:
    counts = {}
    with open_source(fvocab, "rb") as fin:
        for line_no, line in enumerate(fin, start=1):
            try:
                text = line.decode(encoding, errors=unicode_errors)
            except UnicodeDecodeError as exc:
                raise ValueError(f"{fvocab}: line {line_no}: cannot decode ({exc})") from exc
            try:
                word, count = text.strip().split()
                counts[word] = int(count)
                if not 0 <= counts[word] < 2**63:
                    raise ValueError("count out of range")
            except ValueError as exc:
                raise ValueError(
                    f"{fvocab}: line {line_no}: expected 'word count', got {line[:80]!r}"
                ) from exc
    return counts


class _Collector:
    """Gathers unique words and their vectors into preallocated arrays."""

    def __init__(self, fname, vocab_size, rows, vector_size, datatype):
        self.vocab_size = vocab_size  # as declared; `rows` (<= vocab_size) are allocated
        try:
            self.vectors = np.zeros((rows, vector_size), dtype=datatype)
            self.where = np.zeros(rows, dtype=np.int64)  # line or byte offset of each row
        except (MemoryError, ValueError, OverflowError) as exc:
            raise ValueError(
                f"{fname}: line 1: the header declares {vocab_size} vectors of {vector_size} "
                f"values, too many to allocate ({type(exc).__name__}: {exc})"
            ) from None
        self.words = []
        self.index = {}

    def add(self, word, values, where):
        if word in self.index:
            logger.warning("duplicate word '%s' in word2vec file, ignoring all but first", word)
            return
        n = len(self.words)
        self.index[word] = n
        self.vectors[n] = values
        self.where[n] = where
        self.words.append(word)

    def first_nonfinite(self):
        """``(row, where)`` of the first stored vector holding a NaN or an infinity, or None."""
        step = max(1, (1 << 24) // max(1, self.vectors.shape[1]))  # bounded temporary memory
        for start in range(0, len(self.words), step):
            stop = min(start + step, len(self.words))
            bad = np.flatnonzero(~np.isfinite(self.vectors[start:stop]).all(axis=1))
            if bad.size:
                row = start + int(bad[0])
                return row, int(self.where[row])
        return None

    def into(self, cls, vector_size, datatype, counts):
        n = len(self.words)
        kv = cls(vector_size, 0, dtype=datatype)
        kv.vectors = (
            self.vectors if n == len(self.vectors) else np.ascontiguousarray(self.vectors[:n])
        )
        kv.index_to_key = self.words
        kv.key_to_index = self.index
        kv.next_index = n
        if counts is None:  # no vocabulary file: made-up counts, descending in file order
            kv.expandos["count"] = self.vocab_size - np.arange(n, dtype=np.int64)
        else:
            missing = [w for w in self.words if w not in counts]
            if missing:
                logger.warning(
                    "vocabulary file is incomplete: %d words missing, e.g. '%s'",
                    len(missing),
                    missing[0],
                )
            kv.expandos["count"] = np.array([counts.get(w, 0) for w in self.words], np.int64)
        return kv


def _parse_text_line(fname, line_no, line, vector_size, datatype, encoding, unicode_errors):
    try:
        parts = line.rstrip().decode(encoding, errors=unicode_errors).split(" ")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{fname}: line {line_no}: cannot decode the word ({exc})") from exc
    if vector_size is not None and len(parts) - 1 != vector_size:
        raise ValueError(
            f"{fname}: line {line_no}: expected a word and {vector_size} values, "
            f"found {len(parts) - 1} values"
        )
    if vector_size is None and len(parts) < 2:
        raise ValueError(f"{fname}: line {line_no}: expected a word and its vector values")
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            values = np.array(parts[1:], dtype=datatype)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"{fname}: line {line_no}: non-numeric vector value ({exc})") from exc
    return parts[0], values


def _parse_header(fname, line, encoding):
    try:
        fields = line.decode(encoding).split()
        vocab_size, vector_size = (int(x) for x in fields)
        if vocab_size < 0 or vector_size < 1:
            raise ValueError("negative or zero size")
    except ValueError as exc:
        raise ValueError(
            f"{fname}: line 1: invalid header {line[:80]!r}: expected 'vocab_size vector_size' "
            "(use no_header=True for files without one)"
        ) from exc
    return vocab_size, vector_size


def _read_text(fname, fin, collector, first_line_no, vector_size, datatype, encoding, errors):
    for i in range(collector.vocab_size):
        line = fin.readline()
        line_no = first_line_no + i
        if not line:
            raise TruncatedFileError(
                f"{fname}: line {line_no}: unexpected end of file after {i} of "
                f"{collector.vocab_size} vectors (truncated file or wrong vector count)"
            )
        word, values = _parse_text_line(
            fname, line_no, line, vector_size, datatype, encoding, errors
        )
        collector.add(word, values, line_no)


def _read_binary(fname, fin, collector, offset, vector_size, datatype, encoding, errors):
    nbytes = vector_size * _LE_FLOAT32.itemsize
    buf, pos, eof = b"", 0, False  # buf starts at byte `offset` of the file
    for i in range(collector.vocab_size):
        while True:
            space = buf.find(b" ", pos)
            if space >= 0 and len(buf) - space - 1 >= nbytes:
                break
            if eof:
                raise TruncatedFileError(
                    f"{fname}: unexpected end of file at byte offset {offset + len(buf)} in "
                    f"vector {i + 1} of {collector.vocab_size} (truncated file or wrong count)"
                )
            offset += pos
            buf, pos = buf[pos:], 0
            chunk = fin.read(_CHUNK)
            eof = not chunk
            buf += chunk
        raw = buf[pos:space].lstrip(b"\n")
        try:
            word = raw.decode(encoding, errors=errors)
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{fname}: cannot decode the word at byte offset {offset + pos} ({exc})"
            ) from exc
        values = np.frombuffer(buf, dtype=_LE_FLOAT32, count=vector_size, offset=space + 1)
        with np.errstate(over="ignore"):  # float32 -> float16 may overflow; checked later
            collector.add(word, values, offset + space + 1)
        pos = space + 1 + nbytes


def _local_plain_size(fname):
    """Size in bytes of `fname` if it is a local file read as is (not decompressed), else None."""
    if not _is_local_path(fname):
        return None
    path = os.fspath(fname)
    if path.lower().endswith(COMPRESSED_SUFFIXES):
        return None
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return None


def _rows_to_allocate(fname, vocab_size, vector_size, binary, header_len):
    """How many rows to preallocate for `vocab_size` declared vectors.

    A local, uncompressed file cannot hold more records than its size allows: each binary
    record takes at least ``4 * d + 1`` bytes ("word " and d float32), each text line at least
    ``2 * d`` (d values of one character, each after a space). Allocating no more than that
    keeps a corrupted header from reserving memory the file could never fill; the reader
    then reports the end of file where it is met.
    """
    file_size = _local_plain_size(fname)
    if file_size is None:
        return vocab_size
    per_vector = 4 * vector_size + 1 if binary else 2 * vector_size
    return min(vocab_size, max(0, file_size - header_len) // per_vector)


def read_word2vec(
    cls, fname, fvocab, binary, encoding, unicode_errors, limit, datatype, no_header,
    allow_nonfinite,
):
    """Read a word2vec C format file: the body of :meth:`KeyedVectors.load_word2vec_format`,
    which holds the defaults and the documentation of every argument.

    >>> import os, tempfile
    >>> from hsw2v.keyedvectors import KeyedVectors
    >>> path = os.path.join(tempfile.mkdtemp(), "v.txt")
    >>> _ = open(path, "w").write("1 2\\nhello 0.5 -1\\n")
    >>> KeyedVectors.load_word2vec_format(path)["hello"].tolist()
    [0.5, -1.0]
    """
    if limit is not None and (
        not isinstance(limit, (int, np.integer)) or isinstance(limit, bool) or limit < 0
    ):
        raise ValueError(f"limit must be None or an integer >= 0, got {limit!r}")
    counts = None if fvocab is None else _read_counts(fvocab, encoding, unicode_errors)
    logger.info("loading projection weights from %s", fname)
    with open_source(fname, "rb") as fin:
        if no_header:
            if binary:
                raise NotImplementedError("no_header only available for text-format files")
            vocab_size, vector_size = 0, None
            for line_no, line in enumerate(fin, start=1):
                if limit and vocab_size == limit:
                    break
                if vector_size is None:
                    word, values = _parse_text_line(
                        fname, line_no, line, None, datatype, encoding, unicode_errors
                    )
                    vector_size = len(values)
                vocab_size += 1
            if vector_size is None:
                raise ValueError(f"{fname}: no vectors found")
            first_line_no, header_len = 1, 0
            fin.close()
            fin = open_source(fname, "rb")
        else:
            header = fin.readline()
            vocab_size, vector_size = _parse_header(fname, header, encoding)
            first_line_no, header_len = 2, len(header)
        if limit:
            vocab_size = min(vocab_size, limit)
        try:
            rows = _rows_to_allocate(fname, vocab_size, vector_size, binary, header_len)
            collector = _Collector(fname, vocab_size, rows, vector_size, datatype)
            reader = _read_binary if binary else _read_text
            start = header_len if binary else first_line_no
            reader(fname, fin, collector, start, vector_size, datatype, encoding, unicode_errors)
        finally:
            fin.close()
    if not allow_nonfinite:
        bad = collector.first_nonfinite()
        if bad is not None:
            row, where = bad
            place = f"byte offset {where}" if binary else f"line {where}"
            raise ValueError(
                f"{fname}: {place}: the vector of {collector.words[row]!r} holds NaN or "
                f"infinite values (or values too large for {np.dtype(datatype).name}); "
                "pass allow_nonfinite=True to load them anyway"
            )
    return collector.into(cls, vector_size, datatype, counts)
