"""Training callbacks, as gensim's ``gensim.models.callbacks``.

A callback is an object with the methods of :class:`CallbackAny2Vec`; pass a list of them as
``Word2Vec(..., callbacks=[...])`` or ``model.train(..., callbacks=[...])``. Each method gets
the model. :class:`TrainingHistory` records, per epoch, the training loss, the learning rate
reached and the throughput, and draws them with :meth:`TrainingHistory.plot`.

Examples
--------
>>> from hsw2v import Word2Vec
>>> from hsw2v.callbacks import TrainingHistory
>>> history = TrainingHistory()
>>> model = Word2Vec([["a", "b", "c"]] * 200, vector_size=8, min_count=1, workers=1,
...                  sample=0, epochs=3, compute_loss=True, callbacks=[history])
>>> [row.epoch for row in history.epochs]
[1, 2, 3]
>>> history.epochs[0].loss > history.epochs[-1].loss > 0
True
>>> [round(row.alpha, 4) for row in history.epochs]
[0.0167, 0.0084, 0.0001]
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CallbackAny2Vec", "EpochRecord", "TrainingHistory"]


class CallbackAny2Vec:
    """Base class of training callbacks: every hook does nothing until overridden.

    Examples
    --------
    >>> from hsw2v import Word2Vec
    >>> class Count(CallbackAny2Vec):
    ...     def __init__(self):
    ...         self.epochs = 0
    ...     def on_epoch_end(self, model):
    ...         self.epochs += 1
    >>> count = Count()
    >>> _ = Word2Vec([["x", "y"]] * 10, min_count=1, workers=1, epochs=2, callbacks=[count])
    >>> count.epochs
    2
    """

    def on_epoch_begin(self, model: Any) -> None:
        """Called before each epoch.

        Examples
        --------
        >>> CallbackAny2Vec().on_epoch_begin(None) is None
        True
        """

    def on_epoch_end(self, model: Any) -> None:
        """Called after each epoch.

        Examples
        --------
        >>> CallbackAny2Vec().on_epoch_end(None) is None
        True
        """

    def on_batch_begin(self, model: Any) -> None:
        """Kept for gensim compatibility; hsw2v does not call it.

        Examples
        --------
        >>> CallbackAny2Vec().on_batch_begin(None) is None
        True
        """

    def on_batch_end(self, model: Any) -> None:
        """Kept for gensim compatibility; hsw2v does not call it.

        Examples
        --------
        >>> CallbackAny2Vec().on_batch_end(None) is None
        True
        """

    def on_train_begin(self, model: Any) -> None:
        """Called once at the start of ``train()``.

        Examples
        --------
        >>> CallbackAny2Vec().on_train_begin(None) is None
        True
        """

    def on_train_end(self, model: Any) -> None:
        """Called once when ``train()`` has finished.

        Examples
        --------
        >>> CallbackAny2Vec().on_train_end(None) is None
        True
        """


@dataclass
class EpochRecord:
    """One epoch of a :class:`TrainingHistory`.

    Attributes
    ----------
    epoch
        Epoch number, from 1, counted over all ``train()`` calls the callback saw.
    loss
        The epoch's summed -log-likelihood (``nan`` unless ``compute_loss=True``).
    alpha
        The learning rate reached at the end of the epoch.
    seconds
        Wall-clock time of the epoch.
    trained_words
        Effective words trained (after subsampling).
    raw_words
        Raw words read.
    words_per_second
        ``trained_words / seconds``.

    Examples
    --------
    >>> EpochRecord(1, 2.5, 0.01, 2.0, 100, 120, 50.0).words_per_second
    50.0
    """

    epoch: int
    loss: float
    alpha: float
    seconds: float
    trained_words: int
    raw_words: int
    words_per_second: float


@dataclass
class TrainingHistory(CallbackAny2Vec):
    """A callback that records per-epoch loss, learning rate and throughput.

    The loss needs ``compute_loss=True`` (else it is ``nan``). :meth:`plot` draws the three
    series (needs matplotlib: ``pip install matplotlib``).

    Examples
    --------
    >>> from hsw2v import Word2Vec
    >>> history = TrainingHistory()
    >>> _ = Word2Vec([["a", "b"]] * 50, min_count=1, workers=1, epochs=2,
    ...              callbacks=[history])
    >>> len(history.epochs), math.isnan(history.epochs[0].loss)
    (2, True)
    >>> sorted(history.as_columns())[:3]
    ['alpha', 'epoch', 'loss']
    """

    epochs: list[EpochRecord] = field(default_factory=list)
    _started: float = field(default=0.0, repr=False)
    _loss_before: float = field(default=0.0, repr=False)

    def on_train_begin(self, model: Any) -> None:
        """Reset the running loss baseline (``train()`` restarts its loss at zero).

        Examples
        --------
        >>> from types import SimpleNamespace
        >>> model = SimpleNamespace(compute_loss=True, get_latest_training_loss=lambda: 4.0)
        >>> history = TrainingHistory()
        >>> for _ in range(2):  # two one-epoch train() calls, each restarting its loss
        ...     history.on_train_begin(model); history.on_epoch_begin(model)
        ...     history.on_epoch_end(model)
        >>> [row.loss for row in history.epochs]
        [4.0, 4.0]
        """
        self._loss_before = 0.0

    def on_epoch_begin(self, model: Any) -> None:
        """Start the epoch's clock.

        Examples
        --------
        >>> history = TrainingHistory()
        >>> history.on_epoch_begin(None); history.on_epoch_end(None)
        >>> history.epochs[0].seconds >= 0, history.epochs[0].trained_words
        (True, 0)
        """
        self._started = time.perf_counter()

    def on_epoch_end(self, model: Any) -> None:
        """Append an :class:`EpochRecord` for the epoch that just ended.

        The loss recorded is the growth of ``model.get_latest_training_loss()`` since the
        previous epoch of the same ``train()`` call.

        Examples
        --------
        >>> from types import SimpleNamespace
        >>> totals = iter([3.0, 5.0])  # the model's running loss after epochs 1 and 2
        >>> model = SimpleNamespace(compute_loss=True, min_alpha_yet_reached=0.02,
        ...                         get_latest_training_loss=lambda: next(totals))
        >>> history = TrainingHistory()
        >>> for _ in range(2):
        ...     history.on_epoch_begin(model); history.on_epoch_end(model)
        >>> [(row.epoch, row.loss, row.alpha) for row in history.epochs]
        [(1, 3.0, 0.02), (2, 2.0, 0.02)]
        """
        seconds = time.perf_counter() - self._started
        report = getattr(model, "latest_epoch_report", None)
        if report is not None:
            seconds = report.seconds or seconds
        trained = int(getattr(report, "trained_words", 0))
        raw = int(getattr(report, "raw_words", 0))
        if getattr(model, "compute_loss", False):
            total = float(model.get_latest_training_loss())
            loss, self._loss_before = total - self._loss_before, total
        else:
            loss = math.nan
        alpha = float(getattr(model, "min_alpha_yet_reached", math.nan))
        self.epochs.append(
            EpochRecord(
                epoch=len(self.epochs) + 1,
                loss=loss,
                alpha=alpha,
                seconds=seconds,
                trained_words=trained,
                raw_words=raw,
                words_per_second=trained / seconds if seconds > 0 else math.nan,
            )
        )

    def as_columns(self) -> dict[str, list]:
        """The records as ``{field: [value per epoch]}`` (e.g. for ``pandas.DataFrame``).

        Examples
        --------
        >>> TrainingHistory().as_columns()["loss"]
        []
        """
        names = list(EpochRecord.__dataclass_fields__)
        columns: dict[str, list] = {name: [] for name in names}
        for record in self.epochs:
            for name, value in asdict(record).items():
                columns[name].append(value)
        return columns

    def plot(self, path: Any = None, **kwargs: Any) -> Any:
        """Draw the history with :func:`hsw2v.plot.plot_training`; returns the figure.

        Examples
        --------
        >>> import os, tempfile
        >>> history = TrainingHistory([EpochRecord(1, 3.0, 0.02, 1.0, 10, 12, 10.0),
        ...                            EpochRecord(2, 2.0, 0.01, 1.0, 10, 12, 10.0)])
        >>> path = os.path.join(tempfile.mkdtemp(), "training.png")
        >>> _ = history.plot(path)
        >>> os.path.getsize(path) > 0
        True
        """
        from hsw2v.plot import plot_training

        return plot_training(self, path=path, **kwargs)
