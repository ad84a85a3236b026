"""The commands of the ``hsw2v`` command line: each ``_run_*`` takes the parsed arguments
and returns the exit status (:mod:`hsw2v.cli._parser` wires them to their subcommands).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from typing import Any

from hsw2v.cli._io import (
    CommandError,
    Terminated,
    UsageError,
    _check_words,
    _load,
    _need_file,
    _need_writable,
    _note,
    _output_format,
    _print_pairs,
    _refuse_overwriting_inputs,
    _say,
)
from hsw2v.fasttext._model import FASTTEXT_PARAMS
from hsw2v.running.objectives import resolve_hs_negative
from hsw2v.running.params import CLI

# The options only FastText has: its parameter table's rows (hsw2v.fasttext._model), these
# spellings (gensim-style, then fastText's) and help. Their default is None on the command
# line, so that one given with --model word2vec is refused; FastText's default applies.
_FASTTEXT_ONLY = {
    "min_n": (("--min-n", "-minn"), "shortest character n-gram"),
    "max_n": (("--max-n", "-maxn"), "longest character n-gram"),
    "bucket": (("--bucket", "-bucket"), "hash buckets of the n-grams (0: no n-grams)"),
}


def _run_train(args: argparse.Namespace) -> int:
    from hsw2v import Doc2Vec, FastText, TaggedLineDocument, Word2Vec
    from hsw2v.corpora import LineSentence

    corpus_path = args.corpus or args.train_file
    if args.corpus and args.train_file:
        raise UsageError("give the corpus once: as CORPUS or as -train/-input, not both")
    if not corpus_path:
        raise UsageError("the following arguments are required: CORPUS")
    fasttext = args.model == "fasttext"
    doc2vec = args.model == "doc2vec"
    dbow_words = getattr(args, "dbow_words", False)  # train only (not skipgram/cbow)
    if dbow_words and not doc2vec:
        raise UsageError("--dbow-words: only Doc2Vec has document vectors; add --model doc2vec")
    if not fasttext:
        given = [
            "/".join(flags)
            for name, (flags, _) in _FASTTEXT_ONLY.items()
            if getattr(args, name) is not None
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)}: only FastText has character n-grams; add --model fasttext "
                "(or use 'hsw2v skipgram' / 'hsw2v cbow')"
            )
    facebook = _resolve_outputs(args, fasttext)
    hs, negative = _objective(args)
    sg = _architecture(args)
    if args.min_alpha > args.alpha:
        raise UsageError(f"--min-alpha {args.min_alpha} is above --alpha {args.alpha}")
    _need_file(corpus_path, "the training corpus")
    _refuse_overwriting_inputs(
        [
            ("output model", args.output),
            ("word2vec output", args.word2vec),
            ("fastText .bin output", facebook),
            ("training plot", args.plot_training),
        ],
        [("corpus", corpus_path)],
    )
    for path in (args.output, args.word2vec, facebook, args.plot_training):
        if path:
            _need_writable(path)
    progress = args.progress
    if progress is None:
        progress = sys.stderr.isatty() and _have("tqdm")
    elif progress and not _have("tqdm"):
        raise CommandError(
            "--progress needs tqdm: pip install tqdm "
            "(or, from a source checkout, pip install '.[progress]')"
        )
    if args.plot_training and not _have("matplotlib"):
        raise CommandError("--plot-training needs matplotlib: pip install matplotlib")
    if args.verbose:
        logging.getLogger("hsw2v").setLevel(logging.INFO)

    workers = args.workers or os.cpu_count() or 1
    values = {param.name: getattr(args, param.name) for param in CLI}
    values.update(sg=sg, workers=workers, hs=hs, negative=negative)
    if fasttext:
        for param in FASTTEXT_PARAMS:  # the ones not given: FastText's defaults
            if param.name in _FASTTEXT_ONLY and getattr(args, param.name) is not None:
                values[param.name] = getattr(args, param.name)
    if doc2vec:  # PV-DBOW for skip-gram (--sg 1), PV-DM for CBOW
        values["dm"] = 1 - values.pop("sg")
        values["dbow_words"] = int(bool(dbow_words))
        model = Doc2Vec(**values)
    else:
        model = (FastText if fasttext else Word2Vec)(**values)
    if args.kernel is not None:
        _note("--kernel is deprecated and ignored: the fastest path walk is chosen")
    if doc2vec:  # one document per line, its line number (from 0) the tag
        corpus = TaggedLineDocument(corpus_path)
    else:
        corpus = LineSentence(corpus_path, max_sentence_length=args.max_sentence_length)
    started = time.perf_counter()
    model.build_vocab(corpus)
    callbacks = []
    try:  # from the line that says training starts, Ctrl-C gets the training's message
        what = "skip-gram" if sg else "CBOW"
        if doc2vec:
            what = "Doc2Vec " + ("PV-DBOW" if sg else "PV-DM") + (
                " with skip-gram words" if dbow_words else ""
            )
        if fasttext:
            what = (
                f"FastText {what} (character {model.min_n}- to {model.max_n}-grams in "
                f"{model.bucket:,} buckets)"
            )
        _note(
            f"{model.corpus_count:,} {'documents' if doc2vec else 'sentences'}, "
            f"{model.corpus_total_words:,} words, "
            f"vocabulary of {len(model.wv):,} (min_count={args.min_count}); training "
            f"{what} for {args.epochs} epochs on {workers} threads"
        )
        if args.plot_training:
            from hsw2v.callbacks import TrainingHistory

            callbacks.append(TrainingHistory())
        trained, raw = model.train(
            corpus,
            total_examples=model.corpus_count,
            total_words=model.corpus_total_words,
            epochs=args.epochs,
            compute_loss=args.compute_loss,
            callbacks=callbacks,
            progress=bool(progress),
        )
    except KeyboardInterrupt as stop:
        written = " or ".join(p for p in (args.output, args.word2vec, facebook) if p)
        how = "terminated" if isinstance(stop, Terminated) else "interrupted"
        _note(f"{how}: training stopped, nothing written ({written} left as it was)")
        return 143 if isinstance(stop, Terminated) else 130
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
    if facebook:
        from hsw2v.fasttext import save_facebook_model

        save_facebook_model(model, facebook)
        _say(f"wrote fastText model {facebook}")
    if args.plot_training:
        callbacks[0].plot(args.plot_training)
        _say(f"wrote training curves {args.plot_training}")
    return 0


def _resolve_outputs(args: argparse.Namespace, fasttext: bool) -> str | None:
    """Check the output options and set ``args.output`` (the native model) and
    ``args.word2vec`` (the vectors in word2vec's format) from whichever spelling names them;
    return the fastText ``.bin`` to write, or None.

    ``-output`` is word2vec.c's with Word2Vec (the vectors file) and fastText's with FastText
    (a prefix: ``PREFIX.hsw2v``, ``PREFIX.vec``, and ``PREFIX.bin`` in fastText's own
    format)."""
    facebook = None
    prefix = args.word2vec_c_output
    if prefix and fasttext:
        if args.output or args.word2vec:
            named = args.output or args.word2vec
            raise UsageError(
                f"-output {prefix} (fastText's: {prefix}.hsw2v and {prefix}.vec) and "
                f"{named} both name an output: give -output PREFIX, or -o MODEL and/or "
                "--word2vec FILE"
            )
        if args.binary:
            raise UsageError(
                f"-output {prefix} writes {prefix}.vec in text, as fastText does; for binary "
                "vectors give --word2vec FILE --binary"
            )
        args.output, args.word2vec = f"{prefix}.hsw2v", f"{prefix}.vec"
        facebook = f"{prefix}.bin"
    elif prefix:
        if args.word2vec:
            raise UsageError(
                f"-output {prefix} and --word2vec {args.word2vec} both name the "
                "word2vec-format vectors file: give one of them"
            )
        if prefix.endswith(".hsw2v"):
            raise UsageError(
                f"-output {prefix}: as in word2vec.c, -output is the vectors "
                "file in word2vec's format, not a model; write the native model with "
                f"-o/--model-out {prefix} (and the vectors with -output FILE)"
            )
        args.word2vec = prefix
    if not args.output and not args.word2vec:
        raise UsageError(
            "nothing to write: give -o MODEL (hsw2v's model) and/or --word2vec FILE or "
            "word2vec.c's -output FILE (the vectors in word2vec's format)"
        )
    if args.binary and not args.word2vec:
        raise UsageError(
            "--binary applies to the word2vec file: add --word2vec FILE (or -output FILE)"
        )
    return facebook


def _objective(args: argparse.Namespace) -> tuple[int, int]:
    """``(hs, negative)`` from --hs, --negative/-neg and fastText's -loss."""
    hs, negative = args.hs, args.negative
    if args.loss is not None:
        if hs is not None:
            raise UsageError(f"-loss {args.loss} and --hs {hs} both set the objective: give one")
        if args.loss == "hs":
            if negative:
                raise UsageError(
                    f"-loss hs trains hierarchical softmax alone, but --negative/-neg "
                    f"{negative} asks for negative sampling: for both give --hs 1 "
                    f"--negative {negative}"
                )
            hs, negative = 1, 0
        else:
            hs, negative = 0, 5 if negative is None else negative
            if not negative:
                raise UsageError("-loss ns with -neg 0: no negative samples to train")
    resolved = resolve_hs_negative(hs, negative)
    if not any(resolved):
        why = "--hs 0 with --negative 0"
        if args.hs is None:
            why = "--negative 0 alone leaves --hs at gensim's default 0"
        raise UsageError(f"{why}: nothing to train; give --hs 1 or --negative N (N > 0)")
    return resolved


def _architecture(args: argparse.Namespace) -> int:
    """``sg`` from --sg, word2vec.c's -cbow, or the command (``hsw2v skipgram|cbow``)."""
    sg = 0 if args.sg is None else args.sg
    if args.cbow is not None:
        if args.sg is not None and args.sg == args.cbow:
            raise UsageError(f"--sg {args.sg} and -cbow {args.cbow} contradict each other")
        sg = 1 - args.cbow
    if args.fasttext_command is not None:
        wanted = int(args.fasttext_command == "skipgram")
        if (args.sg is not None or args.cbow is not None) and sg != wanted:
            raise UsageError(
                f"'hsw2v {args.fasttext_command}' trains "
                f"{'skip-gram' if wanted else 'CBOW'}: drop --sg/-cbow, or use "
                f"'hsw2v {'cbow' if wanted else 'skipgram'}'"
            )
        sg = wanted
    return sg


def _have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _run_similar(args: argparse.Namespace) -> int:
    model, kv, _ = _load(args.model)
    if args.docs:
        return _similar_documents(model, args)
    _check_words(kv, args.words, args.model)
    _note_subword_words(kv, args.words, args.model)
    for n, word in enumerate(args.words):
        if n:
            _say()
        _say(f"{word}:")
        _print_pairs(kv.most_similar(word, topn=args.topn))
    return 0


def _similar_documents(model: Any, args: argparse.Namespace) -> int:
    """``similar --docs``: the nearest documents of each tag of a Doc2Vec model (a tag that
    is a number is the document of that line)."""
    dv = getattr(model, "dv", None)
    if dv is None:
        raise CommandError(f"{args.model}: --docs needs a Doc2Vec model ('hsw2v train --model "
                           "doc2vec'); this file holds word vectors")  # fmt: skip
    tags = [int(t) if t.isdigit() and t not in dv.key_to_index else t for t in args.words]
    missing = [t for t in tags if t not in dv]
    if missing:
        raise CommandError(f"document tags not in {args.model}: "
                           + ", ".join(repr(t) for t in missing))  # fmt: skip
    for n, tag in enumerate(tags):
        if n:
            _say()
        _say(f"document {tag}:")
        _print_pairs(dv.most_similar(tag, topn=args.topn))
    return 0


def _run_analogy(args: argparse.Namespace) -> int:
    _, kv, _ = _load(args.model)
    _check_words(kv, [args.a, args.b, args.c], args.model)
    _note_subword_words(kv, [args.a, args.b, args.c], args.model)
    _say(f"{args.a} is to {args.b} as {args.c} is to:")
    _print_pairs(kv.most_similar(positive=[args.b, args.c], negative=[args.a], topn=args.topn))
    return 0


def _note_subword_words(kv: Any, words: list[str], path: str) -> None:
    """Say on stderr which words a FastText model answers for from their n-grams alone."""
    outside = [w for w in dict.fromkeys(words) if not kv.has_index_for(w)]
    if outside:
        listed = ", ".join(repr(w) for w in outside)
        _note(f"not in the vocabulary of {path}, vectors from character n-grams: {listed}")


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


def _run_convert(args: argparse.Namespace) -> int:
    target = args.target_format or _output_format(args.output)
    if target is None:
        raise UsageError(
            f"cannot tell the format of {args.output!r} from its extension: add "
            "--to native|text|binary"
        )
    _need_file(args.input)
    _refuse_overwriting_inputs([("OUTPUT", args.output)], [("INPUT", args.input)])
    _need_writable(args.output)
    model, kv, source = _load(args.input, args.source_format)
    if target == "gensim":  # gensim's own save() file, for a service that loads with gensim
        try:
            converted = (model if model is not None else kv).to_gensim()
        except ImportError as exc:
            raise CommandError(f"--to gensim: {exc}") from None
        converted.save(args.output)
        what = "model" if model is not None else "vectors"
        _say(
            f"wrote a gensim {type(converted).__name__} ({what}: {len(kv):,} words of "
            f"{kv.vector_size} dimensions): {source} -> gensim; load it with gensim's "
            f"{type(converted).__name__}.load()"
        )
        return 0
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
    rows.append(("contents", f"{model.FILE_KIND} model" if model is not None else "word vectors"))
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
        if getattr(model, "FILE_KIND", None) == "FastText":
            rows.append(
                (
                    "subwords",
                    f"character {model.min_n}- to {model.max_n}-grams in {model.bucket:,} buckets",
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
