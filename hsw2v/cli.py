"""Command-line interface: ``hsw2v <command> [options]`` or ``python -m hsw2v <command>``.

Commands:
    train     Train a model on a text corpus (one sentence per line, tokens split by spaces).
    similar   Nearest neighbours of words.
    analogy   A is to B as C is to ?
    predict   Most probable centre words for a context (hierarchical softmax output layer).
    eval      Score vectors on analogy questions and/or word-pair similarity judgements.
    convert   Convert between the native format and word2vec.c's text/binary formats.
    info      Vocabulary size, dimensions, Huffman tree depths, training settings.
    demo      Train on the bundled King James Bible and print neighbours and analogies.

Every command takes ``--help``. A usage mistake (bad option or value) is reported as one line on
stderr with exit status 2; any other user error (missing file, unknown word, unreadable model)
as one line with exit status 1; Ctrl-C exits with status 130.

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

import argparse
import logging
import os
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from typing import Any, NoReturn

__all__ = ["main"]

PROG = "hsw2v"

_NATIVE_EXTENSIONS = (".hsw2v", ".model", ".zip")
_TEXT_EXTENSIONS = (".txt", ".vec", ".txt.gz", ".vec.gz", ".txt.bz2")
_BINARY_EXTENSIONS = (".bin", ".bin.gz", ".w2v")


class UsageError(Exception):
    """A mistake in the command line.

    :func:`main` reports it as one line on stderr and returns exit status 2.

    Example:

        >>> import contextlib, io
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
        >>> err = io.StringIO()
        >>> with contextlib.redirect_stderr(err):
        ...     status = main(["info", "no-such-model.hsw2v"])
        >>> status, err.getvalue()
        (1, 'hsw2v: error: no-such-model.hsw2v: no such file\\n')
    """


class _Parser(argparse.ArgumentParser):
    """Argument parser that raises :class:`UsageError` instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keep the examples' line breaks and show defaults."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _bit(text: str) -> int:
    if text not in ("0", "1"):
        raise argparse.ArgumentTypeError(f"expected 0 or 1, got {text!r}")
    return int(text)


def _add_command(commands: Any, name: str, help: str, description: str, examples: str) -> Any:
    return commands.add_parser(
        name,
        help=help,
        description=description,
        epilog="examples:\n" + "\n".join(f"  {line}" for line in examples.strip().splitlines()),
        formatter_class=_Formatter,
        allow_abbrev=False,
    )


