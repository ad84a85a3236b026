"""A binary stream read in chunks that knows how many bytes are left, for the ``.bin`` reader.

:class:`ByteSource` serves :func:`hsw2v.fasttext._facebook.read_facebook_bin`: every size a
file announces is checked against the bytes left (where the stream's length is known) before
anything is allocated, and a file that ends early raises
:class:`~hsw2v.exceptions.FacebookTruncatedError` naming what it was reading.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from hsw2v.exceptions import FacebookTruncatedError

__all__ = ["FLOAT32", "ByteSource"]

FLOAT32 = np.dtype("<f4")  # the format's floats: little-endian float32
_CHUNK = 1 << 20


class ByteSource:
    """A binary stream read in chunks, that knows (where it can) how many bytes are left,
    so that sizes read from the file are checked before anything is allocated."""

    def __init__(self, fh, name: str):
        self.fh = fh
        self.name = name
        self.buf = bytearray()
        self.pos = 0  # next unread byte of buf
        self.offset = 0  # file offset of buf[0], from where reading started
        self.size = self._size()  # bytes from where reading started to the end, or None

    def _size(self):
        try:
            if not self.fh.seekable():
                return None
            here = self.fh.tell()
            end = self.fh.seek(0, os.SEEK_END)
            self.fh.seek(here)
        except (OSError, ValueError, AttributeError):
            return None
        return end - here

    @property
    def where(self) -> int:
        return self.offset + self.pos

    def left(self):
        """Bytes not read yet, or None for a stream of unknown length."""
        return None if self.size is None else self.size - self.where

    def _more(self) -> bool:
        """Read one more chunk into the buffer; False at the end of the stream."""
        if self.pos > _CHUNK and self.pos * 2 >= len(self.buf):
            del self.buf[: self.pos]
            self.offset += self.pos
            self.pos = 0
        chunk = self.fh.read(_CHUNK)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def truncated(self, what: str) -> FacebookTruncatedError:
        return FacebookTruncatedError(
            f"{self.name}: the file ends at byte {self.offset + len(self.buf)} inside {what} "
            "(truncated or damaged)"
        )

    def take(self, n: int, what: str) -> bytes:
        while len(self.buf) - self.pos < n:
            if not self._more():
                raise self.truncated(what)
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out

    def unpack(self, fmt: struct.Struct, what: str) -> tuple:
        return fmt.unpack(self.take(fmt.size, what))

    def word(self, what: str) -> bytes:
        """The bytes up to the next NUL, which is consumed too."""
        start = self.pos
        while True:
            end = self.buf.find(b"\0", start)
            if end >= 0:
                out = bytes(self.buf[self.pos : end])
                self.pos = end + 1
                return out
            start = len(self.buf) - self.pos
            if not self._more():
                raise self.truncated(what + " (no NUL ends it)")
            start += self.pos

    def matrix(self, rows: int, cols: int, what: str) -> np.ndarray:
        """A ``rows x cols`` float32 matrix, read in one call into its final array."""
        nbytes = rows * cols * FLOAT32.itemsize
        left = self.left()
        if left is not None and nbytes > left:
            raise FacebookTruncatedError(
                f"{self.name}: {what} of {rows} x {cols} float32 needs {nbytes} bytes, but "
                f"only {left} are left in the file (truncated or damaged)"
            )
        from_buf = min(nbytes, len(self.buf) - self.pos)
        if left is None:  # unknown length: grow with what actually arrives
            data = bytearray(self.buf[self.pos : self.pos + from_buf])
            self.pos += from_buf
            while len(data) < nbytes:
                chunk = self.fh.read(min(nbytes - len(data), _CHUNK))
                if not chunk:
                    raise self.truncated(what)
                data += chunk
            self.offset += len(data) - from_buf
            out = np.frombuffer(data, dtype=FLOAT32)
        else:
            out = np.empty(rows * cols, dtype=FLOAT32)
            view = memoryview(out.view(np.uint8))
            view[:from_buf] = self.buf[self.pos : self.pos + from_buf]
            self.pos += from_buf
            done = from_buf
            while done < nbytes:
                got = _readinto(self.fh, view[done:])
                if not got:
                    raise self.truncated(what)
                done += got
            self.offset += done - from_buf
        return out.astype(np.float32, copy=False).reshape(rows, cols)

    def at_end(self) -> bool:
        return len(self.buf) == self.pos and not self._more()


def _readinto(fh, view) -> int:
    if hasattr(fh, "readinto"):
        return fh.readinto(view) or 0
    chunk = fh.read(len(view))
    view[: len(chunk)] = chunk
    return len(chunk)
