"""One guard for a model while ``train()`` runs: what may not change under the trainer.

The kernels index the weights with word ids and tree entries, without bounds checks, through
arrays the trainer took when the call began (:func:`hsw2v.running.trainer.make_trainer`). A
callback or another thread that rebuilds the vocabulary, grows it, or replaces the weights
in the middle of that call would either leave the trainer on detached arrays (the returned
model then holds untrained weights) or, worse, map words with a vocabulary larger than the
arrays the kernels index. The guard closes every such route in three ways:

* :func:`refuse_while_training`, called first by each method that replaces the vocabulary,
  the tree or the weights (``build_vocab``, ``build_vocab_from_freq``, ``scan_vocab``,
  ``prepare_vocab``, ``prepare_weights``, ``make_cum_table``, ``reset_from``, a second
  ``train``, and the ``KeyedVectors`` methods that add or reorder words), raises
  :class:`TrainingRunningError` while the model (or its ``wv``) trains, from any thread;
* the index arrays the kernels follow (the tree's ``codes``, ``points`` and ``lengths``,
  ``sample_int``, ``cum_table``) are made read-only for the call, so an in-place edit raises
  numpy's "assignment destination is read-only" instead of sending a kernel out of bounds;
* :meth:`Guard.check` (before each epoch and after the last) compares what the trainer holds
  with what the model holds now: an attribute replaced by assignment (``model.wv.vectors =
  ...``, ``model.wv = ...``, ``model.syn1 = ...``, ``model.tree = ...``) or a vocabulary
  whose size changed stops training with :class:`TrainingRunningError` naming it.

Within an epoch the encoder bounds every id by the rows the trainer holds
(:func:`hsw2v._kernels._inner.encode_sentences`), so even an in-place edit of ``wv.key_to_index``
between two checks cannot make a kernel index outside its arrays.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from hsw2v.exceptions import TrainingRunningError
from hsw2v.running.objectives import OBJECTIVES

__all__ = ["Guard", "refuse_while_training", "training"]

_LOCK = threading.Lock()
_RUNNING: dict[int, str] = {}  # id() of a training model or its wv -> the model's name


def refuse_while_training(obj, what: str) -> None:
    """Raise :class:`TrainingRunningError` when ``obj`` (a model or its ``wv``) is training.

    >>> refuse_while_training(object(), "build_vocab()")  # not training: nothing happens
    """
    if id(obj) in _RUNNING:
        raise TrainingRunningError(
            f"{what} is refused while train() runs on this model (it would change the "
            "vocabulary, the tree or the weights the running training uses): call it before "
            "train() or after it returns, e.g. from on_train_end"
        )


def _tracked(model) -> dict:
    """Every object the trainer took from ``model``, by the name a user knows it by."""
    wv = model.wv
    tree = model.tree
    expandos = getattr(wv, "expandos", {})
    tracked = {
        "model.wv": wv,
        "model.wv.vectors": wv.vectors,
        "model.wv.input_matrix": getattr(wv, "input_matrix", None),  # FastText's input rows
        "model.wv.key_to_index": wv.key_to_index,
        "model.wv.index_to_key": wv.index_to_key,
        "model.wv.expandos['sample_int']": expandos.get("sample_int"),
        "model.wv.vectors_lockf": getattr(wv, "vectors_lockf", None),
        "model.tree": tree,
        "model.tree.codes": tree.codes,
        "model.tree.points": tree.points,
        "model.tree.lengths": tree.lengths,
    }
    for objective in OBJECTIVES:  # each output matrix and its lookup arrays (the table's rows)
        for name in (objective.matrix, *objective.lookup_keywords):
            tracked[f"model.{name}"] = getattr(model, name, None)
    return tracked


class Guard:
    """What the trainer took from ``model`` when training began (see the module docstring)."""

    def __init__(self, model):
        self.model = model
        self.objects = _tracked(model)
        self.sizes = (len(model.wv.key_to_index), len(model.wv.index_to_key))
        self.frozen: list[np.ndarray] = []

    def freeze(self) -> None:
        """Make the index arrays the kernels follow read-only until :meth:`thaw`."""
        for name in (
            "model.tree.codes",
            "model.tree.points",
            "model.tree.lengths",
            "model.wv.expandos['sample_int']",
            "model.cum_table",
        ):
            arr = self.objects[name]
            if isinstance(arr, np.ndarray) and arr.flags.writeable:
                arr.flags.writeable = False
                self.frozen.append(arr)

    def thaw(self) -> None:
        for arr in self.frozen:
            try:
                arr.flags.writeable = True
            except ValueError:  # pragma: no cover - a base made read-only meanwhile
                pass
        self.frozen = []

    def check(self, when: str) -> None:
        """Raise :class:`TrainingRunningError` if the model no longer holds what the trainer
        trains (``when`` says where training stopped, e.g. "before epoch 3 of 5")."""
        try:
            now = _tracked(self.model)
        except AttributeError as exc:
            raise TrainingRunningError(
                f"the model changed while train() ran ({exc}); training stopped {when}"
            ) from None
        changed = [name for name, obj in self.objects.items() if now[name] is not obj]
        sizes = (len(self.model.wv.key_to_index), len(self.model.wv.index_to_key))
        if sizes != self.sizes:
            changed.append(f"the vocabulary's size ({self.sizes[0]} -> {sizes[0]} words)")
        if changed:
            raise TrainingRunningError(
                f"the model changed while train() ran: {', '.join(changed)} replaced or "
                f"changed (by a callback or another thread); training stopped {when}, and "
                "what replaced them was not trained. Change the model before train() or "
                "after it returns"
            )


@contextmanager
def training(model):
    """Mark ``model`` (and its ``wv``) as training for the block; a second ``train()`` on it,
    from any thread or a callback, raises :class:`TrainingRunningError`."""
    keys = (id(model), id(model.wv))
    marked = False
    try:
        with _LOCK:
            refuse_while_training(model, "train()")
            marked = True  # before the marks: an interrupt between them still clears both
            for key in keys:
                _RUNNING[key] = type(model).__name__
        yield
    finally:
        # inline, not a function: an interrupt can land at any function's start. Cleared
        # even if Ctrl-C lands meanwhile (then raised once they are gone): a mark left
        # behind would refuse every later train() of the model
        interrupted = None
        while marked:
            try:
                with _LOCK:
                    for key in keys:
                        _RUNNING.pop(key, None)
                marked = False
            except KeyboardInterrupt as exc:
                interrupted = interrupted or exc
        if interrupted is not None:
            raise interrupted
