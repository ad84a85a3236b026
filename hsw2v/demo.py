"""Train a skip-gram, hierarchical-softmax model on the bundled demo corpus and report on it.

Run it from the command line with ``python -m hsw2v demo`` (or ``hsw2v demo``),
or from Python:

    >>> from hsw2v import demo
    >>> model = demo.run(epochs=5)  # doctest: +SKIP
    >>> model.wv.most_similar("king", topn=3)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = ["NEIGHBOUR_WORDS", "ANALOGIES", "run"]

#: Words whose nearest neighbours are shown in the report.
NEIGHBOUR_WORDS: tuple[str, ...] = ("god", "king", "jesus", "water", "israel", "son")

#: Analogies shown in the report, as (positive words, negative words): ``he - his + her``
#: should give ``she``, ``sons - son + daughter`` ``daughters`` and ``men - man + woman``
#: ``women``. Chosen by measurement: over 8 trainings of the demo (5 epochs, 2 workers, seeds
#: 1-8) each was the first answer in 8, 8 and 7 of them and among the first three in all,
#: while ``king - man + woman`` gave ``queen`` first in 2 (``chamberlains`` most often) and
#: ``son - man + woman`` gave ``daughter`` among the first three in none of 3.
ANALOGIES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("he", "her"), ("his",)),
    (("sons", "daughter"), ("son",)),
    (("men", "woman"), ("man",)),
)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _format_neighbours(pairs: Sequence[tuple[str, float]]) -> str:
    return ", ".join(f"{word} ({score:.2f})" for word, score in pairs)


def _describe_analogy(positive: Sequence[str], negative: Sequence[str]) -> str:
    """``king - man + woman`` for positive ``(king, woman)`` and negative ``(man,)``."""
    text = positive[0]
    for word in negative:
        text += f" - {word}"
    for word in positive[1:]:
        text += f" + {word}"
    return text


def run(
    workers: int | None = None,
    epochs: int = 5,
    out: TextIO | None = None,
    _model_class: Any = None,
) -> Any:
    """Train word2vec on the demo corpus, print a short report to ``out`` and return the model.

    The model is ``Word2Vec(sg=1, hs=1, negative=0, vector_size=100, window=5, min_count=5)``
    trained on :func:`hsw2v.datasets.demo_corpus` (the King James Bible). The
    report gives the corpus and vocabulary sizes, the time taken to build the
    vocabulary and to train, the training speed in words per second, the
    nearest neighbours of a few words and a couple of analogies.

    Parameters
    ----------
    workers
        Number of training threads; ``None`` uses every CPU.
    epochs
        Number of passes over the corpus.
    out
        Text stream the report is written to; ``None`` means ``sys.stdout``.
    _model_class
        Class to train instead of :class:`hsw2v.word2vec.Word2Vec`;
        anything with gensim's ``Word2Vec`` API works (e.g.
        ``gensim.models.Word2Vec``).

    Returns
    -------
    Word2Vec
        The trained model.

    Examples
    --------
    >>> import io
    >>> report = io.StringIO()
    >>> model = run(epochs=1, out=report)  # doctest: +SKIP
    >>> "nearest neighbours" in report.getvalue()  # doctest: +SKIP
    True
    """
    from hsw2v.datasets import demo_corpus

    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise ValueError(f"workers must be a positive integer or None, got {workers!r}")
    if out is None:
        out = sys.stdout
    if _model_class is None:
        from hsw2v.word2vec import Word2Vec

        _model_class = Word2Vec
    workers = workers or os.cpu_count() or 1

    def say(line: str = "") -> None:
        print(line, file=out, flush=True)

    corpus = demo_corpus()
    model = _model_class(
        sg=1,
        hs=1,
        negative=0,
        vector_size=100,
        window=5,
        min_count=5,
        epochs=epochs,
        workers=workers,
    )
    say("hsw2v demo: skip-gram with hierarchical softmax on the King James Bible")

    start = time.perf_counter()
    model.build_vocab(corpus)
    vocab_seconds = time.perf_counter() - start
    say(f"  corpus      {model.corpus_count:,} verses, {model.corpus_total_words:,} words")
    say(
        f"  vocabulary  {len(model.wv):,} words seen at least 5 times "
        f"(built in {vocab_seconds:.2f} s)"
    )

    start = time.perf_counter()
    result = model.train(corpus, total_examples=model.corpus_count, epochs=model.epochs)
    train_seconds = time.perf_counter() - start
    if isinstance(result, tuple) and len(result) == 2:
        raw_words = result[1]
    else:
        raw_words = model.corpus_total_words * model.epochs
    speed = raw_words / train_seconds if train_seconds > 0 else float("inf")
    say(
        f"  training    {_count(epochs, 'epoch')} on {_count(workers, 'worker')} "
        f"in {train_seconds:.2f} s: {speed:,.0f} words/s"
    )

    say()
    say("nearest neighbours (cosine similarity):")
    width = max(len(word) for word in NEIGHBOUR_WORDS)
    for word in NEIGHBOUR_WORDS:
        if word in model.wv:
            say(f"  {word:<{width}}  {_format_neighbours(model.wv.most_similar(word, topn=5))}")
        else:
            say(f"  {word:<{width}}  (not in vocabulary)")

    say()
    say("analogies:")
    labels = [_describe_analogy(pos, neg) for pos, neg in ANALOGIES]
    width = max(len(label) for label in labels)
    for label, (positive, negative) in zip(labels, ANALOGIES, strict=True):
        missing = [w for w in (*positive, *negative) if w not in model.wv]
        if missing:
            say(f"  {label:<{width}}  (not in vocabulary: {', '.join(missing)})")
            continue
        pairs = model.wv.most_similar(positive=list(positive), negative=list(negative), topn=3)
        say(f"  {label:<{width}}  ~ {_format_neighbours(pairs)}")
    return model
