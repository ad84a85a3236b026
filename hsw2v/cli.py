"""Command-line interface: ``hsw2v <command> [options]`` or ``python -m hsw2v <command>``.

Commands:
    demo    Train on the bundled King James Bible and print neighbours and analogies.

Usage errors are reported as a single line on stderr with exit status 2.

Example:

    >>> from hsw2v.cli import main
    >>> main(["demo", "--epochs", "1"])  # doctest: +SKIP
    0
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["main"]

PROG = "hsw2v"


class UsageError(Exception):
    """A mistake in the command line."""


class _Parser(argparse.ArgumentParser):
    """Argument parser that raises :class:`UsageError` instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _build_parser() -> argparse.ArgumentParser:
    from hsw2v import __version__

    parser = _Parser(
        prog=PROG,
        description="Fast word2vec with hierarchical softmax, a drop-in for gensim's Word2Vec.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = commands.add_parser(
        "demo",
        help="train on the bundled King James Bible and show neighbours and analogies",
        description=(
            "Train a skip-gram, hierarchical-softmax model (vector_size=100, window=5, "
            "min_count=5) on the bundled King James Bible, then print the corpus and "
            "vocabulary sizes, the training speed, nearest neighbours and analogies."
        ),
    )
    demo.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="number of training threads (default: number of CPUs)",
    )
    demo.add_argument(
        "--epochs", type=_positive_int, default=5, help="passes over the corpus (default: 5)"
    )
    demo.set_defaults(handler=_run_demo)
    return parser


def _run_demo(args: argparse.Namespace) -> int:
    from hsw2v import demo

    demo.run(workers=args.workers, epochs=args.epochs)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hsw2v`` command line and return its exit status.

    Args:
        argv: Arguments without the program name; ``None`` reads ``sys.argv[1:]``.

    Returns:
        0 on success, 2 for a usage error (reported as one line on stderr),
        130 if interrupted with Ctrl-C.

    Example:

        >>> main(["frobnicate"])  # doctest: +SKIP
        2
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as err:
        print(f"{PROG}: error: {err} (see '{PROG} --help')", file=sys.stderr)
        return 2
    except SystemExit as done:  # --help and --version
        return done.code if isinstance(done.code, int) else 0
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
