"""A corpus source, a path or URL: opened (a plain local file directly, a compressed or remote
one through smart_open) and proven unchanged between two passes (:func:`file_identity`).

The corpora of :mod:`hsw2v.corpora` open their files through this module, and
:mod:`hsw2v.corpora` re-exports its public names (``open_source``, ``file_identity``, ...),
where they have always been importable from.
"""

from __future__ import annotations

import os
import time
from typing import IO, Any

from hsw2v._paths import require_regular_file


def is_path(source: Any) -> bool:
    """Whether ``source`` is a path or URL (a str or path-like), not a file object."""
    return isinstance(source, (str, os.PathLike))


# The suffixes smart_open decompresses with its built-in codecs (smart_open 7).
COMPRESSED_SUFFIXES = (".bz2", ".gz", ".lz4", ".xz", ".zst")


def is_plain_local_file(source: Any) -> bool:
    """Whether ``source`` names a local file that needs no decompression.

    Parameters
    ----------
    source
        A path, URL or file object (a file object is no name: False).

    Returns
    -------
    bool

    Examples
    --------
    >>> is_plain_local_file("corpus.txt"), is_plain_local_file("corpus.txt.gz")
    (True, False)
    >>> is_plain_local_file("s3://bucket/corpus.txt")
    False
    """
    if not is_path(source):
        return False
    name = os.fspath(source)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    return "://" not in name and not name.lower().endswith(COMPRESSED_SUFFIXES)


def open_source(source, mode: str = "r", **kwargs) -> IO:
    """Open a path or URL (arguments as :func:`open`): a plain local file with :func:`open`,
    anything else (compressed, remote) with :func:`smart_open.open`, imported on first use.

    Parameters
    ----------
    source
        Path or URL.
    mode : str, optional
        As :func:`open`'s.
    **kwargs
        Passed to :func:`open` or :func:`smart_open.open`.

    Returns
    -------
    file object

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "c.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("a b")
    >>> with open_source(path, "rb") as fin:
    ...     fin.read()
    b'a b'
    """
    if "r" in mode and is_path(source) and "://" not in os.fsdecode(os.fspath(source)):
        require_regular_file(source)  # a FIFO would block, a device never end
    if is_plain_local_file(source):
        return open(source, mode, **kwargs)
    import smart_open

    return smart_open.open(source, mode, **kwargs)


#: A file modified less than this long (in nanoseconds) before its identity is taken could be
#: modified again within the same timestamp tick (coarse clocks; FAT keeps 2 s) without its
#: mtime changing: such a file gets no identity, so it is read again every pass.
RECENT_NS = 2_000_000_000


def file_identity(path) -> tuple | None:
    """What proves a file unchanged between two reads: ``(device, inode, size, mtime_ns,
    ctime_ns)`` of a local file, or None when nothing does (a URL, a file that cannot be
    stat'ed, or one modified in the last ``RECENT_NS``). A change of content changes the size
    or mtime (and a tool that restores the mtime still changes the ctime); replacing the file
    changes the inode.

    Parameters
    ----------
    path
        A path or URL.

    Returns
    -------
    tuple or None
        The identity, or None when none can be proven.

    Examples
    --------
    >>> import os, tempfile
    >>> fd, name = tempfile.mkstemp()
    >>> os.close(fd)
    >>> file_identity(name) is None  # just written
    True
    >>> os.utime(name, ns=(0, 0))
    >>> file_identity(name) == file_identity(name), file_identity("s3://bucket/c.txt")
    (True, None)
    >>> os.remove(name)
    """
    if not is_path(path):
        return None
    name = os.fspath(path)
    if "://" in (os.fsdecode(name) if isinstance(name, bytes) else name):
        return None
    try:
        st = os.stat(name)
    except OSError:
        return None
    if time.time_ns() - st.st_mtime_ns < RECENT_NS:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
