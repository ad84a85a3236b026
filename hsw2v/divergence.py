"""Training that diverged: the error raised, and what it reports.

Every training job sums the dot products ``f`` it computes (one float64 add per tree node or
negative, see the design note G of :mod:`hsw2v._kernels._inner`) and reports a NaN loss when
that sum is not finite, that is when the job read or wrote a non-finite weight. The epoch drivers
(:mod:`hsw2v.running.epochs`) stop every thread after its current job when a job's loss is not
finite, and :class:`~hsw2v.Word2Vec` and :class:`~hsw2v.layer.HierarchicalSoftmax` raise
:class:`TrainingDivergedError` with what to change. The cost is one addition per node: no
scan of the weights runs while training is healthy.

A loss can also grow without bound and stay finite: weights racing towards the float32 limit
(a step too large for the inputs' scale) give mean losses of 1e5, 1e13, 1e24 in successive
epochs, and predictions no better than chance. :func:`loss_grew` calls that divergence too:
an epoch whose mean loss is more than :data:`GROWTH_LIMIT` times its reference, the larger of
the loss of an untrained model (every weight zero: ``ln 2`` per tree node on the path) and the
best epoch so far. Training never raises its mean loss tenfold above both while it learns.
"""

from __future__ import annotations

import numpy as np

from hsw2v._kernels._array_passes import nonfinite_rows


class TrainingDivergedError(FloatingPointError, ValueError):
    """Training met non-finite (NaN or infinite) weights and stopped.

    It is a :class:`FloatingPointError` (what NumPy raises for floating-point faults) and a
    :class:`ValueError` (the usual cause is a parameter out of its useful range: a learning
    rate too high for the data, or unscaled features). ``nonfinite_rows`` maps each weight
    matrix's name to the number of its rows holding a NaN or an infinity when training
    stopped; ``epoch`` is the 0-based epoch that diverged; ``cause`` is ``"nonfinite"`` (a
    NaN or infinite loss) or ``"growth"`` (a finite loss that grew by orders of magnitude,
    :func:`loss_grew`).
    """

    def __init__(
        self,
        message: str,
        nonfinite_rows: dict | None = None,
        epoch: int = -1,
        cause: str = "nonfinite",
    ):
        super().__init__(message)
        self.nonfinite_rows = dict(nonfinite_rows or {})
        self.epoch = epoch
        self.cause = cause


GROWTH_LIMIT = 10.0  # an epoch's mean loss above this many times its reference: diverged


def loss_grew(mean_loss: float, untrained: float, best: float = np.inf) -> bool:
    """Whether an epoch's ``mean_loss`` shows divergence: not finite, or more than
    :data:`GROWTH_LIMIT` times the larger of ``untrained`` (the mean loss of the model with
    every weight zero) and ``best`` (the lowest mean loss of an epoch before, ``inf`` for
    none).

    >>> loss_grew(3.0e5, untrained=2.3)  # a first epoch ending 100,000 times worse
    True
    >>> loss_grew(4.0, untrained=2.3), loss_grew(30.0, untrained=2.3, best=5.0)
    (False, False)
    """
    if not np.isfinite(mean_loss):
        return True
    reference = max(float(untrained), float(best) if np.isfinite(best) else 0.0)
    return bool(mean_loss > GROWTH_LIMIT * reference)


def count_nonfinite_rows(arrays: dict) -> dict:
    """``{name: rows holding a NaN or an infinity}`` for each 2-D float array (None and empty
    ones skipped). One pass: a C-contiguous float32 matrix by the exponent bits of its values
    (:func:`hsw2v._kernels._array_passes.nonfinite_rows`), any other by V float64 row sums
    (a row's float64 sum of float32 values is finite iff all its values are)."""
    out = {}
    for name, array in arrays.items():
        if array is None or not np.size(array):
            continue
        if array.dtype == np.float32 and array.ndim == 2 and array.flags.c_contiguous:
            out[name] = nonfinite_rows(array)  # one nogil pass of integer tests
            continue
        sums = np.add.reduce(array, axis=1, dtype=np.float64)
        out[name] = int(np.count_nonzero(~np.isfinite(sums)))
    return out


def describe_rows(counts: dict) -> str:
    """``"syn0 12 of its rows, syn1 3"`` style summary of :func:`count_nonfinite_rows`."""
    parts = [f"{name}: {n}" for name, n in counts.items() if n]
    return ", ".join(parts) if parts else "none left (the non-finite values were transient)"
