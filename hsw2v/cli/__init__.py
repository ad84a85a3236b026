"""Command-line interface: ``hsw2v <command> [options]`` or ``python -m hsw2v <command>``.

Commands:
    train     Train a model on a text corpus (one sentence per line, tokens split by spaces).
    skipgram  Train FastText, fastText's command style (also: cbow); train --model fasttext.
    similar   Nearest neighbours of words.
    analogy   A is to B as C is to ?
    predict   Most probable centre words for a context (hierarchical softmax output layer).
    eval      Score vectors on analogy questions and/or word-pair similarity judgements.
    convert   Convert between the native format and word2vec.c's text/binary formats.
    info      Vocabulary size, dimensions, Huffman tree depths, training settings.
    demo      Train on the bundled King James Bible and print neighbours and analogies.

Every command takes ``--help``. A usage mistake (bad option or value) is reported as one line on
stderr with exit status 2; any other user error (missing file, unknown word, unreadable model)
as one line with exit status 1; Ctrl-C exits with status 130, SIGTERM with 143 (both remove
a save's temporary file and leave the old output as it was).

This module runs a command line (:func:`main`); the parser is :mod:`hsw2v.cli._parser`
(``train``'s model flags come from the parameter table, :mod:`hsw2v.running.params`), the commands
:mod:`hsw2v.cli._commands`, and the messages, file checks and format detection
:mod:`hsw2v.cli._io`.

Example:

    >>> import contextlib, io
    >>> from hsw2v.cli import main
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     status = main(["similar", "no-such-model.hsw2v", "king"])
    >>> status, err.getvalue()
    (1, 'hsw2v: error: no-such-model.hsw2v: no such file\\n')
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from hsw2v.cli._io import PROG, CommandError, Terminated, UsageError, terminate_as_interrupt
from hsw2v.cli._parser import _build_parser

__all__ = ["main", "UsageError", "CommandError"]


def _one_line(err: BaseException) -> str:
    if isinstance(err, KeyError) and err.args:
        text = str(err.args[0])
    elif isinstance(err, OSError) and err.filename and err.strerror:
        text = f"{err.filename}: {err.strerror}"
    else:
        text = str(err) or type(err).__name__
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hsw2v`` command line and return its exit status.

    Args:
        argv: Arguments without the program name; ``None`` reads ``sys.argv[1:]``.

    Returns:
        0 on success, 2 for a usage error, 1 for another user error (each reported as one
        line on stderr), 130 if interrupted with Ctrl-C.

    Example:

        >>> import contextlib, io
        >>> err = io.StringIO()
        >>> with contextlib.redirect_stderr(err):
        ...     status = main(["frobnicate"])
        >>> status, err.getvalue().startswith("hsw2v: error: argument COMMAND: invalid choice")
        (2, True)
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as err:
        print(f"{PROG}: error: {err} (see '{PROG} --help')", file=sys.stderr)
        return 2
    except SystemExit as done:  # --help and --version
        return done.code if isinstance(done.code, int) else 0
    if not logging.getLogger().handlers:
        logging.basicConfig(format="%(asctime)s : %(levelname)s : %(message)s", stream=sys.stderr)
    try:
        with terminate_as_interrupt():  # SIGTERM cleans up as Ctrl-C does
            return args.handler(args)
    except UsageError as err:
        print(f"{PROG}: error: {err} (see '{PROG} {args.command} --help')", file=sys.stderr)
        return 2
    except Terminated:
        print(f"{PROG}: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (
        CommandError,
        OSError,
        ValueError,
        KeyError,
        NotImplementedError,
        ImportError,
        EOFError,  # e.g. a compressed stream cut short, where a reader did not name it
        MemoryError,
    ) as err:
        print(f"{PROG}: error: {_one_line(err)}", file=sys.stderr)
        return 1
