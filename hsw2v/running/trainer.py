"""One place turns a model into the kernel's :class:`hsw2v._kernels._inner.Trainer`.

Every way of training (``Word2Vec.train`` over an iterable, ``corpus_file`` mode, and each
task of distributed training, :mod:`hsw2v._dist_tasks`) builds its trainer here, so a setting
that trains on one machine trains the same way everywhere: the objectives (the rows of
:data:`hsw2v.running.objectives.OBJECTIVES`, each one output of the kernel's step with its
matrix, lookup and private hot rows), the parameters the kernel reads (the rows of
:data:`hsw2v.running.params.PARAMS` marked ``in_kernel``: ``window``, ``sg``, ``cbow_mean``,
...), the kernel variant, the private hot rows and the lock factors (``wv.vectors_lockf``).

:func:`trainer_settings` reads everything but the weights from a model into a picklable
:class:`TrainerSettings` (what distributed training ships to its workers once);
:meth:`TrainerSettings.build` makes the trainer over given weights (a worker's replica);
:func:`make_trainer` does both over the model's own weights.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import numpy as np

from hsw2v._kernels._inner import Trainer
from hsw2v.running import _tuning as tuning
from hsw2v.running.objectives import (
    describe,
    kernel_outputs,
    outputs_of,
    ready_lookups,
    with_matrices,
)
from hsw2v.running.params import kernel_params
from hsw2v.running.validation import check_model_for_training

logger = logging.getLogger(__name__)


@dataclass
class TrainerSettings:
    """Everything :class:`hsw2v._kernels._inner.Trainer` needs besides the weight matrices."""

    sample_int: np.ndarray
    # the parameters the kernel reads, by name (hsw2v.running.params.kernel_params: window,
    # sg, cbow_mean, ...)
    params: dict
    walk: str  # the path walk (:func:`walk_variant`)
    # the objectives that are on, as the kernel's outputs without their matrices
    # (:func:`hsw2v.running.objectives.kernel_outputs`: lookups and private hot rows)
    outputs: tuple
    hot_sync: int
    hot_visits: int
    hot_scale: float
    lockf: np.ndarray | None = None  # wv.vectors_lockf: scales each input row's update
    # the input kind's extra rows: None (a word is its row), or FastText's (ptr, rows), word
    # w's input rows rows[ptr[w]:ptr[w + 1]] (its row, then its n-gram buckets')
    subwords: tuple | None = None
    # Doc2Vec's document rows: None, or (rows, lockf, dbow_words), the rows a job's tag
    # tokens name (hsw2v._kernels._inner.Trainer's ``docs``)
    docs: tuple | None = None

    def output(self, kind: str) -> dict | None:
        """The kernel output of kind ``"hs"`` or ``"ns"``, or None when its objective is
        off."""
        return next((o for o in self.outputs if o["kind"] == kind), None)

    def build(self, syn0: np.ndarray, *outputs: np.ndarray, frozen: bool = False) -> Trainer:
        """The trainer over these weights (borrowed, trained in place): ``syn0`` and the
        output matrices in :data:`hsw2v.running.objectives.OUTPUTS` order (``syn1``,
        ``syn1neg``), 0 rows for an objective that is off. ``frozen``: Doc2Vec's inference,
        which writes only the document rows."""
        args, kwargs = self.arguments(syn0, *outputs, frozen=frozen)
        return trainer_class(self.walk)(*args, **kwargs)

    def arguments(self, syn0: np.ndarray, *outputs: np.ndarray, frozen: bool = False):
        """``(args, kwargs)`` of the Trainer :meth:`build` makes (for a benchmark that gives
        them to another build's Trainer)."""
        args = (syn0, self.sample_int, with_matrices(self.outputs, outputs), self.params)
        kwargs = dict(
            walk=self.walk,
            hot_sync=self.hot_sync,
            hot_visits=self.hot_visits,
            hot_scale=self.hot_scale,
            lockf=self.lockf,
            subwords=self.subwords,
            docs=self.docs,
            frozen=frozen,
        )
        return args, kwargs


def check_training_vocabulary(model) -> None:
    """A clear ValueError unless ``model.wv`` holds a training vocabulary: per-word ``count``
    and ``sample_int`` (that every array agrees with it is
    :func:`hsw2v.running.validation.check_model_for_training`'s check). ``model.wv`` replaced
    by vectors without one (``load_word2vec_format``, ``add_vectors``) cannot be trained
    (gensim 4.4 starts training such a model and its worker threads fail, so ``train()``
    never returns)."""
    expandos = getattr(model.wv, "expandos", {})
    missing = [attr for attr in ("count", "sample_int") if attr not in expandos]
    if missing:
        raise ValueError(
            f"model.wv has no training vocabulary (no per-word {' or '.join(map(repr, missing))}"
            "): it was replaced by vectors such as load_word2vec_format() or add_vectors() "
            "give, which cannot be trained. Build the vocabulary with build_vocab(corpus) "
            "(then intersect_word2vec_format() to start from pretrained vectors)"
        )


# The path walk every trainer uses: a benchmark and test switch, not a parameter (the
# ``kernel=`` of earlier versions is ignored). "auto" takes the fastest measured; "window",
# "fused", "reference" (the reference step with the math/_vec.h loops), "loop" and "blas" (the
# reference step with plain loops / BLAS, gensim's shape) select one. Read once from the
# environment variable HSW2V_KERNEL; tests and benchmarks may set it here. "loop" and "blas"
# are benchmark-only: hsw2v._kernels._bench_walks trains them, in builds that hold it.
WALK = os.environ.get("HSW2V_KERNEL", "auto")
WALK_CHOICES = ("auto", "window", "fused", "reference", "loop", "blas")
BENCH_WALKS = ("loop", "blas")


def trainer_class(walk: str) -> type:
    """The Trainer type that runs the walk ``walk``: the shipped
    :class:`hsw2v._kernels._inner.Trainer`, or for a benchmark-only walk
    :class:`hsw2v._kernels._bench_walks.Trainer`, whose absence (every wheel, and a source build
    without ``HSW2V_BENCH_WALKS=1``) is a ValueError that says how to build it."""
    if walk not in BENCH_WALKS:
        return Trainer
    try:
        from hsw2v._kernels._bench_walks import Trainer as BenchTrainer
    except ModuleNotFoundError:
        raise ValueError(
            f"HSW2V_KERNEL={walk!r} selects a benchmark-only walk "
            "(hsw2v._kernels._bench_walks) that this build does not hold: build it from a "
            "source checkout with "
            "`HSW2V_BENCH_WALKS=1 python3 setup.py build_ext --inplace` (no wheel holds it), "
            "or use 'auto', 'window', 'fused' or 'reference'"
        ) from None
    return BenchTrainer


def walk_variant(model) -> str:
    """The path walk of ``model``'s trainer: :data:`WALK`, where ``"auto"`` takes the
    fastest measured, ``"window"`` (train/_window.h's phased walks of hierarchical softmax, for
    skip-gram and CBOW; with negative sampling its steps are the fused walk's)."""
    if WALK not in WALK_CHOICES:
        raise ValueError(f"HSW2V_KERNEL must be one of {WALK_CHOICES}, got {WALK!r}")
    if WALK != "auto":
        return WALK
    return "window"


def hot_scale(threads: int) -> float:
    """The share of its change of the private rows a job adds back at a sync, with ``threads``
    threads (``HOT_MERGE`` of :mod:`hsw2v.running._tuning`): 1 ("sum"), 1 / threads ("mean"),
    or min(1, ``HOT_MERGE_THREADS`` / threads) ("capped", the default)."""
    threads = max(int(threads), 1)
    if tuning.HOT_MERGE == "sum":
        return 1.0
    if tuning.HOT_MERGE == "mean":
        return 1.0 / threads
    if tuning.HOT_MERGE == "capped":
        return min(1.0, tuning.HOT_MERGE_THREADS / threads)
    raise ValueError(f"HOT_MERGE must be 'sum', 'mean' or 'capped', got {tuning.HOT_MERGE!r}")


def trainer_settings(model, threads: int | None = None) -> TrainerSettings:
    """The trainer settings of a model with a vocabulary, for ``threads`` threads sharing one
    copy of the weights (default ``model.workers``; a distributed task trains its replica on
    one). Makes each objective's lookups ready (``model.cum_table`` is rebuilt when negative
    sampling needs it and it is missing or stale), then checks every array and index the
    kernels will follow (:func:`hsw2v.running.validation.check_model_for_training`).

    With several threads each job trains a private copy of the most visited inner nodes
    (``HOT_NODES`` and the other tuning constants of :mod:`hsw2v.running._tuning`, where the
    benchmarks override them); one thread trains every row in place.
    """
    threads = model.workers if threads is None else int(threads)
    check_training_vocabulary(model)
    ready_lookups(model)  # cum_table, rebuilt when missing or stale
    check_model_for_training(model)  # every index the kernels will follow, as it is now
    sg = model._skip_gram_walks()  # the hot rows' tuning: skip-gram's or CBOW's
    return TrainerSettings(
        sample_int=model.wv.expandos["sample_int"],
        params=kernel_params(model),
        walk=walk_variant(model),
        outputs=kernel_outputs(model, threads),
        hot_sync=tuning.HOT_SYNC if sg else tuning.HOT_SYNC_CBOW,
        hot_visits=tuning.HOT_VISITS if sg else tuning.HOT_VISITS_CBOW,
        hot_scale=hot_scale(threads),
        lockf=model._input_lockf(),
        subwords=model._input_subwords(),
        docs=model._input_docs(),
    )


def make_trainer(model, threads: int | None = None) -> Trainer:
    """The trainer of ``model`` over its own weights (its input rows, ``wv.vectors`` or
    FastText's input matrix, and the output matrices), for ``threads`` threads (default
    ``model.workers``); logs the objective trained."""
    logger.info("training %s", describe(model))
    settings = trainer_settings(model, threads)
    return settings.build(model._input_matrix(), *outputs_of(model).values())
