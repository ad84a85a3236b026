"""The parser of the ``hsw2v`` command line: its subcommands, their options and examples.

``hsw2v train``'s model options are the parameter table's flags (:data:`hsw2v.running.params.CLI`):
their spellings, help, defaults, and the check of each value against the parameter's
range (:func:`hsw2v.running.params.param_error`, the message the constructor gives).
"""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from hsw2v.cli._commands import (
    _FASTTEXT_ONLY,
    _run_analogy,
    _run_convert,
    _run_demo,
    _run_eval,
    _run_info,
    _run_predict,
    _run_similar,
    _run_train,
)
from hsw2v.cli._io import PROG, UsageError
from hsw2v.fasttext._model import FASTTEXT_PARAMS
from hsw2v.running.params import CLI, Param, param_error


class _Parser(argparse.ArgumentParser):
    """Argument parser that raises :class:`UsageError` instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keep the examples' line breaks and show defaults: once (not where the help already
    names its default) and not where there is none (None)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _table_type(param: Param, lowest: Any = None) -> Any:
    """The argparse type of a parameter of the table: the text read as the parameter's kind
    and checked against its range (:func:`hsw2v.running.params.param_error`, the message the
    constructor gives), and against the command line's own ``lowest`` value when given."""

    def convert(text: str) -> Any:
        value: Any = text
        try:
            if param.kind in ("int", "int?"):
                value = int(text)
            elif param.kind == "flag":
                value = int(text) if text in ("0", "1") else text
            elif param.kind == "real":
                value = float(text)
        except ValueError:
            pass  # the text itself: param_error names it
        problem = param_error(param.name, value, (param.kind, param.low, param.high))
        if problem is None and lowest is not None and value < lowest:
            problem = f"{param.name} must be >= {lowest} here, got {value!r}"
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
        return value

    return convert


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


MODEL_OR_VECTORS = "native model or word2vec file"


def _add_query(commands: Any, name: str, help: str, description: str, examples: str, *,
               handler: Any, words: list, topn: tuple,
               model_help: str = MODEL_OR_VECTORS) -> Any:
    """A query command: MODEL, its word arguments (``(dest, metavar, nargs)`` each), ``-n``
    / ``--topn`` (``(default, help)``) and the function that answers it."""
    parser = _add_command(commands, name, help, description, examples)
    parser.add_argument("model", metavar="MODEL", help=model_help)
    for dest, metavar, nargs in words:
        parser.add_argument(dest, metavar=metavar, nargs=nargs)
    parser.add_argument("-n", "--topn", type=_positive_int, default=topn[0], help=topn[1])
    parser.set_defaults(handler=handler)
    return parser


def _build_parser() -> argparse.ArgumentParser:
    from hsw2v._version import __version__

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
    _add_fasttext_commands(commands)
    _add_queries(commands)
    _add_demo(commands)
    return parser


# fastText's own spellings of Word2Vec's parameters (the options of its skipgram and cbow
# commands), accepted beside the table's gensim and word2vec.c spellings
_FASTTEXT_SPELLINGS = {
    "vector_size": ("-dim",),
    "alpha": ("-lr",),
    "window": ("-ws",),
    "min_count": ("-minCount",),
    "sample": ("-t",),
    "workers": ("-thread",),
    "negative": ("-neg",),
    "epochs": ("-epoch",),
}


