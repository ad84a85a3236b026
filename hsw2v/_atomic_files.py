"""Writing a file all or nothing: a temporary file beside the target, renamed over it.

:func:`atomic_file` (a ``with`` block) and its parts :func:`atomic_temp`,
:func:`atomic_commit` and :func:`discard_temp` write every file hsw2v saves (model bundles,
word2vec and fastText formats, the command line's outputs): a failed or interrupted save
leaves the old file as it was and no temporary behind. A temporary left by a save killed
outright (SIGKILL, a power cut) is swept by the next save of the same name
(:func:`sweep_stale_temps`), never one that a live save still holds locked.
:mod:`hsw2v.persist` re-exports these names.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
from contextlib import contextmanager

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: stale temporary files are not swept
    fcntl = None

__all__ = [
    "STALE_TEMP_SECONDS",
    "atomic_commit",
    "atomic_file",
    "atomic_temp",
    "discard_temp",
    "sweep_stale_temps",
]


def _umask() -> int:
    """The process umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _real_target(path) -> str:
    """Where a save of ``path`` writes: through symbolic links (``latest.model -> v3.model``
    replaces ``v3.model`` and keeps the link), as an absolute path."""
    return os.path.realpath(os.fspath(path))


def _temp_affixes(base: str) -> tuple[str, str]:
    """``(prefix, suffix)`` of the temporary name for a target named ``base``: hidden,
    beginning with the target's name and keeping its extension, but cut so that the whole
    name (with mkstemp's 8 random characters) stays within 255 bytes, the usual limit."""
    ext = os.path.splitext(base)[1]
    if len(os.fsencode(ext)) > 32:
        ext = ""
    suffix = f".tmp{ext}"
    room = 255 - len(os.fsencode(suffix)) - 8 - 2  # 8 random characters, two dots
    stem = os.fsencode(base)[:room]
    while True:  # cut on a character boundary
        try:
            return f".{os.fsdecode(stem)}.", suffix
        except UnicodeDecodeError:  # pragma: no cover - fsdecode escapes undecodable bytes
            stem = stem[:-1]


# Temporary files of saves in progress: tmp path -> a descriptor holding its flock. A save
# killed by SIGKILL (or a power cut) leaves its temporary file, but the kernel drops the
# lock with the process, so the next save of the same name knows the file is stale.
_TEMP_LOCKS: dict[str, int] = {}
STALE_TEMP_SECONDS = 60.0  # never sweep a temporary file touched this recently
_MKSTEMP_MIDDLE = re.compile(r"[a-z0-9_]{8}")


def _lock_temp(tmp: str) -> None:
    if fcntl is None:  # pragma: no cover
        return
    try:
        lock_fd = os.open(tmp, os.O_RDONLY)
    except OSError:  # pragma: no cover - the file was just created by this process
        return
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a file system without flock: the age test alone guards it
        pass
    _TEMP_LOCKS[tmp] = lock_fd


def _unlock_temp(tmp: str) -> None:
    lock_fd = _TEMP_LOCKS.pop(tmp, None)
    if lock_fd is not None:
        os.close(lock_fd)


def sweep_stale_temps(directory: str, prefix: str, suffix: str) -> list[str]:
    """Remove the temporary files that saves of one name left behind in ``directory`` (a save
    killed by SIGKILL, a power cut), and return their paths.

    A file is stale when its name is ``prefix`` + mkstemp's 8 characters + ``suffix`` (the
    pattern :func:`atomic_temp` creates for that target), it is a regular file untouched for
    :data:`STALE_TEMP_SECONDS`, and no process holds its lock: a save in progress, in this
    process or another, holds it until the file is renamed or removed. Best effort: an error
    leaves the file and never fails the save.
    """
    if fcntl is None:  # pragma: no cover
        return []
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(suffix)):
            continue
        if len(name) != len(prefix) + 8 + len(suffix):
            continue
        if not _MKSTEMP_MIDDLE.fullmatch(name[len(prefix) : len(prefix) + 8]):
            continue
        path = os.path.join(directory, name)
        if path in _TEMP_LOCKS:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or now - info.st_mtime < STALE_TEMP_SECONDS:
                continue
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino:
                os.unlink(path)
                removed.append(path)
        except OSError:  # locked: a save in progress (or no flock here)
            pass
        finally:
            os.close(fd)
    return removed


