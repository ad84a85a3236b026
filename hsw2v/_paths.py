"""One check before hsw2v opens a file to read: it must be a regular file.

Opening a FIFO (named pipe) blocks until some writer opens its other end, and reading a
device such as ``/dev/zero`` never ends; a directory gives an unhelpful ``IsADirectoryError``.
hsw2v's readers also seek, map or read a file more than once (each epoch), which a pipe
cannot do. So every reader of a path (model and vector files, ``load_word2vec_format``,
``LineSentence``, ``corpus_file``, the command line) calls :func:`require_regular_file`
first: ``os.stat`` never blocks, and the error says what the path is and what to do.
"""

from __future__ import annotations

import os
import stat

__all__ = ["require_regular_file"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def require_regular_file(path) -> None:
    """Raise ValueError unless ``path`` is a regular file (symlinks are followed); a missing
    file raises FileNotFoundError (as ``open`` would) naming it.

    >>> require_regular_file("/dev/null")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: '/dev/null' is a character device, not a regular file: ...
    """
    if isinstance(path, int):  # an open file descriptor: the caller chose it
        return
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise ValueError(
        f"{os.fspath(path)!r} is {kind}, not a regular file: hsw2v reads files that it can "
        "seek in and read again (a pipe would block, a device never ends); save the data "
        "to a file first"
    )