def _add_train(commands: Any) -> None:
    train = _add_command(
        commands,
        "train",
        help="train a model on a text corpus",
        description=(
            "Train word2vec with hierarchical softmax on CORPUS: a UTF-8 text file (.gz and .bz2 "
            "are read as such) with one sentence per line and tokens separated by whitespace, "
            "already tokenized. Writes the native model and/or the word vectors in "
            "word2vec.c's format. Options follow gensim's Word2Vec; the single-dash "
            "spellings are word2vec.c's (and fastText's). Defaults are gensim's (CBOW, alpha "
            "0.025), except the objective: hierarchical softmax (--hs 1 --negative 0), where "
            "gensim trains negative sampling (hs=0, negative=5).\n\n"
            "Which spelling does what: -o, --output and --model-out MODEL write hsw2v's "
            "native model (it trains further and answers every query); --word2vec FILE, and "
            "word2vec.c's -output FILE, write the word vectors in word2vec's format (text; "
            "binary with --binary or -binary 1): the file word2vec.c writes, which its "
            "distance tool, gensim's load_word2vec_format and hsw2v read. So word2vec.c's "
            "own line (-train corpus.txt -output vectors.bin -binary 1 -cbow 0 -size 100) "
            "works as written; add --model-out MODEL to keep the model too.\n\n"
            "--model fasttext trains FastText (words and their character n-grams: --min-n, "
            "--max-n, --bucket, or fastText's -minn, -maxn, -bucket) and takes fastText's "
            "spellings: -input CORPUS, -dim, -ws, -epoch, -lr, -minCount, -t, -thread, "
            "-neg, -loss hs|ns, and -output PREFIX as fastText's: it writes PREFIX.hsw2v "
            "(the native FastText model) and PREFIX.vec (the vocabulary's vectors, text); "
            "'hsw2v skipgram' and 'hsw2v cbow' are this command with --model fasttext."
        ),
        examples="""
hsw2v train corpus.txt -o corpus.hsw2v
hsw2v train corpus.txt -o corpus.hsw2v --sg 1 --size 300 --window 10 --epochs 10
hsw2v train corpus.txt -o m.hsw2v --word2vec vectors.bin --binary
hsw2v train -train corpus.txt -output vectors.bin -binary 1 -cbow 0 -size 200 -window 8 -iter 15
hsw2v train corpus.txt -output vectors.txt -cbow 1 -size 100 --model-out m.hsw2v
hsw2v train --model fasttext -input corpus.txt -output ft -minn 3 -maxn 6 -dim 100
hsw2v train --model doc2vec docs.txt -o docs.hsw2v --sg 1
""",
    )
    train.add_argument(
        "--model",
        choices=("word2vec", "fasttext", "doc2vec"),
        default="word2vec",
        help="what to train: Word2Vec, FastText (word vectors from character n-grams too), "
        "or Doc2Vec (a vector per line of the corpus, its tag the line number from 0: "
        "PV-DM, or PV-DBOW with --sg 1)",
    )
    train.add_argument(
        "--dbow-words",
        action="store_true",
        help="Doc2Vec PV-DBOW (--sg 1): train the word vectors too (skip-gram), as gensim's "
        "dbow_words=1",
    )
    _add_training_options(train)


def _add_fasttext_commands(commands: Any) -> None:
    """fastText's own command style: ``hsw2v skipgram|cbow -input CORPUS -output PREFIX``."""
    for name, sg in (("skipgram", 1), ("cbow", 0)):
        command = _add_command(
            commands,
            name,
            help=f"train FastText {'skip-gram' if sg else 'CBOW'} (fastText's command style)",
            description=(
                f"fastText's '{name}' command: 'hsw2v train --model fasttext "
                f"--sg {sg}' with the same options (see 'hsw2v train --help'). -output PREFIX "
                "writes PREFIX.hsw2v (the native FastText model) and PREFIX.vec (the "
                "vocabulary's vectors, text, as fastText's .vec). Defaults are hsw2v's, not "
                "fastText's: hierarchical softmax (-loss ns for negative sampling), -lr 0.025, "
                "-t 0.001."
            ),
            examples=f"""
hsw2v {name} -input corpus.txt -output model -minn 3 -maxn 6 -dim 100 -epoch 5
hsw2v {name} -input corpus.txt -output model -loss ns -neg 5 -lr 0.05
""",
        )
        _add_training_options(command)
        command.set_defaults(model="fasttext", fasttext_command=name)