def _build_parser() -> argparse.ArgumentParser:
    from hsw2v import __version__

    parser = _Parser(
        prog=PROG,
        description="Fast word2vec with hierarchical softmax, a drop-in for gensim's Word2Vec.",
        epilog=(
            "examples:\n"
            "  hsw2v demo\n"
            "  hsw2v train corpus.txt -o corpus.hsw2v --sg 1 --epochs 10\n"
            "  hsw2v similar corpus.hsw2v king queen\n"
            "run 'hsw2v COMMAND --help' for a command's options"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_train(commands)
    _add_queries(commands)
    _add_demo(commands)
    return parser


def _add_train(commands: Any) -> None:
    train = _add_command(
        commands,
        "train",
        help="train a model on a text corpus",
        description=(
            "Train word2vec with hierarchical softmax on CORPUS: a UTF-8 text file (.gz and .bz2 "
            "are read as such) with one sentence per line and tokens separated by whitespace, "
            "already tokenized. Writes the native model (-o) and/or the word vectors in "
            "word2vec.c's format (--word2vec). Options follow gensim's Word2Vec; the "
            "single-dash spellings are word2vec.c's. Defaults are gensim's (CBOW, "
            "alpha 0.025)."
        ),
        examples="""
hsw2v train corpus.txt -o corpus.hsw2v
hsw2v train corpus.txt -o corpus.hsw2v --sg 1 --size 300 --window 10 --epochs 10
hsw2v train corpus.txt -o m.hsw2v --word2vec vectors.bin --binary
hsw2v train -train corpus.txt -output m.hsw2v -cbow 0 -size 200 -window 8 -iter 15 -threads 4
""",
    )
    train.add_argument("corpus", nargs="?", metavar="CORPUS", help="training text file")
    train.add_argument("-train", dest="train_file", metavar="CORPUS", help=argparse.SUPPRESS)
    out = train.add_argument_group("output")
    out.add_argument(
        "-o", "--output", "-output", dest="output", metavar="MODEL", help="native model file"
    )
    out.add_argument(
        "--word2vec",
        dest="word2vec",
        metavar="FILE",
        help="also write the word vectors in word2vec.c's format (text unless --binary)",
    )
    out.add_argument(
        "--binary",
        "-binary",
        dest="binary",
        nargs="?",
        const=1,
        default=0,
        type=_bit,
        metavar="0|1",
        help="write --word2vec FILE in the binary format",
    )
    model = train.add_argument_group("model (gensim name, then word2vec.c's)")
    model.add_argument(
        "--sg", type=_bit, default=None, metavar="0|1", help="1: skip-gram, 0: CBOW (default 0)"
    )
    model.add_argument(
        "-cbow", type=_bit, default=None, metavar="0|1", help="word2vec.c's: 1 CBOW, 0 skip-gram"
    )
    model.add_argument(
        "--size",
        "--vector-size",
        "-size",
        dest="vector_size",
        type=_positive_int,
        default=100,
        help="dimensions of the vectors",
    )
    model.add_argument("--window", "-window", type=_positive_int, default=5, help="context size")
    model.add_argument(
        "--min-count",
        "-min-count",
        dest="min_count",
        type=_count,
        default=5,
        help="ignore words seen fewer times",
    )
    model.add_argument(
        "--sample", "-sample", type=_fraction, default=1e-3, help="subsampling threshold"
    )
    model.add_argument(
        "--epochs", "--iter", "-iter", dest="epochs", type=_positive_int, default=5, help="passes"
    )
    model.add_argument(
        "--workers",
        "--threads",
        "-threads",
        dest="workers",
        type=_positive_int,
        default=None,
        help="training threads (default: number of CPUs)",
    )
    model.add_argument("--alpha", "-alpha", type=_positive_float, default=0.025, help="start rate")
    model.add_argument("--min-alpha", dest="min_alpha", type=_fraction, default=0.0001)
    model.add_argument("--hs", "-hs", type=_bit, default=1, help="hierarchical softmax (0/1)")
    model.add_argument(
        "--negative", "-negative", type=_count, default=0, help="negative samples (0: none)"
    )
    model.add_argument(
        "--ns-exponent", dest="ns_exponent", type=float, default=0.75, help="negative draw shape"
    )
    model.add_argument("--cbow-mean", dest="cbow_mean", type=_bit, default=1)
    model.add_argument("--seed", type=_count, default=1, help="random seed")
    model.add_argument("--max-vocab-size", dest="max_vocab_size", type=_positive_int)
    model.add_argument("--max-final-vocab", dest="max_final_vocab", type=_positive_int)
    model.add_argument(
        "--max-sentence-length",
        dest="max_sentence_length",
        type=_positive_int,
        default=10000,
        help="longer lines are split into chunks of this many tokens",
    )
    model.add_argument("--batch-words", dest="batch_words", type=_positive_int, default=10000)
    model.add_argument(
        "--cache-words",
        dest="cache_words",
        type=_count,
        default=100_000_000,
        help="keep the id-encoded corpus in memory up to this many tokens (0: reread)",
    )
    # deprecated and ignored (the path walk is chosen); accepted one more release
    model.add_argument("--kernel", choices=("fused", "loop", "blas"), help=argparse.SUPPRESS)
    report = train.add_argument_group("reporting")
    report.add_argument(
        "--compute-loss",
        dest="compute_loss",
        action="store_true",
        help="track the training loss (shown in the summary)",
    )
    report.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="live tqdm bar on stderr (default: when stderr is a terminal and tqdm is installed)",
    )
    report.add_argument(
        "--plot-training",
        dest="plot_training",
        metavar="IMAGE",
        help="draw per-epoch loss, alpha and speed to this image (needs matplotlib)",
    )
    report.add_argument(
        "-v", "--verbose", action="store_true", help="log progress (gensim's messages) to stderr"
    )
    train.set_defaults(handler=_run_train)


def _add_queries(commands: Any) -> None:
    similar = _add_command(
        commands,
        "similar",
        help="nearest neighbours of words",
        description="Print the nearest neighbours (cosine similarity) of each WORD.",
        examples="""
hsw2v similar corpus.hsw2v king
hsw2v similar vectors.bin king queen --topn 5
""",
    )
    similar.add_argument("model", metavar="MODEL", help="native model or word2vec file")
    similar.add_argument("words", metavar="WORD", nargs="+")
    similar.add_argument("-n", "--topn", type=_positive_int, default=10, help="neighbours shown")
    similar.set_defaults(handler=_run_similar)

    analogy = _add_command(
        commands,
        "analogy",
        help="A is to B as C is to ?",
        description=(
            "Answer 'A is to B as C is to ?' with the words nearest to B - A + C "
            "(gensim's most_similar(positive=[B, C], negative=[A]))."
        ),
        examples="""
hsw2v analogy corpus.hsw2v man king woman
""",
    )
    analogy.add_argument("model", metavar="MODEL", help="native model or word2vec file")
    analogy.add_argument("a", metavar="A")
    analogy.add_argument("b", metavar="B")
    analogy.add_argument("c", metavar="C")
    analogy.add_argument("-n", "--topn", type=_positive_int, default=5, help="answers shown")
    analogy.set_defaults(handler=_run_analogy)

    predict = _add_command(
        commands,
        "predict",
        help="most probable centre words for a context",
        description=(
            "Print the centre words the model finds most probable given the CONTEXT words "
            "(gensim's predict_output_word). Needs a full native model (trained by hsw2v), "
            "not bare word vectors."
        ),
        examples="""
hsw2v predict corpus.hsw2v the king of
""",
    )
    predict.add_argument("model", metavar="MODEL", help="native model written by 'hsw2v train'")
    predict.add_argument("context", metavar="CONTEXT", nargs="+")
    predict.add_argument("-n", "--topn", type=_positive_int, default=10, help="words shown")
    predict.set_defaults(handler=_run_predict)

    evaluate = _add_command(
        commands,
        "eval",
        help="score vectors on analogies and/or word-pair similarities",
        description=(
            "Score the vectors on analogy questions (word2vec's questions-words.txt format: "
            "': section' lines and 'a b c expected' lines) and/or word pairs with human "
            "similarity scores ('word1<TAB>word2<TAB>score', '#' comments), as gensim's "
            "evaluate_word_analogies / evaluate_word_pairs."
        ),
        examples="""
hsw2v eval corpus.hsw2v --analogies questions-words.txt
hsw2v eval vectors.bin --pairs wordsim353.tsv --analogies questions-words.txt
""",
    )
    evaluate.add_argument("model", metavar="MODEL", help="native model or word2vec file")
    evaluate.add_argument("--analogies", metavar="FILE", help="analogy questions")
    evaluate.add_argument("--pairs", metavar="FILE", help="word pairs with similarity scores")
    evaluate.add_argument(
        "--delimiter", default="\t", help="column separator of --pairs (default: tab)"
    )
    evaluate.add_argument(
        "--restrict-vocab",
        dest="restrict_vocab",
        type=_positive_int,
        default=300000,
        help="only consider the most frequent words",
    )
    evaluate.add_argument(
        "--case-sensitive", dest="case_sensitive", action="store_true", help="compare as written"
    )
    evaluate.set_defaults(handler=_run_eval)

    convert = _add_command(
        commands,
        "convert",
        help="convert between native and word2vec formats",
        description=(
            "Convert INPUT to OUTPUT. Formats: 'native' (hsw2v's own file), 'text' and "
            "'binary' (word2vec.c's). By default they are recognised from the file contents "
            "(INPUT) and the extension (OUTPUT: .bin binary; .txt/.vec text; .hsw2v native). "
            "A native full model converts to word vectors only."
        ),
        examples="""
hsw2v convert corpus.hsw2v vectors.bin
hsw2v convert vectors.txt vectors.hsw2v
hsw2v convert vectors.out vectors.w2v --from binary --to text
""",
    )
    convert.add_argument("input", metavar="INPUT")
    convert.add_argument("output", metavar="OUTPUT")
    formats = ("native", "text", "binary")
    convert.add_argument("--from", dest="source_format", choices=formats, help="INPUT's format")
    convert.add_argument("--to", dest="target_format", choices=formats, help="OUTPUT's format")
    convert.set_defaults(handler=_run_convert)

    info = _add_command(
        commands,
        "info",
        help="vocabulary, dimensions, tree depths and training settings of a model",
        description=(
            "Describe MODEL: its kind, vocabulary size, dimensions, the depths of the words' "
            "Huffman paths (the work per prediction), and the settings it was trained with."
        ),
        examples="""
hsw2v info corpus.hsw2v
hsw2v info --build
""",
    )
    info.add_argument("model", metavar="MODEL", nargs="?", help="native model or word2vec file")
    info.add_argument(
        "--build",
        action="store_true",
        help="describe this installation instead: version, kernel level (CPU dispatch), "
        "levels compiled, BLAS and compiler flags (as hsw2v.show_config())",
    )
    info.set_defaults(handler=_run_info)


def _add_demo(commands: Any) -> None:
    demo = _add_command(
        commands,
        "demo",
        help="train on the bundled King James Bible and show neighbours and analogies",
        description=(
            "Train a skip-gram, hierarchical-softmax model (vector_size=100, window=5, "
            "min_count=5) on the bundled King James Bible, then print the corpus and "
            "vocabulary sizes, the training speed, nearest neighbours and analogies."
        ),
        examples="""
hsw2v demo
hsw2v demo --epochs 10 --workers 2
""",
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


# ------------------------------------------------------------------------------ helpers


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


def _need_writable(path: str) -> None:
    if _is_url(path):
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CommandError(f"{path}: cannot write there, folder {folder} does not exist")
    if os.path.isdir(path):
        raise CommandError(f"{path}: is a directory, expected a file name")
    try:  # what a save does first: a temporary file next to the target (os.access is not
        # enough: it ignores read-only mounts and answers yes to root everywhere)
        fd, probe = tempfile.mkstemp(prefix=".hsw2v-write-test-", dir=folder)
    except OSError as exc:
        raise CommandError(
            f"{path}: cannot write there, folder {folder} is not writable ({exc.strerror}); "
            "choose another output path"
        ) from None
    os.close(fd)
    os.unlink(probe)


def _sniff_word2vec(path: str) -> str:
    """'binary' or 'text': guess a word2vec.c file's format from its first bytes."""
    import smart_open

    with smart_open.open(path, "rb") as fin:
        header = fin.readline()
        sample = fin.read(1 << 16)
    parts = header.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
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
    """``(model or None, keyed vectors, format)`` of a native or word2vec file."""
    from hsw2v import KeyedVectors, Word2Vec, persist

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
    try:
        model = Word2Vec.load(path, mmap="r")
    except ValueError as exc:
        if "not a 'Word2Vec'" not in str(exc):
            raise
        return None, KeyedVectors.load(path, mmap="r"), fmt
    return model, model.wv, fmt


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


def _run_train(args: argparse.Namespace) -> int:
    from hsw2v import Word2Vec
    from hsw2v.corpora import LineSentence

    corpus_path = args.corpus or args.train_file
    if args.corpus and args.train_file:
        raise UsageError("give the corpus once: as CORPUS or as -train, not both")
    if not corpus_path:
        raise UsageError("the following arguments are required: CORPUS")
    if not args.output and not args.word2vec:
        raise UsageError("nothing to write: give -o MODEL and/or --word2vec FILE")
    if args.binary and not args.word2vec:
        raise UsageError("--binary applies to the word2vec file: add --word2vec FILE")
    if not args.hs and not args.negative:
        raise UsageError(
            "--hs 0 with --negative 0 trains nothing: keep --hs 1 or give --negative N"
        )
    sg = 0 if args.sg is None else args.sg
    if args.cbow is not None:
        if args.sg is not None and args.sg == args.cbow:
            raise UsageError(f"--sg {args.sg} and -cbow {args.cbow} contradict each other")
        sg = 1 - args.cbow
    if args.min_alpha > args.alpha:
        raise UsageError(f"--min-alpha {args.min_alpha} is above --alpha {args.alpha}")
    _need_file(corpus_path, "the training corpus")
    for path in (args.output, args.word2vec, args.plot_training):
        if path:
            _need_writable(path)
    progress = args.progress
    if progress is None:
        progress = sys.stderr.isatty() and _have("tqdm")
    elif progress and not _have("tqdm"):
        raise CommandError("--progress needs tqdm: pip install tqdm (or hsw2v[progress])")
    if args.plot_training and not _have("matplotlib"):
        raise CommandError("--plot-training needs matplotlib: pip install matplotlib")
    if args.verbose:
        logging.getLogger("hsw2v").setLevel(logging.INFO)

    workers = args.workers or os.cpu_count() or 1
    model = Word2Vec(
        vector_size=args.vector_size,
        alpha=args.alpha,
        window=args.window,
        min_count=args.min_count,
        max_vocab_size=args.max_vocab_size,
        sample=args.sample,
        seed=args.seed,
        workers=workers,
        min_alpha=args.min_alpha,
        sg=sg,
        hs=args.hs,
        negative=args.negative,
        ns_exponent=args.ns_exponent,
        cbow_mean=args.cbow_mean,
        epochs=args.epochs,
        batch_words=args.batch_words,
        compute_loss=args.compute_loss,
        max_final_vocab=args.max_final_vocab,
        cache_words=args.cache_words,
    )
    if args.kernel is not None:
        _note("--kernel is deprecated and ignored: the fastest path walk is chosen")
    corpus = LineSentence(corpus_path, max_sentence_length=args.max_sentence_length)
    started = time.perf_counter()
    model.build_vocab(corpus)
    _note(
        f"{model.corpus_count:,} sentences, {model.corpus_total_words:,} words, "
        f"vocabulary of {len(model.wv):,} (min_count={args.min_count}); training "
        f"{'skip-gram' if sg else 'CBOW'} for {args.epochs} epochs on {workers} threads"
    )
    callbacks = []
    if args.plot_training:
        from hsw2v.callbacks import TrainingHistory

        callbacks.append(TrainingHistory())
    try:
        trained, raw = model.train(
            corpus,
            total_examples=model.corpus_count,
            total_words=model.corpus_total_words,
            epochs=args.epochs,
            compute_loss=args.compute_loss,
            callbacks=callbacks,
            progress=bool(progress),
        )
    except KeyboardInterrupt:
        written = " or ".join(p for p in (args.output, args.word2vec) if p)
        _note(f"interrupted: training stopped, nothing written ({written} left as it was)")
        return 130
    seconds = time.perf_counter() - started
    train_seconds = model.total_train_time
    speed = trained / train_seconds if train_seconds > 0 else float("inf")
    _say(
        f"trained {raw:,} words ({trained:,} after subsampling) in {train_seconds:.1f} s, "
        f"{speed:,.0f} words/s; {seconds:.1f} s in all"
    )
    if args.compute_loss:
        _say(f"training loss (-log-likelihood, last call): {model.get_latest_training_loss():.6g}")
    if args.output:
        model.save(args.output)
        _say(f"wrote model {args.output}")
    if args.word2vec:
        model.wv.save_word2vec_format(args.word2vec, binary=bool(args.binary))
        _say(f"wrote {'binary' if args.binary else 'text'} word2vec vectors {args.word2vec}")
    if args.plot_training:
        callbacks[0].plot(args.plot_training)
        _say(f"wrote training curves {args.plot_training}")
    return 0


def _have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _run_similar(args: argparse.Namespace) -> int:
    _, kv, _ = _load(args.model)
    _check_words(kv, args.words, args.model)
    for n, word in enumerate(args.words):
        if n:
            _say()
        _say(f"{word}:")
        _print_pairs(kv.most_similar(word, topn=args.topn))
    return 0


def _run_analogy(args: argparse.Namespace) -> int:
    _, kv, _ = _load(args.model)
    _check_words(kv, [args.a, args.b, args.c], args.model)
    _say(f"{args.a} is to {args.b} as {args.c} is to:")
    _print_pairs(kv.most_similar(positive=[args.b, args.c], negative=[args.a], topn=args.topn))
    return 0


def _run_predict(args: argparse.Namespace) -> int:
    model, kv, fmt = _load(args.model)
    if model is None:
        raise CommandError(
            f"{args.model}: holds only word vectors ({fmt}); predicting needs the full model "
            "written by 'hsw2v train -o'"
        )
    predict = getattr(model, "predict_output_word", None)
    if predict is None:
        raise CommandError("predict is not available in this version of hsw2v")
    known = [w for w in args.context if w in kv]
    if not known:
        raise CommandError(f"none of the context words is in the vocabulary of {args.model}")
    result = predict(args.context, topn=args.topn)
    if not result:
        raise CommandError(f"none of the context words is in the vocabulary of {args.model}")
    skipped = [w for w in args.context if w not in kv]
    if skipped:
        _note(f"not in the vocabulary, ignored: {', '.join(skipped)}")
    _say(f"most probable centre words for: {' '.join(known)}")
    _print_pairs([(word, float(p)) for word, p in result])
    return 0


def _run_eval(args: argparse.Namespace) -> int:
    if not args.analogies and not args.pairs:
        raise UsageError("give --analogies FILE and/or --pairs FILE")
    for path in (args.analogies, args.pairs):
        if path:
            _need_file(path)
    _, kv, _ = _load(args.model)
    case_insensitive = not args.case_sensitive
    if args.analogies:
        score, sections = kv.evaluate_word_analogies(
            args.analogies, restrict_vocab=args.restrict_vocab, case_insensitive=case_insensitive
        )
        _say(f"analogies ({args.analogies}):")
        width = max(len(s["section"]) for s in sections)
        for section in sections:
            right, wrong = len(section["correct"]), len(section["incorrect"])
            total = right + wrong
            share = f"{100.0 * right / total:6.2f}%" if total else "     - "
            _say(f"  {section['section']:<{width}}  {share}  ({right}/{total})")
        if not any(len(s["correct"]) + len(s["incorrect"]) for s in sections):
            _say("  no question had all its words in the vocabulary")
    if args.pairs:
        if args.analogies:
            _say()
        pearson, spearman, oov = kv.evaluate_word_pairs(
            args.pairs,
            delimiter=args.delimiter,
            restrict_vocab=args.restrict_vocab,
            case_insensitive=case_insensitive,
        )
        _say(f"word pairs ({args.pairs}):")
        _say(f"  pearson   {float(pearson[0]):.4f}  (p={float(pearson[1]):.3g})")
        _say(f"  spearman  {float(spearman[0]):.4f}  (p={float(spearman[1]):.3g})")
        _say(f"  pairs with unknown words  {float(oov):.1f}%")
    return 0


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


def _run_convert(args: argparse.Namespace) -> int:
    target = args.target_format or _output_format(args.output)
    if target is None:
        raise UsageError(
            f"cannot tell the format of {args.output!r} from its extension: add "
            "--to native|text|binary"
        )
    _need_file(args.input)
    _need_writable(args.output)
    if not _is_url(args.input) and os.path.abspath(args.input) == os.path.abspath(args.output):
        raise UsageError("INPUT and OUTPUT are the same file")
    _, kv, source = _load(args.input, args.source_format)
    if target == "native":
        kv.save(args.output)
    else:
        kv.save_word2vec_format(args.output, binary=target == "binary")
    _say(f"wrote {len(kv):,} vectors of {kv.vector_size} dimensions: {source} -> {target}")
    return 0


def _depth_lines(lengths: Any, counts: Any) -> list[str]:
    import numpy as np

    lengths = np.asarray(lengths, dtype=np.float64)
    lines = [
        f"min {int(lengths.min())}, mean {lengths.mean():.2f}, max {int(lengths.max())} "
        "inner nodes per word"
    ]
    if counts is not None and float(np.sum(counts)) > 0:
        weighted = float(np.dot(lengths, counts) / np.sum(counts))
        lines.append(f"{weighted:.2f} per training token (frequency-weighted)")
    return lines


def _run_info(args: argparse.Namespace) -> int:
    import numpy as np

    if args.build:
        from hsw2v import show_config

        show_config()
        if args.model is None:
            return 0
        print()
    elif args.model is None:
        raise UsageError("give a MODEL to describe, or --build for this installation")
    model, kv, fmt = _load(args.model)
    rows = [("file", f"{args.model} ({fmt})")]
    rows.append(("contents", "Word2Vec model" if model is not None else "word vectors"))
    rows.append(("vocabulary", f"{len(kv):,} words"))
    rows.append(("dimensions", str(kv.vector_size)))
    counts = kv.expandos.get("count") if hasattr(kv, "expandos") else None
    lengths = None
    if model is not None and model.tree is not None:
        lengths = model.tree.lengths
    if lengths is not None and len(lengths):
        depth = _depth_lines(lengths, None if counts is None else np.asarray(counts))
        rows.append(("tree depth", depth[0]))
        rows.extend(("", line) for line in depth[1:])
    if model is not None:
        rows.append(
            (
                "architecture",
                f"{'skip-gram' if model.sg else 'CBOW'}, hierarchical softmax, "
                f"window {model.window}" + ("" if model.sg else f", cbow_mean {model.cbow_mean}"),
            )
        )
        rows.append(("learning rate", f"{model.alpha} -> {model.min_alpha}"))
        rows.append(("min_count", str(model.min_count)))
        rows.append(("sample", f"{model.sample:g}"))
        rows.append(
            ("epochs", f"{model.epochs} per train() call; {model.train_count} train() calls")
        )
        rows.append(("seed", str(model.seed)))
        rows.append(
            (
                "corpus",
                f"{int(model.corpus_count):,} sentences, {int(model.corpus_total_words):,} words",
            )
        )
        rows.append(("training time", f"{model.total_train_time:.1f} s"))
        if model.compute_loss:
            rows.append(("training loss", f"{model.get_latest_training_loss():.6g} (last call)"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        _say(f"{name:<{width}}  {value}")
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    from hsw2v import demo

    demo.run(workers=args.workers, epochs=args.epochs)
    return 0


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
        return args.handler(args)
    except UsageError as err:
        print(f"{PROG}: error: {err} (see '{PROG} {args.command} --help')", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (CommandError, OSError, ValueError, KeyError, NotImplementedError, ImportError) as err:
        print(f"{PROG}: error: {_one_line(err)}", file=sys.stderr)
        return 1
