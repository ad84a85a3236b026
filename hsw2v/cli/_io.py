"""What the ``hsw2v`` command line says, reads and writes: its two errors, its one-line
messages, the checks on the files it is given, and which format a file is in (native
bundle, word2vec.c text or binary) by its name or first bytes.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
import zipfile
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any

from hsw2v._atomic_files import atomic_temp, discard_temp
from hsw2v._paths import require_regular_file

PROG = "hsw2v"

_NATIVE_EXTENSIONS = (".hsw2v", ".model", ".zip")
_TEXT_EXTENSIONS = (".txt", ".vec", ".txt.gz", ".vec.gz", ".txt.bz2")
_BINARY_EXTENSIONS = (".bin", ".bin.gz", ".w2v")


class UsageError(Exception):
    """A mistake in the command line.

    :func:`main` reports it as one line on stderr and returns exit status 2.

    Example:

        >>> import contextlib, io
        >>> from hsw2v.cli import main
        >>> err = io.StringIO()
        >>> with contextlib.redirect_stderr(err):
        ...     status = main(["train", "corpus.txt"])  # no output file given
        >>> status, err.getvalue().startswith("hsw2v: error: nothing to write: give -o MODEL")
        (2, True)
    """


class CommandError(Exception):
    """A user error found while running a command (reported as one line, exit status 1).

    Example:

        >>> import contextlib, io
        >>> from hsw2v.cli import main
        >>> err = io.StringIO()
        >>> with contextlib.redirect_stderr(err):
        ...     status = main(["info", "no-such-model.hsw2v"])
        >>> status, err.getvalue()
        (1, 'hsw2v: error: no-such-model.hsw2v: no such file\\n')
    """


class Terminated(KeyboardInterrupt):
    """SIGTERM received while a command runs (:func:`terminate_as_interrupt`).

    A subclass of KeyboardInterrupt, so every cleanup that runs on Ctrl-C runs on SIGTERM
    too: the training threads stop after their job, and a save in progress removes its
    temporary file and leaves the old file as it was. The command exits with status 143.
    """


def _on_sigterm(signum, frame):
    raise Terminated(f"terminated by signal {signum}")


@contextmanager
def terminate_as_interrupt():
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread instead of
    killing the process outright (which would leave a save's temporary file behind).

    Only Python's default action is replaced (a handler of the caller's own, or SIGTERM
    ignored, is left alone), only from the main thread, and the default comes back after.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (AttributeError, ValueError):  # pragma: no cover - no SIGTERM on this platform
        yield
        return
    if previous is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is _on_sigterm:
            signal.signal(signal.SIGTERM, previous)


def _say(line: str = "") -> None:
    print(line, flush=True)


def _note(line: str) -> None:
    print(f"{PROG}: {line}", file=sys.stderr, flush=True)


def _is_url(path: str) -> bool:
    return "://" in path


def _need_file(path: str, what: str = "") -> None:
    if _is_url(path):
        return
    if not os.path.exists(path):
        raise CommandError(f"{path}: no such file" + (f" ({what})" if what else ""))
    if os.path.isdir(path):
        raise CommandError(f"{path}: is a directory, expected a file")
    try:
        require_regular_file(path)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _need_writable(path: str) -> None:
    if _is_url(path):
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CommandError(f"{path}: cannot write there, folder {folder} does not exist")
    if os.path.isdir(path):
        raise CommandError(f"{path}: is a directory, expected a file name")
    try:  # what a save does first: its temporary file beside the (real) target (os.access
        # is not enough: it ignores read-only mounts and answers yes to root everywhere)
        fd, probe = atomic_temp(path)
    except OSError as exc:
        where = (
            "the file name is too long" if exc.errno == errno.ENAMETOOLONG
            else f"folder {os.path.dirname(os.path.realpath(path))} is not writable"
        )  # fmt: skip
        raise CommandError(
            f"{path}: cannot write there, {where} ({exc.strerror}); choose another output path"
        ) from None
    os.close(fd)
    discard_temp(probe)


def _file_id(path: str) -> tuple | None:
    """What identifies the file ``path`` names: ``(device, inode)`` through symbolic links,
    or for a file not yet there its real path; None for a URL."""
    if not path or _is_url(path):
        return None
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    return info.st_dev, info.st_ino


def _refuse_overwriting_inputs(
    outputs: Sequence[tuple[str, str | None]], inputs: Sequence[tuple[str, str | None]]
) -> None:
    """Refuse, before any work, an output that is one of the command's inputs or another of
    its outputs. Files are compared by device and inode, so a symbolic link, a hard link or
    another spelling of the path is the same file too. ``outputs`` and ``inputs`` hold
    ``(what, path)`` pairs (an empty path is skipped). Raises :class:`UsageError` naming both.
    """
    seen: dict[tuple, tuple[str, str]] = {}
    for what, path in inputs:
        key = _file_id(path) if path else None
        if key is not None:
            seen.setdefault(key, (what, path))
    for what, path in outputs:
        key = _file_id(path) if path else None
        if key is None:
            continue
        if key in seen:
            other, other_path = seen[key]
            named = other if other_path == path else f"{other} {other_path}"
            raise UsageError(
                f"{what} {path} is the same file as {named}: writing it would destroy "
                f"the {other}; choose another path for the {what}"
            )
        seen[key] = (what, path)


def _sniff_word2vec(path: str) -> str:
    """'binary' or 'text': guess a word2vec.c file's format from its first bytes."""
    import smart_open

    with smart_open.open(path, "rb") as fin:
        header = fin.readline()
        sample = fin.read(1 << 16)
    parts = header.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        from hsw2v._gensim.files import is_pickle

        if not _is_url(path) and is_pickle(path):
            raise CommandError(
                f"{path}: a pickle, as gensim's save() writes; hsw2v never unpickles files "
                "(loading a pickle can run any code it holds). Convert a file you trust in "
                "Python: hsw2v.gensim_compat.load_gensim_pickle(path, trusted=True)"
                ".save('model.hsw2v'), or export it from gensim with save_word2vec_format()"
            )
        raise CommandError(
            f"{path}: not a model: neither an hsw2v file nor a word2vec file "
            "(whose first line is 'count dimensions')"
        )
    if not sample:
        return "text"
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(sample) - 4:  # not merely a character cut at the sample's end
            return "binary"
        text = sample[: exc.start].decode("utf-8")
    if any(ord(ch) < 32 and ch not in "\t\n\r " for ch in text):
        return "binary"
    return "text"


