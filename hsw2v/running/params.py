"""Word2Vec's parameters: the one table (:data:`PARAMS`) that every other list is read from.

Each parameter is declared once, as a :class:`Param`: its name, kind and range, default,
whether a model file saves it, gensim's attribute of the same meaning, whether distributed
tasks need it, and its ``hsw2v train`` flag. Derived from it: the constructor's check
(:func:`check_word2vec_params` over :data:`ARGUMENTS`), the saved parameters
(:data:`SAVED`, :mod:`hsw2v.word2vec._schema`), the attributes the constructor keeps
(:data:`KEPT`), what the gensim conversion copies
(:data:`GENSIM_SETTINGS`, :data:`GENSIM_STATE`), the distributed ``RunSpec``'s fields
(:data:`TASK`) and the command line's flags (:data:`CLI`). The ``Word2Vec`` signature stays
written out for its readers; a test holds it, this table and its docstring together.

The kernels cast parameters to C types (``int`` window, vector size and negatives, ``float``
learning rates, ``uint64_t`` seeds); a value outside the type would wrap or raise an
OverflowError deep inside Cython. Each entry here gives the kind and the closed range a
value must lie in, chosen so that every cast is exact. The constructor checks the values it
is given (:func:`check_word2vec_params`), :meth:`hsw2v.Word2Vec.load` the values a file holds
(the same function, naming the file), and ``train()`` the values a user may have assigned
since; all raise ValueError naming the parameter and its range.

>>> check_word2vec_params({"window": 5, "alpha": 0.025})
>>> check_word2vec_params({"window": 2**31})
Traceback (most recent call last):
    ...
ValueError: window must be an integer in [1, 2147483647], got 2147483648
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from hsw2v.running.objectives import OBJECTIVES

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
FLOAT32_MAX = 3.4028234663852886e38
# The kernels size a job's scratch as a few rows of vector_size floats in C int arithmetic;
# 2**24 floats (64 MiB) per row keeps every such product far inside int.
VECTOR_SIZE_MAX = 2**24

# Training and scoring start this many threads: a file must not ask for billions.
WORKERS_MAX = 1024

UNCHECKED = "any"  # a parameter the table does not check (objects, callables, the corpus)


@dataclass(frozen=True)
class Param:
    """One parameter of :class:`hsw2v.Word2Vec` (or one piece of state saved with a model).

    ``kind`` and the closed range ``[low, high]`` say what a value may hold: ``"int"`` (a
    Python or NumPy integer, not bool), ``"flag"`` (0 or 1, Python and NumPy bools accepted),
    ``"real"`` (a real number, not NaN), ``"int?"`` (None or ``"int"``), ``"str?"`` (None or str),
    ``("one of", values)``, or ``"any"`` (not checked here: the corpus, callables).
    ``default`` is the constructor's default (``argument`` says whether it is a constructor
    argument at all; state such as ``corpus_count`` is not). ``saved``: written to and read
    from a model file (:mod:`hsw2v.word2vec._schema`). ``gensim``: gensim 4.4's ``Word2Vec``
    has an attribute of that name with the same meaning, copied by :mod:`hsw2v.gensim_compat`
    (None: hsw2v's own). ``task``: shipped to every distributed training task
    (:class:`hsw2v._dist_tasks.RunSpec`). ``cli``: the ``hsw2v train`` spellings of its flag
    (gensim's name first, then word2vec.c's), ``cli_help`` its help, and ``cli_options``
    argparse settings of the command line's own (a different default, a stricter minimum
    ``"min"``, the help ``"group"``). ``kept_as``: the constructor keeps the checked argument
    as the model's attribute of the same name, ``kept_as(value)`` (``int``, ``float``,
    ``bool`` or :func:`as_given`); None: no such attribute (state, and the arguments the
    constructor uses otherwise). ``in_kernel``: the training kernel reads it, as the field of
    the same name of ``ModelView.params`` (``hsw2v/_kernels/train/_model.pxd``), which the
    trainer fills by name from :func:`kernel_params`; a new such parameter is this row, the
    signature, that field and the code that reads it.
    """

    name: str
    kind: object
    low: object = None
    high: object = None
    default: object = None
    argument: bool = True
    saved: bool = True
    gensim: str | None = None
    task: bool = False
    cli: tuple = ()
    cli_help: str = ""
    cli_options: dict = field(default_factory=dict)
    kept_as: Callable | None = None
    in_kernel: bool = False


_UNSET = object()


def as_given(value):
    """The argument itself: a ``kept_as`` that keeps what the user gave."""
    return value


def optional_int(value):
    """None, or the value as a Python int: a ``kept_as`` for ``"int?"``."""
    return None if value is None else int(value)


def _kept_as(kind, default) -> Callable:
    """How the constructor keeps an argument of ``kind``: an ``"int"`` as int (``"int?"``:
    None or int), a ``"real"`` as float, a ``"flag"`` as its default's type (bool for True or
    False, else int), any other kind as given. NumPy scalars become Python numbers, which a
    model file (JSON) can hold."""
    if kind == "int":
        return int
    if kind == "int?":
        return optional_int
    if kind == "real":
        return float
    if kind == "flag":
        return bool if isinstance(default, bool) else int
    return as_given


def _p(name, kind, low=None, high=None, default=_UNSET, *, saved=True, gensim=True, **more):
    """A :class:`Param`; ``default`` given means a constructor argument (kept as its kind says
    unless ``kept_as`` is given), ``gensim=True`` that gensim's attribute of the same name is
    copied (never for an unchecked object)."""
    argument = default is not _UNSET
    if argument:
        more.setdefault("kept_as", _kept_as(kind, default))
    return Param(
        name,
        kind,
        low,
        high,
        default=None if default is _UNSET else default,
        argument=argument,
        saved=saved,
        gensim=(name if kind != UNCHECKED else None) if gensim is True else gensim,
        **more,
    )


_FLAG = {"metavar": "0|1"}

# The one table, in the order of the Word2Vec signature, then the state saved with a model.
# Users read the signature itself in hsw2v/word2vec/__init__.py; tests/test_params.py checks that it,
# this table and the class docstring's Parameters section agree.
PARAMS: tuple[Param, ...] = (
    # the corpus: read by the constructor's training, not kept
    _p("sentences", UNCHECKED, default=None, saved=False, kept_as=None),
    _p("corpus_file", UNCHECKED, default=None, saved=False, kept_as=None),
    _p("vector_size", "int", 1, VECTOR_SIZE_MAX, 100,
       cli=("--size", "--vector-size", "-size"), cli_help="dimensions of the vectors"),
    _p("alpha", "real", math.ulp(0.0), FLOAT32_MAX, 0.025,
       cli=("--alpha", "-alpha"), cli_help="start rate"),
    _p("window", "int", 1, INT32_MAX, 5, cli=("--window", "-window"), cli_help="context size",
       in_kernel=True),
    _p("min_count", "int", 0, INT64_MAX, 5,
       cli=("--min-count", "-min-count"), cli_help="ignore words seen fewer times"),
    _p("max_vocab_size", "int?", 1, INT64_MAX, None, cli=("--max-vocab-size",)),
    _p("sample", "real", 0.0, FLOAT32_MAX, 1e-3,
       cli=("--sample", "-sample"), cli_help="subsampling threshold"),
    _p("seed", "int", 0, UINT64_MAX, 1, cli=("--seed",), cli_help="random seed"),
    _p("workers", "int", 1, WORKERS_MAX, 3,
       cli=("--workers", "--threads", "-threads"),
       cli_help="training threads (default: number of CPUs)", cli_options={"default": None}),
    _p("min_alpha", "real", 0.0, FLOAT32_MAX, 0.0001, cli=("--min-alpha",)),
    _p("sg", "flag", 0, 1, 0, cli=("--sg",), cli_help="1: skip-gram, 0: CBOW (default 0)",
       cli_options={"default": None, **_FLAG}, in_kernel=True),
    # each objective's switch (hs, negative), its row declared with the objective's
    # (hsw2v.running.objectives.OBJECTIVES): None means "not given"; resolve_hs_negative gives
    # the other gensim's default when one is given, (1, 0) when neither is
    *(_p(o.switch, **o.switch_param) for o in OBJECTIVES),
    _p("ns_exponent", "real", -FLOAT32_MAX, FLOAT32_MAX, 0.75,
       cli=("--ns-exponent",), cli_help="negative draw shape"),
    _p("cbow_mean", "flag", 0, 1, 1, cli=("--cbow-mean",), cli_options=_FLAG, in_kernel=True),
    # kept for gensim's signature; the initial vectors come from seed
    _p("hashfxn", UNCHECKED, default=hash, saved=False),
    _p("epochs", "int", 0, INT32_MAX, 5, cli=("--epochs", "--iter", "-iter"), cli_help="passes",
       cli_options={"min": 1}),
    _p("null_word", "flag", 0, 1, 0),
    _p("trim_rule", UNCHECKED, default=None, saved=False, kept_as=None),  # used, not kept
    _p("sorted_vocab", "flag", 0, 1, 1),
    _p("batch_words", "int", 1, INT32_MAX, 10000, task=True, cli=("--batch-words",)),
    _p("compute_loss", "flag", 0, 1, False, cli=("--compute-loss",),
       cli_help="track the training loss (shown in the summary)",
       cli_options={"action": "store_true", "group": "reporting"}, in_kernel=True),
    _p("callbacks", UNCHECKED, default=(), saved=False),
    _p("comment", "str?", default=None),
    _p("max_final_vocab", "int?", 1, INT64_MAX, None, cli=("--max-final-vocab",)),
    _p("shrink_windows", "flag", 0, 1, True, in_kernel=True),
    _p("cache_words", "int", 0, INT64_MAX, 100_000_000, gensim=None, task=True,
       cli=("--cache-words",),
       cli_help="keep the id-encoded corpus in memory up to this many tokens (0: reread)"),
    # deprecated and ignored (a DeprecationWarning); saved as "auto", files of earlier versions
    # carry the other names
    _p("kernel", ("one of", (None, "auto", "window", "fused", "loop", "blas")), default=None,
       gensim=None, kept_as=None),
    # the tree kind is checked by the constructor (a name or a callable), saved as tree_type
    _p("tree", UNCHECKED, default="huffman", saved=False, gensim=None, kept_as=None),
    # negative sampling: shared sets of negatives (hsw2v._kernels._inner, design note D')
    _p("shared_negatives", "flag", 0, 1, True, gensim=None, cli=("--shared-negatives",),
       cli_help="negative sampling: 1 (default) shares sets of negatives, in skip-gram one per "
       "centre word among its contexts, in CBOW one among four centre words a window apart "
       "(faster, the same quality); 0: gensim's set per pair (skip-gram) or per centre (CBOW)",
       cli_options=_FLAG),
    # State saved with a model, never passed by users.
    _p("corpus_count", "int", 0, INT64_MAX),
    _p("corpus_total_words", "int", 0, INT64_MAX),
    _p("train_count", "int", 0, INT64_MAX),
    _p("effective_min_count", "int", 0, INT64_MAX),
    _p("semantic_pending", "flag", 0, 1, gensim=None),
    _p("running_training_loss", "real", -math.inf, math.inf),
    _p("total_train_time", "real", 0.0, math.inf),
    _p("tree_type", ("one of", ("huffman", "balanced", "semantic", "callable")), gensim=None),
)
BY_NAME: dict[str, Param] = {p.name: p for p in PARAMS}

# name: (kind, low, high) of every parameter the table checks.
WORD2VEC_PARAMS = {p.name: (p.kind, p.low, p.high) for p in PARAMS if p.kind != UNCHECKED}
ARGUMENTS = tuple(p.name for p in PARAMS if p.argument)  # the constructor's, in order
SAVED = tuple(p.name for p in PARAMS if p.saved)  # what a model file holds
GENSIM_SETTINGS = tuple(p.name for p in PARAMS if p.gensim and p.argument)  # constructor's
GENSIM_STATE = tuple(p.name for p in PARAMS if p.gensim and not p.argument)  # set after
TASK = tuple(p.name for p in PARAMS if p.task)  # in every distributed task's RunSpec
CLI = tuple(p for p in PARAMS if p.cli)  # flags of `hsw2v train`
KEPT = tuple(p for p in PARAMS if p.kept_as is not None)  # the constructor's attributes
KERNEL = tuple(p.name for p in PARAMS if p.in_kernel)  # the fields of ModelView.params


def kernel_params(model) -> dict:
    """The parameters the training kernel reads (:data:`KERNEL`), by name, with ``model``'s
    values (a Word2Vec, FastText or Doc2Vec): the ``params`` of
    :class:`hsw2v._kernels._inner.Trainer`.

    >>> from types import SimpleNamespace
    >>> kernel_params(SimpleNamespace(window=5, sg=1, cbow_mean=1, shrink_windows=True,
    ...                               compute_loss=False))
    {'window': 5, 'sg': 1, 'cbow_mean': 1, 'compute_loss': False, 'shrink_windows': True}
    """
    return {name: getattr(model, name) for name in KERNEL}


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def param_error(name: str, value, spec: tuple | None = None) -> str | None:
    """What is wrong with ``name=value`` (a sentence naming the range), or None if it fits;
    ``spec``: ``(kind, low, high)`` of a parameter outside Word2Vec's table (FastText's).

    >>> param_error("alpha", float("inf"))
    'alpha must be a finite number in (0, 3.4028234663852886e+38], got inf'
    >>> param_error("sg", 2)
    'sg must be 0 or 1, got 2'
    >>> param_error("window", 3) is None
    True
    """
    kind, low, high = WORD2VEC_PARAMS[name] if spec is None else spec
    if kind in ("int", "int?"):
        if kind == "int?" and value is None:
            return None
        if not _is_int(value) or not low <= value <= high:
            none = "None or " if kind == "int?" else ""
            return f"{name} must be {none}an integer in [{low}, {high}], got {value!r}"
    elif kind == "flag":
        if not (_is_int(value) or isinstance(value, (bool, np.bool_))) or value not in (0, 1):
            return f"{name} must be 0 or 1, got {value!r}"
    elif kind == "real":
        if not _is_real(value) or not low <= float(value) <= high or math.isnan(float(value)):
            value_text = repr(float(value)) if _is_real(value) else repr(value)
            if name == "alpha":
                return f"alpha must be a finite number in (0, {high}], got {value_text}"
            if not math.isfinite(high):
                return f"{name} must be a number >= {low} (not NaN), got {value_text}"
            return f"{name} must be a finite number in [{low}, {high}], got {value_text}"
    elif kind == "str?":
        if value is not None and not isinstance(value, str):
            return f"{name} must be None or a str, got {type(value).__name__}"
    else:
        allowed = kind[1]
        if value is None and None in allowed:
            return None
        if not isinstance(value, str) or value not in allowed:
            return f"{name} must be one of {allowed}, got {value!r}"
    return None


def check_rows(rows, values: dict, where: str | None = None) -> None:
    """Check the value in ``values`` of each of ``rows`` (:class:`Param`s of a model's own
    table, FastText's or Doc2Vec's) that ``values`` names; a ValueError names the first one
    out of its range (prefixed by ``where``, e.g. a file, when given)."""
    for p in rows:
        if p.name in values:
            problem = param_error(p.name, values[p.name], (p.kind, p.low, p.high))
            if problem is not None:
                raise ValueError(problem if where is None else f"{where}: {problem}")


def check_word2vec_params(values: dict, where: str | None = None) -> None:
    """Check every known parameter in ``values`` against :data:`WORD2VEC_PARAMS`, and
    ``min_alpha <= alpha`` and ``hs or negative`` when both are given. Raises ValueError naming
    the parameter and its range (prefixed by ``where``, e.g. a file, when given)."""
    problems = [param_error(name, values[name]) for name in WORD2VEC_PARAMS if name in values]
    problem = next((p for p in problems if p), None)
    if problem is None and "alpha" in values and "min_alpha" in values:
        if values["min_alpha"] > values["alpha"]:
            problem = f"min_alpha must be in [0, alpha], got {values['min_alpha']!r}"
    if problem is None and "hs" in values and "negative" in values:
        if not values["hs"] and not values["negative"]:
            problem = (
                "You must set either 'hs' or 'negative' to be positive for proper training. "
                "When both 'hs=0' and 'negative=0', there will be no training. "
                "Give hs=1 (hierarchical softmax), negative > 0 (negative sampling) or both; "
                "negative=0 alone leaves hs at gensim's default 0"
            )
    if problem is not None:
        raise ValueError(problem if where is None else f"{where}: {problem}")