def atomic_temp(path) -> tuple[int, str]:
    """Create a temporary file next to `path` for an atomic replace; return ``(fd, tmp_path)``.

    The temporary file lies beside the real target when `path` is a symbolic link (the link
    is kept), has the target's permission bits when it exists (a 0600 file stays 0600; else
    the umask's default), and keeps the extension of `path`, so tools that choose a
    compression from the extension treat both alike. Its name fits the 255-byte limit
    whatever the length of `path`'s name. While it is being written it holds an exclusive
    ``flock``, so that a later save can tell it from a stale one (:func:`sweep_stale_temps`),
    until :func:`atomic_commit` or :func:`discard_temp` (or the end of the process) lets go.

    Example
    -------
    >>> import os, tempfile
    >>> fd, tmp = atomic_temp(os.path.join(tempfile.mkdtemp(), "v.txt.gz"))
    >>> os.close(fd); tmp.endswith(".gz")
    True
    """
    target = _real_target(path)
    directory, base = os.path.split(target)
    try:
        name_max = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    if len(os.fsencode(base)) > name_max:  # fail before writing, not at the final rename
        raise OSError(
            errno.ENAMETOOLONG,
            f"file name of {len(os.fsencode(base))} bytes, longer than the {name_max} the "
            "folder allows",
            target,
        )
    prefix, suffix = _temp_affixes(base)
    sweep_stale_temps(directory, prefix, suffix)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    _lock_temp(tmp)
    try:
        os.fchmod(fd, mode)
    except OSError:
        pass
    return fd, tmp


def atomic_commit(tmp: str, path) -> None:
    """Move a finished temporary file from :func:`atomic_temp` onto `path` (through symbolic
    links, onto the real target), atomically.

    Example
    -------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> fd, tmp = atomic_temp(path)
    >>> _ = os.write(fd, b"hi"); os.close(fd); atomic_commit(tmp, path)
    >>> open(path, "rb").read()
    b'hi'
    """
    target = _real_target(path)
    os.replace(tmp, target)
    _unlock_temp(tmp)
    try:  # make the rename itself durable, where directories can be opened
        dir_fd = os.open(os.path.dirname(target), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def discard_temp(tmp: str) -> None:
    """Remove an unfinished temporary file from :func:`atomic_temp` and let go of its lock,
    even if Ctrl-C (or the command line's SIGTERM) lands while it is removed (the interrupt
    is raised again once it is gone)."""
    interrupted = None
    for _ in range(5):
        try:
            os.unlink(tmp)
            break
        except OSError:
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
    for _ in range(5):
        try:
            _unlock_temp(tmp)
            break
        except OSError:
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
    if interrupted is not None:
        raise interrupted


@contextmanager
def atomic_file(path):
    """Write `path` atomically: yields ``(fd, tmp)`` from :func:`atomic_temp`; when the block
    ends, the temporary file (closed and synced by the block) replaces `path`
    (:func:`atomic_commit`); when it fails or is interrupted (Ctrl-C), the temporary file is
    removed and `path` is left as it was.

    Example
    -------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> with atomic_file(path) as (fd, tmp):
    ...     _ = os.write(fd, b"hi"); os.close(fd)
    >>> open(path, "rb").read(), os.listdir(os.path.dirname(path))
    (b'hi', ['a.txt'])
    """
    fd, tmp = atomic_temp(path)
    committed = False
    try:
        yield fd, tmp
        atomic_commit(tmp, path)
        committed = True
    finally:
        if not committed:
            discard_temp(tmp)