def _detect_format(path: str) -> str:
    _need_file(path)
    if not _is_url(path) and zipfile.is_zipfile(path):
        return "native"
    if not _is_url(path):
        with open(path, "rb") as fh:
            head = fh.read(4)
        if head == b"PK\x03\x04":  # a zip's first member, but no directory at the end
            raise CommandError(
                f"{path}: truncated or corrupted hsw2v file: it starts as a zip archive but its "
                "end (the zip directory) is missing; copy or save the model again"
            )
    return _sniff_word2vec(path)


def _load(path: str, fmt: str | None = None) -> tuple[Any, Any, str]:
    """``(model or None, keyed vectors, format)`` of a native or word2vec file; a native model
    is loaded as the class its file's kind names (Word2Vec, FastText or Doc2Vec)."""
    from hsw2v import Doc2Vec, FastText, KeyedVectors, Word2Vec, persist
    from hsw2v.exceptions import WrongFileKindError

    fmt = fmt or _detect_format(path)
    if fmt != "native":
        _need_file(path)
        kv = KeyedVectors.load_word2vec_format(path, binary=fmt == "binary")
        return None, kv, fmt
    try:
        meta, _ = persist.load_bundle(path, mmap="r")
    except ValueError as exc:
        raise CommandError(f"{path}: cannot read it as an hsw2v file: {exc}") from None
    del meta
    for model_class in (Word2Vec, FastText, Doc2Vec):
        try:
            model = model_class.load(path, mmap="r")
        except WrongFileKindError:
            continue  # the file holds another kind
        return model, model.wv, fmt
    # word vectors (a FastTextKeyedVectors file loads as one), or a kind the CLI does not
    # query: KeyedVectors.load names it
    return None, KeyedVectors.load(path, mmap="r"), fmt


def _check_words(kv: Any, words: Sequence[str], path: str) -> None:
    missing = [w for w in words if w not in kv]
    if missing:
        listed = ", ".join(repr(w) for w in missing)
        noun = "word" if len(missing) == 1 else "words"
        raise CommandError(f"{noun} not in the vocabulary of {path}: {listed}")


def _print_pairs(pairs: Sequence[tuple[str, float]], indent: str = "  ") -> None:
    if not pairs:
        return
    width = max(len(str(word)) for word, _ in pairs)
    for word, score in pairs:
        _say(f"{indent}{word!s:<{width}}  {score:.4f}")


# ------------------------------------------------------------------------------ commands


def _output_format(path: str) -> str | None:
    lower = path.lower()
    for fmt, extensions in (
        ("native", _NATIVE_EXTENSIONS),
        ("binary", _BINARY_EXTENSIONS),
        ("text", _TEXT_EXTENSIONS),
    ):
        if lower.endswith(extensions):
            return fmt
    return None