def _add_training_options(train: Any) -> None:
    """The corpus, output and model options of ``train``, ``skipgram`` and ``cbow``."""
    train.add_argument("corpus", nargs="?", metavar="CORPUS", help="training text file")
    train.add_argument(
        "-train", "-input", dest="train_file", metavar="CORPUS", help=argparse.SUPPRESS
    )
    out = train.add_argument_group("output")
    out.add_argument(
        "-o",
        "--output",
        "--model-out",
        dest="output",
        metavar="MODEL",
        help="hsw2v's native model file (word2vec.c's single-dash -output is the vectors file)",
    )
    out.add_argument(
        "--word2vec",
        dest="word2vec",
        metavar="FILE",
        help="write the word vectors in word2vec.c's format (text unless --binary)",
    )
    out.add_argument(
        "-output",
        dest="word2vec_c_output",
        metavar="FILE",
        help="word2vec.c's -output: the word vectors in word2vec's format (text unless "
        "-binary 1), as --word2vec FILE; not a model (that is -o/--model-out MODEL). With "
        "FastText, fastText's -output PREFIX: PREFIX.hsw2v (the model) and PREFIX.vec",
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
        help="write the vectors file (--word2vec or -output FILE) in the binary format",
    )
    model = train.add_argument_group("model (gensim name, then word2vec.c's and fastText's)")
    report = train.add_argument_group("reporting")
    groups = {"model": model, "reporting": report}
    for param in CLI:  # the table's flags (hsw2v.running.params)
        options = dict(param.cli_options)
        group = groups[options.pop("group", "model")]
        lowest = options.pop("min", None)
        if "action" not in options:
            options.setdefault("default", param.default)
            options["type"] = _table_type(param, lowest)
        flags = (*param.cli, *_FASTTEXT_SPELLINGS.get(param.name, ()))
        group.add_argument(*flags, dest=param.name, help=param.cli_help or None, **options)
    model.add_argument(
        "-cbow", type=_bit, default=None, metavar="0|1", help="word2vec.c's: 1 CBOW, 0 skip-gram"
    )
    model.add_argument(
        "-loss",
        choices=("hs", "ns"),
        default=None,
        help="fastText's: hs, hierarchical softmax (as --hs 1 --negative 0); ns, negative "
        "sampling (as --hs 0 --negative N, N from -neg, default 5)",
    )
    model.add_argument(
        "--max-sentence-length",
        dest="max_sentence_length",
        type=_positive_int,
        default=10000,
        help="longer lines are split into chunks of this many tokens",
    )
    # deprecated and ignored (the path walk is chosen); accepted one more release
    model.add_argument("--kernel", choices=("fused", "loop", "blas"), help=argparse.SUPPRESS)
    subwords = train.add_argument_group("FastText only (--model fasttext, skipgram, cbow)")
    for param in FASTTEXT_PARAMS:
        if param.name in _FASTTEXT_ONLY:
            flags, text = _FASTTEXT_ONLY[param.name]
            subwords.add_argument(
                *flags,
                dest=param.name,
                type=_table_type(param),
                default=None,
                help=f"{text} (default {param.default:,})",
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
    train.set_defaults(handler=_run_train, fasttext_command=None)


def _add_queries(commands: Any) -> None:
    similar = _add_query(
        commands,
        "similar",
        help="nearest neighbours of words",
        description="Print the nearest neighbours (cosine similarity) of each WORD.",
        examples="""
hsw2v similar corpus.hsw2v king
hsw2v similar vectors.bin king queen --topn 5
hsw2v similar docs.hsw2v 0 17 --docs
""",
        handler=_run_similar,
        words=[("words", "WORD", "+")],
        topn=(10, "neighbours shown"),
    )
    similar.add_argument(
        "--docs",
        action="store_true",
        help="the WORDs are document tags of a Doc2Vec model (a line number, from 0, for "
        "'hsw2v train --model doc2vec'): print their nearest documents",
    )

    _add_query(
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
        handler=_run_analogy,
        words=[("a", "A", None), ("b", "B", None), ("c", "C", None)],
        topn=(5, "answers shown"),
    )

    _add_query(
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
        handler=_run_predict,
        model_help="native model written by 'hsw2v train'",
        words=[("context", "CONTEXT", "+")],
        topn=(10, "words shown"),
    )

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
    evaluate.add_argument("model", metavar="MODEL", help=MODEL_OR_VECTORS)
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
        help="convert between native, word2vec and gensim formats",
        description=(
            "Convert INPUT to OUTPUT. Formats: 'native' (hsw2v's own file), 'text' and "
            "'binary' (word2vec.c's), and as OUTPUT only 'gensim' (gensim 4.4's save() file, "
            "which gensim's Word2Vec.load / KeyedVectors.load read; needs gensim installed). "
            "By default they are recognised from the file contents (INPUT) and the extension "
            "(OUTPUT: .bin binary; .txt/.vec text; .hsw2v native). A native full model "
            "converts to word vectors only, except to gensim, where it stays a whole model "
            "that gensim can train further."
        ),
        examples="""
hsw2v convert corpus.hsw2v vectors.bin
hsw2v convert vectors.txt vectors.hsw2v
hsw2v convert vectors.out vectors.w2v --from binary --to text
hsw2v convert corpus.hsw2v corpus.model --to gensim
""",
    )
    convert.add_argument("input", metavar="INPUT")
    convert.add_argument("output", metavar="OUTPUT")
    formats = ("native", "text", "binary")
    convert.add_argument("--from", dest="source_format", choices=formats, help="INPUT's format")
    convert.add_argument(
        "--to", dest="target_format", choices=(*formats, "gensim"), help="OUTPUT's format"
    )
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
    info.add_argument("model", metavar="MODEL", nargs="?", help=MODEL_OR_VECTORS)
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
