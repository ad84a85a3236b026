"""Word2Vec's training objectives, as rows of one table (:data:`OBJECTIVES`), and beside it
each objective's own code: :mod:`~hsw2v.running.objectives.hierarchical` (hierarchical
softmax's queries of a trained model: sentence scores, output-word prediction; public name
``hsw2v.scoring``) and :mod:`~hsw2v.running.objectives.negative` (negative sampling's draw
table and prediction; ``hsw2v.negative``).

An objective is one output layer that the input vectors ``syn0`` are trained against. Each
row says everything the Python side needs to know about it: the switch that turns it on (a
model attribute and the kernel's keyword of the same name), its output matrix (``V x d``,
zero at the start, as in word2vec.c and gensim), the lookup arrays the kernel follows into
that matrix (the tree, or the cumulative draw table), whether a model file holds the matrix
when the objective is off, and which rows a piece of distributed training may touch. Every
place that used to list ``syn1``/``syn1neg`` by hand reads the table: the model's start and
vocabulary growth (:func:`reset_matrices`, :func:`grow_matrices`), the file schema and the
checks (:func:`matrix_shapes`, :mod:`hsw2v.running.validation`), the trainer's outputs
(:func:`kernel_outputs`: each objective is one output of the kernel's step, with its lookup
and its private hot rows), the distributed tasks (:data:`MATRICES`, :func:`touched_rows`) and
the gensim conversion.

========================  ====================  ========================================
objective                 hierarchical softmax  negative sampling
========================  ====================  ========================================
switch (model, kernel)    ``hs`` (0/1)          ``negative`` (draws per target, 0: off)
output matrix             ``syn1``, a row per   ``syn1neg``, a row per word
                          inner node (V - 1
                          used, V kept)
lookup                    ``tree`` (codes,      ``cum_table`` (``count**ns_exponent``,
                          points, lengths)      cumulative; :mod:`.negative`)
file when off             ``syn1`` of 0 rows    nothing
rows a piece touches      the inner nodes on    every word's (any may be drawn)
                          its words' paths
========================  ====================  ========================================

Morin & Bengio, "Hierarchical Probabilistic Neural Network Language Model" (2005); Mikolov
et al., "Distributed Representations of Words and Phrases and their Compositionality" (2013).

Which objectives an explicit ``hs`` or ``negative`` turns on follows gensim 4.4, whose
defaults are ``hs=0, negative=5``: a caller naming one of the two gets gensim's default for
the other; hsw2v's own default (hierarchical softmax alone) applies when neither is named
(:func:`resolve_hs_negative`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hsw2v._kernels._array_passes import path_node_visits
from hsw2v.running import _tuning as tuning

logger = logging.getLogger(__name__)

GENSIM_HS = 0  # gensim 4.4's default `hs`
GENSIM_NEGATIVE = 5  # gensim 4.4's default `negative`
DEFAULT_HS, DEFAULT_NEGATIVE = 1, 0  # hsw2v's, when neither is given


def resolve_hs_negative(hs, negative) -> tuple:
    """``(hs, negative)`` as gensim reads an explicit choice: a value given is kept; when only
    one of the two is given (not None), the other takes gensim's default (``hs=0``,
    ``negative=5``); when neither is, hsw2v's own default ``(1, 0)`` applies. The values are
    returned as given (checking them is :func:`hsw2v.running.params.check_word2vec_params`'s job).

    >>> resolve_hs_negative(None, None), resolve_hs_negative(1, None)
    ((1, 0), (1, 5))
    >>> resolve_hs_negative(None, 10), resolve_hs_negative(0, None), resolve_hs_negative(1, 0)
    ((0, 10), (0, 5), (1, 0))
    """
    if hs is None and negative is None:
        return DEFAULT_HS, DEFAULT_NEGATIVE
    if negative is None:
        logger.info(
            "hs=%s given without negative: negative takes gensim's default negative=%i",
            hs,
            GENSIM_NEGATIVE,
        )
        return hs, GENSIM_NEGATIVE
    if hs is None:
        logger.info("negative=%s given without hs: hs takes gensim's default hs=%i", negative,
                    GENSIM_HS)
        return GENSIM_HS, negative
    return hs, negative


# ------------------------------------------------------------------------------ the table
def _tree_rows_touched(output: dict, occurrences: np.ndarray, n_rows: int) -> tuple:
    """The ``syn1`` rows on the paths of the piece's words, each weighted by the occurrences of
    the words whose path passes through it (``output``: the objective's kernel output), in
    one pass over the paths (:func:`~hsw2v._kernels._array_passes.path_node_visits`: the
    sums of ``np.bincount`` over the used path entries, without its temporaries)."""
    counts = np.asarray(occurrences, np.float64)
    weights = path_node_visits(output["points"], output["lengths"], counts, n_rows)
    return np.flatnonzero(weights).astype(np.int32), weights


def _draw_rows_touched(output: dict, occurrences: np.ndarray, n_rows: int) -> tuple:
    """Every ``syn1neg`` row (any word may be drawn as a negative), weighted by the word's
    occurrences plus its expected draws (``negative`` per word of the piece, by its share of
    ``cum_table``; ``output``: the objective's kernel output)."""
    table = output["cum_table"].astype(np.float64)
    share = np.diff(table, prepend=0.0) / table[-1]
    draws = output["negative"] * float(occurrences.sum()) * share
    return np.arange(n_rows, dtype=np.int32), occurrences + draws


def _no_lookup(model) -> dict:
    return {}  # the tree is the vocabulary's, built with it


def tree_hot_rows(model, threads: int) -> np.ndarray:
    """The inner nodes each job trains a private copy of when ``threads`` threads share the
    weights: the most visited ones (``HOT_NODES`` / ``HOT_NODES_CBOW`` of
    :mod:`hsw2v.running._tuning`); none for one thread or without hierarchical softmax."""
    if threads < 2 or not model.hs:
        return np.zeros(0, dtype=np.int32)
    n = tuning.HOT_NODES if model._skip_gram_walks() else tuning.HOT_NODES_CBOW
    return model.tree.most_visited_nodes(model.wv.expandos["count"], n)


def _tree_output(model, threads: int) -> dict:
    """Hierarchical softmax's kernel output (``_inner.tree_output``), its matrix left out: the
    tree's paths and the private hot rows."""
    from hsw2v._kernels._inner import tree_output  # the kernels load on first use

    tree = model.tree
    return tree_output(None, tree.codes, tree.points, tree.lengths,
                       hot_rows=tree_hot_rows(model, threads))


def _draw_hot_rows(model, threads: int) -> np.ndarray | None:
    """The words whose syn1neg rows each job trains a private copy of when ``threads``
    threads share the weights: the :data:`hsw2v.running._tuning.HOT_WORDS` most frequent;
    none for one thread."""
    if threads < 2 or tuning.HOT_WORDS < 1:
        return None
    counts = np.asarray(model.wv.expandos["count"])
    return np.argsort(-counts, kind="stable")[: tuning.HOT_WORDS].astype(np.int32)


def _draw_output(model, threads: int) -> dict:
    """Negative sampling's kernel output (``_inner.draw_output``), its matrix left out: the
    draw table (made ready), the draws per step, the private hot rows and the shared draws
    (``shared_negatives``; CBOW's run and stride from :mod:`hsw2v.running._tuning`)."""
    from hsw2v._kernels._inner import draw_output  # the kernels load on first use

    return draw_output(None, _cum_table(model)["cum_table"], int(model.negative),
                       hot_rows=_draw_hot_rows(model, threads),
                       shared=bool(model.shared_negatives), cbow_run=tuning.CBOW_SHARED_RUN,
                       cbow_stride=tuning.CBOW_SHARED_STRIDE)


def _make_cum_table(model) -> None:
    model.make_cum_table()


def _check_draw_table(arrays: dict, n: int, name, describe_array) -> None:
    """The counts a draw table is built from are non-negative, and ``cum_table`` (when given)
    is ``n`` uint32 entries, non-decreasing with a positive last one; ValueError naming the
    array (``name(key)``) otherwise."""
    if n and arrays["count"].min() < 0:
        raise ValueError(
            f"{name('count')}: a word count is negative (negative sampling draws words by count)"
        )
    table = arrays.get("cum_table")
    if table is None:
        return
    if not isinstance(table, np.ndarray) or table.dtype != np.uint32 or table.shape != (n,):
        raise ValueError(
            f"{name('cum_table')} must be a uint32 array of shape ({n},), got "
            f"{describe_array(table)}"
        )
    if n and (table[-1] == 0 or (np.diff(table.astype(np.int64)) < 0).any()):
        raise ValueError(
            f"{name('cum_table')} must be non-decreasing with a positive last entry "
            "(rebuild it with model.make_cum_table())"
        )


def _cum_table(model) -> dict:
    """The draw table, rebuilt first when it is missing or stale (a vocabulary grown since)."""
    if model.cum_table is None or len(model.cum_table) != len(model.wv.index_to_key):
        model.make_cum_table()
    return {"cum_table": model.cum_table}


@dataclass(frozen=True)
class Objective:
    """One output layer (a row of :data:`OBJECTIVES`).

    ``switch``
        the model attribute (and parameter, and kernel keyword) that turns it on, of
        ``switch_type`` (bool: a flag; int: a count); 0 means off.
    ``kind``
        its output kind in the kernel's step (``"hs"``: ``_inner.tree_output``, ``"ns"``:
        ``_inner.draw_output``).
    ``matrix``
        its output matrix, ``V x d`` float32 starting at zero (``0 x d`` when off); the same
        name as model attribute, file array and kernel keyword.
    ``lookup``
        what the kernel follows into the matrix, in words.
    ``kept_when_off``
        whether the matrix (of 0 rows) is still given to the kernel and written to a file
        when off (``syn1``, as files of every version hold it); otherwise only when on.
    ``rebuild(model)``
        rebuilds the lookup from the vocabulary (None: the vocabulary's tree, built with it).
    ``check_lookup(arrays, n, name, describe)``
        checks the lookup beyond the tree (which :func:`hsw2v.trees.check_tree_indices`
        checks for every model) before a kernel follows it; ValueError naming ``name(key)``.
    ``lookup_keywords``, ``kernel_lookups(model)``
        the names of the lookup's model attributes (None when off) and their values, made
        ready.
    ``kernel_output(model, threads)``
        the objective as one output of the kernel's step (``_inner.tree_output`` /
        ``draw_output``, its matrix left out): its lookup and its private hot rows for
        ``threads`` threads sharing the weights (the rule is the objective's own).
    ``rows_touched(output, occurrences, n_rows)``
        the rows a distributed piece whose words occur ``occurrences`` times may change, and
        a weight for every row of the matrix (:mod:`hsw2v._dist_tasks` merges by it), from
        the objective's kernel output.
    ``describe``
        in words, with the switch's value as ``{value}``.
    ``switch_param``
        the switch's row of the parameter table, as :mod:`hsw2v.running.params` makes it
        (its kind, range, default and command-line flags), declared here so that an
        objective is declared in one place.
    """

    switch: str
    switch_type: type
    kind: str
    matrix: str
    lookup: str
    kept_when_off: bool
    rebuild: Callable | None
    check_lookup: Callable | None
    lookup_keywords: tuple
    kernel_lookups: Callable
    kernel_output: Callable
    rows_touched: Callable
    describe: str
    switch_param: dict


HIERARCHICAL_SOFTMAX = Objective(
    switch="hs",
    switch_type=bool,
    kind="hs",
    matrix="syn1",
    lookup="the tree: codes, points, lengths (hsw2v.huffman, hsw2v.trees)",
    kept_when_off=True,
    rebuild=None,
    check_lookup=None,
    lookup_keywords=(),
    kernel_lookups=_no_lookup,
    kernel_output=_tree_output,
    rows_touched=_tree_rows_touched,
    describe="hierarchical softmax",
    # None means "not given": resolve_hs_negative gives gensim's default of the other
    switch_param=dict(
        kind="flag", low=0, high=1, default=None, cli=("--hs", "-hs"),
        cli_help="hierarchical softmax (0/1; default 1, or gensim's 0 with --negative)",
        cli_options={"metavar": "0|1"},
    ),  # fmt: skip
)
NEGATIVE_SAMPLING = Objective(
    switch="negative",
    switch_type=int,
    kind="ns",
    matrix="syn1neg",
    lookup="cum_table, the cumulative draw table (hsw2v.running.objectives.negative)",
    kept_when_off=False,
    rebuild=_make_cum_table,
    check_lookup=_check_draw_table,
    lookup_keywords=("cum_table",),
    kernel_lookups=_cum_table,
    kernel_output=_draw_output,
    rows_touched=_draw_rows_touched,
    describe="negative sampling (negative={value})",
    switch_param=dict(
        kind="int", low=0, high=2**31 - 2, default=None,  # the kernel's int, less one
        cli=("--negative", "-negative"),
        cli_help="negative samples (0: none; default 0, or gensim's 5 with --hs)",
    ),  # fmt: skip
)

#: Every objective, in the order the kernel trains them for one (h, target) pair.
OBJECTIVES: tuple[Objective, ...] = (HIERARCHICAL_SOFTMAX, NEGATIVE_SAMPLING)
OUTPUT_KINDS = tuple(o.kind for o in OBJECTIVES)  # their output kinds in the kernel
OUTPUTS = tuple(o.matrix for o in OBJECTIVES)  # the output matrices, in table order
MATRICES = ("syn0", *OUTPUTS)  # every trained matrix: the input vectors first
SWITCHES = tuple(o.switch for o in OBJECTIVES)


def switches_of(holder) -> dict:
    """``{switch: value}`` of every objective, read from a model (attributes) or a mapping
    (a file's metadata; a switch it lacks is off, as in files written before it existed)."""
    if isinstance(holder, dict):
        return {name: holder.get(name, 0) for name in SWITCHES}
    return {name: getattr(holder, name) for name in SWITCHES}


def active(holder) -> tuple[Objective, ...]:
    """The objectives turned on in a model or a ``{switch: value}`` mapping."""
    on = switches_of(holder)
    return tuple(o for o in OBJECTIVES if on[o.switch])


def describe(model) -> str:
    """What ``model`` trains, in words (logged when training starts).

    >>> from types import SimpleNamespace as M
    >>> describe(M(sg=1, hs=0, negative=5))
    'skip-gram with negative sampling (negative=5)'
    >>> describe(M(sg=0, hs=1, negative=0))
    'CBOW with hierarchical softmax'
    """
    parts = [o.describe.format(value=getattr(model, o.switch)) for o in active(model)]
    return f"{'skip-gram' if model.sg else 'CBOW'} with {' and '.join(parts)}"


def matrix_shapes(switches: dict, n: int, d: int) -> dict:
    """``{matrix: shape}`` of every output matrix a model of ``n`` words and ``d`` dimensions
    holds with these switches: ``(n, d)`` when on, ``(0, d)`` when off."""
    return {o.matrix: ((n if switches[o.switch] else 0), d) for o in OBJECTIVES}


def reset_matrices(model, n: int) -> None:
    """Give ``model`` every output matrix at zero, ``n`` rows when its objective is on (0 when
    off): a new model's start (``n = 0``) and ``prepare_weights()``."""
    shapes = matrix_shapes(switches_of(model), n, model.vector_size)
    for name, shape in shapes.items():
        setattr(model, name, np.zeros(shape, dtype=np.float32))


def rebuild_lookups(model) -> None:
    """Rebuild the lookups of every objective that is on from the model's vocabulary (after
    ``build_vocab()`` and ``load()``); the others' are dropped (None)."""
    on = switches_of(model)
    for o in OBJECTIVES:
        if o.rebuild is not None and on[o.switch]:
            o.rebuild(model)
        else:
            for name in o.lookup_keywords:
                setattr(model, name, None)


def grow_matrices(model, n: int) -> None:
    """Grow every output matrix of an objective that is on to ``n`` rows, keeping the trained
    rows; the new rows start at zero, as a fresh model's (vocabulary update)."""
    for o in active(model):
        old = getattr(model, o.matrix)
        grown = np.zeros((n, model.vector_size), dtype=np.float32)
        grown[: len(old)] = old
        setattr(model, o.matrix, grown)


def outputs_of(model) -> dict:
    """``{matrix: array}`` of every output matrix of ``model`` (on or off)."""
    return {name: getattr(model, name) for name in OUTPUTS}


def saved_outputs(model) -> dict:
    """The output matrices a model file holds: each objective's when on, and ``syn1`` (0 rows)
    when off, as files of every version hold it."""
    on = switches_of(model)
    kept = [o for o in OBJECTIVES if on[o.switch] or o.kept_when_off]
    return {o.matrix: getattr(model, o.matrix) for o in kept}


def ready_lookups(model) -> None:
    """Rebuild the lookup of each objective that is on when it is missing or stale (before
    the checks of :func:`hsw2v.running.validation.check_model_for_training` read it)."""
    for o in active(model):
        o.kernel_lookups(model)


def kernel_outputs(model, threads: int) -> tuple[dict, ...]:
    """The kernel's outputs of ``model`` (each objective that is on, in table order: the
    order they step for one (h, target) pair), their matrices left out
    (:func:`with_matrices` adds them): what a picklable trainer setting holds."""
    return tuple(o.kernel_output(model, threads) for o in active(model))


def with_matrices(outputs: tuple, matrices) -> list[dict]:
    """The kernel outputs with their matrices: ``matrices`` in :data:`OUTPUTS` order (one per
    objective, on or off), each given to the output of its objective."""
    by_kind = dict(zip(OUTPUT_KINDS, matrices, strict=True))
    return [dict(output, matrix=by_kind[output["kind"]]) for output in outputs]


def touched_rows(settings, occurrences: np.ndarray, outputs) -> list:
    """Per output matrix (:data:`OUTPUTS` order), ``(rows, weights)``: the rows a distributed
    piece whose words occur ``occurrences`` times may change, and a weight for every row;
    none for an objective that is off."""
    on = {output["kind"]: output for output in settings.outputs}
    found = []
    for o, kind, matrix in zip(OBJECTIVES, OUTPUT_KINDS, outputs, strict=True):
        if kind in on:
            found.append(o.rows_touched(on[kind], occurrences, len(matrix)))
        else:
            found.append((np.zeros(0, np.int32), np.zeros(0)))
    return found
